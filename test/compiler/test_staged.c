/* test_staged.c - the graph side of placement split and staged schedules
 * (compiler/backend/split.c, staged.c) on hand-made graphs and costs.
 *
 * Split: a graph separable along the batch is cloned at the micro-batch
 * with every tensor's batch axis scaled (dimension 0 at the inputs and
 * outputs; inside, where a Transpose moves it, as attention's q/k/v split
 * does); ops that work across images (Softmax over the batch axis, Concat
 * along 0 by default, a Transpose leaving the batch off axis 0 of an
 * output, a ReduceSum over all axes, a Flatten from axis 0, a Reshape
 * putting other elements before the batch, MeanVarianceNormalization and
 * ArgMax by their default axes, Trilu on [images, n]) are refused with
 * the node named (an RNN's refusal: test_backend_rnn runs at batch 2).
 * Stages: the cut candidates are exactly the node positions
 * with one tensor crossing (checked against a brute-force count); a stage
 * graph's inputs and outputs are the crossing tensors; the plan search
 * picks the cut and micro-batches of least cycles, keeps micro-batches
 * growing, charges the boundary and falls back to one stage when cutting
 * does not pay. */
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "compiler/backend/split.h"
#include "compiler/backend/staged.h"
#include "compiler/ops/infer.h"

/* x[B,4,8,8] -> Relu a -> Relu b -> Add(a, b) c -> Relu d -> Mul(d, d) y
 * (a crosses from node 0 to node 2: no cut after node 0). */
static void chain_graph(IrGraph *g, int batch)
{
    AtlErr e;
    int64_t d[4] = {batch, 4, 8, 8};
    ir_init(g);
    REQUIRE(ir_add_input(g, "x", IR_F32, 4, d, &e) >= 0);
    REQUIRE(ir_add_op(g, "Relu", "n0", "x", "a", &e) >= 0);
    REQUIRE(ir_add_op(g, "Relu", "n1", "a", "b", &e) >= 0);
    REQUIRE(ir_add_op(g, "Add", "n2", "a,b", "c", &e) >= 0);
    REQUIRE(ir_add_op(g, "Relu", "n3", "c", "d", &e) >= 0);
    REQUIRE(ir_add_op(g, "Mul", "n4", "d,d", "y", &e) >= 0);
    REQUIRE(ir_add_output(g, "y", &e) >= 0);
    REQUIRE(ir_toposort(g, &e) == 0 && ir_infer_shapes(g, &e) == 0);
}

TEST(separable_graph_clones_at_the_micro_batch)
{
    IrGraph g, inst;
    AtlErr e;
    char why[256];
    chain_graph(&g, 8);
    CHECK_EQ_INT(bk_split_graph(&g, 2, &inst, why, sizeof why, &e), 0);
    int y = ir_find(&inst, "y");
    CHECK(y >= 0 && inst.t[y].dims[0] == 2 && inst.t[y].dims[1] == 4);
    ir_free(&inst);
    CHECK_EQ_INT(bk_split_graph(&g, 3, &inst, why, sizeof why, &e), 1);
    CHECK_STR_CONTAINS(why, "not a multiple of the micro-batch 3");
    ir_free(&g);
}

/* x[8,6] -> OP (with attributes set by the caller) -> y; 1 when split
 * refuses it (its reason must contain expect, when not NULL). */
