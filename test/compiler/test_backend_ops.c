/* test_backend_ops.c - the backend op by op: small graphs built in code
 * (odd sizes, broadcasts, groups, strides, dilations, padding, transposes),
 * compiled for configs/tiny.ini and configs/a1.ini, run on the simulator
 * and compared with the reference interpreter. Each compiled program is
 * also checked structurally (test/compiler/bk_check.h: operands inside
 * LMEM and aligned, semaphores balanced, barriers and `end` per stream;
 * the simulator, race detector on, ran it to the end). Plus error messages
 * that name the node and op; graph outputs that are views of graph inputs
 * (copies) and inference Dropout with its mask; ConvTranspose (strides,
 * output_padding, pads that crop, groups, dilations, output_shape,
 * auto_pad, 1-D, run-time weights) through the backend's rewrite into a
 * Conv; Conv with run-time weights. (Matmul K split and multicast:
 * test_backend_mm.c.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"

TEST(conv_grouped_strided)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 4, 9, 11}, wd[4] = {6, 2, 3, 3}, bd[1] = {6};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "w", 4, wd, 0.5f);
    cst(&g, "b", 1, bd, 0.5f);
    int n = ir_add_op(&g, "Conv", "conv", "x,w,b", "y", &e);
    int64_t pads[4] = {1, 0, 2, 1}, st[2] = {2, 2};
    ir_set_attr_int(&g, n, "group", 2, &e);
    ir_set_attr_ints(&g, n, "pads", pads, 4, &e);
    ir_set_attr_ints(&g, n, "strides", st, 2, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "conv groups=2 s2", 1e-5);
    ir_free(&g);
}

TEST(conv_dilated_relu)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 3, 12, 12}, wd[4] = {5, 3, 3, 3};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "w", 4, wd, 0.5f);
    int n = ir_add_op(&g, "Conv", "conv", "x,w", "c", &e);
    int64_t pads[4] = {2, 2, 2, 2}, dl[2] = {2, 2};
    ir_set_attr_ints(&g, n, "pads", pads, 4, &e);
    ir_set_attr_ints(&g, n, "dilations", dl, 2, &e);
    ir_add_op(&g, "Relu", "relu", "c", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "conv dil=2 +relu", 1e-5);
    ir_free(&g);
}

TEST(conv_depthwise_clip)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 8, 10, 10}, wd[4] = {8, 1, 3, 3}, bd[1] = {8};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "w", 4, wd, 1.0f);
    cst(&g, "b", 1, bd, 0.5f);
    cst_scalar(&g, "lo", 0.0f);
    cst_scalar(&g, "hi", 0.5f);
    int n = ir_add_op(&g, "Conv", "dw", "x,w,b", "c", &e);
    int64_t pads[4] = {1, 1, 1, 1};
    ir_set_attr_int(&g, n, "group", 8, &e);
    ir_set_attr_ints(&g, n, "pads", pads, 4, &e);
    ir_add_op(&g, "Clip", "clip", "c,lo,hi", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "depthwise +clip", 1e-5);
    ir_free(&g);
}

TEST(gemm_transposed)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[2] = {7, 5}, bd[2] = {4, 7}, cd[1] = {4};
    bkc_new_graph(&g, "x", 2, xd);
    cst(&g, "B", 2, bd, 0.5f);
    cst(&g, "C", 1, cd, 0.5f);
    int n = ir_add_op(&g, "Gemm", "gemm", "x,B,C", "y", &e);
    ir_set_attr_int(&g, n, "transA", 1, &e);
    ir_set_attr_int(&g, n, "transB", 1, &e);
    ir_set_attr_float(&g, n, "alpha", 0.5f, &e);
    ir_set_attr_float(&g, n, "beta", 2.0f, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "gemm transA transB", 1e-5);
    ir_free(&g);
}

/* Gemm with C an activation in every broadcast form (scalar, [N], [M,1],
 * [M,N]) and an activation B with alpha != 1, transposes, beta; B and C
 * are computed from the one graph input x [K][M] (A = x^T). */
static void gemm_runtime_c_graph(IrGraph *g, int ci, int64_t M, int64_t K, int64_t N)
{
    AtlErr e;
    int64_t xd[2] = {K, M}, w1[2] = {N, M}, w3[2] = {K, N}, perm[2] = {1, 0}, one[1] = {1}, zero[1] = {0};
    bkc_new_graph(g, "x", 2, xd);
    cst(g, "w1", 2, w1, 0.5f);
    cst(g, "w3", 2, w3, 0.5f);
    int n = ir_add_op(g, "Transpose", "xt", "x", "xt", &e);               /* [M,K] */
    ir_set_attr_ints(g, n, "perm", perm, 2, &e);
    ir_add_op(g, "MatMul", "mkb", "w1,xt", "b", &e);                      /* B [N,K] */
    if (ci == 0) {
        n = ir_add_op(g, "ReduceMean", "mkc", "x", "c", &e);             /* () */
        ir_set_attr_int(g, n, "keepdims", 0, &e);
    } else if (ci == 1) {
        cst_i64(g, "ax1", 1, one);
        n = ir_add_op(g, "ReduceSum", "mkc", "b,ax1", "c", &e);          /* [N] */
        ir_set_attr_int(g, n, "keepdims", 0, &e);
    } else if (ci == 2) {
        cst_i64(g, "ax0", 1, zero);
        ir_add_op(g, "ReduceSum", "mkc", "x,ax0", "ct", &e);             /* [1,M] */
        n = ir_add_op(g, "Transpose", "mkc2", "ct", "c", &e);            /* [M,1] */
        ir_set_attr_ints(g, n, "perm", perm, 2, &e);
    } else ir_add_op(g, "MatMul", "mkc", "xt,w3", "c", &e);              /* [M,N] */
    n = ir_add_op(g, "Gemm", "gemm", "x,b,c", "y", &e);
    ir_set_attr_int(g, n, "transA", 1, &e);
    ir_set_attr_int(g, n, "transB", 1, &e);
    ir_set_attr_float(g, n, "alpha", 0.5f, &e);
    ir_set_attr_float(g, n, "beta", ci == 2 ? 1.0f : -1.5f, &e);
    ir_add_output(g, "y", &e);
}

