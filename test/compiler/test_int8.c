/* test_int8.c - int8 quantisation: the int8 operators' rounding (ties to
 * even) and saturation by hand, QDQ units fused (ONNX Runtime's uint8 form
 * included) and not fused, the calibration methods on data with known
 * ranges, bad calibration data (wrong dtype or shape, NaN, an empty
 * folder, a missing array: messages name the file and tensor), a PyTorch
 * FX-quantised model (PyTorch's own int8 output), and every
 * int8 tensor of the chip's run equal to the reference interpreter's run of
 * the QDQ model: hand-built units and the bundled models quantised by
 * `atoll quantize`'s code, on tiny and a1 (full simulation). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "test/test.h"
#include "compiler/ir/ir.h"
#include "compiler/ops/ops.h"
#include "compiler/ops/qdq.h"
#include "compiler/interp/interp.h"
#include "compiler/passes/passes.h"
#include "compiler/backend/backend.h"
#include "tools/calib.h"
#include "tools/quantize.h"
#include "tools/model_io.h"
#include "tools/chip_exec.h"
#include "tools/chip_convert.h"
#include "util/npy.h"

static const char *const chips[] = {"configs/tiny.ini", "configs/a1.ini"};

/* ---- the chip against the interpreter, every int8 tensor ---- */

typedef struct Seen { IrTensor *v; int n, cap; } Seen;

static int keep_int(void *ctx, int t, const IrTensor *v, AtlErr *e)
{
    (void)t; (void)e;
    Seen *s = ctx;
    if (v->dtype != IR_I8 && v->dtype != IR_U8) return 0;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = realloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    IrTensor *c = &s->v[s->n++];
    *c = *v;
    c->name = ir_strdup(v->name);
    c->data = malloc(ir_nbytes(v) + 1);
    memcpy(c->data, v->data, ir_nbytes(v));
    return 0;
}

/* Compiles g (a QDQ graph, canonicalised here) for chip, runs it in full
 * simulation and compares every int8 / uint8 tensor the .abm lists with
 * the interpreter's, and the outputs. Returns the int tensors compared
 * (-1 on a failure, reported). */
static int chip_equals_interp(const IrGraph *g0, const char *chipfile, const IrTensor *in, int nin)
{
    AtlErr e = {{0}};
    IrGraph g;
    AtlChip chip;
    ChipExec x;
    Seen seen = {0};
    IrTensor *outs = NULL;
    uint8_t *abm = NULL;
    size_t len = 0;
    int compared = -1;
    memset(&x, 0, sizeof x);
    if (ir_clone(g0, &g, &e) || pass_run_all(&g, &e) || cfg_load(chipfile, &chip, &e)) { CHECKF(0, "%s", e.msg); ir_free(&g); return -1; }
    BkOptions o;
    bk_options_default(&o);
    o.keep_activations = 1;
    IrTensor cin[8];
    int ncin = 0;
    if (chip_compile_graph(&g, &chip, &o, 0, &abm, &len, NULL, &e) ||
        chip_exec_open(&x, &chip, abm, len, SIM_MODE_FULL, 0, &e)) {
        CHECKF(0, "%s: %s", chipfile, e.msg);
        goto done;
    }
    for (; ncin < nin && ncin < 8; ncin++) {   /* in the chip's dtypes (uint8 is i16) */
        int k = chip_exec_find(&x, in[ncin].name);
        int dt = k < 0 ? in[ncin].dtype : chip_ir_dtype(abm_tensor(&x.model.view, (uint32_t)k).dtype);
        if (chip_convert_input(&in[ncin], dt, &cin[ncin], &e)) break;
    }
    if (ncin < nin || chip_exec_run(&x, cin, ncin, &e) || interp_run_observed(&g, in, nin, &outs, keep_int, &seen, &e)) {
        CHECKF(0, "%s: %s", chipfile, e.msg);
        for (int i = 0; i < ncin; i++) ir_tensor_free_contents(&cin[i]);
        goto done;
    }
    for (int i = 0; i < ncin; i++) ir_tensor_free_contents(&cin[i]);
    compared = 0;
    for (int i = 0; i < seen.n; i++) {
        if (chip_exec_find(&x, seen.v[i].name) < 0) continue;
        IrTensor got;
        if (chip_exec_read(&x, seen.v[i].name, &got, &e)) { CHECKF(0, "%s", e.msg); continue; }
        int64_t bad = -1;
        for (int64_t k = 0; k < ir_numel(&got) && bad < 0; k++) if (ir_get_i(&got, k) != ir_get_i(&seen.v[i], k)) bad = k;
        CHECKF(bad < 0, "%s: tensor %s element %lld: chip %lld, interpreter %lld", chipfile, seen.v[i].name, (long long)bad,
               bad < 0 ? 0LL : (long long)ir_get_i(&got, bad), bad < 0 ? 0LL : (long long)ir_get_i(&seen.v[i], bad));
        ir_tensor_free_contents(&got);
        compared++;
    }
    for (int k = 0; k < g.nout; k++) {
        IrTensor got;
        if (chip_exec_read(&x, g.t[g.outputs[k]].name, &got, &e)) { CHECKF(0, "%s", e.msg); continue; }
        /* exact when an int8 tensor's DequantizeLinear gives it; a float layer (fallback) rounds in its own order */
        int p = -1;
        for (int i = 0; i < g.nn; i++) for (int j = 0; !g.nodes[i].dead && j < g.nodes[i].nout; j++) if (g.nodes[i].out[j] == g.outputs[k]) p = i;
        double tol = p >= 0 && !strcmp(g.nodes[p].op, "DequantizeLinear") ? 0 : 1e-4;
        for (int64_t i = 0; i < ir_numel(&got); i++) {
            double a = ir_get_f(&got, i), b = ir_get_f(&outs[k], i);
            if (fabs(a - b) > tol * (1 + fabs(b))) { CHECKF(0, "%s: output %s element %lld: %g vs %g", chipfile, got.name, (long long)i, a, b); break; }
        }
        ir_tensor_free_contents(&got);
    }
done:
    for (int i = 0; i < seen.n; i++) ir_tensor_free_contents(&seen.v[i]);
    free(seen.v);
    if (outs) interp_free_outputs(outs, g.nout);
    chip_exec_close(&x);
    free(abm);
    ir_free(&g);
    return compared;
}

