/* test_backend_multimg.c - convs whose tiles cover several images
 * (lower/conv.c: BkLow.nb, split "Nb<n>"; pointwise ones as one tall
 * image, windowed ones stacked with zero rows between the images) and
 * strided 1x1 convs that load only the rows and columns they read
 * (BkLow.compact). Windowed stacks give the bytes of one image a tile.
 * Every graph is compiled with the default options (grouping on, where
 * those tile shapes are offered; residual cases with --group-max 1), run on the simulator in full mode
 * (arithmetic, timing and the race detector) and compared with the
 * reference interpreter; the chosen split of the conv is checked, so a case
 * fails if the planner stops taking the shape it is meant to exercise.
 * Batches of 3, 4 and 5 give uneven last image chunks where the cost model
 * takes fewer than N images a tile. At stride 1 an image's bottom padding
 * is the next image's top zero rows (bk_image_stack: a 3x3 pad 1 stack of
 * 7x7 images takes 8 rows an image, not 9). */
#include <stdio.h>
#include <stdlib.h>
#include "test/test.h"
#include "test/compiler/bk_split_run.h"
#include "compiler/lower/lower.h"

static uint32_t rng = 11;

/* Kernel, stride, padding and dilation of a graph's convs. */
typedef struct Win { int k, stride, pad, dil; } Win;

static void set_window(IrGraph *g, int n, Win w, AtlErr *e)
{
    int64_t s[2] = {w.stride, w.stride}, p[4] = {w.pad, w.pad, w.pad, w.pad}, d[2] = {w.dil, w.dil};
    if (w.stride > 1) ir_set_attr_ints(g, n, "strides", s, 2, e);
    if (w.pad) ir_set_attr_ints(g, n, "pads", p, 4, e);
    if (w.dil > 1) ir_set_attr_ints(g, n, "dilations", d, 2, e);
}

/* x [xd] -> Conv k x k (w [OC][C][k][k], bias, window w) named "conv" ->
 * Relu -> (+ r, a second input-free residual: Conv output of the same
 * shape from x through a second conv "side" of the same window, when
 * residual) -> y. */
static void conv_graph(IrGraph *g, const int64_t xd[4], int oc, Win win, int residual)
{
    AtlErr e;
    ir_init(g);
    g->opset = 14;
    ir_add_input(g, "x", IR_F32, 4, xd, &e);
    int64_t wd[4] = {oc, xd[1], win.k, win.k}, bd[1] = {oc};
    e2e_rand_const(g, "w", 4, wd, 0.2f, &rng);
    e2e_rand_const(g, "b", 1, bd, 0.5f, &rng);
    int n = ir_add_op(g, "Conv", "conv", "x,w,b", "c", &e);
    set_window(g, n, win, &e);
    if (!residual) {
        ir_add_op(g, "Relu", "relu", "c", "y", &e);
        ir_add_output(g, "y", &e);
        return;
    }
    e2e_rand_const(g, "w2", 4, wd, 0.2f, &rng);
    int m = ir_add_op(g, "Conv", "side", "x,w2", "r", &e);
    set_window(g, m, win, &e);
    ir_add_op(g, "Relu", "relu", "c", "a", &e);
    ir_add_op(g, "Add", "add", "a,r", "y", &e);
    ir_add_output(g, "y", &e);
}

/* A 1x1 conv of stride `stride`, no padding. */
static void pw_graph(IrGraph *g, const int64_t xd[4], int oc, int stride, int residual)
{
    Win w = {1, stride, 0, 1};
    conv_graph(g, xd, oc, w, residual);
}

/* Compiles g for dtype on chip (group, placement, tile_images options) and
 * runs it; the split of layer `layer` must contain `want` (NULL: no
 * check), the error against the interpreter stay within tol. Frees g;
 * the layer's DRAM bytes read in *dram_rd when not NULL. */
/* run_y's group: grouping on with one layer a group (--group-max 1). */
enum { FUSIONS_ONLY = -1 };

