/* bench_placement.c - what placement over clusters and staged schedules
 * buy (issue #13): ResNet-50 and MobileNetV2 (224x224, models/full,
 * synthetic weights) in fp32 and int8 (quantised with min/max ranges on
 * one deterministic random image, as bench_int8 does) on configs/a1.ini
 * and configs/a1x16.ini (a1 with 16 clusters), at batch 8 (and with
 * --full at batch 1, 4, 8 and 16), each batch compiled four ways and run
 * timing-only:
 *   uniform mb 1     batch 1 on the whole chip, run B times (cycles x B)
 *   chip             batch B, every layer on every core (--placement chip)
 *   best uniform     the batch split over clusters with one micro-batch for
 *                    all layers, the fastest of 1, 2, 4 and 8 (those that
 *                    divide B; --schedule uniform --micro-batch M)
 *   staged           what `atoll compile --batch B` chooses (placement
 *                    auto, the staged search)
 * (at batch 1 every way is the first). Columns: images/s at the chip's
 * clock, cycles for the B images, the staged row's speed-up over uniform
 * mb 1 and over the best uniform, DRAM bytes, intermediate tensors left
 * in DRAM, the matrix-unit utilisation of ResNet-50's layer3 and layer4
 * (GraphTurbo's stages 3 and 4: 79% and 62% there), of each stage of a
 * staged schedule and of the whole run, compile CPU seconds.
 *
 * Utilisation is GraphTurbo's metric: the matrix-unit cycles the useful
 * MACs of those layers need at their dtype's peak (the compiler's
 * BkLayerInfo.mat_cycles, times the instances) over the core-cycles the
 * layers held in the simulation (AtlLayerStats.held), the same figure
 * `atoll run --profile` prints per stage. A layer group is counted in the
 * ResNet stage of its first member.
 *
 * Prints the table (row by row as they come) and replaces the generated
 * section "bench_placement"
 * of docs/benchmarks.md (run from the repository root; --no-doc skips it;
 * --models a,b picks models, --dtypes fp32,int8 dtypes, --chips a1,a1x16
 * chips, and any of those leaves the doc alone; `--models noc` runs the
 * pipeline table below alone, its own section). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench_run.h"
#include "tools/calib.h"
#include "tools/quantize.h"
#include "util/docsection.h"

#define DOC "docs/benchmarks.md"
#define MAXB 16

static const char *const chips[] = {"configs/a1.ini", "configs/a1x16.ini"};
static const char *const chip_names[] = {"a1", "a1x16"};
static const char *const models[][2] = {{"resnet50", "models/full/resnet50.onnx"},
                                        {"mobilenetv2_100", "models/full/mobilenetv2_100.onnx"}};
static const char *const dtypes[] = {"fp32", "int8"};
static const int micro_batches[] = {1, 2, 4, 8};

enum { UNI1, CHIP, BEST, STAGED, NWAYS };

typedef struct Row {
    uint64_t cycles, dram;
    double cpu;
    int dram_tensors;
    double util[3];           /* layer3, layer4, the whole run (negative: none) */
    char how[160], stages[96], error[200];
} Row;

/* What to load: the model at batch b, or the QDQ model q (int8). */
static BenchLoad load_of(const char *path, const PbBuf *q, int b, char *shape, size_t cap)
{
    snprintf(shape, cap, "input=%dx3x224x224", b);
    BenchLoad ld = {path, shape, b, 1, q};
    return ld;
}

/* How many instances run row i of s (its rows describe one instance of
 * each stage; placement chip: the whole batch). */
static uint64_t row_instances(const BkSummary *s, int i)
{
    if (!s->split) return 1;
    if (s->nstages < 2) return (uint64_t)s->instances;
    int k = 0;
    while (k + 1 < s->nstages && s->stage_row[k + 1] <= i) k++;
    return (uint64_t)(s->batch / s->stage_m[k]);
}

/* The utilisation of the rows i with keep(i): useful matrix-unit cycles /
 * the core-cycles their layers held; -1 without such rows. */
