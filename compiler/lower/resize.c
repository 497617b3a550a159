/* resize.c - Resize/Upsample by interpolation matrices on the
 * matrix unit: linear and cubic modes with every coordinate transformation
 * of the interpreter (half_pixel, pytorch_half_pixel, align_corners,
 * asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize with its
 * extrapolation value), cubic_coeff_a and exclude_outside, and nearest
 * maps that are not a DMA pattern (lower/move.c tries those first).
 *
 * Interpolation is separable: along a resized axis, out[o] = sum_i R[o][i]
 * x[i] with R the [out][in] matrix of the interpreter's taps
 * (resize_axis_matrix in compiler/ops/resize.c, computed in f64, stored in
 * f32). The last two axes (H, W; only W for rank 1) may be resized; every
 * other axis must map identically (else a clear error). Per plane
 * (product of the other axes): Y = R_h X R_w^T as two `mm`s in f32.
 * Tiles: (plane, output row chunk, output column chunk), the chunk sizes
 * the cheapest by an estimate of `mm` and DMA cycles (isa/timing.h) among
 * the halvings that fit a slot. R_h and R_w are
 * banded: output rows [o0, o1) read only the input rows between their
 * first and last non-zero weight, so a tile loads that band of X, the
 * matching block of R_h ([rows][band], from the DRAM copy of R_h) and of
 * R_w^T ([band][cols]); T = R_h_blk x X_band, Y = T x R_w^T_blk. Planes
 * are the innermost tile index and the blocks are weight loads keyed by
 * the chunk, so a core loads them once per chunk, not per plane. An axis
 * whose matrix is the identity skips its `mm`. tf_crop_and_resize outputs
 * outside the input are overwritten by dma.fill after the tile's store.
 * f16/bf16 storage: the band is cast to f32 and the result back.
 * Cost: the matrix unit does band x out MACs per output row (2 taps for
 * linear, 4 for cubic when scaling up; about in/out x taps when scaling
 * down), instead of exactly `taps`; it needs no gather DMAs, and any scale,
 * size and mode is handled the same way. Accuracy: weights rounded to f32
 * (relative 6e-8), f32 accumulation: within 1e-6 relative of the
 * interpreter's f64 sums for unit-range data. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/lower/lower.h"
#include "compiler/ops/ops.h"
#include "isa/timing.h"

/* aux table layout: lo_h[OH] hi_h[OH] lo_w[OW] hi_w[OW] out_h[OH] out_w[OW] */
typedef struct Bands { const int32_t *lo_h, *hi_h, *lo_w, *hi_w, *out_h, *out_w; } Bands;

static Bands bands_of(const BkLow *l)
{
    Bands b;
    b.lo_h = l->aux; b.hi_h = b.lo_h + l->OH;
    b.lo_w = b.hi_h + l->OH; b.hi_w = b.lo_w + l->OW;
    b.out_h = b.hi_w + l->OW; b.out_w = b.out_h + l->OH;
    return b;
}

/* Input band [*lo, *lo + *n) read by outputs [o0, o0 + cnt); the identity
 * axis (do_it 0) reads exactly [o0, o0 + cnt). */
static void band(const int32_t *lo, const int32_t *hi, int do_it, int o0, int cnt, int *blo, int *bn)
{
    if (!do_it) { *blo = o0; *bn = cnt; return; }
    int a = lo[o0], z = hi[o0];
    for (int o = o0 + 1; o < o0 + cnt; o++) { if (lo[o] < a) a = lo[o]; if (hi[o] > z) z = hi[o]; }
    if (z < a) a = z = 0;   /* no weights at all */
    *blo = a;
    *bn = z - a + 1;
}

static int max_band(const int32_t *lo, const int32_t *hi, int do_it, int n, int chunk)
{
    int m = 0;
    for (int o0 = 0; o0 < n; o0 += chunk) {
        int a, bn;
        band(lo, hi, do_it, o0, n - o0 < chunk ? n - o0 : chunk, &a, &bn);
        if (bn > m) m = bn;
    }
    return m;
}

