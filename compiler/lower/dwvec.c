/* dwvec.c - a depthwise float convolution's tile on the vector unit.
 *
 * Why: the matrix unit's `conv` runs a depthwise convolution one channel a
 *   fold (k = kh kw, n = 1 of the array's 32 x 32), and every fold pays the
 *   array's fill and drain (R + C - 2 rows) on top of its m output pixels,
 *   at the f32 rate. A tile of few output pixels (a row band of a small
 *   image: MobileNetV2's blocks at 12 x 12 and below on 4 clusters) then
 *   costs several times its MACs, so the tile search gave its depthwise
 *   convolutions channel bands between row-banded 1x1 convolutions, and
 *   each inverted-residual block moved its expanded tensor through DRAM
 *   twice to change the band kind (docs/backend.md, "Depthwise
 *   convolutions on the vector unit"). On the vector unit the same tile is
 *   kh x kw multiplies by a per-channel weight vector and kh x kw - 1 adds
 *   over its output block, each ceil(pixels x channels / lanes) cycles:
 *   cheap at any band kind.
 * Reads: a conv tile whose groups == C == OC (one input and one output
 *   channel a group), f32, bf16 or f16 (lower/conv.c) or an int8
 *   Int8Conv's (lower/qmatrix.c), weights a [kh][kw][1][OC] image, one k
 *   chunk.
 * Does: the tile's input block goes to LMEM as HWC with every pixel at a
 *   multiple of the LMEM alignment (a pixel stride of `pix` elements >=
 *   its channels) and the window's padding stored as zero rows and
 *   columns around it (dma.fill, queued as loads of the tile), so that
 *   tap (i, j) of every output pixel is one strided 4-D operand at an
 *   aligned address (vector operands start on lmem.alignment); the
 *   weights get a tap stride of `pix` elements the same way. In bf16 and
 *   f16 both are loaded as they are stored and cast to f32 (exact) into
 *   those layouts first: a product of two 16-bit floats is exact in f32,
 *   as in the matrix unit, so only the sums round. Then tap 0
 *   v.mul into the f32 accumulator, every later tap (kh then kw, the
 *   matrix unit's order) v.mul into a temp and v.add into the
 *   accumulator. The caller's epilogue (bias, activation, residual,
 *   store) follows as for the matrix unit's accumulator. int8: the block
 *   and the weights are loaded as i8, the padding filled with x's zero
 *   point (the `conv` pads with it; the folded bias takes z' x sum w
 *   out), both cast to i32, and the taps are i32 v.mul / v.add: exact,
 *   the matrix unit's i32 sums bit for bit.
 * Guarantees: each output sums x w over its window in the order the
 *   matrix unit does, padding taps adding 0 x w; a product is rounded to
 *   f32 before its add (the interpreter's and the matrix unit's f32 sums
 *   differ from it by rounding only, within atoll compare's f32 tolerance). */
#include <string.h>
#include "compiler/lower/lower.h"

int bk_dw_vector_ok(const BkCtx *c, const BkLow *l)
{
    int fl = l->dt == c->dt && (c->dt == ISA_F32 || c->dt == ISA_BF16 || c->dt == ISA_F16);
    /* int8: an int8 x (no uint8 shift) and an int8 output, a conv's tiles */
    int q8 = l->dt == ISA_I8 && l->xdt == ISA_I8 && !l->q_mm;
    return c->grouping && !c->dw_matrix && l->kind == BK_K_CONV && l->groups > 1 && l->groups == l->C &&
           l->groups == l->OC && (fl || q8) && !l->w_oihw && !l->kb_parts &&
           !l->compact && l->nb <= 1 && l->nkc == 1;
}

/* The accumulator's dtype: i32 for int8, f32 for the floats. */
static int acc_dt(const BkLow *l) { return l->dt == ISA_I8 ? ISA_I32 : ISA_F32; }

int bk_dw_pix(const BkCtx *c, int n)
{
    int per = c->chip->lmem_alignment / 4;
    if (per < 1) per = 1;
    return (n + per - 1) / per * per;
}

