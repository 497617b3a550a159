/* rewrite_3d.c - 3-D Conv / MaxPool / AveragePool (NCDHW) and dilated
 * MaxPool as 2-D ops, on the backend's private copy of the graph (rule
 * table in legalize/rewrite_ops.c).
 *
 * Depth geometry: output depth od reads input depths id = od*sd - pd +
 *   kd*dd (kd < KD); pd is the begin padding along depth (pads[0], or the
 *   interpreter's SAME_UPPER / SAME_LOWER split). Depths outside [0, D)
 *   are padding and are left out of the terms, so no Pad node is needed.
 * Conv: each input depth slice x[:, :, id] (Gather of one index, a DMA
 *   copy) and each weight slice w[:, :, kd] (a constant, or a Gather of a
 *   run-time weight) feed a 2-D Conv with the H/W strides, dilations, pads
 *   (or auto_pad), group; the bias goes to the first term only. Output
 *   depth od = Sum of its terms (chains of <= BK_MAXIN inputs), seen as
 *   [N, M, 1, OH, OW]; a Concat along depth writes the output.
 * MaxPool: one 2-D MaxPool per input depth slice (shared by every od that
 *   reads it), Max over the od's valid depths. AveragePool: the 2-D
 *   averages of the valid depths summed, times 1/count with count = the
 *   valid depths (count_include_pad 0) or the depths inside the padded
 *   range [-pd, D + pd_end) (count_include_pad 1): the interpreter's
 *   window count is the product of the per-axis counts, so this is its
 *   average exactly up to rounding. Not lowered: count_include_pad with
 *   ceil_mode windows that pass the end padding along H/W (the 2-D pool
 *   instruction then divides by the whole kernel, the interpreter not).
 * Dilated MaxPool (1-D or 2-D, dilations > 1, no Indices output): the
 *   input padded with -inf (Pad) so every window is in range, per axis a
 *   sliding maximum by doubling (Slices shifted by p*d, Max), then a
 *   strided Slice keeps the window starts (see rewrite_dilated).
 * Why: the chip's conv and pool lowerings are 2-D; these compositions
 * reuse them (and their tilings) with no new instructions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/legalize/legalize.h"

static const char *nm(const IrNode *n) { return n->name ? n->name : "?"; }

static int is_pool(const IrNode *n) { return !strcmp(n->op, "MaxPool") || !strcmp(n->op, "AveragePool"); }

static int has_indices(const IrNode *n) { return n->nout > 1 && n->out[1] >= 0; }

static int dilated(const IrNode *n, int ns)
{
    int64_t d[3];
    if (bk_rw_attr_ints(n, "dilations", d, ns, 1)) return 0;
    for (int i = 0; i < ns; i++) if (d[i] > 1) return 1;
    return 0;
}

int bk_rewrite_3d_applies(const IrGraph *g, int node)
{
    const IrNode *n = &g->nodes[node];
    if (!(!strcmp(n->op, "Conv") || is_pool(n)) || n->in[0] < 0) return 0;
    int r = g->t[n->in[0]].ndim;
    if (r == 5) return !has_indices(n);
    return !strcmp(n->op, "MaxPool") && (r == 3 || r == 4) && !has_indices(n) && dilated(n, r - 2);
}

/* Per-axis geometry from the attributes and the inferred output size. */
typedef struct Geo3 {
    int ns;
    int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3], pads[6];
    const char *auto_pad;
} Geo3;

