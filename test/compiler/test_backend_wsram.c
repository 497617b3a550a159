/* test_backend_wsram.c - a convolution's weight chunks staged in its
 * cluster's SRAM (lower/conv.c, BkLayer.wsram): the prologue of one core
 * per cluster copies the chunks the cluster's tiles use from DRAM, every
 * tile loads its weights from there.
 *
 * Checked on configs/a1.ini, with BkOptions.sram_weights = always, in the
 * simulator's full mode (arithmetic, timing and the race detector) against
 * the interpreter: a 3x3 convolution 64 -> 64 (28x28) gives the
 * interpreter's results; its split says `wsram`; each cluster reads every
 * weight byte from DRAM at most once (the DMAs reading the weights' DRAM
 * range are the staging copies), tiles load their weights from SRAM after
 * their core's own staging copy or a DMA-stream wait for another's, and
 * some chunk is loaded by two cores of one cluster (the sharing staging
 * is for). With
 * sram_weights = never the same layer has no staging; a bad mode is
 * refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "compiler/schedule/schedule.h"

static const char *const A1 = "configs/a1.ini";

/* Last byte + 1 a DMA reads from its source (byte strides). */
static uint64_t src_end(const AtlInsn *in)
{
    uint64_t end = in->src + (uint64_t)isa_dtype_size(in->dtype);
    for (int d = 0; d < 4; d++) end += (uint64_t)(in->shape[d] - 1) * (uint64_t)in->src_stride[d];
    return end;
}

/* One case: C -> M channels on H x H; ksplit: the chosen split must cut K. */
static void staged_case(int C, int M, int H, int ksplit)
{
    const uint64_t wbytes = (uint64_t)M * C * 9 * 4;
    IrGraph g;
    conv_relu_graph(&g, C, H, H, M, 3);
    BkSummary sum;
    AtlProgram p;
    BkOptions o;
    bk_options_default(&o);
    o.sram_weights = BK_SRAM_ALWAYS;
    int rc = run_one_layer(&g, A1, &o, 2e-5, " wsram", &p, &sum);
    if (rc == 0) {
        CHECKF(!ksplit || strstr(sum.layers[0].split, " K"), "split '%s' does not cut K", sum.layers[0].split);
        AtlChip chip;
        AtlErr e;
        REQUIRE(cfg_load(A1, &chip, &e) == 0);
        int cpc = chip.cores_per_cluster;
        /* the weights' DRAM range: what the staging copies read */
        uint64_t lo = UINT64_MAX, hi = 0, staged[64] = {0};
        int stagers[64] = {0};
        for (int core = 0; core < p.ncores; core++) {
            const AtlStream *dma = &p.streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
            int copies = 0;
            for (int i = 0; i < dma->count; i++) {
                const AtlInsn *in = &dma->insns[i];
                if (in->op != ISA_OP_DMA_COPY || in->dst_space != ISA_SPACE_SRAM || in->src_space != ISA_SPACE_DRAM) continue;
                if (in->src < lo) lo = in->src;
                if (src_end(in) > hi) hi = src_end(in);
                staged[core / cpc] += isa_shape_bytes(in);
                copies++;
            }
            stagers[core / cpc] += copies > 0;
        }
        REQUIRE(lo < hi);
        CHECKF(hi - lo <= wbytes, "the staging copies read %llu bytes of DRAM, the weights are %llu", (unsigned long long)(hi - lo),
               (unsigned long long)wbytes);
        /* every read of that range is a staging copy (no tile reads
         * weights from DRAM), each byte at most once per cluster; a core
         * loads from SRAM only after its own staging copy or a wait */
        uint64_t read[64] = {0};
        int shared = 0, twice = 0;
        uint8_t *times = calloc((size_t)chip.clusters * (size_t)(hi - lo), 1);
        REQUIRE(times != NULL);
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
                    uint64_t es = (uint64_t)isa_dtype_size(in->dtype);
                    for (uint32_t a = 0; a < in->shape[0]; a++)
                        for (uint32_t b = 0; b < in->shape[1]; b++)
                            for (uint32_t d = 0; d < in->shape[2]; d++)
                                for (uint32_t f = 0; f < in->shape[3]; f++) {
                                    uint64_t at = in->src + a * (uint64_t)in->src_stride[0] + b * (uint64_t)in->src_stride[1] +
                                                  d * (uint64_t)in->src_stride[2] + f * (uint64_t)in->src_stride[3];
                                    for (uint64_t x = 0; x < es; x++)
                                        twice += times[(size_t)(core / cpc) * (hi - lo) + (at + x - lo)]++ > 0;
                                }
                }
                if (in->src_space == ISA_SPACE_SRAM && in->dst_space == ISA_SPACE_LMEM && !in->mask && !waited) early++;
            }
            CHECKF(early == 0, "core %d loads from SRAM before the staging (its own copy or a wait)", core);
        }
        free(times);
        CHECKF(twice == 0, "%d weight bytes read twice from DRAM by one cluster", twice);
        for (int cl = 0; cl < chip.clusters; cl++) {
            printf("  cluster %d: %llu weight bytes read from DRAM (%d core(s) copy)\n", cl, (unsigned long long)read[cl],
                   stagers[cl]);
            CHECKF(read[cl] == staged[cl], "cluster %d reads %llu bytes of weights from DRAM, %llu of them staged", cl,
                   (unsigned long long)read[cl], (unsigned long long)staged[cl]);
            CHECKF(read[cl] <= wbytes, "cluster %d reads %llu weight bytes (> %llu)", cl, (unsigned long long)read[cl],
                   (unsigned long long)wbytes);
        }
        /* some staged chunk (SRAM source address) loaded by two cores of a cluster */
        for (int cl = 0; cl < chip.clusters && !shared; cl++)
            for (int a = 0; a < cpc && !shared; a++)
                for (int b = a + 1; b < cpc && !shared; b++) {
                    const AtlStream *da = &p.streams[(cl * cpc + a) * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
                    const AtlStream *db = &p.streams[(cl * cpc + b) * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
                    for (int i = 0; i < da->count && !shared; i++)
                        for (int j = 0; j < db->count && !shared; j++) {
                            const AtlInsn *x = &da->insns[i], *y = &db->insns[j];
                            shared = x->op == ISA_OP_DMA_COPY && y->op == ISA_OP_DMA_COPY && x->src_space == ISA_SPACE_SRAM &&
                                     y->src_space == ISA_SPACE_SRAM && x->dst_space == ISA_SPACE_LMEM && !x->mask &&
                                     x->src == y->src && isa_shape_bytes(x) == isa_shape_bytes(y);
                        }
                }
        CHECKF(shared, "no staged chunk is loaded by two cores of a cluster");
        prog_free(&p);
    }
    if (rc == 0 && !ksplit) {
        /* never: no staging */
        IrGraph g2;
        conv_relu_graph(&g2, C, H, H, M, 3);
        BkOptions o2;
        bk_options_default(&o2);
        o2.sram_weights = BK_SRAM_NEVER;
        BkSummary s2;
        memset(&s2, 0, sizeof s2);
        char m2[1024] = "";
        double err2;
        REQUIRE(e2e_graph_run(&g2, A1, &o2, &err2, NULL, &s2, m2, sizeof m2) == 0);
        printf("  never: split %s, DRAM read %llu bytes\n", s2.layers[0].split, (unsigned long long)s2.layers[0].dram_rd);
        CHECKF(!strstr(s2.layers[0].split, "wsram"), "never staged: %s", s2.layers[0].split);
        bk_summary_free(&s2);
        ir_free(&g2);
    }
    bk_summary_free(&sum);
    ir_free(&g);
}

