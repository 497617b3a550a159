/* test_attn_group.c - attention groups (lower/attn.c): MatMul (Q x K^T),
 * optional elementwise members (a scale Div, a mask Add), Softmax and
 * MatMul (x V) lowered as one layer whose scores stay in LMEM.
 *
 * Each graph is built here (Q, K and V computed from the input by
 * MatMuls with constant weights, K transposed, so every operand of the
 * group is an activation), compiled grouped (the default) and with
 * --group none, both with activations in DRAM, run on the simulator in
 * full mode (race detector on) and compared with the reference
 * interpreter on a1, tiny and edge16k. The summary must show the group
 * ("Group(n)") where the case expects one; the grouped and ungrouped
 * outputs must agree bit for bit, f32 and bf16 (the group runs the
 * layers' own instructions on the same values). Cases: ViT's pattern (no
 * scale member), BERT's (Div by a scalar, Add of a [batch][1][1][S] mask
 * broadcast over heads and rows), a sequence length (37) not a multiple
 * of any slice (the summary's split shows the rows cut unevenly on a1
 * and edge16k; on edge16k K and V stream in two uneven key chunks), bf16,
 * long keys that fit no slot whole (K and V streamed in key chunks, "S<n>"
 * in the split; no group formed before) and, beside a control, scores
 * that are also a graph output (no group). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_check.h"

#define A1 "configs/a1.ini"
#define TINY "configs/tiny.ini"
#define EDGE "configs/edge16k.ini"

static uint32_t rng = 7;

/* The scores s -> (with `bert`: / 8 + a random mask of mrank dims md) ->
 * Softmax p -> y = p v: the tail of every attention graph here. */
static void softmax_pv(IrGraph *g, int bert, int mrank, const int64_t *md, const char *v)
{
    AtlErr e;
    char ins[64];
    const char *sm_in = "s";
    if (bert) {
        float eight = 8.0f;
        ir_add_const(g, "eight", IR_F32, 0, NULL, &eight, &e);
        e2e_rand_const(g, "mask", mrank, md, 2.0f, &rng);
        ir_add_op(g, "Div", "scale", "s,eight", "sd", &e);
        ir_add_op(g, "Add", "mask_add", "sd,mask", "sm", &e);
        sm_in = "sm";
    }
    ir_set_attr_int(g, ir_add_op(g, "Softmax", "softmax", sm_in, "p", &e), "axis", -1, &e);
    snprintf(ins, sizeof ins, "p,%s", v);
    ir_add_op(g, "MatMul", "pv", ins, "y", &e);
}

/* x [B, H, S, E] (B = 0: [H, S, E]) -> Q, K, V = x W (E x D each, V E x
 * Dv), K^T; scores = Q K^T; with `bert` / 8 and + mask [B, 1, 1, S]
 * (constant); Softmax over the last axis; y = P V. scores_out: the scores
 * are a graph output too. */
static void attn_graph(IrGraph *g, int B, int H, int S, int E, int D, int Dv, int bert, int scores_out)
{
    AtlErr e;
    int64_t xd[4] = {B, H, S, E}, wd[2] = {E, D}, vd[2] = {E, Dv}, md[4] = {B, 1, 1, S};
    int r = B ? 4 : 3, perm4[4] = {0, 1, 3, 2};
    bkc_new_graph(g, "x", r, B ? xd : xd + 1);
    e2e_rand_const(g, "wq", 2, wd, 0.5f, &rng);
    e2e_rand_const(g, "wk", 2, wd, 0.5f, &rng);
    e2e_rand_const(g, "wv", 2, vd, 0.5f, &rng);
    ir_add_op(g, "MatMul", "q", "x,wq", "q", &e);
    ir_add_op(g, "MatMul", "k", "x,wk", "k", &e);
    ir_add_op(g, "MatMul", "v", "x,wv", "v", &e);
    int t = ir_add_op(g, "Transpose", "kt", "k", "kt", &e);
    int64_t perm[4];
    for (int i = 0; i < r; i++) perm[i] = B ? perm4[i] : (i < 1 ? 0 : 3 - i);
    ir_set_attr_ints(g, t, "perm", perm, r, &e);
    ir_add_op(g, "MatMul", "scores", "q,kt", "s", &e);
    softmax_pv(g, bert, B ? 4 : 3, B ? md : md + 1, "v");
    ir_add_output(g, "y", &e);
    if (scores_out) ir_add_output(g, "s", &e);
}


/* Long keys (docs/backend.md "Attention groups", streaming): x [S, E],
 * queries from its first M rows only (Slice), K and V from all S:
 * scores [M, S] = (x[:M] Wq) (x Wk)^T, with `bert` / 8 and + mask [S];
 * Softmax; y = P (x Wv) [M, Dv]. */
