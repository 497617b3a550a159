/* test_int8_wsram.c - int8 weights staged in cluster SRAM. An Int8Conv's
 * weight chunks staged in its cluster's SRAM (lower/qmatrix.c,
 * BkLayer.wsram, as lower/conv.c stages float convolutions'): one core
 * per cluster copies each chunk the cluster's tiles use from DRAM before
 * its first load of it, the chunk's other cores wait for its flag, every
 * tile loads its weights from SRAM.
 *
 * On configs/a1.ini with BkOptions.sram_weights = always, in the
 * simulator's full mode (arithmetic, timing, the race detector): a 3x3
 * Int8Conv 64 -> 64 on 28x28 and a 256 -> 256 on 14x14 (layer3's, its K
 * cut) between a QuantizeLinear and a DequantizeLinear give the
 * interpreter's output exactly; the convolution's split says `wsram`;
 * every DMA reading its weights from DRAM is a staging copy into SRAM,
 * each cluster reading each weight byte at most once; no core loads from
 * SRAM before its own staging copy or a wait for another's; some chunk
 * is loaded by two cores of one cluster. With sram_weights = never the
 * split has no `wsram`, and the output is the same bit for bit.
 *
 * And an int8 layer group's streamed weights staged once per cluster
 * (lower/chain.c, BkChain.ws; int8_streamed_group_...): see its comment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "test/compiler/int8_conv.h"
#include "test/compiler/wsram_check.h"
#include "compiler/schedule/schedule.h"

static const char *const A1 = "configs/a1.ini";

/* x [1, C, H, H] f32 -> int8 -> 3x3 Int8Conv "conv" C -> M + Relu -> f32. */
static void graph(IrGraph *g, int C, int M, int H)
{
    int64_t xd[4] = {1, C, H, H};
    new_graph(g, "x", 4, xd);
    i8_quantize_input(g, "x", "xq");
    i8_conv(g, &rng, "conv", "xq", C, M, 3, 1, -3, 4, 1, "o");
    i8_dequantize_output(g, "o", "out");
}

/* The summary row of layer `name`, or -1. */
static int row_of(const BkSummary *s, const char *name)
{
    for (int i = 0; i < s->nlayers; i++)
        if (!strcmp(s->layers[i].name, name)) return i;
    return -1;
}

/* Compiles and runs g on a1 with the SRAM weights mode; 0 and the output
 * bytes in *y (exactly the interpreter's), the program in *p. */
static int run(IrGraph *g, int mode, BkSummary *sum, AtlProgram *p, uint8_t **y, size_t *ylen)
{
    BkOptions o;
    bk_options_default(&o);
    o.sram_weights = mode;
    double err = -1;
    char msg[1024] = "";
    memset(sum, 0, sizeof *sum);
    memset(p, 0, sizeof *p);
    int rc = e2e_graph_run_y(g, A1, &o, &err, p, sum, msg, sizeof msg, y, ylen);
    CHECKF(rc == 0, "%s", msg);
    if (rc == 0) CHECKF(err == 0, "error %g against the interpreter", err);
    return rc;
}

static void staged_case(int C, int M, int H, int ksplit)
{
    const uint64_t wbytes = (uint64_t)M * C * 9;
    IrGraph g;
    graph(&g, C, M, H);
    BkSummary sum, s2;
    AtlProgram p, p2;
    uint8_t *y = NULL, *y2 = NULL;
    size_t ylen = 0, y2len = 0;
    AtlChip chip;
    AtlErr e;
    REQUIRE(cfg_load(A1, &chip, &e) == 0);
    if (run(&g, BK_SRAM_ALWAYS, &sum, &p, &y, &ylen) == 0) {
        int r = row_of(&sum, "conv");
        REQUIRE(r >= 0);
        printf("  split %s, DRAM read %llu bytes\n", sum.layers[r].split, (unsigned long long)sum.layers[r].dram_rd);
        CHECKF(strstr(sum.layers[r].split, " wsram"), "split '%s' lacks wsram", sum.layers[r].split);
        CHECKF(!ksplit || strstr(sum.layers[r].split, " K"), "split '%s' does not cut K", sum.layers[r].split);
        wsram_check_program(&p, &chip, wbytes);
        prog_free(&p);
    }
    if (run(&g, BK_SRAM_NEVER, &s2, &p2, &y2, &y2len) == 0) {
        int r = row_of(&s2, "conv");
        REQUIRE(r >= 0);
        printf("  never: split %s, DRAM read %llu bytes\n", s2.layers[r].split, (unsigned long long)s2.layers[r].dram_rd);
        CHECKF(!strstr(s2.layers[r].split, "wsram"), "never staged: %s", s2.layers[r].split);
        CHECK(y && y2 && ylen == y2len && !memcmp(y, y2, ylen));
        prog_free(&p2);
    }
    free(y);
    free(y2);
    bk_summary_free(&sum);
    bk_summary_free(&s2);
    ir_free(&g);
}