static void run_y(IrGraph *g, const char *chip, int dtype, int group, int place, int images, const char *what,
                  const char *layer, const char *want, double tol, uint64_t *dram_rd, uint8_t **y, size_t *ylen)
{
    BkOptions o;
    bk_options_default(&o);
    o.dtype = dtype;
    o.group = group == FUSIONS_ONLY ? BK_GROUP_AUTO : group;
    if (group == FUSIONS_ONLY) o.group_max = 1;
    o.placement = place;
    o.tile_images = images;
    o.sram_weights = BK_SRAM_NEVER;   /* the shapes this file exercises, not the weights' staging */
    SplitCheck k = {what, dtype == ISA_F32 ? "fp32" : "bf16", layer, want, tol, dram_rd, y, ylen};
    split_run(g, chip, &o, &k);
}

static void run(IrGraph *g, const char *chip, int dtype, int group, int place, int images, const char *what,
                const char *layer, const char *want, double tol, uint64_t *dram_rd)
{
    run_y(g, chip, dtype, group, place, images, what, layer, want, tol, dram_rd, NULL, NULL);
}

/* A conv_graph case: input dims, output channels, window, residual Add,
 * placement, BkOptions.tile_images, the text its split must contain. */
typedef struct WinCase {
    const char *what;
    const char *chip;
    int64_t xd[4];
    int oc;
    Win win;
    int residual, place, images;
    const char *want;
} WinCase;

#define TINY "configs/tiny.ini"
#define A1 "configs/a1.ini"
static const WinCase cases[] = {
    /* m = 49 rows a tile at one image: the cost model takes all images */
    {"pw N4 7x7", TINY, {4, 64, 7, 7}, 256, {1, 1, 0, 1}, 0, BK_PLACE_AUTO, 0, "Nb4 "},
    {"pw N3 7x7", TINY, {3, 64, 7, 7}, 256, {1, 1, 0, 1}, 0, BK_PLACE_AUTO, 0, "Nb3 "},
    {"pw N5 5x3 residual", TINY, {5, 48, 5, 3}, 96, {1, 1, 0, 1}, 1, BK_PLACE_AUTO, 0, "Nb5 "},
    {"pw N4 a1 K split", A1, {4, 512, 7, 7}, 512, {1, 1, 0, 1}, 0, BK_PLACE_AUTO, 0, "Nb4 "},
    /* uneven last image chunks: 2 + 1, 2 + 2 + 1, 3 + 1 */
    {"pw N3 by 2", TINY, {3, 64, 7, 7}, 256, {1, 1, 0, 1}, 0, BK_PLACE_AUTO, 2, "Nb2 "},
    {"pw N5 by 2 residual", TINY, {5, 48, 5, 3}, 96, {1, 1, 0, 1}, 1, BK_PLACE_AUTO, 2, "Nb2 "},
    {"pw N4 by 3 a1 chip", A1, {4, 256, 7, 7}, 256, {1, 1, 0, 1}, 1, BK_PLACE_CHIP, 3, "Nb3 "},
    {"pw N3 by 2 a1 chip K split", A1, {3, 1024, 7, 7}, 512, {1, 1, 0, 1}, 0, BK_PLACE_CHIP, 2, "Nb2 "},
    /* stride 2, odd input sizes: 9x7 -> 5x4, 13x13 -> 7x7 */
    {"pw s2 N1 9x7", TINY, {1, 32, 9, 7}, 64, {1, 2, 0, 1}, 0, BK_PLACE_AUTO, 0, "N1 "},
    {"pw s2 N4 9x7", TINY, {4, 64, 9, 7}, 128, {1, 2, 0, 1}, 0, BK_PLACE_AUTO, 0, "Nb4 "},
    {"pw s2 N3 by 2 9x7 residual", TINY, {3, 64, 9, 7}, 128, {1, 2, 0, 1}, 1, BK_PLACE_AUTO, 2, "Nb2 "},
    {"pw s2 N3 residual a1", A1, {3, 256, 13, 13}, 256, {1, 2, 0, 1}, 1, BK_PLACE_AUTO, 0, NULL},
};

