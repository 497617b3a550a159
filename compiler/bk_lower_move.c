/* bk_lower_move.c - data-movement ops as DRAM-to-DRAM DMA patterns.
 *
 * Transpose (permuted source strides), Concat (one copy per input into its
 * slice of the output), Split (one copy per output), Slice (start offset and
 * step strides, constant starts/ends/axes/steps), Gather with constant
 * indices (one copy per index), Pad in constant mode (fill the output, then
 * copy the input into its interior), Expand (zero source strides).
 * Each op becomes a list of strided copies (BkCopy, up to 8 dims); the
 * list is cut along each copy's outermost dim into at least one piece per
 * core, and every piece is emitted as 4-D dma.copy/dma.fill instructions
 * (looping over dims beyond 4). These layers are `direct`: no LMEM, no
 * pipeline, only the DMA streams, ordered by the layer barriers; a fill
 * precedes the copies on the same core because both pieces of a Pad go to
 * one core in order.
 * Guarantees: output bytes equal the op's result (DMA moves bytes
 * unchanged). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/bk_int.h"

static void strides_of(const IrTensor *t, int64_t *st)
{
    int64_t s = 1;
    for (int d = t->ndim - 1; d >= 0; d--) { st[d] = s; s *= t->dims[d]; }
}

/* Emits one copy as 4-D DMAs (outer dims looped; dims > 65535 split). */
static int emit_copy(const BkCtx *c, const BkCopy *cp, BkCode *k)
{
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
        AtlInsn in = bk_dma(c->dt, ISA_SPACE_DRAM, cp->dst + (uint64_t)doff * c->es, ISA_SPACE_DRAM,
                            cp->src + (uint64_t)soff * c->es, s4, d4, q4);
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

static int move_gen(BkCtx *c, const BkGroup *g, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)slot;
    if (emit_copy(c, &g->copies[t], k)) return atl_fail(e, "out of memory");
    return 0;
}