TEST(int8_conv_staged_weights_exact_and_read_once_per_cluster)
{
    staged_case(64, 64, 28, 0);
    staged_case(256, 256, 14, 1);
}

/* The DMAs of p reading DRAM into SRAM: per cluster the bytes (staged[]),
 * and over all, the source range [*lo, *hi). */
static void staging_copies(const AtlProgram *p, int cpc, uint64_t *staged, uint64_t *lo, uint64_t *hi)
{
    *lo = UINT64_MAX;
    *hi = 0;
    for (int core = 0; core < p->ncores; core++) {
        const AtlStream *dma = &p->streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
        for (int i = 0; i < dma->count; i++) {
            const AtlInsn *in = &dma->insns[i];
            if (in->op != ISA_OP_DMA_COPY || in->dst_space != ISA_SPACE_SRAM || in->src_space != ISA_SPACE_DRAM) continue;
            if (in->src < *lo) *lo = in->src;
            if (wsram_src_end(in) > *hi) *hi = wsram_src_end(in);
            staged[core / cpc] += isa_shape_bytes(in);
        }
    }
}

/* An int8 layer group forced to stream its weights (lower/chain.c,
 * BkChain.ws): x [1, 16, 61, 12] -> 3x3 Int8Conv 16 -> 64 + Relu -> 3x3
 * Int8Conv 64 -> 64, on a1 with --group-weights stream, the DRAM plan,
 * its chunks from DRAM (--sram-weights never) and staged in each
 * cluster's SRAM (always; split ` wsram`). Each the interpreter's output
 * exactly, both bit for bit --group none's; staged, every DRAM read of
 * the staged range is a staging copy and each cluster running the group
 * reads each byte of it once (the weights' size times the clusters). */