TEST(gemm_runtime_c)
{
    static const char *const what[4] = {"gemm C scalar", "gemm C [N]", "gemm C [M,1]", "gemm C [M,N]"};
    for (int ci = 0; ci < 4; ci++) {
        IrGraph g;
        gemm_runtime_c_graph(&g, ci, 9, 6, 11);
        run_graph(&g, what[ci], 1e-5);
        ir_free(&g);
    }
    /* f16 storage: C loaded in f16, cast to f32 before the add */
    for (int c = 0; c < 2; c++) {
        IrGraph g;
        gemm_runtime_c_graph(&g, 3, 9, 6, 11);
        double err;
        char msg[1024] = "";
        int rc = e2e_graph(&g, chips[c], ISA_F16, &err, NULL, msg, sizeof msg);
        printf("  gemm C [M,N] f16      %-18s max err %.3g %s\n", chips[c], rc ? -1 : err, msg);
        CHECKF(rc == 0 && err <= 2e-2, "gemm f16 on %s: %s err %g", chips[c], msg, err);
        ir_free(&g);
    }
}

TEST(matmul_batched_and_activations)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[3] = {3, 5, 16}, bd[2] = {16, 9}, biasd[1] = {9}, perm[3] = {0, 2, 1};
    bkc_new_graph(&g, "x", 3, xd);
    cst(&g, "B", 2, bd, 0.5f);
    cst(&g, "bias", 1, biasd, 0.5f);
    ir_add_op(&g, "MatMul", "mm", "x,B", "m", &e);
    ir_add_op(&g, "Add", "add", "m,bias", "a", &e);                 /* [3,5,9] */
    int t = ir_add_op(&g, "Transpose", "tr", "a", "at", &e);        /* [3,9,5] */
    ir_set_attr_ints(&g, t, "perm", perm, 3, &e);
    ir_add_op(&g, "MatMul", "mm2", "a,at", "y", &e);                /* [3,5,5] both activations */
    ir_add_output(&g, "y", &e);
    run_graph(&g, "matmul batched x act", 1e-5);
    ir_free(&g);
}

TEST(elementwise_broadcast)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 3, 4, 5}, c1[3] = {3, 1, 1}, c2[1] = {5}, c3[3] = {1, 4, 1};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "c1", 3, c1, 1.0f);
    cst(&g, "c2", 1, c2, 1.0f);
    int t3 = cst(&g, "c3", 3, c3, 1.0f);
    for (int i = 0; i < 4; i++) ((float *)g.t[t3].data)[i] = 1.5f + (float)i;   /* no division by ~0 */
    ir_add_op(&g, "Add", "add", "x,c1", "a", &e);
    ir_add_op(&g, "Mul", "mul", "a,c2", "b", &e);
    ir_add_op(&g, "Div", "div", "b,c3", "c", &e);
    ir_add_op(&g, "Sub", "sub", "c,x", "d", &e);
    ir_add_op(&g, "Max", "max", "d,c2", "f", &e);
    ir_add_op(&g, "Min", "min", "f,c1", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "add/mul/div/sub/max/min", 1e-5);
    ir_free(&g);
}

TEST(activations)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[2] = {3, 37};
    bkc_new_graph(&g, "x", 2, xd);
    ir_add_op(&g, "Sigmoid", "sig", "x", "a", &e);
    ir_add_op(&g, "Tanh", "tanh", "a", "b", &e);
    int n = ir_add_op(&g, "LeakyRelu", "lrelu", "x", "c", &e);
    ir_set_attr_float(&g, n, "alpha", 0.2f, &e);
    ir_add_op(&g, "HardSwish", "hsw", "c", "d", &e);
    ir_add_op(&g, "HardSigmoid", "hsg", "d", "f", &e);
    ir_add_op(&g, "Exp", "exp", "b", "h", &e);
    ir_add_op(&g, "Log", "log", "h", "i", &e);
    ir_add_op(&g, "Abs", "abs", "x", "j", &e);
    ir_add_op(&g, "Sqrt", "sqrt", "j", "k", &e);
    ir_add_op(&g, "Neg", "neg", "k", "l", &e);
    ir_add_op(&g, "Add", "s1", "f,i", "m", &e);
    ir_add_op(&g, "Add", "s2", "m,l", "o", &e);
    cst_scalar(&g, "three", 3.0f);
    ir_add_op(&g, "Pow", "pow", "o,three", "p", &e);
    ir_add_op(&g, "Reciprocal", "rec", "h", "q", &e);
    ir_add_op(&g, "Add", "s3", "p,q", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "unary chain", 1e-5);
    ir_free(&g);
}

TEST(softmax_and_reductions)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 3, 4, 6}, ax23[2] = {2, 3}, ax1[1] = {1};
    bkc_new_graph(&g, "x", 4, xd);
    ir_add_op(&g, "Softmax", "sm", "x", "a", &e);                   /* axis -1 */
    int n = ir_add_op(&g, "Softmax", "sm1", "x", "b", &e);
    ir_set_attr_int(&g, n, "axis", 1, &e);                           /* inner > 1 */
    ir_add_op(&g, "Add", "ab", "a,b", "c", &e);
    n = ir_add_op(&g, "ReduceMean", "rm", "c", "d", &e);             /* [2,3,1,1] */
    ir_set_attr_ints(&g, n, "axes", ax23, 2, &e);
    cst_i64(&g, "ax1", 1, ax1);
    ir_add_op(&g, "ReduceSum", "rs", "x,ax1", "f", &e);              /* [2,1,4,6], axes as input (opset 13+) */
    n = ir_add_op(&g, "ReduceMax", "rx", "f", "h", &e);              /* [2,1,4,6] -> [2,1,4] */
    int64_t axl[1] = {-1};
    ir_set_attr_ints(&g, n, "axes", axl, 1, &e);
    ir_set_attr_int(&g, n, "keepdims", 0, &e);
    ir_add_op(&g, "GlobalAveragePool", "gap0", "x", "gp0", &e);      /* [2,3,1,1] */
    n = ir_add_op(&g, "ReduceMin", "rmin", "x", "mn", &e);           /* [2,3,1,1] */
    ir_set_attr_ints(&g, n, "axes", ax23, 2, &e);
    ir_add_op(&g, "Add", "gpm", "gp0,mn", "gp", &e);
    ir_add_op(&g, "Add", "dg", "d,gp", "dd", &e);                    /* [2,3,1,1] */
    ir_add_op(&g, "Flatten", "fl", "dd", "fd", &e);                  /* [2,3] view */
    ir_add_op(&g, "Flatten", "fh", "h", "fh2", &e);                  /* [2,4] */
    n = ir_add_op(&g, "Concat", "cat", "fd,fh2", "y", &e);           /* [2,7] */
    ir_set_attr_int(&g, n, "axis", 1, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "softmax/reduce/concat", 1e-5);
    ir_free(&g);
}

