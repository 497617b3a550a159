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
#include "test/compiler/wsram_check.h"

static const char *const A1 = "configs/a1.ini";

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
        wsram_check_program(&p, &chip, wbytes);
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