/* ---- building QDQ graphs by hand ---- */

static int scalar_f(IrGraph *g, const char *name, float v)
{
    AtlErr e;
    int t = ir_add_const(g, name, IR_F32, 0, NULL, NULL, &e);
    ir_set_f(&g->t[t], 0, v);
    return t;
}

static int scalar_i(IrGraph *g, const char *name, int dt, int v)
{
    AtlErr e;
    int t = ir_add_const(g, name, dt, 0, NULL, NULL, &e);
    ir_set_i(&g->t[t], 0, v);
    return t;
}

/* DequantizeLinear of the int8 tensor `src` (s, z) into `name`. */
static void dq_in(IrGraph *g, const char *src, const char *name, float s, int z, int dt)
{
    AtlErr e;
    char b[256], sn[256], zn[256];
    snprintf(sn, sizeof sn, "%s_s", name);
    snprintf(zn, sizeof zn, "%s_z", name);
    scalar_f(g, sn, s);
    scalar_i(g, zn, dt, z);
    snprintf(b, sizeof b, "%s,%s,%s", src, sn, zn);
    ir_add_op(g, "DequantizeLinear", NULL, b, name, &e);
}

/* name_q = QuantizeLinear(src, s, z) and name = DequantizeLinear(name_q) */
static void qdq(IrGraph *g, const char *src, const char *name, float s, int z, int dt)
{
    AtlErr e;
    char b[256], q[256];
    snprintf(q, sizeof q, "%s_q", name);
    dq_in(g, q, name, s, z, dt);
    snprintf(b, sizeof b, "%s,%s_s,%s_z", src, name, name);
    ir_add_op(g, "QuantizeLinear", NULL, b, q, &e);
}

/* A constant int8 weight w (dims, values) behind a per-axis DequantizeLinear with scales sc. */
static void dq_weight(IrGraph *g, const char *name, int nd, const int64_t *dims, const int8_t *w, int nsc, const float *sc, int axis)
{
    AtlErr e;
    char wq[256], sn[256], zn[256], b[800];
    snprintf(wq, sizeof wq, "%s_i8", name);
    snprintf(sn, sizeof sn, "%s_s", name);
    snprintf(zn, sizeof zn, "%s_z", name);
    int64_t d1[1] = {nsc};
    ir_add_const(g, wq, IR_I8, nd, dims, w, &e);
    ir_add_const(g, sn, IR_F32, 1, d1, sc, &e);
    ir_add_const(g, zn, IR_I8, 1, d1, NULL, &e);
    snprintf(b, sizeof b, "%s,%s,%s", wq, sn, zn);
    int n = ir_add_op(g, "DequantizeLinear", NULL, b, name, &e);
    ir_set_attr_int(g, n, "axis", axis, &e);
}

/* y = Q(Conv1x1(DQ(x, 1, 0), DQ(w = 1, wscale))) with x int8 [1, 1, 4, 64]
 * holding -128..127: multiplier = wscale. */
