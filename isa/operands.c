/* operands.c - the bytes each operand of an instruction touches (see
 * operands.h). Strided operands (DMA ends, vector operands) span from
 * their lowest to their highest element; dense ones (matrix operands,
 * pools, reductions) their row-major extent. */
#include <string.h>
#include "isa/operands.h"
#include "isa/timing.h"

static uint64_t elems4(const uint32_t s[4]) { return (uint64_t)s[0] * s[1] * s[2] * s[3]; }

/* [lo, hi) of a strided 4-D operand; strides in units of `unit` bytes. */
static void strided(IsaOperand *o, uint64_t base, const uint32_t shape[4], const int32_t st[4], int64_t unit, int64_t esize)
{
    int64_t l = (int64_t)base, h = (int64_t)base;
    for (int d = 0; d < 4; d++) {
        int64_t span = ((int64_t)shape[d] - 1) * (int64_t)st[d] * unit;
        if (span < 0) l += span; else h += span;
        o->shape[d] = shape[d];
        o->stride[d] = (int64_t)st[d] * unit;
    }
    o->lo = l;
    o->hi = h + esize;
    o->esize = esize;
}

static IsaOperand *add(IsaOperand *ops, int *n, const char *what, int space, uint64_t base, int aligned, int write, int end)
{
    IsaOperand *o = &ops[(*n)++];
    memset(o, 0, sizeof *o);
    o->what = what;
    o->space = space;
    o->cluster = -1;
    o->base = base;
    o->lo = (int64_t)base;
    o->hi = (int64_t)base;
    o->aligned = aligned;
    o->write = write;
    o->end = end;
    for (int d = 0; d < 4; d++) o->shape[d] = 1;
    o->nwin = -1;
    return o;
}

/* A dense LMEM compute operand of `bytes` bytes. */
static void dense(IsaOperand *ops, int *n, const char *what, uint64_t base, int64_t bytes, int write)
{
    IsaOperand *o = add(ops, n, what, ISA_SPACE_LMEM, base, 1, write, -1);
    o->hi = (int64_t)base + bytes;
    o->esize = bytes;
}

static void vec_strided(IsaOperand *ops, int *n, const char *what, uint64_t base, const uint32_t shape[4], const int32_t st[4],
                        int es, int write)
{
    strided(add(ops, n, what, ISA_SPACE_LMEM, base, 1, write, -1), base, shape, st, es, es);
}

/* A DMA end at address addr in space: a peer address is split into its
 * cluster and its byte offset (the operand's base and range). */
static void dma_end(IsaOperand *ops, int *n, const char *what, int space, uint64_t addr, int write, int end,
                    const uint32_t shape[4], const int32_t st[4], int64_t es)
{
    uint64_t base = isa_space_is_peer(space) ? isa_peer_offset(addr) : addr;
    IsaOperand *o = add(ops, n, what, space, base, 0, write, end);
    if (isa_space_is_peer(space)) o->cluster = isa_peer_cluster(addr);
    strided(o, base, shape, st, 1, es);
}

