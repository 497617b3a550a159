/* test_backend_tiling.c - the conv/pool tile planner's splits on a chip
 * with little LMEM (configs/edge16k.ini: 2 cores, 16 KiB LMEM): K splitting
 * (input-channel chunks accumulating into the two resident accumulators),
 * W tiling (output-column blocks with left/right halo padding), large
 * strides (patchify conv, stride 16 kernel 16; a stride beyond the
 * instruction's field fails cleanly), a 224-wide first conv and whole
 * models. Every graph is compiled, run on the simulator in full mode
 * (arithmetic, timing and the race detector, which flags a K-split
 * accumulator reused while an earlier output tile still reads it) and
 * compared with the reference interpreter within rtol 1e-4; the chosen
 * split of the layer (BkSummary) is checked, so a test fails if the planner
 * stops using the split it is meant to exercise. The graphs are compiled
 * with --group none, whose tile search keeps the per-layer rules these
 * cases are built on (splits only where nothing else fits; the grouped
 * search offers more split shapes and may take, say, K4 for K2).
 * mobilenetv2_035's classifier Gemm (K = 1280) needs the matmul K split,
 * which lower/mm.c does not have yet; the model is tested up to its last
 * conv (the graph's output moved there). Its convs (0.35 width) fit
 * edge16k's slots without splits; resnet20_cifar's last stage needs K
 * splits there. */
#include <stdio.h>
#include <stdlib.h>
#include "test/test.h"
#include "test/compiler/bk_split_run.h"

#define EDGE "configs/edge16k.ini"

static uint32_t rng = 7;

/* x [xd] -> Conv(w [wd] scaled by wscale, bias) named `name` (pads and
 * strides NULL: default) -> Relu when relu -> graph output. */
static void conv_graph(IrGraph *g, const char *name, const int64_t xd[4], const int64_t wd[4], float wscale,
                       const int64_t pads[4], const int64_t strides[2], int group, int relu)
{
    AtlErr e;
    ir_init(g);
    g->opset = 14;
    ir_add_input(g, "x", IR_F32, 4, xd, &e);
    int64_t bd[1] = {wd[0]};
    e2e_rand_const(g, "w", 4, wd, wscale, &rng);
    e2e_rand_const(g, "b", 1, bd, 0.5f, &rng);
    const char *out = relu ? "c" : "y";
    int n = ir_add_op(g, "Conv", name, "x,w,b", out, &e);
    if (pads) ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    if (strides) ir_set_attr_ints(g, n, "strides", strides, 2, &e);
    if (group > 1) ir_set_attr_int(g, n, "group", group, &e);
    if (relu) ir_add_op(g, "Relu", "relu", "c", "y", &e);
    ir_add_output(g, "y", &e);
}

/* Compiles and runs g on chip with --group none; checks the error and
 * that the layer named `layer` (NULL: any layer) has a split containing
 * `want` (NULL: no check). Frees g. */
static void run(IrGraph *g, const char *chip, const char *what, const char *layer, const char *want)
{
    BkOptions o;
    bk_options_default(&o);
    o.group = BK_GROUP_NONE;
    SplitCheck k = {what, NULL, layer, want, 1e-4, NULL, NULL, NULL};
    split_run(g, chip, &o, &k);
}

/* 3x3 conv on 8 images of 2x2 with C input channels and OC output
 * channels: the weights alone (9 x C x OC x 4 bytes) exceed an 8 KiB slot
 * (C >= 120 at OC 2), W tiling cannot help, and with C/nkc channels per
 * chunk a whole image fits one tile; the cost model picks how many chunks
 * (of whole blocks of 8 channels: at 160 x 2, three chunks of 56 price
 * below two of 80, at 160 x 4 two win). Four output tiles (images) per
 * core: both accumulators are reused. */
static void ksplit_case(int C, int OC, const char *want)
{
    IrGraph g;
    int64_t xd[4] = {8, C, 2, 2}, wd[4] = {OC, C, 3, 3}, p1[4] = {1, 1, 1, 1};
    conv_graph(&g, "conv", xd, wd, 0.1f, p1, NULL, 1, 1);
    char what[64];
    snprintf(what, sizeof what, "conv C%d OC%d K split", C, OC);
    run(&g, EDGE, what, "conv", want);
}

TEST(conv_ksplit_2_chunks)
{
    ksplit_case(160, 4, "K2");
}