static void scale_graph(IrGraph *g, float wscale)
{
    AtlErr e;
    int64_t xd[4] = {1, 1, 4, 64}, wd[4] = {1, 1, 1, 1};
    int8_t one = 1;
    ir_init(g);
    g->opset = 13;
    ir_add_input(g, "x", IR_I8, 4, xd, &e);
    dq_in(g, "x", "xf", 1.0f, 0, IR_I8);
    dq_weight(g, "w", 4, wd, &one, 1, &wscale, 0);
    ir_add_op(g, "Conv", "conv", "xf,w", "yf", &e);
    qdq(g, "yf", "y", 1.0f, 0, IR_I8);
    ir_add_output(g, "y_q", &e);
    ir_toposort(g, &e);
    ir_infer_shapes(g, &e);
}

static void int8_input(IrTensor *t, const char *name, int dt, int nd, const int64_t *dims)
{
    AtlErr e;
    memset(t, 0, sizeof *t);
    t->name = ir_strdup(name);
    t->dtype = dt;
    t->ndim = nd;
    memcpy(t->dims, dims, sizeof(int64_t) * (size_t)nd);
    t->producer = -1;
    ir_alloc_data(t, &e);
}

TEST(rounding_ties_and_saturation)
{
    /* multiplier 0.5: every odd x is a tie and goes to the even neighbour */
    for (int v = 0; v < 2; v++) {
        IrGraph g;
        scale_graph(&g, v ? 2.0f : 0.5f);
        REQUIRE(qdq_count_units(&g) == 1);
        IrTensor in;
        int64_t xd[4] = {1, 1, 4, 64};
        int8_input(&in, "x", IR_I8, 4, xd);
        for (int i = 0; i < 256; i++) ir_set_i(&in, i, i - 128);
        IrTensor *outs = NULL;
        AtlErr e = {{0}};
        REQUIRE(interp_run(&g, &in, 1, &outs, &e) == 0);
        for (int i = 0; i < 256; i++) {
            int x = i - 128, want;
            if (!v) want = x % 2 == 0 ? x / 2 : ((x - 1) / 2) % 2 == 0 ? (x - 1) / 2 : (x + 1) / 2;
            else want = 2 * x < -128 ? -128 : 2 * x > 127 ? 127 : 2 * x;
            if (!v && x < 0 && x % 2) want = -(((-x) - 1) / 2 % 2 == 0 ? ((-x) - 1) / 2 : ((-x) + 1) / 2);
            CHECKF(ir_get_i(&outs[0], i) == want, "x %d times %s: %lld, want %d", x, v ? "2" : "0.5",
                   (long long)ir_get_i(&outs[0], i), want);
        }
        /* spot values: 1 -> 0, 3 -> 2, 5 -> 2, -1 -> 0, -3 -> -2, 127 -> 64; 100 x 2 -> 127, -100 x 2 -> -128 */
        if (!v) {
            CHECK_EQ_INT(ir_get_i(&outs[0], 129), 0); CHECK_EQ_INT(ir_get_i(&outs[0], 131), 2);
            CHECK_EQ_INT(ir_get_i(&outs[0], 133), 2); CHECK_EQ_INT(ir_get_i(&outs[0], 127), 0);
            CHECK_EQ_INT(ir_get_i(&outs[0], 125), -2); CHECK_EQ_INT(ir_get_i(&outs[0], 255), 64);
        } else {
            CHECK_EQ_INT(ir_get_i(&outs[0], 228), 127); CHECK_EQ_INT(ir_get_i(&outs[0], 28), -128);
        }
        interp_free_outputs(outs, 1);
        for (int c = 0; c < 2; c++) CHECK(chip_equals_interp(&g, chips[c], &in, 1) >= 1);
        ir_tensor_free_contents(&in);
        ir_free(&g);
    }
}

/* ONNX Runtime's QDQ form: uint8 activations with zero points, int8
 * per-channel weights, int32 biases; Conv + Relu, MaxPool, Flatten, Gemm,
 * an Add of two differently scaled tensors, a Concat rescaling its
 * inputs, a DequantizeLinear -> QuantizeLinear requantisation; and a unit
 * whose weights have a zero point (not fused). */
