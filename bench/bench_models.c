/* bench_models.c - the bundled models (models/NAME.onnx) compiled for
 * configs/a1.ini and simulated: compile time, simulated cycles, inferences
 * per second at the configured clock, matrix-unit utilisation, DRAM bytes
 * moved against the compulsory bytes (weights + inputs + outputs once),
 * host simulation time, and agreement with the model's reference output
 * (cosine against the PyTorch output stored in NAME.ref.npz).
 *
 * Each model runs as compiled, at the batch of its reference input, on the
 * simulator directly (abm_variant_program: the streams relocated as the
 * firmware would), so the cycles are the model's alone, without firmware
 * or host overheads. Prints the table and replaces the generated section of
 * docs/benchmarks.md (run from the repository root; --no-doc skips it).
 *
 * Fails (exit 1, the document left as it was) when any model fails to
 * compile or run, has an output without a reference array of its name,
 * size and shape, or an output outside the fp32 thresholds of
 * compiler/compare.h; `--models DIR` and model names run others (what
 * test/cli/bench.sh does with broken references). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "compiler/onnx/onnx.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"
#include "compiler/backend/backend.h"
#include "isa/abm_program.h"
#include "tools/compare.h"
#include "isa/config.h"
#include "isa/abm.h"
#include "sim/sim.h"
#include "util/npy.h"
#include "util/docsection.h"

#define CHIP "configs/a1.ini"
#define DOC "docs/benchmarks.md"

static const char *const models[] = {"digits_cnn", "lenet5", "resnet20_cifar", "mobilenetv2_035", "encoder_block", "vit_tiny"};

typedef struct Row {
    const char *model;
    int batch;
    double compile_s, sim_s;
    uint64_t cycles, dram, compulsory, macs;
    double ips, mm_util, cosine, max_abs;
    char error[300];
} Row;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const AtlNdArray *find_array(const AtlNdArray *l, int n, const char *name)
{
    for (int i = 0; i < n; i++) if (!strcmp(l[i].name, name)) return &l[i];
    return NULL;
}

/* dims of an .npz array as an IR tensor view (data not copied) */
static void view_of(const AtlNdArray *a, IrTensor *t)
{
    memset(t, 0, sizeof *t);
    t->name = a->name;
    t->dtype = IR_F32;
    t->ndim = a->ndim;
    for (int k = 0; k < a->ndim; k++) t->dims[k] = a->shape[k];
    t->data = a->data;
}

