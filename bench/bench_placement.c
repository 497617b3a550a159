/* bench_placement.c - what placement over clusters and staged schedules
 * buy (issue #13): ResNet-50 and MobileNetV2 (224x224, models/full,
 * synthetic weights, fp32) at batch 8 on configs/a1.ini and on
 * configs/a1x16.ini (a1 with 16 clusters), compiled five ways and run
 * timing-only:
 *   uniform mb 1     batch 1 on the whole chip, run 8 times (cycles x 8)
 *   chip             batch 8, every layer on every core (--placement chip)
 *   split uniform    batch split over clusters, one micro-batch for all
 *                    layers, the better of 1 and 2 (--schedule uniform
 *                    --micro-batch M)
 *   staged           what `atoll compile --batch 8` chooses (placement
 *                    auto, staged search)
 * Columns: images/s at the chip's clock, cycles for the 8 images, speed-up
 * over uniform mb 1 and over the best uniform (the faster of chip and
 * split uniform), DRAM bytes, intermediate tensors left in DRAM, MAC
 * utilisation, compile CPU seconds. Prints the table and replaces the
 * generated section "bench_placement" of docs/benchmarks.md (run from the
 * repository root; --no-doc skips it; --models a,b picks models, `noc`
 * the pipeline table below). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "compiler/backend/backend.h"
#include "compiler/passes/passes.h"
#include "tools/chip_exec.h"
#include "tools/model_io.h"
#include "util/docsection.h"

#define DOC "docs/benchmarks.md"
#define BATCH 8

static const char *const chips[] = {"configs/a1.ini", "configs/a1x16.ini"};
static const char *const models[][2] = {{"resnet50", "models/full/resnet50.onnx"},
                                        {"mobilenetv2_100", "models/full/mobilenetv2_100.onnx"}};

enum { UNI1, CHIP, SPLIT1, SPLIT2, STAGED, NWAYS };
static const char *const way_names[NWAYS] = {"uniform mb 1 (8 x batch 1)", "chip, batch 8", "split uniform mb 1",
                                             "split uniform mb 2", "staged (auto)"};

typedef struct Row {
    uint64_t cycles, dram, macs;
    double util, cpu;
    int dram_tensors;
    char how[96], error[200];
} Row;

static double cpu_s(void) { return (double)clock() / CLOCKS_PER_SEC; }

static int run_way(const AtlChip *chip, const char *path, int way, Row *r, AtlErr *e)
{
    IrGraph g;
    OnnxLoadOpts lo = {1, 0, 0, 0};
    IrInputShape s;
    uint8_t *abm = NULL;
    size_t len = 0;
    BkSummary sum;
    ChipExec x;
    int rc = -1, batch = way == UNI1 ? 1 : BATCH;
    memset(&sum, 0, sizeof sum);
    memset(&x, 0, sizeof x);
    ir_init(&g);
    double c0 = cpu_s();
    char shape[40];
    snprintf(shape, sizeof shape, "input=%dx3x224x224", batch);
    if (ir_parse_input_shape(shape, &s, e)) goto out;
    if (model_load_batch("bench_placement", path, &s, 1, batch, &lo, &g, e) || pass_run_all(&g, e)) goto out;
    BkOptions o;
    bk_options_default(&o);
    o.placement = way == STAGED ? BK_PLACE_AUTO : way == SPLIT1 || way == SPLIT2 ? BK_PLACE_SPLIT : BK_PLACE_CHIP;
    if (way == SPLIT1 || way == SPLIT2) {
        o.schedule = BK_SCHED_UNIFORM;
        o.micro_batch = way == SPLIT1 ? 1 : 2;
    }
    if (chip_compile_graph(&g, chip, &o, 0, &abm, &len, &sum, e)) goto out;
    r->cpu = cpu_s() - c0;
    r->dram_tensors = sum.act_dram_tensors;
    if (sum.nstages > 1)
        snprintf(r->how, sizeof r->how, "%d stages, mb %d then %d, from '%s'", sum.nstages, sum.stage_m[0], sum.stage_m[1],
                 sum.stage_in[1]);
    else if (sum.split) snprintf(r->how, sizeof r->how, "split, mb %d", sum.micro_batch);
    else snprintf(r->how, sizeof r->how, "chip");
    if (chip_exec_open(&x, chip, abm, len, SIM_MODE_TIMING, 0, e)) goto out;
    if (chip_exec_run_zeros(&x, &g, ISA_F32, e)) goto out;
    const AtlSimStats *st = sim_stats(x.sim);
    int times = way == UNI1 ? BATCH : 1;
    r->cycles = st->cycles * (uint64_t)times;
    r->dram = (st->bytes.dram_rd + st->bytes.dram_wr) * (uint64_t)times;
    r->macs = st->macs * (uint64_t)times;
    r->util = st->mm_util;
    rc = 0;
out:
    if (rc) snprintf(r->error, sizeof r->error, "%s", e->msg);
    chip_exec_close(&x);
    free(abm);
    bk_summary_free(&sum);
    ir_free(&g);
    return rc;
}

/* ---- pipelines over clusters: ResNet-50 at batch 8 on configs/a1x16-noc.ini ----
 * The chip with cluster links, compiled three ways: --placement pipeline
 * (stages on clusters of their own, boundaries sent over the NoC),
 * placement split as auto's staged search makes it, and the whole chip;
 * run timing-only. Columns: cycles and images/s, the cost model's
 * estimate, DRAM bytes, bytes over the clusters' DRAM links, bytes copied
 * cluster to cluster (and the link crossings), compile CPU seconds. Its
 * own generated section, "bench_placement_noc" of docs/benchmarks.md. */
