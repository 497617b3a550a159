/* test_backend_floatops.c - float ops lowered as compositions on the chip:
 * Tile / DepthToSpace / SpaceToDepth copies (lower/layout.c), variadic
 * Sum / Mean / Max / Min (lower/vec.c, chains: legalize/rewrite_ops.c),
 * InstanceNormalization, LRN and run-time BatchNormalization
 * (legalize/rewrite_ops.c), 3-D Conv / MaxPool / AveragePool and dilated
 * MaxPool (legalize/rewrite_3d.c), CumSum (a triangular matmul,
 * legalize/rewrite_ops.c). Graphs built in code, compiled for
 * configs/tiny.ini and configs/a1.ini, simulated and compared with the
 * reference interpreter (data movement exactly), plus the structural
 * checks of bk_graph_run.h. Run-time parameters are computed from the one
 * graph input (e.g. a per-channel mean), so they are not constants. */
#include <stdio.h>
#include <stdlib.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"

/* ---- Tile, DepthToSpace, SpaceToDepth ---- */

static void tile_run(const char *what, int r, const int64_t *xd, const int64_t *reps)
{
    IrGraph g;
    AtlErr e;
    new_graph(&g, "x", r, xd);
    cst_i64(&g, "reps", r, reps);
    ir_add_op(&g, "Tile", "tile", "x,reps", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 0);
    ir_free(&g);
}

TEST(tile)
{
    int64_t x2[2] = {3, 5}, r2[2] = {2, 3};
    tile_run("tile 3x5 by 2x3", 2, x2, r2);
    int64_t x3[3] = {2, 1, 7}, r3[3] = {1, 4, 1};
    tile_run("tile unit axis", 3, x3, r3);
    int64_t x4[4] = {1, 3, 2, 5}, r4[4] = {2, 1, 3, 2};
    tile_run("tile rank 4", 4, x4, r4);
    int64_t x5[5] = {2, 2, 3, 1, 2}, r5[5] = {2, 3, 2, 2, 3};
    tile_run("tile rank 5, 10 dims", 5, x5, r5);
}

static void depth_space_run(const char *what, const char *op, const int64_t *xd, int64_t b, const char *mode)
{
    IrGraph g;
    AtlErr e;
    new_graph(&g, "x", 4, xd);
    int n = ir_add_op(&g, op, "ds", "x", "y", &e);
    ir_set_attr_int(&g, n, "blocksize", b, &e);
    if (mode) ir_set_attr_str(&g, n, "mode", mode, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 0);
    ir_free(&g);
}

TEST(depth_to_space_and_back)
{
    int64_t x[4] = {2, 8, 3, 5}, x9[4] = {1, 18, 2, 3};
    depth_space_run("d2s DCR b2", "DepthToSpace", x, 2, NULL);
    depth_space_run("d2s CRD b2", "DepthToSpace", x, 2, "CRD");
    depth_space_run("d2s DCR b3", "DepthToSpace", x9, 3, "DCR");
    depth_space_run("d2s CRD b3", "DepthToSpace", x9, 3, "CRD");
    int64_t s[4] = {2, 3, 6, 4}, s3[4] = {1, 2, 9, 6};
    depth_space_run("s2d b2", "SpaceToDepth", s, 2, NULL);
    depth_space_run("s2d b3", "SpaceToDepth", s3, 3, NULL);
}

/* ---- variadic Sum / Mean / Max / Min with broadcast ---- */

/* op over n operands derived from x [2,3,4,5]: x, unary ops of x, and
 * constants broadcast along different axes. */
static void variadic_run(const char *what, const char *op, int n)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 3, 4, 5}, c1[3] = {3, 1, 5}, c2[1] = {5}, c3[4] = {2, 1, 4, 1};
    new_graph(&g, "x", 4, xd);
    static const char *const srcs[] = {"x", "rx", "c1", "sx", "c2", "tx", "c3", "ax"};
    ir_add_op(&g, "Relu", "r", "x", "rx", &e);
    ir_add_op(&g, "Sigmoid", "s", "x", "sx", &e);
    ir_add_op(&g, "Tanh", "t", "x", "tx", &e);
    ir_add_op(&g, "Abs", "a", "x", "ax", &e);
    cst(&g, "c1", 3, c1, 1.0f);
    cst(&g, "c2", 1, c2, 1.0f);
    cst(&g, "c3", 4, c3, 1.0f);
    char ins[128] = "";
    for (int i = 0; i < n; i++) {
        strcat(ins, i ? "," : "");
        strcat(ins, srcs[i % 8]);
    }
    ir_add_op(&g, op, "v", ins, "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 1e-5);
    ir_free(&g);
}