static int refused(const char *op, const char *attr, int64_t v, const char *expect)
{
    IrGraph g, inst;
    AtlErr e;
    char why[256];
    int64_t d[2] = {8, 6}, p[2] = {1, 0};
    ir_init(&g);
    g.opset = 17;
    int n = ir_add_input(&g, "x", IR_F32, 2, d, &e) < 0 ? -1 : ir_add_op(&g, op, "mixer", !strcmp(op, "Concat") ? "x,x" : "x", "y", &e);
    int bad = n < 0;
    if (!bad && attr) bad = !strcmp(attr, "perm") ? ir_set_attr_ints(&g, n, "perm", p, 2, &e) : ir_set_attr_int(&g, n, attr, v, &e);
    bad = bad || ir_add_output(&g, "y", &e) < 0 || ir_toposort(&g, &e) || ir_infer_shapes(&g, &e);
    int rc = bad ? -1 : bk_split_graph(&g, 2, &inst, why, sizeof why, &e);
    if (rc == 0) ir_free(&inst);
    ir_free(&g);
    CHECKF(rc >= 0, "%s: %s", op, e.msg);
    CHECKF(rc != 1 || !expect || strstr(why, expect), "%s: '%s' lacks '%s'", op, why, expect);
    return rc == 1;
}

TEST(ops_across_images_are_refused)
{
    CHECK(refused("Softmax", "axis", 0, "node 'mixer' (Softmax) works across images: axis 0"));
    CHECK(!refused("Softmax", "axis", 1, NULL));
    CHECK(refused("Concat", NULL, 0, "axis 0 (the default)") || refused("Concat", "axis", 0, "axis 0"));
    CHECK(!refused("Concat", "axis", 1, NULL));
    CHECK(refused("Transpose", "perm", 0, NULL));
    CHECK(refused("ReduceSum", NULL, 0, NULL));
    CHECK(refused("Flatten", "axis", 0, NULL));
    CHECK(!refused("Relu", NULL, 0, NULL));
    CHECK(refused("MeanVarianceNormalization", NULL, 0, "axes include 0 (the default)"));
    CHECK(refused("Trilu", NULL, 0, "are the images"));
    CHECK(refused("ArgMax", NULL, 0, NULL));
}

/* x[8,5,3,4] -> Transpose (2,0,1,3) t[3,8,5,4] (the batch on axis 1, as
 * attention's q/k/v split) -> MIDDLE -> Gather axis 0 index 1 [8,..] ->
 * Relu y. MIDDLE is nothing, a Softmax over axis `ax` or a Reshape of t to
 * [-1,20] and back to [3,-1,5,4] ("reshape"); split at micro-batch 2. */
static int moved_batch(const char *middle, int ax, char *why, size_t cap, int64_t *tdims)
{
    IrGraph g, inst;
    AtlErr e;
    int64_t d[4] = {8, 5, 3, 4}, perm[4] = {2, 0, 1, 3}, one = 1, flat[2] = {-1, 20}, back[4] = {3, -1, 5, 4}, two = 2, four = 4;
    ir_init(&g);
    g.opset = 17;
    int ok = (ir_add_input(&g, "x", IR_F32, 4, d, &e) >= 0);
    ok = ok && (ir_add_op(&g, "Transpose", "qkv", "x", "t", &e) >= 0 && ir_set_attr_ints(&g, g.nn - 1, "perm", perm, 4, &e) == 0);
    const char *gin = "t";
    if (!strcmp(middle, "softmax")) {
        ok = ok && (ir_add_op(&g, "Softmax", "mixer", "t", "m", &e) >= 0 && ir_set_attr_int(&g, g.nn - 1, "axis", ax, &e) == 0);
        gin = "m";
    } else if (!strcmp(middle, "reshape")) {
        ok = ok && (ir_add_const(&g, "flat", IR_I64, 1, &two, flat, &e) >= 0 && ir_add_const(&g, "back", IR_I64, 1, &four, back, &e) >= 0);
        ok = ok && (ir_add_op(&g, "Reshape", "mixer", "t,flat", "f", &e) >= 0 && ir_add_op(&g, "Reshape", "unflat", "f,back", "m", &e) >= 0);
        gin = "m";
    }
    ok = ok && (ir_add_const(&g, "idx", IR_I64, 0, NULL, &one, &e) >= 0);
    char ins[32];
    snprintf(ins, sizeof ins, "%s,idx", gin);
    ok = ok && (ir_add_op(&g, "Gather", "take_k", ins, "k", &e) >= 0 && ir_set_attr_int(&g, g.nn - 1, "axis", 0, &e) == 0);
    ok = ok && (ir_add_op(&g, "Relu", "relu", "k", "y", &e) >= 0 && ir_add_output(&g, "y", &e) >= 0);
    ok = ok && (ir_toposort(&g, &e) == 0 && ir_infer_shapes(&g, &e) == 0);
    if (!ok) { printf("  graph: %s\n", e.msg); ir_free(&g); return -1; }
    int rc = bk_split_graph(&g, 2, &inst, why, cap, &e);
    if (rc == 0) {
        int t = ir_find(&inst, "t");
        for (int k = 0; k < 4; k++) tdims[k] = inst.t[t].dims[k];
        ir_free(&inst);
    }
    ir_free(&g);
    return rc;
}

