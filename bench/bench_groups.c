/* bench_groups.c - what layer grouping buys: every bundled model, ResNet-50
 * and MobileNetV2 (224x224, models/full, synthetic weights) on
 * configs/a1.ini in fp32 and bf16, compiled with --group auto and with
 * --group none, run timing-only on the simulator (the same cycles and bytes
 * as a full run; docs/simulator.md). Columns: simulated cycles, DRAM bytes
 * read + written against the compulsory traffic (weights, inputs and
 * outputs once each), MAC utilisation, layers, compile CPU seconds.
 * A second table: the same models on configs/a1-noc.ini (a1 with cluster
 * links), grouped, with their activations in every cluster's SRAM
 * (--sram-activations auto, the default) and in DRAM (never), the full
 * models in fp32 and bf16, the bundled ones in fp32.
 * A third table: row bands on configs/a1.ini (ResNet-50 fp32 and bf16,
 * resnet20_cifar and mobilenetv2_035 fp32) with --sram-activations auto
 * (a1: all in DRAM), bands and never.
 * Prints the tables and replaces the generated sections "bench_groups",
 * "bench_groups_noc" and "bench_groups_bands" of docs/benchmarks.md (run
 * from the repository root; --no-doc skips it;
 * --models a,b picks models by name; --quick: the bundled ones in fp32;
 * --bands: only the row bands table (and only its section);
 * --layers prints each layer's simulated span, estimate and DMA bytes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench/bench_run.h"
#include "util/docsection.h"

#define CHIP "configs/a1.ini"
#define NOC_CHIP "configs/a1-noc.ini"
#define DOC "docs/benchmarks.md"

typedef struct Model { const char *name, *path, *shape; int synthetic, full; } Model;

static const Model models[] = {
    {"digits_cnn", "models/digits_cnn.onnx", NULL, 0, 0},
    {"lenet5", "models/lenet5.onnx", NULL, 0, 0},
    {"resnet20_cifar", "models/resnet20_cifar.onnx", NULL, 0, 0},
    {"mobilenetv2_035", "models/mobilenetv2_035.onnx", NULL, 0, 0},
    {"encoder_block", "models/encoder_block.onnx", NULL, 0, 0},
    {"vit_tiny", "models/vit_tiny.onnx", NULL, 0, 0},
    {"resnet50", "models/full/resnet50.onnx", "input=1x3x224x224", 1, 1},
    {"mobilenetv2_100", "models/full/mobilenetv2_100.onnx", "input=1x3x224x224", 1, 1},
};
enum { NMODELS = sizeof models / sizeof models[0] };

typedef struct Row {
    const char *model;
    int dtype, group, sram_acts, layers;
    uint64_t cycles, dram, compulsory, macs;
    double util, compile_cpu;
    char error[256];
} Row;

/* With --layers: each layer's simulated span, DMA bytes and estimate. */
static void print_layers(const Row *r, const BkSummary *sum, const AtlSimStats *st)
{
    fprintf(stderr, "%s %s %s: layer, op, split, simulated cycles, estimate, DMA bytes\n", r->model,
            isa_dtype_name(r->dtype), r->group == BK_GROUP_NONE ? "none" : "auto");
    for (int i = 0; i < sum->nlayers; i++) {
        const BkLayerInfo *li = &sum->layers[i];
        const AtlLayerStats *ls = li->layer_id < st->nlayers ? &st->layers[li->layer_id] : NULL;
        uint64_t span = ls && ls->used ? ls->last - ls->first : 0;
        fprintf(stderr, "  %3d %-40.40s %-18s %-14s %10llu %10llu %12llu\n", li->layer_id, li->name, li->op, li->split,
                (unsigned long long)span, (unsigned long long)li->est_cycles,
                (unsigned long long)(ls ? ls->dma_bytes : 0));
    }
}

static int run_one(const AtlChip *chip, const Model *m, int dtype, int group, int sram_acts, int layers, Row *r, AtlErr *e)
{
    BenchRun run;
    r->model = m->name;
    r->dtype = dtype;
    r->group = group;
    r->sram_acts = sram_acts;
    BkOptions o;
    bk_options_default(&o);
    o.dtype = dtype;
    o.group = group;
    o.sram_acts = sram_acts;
    /* a dynamic batch is 1, as atoll compile takes it; zero inputs: timing
     * does not depend on values */
    BenchLoad ld = {m->path, m->shape, 0, m->synthetic, NULL};
    if (bench_run(&run, "bench_groups", chip, &ld, &o, dtype, e)) {
        snprintf(r->error, sizeof r->error, "%s", e->msg);
        bench_run_free(&run);
        return -1;
    }
    r->compile_cpu = run.compile_cpu;
    r->layers = run.sum.nlayers;
    r->compulsory = run.sum.weight_bytes + run.sum.io_bytes;
    r->cycles = run.st->cycles;
    r->macs = run.st->macs;
    r->util = run.st->mm_util;
    r->dram = run.st->bytes.dram_rd + run.st->bytes.dram_wr;
    if (layers) print_layers(r, &run.sum, run.st);
    bench_run_free(&run);
    return 0;
}