/* x [2,3,5,7] times `scale` (exp'd when exp_first) -> op over axes. */
static void reduce_case(const char *op, const int64_t *axes, int na, int keepdims, float scale, int exp_first, int opset)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 3, 5, 7};
    bkc_new_graph(&g, "x", 4, xd);
    g.opset = opset;
    cst_scalar(&g, "s", scale);
    ir_add_op(&g, "Mul", "scale", "x,s", "xs", &e);
    if (exp_first) ir_add_op(&g, "Exp", "exp", "xs", "xe", &e);
    int n = ir_add_op(&g, op, "red", exp_first ? "xe" : "xs", "y", &e);
    if (!strncmp(op, "Reduce", 6)) {
        ir_set_attr_ints(&g, n, "axes", axes, na, &e);
        ir_set_attr_int(&g, n, "keepdims", keepdims, &e);
    } else ir_set_attr_int(&g, n, "axis", axes[0], &e);
    ir_add_output(&g, "y", &e);
    char what[64];
    snprintf(what, sizeof what, "%s x%g opset %d", op, (double)scale, opset);
    run_graph(&g, what, 1e-5);
    ir_free(&g);
}

TEST(reductions_with_pre_and_post_steps)
{
    int64_t a1[1] = {1}, a23[2] = {2, 3}, a3[1] = {3}, a12[2] = {1, 2}, a2[1] = {-2};
    reduce_case("ReduceSumSquare", a1, 1, 1, 1.0f, 0, 14);
    reduce_case("ReduceL1", a23, 2, 1, 1.0f, 0, 14);
    reduce_case("ReduceL2", a3, 1, 0, 1.0f, 0, 14);
    reduce_case("ReduceLogSum", a12, 2, 1, 1.0f, 1, 14);
    reduce_case("ReduceLogSumExp", a2, 1, 0, 1.0f, 0, 14);
    reduce_case("ReduceLogSumExp", a3, 1, 1, 200.0f, 0, 14);   /* exp(200) overflows f32 unless shifted */
    reduce_case("ReduceProd", a1, 1, 1, 3.0f, 0, 14);          /* 3 factors: signs of 0..3 negatives */
    reduce_case("ReduceProd", a23, 2, 0, 2.7f, 0, 14);         /* 35 factors, E log|x| ~ 0 */
}

TEST(log_softmax)
{
    int64_t am1[1] = {-1}, a1[1] = {1};
    reduce_case("LogSoftmax", am1, 1, 1, 1.0f, 0, 14);
    reduce_case("LogSoftmax", a1, 1, 1, 100.0f, 0, 14);         /* inner > 1, large logits */
    reduce_case("LogSoftmax", a1, 1, 1, 3.0f, 0, 11);           /* opset < 13: axes 1..3 flattened */
}

/* x [3,37] times `scale` -> op with up to two float attributes -> times
 * `post` (brings tiny outputs back to unit size, where errors show). */
static void act_case(const char *op, float scale, float post, const char *k1, float v1, const char *k2, float v2)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[2] = {3, 37};
    bkc_new_graph(&g, "x", 2, xd);
    cst_scalar(&g, "s", scale);
    ir_add_op(&g, "Mul", "scale", "x,s", "xs", &e);
    int n = ir_add_op(&g, op, "act", "xs", "ya", &e);
    if (k1) ir_set_attr_float(&g, n, k1, v1, &e);
    if (k2) ir_set_attr_float(&g, n, k2, v2, &e);
    cst_scalar(&g, "p", post);
    ir_add_op(&g, "Mul", "post", "ya,p", "y", &e);
    ir_add_output(&g, "y", &e);
    char what[64];
    snprintf(what, sizeof what, "%s x%g", op, (double)scale);
    run_graph(&g, what, 1e-5);
    ir_free(&g);
}

TEST(activations_with_scratch)
{
    act_case("Elu", 4.0f, 1.0f, NULL, 0, NULL, 0);
    act_case("Elu", 4.0f, 1.0f, "alpha", 0.5f, NULL, 0);
    act_case("Celu", 4.0f, 1.0f, "alpha", 2.0f, NULL, 0);
    act_case("Selu", 4.0f, 1.0f, NULL, 0, NULL, 0);
    act_case("Selu", 4.0f, 1.0f, "alpha", 2.0f, "gamma", 3.0f);
    act_case("Softplus", 60.0f, 1.0f, NULL, 0, NULL, 0);   /* |x| up to 60: exp(60) would overflow f32 */
    act_case("Softplus", 1.0f, 1.0f, NULL, 0, NULL, 0);
    act_case("Softsign", 10.0f, 1.0f, NULL, 0, NULL, 0);
    act_case("Shrink", 2.0f, 1.0f, "lambd", 0.7f, "bias", 0.7f);     /* soft */
    act_case("Shrink", 2.0f, 1.0f, "lambd", 0.5f, NULL, 0);           /* hard: bias 0 */
    act_case("Shrink", 2.0f, 1.0f, "lambd", 0.5f, "bias", 1.5f);
    act_case("ThresholdedRelu", 2.0f, 1.0f, NULL, 0, NULL, 0);
    act_case("ThresholdedRelu", 2.0f, 1.0f, "alpha", -0.5f, NULL, 0);
    act_case("ThresholdedRelu", 1e-38f, 1e38f, "alpha", 0.0f, NULL, 0); /* denormal x: the mask still switches */
}

