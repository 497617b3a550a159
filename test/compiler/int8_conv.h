/* int8_conv.h - an Int8Conv node (ops/int8.c, what a quantised model's
 * QDQ units become) with pseudo-random weights, bias and requantisation
 * for the int8 backend tests (test_stage_sink.c, test_int8_wsram.c,
 * test_int8_group.c).
 * Header only. */
#ifndef ATOLL_TEST_INT8_CONV_H
#define ATOLL_TEST_INT8_CONV_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "test/test.h"
#include "test/compiler/bk_e2e.h"

/* Int8Conv `name`: x (C channels, zero point xz) -> out (M, zero point
 * yz), k x k, stride st, padding p, `groups` groups (C / groups input
 * channels per output channel); relu narrows the clamp to [yz, 127].
 * Weights in [-20, 20], bias small, (mult, shift) per channel keeping the
 * outputs spread over the int8 range (about +-60: acc ~ sqrt(K) x 74 x
 * 12, times mult / 2^(31+shift)); drawn from *seed. */
static inline void i8_conv_pg(IrGraph *g, uint32_t *seed, const char *name, const char *x, int C, int M, int k, int st,
                              int p, int groups, int xz, int yz, int relu, const char *out)
{
    AtlErr e;
    char w[64], b[64], rq[64], ins[256];
    int cpg = C / groups;
    int64_t wd[4] = {M, cpg, k, k}, bd[1] = {M}, rd[2] = {M, 2}, pads[4] = {p, p, p, p}, sv[2] = {st, st}, ks[2] = {k, k};
    int64_t nw = (int64_t)M * cpg * k * k;
    int8_t *wv = malloc((size_t)nw);
    int32_t *bv = malloc((size_t)M * 4), *rv = malloc((size_t)M * 8);
    REQUIRE(wv && bv && rv);
    for (int64_t i = 0; i < nw; i++) wv[i] = (int8_t)(e2e_frand(seed) * 20.0f);
    int shift = (int)lround(log2(sqrt((double)cpg * k * k) * 870.0 * 0.7 / 60.0));
    for (int m = 0; m < M; m++) {
        bv[m] = (int32_t)(e2e_frand(seed) * 2000.0f);
        rv[2 * m] = 1400000000 + (int32_t)((e2e_frand(seed) + 1.0f) * 150000000.0f);
        rv[2 * m + 1] = shift;
    }
    snprintf(w, sizeof w, "%s_w", name);
    snprintf(b, sizeof b, "%s_b", name);
    snprintf(rq, sizeof rq, "%s_rq", name);
    ir_add_const(g, w, IR_I8, 4, wd, wv, &e);
    ir_add_const(g, b, IR_I32, 1, bd, bv, &e);
    ir_add_const(g, rq, IR_I32, 2, rd, rv, &e);
    snprintf(ins, sizeof ins, "%s,%s,%s,%s", x, w, b, rq);
    int n = ir_add_op(g, "Int8Conv", name, ins, out, &e);
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    ir_set_attr_ints(g, n, "strides", sv, 2, &e);
    ir_set_attr_ints(g, n, "kernel_shape", ks, 2, &e);
    ir_set_attr_int(g, n, "x_zero_point", xz, &e);
    ir_set_attr_int(g, n, "y_zero_point", yz, &e);
    ir_set_attr_int(g, n, "y_min", relu ? yz : -128, &e);
    ir_set_attr_int(g, n, "y_max", 127, &e);
    ir_set_attr_int(g, n, "to", IR_I8, &e);
    if (groups > 1) ir_set_attr_int(g, n, "group", groups, &e);
    free(wv);
    free(bv);
    free(rv);
}

/* The same, one group, padding k / 2. */
static inline void i8_conv(IrGraph *g, uint32_t *seed, const char *name, const char *x, int C, int M, int k, int st, int xz,
                           int yz, int relu, const char *out)
{
    i8_conv_pg(g, seed, name, x, C, M, k, st, k / 2, 1, xz, yz, relu, out);
}

/* x (f32) -> QuantizeLinear (scale 1/64, zero point -3) -> xq: the int8
 * input of a test graph whose f32 input e2e_graph_run feeds. */
static inline void i8_quantize_input(IrGraph *g, const char *x, const char *xq)
{
    AtlErr e;
    char ins[128];
    int8_t zx = -3;
    float sx = 1.0f / 64;
    ir_add_const(g, "i8_sx", IR_F32, 0, NULL, &sx, &e);
    ir_add_const(g, "i8_zx", IR_I8, 0, NULL, &zx, &e);
    snprintf(ins, sizeof ins, "%s,i8_sx,i8_zx", x);
    ir_add_op(g, "QuantizeLinear", "i8_q", ins, xq, &e);
}

/* o (int8, zero point 4) -> DequantizeLinear (scale 1/4) -> out, the
 * graph's output. */
static inline void i8_dequantize_output(IrGraph *g, const char *o, const char *out)
{
    AtlErr e;
    char ins[128];
    int8_t zo = 4;
    float so = 0.25f;
    ir_add_const(g, "i8_so", IR_F32, 0, NULL, &so, &e);
    ir_add_const(g, "i8_zo", IR_I8, 0, NULL, &zo, &e);
    snprintf(ins, sizeof ins, "%s,i8_so,i8_zo", o);
    ir_add_op(g, "DequantizeLinear", "i8_dq", ins, out, &e);
    ir_add_output(g, out, &e);
}

#endif