#define NOC_CHIP "configs/a1x16-noc.ini"
enum { NOC_PIPE, NOC_SPLIT, NOC_WHOLE, NOC_WAYS };
static const char *const noc_way_names[NOC_WAYS] = {"pipeline", "split (staged search)", "chip, batch 8"};
static const int noc_placement[NOC_WAYS] = {BK_PLACE_PIPELINE, BK_PLACE_SPLIT, BK_PLACE_CHIP};

typedef struct NocRow {
    uint64_t cycles, est, dram, dram_link, peer, peer_link;
    double cpu;
    char how[200], error[200];
} NocRow;

static int noc_way(const AtlChip *chip, const char *path, int way, NocRow *r, AtlErr *e)
{
    IrGraph g;
    OnnxLoadOpts lo = {1, 0, 0, 0};
    IrInputShape s;
    uint8_t *abm = NULL;
    size_t len = 0;
    BkSummary sum;
    ChipExec x;
    int rc = -1;
    memset(&sum, 0, sizeof sum);
    memset(&x, 0, sizeof x);
    ir_init(&g);
    double c0 = cpu_s();
    char shape[40];
    snprintf(shape, sizeof shape, "input=%dx3x224x224", BATCH);
    BkOptions o;
    bk_options_default(&o);
    o.placement = noc_placement[way];
    if (ir_parse_input_shape(shape, &s, e) || model_load_batch("bench_placement", path, &s, 1, BATCH, &lo, &g, e) ||
        pass_run_all(&g, e) || chip_compile_graph(&g, chip, &o, 0, &abm, &len, &sum, e))
        goto out;
    r->cpu = cpu_s() - c0;
    r->est = sum.est_cycles;
    size_t k = 0;
    if (sum.pipeline)
        for (int i = 0; i < sum.nstages && k < sizeof r->how; i++)
            k += (size_t)snprintf(r->how + k, sizeof r->how - k, "%sunits %d-%d on %d cluster%s", i ? "; " : "", sum.stage_row[i],
                                  (i + 1 < sum.nstages ? sum.stage_row[i + 1] : sum.nlayers) - 1, sum.stage_clusters[i],
                                  sum.stage_clusters[i] > 1 ? "s" : "");
    else if (sum.nstages > 1) snprintf(r->how, sizeof r->how, "split, %d stages, mb %d then %d", sum.nstages, sum.stage_m[0], sum.stage_m[1]);
    else if (sum.split) snprintf(r->how, sizeof r->how, "split, mb %d on %d clusters", sum.micro_batch, sum.clusters);
    else snprintf(r->how, sizeof r->how, "chip");
    if (chip_exec_open(&x, chip, abm, len, SIM_MODE_TIMING, 0, e) || chip_exec_run_zeros(&x, &g, ISA_F32, e)) goto out;
    const AtlSimStats *st = sim_stats(x.sim);
    r->cycles = st->cycles;
    r->dram = st->bytes.dram_rd + st->bytes.dram_wr;
    r->dram_link = st->bytes.noc;
    r->peer = st->bytes.peer;
    r->peer_link = st->bytes.peer_link;
    rc = 0;
out:
    if (rc) snprintf(r->error, sizeof r->error, "%s", e->msg);
    chip_exec_close(&x);
    free(abm);
    bk_summary_free(&sum);
    ir_free(&g);
    return rc;
}

