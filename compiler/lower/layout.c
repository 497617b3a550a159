/* layout.c - Tile, DepthToSpace and SpaceToDepth as strided
 * DRAM-to-DRAM copies (the DMA-only "direct" layers of lower/move.c).
 *
 * Tile: per axis k with repeat r = out/in > 1 two copy dims, the repeat
 *   (source stride 0, destination stride in_k x the output stride) and the
 *   axis itself; the repeat counts come from the inferred shapes, so a
 *   run-time repeats tensor with a known output shape lowers too.
 * DepthToSpace / SpaceToDepth (blocksize b, 4-D): a 6-D permutation. The
 *   copy walks the output as [N][C'][H][b][W][b] (DepthToSpace; source
 *   channel (i*b + j)*C' + c in DCR mode, c*b*b + i*b + j in CRD mode) or
 *   as [N][b][b][C][H'][W'] (SpaceToDepth; source row h*b + i, column
 *   w*b + j). The emitter (lower/move.c's emit_copy) loops the dims
 *   beyond the 4 a dma.copy takes.
 * A copy with more than IR_MAXDIM dims (Tile of a rank > 4 tensor) is cut
 *   into one copy per index of its leading dims.
 * Elements are the layer's storage dtype (BkLow.dt / es, set by
 *   bk_lower_move from the output tensor), so integer tensors move too.
 * Why: these ops only move bytes, so DMA makes them exact and costs one
 * pass over the output. */
#include <string.h>
#include "compiler/lower/lower.h"

/* Up to 2 * IR_MAXDIM copy dims before cutting. */
typedef struct LayoutDims {
    int n;
    int64_t shape[2 * IR_MAXDIM], dst[2 * IR_MAXDIM], src[2 * IR_MAXDIM];
} LayoutDims;

static void add_dim(LayoutDims *d, int64_t shape, int64_t dst, int64_t src)
{
    d->shape[d->n] = shape;
    d->dst[d->n] = dst;
    d->src[d->n] = src;
    d->n++;
}

/* Pushes the copy of dims[from..n) at (ya, xa); leading dims beyond
 * IR_MAXDIM become one copy per index. */
static int push_dims(const BkCtx *c, BkLayer *ly, int *cap, const LayoutDims *d, int from, uint64_t ya, uint64_t xa)
{
    if (d->n - from > IR_MAXDIM) {
        for (int64_t i = 0; i < d->shape[from]; i++)
            if (push_dims(c, ly, cap, d, from + 1, ya + (uint64_t)(i * d->dst[from]) * (uint64_t)ly->lw.es,
                          xa + (uint64_t)(i * d->src[from]) * (uint64_t)ly->lw.es))
                return -1;
        return 0;
    }
    BkCopy cp;
    memset(&cp, 0, sizeof cp);
    cp.rank = d->n - from;
    cp.dt = ly->lw.dt;   /* the tensor's storage dtype (bk_lower_move sets it) */
    for (int k = 0; k < cp.rank; k++) {
        cp.shape[k] = d->shape[from + k];
        cp.dst_str[k] = d->dst[from + k];
        cp.src_str[k] = d->src[from + k];
    }
    cp.dst = ya;
    cp.src = xa;
    return bk_push_copy(ly, cap, &cp);
}

static void row_major(const IrTensor *t, int64_t *st)
{
    int64_t s = 1;
    for (int d = t->ndim - 1; d >= 0; d--) { st[d] = s; s *= t->dims[d]; }
}

static void tile_dims(const IrTensor *x, const IrTensor *y, LayoutDims *d)
{
    int64_t xs[IR_MAXDIM], ys[IR_MAXDIM];
    row_major(x, xs);
    row_major(y, ys);
    for (int k = 0; k < x->ndim; k++) {
        int64_t rep = x->dims[k] ? y->dims[k] / x->dims[k] : 1;
        if (rep > 1) add_dim(d, rep, x->dims[k] * ys[k], 0);
        add_dim(d, x->dims[k], ys[k], xs[k]);
    }
}

static void depth_space_dims(const IrTensor *x, const IrTensor *y, int64_t b, int d2s, int crd, LayoutDims *d)
{
    int64_t XC = x->dims[1], XH = x->dims[2], XW = x->dims[3];
    int64_t YC = y->dims[1], YH = y->dims[2], YW = y->dims[3];
    if (d2s) {
        /* output [N][C'][H][i][W][j] = x[n][chan(c, i, j)][h][w] */
        add_dim(d, y->dims[0], YC * YH * YW, XC * XH * XW);
        add_dim(d, YC, YH * YW, crd ? b * b * XH * XW : XH * XW);
        add_dim(d, XH, b * YW, XW);
        add_dim(d, b, YW, crd ? b * XH * XW : b * YC * XH * XW);
        add_dim(d, XW, b, 1);
        add_dim(d, b, 1, crd ? XH * XW : YC * XH * XW);
    } else {
        /* output [N][i][j][C][H'][W'] = x[n][c][h*b + i][w*b + j] */
        add_dim(d, y->dims[0], YC * YH * YW, XC * XH * XW);
        add_dim(d, b, b * XC * YH * YW, XW);
        add_dim(d, b, XC * YH * YW, 1);
        add_dim(d, XC, YH * YW, XH * XW);
        add_dim(d, YH, YW, b * XW);
        add_dim(d, YW, 1, b);
    }
}

int bk_layout_copies(BkCtx *c, int node, BkLayer *ly, int *cap, uint64_t xa, uint64_t ya, AtlErr *e)
{
    const IrNode *nd = &c->g->nodes[node];
    const IrTensor *x = &c->g->t[nd->in[0]], *y = &c->g->t[nd->out[0]];
    LayoutDims d;
    memset(&d, 0, sizeof d);
    if (!strcmp(nd->op, "Tile")) {
        if (y->ndim != x->ndim) return bk_fail(c, node, e, "output rank %d differs from the input's %d", y->ndim, x->ndim);
        tile_dims(x, y, &d);
    } else {
        int d2s = !strcmp(nd->op, "DepthToSpace");
        int64_t b = ir_attr_int(nd, "blocksize", 0);
        if (x->ndim != 4 || b < 1) return bk_fail(c, node, e, "needs a 4-D input and a positive blocksize");
        depth_space_dims(x, y, b, d2s, d2s && !strcmp(ir_attr_str(nd, "mode", "DCR"), "CRD"), &d);
    }
    if (ir_numel(y) == 0) return 0;
    if (push_dims(c, ly, cap, &d, 0, ya, xa)) return bk_fail(c, node, e, "out of memory");
    return 0;
}
