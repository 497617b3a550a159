/* test_backend_kbands.c - a K split across clusters (lower/kbands.c,
 * docs/backend.md "K split across clusters"): with bands on a1, a 1x1
 * convolution 256 -> 64 (bias, Relu) after a 1x1 convolution 64 -> 256
 * whose output the clusters keep in their SRAMs runs as two layers: the
 * clusters' partial sums over their own input channels, then their sum
 * with the bias and the activation (and a residual tail: + x, Relu).
 *
 * Checked with BkOptions.kbands = always, in f32 and bf16: the answers
 * are the interpreter's (the simulator's full mode, race detector on);
 * the summary names the two phases (" kbands", " kbands sum"); in a
 * timing-only run every unit's estimate is within 2% of its simulated
 * cycles, and the run takes fewer cycles and fewer DRAM bytes than with
 * kbands = never, which, like the default, takes no such split;
 * kbands = auto takes it, with each cluster's range of K split again
 * (more than 4 k chunks: smaller tiles, so the compute of a core's last
 * one, after the DRAM has delivered its weights, is shorter). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "test/compiler/bk_timing_run.h"

static const char *const A1 = "configs/a1.ini";

enum { C = 256, M = 1024, H = 7 };
/* x [1, C, H, H] -> Conv 1x1 C -> M + Relu -> Conv 1x1 M -> C + Relu -> y;
 * res: the second conv's output plus x (its residual tail), then Relu. */
static void reduce_graph_res(IrGraph *g, int res)
{
    AtlErr e;
    int64_t xd[4] = {1, C, H, H}, w1[4] = {M, C, 1, 1}, b1[1] = {M}, w2[4] = {C, M, 1, 1}, b2[1] = {C};
    new_graph(g, "x", 4, xd);
    cst(g, "w1", 4, w1, 0.1f);
    cst(g, "b1", 1, b1, 0.2f);
    cst(g, "w2", 4, w2, 0.05f);
    cst(g, "b2", 1, b2, 0.2f);
    ir_add_op(g, "Conv", "expand", "x,w1,b1", "c1", &e);
    ir_add_op(g, "Relu", "relu1", "c1", "r1", &e);
    ir_add_op(g, "Conv", "reduce", "r1,w2,b2", "c2", &e);
    if (res) ir_add_op(g, "Add", "add", "c2,x", "s2", &e);
    ir_add_op(g, "Relu", "relu2", res ? "s2" : "c2", "y", &e);
    ir_add_output(g, "y", &e);
}

static void reduce_graph(IrGraph *g) { reduce_graph_res(g, 0); }

static void options(BkOptions *o, int dtype, int kbands)
{
    bk_options_default(o);
    o->dtype = dtype;
    o->sram_acts = BK_SRAM_ACTS_BANDS;
    o->kbands = kbands;
}

/* The count of summary rows whose split contains `what`. */
static int rows_with(const BkSummary *s, const char *what)
{
    int n = 0;
    for (int i = 0; i < s->nlayers; i++) n += strstr(s->layers[i].split, what) != NULL;
    return n;
}

/* Full mode against the interpreter; the phases named (res: with the
 * residual tail, which phase 2 adds after the sum and the bias). */
static void answers_res(int dtype, double tol, int res)
{
    IrGraph g;
    reduce_graph_res(&g, res);
    BkOptions o;
    options(&o, dtype, BK_KBANDS_ALWAYS);
    BkSummary sum;
    memset(&sum, 0, sizeof sum);
    double err = -1;
    char msg[1024] = "";
    int rc = e2e_graph_run(&g, A1, &o, &err, NULL, &sum, msg, sizeof msg);
    CHECKF(rc == 0, "%s", msg);
    for (int i = 0; i < sum.nlayers; i++) printf("  %-10s %s\n", sum.layers[i].name, sum.layers[i].split);
    printf("  %s: error %.3g\n", dtype == ISA_F32 ? "f32" : "bf16", err);
    CHECKF(err <= tol, "error %g (bound %g)", err, tol);
    CHECKF(rows_with(&sum, " kbands") == 2 && rows_with(&sum, " kbands sum") == 1, "the two phases are not in the summary");
    bk_summary_free(&sum);
    ir_free(&g);
}

static void answers(int dtype, double tol) { answers_res(dtype, tol, 0); }

/* A timing-only run: its simulated DRAM bytes (and cycles in *cycles);
 * each unit's estimate within 2% of its simulated cycles. */
