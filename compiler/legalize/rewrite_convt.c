/* rewrite_convt.c - ConvTranspose as ops the chip already lowers.
 *
 * Reads: a canonicalised, shape-inferred graph (the backend's private copy,
 *   see backend/compile.c; the caller's graph is never changed).
 * Does: replaces each live 1-D, 2-D or 3-D ConvTranspose (groups, strides, pads,
 *   dilations, output_padding, output_shape, auto_pad, bias) by
 *     Reshape  x [N,C,H,W]       -> [N,C,H,1,W,1]          (a view)
 *     Pad      zeros at the end of the unit axes -> [N,C,H,sh,W,sw]
 *     Reshape  -> [N,C,H*sh,W*sw]  (x dilated by the stride, plus s-1
 *              trailing zeros per axis)                     (a view)
 *     Pad      only when a border is negative: crops it
 *     Conv     stride 1, the ConvTranspose's dilations, its groups and
 *              bias, pads = the non-negative borders, weights flipped in
 *              the kernel axes with in/out channels swapped per group
 *   (the Reshape/Pad steps are left out when every stride is 1). The Conv
 *   weights may be run-time too: the flip and swap are then graph ops
 *   (Reshape, Transpose, a Gather per kernel axis, Reshape), and the conv
 *   lowering gathers OIHW weights per tile. The Conv
 *   writes the ConvTranspose's output tensor and takes over its fused
 *   activation (a 3-D one is then split into 2-D convs by legalize/rewrite_3d.c,
 *   which runs after this rewrite). The borders come from the inferred output size O: begin
 *   B = dk - p_begin and end = O + dk - (I-1)s - 1 - B, with dk = d(k-1)
 *   and p_begin as compiler/ops/nn.c's ConvTranspose computes it, so the
 *   result is the interpreter's for every way of giving the output size.
 * Why: a transposed convolution is a convolution over the input spread
 *   out by the stride. The spreading is a pure DMA pass (lower/pad.c:
 *   one strided copy of x plus fills of the zeros) and the convolution then
 *   gets the conv lowering's tiling, splits and cost model unchanged;
 *   placement and liveness see ordinary tensors. No new instruction or
 *   lowering is needed. The conv does s^2 times the useful MACs on the
 *   zeros; a sub-pixel (s^2 small convs) lowering would avoid that. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/legalize/legalize.h"

typedef struct ConvtGeo {
    int ns;
    int64_t in[3], out[3], k[3], s[3], d[3], begin[3], end[3]; /* borders of the conv over the spread input */
} ConvtGeo;

/* The geometry; messages name the node. */
static int convt_geometry(const IrGraph *g, int node, ConvtGeo *q, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    const IrTensor *x = &g->t[n->in[0]], *w = &g->t[n->in[1]], *y = &g->t[n->out[0]];
    const char *nm = n->name ? n->name : "?";
    q->ns = w->ndim - 2;
    int ns = q->ns;
    if (ns < 1 || ns > 3) return atl_fail(e, "node '%s' (ConvTranspose): %d spatial dimensions; the chip lowers 1 to 3", nm, ns);
    if (!ir_shape_known(x) || !ir_shape_known(y)) return atl_fail(e, "node '%s' (ConvTranspose): input and output shapes must be known", nm);
    int64_t pads[6], op[3], os[3] = {0, 0, 0};
    if (bk_rw_attr_ints(n, "strides", q->s, ns, 1) || bk_rw_attr_ints(n, "dilations", q->d, ns, 1) ||
        bk_rw_attr_ints(n, "pads", pads, 2 * ns, 0) || bk_rw_attr_ints(n, "output_padding", op, ns, 0))
        return atl_fail(e, "node '%s' (ConvTranspose): strides, dilations, pads or output_padding has the wrong length", nm);
    const IrAttr *ka = ir_attr(n, "kernel_shape"), *osa = ir_attr(n, "output_shape");
    const char *ap = ir_attr_str(n, "auto_pad", "NOTSET");
    int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    for (int i = 0; i < ns; i++) {
        q->in[i] = x->dims[2 + i];
        q->out[i] = y->dims[2 + i];
        q->k[i] = w->dims[2 + i];
        if (ka && (ka->type != IR_ATTR_INTS || ka->n != ns || ka->ints[i] != q->k[i]))
            return atl_fail(e, "node '%s' (ConvTranspose): kernel_shape does not match the weight", nm);
        if (osa && osa->type == IR_ATTR_INTS && osa->n >= ns) os[i] = osa->ints[osa->n - ns + i];
        int64_t dk = (q->k[i] - 1) * q->d[i], pb = pads[i];
        if (osa || same) { /* the split of the total padding, as the interpreter makes it */
            int64_t target = osa ? os[i] : q->in[i] * q->s[i];
            int64_t total = q->s[i] * (q->in[i] - 1) + op[i] + dk + 1 - target;
            if (total < 0) total = 0;
            pb = !strcmp(ap, "SAME_LOWER") ? total - total / 2 : total / 2;
        }
        q->begin[i] = dk - pb;
        q->end[i] = q->out[i] + dk - (q->in[i] - 1) * q->s[i] - 1 - q->begin[i];
    }
    return 0;
}