TEST(variadic_elementwise)
{
    variadic_run("sum of 1", "Sum", 1);
    variadic_run("sum of 3", "Sum", 3);
    variadic_run("sum of 9 (chain)", "Sum", 9);
    variadic_run("mean of 1", "Mean", 1);
    variadic_run("mean of 2", "Mean", 2);
    variadic_run("mean of 4", "Mean", 4);
    variadic_run("mean of 7 (chain)", "Mean", 7);
    variadic_run("max of 3", "Max", 3);
    variadic_run("max of 6 (chain)", "Max", 6);
    variadic_run("min of 5 (chain)", "Min", 5);
}

/* ---- normalisations ---- */

/* [C] run-time values from x [N, C, ...]: the per-channel mean. */
static void channel_stat(IrGraph *g, int r, const char *src, const char *out)
{
    AtlErr e;
    int64_t axes[IR_MAXDIM], zero = 0;
    int na = 0;
    for (int d = 2; d < r; d++) axes[na++] = d;
    char mid[32];
    snprintf(mid, sizeof mid, "%s_nc", out);
    /* spatial axes, then the batch axis: each reduction over adjacent axes */
    int n = ir_add_op(g, "ReduceMean", mid, src, na ? mid : out, &e);
    ir_set_attr_ints(g, n, "axes", na ? axes : &zero, na ? na : 1, &e);
    ir_set_attr_int(g, n, "keepdims", 0, &e);
    if (!na) return;
    n = ir_add_op(g, "ReduceMean", out, mid, out, &e);
    ir_set_attr_ints(g, n, "axes", &zero, 1, &e);
    ir_set_attr_int(g, n, "keepdims", 0, &e);
}

static void instnorm_run(const char *what, int r, const int64_t *xd, int runtime_scale, float eps)
{
    IrGraph g;
    AtlErr e;
    int64_t C = xd[1];
    new_graph(&g, "x", r, xd);
    if (runtime_scale) channel_stat(&g, r, "x", "s");
    else cst(&g, "s", 1, &C, 1.0f);
    cst(&g, "b", 1, &C, 1.0f);
    int n = ir_add_op(&g, "InstanceNormalization", "in", "x,s,b", "y", &e);
    ir_set_attr_float(&g, n, "epsilon", eps, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 1e-4);
    ir_free(&g);
}

TEST(instance_normalization)
{
    int64_t x4[4] = {2, 3, 5, 7}, x3[3] = {3, 4, 9}, x5[5] = {1, 2, 3, 4, 5};
    instnorm_run("instnorm 4-D", 4, x4, 0, 1e-5f);
    instnorm_run("instnorm 3-D eps 0.1", 3, x3, 0, 0.1f);
    instnorm_run("instnorm run-time scale", 4, x4, 1, 1e-5f);
    instnorm_run("instnorm 5-D", 5, x5, 0, 1e-3f);
}

static void lrn_run(const char *what, int r, const int64_t *xd, int64_t size, float alpha, float beta, float bias)
{
    IrGraph g;
    AtlErr e;
    new_graph(&g, "x", r, xd);
    int n = ir_add_op(&g, "LRN", "lrn", "x", "y", &e);
    ir_set_attr_int(&g, n, "size", size, &e);
    ir_set_attr_float(&g, n, "alpha", alpha, &e);
    ir_set_attr_float(&g, n, "beta", beta, &e);
    ir_set_attr_float(&g, n, "bias", bias, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 1e-4);
    ir_free(&g);
}

TEST(lrn)
{
    int64_t x4[4] = {2, 7, 3, 5}, x3[3] = {1, 6, 11};
    lrn_run("lrn size 3", 4, x4, 3, 1e-4f, 0.75f, 1.0f);
    lrn_run("lrn size 4 (even)", 4, x4, 4, 0.5f, 0.6f, 2.0f);
    lrn_run("lrn size 5 > rank-3 C/2", 3, x3, 5, 2.0f, 1.3f, 0.5f);
    lrn_run("lrn size 1", 4, x4, 1, 1.0f, 0.5f, 1.0f);
}