/* A residual case's Add reads the Relu of one conv and the other conv's
 * output, so it is a layer of its own, and since layer groups take float
 * elementwise members (lower/chain_ops.c) the cost model may put it and
 * both convs in one group, which has no multi-image tiles: those cases
 * keep their layers alone (--group-max 1; --group none would also keep
 * one image a tile), the others group freely. */
static int group_of(const WinCase *c) { return c->residual ? FUSIONS_ONLY : BK_GROUP_AUTO; }

/* Every case of v in fp32 and bf16 against the interpreter. */
static void run_cases(const WinCase *v, size_t n)
{
    const int dts[2] = {ISA_F32, ISA_BF16};
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < 2; d++) {
            const WinCase *c = &v[i];
            IrGraph g;
            conv_graph(&g, c->xd, c->oc, c->win, c->residual);
            run(&g, c->chip, dts[d], group_of(c), c->place, c->images, c->what, "conv", c->want,
                dts[d] == ISA_F32 ? 1e-4 : 5e-2, NULL);
        }
}

TEST(pointwise_multi_image) { run_cases(cases, sizeof cases / sizeof cases[0]); }

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

/* Windowed convs: whole images stacked with zero rows between them
 * (bk_image_stack). 3x3 stride 1 pad 1 (14x14: rows of 15, 7x7 of 8),
 * stride 2 pad 1 on odd sizes, dilation 2, no padding, a K split, fused
 * residual Adds, placement chip, uneven last image chunks. */
static const WinCase win_cases[] = {
    {"3x3 N4 7x7", TINY, {4, 32, 7, 7}, 64, {3, 1, 1, 1}, 0, BK_PLACE_AUTO, 0, NULL},
    /* the cost model takes several images a tile (m = 49 a fold otherwise) */
    {"3x3 N4 a1 7x7 chosen", A1, {4, 256, 7, 7}, 256, {3, 1, 1, 1}, 0, BK_PLACE_AUTO, 0, "Nb"},
    {"3x3 N3 by 2 7x7 residual", TINY, {3, 32, 7, 7}, 32, {3, 1, 1, 1}, 1, BK_PLACE_AUTO, 2, "Nb2 "},
    {"3x3 N5 by 2 6x5", TINY, {5, 16, 6, 5}, 24, {3, 1, 1, 1}, 0, BK_PLACE_AUTO, 2, "Nb2 "},
    {"3x3 s2 N3 9x7", TINY, {3, 16, 9, 7}, 32, {3, 2, 1, 1}, 0, BK_PLACE_AUTO, 3, "Nb3 "},
    {"3x3 s2 N5 by 3 11x9 residual", TINY, {5, 16, 11, 9}, 16, {3, 2, 1, 1}, 1, BK_PLACE_AUTO, 3, "Nb3 "},
    {"3x3 d2 N4 by 3 9x9", TINY, {4, 16, 9, 9}, 32, {3, 1, 2, 2}, 0, BK_PLACE_AUTO, 3, "Nb3 "},
    {"3x3 pad 0 N3 8x6", TINY, {3, 16, 8, 6}, 16, {3, 1, 0, 1}, 0, BK_PLACE_AUTO, 3, "Nb3 "},
    {"5x5 s2 pad 2 N4 by 3 9x9", TINY, {4, 8, 9, 9}, 16, {5, 2, 2, 1}, 0, BK_PLACE_AUTO, 3, "Nb3 "},
    {"3x3 N4 a1 7x7 K split", A1, {4, 512, 7, 7}, 512, {3, 1, 1, 1}, 0, BK_PLACE_AUTO, 4, "Nb4 "},
    {"3x3 N5 by 2 a1 chip 14x14 residual", A1, {5, 64, 14, 14}, 64, {3, 1, 1, 1}, 1, BK_PLACE_CHIP, 2, "Nb2 "},
    {"3x3 s2 N3 a1 chip 15x15", A1, {3, 64, 15, 15}, 128, {3, 2, 1, 1}, 0, BK_PLACE_CHIP, 3, "Nb3 "},
};

TEST(windowed_multi_image) { run_cases(win_cases, sizeof win_cases / sizeof win_cases[0]); }