static int bench_one(const AtlChip *chip, const char *dir, const char *name, Row *row, AtlErr *e)
{
    char path[1024];
    IrGraph g;
    AtlNdArray *ref = NULL;
    int nref = 0, rc = -1;
    AbmWriter *w = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    AbmModel m;
    AtlProgram prog;
    AtlSim *sim = NULL;
    BkSummary sum;
    memset(&m, 0, sizeof m);
    memset(&prog, 0, sizeof prog);
    memset(&sum, 0, sizeof sum);
    ir_init(&g);
    row->model = name;
    snprintf(path, sizeof path, "%s/%s.ref.npz", dir, name);
    if (atl_npz_read(path, &ref, &nref, e)) goto out;
    double t0 = now();
    snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
    if (onnx_load_file(path, &g, e) || ir_toposort(&g, e)) goto out;
    /* fix every input to the reference input's shape */
    for (int i = 0; i < g.nin; i++) {
        IrTensor *t = &g.t[g.inputs[i]];
        const AtlNdArray *a = find_array(ref, nref, t->name);
        if (!a) { atl_fail(e, "%s.ref.npz has no array '%s'", name, t->name); goto out; }
        t->ndim = a->ndim;
        for (int k = 0; k < a->ndim; k++) t->dims[k] = a->shape[k];
        if (i == 0) row->batch = a->ndim ? (int)a->shape[0] : 1;
    }
    if (ir_infer_shapes(&g, e) || pass_run_all(&g, e)) goto out;
    w = abm_writer_new(cfg_fingerprint(chip));
    if (!w) { atl_fail(e, "out of memory"); goto out; }
    BkOptions opt;
    bk_options_default(&opt);
    if (bk_compile(&g, chip, &opt, w, &sum, e) || abm_serialize(w, &buf, &len, e)) goto out;
    row->compile_s = now() - t0;
    if (abm_load_buffer(&m, buf, len, cfg_fingerprint(chip), 0, e)) goto out;
    AbmRegionBases bases;
    if (abm_variant_program(&m, 0, chip, &prog, &bases, e)) goto out;
    AtlSimOptions so;
    sim_options_default(&so);
    so.mode = SIM_MODE_FULL;
    sim = sim_create(chip, &so, e);
    if (!sim || sim_load(sim, &prog, e)) goto out;
    AbmVariant st = abm_variant(&m.view, 0);
    uint64_t io_in = 0, io_out = 0;
    for (uint32_t i = st.tensor_first; i < st.tensor_first + st.tensor_count; i++) {
        AbmTensor t = abm_tensor(&m.view, i);
        if (t.role != ABM_ROLE_INPUT) continue;
        const AtlNdArray *a = find_array(ref, nref, t.name);
        if (!a || (uint64_t)atl_ndarray_numel(a) * 4 != t.size) {
            atl_fail(e, "input '%s': the reference input does not match the compiled tensor (%llu bytes)", t.name,
                     (unsigned long long)t.size);
            goto out;
        }
        uint8_t *d = sim_dram(sim, bases.base[t.region] + t.offset, t.size);
        if (!d) { atl_fail(e, "input '%s' lies outside DRAM", t.name); goto out; }
        memcpy(d, a->data, t.size);
        io_in += t.size;
    }
    double t1 = now();
    if (sim_run(sim, e)) goto out;
    row->sim_s = now() - t1;
    const AtlSimStats *s = sim_stats(sim);
    row->cycles = s->cycles;
    row->macs = s->macs;
    row->mm_util = s->mm_util;
    row->dram = s->bytes.dram_rd + s->bytes.dram_wr;
    row->ips = s->cycles ? chip->freq_mhz * 1e6 / (double)s->cycles * row->batch : 0;
    /* every output must have a reference of its size and shape and meet
     * the fp32 thresholds of compiler/compare.h; any gap fails the model */
    int compared = 0;
    row->cosine = 2;   /* above any cosine: replaced by the first output's */
    for (uint32_t i = st.tensor_first; i < st.tensor_first + st.tensor_count; i++) {
        AbmTensor t = abm_tensor(&m.view, i);
        if (t.role != ABM_ROLE_OUTPUT) continue;
        io_out += t.size;
        const AtlNdArray *a = find_array(ref, nref, t.name);
        if (!a) { atl_fail(e, "output '%s': %s.ref.npz has no array of that name", t.name, name); goto out; }
        if (a->dtype != ATL_NPY_F32 || (uint64_t)atl_ndarray_numel(a) * 4 != t.size) {
            atl_fail(e, "output '%s': the reference (%s, %lld elements) does not match the compiled tensor (%llu bytes of float32)",
                     t.name, atl_npy_dtype_name(a->dtype), (long long)atl_ndarray_numel(a), (unsigned long long)t.size);
            goto out;
        }
        IrTensor want, got;
        view_of(a, &want);
        memset(&got, 0, sizeof got);
        got.name = a->name;
        got.dtype = IR_F32;
        got.ndim = (int)t.ndim;
        for (uint32_t k = 0; k < t.ndim && k < ABM_MAX_DIMS; k++) got.dims[k] = t.dims[k];
        got.data = sim_dram(sim, bases.base[t.region] + t.offset, t.size);
        if (!got.data) { atl_fail(e, "output '%s' lies outside DRAM", t.name); goto out; }
        CmpStats cs;
        CmpThresholds th;
        if (cmp_tensors(&want, &got, &cs, e)) goto out;
        cmp_thresholds_for(IR_F32, NULL, &th);
        if (!cmp_verdict(&want, &got, &th, &cs)) {
            atl_fail(e, "output '%s' differs from PyTorch's: %lld of %lld elements outside rtol %g atol %g x max|ref|, "
                     "%lld NaN/inf mismatches, max abs %.3g, cosine %.7f", t.name, (long long)cs.over_tol, (long long)cs.n,
                     th.rtol, th.atol, (long long)cs.nonfinite_mismatch, cs.max_abs, cs.cosine);
            goto out;
        }
        if (cs.cosine < row->cosine) row->cosine = cs.cosine;
        if (cs.max_abs > row->max_abs) row->max_abs = cs.max_abs;
        compared++;
    }
    if (!compared) { atl_fail(e, "the compiled model has no output to compare"); goto out; }
    row->compulsory = sum.weight_bytes + io_in + io_out;
    rc = 0;
out:
    if (rc) snprintf(row->error, sizeof row->error, "%s", e->msg);
    sim_free(sim);
    prog_free(&prog);
    abm_model_free(&m);
    free(buf);
    abm_writer_free(w);
    bk_summary_free(&sum);
    ir_free(&g);
    atl_ndarray_list_free(ref, nref);
    return rc;
}