static int geometry(const IrGraph *g, int node, const int64_t *k, Geo3 *q, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    const IrTensor *x = &g->t[n->in[0]], *y = &g->t[n->out[0]];
    int ns = x->ndim - 2;
    q->ns = ns;
    if (!ir_shape_known(y)) return atl_fail(e, "node '%s' (%s): the output shape must be known", nm(n), n->op);
    if (bk_rw_attr_ints(n, "strides", q->s, ns, 1) || bk_rw_attr_ints(n, "dilations", q->d, ns, 1) ||
        bk_rw_attr_ints(n, "pads", q->pads, 2 * ns, 0))
        return atl_fail(e, "node '%s' (%s): strides, dilations or pads has the wrong length", nm(n), n->op);
    q->auto_pad = ir_attr_str(n, "auto_pad", "NOTSET");
    int same = !strcmp(q->auto_pad, "SAME_UPPER") || !strcmp(q->auto_pad, "SAME_LOWER");
    for (int i = 0; i < ns; i++) {
        q->in[i] = x->dims[2 + i];
        q->out[i] = y->dims[2 + i];
        q->k[i] = k[i];
        if (q->s[i] < 1 || q->d[i] < 1 || k[i] < 1) return atl_fail(e, "node '%s' (%s): non-positive kernel, stride or dilation", nm(n), n->op);
        q->pb[i] = q->pads[i];
        q->pe[i] = q->pads[ns + i];
        if (same) {
            int64_t total = (q->out[i] - 1) * q->s[i] + (k[i] - 1) * q->d[i] + 1 - q->in[i];
            if (total < 0) total = 0;
            q->pb[i] = !strcmp(q->auto_pad, "SAME_LOWER") ? total - total / 2 : total / 2;
            q->pe[i] = total - q->pb[i];
        } else if (!strcmp(q->auto_pad, "VALID")) {
            q->pb[i] = q->pe[i] = 0;
        }
    }
    return 0;
}

/* The 2-D attributes of a slice op: the H/W part of the 3-D ones. */
static int set_2d_attrs(IrGraph *g, int k, const IrNode *src, const Geo3 *q, int pool, AtlErr *e)
{
    int64_t pads[4] = {q->pads[1], q->pads[2], q->pads[4], q->pads[5]};
    if (ir_set_attr_ints(g, k, "kernel_shape", q->k + 1, 2, e) || ir_set_attr_ints(g, k, "strides", q->s + 1, 2, e)) return -1;
    if ((!pool || !strcmp(src->op, "MaxPool")) && ir_set_attr_ints(g, k, "dilations", q->d + 1, 2, e)) return -1;
    if (strcmp(q->auto_pad, "NOTSET") ? ir_set_attr_str(g, k, "auto_pad", q->auto_pad, e) : ir_set_attr_ints(g, k, "pads", pads, 4, e))
        return -1;
    if (pool) {
        if (ir_set_attr_int(g, k, "ceil_mode", ir_attr_int(src, "ceil_mode", 0), e)) return -1;
        if (!strcmp(src->op, "AveragePool") && ir_set_attr_int(g, k, "count_include_pad", ir_attr_int(src, "count_include_pad", 0), e))
            return -1;
    } else if (ir_set_attr_int(g, k, "group", ir_attr_int(src, "group", 1), e)) {
        return -1;
    }
    return 0;
}

/* Input depth slice id (made on first use; slices[] caches them). */
static int depth_slice(IrGraph *g, const char *base, int x, int64_t id, int *slices, AtlErr *e)
{
    if (slices[id] >= 0) return slices[id];
    char what[48];
    snprintf(what, sizeof what, "d3_x%lld", (long long)id);
    return slices[id] = bk_rw_index(g, base, what, x, 2, id, e);
}

/* Weight slice w[:, :, kd] as a constant (constant w) or a Gather. */
static int weight_slice(IrGraph *g, const char *base, int w, int64_t kd, AtlErr *e)
{
    char what[48];
    snprintf(what, sizeof what, "d3_w%lld", (long long)kd);
    if (!g->t[w].data) return bk_rw_index(g, base, what, w, 2, kd, e);
    const IrTensor *wt = &g->t[w];
    int64_t M = wt->dims[0], Cg = wt->dims[1], KD = wt->dims[2], hw = wt->dims[3] * wt->dims[4];
    int64_t dims[4] = {M, Cg, wt->dims[3], wt->dims[4]};
    float *v = malloc((size_t)(M * Cg * hw) * sizeof *v);
    if (!v) return atl_fail(e, "out of memory");
    for (int64_t o = 0; o < M * Cg; o++)
        for (int64_t i = 0; i < hw; i++) v[o * hw + i] = (float)ir_get_f(&g->t[w], (o * KD + kd) * hw + i);
    int t = bk_rw_float_const(g, base, what, 4, dims, v, e);
    free(v);
    return t;
}

