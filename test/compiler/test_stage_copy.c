/* test_stage_copy.c - a split stage after the first reads its boundary
 * through a copy in cluster SRAM when the cost model prices that lower
 * (compiler/backend/compile.c, copy_boundary_in; staged.c,
 * bk_stage_copy_in; docs/backend.md, "Staged schedules").
 *
 * The graph side: after bk_stage_copy_in the boundary's only reader is the
 * copy (an Identity first in node order), every other reader reads the
 * copy, whose shape is the boundary's; a second copy of the same tensor is
 * refused.
 *
 * End to end on a1: a block whose 3x3 conv and residual both read the
 * boundary t of a two-stage plan (one image, then two per instance). The
 * 3x3 conv splits its output channels, so each chunk re-reads t; from DRAM
 * at a cluster's share of the bandwidth that costs more than one copy into
 * SRAM. Checked against the same plan with BkOptions.stage_copy never: the
 * copy layer is in the schedule, the estimate is lower, the output is the
 * interpreter's and bit for bit the plan's without the copy, and the
 * simulator's race detector (on in every run) finds nothing.
 *
 * Re-read copies (compile.c, copy_rereads; staged.c, bk_copy_before): on
 * a1 with 192 KiB of SRAM a cluster, a block like ResNet-50's layer2.0 at
 * one image an instance leaves conv1's output b in DRAM (a, b and the
 * downsample d are live together); the strided 3x3 conv reading b splits
 * its output channels and re-reads it. The graph side: the copy comes
 * just before its reader, which alone reads it. End to end: the stage
 * reads b through a copy kept in SRAM, the estimate is lower than with
 * BkOptions.stage_copy never, the output is bit for bit the same and the
 * race detector finds nothing (with BkOptions.no_chain_pack: packed, a
 * group keeps b in LMEM). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/compiler/chip_variant.h"
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "compiler/backend/staged.h"

TEST(copy_in_rewires_every_reader)
{
    IrGraph g, sg;
    AtlErr e;
    int64_t d[4] = {2, 4, 8, 8};
    ir_init(&g);
    REQUIRE(ir_add_input(&g, "x", IR_F32, 4, d, &e) >= 0);
    REQUIRE(ir_add_op(&g, "Relu", "n0", "x", "t", &e) >= 0);
    REQUIRE(ir_add_op(&g, "Relu", "n1", "t", "u", &e) >= 0);
    REQUIRE(ir_add_op(&g, "Add", "n2", "u,t", "y", &e) >= 0);
    REQUIRE(ir_add_output(&g, "y", &e) >= 0);
    REQUIRE(ir_toposort(&g, &e) == 0 && ir_infer_shapes(&g, &e) == 0);
    REQUIRE(bk_stage_graph(&g, 1, g.nn, &sg, &e) == 0);
    int t = ir_find(&sg, "t");
    REQUIRE(t >= 0 && sg.t[t].is_input);
    CHECKF(bk_stage_copy_in(&sg, t, &e) == 0, "%s", e.msg);
    int c = ir_find(&sg, "t/stage_copy"), readers = 0, copy_readers = 0, first = -1;
    REQUIRE(c >= 0);
    for (int i = 0; i < sg.nn; i++) {
        const IrNode *n = &sg.nodes[i];
        if (n->dead) continue;
        if (first < 0) first = i;
        for (int k = 0; k < n->nin; k++) {
            if (n->in[k] == t) {
                readers++;
                CHECK(!strcmp(n->op, "Identity") && n->out[0] == c && i == first);
            }
            if (n->in[k] == c) copy_readers++;
        }
    }
    CHECK_EQ_INT(readers, 1);
    CHECK_EQ_INT(copy_readers, 2);
    CHECK(!sg.t[c].is_input && !sg.t[c].is_output && sg.t[c].ndim == 4);
    for (int k = 0; k < 4 && sg.t[c].ndim == 4; k++) CHECK(sg.t[c].dims[k] == d[k]);
    CHECK(bk_stage_copy_in(&sg, t, &e) < 0 && strstr(e.msg, "copied twice"));
    ir_free(&sg);
    ir_free(&g);
}

/* x[8,16,28,28] -> 3x3 conv+Relu -> t | -> 3x3 conv+Relu u -> 1x1 conv v,
 * v + t -> Relu -> y -> 1x1 conv -> out (the cut after t). */