static int wanted(const char *list, const char *name)
{
    if (!list) return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n])) return 1;
    return 0;
}

static size_t format(const Row *rows, int n, char *out, size_t cap)
{
    size_t k = 0;
    k += (size_t)snprintf(out + k, cap - k,
                          "| model | dtype | groups | layers | cycles | vs none | DRAM bytes | DRAM/compulsory | MAC util | compile cpu s |\n"
                          "|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n && k < cap; i++) {
        const Row *r = &rows[i];
        if (r->error[0]) {
            k += (size_t)snprintf(out + k, cap - k, "| %s | %s | %s | error: %s |||||||\n", r->model, isa_dtype_name(r->dtype),
                                  r->group == BK_GROUP_NONE ? "none" : "auto", r->error);
            continue;
        }
        const Row *base = r->group == BK_GROUP_AUTO && i + 1 < n && !rows[i + 1].error[0] ? &rows[i + 1] : NULL;
        char vs[32] = "";
        if (base && r->cycles) snprintf(vs, sizeof vs, "%.2fx", (double)base->cycles / (double)r->cycles);
        k += (size_t)snprintf(out + k, cap - k, "| %s | %s | %s | %d | %llu | %s | %llu | %.2f | %.2f%% | %.2f |\n", r->model,
                              isa_dtype_name(r->dtype), r->group == BK_GROUP_NONE ? "none" : "auto", r->layers,
                              (unsigned long long)r->cycles, vs, (unsigned long long)r->dram,
                              r->compulsory ? (double)r->dram / (double)r->compulsory : 0.0, 100 * r->util, r->compile_cpu);
    }
    return k;
}

/* The a1-noc table: each model with its activations in SRAM, then in DRAM. */
static size_t format_noc(const Row *rows, int n, char *out, size_t cap)
{
    size_t k = 0;
    k += (size_t)snprintf(out + k, cap - k,
                          "| model | dtype | activations | cycles | vs DRAM | DRAM bytes | DRAM/compulsory | MAC util | compile cpu s |\n"
                          "|---|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n && k < cap; i++) {
        const Row *r = &rows[i];
        const char *where = r->sram_acts == BK_SRAM_ACTS_NEVER ? "DRAM" : "SRAM";
        if (r->error[0]) {
            k += (size_t)snprintf(out + k, cap - k, "| %s | %s | %s | error: %s ||||||\n", r->model, isa_dtype_name(r->dtype),
                                  where, r->error);
            continue;
        }
        const Row *base = r->sram_acts == BK_SRAM_ACTS_AUTO && i + 1 < n && !rows[i + 1].error[0] ? &rows[i + 1] : NULL;
        char vs[32] = "";
        if (base && r->cycles) snprintf(vs, sizeof vs, "%.2fx", (double)base->cycles / (double)r->cycles);
        k += (size_t)snprintf(out + k, cap - k, "| %s | %s | %s | %llu | %s | %llu | %.2f | %.2f%% | %.2f |\n", r->model,
                              isa_dtype_name(r->dtype), where, (unsigned long long)r->cycles, vs, (unsigned long long)r->dram,
                              r->compulsory ? (double)r->dram / (double)r->compulsory : 0.0, 100 * r->util, r->compile_cpu);
    }
    return k;
}

/* The row bands table: which models, in which dtypes. */
typedef struct BandCase { const char *model; int dtype; } BandCase;
static const BandCase band_cases[] = {
    {"resnet50", ISA_F32}, {"resnet50", ISA_BF16}, {"resnet20_cifar", ISA_F32}, {"mobilenetv2_035", ISA_F32},
};
enum { NBAND_CASES = sizeof band_cases / sizeof band_cases[0] };
enum { NBAND_MODES = 4 };
static const int band_modes[NBAND_MODES] = {BK_SRAM_ACTS_NEVER, BK_SRAM_ACTS_ROWS, BK_SRAM_ACTS_BANDS, BK_SRAM_ACTS_AUTO};

static const char *sram_acts_name(int m)
{
    return m == BK_SRAM_ACTS_BANDS ? "bands" : m == BK_SRAM_ACTS_ROWS ? "rows" : m == BK_SRAM_ACTS_NEVER ? "never" : "auto";
}

