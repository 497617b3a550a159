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
 * 1x1 stride 2 conv d (2048); e + d -> Relu y: bk_graph_run.h's
 * stage_block_graph without its last conv. */
static void layer4_graph(IrGraph *g)
{
    stage_block_graph(g, (BottleneckShape){.a = 256, .b = 64, .c = 64, .e = 2048, .stride = 2, .C = 64, .H = 14, .ka = 1});
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
        if (graph_run_within(&g, chip, &o, 2e-6, on ? "rewrite" : "no rewrite", &sum, &y[on], &ylen[on]) == 0) {
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
