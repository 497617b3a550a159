/* bk_graph_run.h - the short names the backend op tests
 * (test_backend_ops.c, test_backend_lowerings.c) build their graphs with:
 * one shared pseudo-random generator state per test binary, constants,
 * and run_graph (compile for configs/tiny.ini and configs/a1.ini in f32,
 * run, compare with the interpreter, check the program structurally),
 * expect_not_lowered (the compile error names the node and reason), all
 * on top of test/compiler/bk_check.h. Header only: one test binary each. */
#ifndef ATOLL_TEST_BK_GRAPH_RUN_H
#define ATOLL_TEST_BK_GRAPH_RUN_H
#include "test/compiler/bk_check.h"

static const char *const chips[] = {"configs/tiny.ini", "configs/a1.ini"};

static uint32_t rng = 1;

static inline float frand(void) { return e2e_frand(&rng); }

static inline int cst(IrGraph *g, const char *name, int ndim, const int64_t *dims, float scale)
{
    return e2e_rand_const(g, name, ndim, dims, scale, &rng);
}

static inline int cst_i64(IrGraph *g, const char *name, int n, const int64_t *v)
{
    AtlErr e;
    int64_t d = n;
    return ir_add_const(g, name, IR_I64, 1, &d, v, &e);
}

static inline int cst_scalar(IrGraph *g, const char *name, float v)
{
    AtlErr e;
    return ir_add_const(g, name, IR_F32, 0, NULL, &v, &e);
}

static inline void new_graph(IrGraph *g, const char *in, int ndim, const int64_t *dims)
{
    bkc_new_graph(g, in, ndim, dims);
}

/* A ResNet-style bottleneck block for the staged-plan tests (its channels
 * and stride in BottleneckShape): x[8,C,H,H] -> ka x ka conv+Relu a
 * (ka 1 or 3, padded to keep the size) -> 1x1 conv+Relu b -> 3x3 conv (stride)+Relu c -> 1x1 conv e;
 * a -> 1x1 conv (stride) d, after b in node order as ResNet-50's
 * downsample after its conv1; e + d -> Relu y -> 1x1 conv -> out (out 0:
 * none, y the output). C, H and ka 0: 16, 32 and 3. Nodes ca, ra, cb, rb,
 * cd, cc, rc, ce, add, ry, co. */
typedef struct BottleneckShape { int a, b, c, e, out, stride, C, H, ka; } BottleneckShape;

static inline void stage_block_graph(IrGraph *g, BottleneckShape k)
{
    AtlErr e;
    int C = k.C ? k.C : 16, H = k.H ? k.H : 32, ka = k.ka ? k.ka : 3;
    int64_t xd[4] = {8, C, H, H}, wa[4] = {k.a, C, ka, ka}, wb[4] = {k.b, k.a, 1, 1}, wd[4] = {k.e, k.a, 1, 1},
            wc[4] = {k.c, k.b, 3, 3}, we[4] = {k.e, k.c, 1, 1}, wo[4] = {k.out, k.e, 1, 1};
    int64_t pads[4] = {1, 1, 1, 1}, st[2] = {k.stride, k.stride};
    new_graph(g, "x", 4, xd);
    cst(g, "wa", 4, wa, 0.1f);
    cst(g, "wb", 4, wb, 0.1f);
    cst(g, "wd", 4, wd, 0.1f);
    cst(g, "wc", 4, wc, 0.05f);
    cst(g, "we", 4, we, 0.05f);
    if (k.out) cst(g, "wo", 4, wo, 0.1f);
    int ca = ir_add_op(g, "Conv", "ca", "x,wa", "a0", &e);
    if (ka > 1) ir_set_attr_ints(g, ca, "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "ra", "a0", "a", &e);
    ir_add_op(g, "Conv", "cb", "a,wb", "b0", &e);
    ir_add_op(g, "Relu", "rb", "b0", "b", &e);
    int cd = ir_add_op(g, "Conv", "cd", "a,wd", "d", &e);
    int cc = ir_add_op(g, "Conv", "cc", "b,wc", "c0", &e);
    ir_set_attr_ints(g, cc, "pads", pads, 4, &e);
    if (k.stride != 1) {
        ir_set_attr_ints(g, cd, "strides", st, 2, &e);
        ir_set_attr_ints(g, cc, "strides", st, 2, &e);
    }
    ir_add_op(g, "Relu", "rc", "c0", "c", &e);
    ir_add_op(g, "Conv", "ce", "c,we", "e", &e);
    ir_add_op(g, "Add", "add", "e,d", "s", &e);
    ir_add_op(g, "Relu", "ry", "s", "y", &e);
    if (k.out) ir_add_op(g, "Conv", "co", "y,wo", "out", &e);
    ir_add_output(g, k.out ? "out" : "y", &e);
}

/* g must fail to compile for configs/tiny.ini in dtype with a message
 * containing both strings (the node's name, the reason). */
static inline void expect_not_lowered_in(IrGraph *g, int dtype, const char *has1, const char *has2)
{
    double err;
    char msg[1024] = "";
    CHECK(e2e_graph(g, "configs/tiny.ini", dtype, &err, NULL, msg, sizeof msg) != 0);
    CHECK_STR_CONTAINS(msg, has1);
    CHECK_STR_CONTAINS(msg, has2);
}

static inline void expect_not_lowered(IrGraph *g, const char *has1, const char *has2)
{
    expect_not_lowered_in(g, ISA_F32, has1, has2);
}

static inline void run_graph(IrGraph *g, const char *what, double tol)
{
    for (int c = 0; c < 2; c++) bkc_run_checked(g, chips[c], ISA_F32, what, tol, NULL);
}
/* x [1, C, H, W] -> Conv k x k (pad k/2) with M outputs, weights drawn
 * at scale ws -> Relu -> y: the one-layer graph of the SRAM staging tests
 * (test_backend_sram.c, test_backend_wsram.c; ws 0.05) and of
 * test_backend_weightbound.c. */
static inline void conv_relu_graph_ws(IrGraph *g, int C, int H, int W, int M, int k, float ws)
{
    AtlErr e;
    int64_t xd[4] = {1, C, H, W}, wd[4] = {M, C, k, k}, bd[1] = {M}, pads[4] = {k / 2, k / 2, k / 2, k / 2};
    new_graph(g, "x", 4, xd);
    cst(g, "w", 4, wd, ws);
    cst(g, "b", 1, bd, 0.2f);
    int n = ir_add_op(g, "Conv", "conv", "x,w,b", "c", &e);
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "relu", "c", "y", &e);
    ir_add_output(g, "y", &e);
}