/* Output depth slice od as [N, M, 1, OH, OW] from its 2-D result. */
static int as_depth(IrGraph *g, const char *base, int t, const IrTensor *y, int64_t od, AtlErr *e)
{
    char what[48];
    int64_t dims[5] = {y->dims[0], y->dims[1], 1, y->dims[3], y->dims[4]};
    snprintf(what, sizeof what, "d3_y%lld", (long long)od);
    return bk_rw_reshape(g, base, what, t, dims, 5, e);
}

static int rewrite_3d(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n0 = &g->nodes[node];
    IrNode src = *n0;   /* attributes stay valid: the node array may move, its attrs not */
    int conv = !strcmp(src.op, "Conv");
    int x = src.in[0], w = conv ? src.in[1] : -1, b = conv && src.nin > 2 ? src.in[2] : -1, y = src.out[0];
    int64_t k[3];
    if (conv) {
        if (!ir_shape_known(&g->t[w]) || g->t[w].ndim != 5) return atl_fail(e, "node '%s' (Conv): the weight must be 5-D of a known shape", nm(n0));
        for (int i = 0; i < 3; i++) k[i] = g->t[w].dims[2 + i];
    } else if (bk_rw_attr_ints(n0, "kernel_shape", k, 3, 0)) {
        return atl_fail(e, "node '%s' (%s): kernel_shape must have 3 values", nm(n0), src.op);
    }
    Geo3 q;
    if (geometry(g, node, k, &q, e)) return -1;
    if (!strcmp(src.op, "AveragePool") && ir_attr_int(&src, "count_include_pad", 0))
        for (int i = 1; i < 3; i++)
            if ((q.out[i] - 1) * q.s[i] + k[i] > q.in[i] + q.pb[i] + q.pe[i])
                return atl_fail(e, "node '%s' (AveragePool): count_include_pad with ceil_mode windows past the end padding "
                                "along H/W is not lowered (the 2-D pool divides by the whole kernel)", nm(n0));
    char base[400];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    int64_t D = q.in[0], OD = q.out[0];
    int *slices = malloc((size_t)(D + 1) * sizeof *slices), *wk = malloc((size_t)(k[0] + 1) * sizeof *wk);
    int *outs = malloc((size_t)(OD + 1) * sizeof *outs);
    int *terms = malloc((size_t)(k[0] + 1) * sizeof *terms);
    int *pool2d = NULL;   /* pools: per input depth, its 2-D pool (made on first use) */
    int rc = -1;
    if (!slices || !wk || !outs || !terms) { atl_fail(e, "out of memory"); goto done; }
    for (int64_t i = 0; i < D; i++) slices[i] = -1;
    for (int64_t i = 0; i < k[0]; i++) wk[i] = -1;
    if (!conv) {
        pool2d = malloc((size_t)(D + 1) * sizeof *pool2d);
        if (!pool2d) { atl_fail(e, "out of memory"); goto done; }
        for (int64_t i = 0; i < D; i++) pool2d[i] = -1;
    }
    for (int64_t od = 0; od < OD; od++) {
        int nt = 0;
        int64_t padded = 0;
        for (int64_t kd = 0; kd < k[0]; kd++) {
            int64_t id = od * q.s[0] - q.pb[0] + kd * q.d[0];
            if (id >= -q.pb[0] && id < D + q.pe[0]) padded++;
            if (id < 0 || id >= D) continue;
            int xs = depth_slice(g, base, x, id, slices, e);
            if (xs < 0) goto done;
            char what[64];
            if (conv) {
                if (wk[kd] < 0 && (wk[kd] = weight_slice(g, base, w, kd, e)) < 0) goto done;
                int ins[3] = {xs, wk[kd], b};
                snprintf(what, sizeof what, "d3_c%lld_%lld", (long long)od, (long long)kd);
                int t = bk_rw_op(g, "Conv", base, what, ins, nt == 0 && b >= 0 ? 3 : 2, e);
                if (t < 0 || set_2d_attrs(g, g->nn - 1, &src, &q, 0, e)) goto done;
                terms[nt++] = t;
            } else {
                if (pool2d[id] < 0) {
                    snprintf(what, sizeof what, "d3_p%lld", (long long)id);
                    if ((pool2d[id] = bk_rw_op(g, src.op, base, what, &xs, 1, e)) < 0 ||
                        set_2d_attrs(g, g->nn - 1, &src, &q, 1, e))
                        goto done;
                }
                terms[nt++] = pool2d[id];
            }
        }
        if (nt == 0) { atl_fail(e, "node '%s' (%s): output depth %lld reads only padding", nm(&g->nodes[node]), src.op, (long long)od); goto done; }
        char what[64];
        snprintf(what, sizeof what, "d3_s%lld_", (long long)od);
        int avg = !strcmp(src.op, "AveragePool");
        int t = bk_rw_fold(g, !strcmp(src.op, "MaxPool") ? "Max" : "Sum", base, what, terms, nt, -1, e);
        if (t < 0) goto done;
        if (avg) {
            int64_t cnt = ir_attr_int(&src, "count_include_pad", 0) ? padded : nt;
            float inv = 1.0f / (float)cnt;
            snprintf(what, sizeof what, "d3_inv%lld", (long long)od);
            int ct = bk_rw_float_const(g, base, what, 0, NULL, &inv, e);
            int mi[2] = {t, ct};
            snprintf(what, sizeof what, "d3_a%lld", (long long)od);
            if (ct < 0 || (t = bk_rw_op(g, "Mul", base, what, mi, 2, e)) < 0) goto done;
        }
        if ((outs[od] = as_depth(g, base, t, &g->t[y], od, e)) < 0) goto done;
    }
    int k2 = bk_rw_node(g, "Concat", base, outs, (int)OD, y, e);
    rc = k2 < 0 || ir_set_attr_int(g, k2, "axis", 2, e) ? -1 : 0;
done:
    free(slices); free(wk); free(outs); free(terms); free(pool2d);
    return rc;
}