TEST(batch_moved_inside_the_graph)
{
    char why[256];
    int64_t td[4] = {0};
    CHECKF(moved_batch("", 0, why, sizeof why, td) == 0, "%s", why);
    CHECK(td[0] == 3 && td[1] == 2 && td[2] == 5 && td[3] == 4);   /* an instance's t: its 2 images on axis 1 */
    CHECKF(moved_batch("softmax", -1, why, sizeof why, td) == 0, "%s", why);
    CHECK_EQ_INT(moved_batch("softmax", 1, why, sizeof why, td), 1);
    CHECK_STR_CONTAINS(why, "node 'mixer' (Softmax) works across images: axis 1, the batch");
    CHECK_EQ_INT(moved_batch("reshape", 0, why, sizeof why, td), 1);
    CHECK_STR_CONTAINS(why, "node 'mixer' (Reshape) works across images: reshapes the batch axis 1 into axis 0");
}

/* x[8,6] -> Transpose (the batch on axis 1) -> OP with no attributes ->
 * Transpose back -> y, split at micro-batch 2: "" when accepted, else why. */
static int transposed_op(const char *op, char *why, size_t cap)
{
    IrGraph g, inst;
    AtlErr e;
    int64_t d[2] = {8, 6}, p[2] = {1, 0};
    ir_init(&g);
    g.opset = 17;
    int ok = ir_add_input(&g, "x", IR_F32, 2, d, &e) >= 0 && ir_add_op(&g, "Transpose", "t0", "x", "t", &e) >= 0 &&
             ir_set_attr_ints(&g, g.nn - 1, "perm", p, 2, &e) == 0 && ir_add_op(&g, op, "mixer", "t", "m", &e) >= 0 &&
             ir_add_op(&g, "Transpose", "t1", "m", "y", &e) >= 0 && ir_set_attr_ints(&g, g.nn - 1, "perm", p, 2, &e) == 0 &&
             ir_add_output(&g, "y", &e) >= 0 && ir_toposort(&g, &e) == 0 && ir_infer_shapes(&g, &e) == 0;
    if (!ok) { printf("  graph: %s\n", e.msg); ir_free(&g); return -1; }
    int rc = bk_split_graph(&g, 2, &inst, why, cap, &e);
    if (rc == 0) ir_free(&inst);
    ir_free(&g);
    return rc;
}

/* With the batch off axis 0 only ops that keep positions apart, or name
 * their axes, pass: a Softmax by its default axis (-1, here the batch) and
 * an op outside that list are refused; a Relu passes. */
TEST(moved_batch_meets_implicit_axes)
{
    char why[256];
    CHECK_EQ_INT(transposed_op("Softmax", why, sizeof why), 1);
    CHECK_STR_CONTAINS(why, "node 'mixer' (Softmax) works across images: normalises over the batch on axis 1");
    CHECK_EQ_INT(transposed_op("Hardmax", why, sizeof why), 1);
    CHECK_STR_CONTAINS(why, "Hardmax with the batch on axis 1");
    CHECKF(transposed_op("Relu", why, sizeof why) == 0, "%s", why);
}