static void ort_graph(IrGraph *g, int weight_zp)
{
    AtlErr e;
    int64_t xd[4] = {1, 3, 6, 6}, wd[4] = {4, 3, 3, 3}, gd[2] = {5, 36};
    int8_t w[108], wg[180];
    float ws[4] = {0.01f, 0.02f, 0.015f, 0.03f}, gs[5] = {0.02f, 0.01f, 0.03f, 0.025f, 0.01f};
    for (int i = 0; i < 108; i++) w[i] = (int8_t)((i * 37) % 255 - 127);
    for (int i = 0; i < 180; i++) wg[i] = (int8_t)((i * 53) % 251 - 125);
    ir_init(g);
    g->opset = 13;
    ir_add_input(g, "x", IR_U8, 4, xd, &e);
    dq_in(g, "x", "xf", 0.02f, 128, IR_U8);
    dq_weight(g, "w", 4, wd, w, 4, ws, 0);
    if (weight_zp) ir_set_i(&g->t[ir_find(g, "w_z")], 1, 3);
    /* bias int32 with scale s_x s_w */
    int32_t b[4] = {100, -2000, 37, 0};
    float bsc[4];
    for (int i = 0; i < 4; i++) bsc[i] = 0.02f * ws[i];
    int64_t d4[1] = {4};
    ir_add_const(g, "b_i32", IR_I32, 1, d4, b, &e);
    ir_add_const(g, "b_s", IR_F32, 1, d4, bsc, &e);
    ir_add_const(g, "b_z", IR_I32, 1, d4, NULL, &e);
    int n = ir_add_op(g, "DequantizeLinear", NULL, "b_i32,b_s,b_z", "b", &e);
    ir_set_attr_int(g, n, "axis", 0, &e);
    n = ir_add_op(g, "Conv", "conv", "xf,w,b", "c", &e);
    int64_t pads[4] = {1, 1, 1, 1};
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "relu", "c", "r", &e);
    qdq(g, "r", "rq", 0.05f, 0, IR_U8);
    n = ir_add_op(g, "MaxPool", "pool", "rq", "p", &e);
    int64_t k2[2] = {2, 2};
    ir_set_attr_ints(g, n, "kernel_shape", k2, 2, &e);
    ir_set_attr_ints(g, n, "strides", k2, 2, &e);
    qdq(g, "p", "pq", 0.05f, 0, IR_U8);
    ir_add_op(g, "Flatten", "flat", "pq", "fl", &e);
    qdq(g, "fl", "flq", 0.05f, 0, IR_U8);
    dq_weight(g, "wg", 2, gd, wg, 5, gs, 0);
    n = ir_add_op(g, "Gemm", "fc", "flq,wg", "fc_out", &e);
    ir_set_attr_int(g, n, "transB", 1, &e);
    qdq(g, "fc_out", "fcq", 0.07f, 131, IR_U8);
    /* an Add of fcq and a rescaled copy of it, a Concat of both, a requantisation */
    qdq(g, "fcq", "fc2", 0.11f, 120, IR_U8);
    ir_add_op(g, "Add", "add", "fcq,fc2", "sum", &e);
    qdq(g, "sum", "sumq", 0.13f, 100, IR_U8);
    n = ir_add_op(g, "Concat", "cat", "sumq,fc2", "cat", &e);
    ir_set_attr_int(g, n, "axis", 1, &e);
    qdq(g, "cat", "catq", 0.09f, 90, IR_U8);
    ir_add_output(g, "catq", &e);
    ir_toposort(g, &e);
    ir_infer_shapes(g, &e);
}

TEST(qdq_units_fused)
{
    IrGraph g;
    ort_graph(&g, 0);
    int units = qdq_count_units(&g);
    CHECKF(units == 7, "%d units", units);   /* conv, pool, flatten, fc, requantisation, add, concat */
    IrGraph f;
    AtlErr e = {{0}};
    REQUIRE(ir_clone(&g, &f, &e) == 0);
    REQUIRE(pass_run_all(&f, &e) == 0);
    int conv = 0, mm = 0, add = 0, dq = 0;
    for (int i = 0; i < f.nn; i++) {
        if (f.nodes[i].dead) continue;
        conv += !strcmp(f.nodes[i].op, "Int8Conv");
        mm += !strcmp(f.nodes[i].op, "Int8MatMul");
        add += !strcmp(f.nodes[i].op, "Int8Add");
        dq += !strcmp(f.nodes[i].op, "DequantizeLinear") || !strcmp(f.nodes[i].op, "Conv");
    }
    CHECK_EQ_INT(conv, 1); CHECK_EQ_INT(mm, 1); CHECK(add >= 2); CHECK_EQ_INT(dq, 1);   /* the output's DQ stays */
    ir_free(&f);
    IrTensor in;
    int64_t xd[4] = {1, 3, 6, 6};
    int8_input(&in, "x", IR_U8, 4, xd);
    for (int i = 0; i < 108; i++) ir_set_i(&in, i, (i * 97) % 256);
    for (int c = 0; c < 2; c++) CHECK(chip_equals_interp(&g, chips[c], &in, 1) >= 6);
    ir_tensor_free_contents(&in);
    ir_free(&g);
    /* a weight zero point that is not 0: that unit stays float */
    ort_graph(&g, 1);
    CHECK_EQ_INT(qdq_count_units(&g), units - 1);
    ir_free(&g);
}

