/* test_backend_band_near.c - the tile search's guess of which output
 * cells of a row-banded layer go to DRAM (docs/backend.md, "Row and
 * channel bands in every cluster"): before the schedule is final, a cell
 * is priced as stored to DRAM when a row within BkBand.near of it holds
 * another cluster's cell. That reach is now the most any consumer's window
 * reads around a row (bk_band_reach, alloc/place.c: half a Conv's or
 * pool's dilated kernel height, none for a 1x1 convolution, a residual
 * tail or an activation run in place, BK_BAND_NEAR for anything else or a
 * graph output), where it was BK_BAND_NEAR (3 rows, a 7x7 window's halo)
 * for every tensor, which priced a 1x1 convolution's row-banded producer
 * as if most of its rows near a share's edge went through DRAM.
 *
 * Checked on a graph x -> Conv 3x3 (c1) -> Relu run in place (r1) ->
 * Conv 1x1 (c2) -> Add absorbed as c2's residual tail with r1 (a) ->
 * MaxPool 3x3 dilated 2 (p) -> Conv 7x7 (c3) -> Softmax -> y, on a context
 * with just what the reach reads (roots, absorbed nodes, tails): x is read
 * by a 3x3 window (1 row); r1, shared with c1, by a 1x1 convolution and a
 * residual tail (0); a, shared with c2, by the pool (2); p by a 7x7
 * window (3); c3 by a Softmax (unknown: 3). And end to end, on
 * configs/a1.ini with bands forced, each conv its own layer: ResNet's
 * layer2 bottleneck 1x1 pair (128 -> 512 -> 128 channels, 28 x 28, no
 * kernel_shape attribute: the weights give it) keeps the interpreter's
 * answers (full mode, race detector on) with the reach from the consumers
 * and with BkOptions.band_near = 3 (the guess of before), both estimated
 * within 2% of the simulated cycles, and runs in fewer cycles with the
 * reach. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_two_layer.h"
#include "compiler/alloc/alloc.h"

static const char *const A1 = "configs/a1.ini";

static int tensor(const IrGraph *g, const char *name)
{
    for (int t = 0; t < g->nt; t++)
        if (g->t[t].name && !strcmp(g->t[t].name, name)) return t;
    return -1;
}

static int node(const IrGraph *g, const char *name)
{
    for (int n = 0; n < g->nn; n++)
        if (g->nodes[n].name && !strcmp(g->nodes[n].name, name)) return n;
    return -1;
}

TEST(the_reach_is_the_consumers_windows)
{
    AtlErr e;
    IrGraph g;
    int64_t xd[4] = {1, 8, 16, 16}, w3[4] = {8, 8, 3, 3}, w1[4] = {8, 8, 1, 1}, w7[4] = {8, 8, 7, 7};
    int64_t k3[2] = {3, 3}, k7[2] = {7, 7}, p1[4] = {1, 1, 1, 1}, p2[4] = {2, 2, 2, 2}, p3[4] = {3, 3, 3, 3}, d2[2] = {2, 2};
    new_graph(&g, "x", 4, xd);
    cst(&g, "w3", 4, w3, 0.05f);
    cst(&g, "w1", 4, w1, 0.05f);
    cst(&g, "w7", 4, w7, 0.05f);
    int n = ir_add_op(&g, "Conv", "conv3x3", "x,w3", "c1", &e);
    ir_set_attr_ints(&g, n, "kernel_shape", k3, 2, &e);
    ir_set_attr_ints(&g, n, "pads", p1, 4, &e);
    ir_add_op(&g, "Relu", "relu", "c1", "r1", &e);
    ir_add_op(&g, "Conv", "conv1x1", "r1,w1", "c2", &e);
    ir_add_op(&g, "Add", "add", "c2,r1", "a", &e);
    n = ir_add_op(&g, "MaxPool", "pool", "a", "p", &e);
    ir_set_attr_ints(&g, n, "kernel_shape", k3, 2, &e);
    ir_set_attr_ints(&g, n, "pads", p2, 4, &e);
    ir_set_attr_ints(&g, n, "dilations", d2, 2, &e);
    n = ir_add_op(&g, "Conv", "conv7x7", "p,w7", "c3", &e);
    ir_set_attr_ints(&g, n, "kernel_shape", k7, 2, &e);
    ir_set_attr_ints(&g, n, "pads", p3, 4, &e);
    ir_add_op(&g, "Softmax", "softmax", "c3", "y", &e);
    ir_add_output(&g, "y", &e);
    /* what placement and the fusions leave: the Relu in place (c1's
     * storage is r1's), the Add the 1x1 convolution's tail (c2's is a's) */
    BkCtx c;
    memset(&c, 0, sizeof c);
    c.g = &g;
    c.pl = calloc((size_t)g.nt, sizeof *c.pl);
    c.skip = calloc((size_t)g.nn, sizeof *c.skip);
    c.tail = malloc((size_t)g.nn * sizeof *c.tail);
    CHECK(c.pl && c.skip && c.tail);
    if (c.pl && c.skip && c.tail) {
        for (int t = 0; t < g.nt; t++) c.pl[t].root = t;
        for (int i = 0; i < g.nn; i++) c.tail[i] = -1;
        c.pl[tensor(&g, "c1")].root = tensor(&g, "r1");
        c.pl[tensor(&g, "c2")].root = tensor(&g, "a");
        c.skip[node(&g, "relu")] = c.skip[node(&g, "add")] = 1;
        c.tail[node(&g, "conv1x1")] = node(&g, "add");
        static const struct { const char *t; int reach; } want[] = {
            {"x", 1}, {"r1", 0}, {"a", 2}, {"p", 3}, {"c3", BK_BAND_NEAR}, {"y", BK_BAND_NEAR}};
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            int r = bk_band_reach(&c, tensor(&g, want[i].t));
            printf("  %s: reach %d (want %d)\n", want[i].t, r, want[i].reach);
            CHECKF(r == want[i].reach, "%s: reach %d, want %d", want[i].t, r, want[i].reach);
        }
    }
    free(c.pl);
    free(c.skip);
    free(c.tail);
    ir_free(&g);
}