static void format_table(const Row *rows, int n, const AtlChip *chip, char *out, size_t cap)
{
    size_t k = 0;
    k += (size_t)snprintf(out + k, cap - k,
                          "| model | batch | compile s | cycles | inf/s @ %.0f MHz | MAC util | DRAM bytes | compulsory | DRAM/compulsory | host sim s | vs PyTorch: cosine, max abs |\n"
                          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", chip->freq_mhz);
    for (int i = 0; i < n && k < cap; i++) {
        const Row *r = &rows[i];
        if (r->error[0]) {
            k += (size_t)snprintf(out + k, cap - k, "| %s | | | | | | | | | | failed: %.160s |\n", r->model, r->error);
            continue;
        }
        k += (size_t)snprintf(out + k, cap - k, "| %s | %d | %.3f | %llu | %.1f | %.2f%% | %llu | %llu | %.2f | %.3f | %.7f, %.2g |\n",
                              r->model, r->batch, r->compile_s, (unsigned long long)r->cycles, r->ips, 100 * r->mm_util,
                              (unsigned long long)r->dram, (unsigned long long)r->compulsory,
                              r->compulsory ? (double)r->dram / (double)r->compulsory : 0, r->sim_s, r->cosine, r->max_abs);
    }
}

int main(int argc, char **argv)
{
    int write_doc = 1;
    const char *chip_path = CHIP, *dir = "models";
    enum { MAXM = 32, NDEF = sizeof models / sizeof models[0] };
    const char *names[MAXM];
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-doc")) write_doc = 0;
        else if (!strcmp(argv[i], "--chip") && i + 1 < argc) { chip_path = argv[++i]; write_doc = 0; }
        else if (!strcmp(argv[i], "--models") && i + 1 < argc) { dir = argv[++i]; write_doc = 0; }
        else if (argv[i][0] != '-' && n < MAXM) { names[n++] = argv[i]; write_doc = 0; }
        else {
            fprintf(stderr, "usage: bench_models [--no-doc] [--chip FILE] [--models DIR] [NAME...]\n"
                            "  (any of --chip, --models or NAME implies --no-doc)\n");
            return 2;
        }
    }
    if (!n) for (; n < NDEF; n++) names[n] = models[n];
    AtlChip chip;
    AtlErr e = {{0}};
    if (cfg_load(chip_path, &chip, &e)) { fprintf(stderr, "bench_models: %s\n", e.msg); return 1; }
    Row rows[MAXM];
    memset(rows, 0, sizeof rows);
    int failed = 0;
    for (int i = 0; i < n; i++)
        if (bench_one(&chip, dir, names[i], &rows[i], &e)) {
            fprintf(stderr, "bench_models: %s: %s\n", names[i], rows[i].error);
            failed++;
        }
    static char table[16384];
    format_table(rows, n, &chip, table, sizeof table);
    printf("bench_models: bundled models on %s (%d cores, %.0f MHz)\n%s", chip_path, chip.clusters * chip.cores_per_cluster, chip.freq_mhz, table);
    /* a model that fails to compile, to run, or to match its reference fails
     * the benchmark, and the document keeps its last complete table */
    if (failed) {
        fprintf(stderr, "bench_models: %d of %d models failed%s\n", failed, n, write_doc ? "; " DOC " not written" : "");
        return 1;
    }
    if (write_doc) {
        static char body[20000];
        snprintf(body, sizeof body,
                 "Produced by `make bench` (`build/bench/bench_models`) on %s; each model at the batch "
                 "of its reference input, simulated in full (timing and arithmetic) without firmware; every output "
                 "within the fp32 thresholds of `atoll compare` of PyTorch's.\n\n%s",
                 CHIP, table);
        if (doc_section_write_file(DOC, "# Benchmarks", "bench_models", "## Bundled models on configs/a1.ini", body, &e)) {
            fprintf(stderr, "bench_models: %s\n", e.msg);
            return 1;
        }
        printf("bench_models: wrote %s\n", DOC);
    }
    return 0;
}
