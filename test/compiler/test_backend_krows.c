/* test_backend_krows.c - row bands for convolutions that split K
 * (docs/backend.md, "Row and channel bands in every cluster"): the tile
 * search may give a K-split convolution's output tiles (each a run of its
 * k chunks on one core) to the clusters by output rows where every core's
 * consecutive output tiles alternate the parity that picks their K-split
 * accumulator (schedule/bands.c, kruns_alternate); before, a K split kept
 * the spread, and ResNet-50's layer2 1x1 convolutions read their
 * row-banded input from DRAM in every cluster.
 *
 * Checked on configs/a1.ini with bands forced, prefetch off, each conv its
 * own layer: x [1, M, H, H] -> Conv 1x1 (M -> C) -> Relu -> Conv 1x1
 * (C -> M) -> y, ResNet's layer2 conv3 and the next block's conv1 at half
 * its rows. In the simulator's full mode (arithmetic, race detector over LMEM,
 * SRAM and DRAM) the output is the interpreter's; the second conv's split
 * has a K split and says rows; its segment reads from DRAM at most its
 * weights and bias once per cluster and a quarter of its input (its
 * clusters read their rows from their own SRAM; a spread K split reads
 * about three quarters of the input in every cluster); the cost model's
 * estimate is within 2% of the simulated cycles (timing-only run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_two_layer.h"

static const char *const A1 = "configs/a1.ini";

static void k_split_rows(int H)
{
    const int C = 512, M = 128, clusters = 4;
    IrGraph g;
    /* x [1, M, H, H] -> Conv 1x1 (C) -> Relu -> Conv 1x1 (M) -> y */
    conv1x1_pair_graph(&g, M, H, C, M, 1, "conv2");
    const uint64_t weights = (uint64_t)C * M * 4 + (uint64_t)M * 4, input = (uint64_t)C * H * H * 4;
    BkOptions o;
    bands_options(&o);
    AtlProgram p;
    BkSummary sum;
    if (two_layer_full_run(&g, A1, &o, &p, &sum) == 0) {
        if (sum.nlayers == 2) {
            const char *s = sum.layers[1].split;
            printf("  splits: %s, %s\n", sum.layers[0].split, s);
            CHECKF(strstr(s, " K") && strstr(s, " rows"), "split '%s': no K split in row bands", s);
        }
        /* the second layer's segment (prefetch off) */
        uint64_t rd = dram_reads_in_segment(&p, 1), most = clusters * weights + input / 4;
        printf("  the second layer reads %llu bytes of DRAM (at most %llu)\n", (unsigned long long)rd, (unsigned long long)most);
        CHECKF(rd <= most, "the second layer reads %llu bytes of DRAM, over %llu", (unsigned long long)rd, (unsigned long long)most);
    }
    prog_free(&p);
    bk_summary_free(&sum);
    uint64_t est, sim;
    estimate_within_2pct(&g, A1, &o, &est, &sim);
    ir_free(&g);
}

/* 14 rows: one output tile a core; 28 rows (two row chunks, two column
 * chunks): two a core, of alternating accumulators */
TEST(a_k_split_1x1_takes_row_bands_14_rows)
{
    k_split_rows(14);
}

TEST(a_k_split_1x1_takes_row_bands_28_rows)
{
    k_split_rows(28);
}

int main(void)
{
    RUN(a_k_split_1x1_takes_row_bands_14_rows);
    RUN(a_k_split_1x1_takes_row_bands_28_rows);
    return test_summary("test_backend_krows");
}
