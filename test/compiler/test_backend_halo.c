/* test_backend_halo.c - halo staging of row bands (docs/backend.md,
 * "Halo staging of row bands"; schedule/bands.c, halo_ok, gather_halo).
 *
 * A row-banded 3x3 convolution reads the rows just past its cluster's
 * share of its input (its halo) that another cluster wrote; they come
 * from DRAM, and with several output-channel chunks each core read them
 * again for each of its chunks: ResNet-50's layer2.x conv2 (`N1 C4 H4 K2
 * rows`, 128 -> 128, 28 x 28) read its 86 KB halo four times (344 KB a
 * layer). Halo-staged, each cluster gathers the halo cells its tiles read
 * into its window of the input in its own SRAM once (the input staging's
 * copy, a flag, the tiles waiting for it), and the tiles read every row of
 * the window from there.
 *
 * Checked on configs/a1.ini with bands forced, prefetch off, each conv its
 * own layer, the band way over the chain on (as ResNet-50 has it), on
 * ResNet-50's layer1 bottleneck without its residual (x [1, 256, 56, 56]
 * -> Conv 1x1 (64) -> Relu -> Conv 3x3 pad 1 (64) -> Relu -> Conv 1x1
 * (256) -> y; the 3x3 conv's input, 802 KB, too big to be banded whole):
 * with the input staging forced (BkOptions.sram_input ALWAYS), in the
 * simulator's full mode (arithmetic, race detector over LMEM, SRAM and
 * DRAM) the output is the interpreter's, the 3x3 conv runs staged in row
 * bands, and its segment reads fewer DRAM bytes (705,536) than the plan
 * without halo staging reads in its (821,248: the shape the search picks
 * there, `N1 C2 H8 K2 wsram rows`, each of its cores reading its halo
 * rows); both plans estimated within 2% of the simulated cycles. And a
 * strided one (x [1, 64, 56, 56] -> Conv 1x1 (128) -> Relu -> Conv 3x3
 * pad 1 stride 2 (128) -> Relu -> Conv 1x1 (64), ResNet-50's layer2.0
 * conv2 at its input size), its tiles reading every other row: staged in
 * row bands with the interpreter's answers, estimated within 2%. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_two_layer.h"

static const char *const A1 = "configs/a1.ini";

/* ResNet-50's layer2 bottleneck without its residual: x [1, C, H, H] ->
 * Conv 1x1 (M) -> Relu -> Conv 3x3 pad 1 (M) -> Relu -> Conv 1x1 (C) -> y */
static void halo_graph(IrGraph *g, int C, int H, int M, int stride)
{
    AtlErr e;
    int64_t st[2] = {stride, stride};
    int64_t xd[4] = {1, C, H, H}, w1[4] = {M, C, 1, 1}, w2[4] = {M, M, 3, 3}, w3[4] = {C, M, 1, 1}, bm[1] = {M}, bc[1] = {C};
    int64_t pads[4] = {1, 1, 1, 1};
    new_graph(g, "x", 4, xd);
    cst(g, "w1", 4, w1, 0.05f);
    cst(g, "b1", 1, bm, 0.2f);
    cst(g, "w2", 4, w2, 0.05f);
    cst(g, "b2", 1, bm, 0.2f);
    cst(g, "w3", 4, w3, 0.05f);
    cst(g, "b3", 1, bc, 0.2f);
    ir_add_op(g, "Conv", "conv1", "x,w1,b1", "c1", &e);
    ir_add_op(g, "Relu", "relu1", "c1", "r1", &e);
    int n = ir_add_op(g, "Conv", "conv2", "r1,w2,b2", "c2", &e);
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    if (stride > 1) ir_set_attr_ints(g, n, "strides", st, 2, &e);
    ir_add_op(g, "Relu", "relu2", "c2", "r2", &e);
    ir_add_op(g, "Conv", "conv3", "r2,w3,b3", "y", &e);
    ir_add_output(g, "y", &e);
}

typedef struct Run {
    uint64_t rd;          /* DRAM bytes the 3x3 conv's segment reads */
    uint64_t est, sim;    /* the whole graph, estimated and simulated (timing only) */
    char split[64];
} Run;

/* Compiles and runs the graph with the halo staged or not; 0 when both
 * the full run and the timing-only run ran. */
static int run(int halo, int stride, Run *r)
{
    IrGraph g;
    if (stride > 1) halo_graph(&g, 64, 56, 128, stride);
    else halo_graph(&g, 256, 56, 64, 1);
    BkOptions o;
    bands_options(&o);
    o.band_look = BK_LOOK_ALWAYS;   /* the 3x3 conv in row bands, as in ResNet-50 */
    o.no_halo_stage = !halo;
    if (halo) o.sram_input = BK_SRAM_ALWAYS;   /* staged where it may (ngc > 1) */
    AtlProgram p;
    BkSummary sum;
    double err;
    memset(r, 0, sizeof *r);
    int rc = full_run(&g, A1, &o, &p, &sum, &err);
    if (rc == 0) {
        CHECKF(err <= 2e-5, "error %g", err);
        CHECKF(sum.nlayers == 3, "%d layers, want 3", sum.nlayers);
    }
    if (rc == 0 && sum.nlayers == 3) {
        snprintf(r->split, sizeof r->split, "%s", sum.layers[1].split);
        r->rd = dram_reads_in_segment(&p, 1);
        printf("  halo %s: err %.3g, %s / %s / %s, the 3x3 conv reads %llu DRAM bytes\n", halo ? "staged" : "off", err,
               sum.layers[0].split, r->split, sum.layers[2].split, (unsigned long long)r->rd);
    }
    prog_free(&p);
    bk_summary_free(&sum);
    if (rc == 0) rc = estimate_within_2pct(&g, A1, &o, &r->est, &r->sim);
    ir_free(&g);
    return rc;
}

TEST(a_row_banded_conv_gathers_its_halo_once_a_cluster)
{
    Run on, off;
    if (run(1, 1, &on) || run(0, 1, &off)) return;
    CHECKF(strstr(on.split, " sram") && strstr(on.split, " rows"), "split '%s': not staged in row bands", on.split);
    CHECKF(on.rd < off.rd, "the 3x3 conv reads %llu DRAM bytes with its halo staged, %llu without",
           (unsigned long long)on.rd, (unsigned long long)off.rd);
    printf("  simulated cycles: %llu with its halo staged, %llu without\n", (unsigned long long)on.sim,
           (unsigned long long)off.sim);
}

/* layer2.0's strided 3x3 conv at layer1's size: its tiles read every
 * other row of the halo's neighbourhood (bk_window_span with stride 2) */
TEST(a_strided_conv_gathers_the_rows_its_tiles_read)
{
    Run on;
    if (run(1, 2, &on)) return;
    CHECKF(strstr(on.split, " sram") && strstr(on.split, " rows"), "split '%s': not staged in row bands", on.split);
}

int main(void)
{
    RUN(a_row_banded_conv_gathers_its_halo_once_a_cluster);
    RUN(a_strided_conv_gathers_the_rows_its_tiles_read);
    return test_summary("test_backend_halo");
}