/* Rows (or columns) of the padded input block of `on` outputs. */
static int padded(int on, int s, int d, int k) { return (on - 1) * s + d * (k - 1) + 1; }

uint64_t bk_dw_in_bytes(const BkCtx *c, const BkLow *l)
{
    return (uint64_t)padded(l->rows, l->sh, l->dh, l->kh) * (uint64_t)padded(l->cols, l->sw, l->dw, l->kw) *
           (uint64_t)bk_dw_pix(c, l->gchunk) * 4;
}

uint64_t bk_dw_w_bytes(const BkCtx *c, const BkLow *l)
{
    return (uint64_t)l->kh * l->kw * (uint64_t)bk_dw_pix(c, l->gchunk) * 4;
}

/* dma.fill of rows [r0, r0 + rn) x columns [w0, w0 + wn) of the padded
 * block (wp columns, pixel stride pix) with zeros. */
static void zero_box(BkCode *k, int dt, int32_t fill, uint64_t lin, int wp, int pix, int r0, int rn, int w0, int wn)
{
    if (rn <= 0 || wn <= 0) return;
    uint32_t sh[4] = {1, (uint32_t)rn, (uint32_t)wn, (uint32_t)pix};
    int64_t ds[4] = {0, (int64_t)wp * pix, pix, 1}, zero[4] = {0, 0, 0, 0};
    uint64_t at = lin + ((uint64_t)r0 * wp + (uint64_t)w0) * pix * (uint64_t)isa_dtype_size(dt);
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, at, 0, 0, sh, ds, zero);
    in.op = ISA_OP_DMA_FILL;
    in.ival = fill;
    bk_code_ld(k, &in, 0);
}

void bk_dw_input(const BkCtx *c, const BkLow *l, BkCode *k, AtlInsn *in, uint64_t lin, BkSpan ys, BkSpan xs, int cn)
{
    int pix = bk_dw_pix(c, cn), hp = ys.pa + ys.n + ys.pb, wp = xs.pa + xs.n + xs.pb, es = l->es;
    /* the NCHW box walked (image, row, channel, column) as bk_nchw_boxes
     * does, into rows of wp pixels of pix elements (of the storage dtype) */
    in->dst = lin + ((uint64_t)ys.pa * wp + (uint64_t)xs.pa) * pix * (uint64_t)es;
    in->dst_stride[0] = 0;
    in->dst_stride[1] = (int32_t)((int64_t)wp * pix * es);
    in->dst_stride[2] = es;
    in->dst_stride[3] = (int32_t)(pix * es);
    bk_code_ld(k, in, 0);
    /* int8: the padding holds x's zero point, as the `conv` pads (its
     * products are taken out by the folded bias, lower/qmatrix.c) */
    int32_t fill = l->dt == ISA_I8 ? l->q_xz : 0;
    zero_box(k, l->dt, fill, lin, wp, pix, 0, ys.pa, 0, wp);
    zero_box(k, l->dt, fill, lin, wp, pix, ys.pa + ys.n, hp - ys.pa - ys.n, 0, wp);
    zero_box(k, l->dt, fill, lin, wp, pix, ys.pa, ys.n, 0, xs.pa);
    zero_box(k, l->dt, fill, lin, wp, pix, ys.pa, ys.n, xs.pa + xs.n, wp - xs.pa - xs.n);
}

void bk_dw_weight_strides(const BkCtx *c, AtlInsn *in, int ocn)
{
    /* [kh kw][ocn] with a tap stride of pix elements (shape (1, 1, taps, ocn)) */
    in->dst_stride[2] = (int32_t)(bk_dw_pix(c, ocn) * 4);
}

/* v.cast of shape sh from the storage dtype dt at src (element strides ss)
 * to the accumulator's dtype ot at dst (element strides ds). */
static void cast_acc(BkCode *k, int dt, int ot, uint64_t dst, uint64_t src, const uint32_t sh[4], const int64_t ds[4],
                     const int64_t ss[4])
{
    AtlInsn in = bk_vun(ISA_OP_V_CAST, dt, dst, src, sh, ds, ss, 0, 0);
    in.otype = (uint8_t)ot;
    bk_code_cp(k, &in);
}

