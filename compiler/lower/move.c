/* move.c - data-movement ops as DRAM-to-DRAM DMA patterns.
 *
 * Transpose (permuted source strides), Concat (one copy per input into its
 * slice of the output), Split (one copy per output), Slice (start offset and
 * step strides, constant starts/ends/axes/steps, inputs or the attributes
 * of opset < 10), Gather with constant
 * indices (one copy per index; run-time indices: lower/gather.c), Pad
 * (lower/pad.c: one copy or fill per box of the axes' source-map runs),
 * Expand (zero source strides), Tile / DepthToSpace / SpaceToDepth
 * (lower/layout.c), a view (Reshape/Flatten/Squeeze/Unsqueeze)
 * that placement gave its own storage, inference Dropout and Identity (one
 * flat copy; Dropout's bool mask, if requested, a fill of 1.0; an Identity
 * with a fused activation goes to lower/vec.c instead, bk_lower_identity).
 * Each op becomes a list of strided copies (BkCopy, up to 8 dims); the
 * list is cut along each copy's outermost dim into at least one piece per
 * core, and every piece is emitted as 4-D dma.copy/dma.fill instructions
 * (looping over dims beyond 4). These layers are `direct`: no LMEM, no
 * pipeline, only the DMA streams, ordered by the layer barriers; the
 * pieces of one layer write disjoint output boxes. Resize/Upsample in nearest mode: each axis's index
 * map (computed with the spec's coordinate and rounding modes) must be an
 * integer upsampling, which becomes two dims (input, repeat) with a zero
 * source stride, or an arithmetic progression (identity, integer
 * downsampling, crop offsets); other maps and the linear/cubic modes go to
 * lower/resize.c (interpolation matrices on the matrix unit).
 * Guarantees: output bytes equal the op's result (DMA moves bytes
 * unchanged). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <math.h>
#include "compiler/lower/lower.h"

static void strides_of(const IrTensor *t, int64_t *st)
{
    int64_t s = 1;
    for (int d = t->ndim - 1; d >= 0; d--) { st[d] = s; s *= t->dims[d]; }
}

/* Emits one copy as 4-D DMAs (outer dims looped; dims > 65535 split). */
static int emit_copy(const BkCopy *cp, BkCode *k)
{
    int64_t es = isa_dtype_size(cp->dt);
    int64_t sh[IR_MAXDIM + 1], ds[IR_MAXDIM + 1], ss[IR_MAXDIM + 1];
    int r = 0;
    for (int d = 0; d < cp->rank; d++) {
        if (cp->shape[d] == 1) continue;
        if (cp->shape[d] > 65535) {
            int64_t f = 65535;
            while (cp->shape[d] % f) f--;
            sh[r] = cp->shape[d] / f; ds[r] = cp->dst_str[d] * f; ss[r] = cp->src_str[d] * f; r++;
            sh[r] = f; ds[r] = cp->dst_str[d]; ss[r] = cp->src_str[d]; r++;
            continue;
        }
        sh[r] = cp->shape[d]; ds[r] = cp->dst_str[d]; ss[r] = cp->src_str[d]; r++;
    }
    if (r == 0) { sh[0] = 1; ds[0] = ss[0] = 1; r = 1; }
    int outer = r > 4 ? r - 4 : 0;
    int64_t total = 1;
    for (int d = 0; d < outer; d++) total *= sh[d];
    for (int64_t it = 0; it < total; it++) {
        int64_t rem = it, doff = 0, soff = 0;
        for (int d = outer - 1; d >= 0; d--) {
            int64_t i = rem % sh[d];
            rem /= sh[d];
            doff += i * ds[d];
            soff += i * ss[d];
        }
        uint32_t s4[4] = {1, 1, 1, 1};
        int64_t d4[4] = {0, 0, 0, 0}, q4[4] = {0, 0, 0, 0};
        int inner = r - outer;
        for (int d = 0; d < inner; d++) {
            s4[4 - inner + d] = (uint32_t)sh[outer + d];
            d4[4 - inner + d] = ds[outer + d];
            q4[4 - inner + d] = ss[outer + d];
        }
        AtlInsn in = bk_dma(cp->dt, ISA_SPACE_DRAM, cp->dst + (uint64_t)(doff * es), ISA_SPACE_DRAM,
                            cp->src + (uint64_t)(soff * es), s4, d4, q4);
        if (cp->fill) {
            in.op = ISA_OP_DMA_FILL;
            in.src = 0;
            in.src_space = 0;
            memset(in.src_stride, 0, sizeof in.src_stride);
            in.ival = cp->value;
        }
        if (bk_code_st(k, &in)) return -1;
    }
    return 0;
}

