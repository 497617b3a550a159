/* test_stage_sink.c - a staged split stage whose activations spill
 * reorders its block (compiler/backend/sink.c; compile.c, sink_stage;
 * docs/backend.md, "Shortcuts run late").
 *
 * The graph side: bk_subsample_find finds a strided pointwise convolution
 * whose input an earlier node reads; bk_subsample_apply makes it read a
 * Slice of that input at its strides, placed just before the input's
 * first reader, at stride 1, with the same output shape; bk_sink_move
 * moves a node to just before another, the nodes between up one.
 *
 * End to end on a1 with 168 KiB of SRAM a cluster: a block like ResNet-50's
 * layer2.0 at one image an instance (its input a, conv1's output b and the
 * strided downsample's output d do not fit together, so two of them
 * spill). With the rewrite the downsample reads a/subsample, made before
 * conv1, and a dies at conv1: the stage's estimate is lower than with
 * BkOptions.no_reorder, fewer tensors are left in DRAM, the output is the
 * interpreter's and the simulator's race detector (on in every run) finds
 * nothing. With 1280 KiB, a block like layer1.0 runs its downsample after
 * conv2 (overlays off), at a lower estimate, the interpreter's output;
 * with overlays, before conv1, whose output then takes a's bytes: a lower
 * estimate, fewer tensors in DRAM, the interpreter's output, bit for bit
 * the --no-reorder stage's.
 *
 * int8 (Int8Conv / Int8Add, in a quantised ResNet's node order: the
 * downsample first): the layer2.0-like block with 42 KiB of SRAM moves
 * its strided downsample to just before the last convolution, reading
 * the subsampled copy made before conv1, at a lower estimate; its output
 * the interpreter's exactly, and bit for bit the --no-reorder stage's
 * and the uniform schedule's (one micro-batch of 2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "test/compiler/chip_variant.h"
#include "test/compiler/int8_conv.h"
#include "compiler/backend/sink.h"
#include "compiler/legalize/legalize.h"

static int node_named(const IrGraph *g, const char *name)
{
    for (int i = 0; i < g->nn; i++)
        if (!g->nodes[i].dead && !strcmp(g->nodes[i].name, name)) return i;
    return -1;
}

/* The unit holding node `name` (a group names its first member), or -1. */
static int unit_of(const BkSummary *sum, const char *name)
{
    for (int i = 0; i < sum->nlayers; i++)
        if (!strcmp(sum->layers[i].name, name)) return i;
    return -1;
}

/* A reordering test's verdict on its runs without the pass ([0]) and with
 * it ([1]): what the pass does (mark: a subsampled copy, the downsample
 * run first) absent without it and present with it, a lower estimate and
 * fewer tensors in DRAM with it; prints the figures. */
static void check_reordered(const int mark[2], const uint64_t est[2], const int dram[2])
{
    CHECK_EQ_INT(mark[0], 0);
    CHECK_EQ_INT(mark[1], 1);
    CHECKF(est[1] < est[0], "estimate %llu reordered, %llu not", (unsigned long long)est[1], (unsigned long long)est[0]);
    CHECKF(dram[1] < dram[0], "%d tensors in DRAM reordered, %d not", dram[1], dram[0]);
    printf("  %llu -> %llu estimated cycles, %d -> %d tensors in DRAM\n", (unsigned long long)est[0],
           (unsigned long long)est[1], dram[0], dram[1]);
}