TEST(staged_weights_conv_matches_the_interpreter_and_reads_weights_once_per_cluster)
{
    staged_case(64, 64, 28, 0);
    staged_case(256, 256, 14, 1);   /* layer3's 3x3: a key per k chunk, staged as the tiles use them */
}

/* Input and weights both staged (BkOptions.sram_input and sram_weights =
 * always: only that pair is offered): the weights' slots lie above the
 * staged input, so the layer still gives the interpreter's results (full
 * mode: an overlap would corrupt one of them, a tile reading either
 * before it landed would trip the race detector), its split says both,
 * and it reads less DRAM than with the weights alone staged (each tile
 * reads its input from DRAM again then). */
static uint64_t staged_dram(int st, const char *want)
{
    IrGraph g;
    conv_relu_graph(&g, 64, 28, 28, 128, 3);
    BkOptions o;
    bk_options_default(&o);
    o.sram_weights = BK_SRAM_ALWAYS;
    o.sram_input = st ? BK_SRAM_ALWAYS : BK_SRAM_AUTO;
    BkSummary sum;
    AtlProgram p;
    uint64_t rd = 0;
    if (run_one_layer(&g, A1, &o, 2e-5, want, &p, &sum) == 0) {
        rd = sum.layers[0].dram_rd;
        prog_free(&p);
    }
    bk_summary_free(&sum);
    ir_free(&g);
    return rd;
}

TEST(input_and_weights_staged_together_match_the_interpreter_and_read_less)
{
    uint64_t both = staged_dram(1, " sram wsram"), ws = staged_dram(0, " wsram");
    printf("  DRAM read: both staged %llu, weights only %llu\n", (unsigned long long)both, (unsigned long long)ws);
    CHECKF(both > 0 && both < ws, "both staged read %llu bytes, weights only %llu", (unsigned long long)both,
           (unsigned long long)ws);
}

TEST(a_bad_sram_weights_mode_is_refused)
{
    IrGraph g;
    conv_relu_graph(&g, 8, 8, 8, 8, 3);
    BkOptions o;
    bk_options_default(&o);
    o.sram_weights = 5;
    CHECK(e2e_refused(&g, A1, &o, "SRAM weights mode 5"));
    ir_free(&g);
}

int main(void)
{
    RUN(staged_weights_conv_matches_the_interpreter_and_reads_weights_once_per_cluster);
    RUN(input_and_weights_staged_together_match_the_interpreter_and_read_less);
    RUN(a_bad_sram_weights_mode_is_refused);
    return test_summary("test_backend_wsram");
}
