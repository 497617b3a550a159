/* test_int8_group.c - layer groups of int8 layers (lower/chain.c): Int8Conv
 * (i8 conv, i32 accumulation, per-channel integer requantisation, a Relu
 * fused as its clamp), MaxPool on int8 and Int8Add (the residual, with its
 * Relu clamp) as members of one chain whose int8 intermediates stay in
 * LMEM.
 *
 * Graphs are built here from the int8 operators themselves (ops/int8.c),
 * compiled with grouping on (the default), run on the simulator in full
 * mode (arithmetic, timing, the race detector) and every int8 tensor the
 * .abm lists (the graph output and the group outputs among them; not
 * those whose storage a later tensor reuses) compared with the reference
 * interpreter's run: they must be equal. On configs/a1.ini the test also
 * requires the expected group in the schedule's summary (a "Group(n)"
 * unit whose members include the Int8Add), so it fails when int8 layers
 * stop joining groups. Cases: ResNet's identity bottleneck (1x1, 3x3,
 * 1x1, residual Add + Relu), its downsampling form (a 1x1 stride-2
 * shortcut, a 3x3 stride-2 conv), a stem (3x3 conv, MaxPool 3x3 stride 2,
 * 3x3 conv); 13 rows so the last slice is uneven; on a1, tiny and
 * edge16k; a bottleneck whose group streams its weights (--group-weights
 * stream). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "compiler/ir/ir.h"
#include "compiler/interp/interp.h"
#include "compiler/passes/passes.h"
#include "compiler/backend/backend.h"
#include "tools/chip_exec.h"
#include "test/compiler/int8_conv.h"

static const char *const chips3[] = {"configs/a1.ini", "configs/tiny.ini", "configs/edge16k.ini"};
static uint32_t rng = 7;

static int rnd(int lo, int hi)
{
    rng = rng * 1664525u + 1013904223u;
    return lo + (int)((rng >> 8) % (uint32_t)(hi - lo + 1));
}

/* Int8Conv `name` (test/compiler/int8_conv.h), its values drawn from rng. */
static void qconv_g(IrGraph *g, const char *name, const char *x, int C, int M, int k, int s, int p, int xz, int yz,
                    int relu, int groups, const char *out)
{
    i8_conv_pg(g, &rng, name, x, C, M, k, s, p, groups, xz, yz, relu, out);
}

static void qconv(IrGraph *g, const char *name, const char *x, int C, int M, int k, int s, int p, int xz, int yz,
                  int relu, const char *out)
{
    qconv_g(g, name, x, C, M, k, s, p, xz, yz, relu, 1, out);
}

/* Int8Add a + b -> out with a Relu (clamp from the output zero point). */
static void qadd(IrGraph *g, const char *name, const char *a, int az, const char *b, int bz, int yz, const char *out)
{
    AtlErr e;
    char ins[128];
    snprintf(ins, sizeof ins, "%s,%s", a, b);
    int n = ir_add_op(g, "Int8Add", name, ins, out, &e);
    ir_set_attr_float(g, n, "a_scale", 0.6137f, &e);
    ir_set_attr_int(g, n, "a_zero_point", az, &e);
    ir_set_attr_float(g, n, "b_scale", 0.4821f, &e);
    ir_set_attr_int(g, n, "b_zero_point", bz, &e);
    ir_set_attr_int(g, n, "y_zero_point", yz, &e);
    ir_set_attr_int(g, n, "y_min", yz, &e);
    ir_set_attr_int(g, n, "y_max", 127, &e);
    ir_set_attr_int(g, n, "to", IR_I8, &e);
}

static void new_batch_graph(IrGraph *g, int N, int C, int H, int W)
{
    AtlErr e;
    int64_t xd[4] = {N, C, H, W};
    ir_init(g);
    g->opset = 13;
    ir_add_input(g, "x", IR_I8, 4, xd, &e);
}

static void new_graph(IrGraph *g, int C, int H, int W) { new_batch_graph(g, 1, C, H, W); }

static void finish(IrGraph *g, const char *out)
{
    AtlErr e;
    ir_add_output(g, out, &e);
    ir_toposort(g, &e);
    ir_infer_shapes(g, &e);
}

