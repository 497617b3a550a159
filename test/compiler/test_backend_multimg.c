/* test_backend_multimg.c - pointwise convs whose tiles cover several images
 * (lower/conv.c: BkLow.nb, split "Nb<n>") and strided 1x1 convs that load
 * only the rows and columns they read (BkLow.compact).
 * Every graph is compiled with the default options (grouping on, where
 * those tile shapes are offered), run on the simulator in full mode
 * (arithmetic, timing and the race detector) and compared with the
 * reference interpreter; the chosen split of the conv is checked, so a case
 * fails if the planner stops taking the shape it is meant to exercise.
 * Batches of 3, 4 and 5 give uneven last image chunks where the cost model
 * takes fewer than N images a tile. */
#include <stdio.h>
#include <stdlib.h>
#include "test/test.h"
#include "test/compiler/bk_e2e.h"

static uint32_t rng = 11;

/* x [xd] -> Conv 1x1 (w [OC][C][1][1], bias, strides s) named "conv" ->
 * Relu -> (+ r, a second input-free residual: Conv output of the same
 * shape from x through a second 1x1 conv "side", when residual) -> y. */
static void pw_graph(IrGraph *g, const int64_t xd[4], int oc, int stride, int residual)
{
    AtlErr e;
    ir_init(g);
    g->opset = 14;
    ir_add_input(g, "x", IR_F32, 4, xd, &e);
    int64_t wd[4] = {oc, xd[1], 1, 1}, bd[1] = {oc}, s[2] = {stride, stride};
    e2e_rand_const(g, "w", 4, wd, 0.2f, &rng);
    e2e_rand_const(g, "b", 1, bd, 0.5f, &rng);
    int n = ir_add_op(g, "Conv", "conv", "x,w,b", "c", &e);
    if (stride > 1) ir_set_attr_ints(g, n, "strides", s, 2, &e);
    if (!residual) {
        ir_add_op(g, "Relu", "relu", "c", "y", &e);
        ir_add_output(g, "y", &e);
        return;
    }
    /* the residual operand: another 1x1 conv of x (stride 1 and the same
     * output shape only when stride == 1) */
    e2e_rand_const(g, "w2", 4, wd, 0.2f, &rng);
    int m = ir_add_op(g, "Conv", "side", "x,w2", "r", &e);
    if (stride > 1) ir_set_attr_ints(g, m, "strides", s, 2, &e);
    ir_add_op(g, "Relu", "relu", "c", "a", &e);
    ir_add_op(g, "Add", "add", "a,r", "y", &e);
    ir_add_output(g, "y", &e);
}

/* Compiles g for dtype on chip (group, placement, tile_images options) and
 * runs it; the split of layer `layer` must contain `want` (NULL: no
 * check), the error against the interpreter stay within tol. Frees g;
 * the layer's DRAM bytes read in *dram_rd when not NULL. */
static void run(IrGraph *g, const char *chip, int dtype, int group, int place, int images, const char *what,
                const char *layer, const char *want, double tol, uint64_t *dram_rd)
{
    double err = -1;
    char msg[1024] = "";
    BkSummary sum;
    memset(&sum, 0, sizeof sum);
    BkOptions o;
    bk_options_default(&o);
    o.dtype = dtype;
    o.group = group;
    o.placement = place;
    o.tile_images = images;
    int rc = e2e_graph_run(g, chip, &o, &err, NULL, &sum, msg, sizeof msg);
    const char *split = "?";
    for (int i = 0; rc == 0 && i < sum.nlayers; i++)
        if (!strcmp(sum.layers[i].name, layer)) {
            split = sum.layers[i].split;
            if (dram_rd) *dram_rd = sum.layers[i].dram_rd;
        }
    printf("  %-34s %-20s %-4s split %-18s max err %.3g%s%s\n", what, chip, dtype == ISA_F32 ? "fp32" : "bf16", split,
           rc ? -1.0 : err, rc ? " ERROR: " : "", msg);
    CHECKF(rc == 0, "%s on %s: %s", what, chip, msg);
    if (rc == 0) {
        CHECKF(err <= tol, "%s on %s: error %g > %g", what, chip, err, tol);
        if (want) CHECKF(strstr(split, want) != NULL, "%s on %s: layer '%s' split '%s' lacks '%s'", what, chip, layer, split, want);
    }
    bk_summary_free(&sum);
    ir_free(g);
}

typedef struct Case {
    const char *what;
    const char *chip;
    int64_t xd[4];
    int oc, stride, residual, place;
    int images;         /* BkOptions.tile_images (0: the cost model's choice) */
    const char *want;   /* in the conv's split */
} Case;

