/* bench_sweep.c - the co-design study of docs/codesign.md as a speed
 * target: `atoll sweep examples/codesign.ini -j 2` (100 points: 2 array
 * sizes x 5 LMEM sizes x 5 DRAM bandwidths on the full-size ResNet-50 and
 * MobileNetV2, timing-only, weights synthesised) must finish in under 5
 * minutes of wall time on a 2-core machine. Runs the atoll binary
 * (build/atoll, or $ATOLL) into a fresh CSV, and reports wall seconds, the
 * CPU seconds of the workers (getrusage of the children), points, failures
 * and compile groups. Prints the table and replaces the generated section
 * "bench_sweep" of docs/benchmarks.md (from the repository root; --no-doc
 * skips it). Exit status 1 when the target is missed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util/clock.h"
#include "util/docsection.h"

#define SPEC "examples/codesign.ini"
#define OUT "build/bench-codesign.csv"
#define DOC "docs/benchmarks.md"
#define TARGET_S 300.0

static double child_cpu(void)
{
    struct rusage u;
    getrusage(RUSAGE_CHILDREN, &u);
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}

/* Counts rows and failed rows of the CSV. */
static int count_rows(int *rows, int *failed)
{
    FILE *f = fopen(OUT, "r");
    if (!f) return -1;
    char line[8192];
    *rows = *failed = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "point,", 6)) continue;
        (*rows)++;
        *failed += strstr(line, ",failed,") != NULL;
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    int write_doc = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-doc")) write_doc = 0;
        else { fprintf(stderr, "usage: bench_sweep [--no-doc]\n"); return 2; }
    }
    const char *atoll = getenv("ATOLL") ? getenv("ATOLL") : "build/atoll";
    unlink(OUT);
    char log[] = "build/bench-codesign.log";
    double t0 = atl_clock_s(), c0 = child_cpu();
    pid_t pid = fork();
    if (pid == 0) {
        FILE *l = freopen(log, "w", stderr);
        (void)l;
        execl(atoll, atoll, "sweep", SPEC, "-o", OUT, "-j", "2", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
        fprintf(stderr, "bench_sweep: %s sweep %s failed (see %s)\n", atoll, SPEC, log);
        return 1;
    }
    double wall = atl_clock_s() - t0, cpu = child_cpu() - c0;
    int rows = 0, failed = 0;
    if (count_rows(&rows, &failed)) { fprintf(stderr, "bench_sweep: no %s\n", OUT); return 1; }
    char table[1024];
    snprintf(table, sizeof table,
             "| sweep | points | failed | workers | wall s | CPU s | target wall s | met |\n"
             "|---|---:|---:|---:|---:|---:|---:|---|\n"
             "| %s (ResNet-50 + MobileNetV2, fp16, timing-only) | %d | %d | 2 | %.1f | %.1f | %.0f | %s |\n",
             SPEC, rows, failed, wall, cpu, TARGET_S, wall < TARGET_S ? "yes" : "NO");
    printf("bench_sweep: %s -j 2\n%s", SPEC, table);
    if (write_doc) {
        char body[2048];
        AtlErr e;
        snprintf(body, sizeof body,
                 "Produced by `make bench` (`build/bench/bench_sweep`): `atoll sweep %s -o %s -j 2` from an empty CSV on "
                 "this 2-core machine; wall seconds, and the CPU seconds of the worker processes. The points are the study "
                 "of docs/codesign.md.\n\n%s",
                 SPEC, OUT, table);
        if (doc_section_write_file(DOC, "# Benchmarks", "bench_sweep", "## A 100-point design sweep", body, &e)) {
            fprintf(stderr, "bench_sweep: %s\n", e.msg);
            return 1;
        }
        printf("bench_sweep: wrote %s\n", DOC);
    }
    return wall < TARGET_S ? 0 : 1;
}