void bk_dw_taps(const BkCtx *c, const BkLow *l, BkCode *k, uint64_t slot, uint64_t acc, BkSpan ys, BkSpan xs, int rn,
                int wn, int cn)
{
    int pix = bk_dw_pix(c, cn), wp = xs.pa + xs.n + xs.pb, hp = ys.pa + ys.n + ys.pb;
    uint64_t lin = slot + l->l_in, lw = slot + l->l_w, tmp = slot + l->l_tmp;
    int at = acc_dt(l);
    if (l->l_dwx) {
        /* 16-bit: the padded block's channels and the weights to f32; int8: to i32 */
        uint32_t bs[4] = {1, (uint32_t)hp, (uint32_t)wp, (uint32_t)cn}, wsh[4] = {1, 1, (uint32_t)(l->kh * l->kw), (uint32_t)cn};
        int64_t bst[4] = {0, (int64_t)wp * pix, pix, 1}, wst[4] = {0, 0, pix, 1}, wsrc[4] = {0, 0, cn, 1};
        cast_acc(k, l->dt, at, lin, slot + l->l_dwx, bs, bst, bst);
        cast_acc(k, l->dt, at, lw, slot + l->l_dww, wsh, wst, wsrc);
    }
    uint32_t sh[4] = {1, (uint32_t)rn, (uint32_t)wn, (uint32_t)cn};
    int64_t ds[4], ss[4] = {0, (int64_t)l->sh * wp * pix, (int64_t)l->sw * pix, 1}, sw[4] = {0, 0, 0, 1};
    bk_compact(sh, ds);
    for (int i = 0; i < l->kh; i++)
        for (int j = 0; j < l->kw; j++) {
            int t = i * l->kw + j;
            uint64_t src = lin + ((uint64_t)i * l->dh * wp + (uint64_t)j * l->dw) * pix * 4;
            uint64_t w = lw + (uint64_t)t * bk_dw_pix(c, cn) * 4;
            AtlInsn in = bk_vbin(ISA_OP_V_MUL, at, t ? tmp : acc, src, w, sh, ds, ss, sw);
            bk_code_cp(k, &in);
            if (!t) continue;
            in = bk_vbin(ISA_OP_V_ADD, at, acc, acc, tmp, sh, ds, ds, ds);
            bk_code_cp(k, &in);
        }
}

/* ---- inside a layer group (lower/chain.c) ----
 * A chain's row buffers are packed [rows][columns][C] without the
 * window's padding and with a pixel stride of C, so there each tap runs
 * over the output box whose inputs lie inside the buffer (the padding
 * taps, which add 0 x w, are skipped). Taps go in the matrix unit's
 * order (kh then kw); an output's first tap inside the buffer is a v.mul
 * into the accumulator and its later ones v.mul into a temp and v.add,
 * so each output's sum is the standalone path's (which starts from the
 * padding's 0 x w) but for the sign of a zero sum: the placements of a
 * model give the same bits with or without the group. The centre tap
 * must cover every output ("same" padding, checked by bk_dw_chain_ok);
 * every operand starts a whole pixel into an aligned buffer, so C x 4
 * bytes must be a multiple of the alignment. */

int bk_dw_chain_ok(const BkCtx *c, const BkLow *l)
{
    return c->grouping && !c->dw_matrix && l->kind == BK_K_CONV && l->dt == ISA_F32 && l->groups > 1 &&
           l->groups == l->C && l->groups == l->OC && !l->w_oihw && (uint64_t)l->C * 4 % c->align == 0 &&
           l->kh % 2 && l->kw % 2 && l->pt == l->dh * (l->kh / 2) && l->pl == l->dw * (l->kw / 2) && l->pb <= l->pt &&
           l->pr <= l->pl;
}

/* The outputs [lo, hi) of n whose tap at offset `off` (i d) reads inside
 * the span s (its first input at s.pa into the padded window). */
static void tap_range(BkSpan s, int stride, int off, int n, int *lo, int *hi)
{
    int a = s.pa - off, b = s.n - 1 + s.pa - off;   /* o stride in [a, b] */
    *lo = a <= 0 ? 0 : (a + stride - 1) / stride;
    *hi = b < 0 ? 0 : b / stride + 1;
    if (*hi > n) *hi = n;
    if (*lo > *hi) *lo = *hi;
}