static void batchnorm_run(const char *what, int r, const int64_t *xd, int all_runtime)
{
    IrGraph g;
    AtlErr e;
    int64_t C = xd[1];
    new_graph(&g, "x", r, xd);
    channel_stat(&g, r, "x", "m");
    ir_add_op(&g, "Sigmoid", "vs", "m", "v", &e);   /* a positive variance */
    if (all_runtime) {
        ir_add_op(&g, "Tanh", "st", "m", "s", &e);
        ir_add_op(&g, "Neg", "bn", "m", "b", &e);
    } else {
        cst(&g, "s", 1, &C, 1.0f);
        cst(&g, "b", 1, &C, 1.0f);
    }
    int n = ir_add_op(&g, "BatchNormalization", "bn", "x,s,b,m,v", "y", &e);
    ir_set_attr_float(&g, n, "epsilon", 1e-3f, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 1e-4);
    ir_free(&g);
}

TEST(batchnorm_runtime_parameters)
{
    int64_t x4[4] = {2, 3, 4, 5}, x2[2] = {6, 5};
    batchnorm_run("bn run-time mean/var", 4, x4, 0);
    batchnorm_run("bn all run-time", 4, x4, 1);
    batchnorm_run("bn rank 2", 2, x2, 1);
}

/* ---- 3-D conv and pools, dilated MaxPool ---- */

static void set_ints(IrGraph *g, int n, const char *name, const int64_t *v, int cnt)
{
    AtlErr e;
    if (v) ir_set_attr_ints(g, n, name, v, cnt, &e);
}

static void conv3d_run(const char *what, const int64_t *xd, int64_t M, int64_t G, const int64_t *k, const int64_t *s,
                       const int64_t *d, const int64_t *pads, const char *auto_pad, int bias)
{
    IrGraph g;
    AtlErr e;
    int64_t wd[5] = {M, xd[1] / G, k[0], k[1], k[2]};
    new_graph(&g, "x", 5, xd);
    cst(&g, "w", 5, wd, 0.5f);
    if (bias) cst(&g, "b", 1, &M, 1.0f);
    int n = ir_add_op(&g, "Conv", "conv", bias ? "x,w,b" : "x,w", "y", &e);
    ir_set_attr_int(&g, n, "group", G, &e);
    set_ints(&g, n, "strides", s, 3);
    set_ints(&g, n, "dilations", d, 3);
    set_ints(&g, n, "pads", pads, 6);
    if (auto_pad) ir_set_attr_str(&g, n, "auto_pad", auto_pad, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 1e-4);
    ir_free(&g);
}

TEST(conv3d)
{
    int64_t x[5] = {1, 3, 5, 6, 7}, k3[3] = {3, 3, 3}, k2[3] = {2, 3, 1};
    int64_t s2[3] = {2, 1, 2}, d2[3] = {2, 1, 2}, p[6] = {1, 0, 1, 2, 1, 0};
    conv3d_run("conv3d plain", x, 4, 1, k3, NULL, NULL, NULL, NULL, 1);
    conv3d_run("conv3d no bias", x, 2, 1, k2, NULL, NULL, NULL, NULL, 0);
    conv3d_run("conv3d stride+pads", x, 4, 1, k3, s2, NULL, p, NULL, 1);
    conv3d_run("conv3d dilated", x, 2, 1, k2, NULL, d2, p, NULL, 1);
    int64_t xg[5] = {2, 4, 4, 5, 5};
    conv3d_run("conv3d groups 2", xg, 6, 2, k2, s2, NULL, p, NULL, 1);
    conv3d_run("conv3d SAME_LOWER", x, 3, 1, k2, s2, NULL, NULL, "SAME_LOWER", 1);
}

TEST(conv3d_runtime_weights)
{
    /* w = sigmoid(x) read as [M=1][C=2][3][3][3]: a run-time weight */
    IrGraph g;
    AtlErr e;
    int64_t x[5] = {1, 2, 3, 3, 3}, p[6] = {1, 1, 1, 1, 1, 1};
    new_graph(&g, "x", 5, x);
    ir_add_op(&g, "Sigmoid", "wsig", "x", "w", &e);
    int n = ir_add_op(&g, "Conv", "conv", "x,w", "y", &e);
    set_ints(&g, n, "pads", p, 6);
    ir_add_output(&g, "y", &e);
    run_graph(&g, "conv3d run-time w", 1e-4);
    ir_free(&g);
}

