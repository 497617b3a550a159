/* test_stage_sram.c - a boundary between two split stages kept in the
 * clusters' SRAM (compiler/backend/compile.c, sram_boundary;
 * docs/backend.md, "Boundaries in SRAM").
 *
 * Each cluster keeps its images from stage to stage, so the producer's
 * instances can leave their images of the boundary at the top of the
 * cluster's SRAM, one after another, and the consumer's instances read
 * them there: no DRAM write, no DRAM read, no boundary copy.
 *
 * On a1 (four clusters, two images each): a block whose 3x3 conv and
 * residual read the boundary t of the plan "1,t:2". With
 * BkOptions.stage_sram never the boundary goes through DRAM (and stage 1
 * reads it through its copy); with auto the cost model keeps it in SRAM:
 * stage 1 reads it from there (BkSummary.stage_in_sram), one intermediate
 * tensor fewer is in DRAM, stage 0 writes nothing to DRAM, the estimate
 * is lower, the output is the interpreter's and bit for bit the DRAM
 * plan's.
 *
 * On tiny (one cluster: every instance on it, one after another), three
 * stages "1,t:2,y:4" at batch 8 with both boundaries forced into SRAM
 * (always): eight producer instances write their images side by side,
 * four consumer instances of two images each read theirs and write y
 * below t, two instances of four read y. An instance's move of its
 * images (BkEmit.smove) that is off by one image gives other bytes; an
 * order the stages do not keep is a race the simulator's detector (on in
 * every run) reports. Bit for bit the plan with both in DRAM. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"

/* x[8,C,H,W] -> 3x3 conv+Relu -> t | -> 3x3 conv+Relu u -> 1x1 conv v,
 * v + t -> Relu -> y -> 1x1 conv+Relu -> z -> 1x1 conv -> out (cuts
 * after t and after y). */
static void block_graph(IrGraph *g, int64_t C, int64_t H)
{
    AtlErr e;
    int64_t xd[4] = {8, 16, H, H}, w0[4] = {C, 16, 3, 3}, w1[4] = {C, C, 3, 3}, w2[4] = {C, C, 1, 1};
    int64_t pads[4] = {1, 1, 1, 1};
    new_graph(g, "x", 4, xd);
    cst(g, "w0", 4, w0, 0.1f);
    cst(g, "w1", 4, w1, 0.05f);
    cst(g, "w2", 4, w2, 0.1f);
    cst(g, "w3", 4, w2, 0.1f);
    cst(g, "w4", 4, w2, 0.1f);
    ir_set_attr_ints(g, ir_add_op(g, "Conv", "c0", "x,w0", "t0", &e), "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "r0", "t0", "t", &e);
    ir_set_attr_ints(g, ir_add_op(g, "Conv", "c1", "t,w1", "u0", &e), "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "r1", "u0", "u", &e);
    ir_add_op(g, "Conv", "c2", "u,w2", "v", &e);
    ir_add_op(g, "Add", "add", "v,t", "s", &e);
    ir_add_op(g, "Relu", "r2", "s", "y", &e);
    ir_add_op(g, "Conv", "c3", "y,w3", "z0", &e);
    ir_add_op(g, "Relu", "r3", "z0", "z", &e);
    ir_add_op(g, "Conv", "c4", "z,w4", "out", &e);
    ir_add_output(g, "out", &e);
}

typedef struct Run {
    uint8_t *y;
    size_t yn;
    uint64_t est, wr0;   /* estimate; DRAM bytes stage 0's rows write */
    int dram_tensors, nstages, in_sram[3];
} Run;

/* Compiles g with `plan` on chip with BkOptions.stage_sram `mode`, runs
 * it, checks it against the interpreter; 0 when it ran. */
static int run_plan(IrGraph *g, const char *chip, const char *plan, int mode, Run *r)
{
    memset(r, 0, sizeof *r);
    BkOptions o;
    bk_options_default(&o);
    o.placement = BK_PLACE_SPLIT;
    o.stage_plan = plan;
    o.stage_sram = mode;
    BkSummary sum;
    memset(&sum, 0, sizeof sum);
    double err = -1;
    char msg[1024] = "";
    int rc = e2e_graph_run_y(g, chip, &o, &err, NULL, &sum, msg, sizeof msg, &r->y, &r->yn);
    CHECKF(rc == 0, "%s %s mode %d: %s", chip, plan, mode, msg);
    if (rc == 0) {
        CHECKF(err <= 2e-6, "%s mode %d: error %g", chip, mode, err);
        r->est = sum.est_cycles;
        r->dram_tensors = sum.act_dram_tensors;
        r->nstages = sum.nstages;
        for (int i = 0; i < sum.nstages && i < 3; i++) r->in_sram[i] = sum.stage_in_sram[i];
        for (int i = 0; sum.nstages > 1 && i < sum.stage_row[1]; i++) r->wr0 += sum.layers[i].dram_wr;
    }
    bk_summary_free(&sum);
    return rc;
}

TEST(split_stages_hand_their_boundary_over_in_sram)
{
    IrGraph g;
    block_graph(&g, 64, 28);
    Run d, s;
    int ok = run_plan(&g, "configs/a1.ini", "1,t:2", BK_SRAM_NEVER, &d) == 0;
    ok &= run_plan(&g, "configs/a1.ini", "1,t:2", BK_SRAM_AUTO, &s) == 0;
    if (ok) {
        CHECK(d.nstages == 2 && s.nstages == 2);
        CHECK_EQ_INT(d.in_sram[1], 0);
        CHECK_EQ_INT(s.in_sram[1], 1);
        CHECK_EQ_INT(s.dram_tensors, d.dram_tensors - 1);
        /* stage 0 wrote t (200,704 bytes an image) to DRAM; now nothing */
        CHECKF(d.wr0 >= 64 * 28 * 28 * 4 && s.wr0 == 0, "stage 0 writes %llu bytes, %llu in SRAM", (unsigned long long)d.wr0,
               (unsigned long long)s.wr0);
        CHECKF(s.est < d.est, "estimate %llu in SRAM, %llu in DRAM", (unsigned long long)s.est, (unsigned long long)d.est);
        printf("  a1, 1,t:2: %llu -> %llu estimated cycles, %d -> %d tensors in DRAM\n", (unsigned long long)d.est,
               (unsigned long long)s.est, d.dram_tensors, s.dram_tensors);
        CHECK(d.y && s.y && d.yn == s.yn && !memcmp(d.y, s.y, d.yn));
    }
    free(d.y);
    free(s.y);
    ir_free(&g);
}

TEST(instances_find_their_images_on_one_cluster)
{
    IrGraph g;
    block_graph(&g, 8, 16);
    Run d, s;
    int ok = run_plan(&g, "configs/tiny.ini", "1,t:2,y:4", BK_SRAM_NEVER, &d) == 0;
    ok &= run_plan(&g, "configs/tiny.ini", "1,t:2,y:4", BK_SRAM_ALWAYS, &s) == 0;
    if (ok) {
        CHECK(s.nstages == 3 && s.in_sram[1] && s.in_sram[2]);
        CHECK(!d.in_sram[1] && !d.in_sram[2]);
        CHECK_EQ_INT(s.dram_tensors, d.dram_tensors - 2);
        CHECK(d.y && s.y && d.yn == s.yn && !memcmp(d.y, s.y, d.yn));
    }
    free(d.y);
    free(s.y);
    ir_free(&g);
}

int main(void)
{
    RUN(split_stages_hand_their_boundary_over_in_sram);
    RUN(instances_find_their_images_on_one_cluster);
    return test_summary("test_stage_sram");
}
