/* chain_ops.c - the members of a layer group (lower/chain.c) that are not
 * window layers: Concat along channels, a nearest integer upsampling
 * Resize, and a float elementwise binary layer (Add, Sub, Mul, Max, Min of
 * two same-shaped tensors, e.g. two branches added, a Mul gate; the second
 * may be per channel, [N, C, 1, 1], e.g. a squeeze-and-excitation gate).
 *
 * Reads: a lowered layer (its node, its BkLow) and the graph.
 * Does: bk_member_op says which of these a layer is (the structural test;
 *   chain.c adds the buffer and alignment conditions), and emits their
 *   instructions over a slice's rows in the chain's HWC row buffers
 *   ([rows][columns][C], every buffer the same columns):
 *   - Concat: one v.mov per input into its channels of the output rows
 *     (the output's pixel pitch is the sum of the inputs' channels);
 *   - Resize by integer factors fh x fw (N and C kept): one v.mov per row
 *     phase k < fh, over the output rows o = q x fh + k of the slice,
 *     reading input row q with stride 0 along the fw repeats of a column;
 *   - an interpolating Resize (linear, cubic: lowered by resize.c, whose
 *     bk_resize_member_code emits its rows) is BK_MOP_LRESIZE.
 *   Elementwise members run their own register program (chain.c).
 * Why here: chain.c is shared by several kinds of group; these members'
 *   instructions and tests of a layer need nothing of its plan. */
#include <string.h>
#include "compiler/lower/lower.h"

/* A float binary op whose one-step program chain.c runs as it is. */
static const char *const elem_ops[] = {"Add", "Sub", "Mul", "Max", "Min", NULL};

static int same_dims(const IrTensor *a, const IrTensor *b)
{
    if (a->ndim != b->ndim) return 0;
    for (int d = 0; d < a->ndim; d++) if (a->dims[d] != b->dims[d]) return 0;
    return 1;
}

int bk_member_per_channel(const IrGraph *g, int t, const IrTensor *y)
{
    const IrTensor *x = &g->t[t];
    return !x->data && x->ndim == 4 && y->ndim == 4 && x->dims[0] == y->dims[0] && x->dims[1] == y->dims[1] &&
           x->dims[2] == 1 && x->dims[3] == 1 && (y->dims[2] > 1 || y->dims[3] > 1);
}

int bk_member_op(const BkCtx *c, const BkLayer *ly)
{
    if (ly->node < 0 || ly->lw.kb_parts) return BK_MOP_NONE;
    const IrGraph *g = c->g;
    const IrNode *nd = &g->nodes[ly->node];
    if (nd->nout < 1 || nd->out[0] < 0) return BK_MOP_NONE;
    const IrTensor *y = &g->t[nd->out[0]];
    if (y->ndim != 4 || nd->nin < 1 || nd->in[0] < 0) return BK_MOP_NONE;
    for (int i = 0; i < nd->nin; i++)
        if (nd->in[i] >= 0 && g->t[nd->in[i]].data && strcmp(nd->op, "Resize") && strcmp(nd->op, "Upsample")) return BK_MOP_NONE;
    if (ly->direct && ly->lw.kind == BK_K_MOVE && !strcmp(nd->op, "Concat")) {
        int64_t ax = ir_attr_int(nd, "axis", 0);
        if ((ax != 1 && ax != -3) || nd->nin < 2 || nd->nin > BK_MOP_MAXIN) return BK_MOP_NONE;
        for (int i = 0; i < nd->nin; i++) {
            const IrTensor *x = nd->in[i] >= 0 ? &g->t[nd->in[i]] : NULL;
            if (!x || x->ndim != 4 || x->dims[0] != y->dims[0] || x->dims[2] != y->dims[2] || x->dims[3] != y->dims[3])
                return BK_MOP_NONE;
        }
        return BK_MOP_CONCAT;
    }
    if (ly->direct && ly->lw.kind == BK_K_MOVE && (!strcmp(nd->op, "Resize") || !strcmp(nd->op, "Upsample"))) {
        int f[IR_MAXDIM];
        if (g->t[nd->in[0]].data || bk_resize_up(c, ly->node, f) || f[0] != 1 || f[1] != 1) return BK_MOP_NONE;
        return BK_MOP_RESIZE;
    }
    if (!ly->direct && (!strcmp(nd->op, "Resize") || !strcmp(nd->op, "Upsample")))
        return !g->t[nd->in[0]].data && bk_resize_member_ok(ly) ? BK_MOP_LRESIZE : BK_MOP_NONE;
    if (ly->direct || ly->lw.kind != BK_K_ELEM || bk_is_int_dt(ly->lw.dt) || nd->nin != 2 || c->gelu_src[ly->node] >= 0)
        return BK_MOP_NONE;
    int known = 0;
    for (int i = 0; elem_ops[i]; i++) known |= !strcmp(nd->op, elem_ops[i]);
    if (!known || nd->in[1] < 0 || !same_dims(&g->t[nd->in[0]], y)) return BK_MOP_NONE;
    return same_dims(&g->t[nd->in[1]], y) || bk_member_per_channel(g, nd->in[1], y) ? BK_MOP_ELEM : BK_MOP_NONE;
}

void bk_member_concat_code(BkCode *k, int dt, uint64_t dst, int ctot, int c0, uint64_t src, int cn, uint32_t px)
{
    uint32_t sh[4] = {1, 1, px, (uint32_t)cn};
    int64_t ds[4] = {0, 0, ctot, 1}, ss[4];
    bk_compact(sh, ss);
    AtlInsn mv = bk_vun(ISA_OP_V_MOV, dt, dst + (uint64_t)c0 * (uint64_t)isa_dtype_size(dt), src, sh, ds, ss, 0, 0);
    bk_code_cp(k, &mv);
}

void bk_member_resize_code(BkCode *k, int dt, uint64_t dst, int lo, int n, uint64_t src, int qlo, int fh, int fw, int W,
                           int C)
{
    uint64_t es = (uint64_t)isa_dtype_size(dt), orow = (uint64_t)W * fw * C, irow = (uint64_t)W * C;
    for (int ph = 0; ph < fh; ph++) {
        int o = lo + ((ph - lo % fh) + fh) % fh;   /* the first output row of phase ph */
        if (o >= lo + n) continue;
        int cnt = (lo + n - 1 - o) / fh + 1;
        uint32_t sh[4] = {(uint32_t)cnt, (uint32_t)W, (uint32_t)fw, (uint32_t)C};
        int64_t ds[4] = {(int64_t)(fh * orow), (int64_t)fw * C, C, 1}, ss[4] = {(int64_t)irow, C, 0, 1};
        AtlInsn mv = bk_vun(ISA_OP_V_MOV, dt, dst + (uint64_t)(o - lo) * orow * es,
                            src + (uint64_t)(o / fh - qlo) * irow * es, sh, ds, ss, 0, 0);
        bk_code_cp(k, &mv);
    }
}