#define TINY "configs/tiny.ini"
#define A1 "configs/a1.ini"
static const Case cases[] = {
    /* m = 49 rows a tile at one image: the cost model takes all images */
    {"pw N4 7x7", TINY, {4, 64, 7, 7}, 256, 1, 0, BK_PLACE_AUTO, 0, "Nb4 "},
    {"pw N3 7x7", TINY, {3, 64, 7, 7}, 256, 1, 0, BK_PLACE_AUTO, 0, "Nb3 "},
    {"pw N5 5x3 residual", TINY, {5, 48, 5, 3}, 96, 1, 1, BK_PLACE_AUTO, 0, "Nb5 "},
    {"pw N4 a1 K split", A1, {4, 512, 7, 7}, 512, 1, 0, BK_PLACE_AUTO, 0, "Nb4 "},
    /* uneven last image chunks: 2 + 1, 2 + 2 + 1, 3 + 1 */
    {"pw N3 by 2", TINY, {3, 64, 7, 7}, 256, 1, 0, BK_PLACE_AUTO, 2, "Nb2 "},
    {"pw N5 by 2 residual", TINY, {5, 48, 5, 3}, 96, 1, 1, BK_PLACE_AUTO, 2, "Nb2 "},
    {"pw N4 by 3 a1 chip", A1, {4, 256, 7, 7}, 256, 1, 1, BK_PLACE_CHIP, 3, "Nb3 "},
    {"pw N3 by 2 a1 chip K split", A1, {3, 1024, 7, 7}, 512, 1, 0, BK_PLACE_CHIP, 2, "Nb2 "},
    /* stride 2, odd input sizes: 9x7 -> 5x4, 13x13 -> 7x7 */
    {"pw s2 N1 9x7", TINY, {1, 32, 9, 7}, 64, 2, 0, BK_PLACE_AUTO, 0, "N1 "},
    {"pw s2 N4 9x7", TINY, {4, 64, 9, 7}, 128, 2, 0, BK_PLACE_AUTO, 0, "Nb4 "},
    {"pw s2 N3 by 2 9x7 residual", TINY, {3, 64, 9, 7}, 128, 2, 1, BK_PLACE_AUTO, 2, "Nb2 "},
    {"pw s2 N3 residual a1", A1, {3, 256, 13, 13}, 256, 2, 1, BK_PLACE_AUTO, 0, NULL},
};

TEST(pointwise_multi_image)
{
    const int dts[2] = {ISA_F32, ISA_BF16};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int d = 0; d < 2; d++) {
            const Case *c = &cases[i];
            IrGraph g;
            pw_graph(&g, c->xd, c->oc, c->stride, c->residual);
            run(&g, c->chip, dts[d], BK_GROUP_AUTO, c->place, c->images, c->what, "conv", c->want,
                dts[d] == ISA_F32 ? 1e-4 : 5e-2, NULL);
        }
}

/* --group none keeps one image a tile and the loads of before. */
TEST(group_none_one_image)
{
    IrGraph g;
    pw_graph(&g, cases[0].xd, cases[0].oc, 1, 0);
    run(&g, "configs/tiny.ini", ISA_F32, BK_GROUP_NONE, BK_PLACE_AUTO, 0, "pw N4 --group none", "conv", "N4 ", 1e-4, NULL);
}

/* A stride-2 1x1 conv reads a quarter of its input: with every input
 * row and column loaded the layer would read more than its weights, bias
 * and whole input. */
TEST(strided_pointwise_reads_what_it_uses)
{
    const int dts[2] = {ISA_F32, ISA_BF16};
    for (int d = 0; d < 2; d++) {
        IrGraph g;
        int64_t xd[4] = {1, 32, 9, 7};
        pw_graph(&g, xd, 64, 2, 0);
        uint64_t rd = 0, es = (uint64_t)isa_dtype_size(dts[d]);
        uint64_t whole = (32 * 9 * 7 + 64 * 32) * es + 64 * 4, used = (32 * 5 * 4 + 64 * 32) * es + 64 * 4;
        run(&g, "configs/tiny.ini", dts[d], BK_GROUP_AUTO, BK_PLACE_AUTO, 0, "pw s2 DRAM reads", "conv", NULL,
            dts[d] == ISA_F32 ? 1e-4 : 5e-2, &rd);
        printf("    DRAM read %llu bytes (input used, weights and bias %llu; whole input %llu)\n", (unsigned long long)rd,
               (unsigned long long)used, (unsigned long long)whole);
        CHECKF(rd >= used && rd < whole, "stride-2 1x1 conv read %llu bytes of DRAM, not in [%llu, %llu)",
               (unsigned long long)rd, (unsigned long long)used, (unsigned long long)whole);
    }
}

int main(void)
{
    RUN(pointwise_multi_image);
    RUN(group_none_one_image);
    RUN(strided_pointwise_reads_what_it_uses);
    return test_summary("test_backend_multimg");
}