/* Nearest-neighbour index of output coordinate o along one axis, as the
 * ONNX spec (and compiler/ops/resize.c) defines it. ctm: 0 half_pixel,
 * 1 pytorch_half_pixel, 2 align_corners, 3 asymmetric, 4 tf_half_pixel_for_nn;
 * nm: 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil. */
static int64_t nearest_index(int ctm, int nm, double scale, int64_t in, int64_t out, int64_t o)
{
    double lr = (double)in * scale, x;
    (void)out;
    switch (ctm) {
    case 0: x = (o + 0.5) / scale - 0.5; break;
    case 1: x = lr > 1 ? (o + 0.5) / scale - 0.5 : 0; break;
    case 2: x = lr > 1 ? (double)o * (double)(in - 1) / (lr - 1) : 0; break;
    case 4: x = (o + 0.5) / scale; break;
    default: x = (double)o / scale;
    }
    double f = floor(x), v;
    switch (nm) {
    case 0: v = (x - f == 0.5) ? f : round(x); break;
    case 1: v = (x - f == 0.5) ? f + 1 : round(x); break;
    case 2: v = f; break;
    default: v = ceil(x);
    }
    int64_t i = (int64_t)v;
    return i < 0 ? 0 : i >= in ? in - 1 : i;
}

/* Nearest Resize as copies when every axis's index map is either an
 * integer upsampling (each input index repeated s times, in order) or an
 * arithmetic progression (identity, integer downsampling, offsets).
 * Returns 1 (nothing added) for other modes and maps. */
/* A nearest Resize's coordinate mode (*ctm) and rounding (*nm) as
 * nearest_index numbers them and its constant scales (*sc, NULL: from the
 * sizes); 1 when it is not nearest or a mode is unknown. */
static int nearest_modes(const IrGraph *gr, const IrNode *nd, int *ctm, int *nm, const IrTensor **sc)
{
    int r = gr->t[nd->in[0]].ndim;
    if (strcmp(ir_attr_str(nd, "mode", "nearest"), "nearest")) return 1;
    static const char *ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"};
    static const char *nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    int old = !strcmp(nd->op, "Upsample") || gr->opset < 11;
    *ctm = old ? 3 : -1;
    *nm = old ? 2 : -1;
    const char *cs = ir_attr_str(nd, "coordinate_transformation_mode", "half_pixel");
    const char *ns = ir_attr_str(nd, "nearest_mode", "round_prefer_floor");
    for (int i = 0; i < 5 && *ctm < 0; i++) if (!strcmp(cs, ctms[i])) *ctm = i;
    for (int i = 0; i < 4 && *nm < 0; i++) if (!strcmp(ns, nms[i])) *nm = i;
    if (*ctm < 0 || *nm < 0) return 1;
    int si = old ? 1 : 2;
    *sc = nd->nin > si && nd->in[si] >= 0 && gr->t[nd->in[si]].data && ir_numel(&gr->t[nd->in[si]]) == r
          ? &gr->t[nd->in[si]] : NULL;
    return 0;
}

int bk_resize_up(const BkCtx *c, int node, int *f)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    if (strcmp(nd->op, "Resize") && strcmp(nd->op, "Upsample")) return -1;
    const IrTensor *x = &gr->t[nd->in[0]], *y = &gr->t[nd->out[0]], *sc;
    int ctm, nm;
    if (x->ndim != y->ndim || x->ndim > IR_MAXDIM || nearest_modes(gr, nd, &ctm, &nm, &sc)) return -1;
    for (int k = 0; k < x->ndim; k++) {
        int64_t in = x->dims[k], out = y->dims[k];
        if (in < 1 || out % in || out / in > 64) return -1;
        double scale = sc ? ir_get_f(sc, k) : (double)out / (double)in;
        f[k] = (int)(out / in);
        for (int64_t o = 0; o < out; o++) if (nearest_index(ctm, nm, scale, in, out, o) != o / f[k]) return -1;
    }
    return 0;
}