/* ResNet-50's deepest 3x3 convolutions (layer3: 256 -> 256 at 14x14;
 * layer4: 512 -> 512 at 7x7) as int8 units: they fit tiny (64 KiB of
 * LMEM) only with channel chunks and K splits, and stay exact. */
static void deep_conv(IrGraph *g, int c, int hw)
{
    AtlErr e;
    int64_t xd[4] = {1, c, hw, hw}, wd[4] = {c, c, 3, 3};
    int64_t nw = (int64_t)c * c * 9;
    int8_t *w = malloc((size_t)nw);
    float *sc = malloc((size_t)c * sizeof *sc);
    for (int64_t i = 0; i < nw; i++) w[i] = (int8_t)((i * 7919) % 255 - 127);
    for (int i = 0; i < c; i++) sc[i] = 0.0004f + 0.00001f * (float)(i % 17);
    ir_init(g);
    g->opset = 13;
    ir_add_input(g, "x", IR_I8, 4, xd, &e);
    dq_in(g, "x", "xf", 0.05f, -3, IR_I8);
    dq_weight(g, "w", 4, wd, w, c, sc, 0);
    int n = ir_add_op(g, "Conv", "conv", "xf,w", "c", &e);
    int64_t pads[4] = {1, 1, 1, 1};
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "relu", "c", "r", &e);
    qdq(g, "r", "y", 0.25f, -128, IR_I8);
    ir_add_output(g, "y_q", &e);
    ir_toposort(g, &e);
    ir_infer_shapes(g, &e);
    free(w);
    free(sc);
}

TEST(resnet50_deep_shapes)
{
    const int shapes[2][2] = {{256, 14}, {512, 7}};
    for (int k = 0; k < 2; k++) {
        IrGraph g;
        deep_conv(&g, shapes[k][0], shapes[k][1]);
        IrTensor in;
        int64_t xd[4] = {1, shapes[k][0], shapes[k][1], shapes[k][1]};
        int8_input(&in, "x", IR_I8, 4, xd);
        for (int64_t i = 0; i < ir_numel(&in); i++) ir_set_i(&in, i, (i * 131) % 256 - 128);
        for (int c = 0; c < 2; c++) CHECK(chip_equals_interp(&g, chips[c], &in, 1) >= 1);
        ir_tensor_free_contents(&in);
        ir_free(&g);
    }
}

/* ---- calibration ---- */

static IrTensor vec(const double *v, int n)
{
    AtlErr e;
    IrTensor t;
    memset(&t, 0, sizeof t);
    t.dtype = IR_F32;
    t.ndim = 1;
    t.dims[0] = n;
    ir_alloc_data(&t, &e);
    for (int i = 0; i < n; i++) ir_set_f(&t, i, v[i]);
    return t;
}

static void stat_of(CalibStat *s, const double *v, int n)
{
    AtlErr e;
    IrTensor t = vec(v, n);
    memset(s, 0, sizeof *s);
    calib_stat_range(s, &t);
    calib_stat_hist(s, &t, &e);
    ir_tensor_free_contents(&t);
}

