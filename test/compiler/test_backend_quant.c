/* test_backend_quant.c - the quantised ops on the chip
 * (compiler/lower/quant.c): DequantizeLinear and QuantizeLinear (int8
 * and uint8, per tensor and per axis), MatMulInteger (int8 / uint8
 * operands, zero points absent, per tensor, per row / column; batched;
 * constant B), QLinearMatMul, ConvInteger and QLinearConv (padding,
 * strides, dilation, per-channel weight zero points and scales, bias,
 * constant and computed weights), DynamicQuantizeLinear (mixed signs,
 * all positive, all negative, all zero; too large for one slot), compiled
 * for configs/tiny.ini and
 * configs/a1.ini, run on the simulator and compared with the reference
 * interpreter EXACTLY (integer outputs) or within 1e-6 (floats).
 * Ties and saturation: an int8 input dequantised by 0.5 and quantised by 1
 * makes every odd input a tie (half to even, not away from zero); scale 4
 * saturates int8 and uint8; a QLinearMatMul multiplier of 0.5 makes every
 * odd sum a tie, where v.requant's half-away-from-zero rounding would be
 * wrong. Plus the rejections naming the node. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_int_run.h"

static int fconst(IrGraph *g, const char *name, int ndim, const int64_t *dims, const float *v)
{
    AtlErr e;
    return ir_add_const(g, name, IR_F32, ndim, dims, v, &e);
}

/* x [xd] -> op (DequantizeLinear: x of dtype qdt; QuantizeLinear: float
 * x, y of dtype qdt) with scale s and zero point zp of dtype qdt; per axis
 * when nq > 1 (nq values along `axis`). */
static void qdq_graph(IrGraph *g, const char *op, int qdt, int ndim, const int64_t *xd, int nq, const float *s,
                      const int64_t *zp, int axis)
{
    AtlErr e;
    int64_t qd[1] = {nq};
    new_int_graph(g, "x", strcmp(op, "QuantizeLinear") ? qdt : IR_F32, ndim, xd);
    fconst(g, "s", nq > 1 ? 1 : 0, qd, s);
    const_of(g, "z", qdt, nq > 1 ? 1 : 0, qd, zp);
    int n = ir_add_op(g, op, "qdq", "x,s,z", "y", &e);
    if (nq > 1) ir_set_attr_int(g, n, "axis", axis, &e);
    ir_add_output(g, "y", &e);
}

TEST(dequantize_per_tensor_and_axis)
{
    IrGraph g;
    int64_t xd[4] = {2, 3, 4, 5}, zp8[1] = {-3}, zpu[1] = {130}, zax[3] = {-5, 0, 7}, zax4[5] = {0, 1, -1, 100, -128};
    float s1[1] = {0.25f}, s2[1] = {0.1f}, sax[3] = {0.5f, 0.03f, 2.0f}, sax4[5] = {1.0f, 0.2f, 0.7f, 3.0f, 0.001f};
    qdq_graph(&g, "DequantizeLinear", IR_I8, 4, xd, 1, s1, zp8, 0);
    run_exact(&g, "dequantize int8", -128, 127);
    ir_free(&g);
    qdq_graph(&g, "DequantizeLinear", IR_U8, 4, xd, 1, s2, zpu, 0);
    run_exact(&g, "dequantize uint8", 0, 255);
    ir_free(&g);
    qdq_graph(&g, "DequantizeLinear", IR_I8, 4, xd, 3, sax, zax, 1);
    run_exact(&g, "dequantize int8 axis 1", -128, 127);
    ir_free(&g);
    qdq_graph(&g, "DequantizeLinear", IR_I8, 4, xd, 5, sax4, zax4, -1);
    run_exact(&g, "dequantize int8 axis -1", -128, 127);
    ir_free(&g);
}

