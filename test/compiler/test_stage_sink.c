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
 * conv2, at a lower estimate, the interpreter's output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "test/compiler/chip_variant.h"
#include "compiler/backend/sink.h"
#include "compiler/legalize/legalize.h"

static int node_named(const IrGraph *g, const char *name)
{
    for (int i = 0; i < g->nn; i++)
        if (!g->nodes[i].dead && !strcmp(g->nodes[i].name, name)) return i;
    return -1;
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
        o.placement = BK_PLACE_SPLIT;
        o.stage_plan = "1,y:2";
        o.no_reorder = !on;
        o.group = BK_GROUP_NONE;   /* layers alone: a chain of the whole block would hold a, b and d in LMEM */
        BkSummary sum;
        memset(&sum, 0, sizeof sum);
        double err = -1;
        char msg[1024] = "";
        const char *what = on ? "reorder" : "no reorder";
        int rc = e2e_graph_run(&g, chip, &o, &err, NULL, &sum, msg, sizeof msg);
        CHECKF(rc == 0, "%s: %s", what, msg);
        if (rc == 0) {
            CHECKF(err <= 2e-6, "%s: error %g", what, err);
            CHECK(sum.nstages == 2);
            est[on] = sum.est_cycles;
            dram[on] = sum.act_dram_tensors;
            for (int i = 0; i < sum.nlayers; i++) subs[on] += strstr(sum.layers[i].name, "a/subsample") != NULL;
        }
        bk_summary_free(&sum);
    }
    CHECK_EQ_INT(subs[0], 0);
    CHECK_EQ_INT(subs[1], 1);
    CHECKF(est[1] < est[0], "estimate %llu reordered, %llu not", (unsigned long long)est[1], (unsigned long long)est[0]);
    CHECKF(dram[1] < dram[0], "%d tensors in DRAM reordered, %d not", dram[1], dram[0]);
    printf("  %llu -> %llu estimated cycles, %d -> %d tensors in DRAM\n", (unsigned long long)est[0],
           (unsigned long long)est[1], dram[0], dram[1]);
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
        o.placement = BK_PLACE_SPLIT;
        o.stage_plan = "1,y:2";
        o.no_reorder = !on;
        BkSummary sum;
        memset(&sum, 0, sizeof sum);
        double err = -1;
        char msg[1024] = "";
        const char *what = on ? "reorder" : "no reorder";
        int rc = e2e_graph_run(&g, chip, &o, &err, NULL, &sum, msg, sizeof msg);
        CHECKF(rc == 0, "%s: %s", what, msg);
        if (rc == 0) {
            CHECKF(err <= 2e-6, "%s: error %g", what, err);
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

int main(void)
{
    RUN(subsample_and_move_keep_the_graph);
    RUN(spilling_stage_reads_a_subsampled_copy);
    RUN(spilling_stage_runs_its_shortcut_late);
    return test_summary("test_stage_sink");
}