/* dma.fill of the runs of flagged rows (by_rows) or columns of the stored
 * [mn][nn] output block at DRAM dst (row stride ow), after its store in
 * the same in-order DMA queue. */
static void extrapolate(BkCtx *c, BkCode *k, const int32_t *flag, int first, int cnt, int by_rows, int mn, int nn,
                        uint64_t dst, int ow, int32_t bits)
{
    for (int i = 0; i < cnt;) {
        if (!flag[first + i]) { i++; continue; }
        int j = i;
        while (j < cnt && flag[first + j]) j++;
        uint32_t sh[4] = {1, 1, by_rows ? (uint32_t)(j - i) : (uint32_t)mn, by_rows ? (uint32_t)nn : (uint32_t)(j - i)};
        int64_t st[4] = {0, 0, ow, 1}, zero[4] = {0, 0, 0, 0};
        AtlInsn in = bk_dma(c->dt, ISA_SPACE_DRAM, dst + (uint64_t)(by_rows ? i * ow : i) * c->es, ISA_SPACE_DRAM, 0, sh, st, zero);
        in.op = ISA_OP_DMA_FILL;
        in.src_space = 0;
        in.ival = bits;
        bk_code_st(k, &in);
        i = j;
    }
}

static AtlInsn mm_f32(uint64_t dst, uint64_t a, uint64_t b, int m, int kk, int n)
{
    AtlInsn mm;
    memset(&mm, 0, sizeof mm);
    mm.op = ISA_OP_MM;
    mm.dtype = ISA_F32;
    mm.dst = dst; mm.src = a; mm.src2 = b;
    mm.m = (uint32_t)m; mm.k = (uint32_t)kk; mm.n = (uint32_t)n;
    mm.lda = (uint32_t)kk; mm.ldb = (uint32_t)n; mm.ldc = (uint32_t)n;
    return mm;
}

/* v.cast of the contiguous block sh at src into dst; returns dst. */
static uint64_t cast_block(BkCode *k, int from, int to, uint64_t dst, uint64_t src, const uint32_t sh[4])
{
    int64_t st[4];
    bk_compact(sh, st);
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_V_CAST;
    in.dtype = (uint8_t)from;
    in.otype = (uint8_t)to;
    in.dst = dst;
    in.src = src;
    for (int d = 0; d < 4; d++) { in.shape[d] = sh[d]; in.dst_stride[d] = in.src_stride[d] = (int32_t)st[d]; }
    bk_code_cp(k, &in);
    return dst;
}

/* Loads rows x cols f32 of a DRAM matrix with row stride ld into LMEM, as
 * a weight load (the tile's weight key is its row and column chunk). */
static void load_block(BkCode *k, uint64_t lmem, uint64_t dram, int rows, int cols, int ld)
{
    uint32_t sh[4] = {1, 1, (uint32_t)rows, (uint32_t)cols};
    int64_t ds[4], ss[4] = {0, 0, ld, 1};
    bk_compact(sh, ds);
    AtlInsn in = bk_dma(ISA_F32, ISA_SPACE_LMEM, lmem, ISA_SPACE_DRAM, dram, sh, ds, ss);
    bk_code_ld(k, &in, 1);   /* skipped when the slot holds this chunk's blocks already */
}