/* ResNet's bottleneck on x [1, 16, 13, 16]: 1x1 16->8 + Relu, 3x3 8->8 +
 * Relu, 1x1 8->16, + the shortcut (x itself, or a 1x1 stride-2 conv with
 * the 3x3 at stride 2), Relu; then a second, identity block. */
static void bottleneck(IrGraph *g, int downsample)
{
    new_graph(g, 16, 13, 16);
    const char *sc = "x";
    int s = downsample ? 2 : 1, scz = -3;
    if (downsample) {
        qconv(g, "down", "x", 16, 16, 1, 2, 0, -3, 5, 0, "d");
        sc = "d";
        scz = 5;
    }
    qconv(g, "c1", "x", 16, 8, 1, 1, 0, -3, -128, 1, "r1");
    qconv(g, "c2", "r1", 8, 8, 3, s, 1, -128, -128, 1, "r2");
    qconv(g, "c3", "r2", 8, 16, 1, 1, 0, -128, 7, 0, "b3");
    qadd(g, "add", "b3", 7, sc, scz, -128, "y1");
    qconv(g, "d1", "y1", 16, 8, 1, 1, 0, -128, -128, 1, "q1");
    qconv(g, "d2", "q1", 8, 8, 3, 1, 1, -128, -128, 1, "q2");
    qconv(g, "d3", "q2", 8, 16, 1, 1, 0, -128, 2, 0, "e3");
    qadd(g, "add2", "e3", 2, "y1", -128, -128, "y");
    finish(g, "y");
}

/* A stem on x [1, 8, 13, 16]: 3x3 conv 8->16 + Relu, MaxPool 3x3 stride 2
 * pad 1, 3x3 conv 16->16 + Relu. */
static void stem(IrGraph *g)
{
    AtlErr e;
    new_graph(g, 8, 13, 16);
    qconv(g, "s1", "x", 8, 16, 3, 1, 1, -3, -128, 1, "a");
    int64_t ks[2] = {3, 3}, st[2] = {2, 2}, pads[4] = {1, 1, 1, 1};
    int n = ir_add_op(g, "MaxPool", "pool", "a", "p", &e);
    ir_set_attr_ints(g, n, "kernel_shape", ks, 2, &e);
    ir_set_attr_ints(g, n, "strides", st, 2, &e);
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    qconv(g, "s2", "p", 16, 16, 3, 1, 1, -128, -128, 1, "y");
    finish(g, "y");
}

typedef struct Seen { IrTensor *v; int n, cap; } Seen;

static int keep_int8(void *ctx, int t, const IrTensor *v, AtlErr *e)
{
    (void)t; (void)e;
    Seen *s = ctx;
    if (v->dtype != IR_I8) return 0;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        IrTensor *nv = realloc(s->v, (size_t)cap * sizeof *nv);
        if (!nv) return -1;
        s->v = nv;
        s->cap = cap;
    }
    IrTensor *d = &s->v[s->n];
    *d = *v;
    d->name = NULL;
    d->data = NULL;
    if (ir_alloc_data(d, e) || !(d->name = ir_strdup(v->name))) { free(d->data); return -1; }
    memcpy(d->data, v->data, (size_t)ir_numel(v));
    s->n++;
    return 0;
}

/* The group of the summary whose members include node `member`, or -1. */
static int group_with(const BkSummary *sum, const char *member)
{
    for (int i = 0; i < sum->nlayers; i++) {
        const char *m = sum->layers[i].members;
        if (sum->layers[i].nmembers < 2 || !m) continue;
        for (; *m; m = strchr(m, '\n') ? strchr(m, '\n') + 1 : "")
            if (!strncmp(m, member, strlen(member)) && m[strlen(member)] == '\t') return i;
    }
    return -1;
}

/* 1 when another tensor of the .abm shares DRAM bytes with tensor k (a
 * later one reuses its storage: the end of the run no longer holds it). */
