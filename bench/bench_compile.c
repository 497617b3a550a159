/* bench_compile.c - compile time of a full-size model: models/full/resnet50.onnx
 * (graph only, weights synthesised as `atoll compile --synthetic-weights`
 * does) compiled for configs/a1.ini at batch 1, fp32, with the wall time of
 * each phase: import (decode + shape inference), the canonicalisation
 * passes, the backend's phases (address assignment, lowering + tile search,
 * emit; BkSummary.phase_s) and write (.abm serialisation with zlib), and
 * the CPU seconds of the whole compile (clock(): meaningful when the shared
 * machine is loaded and wall time is not).
 * The tile search, which prices every candidate tile shape with the cost
 * model, is most of it (docs/backend.md, "Pricing speed, exactly").
 * Prints the table and replaces the generated section "bench_compile" of
 * docs/benchmarks.md (run from the repository root; --no-doc skips it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "isa/config.h"
#include "bench/resnet50.h"
#include "util/docsection.h"

#define CHIP "configs/a1.ini"
#define MODEL RESNET50
#define DOC "docs/benchmarks.md"

enum { PH_COUNT = R50_NPHASES, PH_BACKEND = R50_BACKEND, PH_WRITE = R50_WRITE };

/* Compiles MODEL for chip; fills the phase times, the CPU seconds and the layer count. */
static int compile_once(const AtlChip *chip, double *t, double *cpu, int *layers, AtlErr *e)
{
    clock_t c0 = clock();
    uint8_t *buf;
    size_t len;
    int rc = r50_compile(chip, -1, &buf, &len, t, layers, e);
    *cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    free(buf);
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
    double t[PH_COUNT] = {0}, cpu = 0;
    int layers = 0;
    if (compile_once(&chip, t, &cpu, &layers, &e)) { fprintf(stderr, "bench_compile: %s: %s\n", MODEL, e.msg); return 1; }
    const char *names[PH_COUNT] = {"import", "passes"};
    for (int i = 0; i < BK_NPHASES; i++) names[PH_BACKEND + i] = bk_phase_names[i];
    names[PH_WRITE] = "write";
    double total = 0;
    for (int i = 0; i < PH_COUNT; i++) total += t[i];
    char table[2048];
    size_t k = (size_t)snprintf(table, sizeof table, "| model | layers | compile s | cpu s |");
    for (int i = 0; i < PH_COUNT; i++) k += (size_t)snprintf(table + k, sizeof table - k, " %s s |", names[i]);
    k += (size_t)snprintf(table + k, sizeof table - k, "\n|---|---:|---:|---:|");
    for (int i = 0; i < PH_COUNT; i++) k += (size_t)snprintf(table + k, sizeof table - k, "---:|");
    k += (size_t)snprintf(table + k, sizeof table - k, "\n| resnet50 (synthetic weights) | %d | %.2f | %.2f |", layers, total, cpu);
    for (int i = 0; i < PH_COUNT; i++) k += (size_t)snprintf(table + k, sizeof table - k, " %.2f |", t[i]);
    snprintf(table + k, sizeof table - k, "\n");
    printf("bench_compile: %s on %s, batch 1, fp32 (wall seconds per phase)\n%s", MODEL, CHIP, table);
    if (write_doc) {
        char body[4096];
        snprintf(body, sizeof body,
                 "Produced by `make bench` (`build/bench/bench_compile`): `%s` compiled for %s "
                 "(batch 1, fp32, synthetic weights), wall seconds in all and per compiler phase, and "
                 "the process's CPU seconds (on a loaded machine wall time exceeds it; `atoll compile --time` "
                 "prints the same split).\n\n%s",
                 MODEL, CHIP, table);
        if (doc_section_write_file(DOC, "# Benchmarks", "bench_compile", "## Compile time of a full-size model", body, &e)) {
            fprintf(stderr, "bench_compile: %s\n", e.msg);
            return 1;
        }
        printf("bench_compile: wrote %s\n", DOC);
    }
    return 0;
}