static int resize_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)e;
    const BkLow *l = &ly->lw;
    Bands bd = bands_of(l);
    int do_h = l->kh, do_w = l->kw, es = c->es, dt = c->dt;
    /* planes innermost: a core's consecutive tiles reuse the R blocks */
    int p = (int)(t % l->N), cci = t / l->N % l->nnc, rci = t / l->N / l->nnc;
    int o0 = rci * l->mt, mn = l->OH - o0 < l->mt ? l->OH - o0 : l->mt;
    int c0 = cci * l->nt, nn = l->OW - c0 < l->nt ? l->OW - c0 : l->nt;
    int lh, bh, lw, bw;
    band(bd.lo_h, bd.hi_h, do_h, o0, mn, &lh, &bh);
    band(bd.lo_w, bd.hi_w, do_w, c0, nn, &lw, &bw);
    uint32_t sh[4] = {1, 1, (uint32_t)bh, (uint32_t)bw};
    int64_t ds[4], ss[4] = {0, 0, l->W, 1};
    bk_compact(sh, ds);
    uint64_t src = l->x + ((uint64_t)p * l->H * l->W + (uint64_t)lh * l->W + (uint64_t)lw) * es;
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_in, ISA_SPACE_DRAM, src, sh, ds, ss);
    bk_code_ld(k, &in, 0);
    uint64_t cur = slot + l->l_in;
    if (dt != ISA_F32) cur = cast_block(k, dt, ISA_F32, slot + l->l_tmp, cur, sh);
    if (do_h) {
        load_block(k, slot + l->l_w, l->w + ((uint64_t)o0 * l->H + (uint64_t)lh) * 4, mn, bh, l->H);
        in = mm_f32(slot + l->l_out, slot + l->l_w, cur, mn, bh, bw);
        bk_code_cp(k, &in);
        cur = slot + l->l_out;
    }
    if (do_w) {
        load_block(k, slot + l->l_b, l->b + ((uint64_t)lw * l->OW + (uint64_t)c0) * 4, bw, nn, l->OW);
        in = mm_f32(slot + l->l_acc, cur, slot + l->l_b, mn, bw, nn);
        bk_code_cp(k, &in);
        cur = slot + l->l_acc;
    }
    uint32_t osh[4] = {1, 1, (uint32_t)mn, (uint32_t)nn};
    int64_t oc[4];
    bk_compact(osh, oc);
    if (dt != ISA_F32) cur = cast_block(k, ISA_F32, dt, slot + l->l_tmp, cur, osh);
    int64_t yd[4] = {0, 0, l->OW, 1};
    uint64_t dst = l->y + ((uint64_t)p * l->OH * l->OW + (uint64_t)o0 * l->OW + (uint64_t)c0) * es;
    /* a tile with nothing to compute still needs one compute to hand over */
    if (k->ncp == 0) {
        in = bk_vun(ISA_OP_V_MOV, dt, slot + l->l_acc, cur, osh, oc, oc, 0, 0);
        bk_code_cp(k, &in);
        cur = slot + l->l_acc;
    }
    in = bk_dma(dt, ISA_SPACE_DRAM, dst, ISA_SPACE_LMEM, cur, osh, yd, oc);
    bk_code_st(k, &in);
    uint8_t bits[4] = {0};
    int32_t v;
    bk_store_elem(dt, bits, 0, l->act_alpha);
    memcpy(&v, bits, 4);
    extrapolate(c, k, bd.out_h, o0, mn, 1, mn, nn, dst, l->OW, v);
    extrapolate(c, k, bd.out_w, c0, nn, 0, mn, nn, dst, l->OW, v);
    return 0;
}

static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* LMEM of one tile for output chunks mt x nt; 0 if it does not fit. */
static int layout(const BkCtx *c, const BkLayer *g, BkLow *l)
{
    Bands bd = bands_of(l);
    uint64_t bh = (uint64_t)max_band(bd.lo_h, bd.hi_h, l->kh, l->OH, l->mt);
    uint64_t bw = (uint64_t)max_band(bd.lo_w, bd.hi_w, l->kw, l->OW, l->nt);
    uint64_t mt = (uint64_t)l->mt, nt = (uint64_t)l->nt, used = 0;
    if (bh > 65535 || bw > 65535) return -1;
    l->l_in = bk_slot_alloc(c, &used, bh * bw * c->es);
    /* f32 copy of the band on the way in, of the result on the way out */
    l->l_tmp = c->dt != ISA_F32 ? bk_slot_alloc(c, &used, umax(bh * bw, mt * nt) * 4) : 0;
    l->l_w = l->kh ? bk_slot_alloc(c, &used, mt * bh * 4) : 0;
    l->l_out = l->kh ? bk_slot_alloc(c, &used, mt * bw * 4) : 0;
    l->l_b = l->kw ? bk_slot_alloc(c, &used, bw * nt * 4) : 0;
    l->l_acc = bk_slot_alloc(c, &used, mt * nt * 4);
    return used <= g->slot_size ? 0 : -1;
}