static int push_copy(BkGroup *g, int *cap, const BkCopy *cp)
{
    if (g->ncopies == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        BkCopy *p = realloc(g->copies, (size_t)nc * sizeof *p);
        if (!p) return -1;
        g->copies = p;
        *cap = nc;
    }
    g->copies[g->ncopies++] = *cp;
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

int bk_lower_move(BkCtx *c, int node, BkGroup *g, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &g->lw;
    l->kind = BK_K_MOVE;
    g->direct = 1;
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
    int r = x->ndim;
    if (!strcmp(nd->op, "Transpose")) {
        const IrAttr *p = ir_attr(nd, "perm");
        cp.rank = y->ndim;
        for (int d = 0; d < y->ndim; d++) {
            int pd = p ? (int)p->ints[d] : r - 1 - d;
            cp.shape[d] = y->dims[d]; cp.dst_str[d] = ys[d]; cp.src_str[d] = xs[pd];
        }
        cp.dst = ya; cp.src = xa;
        if (push_copy(g, &cap, &cp)) goto oom;
    } else if (!strcmp(nd->op, "Expand")) {
        cp.rank = y->ndim;
        for (int d = 0; d < y->ndim; d++) {
            int id = d - (y->ndim - r);
            cp.shape[d] = y->dims[d]; cp.dst_str[d] = ys[d];
            cp.src_str[d] = id < 0 || x->dims[id] == 1 ? 0 : xs[id];
        }
        cp.dst = ya; cp.src = xa;
        if (push_copy(g, &cap, &cp)) goto oom;
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
            cp.rank = s->ndim;
            for (int d = 0; d < s->ndim; d++) {
                cp.shape[d] = s->dims[d];
                cp.dst_str[d] = concat ? bs[d] : ss[d];
                cp.src_str[d] = concat ? ss[d] : bs[d];
            }
            uint64_t boff = (uint64_t)(off * bs[ax]) * c->es;
            cp.dst = concat ? ya + boff : sa;
            cp.src = concat ? sa : xa + boff;
            if (ir_numel(s) > 0 && push_copy(g, &cap, &cp)) goto oom;
            off += s->dims[ax];
        }
    } else if (!strcmp(nd->op, "Slice")) {
        if (nd->nin < 3) return bk_fail(c, node, e, "Slice with starts/ends as attributes (opset < 10) is not lowered");
        int64_t st[IR_MAXDIM], en[IR_MAXDIM], axv[IR_MAXDIM], sp[IR_MAXDIM];
        int ns = const_ints(gr, nd->in[1], st, IR_MAXDIM), ne = const_ints(gr, nd->in[2], en, IR_MAXDIM);
        int na = nd->nin > 3 && nd->in[3] >= 0 ? const_ints(gr, nd->in[3], axv, IR_MAXDIM) : ns;
        int np = nd->nin > 4 && nd->in[4] >= 0 ? const_ints(gr, nd->in[4], sp, IR_MAXDIM) : ns;
        if (ns < 0 || ne != ns || na != ns || np != ns) return bk_fail(c, node, e, "starts/ends/axes/steps must be constants");
        if (!(nd->nin > 3 && nd->in[3] >= 0)) for (int i = 0; i < ns; i++) axv[i] = i;
        if (!(nd->nin > 4 && nd->in[4] >= 0)) for (int i = 0; i < ns; i++) sp[i] = 1;
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
        cp.dst = ya; cp.src = xa + (uint64_t)soff * c->es;
        if (ir_numel(y) > 0 && push_copy(g, &cap, &cp)) goto oom;
    } else if (!strcmp(nd->op, "Gather")) {
        int ax = (int)ir_attr_int(nd, "axis", 0);
        if (ax < 0) ax += r;
        const IrTensor *it = &gr->t[nd->in[1]];
        if (!it->data) return bk_fail(c, node, e, "indices must be a constant");
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
            cp.rank = 2;
            cp.shape[0] = outer; cp.shape[1] = inner;
            cp.dst_str[0] = ni * inner; cp.dst_str[1] = 1;
            cp.src_str[0] = x->dims[ax] * inner; cp.src_str[1] = 1;
            cp.dst = ya + (uint64_t)(i * inner) * c->es;
            cp.src = xa + (uint64_t)(idx * inner) * c->es;
            if (push_copy(g, &cap, &cp)) goto oom;
        }
    } else if (!strcmp(nd->op, "Pad")) {
        const char *mode = ir_attr_str(nd, "mode", "constant");
        if (strcmp(mode, "constant")) return bk_fail(c, node, e, "Pad mode '%s' is not lowered (constant only)", mode);
        int64_t pads[2 * IR_MAXDIM];
        int np = nd->nin > 1 && nd->in[1] >= 0 ? const_ints(gr, nd->in[1], pads, 2 * IR_MAXDIM) : -1;
        if (np < 0) { const IrAttr *pa = ir_attr(nd, "pads"); if (pa) { np = pa->n; for (int i = 0; i < np; i++) pads[i] = pa->ints[i]; } }
        if (np != 2 * r) return bk_fail(c, node, e, "pads must be a constant of %d values", 2 * r);
        if (nd->nin > 3 && nd->in[3] >= 0) return bk_fail(c, node, e, "Pad axes input is not lowered");
        double v = 0;
        if (nd->nin > 2 && nd->in[2] >= 0 && gr->t[nd->in[2]].data) v = ir_get_f(&gr->t[nd->in[2]], 0);
        uint32_t bits = 0;
        uint8_t tmp[4] = {0};
        bk_store_elem(c->dt, tmp, 0, v);
        memcpy(&bits, tmp, 4);
        for (int i = 0; i < np; i++) if (pads[i] < 0) return bk_fail(c, node, e, "negative pads are not lowered");
        memset(&cp, 0, sizeof cp);
        cp.rank = r;
        for (int d = 0; d < r; d++) { cp.shape[d] = y->dims[d]; cp.dst_str[d] = ys[d]; }
        cp.dst = ya; cp.fill = 1; cp.value = (int32_t)bits;
        if (push_copy(g, &cap, &cp)) goto oom;
        memset(&cp, 0, sizeof cp);
        cp.rank = r;
        int64_t doff = 0;
        for (int d = 0; d < r; d++) { cp.shape[d] = x->dims[d]; cp.dst_str[d] = ys[d]; cp.src_str[d] = xs[d]; doff += pads[d] * ys[d]; }
        cp.dst = ya + (uint64_t)doff * c->es; cp.src = xa;
        if (ir_numel(x) > 0 && push_copy(g, &cap, &cp)) goto oom;
        /* the fill must precede the copy on one core: keep both as one piece list in order */
        g->split[0] = 0;
        if (bk_assign_tiles(c, g, g->ncopies, e)) return -1;
        for (int t = 0; t < g->ntiles; t++) g->tile_core[t] = 0;
        g->cores_used = 1;
        g->gen = move_gen;
        snprintf(g->split, sizeof g->split, "fill+copy");
        return bk_cost_group(c, g, e);
    } else return bk_fail(c, node, e, "no DMA pattern for this op");
    /* cut copies along their outermost dim so every core gets work */
    {
        int n0 = g->ncopies;
        for (int i = 0; i < n0; i++) {
            BkCopy base = g->copies[i];
            int d = 0;
            while (d < base.rank - 1 && base.shape[d] == 1) d++;
            int64_t pieces = c->ncores / (n0 ? n0 : 1);
            if (pieces > base.shape[d]) pieces = base.shape[d];
            if (pieces <= 1 || base.fill) continue;
            int64_t per = (base.shape[d] + pieces - 1) / pieces;
            g->copies[i].shape[d] = per;
            for (int64_t s0 = per; s0 < base.shape[d]; s0 += per) {
                BkCopy pc = base;
                pc.shape[d] = base.shape[d] - s0 < per ? base.shape[d] - s0 : per;
                pc.dst += (uint64_t)(s0 * base.dst_str[d]) * c->es;
                pc.src += (uint64_t)(s0 * base.src_str[d]) * c->es;
                if (push_copy(g, &cap, &pc)) goto oom;
            }
        }
    }
    if (bk_assign_tiles(c, g, g->ncopies, e)) return -1;
    g->gen = move_gen;
    snprintf(g->split, sizeof g->split, "copies %d", g->ncopies);
    return bk_cost_group(c, g, e);
oom:
    return bk_fail(c, node, e, "out of memory");
}
