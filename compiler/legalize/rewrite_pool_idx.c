/* rewrite_pool_idx.c - MaxPool's optional Indices output on the chip,
 * as ops it already lowers (a rule of legalize/rewrite_ops.c's table, on the
 * backend's private copy).
 *
 * For a 2-D float MaxPool (no dilation) with Indices:
 * - y = the same MaxPool without Indices, its pads made explicit (the end
 *   pads those ceil_mode implies included), so `v.maxpool` gives y;
 * - x padded with -inf to the windows' extent; per kernel tap (ky, kx) its
 *   strided Slice [ky :: sh, kx :: sw] is the tap's value of every window,
 *   and Equal(tap, y) marks the windows whose maximum it holds;
 * - the first such tap in the interpreter's scan order (row-major over the
 *   kernel, first of ties) by a Where chain from the last tap to the
 *   first: i = Where(eq_t, pos_t, i), starting from the last tap's pos;
 *   pos_t [OH, OW] is a constant: the tap's flat position in its image
 *   (ih * W + iw, or iw * H + ih for storage_order 1), broadcast over N, C;
 * - Indices = i + (n * C + c) * H * W (a constant [N, C, 1, 1], int64).
 * Padding never equals a real maximum (-inf loses), except in a window
 * whose elements are all -inf; a NaN maximum matches no tap (the index is
 * then the last tap's). Integer inputs and other ranks fail naming the node.
 * Why: the vector unit's pool gives no argmax; taps are kh*kw slices, an
 * exact compare and selects, all existing lowerings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/legalize/legalize.h"
#include "compiler/ops/ops.h"

int bk_rewrite_pool_idx_applies(const IrGraph *g, int node)
{
    const IrNode *n = &g->nodes[node];
    return n->nout > 1 && n->out[1] >= 0;
}

/* Slice of x on axes 2, 3 from (r0, c0) with steps (sr, sc), nr x nc. */
static int tap_slice(IrGraph *g, const char *base, const char *what, int x, int64_t r0, int64_t c0, int64_t nr,
                     int64_t nc, int64_t sr, int64_t sc, AtlErr *e)
{
    const int64_t vals[4][2] = {{r0, c0}, {r0 + (nr - 1) * sr + 1, c0 + (nc - 1) * sc + 1}, {2, 3}, {sr, sc}};
    static const char *const parts[4] = {"starts", "ends", "axes", "steps"};
    int ins[5] = {x};
    char wn[96];
    for (int p = 0; p < 4; p++) {
        snprintf(wn, sizeof wn, "%s_%s", what, parts[p]);
        if ((ins[1 + p] = bk_rw_int_const(g, base, wn, vals[p], 2, e)) < 0) return -1;
    }
    return bk_rw_op(g, "Slice", base, what, ins, 5, e);
}

/* pos_t: the flat in-image position of tap (ky, kx) for every window. */
static int tap_positions(IrGraph *g, const char *base, const char *what, const int64_t geo[10], int64_t ky, int64_t kx,
                         int colmajor, AtlErr *e)
{
    int64_t H = geo[0], W = geo[1], OH = geo[2], OW = geo[3], sh = geo[6], sw = geo[7], pt = geo[8], pl = geo[9];
    int64_t dims[2] = {OH, OW};
    int k = bk_rw_typed_const(g, base, what, IR_I64, 2, dims, NULL, e);
    for (int64_t i = 0; k >= 0 && i < OH; i++)
        for (int64_t j = 0; j < OW; j++) {
            int64_t ih = i * sh - pt + ky, iw = j * sw - pl + kx;
            int64_t pos = ih < 0 || iw < 0 || ih >= H || iw >= W ? 0 : colmajor ? iw * H + ih : ih * W + iw;
            ir_set_i(&g->t[k], i * OW + j, pos);
        }
    return k;
}