/* A dynamic-batch export compiled at batch 8 has its Shape arithmetic
 * folded into constants holding 8 (x[8,6] -> Reshape to [8,2,3] -> y):
 * the instance at micro-batch 2 makes them follow 2. */
TEST(folded_batch_constants_follow_the_micro_batch)
{
    IrGraph g, inst;
    AtlErr e;
    char why[256];
    int64_t d[2] = {8, 6}, three = 3, tgt[3] = {8, 2, 3};
    ir_init(&g);
    g.opset = 17;
    REQUIRE(ir_add_input(&g, "x", IR_F32, 2, d, &e) >= 0 && ir_add_const(&g, "tgt", IR_I64, 1, &three, tgt, &e) >= 0);
    REQUIRE(ir_add_op(&g, "Reshape", "heads", "x,tgt", "y", &e) >= 0 && ir_add_output(&g, "y", &e) >= 0);
    REQUIRE(ir_toposort(&g, &e) == 0 && ir_infer_shapes(&g, &e) == 0);
    CHECKF(bk_split_graph(&g, 2, &inst, why, sizeof why, &e) == 0, "%s", why);
    int y = ir_find(&inst, "y");
    CHECK(y >= 0 && inst.t[y].dims[0] == 2 && inst.t[y].dims[1] == 2 && inst.t[y].dims[2] == 3);
    CHECK_EQ_INT(inst.batch_followed, 1);
    ir_free(&inst);
    ir_free(&g);
}

/* Tensors crossing the cut before node c, counted the plain way. */
static int crossing(const IrGraph *g, int c)
{
    int n = 0;
    for (int t = 0; t < g->nt; t++) {
        if (g->t[t].data || g->t[t].producer < 0 || g->t[t].producer >= c) continue;
        int read_later = 0;
        for (int i = c; i < g->nn; i++)
            for (int k = 0; k < g->nodes[i].nin; k++) read_later |= g->nodes[i].in[k] == t;
        n += read_later;
    }
    return n;
}

TEST(cuts_are_where_one_tensor_crosses)
{
    IrGraph g;
    chain_graph(&g, 8);
    int cuts[16], n = bk_stage_cuts(&g, cuts, 16), k = 0;
    for (int c = 1; c < g.nn; c++) {
        int want = crossing(&g, c) == 1;
        int got = k < n && cuts[k] == c;
        CHECKF(want == got, "cut before node %d: %d crossing, candidate %d", c, crossing(&g, c), got);
        k += got;
    }
    CHECK_EQ_INT(k, n);
    /* after n0, a is read by n1 and n2: one tensor; after n1, a and b: two */
    CHECK(n >= 1 && cuts[0] == 1);
    int b = bk_stage_boundary(&g, 3);
    CHECK(b >= 0 && !strcmp(g.t[b].name, "c"));
    ir_free(&g);
}

TEST(stage_graph_has_the_crossing_tensors_as_io)
{
    IrGraph g, s;
    AtlErr e;
    chain_graph(&g, 8);
    REQUIRE(bk_stage_graph(&g, 3, g.nn, &s, &e) == 0);
    CHECK_EQ_INT(s.nn, 2);
    CHECK(s.nin == 1 && !strcmp(s.t[s.inputs[0]].name, "c"));
    CHECK(s.nout == 1 && !strcmp(s.t[s.outputs[0]].name, "y"));
    ir_free(&s);
    REQUIRE(bk_stage_graph(&g, 0, 3, &s, &e) == 0);
    CHECK(s.nin == 1 && !strcmp(s.t[s.inputs[0]].name, "x"));
    CHECK(s.nout == 1 && !strcmp(s.t[s.outputs[0]].name, "c"));
    CHECK_EQ_INT(s.t[ir_find(&s, "c")].dims[0], 8);
    ir_free(&s);
    ir_free(&g);
}