/* x [2,3,4,5] with slope of shape sd (ns dims) at opset `opset`. */
static void prelu_case(const int64_t *sd, int ns, int opset)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 3, 4, 5};
    bkc_new_graph(&g, "x", 4, xd);
    g.opset = opset;
    cst(&g, "slope", ns, sd, 1.0f);
    ir_add_op(&g, "PRelu", "prelu", "x,slope", "y", &e);
    ir_add_output(&g, "y", &e);
    char what[64];
    snprintf(what, sizeof what, "PRelu slope %dd opset %d", ns, opset);
    run_graph(&g, what, 1e-5);
    ir_free(&g);
}

TEST(prelu_slopes)
{
    int64_t per_ch[3] = {3, 1, 1}, last[1] = {5}, full[4] = {2, 3, 4, 5}, ch[1] = {3};
    prelu_case(per_ch, 3, 14);
    prelu_case(last, 1, 14);
    prelu_case(full, 4, 14);
    prelu_case(ch, 1, 6);     /* opset 6: a [C] slope lines up with axis 1 */
}

TEST(shrink_negative_lambd_names_node)
{
    IrGraph g;
    AtlErr e = {{0}};
    int64_t xd[2] = {2, 3};
    bkc_new_graph(&g, "x", 2, xd);
    int n = ir_add_op(&g, "Shrink", "odd_shrink", "x", "y", &e);
    ir_set_attr_float(&g, n, "lambd", -0.5f, &e);
    ir_add_output(&g, "y", &e);
    expect_not_lowered(&g, "odd_shrink", "negative lambd");
    ir_free(&g);
}

TEST(pools)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 5, 11, 9}, k3[2] = {3, 3}, s2[2] = {2, 2}, p1[4] = {1, 1, 1, 1}, k2[2] = {2, 2};
    bkc_new_graph(&g, "x", 4, xd);
    int n = ir_add_op(&g, "MaxPool", "mp", "x", "a", &e);            /* [2,5,6,5] */
    ir_set_attr_ints(&g, n, "kernel_shape", k3, 2, &e);
    ir_set_attr_ints(&g, n, "strides", s2, 2, &e);
    ir_set_attr_ints(&g, n, "pads", p1, 4, &e);
    n = ir_add_op(&g, "AveragePool", "ap", "x", "b", &e);            /* [2,5,6,5] */
    ir_set_attr_ints(&g, n, "kernel_shape", k3, 2, &e);
    ir_set_attr_ints(&g, n, "strides", s2, 2, &e);
    ir_set_attr_ints(&g, n, "pads", p1, 4, &e);
    ir_set_attr_int(&g, n, "count_include_pad", 1, &e);
    ir_add_op(&g, "Add", "add", "a,b", "c", &e);
    n = ir_add_op(&g, "AveragePool", "ap2", "c", "y", &e);           /* [2,5,3,2] */
    ir_set_attr_ints(&g, n, "kernel_shape", k2, 2, &e);
    ir_set_attr_ints(&g, n, "strides", s2, 2, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "maxpool/avgpool", 1e-5);
    ir_free(&g);
}

TEST(data_movement)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 3, 6, 5}, perm[4] = {0, 2, 3, 1};
    bkc_new_graph(&g, "x", 4, xd);
    int n = ir_add_op(&g, "Transpose", "tr", "x", "t", &e);          /* [2,6,5,3] */
    ir_set_attr_ints(&g, n, "perm", perm, 4, &e);
    int64_t st[2] = {1, 0}, en[2] = {6, 5}, ax[2] = {1, 2}, sp[2] = {2, 2};
    cst_i64(&g, "st", 2, st); cst_i64(&g, "en", 2, en); cst_i64(&g, "ax", 2, ax); cst_i64(&g, "sp", 2, sp);
    ir_add_op(&g, "Slice", "sl", "t,st,en,ax,sp", "s", &e);          /* [2,3,3,3] */
    int64_t pads[8] = {0, 1, 0, 2, 0, 0, 1, 0};
    cst_i64(&g, "pads", 8, pads);
    cst_scalar(&g, "pv", 0.25f);
    ir_add_op(&g, "Pad", "pad", "s,pads,pv", "p", &e);               /* [2,4,4,5] */
    int64_t idx[3] = {3, 0, -1};
    cst_i64(&g, "idx", 3, idx);
    n = ir_add_op(&g, "Gather", "ga", "p,idx", "q", &e);             /* [2,3,4,5] axis 1 */
    ir_set_attr_int(&g, n, "axis", 1, &e);
    int64_t split[2] = {1, 2};
    cst_i64(&g, "split", 2, split);
    n = ir_add_op(&g, "Split", "sp", "q,split", "q1,q2", &e);        /* [2,1,4,5] [2,2,4,5] */
    ir_set_attr_int(&g, n, "axis", 1, &e);
    ir_add_op(&g, "Relu", "r", "q2", "r2", &e);
    n = ir_add_op(&g, "Concat", "cat", "r2,q1", "y", &e);            /* [2,3,4,5] */
    ir_set_attr_int(&g, n, "axis", 1, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "transpose/slice/pad/gather/split/concat", 0);
    ir_free(&g);
}

static void resize_case(const char *what, const float *scales, const char *ctm, const char *nm)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 3, 5, 4}, four = 4;
    bkc_new_graph(&g, "x", 4, xd);
    ir_add_const(&g, "roi", IR_F32, 1, (int64_t[]){0}, NULL, &e);
    ir_add_const(&g, "scales", IR_F32, 1, &four, scales, &e);
    int n = ir_add_op(&g, "Resize", "rs", "x,roi,scales", "r", &e);
    if (ctm) ir_set_attr_str(&g, n, "coordinate_transformation_mode", ctm, &e);
    if (nm) ir_set_attr_str(&g, n, "nearest_mode", nm, &e);
    ir_add_op(&g, "Relu", "relu", "r", "y", &e);          /* a consumer, so the Resize is not the output */
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 0);
    ir_free(&g);
}

