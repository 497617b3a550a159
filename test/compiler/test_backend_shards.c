/* test_backend_shards.c - channel shards (docs/backend.md, "Channel
 * shards"): with bands of several images, a tensor too large to keep
 * whole in every cluster (more than a third of the band SRAM) keeps only
 * each cluster's channel range of every image in that cluster's SRAM, and
 * a channel-reducing 1x1 convolution reading it splits K across the
 * clusters (lower/kbands.c) so that each cluster reads only its own shard.
 *
 * x [8, 64, 2, 13] -> Conv 1x1 (1024) -> Relu -> t [8, 1024, 2, 13]
 * (852 KB in fp32, over the 768 KiB of band SRAM; two rows, so row
 * windows are the whole tensor) -> Conv 1x1 (128) -> y, and
 * GlobalAveragePool(t) -> p, placement chip, bands forced, prefetch off, each conv its own layer,
 * on configs/a1.ini with 1 MiB of SRAM a cluster:
 *   - with shards (the default): t is kept in SRAM (no intermediate
 *     tensor in DRAM), the second conv takes the K split (two layers:
 *     its phases), the pool reads no DRAM (each tile the planes of its
 *     cluster's shard, lower/vec.c), exact against the interpreter in the
 *     simulator's full mode (race detector over LMEM, SRAM and DRAM);
 *   - without (BkOptions.no_shards): t does not fit whole and goes to
 *     DRAM; the estimate is higher than with shards;
 * both estimates within 2% of the simulated cycles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_two_layer.h"
#include "test/compiler/chip_variant.h"

static void shard_graph(IrGraph *g)
{
    AtlErr e;
    int64_t xd[4] = {8, 64, 2, 13}, w1[4] = {1024, 64, 1, 1}, b1[1] = {1024}, w2[4] = {128, 1024, 1, 1}, b2[1] = {128};
    new_graph(g, "x", 4, xd);
    cst(g, "w1", 4, w1, 0.05f);
    cst(g, "b1", 1, b1, 0.2f);
    cst(g, "w2", 4, w2, 0.05f);
    cst(g, "b2", 1, b2, 0.2f);
    ir_add_op(g, "Conv", "conv1", "x,w1,b1", "c1", &e);
    ir_add_op(g, "Relu", "relu1", "c1", "t", &e);
    ir_add_op(g, "Conv", "conv2", "t,w2,b2", "y", &e);
    ir_add_op(g, "GlobalAveragePool", "pool", "t", "p", &e);
    ir_add_output(g, "y", &e);
    ir_add_output(g, "p", &e);
}

TEST(a_shard_keeps_a_large_batch_tensor_and_splits_k)
{
    char A1[64];
    REQUIRE(chip_variant("configs/a1.ini", "sram", "bytes", "1M", A1, sizeof A1) == 0);
    IrGraph g;
    shard_graph(&g);
    uint64_t est[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        BkOptions o;
        bands_options(&o);
        o.placement = BK_PLACE_CHIP;
        o.no_shards = k;
        AtlProgram p;
        BkSummary sum;
        double err;
        if (full_run(&g, A1, &o, &p, &sum, &err) == 0) {
            printf("  %s: err %.3g, %d layers (%s / %s), %d intermediate tensors in DRAM, estimate %llu\n",
                   k ? "no shards" : "shards", err, sum.nlayers, sum.layers[0].split, sum.nlayers > 1 ? sum.layers[1].split : "",
                   sum.act_dram_tensors, (unsigned long long)sum.est_cycles);
            CHECKF(err <= 2e-5, "error %g", err);
            if (!k) {
                CHECKF(sum.act_dram_tensors == 0, "%d intermediate tensors in DRAM, want 0", sum.act_dram_tensors);
                CHECKF(sum.nlayers == 4 && strstr(sum.layers[1].split, "kbands"), "%d layers, the second '%s': no K split",
                       sum.nlayers, sum.nlayers > 1 ? sum.layers[1].split : "");
                /* the pool's tiles read the planes their cluster keeps: no DRAM but its output */
                if (sum.nlayers == 4)
                    CHECKF(sum.layers[3].dram_rd == 0 && sum.layers[3].est_rd == 0, "the pool reads %llu bytes of DRAM (estimate %llu)",
                           (unsigned long long)sum.layers[3].dram_rd, (unsigned long long)sum.layers[3].est_rd);
            } else
                CHECKF(sum.act_dram_tensors == 1, "%d intermediate tensors in DRAM without shards, want 1", sum.act_dram_tensors);
        }
        prog_free(&p);
        bk_summary_free(&sum);
        uint64_t sim;
        estimate_within_2pct(&g, A1, &o, &est[k], &sim);
    }
    CHECKF(est[0] && est[0] < est[1], "estimate with shards %llu, without %llu", (unsigned long long)est[0],
           (unsigned long long)est[1]);
    remove(A1);
    ir_free(&g);
}