static int lower_resize(BkCtx *c, int node, BkLayer *ly, int *cap, uint64_t xa, uint64_t ya, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]], *y = &gr->t[nd->out[0]], *sc;
    int r = x->ndim, ctm, nm;
    if (nearest_modes(gr, nd, &ctm, &nm, &sc)) return 1;
    int64_t xs[IR_MAXDIM], ys[IR_MAXDIM];
    strides_of(x, xs);
    strides_of(y, ys);
    BkCopy cp;
    memset(&cp, 0, sizeof cp);
    cp.dt = ly->lw.dt;
    int64_t soff = 0;
    for (int k = 0; k < r; k++) {
        int64_t in = x->dims[k], out = y->dims[k];
        double scale = sc ? ir_get_f(sc, k) : (double)out / (double)in;
        int64_t i0 = nearest_index(ctm, nm, scale, in, out, 0);
        int64_t s = in > 0 && out % in == 0 ? out / in : 0;
        int up = s > 1;
        for (int64_t o = 0; o < out && up; o++) if (nearest_index(ctm, nm, scale, in, out, o) != o / s) up = 0;
        if (up) {
            if (cp.rank + 2 > IR_MAXDIM) return bk_fail(c, node, e, "too many upsampled axes");
            cp.shape[cp.rank] = in; cp.src_str[cp.rank] = xs[k]; cp.dst_str[cp.rank] = s * ys[k]; cp.rank++;
            cp.shape[cp.rank] = s; cp.src_str[cp.rank] = 0; cp.dst_str[cp.rank] = ys[k]; cp.rank++;
            continue;
        }
        int64_t d = out > 1 ? nearest_index(ctm, nm, scale, in, out, 1) - i0 : 0;
        for (int64_t o = 0; o < out; o++)
            if (nearest_index(ctm, nm, scale, in, out, o) != i0 + o * d) return 1;
        if (cp.rank + 1 > IR_MAXDIM) return bk_fail(c, node, e, "too many axes");
        cp.shape[cp.rank] = out; cp.src_str[cp.rank] = d * xs[k]; cp.dst_str[cp.rank] = ys[k]; cp.rank++;
        soff += i0 * xs[k];
    }
    cp.dst = ya;
    cp.src = xa + (uint64_t)soff * (uint64_t)ly->lw.es;
    if (bk_push_copy(ly, cap, &cp)) return bk_fail(c, node, e, "out of memory");
    return 0;
}

static int move_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)slot;
    (void)c;
    if (emit_copy(&ly->copies[t], k)) return atl_fail(e, "out of memory");
    return 0;
}

static int const_ints(const IrGraph *gr, int t, int64_t *v, int max)
{
    if (t < 0 || !gr->t[t].data) return -1;
    int64_t n = ir_numel(&gr->t[t]);
    if (n > max) return -1;
    for (int64_t i = 0; i < n; i++) v[i] = ir_get_i(&gr->t[t], i);
    return (int)n;
}

/* The ints of attribute `name` (-1: absent, not ints, or more than max). */
static int attr_ints(const IrNode *nd, const char *name, int64_t *v, int max)
{
    const IrAttr *a = ir_attr(nd, name);
    if (!a || a->type != IR_ATTR_INTS || a->n > max) return -1;
    for (int i = 0; i < a->n; i++) v[i] = a->ints[i];
    return a->n;
}

/* Slice's starts/ends/axes/steps: inputs 1-4 (opset 10+), or the starts,
 * ends, axes attributes before opset 10 (steps 1). Absent axes: 0, 1, ...;
 * absent steps: 1. Returns the count, -1 if not constant or inconsistent. */
static int slice_ranges(const IrGraph *gr, const IrNode *nd, int64_t *st, int64_t *en, int64_t *axv, int64_t *sp)
{
    int attrs = nd->nin < 3, has_axes, has_steps;
    int ns, ne, na, np;
    if (attrs) {
        ns = attr_ints(nd, "starts", st, IR_MAXDIM);
        ne = attr_ints(nd, "ends", en, IR_MAXDIM);
        has_axes = ir_attr(nd, "axes") != NULL;
        has_steps = 0;
        na = has_axes ? attr_ints(nd, "axes", axv, IR_MAXDIM) : ns;
    } else {
        ns = const_ints(gr, nd->in[1], st, IR_MAXDIM);
        ne = const_ints(gr, nd->in[2], en, IR_MAXDIM);
        has_axes = nd->nin > 3 && nd->in[3] >= 0;
        has_steps = nd->nin > 4 && nd->in[4] >= 0;
        na = has_axes ? const_ints(gr, nd->in[3], axv, IR_MAXDIM) : ns;
    }
    np = has_steps ? const_ints(gr, nd->in[4], sp, IR_MAXDIM) : ns;
    if (ns < 0 || ne != ns || na != ns || np != ns) return -1;
    if (!has_axes) for (int i = 0; i < ns; i++) axv[i] = i;
    if (!has_steps) for (int i = 0; i < ns; i++) sp[i] = 1;
    return ns;
}