TEST(quantize_per_tensor_and_axis)
{
    IrGraph g;
    int64_t xd[3] = {3, 4, 33}, zp8[1] = {5}, zpu[1] = {128}, zax[4] = {-10, 0, 3, 127}, zaxu[4] = {0, 255, 17, 128};
    float s1[1] = {0.01f}, s2[1] = {0.0037f}, sax[4] = {0.02f, 0.005f, 0.1f, 0.0001f};
    qdq_graph(&g, "QuantizeLinear", IR_I8, 3, xd, 1, s1, zp8, 0);
    run_exact(&g, "quantize int8", 0, 0);
    ir_free(&g);
    qdq_graph(&g, "QuantizeLinear", IR_U8, 3, xd, 1, s2, zpu, 0);
    run_exact(&g, "quantize uint8", 0, 0);
    ir_free(&g);
    qdq_graph(&g, "QuantizeLinear", IR_I8, 3, xd, 4, sax, zax, 1);
    run_exact(&g, "quantize int8 axis 1", 0, 0);
    ir_free(&g);
    qdq_graph(&g, "QuantizeLinear", IR_U8, 3, xd, 4, sax, zaxu, 1);
    run_exact(&g, "quantize uint8 axis 1", 0, 0);
    ir_free(&g);
}

/* int8 x -> DequantizeLinear(ds) -> QuantizeLinear(1, zp of ydt): ties
 * (ds = 0.5) or saturation (ds = 4). */
static void roundtrip_graph(IrGraph *g, float ds, int ydt, int64_t zp)
{
    AtlErr e;
    int64_t xd[2] = {16, 16}, z0 = 0;
    float one = 1.0f;
    new_int_graph(g, "x", IR_I8, 2, xd);
    fconst(g, "ds", 0, NULL, &ds);
    const_of(g, "dz", IR_I8, 0, xd, &z0);
    fconst(g, "qs", 0, NULL, &one);
    const_of(g, "qz", ydt, 0, xd, &zp);
    ir_add_op(g, "DequantizeLinear", "dq", "x,ds,dz", "f", &e);
    ir_add_op(g, "QuantizeLinear", "q", "f,qs,qz", "y", &e);
    ir_add_output(g, "y", &e);
}

TEST(quantize_ties_and_saturation)
{
    IrGraph g;
    roundtrip_graph(&g, 0.5f, IR_I8, 0);
    run_exact(&g, "ties half to even int8", -128, 127);
    ir_free(&g);
    roundtrip_graph(&g, 0.5f, IR_U8, 3);
    run_exact(&g, "ties half to even uint8", -128, 127);
    ir_free(&g);
    roundtrip_graph(&g, 4.0f, IR_I8, -7);
    run_exact(&g, "saturation int8", -128, 127);
    ir_free(&g);
    roundtrip_graph(&g, 4.0f, IR_U8, 10);
    run_exact(&g, "saturation uint8", -128, 127);
    ir_free(&g);
}

/* A [bt..][M][K] (adt) x B [bt..][K][N] (bdt), zero points of na / nb
 * values (0: absent): the type's middle (0 or 128) + zoff, varied per
 * index; B a constant when bconst. QLinearMatMul when ydt >= 0 (scales
 * sa, sb, sy, output zero point zy). Inputs in [lo, hi]. */
typedef struct MmCase {
    const char *what;
    int adt, bdt, rank, bt, M, K, N, na, nb, zoff, bconst;
    int ydt;
    float sa, sb, sy;
    int64_t zy;
    int64_t lo, hi;
} MmCase;

static void zero_point(IrGraph *g, const char *name, int dt, int n, int64_t base)
{
    int64_t *v = malloc((size_t)n * sizeof *v), d[1] = {n};
    for (int i = 0; i < n; i++) v[i] = base + (i * 37 + 25) % 51 - 25;
    const_of(g, name, dt, n > 1 ? 1 : 0, d, v);
    free(v);
}