static void pool_run(const char *what, const char *op, int r, const int64_t *xd, const int64_t *k, const int64_t *s,
                     const int64_t *d, const int64_t *pads, int ceil, int cip, const char *auto_pad)
{
    IrGraph g;
    AtlErr e;
    int ns = r - 2;
    new_graph(&g, "x", r, xd);
    int n = ir_add_op(&g, op, "pool", "x", "y", &e);
    set_ints(&g, n, "kernel_shape", k, ns);
    set_ints(&g, n, "strides", s, ns);
    set_ints(&g, n, "dilations", d, ns);
    set_ints(&g, n, "pads", pads, 2 * ns);
    if (ceil) ir_set_attr_int(&g, n, "ceil_mode", 1, &e);
    if (cip) ir_set_attr_int(&g, n, "count_include_pad", 1, &e);
    if (auto_pad) ir_set_attr_str(&g, n, "auto_pad", auto_pad, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 1e-5);
    ir_free(&g);
}

TEST(pool3d)
{
    int64_t x[5] = {2, 3, 6, 5, 7}, k[3] = {3, 2, 3}, s[3] = {2, 1, 2}, p[6] = {1, 0, 1, 1, 1, 0}, big[6] = {1, 1, 1, 1, 1, 1};
    pool_run("maxpool3d", "MaxPool", 5, x, k, NULL, NULL, NULL, 0, 0, NULL);
    pool_run("maxpool3d stride pads", "MaxPool", 5, x, k, s, NULL, p, 0, 0, NULL);
    pool_run("maxpool3d ceil", "MaxPool", 5, x, k, s, NULL, p, 1, 0, NULL);
    int64_t d[3] = {2, 1, 2};
    pool_run("maxpool3d dilated", "MaxPool", 5, x, k, NULL, d, big, 0, 0, NULL);
    pool_run("avgpool3d", "AveragePool", 5, x, k, NULL, NULL, NULL, 0, 0, NULL);
    pool_run("avgpool3d pads excl", "AveragePool", 5, x, k, s, NULL, p, 0, 0, NULL);
    pool_run("avgpool3d pads incl", "AveragePool", 5, x, k, s, NULL, big, 0, 1, NULL);
    pool_run("avgpool3d ceil excl", "AveragePool", 5, x, k, s, NULL, p, 1, 0, NULL);
    /* ceil_mode windows past the end padding along depth only */
    int64_t x7[5] = {2, 3, 7, 5, 7}, p7[6] = {1, 1, 0, 0, 1, 0};
    pool_run("avgpool3d ceil D incl", "AveragePool", 5, x7, k, s, NULL, p7, 1, 1, NULL);
    pool_run("avgpool3d ceil D excl", "AveragePool", 5, x7, k, s, NULL, p7, 1, 0, NULL);
    pool_run("avgpool3d SAME_UPPER", "AveragePool", 5, x, k, s, NULL, NULL, 0, 0, "SAME_UPPER");
}

TEST(maxpool_dilated)
{
    int64_t x[4] = {2, 3, 11, 13}, k[2] = {3, 2}, d[2] = {2, 3}, s[2] = {2, 3}, p[4] = {1, 2, 2, 1};
    pool_run("maxpool 2-D dil 2x3", "MaxPool", 4, x, k, NULL, d, NULL, 0, 0, NULL);
    pool_run("maxpool dil=stride pads", "MaxPool", 4, x, k, s, d, p, 0, 0, NULL);
    pool_run("maxpool dil ceil", "MaxPool", 4, x, k, s, d, p, 1, 0, NULL);
    int64_t k5[2] = {5, 4}, s1[2] = {1, 2};
    pool_run("maxpool kernel 5x4 dil", "MaxPool", 4, x, k5, s1, d, NULL, 0, 0, NULL);
    int64_t x1[3] = {1, 2, 40}, k1[1] = {7}, d1[1] = {3}, s3[1] = {2}, p1[2] = {3, 4};
    pool_run("maxpool 1-D dil 3", "MaxPool", 3, x1, k1, s3, d1, p1, 0, 0, NULL);
    pool_run("maxpool 1-D SAME_UPPER", "MaxPool", 3, x1, k1, s3, d1, NULL, 0, 0, "SAME_UPPER");
}