static int reused(const AbmView *v, uint32_t k)
{
    AbmTensor a = abm_tensor(v, k);
    for (uint32_t j = 0; j < v->n_tensors; j++) {
        AbmTensor b = abm_tensor(v, j);
        if (j != k && b.region == a.region && b.offset < a.offset + a.size && a.offset < b.offset + b.size) return 1;
    }
    return 0;
}

/* Compiles g for chipfile (groups on), runs it in full, compares every
 * int8 tensor the .abm lists (storage not reused) with the interpreter's; returns how many
 * were compared. *grouped: the members of the group holding `member`. */
static int run_exact_c(const IrGraph *g0, const char *chipfile, const BkOptions *opt, const char *member, int *grouped,
                       char *split, size_t cap, uint64_t *cycles)
{
    AtlErr e = {{0}};
    IrGraph g;
    AtlChip chip;
    ChipExec x;
    BkSummary sum;
    Seen seen = {0};
    IrTensor *outs = NULL, in;
    uint8_t *abm = NULL;
    size_t len = 0;
    int compared = -1;
    memset(&x, 0, sizeof x);
    memset(&sum, 0, sizeof sum);
    memset(&in, 0, sizeof in);
    *grouped = 0;
    if (ir_clone(g0, &g, &e) || pass_run_all(&g, &e) || cfg_load(chipfile, &chip, &e)) {
        CHECKF(0, "%s", e.msg);
        ir_free(&g);
        return -1;
    }
    in = g.t[g.inputs[0]];
    in.data = NULL;
    if (ir_alloc_data(&in, &e)) goto done;
    for (int64_t i = 0; i < ir_numel(&in); i++) ir_set_i(&in, i, rnd(-128, 127));
    if (chip_compile_graph(&g, &chip, opt, 0, &abm, &len, &sum, &e) ||
        chip_exec_open(&x, &chip, abm, len, SIM_MODE_FULL, 0, &e) || chip_exec_run(&x, &in, 1, &e) ||
        interp_run_observed(&g, &in, 1, &outs, keep_int8, &seen, &e)) {
        CHECKF(0, "%s: %s", chipfile, e.msg);
        goto done;
    }
    if (cycles) *cycles = sim_stats(x.sim)->cycles;
    int gi = group_with(&sum, member);
    *grouped = gi >= 0 ? sum.layers[gi].nmembers : 0;
    for (int i = 0; gi < 0 && i < sum.nlayers; i++)   /* a layer alone: its own split */
        if (!strcmp(sum.layers[i].name, member)) gi = i;
    if (split) snprintf(split, cap, "%s", gi >= 0 ? sum.layers[gi].split : "-");
    compared = 0;
    for (int i = 0; i < seen.n; i++) {
        int k = chip_exec_find(&x, seen.v[i].name);
        if (k < 0 || reused(&x.model.view, (uint32_t)k)) continue;
        IrTensor got;
        if (chip_exec_read(&x, seen.v[i].name, &got, &e)) { CHECKF(0, "%s", e.msg); continue; }
        int64_t bad = -1;
        for (int64_t k = 0; k < ir_numel(&got) && bad < 0; k++) if (ir_get_i(&got, k) != ir_get_i(&seen.v[i], k)) bad = k;
        CHECKF(bad < 0, "%s: tensor %s element %lld: chip %lld, interpreter %lld", chipfile, seen.v[i].name,
               (long long)bad, bad < 0 ? 0LL : (long long)ir_get_i(&got, bad),
               bad < 0 ? 0LL : (long long)ir_get_i(&seen.v[i], bad));
        ir_tensor_free_contents(&got);
        compared++;
    }
done:
    for (int i = 0; i < seen.n; i++) ir_tensor_free_contents(&seen.v[i]);
    free(seen.v);
    if (outs) interp_free_outputs(outs, g.nout);
    free(in.data);   /* the rest of in is the graph input's (not owned) */
    bk_summary_free(&sum);
    chip_exec_close(&x);
    free(abm);
    ir_free(&g);
    return compared;
}

static int run_exact(const IrGraph *g0, const char *chipfile, const BkOptions *opt, const char *member, int *grouped,
                     char *split, size_t cap)
{
    return run_exact_c(g0, chipfile, opt, member, grouped, split, cap, NULL);
}

