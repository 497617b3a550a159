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
#include <math.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "test/compiler/bk_timing_run.h"

static const char *const A1 = "configs/a1.ini";

/* x [1, M, H, H] -> Conv 1x1 (C) -> Relu -> Conv 1x1 (M) -> y */
static void pair_graph(IrGraph *g, int C, int H, int M)
{
    AtlErr e;
    int64_t xd[4] = {1, M, H, H}, w1[4] = {C, M, 1, 1}, w2[4] = {M, C, 1, 1}, b1[1] = {C}, b2[1] = {M};
    new_graph(g, "x", 4, xd);
    cst(g, "w1", 4, w1, 0.05f);
    cst(g, "b1", 1, b1, 0.2f);
    cst(g, "w2", 4, w2, 0.05f);
    cst(g, "b2", 1, b2, 0.2f);
    ir_add_op(g, "Conv", "conv1", "x,w1,b1", "c1", &e);
    ir_add_op(g, "Relu", "relu1", "c1", "r1", &e);
    ir_add_op(g, "Conv", "conv2", "r1,w2,b2", "y", &e);
    ir_add_output(g, "y", &e);
}

/* Bytes the DMAs of every core read from DRAM after its first barrier
 * (the second layer's segment, prefetch off). */
static uint64_t dram_reads_after_first_barrier(const AtlProgram *p)
{
    uint64_t bytes = 0;
    for (int core = 0; core < p->ncores; core++) {
        const AtlStream *dma = &p->streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
        int seg = 0;
        for (int i = 0; i < dma->count; i++) {
            const AtlInsn *in = &dma->insns[i];
            if (in->op == ISA_OP_BARRIER) seg++;
            if (seg == 1 && in->op == ISA_OP_DMA_COPY && in->src_space == ISA_SPACE_DRAM) bytes += isa_shape_bytes(in);
        }
    }
    return bytes;
}

static void k_split_rows(int H)
{
    const int C = 512, M = 128, clusters = 4;
    IrGraph g;
    pair_graph(&g, C, H, M);
    const uint64_t weights = (uint64_t)C * M * 4 + (uint64_t)M * 4, input = (uint64_t)C * H * H * 4;
    BkOptions o;
    bk_options_default(&o);
    o.sram_acts = BK_SRAM_ACTS_BANDS;
    o.prefetch = BK_PREFETCH_NEVER;
    o.group_max = 1;
    AtlProgram p;
    BkSummary sum;
    memset(&p, 0, sizeof p);
    memset(&sum, 0, sizeof sum);
    double err = -1;
    char msg[1024] = "";
    int rc = e2e_graph_run(&g, A1, &o, &err, &p, &sum, msg, sizeof msg);
    CHECKF(rc == 0, "%s", msg);
    if (rc == 0) {
        printf("  err %.3g, layers %d\n", err, sum.nlayers);
        CHECKF(err <= 2e-5, "error %g", err);
        CHECKF(sum.nlayers == 2, "%d layers, want 2", sum.nlayers);
        if (sum.nlayers == 2) {
            const char *s = sum.layers[1].split;
            printf("  splits: %s, %s\n", sum.layers[0].split, s);
            CHECKF(strstr(s, " K") && strstr(s, " rows"), "split '%s': no K split in row bands", s);
        }
        uint64_t rd = dram_reads_after_first_barrier(&p), most = clusters * weights + input / 4;
        printf("  the second layer reads %llu bytes of DRAM (at most %llu)\n", (unsigned long long)rd, (unsigned long long)most);
        CHECKF(rd <= most, "the second layer reads %llu bytes of DRAM, over %llu", (unsigned long long)rd, (unsigned long long)most);
    }
    prog_free(&p);
    bk_summary_free(&sum);
    AtlChip chip;
    AtlErr e = {{0}};
    BkTimingRun r;
    memset(&r, 0, sizeof r);
    int rc2 = cfg_load(A1, &chip, &e) || bk_timing_run_opts(&g, &chip, &o, &r, &e) ? -1 : 0;
    CHECKF(rc2 == 0, "%s", e.msg);
    if (rc2 == 0) {
        uint64_t est = r.sum.est_cycles, sim = sim_stats(r.sim)->cycles;
        printf("  estimate %llu, simulated %llu cycles\n", (unsigned long long)est, (unsigned long long)sim);
        CHECKF(fabs((double)est - (double)sim) <= 0.02 * (double)sim, "estimate %llu, simulated %llu: beyond 2%%",
               (unsigned long long)est, (unsigned long long)sim);
    }
    bk_timing_run_free(&r);
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