/* x[start:end:step] along axis (opset >= 10 Slice) as a new tensor. */
static int slice_axis(IrGraph *g, const char *base, const char *what, int x, int64_t axis, int64_t start, int64_t end,
                      int64_t step, int out, AtlErr *e)
{
    char wn[96];
    const int64_t vals[4] = {start, end, axis, step};
    static const char *const names[4] = {"starts", "ends", "axes", "steps"};
    int ins[5] = {x};
    for (int p = 0; p < 4; p++) {
        snprintf(wn, sizeof wn, "%s_%s", what, names[p]);
        if ((ins[1 + p] = bk_rw_int_const(g, base, wn, &vals[p], 1, e)) < 0) return -1;
    }
    int y = out >= 0 ? out : bk_rw_tensor(g, base, what, e);
    return y < 0 || bk_rw_node(g, "Slice", base, ins, 5, y, e) < 0 ? -1 : y;
}

/* m[i] = max(m[i], m[i + shift]) along axis (length *len, shrinks by shift). */
static int shifted_max(IrGraph *g, const char *base, int m, int axis, int64_t shift, int64_t *len, int step, AtlErr *e)
{
    char w[3][64];
    snprintf(w[0], sizeof w[0], "dil%d_%d_lo", axis, step);
    snprintf(w[1], sizeof w[1], "dil%d_%d_hi", axis, step);
    snprintf(w[2], sizeof w[2], "dil%d_%d_max", axis, step);
    int lo = slice_axis(g, base, w[0], m, axis, 0, *len - shift, 1, -1, e);
    int hi = lo < 0 ? -1 : slice_axis(g, base, w[1], m, axis, shift, *len, 1, -1, e);
    int ins[2] = {lo, hi};
    *len -= shift;
    return hi < 0 ? -1 : bk_rw_op(g, "Max", base, w[2], ins, 2, e);
}