/* Estimated cycles of the layer with output chunks mt x nt: the cores'
 * share the tiles; a tile's load, compute and store overlap (pipeline),
 * so it costs the slowest of its DMA (bands of X and R, the result) and its
 * two `mm`s (isa/timing.h), for the widest bands. */
static uint64_t tile_estimate(const BkCtx *c, const BkLow *l, int64_t planes)
{
    Bands bd = bands_of(l);
    uint64_t bh = (uint64_t)max_band(bd.lo_h, bd.hi_h, l->kh, l->OH, l->mt);
    uint64_t bw = (uint64_t)max_band(bd.lo_w, bd.hi_w, l->kw, l->OW, l->nt);
    uint64_t mt = (uint64_t)l->mt, nt = (uint64_t)l->nt;
    uint64_t mm = (l->kh ? tim_mm_cycles(c->chip, ISA_F32, mt, bh, bw) : 0) + (l->kw ? tim_mm_cycles(c->chip, ISA_F32, mt, bw, nt) : 0);
    uint64_t bytes = bh * bw * c->es + (l->kh ? mt * bh * 4 : 0) + (l->kw ? bw * nt * 4 : 0) + mt * nt * c->es;
    uint64_t dma = tim_dma_cycles(c->chip, ISA_SPACE_LMEM, ISA_SPACE_DRAM, bytes);
    uint64_t ntiles = (uint64_t)planes * ((uint64_t)(l->OH + l->mt - 1) / mt) * ((uint64_t)(l->OW + l->nt - 1) / nt);
    uint64_t rounds = (ntiles + (uint64_t)c->ncores - 1) / (uint64_t)c->ncores;
    return rounds * (mm > dma ? mm : dma);
}

/* The cheapest output chunks (by tile_estimate) among the halvings of OH
 * and OW whose tile fits a slot; -1 if none does. */
static int choose_tile(const BkCtx *c, const BkLayer *ly, BkLow *l, int64_t planes)
{
    int bm = 0, bn = 0;
    uint64_t best = UINT64_MAX;
    for (int nt = l->OW;; nt = (nt + 1) / 2) {
        for (int mt = l->OH;; mt = (mt + 1) / 2) {
            l->mt = mt;
            l->nt = nt;
            if (layout(c, ly, l) == 0) {
                uint64_t est = tile_estimate(c, l, planes);
                if (est < best) { best = est; bm = mt; bn = nt; }
            }
            if (mt == 1) break;
        }
        if (nt == 1) break;
    }
    if (!bm) return -1;
    l->mt = bm;
    l->nt = bn;
    return layout(c, ly, l);
}

/* Fills the [out][in] f32 matrix (transposed when `transpose`), its bands
 * and outside flags for axis k; *ident = 1 when it is the identity. */
static int axis_matrix(BkCtx *c, int node, int k, int64_t in, int64_t out, int transpose, uint64_t *addr,
                       int32_t *lo, int32_t *hi, int32_t *outside, int *ident, double *extrap, AtlErr *e)
{
    double *m = malloc(sizeof *m * (size_t)(in * out + 1));
    uint8_t *of = malloc((size_t)out + 1);
    float *f = malloc(sizeof *f * (size_t)(in * out + 1));
    int rc = -1;
    if (!m || !of || !f) { bk_fail(c, node, e, "out of memory"); goto done; }
    if (resize_axis_matrix(c->g, node, k, m, of, extrap, e)) { bk_fail(c, node, e, "%s", e->msg); goto done; }
    *ident = in == out;
    for (int64_t o = 0; o < out; o++) {
        lo[o] = (int32_t)in;
        hi[o] = -1;
        outside[o] = of[o];
        if (of[o]) *ident = 0;
        for (int64_t i = 0; i < in; i++) {
            double w = m[o * in + i];
            if (w != 0) { if (i < lo[o]) lo[o] = (int32_t)i; hi[o] = (int32_t)i; }
            if (w != (o == i ? 1.0 : 0.0)) *ident = 0;
            f[transpose ? i * out + o : o * in + i] = (float)w;
        }
    }
    rc = addr ? bk_weight(c, f, sizeof *f * (size_t)(in * out), addr, e) : 0;
done:
    free(m); free(of); free(f);
    return rc;
}