/* g on the three chips: exact everywhere; on a1 `member` in a group of at
 * least `least` members. */
static void check_chips(const IrGraph *g, const char *member, int least)
{
    for (int c = 0; c < 3; c++) {
        int grouped = 0, n = run_exact(g, chips3[c], NULL, member, &grouped, NULL, 0);
        CHECKF(n >= 1, "%s: %d int8 tensors compared", chips3[c], n);
        if (c == 0) CHECKF(grouped >= least, "a1: '%s' is in a group of %d members, want at least %d", member, grouped, least);
    }
}

TEST(identity_bottleneck)
{
    IrGraph g;
    bottleneck(&g, 0);
    check_chips(&g, "add", 3);
    ir_free(&g);
}

TEST(downsampling_bottleneck)
{
    IrGraph g;
    bottleneck(&g, 1);
    check_chips(&g, "add", 3);
    ir_free(&g);
}

TEST(stem_with_maxpool)
{
    IrGraph g;
    stem(&g);
    check_chips(&g, "pool", 2);
    ir_free(&g);
}

/* A bottleneck of 13 rows (1x1 64 -> 32, 3x3 32 -> 32, 1x1 32 -> 128, a
 * 1x1 64 -> 128 shortcut, the residual Int8Add): with --group-weights
 * stream the group holding the Add streams weights on every chip (the
 * 128-channel convolutions in i8 chunks of 64 output channels, each
 * requantised into the i8 temp and moved into its channels of the rows;
 * an uneven last slice on a1 and tiny); the output stays the
 * interpreter's bit for bit. */
TEST(streamed_weights)
{
    IrGraph g;
    new_graph(&g, 64, 13, 4);
    qconv(&g, "c1", "x", 64, 32, 1, 1, 0, -3, -128, 1, "r1");
    qconv(&g, "c2", "r1", 32, 32, 3, 1, 1, -128, -128, 1, "r2");
    qconv(&g, "c3", "r2", 32, 128, 1, 1, 0, -128, 7, 0, "b3");
    qconv(&g, "up", "x", 64, 128, 1, 1, 0, -3, 5, 0, "u");
    qadd(&g, "add", "b3", 7, "u", 5, -128, "y");
    finish(&g, "y");
    BkOptions o;
    bk_options_default(&o);
    o.group_weights = BK_GW_STREAM;
    for (int c = 0; c < 3; c++) {
        char split[64];
        int grouped = 0, n = run_exact(&g, chips3[c], &o, "add", &grouped, split, sizeof split);
        printf("  %-20s %d tensors, group of %d, split %s\n", chips3[c], n, grouped, split);
        CHECKF(n >= 1, "%s: %d int8 tensors compared", chips3[c], n);
        CHECKF(grouped >= 2 && strstr(split, " w"), "%s: the Add's group (%d members, split %s) streams no weights",
               chips3[c], grouped, split);
    }
    ir_free(&g);
}

/* Int8Conv tiles of several images (lower/qmatrix.c, as lower/conv.c):
 * pointwise, 4 images by 3 (an uneven last chunk) at stride 1, and 3
 * images by 2 of a stride-2 1x1 conv on an odd 9x7 input (rows and
 * columns loaded compacted); windowed 3x3 pad 1 at stride 1 and 2, whose
 * stacked images are separated by rows of x's zero point (-3, not 0);
 * exact on every chip, the split "Nb<n>". */