/* The rows into table (k bytes written so far); 1 when a way failed. */
static int noc_section(char *table, size_t cap, size_t *k)
{
    AtlChip chip;
    AtlErr e;
    if (cfg_load(NOC_CHIP, &chip, &e)) { fprintf(stderr, "bench_placement: %s\n", e.msg); return 1; }
    int failed = 0;
    *k += (size_t)snprintf(table + *k, cap - *k,
                           "| model | chip | placement | how | images/s | cycles (8 images) | estimate | DRAM bytes | DRAM link bytes "
                           "| cluster to cluster bytes (x links) | compile cpu s |\n"
                           "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int w = 0; w < NOC_WAYS; w++) {
        NocRow r;
        memset(&r, 0, sizeof r);
        if (noc_way(&chip, models[0][1], w, &r, &e)) failed = 1;
        fprintf(stderr, "bench_placement: resnet50 on %s, %s: %llu cycles\n", chip.name, noc_way_names[w], (unsigned long long)r.cycles);
        if (r.error[0])
            *k += (size_t)snprintf(table + *k, cap - *k, "| resnet50 | %s | %s | error: %s ||||||||\n", chip.name, noc_way_names[w], r.error);
        else
            *k += (size_t)snprintf(table + *k, cap - *k, "| resnet50 | %s | %s | %s | %.0f | %llu | %llu | %llu | %llu | %llu (%llu) | %.2f |\n",
                                   chip.name, noc_way_names[w], r.how, BATCH * chip.freq_mhz * 1e6 / (double)r.cycles,
                                   (unsigned long long)r.cycles, (unsigned long long)r.est, (unsigned long long)r.dram,
                                   (unsigned long long)r.dram_link, (unsigned long long)r.peer, (unsigned long long)r.peer_link, r.cpu);
    }
    return failed;
}

/* Replaces the generated section "bench_placement_noc" with the table. */
static int noc_section_write(const char *noc_table)
{
    static char body[1 << 14];
    AtlErr e;
    snprintf(body, sizeof body,
             "Produced by `make bench` (`build/bench/bench_placement`; `--models noc` runs this table alone): ResNet-50 "
             "(224x224, synthetic weights, fp32) at batch 8 on `" NOC_CHIP "` (a1x16 with a 4 x 4 mesh of cluster links), "
             "compiled three ways and run timing-only; estimate = the cost model's cycles (the pipeline's: fill plus the "
             "slowest stage's steady state); DRAM link bytes = bytes over the clusters' links to DRAM; cluster to cluster = "
             "bytes copied into another cluster's SRAM over the NoC, and in brackets times the links they crossed.\n\n%s",
             noc_table);
    if (doc_section_write_file(DOC, "# Benchmarks", "bench_placement_noc", "## Pipelines over clusters", body, &e)) {
        fprintf(stderr, "bench_placement: %s\n", e.msg);
        return 1;
    }
    return 0;
}

static int wanted(const char *list, const char *name)
{
    return !list || strstr(list, name) != NULL;
}

