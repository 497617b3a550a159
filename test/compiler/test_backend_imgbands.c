/* test_backend_imgbands.c - bands of several images (docs/backend.md,
 * "Bands of several images"): placement chip on a chip whose clusters
 * share only DRAM keeps the cells each cluster computed of a batch of N > 1
 * images in its SRAM, every image banded the same way (its N x C channel
 * planes are the band's planes); before, only tensors of one image were
 * banded and a batch's activations all went through DRAM.
 *
 * Checked on configs/a1.ini with bands forced, prefetch off, each conv its
 * own layer, in the simulator's full mode (arithmetic, race detector over
 * LMEM, SRAM and DRAM) against the interpreter:
 *   - rows: x [4, 16, 16, 16] -> Conv 3x3 -> Relu -> Conv 3x3 -> y, one
 *     image a tile: the intermediate tensor is banded (SRAM bytes, no
 *     intermediate tensor in DRAM) and the second conv reads from DRAM
 *     its weights once per cluster and at most half the first conv's
 *     output (its halo rows; every cluster read it whole before);
 *   - tiles of several images: x [8, 64, 7, 7] -> Conv 1x1 (64) -> Relu
 *     -> Conv 3x3 (64) -> y with 8 images a tile (BkOptions.tile_images):
 *     each tile's DMAs walk images and channels, which the band rewrite
 *     cuts image by image;
 * and the cost model's estimate is within 2% of the simulated cycles
 * (timing-only run); a staged schedule's chip stage (two 3x3 convs at
 * batch 8) built with bands too keeps them under auto, a lower estimate
 * than the DRAM plan's, exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_two_layer.h"

static const char *const A1 = "configs/a1.ini";

/* x [N, C, H, H] -> Conv k1 x k1 (M) -> Relu -> Conv 3x3 (M) -> y, pads
 * k / 2 */
static void pair_graph(IrGraph *g, int N, int C, int H, int M, int k1)
{
    AtlErr e;
    int64_t xd[4] = {N, C, H, H}, w1[4] = {M, C, k1, k1}, w2[4] = {M, M, 3, 3}, b[1] = {M};
    int64_t p1[4] = {k1 / 2, k1 / 2, k1 / 2, k1 / 2}, p2[4] = {1, 1, 1, 1};
    new_graph(g, "x", 4, xd);
    cst(g, "w1", 4, w1, 0.05f);
    cst(g, "b1", 1, b, 0.2f);
    cst(g, "w2", 4, w2, 0.05f);
    cst(g, "b2", 1, b, 0.2f);
    int n = ir_add_op(g, "Conv", "conv1", "x,w1,b1", "c1", &e);
    ir_set_attr_ints(g, n, "pads", p1, 4, &e);
    ir_add_op(g, "Relu", "relu1", "c1", "r1", &e);
    n = ir_add_op(g, "Conv", "conv2", "r1,w2,b2", "y", &e);
    ir_set_attr_ints(g, n, "pads", p2, 4, &e);
    ir_add_output(g, "y", &e);
}

static void banded_batch(int N, int C, int H, int M, int k1, int images, int check_reads)
{
    IrGraph g;
    pair_graph(&g, N, C, H, M, k1);
    BkOptions o;
    bands_options(&o);
    o.tile_images = images;
    o.placement = BK_PLACE_CHIP;   /* the batch on every core */
    AtlProgram p;
    BkSummary sum;
    if (two_layer_full_run(&g, A1, &o, &p, &sum) == 0) {
        printf("  splits %s, %s; %llu bytes of activations in SRAM, %d intermediate tensors in DRAM\n", sum.layers[0].split,
               sum.layers[1].split, (unsigned long long)sum.act_sram, sum.act_dram_tensors);
        CHECKF(sum.sram_bands == 4, "bands over %d clusters, want 4", sum.sram_bands);
        CHECKF(sum.act_sram > 0, "no activation in SRAM");
        CHECKF(sum.act_dram_tensors == 0, "%d intermediate tensors in DRAM", sum.act_dram_tensors);
        if (images > 1)
            CHECKF(strstr(sum.layers[0].split, "Nb") && strstr(sum.layers[1].split, "Nb"), "splits '%s', '%s': not tiles of several images",
                   sum.layers[0].split, sum.layers[1].split);
        if (check_reads) {
            /* its weights and bias once per cluster, and halo rows: a
             * cluster reading its input from DRAM reads it whole */
            uint64_t rd = dram_reads_in_segment(&p, 1), whole = (uint64_t)N * M * H * H * 4;
            uint64_t most = 4 * ((uint64_t)M * M * 9 * 4 + (uint64_t)M * 4) + whole / 2;
            printf("  the second layer reads %llu bytes of DRAM (at most %llu)\n", (unsigned long long)rd, (unsigned long long)most);
            CHECKF(rd <= most, "the second layer reads %llu bytes of DRAM, over %llu", (unsigned long long)rd, (unsigned long long)most);
        }
    }
    prog_free(&p);
    bk_summary_free(&sum);
    uint64_t est, sim;
    estimate_within_2pct(&g, A1, &o, &est, &sim);
    ir_free(&g);
}