static void block_graph(IrGraph *g)
{
    AtlErr e;
    int64_t xd[4] = {8, 16, 28, 28}, w0[4] = {64, 16, 3, 3}, w1[4] = {64, 64, 3, 3}, w2[4] = {64, 64, 1, 1};
    int64_t pads[4] = {1, 1, 1, 1};
    new_graph(g, "x", 4, xd);
    cst(g, "w0", 4, w0, 0.1f);
    cst(g, "w1", 4, w1, 0.05f);
    cst(g, "w2", 4, w2, 0.1f);
    cst(g, "w3", 4, w2, 0.1f);
    ir_set_attr_ints(g, ir_add_op(g, "Conv", "c0", "x,w0", "t0", &e), "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "r0", "t0", "t", &e);
    ir_set_attr_ints(g, ir_add_op(g, "Conv", "c1", "t,w1", "u0", &e), "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "r1", "u0", "u", &e);
    ir_add_op(g, "Conv", "c2", "u,w2", "v", &e);
    ir_add_op(g, "Add", "add", "v,t", "s", &e);
    ir_add_op(g, "Relu", "r2", "s", "y", &e);
    ir_add_op(g, "Conv", "c3", "y,w3", "out", &e);
    ir_add_output(g, "out", &e);
}

/* Runs g split over the clusters in two stages (`plan`) on `chip` with
 * BkOptions.stage_copy never, then auto: without, no layer named `copy`
 * (a substring); with, one, made of DMA copies (lower/move.c: no LMEM), a
 * lower estimate and the same output bits (no_pack: no chain packing
 * and no overlays). */
static void copy_taken(IrGraph *g, const char *chip, const char *plan, const char *copy, const char *label, int no_pack)
{
    uint8_t *ys[2] = {NULL, NULL};
    size_t yn[2] = {0, 0};
    uint64_t est[2] = {0, 0};
    int copies[2] = {0, 0};
    for (int on = 0; on < 2; on++) {
        BkOptions o;
        bk_options_default(&o);
        o.placement = BK_PLACE_SPLIT;
        o.stage_plan = plan;
        o.stage_copy = on ? BK_SRAM_AUTO : BK_SRAM_NEVER;
        /* the boundary through DRAM, where the copy is what it is priced
         * against (kept in SRAM instead, test_stage_sram, no copy is needed) */
        o.stage_sram = BK_SRAM_NEVER;
        o.no_chain_pack = no_pack;
        /* no overlays either: with them the downsample runs first, cb's
         * output over a (sink.c, bk_hoist_apply), and b no longer spills */
        o.no_overlay = no_pack;
        BkSummary sum;
        memset(&sum, 0, sizeof sum);
        double err = -1;
        char msg[1024] = "";
        const char *what = on ? "copy auto" : "copy never";
        int rc = e2e_graph_run_y(g, chip, &o, &err, NULL, &sum, msg, sizeof msg, &ys[on], &yn[on]);
        CHECKF(rc == 0, "%s: %s", what, msg);
        if (rc == 0) {
            CHECKF(err <= 2e-6, "%s: error %g", what, err);
            CHECK(sum.nstages == 2);
            est[on] = sum.est_cycles;
            for (int i = 0; i < sum.nlayers; i++)
                if (strstr(sum.layers[i].name, copy)) {
                    copies[on]++;
                    /* DMA copies straight into SRAM: no LMEM, no vector unit */
                    CHECKF(!strncmp(sum.layers[i].split, "copies", 6) && sum.layers[i].lmem_peak == 0,
                           "%s: split '%s', LMEM peak %llu", sum.layers[i].name, sum.layers[i].split,
                           (unsigned long long)sum.layers[i].lmem_peak);
                }
        }
        bk_summary_free(&sum);
    }
    CHECK_EQ_INT(copies[0], 0);
    CHECK_EQ_INT(copies[1], 1);
    CHECKF(est[1] < est[0], "estimate %llu with the copy, %llu without", (unsigned long long)est[1],
           (unsigned long long)est[0]);
    printf("  %s: %llu -> %llu estimated cycles\n", label, (unsigned long long)est[0], (unsigned long long)est[1]);
    CHECK(ys[0] && ys[1] && yn[0] == yn[1] && !memcmp(ys[0], ys[1], yn[0]));   /* a copy changes no bit */
    free(ys[0]);
    free(ys[1]);
}

TEST(later_stage_reads_its_boundary_from_an_sram_copy)
{
    IrGraph g;
    block_graph(&g);
    copy_taken(&g, "configs/a1.ini", "1,t:2", "t/stage_copy", "boundary copy", 0);
    ir_free(&g);
}

TEST(copy_before_moves_the_copy_to_its_reader)
{
    IrGraph g;
    AtlErr e;
    int64_t d[4] = {1, 4, 8, 8};
    ir_init(&g);
    REQUIRE(ir_add_input(&g, "x", IR_F32, 4, d, &e) >= 0);
    REQUIRE(ir_add_op(&g, "Relu", "n0", "x", "t", &e) >= 0);
    REQUIRE(ir_add_op(&g, "Relu", "n1", "t", "u", &e) >= 0);
    REQUIRE(ir_add_op(&g, "Neg", "n2", "u", "v", &e) >= 0);
    REQUIRE(ir_add_op(&g, "Add", "n3", "v,t", "y", &e) >= 0);
    REQUIRE(ir_add_output(&g, "y", &e) >= 0);
    REQUIRE(ir_toposort(&g, &e) == 0 && ir_infer_shapes(&g, &e) == 0);
    int t = ir_find(&g, "t"), reader = -1;
    for (int i = 0; i < g.nn; i++)
        if (!strcmp(g.nodes[i].name, "n3")) reader = i;
    REQUIRE(t >= 0 && reader >= 0);
    CHECKF(bk_copy_before(&g, t, reader, &e) == 0, "%s", e.msg);
    int c = ir_find(&g, "t/reread_copy");
    REQUIRE(c >= 0);
    const char *order[5] = {"n0", "n1", "n2", "t/reread_copy", "n3"};
    CHECK_EQ_INT(g.nn, 5);
    for (int i = 0; i < 5 && i < g.nn; i++) CHECKF(!strcmp(g.nodes[i].name, order[i]), "node %d is %s", i, g.nodes[i].name);
    CHECK(g.nodes[4].in[1] == c && g.nodes[1].in[0] == t && g.t[c].producer == 3);
    CHECK(g.t[c].ndim == 4 && g.t[c].dims[1] == 4);
    CHECK(bk_copy_before(&g, t, 4, &e) < 0 && strstr(e.msg, "copied twice"));
    ir_free(&g);
}

TEST(split_stage_reads_a_dram_activation_through_a_copy)
{
    char chip[64];
    REQUIRE(chip_variant("configs/a1.ini", "sram", "bytes", "192K", chip, sizeof chip) == 0);
    IrGraph g;
    stage_block_graph(&g, (BottleneckShape){.a = 32, .b = 32, .c = 256, .e = 64, .out = 64, .stride = 2});
    /* a chain's row buffers each their own bytes (BkOptions.no_chain_pack):
     * packed by lifetime, cb .. ce fit one group at 8 slices, which keeps
     * b in LMEM, so nothing re-reads it (estimate 240,372 against 232,498
     * for this plan: group formation prices the group before the copy
     * exists, docs/backend.md "Lifetimes in a slot") */
    copy_taken(&g, chip, "1,y:2", "b/reread_copy", "re-read copy", 1);
    remove(chip);
    ir_free(&g);
}

int main(void)
{
    RUN(copy_before_moves_the_copy_to_its_reader);
    RUN(split_stage_reads_a_dram_activation_through_a_copy);
    RUN(copy_in_rewires_every_reader);
    RUN(later_stage_reads_its_boundary_from_an_sram_copy);
    return test_summary("test_stage_copy");
}