static uint64_t timing(int dtype, int kbands, int *phases, uint64_t *cycles, int *kchunks)
{
    IrGraph g;
    reduce_graph(&g);
    BkOptions o;
    options(&o, dtype, kbands);
    AtlErr e = {{0}};
    AtlChip chip;
    BkTimingRun r;
    memset(&r, 0, sizeof r);
    int ok = !cfg_load(A1, &chip, &e) && !ir_toposort(&g, &e) && !ir_infer_shapes(&g, &e) && !pass_run_all(&g, &e) &&
             !bk_timing_run_opts(&g, &chip, &o, &r, &e);
    CHECKF(ok, "%s", e.msg);
    uint64_t bytes = 0;
    if (ok) {
        const AtlSimStats *st = sim_stats(r.sim);
        for (int i = 0; i < r.sum.nlayers; i++) {
            const BkLayerInfo *l = &r.sum.layers[i];
            const AtlLayerStats *ls = l->layer_id < st->nlayers ? &st->layers[l->layer_id] : NULL;
            CHECKF(ls && ls->used, "unit %d has no simulated instructions", i);
            if (!ls || !ls->used) continue;
            double sim = (double)(ls->last - ls->first), est = (double)l->est_cycles;
            printf("  kbands %d unit %d %-22s estimate %.0f, simulated %.0f\n", kbands, i, l->split, est, sim);
            const char *k = strstr(l->split, " K");
            if (strstr(l->split, " kbands") && !strstr(l->split, " sum") && k) *kchunks = atoi(k + 2);
            CHECKF(fabs(est - sim) <= 0.02 * sim, "unit %d (%s): estimate %.0f, simulated %.0f", i, l->split, est, sim);
        }
        bytes = st->bytes.dram_rd + st->bytes.dram_wr;
        printf("  kbands %d: %llu cycles, %llu DRAM bytes\n", kbands, (unsigned long long)st->cycles, (unsigned long long)bytes);
        *phases = rows_with(&r.sum, " kbands");
        *cycles = st->cycles;
    }
    bk_timing_run_free(&r);
    ir_free(&g);
    return bytes;
}

/* Fewer DRAM bytes and cycles (the partials, f32, are a quarter of the
 * input's channels, and each cluster keeps its own band of its part in
 * SRAM); auto takes the split (its price is lower). */
static void dram_case(int dtype)
{
    int with = 0, without = 0, chosen = 0, kc = 0, unused = 0;
    uint64_t cyc_on = 0, cyc_off = 0, cyc_auto = 0;
    uint64_t on = timing(dtype, BK_KBANDS_ALWAYS, &with, &cyc_on, &unused);
    uint64_t off = timing(dtype, BK_KBANDS_NEVER, &without, &cyc_off, &unused);
    timing(dtype, BK_KBANDS_AUTO, &chosen, &cyc_auto, &kc);
    /* the 4 clusters' ranges split again (lower/conv.c
     * bk_conv_kbands_shapes: smaller tiles, a shorter tail) */
    CHECKF(kc > 4, "the K split takes %d k chunks (each cluster's range whole)", kc);
    CHECKF(with == 2 && without == 0 && chosen == 2, "kbands layers: %d with always, %d with never, %d with auto", with,
           without, chosen);
    CHECKF(on && on < off, "DRAM bytes %llu with the K split, %llu without",
           (unsigned long long)on, (unsigned long long)off);
    CHECKF(cyc_on && cyc_on < cyc_off && cyc_auto == cyc_on, "cycles %llu with the K split, %llu without, %llu with auto",
           (unsigned long long)cyc_on, (unsigned long long)cyc_off, (unsigned long long)cyc_auto);
}

TEST(f32_matches_the_interpreter) { answers(ISA_F32, 2e-5); }
TEST(bf16_matches_the_interpreter) { answers(ISA_BF16, 3e-2); }
TEST(a_residual_tail_after_the_sum) { answers_res(ISA_F32, 2e-5, 1); answers_res(ISA_BF16, 3e-2, 1); }
TEST(f32_moves_fewer_dram_bytes_and_estimates_within_2_percent) { dram_case(ISA_F32); }
TEST(bf16_moves_fewer_dram_bytes_and_estimates_within_2_percent) { dram_case(ISA_BF16); }

TEST(a_bad_kbands_mode_is_refused)
{
    IrGraph g;
    reduce_graph(&g);
    BkOptions o;
    options(&o, ISA_F32, 7);
    CHECK(e2e_refused(&g, A1, &o, "K split mode 7"));
    ir_free(&g);
}

int main(void)
{
    RUN(f32_matches_the_interpreter);
    RUN(bf16_matches_the_interpreter);
    RUN(a_residual_tail_after_the_sum);
    RUN(f32_moves_fewer_dram_bytes_and_estimates_within_2_percent);
    RUN(bf16_moves_fewer_dram_bytes_and_estimates_within_2_percent);
    RUN(a_bad_kbands_mode_is_refused);
    return test_summary("test_backend_kbands");
}