TEST(calibration_methods_known_ranges)
{
    enum { N = 1001 };
    static double v[N];
    for (int i = 0; i < 1000; i++) v[i] = i;          /* 0 .. 999, then one outlier */
    v[1000] = 100000;
    CalibStat s;
    double lo, hi;
    stat_of(&s, v, N);
    calib_range(&s, CALIB_MINMAX, 0, &lo, &hi);
    CHECK(lo == 0 && hi == 100000);
    calib_range(&s, CALIB_PERCENTILE, 99.0, &lo, &hi);
    CHECKF(hi >= 989 && hi <= 1040 && lo == 0, "percentile 99: [%g, %g]", lo, hi);   /* 1% above 990: the outlier's bin is out */
    calib_range(&s, CALIB_KL, 0, &lo, &hi);
    CHECKF(hi == 100000 && lo == 0, "kl: [%g, %g]", lo, hi);   /* 2048 bins in 128 levels hold the uniform bulk exactly */
    calib_stat_free(&s);
    stat_of(&s, v, 1000);                              /* uniform: KL keeps (nearly) all */
    calib_range(&s, CALIB_KL, 0, &lo, &hi);
    CHECKF(hi > 900 && hi <= 999, "kl uniform: [%g, %g]", lo, hi);
    calib_range(&s, CALIB_PERCENTILE, 99.0, &lo, &hi);
    CHECKF(hi >= 989 && hi <= 991 && lo >= 9 && lo <= 10.5, "percentile 99 uniform: [%g, %g]", lo, hi);
    calib_stat_free(&s);
    /* a long exponential tail: KL clips it (TensorRT's reason for the method) */
    enum { NE = 100000 };
    double *ex = malloc(NE * sizeof *ex);
    for (int i = 0; i < NE; i++) ex[i] = -log(1 - (i + 0.5) / NE);
    stat_of(&s, ex, NE);
    free(ex);
    calib_range(&s, CALIB_KL, 0, &lo, &hi);
    CHECKF(hi > 5 && hi < 0.85 * s.max && lo == s.min, "kl exponential: [%g, %g] of [%g, %g]", lo, hi, s.min, s.max);
    calib_range(&s, CALIB_PERCENTILE, 99.99, &lo, &hi);
    CHECKF(fabs(hi + log(1e-4)) < 0.05, "percentile 99.99 exponential: %g, want %g", hi, -log(1e-4));
    calib_stat_free(&s);
    /* MSE: ten million values in [0, 1] and one at 1000: clipping that one costs less than the coarse steps */
    memset(&s, 0, sizeof s);
    s.min = 0; s.max = 1000; s.count = 10000001;
    s.hist = calloc(CALIB_BINS, sizeof *s.hist);
    s.ahist = calloc(CALIB_BINS, sizeof *s.ahist);
    s.hist[0] = s.hist[1] = 5e6;
    s.hist[CALIB_BINS - 1] = 1;
    calib_range(&s, CALIB_MSE, 0, &lo, &hi);
    CHECKF(lo == 0 && hi < 100, "mse: [%g, %g]", lo, hi);
    s.hist[CALIB_BINS - 1] = 1e7;   /* half of them at 1000: keep the range */
    calib_range(&s, CALIB_MSE, 0, &lo, &hi);
    CHECKF(hi == 1000, "mse: [%g, %g]", lo, hi);
    calib_stat_free(&s);
    /* scale and zero point */
    float sc;
    int zp;
    calib_params(0, 1, &sc, &zp); CHECK(fabsf(sc - 1.0f / 255) < 1e-9f && zp == -128);
    calib_params(-1, 1, &sc, &zp); CHECK(fabsf(sc - 2.0f / 255) < 1e-9f && zp >= -1 && zp <= 0);   /* -0.5 +- an f32 ulp */
    calib_params(-2, 0, &sc, &zp); CHECK(zp == 127);
    calib_params(0.5, 2, &sc, &zp); CHECK(fabsf(sc - 2.0f / 255) < 1e-9f && zp == -128);   /* 0 stays exact */
}

static char tmpdir[64];

static void write_f32(const char *name, int nd, const int64_t *shape, const float *v)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    AtlNdArray a;
    AtlErr e;
    memset(&a, 0, sizeof a);
    a.dtype = ATL_NPY_F32;
    a.ndim = nd;
    memcpy(a.shape, shape, sizeof(int64_t) * (size_t)nd);
    atl_ndarray_alloc(&a, &e);
    memcpy(a.data, v, (size_t)atl_ndarray_numel(&a) * 4);
    atl_npy_write(path, &a, &e);
    atl_ndarray_free(&a);
}

/* x [1, 4] -> MatMul by 2 I -> y: the ranges of x and y are known. */
static void linear_model(IrGraph *g)
{
    AtlErr e;
    int64_t xd[2] = {1, 4}, wd[2] = {4, 4};
    float w[16] = {0};
    for (int i = 0; i < 4; i++) w[i * 5] = 2;
    ir_init(g);
    g->opset = 13;
    ir_add_input(g, "x", IR_F32, 2, xd, &e);
    ir_add_const(g, "w", IR_F32, 2, wd, w, &e);
    ir_add_op(g, "MatMul", "mm", "x,w", "y", &e);
    ir_add_output(g, "y", &e);
    pass_run_all(g, &e);
}

