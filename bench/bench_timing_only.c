/* bench_timing_only.c - host CPU time of running ResNet-50 b1 on a1 through
 * the host API, as `atoll run` does, end to end: open the device, load the
 * .abm file (firmware LOAD), run, close. A timing-only device (`atoll run
 * --timing-only`: the simulator's timing mode, no values) against a full
 * run; both give the same cycles, which the benchmark checks.
 *
 * The model (models/full/resnet50.onnx, synthetic weights) is compiled
 * first at the default zlib level, as `atoll compile` writes it, into a
 * temporary file. CPU seconds by clock() (the process is single-threaded),
 * best of 3 (the machine is shared). Prints the table and replaces the
 * generated section "bench_timing_only" of docs/benchmarks.md (run from the
 * repository root; --no-doc skips it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "atoll.h"
#include "compiler/driver/driver.h"
#include "isa/config.h"
#include "util/docsection.h"

#define CHIP "configs/a1.ini"
#define MODEL "models/full/resnet50.onnx"
#define DOC "docs/benchmarks.md"

/* One run through the host API; *cpu gets its CPU seconds, *cycles the
 * simulated cycles. */
static int run_once(const char *abm, int timing_only, double *cpu, uint64_t *cycles)
{
    clock_t c0 = clock();
    AtlOpenOptions o = {0};
    o.timing_only = timing_only;
    AtlDevice *dev = NULL;
    AtlModel *m = NULL;
    AtlStatus s = atl_open(&dev, CHIP, &o);
    if (!s) s = atl_load_file(dev, abm, &m);
    const AtlNetInfo *nets;
    uint32_t n;
    void *data = NULL;
    if (!s) s = atl_nets(m, &nets, &n);
    if (!s) {
        const AtlVariantInfo *st = &nets[0].variants[0];
        AtlBuffer b;
        data = calloc(1, (size_t)st->inputs[0].bytes);
        atl_buffer_init(&b, &st->inputs[0], data);
        s = data ? atl_run(m, NULL, &b, 1, NULL) : ATL_ERR_HOST_MEMORY;
    }
    AtlProfile p;
    if (!s) s = atl_profile(m, &p);
    if (s) fprintf(stderr, "bench_timing_only: %s (%s)\n", atl_last_error(dev), atl_status_name(s));
    else *cycles = p.cycles;
    free(data);
    atl_unload(m);
    atl_close(dev);
    *cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    return s ? -1 : 0;
}

int main(int argc, char **argv)
{
    int write_doc = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-doc")) write_doc = 0;
        else { fprintf(stderr, "usage: bench_timing_only [--no-doc]\n"); return 2; }
    }
    AtlChip chip;
    AtlErr e = {{0}};
    char abm[] = "/tmp/atoll_bench_timing_XXXXXX";
    int fd = mkstemp(abm);
    if (fd < 0 || cfg_load(CHIP, &chip, &e)) { fprintf(stderr, "bench_timing_only: %s\n", fd < 0 ? "mkstemp" : e.msg); return 1; }
    close(fd);
    DrvRequest rq;
    memset(&rq, 0, sizeof rq);
    rq.chip = &chip;
    rq.dtype = ISA_F32;
    rq.synthetic_weights = 1;
    AbmWriter *w = abm_writer_new(cfg_fingerprint(&chip));
    DrvResult res;
    int rc = !w || drv_compile(MODEL, &rq, w, &res, &e) || abm_write_file(w, abm, &e);
    drv_result_free(&res);
    abm_writer_free(w);
    if (rc) { fprintf(stderr, "bench_timing_only: %s\n", e.msg); remove(abm); return 1; }
    double best[2] = {1e9, 1e9};
    uint64_t cycles[2] = {0, 0};
    for (int rep = 0; rep < 3 && !rc; rep++)
        for (int mode = 0; mode < 2 && !rc; mode++) {
            double cpu;
            rc = run_once(abm, mode == 0, &cpu, &cycles[mode]);
            if (cpu < best[mode]) best[mode] = cpu;
        }
    remove(abm);
    if (rc) return 1;
    if (cycles[0] != cycles[1]) {
        fprintf(stderr, "bench_timing_only: timing only gave %llu cycles, the full run %llu\n", (unsigned long long)cycles[0],
                (unsigned long long)cycles[1]);
        return 1;
    }
    char table[1024];
    snprintf(table, sizeof table,
             "| run of ResNet-50 b1 on a1 through the host API | simulated cycles | host CPU s (open, load, run, close) | target |\n"
             "|---|---:|---:|---|\n"
             "| timing only (`atoll run --timing-only`) | %llu | %.3f | <= 0.3 %s |\n"
             "| full (values computed, `atoll run`) | %llu | %.3f | - |\n",
             (unsigned long long)cycles[0], best[0], best[0] <= 0.3 ? "ok" : "MISSED", (unsigned long long)cycles[1], best[1]);
    printf("bench_timing_only: %s on %s, best of 3\n%s", MODEL, CHIP, table);
    if (write_doc) {
        char body[2048];
        snprintf(body, sizeof body,
                 "Produced by `make bench` (`build/bench/bench_timing_only`): `%s` (synthetic weights, compiled as "
                 "`atoll compile` writes it) run on %s through the host API as `atoll run` does, in the process's CPU "
                 "seconds, best of 3; both runs give the same cycles (checked).\n\n%s",
                 MODEL, CHIP, table);
        if (doc_section_write_file(DOC, "# Benchmarks", "bench_timing_only", "## Timing-only runs", body, &e)) {
            fprintf(stderr, "bench_timing_only: %s\n", e.msg);
            return 1;
        }
        printf("bench_timing_only: wrote %s\n", DOC);
    }
    return best[0] <= 0.3 ? 0 : 1;
}