TEST(subsample_and_move_keep_the_graph)
{
    IrGraph g;
    AtlErr e;
    stage_block_graph(&g, (BottleneckShape){.a = 32, .b = 16, .c = 16, .e = 64, .out = 64, .stride = 2});
    REQUIRE(ir_toposort(&g, &e) == 0 && ir_infer_shapes(&g, &e) == 0);
    /* a context with no node absorbed and no tails: only the graph matters here */
    BkCtx c;
    memset(&c, 0, sizeof c);
    c.g = &g;
    c.skip = calloc((size_t)g.nn + 1, sizeof *c.skip);
    c.tail = malloc(((size_t)g.nn + 1) * sizeof *c.tail);
    REQUIRE(c.skip && c.tail);
    for (int i = 0; i < g.nn; i++) c.tail[i] = -1;
    int d[4], n = bk_subsample_find(&g, &c, d, 4), cd = node_named(&g, "cd");
    CHECK_EQ_INT(n, 1);
    CHECK(n == 1 && d[0] == cd);
    int dt = ir_find(&g, "d");
    int64_t dims[4];
    memcpy(dims, g.t[dt].dims, sizeof dims);
    CHECKF(bk_subsample_apply(&g, cd, &e) == 0, "%s", e.msg);
    int s = node_named(&g, "a/subsample"), cb = node_named(&g, "cb");
    cd = node_named(&g, "cd");
    REQUIRE(s >= 0 && cb >= 0 && cd >= 0);
    CHECK(s == cb - 1 && !strcmp(g.nodes[s].op, "Slice"));
    CHECK(g.nodes[cd].in[0] == ir_find(&g, "a/subsample") && ir_attr(&g.nodes[cd], "strides")->ints[0] == 1);
    for (int k = 0; k < 4; k++) CHECK(g.t[dt].dims[k] == dims[k]);
    CHECK(g.t[ir_find(&g, "a/subsample")].dims[2] == 16);
    /* the downsample just before the convolution whose residual it is */
    int ce = node_named(&g, "ce");
    bk_sink_move(&g, cd, ce);
    CHECK(node_named(&g, "cd") == ce - 1 && node_named(&g, "ce") == ce);
    CHECK(g.t[ir_find(&g, "d")].producer == ce - 1);
    free(c.skip);
    free(c.tail);
    ir_free(&g);
}

/* a (128 KiB an image) and a quarter of it, as ResNet-50's layer2.0 with
 * 4 MiB: a and conv1's output b (64 KiB), or a and the downsample's
 * output d (64 KiB), do not fit together */
#define SRAM "168K"

TEST(spilling_stage_reads_a_subsampled_copy)
{
    char chip[64];
    REQUIRE(chip_variant("configs/a1.ini", "sram", "bytes", SRAM, chip, sizeof chip) == 0);
    IrGraph g;
    stage_block_graph(&g, (BottleneckShape){.a = 32, .b = 16, .c = 16, .e = 64, .out = 64, .stride = 2});
    uint64_t est[2] = {0, 0};
    int dram[2] = {0, 0}, subs[2] = {0, 0};
    for (int on = 0; on < 2; on++) {
        BkOptions o;
        bk_options_default(&o);
        o.no_reorder = !on;
        o.group = BK_GROUP_NONE;   /* layers alone: a chain of the whole block would hold a, b and d in LMEM */
        BkSummary sum;
        if (stage_split_run(&g, chip, &o, on ? "reorder" : "no reorder", &sum) == 0) {
            CHECK(sum.nstages == 2);
            est[on] = sum.est_cycles;
            dram[on] = sum.act_dram_tensors;
            for (int i = 0; i < sum.nlayers; i++) subs[on] += strstr(sum.layers[i].name, "a/subsample") != NULL;
        }
        bk_summary_free(&sum);
    }
    check_reordered(subs, est, dram);
    remove(chip);
    ir_free(&g);
}

/* The block's input a (256 KiB an image), conv1's output b and the
 * downsample's output d (1 MiB) do not fit together in 1280 KiB, nor do
 * b, conv2's output c and d: one of a, b spills. With the downsample
 * run just before conv3, c (read once, by a 1x1 convolution) spills
 * instead of b (read by the 3x3 conv2). */
TEST(spilling_stage_runs_its_shortcut_late)
{
    char chip[64];
    REQUIRE(chip_variant("configs/a1.ini", "sram", "bytes", "1280K", chip, sizeof chip) == 0);
    IrGraph g;
    stage_block_graph(&g, (BottleneckShape){.a = 64, .b = 64, .c = 64, .e = 256, .out = 32, .stride = 1});   /* layer1.0-like */
    uint64_t est[2] = {0, 0};
    int late[2] = {-1, -1};
    for (int on = 0; on < 2; on++) {
        BkOptions o;
        bk_options_default(&o);
        o.no_reorder = !on;
        o.no_overlay = 1;   /* the move alone: with overlays the downsample runs first (below) */
        BkSummary sum;
        if (stage_split_run(&g, chip, &o, on ? "reorder" : "no reorder", &sum) == 0) {
            est[on] = sum.est_cycles;
            int cd = -1, cc = -1;   /* the units holding the downsample and conv2 (a group names its first) */
            for (int i = 0; i < sum.nlayers; i++) {
                if (!strncmp(sum.layers[i].name, "cd", 2)) cd = i;
                if (!strncmp(sum.layers[i].name, "cc", 2)) cc = i;
            }
            late[on] = cd >= 0 && cc >= 0 ? cd > cc : -1;
        }
        bk_summary_free(&sum);
    }
    CHECK_EQ_INT(late[0], 0);
    CHECK_EQ_INT(late[1], 1);
    CHECKF(est[1] < est[0], "estimate %llu reordered, %llu not", (unsigned long long)est[1], (unsigned long long)est[0]);
    printf("  %llu -> %llu estimated cycles\n", (unsigned long long)est[0], (unsigned long long)est[1]);
    remove(chip);
    ir_free(&g);
}