static void cross_graph(IrGraph *g, int M, int S, int E, int D, int Dv, int bert)
{
    AtlErr e;
    int64_t xd[2] = {S, E}, wd[2] = {E, D}, vd[2] = {E, Dv}, md[1] = {S}, one = 1, perm[2] = {1, 0};
    int64_t st = 0, en = M, ax = 0;
    bkc_new_graph(g, "x", 2, xd);
    e2e_rand_const(g, "wq", 2, wd, 0.5f, &rng);
    e2e_rand_const(g, "wk", 2, wd, 0.5f, &rng);
    e2e_rand_const(g, "wv", 2, vd, 0.5f, &rng);
    ir_add_const(g, "st", IR_I64, 1, &one, &st, &e);
    ir_add_const(g, "en", IR_I64, 1, &one, &en, &e);
    ir_add_const(g, "ax", IR_I64, 1, &one, &ax, &e);
    ir_add_op(g, "Slice", "rows", "x,st,en,ax", "xs", &e);
    ir_add_op(g, "MatMul", "q", "xs,wq", "q", &e);
    ir_add_op(g, "MatMul", "k", "x,wk", "k", &e);
    ir_add_op(g, "MatMul", "v", "x,wv", "v", &e);
    ir_set_attr_ints(g, ir_add_op(g, "Transpose", "kt", "k", "kt", &e), "perm", perm, 2, &e);
    ir_add_op(g, "MatMul", "scores", "q,kt", "s", &e);
    softmax_pv(g, bert, 1, md, "v");
    ir_add_output(g, "y", &e);
}

/* The multi-head pattern as BERT exports it: x [B, S, E]; Q, K, V = x W
 * [B, S, H*D] reshaped to [B, S, H, D] and transposed to [B, H, S, D]
 * (K to [B, H, D, S]) by Transpose layers; scores / 8 + mask [B, 1, 1,
 * S] with `bert`; Softmax; y = P V [B, H, S, D], with `yt` transposed
 * back to [B, S, H, D]. */
static void mh_graph(IrGraph *g, int B, int S, int E, int H, int D, int bert, int yt)
{
    AtlErr e;
    int64_t xd[3] = {B, S, E}, wd[2] = {E, H * D}, md[4] = {B, 1, 1, S}, four = 4, hd[4] = {B, S, H, D};
    int64_t pq[4] = {0, 2, 1, 3}, pk[4] = {0, 2, 3, 1};
    bkc_new_graph(g, "x", 3, xd);
    e2e_rand_const(g, "wq", 2, wd, 0.5f, &rng);
    e2e_rand_const(g, "wk", 2, wd, 0.5f, &rng);
    e2e_rand_const(g, "wv", 2, wd, 0.5f, &rng);
    ir_add_const(g, "hd", IR_I64, 1, &four, hd, &e);
    ir_add_op(g, "MatMul", "q", "x,wq", "q", &e);
    ir_add_op(g, "MatMul", "k", "x,wk", "k", &e);
    ir_add_op(g, "MatMul", "v", "x,wv", "v", &e);
    ir_add_op(g, "Reshape", "qr", "q,hd", "q4", &e);
    ir_add_op(g, "Reshape", "kr", "k,hd", "k4", &e);
    ir_add_op(g, "Reshape", "vr", "v,hd", "v4", &e);
    ir_set_attr_ints(g, ir_add_op(g, "Transpose", "qt", "q4", "qh", &e), "perm", pq, 4, &e);
    ir_set_attr_ints(g, ir_add_op(g, "Transpose", "kt", "k4", "kh", &e), "perm", pk, 4, &e);
    ir_set_attr_ints(g, ir_add_op(g, "Transpose", "vt", "v4", "vh", &e), "perm", pq, 4, &e);
    ir_add_op(g, "MatMul", "scores", "qh,kh", "s", &e);
    softmax_pv(g, bert, 4, md, "vh");
    if (yt) ir_set_attr_ints(g, ir_add_op(g, "Transpose", "yt", "y", "ys", &e), "perm", pq, 4, &e);
    ir_add_output(g, yt ? "ys" : "y", &e);
}

/* The pattern as timm's ViT exports it: x [1, S, E]; qkv = x W [1, S,
 * 3*H*D] reshaped to [1, S, 3, H, D], transposed to [3, 1, H, S, D];
 * Gathers of index 0, 1, 2 along axis 0 give Q, K, V [1, H, S, D]; Q
 * scaled by a Mul (`div`: a Div) by a constant; K transposed; scores;
 * Softmax; y = P V transposed back to [1, S, H, D]. */
