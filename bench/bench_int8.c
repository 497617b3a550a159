/* bench_int8.c - what int8 buys: the bundled CNNs and transformer blocks
 * and ResNet-50 (models/full, synthetic weights, 224x224) on
 * configs/a1.ini at batch 1, in fp32 and in int8 (quantised by
 * tools/quantize.h with min/max ranges: the bundled models on their
 * reference input, ResNet-50 on one deterministic random image; then the
 * QDQ model compiled), both with --group auto and run timing-only on the
 * simulator. Columns: simulated cycles, int8 over fp32, DRAM bytes, MAC
 * utilisation, the QDQ model's cosine to the float one on the calibration
 * data (ResNet-50: not measured, it would take a minute of interpreter),
 * CPU seconds for quantisation and compile. Prints the table and replaces
 * the generated section "bench_int8" of docs/benchmarks.md (run from the
 * repository root; --no-doc skips it; --models a,b picks models). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "compiler/passes/passes.h"
#include "tools/chip_exec.h"
#include "tools/model_io.h"
#include "tools/quantize.h"
#include "util/docsection.h"

#define CHIP "configs/a1.ini"
#define DOC "docs/benchmarks.md"

typedef struct Model { const char *name, *path, *shape, *calib; int synthetic; } Model;

static const Model models[] = {
    {"digits_cnn", "models/digits_cnn.onnx", "input=1x1x8x8", "models/digits_cnn.ref.npz", 0},
    {"lenet5", "models/lenet5.onnx", "input=1x1x32x32", "models/lenet5.ref.npz", 0},
    {"resnet20_cifar", "models/resnet20_cifar.onnx", "input=1x3x32x32", "models/resnet20_cifar.ref.npz", 0},
    {"mobilenetv2_035", "models/mobilenetv2_035.onnx", "input=1x3x96x96", "models/mobilenetv2_035.ref.npz", 0},
    {"encoder_block", "models/encoder_block.onnx", "input=1x16x64", "models/encoder_block.ref.npz", 0},
    {"vit_tiny", "models/vit_tiny.onnx", "input=1x3x32x32", "models/vit_tiny.ref.npz", 0},
    {"resnet50", "models/full/resnet50.onnx", "input=1x3x224x224", NULL, 1},
};
enum { NMODELS = sizeof models / sizeof models[0] };

typedef struct Run { uint64_t cycles, dram; double util, cpu, cos; char error[256]; } Run;

static double cpu_s(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* Compiles (int8: quantises first) and runs m timing-only. */
static int run(const AtlChip *chip, const Model *m, int int8, Run *r, AtlErr *e)
{
    IrGraph g;
    IrInputShape s;
    OnnxLoadOpts lo = {m->synthetic, 0, 0, 0};
    CalibData cd;
    PbBuf q = {0};
    uint8_t *abm = NULL;
    size_t len = 0;
    ChipExec x;
    IrTensor in;
    int rc = -1;
    memset(&cd, 0, sizeof cd);
    memset(&x, 0, sizeof x);
    memset(&in, 0, sizeof in);
    ir_init(&g);
    r->cos = NAN;
    double c0 = cpu_s();
    if (ir_parse_input_shape(m->shape, &s, e) || model_load_opts("bench_int8", m->path, &s, 1, &lo, &g, e) || pass_run_all(&g, e)) goto out;
    if (int8) {
        QzOptions o;
        qz_options_default(&o);
        o.skip_eval = !m->calib;
        const char *paths[1] = {m->calib};
        if (!m->calib && calib_data_random(&g, 12345, &cd, e)) goto out;
        if (qz_quantize_model(m->path, &lo, &s, 1, paths, m->calib ? 1 : 0, m->calib ? NULL : &cd, &o, NULL, &q, &r->cos, e))
            goto out;
        ir_free(&g);
        if (model_load_buffer(q.p, q.n, m->path, &s, 1, &g, e) || pass_run_all(&g, e)) goto out;
    }
    if (chip_compile_graph(&g, chip, NULL, 0, &abm, &len, NULL, e)) goto out;
    r->cpu = cpu_s() - c0;
    if (chip_exec_open(&x, chip, abm, len, SIM_MODE_TIMING, 0, e)) goto out;
    in = g.t[g.inputs[0]];
    in.data = NULL;
    if (ir_alloc_data(&in, e) || chip_exec_run(&x, &in, 1, e)) goto out;
    const AtlSimStats *st = sim_stats(x.sim);
    r->cycles = st->cycles;
    r->util = st->mm_util;
    r->dram = st->bytes.dram_rd + st->bytes.dram_wr;
    rc = 0;
out:
    if (rc) snprintf(r->error, sizeof r->error, "%s", e->msg);
    free(in.data);
    chip_exec_close(&x);
    free(abm);
    pb_free(&q);
    calib_data_free(&cd);
    ir_free(&g);
    return rc;
}

