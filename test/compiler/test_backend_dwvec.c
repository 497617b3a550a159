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
 * on the vector unit first), each on the vector unit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_two_layer.h"

static const char *const A1 = "configs/a1.ini";

/* x [1, C, H, W] -> [Conv 1x1 (E) -> Relu ->] depthwise Conv k x k (stride
 * s, dilation d, pad d (k - 1) / 2) -> Relu [-> Conv 1x1 (C)] -> y;
 * `block` adds the 1x1 convolutions. */
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
    if (block) ir_add_op(g, "Conv", "project", "r2,wp,bp", "y", &e);
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

int main(void)
{
    RUN(a_block_keeps_the_expanded_tensor_in_row_bands);
    RUN(b_strided_dilated_and_uneven_tiles_match_the_interpreter);
    return test_summary("test_backend_dwvec");
}
