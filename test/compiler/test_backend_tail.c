/* test_backend_tail.c - residual Adds absorbed into the convolution that
 * produces one of their operands (legalize/pattern.c, lower/conv.c).
 *
 * Checked on configs/tiny.ini and configs/a1.ini against the interpreter:
 * the fused layer's results (f32 exactly as the unfused pair computes
 * them; bf16 within its rounding), with the Add's Relu, a residual that is
 * a graph input or another convolution's output, a convolution split
 * along K (tiny's 64 KiB of LMEM) and one whose weights are multicast
 * (a1), each checked to have been split so. And when it must not fuse: the residual produced after the
 * convolution, the convolution's output read by something else or being
 * a graph output, a broadcast operand. The per-layer summary says which
 * layers exist (a fused Add is no layer of its own: "Conv+Add+Relu").
 * Groups of several layers are kept off (BkOptions.group_max = 1), so the
 * tails run in the convolution's own tiles, which is what is tested.
 * With placement split a tail whose residual dies at it writes its result
 * over the residual in place (alloc/place.c): a bottleneck-like block
 * checked exact against the interpreter and placement chip (bit for bit),
 * race-free in the simulator's full mode, and its SRAM peak two tensors
 * instead of three. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"

/* Compiles and runs g on chip in dtype; checks the error against the
 * interpreter and that the summary's ops, joined by spaces, equal `ops`. */
static void run_expect_split(IrGraph *g, const char *chip, int dtype, double tol, const char *ops, const char *what,
                             const char *split_has)
{
    IrGraph copy;
    PbBuf pb = {0};
    AtlErr e;
    REQUIRE(onnx_save_buffer(g, &pb, &e) == 0);
    REQUIRE(onnx_load_buffer(pb.p, pb.n, what, &copy, &e) == 0);
    pb_free(&pb);
    double err;
    char msg[1024] = "", got[512] = "";
    BkSummary sum;
    memset(&sum, 0, sizeof sum);
    int rc = e2e_graph_sum_opt(&copy, chip, dtype, 1, &err, NULL, &sum, msg, sizeof msg);
    size_t k = 0;
    for (int i = 0; rc == 0 && i < sum.nlayers && k < sizeof got - 40; i++)
        k += (size_t)snprintf(got + k, sizeof got - k, "%s%s", i ? " " : "", sum.layers[i].op);
    printf("  %-26s %-18s %-4s err %.3g  %s%s\n", what, chip, isa_dtype_name(dtype), rc ? -1.0 : err, got, msg);
    CHECKF(rc == 0, "%s on %s: %s", what, chip, msg);
    if (rc == 0) {
        CHECKF(err <= tol, "%s on %s %s: error %g > %g", what, chip, isa_dtype_name(dtype), err, tol);
        CHECKF(!strcmp(got, ops), "%s: layers '%s', expected '%s'", what, got, ops);
        if (split_has) {
            const char *split = sum.layers[sum.nlayers - 1].split;
            CHECKF(strstr(split, split_has) != NULL, "%s on %s: last layer split '%s' lacks '%s'", what, chip, split, split_has);
        }
    }
    bk_summary_free(&sum);
    ir_free(&copy);
}

static void run_expect(IrGraph *g, const char *chip, int dtype, double tol, const char *ops, const char *what)
{
    run_expect_split(g, chip, dtype, tol, ops, what, NULL);
}

/* f32 within tol (sums of many products round differently from the
 * interpreter's order), bf16 within 3e-2. */
static void run_all_tol(IrGraph *g, const char *ops, const char *what, double tol)
{
    for (int c = 0; c < 2; c++) {
        run_expect(g, chips[c], ISA_F32, tol, ops, what);
        run_expect(g, chips[c], ISA_BF16, 3e-2, ops, what);
    }
}

static void run_all(IrGraph *g, const char *ops, const char *what) { run_all_tol(g, ops, what, 2e-6); }

/* A 3x3 conv (pad 1) of x with C in and M out channels into `out`,
 * weights uniform in +-scale. */
