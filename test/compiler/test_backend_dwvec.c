/* test_backend_dwvec.c - depthwise f32 convolutions on the vector unit
 * (lower/dwvec.c; docs/backend.md, "Depthwise convolutions on the vector
 * unit"): each tile shape of a depthwise convolution is offered on the
 * vector unit too (its input block and weights at 64-byte pixel and tap
 * strides, the padding stored as zeros, one v.mul per tap and a v.add
 * per tap after the first), and the tile search keeps the cheaper. On the
 * matrix unit a row band of a small image cost several times its MACs
 * (a fold per channel, each paying the array's fill and drain), so
 * MobileNetV2's depthwise convolutions took channel bands between
 * row-banded 1x1 convolutions and every inverted-residual block moved its
 * expanded tensor through DRAM twice.
 *
 * Checked on configs/a1.ini (bands forced, prefetch off, each conv its own
 * layer), an inverted-residual block x [1, 16, 24, 24] -> Conv 1x1 (96)
 * -> Relu -> depthwise Conv 3x3 (pad 1) -> Relu -> Conv 1x1 (16) -> y: in
 * the simulator's full mode (race detector on) the output is the
 * interpreter's; the depthwise layer runs on the vector unit (` vec` in
 * its split) in row bands, and neither it nor the projection reads the
 * expanded tensor through DRAM beyond the halo rows the row bands
 * exchange (the segments' DRAM reads: at most every core's weights and
 * bias and two rows of the tensor per cluster boundary); with
 * --depthwise matrix (BkOptions.dw_matrix) no layer takes the vector
 * unit; the estimate is within 2% of the simulated cycles. Stride 2, a
 * 5x5 kernel, dilation 2 and uneven tiles: the interpreter's answers on
 * a1 and tiny in f32 and on tiny in bf16 (inputs and weights cast to f32
 * on the vector unit first), each on the vector unit. Inside layer groups
 * (lower/chain.c, bk_dw_chain_taps): blocks forming one group with the
 * depthwise member on the vector unit, and mobilenetv2_035's first blocks
 * in SRAM bands (a group's inner tensors are no band uses). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_two_layer.h"

static const char *const A1 = "configs/a1.ini";

/* x [1, C, H, W] -> [Conv 1x1 (E) -> Relu ->] depthwise Conv k x k (stride
 * s, dilation d, pad d (k - 1) / 2) -> Relu [-> Conv 1x1 (C) [-> + x]] -> y;
 * `block` adds the 1x1 convolutions (2: and the residual Add). */
static void dw_graph(IrGraph *g, int C, int H, int W, int E, int k, int s, int d, int block)
{
    AtlErr e;
    int ch = block ? E : C, pad = d * (k - 1) / 2;
    int64_t xd[4] = {1, C, H, W}, we[4] = {E, C, 1, 1}, wd[4] = {ch, 1, k, k}, wp[4] = {C, E, 1, 1};
    int64_t be[1] = {E}, bd[1] = {ch}, bp[1] = {C}, st[2] = {s, s}, dl[2] = {d, d}, pads[4] = {pad, pad, pad, pad};
    new_graph(g, "x", 4, xd);
    cst(g, "wd", 4, wd, 0.2f);
    cst(g, "bd", 1, bd, 0.2f);
    if (block) {
        cst(g, "we", 4, we, 0.1f);
        cst(g, "be", 1, be, 0.2f);
        cst(g, "wp", 4, wp, 0.1f);
        cst(g, "bp", 1, bp, 0.2f);
        ir_add_op(g, "Conv", "expand", "x,we,be", "e1", &e);
        ir_add_op(g, "Relu", "relu1", "e1", "r1", &e);
    }
    int n = ir_add_op(g, "Conv", "dw", block ? "r1,wd,bd" : "x,wd,bd", "d1", &e);
    ir_set_attr_int(g, n, "group", ch, &e);
    ir_set_attr_ints(g, n, "strides", st, 2, &e);
    ir_set_attr_ints(g, n, "dilations", dl, 2, &e);
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "relu2", "d1", block ? "r2" : "y", &e);
    if (block == 1) ir_add_op(g, "Conv", "project", "r2,wp,bp", "y", &e);
    if (block == 2) {   /* with the residual Add of MobileNetV2's stride-1 blocks */
        ir_add_op(g, "Conv", "project", "r2,wp,bp", "p1", &e);
        ir_add_op(g, "Add", "add", "p1,x", "y", &e);
    }
    ir_add_output(g, "y", &e);
}