/* Conv weights [G*Mg][Cg][k] from ConvTranspose weights [G*Cg][Mg][k]:
 * channels swapped per group, the kernel reversed (reversing a row-major
 * kernel block reverses every kernel axis). */
static int flipped_weights(IrGraph *g, const char *base, int wt, int64_t G, AtlErr *e)
{
    int64_t C = g->t[wt].dims[0], Mg = g->t[wt].dims[1], Cg = C / G, ksz = 1, dims[4];
    int nd = g->t[wt].ndim;
    for (int i = 2; i < nd; i++) ksz *= g->t[wt].dims[i];
    int t = bk_rw_tensor(g, base, "weights", e);
    if (t < 0) return -1;
    const float *W = g->t[wt].data; /* g->t may move in bk_rw_tensor: read it after */
    IrTensor *o = &g->t[t];
    dims[0] = G * Mg;
    dims[1] = Cg;
    o->dtype = IR_F32;
    o->ndim = nd;
    for (int i = 0; i < nd; i++) o->dims[i] = i < 2 ? dims[i] : g->t[wt].dims[i];
    if (ir_alloc_data(o, e)) return -1;
    float *Wc = o->data;
    for (int64_t gr = 0; gr < G; gr++)
        for (int64_t ci = 0; ci < Cg; ci++)
            for (int64_t mo = 0; mo < Mg; mo++) {
                const float *src = W + ((gr * Cg + ci) * Mg + mo) * ksz;
                float *dst = Wc + ((gr * Mg + mo) * Cg + ci) * ksz;
                for (int64_t k = 0; k < ksz; k++) dst[k] = src[ksz - 1 - k];
            }
    return t;
}

/* The same for run-time weights, as graph ops the chip lowers by DMA:
 * Reshape [G*Cg][Mg][k] -> [G][Cg][Mg][k], Transpose to [G][Mg][Cg][k],
 * per kernel axis a Gather of the indices k-1 .. 0 (any opset, unlike
 * Slice steps), Reshape to [G*Mg][Cg][k]. */
static int runtime_flipped_weights(IrGraph *g, const char *base, int wt, int64_t G, AtlErr *e)
{
    const IrTensor *w = &g->t[wt];
    int nd = w->ndim, ns = nd - 2;
    int64_t d5[6] = {G, w->dims[0] / G, w->dims[1]}, perm[6] = {0, 2, 1, 3, 4, 5}, dout[5] = {G * w->dims[1], w->dims[0] / G};
    for (int i = 0; i < ns; i++) d5[3 + i] = dout[2 + i] = w->dims[2 + i];
    int t = bk_rw_reshape(g, base, "convt_w_groups", wt, d5, nd + 1, e);
    if (t < 0) return -1;
    int cur = bk_rw_tensor(g, base, "convt_w_swapped", e), k;
    if (cur < 0 || (k = bk_rw_node(g, "Transpose", base, &t, 1, cur, e)) < 0 || ir_set_attr_ints(g, k, "perm", perm, nd + 1, e))
        return -1;
    for (int i = 0; i < ns; i++) {
        int64_t kn = d5[3 + i], *rev = malloc((size_t)kn * sizeof *rev);
        if (!rev) return atl_fail(e, "out of memory");
        for (int64_t j = 0; j < kn; j++) rev[j] = kn - 1 - j;
        char what[32], iname[32];
        snprintf(what, sizeof what, "convt_w_flip%d", i);
        snprintf(iname, sizeof iname, "convt_w_flip%d_idx", i);
        int ins[2] = {cur, bk_rw_int_const(g, base, iname, rev, (int)kn, e)};
        free(rev);
        int out = bk_rw_tensor(g, base, what, e);
        if (ins[1] < 0 || out < 0 || (k = bk_rw_node(g, "Gather", base, ins, 2, out, e)) < 0 ||
            ir_set_attr_int(g, k, "axis", 3 + i, e))
            return -1;
        cur = out;
    }
    return bk_rw_reshape(g, base, "weights", cur, dout, nd, e);
}

