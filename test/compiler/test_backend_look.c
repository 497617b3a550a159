/* test_backend_look.c - the band way over the chain (docs/backend.md,
 * "The band way over the chain"): with bands the tile search keeps the
 * cheapest shape of each way (spread, row bands, channel bands), and a
 * layer's way is judged with its consumer's price under it (cycles plus a
 * price per DRAM byte, backend/compile.c look_resolve), not alone.
 *
 * Checked on configs/a1.ini with bands forced, on ResNet-50's layer2
 * bottleneck at RESNET rows: x [1, 512, H, H] -> Conv 1x1 (128) -> Relu ->
 * Conv 3x3 (128, pad 1) -> Relu -> Conv 1x1 (512) -> Add x -> Relu -> y.
 * Alone, the 3x3 and the last convolution each take channel bands (their
 * weights read once on the chip), and the last one reads its input
 * through DRAM once per output-channel chunk; judged with its consumer,
 * the plan changes. With the look (BK_LOOK_ALWAYS) the layers' splits
 * differ from the greedy plan's (BK_LOOK_NEVER), the output is the
 * interpreter's in the simulator's full mode (race detector over LMEM,
 * SRAM and DRAM), the estimate is within 2% of the simulated cycles, and
 * the simulated run takes fewer cycles and moves
 * fewer DRAM bytes than the greedy plan's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_two_layer.h"

static const char *const A1 = "configs/a1.ini";

enum { C = 512, MID = 128, RESNET = 28 };

static void bottleneck_graph(IrGraph *g, int H)
{
    AtlErr e;
    int64_t xd[4] = {1, C, H, H}, w1[4] = {MID, C, 1, 1}, w2[4] = {MID, MID, 3, 3}, w3[4] = {C, MID, 1, 1};
    int64_t b1[1] = {MID}, b3[1] = {C}, pads[4] = {1, 1, 1, 1};
    new_graph(g, "x", 4, xd);
    cst(g, "w1", 4, w1, 0.05f);
    cst(g, "b1", 1, b1, 0.2f);
    cst(g, "w2", 4, w2, 0.03f);
    cst(g, "b2", 1, b1, 0.2f);
    cst(g, "w3", 4, w3, 0.05f);
    cst(g, "b3", 1, b3, 0.2f);
    ir_add_op(g, "Conv", "conv1", "x,w1,b1", "c1", &e);
    ir_add_op(g, "Relu", "relu1", "c1", "r1", &e);
    int n = ir_add_op(g, "Conv", "conv2", "r1,w2,b2", "c2", &e);
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "relu2", "c2", "r2", &e);
    ir_add_op(g, "Conv", "conv3", "r2,w3,b3", "c3", &e);
    ir_add_op(g, "Add", "add", "c3,x", "s", &e);
    ir_add_op(g, "Relu", "relu3", "s", "y", &e);
    ir_add_output(g, "y", &e);
}

/* A timing-only run of g with band_look `look`: the estimate, the
 * simulated cycles and DRAM bytes, each layer's split (joined). */
static int timed(const IrGraph *g, int look, uint64_t *est, uint64_t *cycles, uint64_t *bytes, char *splits, size_t cap)
{
    AtlChip chip;
    AtlErr e = {{0}};
    BkTimingRun r;
    memset(&r, 0, sizeof r);
    BkOptions o;
    bk_options_default(&o);
    o.sram_acts = BK_SRAM_ACTS_BANDS;
    /* without the SRAM pair: with it, this bottleneck's greedy plan and
     * the look's are within 0.2% in cycles (185,732 and 186,103 simulated;
     * the look's moves 3% fewer bytes), too close to show the look */
    o.sram_pair = BK_PAIR_NEVER;
    o.band_look = look;
    int rc = cfg_load(A1, &chip, &e) || bk_timing_run_opts(g, &chip, &o, &r, &e) ? -1 : 0;
    CHECKF(rc == 0, "%s", e.msg);
    if (rc == 0) {
        *est = r.sum.est_cycles;
        *cycles = sim_stats(r.sim)->cycles;
        *bytes = sim_stats(r.sim)->bytes.dram_rd + sim_stats(r.sim)->bytes.dram_wr;
        size_t k = 0;
        splits[0] = 0;
        for (int i = 0; i < r.sum.nlayers && k < cap; i++)
            k += (size_t)snprintf(splits + k, cap - k, "%s%s", i ? " | " : "", r.sum.layers[i].split);
    }
    bk_timing_run_free(&r);
    return rc;
}

TEST(a_bottleneck_judged_with_its_consumer)
{
    IrGraph g;
    bottleneck_graph(&g, RESNET);
    /* the full run first: it infers the graph's shapes */
    BkOptions o;
    bk_options_default(&o);
    o.sram_acts = BK_SRAM_ACTS_BANDS;
    o.sram_pair = BK_PAIR_NEVER;
    o.band_look = BK_LOOK_ALWAYS;
    AtlProgram p;
    BkSummary sum;
    double err;
    if (full_run(&g, A1, &o, &p, &sum, &err) == 0) {
        printf("  err %.3g\n", err);
        CHECKF(err <= 2e-5, "error %g", err);
    }
    prog_free(&p);
    bk_summary_free(&sum);
    uint64_t est[2] = {0}, cyc[2] = {0}, bytes[2] = {0};
    char split[2][512];
    int ok = timed(&g, BK_LOOK_NEVER, &est[0], &cyc[0], &bytes[0], split[0], sizeof split[0]) == 0 &&
             timed(&g, BK_LOOK_ALWAYS, &est[1], &cyc[1], &bytes[1], split[1], sizeof split[1]) == 0;
    if (ok) {
        for (int i = 0; i < 2; i++)
            printf("  %s: %s\n    estimate %llu, simulated %llu cycles, %llu DRAM bytes\n", i ? "look" : "greedy", split[i],
                   (unsigned long long)est[i], (unsigned long long)cyc[i], (unsigned long long)bytes[i]);
        CHECKF(strcmp(split[0], split[1]), "the look kept the greedy plan: %s", split[1]);
        CHECKF(cyc[1] < cyc[0], "the look's plan takes %llu cycles, the greedy %llu", (unsigned long long)cyc[1],
               (unsigned long long)cyc[0]);
        CHECKF(bytes[1] < bytes[0], "the look's plan moves %llu DRAM bytes, the greedy %llu", (unsigned long long)bytes[1],
               (unsigned long long)bytes[0]);
        CHECKF(fabs((double)est[1] - (double)cyc[1]) <= 0.02 * (double)cyc[1], "estimate %llu, simulated %llu",
               (unsigned long long)est[1], (unsigned long long)cyc[1]);
    }
    ir_free(&g);
}

int main(void)
{
    RUN(a_bottleneck_judged_with_its_consumer);
    return test_summary("test_backend_look");
}