static double util_of(const BkSummary *s, const AtlSimStats *st, int lo, int hi, const char *prefix)
{
    uint64_t mat = 0, held = 0;
    int any = 0;
    for (int i = lo; i < hi; i++) {
        const BkLayerInfo *l = &s->layers[i];
        if (prefix && strncmp(l->name, prefix, strlen(prefix))) continue;
        any = 1;
        mat += l->mat_cycles * row_instances(s, i);
        if (l->layer_id >= 0 && l->layer_id < st->nlayers) held += st->layers[l->layer_id].held;
    }
    return any && held ? (double)mat / (double)held : -1;
}

/* Compiles the graph of b images with options o and runs it timing-only. */
static int run_one(const AtlChip *chip, const char *path, const PbBuf *q, int b, const BkOptions *o, Row *r, AtlErr *e)
{
    BenchRun run;
    char shape[48];
    memset(r, 0, sizeof *r);
    BenchLoad ld = load_of(path, q, b, shape, sizeof shape);
    int rc = bench_run(&run, "bench_placement", chip, &ld, o, ISA_F32, e);
    const BkSummary *sum = &run.sum;
    r->cpu = run.compile_cpu;
    r->dram_tensors = sum->act_dram_tensors;
    if (sum->nstages > 1) {
        size_t n = (size_t)snprintf(r->how, sizeof r->how, "%d stages, mb", sum->nstages);
        for (int i = 0; i < sum->nstages && n < sizeof r->how; i++)
            n += (size_t)(sum->stage_chip[i] ? snprintf(r->how + n, sizeof r->how - n, "%schip", i ? "/" : " ")
                                             : snprintf(r->how + n, sizeof r->how - n, "%s%d", i ? "/" : " ", sum->stage_m[i]));
        if (n < sizeof r->how) snprintf(r->how + n, sizeof r->how - n, ", from '%s'", sum->stage_in[1]);
    } else if (sum->split) snprintf(r->how, sizeof r->how, "split, mb %d", sum->micro_batch);
    else snprintf(r->how, sizeof r->how, "chip");
    if (rc) {
        snprintf(r->error, sizeof r->error, "%s", e->msg);
        bench_run_free(&run);
        return -1;
    }
    const AtlSimStats *st = run.st;
    r->cycles = st->cycles;
    r->dram = st->bytes.dram_rd + st->bytes.dram_wr;
    r->util[0] = util_of(sum, st, 0, sum->nlayers, "/layer3/");
    r->util[1] = util_of(sum, st, 0, sum->nlayers, "/layer4/");
    r->util[2] = util_of(sum, st, 0, sum->nlayers, NULL);
    for (int i = 0, n = 0; sum->nstages > 1 && i < sum->nstages; i++) {
        int end = i + 1 < sum->nstages ? sum->stage_row[i + 1] : sum->nlayers;
        n += snprintf(r->stages + n, sizeof r->stages - (size_t)n, "%s%.0f%%", i ? " / " : "",
                      100 * util_of(sum, st, sum->stage_row[i], end, NULL));
        if ((size_t)n >= sizeof r->stages) break;
    }
    bench_run_free(&run);
    return 0;
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
#define NOC_BATCH 8
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
    BenchRun run;
    char shape[48];
    BkOptions o;
    bk_options_default(&o);
    o.placement = noc_placement[way];
    BenchLoad ld = load_of(path, NULL, NOC_BATCH, shape, sizeof shape);
    int rc = bench_run(&run, "bench_placement", chip, &ld, &o, ISA_F32, e);
    const BkSummary *sum = &run.sum;
    r->cpu = run.compile_cpu;
    r->est = sum->est_cycles;
    size_t k = 0;
    if (sum->pipeline)
        for (int i = 0; i < sum->nstages && k < sizeof r->how; i++)
            k += (size_t)snprintf(r->how + k, sizeof r->how - k, "%sunits %d-%d on %d cluster%s", i ? "; " : "", sum->stage_row[i],
                                  (i + 1 < sum->nstages ? sum->stage_row[i + 1] : sum->nlayers) - 1, sum->stage_clusters[i],
                                  sum->stage_clusters[i] > 1 ? "s" : "");
    else if (sum->nstages > 1) snprintf(r->how, sizeof r->how, "split, %d stages, mb %d then %d", sum->nstages, sum->stage_m[0], sum->stage_m[1]);
    else if (sum->split) snprintf(r->how, sizeof r->how, "split, mb %d on %d clusters", sum->micro_batch, sum->clusters);
    else snprintf(r->how, sizeof r->how, "chip");
    if (rc) {
        snprintf(r->error, sizeof r->error, "%s", e->msg);
        bench_run_free(&run);
        return -1;
    }
    r->cycles = run.st->cycles;
    r->dram = run.st->bytes.dram_rd + run.st->bytes.dram_wr;
    r->dram_link = run.st->bytes.noc;
    r->peer = run.st->bytes.peer;
    r->peer_link = run.st->bytes.peer_link;
    bench_run_free(&run);
    return 0;
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
                                   chip.name, noc_way_names[w], r.how, NOC_BATCH * chip.freq_mhz * 1e6 / (double)r.cycles,
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

/* The four ways at batch b; uni1 is batch 1 on the whole chip (run once
 * per model, chip and dtype). 0, or 1 when a compile or run failed. */
static int run_batch(const AtlChip *chip, const char *path, const PbBuf *q, int b, const Row *uni1, Row *rows, AtlErr *e)
{
    int failed = 0;
    BkOptions o;
    rows[UNI1] = *uni1;
    rows[UNI1].cycles *= (uint64_t)b;
    rows[UNI1].dram *= (uint64_t)b;
    if (b == 1) return 0;
    bk_options_default(&o);
    o.placement = BK_PLACE_CHIP;
    failed |= run_one(chip, path, q, b, &o, &rows[CHIP], e) != 0;
    memset(&rows[BEST], 0, sizeof rows[BEST]);
    for (size_t i = 0; i < sizeof micro_batches / sizeof micro_batches[0]; i++) {
        if (b % micro_batches[i]) continue;
        Row r;
        bk_options_default(&o);
        o.placement = BK_PLACE_SPLIT;
        o.schedule = BK_SCHED_UNIFORM;
        o.micro_batch = micro_batches[i];
        if (run_one(chip, path, q, b, &o, &r, e)) { failed = 1; rows[BEST] = r; break; }
        double cpu = rows[BEST].cpu + r.cpu;
        if (!rows[BEST].cycles || r.cycles < rows[BEST].cycles) rows[BEST] = r;
        rows[BEST].cpu = cpu;   /* every micro-batch tried */
    }
    bk_options_default(&o);
    failed |= run_one(chip, path, q, b, &o, &rows[STAGED], e) != 0;
    return failed;
}

static int wanted(const char *list, const char *name)
{
    if (!list) return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n])) return 1;
    return 0;
}