/* The bands table: each case in the four modes, never (the DRAM plan,
 * the baseline) first. */
static size_t format_bands(const Row *rows, int n, char *out, size_t cap)
{
    size_t k = 0;
    k += (size_t)snprintf(out + k, cap - k,
                          "| model | dtype | SRAM activations | cycles | vs never | DRAM bytes | DRAM/compulsory | MAC util | compile cpu s |\n"
                          "|---|---|---|---:|---:|---:|---:|---:|---:|\n");
    const Row *base = NULL;
    for (int i = 0; i < n && k < cap; i++) {
        const Row *r = &rows[i];
        if (r->sram_acts == BK_SRAM_ACTS_NEVER) base = r->error[0] ? NULL : r;
        if (r->error[0]) {
            k += (size_t)snprintf(out + k, cap - k, "| %s | %s | %s | error: %s ||||||\n", r->model, isa_dtype_name(r->dtype),
                                  sram_acts_name(r->sram_acts), r->error);
            continue;
        }
        char vs[32] = "";
        if (base && base != r && r->cycles) snprintf(vs, sizeof vs, "%.2fx", (double)base->cycles / (double)r->cycles);
        k += (size_t)snprintf(out + k, cap - k, "| %s | %s | %s | %llu | %s | %llu | %.2f | %.2f%% | %.2f |\n", r->model,
                              isa_dtype_name(r->dtype), sram_acts_name(r->sram_acts), (unsigned long long)r->cycles, vs,
                              (unsigned long long)r->dram, r->compulsory ? (double)r->dram / (double)r->compulsory : 0.0,
                              100 * r->util, r->compile_cpu);
    }
    return k;
}

static const Model *model_named(const char *name)
{
    for (int i = 0; i < NMODELS; i++)
        if (!strcmp(models[i].name, name)) return &models[i];
    return NULL;
}

/* Runs the row bands table into table (see format_bands); 1 when a case failed. */
static int bands_table(const AtlChip *chip, const char *list, int quick, int layers, char *table, size_t cap)
{
    static Row rows[NBAND_CASES * NBAND_MODES];
    int n = 0, failed = 0;
    AtlErr e;
    for (int ci = 0; ci < NBAND_CASES; ci++) {
        const Model *m = model_named(band_cases[ci].model);
        if (!m || !wanted(list, m->name) || (quick && m->full)) continue;
        for (int mi = 0; mi < NBAND_MODES; mi++) {
            Row *r = &rows[n++];
            memset(r, 0, sizeof *r);
            if (run_one(chip, m, band_cases[ci].dtype, BK_GROUP_AUTO, band_modes[mi], layers, r, &e)) failed = 1;
            fprintf(stderr, "bench_groups: %s %s %s: %llu cycles\n", r->model, isa_dtype_name(r->dtype),
                    sram_acts_name(band_modes[mi]), (unsigned long long)r->cycles);
        }
    }
    format_bands(rows, n, table, cap);
    return failed;
}

#define BANDS_DOC_HEAD                                                                                                  \
    "Produced by `make bench` (`build/bench/bench_groups`, or `--bands` for this table alone) on " CHIP ": each model " \
    "at batch 1, grouped, with `--sram-activations never` (every activation in DRAM), `rows` (row bands alone), "   \
    "`bands` (row and channel bands: each cluster keeps the cells it wrote in its SRAM, docs/backend.md \"Row and "  \
    "channel bands in every cluster\") and `auto` (the default: of the DRAM plan and bands, the one the cost model " \
    "prices lower), run timing-only; `vs never` is never's cycles over the row's; compile CPU seconds include both " \
    "builds for auto.\n\n%s"