TEST(plan_takes_the_cheapest_cut_and_growing_batches)
{
    /* 4 units at nodes 0..3; at m = 1 each costs 10 per image; at m = 2 the
     * first two cost 50 per instance (activations spill) and the last two
     * 12 (weights read once for two images); 2 images per cluster */
    int first[4] = {0, 1, 2, 3};
    uint64_t e1[4] = {10, 10, 10, 10}, e2[4] = {50, 50, 12, 12};
    BkStageCosts costs[2] = {{1, 4, first, e1, 0}, {2, 4, first, e2, 0}};
    int cuts[3] = {1, 2, 3};
    uint64_t cut_cost[3] = {1, 1, 1};
    BkStagePlan p;
    REQUIRE(bk_stage_plan(costs, 2, cuts, 3, 4, 2, cut_cost, 0, &p) == 0);
    /* m=1 for units 0-1 (2 x 20 = 40), m=2 for 2-3 (1 x 24), + 1 */
    CHECK_EQ_INT(p.n, 2);
    CHECK(p.start[0] == 0 && p.start[1] == 2 && p.start[2] == 4);
    CHECK(p.m[0] == 1 && p.m[1] == 2);
    CHECK_EQ_INT((int)p.est, 65);
    /* a boundary dearer than what it saves: one stage at m = 1 (80) */
    uint64_t dear[3] = {100, 100, 100};
    REQUIRE(bk_stage_plan(costs, 2, cuts, 3, 4, 2, dear, 0, &p) == 0);
    CHECK(p.n == 1 && p.m[0] == 1 && p.est == 80);
    /* no cut candidates: the better uniform micro-batch */
    uint64_t e3[4] = {5, 5, 5, 5};
    costs[1].est = e3;
    REQUIRE(bk_stage_plan(costs, 2, cuts, 0, 4, 2, cut_cost, 0, &p) == 0);
    CHECK(p.n == 1 && p.m[0] == 2 && p.est == 20);
}

TEST(plan_may_run_a_late_stage_on_the_whole_chip)
{
    /* the units of test above at m = 1 (10 each per image) and m = 2; the
     * whole chip at the batch (8 images, 4 clusters: 2 per cluster) runs
     * units 2-3 for 6 each once (weights read once), units 0-1 for 40 */
    int first[4] = {0, 1, 2, 3};
    uint64_t e1[4] = {10, 10, 10, 10}, e2[4] = {50, 50, 12, 12}, ec[4] = {40, 40, 6, 6};
    BkStageCosts costs[3] = {{1, 4, first, e1, 0}, {2, 4, first, e2, 0}, {8, 4, first, ec, 1}};
    int cuts[3] = {1, 2, 3};
    uint64_t cut_cost[3] = {1, 1, 1};
    BkStagePlan p;
    REQUIRE(bk_stage_plan(costs, 3, cuts, 3, 4, 2, cut_cost, 2, &p) == 0);
    /* m = 1 for units 0-1 (40), chip for 2-3 (12), the cut 1 + the chip barrier 2 */
    CHECK_EQ_INT(p.n, 2);
    CHECK(p.start[1] == 2 && p.m[0] == 1 && !p.chip[0]);
    CHECK(p.chip[1] && p.m[1] == 8);
    CHECK_EQ_INT((int)p.est, 55);
    /* a dear chip barrier: the split plan of the test above (65) */
    REQUIRE(bk_stage_plan(costs, 3, cuts, 3, 4, 2, cut_cost, 100, &p) == 0);
    CHECK(p.n == 2 && !p.chip[0] && !p.chip[1] && p.est == 65);
    /* the whole chip cheapest everywhere: never a plan of one chip stage
     * (that is placement chip, priced on its own) */
    uint64_t cheap[4] = {1, 1, 1, 1};
    costs[2].est = cheap;
    REQUIRE(bk_stage_plan(costs, 3, cuts, 3, 4, 2, cut_cost, 0, &p) == 0);
    CHECK(p.n >= 2 || !p.chip[0]);
    /* a chip stage starts and ends only where the chip compile starts a unit */
    int cfirst[3] = {0, 1, 3};
    uint64_t ec3[3] = {40, 40, 2};
    BkStageCosts c2[3] = {{1, 4, first, e1, 0}, {2, 4, first, e2, 0}, {8, 3, cfirst, ec3, 1}};
    REQUIRE(bk_stage_plan(c2, 3, cuts, 3, 4, 2, cut_cost, 2, &p) == 0);
    /* not chip from node 2 (45): m = 1 for 0-1 (40), m = 2 for 2 (12), chip for 3 (2), cuts 1 + 1 + 2 */
    CHECK_EQ_INT(p.n, 3);
    CHECK(p.start[1] == 2 && p.start[2] == 3 && p.m[1] == 2 && p.chip[2]);
    CHECK_EQ_INT((int)p.est, 58);
}