static void vit_graph(IrGraph *g, int S, int E, int H, int D, int div)
{
    AtlErr e;
    int64_t xd[3] = {1, S, E}, wd[2] = {E, 3 * H * D}, five = 5, rd[5] = {1, S, 3, H, D};
    int64_t p5[5] = {2, 0, 3, 1, 4}, pk[4] = {0, 1, 3, 2}, py[4] = {0, 2, 1, 3}, i0 = 0, i1 = 1, i2 = 2;
    float sc = div ? 4.0f : 0.25f;
    bkc_new_graph(g, "x", 3, xd);
    e2e_rand_const(g, "w", 2, wd, 0.5f, &rng);
    ir_add_const(g, "rd", IR_I64, 1, &five, rd, &e);
    ir_add_const(g, "i0", IR_I64, 0, NULL, &i0, &e);
    ir_add_const(g, "i1", IR_I64, 0, NULL, &i1, &e);
    ir_add_const(g, "i2", IR_I64, 0, NULL, &i2, &e);
    ir_add_const(g, "sc", IR_F32, 0, NULL, &sc, &e);
    ir_add_op(g, "MatMul", "qkv", "x,w", "qkv", &e);
    ir_add_op(g, "Reshape", "r", "qkv,rd", "r", &e);
    ir_set_attr_ints(g, ir_add_op(g, "Transpose", "t", "r", "t", &e), "perm", p5, 5, &e);
    ir_set_attr_int(g, ir_add_op(g, "Gather", "gq", "t,i0", "q0", &e), "axis", 0, &e);
    ir_set_attr_int(g, ir_add_op(g, "Gather", "gk", "t,i1", "k", &e), "axis", 0, &e);
    ir_set_attr_int(g, ir_add_op(g, "Gather", "gv", "t,i2", "v", &e), "axis", 0, &e);
    ir_add_op(g, div ? "Div" : "Mul", "qs", "q0,sc", "q", &e);
    ir_set_attr_ints(g, ir_add_op(g, "Transpose", "kt", "k", "kt", &e), "perm", pk, 4, &e);
    ir_add_op(g, "MatMul", "scores", "q,kt", "s", &e);
    ir_set_attr_int(g, ir_add_op(g, "Softmax", "softmax", "s", "p", &e), "axis", -1, &e);
    ir_add_op(g, "MatMul", "pv", "p,v", "y", &e);
    ir_set_attr_ints(g, ir_add_op(g, "Transpose", "yt", "y", "ys", &e), "perm", py, 4, &e);
    ir_add_output(g, "ys", &e);
}

/* Compiles a copy of g on chipfile in dtype (grouped or not, activations
 * in DRAM), runs it: 0 and *err, the ops of the summary joined by spaces
 * in ops, the first output's bytes in *y (malloc'd). */
static int placement = BK_PLACE_CHIP;    /* BK_PLACE_SPLIT for the ViT-B/16 head block */

static int run(const IrGraph *g, const char *chipfile, int dtype, int group, double *err, char *ops, size_t cap,
               uint8_t **y, size_t *ylen)
{
    IrGraph c;
    AtlErr e;
    BkOptions o;
    BkSummary sum;
    char msg[1024] = "";
    memset(&sum, 0, sizeof sum);
    bk_options_default(&o);
    o.dtype = dtype;
    o.group = group;
    o.sram_acts = BK_SRAM_ACTS_NEVER;
    o.placement = placement;
    if (ir_clone(g, &c, &e)) return -1;
    int rc = e2e_graph_run_y(&c, chipfile, &o, err, NULL, &sum, msg, sizeof msg, y, ylen);
    size_t k = 0;
    ops[0] = 0;
    for (int i = 0; rc == 0 && i < sum.nlayers && k + 80 < cap; i++) {
        int grp = !strncmp(sum.layers[i].op, "Group", 5);
        k += (size_t)snprintf(ops + k, cap - k, "%s%s%s%s%s", i ? " " : "", sum.layers[i].op, grp ? " [" : "",
                              grp ? sum.layers[i].split : "", grp ? "]" : "");
    }
    if (rc) snprintf(ops, cap, "%s", msg);
    bk_summary_free(&sum);
    ir_free(&c);
    return rc;
}

/* The query-row chunks of the first group's split ("B<b> M<chunks> attn"), 0 none. */
static int m_chunks(const char *ops)
{
    const char *s = strstr(ops, "[B");
    s = s ? strstr(s, " M") : NULL;
    return s ? atoi(s + 2) : 0;
}