/* DMA patterns, and (1.5x) a map that is none: interpolation matrices */
TEST(resize_nearest)
{
    const float up2[4] = {1, 1, 2, 2}, up3[4] = {1, 1, 3, 1}, down2[4] = {1, 1, 0.5f, 0.5f}, odd[4] = {1, 1, 1.5f, 1};
    resize_case("resize 2x half_pixel", up2, NULL, NULL);
    resize_case("resize 3x asymmetric", up3, "asymmetric", "floor");
    resize_case("resize 0.5x", down2, "asymmetric", "floor");
    resize_case("resize 1.5x", odd, NULL, NULL);
}

/* Clip bounds computed at run time (one value each: the mean of x and the
 * sigmoid of it), alone or with a constant bound: v.max / v.min by an input
 * broadcast by stride 0; a bound of several values is refused */
static void clip_runtime_graph(IrGraph *g, const char *inputs)
{
    AtlErr e;
    int64_t xd[3] = {4, 6, 10}, a2[1] = {2};
    bkc_new_graph(g, "x", 3, xd);
    int n = ir_add_op(g, "ReduceMean", "all", "x", "mean", &e);
    ir_set_attr_int(g, n, "keepdims", 0, &e);
    ir_add_op(g, "Sigmoid", "sig", "mean", "smean", &e);
    n = ir_add_op(g, "ReduceMean", "rows", "x", "rowmean", &e);
    ir_set_attr_ints(g, n, "axes", a2, 1, &e);
    cst_scalar(g, "lo", -0.1f);
    cst_scalar(g, "hi", 0.2f);
    ir_add_op(g, "Clip", "clip", inputs, "y", &e);
    ir_add_output(g, "y", &e);
}

TEST(clip_runtime_bounds)
{
    const char *cases[] = {"x,mean,hi", "x,lo,smean", "x,mean,smean", "x,smean,mean", "x,mean"};
    for (int i = 0; i < 5; i++) {
        IrGraph g;
        clip_runtime_graph(&g, cases[i]);
        run_graph(&g, cases[i], 1e-6);
        ir_free(&g);
    }
    IrGraph g;
    clip_runtime_graph(&g, "x,rowmean,hi");
    expect_not_lowered(&g, "clip", "Clip min must hold one value");
    ir_free(&g);
}

TEST(layernorm_opset17)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[3] = {2, 7, 24}, ld[1] = {24};
    bkc_new_graph(&g, "x", 3, xd);
    g.opset = 17;
    cst(&g, "gamma", 1, ld, 1.0f);
    cst(&g, "beta", 1, ld, 1.0f);
    ir_add_op(&g, "LayerNormalization", "ln", "x,gamma,beta", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "layernorm", 1e-5);
    ir_free(&g);
}

/* the optional Mean and InvStdDev outputs ([rows] with the normalised axes
 * as 1), over the last axis and over two axes */
TEST(layernorm_mean_invstddev)
{
    for (int axis = -1; axis >= -2; axis--) {
        IrGraph g;
        AtlErr e;
        int64_t xd[3] = {6, 5, 12}, ld[2] = {5, 12};
        bkc_new_graph(&g, "x", 3, xd);
        g.opset = 17;
        cst(&g, "gamma", axis == -1 ? 1 : 2, axis == -1 ? ld + 1 : ld, 1.0f);
        int n = ir_add_op(&g, "LayerNormalization", "ln", "x,gamma", "y,mean,istd", &e);
        ir_set_attr_int(&g, n, "axis", axis, &e);
        ir_add_output(&g, "y", &e);
        ir_add_output(&g, "mean", &e);
        ir_add_output(&g, "istd", &e);
        run_graph(&g, axis == -1 ? "layernorm mean/istd axis -1" : "layernorm mean/istd axis -2", 1e-5);
        ir_free(&g);
    }
}

/* scale and bias computed at run time (reductions of x to [L]) */
TEST(layernorm_runtime_scale_bias)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[3] = {6, 5, 12}, axes[2] = {0, 1};
    bkc_new_graph(&g, "x", 3, xd);
    g.opset = 17;
    int n = ir_add_op(&g, "ReduceMax", "rmax", "x", "gamma", &e);
    ir_set_attr_ints(&g, n, "axes", axes, 2, &e);
    ir_set_attr_int(&g, n, "keepdims", 0, &e);
    n = ir_add_op(&g, "ReduceMean", "rmean", "x", "beta", &e);
    ir_set_attr_ints(&g, n, "axes", axes, 2, &e);
    ir_set_attr_int(&g, n, "keepdims", 0, &e);
    ir_add_op(&g, "LayerNormalization", "ln", "x,gamma,beta", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "layernorm runtime scale", 1e-5);
    ir_free(&g);
}

TEST(batchnorm_unfused)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 4, 3, 5}, cd[1] = {4};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "s", 1, cd, 1.0f);
    cst(&g, "bb", 1, cd, 1.0f);
    cst(&g, "m", 1, cd, 1.0f);
    int v = cst(&g, "v", 1, cd, 1.0f);
    for (int i = 0; i < 4; i++) ((float *)g.t[v].data)[i] = 0.5f + (float)i;
    ir_add_op(&g, "BatchNormalization", "bn", "x,s,bb,m,v", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "batchnorm", 1e-5);
    ir_free(&g);
}

/* 1-D (NCW) conv and pools run as 2-D with H = 1; 3-D as 2-D pools per
 * depth slice (legalize/rewrite_3d.c; more cases in test_backend_floatops.c). */