int bk_rewrite_pool_idx(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    const char *name = n->name ? n->name : "?";
    int x = n->in[0], y = n->out[0], ind = n->out[1];
    const IrTensor *xt = &g->t[x], *yt = &g->t[y];
    if (strcmp(n->op, "MaxPool") || xt->ndim != 4 || !op_dtype_is_float(xt->dtype))
        return atl_fail(e, "node '%s' (%s): the Indices output is lowered for 2-D MaxPool of float tensors only (input '%s' is %s, rank %d)",
                        name, n->op, xt->name, ir_dtype_name(xt->dtype), xt->ndim);
    int64_t k[2], s[2], d[2], pads[4] = {0, 0, 0, 0};
    if (bk_rw_attr_ints(n, "kernel_shape", k, 2, 0) || bk_rw_attr_ints(n, "strides", s, 2, 1) ||
        bk_rw_attr_ints(n, "dilations", d, 2, 1) || bk_rw_attr_ints(n, "pads", pads, 4, 0))
        return atl_fail(e, "node '%s' (MaxPool): kernel_shape, strides, dilations and pads must have 2, 2, 2 and 4 values", name);
    if (d[0] != 1 || d[1] != 1) return atl_fail(e, "node '%s' (MaxPool): the Indices output of a dilated MaxPool is not lowered", name);
    int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3], OH = yt->dims[2], OW = yt->dims[3];
    const char *ap = ir_attr_str(n, "auto_pad", "NOTSET");
    int64_t in[2] = {H, W}, out[2] = {OH, OW}, begin[2], end[2];
    for (int i = 0; i < 2; i++) {
        int64_t extent = (out[i] - 1) * s[i] + k[i], total = extent - in[i];
        begin[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : !strcmp(ap, "SAME_LOWER") ? total - total / 2 : pads[i];
        if (begin[i] < 0) begin[i] = 0;
        end[i] = extent - in[i] - begin[i];
        if (end[i] < 0) end[i] = 0;
    }
    int colmajor = (int)ir_attr_int(n, "storage_order", 0);
    char base[400];
    snprintf(base, sizeof base, "%s", g->t[ind].name);
    /* y: the pool alone, pads explicit */
    int pk = bk_rw_node(g, "MaxPool", name, &x, 1, y, e);
    int64_t ep[4] = {begin[0], begin[1], end[0], end[1]};
    if (pk < 0 || ir_set_attr_ints(g, pk, "kernel_shape", k, 2, e) || ir_set_attr_ints(g, pk, "strides", s, 2, e) ||
        ir_set_attr_ints(g, pk, "pads", ep, 4, e))
        return -1;
    int64_t p8[8] = {0, 0, begin[0], begin[1], 0, 0, end[0], end[1]};
    int xp = begin[0] || begin[1] || end[0] || end[1] ? bk_rw_pad(g, base, "idx_padded", x, p8, 4, -INFINITY, e) : x;
    if (xp < 0) return -1;
    const int64_t geo[10] = {H, W, OH, OW, k[0], k[1], s[0], s[1], begin[0], begin[1]};
    int64_t last = k[0] * k[1] - 1;
    char what[64];
    snprintf(what, sizeof what, "idx_pos%lld", (long long)last);
    int cur = tap_positions(g, base, what, geo, last / k[1], last % k[1], colmajor, e);
    for (int64_t t = last - 1; cur >= 0 && t >= 0; t--) {
        int64_t ky = t / k[1], kx = t % k[1];
        snprintf(what, sizeof what, "idx_tap%lld", (long long)t);
        int tap = tap_slice(g, base, what, xp, ky, kx, OH, OW, s[0], s[1], e);
        snprintf(what, sizeof what, "idx_eq%lld", (long long)t);
        int eqin[2] = {tap, y};
        int eq = tap < 0 ? -1 : bk_rw_op(g, "Equal", base, what, eqin, 2, e);
        snprintf(what, sizeof what, "idx_pos%lld", (long long)t);
        int pos = eq < 0 ? -1 : tap_positions(g, base, what, geo, ky, kx, colmajor, e);
        snprintf(what, sizeof what, "idx_first%lld", (long long)t);
        int win[3] = {eq, pos, cur};
        cur = pos < 0 ? -1 : bk_rw_op(g, "Where", base, what, win, 3, e);
    }
    /* plus the image's offset (n * C + c) * H * W */
    int64_t bd[4] = {N, C, 1, 1};
    int off = cur < 0 ? -1 : bk_rw_typed_const(g, base, "idx_image", IR_I64, 4, bd, NULL, e);
    for (int64_t p = 0; off >= 0 && p < N * C; p++) ir_set_i(&g->t[off], p, p * H * W);
    int ains[2] = {cur, off};
    return off < 0 || bk_rw_node(g, "Add", base, ains, 2, ind, e) < 0 ? -1 : 0;
}