/* count_include_pad=1 with ceil_mode windows past the end padding: ONNX
 * divides by the window's part inside the padded input, which the chip
 * gets by padding explicitly and pooling with count_include_pad=0 */
static void avgpool_ceil_run(const char *what, int r, const int64_t *xd, const int64_t *k, const int64_t *s,
                             const int64_t *pads)
{
    IrGraph g;
    AtlErr e;
    new_graph(&g, "x", r, xd);
    int n = ir_add_op(&g, "AveragePool", "avg", "x", "y", &e);
    set_ints(&g, n, "kernel_shape", k, r - 2);
    set_ints(&g, n, "strides", s, r - 2);
    set_ints(&g, n, "pads", pads, 2 * (r - 2));
    ir_set_attr_int(&g, n, "ceil_mode", 1, &e);
    ir_set_attr_int(&g, n, "count_include_pad", 1, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 1e-5);
    ir_free(&g);
}

TEST(avgpool_ceil_include_pad)
{
    int64_t x4[4] = {1, 3, 6, 7}, k2[2] = {3, 2}, s2[2] = {2, 2}, p2[4] = {1, 1, 1, 0}, p0[4] = {0, 0, 0, 0};
    avgpool_ceil_run("2-D, pads, ceil windows past the end", 4, x4, k2, s2, p2);
    avgpool_ceil_run("2-D, no pads, ceil windows past the end", 4, x4, k2, s2, p0);
    int64_t x3[3] = {2, 3, 10}, k1[1] = {4}, s1[1] = {3}, p1[2] = {2, 1};
    avgpool_ceil_run("1-D, pads, ceil", 3, x3, k1, s1, p1);
    int64_t x5[5] = {1, 2, 4, 5, 7}, k3[3] = {2, 2, 3}, s3[3] = {1, 2, 2}, p3[6] = {0, 1, 0, 1, 0, 1};
    avgpool_ceil_run("3-D, pads, ceil", 5, x5, k3, s3, p3);
    int64_t p30[6] = {0, 0, 0, 0, 0, 0};
    avgpool_ceil_run("3-D, no pads, ceil", 5, x5, k3, s3, p30);
}

/* ---- CumSum ---- */

static void cumsum_run(const char *what, int r, const int64_t *xd, int64_t axis, int excl, int rev)
{
    IrGraph g;
    AtlErr e;
    new_graph(&g, "x", r, xd);
    ir_add_const(&g, "axis", IR_I64, 0, NULL, &axis, &e);
    int n = ir_add_op(&g, "CumSum", "cs", "x,axis", "y", &e);
    if (excl) ir_set_attr_int(&g, n, "exclusive", 1, &e);
    if (rev) ir_set_attr_int(&g, n, "reverse", 1, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 1e-5);
    ir_free(&g);
}

TEST(cumsum)
{
    int64_t x1[1] = {13}, x3[3] = {3, 7, 5};
    for (int m = 0; m < 4; m++) {
        char what[48];
        snprintf(what, sizeof what, "cumsum 1-D ex%d rev%d", m & 1, m >> 1);
        cumsum_run(what, 1, x1, 0, m & 1, m >> 1);
        snprintf(what, sizeof what, "cumsum last ex%d rev%d", m & 1, m >> 1);
        cumsum_run(what, 3, x3, -1, m & 1, m >> 1);
        snprintf(what, sizeof what, "cumsum middle ex%d rev%d", m & 1, m >> 1);
        cumsum_run(what, 3, x3, 1, m & 1, m >> 1);
        snprintf(what, sizeof what, "cumsum first ex%d rev%d", m & 1, m >> 1);
        cumsum_run(what, 3, x3, 0, m & 1, m >> 1);
    }
}

int main(void)
{
    RUN(tile);
    RUN(depth_to_space_and_back);
    RUN(variadic_elementwise);
    RUN(instance_normalization);
    RUN(lrn);
    RUN(batchnorm_runtime_parameters);
    RUN(conv3d);
    RUN(conv3d_runtime_weights);
    RUN(pool3d);
    RUN(maxpool_dilated);
    RUN(avgpool_ceil_include_pad);
    RUN(cumsum);
    return test_summary("test_backend_floatops");
}