int main(int argc, char **argv)
{
    int write_doc = 1, quick = 0, layers = 0, bands_only = 0;
    const char *list = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-doc")) write_doc = 0;
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--layers")) layers = 1;
        else if (!strcmp(argv[i], "--bands")) bands_only = 1;
        else if (!strcmp(argv[i], "--models") && i + 1 < argc) list = argv[++i];
        else { fprintf(stderr, "usage: bench_groups [--no-doc] [--quick] [--bands] [--layers] [--models a,b]\n"); return 2; }
    }
    if (quick || list || layers) write_doc = 0;   /* the doc holds the whole table only */
    AtlErr e;
    AtlChip chip;
    if (cfg_load(CHIP, &chip, &e)) { fprintf(stderr, "bench_groups: %s\n", e.msg); return 1; }
    static char btable[1 << 14], body[1 << 17];
    if (bands_only) {
        int bfailed = bands_table(&chip, list, quick, layers, btable, sizeof btable);
        printf("%s", btable);
        if (bfailed) { fprintf(stderr, "bench_groups: a model failed (see the table)\n"); return 1; }
        snprintf(body, sizeof body, BANDS_DOC_HEAD, btable);
        if (write_doc &&
            doc_section_write_file(DOC, "# Benchmarks", "bench_groups_bands", "### Row bands (a1)", body, &e)) {
            fprintf(stderr, "bench_groups: %s\n", e.msg);
            return 1;
        }
        return 0;
    }
    static Row rows[NMODELS * 4];
    int n = 0, failed = 0;
    const int dtypes[2] = {ISA_F32, ISA_BF16};
    for (int mi = 0; mi < NMODELS; mi++) {
        if (!wanted(list, models[mi].name) || (quick && models[mi].full)) continue;
        for (int d = 0; d < (quick ? 1 : 2); d++)
            for (int gm = 0; gm < 2; gm++) {
                Row *r = &rows[n++];
                memset(r, 0, sizeof *r);
                if (run_one(&chip, &models[mi], dtypes[d], gm ? BK_GROUP_NONE : BK_GROUP_AUTO, BK_SRAM_ACTS_AUTO, layers, r, &e))
                    failed = 1;
                fprintf(stderr, "bench_groups: %s %s %s: %llu cycles\n", r->model, isa_dtype_name(r->dtype),
                        gm ? "none" : "auto", (unsigned long long)r->cycles);
            }
    }
    static char table[1 << 16];
    format(rows, n, table, sizeof table);
    printf("%s", table);
    /* a1-noc: activations in every cluster's SRAM against DRAM */
    AtlChip noc;
    if (cfg_load(NOC_CHIP, &noc, &e)) { fprintf(stderr, "bench_groups: %s\n", e.msg); return 1; }
    static Row nrows[NMODELS * 4];
    int nn = 0;
    for (int mi = 0; mi < NMODELS; mi++) {
        if (!wanted(list, models[mi].name) || (quick && models[mi].full)) continue;
        for (int d = 0; d < (models[mi].full && !quick ? 2 : 1); d++)
            for (int sm = 0; sm < 2; sm++) {
                Row *r = &nrows[nn++];
                memset(r, 0, sizeof *r);
                if (run_one(&noc, &models[mi], dtypes[d], BK_GROUP_AUTO, sm ? BK_SRAM_ACTS_NEVER : BK_SRAM_ACTS_AUTO, layers, r, &e))
                    failed = 1;
                fprintf(stderr, "bench_groups: %s %s %s on a1-noc: %llu cycles\n", r->model, isa_dtype_name(r->dtype),
                        sm ? "DRAM" : "SRAM", (unsigned long long)r->cycles);
            }
    }
    static char ntable[1 << 16];
    format_noc(nrows, nn, ntable, sizeof ntable);
    printf("\n%s", ntable);
    if (bands_table(&chip, list, quick, layers, btable, sizeof btable)) failed = 1;
    printf("\n%s", btable);
    if (failed) { fprintf(stderr, "bench_groups: a model failed (see the tables)\n"); return 1; }
    if (write_doc) {
        snprintf(body, sizeof body,
                 "Produced by `make bench` (`build/bench/bench_groups`) on " CHIP ": each model at batch 1, compiled with "
                 "`--group auto` and `--group none`, run timing-only; `vs none` is none's cycles over auto's; compulsory = "
                 "weights + inputs + outputs once; compile cpu s is the process's CPU time for import, passes and backend.\n\n%s",
                 table);
        if (doc_section_write_file(DOC, "# Benchmarks", "bench_groups", "## Layer groups", body, &e)) {
            fprintf(stderr, "bench_groups: %s\n", e.msg);
            return 1;
        }
        snprintf(body, sizeof body,
                 "Produced by `make bench` (`build/bench/bench_groups`) on " NOC_CHIP " (a1 with its clusters joined by NoC "
                 "links): each model at batch 1, grouped, with its activations in every cluster's SRAM (`--sram-activations "
                 "auto`, the default: each SRAM write copied to the other clusters) and in DRAM (`never`, a1's plan), run "
                 "timing-only; `vs DRAM` is DRAM's cycles over SRAM's.\n\n%s",
                 ntable);
        if (doc_section_write_file(DOC, "# Benchmarks", "bench_groups_noc", "## Activations in cluster SRAM", body, &e)) {
            fprintf(stderr, "bench_groups: %s\n", e.msg);
            return 1;
        }
        snprintf(body, sizeof body, BANDS_DOC_HEAD, btable);
        if (doc_section_write_file(DOC, "# Benchmarks", "bench_groups_bands", "### Row bands (a1)", body, &e)) {
            fprintf(stderr, "bench_groups: %s\n", e.msg);
            return 1;
        }
    }
    return 0;
}