/* The simulated cycles of ResNet's layer2 1x1 pair, x [1, 128, 28, 28]
 * -> Conv 1x1 (512) -> Relu -> Conv 1x1 (128) -> y, compiled with
 * band_near = near (its answers checked in full mode, its estimate within
 * 2%); 0 on failure. */
static uint64_t cycles_with(int near)
{
    uint64_t cycles = 0;
    IrGraph g;
    conv1x1_pair_graph(&g, 128, 28, 512, 128, 1, "conv2");
    BkOptions o;
    bk_options_default(&o);
    o.sram_acts = BK_SRAM_ACTS_BANDS;
    o.group_max = 1;
    o.band_near = near;
    AtlProgram p;
    BkSummary sum;
    double err;
    if (full_run(&g, A1, &o, &p, &sum, &err) == 0) {
        printf("  band_near %d: err %.3g, splits", near, err);
        for (int i = 0; i < sum.nlayers; i++) printf("%s %s", i ? "," : "", sum.layers[i].split);
        printf("\n");
        CHECKF(err <= 2e-5, "error %g", err);
    }
    prog_free(&p);
    bk_summary_free(&sum);
    uint64_t est;
    estimate_within_2pct(&g, A1, &o, &est, &cycles); /* cycles stays 0 when it did not run */
    ir_free(&g);
    return cycles;
}

/* 71,905 cycles with the reach (both convs K split in row bands), 96,456
 * with 3 rows (the first staging its input, spread) */
TEST(a_bottleneck_pair_runs_faster_with_the_consumers_reach)
{
    uint64_t reach = cycles_with(0), fixed = cycles_with(3);
    CHECKF(reach && fixed && reach < fixed, "consumers' reach %llu cycles, 3 rows %llu", (unsigned long long)reach,
           (unsigned long long)fixed);
}

int main(void)
{
    RUN(the_reach_is_the_consumers_windows);
    RUN(a_bottleneck_pair_runs_faster_with_the_consumers_reach);
    return test_summary("test_backend_band_near");
}
