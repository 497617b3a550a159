/* test_backend_sram.c - a convolution's input copied to the cluster's
 * SRAM (lower/conv.c, BkLayer.in_sram): copied from DRAM once per
 * cluster by the prologue, read by every tile from there.
 *
 * Checked on configs/a1.ini against the interpreter, in the simulator's
 * full mode: a ResNet-50 layer3-sized 3x3 convolution compiled with
 * BkOptions.sram_input = always (its tiles are output-channel chunks that
 * would each re-read the input from DRAM) gives the interpreter's results; the program has the
 * copy (DRAM -> SRAM) on one core per cluster, tile loads from
 * SRAM, and on every core that runs tiles a DMA-stream nop waiting on the
 * prologue's signal before its first load; DRAM reads are fewer than the
 * same layer's with SRAM inputs never; --group none never copies (that
 * schedule keeps the per-layer plan of before). A layer whose tiles read
 * the input once (one output-channel chunk) is not copied even with
 * always.
 * At batch > 1 (no bands) a K-split convolution's staged input is copied
 * in pieces, one per K chunk of every image, each flagged (lower/conv.c
 * bk_conv_stage_pieces): a layer4-sized 3x3 convolution at batch 4 takes
 * them (" g<n>"), gives the interpreter's results race-free, and its
 * tiles wait once a piece before loading (more waits than with the copy
 * whole, which it takes at batch 1). */
#include <stdio.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "compiler/schedule/schedule.h"

static const char *const A1 = "configs/a1.ini";

/* Compiles (options o) and returns the summary of g on a1; 0 or -1. */
static int compile_only(IrGraph *g, const BkOptions *o, BkSummary *sum)
{
    AtlErr e;
    AtlChip chip;
    if (cfg_load(A1, &chip, &e) || ir_toposort(g, &e) || ir_infer_shapes(g, &e) || pass_run_all(g, &e)) return -1;
    AbmWriter *w = abm_writer_new(cfg_fingerprint(&chip));
    int rc = !w || bk_compile(g, &chip, o, w, sum, &e) ? -1 : 0;
    if (rc) printf("  compile: %s\n", e.msg);
    abm_writer_free(w);
    return rc;
}

TEST(sram_input_conv_matches_the_interpreter)
{
    IrGraph g;
    conv_relu_graph(&g, 256, 14, 14, 256, 3);
    BkSummary sum;
    AtlProgram p;
    BkOptions o;
    bk_options_default(&o);
    o.sram_input = BK_SRAM_ALWAYS;
    int rc = run_one_layer(&g, A1, &o, 2e-5, " sram", &p, &sum);
    if (rc == 0) {
        AtlChip chip;
        AtlErr e;
        REQUIRE(cfg_load(A1, &chip, &e) == 0);
        int cpc = chip.cores_per_cluster, copied[64] = {0}, from_sram[64] = {0}, waits[64] = {0};
        for (int core = 0; core < p.ncores; core++) {
            const AtlStream *dma = &p.streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
            int loads_before_wait = 0, waited = 0;
            for (int i = 0; i < dma->count; i++) {
                const AtlInsn *in = &dma->insns[i];
                if (in->op == ISA_OP_NOP && in->wait == BK_SEM_WEIGHTS + 1) { waits[core]++; waited = 1; }
                if (in->op != ISA_OP_DMA_COPY) continue;
                if (in->dst_space == ISA_SPACE_SRAM && in->src_space == ISA_SPACE_DRAM) copied[core / cpc]++;
                if (in->src_space == ISA_SPACE_SRAM && in->dst_space == ISA_SPACE_LMEM && !in->mask) {
                    from_sram[core]++;
                    if (!waited) loads_before_wait++;
                }
            }
            CHECKF(loads_before_wait == 0, "core %d loads from SRAM before waiting for the copy", core);
            CHECKF(!from_sram[core] || waits[core] == 1, "core %d: %d waits", core, waits[core]);
        }
        for (int cl = 0; cl < chip.clusters; cl++) CHECKF(copied[cl] >= 1, "cluster %d copies nothing", cl);
        int tiles = 0;
        for (int core = 0; core < p.ncores; core++) tiles += from_sram[core] > 0;
        CHECKF(tiles == p.ncores, "%d of %d cores load from SRAM", tiles, p.ncores);
        prog_free(&p);
        /* SRAM inputs never, and --group none: more DRAM reads, no copy */
        for (int mode = 0; mode < 2; mode++) {
            IrGraph g2;
            conv_relu_graph(&g2, 256, 14, 14, 256, 3);
            BkOptions o2;
            bk_options_default(&o2);
            if (mode == 0) o2.sram_input = BK_SRAM_NEVER;
            else { o2.group = BK_GROUP_NONE; o2.sram_input = BK_SRAM_ALWAYS; }
            BkSummary s2;
            memset(&s2, 0, sizeof s2);
            REQUIRE(compile_only(&g2, &o2, &s2) == 0);
            printf("  %s: split %s, DRAM read %llu bytes\n", mode ? "--group none" : "SRAM never", s2.layers[0].split,
                   (unsigned long long)s2.layers[0].dram_rd);
            CHECKF(!strstr(s2.layers[0].split, " sram"), "mode %d copied: %s", mode, s2.layers[0].split);
            CHECKF(s2.layers[0].dram_rd > sum.layers[0].dram_rd, "SRAM input read %llu >= %llu", (unsigned long long)sum.layers[0].dram_rd,
                   (unsigned long long)s2.layers[0].dram_rd);
            bk_summary_free(&s2);
            ir_free(&g2);
        }
    }
    bk_summary_free(&sum);
    ir_free(&g);
}

