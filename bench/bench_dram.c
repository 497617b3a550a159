/* bench_dram.c - the banked DRAM model's cost in host time: ResNet-50
 * (models/full/resnet50.onnx, weights synthesised, batch 1, fp32) compiled
 * once for configs/a1.ini and simulated timing-only with `[dram] model =
 * flow` (a1 as it is) and `model = banked` (a1's four channels of the
 * default DDR4-3200 device), the CPU seconds of each simulation (clock(),
 * load and run; the best of 3, the two models taking turns: the machine is
 * shared) and their ratio, against the target banked <= 5 x flow.
 * Also the DRAM requests served and their rate. Prints the table and
 * replaces the section "bench_dram" of docs/benchmarks.md (run from the
 * repository root; --no-doc skips it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "isa/abm_program.h"
#include "isa/config.h"
#include "sim/sim.h"
#include "bench/resnet50.h"
#include "util/docsection.h"

#define CHIP "configs/a1.ini"
#define MODEL RESNET50
#define DOC "docs/benchmarks.md"
#define TARGET 5.0
#define RUNS 3      /* simulations of each model; the fastest counts */

typedef struct Run {
    double cpu;
    uint64_t cycles, requests, hits, all;
} Run;

static int simulate(const AtlChip *chip, const uint8_t *buf, size_t len, Run *r, AtlErr *e)
{
    AbmModel m;
    AtlProgram prog;
    AtlSim *sim = NULL;
    memset(&m, 0, sizeof m);
    memset(&prog, 0, sizeof prog);
    int rc = -1;
    if (abm_load_buffer(&m, buf, len, cfg_fingerprint(chip), 0, e)) return -1;
    AbmRegionBases bases;
    if (abm_variant_program(&m, 0, chip, &prog, &bases, e)) goto out;
    AtlSimOptions so;
    sim_options_default(&so);
    so.mode = SIM_MODE_TIMING;
    clock_t c0 = clock();
    sim = sim_create(chip, &so, e);
    if (!sim || sim_load(sim, &prog, e) || sim_run(sim, e)) goto out;
    r->cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    const AtlSimStats *s = sim_stats(sim);
    r->cycles = s->cycles;
    r->requests = s->dram.reads + s->dram.writes;
    r->hits = s->dram.row_hits;
    r->all = s->dram.row_hits + s->dram.row_misses + s->dram.row_conflicts;
    rc = 0;
out:
    sim_free(sim);
    prog_free(&prog);
    abm_model_free(&m);
    return rc;
}

int main(int argc, char **argv)
{
    int write_doc = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-doc")) write_doc = 0;
        else { fprintf(stderr, "usage: bench_dram [--no-doc]\n"); return 2; }
    }
    AtlChip flow, banked;
    AtlErr e = {{0}};
    if (cfg_load(CHIP, &flow, &e)) { fprintf(stderr, "bench_dram: %s\n", e.msg); return 1; }
    banked = flow;
    if (cfg_set(&banked, "dram", "model", "banked", &e) || cfg_validate(&banked, CHIP, &e)) {
        fprintf(stderr, "bench_dram: %s\n", e.msg);
        return 1;
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    if (r50_compile(&flow, 0, &buf, &len, NULL, NULL, &e)) { fprintf(stderr, "bench_dram: %s: %s\n", MODEL, e.msg); return 1; }
    Run f = {0}, b = {0};
    for (int i = 0; i < RUNS; i++) {
        Run fi = {0}, bi = {0};
        if (simulate(&flow, buf, len, &fi, &e) || simulate(&banked, buf, len, &bi, &e)) {
            fprintf(stderr, "bench_dram: %s\n", e.msg);
            free(buf);
            return 1;
        }
        if (!i || fi.cpu < f.cpu) f = fi;
        if (!i || bi.cpu < b.cpu) b = bi;
    }
    free(buf);
    double ratio = f.cpu > 0 ? b.cpu / f.cpu : 0;
    char table[2048];
    snprintf(table, sizeof table,
             "| model | chip | DRAM model | simulated cycles | DRAM requests | row hits | sim CPU s | banked / flow | target |\n"
             "|---|---|---|---:|---:|---:|---:|---:|---:|\n"
             "| resnet50 b1, timing only | a1 | flow | %llu | - | - | %.2f | | |\n"
             "| resnet50 b1, timing only | a1 | banked (4 x DDR4-3200) | %llu | %llu (%.1f M/s) | %.1f%% | %.2f | %.1fx | <= %.0fx%s |\n",
             (unsigned long long)f.cycles, f.cpu, (unsigned long long)b.cycles, (unsigned long long)b.requests,
             b.cpu > 0 ? (double)b.requests / b.cpu / 1e6 : 0, b.all ? 100.0 * (double)b.hits / (double)b.all : 0, b.cpu,
             ratio, TARGET, ratio <= TARGET ? "" : " (missed)");
    printf("bench_dram: %s on %s, timing only, CPU seconds of the simulation (best of %d)\n%s", MODEL, CHIP, RUNS, table);
    if (write_doc) {
        char body[4096];
        snprintf(body, sizeof body,
                 "Produced by `make bench` (`build/bench/bench_dram`): `%s` (synthetic weights, batch 1, fp32) "
                 "compiled once for %s and simulated timing-only, as it is (`[dram] model = flow`) and with "
                 "`model = banked` (every DMA's DRAM end served as DDR4-3200 requests, one per access unit, by "
                 "banks, rows and an FR-FCFS controller per channel); the process's CPU seconds of each simulation "
                 "(load and run), the best of %d with the two models taking turns.\n\n%s",
                 MODEL, CHIP, RUNS, table);
        if (doc_section_write_file(DOC, "# Benchmarks", "bench_dram", "## The banked DRAM model's host time", body, &e)) {
            fprintf(stderr, "bench_dram: %s\n", e.msg);
            return 1;
        }
        printf("bench_dram: wrote %s\n", DOC);
    }
    return 0;
}