int isa_operands(const AtlInsn *in, IsaOperand ops[ISA_MAX_OPERANDS])
{
    int n = 0;
    if (in->op >= ISA_NUM_OPS) return 0;
    int fmt = isa_ops[in->op].format;
    int64_t es = isa_dtype_size(in->dtype);
    switch (fmt) {
    case ISA_FMT_DMA_COPY:
    case ISA_FMT_DMA_FILL:
        dma_end(ops, &n, "dst", in->dst_space, in->dst, 1, 0, in->shape, in->dst_stride, es);
        if (in->op == ISA_OP_DMA_COPY) dma_end(ops, &n, "src", in->src_space, in->src, 0, 1, in->shape, in->src_stride, es);
        return n;
    case ISA_FMT_DMA_GATHER: {
        /* the indexed end (gather's source, scatter's destination) covers
         * all `limit` rows along d1; the index table one i32 per d1 position */
        uint32_t lshape[4] = {in->shape[0], in->limit, in->shape[2], in->shape[3]}, ishape[4] = {1, in->shape[1], 1, 1};
        static const int32_t istride[4] = {0, 4, 0, 0};
        int scatter = in->op == ISA_OP_DMA_SCATTER;
        dma_end(ops, &n, "dst", in->dst_space, in->dst, 1, 0, scatter ? lshape : in->shape, in->dst_stride, es);
        dma_end(ops, &n, "src", in->src_space, in->src, 0, 1, scatter ? in->shape : lshape, in->src_stride, es);
        dma_end(ops, &n, "idx", in->src2_space, in->src2, 0, 2, ishape, istride, 4);
        return n;
    }
    case ISA_FMT_MM:
        dense(ops, &n, "src (A)", in->src, ((int64_t)(in->m - 1) * in->lda + in->k) * es, 0);
        dense(ops, &n, "src2 (B)", in->src2, ((int64_t)(in->k - 1) * in->ldb + in->n) * es, 0);
        dense(ops, &n, "dst (C)", in->dst, ((int64_t)(in->m - 1) * in->ldc + in->n) * 4, 1);
        return n;
    case ISA_FMT_CONV: {
        uint32_t oh = tim_conv_out(in->ih, in->kh, in->sh, in->dh, in->pad_top, in->pad_bottom);
        uint32_t ow = tim_conv_out(in->iw, in->kw, in->sw, in->dw, in->pad_left, in->pad_right);
        uint32_t cpg = in->groups ? in->cin / in->groups : in->cin;
        dense(ops, &n, "src (input)", in->src, (int64_t)in->ih * in->iw * in->cin * es, 0);
        dense(ops, &n, "src2 (weights)", in->src2, (int64_t)in->kh * in->kw * cpg * in->cout * es, 0);
        dense(ops, &n, "dst (output)", in->dst, (int64_t)oh * ow * in->cout * 4, 1);
        return n;
    }
    case ISA_FMT_VBIN:
    case ISA_FMT_VUN:
    case ISA_FMT_VCAST: {
        int os = fmt == ISA_FMT_VCAST ? isa_dtype_size(in->otype) : (int)es;
        vec_strided(ops, &n, "src", in->src, in->shape, in->src_stride, (int)es, 0);
        if (fmt == ISA_FMT_VBIN) vec_strided(ops, &n, "src2", in->src2, in->shape, in->src2_stride, (int)es, 0);
        vec_strided(ops, &n, "dst", in->dst, in->shape, in->dst_stride, os, 1);
        return n;
    }
    case ISA_FMT_VPOOL: {
        uint32_t oh = tim_conv_out(in->ih, in->kh, in->sh, 1, in->pad_top, in->pad_bottom);
        uint32_t ow = tim_conv_out(in->iw, in->kw, in->sw, 1, in->pad_left, in->pad_right);
        dense(ops, &n, "src", in->src, (int64_t)in->ih * in->iw * in->cin * es, 0);
        dense(ops, &n, "dst", in->dst, (int64_t)oh * ow * in->cin * es, 1);
        return n;
    }
    case ISA_FMT_VRED:
    case ISA_FMT_VARG: {
        uint64_t all = elems4(in->shape), on = in->axis < 4 && in->shape[in->axis] ? all / in->shape[in->axis] : all;
        int os = fmt == ISA_FMT_VARG ? 4 : isa_dtype_size(in->otype);
        dense(ops, &n, "src", in->src, (int64_t)(all * (uint64_t)es), 0);
        dense(ops, &n, "dst", in->dst, (int64_t)(on * (uint64_t)os), 1);
        return n;
    }
    case ISA_FMT_VREQ: {
        uint64_t all = elems4(in->shape), np = in->per_channel ? in->shape[3] : 1;
        dense(ops, &n, "src", in->src, (int64_t)(all * 4), 0);
        dense(ops, &n, "src2 (params)", in->src2, (int64_t)(np * 8), 0);
        dense(ops, &n, "dst", in->dst, (int64_t)all, 1);
        return n;
    }
    default:
        return 0;
    }
}