TEST(multi_image)
{
    static const struct { int N, C, M, H, W, k, s, p, images; const char *want; } cs[] = {
        {4, 64, 128, 7, 7, 1, 1, 0, 3, "Nb3 "},
        {3, 32, 64, 9, 7, 1, 2, 0, 2, "Nb2 "},
        {4, 16, 32, 7, 7, 3, 1, 1, 3, "Nb3 "},
        {3, 16, 32, 9, 7, 3, 2, 1, 2, "Nb2 "},
    };
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        IrGraph g;
        new_batch_graph(&g, cs[k].N, cs[k].C, cs[k].H, cs[k].W);
        qconv(&g, "pw", "x", cs[k].C, cs[k].M, cs[k].k, cs[k].s, cs[k].p, -3, 4, 1, "y");
        finish(&g, "y");
        BkOptions o;
        bk_options_default(&o);
        o.placement = BK_PLACE_CHIP;
        o.tile_images = cs[k].images;
        for (int c = 0; c < 3; c++) {
            char split[64];
            int grouped = 0, n = run_exact(&g, chips3[c], &o, "pw", &grouped, split, sizeof split);
            printf("  N%d %dx%d stride %d %-20s %d tensors, split %s\n", cs[k].N, cs[k].k, cs[k].k, cs[k].s, chips3[c], n,
                   split);
            CHECKF(n >= 1, "%s: %d int8 tensors compared", chips3[c], n);
            CHECKF(strstr(split, cs[k].want) != NULL, "%s: split '%s' lacks '%s'", chips3[c], split, cs[k].want);
        }
        ir_free(&g);
    }
}

/* Depthwise Int8Conv (group = C) on the vector unit (lower/dwvec.c via
 * lower/qmatrix.c): the padded block holds x's zero point (-3 and 9, not
 * 0, so a zero fill would be caught), i8 cast to i32, one i32 v.mul per
 * tap and a v.add per tap after the first; 3x3 at stride 1 and 2, 5x5,
 * an odd size; exact on every chip, ` vec` in the split on a1 (the
 * matrix unit's fold per channel costs more there). With --depthwise
 * matrix no split says vec, and the outputs are the same. */
TEST(depthwise_on_the_vector_unit)
{
    static const struct { int C, H, W, k, s, xz; } cs[] = {
        {48, 12, 12, 3, 1, -3}, {64, 13, 11, 3, 2, 9}, {32, 9, 10, 5, 1, -3},
    };
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        IrGraph g;
        new_graph(&g, cs[k].C, cs[k].H, cs[k].W);
        qconv_g(&g, "dw", "x", cs[k].C, cs[k].C, cs[k].k, cs[k].s, cs[k].k / 2, cs[k].xz, -20, 1, cs[k].C, "y");
        finish(&g, "y");
        for (int c = 0; c < 4; c++) {
            BkOptions o;
            bk_options_default(&o);
            o.dw_matrix = c == 3;
            char split[64];
            int grouped = 0, n = run_exact(&g, chips3[c % 3], &o, "dw", &grouped, split, sizeof split);
            printf("  %dx%d stride %d %-20s%s %d tensors, split %s\n", cs[k].k, cs[k].k, cs[k].s, chips3[c % 3],
                   c == 3 ? " (matrix)" : "", n, split);
            CHECKF(n >= 1, "%s: %d int8 tensors compared", chips3[c % 3], n);
            if (c == 0) CHECKF(strstr(split, " vec") != NULL, "a1: split '%s' is not on the vector unit", split);
            if (c == 3) CHECKF(strstr(split, " vec") == NULL, "--depthwise matrix: split '%s'", split);
        }
        ir_free(&g);
    }
}

/* ---- Concat and Resize members of int8 chains (lower/chain_ops.c) ---- */

static void qpool(IrGraph *g, const char *name, const char *x, int k, const char *out)
{
    AtlErr e;
    int64_t ks[2] = {k, k}, st[2] = {1, 1}, pads[4] = {k / 2, k / 2, k / 2, k / 2};
    int n = ir_add_op(g, "MaxPool", name, x, out, &e);
    ir_set_attr_ints(g, n, "kernel_shape", ks, 2, &e);
    ir_set_attr_ints(g, n, "strides", st, 2, &e);
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
}

static void qconcat(IrGraph *g, const char *ins, const char *out)
{
    AtlErr e;
    int n = ir_add_op(g, "Concat", "cat", ins, out, &e);
    ir_set_attr_int(g, n, "axis", 1, &e);
}

/* A one-input Int8Add: x (zero point xz) into other parameters (zero
 * point yz), as the quantiser puts before a Concat input whose scale
 * differs from the output's (ops/qdq_fuse.c). */