TEST(chip_stage_repriced_from_one_cut_earlier)
{
    /* the chip compile's DRAM plan prices units 2 and 3 at 20 and 6: the
     * plan runs units 0-1 at m = 1 (40), 2 at m = 2 (12), 3 on the chip
     * (6), cuts 1 + 1 + 2 (62). Built with bands from one cut earlier
     * (node 2, where the chip compile starts a unit), units 2-3 cost 4
     * and 5: spliced in, the chip stage starts at node 2 (40 + 9 + 1 + 2) */
    int first[4] = {0, 1, 2, 3};
    uint64_t e1[4] = {10, 10, 10, 10}, e2[4] = {50, 50, 12, 12}, ec[4] = {40, 40, 20, 6};
    int *cf = malloc(4 * sizeof *cf);
    uint64_t *ce = malloc(4 * sizeof *ce);
    REQUIRE(cf && ce);
    memcpy(cf, first, sizeof first);
    memcpy(ce, ec, sizeof ec);
    BkStageCosts costs[3] = {{1, 4, first, e1, 0}, {2, 4, first, e2, 0}, {8, 4, cf, ce, 1}};
    int cuts[3] = {1, 2, 3};
    uint64_t cut_cost[3] = {1, 1, 1};
    BkStagePlan p;
    REQUIRE(bk_stage_plan(costs, 3, cuts, 3, 4, 2, cut_cost, 2, &p) == 0);
    CHECK(p.n == 3 && p.start[2] == 3 && p.chip[2] && p.est == 62);
    CHECK_EQ_INT(bk_stage_reach(&costs[2], cuts, 3, 3, 4), 2);
    CHECK_EQ_INT(bk_stage_reach(&costs[2], cuts, 3, 1, 4), -1);
    int tf[2] = {2, 3};
    uint64_t te[2] = {4, 5};
    BkStageCosts tail = {8, 2, tf, te, 1};
    REQUIRE(bk_stage_splice(&costs[2], 2, &tail) == 0);
    CHECK_EQ_INT(costs[2].n, 4);
    CHECK(costs[2].first[0] == 0 && costs[2].est[1] == 40 && costs[2].first[2] == 2 && costs[2].est[2] == 4 &&
          costs[2].est[3] == 5);
    REQUIRE(bk_stage_plan(costs, 3, cuts, 3, 4, 2, cut_cost, 2, &p) == 0);
    CHECK(p.n == 2 && p.start[1] == 2 && !p.chip[0] && p.chip[1] && p.est == 52);
    free(costs[2].first);
    free(costs[2].est);
}

int main(void)
{
    RUN(separable_graph_clones_at_the_micro_batch);
    RUN(ops_across_images_are_refused);
    RUN(batch_moved_inside_the_graph);
    RUN(folded_batch_constants_follow_the_micro_batch);
    RUN(moved_batch_meets_implicit_axes);
    RUN(cuts_are_where_one_tensor_crosses);
    RUN(stage_graph_has_the_crossing_tensors_as_io);
    RUN(plan_may_run_a_late_stage_on_the_whole_chip);
    RUN(plan_takes_the_cheapest_cut_and_growing_batches);
    RUN(chip_stage_repriced_from_one_cut_earlier);
    return test_summary("test_staged");
}