/* The same block with room for a and d together (1.25 MiB) but not b
 * beside them: run before cb, whose output then takes a's dying bytes,
 * the downsample leaves cc -> ce nothing of a's size to spill (ResNet-50's
 * layer1.0 at 4 MiB). */
TEST(spilling_stage_runs_its_shortcut_first)
{
    char chip[64];
    REQUIRE(chip_variant("configs/a1.ini", "sram", "bytes", "1280K", chip, sizeof chip) == 0);
    IrGraph g;
    stage_block_graph(&g, (BottleneckShape){.a = 64, .b = 64, .c = 64, .e = 256, .out = 32, .stride = 1});
    uint64_t est[2] = {0, 0};
    int first[2] = {-1, -1}, dram[2] = {0, 0};
    uint8_t *y[2] = {NULL, NULL};
    size_t ylen[2] = {0, 0};
    for (int way = 0; way < 2; way++) {   /* no reorder, reorder */
        BkOptions o;
        bk_options_default(&o);
        o.no_reorder = way == 0;
        BkSummary sum;
        if (stage_split_run_y(&g, chip, &o, way ? "reorder" : "no reorder", &sum, &y[way], &ylen[way]) == 0) {
            est[way] = sum.est_cycles;
            dram[way] = sum.act_dram_tensors;
            int cd = unit_of(&sum, "cd"), cb = unit_of(&sum, "cb");
            first[way] = cd >= 0 && cb >= 0 ? cd < cb : -1;
        }
        bk_summary_free(&sum);
    }
    CHECKF(y[1] && y[0] && ylen[1] == ylen[0] && !memcmp(y[1], y[0], ylen[0]), "reordered output differs");
    check_reordered(first, est, dram);
    for (int way = 0; way < 2; way++) free(y[way]);
    remove(chip);
    ir_free(&g);
}

/* stage_block_graph in int8, in the node order a quantised ResNet-50
 * has (the downsample first, its Int8Add a layer of its own): x f32
 * [8,16,32,32] -> QuantizeLinear -> 3x3 ca + Relu a -> 1x1 cd (stride)
 * d; 1x1 cb + Relu b -> 3x3 cc (stride) + Relu c -> 1x1 ce e; e + d
 * (Int8Add, Relu) y -> 1x1 co -> DequantizeLinear out. */
static void stage_block_graph_i8(IrGraph *g, BottleneckShape k)
{
    AtlErr e;
    int64_t xd[4] = {8, 16, 32, 32};
    new_graph(g, "x", 4, xd);
    i8_quantize_input(g, "x", "xq");
    i8_conv(g, &rng, "ca", "xq", 16, k.a, 3, 1, -3, -128, 1, "a");
    i8_conv(g, &rng, "cd", "a", k.a, k.e, 1, k.stride, -128, 5, 0, "d");
    i8_conv(g, &rng, "cb", "a", k.a, k.b, 1, 1, -128, -128, 1, "b");
    i8_conv(g, &rng, "cc", "b", k.b, k.c, 3, k.stride, -128, -128, 1, "c");
    i8_conv(g, &rng, "ce", "c", k.c, k.e, 1, 1, -128, 7, 0, "e");
    int n = ir_add_op(g, "Int8Add", "add", "e,d", "y", &e);
    ir_set_attr_float(g, n, "a_scale", 0.6137f, &e);
    ir_set_attr_int(g, n, "a_zero_point", 7, &e);
    ir_set_attr_float(g, n, "b_scale", 0.4821f, &e);
    ir_set_attr_int(g, n, "b_zero_point", 5, &e);
    ir_set_attr_int(g, n, "y_zero_point", -128, &e);
    ir_set_attr_int(g, n, "y_min", -128, &e);
    ir_set_attr_int(g, n, "y_max", 127, &e);
    ir_set_attr_int(g, n, "to", IR_I8, &e);
    i8_conv(g, &rng, "co", "y", k.e, k.out, 1, 1, -128, 4, 0, "o");
    i8_dequantize_output(g, "o", "out");
}