static void qrescale(IrGraph *g, const char *name, const char *x, int xz, int yz, const char *out)
{
    AtlErr e;
    int n = ir_add_op(g, "Int8Add", name, x, out, &e);
    ir_set_attr_float(g, n, "a_scale", 0.7311f, &e);
    ir_set_attr_int(g, n, "a_zero_point", xz, &e);
    ir_set_attr_int(g, n, "y_zero_point", yz, &e);
    ir_set_attr_int(g, n, "y_min", -128, &e);
    ir_set_attr_int(g, n, "y_max", 127, &e);
    ir_set_attr_int(g, n, "to", IR_I8, &e);
}

typedef enum { QM_INCEPTION, QM_UNET, QM_SPPF } QMemberGraph;

/* Inception-like (x [1, 32, 13, 8]): a 1x1 and a 3x3 branch of 64
 * channels, the second rescaled, and a 3x3 MaxPool of x, concatenated
 * (160 channels) into a 3x3 conv. U-Net-like (x [1, 64, 12, 8]): a 3x3
 * stride-2 conv, a nearest 2x Resize, the Concat with x, a 3x3 conv.
 * YOLO's SPPF (x [1, 32, 13, 8]): a 1x1 to 64, three 5x5 MaxPools in
 * sequence, the Concat of all four, a 1x1 conv. Channel offsets are
 * multiples of 64 (the LMEM alignment in int8 bytes). */
static void qmember_graph(IrGraph *g, QMemberGraph kind)
{
    AtlErr e;
    float sc[4] = {1, 1, 2, 2};
    int64_t four = 4, zero = 0;
    switch (kind) {
    case QM_INCEPTION:
        new_graph(g, 32, 13, 8);
        qconv(g, "ca", "x", 32, 64, 1, 1, 0, -3, -128, 1, "a");
        qconv(g, "cb", "x", 32, 64, 3, 1, 1, -3, 4, 0, "b");
        qrescale(g, "rb", "b", 4, -128, "br");
        qpool(g, "mp", "x", 3, "p");
        qconcat(g, "a,br,p", "q");
        qconv(g, "co", "q", 160, 64, 3, 1, 1, -128, 3, 1, "y");
        break;
    case QM_UNET:
        new_graph(g, 64, 12, 8);
        qconv(g, "cd", "x", 64, 64, 3, 2, 1, -3, -128, 1, "d");
        ir_add_const(g, "up_roi", IR_F32, 1, &zero, NULL, &e);
        ir_add_const(g, "up_scales", IR_F32, 1, &four, sc, &e);
        ir_set_attr_str(g, ir_add_op(g, "Resize", "up", "d,up_roi,up_scales", "u", &e), "mode", "nearest", &e);
        qconcat(g, "u,x", "q");
        qconv(g, "co", "q", 128, 64, 3, 1, 1, -3, 3, 1, "y");
        break;
    case QM_SPPF:
        new_graph(g, 32, 13, 8);
        qconv(g, "c1", "x", 32, 64, 1, 1, 0, -3, -128, 1, "a");
        qpool(g, "mp1", "a", 5, "p1");
        qpool(g, "mp2", "p1", 5, "p2");
        qpool(g, "mp3", "p2", 5, "p3");
        qconcat(g, "a,p1,p2,p3", "q");
        qconv(g, "c2", "q", 256, 64, 1, 1, 0, -128, 3, 1, "y");
        break;
    }
    finish(g, "y");
}

/* Each graph: on a1 its Concat (and Resize) joins a group of at least
 * `least` members; on a1, tiny and edge16k (there with activations out of
 * SRAM, where groups form) every int8 tensor the .abm keeps equals the
 * interpreter's, grouped and with --group none (the members' own
 * lowerings), and the cycles of both are printed. Fails without the int8
 * Concat and Resize members (member_kind). */