TEST(a_single_read_input_stays_in_dram)
{
    IrGraph g;
    conv_relu_graph(&g, 32, 64, 16, 16, 1);
    BkOptions o;
    bk_options_default(&o);
    o.sram_input = BK_SRAM_ALWAYS;
    BkSummary sum;
    memset(&sum, 0, sizeof sum);
    REQUIRE(compile_only(&g, &o, &sum) == 0);
    printf("  1x1 conv, 16 outputs: split %s\n", sum.layers[0].split);
    CHECKF(strstr(sum.layers[0].split, " C1 ") && !strstr(sum.layers[0].split, " sram"), "split %s", sum.layers[0].split);
    bk_summary_free(&sum);
    ir_free(&g);
}

TEST(a_bad_sram_input_mode_is_refused)
{
    IrGraph g;
    conv_relu_graph(&g, 8, 8, 8, 8, 3);
    BkOptions o;
    bk_options_default(&o);
    o.sram_input = 7;
    BkSummary sum;
    memset(&sum, 0, sizeof sum);
    CHECK(compile_only(&g, &o, &sum) != 0);
    bk_summary_free(&sum);
    ir_free(&g);
}

/* x [N, C, H, W] -> Conv 3x3 pad 1, M outputs -> Relu -> y */
static void conv_batch_graph(IrGraph *g, int N, int C, int H, int W, int M)
{
    AtlErr e;
    int64_t xd[4] = {N, C, H, W}, wd[4] = {M, C, 3, 3}, bd[1] = {M}, pads[4] = {1, 1, 1, 1};
    new_graph(g, "x", 4, xd);
    cst(g, "w", 4, wd, 0.02f);
    cst(g, "b", 1, bd, 0.2f);
    int n = ir_add_op(g, "Conv", "conv", "x,w,b", "c", &e);
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "relu", "c", "y", &e);
    ir_add_output(g, "y", &e);
}

/* The most waits for the input's semaphore on one core's DMA stream. */
static int most_input_waits(const AtlProgram *p)
{
    int most = 0;
    for (int core = 0; core < p->ncores; core++) {
        const AtlStream *dma = &p->streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
        int n = 0;
        for (int i = 0; i < dma->count; i++) n += dma->insns[i].op == ISA_OP_NOP && dma->insns[i].wait == BK_SEM_WEIGHTS + 1;
        if (n > most) most = n;
    }
    return most;
}

TEST(a_staged_input_at_batch_4_goes_in_pieces)
{
    IrGraph g;
    conv_batch_graph(&g, 4, 256, 7, 7, 256);
    BkSummary sum;
    AtlProgram p;
    BkOptions o;
    bk_options_default(&o);
    o.sram_input = BK_SRAM_ALWAYS;
    if (run_one_layer(&g, A1, &o, 2e-5, " g", &p, &sum) == 0) {
        int pieces = atoi(strstr(sum.layers[0].split, " g") + 2), waits = most_input_waits(&p);
        printf("  %d pieces, a core waits %d times\n", pieces, waits);
        CHECKF(pieces > 1 && waits > 1, "%d pieces, %d waits", pieces, waits);
        prog_free(&p);
    }
    bk_summary_free(&sum);
    ir_free(&g);
    /* one image: the copy whole, one wait */
    conv_batch_graph(&g, 1, 256, 7, 7, 256);
    if (run_one_layer(&g, A1, &o, 2e-5, " sram", &p, &sum) == 0) {
        CHECKF(!strstr(sum.layers[0].split, " g"), "split %s", sum.layers[0].split);
        CHECKF(most_input_waits(&p) == 1, "%d waits", most_input_waits(&p));
        prog_free(&p);
    }
    bk_summary_free(&sum);
    ir_free(&g);
}

int main(void)
{
    RUN(sram_input_conv_matches_the_interpreter);
    RUN(a_single_read_input_stays_in_dram);
    RUN(a_bad_sram_input_mode_is_refused);
    RUN(a_staged_input_at_batch_4_goes_in_pieces);
    return test_summary("test_backend_sram");
}