/* The int8 block on a1 with `sram` bytes of SRAM a cluster: compiled
 * staged ("1,y:2") with the rewrites and without (no_reorder), and
 * uniform (one micro-batch of 2 for every layer): each the
 * interpreter's answer, all three bit for bit the same; the reordered
 * stage priced lower than the one without. Returns the reordered run's summary in *out (the caller
 * frees). */
static void int8_block_case(BottleneckShape k, const char *sram, BkSummary *out)
{
    char chip[64];
    REQUIRE(chip_variant("configs/a1.ini", "sram", "bytes", sram, chip, sizeof chip) == 0);
    IrGraph g;
    stage_block_graph_i8(&g, k);
    uint64_t est[2] = {0, 0};
    int dram[2] = {0, 0};
    uint8_t *y[3] = {NULL, NULL, NULL};
    size_t ylen[3] = {0, 0, 0};
    for (int way = 0; way < 3; way++) {   /* no reorder, reorder, uniform */
        BkOptions o;
        bk_options_default(&o);
        o.placement = BK_PLACE_SPLIT;
        if (way < 2) o.stage_plan = "1,y:2";
        else {
            o.schedule = BK_SCHED_UNIFORM;
            o.micro_batch = 2;
        }
        o.no_reorder = way == 0;
        o.group = BK_GROUP_NONE;
        BkSummary sum;
        memset(&sum, 0, sizeof sum);
        double err = -1;
        char msg[1024] = "";
        static const char *const what[] = {"no reorder", "reorder", "uniform"};
        int rc = e2e_graph_run_y(&g, chip, &o, &err, NULL, &sum, msg, sizeof msg, &y[way], &ylen[way]);
        CHECKF(rc == 0, "%s: %s", what[way], msg);
        if (rc == 0) {
            CHECKF(err == 0, "%s: error %g against the interpreter", what[way], err);
            if (way < 2) {
                est[way] = sum.est_cycles;
                dram[way] = sum.act_dram_tensors;
            }
        }
        if (way == 1) *out = sum;
        else bk_summary_free(&sum);
    }
    for (int way = 1; way < 3; way++)
        CHECKF(y[way] && y[0] && ylen[way] == ylen[0] && !memcmp(y[way], y[0], ylen[0]), "output %d differs", way);
    CHECKF(est[1] < est[0], "estimate %llu reordered, %llu not", (unsigned long long)est[1], (unsigned long long)est[0]);
    printf("  %llu -> %llu estimated cycles, %d -> %d tensors in DRAM\n", (unsigned long long)est[0],
           (unsigned long long)est[1], dram[0], dram[1]);
    for (int way = 0; way < 3; way++) free(y[way]);
    remove(chip);
    ir_free(&g);
}

/* layer2.0-like in int8 (the downsample listed first, strided): run
 * just before ce, reading a subsampled copy of a made before cb, so a
 * dies at cb (sink and subsample in one rewrite). */
TEST(int8_stage_sinks_a_subsampled_shortcut)
{
    BkSummary sum;
    memset(&sum, 0, sizeof sum);
    int8_block_case((BottleneckShape){.a = 32, .b = 16, .c = 16, .e = 64, .out = 64, .stride = 2}, "42K", &sum);
    int cd = unit_of(&sum, "cd"), cc = unit_of(&sum, "cc"), sub = unit_of(&sum, "a/subsample"), cb = unit_of(&sum, "cb");
    CHECKF(cd > cc && cc >= 0, "cd at unit %d, cc at %d", cd, cc);
    CHECKF(sub >= 0 && sub < cb, "a/subsample at unit %d, cb at %d", sub, cb);
    bk_summary_free(&sum);
}

int main(void)
{
    RUN(subsample_and_move_keep_the_graph);
    RUN(spilling_stage_reads_a_subsampled_copy);
    RUN(spilling_stage_runs_its_shortcut_late);
    RUN(spilling_stage_runs_its_shortcut_first);
    RUN(int8_stage_sinks_a_subsampled_shortcut);
    return test_summary("test_stage_sink");
}