/* fp32: the zero rows add the products the instruction's padding adds
 * (+0 x w, exact), the sums keep their order: the same output bytes as
 * one image a tile (same k chunks: cases whose K stays whole). */
TEST(windowed_bit_identical)
{
    static const WinCase same[] = {
        {"same 3x3 N5 by 2 7x7 residual", TINY, {5, 8, 7, 7}, 16, {3, 1, 1, 1}, 1, BK_PLACE_AUTO, 2, "Nb2 "},
        {"same 3x3 s2 N3 9x7", TINY, {3, 8, 9, 7}, 16, {3, 2, 1, 1}, 0, BK_PLACE_AUTO, 3, "Nb3 "},
        {"same 3x3 d2 N4 by 3 9x9", TINY, {4, 8, 9, 9}, 16, {3, 1, 2, 2}, 0, BK_PLACE_AUTO, 3, "Nb3 "},
        {"same 3x3 s2 N3 a1 chip 15x15", A1, {3, 64, 15, 15}, 128, {3, 2, 1, 1}, 0, BK_PLACE_CHIP, 3, "Nb3 "},
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        const WinCase *c = &same[i];
        uint8_t *y[2] = {NULL, NULL};
        size_t len[2] = {0, 0};
        for (int one = 0; one < 2; one++) {
            IrGraph g;
            rng = 77;
            conv_graph(&g, c->xd, c->oc, c->win, c->residual);
            run_y(&g, c->chip, ISA_F32, group_of(c), c->place, one ? 1 : c->images, c->what, "conv",
                  one ? "N" : c->want, 1e-4, NULL, &y[one], &len[one]);
        }
        CHECKF(y[0] && y[1] && len[0] == len[1] && !memcmp(y[0], y[1], len[0]),
               "%s: output bytes with several images a tile differ from one image a tile", c->what);
        free(y[0]);
        free(y[1]);
    }
}

/* The stack's geometry (bk_image_stack): stride 1 shares the padding
 * rows between images (pad 1: 8 rows a 7x7 image, the conv's bottom
 * padding 2 for the last); stride 2 keeps its zero rows below each image. */
static BkStack stack_of(int H, int k, int stride, int pad)
{
    BkLow l;
    memset(&l, 0, sizeof l);
    l.kind = BK_K_CONV;
    l.groups = 1;
    l.H = l.W = H;
    l.kh = l.kw = k;
    l.sh = l.sw = stride;
    l.dh = l.dw = 1;
    l.pt = l.pb = l.pl = l.pr = pad;
    l.OH = l.OW = (H + 2 * pad - k) / stride + 1;
    return bk_image_stack(&l);
}

TEST(stride1_stack_shares_padding_rows)
{
    BkStack a = stack_of(7, 3, 1, 1), b = stack_of(9, 3, 2, 1), c = stack_of(8, 3, 1, 0);
    printf("  3x3 pad 1 7x7: ib %d ob %d top %d pb %d; stride 2 9x9: ib %d ob %d; pad 0 8x8: ib %d pb %d\n", a.ib, a.ob, a.top,
           a.pb, b.ib, b.ob, c.ib, c.pb);
    CHECKF(a.ib == 8 && a.ob == 8 && a.top == 1 && a.pb == 2, "stride 1 pad 1: ib %d ob %d top %d pb %d", a.ib, a.ob, a.top, a.pb);
    CHECKF(b.ib == 12 && b.ob == 6 && b.top == 1, "stride 2: ib %d ob %d top %d", b.ib, b.ob, b.top);
    CHECKF(c.ib == 8 && c.top == 0 && c.pb == 2, "pad 0: ib %d top %d pb %d", c.ib, c.top, c.pb);
}

int main(void)
{
    RUN(stride1_stack_shares_padding_rows);
    RUN(pointwise_multi_image);
    RUN(windowed_multi_image);
    RUN(windowed_bit_identical);
    RUN(group_none_one_image);
    RUN(strided_pointwise_reads_what_it_uses);
    return test_summary("test_backend_multimg");
}