int bk_lower_resize(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]], *y = &gr->t[nd->out[0]];
    BkLow *l = &ly->lw;
    int r = x->ndim;
    if (r < 1) return bk_fail(c, node, e, "a rank-0 Resize is not lowered");
    if (!ir_shape_known(y)) return bk_fail(c, node, e, "the output shape is unknown (scales/sizes must be constants)");
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    l->kind = BK_K_MOVE;
    ly->is_matrix = 1;
    int64_t planes = 1;
    double extrap = 0;
    for (int k = 0; k < r - 2; k++) {
        int64_t n = x->dims[k];
        int32_t *tmp = malloc(sizeof *tmp * (size_t)(3 * (n + 1)));
        int ident = 0;
        if (!tmp) return bk_fail(c, node, e, "out of memory");
        int rc = y->dims[k] != n ? 0 : axis_matrix(c, node, k, n, n, 0, NULL, tmp, tmp + n + 1, tmp + 2 * (n + 1), &ident, &extrap, e);
        free(tmp);
        if (rc) return -1;
        if (!ident)
            return bk_fail(c, node, e, "axis %d is resized (%lld -> %lld); interpolation is lowered on the last two axes only",
                           k, (long long)n, (long long)y->dims[k]);
        planes *= n;
    }
    l->N = (int)planes;
    l->H = r >= 2 ? (int)x->dims[r - 2] : 1;
    l->OH = r >= 2 ? (int)y->dims[r - 2] : 1;
    l->W = (int)x->dims[r - 1];
    l->OW = (int)y->dims[r - 1];
    if (planes == 0 || l->OH == 0 || l->OW == 0) return bk_fail(c, node, e, "an empty Resize is not lowered");
    if (l->H == 0 || l->W == 0) return bk_fail(c, node, e, "resizing an empty axis is not lowered");
    l->aux = calloc((size_t)(3 * (l->OH + l->OW)), sizeof *l->aux);
    if (!l->aux) return bk_fail(c, node, e, "out of memory");
    Bands bd = bands_of(l);
    int ident_h = 1, ident_w = 1;
    if (r >= 2 && axis_matrix(c, node, r - 2, l->H, l->OH, 0, &l->w, (int32_t *)bd.lo_h, (int32_t *)bd.hi_h,
                              (int32_t *)bd.out_h, &ident_h, &extrap, e))
        return -1;
    if (axis_matrix(c, node, r - 1, l->W, l->OW, 1, &l->b, (int32_t *)bd.lo_w, (int32_t *)bd.hi_w, (int32_t *)bd.out_w,
                    &ident_w, &extrap, e))
        return -1;
    l->kh = !ident_h;
    l->kw = !ident_w;
    l->act_alpha = (float)extrap;
    if (choose_tile(c, ly, l, planes)) return bk_fail(c, node, e, "one output element of a %d x %d plane does not fit a "
                                                      "%llu-byte LMEM slot", l->H, l->W, (unsigned long long)ly->slot_size);
    l->nmc = (l->OH + l->mt - 1) / l->mt;
    l->nnc = (l->OW + l->nt - 1) / l->nt;
    int64_t ntiles = planes * l->nmc * l->nnc;
    if (ntiles > (1 << 24)) return bk_fail(c, node, e, "%lld tiles is too many", (long long)ntiles);
    if (bk_set_tiles(ly, (int)ntiles, 1, e)) return -1;
    for (int64_t t = 0; t < ntiles; t++) ly->tile_wkey[t] = (int)(t / planes);
    ly->gen = resize_gen;
    uint64_t macs = 0;
    for (int o = 0; o < l->OH && l->kh; o++) macs += (uint64_t)(bd.hi_h[o] - bd.lo_h[o] + 1) * (uint64_t)l->W;
    for (int o = 0; o < l->OW && l->kw; o++) macs += (uint64_t)(bd.hi_w[o] - bd.lo_w[o] + 1) * (uint64_t)l->OH;
    ly->macs = macs * (uint64_t)planes;
    snprintf(ly->split, sizeof ly->split, "%s%s rows %d cols %d", l->kh ? "H" : "", l->kw ? "W" : "", l->mt, l->nt);
    return 0;
}

