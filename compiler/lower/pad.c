/* pad.c - Pad (constant, edge, reflect; negative pads crop) as
 * DRAM-to-DRAM strided copies and fills.
 *
 * Every output coordinate along axis k reads source coordinate map_k(i)
 * (the same map compiler/ops/shape.c's eval_pad uses: -1 = the constant,
 * edge clamps, reflect folds with period 2(d-1)). Along each axis the map
 * is cut into runs where it is an arithmetic progression (interior: step 1,
 * an edge border: step 0, a reflected border: step -1) or all constant.
 * The output is the cartesian product of the axes' runs: each product box
 * is one strided copy (source strides = step x input strides, so an edge
 * border is a zero-stride broadcast) or, when any axis's run is constant,
 * one fill. The boxes tile the output exactly once, so they may run on any
 * core in any order. Why: DMA moves bytes unchanged, so the result is
 * exact; a pad costs one pass over the output. */
#include <stdlib.h>
#include <string.h>
#include "compiler/lower/lower.h"

typedef struct PadRun { int64_t o0, len, s0, step; int fill; } PadRun;

/* Source coordinate of output coordinate i along an axis of size d. */
static int64_t pad_source(int mode, int64_t i, int64_t before, int64_t d)
{
    int64_t s = i - before;
    if (s >= 0 && s < d) return s;
    if (mode == 0 || d == 0) return -1;
    if (mode == 1) return s < 0 ? 0 : d - 1;
    if (d == 1) return 0;
    int64_t per = 2 * (d - 1);
    s = ((s % per) + per) % per;
    return s >= d ? per - s : s;
}

/* Cuts axis k's map into runs; returns their count or -1 out of memory. */
static int axis_runs(int mode, int64_t out, int64_t before, int64_t d, PadRun **runs)
{
    int n = 0, cap = 0;
    *runs = NULL;
    for (int64_t i = 0; i < out;) {
        int64_t s = pad_source(mode, i, before, d), step = 0, len = 1;
        if (i + 1 < out && s >= 0 && pad_source(mode, i + 1, before, d) >= 0) step = pad_source(mode, i + 1, before, d) - s;
        while (i + len < out) {
            int64_t v = pad_source(mode, i + len, before, d);
            if (s < 0 ? v >= 0 : v != s + step * len) break;
            len++;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            PadRun *p = realloc(*runs, (size_t)cap * sizeof *p);
            if (!p) return -1;
            *runs = p;
        }
        (*runs)[n++] = (PadRun){i, len, s < 0 ? 0 : s, step, s < 0};
        i += len;
    }
    return n;
}

static int read_pads(const BkCtx *c, int node, int r, int64_t *pb, int64_t *pe, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    int64_t p[2 * IR_MAXDIM], ax[IR_MAXDIM];
    int np = -1, na = r;
    if (nd->nin > 1 && nd->in[1] >= 0) {
        const IrTensor *t = &gr->t[nd->in[1]];
        if (!t->data) return bk_fail(c, node, e, "pads must be a constant");
        np = (int)ir_numel(t);
        if (np > 2 * IR_MAXDIM) np = -1;
        for (int i = 0; i < np; i++) p[i] = ir_get_i(t, i);
    } else {
        const IrAttr *pa = ir_attr(nd, "pads");
        if (!pa) pa = ir_attr(nd, "paddings");
        if (pa && pa->n <= 2 * IR_MAXDIM) { np = pa->n; for (int i = 0; i < np; i++) p[i] = pa->ints[i]; }
    }
    for (int i = 0; i < r; i++) ax[i] = i;
    if (nd->nin > 3 && nd->in[3] >= 0) {
        const IrTensor *t = &gr->t[nd->in[3]];
        if (!t->data || ir_numel(t) > r) return bk_fail(c, node, e, "axes must be a constant of at most %d values", r);
        na = (int)ir_numel(t);
        for (int i = 0; i < na; i++) { ax[i] = ir_get_i(t, i); if (ax[i] < 0) ax[i] += r; }
    }
    if (np != 2 * na) return bk_fail(c, node, e, "pads must be a constant of %d values", 2 * na);
    for (int k = 0; k < r; k++) pb[k] = pe[k] = 0;
    for (int i = 0; i < na; i++) {
        if (ax[i] < 0 || ax[i] >= r) return bk_fail(c, node, e, "axis %lld out of range", (long long)ax[i]);
        pb[ax[i]] = p[i];
        pe[ax[i]] = p[na + i];
    }
    return 0;
}

int bk_pad_copies(BkCtx *c, int node, BkLayer *ly, int *cap, uint64_t xa, uint64_t ya, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]], *y = &gr->t[nd->out[0]];
    int r = x->ndim;
    const char *ms = ir_attr_str(nd, "mode", "constant");
    int mode = !strcmp(ms, "constant") ? 0 : !strcmp(ms, "edge") ? 1 : !strcmp(ms, "reflect") ? 2 : -1;
    if (mode < 0) return bk_fail(c, node, e, "Pad mode '%s' is not lowered (constant, edge, reflect)", ms);
    int64_t pb[IR_MAXDIM], pe[IR_MAXDIM];
    if (read_pads(c, node, r, pb, pe, e)) return -1;
    double v = ir_attr_float(nd, "value", 0.0f);   /* opset < 11: an attribute */
    if (nd->nin > 2 && nd->in[2] >= 0) {
        if (!gr->t[nd->in[2]].data) return bk_fail(c, node, e, "constant_value must be a constant");
        v = ir_get_f(&gr->t[nd->in[2]], 0);
    }
    uint8_t bits[4] = {0};
    bk_store_elem(ly->lw.dt, bits, 0, v);
    int32_t value;
    memcpy(&value, bits, 4);
    int64_t xs[IR_MAXDIM], ys[IR_MAXDIM], sx = 1, sy = 1;
    for (int k = r - 1; k >= 0; k--) { xs[k] = sx; sx *= x->dims[k]; ys[k] = sy; sy *= y->dims[k]; }
    if (sy == 0) return 0;
    PadRun *runs[IR_MAXDIM] = {0};
    int nr[IR_MAXDIM], rc = 0;
    for (int k = 0; k < r && !rc; k++) {
        nr[k] = axis_runs(mode, y->dims[k], pb[k], x->dims[k], &runs[k]);
        if (nr[k] < 0) rc = bk_fail(c, node, e, "out of memory");
    }
    int idx[IR_MAXDIM] = {0};
    while (!rc) {
        BkCopy cp;
        memset(&cp, 0, sizeof cp);
        cp.dt = ly->lw.dt;
        cp.rank = r;
        int64_t doff = 0, soff = 0;
        for (int k = 0; k < r; k++) {
            const PadRun *u = &runs[k][idx[k]];
            cp.shape[k] = u->len;
            cp.dst_str[k] = ys[k];
            cp.src_str[k] = u->step * xs[k];
            doff += u->o0 * ys[k];
            soff += u->s0 * xs[k];
            cp.fill |= u->fill;
        }
        cp.dst = ya + (uint64_t)doff * (uint64_t)ly->lw.es;
        if (cp.fill) { memset(cp.src_str, 0, sizeof cp.src_str); cp.value = value; }
        else cp.src = xa + (uint64_t)soff * (uint64_t)ly->lw.es;
        if (bk_push_copy(ly, cap, &cp)) rc = bk_fail(c, node, e, "out of memory");
        int k = r - 1;
        while (k >= 0 && ++idx[k] == nr[k]) idx[k--] = 0;
        if (k < 0) break;
    }
    for (int k = 0; k < r; k++) free(runs[k]);
    return rc;
}