/* ---- disjointness by windows of residues ----
 * Taking the operand's k dimensions of smallest |stride| (of those with
 * more than one position) as a window, and P the gcd of the other
 * dimensions' strides, every byte x of the operand has (x - r) mod P in
 * [0, w): r = base + the window's lowest offset, w = its span plus an
 * element. With every dimension in the window P is 0 (the bytes lie in
 * [r, r + w), so modulo any period they lie in that window: gcd(0, q) =
 * q). Two operands whose windows (for any k of each) are disjoint modulo
 * the gcd of their periods share no byte: a row block beside the padding
 * rows a fill writes around it, column tiles side by side. */
static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) { uint64_t t = a % b; a = b; b = t; }
    return a;
}

static uint64_t abs64(int64_t v) { return v < 0 ? (uint64_t)-v : (uint64_t)v; }

/* The operand's windows, one per k = 0..n (n its dimensions of more than
 * one position, k = n the whole operand, period 0); returns how many. */
static int windows(const IsaOperand *o, IsaWindow out[5])
{
    int dim[4], n = 0, nw = 0;
    for (int d = 0; d < 4; d++) {
        if (o->shape[d] < 2 || !o->stride[d]) continue;
        int j = n++;
        while (j > 0 && abs64(o->stride[dim[j - 1]]) > abs64(o->stride[d])) { dim[j] = dim[j - 1]; j--; }
        dim[j] = d;
    }
    for (int k = 0; k <= n; k++) {
        int64_t lo = 0, hi = 0;
        uint64_t p = 0;
        for (int i = 0; i < n; i++) {
            int d = dim[i];
            int64_t span = ((int64_t)o->shape[d] - 1) * o->stride[d];
            if (i >= k) p = gcd64(p, abs64(o->stride[d]));
            else if (span < 0) lo += span;
            else hi += span;
        }
        out[nw++] = (IsaWindow){p, (int64_t)o->base + lo, hi - lo + o->esize};
    }
    return nw;
}

/* b is a moved by some bytes: the same elements, shape and strides. */
static int translate(const IsaOperand *a, const IsaOperand *b)
{
    if (a->esize != b->esize) return 0;
    for (int d = 0; d < 4; d++)
        if (a->shape[d] != b->shape[d] || a->stride[d] != b->stride[d]) return 0;
    return 1;
}

void isa_operand_windows(IsaOperand *o)
{
    if (o->nwin < 0) o->nwin = windows(o, o->win);
}

int isa_operands_disjoint(const IsaOperand *a, const IsaOperand *b)
{
    if (a->hi <= b->lo || b->hi <= a->lo) return 1;
    IsaWindow own_a[5], own_b[5];
    const IsaWindow *wa = a->win, *wb = b->win;
    int na = a->nwin, nb = b->nwin;
    if (na < 0) na = windows(a, own_a), wa = own_a;
    if (translate(a, b)) { /* b's windows are a's, moved: one pass (the common case, tiles of a tensor) */
        int64_t delta = (int64_t)(b->base - a->base);
        for (int i = 0; i < na; i++) {
            int64_t p = (int64_t)wa[i].p;
            if (!p) continue; /* the whole operands: their byte ranges overlap */
            int64_t d = (delta % p + p) % p;
            if (d >= wa[i].w && d + wa[i].w <= p) return 1;
        }
        return 0;
    }
    if (nb < 0) nb = windows(b, own_b), wb = own_b;
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++) {
            int64_t p = (int64_t)gcd64(wa[i].p, wb[j].p);
            if (!p || wa[i].w + wb[j].w > p) continue; /* p 0: both whole, their byte ranges overlap */
            int64_t d = ((wb[j].r - wa[i].r) % p + p) % p; /* b's window starts d after a's, mod p */
            if (d >= wa[i].w && d + wb[j].w <= p) return 1;
        }
    return 0;
}