static int rewrite_one(IrGraph *g, int node, AtlErr *e)
{
    ConvtGeo q;
    if (convt_geometry(g, node, &q, e)) return -1;
    const IrNode *n = &g->nodes[node];
    const char *nm = n->name ? n->name : "?";
    int x = n->in[0], wt = n->in[1], b = n->nin > 2 ? n->in[2] : -1, y = n->out[0];
    int64_t G = ir_attr_int(n, "group", 1);
    const IrTensor *w = &g->t[wt];
    if (w->dtype != IR_F32 || !ir_shape_known(w)) return atl_fail(e, "node '%s' (ConvTranspose): the weight must be f32 of a known shape", nm);
    if (G < 1 || w->dims[0] % G || g->t[x].dims[1] != w->dims[0])
        return atl_fail(e, "node '%s' (ConvTranspose): group %lld does not divide the %lld input channels", nm, (long long)G,
                        (long long)w->dims[0]);
    char base[400];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    int cur = x, r = 2 + q.ns, spread = 0;
    int64_t N = g->t[x].dims[0], C = g->t[x].dims[1];
    for (int i = 0; i < q.ns; i++) spread |= q.s[i] > 1;
    if (spread) {
        int r6 = 2 + 2 * q.ns;
        int64_t d6[8] = {N, C}, d4[5] = {N, C}, p6[16] = {0}; /* p6: begins [0, r6), ends [r6, 2 r6) */
        for (int i = 0; i < q.ns; i++) {
            d6[2 + 2 * i] = q.in[i];
            d6[3 + 2 * i] = 1;
            p6[r6 + 3 + 2 * i] = q.s[i] - 1; /* zeros after each pixel */
            d4[2 + i] = q.in[i] * q.s[i];
            q.end[i] -= q.s[i] - 1; /* the spread tensor already ends with s-1 zeros */
        }
        if ((cur = bk_rw_reshape(g, base, "convt_rows", cur, d6, r6, e)) < 0 ||
            (cur = bk_rw_pad(g, base, "convt_spread6", cur, p6, r6, 0.0f, e)) < 0 ||
            (cur = bk_rw_reshape(g, base, "convt_spread", cur, d4, r, e)) < 0)
            return -1;
    }
    int64_t crop[10] = {0}, cpads[6];
    int need_crop = 0;
    for (int i = 0; i < q.ns; i++) {
        crop[2 + i] = q.begin[i] < 0 ? q.begin[i] : 0;
        crop[r + 2 + i] = q.end[i] < 0 ? q.end[i] : 0;
        need_crop |= q.begin[i] < 0 || q.end[i] < 0;
        cpads[i] = q.begin[i] < 0 ? 0 : q.begin[i];
        cpads[q.ns + i] = q.end[i] < 0 ? 0 : q.end[i];
    }
    if (need_crop && (cur = bk_rw_pad(g, base, "convt_crop", cur, crop, r, 0.0f, e)) < 0) return -1;
    int wc = g->t[wt].data ? flipped_weights(g, base, wt, G, e) : runtime_flipped_weights(g, base, wt, G, e);
    if (wc < 0) return -1;
    int ins[3] = {cur, wc, b};
    char cname[400];
    snprintf(cname, sizeof cname, "%s", nm);
    int64_t ones[3] = {1, 1, 1};
    int k = bk_rw_node(g, "Conv", cname, ins, b >= 0 ? 3 : 2, y, e);
    if (k < 0 || ir_set_attr_int(g, k, "group", G, e) || ir_set_attr_ints(g, k, "strides", ones, q.ns, e) ||
        ir_set_attr_ints(g, k, "dilations", q.d, q.ns, e) || ir_set_attr_ints(g, k, "pads", cpads, 2 * q.ns, e) ||
        ir_set_attr_ints(g, k, "kernel_shape", q.k, q.ns, e))
        return -1;
    IrNode *old = &g->nodes[node], *conv = &g->nodes[k];
    memcpy(conv->act, old->act, sizeof conv->act);
    conv->act_alpha = old->act_alpha;
    conv->act_beta = old->act_beta;
    old->dead = 1;
    return 0;
}

int bk_rewrite_count(const IrGraph *g)
{
    int cnt = 0;
    for (int i = 0; i < g->nn; i++) cnt += !g->nodes[i].dead && !strcmp(g->nodes[i].op, "ConvTranspose");
    cnt += bk_rewrite_rnn_count(g);
    return cnt;
}

int bk_rewrite_convtranspose(IrGraph *g, AtlErr *e)
{
    int nn = g->nn;
    for (int i = 0; i < nn; i++)
        if (!g->nodes[i].dead && !strcmp(g->nodes[i].op, "ConvTranspose") && rewrite_one(g, i, e)) return -1;
    return 0;
}