/* The first tap offset index (0 .. k-1, i d apart) whose span reads output o:
 * its first inside tap along one dimension; k when none does. */
static int first_tap(BkSpan s, int stride, int d, int k, int n, int o)
{
    for (int i = 0; i < k; i++) {
        int lo, hi;
        tap_range(s, stride, i * d, n, &lo, &hi);
        if (o >= lo && o < hi) return i;
    }
    return k;
}

/* The end of the run of outputs from o (below hi) whose first tap is
 * (== i) as o's is. */
static int run_end(BkSpan s, int stride, int d, int k, int n, int i, int o, int hi)
{
    int first = first_tap(s, stride, d, k, n, o) == i;
    while (++o < hi && (first_tap(s, stride, d, k, n, o) == i) == first) {}
    return o;
}

int bk_dw_chain_taps(const BkLow *l, BkCode *k, uint64_t src, BkSpan ys, BkSpan xs, uint64_t w, uint64_t acc,
                     uint64_t tmp, int on, int ow)
{
    return bk_dw_chain_taps_band(l, k, src, ys, xs, w, l->C, acc, tmp, on, ow);
}

int bk_dw_chain_taps_band(const BkLow *l, BkCode *k, uint64_t src, BkSpan ys, BkSpan xs, uint64_t w, int C,
                          uint64_t acc, uint64_t tmp, int on, int ow)
{
    int ic = l->kh / 2, jc = l->kw / 2;
    int r0, r1, c0, c1;
    tap_range(ys, l->sh, ic * l->dh, on, &r0, &r1);
    tap_range(xs, l->sw, jc * l->dw, ow, &c0, &c1);
    if (r0 || r1 != on || c0 || c1 != ow) return -1;
    for (int i = 0; i < l->kh; i++)
        for (int j = 0; j < l->kw; j++) {
            tap_range(ys, l->sh, i * l->dh, on, &r0, &r1);
            tap_range(xs, l->sw, j * l->dw, ow, &c0, &c1);
            for (int ra = r0, rb; ra < r1; ra = rb) {
                rb = run_end(ys, l->sh, l->dh, l->kh, on, i, ra, r1);
                int row_first = first_tap(ys, l->sh, l->dh, l->kh, on, ra) == i;
                for (int ca = c0, cb; ca < c1; ca = cb) {
                    cb = run_end(xs, l->sw, l->dw, l->kw, ow, j, ca, c1);
                    int first = row_first && first_tap(xs, l->sw, l->dw, l->kw, ow, ca) == j;
                    uint32_t sh[4] = {1, (uint32_t)(rb - ra), (uint32_t)(cb - ca), (uint32_t)C};
                    int64_t ds[4] = {0, (int64_t)ow * C, C, 1}, sw[4] = {0, 0, 0, 1};
                    int64_t ss[4] = {0, (int64_t)l->sh * xs.n * C, (int64_t)l->sw * C, 1};
                    uint64_t out = ((uint64_t)ra * ow + (uint64_t)ca) * (uint64_t)C * 4;
                    uint64_t in = (((uint64_t)(ra * l->sh + i * l->dh - ys.pa) * (uint64_t)xs.n) +
                                   (uint64_t)(ca * l->sw + j * l->dw - xs.pa)) * (uint64_t)C * 4;
                    uint64_t wt = w + (uint64_t)(i * l->kw + j) * (uint64_t)l->C * 4;   /* a tap's weights: l->C apart */
                    AtlInsn v = bk_vbin(ISA_OP_V_MUL, ISA_F32, (first ? acc : tmp) + out, src + in, wt, sh, ds, ss, sw);
                    bk_code_cp(k, &v);
                    if (first) continue;
                    v = bk_vbin(ISA_OP_V_ADD, ISA_F32, acc + out, acc + out, tmp + out, sh, ds, ds, ds);
                    bk_code_cp(k, &v);
                }
            }
        }
    return 0;
}