int bk_lower_const_output(BkCtx *c, int tensor, BkLayer *ly, AtlErr *e)
{
    const IrTensor *y = &c->g->t[tensor];
    int64_t n = ir_numel(y);
    uint64_t src;
    ly->lw.kind = BK_K_MOVE;
    ly->lw.dt = ly->lw.xdt = bk_tensor_dt(c, tensor);
    ly->lw.es = ly->lw.xes = bk_tensor_es(c, tensor);
    ly->direct = 1;
    if (n < 0) return atl_fail(e, "graph output '%s' has an unknown shape", y->name);
    if (bk_const_image(c, tensor, &src, e)) return -1;
    BkCopy cp;
    memset(&cp, 0, sizeof cp);
    cp.rank = 1;
    cp.dt = ly->lw.dt;
    cp.shape[0] = n;
    cp.dst_str[0] = cp.src_str[0] = 1;
    cp.dst = bk_tensor_addr(c, tensor);
    cp.src = src;
    int cap = 0;
    if (n > 0 && bk_push_copy(ly, &cap, &cp)) return atl_fail(e, "out of memory");
    if (bk_set_tiles(ly, ly->ncopies, 1, e)) return -1;
    ly->gen = move_gen;
    snprintf(ly->split, sizeof ly->split, "constant");
    return 0;
}

/* Ops whose output is the input's bytes unchanged: views that placement
 * gave their own storage, Dropout at inference, Identity and a Cast
 * between dtypes with the same storage dtype on the chip (bk_lower_cast). */
static int is_flat_copy(const char *op)
{
    static const char *const ops[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Dropout", "Identity",
                                      "Cast", "CastLike", NULL};
    for (int i = 0; ops[i]; i++) if (!strcmp(op, ops[i])) return 1;
    return 0;
}

/* Dropout's mask at inference: all true, a fill of 1 in the bool's chip
 * dtype (i8). */
static int dropout_mask(BkCtx *c, int node, BkLayer *ly, int *cap, AtlErr *e)
{
    int m = c->g->nodes[node].out[1];
    const IrTensor *mt = &c->g->t[m];
    if (mt->dtype != IR_BOOL)
        return bk_fail(c, node, e, "mask output '%s' has dtype %s; only a bool mask is lowered",
                       mt->name, ir_dtype_name(mt->dtype));
    uint64_t ma;
    if (bk_tensor_in_dram(c, m, &ma, e)) return -1;
    uint8_t bits[4] = {0};
    BkCopy cp;
    memset(&cp, 0, sizeof cp);
    cp.dt = bk_tensor_dt(c, m);
    bk_store_elem(cp.dt, bits, 0, 1.0);
    cp.rank = 1;
    cp.shape[0] = ir_numel(mt);
    cp.dst_str[0] = 1;
    cp.dst = ma;
    cp.fill = 1;
    memcpy(&cp.value, bits, 4);
    if (cp.shape[0] > 0 && bk_push_copy(ly, cap, &cp)) return bk_fail(c, node, e, "out of memory");
    return 0;
}

/* An Identity is a flat copy, DMA only: no LMEM round trip, every core
 * copying its piece straight from source to destination (the staged
 * schedules' boundary and re-read copies, DRAM -> cluster SRAM; their
 * layer was a vector move through LMEM before, 1.6 MB at 107k estimated
 * cycles a cluster, now 100k). With a fused activation it needs the
 * vector unit (lower/vec.c). */
int bk_lower_identity(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    return c->act_on[node] ? bk_lower_elem(c, node, ly, e) : bk_lower_move(c, node, ly, e);
}