/* The key chunks of the first group's split ("B<b> M<m> S<chunks> attn"), 1 when K and V are whole. */
static int s_chunks(const char *ops)
{
    const char *s = strstr(ops, "[B");
    const char *end = s ? strstr(s, "attn]") : NULL;
    s = s ? strstr(s, " S") : NULL;
    return s && end && s < end ? atoi(s + 2) : 1;
}

enum { UNEVEN = 1, STREAMED = 2 };

/* g on chipfile in dtype, grouped and not: both match the interpreter;
 * the grouped summary holds `group` ("Group(n)", NULL: none may form);
 * in f32 the two outputs are equal bit for bit. flags: UNEVEN, the group
 * cuts the 37 query rows into several chunks (the last one shorter);
 * STREAMED, the group streams K and V in several key chunks. */
static void check(const IrGraph *g, const char *what, const char *chipfile, int dtype, const char *group, int flags)
{
    int uneven = flags & UNEVEN;
    double ea = 0, en = 0;
    char oa[512], on[512];
    uint8_t *ya = NULL, *yn = NULL;
    size_t la = 0, ln = 0;
    int ra = run(g, chipfile, dtype, BK_GROUP_AUTO, &ea, oa, sizeof oa, &ya, &la);
    int rn = run(g, chipfile, dtype, BK_GROUP_NONE, &en, on, sizeof on, &yn, &ln);
    const char *dn = isa_dtype_name(dtype);
    printf("  %-22s %-20s %-4s err %.3g, none %.3g  %s\n", what, chipfile, dn, ea, en, oa);
    CHECKF(ra == 0, "%s on %s %s (grouped): %s", what, chipfile, dn, oa);
    CHECKF(rn == 0, "%s on %s %s (--group none): %s", what, chipfile, dn, on);
    double tol = dtype == ISA_F32 ? 2e-5 : 3e-2;
    if (ra == 0) {
        CHECKF(ea <= tol, "%s on %s %s (grouped): error %g", what, chipfile, dn, ea);
        if (uneven) CHECKF(m_chunks(oa) > 1 && 37 % m_chunks(oa) != 0, "%s on %s %s: query rows not cut unevenly: '%s'", what, chipfile, dn, oa);
        if (flags & STREAMED) CHECKF(s_chunks(oa) > 1, "%s on %s %s: K and V not streamed: '%s'", what, chipfile, dn, oa);
        if (group) CHECKF(strstr(oa, group) != NULL, "%s on %s %s: no %s in '%s'", what, chipfile, dn, group, oa);
        else CHECKF(strstr(oa, "Group") == NULL, "%s on %s %s: a group formed: '%s'", what, chipfile, dn, oa);
    }
    if (rn == 0) CHECKF(en <= tol && !strstr(on, "Group"), "%s on %s %s (--group none): error %g, '%s'", what, chipfile, dn, en, on);
    if (ra == 0 && rn == 0)
        CHECKF(la == ln && !memcmp(ya, yn, la), "%s on %s: grouped and --group none outputs differ", what, chipfile);
    free(ya);
    free(yn);
}

TEST(vit_pattern)
{
    IrGraph g;
    attn_graph(&g, 0, 4, 37, 16, 8, 8, 0, 0);
    check(&g, "vit 4x37x8", A1, ISA_F32, "Group(4)", 1);
    check(&g, "vit 4x37x8", TINY, ISA_F32, "Group(4)", 0);
    check(&g, "vit 4x37x8", EDGE, ISA_F32, "Group(4)", STREAMED);
    check(&g, "vit 4x37x8", A1, ISA_BF16, "Group(4)", 0);
    ir_free(&g);
}

TEST(bert_pattern)
{
    IrGraph g;
    attn_graph(&g, 2, 3, 37, 16, 8, 12, 1, 0);
    check(&g, "bert 2x3x37x8", A1, ISA_F32, "Group(6)", 1);
    check(&g, "bert 2x3x37x8", TINY, ISA_F32, "Group(6)", 0);
    check(&g, "bert 2x3x37x8", EDGE, ISA_F32, "Group(6)", UNEVEN | STREAMED);
    check(&g, "bert 2x3x37x8", A1, ISA_BF16, "Group(6)", 0);
    ir_free(&g);
}

TEST(scores_read_outside)
{
    IrGraph g;
    attn_graph(&g, 0, 4, 37, 16, 8, 8, 1, 1);
    check(&g, "scores an output", A1, ISA_F32, NULL, 0);
    ir_free(&g);
}

/* Keys that do not fit a slot whole beside a query row (no group
 * before streaming): the group computes the scores key chunk by key
 * chunk into rows kept in LMEM and adds P x V over the same chunks. */