TEST(int8_streamed_group_stages_its_weights_once_per_cluster)
{
    IrGraph g;
    int64_t xd[4] = {1, 16, 61, 12};
    new_graph(&g, "x", 4, xd);
    i8_quantize_input(&g, "x", "xq");
    i8_conv(&g, &rng, "s1", "xq", 16, 128, 3, 1, -3, -128, 1, "a");
    i8_conv(&g, &rng, "s2", "a", 128, 128, 3, 1, -128, 4, 0, "o");
    i8_dequantize_output(&g, "o", "out");
    /* xq an output too: the group's output may not take its bytes
     * (which a chain refuses) */
    AtlErr e;
    ir_add_output(&g, "xq", &e);
    AtlChip chip;
    REQUIRE(cfg_load(A1, &chip, &e) == 0);
    int cpc = chip.cores_per_cluster;
    uint8_t *y[3] = {NULL, NULL, NULL};
    size_t ylen[3] = {0, 0, 0};
    static const char *const how[3] = {"group none", "chunks from DRAM", "staged"};
    for (int way = 0; way < 3; way++) {
        BkOptions o;
        bk_options_default(&o);
        o.group = way ? BK_GROUP_AUTO : BK_GROUP_NONE;
        o.group_weights = BK_GW_STREAM;
        o.placement = BK_PLACE_CHIP;
        o.sram_acts = BK_SRAM_ACTS_NEVER;
        o.sram_weights = way == 2 ? BK_SRAM_ALWAYS : BK_SRAM_NEVER;
        BkSummary sum;
        AtlProgram p;
        double err = -1;
        char msg[1024] = "";
        memset(&sum, 0, sizeof sum);
        memset(&p, 0, sizeof p);
        int rc = e2e_graph_run_y(&g, A1, &o, &err, &p, &sum, msg, sizeof msg, &y[way], &ylen[way]);
        CHECKF(rc == 0, "%s: %s", how[way], msg);
        if (rc) continue;
        CHECKF(err == 0, "%s: error %g against the interpreter", how[way], err);
        int gi = -1;
        for (int i = 0; i < sum.nlayers; i++)
            if (strstr(sum.layers[i].split, " x2")) gi = i;
        if (way) {
            CHECKF(gi >= 0 && strstr(sum.layers[gi].split, " w"), "%s: no streaming group", how[way]);
            if (gi >= 0) {
                printf("  %s: split %s\n", how[way], sum.layers[gi].split);
                CHECKF((strstr(sum.layers[gi].split, " wsram") != NULL) == (way == 2), "%s: split '%s'", how[way],
                       sum.layers[gi].split);
            }
        }
        if (way == 2) {
            /* the bytes the staging copies read (DRAM -> SRAM), then every
             * DRAM read of them: each cluster that runs the group reads
             * each once, into SRAM; their count the streamed weights' */
            uint64_t staged[64] = {0}, lo, hi;
            staging_copies(&p, cpc, staged, &lo, &hi);
            REQUIRE(lo < hi);
            uint64_t span = hi - lo;
            uint8_t *mark = calloc((size_t)span, 1), *times = calloc((size_t)chip.clusters * (size_t)span, 1);
            REQUIRE(mark && times);
            for (int pass = 0; pass < 2; pass++)
                for (int core = 0; core < p.ncores; core++) {
                    const AtlStream *dma = &p.streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
                    for (int i = 0; i < dma->count; i++) {
                        const AtlInsn *in = &dma->insns[i];
                        if (in->op != ISA_OP_DMA_COPY || in->src_space != ISA_SPACE_DRAM || in->src >= hi || wsram_src_end(in) <= lo) continue;
                        int copy = in->dst_space == ISA_SPACE_SRAM;
                        if (!pass && !copy) continue;
                        for (uint32_t a = 0; a < in->shape[0]; a++)
                            for (uint32_t b = 0; b < in->shape[1]; b++)
                                for (uint32_t d = 0; d < in->shape[2]; d++)
                                    for (uint32_t f = 0; f < in->shape[3]; f++) {
                                        uint64_t at = in->src + a * (uint64_t)in->src_stride[0] + b * (uint64_t)in->src_stride[1] +
                                                      d * (uint64_t)in->src_stride[2] + f * (uint64_t)in->src_stride[3] - lo;
                                        if (!pass) mark[at] = 1;
                                        else if (mark[at]) {
                                            CHECKF(copy, "core %d reads staged weights from DRAM into LMEM", core);
                                            times[(size_t)(core / cpc) * span + at]++;
                                        }
                                    }
                    }
                }
            uint64_t bytes = 0, total = 0;
            int clusters = 0, bad = 0;
            for (uint64_t at = 0; at < span; at++) bytes += mark[at];
            for (int cl = 0; cl < chip.clusters; cl++) {
                if (!staged[cl]) continue;
                clusters++;
                total += staged[cl];
                for (uint64_t at = 0; at < span; at++) bad += mark[at] && times[(size_t)cl * span + at] != 1;
            }
            free(mark);
            free(times);
            printf("  staged: %llu weight bytes read from DRAM by %d clusters, %llu distinct\n", (unsigned long long)total,
                   clusters, (unsigned long long)bytes);
            CHECKF(clusters > 1 && bad == 0, "%d staged bytes not read exactly once by a cluster (%d clusters)", bad, clusters);
            CHECKF(bytes == (uint64_t)(16 + 128) * 128 * 9 && total == bytes * (uint64_t)clusters,
                   "%llu distinct bytes staged, %llu read: not the streamed weights once per cluster", (unsigned long long)bytes,
                   (unsigned long long)total);
        }
        prog_free(&p);
        bk_summary_free(&sum);
    }
    for (int way = 1; way < 3; way++)
        CHECKF(y[way] && y[0] && ylen[way] == ylen[0] && !memcmp(y[way], y[0], ylen[0]), "%s: not --group none's output",
               how[way]);
    for (int way = 0; way < 3; way++) free(y[way]);
    ir_free(&g);
}

int main(void)
{
    RUN(int8_conv_staged_weights_exact_and_read_once_per_cluster);
    RUN(int8_streamed_group_stages_its_weights_once_per_cluster);
    return test_summary("test_int8_wsram");
}