int bk_lower_move(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
    l->kind = BK_K_MOVE;
    l->dt = l->xdt = bk_tensor_dt(c, nd->out[0]);
    l->es = l->xes = bk_tensor_es(c, nd->out[0]);
    ly->direct = 1;
    int cap = 0;
    BkCopy cp;
    const IrTensor *x = &gr->t[nd->in[0]], *y = &gr->t[nd->out[0]];
    int64_t xs[IR_MAXDIM], ys[IR_MAXDIM];
    strides_of(x, xs);
    strides_of(y, ys);
    uint64_t xa, ya;
    if (bk_tensor_in_dram(c, nd->in[0], &xa, e)) return -1;
    if (bk_tensor_in_dram(c, nd->out[0], &ya, e)) return -1;
    memset(&cp, 0, sizeof cp);
    cp.dt = l->dt;
    int r = x->ndim;
    if (!strcmp(nd->op, "Transpose")) {
        const IrAttr *p = ir_attr(nd, "perm");
        cp.rank = y->ndim;
        for (int d = 0; d < y->ndim; d++) {
            int pd = p ? (int)p->ints[d] : r - 1 - d;
            cp.shape[d] = y->dims[d]; cp.dst_str[d] = ys[d]; cp.src_str[d] = xs[pd];
        }
        cp.dst = ya; cp.src = xa;
        if (bk_push_copy(ly, &cap, &cp)) goto oom;
    } else if (!strcmp(nd->op, "Expand")) {
        cp.rank = y->ndim;
        for (int d = 0; d < y->ndim; d++) {
            int id = d - (y->ndim - r);
            cp.shape[d] = y->dims[d]; cp.dst_str[d] = ys[d];
            cp.src_str[d] = id < 0 || x->dims[id] == 1 ? 0 : xs[id];
        }
        cp.dst = ya; cp.src = xa;
        if (bk_push_copy(ly, &cap, &cp)) goto oom;
    } else if (!strcmp(nd->op, "Concat") || !strcmp(nd->op, "Split")) {
        int concat = !strcmp(nd->op, "Concat");
        const IrTensor *big = concat ? y : x;
        int ax = (int)ir_attr_int(nd, "axis", 0);
        if (ax < 0) ax += big->ndim;
        int64_t bs[IR_MAXDIM];
        strides_of(big, bs);
        int64_t off = 0;
        int cnt = concat ? nd->nin : nd->nout;
        for (int k = 0; k < cnt; k++) {
            int t = concat ? nd->in[k] : nd->out[k];
            if (t < 0) continue;
            const IrTensor *s = &gr->t[t];
            int64_t ss[IR_MAXDIM];
            strides_of(s, ss);
            uint64_t sa;
            if (bk_tensor_in_dram(c, t, &sa, e)) return -1;
            memset(&cp, 0, sizeof cp);
            cp.dt = l->dt;
            cp.rank = s->ndim;
            for (int d = 0; d < s->ndim; d++) {
                cp.shape[d] = s->dims[d];
                cp.dst_str[d] = concat ? bs[d] : ss[d];
                cp.src_str[d] = concat ? ss[d] : bs[d];
            }
            uint64_t boff = (uint64_t)(off * bs[ax]) * (uint64_t)l->es;
            cp.dst = concat ? ya + boff : sa;
            cp.src = concat ? sa : xa + boff;
            if (ir_numel(s) > 0 && bk_push_copy(ly, &cap, &cp)) goto oom;
            off += s->dims[ax];
        }
    } else if (!strcmp(nd->op, "Slice")) {
        int64_t st[IR_MAXDIM], en[IR_MAXDIM], axv[IR_MAXDIM], sp[IR_MAXDIM];
        int ns = slice_ranges(gr, nd, st, en, axv, sp);
        if (ns < 0) return bk_fail(c, node, e, "starts/ends/axes/steps must be constants (attributes before opset 10) of one length");
        cp.rank = r;
        int64_t soff = 0;
        for (int d = 0; d < r; d++) { cp.shape[d] = y->dims[d]; cp.dst_str[d] = ys[d]; cp.src_str[d] = xs[d]; }
        for (int i = 0; i < ns; i++) {
            int a = (int)(axv[i] < 0 ? axv[i] + r : axv[i]);
            int64_t dim = x->dims[a], s0 = st[i];
            if (s0 < 0) s0 += dim;
            if (sp[i] > 0) { if (s0 < 0) s0 = 0; if (s0 > dim) s0 = dim; }
            else { if (s0 < 0) s0 = -1; if (s0 > dim - 1) s0 = dim - 1; }
            soff += s0 * xs[a];
            cp.src_str[a] = xs[a] * sp[i];
        }
        cp.dst = ya; cp.src = xa + (uint64_t)soff * (uint64_t)l->es;
        if (ir_numel(y) > 0 && bk_push_copy(ly, &cap, &cp)) goto oom;
    } else if (!strcmp(nd->op, "Gather")) {
        int ax = (int)ir_attr_int(nd, "axis", 0);
        if (ax < 0) ax += r;
        const IrTensor *it = &gr->t[nd->in[1]];
        if (!it->data) return bk_lower_gather(c, node, ly, e);   /* run-time indices: dma.gather */
        int64_t ni = ir_numel(it);
        /* y = x[..., idx, ...]: per index a copy of the [outer][inner] slab */
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < ax; d++) outer *= x->dims[d];
        for (int d = ax + 1; d < r; d++) inner *= x->dims[d];
        for (int64_t i = 0; i < ni; i++) {
            int64_t idx = ir_get_i(it, i);
            if (idx < 0) idx += x->dims[ax];
            if (idx < 0 || idx >= x->dims[ax]) return bk_fail(c, node, e, "index %lld out of range", (long long)idx);
            memset(&cp, 0, sizeof cp);
            cp.dt = l->dt;
            cp.rank = 2;
            cp.shape[0] = outer; cp.shape[1] = inner;
            cp.dst_str[0] = ni * inner; cp.dst_str[1] = 1;
            cp.src_str[0] = x->dims[ax] * inner; cp.src_str[1] = 1;
            cp.dst = ya + (uint64_t)(i * inner) * (uint64_t)l->es;
            cp.src = xa + (uint64_t)(idx * inner) * (uint64_t)l->es;
            if (bk_push_copy(ly, &cap, &cp)) goto oom;
        }
    } else if (is_flat_copy(nd->op)) {
        /* same bytes in the same order: one contiguous copy */
        cp.rank = 1;
        cp.shape[0] = ir_numel(y);
        cp.dst_str[0] = cp.src_str[0] = 1;
        cp.dst = ya; cp.src = xa;
        if (cp.shape[0] > 0 && bk_push_copy(ly, &cap, &cp)) goto oom;
        if (!strcmp(nd->op, "Dropout") && nd->nout > 1 && nd->out[1] >= 0 && dropout_mask(c, node, ly, &cap, e)) return -1;
    } else if (!strcmp(nd->op, "Pad")) {
        if (bk_pad_copies(c, node, ly, &cap, xa, ya, e)) return -1;
    } else if (!strcmp(nd->op, "Tile") || !strcmp(nd->op, "DepthToSpace") || !strcmp(nd->op, "SpaceToDepth")) {
        if (bk_layout_copies(c, node, ly, &cap, xa, ya, e)) return -1;
    } else if (!strcmp(nd->op, "Resize") || !strcmp(nd->op, "Upsample")) {
        int rc = lower_resize(c, node, ly, &cap, xa, ya, e);
        if (rc < 0) return -1;
        if (rc > 0 && bk_is_int_dt(l->dt))
            return bk_fail(c, node, e, "only a nearest Resize that is a copy pattern is lowered on integer tensors");
        if (rc > 0) {   /* not a DMA pattern: interpolation matrices */
            free(ly->copies);
            ly->copies = NULL;
            ly->ncopies = 0;
            ly->direct = 0;
            return bk_lower_resize(c, node, ly, e);
        }
    } else return bk_fail(c, node, e, "no DMA pattern for this op");
    /* cut copies along their outermost dim so every core gets work */
    {
        int n0 = ly->ncopies;
        for (int i = 0; i < n0; i++) {
            BkCopy base = ly->copies[i];
            int d = 0;
            while (d < base.rank - 1 && base.shape[d] == 1) d++;
            int64_t pieces = c->ncores / (n0 ? n0 : 1);
            if (pieces > base.shape[d]) pieces = base.shape[d];
            if (pieces <= 1 || base.fill) continue;
            int64_t per = (base.shape[d] + pieces - 1) / pieces;
            ly->copies[i].shape[d] = per;
            for (int64_t s0 = per; s0 < base.shape[d]; s0 += per) {
                BkCopy pc = base;
                pc.shape[d] = base.shape[d] - s0 < per ? base.shape[d] - s0 : per;
                pc.dst += (uint64_t)(s0 * base.dst_str[d]) * (uint64_t)l->es;
                pc.src += (uint64_t)(s0 * base.src_str[d]) * (uint64_t)l->es;
                if (bk_push_copy(ly, &cap, &pc)) goto oom;
            }
        }
    }
    if (bk_set_tiles(ly, ly->ncopies, 1, e)) return -1;
    ly->gen = move_gen;
    snprintf(ly->split, sizeof ly->split, "copies %d", ly->ncopies);
    return 0;
oom:
    return bk_fail(c, node, e, "out of memory");
}