static int conv3s(IrGraph *g, const char *name, const char *x, int C, int M, const char *out, float scale)
{
    AtlErr e;
    char w[64], b[64], ins[160];
    int64_t wd[4] = {M, C, 3, 3}, bd[1] = {M}, pads[4] = {1, 1, 1, 1};
    snprintf(w, sizeof w, "%s_w", name);
    snprintf(b, sizeof b, "%s_b", name);
    cst(g, w, 4, wd, scale);
    cst(g, b, 1, bd, 0.2f);
    snprintf(ins, sizeof ins, "%s,%s,%s", x, w, b);
    int n = ir_add_op(g, "Conv", name, ins, out, &e);
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    return n;
}

static int conv3(IrGraph *g, const char *name, const char *x, int C, int M, const char *out)
{
    return conv3s(g, name, x, C, M, out, 0.3f);
}

TEST(add_relu_of_an_input_fuses)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 8, 10, 12};
    new_graph(&g, "x", 4, xd);
    conv3(&g, "c", "x", 8, 8, "a");
    ir_add_op(&g, "Add", "add", "a,x", "s", &e);
    ir_add_op(&g, "Relu", "relu", "s", "y", &e);
    ir_add_output(&g, "y", &e);
    run_all(&g, "Conv+Add+Relu", "add_relu_input");
    ir_free(&g);
}

TEST(the_later_of_two_convs_takes_the_add)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 6, 9, 7};
    new_graph(&g, "x", 4, xd);
    conv3(&g, "c1", "x", 6, 16, "a");
    conv3(&g, "c2", "x", 6, 16, "b");
    ir_add_op(&g, "Add", "add", "a,b", "y", &e);
    ir_add_output(&g, "y", &e);
    run_all(&g, "Conv Conv+Add", "two_convs");
    ir_free(&g);
}

/* 384 input channels of 3x3: even one output row of one channel does not
 * fit tiny's 32 KiB slot, so both convs split along K there (the tail runs
 * on the last chunk). */
TEST(split_conv_keeps_its_tail)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 384, 6, 6};
    new_graph(&g, "x", 4, xd);
    conv3s(&g, "c1", "x", 384, 16, "a", 0.05f);
    conv3s(&g, "c2", "x", 384, 16, "b", 0.05f);
    ir_add_op(&g, "Add", "add", "b,a", "s", &e);
    ir_add_op(&g, "Relu", "relu", "s", "y", &e);
    ir_add_output(&g, "y", &e);
    run_all_tol(&g, "Conv Conv+Add+Relu", "ksplit_tail", 2e-5);
    run_expect_split(&g, "configs/tiny.ini", ISA_F32, 2e-5, "Conv Conv+Add+Relu", "ksplit_tail", " K");
    ir_free(&g);
}

/* A resnet20-sized conv: on a1 its weights are multicast (resident in
 * LMEM below the slots), the tail's residual is loaded per tile. */
TEST(multicast_conv_keeps_its_tail)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 16, 32, 32};
    new_graph(&g, "x", 4, xd);
    conv3(&g, "c", "x", 16, 16, "a");
    ir_add_op(&g, "Add", "add", "x,a", "s", &e);
    ir_add_op(&g, "Relu", "relu", "s", "y", &e);
    ir_add_output(&g, "y", &e);
    run_all(&g, "Conv+Add+Relu", "mcast_tail");
    run_expect_split(&g, "configs/a1.ini", ISA_F32, 2e-6, "Conv+Add+Relu", "mcast_tail", " mc");
    ir_free(&g);
}

/* A 1x1 conv of x, C -> M channels, no bias, into `out`. */
static void conv1x1(IrGraph *g, const char *name, const char *x, int C, int M, const char *out)
{
    AtlErr e;
    char w[64], ins[160];
    int64_t wd[4] = {M, C, 1, 1};
    snprintf(w, sizeof w, "%s_w", name);
    snprintf(ins, sizeof ins, "%s,%s", x, w);
    cst(g, w, 4, wd, 0.3f);
    ir_add_op(g, "Conv", name, ins, out, &e);
}

/* x -> 3x3 conv+Relu -> t -> 1x1 conv+Relu -> u -> 1x1 conv (+ t) + Relu
 * -> y -> 1x1 conv -> out, batch 2: t dies at the tail, so with placement
 * split y is written over t when the SRAM is short. Every activation is
 * 8 x 256 x 192 f32 (1.5 MiB): a1's 4 MiB of SRAM holds two, not three.
 * With the pair it holds t and u, then y (over t) and u, then y: no
 * tensor in DRAM; without it one of them goes to DRAM. */