TEST(conv_ksplit_3_chunks)
{
    ksplit_case(240, 2, "K3");
}

/* A K split sums as the uncut conv does (isa/numerics.h NUM_CONV_CBLOCK):
 * 180 input channels cut into chunks on edge16k take whole blocks of 8
 * (K3: 64, 64 and 52 channels, not 60 each), and the output is the same
 * bits as a1's, where the conv runs uncut. */
TEST(conv_ksplit_same_bits_as_uncut)
{
    int64_t xd[4] = {8, 180, 2, 2}, wd[4] = {2, 180, 3, 3}, p1[4] = {1, 1, 1, 1};
    uint8_t *y[2] = {NULL, NULL};
    size_t n[2] = {0, 0};
    /* a1: weights multicast (" mc"), which never goes with a K split */
    const char *chips[2] = {EDGE, "configs/a1.ini"}, *want[2] = {" K", " mc"};
    for (int i = 0; i < 2; i++) {
        IrGraph g;
        uint32_t seed = rng;
        conv_graph(&g, "conv", xd, wd, 0.1f, p1, NULL, 1, 1);
        rng = seed;   /* the same weights for both */
        BkOptions o;
        bk_options_default(&o);
        o.group = BK_GROUP_NONE;
        SplitCheck k = {"conv C180 K split vs uncut", NULL, "conv", want[i], 1e-4, NULL, &y[i], &n[i]};
        split_run(&g, chips[i], &o, &k);
    }
    REQUIRE(y[0] && y[1]);
    CHECKF(n[0] == n[1] && !memcmp(y[0], y[1], n[0]), "the K-split conv's output is not the uncut conv's bit for bit");
    free(y[0]);
    free(y[1]);
}

/* Convs that only fit as column blocks on edge16k, each with the split
 * its layer must use. */
typedef struct WCase {
    const char *what;
    int64_t xd[4], wd[4], pads[4], strides[2];
    int group, relu;
    const char *want;
} WCase;

static const WCase wcases[] = {
    /* two input channels, 1500 wide: three input rows of one channel need
     * 18 KiB; pads 2 left, 1 right */
    {"conv W-tiled pads 2/1", {1, 2, 5, 1500}, {3, 2, 3, 4}, {1, 2, 1, 1}, {1, 1}, 1, 0, " W"},
    {"depthwise W-tiled stride 1x2", {1, 8, 6, 900}, {8, 1, 3, 3}, {1, 1, 1, 1}, {1, 2}, 8, 0, " W"},
    /* ResNet-50's stem shape on a 224x224 image (fewer output channels):
     * one input row set of the full width needs 18 KiB */
    {"224-wide 7x7 s2 stem", {1, 3, 224, 224}, {8, 3, 7, 7}, {3, 3, 3, 3}, {2, 2}, 1, 1, " W"},
};

TEST(conv_wtiled)
{
    for (size_t i = 0; i < sizeof wcases / sizeof wcases[0]; i++) {
        const WCase *w = &wcases[i];
        IrGraph g;
        conv_graph(&g, "conv", w->xd, w->wd, 0.5f, w->pads, w->strides, w->group, w->relu);
        run(&g, EDGE, w->what, "conv", w->want);
    }
}

TEST(pool_wtiled)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 3, 7, 1100}, k3[2] = {3, 3}, s2[2] = {2, 2}, p1[4] = {1, 1, 1, 1};
    ir_init(&g);
    g.opset = 14;
    ir_add_input(&g, "x", IR_F32, 4, xd, &e);
    int n = ir_add_op(&g, "MaxPool", "mp", "x", "y", &e);
    ir_set_attr_ints(&g, n, "kernel_shape", k3, 2, &e);
    ir_set_attr_ints(&g, n, "strides", s2, 2, &e);
    ir_set_attr_ints(&g, n, "pads", p1, 4, &e);
    ir_set_attr_int(&g, n, "ceil_mode", 1, &e);
    ir_add_output(&g, "y", &e);
    run(&g, EDGE, "maxpool W-tiled ceil_mode", "mp", " W");
}

/* ViT's patch embedding: kernel 16x16, stride 16 (beyond the 4-bit stride
 * fields the ISA used to have). */