TEST(calibration_on_a_model)
{
    IrGraph g;
    linear_model(&g);
    float d[12] = {0.5f, -1.0f, 3.0f, 2.0f, 0.25f, 1.5f, -0.5f, 0.0f, 1.0f, 2.5f, -2.0f, 0.75f};
    int64_t sh[2] = {3, 4};
    write_f32("three.npy", 2, sh, d);
    char path[256];
    snprintf(path, sizeof path, "%s/three.npy", tmpdir);
    const char *paths[1] = {path};
    CalibData cd;
    AtlErr e = {{0}};
    REQUIRE(calib_data_read(&g, paths, 1, 0, &cd, &e) == 0);
    CHECK_EQ_INT(cd.nsamples, 3);
    QzOptions o;
    qz_options_default(&o);
    QzResult r;
    REQUIRE(qz_quantize(&g, &cd, &o, &r, &e) == 0);
    int seen = 0;
    for (int i = 0; i < r.ntensors; i++) {
        const QzTensor *q = &r.tensors[i];
        const char *n = g.t[q->t].name;
        if (!strcmp(n, "x")) { CHECK(q->min == -2 && q->max == 3 && q->lo == -2 && q->hi == 3); seen++; }
        if (!strcmp(n, "y")) { CHECK(q->min == -4 && q->max == 6); seen++; }
    }
    CHECK_EQ_INT(seen, 2);
    CHECKF(r.cos > 0.9999, "cosine %f", r.cos);
    CHECK(qdq_count_units(&r.qdq) == 1);
    qz_result_free(&r);
    calib_data_free(&cd);
    /* every method on 200 samples of an even grid over [-1, 3]: y = 2x, a
     * graph output, keeps [min, max] = [-2, 6]; x's range per method */
    enum { NS = 200 };
    float *grid = malloc(NS * 4 * sizeof *grid);
    for (int i = 0; i < NS * 4; i++) grid[i] = -1.0f + 4.0f * (float)i / (NS * 4 - 1);
    int64_t gs[2] = {NS, 4};
    write_f32("grid.npy", 2, gs, grid);
    free(grid);
    snprintf(path, sizeof path, "%s/grid.npy", tmpdir);
    REQUIRE(calib_data_read(&g, paths, 1, 0, &cd, &e) == 0);
    CHECK_EQ_INT(cd.nsamples, NS);
    const double want_lo[CALIB_NMETHODS][2] = {{-1, -1}, {-1, -0.99}, {-1, -0.9}, {-1, -0.9}};
    const double want_hi[CALIB_NMETHODS][2] = {{3, 3}, {2.99, 3}, {2.9, 3}, {2.9, 3}};
    for (int m = 0; m < CALIB_NMETHODS; m++) {
        o.method = m;
        o.percentile = 99.9;
        REQUIRE(qz_quantize(&g, &cd, &o, &r, &e) == 0);
        for (int i = 0; i < r.ntensors; i++) {
            const QzTensor *q = &r.tensors[i];
            if (!strcmp(g.t[q->t].name, "y")) CHECKF(q->lo == -4 * 0.5 && q->hi == 6, "%s: y [%g, %g]", calib_method_name(m), q->lo, q->hi);
            if (strcmp(g.t[q->t].name, "x")) continue;
            CHECKF(q->min == -1 && q->max == 3, "%s: x min %g max %g", calib_method_name(m), q->min, q->max);
            CHECKF(q->lo >= want_lo[m][0] && q->lo <= want_lo[m][1] && q->hi >= want_hi[m][0] && q->hi <= want_hi[m][1],
                   "%s: x range [%g, %g]", calib_method_name(m), q->lo, q->hi);
        }
        CHECKF(r.cos > 0.999, "%s: cosine %f", calib_method_name(m), r.cos);
        qz_result_free(&r);
    }
    calib_data_free(&cd);
    ir_free(&g);
}

/* The message of reading paths[0] for the linear model. */
static void expect_calib_error(const char *file, const char *want1, const char *want2)
{
    IrGraph g;
    linear_model(&g);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, file);
    const char *paths[1] = {path};
    CalibData cd;
    AtlErr e = {{0}};
    CHECKF(calib_data_read(&g, paths, 1, 0, &cd, &e) != 0, "%s was accepted", file);
    CHECK_STR_CONTAINS(e.msg, file);
    CHECK_STR_CONTAINS(e.msg, want1);
    if (want2) CHECK_STR_CONTAINS(e.msg, want2);
    ir_free(&g);
}

TEST(bad_calibration_data)
{
    float d[15] = {0};
    int64_t s34[2] = {3, 4}, s35[2] = {3, 5}, s3[1] = {12};
    write_f32("shape.npy", 2, s35, d);
    expect_calib_error("shape.npy", "tensor 'x' has shape 3x5", "1x4");
    write_f32("rank.npy", 1, s3, d);
    expect_calib_error("rank.npy", "tensor 'x'", "shape");
    d[7] = NAN;
    write_f32("nan.npy", 2, s34, d);
    expect_calib_error("nan.npy", "tensor 'x' element 7 is NaN", NULL);
    d[7] = INFINITY;
    write_f32("inf.npy", 2, s34, d);
    expect_calib_error("inf.npy", "element 7 is infinite", NULL);
    /* wrong dtype */
    AtlNdArray a;
    AtlErr e;
    memset(&a, 0, sizeof a);
    a.dtype = ATL_NPY_I64;
    a.ndim = 2;
    a.shape[0] = 1; a.shape[1] = 4;
    atl_ndarray_alloc(&a, &e);
    char path[256];
    snprintf(path, sizeof path, "%s/int.npy", tmpdir);
    atl_npy_write(path, &a, &e);
    expect_calib_error("int.npy", "tensor 'x' is int64", "float32");
    /* an .npz without the input's array */
    a.name = ir_strdup("other");
    snprintf(path, sizeof path, "%s/other.npz", tmpdir);
    atl_npz_write(path, &a, 1, &e);
    atl_ndarray_free(&a);
    expect_calib_error("other.npz", "no array named 'x'", NULL);
    /* an empty folder */
    snprintf(path, sizeof path, "%s/empty", tmpdir);
    mkdir(path, 0700);
    expect_calib_error("empty", "holds no .npy or .npz file", NULL);
    expect_calib_error("missing.npy", "no such file", NULL);
}