TEST(conv_pool_1d)
{
    IrGraph g;
    AtlErr e = {{0}};
    int64_t xd[3] = {2, 4, 13}, wd[3] = {6, 2, 3}, bd[1] = {6}, k3[1] = {3}, s2[1] = {2}, p12[2] = {1, 2}, dl[1] = {2};
    bkc_new_graph(&g, "x", 3, xd);
    cst(&g, "w", 3, wd, 0.5f);
    cst(&g, "b", 1, bd, 0.5f);
    int n = ir_add_op(&g, "Conv", "conv1d", "x,w,b", "c", &e);       /* [2,6,8] */
    ir_set_attr_int(&g, n, "group", 2, &e);
    ir_set_attr_ints(&g, n, "pads", p12, 2, &e);
    ir_set_attr_ints(&g, n, "strides", s2, 1, &e);
    ir_set_attr_ints(&g, n, "dilations", dl, 1, &e);
    n = ir_add_op(&g, "MaxPool", "mp1d", "c", "m", &e);              /* [2,6,4] */
    ir_set_attr_ints(&g, n, "kernel_shape", k3, 1, &e);
    ir_set_attr_ints(&g, n, "strides", s2, 1, &e);
    ir_set_attr_ints(&g, n, "pads", p12, 2, &e);
    n = ir_add_op(&g, "AveragePool", "ap1d", "m", "y", &e);          /* [2,6,2] */
    ir_set_attr_ints(&g, n, "kernel_shape", k3, 1, &e);
    ir_set_attr_ints(&g, n, "strides", s2, 1, &e);
    ir_set_attr_ints(&g, n, "pads", p12, 2, &e);
    ir_set_attr_int(&g, n, "count_include_pad", 1, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "conv1d/maxpool1d/avgpool1d", 1e-5);
    ir_free(&g);

    int64_t x5[5] = {1, 2, 4, 4, 4}, k222[3] = {2, 2, 2};
    bkc_new_graph(&g, "x", 5, x5);
    n = ir_add_op(&g, "MaxPool", "mp3d", "x", "y", &e);
    ir_set_attr_ints(&g, n, "kernel_shape", k222, 3, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "maxpool3d (2-D pools, legalize/rewrite_3d.c)", 0);
    ir_free(&g);
}

/* Graph outputs that are views of a graph input (or of another output)
 * cannot share its storage: each becomes a copy. */
TEST(view_outputs_copied)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 3, 1, 5};
    bkc_new_graph(&g, "x", 4, xd);
    int n = ir_add_op(&g, "Flatten", "fl", "x", "f", &e);             /* [2,15] */
    ir_set_attr_int(&g, n, "axis", 1, &e);
    n = ir_add_op(&g, "Flatten", "fl2", "f", "ff", &e);                /* [30,1] of an output */
    ir_set_attr_int(&g, n, "axis", 2, &e);
    int64_t ax[1] = {2};
    cst_i64(&g, "ax", 1, ax);
    ir_add_op(&g, "Squeeze", "sq", "x,ax", "s", &e);                   /* [2,3,5], not an output */
    ir_add_op(&g, "Relu", "r", "s", "y", &e);
    ir_add_output(&g, "f", &e);
    ir_add_output(&g, "ff", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "flatten of input, flatten of output", 0);
    ir_free(&g);
}

/* Inference Dropout from a graph input to a graph output, its bool mask
 * requested: a copy and a fill of true. */
TEST(dropout_with_mask)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[3] = {3, 4, 7};
    bkc_new_graph(&g, "x", 3, xd);
    g.opset = 13;
    ir_add_op(&g, "Dropout", "drop", "x", "y,mask", &e);
    ir_add_output(&g, "y", &e);
    ir_add_output(&g, "mask", &e);
    run_graph(&g, "dropout + mask", 0);
    ir_free(&g);
}

TEST(unsupported_op_names_node)
{
    IrGraph g;
    AtlErr e = {{0}};
    int64_t xd[3] = {2, 4, 4}; /* Det is lowered up to 3x3 */
    bkc_new_graph(&g, "x", 3, xd);
    ir_add_op(&g, "Det", "lonely_det", "x", "y", &e);
    ir_add_output(&g, "y", &e);
    expect_not_lowered(&g, "lonely_det", "Det");
    ir_free(&g);
}

/* noop_with_empty_axes with an empty constant axes input: the output is x
 * (ReduceSum at opset 13, ReduceL2 at opset 18 would otherwise square and
 * root), small and over 65535 elements (rows split off) */
TEST(reduce_noop_empty_axes)
{
    const char *ops[2] = {"ReduceSum", "ReduceL2"};
    const int opsets[2] = {13, 18};
    for (int big = 0; big < 2; big++)
        for (int i = 0; i < 2; i++) {
            IrGraph g;
            AtlErr e = {{0}};
            int64_t small[3] = {3, 2, 2}, large[3] = {2, 300, 250};
            bkc_new_graph(&g, "x", 3, big ? large : small);
            g.opset = opsets[i];
            cst_i64(&g, "axes", 0, NULL);
            int n = ir_add_op(&g, ops[i], "noop", "x,axes", "y", &e);
            ir_set_attr_int(&g, n, "noop_with_empty_axes", 1, &e);
            ir_add_output(&g, "y", &e);
            run_graph(&g, ops[i], 0);
            ir_free(&g);
        }
}

TEST(reduce_prod_f16_names_node)
{
    IrGraph g;
    AtlErr e = {{0}};
    int64_t xd[2] = {2, 3}, ax[1] = {1};
    bkc_new_graph(&g, "x", 2, xd);
    int n = ir_add_op(&g, "ReduceProd", "prod16", "x", "y", &e);
    ir_set_attr_ints(&g, n, "axes", ax, 1, &e);
    ir_add_output(&g, "y", &e);
    expect_not_lowered_in(&g, ISA_F16, "prod16", "f32 only");
    ir_free(&g);
}

/* ConvTranspose: rewritten by the backend (legalize/rewrite_convt.c) into a
 * spread of the input by the stride and a Conv with flipped weights. */
static int convt_node(IrGraph *g, const char *ins, const char *out, const int64_t *st, const int64_t *pads,
                      const int64_t *dil, const int64_t *opad, int ns, int group)
{
    AtlErr e;
    int n = ir_add_op(g, "ConvTranspose", "convt", ins, out, &e);
    if (st) ir_set_attr_ints(g, n, "strides", st, ns, &e);
    if (pads) ir_set_attr_ints(g, n, "pads", pads, 2 * ns, &e);
    if (dil) ir_set_attr_ints(g, n, "dilations", dil, ns, &e);
    if (opad) ir_set_attr_ints(g, n, "output_padding", opad, ns, &e);
    if (group > 1) ir_set_attr_int(g, n, "group", group, &e);
    return n;
}