static inline void conv_relu_graph(IrGraph *g, int C, int H, int W, int M, int k)
{
    conv_relu_graph_ws(g, C, H, W, M, k, 0.05f);
}

/* Runs the one-layer graph g on chip with options o, its program into *p
 * and its summary into *sum (zeroed here; the caller frees both, and g);
 * prints the layer's split, the error against the interpreter and the
 * layer's DRAM bytes read, and checks the error is within tol and the
 * split contains want. 0 when it compiled and ran. */
static inline int run_one_layer(IrGraph *g, const char *chip, const BkOptions *o, double tol, const char *want,
                                AtlProgram *p, BkSummary *sum)
{
    double err = -1;
    char msg[1024] = "";
    memset(sum, 0, sizeof *sum);
    memset(p, 0, sizeof *p);
    int rc = e2e_graph_run(g, chip, o, &err, p, sum, msg, sizeof msg);
    CHECKF(rc == 0, "%s", msg);
    if (rc) return -1;
    printf("  split %s, err %.3g, DRAM read %llu bytes\n", sum->layers[0].split, err, (unsigned long long)sum->layers[0].dram_rd);
    CHECKF(err <= tol, "error %g", err);
    CHECKF(sum->nlayers == 1 && strstr(sum->layers[0].split, want), "split '%s' lacks '%s'", sum->layers[0].split, want);
    return 0;
}

/* g compiled for chip with options o and run in full mode against the
 * interpreter (what names the run in failures): 0 when it compiles, runs
 * and stays within tol of the interpreter's answers (a failed check
 * otherwise), with the summary in *sum (zeroed here) and, unless y is
 * NULL, the first output's bytes in *y and *ylen (the caller frees both,
 * and g). The run of a graph on one chip variant in test_chain_ost.c,
 * test_conv_image_k.c, test_stage_chip_sub.c and stage_split_run. */
static inline int graph_run_within(IrGraph *g, const char *chip, const BkOptions *o, double tol, const char *what,
                                   BkSummary *sum, uint8_t **y, size_t *ylen)
{
    memset(sum, 0, sizeof *sum);
    double err = -1;
    char msg[1024] = "";
    int rc = e2e_graph_run_y(g, chip, o, &err, NULL, sum, msg, sizeof msg, y, ylen);
    CHECKF(rc == 0, "%s: %s", what, msg);
    if (rc == 0) CHECKF(err <= tol, "%s: error %g", what, err);
    return rc;
}

/* g split into two stages at its output y ("1,y:2": stage 0 one image an
 * instance, stage 1 two) on chip with o's other options, run in full mode
 * against the interpreter (what names the run in failures): 0 with the
 * summary in *sum (the caller frees it) when it compiles, runs and stays
 * within 2e-6 of the interpreter's answers (a failed check otherwise);
 * stage_split_run_y also the first output's bytes (as graph_run_within).
 * The stage tests' run of a block with a pass on and off
 * (test_stage_sink.c, test_stage_overlay.c). */
static inline int stage_split_run_y(IrGraph *g, const char *chip, BkOptions *o, const char *what, BkSummary *sum,
                                    uint8_t **y, size_t *ylen)
{
    o->placement = BK_PLACE_SPLIT;
    o->stage_plan = "1,y:2";
    return graph_run_within(g, chip, o, 2e-6, what, sum, y, ylen);
}

static inline int stage_split_run(IrGraph *g, const char *chip, BkOptions *o, const char *what, BkSummary *sum)
{
    return stage_split_run_y(g, chip, o, what, sum, NULL, NULL);
}

#endif