/* Dilated 1-D / 2-D MaxPool: the input padded with -inf so every window
 * is in range, then only every gcd(stride, dilation)-th position kept (no
 * tap reads the others); per spatial axis the sliding maximum of k taps spaced d
 * apart by doubling (m_2p[i] = max(m_p[i], m_p[i + p d]), then one more
 * step for the remainder: O(log k) Max nodes, few live tensors); last, a
 * Slice with the strides picks the windows' starts. */
static int rewrite_dilated(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    int x = n->in[0], y = n->out[0], r = g->t[x].ndim, ns = r - 2;
    int64_t k[3];
    if (bk_rw_attr_ints(n, "kernel_shape", k, ns, 0)) return atl_fail(e, "node '%s' (MaxPool): kernel_shape must have %d values", nm(n), ns);
    if (g->opset < 10) return atl_fail(e, "node '%s' (MaxPool): dilations need opset 10", nm(n));
    Geo3 q;
    if (geometry(g, node, k, &q, e)) return -1;
    char base[400];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    int64_t pads[8] = {0}, len[3];
    int need = 0;
    for (int i = 0; i < ns; i++) {
        int64_t extent = (q.out[i] - 1) * q.s[i] + (k[i] - 1) * q.d[i] + 1;
        int64_t end = extent - q.in[i] - q.pb[i];
        pads[2 + i] = q.pb[i];
        pads[r + 2 + i] = end > 0 ? end : 0;
        len[i] = q.in[i] + q.pb[i] + pads[r + 2 + i];
        need |= q.pb[i] > 0 || end > 0;
    }
    int m = need ? bk_rw_pad(g, base, "dil_padded", x, pads, r, -INFINITY, e) : x;
    /* every tap sits at a multiple of gcd(stride, dilation): keep only those */
    for (int i = 0; i < ns && m >= 0; i++) {
        int64_t a = q.s[i], b = q.d[i];
        while (b) { int64_t t = a % b; a = b; b = t; }
        if (a == 1) continue;
        char what[32];
        snprintf(what, sizeof what, "dil_grid%d", i);
        m = slice_axis(g, base, what, m, 2 + i, 0, len[i], a, -1, e);
        len[i] = (len[i] + a - 1) / a;
        q.s[i] /= a;
        q.d[i] /= a;
    }
    for (int i = 0; i < ns && m >= 0; i++) {
        int64_t p = 1;
        int step = 0;
        for (; m >= 0 && 2 * p <= k[i]; p *= 2) m = shifted_max(g, base, m, 2 + i, p * q.d[i], &len[i], step++, e);
        if (m >= 0 && p < k[i]) m = shifted_max(g, base, m, 2 + i, (k[i] - p) * q.d[i], &len[i], step, e);
    }
    for (int i = 0; i < ns && m >= 0; i++) {
        char what[32];
        snprintf(what, sizeof what, "dil_pick%d", i);
        m = slice_axis(g, base, what, m, 2 + i, 0, (q.out[i] - 1) * q.s[i] + 1, q.s[i], i == ns - 1 ? y : -1, e);
    }
    return m < 0 ? -1 : 0;
}

int bk_rewrite_3d(IrGraph *g, int node, AtlErr *e)
{
    if (g->t[g->nodes[node].in[0]].ndim == 5) return rewrite_3d(g, node, e);
    return rewrite_dilated(g, node, e);
}