int main(int argc, char **argv)
{
    int write_doc = 1;
    const char *list = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-doc")) write_doc = 0;
        else if (!strcmp(argv[i], "--models") && i + 1 < argc) list = argv[++i];
        else { fprintf(stderr, "usage: bench_placement [--no-doc] [--models a,b]\n"); return 2; }
    }
    int noc_doc = write_doc && (!list || !strcmp(list, "noc"));   /* the pipeline table's section, alone with --models noc */
    if (list) write_doc = 0;
    static char table[1 << 15];
    size_t k = 0;
    int failed = 0;
    k += (size_t)snprintf(table + k, sizeof table - k,
                          "| model | chip | schedule | how | images/s | cycles (8 images) | vs uniform mb 1 | vs best uniform "
                          "| DRAM bytes | DRAM tensors | MAC util | compile cpu s |\n"
                          "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int mi = 0; mi < 2; mi++) {
        if (!wanted(list, models[mi][0])) continue;
        for (int ci = 0; ci < 2; ci++) {
            AtlChip chip;
            AtlErr e;
            if (cfg_load(chips[ci], &chip, &e)) { fprintf(stderr, "bench_placement: %s\n", e.msg); return 1; }
            Row rows[NWAYS];
            memset(rows, 0, sizeof rows);
            for (int w = 0; w < NWAYS; w++) {
                if (run_way(&chip, models[mi][1], w, &rows[w], &e)) failed = 1;
                fprintf(stderr, "bench_placement: %s on %s, %s: %llu cycles\n", models[mi][0], chip.name, way_names[w],
                        (unsigned long long)rows[w].cycles);
            }
            uint64_t best = 0;
            for (int w = CHIP; w <= SPLIT2; w++)
                if (rows[w].cycles && (!best || rows[w].cycles < best)) best = rows[w].cycles;
            for (int w = 0; w < NWAYS; w++) {
                const Row *r = &rows[w];
                if (r->error[0]) {
                    k += (size_t)snprintf(table + k, sizeof table - k, "| %s | %s | %s | error: %s |||||||||\n", models[mi][0],
                                          chip.name, way_names[w], r->error);
                    continue;
                }
                char vs1[16] = "", vsb[16] = "";
                if (w != UNI1 && r->cycles) snprintf(vs1, sizeof vs1, "%.2fx", (double)rows[UNI1].cycles / (double)r->cycles);
                if (w == STAGED && r->cycles && best) snprintf(vsb, sizeof vsb, "%.2fx", (double)best / (double)r->cycles);
                k += (size_t)snprintf(table + k, sizeof table - k, "| %s | %s | %s | %s | %.0f | %llu | %s | %s | %llu | %d | %.2f%% | %.2f |\n",
                                      models[mi][0], chip.name, way_names[w], r->how,
                                      BATCH * chip.freq_mhz * 1e6 / (double)r->cycles, (unsigned long long)r->cycles, vs1, vsb,
                                      (unsigned long long)r->dram, r->dram_tensors, 100 * r->util, r->cpu);
            }
        }
    }
    printf("%s", table);
    /* pipelines over clusters: their own table and section */
    static char noc_table[1 << 13];
    size_t nk = 0;
    if (wanted(list, "noc") && noc_section(noc_table, sizeof noc_table, &nk)) failed = 1;
    printf("\n%s", noc_table);
    if (failed) { fprintf(stderr, "bench_placement: a compile or run failed (see the table)\n"); return 1; }
    if (write_doc) {
        static char body[1 << 16];
        AtlErr e;
        snprintf(body, sizeof body,
                 "Produced by `make bench` (`build/bench/bench_placement`): ResNet-50 and MobileNetV2 (224x224, synthetic "
                 "weights, fp32) at batch 8, each compiled five ways and run timing-only; `uniform mb 1` is batch 1 on the whole "
                 "chip run 8 times; `best uniform` the faster of `chip, batch 8` and the two split uniform rows; DRAM tensors = "
                 "intermediate tensors that live in DRAM (those of one instance of each stage, and every stage "
                 "boundary); compile cpu s = the process's CPU time for import, passes and backend.\n\n%s",
                 table);
        if (doc_section_write_file(DOC, "# Benchmarks", "bench_placement", "## Placement over clusters and staged schedules",
                                   body, &e)) {
            fprintf(stderr, "bench_placement: %s\n", e.msg);
            return 1;
        }
    }
    if (noc_doc && noc_section_write(noc_table)) return 1;
    return 0;
}