TEST(a_block_keeps_the_expanded_tensor_in_row_bands)
{
    const int C = 16, H = 24, E = 96, clusters = 4, cores = 16;
    IrGraph g;
    dw_graph(&g, C, H, H, E, 3, 1, 1, 1);
    BkOptions o;
    bands_options(&o);
    AtlProgram p;
    BkSummary sum;
    double err;
    if (full_run(&g, A1, &o, &p, &sum, &err) == 0) {
        printf("  err %.3g, layers %d\n", err, sum.nlayers);
        CHECKF(err <= 2e-5, "error %g", err);
        CHECKF(sum.nlayers == 3, "%d layers, want 3", sum.nlayers);
        if (sum.nlayers == 3) {
            const char *s = sum.layers[1].split;
            printf("  splits: %s | %s | %s\n", sum.layers[0].split, s, sum.layers[2].split);
            CHECKF(strstr(s, " vec") && strstr(s, " rows"), "depthwise split '%s': not on the vector unit in row bands", s);
            CHECKF(strstr(sum.layers[2].split, " rows") != NULL, "projection split '%s': not in row bands", sum.layers[2].split);
        }
        /* the depthwise segment: its weights and bias on every core and
         * the halo rows (one each side of every cluster boundary); the
         * projection: its weights and bias on every core, no input */
        uint64_t row = (uint64_t)H * E * 4, dw_w = (uint64_t)E * 9 * 4 + (uint64_t)E * 4;
        uint64_t pj_w = (uint64_t)C * E * 4 + (uint64_t)C * 4;
        uint64_t rd_dw = dram_reads_in_segment(&p, 1), rd_pj = dram_reads_in_segment(&p, 2);
        uint64_t most_dw = cores * dw_w + 2 * (clusters - 1) * row, most_pj = cores * pj_w;
        printf("  DRAM reads: depthwise %llu (at most %llu), projection %llu (at most %llu)\n", (unsigned long long)rd_dw,
               (unsigned long long)most_dw, (unsigned long long)rd_pj, (unsigned long long)most_pj);
        CHECKF(rd_dw <= most_dw, "the depthwise layer reads %llu bytes of DRAM, over %llu", (unsigned long long)rd_dw,
               (unsigned long long)most_dw);
        CHECKF(rd_pj <= most_pj, "the projection reads %llu bytes of DRAM, over %llu", (unsigned long long)rd_pj,
               (unsigned long long)most_pj);
    }
    prog_free(&p);
    bk_summary_free(&sum);
    uint64_t est, sim;
    estimate_within_2pct(&g, A1, &o, &est, &sim);
    /* the matrix unit only: no layer says vec */
    o.dw_matrix = 1;
    char msg[1024] = "";
    memset(&sum, 0, sizeof sum);
    CHECKF(e2e_graph_run(&g, A1, &o, &err, NULL, &sum, msg, sizeof msg) == 0, "%s", msg);
    for (int i = 0; i < sum.nlayers; i++)
        CHECKF(!strstr(sum.layers[i].split, " vec"), "--depthwise matrix: layer %d split '%s'", i, sum.layers[i].split);
    printf("  matrix only: err %.3g, depthwise split %s\n", err, sum.nlayers > 1 ? sum.layers[1].split : "?");
    CHECKF(err <= 2e-5, "error %g", err);
    bk_summary_free(&sum);
    ir_free(&g);
}

/* A depthwise layer alone, default options, on tiny and a1 in f32 and on
 * tiny in bf16 (within 2e-2 of the interpreter's f32). */
static void dw_alone(int C, int H, int W, int k, int s, int d)
{
    IrGraph g;
    dw_graph(&g, C, H, W, 0, k, s, d, 0);
    for (int c = 0; c < 3; c++) {
        BkOptions o;
        bk_options_default(&o);
        if (c == 2) o.dtype = ISA_BF16;
        double tol = c == 2 ? 2e-2 : 2e-5;
        BkSummary sum;
        double err;
        char msg[1024] = "";
        memset(&sum, 0, sizeof sum);
        const char *chip = chips[c % 2];
        int rc = e2e_graph_run(&g, chip, &o, &err, NULL, &sum, msg, sizeof msg);
        CHECKF(rc == 0, "%s: %s", chip, msg);
        if (rc == 0) {
            printf("  %s %s: k %d s %d d %d, %d x %d: split %s, err %.3g\n", chip, c == 2 ? "bf16" : "f32", k, s, d, H, W,
                   sum.nlayers ? sum.layers[0].split : "?", err);
            CHECKF(err <= tol, "%s: error %g", chip, err);
            CHECKF(sum.nlayers == 1 && strstr(sum.layers[0].split, " vec"), "%s: not on the vector unit", chip);
        }
        bk_summary_free(&sum);
    }
    ir_free(&g);
}