TEST(rows_of_four_images_stay_in_sram)
{
    banded_batch(4, 16, 16, 16, 3, 0, 1);
}

TEST(tiles_of_eight_images_cut_image_by_image)
{
    banded_batch(8, 64, 7, 64, 1, 8, 0);
}

/* x [8, 16, 16, 16] -> three Conv 3x3 (16) + Relu -> y, staged: conv1
 * split one image an instance, conv2 and conv3 a chip stage (the batch
 * on every core), compiled with auto and with the DRAM plan (never): the
 * chip stage built with bands too keeps the cheaper plan (not above the
 * DRAM plan's estimate), exact, race-free */
TEST(chip_stage_keeps_the_cheaper_of_bands_and_dram)
{
    AtlErr e;
    IrGraph g;
    int64_t xd[4] = {8, 16, 16, 16}, wd[4] = {16, 16, 3, 3}, bd[1] = {16}, pads[4] = {1, 1, 1, 1};
    new_graph(&g, "x", 4, xd);
    const char *names[3][5] = {{"w1", "b1", "conv1", "x,w1,b1", "c1"}, {"w2", "b2", "conv2", "r1,w2,b2", "c2"}, {"w3", "b3", "conv3", "r2,w3,b3", "c3"}};
    const char *relu[3][2] = {{"relu1", "r1"}, {"relu2", "r2"}, {"relu3", "y"}};
    for (int i = 0; i < 3; i++) {
        cst(&g, names[i][0], 4, wd, 0.05f);
        cst(&g, names[i][1], 1, bd, 0.2f);
        int n = ir_add_op(&g, "Conv", names[i][2], names[i][3], names[i][4], &e);
        ir_set_attr_ints(&g, n, "pads", pads, 4, &e);
        ir_add_op(&g, "Relu", relu[i][0], names[i][4], relu[i][1], &e);
    }
    ir_add_output(&g, "y", &e);
    uint64_t est[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        BkOptions o;
        bk_options_default(&o);
        o.prefetch = BK_PREFETCH_NEVER;
        o.group_max = 1;
        o.stage_plan = "1,r1:c";
        o.sram_acts = k ? BK_SRAM_ACTS_AUTO : BK_SRAM_ACTS_NEVER;
        AtlProgram p;
        BkSummary sum;
        double err;
        if (full_run(&g, A1, &o, &p, &sum, &err) == 0) {
            est[k] = sum.est_cycles;
            printf("  %s: estimate %llu, err %.3g, %d stages, %d intermediate tensors in DRAM\n", k ? "auto" : "never",
                   (unsigned long long)sum.est_cycles, err, sum.nstages, sum.act_dram_tensors);
            CHECKF(err <= 2e-5, "error %g", err);
        }
        prog_free(&p);
        bk_summary_free(&sum);
    }
    CHECKF(est[1] && est[1] < est[0], "auto's estimate %llu, the DRAM plan's %llu", (unsigned long long)est[1], (unsigned long long)est[0]);
    ir_free(&g);
}

int main(void)
{
    RUN(rows_of_four_images_stay_in_sram);
    RUN(tiles_of_eight_images_cut_image_by_image);
    RUN(chip_stage_keeps_the_cheaper_of_bands_and_dram);
    return test_summary("test_backend_imgbands");
}