TEST(split_tail_overwrites_its_dying_residual)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 1, 256, 192};
    const uint64_t act = 8 * 256 * 192 * 4;
    new_graph(&g, "x", 4, xd);
    conv3(&g, "c0", "x", 1, 8, "t0");
    ir_add_op(&g, "Relu", "r0", "t0", "t", &e);
    conv1x1(&g, "c1", "t", 8, 8, "u0");
    ir_add_op(&g, "Relu", "r1", "u0", "u", &e);
    conv1x1(&g, "c2", "u", 8, 8, "v");
    ir_add_op(&g, "Add", "add", "v,t", "s", &e);
    ir_add_op(&g, "Relu", "r2", "s", "y", &e);
    conv1x1(&g, "c3", "y", 8, 8, "out");
    ir_add_output(&g, "out", &e);
    uint8_t *ys[2] = {NULL, NULL};
    size_t yn[2] = {0, 0};
    for (int split = 0; split < 2; split++) {
        BkOptions o;
        bk_options_default(&o);
        o.group_max = 1;
        o.placement = split ? BK_PLACE_SPLIT : BK_PLACE_CHIP;
        o.micro_batch = split;
        o.schedule = BK_SCHED_UNIFORM;
        BkSummary sum;
        memset(&sum, 0, sizeof sum);
        double err;
        char msg[1024] = "";
        int rc = e2e_graph_run_y(&g, "configs/a1.ini", &o, &err, NULL, &sum, msg, sizeof msg, &ys[split], &yn[split]);
        CHECKF(rc == 0, "in-place tail (%s): %s", split ? "split" : "chip", msg);
        if (rc == 0) CHECKF(err <= 2e-6, "in-place tail (%s): error %g", split ? "split" : "chip", err);
        if (rc == 0 && split) {
            CHECK_EQ_INT(sum.split, 1);
            CHECKF(sum.act_sram == 2 * act, "SRAM peak %llu bytes, expected %llu (y over t)",
                   (unsigned long long)sum.act_sram, (unsigned long long)(2 * act));
            CHECK_EQ_INT(sum.act_dram_tensors, 0);
        }
        bk_summary_free(&sum);
    }
    CHECK(ys[0] && ys[1] && yn[0] == yn[1] && !memcmp(ys[0], ys[1], yn[0]));
    free(ys[0]);
    free(ys[1]);
    ir_free(&g);
}

TEST(no_fusion_where_it_would_be_wrong)
{
    AtlErr e;
    int64_t xd[4] = {1, 4, 6, 6}, bd[4] = {1, 4, 1, 1};
    IrGraph g;
    /* the residual is computed after the conv */
    new_graph(&g, "x", 4, xd);
    conv3(&g, "c", "x", 4, 4, "a");
    ir_add_op(&g, "Sigmoid", "sg", "x", "r", &e);
    ir_add_op(&g, "Add", "add", "a,r", "y", &e);
    ir_add_output(&g, "y", &e);
    run_all(&g, "Conv Sigmoid Add", "residual_after");
    ir_free(&g);
    /* the conv's output is also a graph output */
    new_graph(&g, "x", 4, xd);
    conv3(&g, "c", "x", 4, 4, "a");
    ir_add_op(&g, "Add", "add", "a,x", "y", &e);
    ir_add_output(&g, "y", &e);
    ir_add_output(&g, "a", &e);
    run_all(&g, "Conv Add", "conv_output_kept");
    ir_free(&g);
    /* a broadcast operand */
    new_graph(&g, "x", 4, xd);
    conv3(&g, "c", "x", 4, 4, "a");
    ir_add_op(&g, "GlobalAveragePool", "gap", "x", "m", &e);
    ir_add_op(&g, "Add", "add", "a,m", "y", &e);
    ir_add_output(&g, "y", &e);
    run_all(&g, "Conv GlobalAveragePool Add", "broadcast_operand");
    (void)bd;
    ir_free(&g);
}

int main(void)
{
    RUN(add_relu_of_an_input_fuses);
    RUN(the_later_of_two_convs_takes_the_add);
    RUN(split_conv_keeps_its_tail);
    RUN(multicast_conv_keeps_its_tail);
    RUN(split_tail_overwrites_its_dying_residual);
    RUN(no_fusion_where_it_would_be_wrong);
    return test_summary("test_backend_tail");
}