TEST(conv_patchify_stride16)
{
    const char *chips[] = {"configs/a1.ini", EDGE};
    for (int c = 0; c < 2; c++) {
        IrGraph g;
        int64_t xd[4] = {1, 3, 64, 48}, wd[4] = {24, 3, 16, 16}, s16[2] = {16, 16};
        conv_graph(&g, "patch", xd, wd, 0.1f, NULL, s16, 1, 0);
        run(&g, chips[c], "patchify k16 s16", "patch", NULL);
    }
}

/* A kernel so large that edge16k's slots hold it only for fewer input
 * channels than a block of 8 (16 x 16 x 24 outputs x 4 bytes = 24 KiB a
 * channel): the search of whole-block chunks finds nothing, and the
 * fallback (lower/conv.c kchunk_sizes any_size) takes chunks of fewer
 * channels rather than refusing the layer. */
TEST(conv_ksplit_below_a_block)
{
    IrGraph g;
    int64_t xd[4] = {1, 8, 64, 48}, wd[4] = {24, 8, 16, 16}, s16[2] = {16, 16};
    conv_graph(&g, "patch", xd, wd, 0.1f, NULL, s16, 1, 0);
    run(&g, EDGE, "patchify 8 channels", "patch", " K");
}

/* A stride beyond the widened field (6 bits) fails naming node and field. */
TEST(conv_stride_beyond_field)
{
    IrGraph g;
    int64_t xd[4] = {1, 1, 128, 128}, wd[4] = {1, 1, 64, 64}, s64[2] = {64, 64};
    conv_graph(&g, "patch", xd, wd, 0.1f, NULL, s64, 1, 0);
    double err;
    char msg[1024] = "";
    int rc = e2e_graph(&g, "configs/a1.ini", ISA_F32, &err, NULL, msg, sizeof msg);
    printf("  stride 64: %s\n", msg);
    CHECK(rc != 0);
    CHECKF(strstr(msg, "node 'patch' (Conv)") && strstr(msg, "sh = 64 exceeds the conv instruction's field (max 63)"),
           "message: %s", msg);
    ir_free(&g);
}

TEST(resnet20_on_edge16k)
{
    E2eResult r;
    int rc = e2e_run("resnet20_cifar", EDGE, ISA_F32, &r);
    printf("  resnet20_cifar %s max_abs %.3g vs-interp %.3g cycles %llu%s%s\n", EDGE, r.max_abs, r.interp_max_abs,
           (unsigned long long)r.cycles, rc ? " ERROR: " : "", rc ? r.err : "");
    CHECKF(rc == 0, "resnet20_cifar on %s: %s", EDGE, r.err);
    if (rc == 0) {
        CHECKF(r.tol_violations == 0, "resnet20_cifar: %lld elements outside rtol 1e-4", (long long)r.tol_violations);
        int ksplit = 0;
        for (int i = 0; i < r.sum.nlayers; i++) ksplit += strstr(r.sum.layers[i].split, " K") != NULL;
        CHECKF(ksplit > 0, "resnet20_cifar on %s: no layer uses a K split", EDGE);
    }
    e2e_free(&r);
}

/* mobilenetv2_035 up to the input of its classifier (see the file comment). */
TEST(mobilenetv2_convs_on_edge16k)
{
    IrGraph g;
    AtlErr e = {{0}};
    ir_init(&g);
    int rc = e2e_load_model("models/mobilenetv2_035.onnx", NULL, &g, &e);
    CHECKF(rc == 0, "mobilenetv2_035: %s", e.msg);
    if (rc) { ir_free(&g); return; }
    int last = -1;
    for (int i = 0; i < g.nn; i++)
        if (!strcmp(g.nodes[i].op, "Conv")) last = g.nodes[i].out[0];
    REQUIRE(last >= 0);
    g.t[g.outputs[0]].is_output = 0;
    g.t[last].is_output = 1;
    g.outputs[0] = last;
    g.nout = 1;
    run(&g, EDGE, "mobilenetv2_035 convs", NULL, NULL);
}

int main(void)
{
    RUN(conv_ksplit_2_chunks);
    RUN(conv_ksplit_3_chunks);
    RUN(conv_ksplit_same_bits_as_uncut);
    RUN(conv_wtiled);
    RUN(pool_wtiled);
    RUN(conv_patchify_stride16);
    RUN(conv_ksplit_below_a_block);
    RUN(conv_stride_beyond_field);
    RUN(resnet20_on_edge16k);
    RUN(mobilenetv2_convs_on_edge16k);
    return test_summary("test_backend_tiling");
}