TEST(long_keys)
{
    IrGraph g;
    cross_graph(&g, 8, 1024, 8, 8, 8, 0);
    check(&g, "long 8x1024x8", TINY, ISA_F32, "Group(4)", STREAMED);
    ir_free(&g);
    cross_graph(&g, 16, 1024, 8, 8, 8, 0);
    check(&g, "long 16x1024x8", TINY, ISA_BF16, "Group(4)", STREAMED);
    ir_free(&g);
    cross_graph(&g, 4, 1024, 8, 8, 8, 1);
    check(&g, "long bert 4x1024x8", TINY, ISA_F32, "Group(6)", STREAMED);
    ir_free(&g);
    cross_graph(&g, 8, 256, 8, 8, 8, 0);
    check(&g, "long 8x256x8", EDGE, ISA_F32, "Group(4)", STREAMED);
    ir_free(&g);
    cross_graph(&g, 4, 256, 8, 8, 8, 1);
    check(&g, "long bert 4x256x8", EDGE, ISA_F32, "Group(6)", STREAMED);
    ir_free(&g);
    cross_graph(&g, 64, 1024, 64, 64, 64, 1);
    check(&g, "long bert 64x1024x64", A1, ISA_F32, "Group(6)", STREAMED);
    check(&g, "long bert 64x1024x64", A1, ISA_BF16, "Group(6)", STREAMED);
    ir_free(&g);
}

/* Q, K and V through Transposes of the projections' heads, the output
 * transposed back: at batch 1 the Transposes are members (Q, K^T and V
 * read, the output rows stored, through permuted strides, no copies); at
 * batch 2 the batch and head dims do not collapse into one stride, so the
 * group forms without them. */
TEST(transposed_heads)
{
    IrGraph g;
    mh_graph(&g, 1, 37, 16, 2, 8, 1, 1);
    check(&g, "heads 1x37x2x8", A1, ISA_F32, "Group(9)", UNEVEN);
    check(&g, "heads 1x37x2x8", EDGE, ISA_F32, "Group(9)", 0);
    check(&g, "heads 1x37x2x8", A1, ISA_BF16, "Group(9)", 0);
    ir_free(&g);
    mh_graph(&g, 1, 37, 16, 2, 8, 0, 0);
    check(&g, "heads 1x37x2x8 vit", TINY, ISA_F32, "Group(6)", 0);
    ir_free(&g);
    mh_graph(&g, 2, 37, 16, 2, 8, 0, 1);
    check(&g, "heads 2x37x2x8", A1, ISA_F32, "Group(3)", 0);
    ir_free(&g);
}

/* ViT's pattern: the qkv Transpose, the three Gathers, Q's scale (a
 * Mul, or a Div: two steps) and K's Transpose lead the group, the output
 * Transpose ends it: Q, K and V read from the projection's output
 * through the composed strides, Q scaled in the tile. */
TEST(vit_heads)
{
    IrGraph g;
    vit_graph(&g, 37, 16, 3, 8, 0);
    check(&g, "vit qkv 37x3x8", A1, ISA_F32, "Group(10)", UNEVEN);
    check(&g, "vit qkv 37x3x8", TINY, ISA_F32, "Group(10)", 0);
    check(&g, "vit qkv 37x3x8", EDGE, ISA_F32, "Group(10)", 0);
    check(&g, "vit qkv 37x3x8", A1, ISA_BF16, "Group(10)", 0);
    ir_free(&g);
    vit_graph(&g, 37, 16, 3, 8, 1);
    check(&g, "vit qkv div 37x3x8", A1, ISA_F32, "Group(10)", 0);
    ir_free(&g);
    /* ViT-B/16's attention with placement split (one image a cluster of 4
     * cores: 12 heads, whole query rows, K and V streamed in 3 key chunks)
     * and Q's scale in the tile: the tiles of one slot start on the
     * vector engine (phase 0 scales Q) or on the matrix engine (the V
     * phases), so the emitter hands the loads' semaphore over between them
     * (schedule.h bk_sched_handover); without it the vector engine took a V
     * chunk's signal and every core deadlocked */
    vit_graph(&g, 197, 768, 12, 64, 0);
    placement = BK_PLACE_SPLIT;
    check(&g, "vit-b16 attention", A1, ISA_F32, "Group(10)", STREAMED);
    placement = BK_PLACE_CHIP;
    ir_free(&g);
}

int main(void)
{
    RUN(vit_pattern);
    RUN(bert_pattern);
    RUN(scores_read_outside);
    RUN(long_keys);
    RUN(transposed_heads);
    RUN(vit_heads);
    return test_summary("test_attn_group");
}