TEST(concat_and_resize_members)
{
    static const struct { QMemberGraph kind; const char *name, *member; int least; } cs[] = {
        {QM_INCEPTION, "inception concat", "cat", 4},
        {QM_UNET, "unet resize+concat", "up", 3},
        {QM_SPPF, "sppf concat of four", "cat", 5},
    };
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        IrGraph g;
        qmember_graph(&g, cs[k].kind);
        for (int c = 0; c < 3; c++) {
            BkOptions o, none;
            bk_options_default(&o);
            o.sram_acts = c ? BK_SRAM_ACTS_NEVER : BK_SRAM_ACTS_AUTO;   /* tiny, edge16k: in SRAM no group pays */
            o.sram_weights = BK_SRAM_NEVER;   /* the layers alone with SRAM-staged weights (qmatrix.c) beat these groups */
            none = o;
            none.group = BK_GROUP_NONE;
            char split[64];
            uint64_t cg = 0, cn = 0;
            int grouped = 0, g0 = 0, n = run_exact_c(&g, chips3[c], &o, cs[k].member, &grouped, split, sizeof split, &cg);
            int n0 = run_exact_c(&g, chips3[c], &none, cs[k].member, &g0, NULL, 0, &cn);
            printf("  %-20s %-20s group of %d (%s): %llu cycles, --group none %llu\n", cs[k].name, chips3[c], grouped,
                   split, (unsigned long long)cg, (unsigned long long)cn);
            CHECKF(n >= 1 && n0 >= 1, "%s: %d and %d int8 tensors compared", chips3[c], n, n0);
            if (c == 0)
                CHECKF(grouped >= cs[k].least, "a1: '%s' is in a group of %d members, want at least %d", cs[k].member,
                       grouped, cs[k].least);
        }
        ir_free(&g);
    }
}

/* Liveness packing of an int8 chain's row buffers (buf_life, pack_bufs):
 * 1x1, 3x3 and 1x1 convolutions 128 -> 128 on 16 x 112 (rows of 14 KiB,
 * an i32 accumulator row of 56 KiB, 176 KiB of resident weights), placed
 * on the whole chip with activations out of SRAM. With a buffer each
 * (--no-chain-pack) no slice of the three fits a slot, so at most two
 * form a group; packed, x shares bytes with the 3x3's output and the
 * first 1x1's output with the last's, the three form one group and run
 * in fewer cycles. Both equal the interpreter bit for bit. Fails while
 * int8 chains never pack. */
TEST(packed_row_buffers)
{
    IrGraph g;
    new_graph(&g, 128, 16, 112);
    qconv(&g, "c1", "x", 128, 128, 1, 1, 0, -3, -128, 1, "a");
    qconv(&g, "c2", "a", 128, 128, 3, 1, 1, -128, -128, 1, "b");
    qconv(&g, "c3", "b", 128, 128, 1, 1, 0, -128, 5, 0, "y");
    finish(&g, "y");
    int grouped[2] = {0, 0};
    uint64_t cyc[2] = {0, 0};
    for (int pack = 0; pack < 2; pack++) {
        BkOptions o;
        bk_options_default(&o);
        o.placement = BK_PLACE_CHIP;
        o.sram_acts = BK_SRAM_ACTS_NEVER;
        o.no_chain_pack = !pack;
        o.sram_weights = BK_SRAM_NEVER;   /* as concat_and_resize_members */
        char split[64];
        int n = run_exact_c(&g, chips3[0], &o, "c2", &grouped[pack], split, sizeof split, &cyc[pack]);
        printf("  %s: group of %d, split %s, %llu cycles\n", pack ? "packed" : "a buffer each", grouped[pack], split,
               (unsigned long long)cyc[pack]);
        CHECKF(n >= 1, "%d int8 tensors compared", n);
    }
    CHECKF(grouped[1] == 3 && grouped[0] < 3, "packed: a group of %d, a buffer each: %d", grouped[1], grouped[0]);
    CHECKF(cyc[1] < cyc[0], "packed: %llu cycles, a buffer each: %llu", (unsigned long long)cyc[1],
           (unsigned long long)cyc[0]);
    ir_free(&g);
}

int main(void)
{
    RUN(identity_bottleneck);
    RUN(downsampling_bottleneck);
    RUN(stem_with_maxpool);
    RUN(streamed_weights);
    RUN(multi_image);
    RUN(depthwise_on_the_vector_unit);
    RUN(concat_and_resize_members);
    RUN(packed_row_buffers);
    return test_summary("test_int8_group");
}