static void pct(char *out, size_t cap, double u) { if (u < 0) snprintf(out, cap, "-"); else snprintf(out, cap, "%.0f%%", 100 * u); }

/* One table row (way w of rows at batch b) into t at *k. */
static void put_row(char *t, size_t cap, size_t *k, const char *model, const char *chip, const char *dt, int b, int w,
                    const Row *rows, double mhz)
{
    static const char *const way_names[NWAYS] = {"uniform mb 1", "chip", "best uniform", "staged (auto)"};
    const Row *r = &rows[w];
    char what[48], vs1[16] = "", vsb[16] = "", u3[16], u4[16], ua[16];
    if (b == 1) snprintf(what, sizeof what, "batch 1 (every way)");
    else if (w == UNI1) snprintf(what, sizeof what, "uniform mb 1 (%d x batch 1)", b);
    else snprintf(what, sizeof what, "%s", way_names[w]);
    if (r->error[0]) {
        *k += (size_t)snprintf(t + *k, cap - *k, "| %s | %s | %s | %d | %s | error: %s |||||||||||\n", model, chip, dt, b, what, r->error);
        return;
    }
    if (w == STAGED && r->cycles) {
        snprintf(vs1, sizeof vs1, "%.2fx", (double)rows[UNI1].cycles / (double)r->cycles);
        if (rows[BEST].cycles) snprintf(vsb, sizeof vsb, "%.2fx", (double)rows[BEST].cycles / (double)r->cycles);
    }
    pct(u3, sizeof u3, r->util[0]);
    pct(u4, sizeof u4, r->util[1]);
    pct(ua, sizeof ua, r->util[2]);
    *k += (size_t)snprintf(t + *k, cap - *k,
                           "| %s | %s | %s | %d | %s | %s | %.0f | %llu | %s | %s | %llu | %d | %s | %s | %s | %s | %.1f |\n", model,
                           chip, dt, b, what, r->how, b * mhz * 1e6 / (double)r->cycles, (unsigned long long)r->cycles, vs1, vsb,
                           (unsigned long long)r->dram, r->dram_tensors, u3, u4, r->stages[0] ? r->stages : "-", ua, r->cpu);
}

