/* slice.c - slice inference: which part of an input an output box needs.
 *
 * Reads: a lowered layer (its node's tensors and, for windows, the
 *   geometry its lowering set in BkLow: kernel, stride, dilation, padding,
 *   groups).
 * Guarantees:
 *   - windows (Conv, MaxPool, AveragePool; BK_K_CONV / BK_K_POOL): along H
 *     and W, outputs [o0, o0 + on) read inputs from o0 * stride - pad to
 *     (o0 + on - 1) * stride - pad + dilation * (kernel - 1), clipped to
 *     the input; the part cut off is the padding before and after
 *     (bk_window_span, the same arithmetic the window lowerings load
 *     their tiles with). Channels: a groups == 1 conv reads every input
 *     channel; a grouped conv (and a pool, one group per channel) the
 *     channels of the groups its output channels belong to. The batch
 *     index passes through. A conv's weights: the output channels' rows;
 *     its bias: the output channels.
 *   - elementwise layers (BK_K_ELEM): the same box, numpy-broadcast: an
 *     input dim of size 1 (or a dim the input does not have) is read at
 *     index 0 only.
 *   - Concat: along its axis, the part of the output box an input fills,
 *     at that input's own indices (none of it: extent 0 there); the other
 *     dims pass through.
 *   - a nearest Resize that upsamples every axis by an integer
 *     (bk_resize_up): output index o reads input o / f, so a box
 *     [o0, o0 + on) reads [o0 / f, (o0 + on - 1) / f]; its scales and roi
 *     whole.
 *   - an interpolating Resize (lower/resize.c: linear, cubic, every
 *     coordinate transformation mode): along H and W the input rows and
 *     columns from the first to the last with a non-zero weight of the
 *     box's outputs (bk_resize_span: for linear the floor and ceil of the
 *     mapped coordinates, clamped at the edges; exact, since it reads
 *     the interpreter's own interpolation matrix), N and C passing through.
 *   - every other layer: the whole input (the answer that is always
 *     right; a layer that can do better says so here).
 * Why: a layer group keeps intermediates in LMEM slice by slice; which
 *   slice of a member's input a slice of its output needs, halos included,
 *   is propagated backwards through the group with this. */
#include <string.h>
#include "compiler/lower/lower.h"

BkSpan bk_window_span(int o0, int on, int s, int pad, int d, int k, int size)
{
    int first = o0 * s - pad, last = (o0 + on - 1) * s - pad + d * (k - 1);
    int a = first < 0 ? 0 : first, b = last > size - 1 ? size - 1 : last;
    BkSpan sp = {a, b - a + 1, a - first, last - b};
    return sp;
}

int bk_window_extent(int on, int s, int d, int k, int size)
{
    int need = (on - 1) * s + d * (k - 1) + 1;
    return need < size ? need : size;
}

static void whole(const IrTensor *x, BkBox *need)
{
    need->rank = x->ndim;
    for (int d = 0; d < x->ndim; d++) { need->lo[d] = 0; need->n[d] = x->dims[d]; }
}

/* Output channels [c0, c0 + cn) of a grouped window: the input channels of
 * their groups. */
static void group_channels(const BkLow *l, int64_t c0, int64_t cn, int64_t *lo, int64_t *n)
{
    int64_t opg = l->OC / l->groups, cpg = l->C / l->groups;
    int64_t g0 = c0 / opg, g1 = (c0 + cn - 1) / opg;
    *lo = g0 * cpg;
    *n = (g1 - g0 + 1) * cpg;
}

static int window_need(const BkCtx *c, const BkLayer *ly, int in, const BkBox *out, BkBox *need, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    const IrNode *nd = &c->g->nodes[ly->node];
    const IrTensor *x = &c->g->t[nd->in[in]];
    int rank = out->rank, hd = rank - 2, wd = rank - 1;   /* NCW: no H */
    if (rank != 3 && rank != 4) return bk_fail(c, ly->node, e, "slice inference: output box of rank %d", rank);
    whole(x, need);
    if (in == 0) {
        need->lo[0] = out->lo[0];
        need->n[0] = out->n[0];
        if (l->groups == 1 && l->kind == BK_K_CONV) { need->lo[1] = 0; need->n[1] = l->C; }
        else group_channels(l, out->lo[1], out->n[1], &need->lo[1], &need->n[1]);
        if (rank == 4) {
            BkSpan ys = bk_window_span((int)out->lo[hd], (int)out->n[hd], l->sh, l->pt, l->dh, l->kh, l->H);
            need->lo[hd] = ys.a;
            need->n[hd] = ys.n;
        }
        BkSpan xs = bk_window_span((int)out->lo[wd], (int)out->n[wd], l->sw, l->pl, l->dw, l->kw, l->W);
        need->lo[wd] = xs.a;
        need->n[wd] = xs.n;
    } else {
        /* weights [OC][C/groups][k...] and bias [OC]: the output channels */
        need->lo[0] = out->lo[1];
        need->n[0] = out->n[1];
    }
    return 0;
}

