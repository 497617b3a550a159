/* test_int8_wsram.c - an Int8Conv's weight chunks staged in its cluster's
 * SRAM (lower/qmatrix.c, BkLayer.wsram, as lower/conv.c stages float
 * convolutions'): one core per cluster copies each chunk the cluster's
 * tiles use from DRAM before its first load of it, the chunk's other
 * cores wait for its flag, every tile loads its weights from SRAM.
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
 * split has no `wsram`, and the output is the same bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "test/compiler/int8_conv.h"
#include "compiler/schedule/schedule.h"

static const char *const A1 = "configs/a1.ini";

/* Last byte + 1 a DMA reads from its source (byte strides). */
static uint64_t src_end(const AtlInsn *in)
{
    uint64_t end = in->src + (uint64_t)isa_dtype_size(in->dtype);
    for (int d = 0; d < 4; d++) end += (uint64_t)(in->shape[d] - 1) * (uint64_t)in->src_stride[d];
    return end;
}

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
    int cpc = chip.cores_per_cluster;
    if (run(&g, BK_SRAM_ALWAYS, &sum, &p, &y, &ylen) == 0) {
        int r = row_of(&sum, "conv");
        REQUIRE(r >= 0);
        printf("  split %s, DRAM read %llu bytes\n", sum.layers[r].split, (unsigned long long)sum.layers[r].dram_rd);
        CHECKF(strstr(sum.layers[r].split, " wsram"), "split '%s' lacks wsram", sum.layers[r].split);
        CHECKF(!ksplit || strstr(sum.layers[r].split, " K"), "split '%s' does not cut K", sum.layers[r].split);
        /* the weights' DRAM range: what the staging copies read */
        uint64_t lo = UINT64_MAX, hi = 0, staged[64] = {0}, read[64] = {0};
        for (int core = 0; core < p.ncores; core++) {
            const AtlStream *dma = &p.streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
            for (int i = 0; i < dma->count; i++) {
                const AtlInsn *in = &dma->insns[i];
                if (in->op != ISA_OP_DMA_COPY || in->dst_space != ISA_SPACE_SRAM || in->src_space != ISA_SPACE_DRAM) continue;
                if (in->src < lo) lo = in->src;
                if (src_end(in) > hi) hi = src_end(in);
                staged[core / cpc] += isa_shape_bytes(in);
            }
        }
        REQUIRE(lo < hi);
        CHECKF(hi - lo <= wbytes, "the staging copies read %llu bytes of DRAM, the weights are %llu",
               (unsigned long long)(hi - lo), (unsigned long long)wbytes);
        /* each byte of that range read at most once per cluster, by the
         * staging copies alone; SRAM loads after a copy or a wait */
        uint8_t *times = calloc((size_t)chip.clusters * (size_t)(hi - lo), 1);
        REQUIRE(times != NULL);
        int twice = 0, shared = 0;
        for (int core = 0; core < p.ncores; core++) {
            const AtlStream *dma = &p.streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
            int waited = 0, early = 0;
            for (int i = 0; i < dma->count; i++) {
                const AtlInsn *in = &dma->insns[i];
                if (in->op == ISA_OP_NOP && in->wait == BK_SEM_WEIGHTS + 1) waited = 1;
                if (in->op != ISA_OP_DMA_COPY) continue;
                if (in->src_space == ISA_SPACE_DRAM && in->dst_space == ISA_SPACE_SRAM) waited = 1;
                if (in->src_space == ISA_SPACE_DRAM && in->src < hi && src_end(in) > lo) {
                    read[core / cpc] += isa_shape_bytes(in);
                    for (uint32_t a = 0; a < in->shape[0]; a++)
                        for (uint32_t b = 0; b < in->shape[1]; b++)
                            for (uint32_t d = 0; d < in->shape[2]; d++)
                                for (uint32_t f = 0; f < in->shape[3]; f++) {
                                    uint64_t at = in->src + a * (uint64_t)in->src_stride[0] + b * (uint64_t)in->src_stride[1] +
                                                  d * (uint64_t)in->src_stride[2] + f * (uint64_t)in->src_stride[3];
                                    twice += times[(size_t)(core / cpc) * (hi - lo) + (at - lo)]++ > 0;
                                }
                }
                if (in->src_space == ISA_SPACE_SRAM && in->dst_space == ISA_SPACE_LMEM && !in->mask && !waited) early++;
            }
            CHECKF(early == 0, "core %d loads from SRAM before the staging (its own copy or a wait)", core);
        }
        free(times);
        CHECKF(twice == 0, "%d weight bytes read twice from DRAM by one cluster", twice);
        for (int cl = 0; cl < chip.clusters; cl++) {
            printf("  cluster %d: %llu weight bytes read from DRAM\n", cl, (unsigned long long)read[cl]);
            CHECKF(read[cl] == staged[cl] && read[cl] <= wbytes, "cluster %d reads %llu bytes of weights from DRAM, %llu staged",
                   cl, (unsigned long long)read[cl], (unsigned long long)staged[cl]);
        }
        /* some staged chunk (SRAM source) loaded by two cores of a cluster */
        for (int cl = 0; cl < chip.clusters && !shared; cl++)
            for (int a = 0; a < cpc && !shared; a++)
                for (int b = a + 1; b < cpc && !shared; b++) {
                    const AtlStream *da = &p.streams[(cl * cpc + a) * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
                    const AtlStream *db = &p.streams[(cl * cpc + b) * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
                    for (int i = 0; i < da->count && !shared; i++)
                        for (int j = 0; j < db->count && !shared; j++) {
                            const AtlInsn *u = &da->insns[i], *v = &db->insns[j];
                            shared = u->op == ISA_OP_DMA_COPY && v->op == ISA_OP_DMA_COPY && u->src_space == ISA_SPACE_SRAM &&
                                     v->src_space == ISA_SPACE_SRAM && u->dst_space == ISA_SPACE_LMEM && !u->mask &&
                                     u->src == v->src && isa_shape_bytes(u) == isa_shape_bytes(v);
                        }
                }
        CHECKF(shared, "no staged chunk is loaded by two cores of a cluster");
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

int main(void)
{
    RUN(int8_conv_staged_weights_exact_and_read_once_per_cluster);
    return test_summary("test_int8_wsram");
}