/* ---- the layer as a member of a layer group (lower/chain.c) ----------
 * Which input rows (columns) an output band reads is where the
 * interpreter's matrix has non-zero weights: for linear, the floor and
 * ceil of each output's mapped coordinate, per coordinate transformation
 * mode and clamped at the edges, exactly (cubic: its four taps). One
 * function, bk_resize_span, answers it for slice inference (lower/slice.c),
 * the group's slices and its checker. */

int bk_resize_interp(const BkLayer *ly) { return ly->gen == resize_gen; }

BkSpan bk_resize_span(const BkLow *l, int cols, int o0, int n)
{
    Bands bd = bands_of(l);
    BkSpan s = {0, 0, 0, 0};
    if (n > 0) band(cols ? bd.lo_w : bd.lo_h, cols ? bd.hi_w : bd.hi_h, cols ? l->kw : l->kh, o0, n, &s.a, &s.n);
    return s;
}

int bk_resize_member_ok(const BkLayer *ly)
{
    const BkLow *l = &ly->lw;
    if (!bk_resize_interp(ly) || (!l->kh && !l->kw)) return 0;
    Bands bd = bands_of(l);
    for (int o = 0; o < l->OH; o++) if (bd.out_h[o] || bd.hi_h[o] < bd.lo_h[o]) return 0;
    for (int o = 0; o < l->OW; o++) if (bd.out_w[o] || bd.hi_w[o] < bd.lo_w[o]) return 0;
    return 1;
}

void bk_resize_member_wmatrix(BkCode *k, const BkLow *l, uint64_t dst)
{
    uint32_t sh[4] = {1, 1, (uint32_t)l->OW, (uint32_t)l->W};
    int64_t ds[4], ss[4] = {0, 0, 1, l->OW};   /* R_w^T [W][OW] read transposed */
    bk_compact(sh, ds);
    AtlInsn in = bk_dma(ISA_F32, ISA_SPACE_LMEM, dst, ISA_SPACE_DRAM, l->b, sh, ds, ss);
    bk_code_st(k, &in);
}

void bk_resize_member_code(BkCode *k, const BkLow *l, int C, uint64_t y, int o0, int n, uint64_t x, int xlo,
                           uint64_t rw, uint64_t rh, uint64_t t)
{
    Bands bd = bands_of(l);
    int lh, bh;
    band(bd.lo_h, bd.hi_h, l->kh, o0, n, &lh, &bh);
    uint64_t irow = (uint64_t)l->W * C * 4, orow = (uint64_t)l->OW * C * 4;
    uint64_t cur = x + (uint64_t)(lh - xlo) * irow;
    AtlInsn in;
    if (l->kh) {   /* T = R_h[rows][band] x X[band][W x C], the block loaded as the layer's tiles load it */
        uint32_t sh[4] = {1, 1, (uint32_t)n, (uint32_t)bh};
        int64_t ds[4], ss[4] = {0, 0, l->H, 1};
        bk_compact(sh, ds);
        in = bk_dma(ISA_F32, ISA_SPACE_LMEM, rh, ISA_SPACE_DRAM, l->w + ((uint64_t)o0 * l->H + (uint64_t)lh) * 4, sh, ds, ss);
        bk_code_ld(k, &in, 0);
        uint64_t dst = l->kw ? t : y;
        in = mm_f32(dst, rh, cur, n, bh, l->W * C);
        bk_code_cp(k, &in);
        cur = dst;
    }
    for (int i = 0; i < n && l->kw; i++) {   /* each row: Y[OW][C] = R_w[OW][W] x T[W][C] */
        in = mm_f32(y + (uint64_t)i * orow, rw, cur + (uint64_t)i * irow, l->OW, l->W, C);
        bk_code_cp(k, &in);
    }
}
