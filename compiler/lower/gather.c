/* gather.c - Gather whose indices are only known at run time, as
 * dma.gather instructions (a DMA-only "direct" layer).
 *
 * y = x[..., idx, ...] along `axis` is y[outer][j][inner] =
 * x[outer][idx[j]][inner] with the indices flattened (any index rank).
 * The indices are any i32/i64 tensor in DRAM (a graph input the host
 * converts, or the output of another layer): the chip holds them as an i32
 * table (bk_tensor_dt), which is what dma.gather reads. Each
 * dma.gather moves [outer chunk][index chunk][inner] with the inner run
 * split into two dims; `limit` = x's extent along the axis, so the DMA
 * engine wraps negative indices (+limit) as ONNX does and faults, naming
 * the index and its entry, on one outside [-limit, limit) before moving
 * any byte. The pieces (outer x index chunks) are spread over the cores.
 * Why an instruction: the chip has no other way to address memory by
 * data; an embedding lookup on a real accelerator is this descriptor.
 * Constant indices stay plain copies (lower/move.c). */
#include <stdio.h>
#include <string.h>
#include "compiler/lower/lower.h"

#define MAX16 65535

/* Layer fields used: bt = outer, M = indices, K = rows along the axis,
 * Nn = inner, mt / nt = outer / index chunk, nmc / nnc = their counts,
 * od[2..3] = inner split (i2 x i3), x / y / w = source, result, table. */
static int gather_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)slot;
    const BkLow *l = &ly->lw;
    int64_t es = l->es, a0 = (int64_t)(t / l->nnc) * l->mt, j0 = (int64_t)(t % l->nnc) * l->nt;
    int64_t na = l->bt - a0 < l->mt ? l->bt - a0 : l->mt, nj = l->M - j0 < l->nt ? l->M - j0 : l->nt;
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_DMA_GATHER;
    in.dtype = (uint8_t)l->dt;
    in.dst_space = in.src_space = in.src2_space = ISA_SPACE_DRAM;
    in.dst = l->y + (uint64_t)((a0 * l->M + j0) * l->Nn * es);
    in.src = l->x + (uint64_t)(a0 * l->K * l->Nn * es);
    in.src2 = l->w + (uint64_t)(4 * j0);
    in.shape[0] = (uint32_t)na; in.shape[1] = (uint32_t)nj; in.shape[2] = l->od[2]; in.shape[3] = l->od[3];
    in.dst_stride[0] = (int32_t)(l->M * l->Nn * es); in.dst_stride[1] = (int32_t)(l->Nn * es);
    in.src_stride[0] = (int32_t)(l->K * l->Nn * es); in.src_stride[1] = (int32_t)(l->Nn * es);
    in.dst_stride[2] = in.src_stride[2] = (int32_t)(l->od[3] * es);
    in.dst_stride[3] = in.src_stride[3] = (int32_t)es;
    in.limit = (uint32_t)l->K;
    return bk_code_st(k, &in) ? atl_fail(e, "out of memory") : 0;
}

int bk_lower_gather(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]], *it = &gr->t[nd->in[1]];
    BkLow *l = &ly->lw;
    l->kind = BK_K_MOVE;
    ly->direct = 1;
    l->dt = l->xdt = bk_tensor_dt(c, nd->out[0]);
    l->es = l->xes = bk_tensor_es(c, nd->out[0]);
    if (bk_tensor_dt(c, nd->in[1]) != ISA_I32)
        return bk_fail(c, node, e, "indices '%s' have dtype %s; dma.gather reads an i32 table (int32/int64 indices)",
                       it->name, ir_dtype_name(it->dtype));
    int r = x->ndim, ax = (int)ir_attr_int(nd, "axis", 0);
    if (ax < 0) ax += r;
    if (ax < 0 || ax >= r) return bk_fail(c, node, e, "axis out of range");
    int64_t outer = 1, inner = 1, rows = x->dims[ax], ni = ir_numel(it);
    for (int d = 0; d < ax; d++) outer *= x->dims[d];
    for (int d = ax + 1; d < r; d++) inner *= x->dims[d];
    if (outer == 0 || inner == 0 || ni == 0) return bk_fail(c, node, e, "an empty Gather is not lowered");
    if (rows < 1 || rows >= (1 << 22)) return bk_fail(c, node, e, "%lld rows along the axis (dma.gather takes 1..2^22-1)", (long long)rows);
    int64_t i3 = inner <= MAX16 ? inner : MAX16;
    while (inner % i3) i3--;
    if (inner / i3 > MAX16) return bk_fail(c, node, e, "inner size %lld cannot be split into two 16-bit dims", (long long)inner);
    int64_t big = (outer > ni ? outer : ni) * inner * l->es, src = rows * inner * l->es;
    if (big > INT32_MAX || src > INT32_MAX) return bk_fail(c, node, e, "strides beyond 2 GiB are not lowered");
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->out[0], &l->y, e) ||
        bk_tensor_in_dram(c, nd->in[1], &l->w, e))
        return -1;
    l->bt = (int)outer; l->M = (int)ni; l->K = (int)rows; l->Nn = (int)inner;
    l->od[2] = (uint32_t)(inner / i3); l->od[3] = (uint32_t)i3;
    /* pieces: outer chunks, then index chunks until every core has one */
    l->mt = (int)(outer < MAX16 ? outer : MAX16);
    l->nmc = (int)((outer + l->mt - 1) / l->mt);
    int64_t want = c->ncores > l->nmc ? (c->ncores + l->nmc - 1) / l->nmc : 1;
    if (want > ni) want = ni;
    int64_t nt = (ni + want - 1) / want;
    l->nt = (int)(nt < MAX16 ? nt : MAX16);
    l->nnc = (int)((ni + l->nt - 1) / l->nt);
    if ((int64_t)l->nmc * l->nnc > (1 << 24)) return bk_fail(c, node, e, "too many pieces");
    if (bk_set_tiles(ly, l->nmc * l->nnc, 1, e)) return -1;
    ly->gen = gather_gen;
    snprintf(ly->split, sizeof ly->split, "gathers %d", l->nmc * l->nnc);
    return 0;
}
