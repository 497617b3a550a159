/* test_backend_band_reads.c - layers reading an input kept in the
 * clusters' SRAM (--sram-activations bands; docs/backend.md, "Row and
 * channel bands in every cluster") read from DRAM no more than they use:
 * a strided 1x1 convolution (ResNet's downsample; "Convs: tiles of several
 * images, strided 1x1 compacted") loads only every sh-th row and sw-th
 * column (BkLow.compact, the band rewrite walking rows by a step), and the
 * gather of a staged input moves only those cells; a GlobalAveragePool
 * loads its input as channels x rows (lower/vec.c), so the cells its
 * cluster keeps come from SRAM and its producer does not store them to
 * DRAM.
 *
 * Checked on configs/a1.ini with bands forced and prefetch off (each
 * layer's copies in its own segment): x [1, C, H, H] -> Conv 1x1 -> Relu
 * -> Conv 1x1 stride 2 (M outputs) -> y, each conv its own layer. In the
 * simulator's full mode (arithmetic, race detector over LMEM, SRAM and
 * DRAM) the output is the interpreter's; the downsample's split says it is
 * banded; what its segment reads from DRAM is at most its weights and
 * bias plus its strided input (a quarter of the tensor) once per cluster
 * (before, its loads and gather read the whole input in every cluster:
 * three times that); the cost model's estimate is within 2% of the
 * simulated cycles (timing-only run). And x [1, C, 7, 7] -> Conv 1x1 (M)
 * -> Relu -> GlobalAveragePool -> y: the interpreter's output; the conv
 * banded by channels; the pool's segment reads less than half its input
 * from DRAM (before, all of it, the conv storing all of its output to DRAM
 * for it), the estimate within 2%. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_two_layer.h"

static const char *const A1 = "configs/a1.ini";

/* x [1, C, H, H] -> Conv 1x1 (M) -> Relu -> GlobalAveragePool -> y */
static void pool_graph(IrGraph *g, int C, int H, int M)
{
    AtlErr e;
    int64_t xd[4] = {1, C, H, H}, w1[4] = {M, C, 1, 1}, b1[1] = {M};
    new_graph(g, "x", 4, xd);
    cst(g, "w1", 4, w1, 0.05f);
    cst(g, "b1", 1, b1, 0.2f);
    ir_add_op(g, "Conv", "conv1", "x,w1,b1", "c1", &e);
    ir_add_op(g, "Relu", "relu1", "c1", "r1", &e);
    ir_add_op(g, "GlobalAveragePool", "pool", "r1", "y", &e);
    ir_add_output(g, "y", &e);
}

/* Compiles g (two layers) with bands forced, prefetch off, each layer its
 * own segment; runs it in full mode against the interpreter and checks
 * that the second layer's split holds `want` and its segment reads at most
 * `most` bytes from DRAM; then timing-only: the estimate within 2%. */
static void second_layer_reads(IrGraph *g, const char *want, uint64_t most)
{
    BkOptions o;
    bands_options(&o);
    AtlProgram p;
    BkSummary sum;
    if (two_layer_full_run(g, A1, &o, &p, &sum) == 0) {
        if (sum.nlayers == 2) {
            printf("  splits: %s, %s\n", sum.layers[0].split, sum.layers[1].split);
            CHECKF(strstr(sum.layers[1].split, want), "split '%s' has no '%s'", sum.layers[1].split, want);
        }
        uint64_t rd = dram_reads_in_segment(&p, 1);
        printf("  the second layer reads %llu bytes of DRAM (at most %llu)\n", (unsigned long long)rd, (unsigned long long)most);
        CHECKF(rd <= most, "the second layer reads %llu bytes of DRAM, over %llu", (unsigned long long)rd, (unsigned long long)most);
    }
    prog_free(&p);
    bk_summary_free(&sum);
    uint64_t est, sim;
    estimate_within_2pct(g, A1, &o, &est, &sim);
}

/* before: 1,128,448 bytes (its loads and gather read the whole input in
 * every cluster), now 676,864 */
TEST(a_strided_1x1_under_bands_reads_only_its_strided_input)
{
    const int C = 256, H = 14, M = 512, clusters = 4;
    IrGraph g;
    /* x [1, C, H, H] -> Conv 1x1 (C) -> Relu -> Conv 1x1 stride 2 (M) -> y */
    conv1x1_pair_graph(&g, C, H, C, M, 2, "down");
    const uint64_t weights = (uint64_t)M * C * 4 + (uint64_t)M * 4, strided = (uint64_t)C * (H / 2) * (H / 2) * 4;
    printf("  weights + bias %llu bytes, strided input %llu, whole input %llu\n", (unsigned long long)weights,
           (unsigned long long)strided, (unsigned long long)(4 * strided));
    second_layer_reads(&g, " chans", weights + clusters * strided);
    ir_free(&g);
}

/* before: all of its input (100,352 bytes) */
TEST(a_global_average_pool_after_channel_bands_reads_its_input_from_sram)
{
    const int C = 256, H = 7, M = 512;
    IrGraph g;
    pool_graph(&g, C, H, M);
    const uint64_t input = (uint64_t)M * H * H * 4;
    printf("  pool input %llu bytes\n", (unsigned long long)input);
    second_layer_reads(&g, "rows", input / 2);
    ir_free(&g);
}

int main(void)
{
    RUN(a_strided_1x1_under_bands_reads_only_its_strided_input);
    RUN(a_global_average_pool_after_channel_bands_reads_its_input_from_sram);
    return test_summary("test_backend_band_reads");
}