TEST(b_strided_dilated_and_uneven_tiles_match_the_interpreter)
{
    dw_alone(40, 13, 10, 3, 2, 1);
    dw_alone(24, 11, 9, 5, 1, 1);
    dw_alone(20, 9, 12, 3, 1, 2);
}

/* Inside a layer group (lower/chain.c; bk_dw_chain_taps): an inverted-
 * residual block with default options forms one group (expand, depthwise,
 * project) whose depthwise member runs on the vector unit (` vec` in the
 * group's split: each tap clipped to the outputs whose inputs lie in the
 * packed row buffer, the centre tap first), matching the interpreter; 3x3
 * at stride 1 and 2 (an odd 13-row image: uneven slices) and a 5x5, on a1
 * and tiny. */
static void dw_group(const char *chip, int C, int H, int E, int k, int s, int res)
{
    IrGraph g;
    dw_graph(&g, C, H, H, E, k, s, 1, res ? 2 : 1);
    BkOptions o;
    bk_options_default(&o);
    BkSummary sum;
    double err;
    char msg[1024] = "";
    memset(&sum, 0, sizeof sum);
    int rc = e2e_graph_run(&g, chip, &o, &err, NULL, &sum, msg, sizeof msg);
    CHECKF(rc == 0, "%s: %s", chip, msg);
    int grp = -1;
    for (int i = 0; rc == 0 && i < sum.nlayers; i++)
        if (sum.layers[i].nmembers >= 3) grp = i;
    printf("  %s k %d s %d, %d x %d x %d: %s, err %.3g\n", chip, k, s, E, H, H, grp >= 0 ? sum.layers[grp].split : "no group", err);
    if (rc == 0) {
        CHECKF(err <= 2e-5, "%s: error %g", chip, err);
        CHECKF(grp >= 0 && strstr(sum.layers[grp].split, " vec"), "%s: no group with the depthwise on the vector unit", chip);
    }
    bk_summary_free(&sum);
    ir_free(&g);
}

/* Appends MobileNetV2's inverted-residual block to g: x (C channels) ->
 * [1x1 to E + Relu] -> depthwise 3x3 stride s + Relu -> 1x1 to M [+ x
 * when s = 1 and M = C] -> out; tags name its tensors. */
static void mb_block(IrGraph *g, const char *tag, const char *x, int C, int E, int M, int s, int expand, const char *out)
{
    AtlErr e;
    char n[8][48];
    const char *nm[8] = {"we", "be", "wd", "bd", "wp", "bp", "e", "d"};
    for (int i = 0; i < 8; i++) snprintf(n[i], sizeof n[i], "%s_%s", tag, nm[i]);
    int64_t we[4] = {E, C, 1, 1}, be[1] = {E}, wd[4] = {E, 1, 3, 3}, wp[4] = {M, E, 1, 1}, bp[1] = {M};
    int64_t st[2] = {s, s}, pads[4] = {1, 1, 1, 1};
    char ins[160], t1[64], t2[64], t3[64];
    snprintf(t1, sizeof t1, "%s_r1", tag);
    snprintf(t2, sizeof t2, "%s_r2", tag);
    snprintf(t3, sizeof t3, "%s_p", tag);
    const char *din = x;
    if (expand) {
        cst(g, n[0], 4, we, 0.3f);
        cst(g, n[1], 1, be, 0.1f);
        snprintf(ins, sizeof ins, "%s,%s,%s", x, n[0], n[1]);
        ir_add_op(g, "Conv", n[6], ins, n[6], &e);
        ir_add_op(g, "Relu", t1, n[6], t1, &e);
        din = t1;
    }
    cst(g, n[2], 4, wd, 0.3f);
    cst(g, n[3], 1, be, 0.1f);
    snprintf(ins, sizeof ins, "%s,%s,%s", din, n[2], n[3]);
    int k = ir_add_op(g, "Conv", n[7], ins, n[7], &e);
    ir_set_attr_int(g, k, "group", E, &e);
    ir_set_attr_ints(g, k, "strides", st, 2, &e);
    ir_set_attr_ints(g, k, "pads", pads, 4, &e);
    ir_add_op(g, "Relu", t2, n[7], t2, &e);
    cst(g, n[4], 4, wp, 0.3f);
    cst(g, n[5], 1, bp, 0.1f);
    snprintf(ins, sizeof ins, "%s,%s,%s", t2, n[4], n[5]);
    int res = s == 1 && M == C && expand;
    ir_add_op(g, "Conv", t3, ins, res ? t3 : out, &e);
    if (res) {
        snprintf(ins, sizeof ins, "%s,%s", t3, x);
        ir_add_op(g, "Add", out, ins, out, &e);
    }
}