TEST(convtranspose_stride2_output_padding_bias)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 4, 5, 6}, wd[4] = {4, 3, 3, 3}, bd[1] = {3};
    int64_t st[2] = {2, 2}, pads[4] = {1, 0, 0, 1}, op[2] = {1, 0};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "w", 4, wd, 0.5f);
    cst(&g, "b", 1, bd, 0.5f);
    convt_node(&g, "x,w,b", "y", st, pads, NULL, op, 2, 1); /* [2,3,11,12] */
    ir_add_output(&g, "y", &e);
    run_graph(&g, "convT s2 opad bias", 1e-4);
    ir_free(&g);
}

TEST(convtranspose_groups_dilation_uneven)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 6, 7, 5}, wd[4] = {6, 2, 3, 2}, bd[1] = {6};
    int64_t st[2] = {1, 3}, pads[4] = {2, 1, 0, 2}, dil[2] = {2, 3}, op[2] = {0, 2};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "w", 4, wd, 0.5f);
    cst(&g, "b", 1, bd, 0.5f);
    convt_node(&g, "x,w,b", "y", st, pads, dil, op, 2, 3);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "convT g3 dil s1x3", 1e-4);
    ir_free(&g);
}

/* pads larger than (k-1)*d: the spread input is cropped before the conv;
 * a fused Relu follows into the Conv's epilogue. */
TEST(convtranspose_1x1_stride2_cropped_relu)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 5, 6, 7}, wd[4] = {5, 4, 1, 1};
    int64_t st[2] = {2, 2}, pads[4] = {1, 2, 1, 0};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "w", 4, wd, 0.5f);
    convt_node(&g, "x,w", "c", st, pads, NULL, NULL, 2, 1);
    ir_add_op(&g, "Relu", "relu", "c", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "convT 1x1 s2 crop+relu", 1e-4);
    ir_free(&g);
}

/* Output size from output_shape (2-D) and auto_pad SAME_LOWER (1-D). */
TEST(convtranspose_output_shape_and_same)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 3, 4, 5}, wd[4] = {3, 2, 3, 3}, st[2] = {2, 2}, os[2] = {10, 9};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "w", 4, wd, 0.5f);
    int n = convt_node(&g, "x,w", "y", st, NULL, NULL, NULL, 2, 1);
    ir_set_attr_ints(&g, n, "output_shape", os, 2, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "convT output_shape", 1e-4);
    ir_free(&g);

    int64_t x1[3] = {2, 4, 7}, w1[3] = {4, 3, 4}, b1[1] = {3}, s3[1] = {3};
    bkc_new_graph(&g, "x", 3, x1);
    cst(&g, "w", 3, w1, 0.5f);
    cst(&g, "b", 1, b1, 0.5f);
    n = convt_node(&g, "x,w,b", "y", s3, NULL, NULL, NULL, 1, 1);
    ir_set_attr_str(&g, n, "auto_pad", "SAME_LOWER", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "convT 1d same_lower", 1e-4);
    ir_free(&g);
}

/* Weights computed at run time: w = wc + mean(x) (over all axes, or the
 * spatial ones when per_channel; broadcast), so neither constant folding
 * nor the weight image applies. */
static void runtime_weights(IrGraph *g, const char *wc, const char *w, int per_channel)
{
    AtlErr e;
    char outs[64];
    int64_t hw[2] = {2, 3};
    snprintf(outs, sizeof outs, "%s_mean", w);
    int n = ir_add_op(g, "ReduceMean", outs, "x", outs, &e);
    ir_set_attr_int(g, n, "keepdims", 1, &e);
    if (per_channel) ir_set_attr_ints(g, n, "axes", hw, 2, &e);
    char ins[128];
    snprintf(ins, sizeof ins, "%s,%s", wc, outs);
    ir_add_op(g, "Add", w, ins, w, &e);
}

/* Run-time weights: ConvTranspose (groups, stride 2, bias; flipped by
 * Transpose + Gather ops) and Conv (OIHW gathered per tile; on edge16k
 * with K split). */
TEST(conv_and_convtranspose_runtime_weights)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 4, 5, 6}, wd[4] = {4, 3, 3, 2}, bd[1] = {6}, st[2] = {2, 2}, pads[4] = {1, 0, 1, 1};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "wc", 4, wd, 0.5f);
    cst(&g, "b", 1, bd, 0.5f);
    runtime_weights(&g, "wc", "w", 0);
    convt_node(&g, "x,w,b", "y", st, pads, NULL, NULL, 2, 2); /* [1,6,9,11] */
    ir_add_output(&g, "y", &e);
    run_graph(&g, "convT run-time w", 1e-4);
    ir_free(&g);

    int64_t cd[4] = {6, 2, 3, 3};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "wc", 4, cd, 0.5f);
    cst(&g, "b", 1, bd, 0.5f);
    runtime_weights(&g, "wc", "w", 0);
    int n = ir_add_op(&g, "Conv", "conv", "x,w,b", "c", &e);
    ir_set_attr_int(&g, n, "group", 2, &e);
    ir_set_attr_ints(&g, n, "pads", pads, 4, &e);
    ir_add_op(&g, "Relu", "relu", "c", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "conv run-time w", 1e-4);
    ir_free(&g);

    int64_t xk[4] = {1, 96, 6, 6}, wk[4] = {24, 96, 3, 3}, p1[4] = {1, 1, 1, 1};
    bkc_new_graph(&g, "x", 4, xk);
    cst(&g, "wc", 4, wk, 0.1f);
    runtime_weights(&g, "wc", "w", 1);
    n = ir_add_op(&g, "Conv", "conv", "x,w", "y", &e);
    ir_set_attr_ints(&g, n, "pads", p1, 4, &e);
    ir_add_output(&g, "y", &e);
    double err;
    char msg[1024] = "";
    BkSummary sum;
    memset(&sum, 0, sizeof sum);
    CHECKF(e2e_graph_sum(&g, "configs/edge16k.ini", ISA_F32, &err, NULL, &sum, msg, sizeof msg) == 0, "%s", msg);
    CHECKF(err <= 1e-4, "K split run-time weights: error %g", err);
    int ksplit = 0;
    for (int i = 0; i < sum.nlayers; i++) ksplit |= !strcmp(sum.layers[i].op, "Conv") && strstr(sum.layers[i].split, " K");
    CHECK(ksplit);
    bk_summary_free(&sum);
    ir_free(&g);
}