/* PyTorch's FX post-training quantisation exported to ONNX
 * (models/quant/make_fx_model.py): the interpreter's int8 operators give
 * PyTorch's own quantised output, and the chip the interpreter's. */
TEST(pytorch_fx_model)
{
    AtlErr e = {{0}};
    IrGraph g;
    AtlNdArray *ref = NULL;
    int nref = 0;
    ir_init(&g);
    REQUIRE(model_load_opts("test_int8", "models/quant/fx_cnn.q.onnx", NULL, 0, NULL, &g, &e) == 0);
    REQUIRE(atl_npz_read("models/quant/fx_cnn.ref.npz", &ref, &nref, &e) == 0);
    const AtlNdArray *x = NULL, *want = NULL;
    for (int i = 0; i < nref; i++) {
        if (!strcmp(ref[i].name, "input")) x = &ref[i];
        if (!strcmp(ref[i].name, "output")) want = &ref[i];
    }
    REQUIRE(x && want);
    IrTensor in, *outs = NULL;
    REQUIRE(model_tensor_from_array(x, "input", &in, &e) == 0);
    CHECK(qdq_count_units(&g) >= 1);   /* the convolutions count once their bias zero points are folded */
    REQUIRE(interp_run(&g, &in, 1, &outs, &e) == 0);
    double worst = 0;
    for (int i = 0; i < 10; i++) worst = fmax(worst, fabs(ir_get_f(&outs[0], i) - ((const float *)want->data)[i]));
    CHECKF(worst <= 1e-6, "the interpreter differs from PyTorch's int8 output by %g", worst);
    interp_free_outputs(outs, 1);
    for (int c = 0; c < 2; c++) CHECK(chip_equals_interp(&g, chips[c], &in, 1) >= 5);
    ir_tensor_free_contents(&in);
    atl_ndarray_list_free(ref, nref);
    ir_free(&g);
}

/* ---- the bundled models ---- */

static void bundled(const char *name)
{
    AtlErr e = {{0}};
    char path[256], ref[256];
    snprintf(path, sizeof path, "models/%s.onnx", name);
    snprintf(ref, sizeof ref, "models/%s.ref.npz", name);
    IrGraph g;
    IrInputShape sh[8];
    int nsh = 0;
    OnnxLoadOpts lo = {0, 0, 0, 0};
    ir_init(&g);
    REQUIRE(model_load_batch("test_int8", path, sh, nsh, 0, &lo, &g, &e) == 0 && pass_run_all(&g, &e) == 0);
    const char *paths[1] = {ref};
    CalibData cd;
    REQUIRE(calib_data_read(&g, paths, 1, 0, &cd, &e) == 0);
    QzOptions o;
    qz_options_default(&o);
    QzResult r;
    REQUIRE(qz_quantize(&g, &cd, &o, &r, &e) == 0);
    CHECK(r.nlayers > 0);
    for (int c = 0; c < 2; c++) {
        int n = chip_equals_interp(&r.qdq, chips[c], cd.in, cd.nin);
        CHECKF(n >= r.nlayers / 2, "%s on %s: %d int8 tensors compared", name, chips[c], n);
    }
    qz_result_free(&r);
    calib_data_free(&cd);
    ir_free(&g);
}

static void bundled_case(const void *arg) { bundled(arg); }

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/atoll_int8_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(rounding_ties_and_saturation);
    RUN(qdq_units_fused);
    RUN(resnet50_deep_shapes);
    RUN(calibration_methods_known_ranges);
    RUN(calibration_on_a_model);
    RUN(bad_calibration_data);
    RUN(pytorch_fx_model);
    const char *models[] = {"digits_cnn", "lenet5", "resnet20_cifar", "mobilenetv2_035", "encoder_block", "vit_tiny"};
    for (int i = 0; i < 6; i++) RUN_CASE(bundled_case, models[i], models[i]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) {}
    return test_summary("test_int8");
}
