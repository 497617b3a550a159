/* test_stage_chip_sub.c - a chip stage's strided shortcut reads a
 * subsampled copy of its DRAM boundary (compiler/backend/compile.c,
 * chip_stage_subsample; docs/backend.md, "Staged schedules").
 *
 * A chip stage (the whole batch on every core) reads its boundary from
 * DRAM in every cluster; a strided pointwise convolution reading it (a
 * ResNet downsample) reads it once per output-channel chunk a cluster
 * computes, though it uses a quarter of it. A bottleneck block (x -> 1x1
 * a; a -> 1x1 b -> 3x3 stride 2 c -> 1x1 e; a -> 1x1 stride 2
 * d; e + d; layer4_graph), staged "1,a:c" on a1 with 512 KiB of SRAM
 * a cluster (stage 0 split at one image, the block a chip stage reading
 * a): with the rewrite the downsample reads
 * a/subsample, a layer of the chip stage made before cb; the estimate is
 * lower than with BkOptions.no_reorder (which turns it off); both runs
 * give the interpreter's output, bit for bit the same (the same
 * arithmetic, another order of reads), and the simulator's race detector
 * (on in every run) finds nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "test/compiler/chip_variant.h"

/* ResNet-50's layer4.0 scaled down (SRAM and channels), its downsample's
 * weights (2 MiB) as layer4.0's (8 MiB) beside a1's 4 MiB of SRAM: over
 * the SRAM, so its output-channel chunks each read the boundary: x
 * [8,64,14,14] -> 1x1 conv+Relu a (256 channels; the boundary) -> 1x1
 * conv+Relu b (64) -> 3x3 stride 2 conv+Relu c -> 1x1 conv e (2048); a ->
 * 1x1 stride 2 conv d (2048); e + d -> Relu y. */
static void layer4_graph(IrGraph *g)
{
    AtlErr e;
    int64_t xd[4] = {8, 64, 14, 14}, wa[4] = {256, 64, 1, 1}, wb[4] = {64, 256, 1, 1}, wc[4] = {64, 64, 3, 3},
            we[4] = {2048, 64, 1, 1}, wd[4] = {2048, 256, 1, 1};
    int64_t pads[4] = {1, 1, 1, 1}, st[2] = {2, 2};
    new_graph(g, "x", 4, xd);
    cst(g, "wa", 4, wa, 0.1f);
    cst(g, "wb", 4, wb, 0.05f);
    cst(g, "wc", 4, wc, 0.05f);
    cst(g, "we", 4, we, 0.05f);
    cst(g, "wd", 4, wd, 0.05f);
    ir_add_op(g, "Conv", "ca", "x,wa", "a0", &e);
    ir_add_op(g, "Relu", "ra", "a0", "a", &e);
    ir_add_op(g, "Conv", "cb", "a,wb", "b0", &e);
    ir_add_op(g, "Relu", "rb", "b0", "b", &e);
    ir_set_attr_ints(g, ir_add_op(g, "Conv", "cd", "a,wd", "d", &e), "strides", st, 2, &e);
    int cc = ir_add_op(g, "Conv", "cc", "b,wc", "c0", &e);
    ir_set_attr_ints(g, cc, "pads", pads, 4, &e);
    ir_set_attr_ints(g, cc, "strides", st, 2, &e);
    ir_add_op(g, "Relu", "rc", "c0", "c", &e);
    ir_add_op(g, "Conv", "ce", "c,we", "e", &e);
    ir_add_op(g, "Add", "add", "e,d", "s", &e);
    ir_add_op(g, "Relu", "ry", "s", "y", &e);
    ir_add_output(g, "y", &e);
}

TEST(chip_stage_downsample_reads_a_subsampled_copy)
{
    IrGraph g;
    layer4_graph(&g);
    char chip[64];
    REQUIRE(chip_variant("configs/a1.ini", "sram", "bytes", "512K", chip, sizeof chip) == 0);
    uint64_t est[2] = {0, 0};
    int subs[2] = {0, 0}, onchip[2] = {0, 0};
    uint8_t *y[2] = {NULL, NULL};
    size_t ylen[2] = {0, 0};
    for (int on = 0; on < 2; on++) {
        BkOptions o;
        bk_options_default(&o);
        o.placement = BK_PLACE_SPLIT;
        o.stage_plan = "1,a:c";
        o.no_reorder = !on;
        BkSummary sum;
        memset(&sum, 0, sizeof sum);
        double err = -1;
        char msg[1024] = "";
        const char *what = on ? "rewrite" : "no rewrite";
        int rc = e2e_graph_run_y(&g, chip, &o, &err, NULL, &sum, msg, sizeof msg, &y[on], &ylen[on]);
        CHECKF(rc == 0, "%s: %s", what, msg);
        if (rc == 0) {
            CHECKF(err <= 2e-6, "%s: error %g", what, err);
            est[on] = sum.est_cycles;
            onchip[on] = sum.nstages == 2 && sum.stage_chip[1];
            for (int i = 0; i < sum.nlayers; i++) subs[on] += strstr(sum.layers[i].name, "a/subsample") != NULL;
        }
        bk_summary_free(&sum);
    }
    CHECK(onchip[0] && onchip[1]);
    CHECK_EQ_INT(subs[0], 0);
    CHECK_EQ_INT(subs[1], 1);
    CHECKF(est[1] < est[0], "estimate %llu with the copy, %llu without", (unsigned long long)est[1], (unsigned long long)est[0]);
    CHECKF(y[0] && y[1] && ylen[0] == ylen[1] && !memcmp(y[0], y[1], ylen[0]), "the outputs differ");
    printf("  %llu -> %llu estimated cycles\n", (unsigned long long)est[0], (unsigned long long)est[1]);
    for (int k = 0; k < 2; k++) free(y[k]);
    remove(chip);
    ir_free(&g);
}

int main(void)
{
    RUN(chip_stage_downsample_reads_a_subsampled_copy);
    return test_summary("test_stage_chip_sub");
}