/* bk_compile of g for tiny.ini: nonzero when it failed (its message in
 * msg); 0 when it compiled or failed before the backend. */
static int compile_only(IrGraph *g, char *msg, size_t len)
{
    AtlErr e = {{0}};
    AtlChip chip;
    if (cfg_load("configs/tiny.ini", &chip, &e) || ir_toposort(g, &e) || ir_infer_shapes(g, &e) || pass_run_all(g, &e)) {
        snprintf(msg, len, "before the backend: %s", e.msg);
        return 0;
    }
    AbmWriter *w = abm_writer_new(cfg_fingerprint(&chip));
    int rc = !w || bk_compile(g, &chip, NULL, w, NULL, &e);
    snprintf(msg, len, "%s", e.msg);
    abm_writer_free(w);
    return rc;
}

/* The backend rewrites its own copy: the caller's graph keeps its
 * ConvTranspose. A run-time bias fails naming the node. */
TEST(convtranspose_caller_graph_and_errors)
{
    IrGraph g;
    AtlErr e = {{0}};
    int64_t xd[4] = {1, 2, 3, 3}, wd[4] = {2, 2, 2, 2}, st[2] = {2, 2};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "w", 4, wd, 0.5f);
    convt_node(&g, "x,w", "y", st, NULL, NULL, NULL, 2, 1);
    ir_add_output(&g, "y", &e);
    double err;
    char msg[1024] = "";
    CHECK(e2e_graph(&g, "configs/tiny.ini", ISA_F32, &err, NULL, msg, sizeof msg) == 0);
    CHECK(err <= 1e-4);
    int live = 0;
    for (int i = 0; i < g.nn; i++) live += !g.nodes[i].dead && !strcmp(g.nodes[i].op, "ConvTranspose");
    CHECK(live == 1);
    CHECK(ir_find(&g, "y#weights") < 0);
    ir_free(&g);

    int64_t bd[1] = {2};
    bkc_new_graph(&g, "x", 4, xd);
    cst(&g, "w", 4, wd, 0.5f);
    ir_add_input(&g, "brt", IR_F32, 1, bd, &e);
    convt_node(&g, "x,w,brt", "y", st, NULL, NULL, NULL, 2, 1);
    ir_add_output(&g, "y", &e);
    CHECK(compile_only(&g, msg, sizeof msg) != 0);
    CHECK_STR_CONTAINS(msg, "'convt'");
    CHECK_STR_CONTAINS(msg, "bias 'brt' is not a constant");
    ir_free(&g);
}

/* 3-D: the rewrite gives a 3-D Conv over the spread input, which
 * legalize/rewrite_3d.c splits into 2-D convs; constant and run-time weights */
TEST(convtranspose_3d)
{
    IrGraph g;
    AtlErr e;
    int64_t x5[5] = {1, 2, 3, 4, 3}, w5[5] = {2, 3, 2, 3, 2}, b1[1] = {3};
    int64_t st[3] = {2, 1, 2}, pads[6] = {0, 1, 1, 1, 0, 0}, op[3] = {1, 0, 0};
    bkc_new_graph(&g, "x", 5, x5);
    cst(&g, "w", 5, w5, 0.5f);
    cst(&g, "b", 1, b1, 0.5f);
    convt_node(&g, "x,w,b", "y", st, pads, NULL, op, 3, 1);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "convT 3-D s2x1x2 bias", 1e-4);
    ir_free(&g);

    int64_t wg[5] = {2, 1, 2, 2, 2};
    bkc_new_graph(&g, "x", 5, x5);
    cst(&g, "w", 5, wg, 0.5f);
    runtime_weights(&g, "w", "wr", 0);
    convt_node(&g, "x,wr", "y", st, NULL, NULL, NULL, 3, 2);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "convT 3-D g2 run-time w", 1e-4);
    ir_free(&g);
}

int main(void)
{
    RUN(conv_grouped_strided);
    RUN(conv_dilated_relu);
    RUN(conv_depthwise_clip);
    RUN(gemm_transposed);
    RUN(gemm_runtime_c);
    RUN(matmul_batched_and_activations);
    RUN(elementwise_broadcast);
    RUN(activations);
    RUN(softmax_and_reductions);
    RUN(reductions_with_pre_and_post_steps);
    RUN(log_softmax);
    RUN(activations_with_scratch);
    RUN(prelu_slopes);
    RUN(shrink_negative_lambd_names_node);
    RUN(reduce_prod_f16_names_node);
    RUN(reduce_noop_empty_axes);
    RUN(pools);
    RUN(data_movement);
    RUN(resize_nearest);
    RUN(clip_runtime_bounds);
    RUN(layernorm_opset17);
    RUN(layernorm_mean_invstddev);
    RUN(layernorm_runtime_scale_bias);
    RUN(batchnorm_unfused);
    RUN(conv_pool_1d);
    RUN(view_outputs_copied);
    RUN(dropout_with_mask);
    RUN(unsupported_op_names_node);
    RUN(convtranspose_stride2_output_padding_bias);
    RUN(convtranspose_groups_dilation_uneven);
    RUN(convtranspose_1x1_stride2_cropped_relu);
    RUN(convtranspose_output_shape_and_same);
    RUN(convtranspose_caller_graph_and_errors);
    RUN(convtranspose_3d);
    RUN(conv_and_convtranspose_runtime_weights);
    return test_summary("test_backend_ops");
}