static void broadcast_need(const IrTensor *x, const BkBox *out, BkBox *need)
{
    need->rank = x->ndim;
    for (int d = 0; d < x->ndim; d++) {
        int od = d + out->rank - x->ndim;
        if (x->dims[d] == 1 || od < 0) { need->lo[d] = 0; need->n[d] = 1; }
        else { need->lo[d] = out->lo[od]; need->n[d] = out->n[od]; }
    }
}

/* Concat input `in`: its part of the output box along the axis. */
static void concat_need(const IrGraph *g, const IrNode *nd, int in, const BkBox *out, BkBox *need)
{
    const IrTensor *x = &g->t[nd->in[in]];
    int ax = (int)ir_attr_int(nd, "axis", 0);
    if (ax < 0) ax += x->ndim;
    int64_t off = 0;
    for (int k = 0; k < in; k++) if (nd->in[k] >= 0) off += g->t[nd->in[k]].dims[ax];
    *need = *out;
    need->rank = x->ndim;
    int64_t lo = out->lo[ax] > off ? out->lo[ax] : off, hi = out->lo[ax] + out->n[ax];
    if (hi > off + x->dims[ax]) hi = off + x->dims[ax];
    need->lo[ax] = hi > lo ? lo - off : 0;
    need->n[ax] = hi > lo ? hi - lo : 0;
}

/* A nearest integer upsampling's input 0 (0), or -1 (not one). */
static int resize_need(const BkCtx *c, const BkLayer *ly, const BkBox *out, BkBox *need)
{
    int f[IR_MAXDIM];
    if (bk_resize_up(c, ly->node, f) || out->rank != c->g->t[c->g->nodes[ly->node].in[0]].ndim) return -1;
    need->rank = out->rank;
    for (int d = 0; d < out->rank; d++) {
        need->lo[d] = out->lo[d] / f[d];
        need->n[d] = out->n[d] > 0 ? (out->lo[d] + out->n[d] - 1) / f[d] - need->lo[d] + 1 : 0;
    }
    return 0;
}

/* An interpolating Resize (resize.c): along H and W the rows and columns
 * from the first to the last with a weight (bk_resize_span); the other
 * axes, which it does not resize, pass through. */
static int interp_need(const BkCtx *c, const BkLayer *ly, const BkBox *out, BkBox *need)
{
    int r = out->rank;
    if (!bk_resize_interp(ly) || r != c->g->t[c->g->nodes[ly->node].in[0]].ndim || r < 1) return -1;
    *need = *out;
    for (int d = r - 2 < 0 ? 0 : r - 2; d < r; d++) {
        BkSpan s = bk_resize_span(&ly->lw, d == r - 1, (int)out->lo[d], (int)out->n[d]);
        need->lo[d] = s.a;
        need->n[d] = s.n;
    }
    return 0;
}

int bk_slice_need(const BkCtx *c, const BkLayer *ly, int in, const BkBox *out, BkBox *need, AtlErr *e)
{
    if (ly->node < 0) return atl_fail(e, "slice inference: a constant output reads no input");
    const IrNode *nd = &c->g->nodes[ly->node];
    if (in < 0 || in >= nd->nin || nd->in[in] < 0)
        return bk_fail(c, ly->node, e, "slice inference: no input %d", in);
    const IrTensor *x = &c->g->t[nd->in[in]];
    switch (ly->lw.kind) {
    case BK_K_CONV:
    case BK_K_POOL:
        return window_need(c, ly, in, out, need, e);
    case BK_K_ELEM:
        if (c->gelu_src[ly->node] < 0) { broadcast_need(x, out, need); return 0; }
        break;   /* a Gelu pattern reads its source, not its node's inputs */
    case BK_K_MOVE:
        if (!strcmp(nd->op, "Concat") && out->rank == x->ndim) { concat_need(c->g, nd, in, out, need); return 0; }
        if (in == 0 && (!strcmp(nd->op, "Resize") || !strcmp(nd->op, "Upsample")) &&
            (!resize_need(c, ly, out, need) || !interp_need(c, ly, out, need)))
            return 0;
        break;
    default:
        break;
    }
    whole(x, need);
    return 0;
}