/* mobilenetv2_035's first blocks on a 96 x 96 image (stem 3x3 stride 2 to
 * 16 channels, a block without expand, a stride-2 block, a residual
 * block), default options on a1: SRAM bands, and groups of expand,
 * depthwise (` vec`) and project whose tensors between members have DRAM
 * bytes (placed before groups exist) that may be the group output's.
 * Those are no band uses of the group (schedule/bands.c `uses`): taken as
 * uses, the output's stores were cut by an inner tensor's band and the
 * stride-2 block's group computed wrong rows. */
TEST(d_mobilenet_front_in_bands)
{
    AtlErr e;
    IrGraph g;
    int64_t xd[4] = {1, 3, 96, 96}, ws[4] = {16, 3, 3, 3}, bs[1] = {16}, st[2] = {2, 2}, pads[4] = {1, 1, 1, 1};
    new_graph(&g, "x", 4, xd);
    cst(&g, "ws", 4, ws, 0.3f);
    cst(&g, "bs", 1, bs, 0.1f);
    int k = ir_add_op(&g, "Conv", "stem", "x,ws,bs", "s0", &e);
    ir_set_attr_ints(&g, k, "strides", st, 2, &e);
    ir_set_attr_ints(&g, k, "pads", pads, 4, &e);
    ir_add_op(&g, "Relu", "s1", "s0", "s1", &e);
    mb_block(&g, "f1", "s1", 16, 16, 8, 1, 0, "y1");
    mb_block(&g, "f2", "y1", 8, 48, 8, 2, 1, "y2");
    mb_block(&g, "f3", "y2", 8, 48, 8, 1, 1, "y3");
    mb_block(&g, "f4", "y3", 8, 48, 16, 2, 1, "y");
    ir_add_output(&g, "y", &e);
    BkOptions o;
    bk_options_default(&o);
    BkSummary sum;
    double err;
    char msg[1024] = "";
    memset(&sum, 0, sizeof sum);
    int rc = e2e_graph_run(&g, chips[1], &o, &err, NULL, &sum, msg, sizeof msg);
    CHECKF(rc == 0, "%s", msg);
    int groups = 0;
    for (int i = 0; rc == 0 && i < sum.nlayers; i++) {
        printf("  %-12s %d members, split %s\n", sum.layers[i].name, sum.layers[i].nmembers, sum.layers[i].split);
        groups += sum.layers[i].nmembers >= 3 && strstr(sum.layers[i].split, " vec") != NULL;
    }
    printf("  err %.3g, %d groups with the depthwise on the vector unit\n", err, groups);
    if (rc == 0) {
        CHECKF(err <= 2e-5, "error %g", err);
        CHECKF(groups >= 1, "no group of three with the depthwise on the vector unit");
    }
    bk_summary_free(&sum);
    ir_free(&g);
}

TEST(c_a_block_as_one_group_with_the_depthwise_on_the_vector_unit)
{
    dw_group(chips[1], 16, 13, 96, 3, 2, 0);
    dw_group(chips[1], 16, 12, 64, 5, 1, 0);
    dw_group(chips[1], 16, 12, 96, 3, 1, 1);
}

int main(void)
{
    RUN(a_block_keeps_the_expanded_tensor_in_row_bands);
    RUN(b_strided_dilated_and_uneven_tiles_match_the_interpreter);
    RUN(c_a_block_as_one_group_with_the_depthwise_on_the_vector_unit);
    RUN(d_mobilenet_front_in_bands);
    return test_summary("test_backend_dwvec");
}