static void mm_graph(IrGraph *g, const MmCase *m)
{
    AtlErr e;
    int64_t ad[3] = {m->bt, m->M, m->K}, bd[3] = {m->bt, m->K, m->N};
    int r = m->rank;
    new_int_graph(g, "a", m->adt, r, ad + 3 - r);
    int64_t za0 = (m->adt == IR_U8 ? 128 : 0) + m->zoff, zb0 = (m->bdt == IR_U8 ? 128 : 0) + m->zoff;
    if (m->bconst) {
        int64_t nb = (int64_t)m->K * m->N * (r == 3 ? m->bt : 1), *v = malloc((size_t)nb * sizeof *v);
        for (int64_t i = 0; i < nb; i++) v[i] = (m->bdt == IR_U8 ? 128 : 0) + (i * 7919) % 256 - 128;
        const_of(g, "b", m->bdt, r, bd + 3 - r, v);
        free(v);
    } else ir_add_input(g, "b", m->bdt, r, bd + 3 - r, &e);
    char ins[32];
    if (m->ydt < 0) {
        if (m->na) zero_point(g, "za", m->adt, m->na, za0);
        if (m->nb) zero_point(g, "zb", m->bdt, m->nb, zb0);
        /* b's zero point only with a's (none of the cases leaves a gap) */
        snprintf(ins, sizeof ins, "a,b%s%s", m->na ? ",za" : "", m->na && m->nb ? ",zb" : "");
        ir_add_op(g, "MatMulInteger", "mmi", ins, "y", &e);
    } else {
        fconst(g, "sa", 0, NULL, &m->sa);
        fconst(g, "sb", 0, NULL, &m->sb);
        fconst(g, "sy", 0, NULL, &m->sy);
        zero_point(g, "za", m->adt, m->na ? m->na : 1, za0);
        zero_point(g, "zb", m->bdt, m->nb ? m->nb : 1, zb0);
        const_of(g, "zy", m->ydt, 0, ad, &m->zy);
        ir_add_op(g, "QLinearMatMul", "qmm", "a,sa,za,b,sb,zb,sy,zy", "y", &e);
    }
    ir_add_output(g, "y", &e);
}

static void run_mm(const MmCase *m)
{
    IrGraph g;
    mm_graph(&g, m);
    run_exact(&g, m->what, m->lo, m->hi);
    ir_free(&g);
}

