/* test_stage_overlay.c - a pointwise convolution of a split stage writes
 * its output over its dying input (alloc/place.c, pair_overlay and
 * flag_overlay; backend/sink.c, bk_overlay_mark; compile.c, sink_stage;
 * docs/backend.md, "Outputs over dying inputs").
 *
 * The graph side: bk_overlay_shape_ok takes a 1x1, stride-1, unpadded,
 * one-group convolution of one image and no other; bk_overlay_mark marks
 * such a convolution only where its input is read by no later node (in
 * a block like ResNet-50's layer2.0, conv1 once the downsample reads a
 * subsampled copy made before it) and not one with a residual tail.
 *
 * End to end on a1 with 700 KiB of SRAM a cluster: a layer2.0-like block
 * (test_stage_sink's, wider) at one image an instance. Its input a and
 * conv1's output b do not fit beside the subsampled copy; b over a does.
 * With the overlay (the default) the stage leaves fewer tensors in DRAM
 * at a lower estimate than with BkOptions.no_overlay, conv1 is cut into
 * no output-channel chunks, and the output is the interpreter's with the
 * simulator's race detector (on in every run) finding nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "test/compiler/chip_variant.h"
#include "compiler/backend/sink.h"
#include "compiler/alloc/alloc.h"

static int node_named(const IrGraph *g, const char *name)
{
    for (int i = 0; i < g->nn; i++)
        if (!g->nodes[i].dead && !strcmp(g->nodes[i].name, name)) return i;
    return -1;
}

static int marked(const IrGraph *g, const char *name)
{
    int k = node_named(g, name);
    return k >= 0 && ir_attr_int(&g->nodes[k], BK_OVERLAY_ATTR, 0) == 1;
}

TEST(overlay_marks_pointwise_convs_whose_input_dies)
{
    IrGraph g;
    AtlErr e;
    stage_block_graph(&g, (BottleneckShape){.a = 32, .b = 16, .c = 16, .e = 64, .out = 64, .stride = 2});
    g.t[ir_find(&g, "x")].dims[0] = 1;   /* one image, as a stage of one image an instance */
    REQUIRE(ir_toposort(&g, &e) == 0 && ir_infer_shapes(&g, &e) == 0);
    /* a context with no node absorbed, every tensor its own root */
    BkCtx c;
    memset(&c, 0, sizeof c);
    c.g = &g;
    c.skip = calloc((size_t)g.nn + 1, sizeof *c.skip);
    c.tail = malloc(((size_t)g.nn + 1) * sizeof *c.tail);
    c.pl = calloc((size_t)g.nt + 16, sizeof *c.pl);
    REQUIRE(c.skip && c.tail && c.pl);
    for (int t = 0; t < g.nt + 16; t++) c.pl[t].root = t;
    for (int i = 0; i < g.nn; i++) c.tail[i] = -1;
    CHECK(bk_overlay_shape_ok(&g, node_named(&g, "cb")));    /* 1x1, stride 1 */
    CHECK(!bk_overlay_shape_ok(&g, node_named(&g, "ca")));   /* 3x3, padded */
    CHECK(!bk_overlay_shape_ok(&g, node_named(&g, "cd")));   /* stride 2 */
    CHECK(!bk_overlay_shape_ok(&g, node_named(&g, "cc")));   /* 3x3 */
    /* a is read by cb and later by cd: not marked; nor ce, with a tail */
    int ce = node_named(&g, "ce");
    c.tail[ce] = ce + 1 < g.nn ? ce + 1 : ce;
    CHECK_EQ_INT(bk_overlay_mark(&g, &c, &e), 0);
    CHECK(!marked(&g, "cb") && !marked(&g, "ce"));
    /* cd reading a/subsample, made before cb: a dies at cb */
    CHECKF(bk_subsample_apply(&g, node_named(&g, "cd"), &e) == 0, "%s", e.msg);
    free(c.skip);
    free(c.tail);
    c.skip = calloc((size_t)g.nn + 1, sizeof *c.skip);
    c.tail = malloc(((size_t)g.nn + 1) * sizeof *c.tail);
    REQUIRE(c.skip && c.tail);
    for (int i = 0; i < g.nn; i++) c.tail[i] = -1;
    c.tail[node_named(&g, "ce")] = node_named(&g, "ce");
    CHECK_EQ_INT(bk_overlay_mark(&g, &c, &e), 1);
    CHECK(marked(&g, "cb") && !marked(&g, "ce") && !marked(&g, "cd"));
    /* two images: y's image 1 would lie over x's image 0 */
    IrGraph g2;
    stage_block_graph(&g2, (BottleneckShape){.a = 32, .b = 16, .c = 16, .e = 64, .out = 64, .stride = 2});
    g2.t[ir_find(&g2, "x")].dims[0] = 2;
    REQUIRE(ir_infer_shapes(&g2, &e) == 0);
    CHECK(!bk_overlay_shape_ok(&g2, node_named(&g2, "cb")));
    ir_free(&g2);
    free(c.skip);
    free(c.tail);
    free(c.pl);
    ir_free(&g);
}

/* a (512 KiB an image, 128 channels), its subsampled copy (128 KiB) and
 * conv1's output b (256 KiB, 64 channels: the layer alone would cut it
 * into output-channel chunks) do not fit 700 KiB together; a and the copy
 * do */
#define SRAM "700K"

static void overlay_run(const char *sram, BottleneckShape k)
{
    char chip[64];
    REQUIRE(chip_variant("configs/a1.ini", "sram", "bytes", sram, chip, sizeof chip) == 0);
    IrGraph g;
    stage_block_graph(&g, k);
    uint64_t est[2] = {0, 0};
    int dram[2] = {0, 0}, chunks[2] = {-1, -1};
    for (int on = 0; on < 2; on++) {
        BkOptions o;
        bk_options_default(&o);
        o.no_overlay = !on;
        o.group = BK_GROUP_NONE;   /* layers alone, as test_stage_sink */
        BkSummary sum;
        if (stage_split_run(&g, chip, &o, on ? "overlay" : "no overlay", &sum) == 0) {
            est[on] = sum.est_cycles;
            dram[on] = sum.act_dram_tensors;
            for (int i = 0; i < sum.nlayers; i++)
                if (!strcmp(sum.layers[i].name, "cb")) chunks[on] = strstr(sum.layers[i].split, " C1 ") != NULL;
        }
        bk_summary_free(&sum);
    }
    CHECK_EQ_INT(chunks[1], 1);
    CHECKF(est[1] < est[0], "estimate %llu with the overlay, %llu without", (unsigned long long)est[1],
           (unsigned long long)est[0]);
    CHECKF(dram[1] < dram[0], "%d tensors in DRAM with the overlay, %d without", dram[1], dram[0]);
    printf("  %llu -> %llu estimated cycles, %d -> %d tensors in DRAM\n", (unsigned long long)est[0],
           (unsigned long long)est[1], dram[0], dram[1]);
    remove(chip);
    ir_free(&g);
}

TEST(spilling_stage_writes_conv1_over_its_input)
{
    overlay_run(SRAM, (BottleneckShape){.a = 128, .b = 64, .c = 16, .e = 64, .out = 64, .stride = 2});
}

int main(void)
{
    RUN(overlay_marks_pointwise_convs_whose_input_dies);
    RUN(spilling_stage_writes_conv1_over_its_input);
    return test_summary("test_stage_overlay");
}
