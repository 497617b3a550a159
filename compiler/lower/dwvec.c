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
 *   channel a group), f32, bf16 or f16, weights a [kh][kw][1][OC] image,
 *   one k chunk.
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
 *   store) follows as for the matrix unit's accumulator.
 * Guarantees: each output sums x w over its window in the order the
 *   matrix unit does, padding taps adding 0 x w; a product is rounded to
 *   f32 before its add (the interpreter's and the matrix unit's f32 sums
 *   differ from it by rounding only, within atoll compare's f32 tolerance). */
#include <string.h>
#include "compiler/lower/lower.h"

int bk_dw_vector_ok(const BkCtx *c, const BkLow *l)
{
    return c->grouping && !c->dw_matrix && l->kind == BK_K_CONV && l->groups > 1 && l->groups == l->C &&
           l->groups == l->OC && l->dt == c->dt && (c->dt == ISA_F32 || c->dt == ISA_BF16 || c->dt == ISA_F16) &&
           !l->w_oihw && !l->kb_parts &&
           !l->compact && l->nb <= 1 && l->nkc == 1;
}

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
static void zero_box(BkCode *k, int dt, uint64_t lin, int wp, int pix, int r0, int rn, int w0, int wn)
{
    if (rn <= 0 || wn <= 0) return;
    uint32_t sh[4] = {1, (uint32_t)rn, (uint32_t)wn, (uint32_t)pix};
    int64_t ds[4] = {0, (int64_t)wp * pix, pix, 1}, zero[4] = {0, 0, 0, 0};
    uint64_t at = lin + ((uint64_t)r0 * wp + (uint64_t)w0) * pix * (uint64_t)isa_dtype_size(dt);
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, at, 0, 0, sh, ds, zero);
    in.op = ISA_OP_DMA_FILL;
    in.ival = 0;
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
    zero_box(k, l->dt, lin, wp, pix, 0, ys.pa, 0, wp);
    zero_box(k, l->dt, lin, wp, pix, ys.pa + ys.n, hp - ys.pa - ys.n, 0, wp);
    zero_box(k, l->dt, lin, wp, pix, ys.pa, ys.n, 0, xs.pa);
    zero_box(k, l->dt, lin, wp, pix, ys.pa, ys.n, xs.pa + xs.n, wp - xs.pa - xs.n);
}

void bk_dw_weight_strides(const BkCtx *c, AtlInsn *in, int ocn)
{
    /* [kh kw][ocn] with a tap stride of pix elements (shape (1, 1, taps, ocn)) */
    in->dst_stride[2] = (int32_t)(bk_dw_pix(c, ocn) * 4);
}

/* v.cast of shape sh from the storage dtype dt at src (element strides ss)
 * to f32 at dst (element strides ds). */
static void cast_f32(BkCode *k, int dt, uint64_t dst, uint64_t src, const uint32_t sh[4], const int64_t ds[4],
                     const int64_t ss[4])
{
    AtlInsn in = bk_vun(ISA_OP_V_CAST, dt, dst, src, sh, ds, ss, 0, 0);
    in.otype = ISA_F32;
    bk_code_cp(k, &in);
}

void bk_dw_taps(const BkCtx *c, const BkLow *l, BkCode *k, uint64_t slot, uint64_t acc, BkSpan ys, BkSpan xs, int rn,
                int wn, int cn)
{
    int pix = bk_dw_pix(c, cn), wp = xs.pa + xs.n + xs.pb, hp = ys.pa + ys.n + ys.pb;
    uint64_t lin = slot + l->l_in, lw = slot + l->l_w, tmp = slot + l->l_tmp;
    if (l->l_dwx) {
        /* 16-bit: the padded block's channels and the weights to f32 */
        uint32_t bs[4] = {1, (uint32_t)hp, (uint32_t)wp, (uint32_t)cn}, wsh[4] = {1, 1, (uint32_t)(l->kh * l->kw), (uint32_t)cn};
        int64_t bst[4] = {0, (int64_t)wp * pix, pix, 1}, wst[4] = {0, 0, pix, 1}, wsrc[4] = {0, 0, cn, 1};
        cast_f32(k, l->dt, lin, slot + l->l_dwx, bs, bst, bst);
        cast_f32(k, l->dt, lw, slot + l->l_dww, wsh, wst, wsrc);
    }
    uint32_t sh[4] = {1, (uint32_t)rn, (uint32_t)wn, (uint32_t)cn};
    int64_t ds[4], ss[4] = {0, (int64_t)l->sh * wp * pix, (int64_t)l->sw * pix, 1}, sw[4] = {0, 0, 0, 1};
    bk_compact(sh, ds);
    for (int i = 0; i < l->kh; i++)
        for (int j = 0; j < l->kw; j++) {
            int t = i * l->kw + j;
            uint64_t src = lin + ((uint64_t)i * l->dh * wp + (uint64_t)j * l->dw) * pix * 4;
            uint64_t w = lw + (uint64_t)t * bk_dw_pix(c, cn) * 4;
            AtlInsn in = bk_vbin(ISA_OP_V_MUL, ISA_F32, t ? tmp : acc, src, w, sh, ds, ss, sw);
            bk_code_cp(k, &in);
            if (!t) continue;
            in = bk_vbin(ISA_OP_V_ADD, ISA_F32, acc, acc, tmp, sh, ds, ds, ds);
            bk_code_cp(k, &in);
        }
}