int main(int argc, char **argv)
{
    int write_doc = 1, full = 0;
    const char *mlist = NULL, *dlist = NULL, *clist = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-doc")) write_doc = 0;
        else if (!strcmp(argv[i], "--full")) full = 1;
        else if (!strcmp(argv[i], "--models") && i + 1 < argc) mlist = argv[++i];
        else if (!strcmp(argv[i], "--dtypes") && i + 1 < argc) dlist = argv[++i];
        else if (!strcmp(argv[i], "--chips") && i + 1 < argc) clist = argv[++i];
        else {
            fprintf(stderr, "usage: bench_placement [--no-doc] [--full] [--models a,b] [--dtypes fp32,int8] [--chips a1,a1x16]\n");
            return 2;
        }
    }
    /* the pipeline table's section, alone with --models noc */
    int noc_doc = write_doc && (!mlist || !strcmp(mlist, "noc")) && !dlist && !clist;
    if (mlist || dlist || clist) write_doc = 0;
    static const int all_batches[] = {1, 4, 8, 16}, default_batches[] = {8};
    const int *batches = full ? all_batches : default_batches;
    int nb = full ? 4 : 1;
    static char table[1 << 17];
    size_t k = 0;
    int failed = 0;
    k += (size_t)snprintf(table + k, sizeof table - k,
                          "| model | chip | dtype | batch | schedule | how | images/s | cycles | vs uniform mb 1 | vs best uniform "
                          "| DRAM bytes | DRAM tensors | layer3 util | layer4 util | stage utils | run util | compile cpu s |\n"
                          "|---|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|\n");
    fputs(table, stdout);
    for (int mi = 0; mi < 2; mi++) {
        if (!wanted(mlist, models[mi][0])) continue;
        for (int di = 0; di < 2; di++) {
            if (!wanted(dlist, dtypes[di])) continue;
            AtlErr e;
            PbBuf q = {0};
            if (di == 1) {
                /* int8: the QDQ model of one random image's ranges, quantised once */
                IrGraph g;
                CalibData cd;
                QzOptions qo;
                IrInputShape s;
                OnnxLoadOpts lo = {1, 0, 0, 0};
                memset(&cd, 0, sizeof cd);
                qz_options_default(&qo);
                qo.skip_eval = 1;
                char shape[48];
                BenchLoad ld = load_of(models[mi][1], NULL, 1, shape, sizeof shape);
                int bad = bench_load_graph(&g, "bench_placement", &ld, &e) || calib_data_random(&g, 12345, &cd, &e) ||
                          ir_parse_input_shape("input=1x3x224x224", &s, &e) ||
                          qz_quantize_model(models[mi][1], &lo, &s, 1, NULL, 0, &cd, &qo, NULL, &q, NULL, &e);
                ir_free(&g);
                calib_data_free(&cd);
                if (bad) {
                    fprintf(stderr, "bench_placement: %s int8: %s\n", models[mi][0], e.msg);
                    k += (size_t)snprintf(table + k, sizeof table - k, "| %s | | int8 | | error: %s ||||||||||||\n", models[mi][0], e.msg);
                    failed = 1;
                    pb_free(&q);
                    continue;
                }
            }
            for (int ci = 0; ci < 2; ci++) {
                if (!wanted(clist, chip_names[ci])) continue;
                AtlChip chip;
                if (cfg_load(chips[ci], &chip, &e)) { fprintf(stderr, "bench_placement: %s\n", e.msg); return 1; }
                Row uni1;
                BkOptions o;
                bk_options_default(&o);
                o.placement = BK_PLACE_CHIP;
                failed |= run_one(&chip, models[mi][1], di ? &q : NULL, 1, &o, &uni1, &e) != 0;
                for (int bi = 0; bi < nb; bi++) {
                    Row rows[NWAYS];
                    memset(rows, 0, sizeof rows);
                    failed |= run_batch(&chip, models[mi][1], di ? &q : NULL, batches[bi], &uni1, rows, &e);
                    fprintf(stderr, "bench_placement: %s %s on %s, batch %d: staged %llu cycles, best uniform %llu (%s)\n",
                            models[mi][0], dtypes[di], chip.name, batches[bi], (unsigned long long)rows[STAGED].cycles,
                            (unsigned long long)rows[BEST].cycles, rows[BEST].how);
                    for (int w = 0; w < (batches[bi] == 1 ? 1 : NWAYS); w++) {
                        size_t at = k;
                        put_row(table, sizeof table, &k, models[mi][0], chip.name, dtypes[di], batches[bi], w, rows, chip.freq_mhz);
                        fputs(table + at, stdout);   /* as it comes: a long run shows its rows */
                    }
                    fflush(stdout);
                }
            }
            pb_free(&q);
        }
    }
    /* pipelines over clusters: their own table and section */
    static char noc_table[1 << 13];
    size_t nk = 0;
    if (wanted(mlist, "noc") && noc_section(noc_table, sizeof noc_table, &nk)) failed = 1;
    printf("\n%s", noc_table);
    if (failed) { fprintf(stderr, "bench_placement: a compile or run failed (see the table)\n"); return 1; }
    if (write_doc) {
        static char body[1 << 18];
        AtlErr e;
        snprintf(body, sizeof body,
                 "Produced by `make bench` (`build/bench/bench_placement%s`): ResNet-50 and MobileNetV2 (224x224, synthetic "
                 "weights; int8 quantised with min/max ranges of one random image) at batch %s, each batch compiled four ways "
                 "and run timing-only. `uniform mb 1` is batch 1 on the whole chip run B times; `chip` batch B on every core; "
                 "`best uniform` the fastest split with one micro-batch for every layer (of 1, 2, 4, 8; its compile cpu s counts "
                 "them all); `staged` what placement auto with the staged search chooses. DRAM tensors = intermediate tensors "
                 "that live in DRAM (those of one instance of each stage, and every stage boundary). Utilisation = the "
                 "matrix-unit cycles the useful MACs need at their dtype's peak over the core-cycles the layers held "
                 "(GraphTurbo's metric; its stages 3 and 4, ResNet-50's layer3 and layer4: 79%% and 62%%, from 29%% and 18%%); "
                 "stage utils: each stage of a staged schedule; run util: every layer (of the cores that ran: an idle cluster holds "
                 "nothing). compile cpu s = the thread's CPU time for import, passes and "
                 "backend.\n\n%s",
                 full ? " --full" : "", full ? "1, 4, 8 and 16" : "8 (`--full` adds 1, 4 and 16)", table);
        if (doc_section_write_file(DOC, "# Benchmarks", "bench_placement", "## Placement over clusters and staged schedules",
                                   body, &e)) {
            fprintf(stderr, "bench_placement: %s\n", e.msg);
            return 1;
        }
    }
    if (noc_doc && noc_section_write(noc_table)) return 1;
    return 0;
}
