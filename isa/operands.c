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
    }
    o->lo = l;
    o->hi = h + esize;
}

static IsaOperand *add(IsaOperand *ops, int *n, const char *what, int space, uint64_t base, int aligned, int write, int end)
{
    IsaOperand *o = &ops[(*n)++];
    memset(o, 0, sizeof *o);
    o->what = what;
    o->space = space;
    o->base = base;
    o->lo = (int64_t)base;
    o->hi = (int64_t)base;
    o->aligned = aligned;
    o->write = write;
    o->end = end;
    return o;
}

/* A dense LMEM compute operand of `bytes` bytes. */
static void dense(IsaOperand *ops, int *n, const char *what, uint64_t base, int64_t bytes, int write)
{
    add(ops, n, what, ISA_SPACE_LMEM, base, 1, write, -1)->hi = (int64_t)base + bytes;
}

static void vec_strided(IsaOperand *ops, int *n, const char *what, uint64_t base, const uint32_t shape[4], const int32_t st[4],
                        int es, int write)
{
    strided(add(ops, n, what, ISA_SPACE_LMEM, base, 1, write, -1), base, shape, st, es, es);
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
        strided(add(ops, &n, "dst", in->dst_space, in->dst, 0, 1, 0), in->dst, in->shape, in->dst_stride, 1, es);
        if (in->op == ISA_OP_DMA_COPY)
            strided(add(ops, &n, "src", in->src_space, in->src, 0, 0, 1), in->src, in->shape, in->src_stride, 1, es);
        return n;
    case ISA_FMT_DMA_GATHER: {
        /* the indexed end (gather's source, scatter's destination) covers
         * all `limit` rows along d1; the index table one i32 per d1 position */
        uint32_t lshape[4] = {in->shape[0], in->limit, in->shape[2], in->shape[3]}, ishape[4] = {1, in->shape[1], 1, 1};
        static const int32_t istride[4] = {0, 4, 0, 0};
        int scatter = in->op == ISA_OP_DMA_SCATTER;
        strided(add(ops, &n, "dst", in->dst_space, in->dst, 0, 1, 0), in->dst, scatter ? lshape : in->shape, in->dst_stride, 1, es);
        strided(add(ops, &n, "src", in->src_space, in->src, 0, 0, 1), in->src, scatter ? in->shape : lshape, in->src_stride, 1, es);
        strided(add(ops, &n, "idx", in->src2_space, in->src2, 0, 0, 2), in->src2, ishape, istride, 1, 4);
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