static int wanted(const char *list, const char *name)
{
    if (!list) return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n])) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    int write_doc = 1;
    const char *list = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-doc")) write_doc = 0;
        else if (!strcmp(argv[i], "--models") && i + 1 < argc) list = argv[++i];
        else { fprintf(stderr, "usage: bench_int8 [--no-doc] [--models a,b]\n"); return 2; }
    }
    if (list) write_doc = 0;
    AtlErr e;
    AtlChip chip;
    if (cfg_load(CHIP, &chip, &e)) { fprintf(stderr, "bench_int8: %s\n", e.msg); return 1; }
    static char table[1 << 15];
    size_t k = (size_t)snprintf(table, sizeof table,
                                "| model | fp32 cycles | int8 cycles | int8 / fp32 | fp32 DRAM bytes | int8 DRAM bytes | "
                                "fp32 MAC util | int8 MAC util | cosine | cpu s fp32 / int8 |\n"
                                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    int failed = 0;
    for (int mi = 0; mi < NMODELS; mi++) {
        if (!wanted(list, models[mi].name)) continue;
        Run f, q;
        memset(&f, 0, sizeof f);
        memset(&q, 0, sizeof q);
        if (run(&chip, &models[mi], 0, &f, &e) | run(&chip, &models[mi], 1, &q, &e)) {
            failed = 1;
            k += (size_t)snprintf(table + k, sizeof table - k, "| %s | error: %s |||||||||\n", models[mi].name,
                                  f.error[0] ? f.error : q.error);
            continue;
        }
        char cos[32] = "not measured";
        if (!isnan(q.cos)) snprintf(cos, sizeof cos, "%.5f", q.cos);
        k += (size_t)snprintf(table + k, sizeof table - k, "| %s | %llu | %llu | %.3f | %llu | %llu | %.2f%% | %.2f%% | %s | %.2f / %.2f |\n",
                              models[mi].name, (unsigned long long)f.cycles, (unsigned long long)q.cycles,
                              (double)q.cycles / (double)f.cycles, (unsigned long long)f.dram, (unsigned long long)q.dram,
                              100 * f.util, 100 * q.util, cos, f.cpu, q.cpu);
        fprintf(stderr, "bench_int8: %s: %llu fp32, %llu int8 cycles\n", models[mi].name, (unsigned long long)f.cycles,
                (unsigned long long)q.cycles);
    }
    printf("%s", table);
    if (failed) { fprintf(stderr, "bench_int8: a model failed (see the table)\n"); return 1; }
    if (write_doc) {
        static char body[1 << 16];
        snprintf(body, sizeof body,
                 "Produced by `make bench` (`build/bench/bench_int8`) on " CHIP ": each model at batch 1, fp32 and int8 "
                 "(min/max calibration on the model's reference input; ResNet-50 on one random image, synthetic weights), "
                 "both with `--group auto`, run timing-only; cosine = the QDQ model against the float one on the "
                 "calibration data; cpu s = quantisation (int8), import, passes and backend.\n\n%s",
                 table);
        if (doc_section_write_file(DOC, "# Benchmarks", "bench_int8", "## int8", body, &e)) {
            fprintf(stderr, "bench_int8: %s\n", e.msg);
            return 1;
        }
    }
    return 0;
}