/* The K split of a window on a shard: x [8, 64, 2, 13] -> Conv 1x1 (1024)
 * -> Relu -> t (sharded, as above) -> Conv 3x3 stride 2, pads 1 (64) -> z,
 * the split forced (--kbands always): tiles of stacked images whose
 * windows cross pad rows, each cluster's K range from its shard; exact
 * against the interpreter, race-free, estimate = simulation. */
TEST(a_window_splits_k_on_a_shard)
{
    char A1[64];
    REQUIRE(chip_variant("configs/a1.ini", "sram", "bytes", "1M", A1, sizeof A1) == 0);
    AtlErr e;
    IrGraph g;
    int64_t xd[4] = {8, 64, 2, 13}, w1[4] = {1024, 64, 1, 1}, b1[1] = {1024}, w3[4] = {64, 1024, 3, 3}, b3[1] = {64};
    int64_t pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2};
    new_graph(&g, "x", 4, xd);
    cst(&g, "w1", 4, w1, 0.05f);
    cst(&g, "b1", 1, b1, 0.2f);
    cst(&g, "w3", 4, w3, 0.05f);
    cst(&g, "b3", 1, b3, 0.2f);
    ir_add_op(&g, "Conv", "conv1", "x,w1,b1", "c1", &e);
    ir_add_op(&g, "Relu", "relu1", "c1", "t", &e);
    int n = ir_add_op(&g, "Conv", "conv3", "t,w3,b3", "z", &e);
    ir_set_attr_ints(&g, n, "pads", pads, 4, &e);
    ir_set_attr_ints(&g, n, "strides", strides, 2, &e);
    ir_add_output(&g, "z", &e);
    BkOptions o;
    bands_options(&o);
    o.placement = BK_PLACE_CHIP;
    o.kbands = BK_KBANDS_ALWAYS;
    AtlProgram p;
    BkSummary sum;
    double err;
    if (full_run(&g, A1, &o, &p, &sum, &err) == 0) {
        printf("  err %.3g, %d layers (%s / %s), %d intermediate tensors in DRAM\n", err, sum.nlayers, sum.layers[0].split,
               sum.nlayers > 1 ? sum.layers[1].split : "", sum.act_dram_tensors);
        CHECKF(err <= 2e-5, "error %g", err);
        CHECKF(sum.act_dram_tensors == 0, "%d intermediate tensors in DRAM, want 0", sum.act_dram_tensors);
        CHECKF(sum.nlayers == 3 && strstr(sum.layers[1].split, "kbands"), "%d layers, the second '%s': no K split", sum.nlayers,
               sum.nlayers > 1 ? sum.layers[1].split : "");
    }
    prog_free(&p);
    bk_summary_free(&sum);
    uint64_t est, sim;
    estimate_within_2pct(&g, A1, &o, &est, &sim);
    remove(A1);
    ir_free(&g);
}

int main(void)
{
    RUN(a_shard_keeps_a_large_batch_tensor_and_splits_k);
    RUN(a_window_splits_k_on_a_shard);
    return test_summary("test_backend_shards");
}