TEST(matmulinteger)
{
    static const MmCase cases[] = {
        {"mmi u8 x u8 scalar zp", IR_U8, IR_U8, 2, 1, 37, 70, 29, 1, 1, -25, 0, -1, 0, 0, 0, 0, 0, 255},
        {"mmi i8 x i8 row/col zp", IR_I8, IR_I8, 2, 1, 21, 40, 33, 21, 33, 0, 0, -1, 0, 0, 0, 0, -128, 127},
        {"mmi u8 x i8 no zp", IR_U8, IR_I8, 2, 1, 9, 17, 12, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 127},
        {"mmi i8 x u8 a zp only", IR_I8, IR_U8, 2, 1, 9, 17, 12, 1, 0, 7, 0, -1, 0, 0, 0, 0, 0, 127},
        {"mmi i8 x i8 const B", IR_I8, IR_I8, 2, 1, 64, 96, 48, 1, 0, 5, 1, -1, 0, 0, 0, 0, -128, 127},
        {"mmi u8 batched", IR_U8, IR_U8, 3, 3, 10, 24, 14, 1, 1, -20, 0, -1, 0, 0, 0, 0, 0, 255},
        {"mmi u8 large", IR_U8, IR_U8, 2, 1, 200, 300, 150, 1, 1, 9, 0, -1, 0, 0, 0, 0, 0, 255},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_mm(&cases[i]);
}

TEST(qlinearmatmul)
{
    static const MmCase cases[] = {
        {"qlmm u8 -> u8", IR_U8, IR_U8, 2, 1, 13, 31, 11, 1, 1, 3, 0, IR_U8, 0.02f, 0.03f, 0.5f, 120, 0, 255},
        {"qlmm i8 -> i8 row/col zp", IR_I8, IR_I8, 2, 1, 13, 31, 11, 13, 11, 0, 0, IR_I8, 0.01f, 0.02f, 0.7f, -3, -128, 127},
        /* multiplier 0.5, zero points 0: every odd sum is a tie */
        {"qlmm ties", IR_I8, IR_I8, 2, 1, 16, 3, 16, 1, 1, 0, 0, IR_I8, 0.5f, 1.0f, 1.0f, 0, -4, 4},
        {"qlmm saturation", IR_U8, IR_U8, 2, 1, 8, 64, 8, 1, 1, 0, 0, IR_U8, 1.0f, 1.0f, 0.25f, 128, 0, 255},
        {"qlmm batched u8 -> i8", IR_U8, IR_U8, 3, 2, 5, 12, 7, 1, 1, -20, 0, IR_I8, 0.05f, 0.1f, 0.3f, 1, 0, 255},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_mm(&cases[i]);
}

/* x [N][C][H][W] (xdt) conv w [OC][C][kh][kw] (wdt, constant when wconst)
 * with pads / strides / dilations; x's zero point xz, w's per channel
 * (nwz values, 0: absent) around wz0; QLinearConv when ydt >= 0 (per
 * channel w_scale when per_ch_scale, bias when bias). */
typedef struct ConvCase {
    const char *what;
    int xdt, wdt, N, C, H, W, OC, kh, kw, pad, stride, dil, wconst;
    int64_t xz, wz0;
    int nwz, ydt, per_ch_scale, bias;
    int64_t lo, hi;
} ConvCase;

static void conv_graph(IrGraph *g, const ConvCase *cc)
{
    AtlErr e;
    int64_t xd[4] = {cc->N, cc->C, cc->H, cc->W}, wd[4] = {cc->OC, cc->C, cc->kh, cc->kw}, od[1] = {cc->OC};
    new_int_graph(g, "x", cc->xdt, 4, xd);
    if (cc->wconst) {
        int64_t nw = wd[0] * wd[1] * wd[2] * wd[3], *v = malloc((size_t)nw * sizeof *v);
        for (int64_t i = 0; i < nw; i++) v[i] = (cc->wdt == IR_U8 ? 128 : 0) + (i * 7919) % 256 - 128;
        const_of(g, "w", cc->wdt, 4, wd, v);
        free(v);
    } else ir_add_input(g, "w", cc->wdt, 4, wd, &e);
    const_of(g, "xz", cc->xdt, 0, xd, &cc->xz);
    zero_point(g, "wz", cc->wdt, cc->nwz ? cc->nwz : 1, cc->wz0);
    int n;
    if (cc->ydt < 0) n = ir_add_op(g, "ConvInteger", "convi", cc->nwz ? "x,w,xz,wz" : "x,w,xz", "y", &e);
    else {
        float sx = 0.02f, sy = 0.4f, *sw = malloc((size_t)cc->OC * sizeof *sw);
        for (int i = 0; i < cc->OC; i++) sw[i] = 0.01f + 0.003f * (float)i;
        fconst(g, "sx", 0, NULL, &sx);
        fconst(g, "sw", cc->per_ch_scale ? 1 : 0, od, sw);
        fconst(g, "sy", 0, NULL, &sy);
        int64_t zy = cc->ydt == IR_U8 ? 100 : -5;
        const_of(g, "zy", cc->ydt, 0, xd, &zy);
        if (cc->bias) {
            int64_t *b = malloc((size_t)cc->OC * sizeof *b);
            for (int i = 0; i < cc->OC; i++) b[i] = (i * 131) % 2000 - 1000;
            const_of(g, "bias", IR_I32, 1, od, b);
            free(b);
        }
        free(sw);
        n = ir_add_op(g, "QLinearConv", "qconv", cc->bias ? "x,sx,xz,w,sw,wz,sy,zy,bias" : "x,sx,xz,w,sw,wz,sy,zy", "y", &e);
    }
    int64_t pads[4] = {cc->pad, cc->pad, cc->pad, cc->pad}, st[2] = {cc->stride, cc->stride}, dl[2] = {cc->dil, cc->dil};
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    ir_set_attr_ints(g, n, "strides", st, 2, &e);
    ir_set_attr_ints(g, n, "dilations", dl, 2, &e);
    ir_add_output(g, "y", &e);
}

TEST(convinteger_and_qlinearconv)
{
    static const ConvCase cases[] = {
        {"convi u8 pad 1", IR_U8, IR_U8, 1, 3, 9, 9, 4, 3, 3, 1, 1, 1, 0, 140, 120, 0, -1, 0, 0, 0, 255},
        {"convi i8 per-channel wz", IR_I8, IR_I8, 2, 5, 12, 10, 7, 3, 3, 1, 2, 1, 0, -9, 0, 7, -1, 0, 0, -128, 127},
        {"convi u8 x i8 dilated const w", IR_U8, IR_I8, 1, 4, 11, 13, 6, 3, 2, 2, 1, 2, 1, 0, 3, 1, -1, 0, 0, 0, 127},
        {"convi i8 large", IR_I8, IR_U8, 1, 16, 40, 40, 24, 3, 3, 1, 1, 1, 1, 4, 128, 24, -1, 0, 0, 0, 127},
        {"qconv u8 -> u8", IR_U8, IR_U8, 1, 3, 9, 9, 4, 3, 3, 1, 1, 1, 0, 131, 127, 0, IR_U8, 0, 0, 0, 255},
        {"qconv i8 per-ch scale + bias", IR_I8, IR_I8, 2, 4, 8, 8, 5, 3, 3, 1, 1, 1, 1, 2, 0, 5, IR_I8, 1, 1, -128, 127},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        IrGraph g;
        conv_graph(&g, &cases[i]);
        run_exact(&g, cases[i].what, cases[i].lo, cases[i].hi);
        ir_free(&g);
    }
}

/* DynamicQuantizeLinear of x [xd] (all three outputs); inputs in [-1, 1)
 * times `gain` (a Mul by a constant), so the minimum or maximum may be 0. */
static void dynquant_graph(IrGraph *g, int ndim, const int64_t *xd, float gain, float shift)
{
    AtlErr e;
    new_int_graph(g, "x", IR_F32, ndim, xd);
    fconst(g, "gain", 0, NULL, &gain);
    fconst(g, "shift", 0, NULL, &shift);
    ir_add_op(g, "Mul", "scale_x", "x,gain", "xs", &e);
    ir_add_op(g, "Add", "shift_x", "xs,shift", "xt", &e);
    ir_add_op(g, "DynamicQuantizeLinear", "dq", "xt", "y,ys,yz", &e);
    ir_add_output(g, "y", &e);
    ir_add_output(g, "ys", &e);
    ir_add_output(g, "yz", &e);
}

TEST(dynamicquantizelinear)
{
    IrGraph g;
    int64_t xd[3] = {3, 7, 11}, big[2] = {40, 50};
    dynquant_graph(&g, 3, xd, 5.0f, 0.0f);
    run_exact(&g, "dynquant mixed signs", 0, 0);
    ir_free(&g);
    dynquant_graph(&g, 3, xd, 1.0f, 2.0f);
    run_exact(&g, "dynquant all positive", 0, 0);
    ir_free(&g);
    dynquant_graph(&g, 3, xd, 0.5f, -3.0f);
    run_exact(&g, "dynquant all negative", 0, 0);
    ir_free(&g);
    dynquant_graph(&g, 3, xd, 0.0f, 0.0f);
    run_exact(&g, "dynquant all zero (scale 1)", 0, 0);
    ir_free(&g);
    dynquant_graph(&g, 2, big, 1.0f, 0.0f);
    run_exact(&g, "dynquant [40][50]", 0, 0);
    ir_free(&g);
    /* the scale needs all of x in one tile */
    big[0] = 300;
    big[1] = 301;
    dynquant_graph(&g, 2, big, 1.0f, 0.0f);
    expect_rejected(&g, "'dq'", "does not fit one LMEM slot");
    ir_free(&g);
}

TEST(quant_rejections)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[1] = {8};
    /* a run-time zero point of MatMulInteger */
    int64_t ad[2] = {4, 4};
    new_int_graph(&g, "a", IR_U8, 2, ad);
    ir_add_input(&g, "b", IR_U8, 2, ad, &e);
    ir_add_input(&g, "za", IR_U8, 0, NULL, &e);
    ir_add_op(&g, "MatMulInteger", "mmi_rt", "a,b,za", "y", &e);
    ir_add_output(&g, "y", &e);
    expect_rejected(&g, "mmi_rt", "must be a constant");
    ir_free(&g);
    /* an int32 input to DequantizeLinear */
    float s = 0.5f;
    new_int_graph(&g, "x", IR_I32, 1, xd);
    fconst(&g, "s", 0, NULL, &s);
    ir_add_op(&g, "DequantizeLinear", "dq_i32", "x,s", "y", &e);
    ir_add_output(&g, "y", &e);
    expect_rejected(&g, "dq_i32", "int8 and uint8");
    ir_free(&g);
}

int main(void)
{
    RUN(dequantize_per_tensor_and_axis);
    RUN(quantize_per_tensor_and_axis);
    RUN(quantize_ties_and_saturation);
    RUN(matmulinteger);
    RUN(qlinearmatmul);
    RUN(convinteger_and_qlinearconv);
    RUN(dynamicquantizelinear);
    RUN(quant_rejections);
    return test_summary("test_backend_quant");
}
