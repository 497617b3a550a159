/* bench_compile.c - compile time of a full-size model: models/full/resnet50.onnx
 * (graph only, weights synthesised as `atoll compile --synthetic-weights`
 * does) compiled for configs/a1.ini at batch 1, fp32, through the compile
 * driver (compiler/driver/driver.h, what `atoll compile` runs), with the wall time
 * of each phase: import (decode + shape inference), the canonicalisation
 * passes, the backend's phases (address assignment, lowering + tile search,
 * emit; BkSummary.phase_s) and write (.abm serialisation with zlib), and
 * the CPU seconds of the whole compile (clock(): meaningful when the shared
 * machine is loaded and wall time is not). Four times: with layer groups
 * (the default) and with `--group none` (one layer per segment), each with
 * the weights stored as `atoll compile` stores synthetic ones (raw) and
 * deflated (`--zlevel 6`), whose difference is the cost of deflating them.
 * Targets: under 10 CPU-s grouped (issue 11), under 2 with `--group none`
 * (issue 17), both with the default storage.
 * The tile search, which prices every candidate tile shape with the cost
 * model, is most of the rest (docs/backend.md, "Pricing speed, exactly").
 * Prints the table and replaces the generated section "bench_compile" of
 * docs/benchmarks.md (run from the repository root; --no-doc skips it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "compiler/driver/driver.h"
#include "isa/config.h"
#include "isa/abm.h"
#include "util/clock.h"
#include "util/docsection.h"

#define CHIP "configs/a1.ini"
#define MODEL "models/full/resnet50.onnx"
#define DOC "docs/benchmarks.md"

enum { PH_WRITE = DRV_NPHASES, PH_COUNT };

/* Compiles MODEL for chip at zlib level zlevel with grouping group
 * (BK_GROUP_AUTO or BK_GROUP_NONE); fills the phase times, the CPU seconds,
 * the layer count and the file size. */
static int compile_once(const AtlChip *chip, int group, int zlevel, double *t, double *cpu, int *layers, size_t *bytes, AtlErr *e)
{
    clock_t c0 = clock();
    DrvRequest rq;
    memset(&rq, 0, sizeof rq);
    rq.chip = chip;
    rq.dtype = ISA_F32;
    rq.synthetic_weights = 1;
    rq.group = group;
    AbmWriter *w = abm_writer_new(cfg_fingerprint(chip));
    if (!w) return atl_fail(e, "out of memory");
    abm_writer_set_level(w, zlevel);
    DrvResult res;
    uint8_t *buf = NULL;
    int rc = drv_compile(MODEL, &rq, w, &res, e);
    if (!rc) {
        for (int i = 0; i < DRV_NPHASES; i++) t[i] = res.phase_s[i];
        *layers = res.variants[0].nlayers;
        double t0 = atl_clock_s();
        rc = abm_serialize(w, &buf, bytes, e);
        t[PH_WRITE] = atl_clock_s() - t0;
    }
    *cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    free(buf);
    drv_result_free(&res);
    abm_writer_free(w);
    return rc;
}

int main(int argc, char **argv)
{
    int write_doc = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-doc")) write_doc = 0;
        else { fprintf(stderr, "usage: bench_compile [--no-doc]\n"); return 2; }
    }
    AtlChip chip;
    AtlErr e = {{0}};
    if (cfg_load(CHIP, &chip, &e)) { fprintf(stderr, "bench_compile: %s\n", e.msg); return 1; }
    static const struct { int group, zlevel; double target; } runs[] = {
        {BK_GROUP_AUTO, 0, 10.0}, {BK_GROUP_AUTO, 6, 0}, {BK_GROUP_NONE, 0, 2.0}, {BK_GROUP_NONE, 6, 0},
    };
    char table[4096];
    size_t k = (size_t)snprintf(table, sizeof table, "| model | --group | weights | .abm MB | layers | compile s | cpu s | target cpu s |");
    for (int i = 0; i < PH_COUNT; i++) k += (size_t)snprintf(table + k, sizeof table - k, " %s s |", i < DRV_NPHASES ? drv_phase_name(i) : "write");
    k += (size_t)snprintf(table + k, sizeof table - k, "\n|---|---|---|---:|---:|---:|---:|---|");
    for (int i = 0; i < PH_COUNT; i++) k += (size_t)snprintf(table + k, sizeof table - k, "---:|");
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        double t[PH_COUNT] = {0}, cpu = 0, total = 0;
        int layers = 0;
        size_t bytes = 0;
        if (compile_once(&chip, runs[r].group, runs[r].zlevel, t, &cpu, &layers, &bytes, &e)) {
            fprintf(stderr, "bench_compile: %s: %s\n", MODEL, e.msg);
            return 1;
        }
        for (int i = 0; i < PH_COUNT; i++) total += t[i];
        char target[64] = "";
        if (runs[r].target > 0)
            snprintf(target, sizeof target, "< %.0f (%s)", runs[r].target, cpu < runs[r].target ? "met" : "missed");
        k += (size_t)snprintf(table + k, sizeof table - k, "\n| resnet50 (synthetic weights) | %s | %s | %.1f | %d | %.2f | %.2f | %s |",
                              runs[r].group == BK_GROUP_NONE ? "none" : "auto",
                              runs[r].zlevel ? "zlib 6 (`--zlevel 6`)" : "raw (default)", (double)bytes / 1e6, layers, total, cpu, target);
        for (int i = 0; i < PH_COUNT; i++) k += (size_t)snprintf(table + k, sizeof table - k, " %.2f |", t[i]);
    }
    snprintf(table + k, sizeof table - k, "\n");
    printf("bench_compile: %s on %s, batch 1, fp32 (wall seconds per phase)\n%s", MODEL, CHIP, table);
    if (write_doc) {
        char body[6144];
        snprintf(body, sizeof body,
                 "Produced by `make bench` (`build/bench/bench_compile`): `%s` compiled for %s "
                 "(batch 1, fp32, synthetic weights) through the compile driver `atoll compile` runs, wall seconds in "
                 "all and per compiler phase, and the process's CPU seconds (on a loaded machine wall time exceeds it; "
                 "`atoll compile --time` prints the same split); with layer groups (the default) and with `--group none`, "
                 "each with the synthetic weights stored raw (what `atoll compile` does with synthetic weights) and "
                 "deflated (`--zlevel 6`, the level for real weights).\n\n%s",
                 MODEL, CHIP, table);
        if (doc_section_write_file(DOC, "# Benchmarks", "bench_compile", "## Compile time of a full-size model", body, &e)) {
            fprintf(stderr, "bench_compile: %s\n", e.msg);
            return 1;
        }
        printf("bench_compile: wrote %s\n", DOC);
    }
    return 0;
}
