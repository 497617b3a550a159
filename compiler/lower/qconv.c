/* qconv.c - ConvInteger and QLinearConv on the matrix unit's i8
 * `conv`, exact against the reference interpreter (ops/nn.c). Those with
 * constant weights whose zero point is 0 go to lower/qmatrix.c (tiled
 * over channels and K); this file keeps the others (computed weights, a
 * weight zero point) on one tile shape: every channel, K whole.
 *
 * Reads: 2-D NCHW, group 1, explicit pads (or none), strides, dilations;
 *   x and w int8 or uint8 (w constant or computed), x's zero point a
 *   constant of one value, w's a constant per tensor or per output channel
 *   (absent: 0); QLinearConv's scales constants (x_scale, y_scale one
 *   value, w_scale one or one per output channel), its int32 bias
 *   constant or computed.
 * Tiles: (image, output row chunk) with every channel and the whole width;
 *   the rows a chunk reads are clipped to the image and the rest becomes
 *   the instruction's top / bottom padding (the node's left / right pads
 *   stay). A tile loads its input rows NCHW -> HWC and the weights OIHW ->
 *   [kh][kw][C][OC] by one strided DMA each. uint8 operands become i8 by subtracting 128 (v.affine
 *   in i16, v.cast), folded into their zero points: xz' = xz - 128,
 *   wz' = wz - 128. The `conv` pads with xz' (its `value`), so a padded
 *   position reads as the zero point, as the reference's zero-padded
 *   x - xz does. With KK = kh kw C and sums over each window:
 *     sum (x - xz)(w - wz) = S - wz' S1 - xz' (sum w - KK wz')
 *   where S = conv(x', w') and S1 = conv(x', ones) (a second `conv` with
 *   one output channel: the window sums, padding included as xz'; only
 *   when some wz' is not 0). Why a second conv and not a ones channel
 *   appended to w: that channel's sums would sit at an unaligned LMEM
 *   offset, and vector operands must be aligned. The weight
 *   sums are one v.rsum of the weight block. Corrections are i32 v.mul /
 *   v.affine / v.sub with stride-0 broadcasts; a zero point that is 0
 *   skips its term. Every term stays below 2^31 for KK <= 32767 (checked).
 *   The same reasoning as lower/quant.c: a - zp spans -255..255, so
 *   subtracting first would leave the i8 path.
 * QLinearConv then adds the bias (i32), v.cast to f32 (exact below 2^24:
 *   the reference rounds (acc + bias) * multiplier from the exact value,
 *   so a larger |acc + bias| may differ by one rounding), v.mul by the f32
 *   multiplier (float)(sx sw[oc] / sy) per output channel (one f32
 *   rounding), then the quantising tail (bk_q_tail). Stores HWC -> NCHW. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/lower/quant.h"

static int imin(int a, int b) { return a < b ? a : b; }

/* registers: x as loaded and as i8, w as loaded and as i8, the i8 ones
 * and the window sums, the i32 sums, an i32 scratch, the f32 block and
 * output of the requantisation, the weight sums, per-channel vectors: w's
 * zero point, KK x it, the bias, the multipliers */
enum { C_XRAW, C_X8, C_WRAW, C_W8, C_ONES, C_S1, C_ACC, C_TMP, C_F, C_Y, C_WS, C_WZ, C_KWZ, C_BIAS, C_MULT, C_NREGS };

/* The input rows (HWC, i8 at the returned address), the weights (i8 at
 * r[C_W8]) and, for the window sums, the ones of one tile. */
static uint64_t load_operands(const BkLow *l, int n, const BkSpan *s, const uint64_t *r, BkCode *k)
{
    int C = l->C, OC = l->OC, KK = l->kh * l->kw * C;
    uint32_t xsh[4] = {1, (uint32_t)s->n, (uint32_t)C, (uint32_t)l->W};
    int64_t xss[4] = {0, l->W, (int64_t)l->H * l->W, 1}, xds[4] = {0, (int64_t)l->W * C, 1, C};
    uint64_t src = l->x + (((uint64_t)n * C * l->H + (uint64_t)s->a) * l->W) * (uint64_t)l->xes;
    AtlInsn in = bk_dma(l->xdt, ISA_SPACE_LMEM, r[C_XRAW], ISA_SPACE_DRAM, src, xsh, xds, xss);
    bk_code_ld(k, &in, 0);
    /* OIHW -> [kh][kw][C][OC] */
    uint32_t wsh[4] = {(uint32_t)l->kh, (uint32_t)l->kw, (uint32_t)C, (uint32_t)OC};
    int64_t wss[4] = {l->kw, 1, (int64_t)l->kh * l->kw, (int64_t)C * l->kh * l->kw}, wcs[4];
    bk_compact(wsh, wcs);
    in = bk_dma(l->q_bdt, ISA_SPACE_LMEM, l->q_bdt == ISA_I8 ? r[C_W8] : r[C_WRAW], ISA_SPACE_DRAM, l->w, wsh, wcs, wss);
    bk_code_ld(k, &in, 0);
    bk_q_to_i8(k, l->q_bdt, r[C_WRAW], r[C_W8], wsh, wcs, wcs);
    if (l->q_zb) {
        uint32_t osh[4] = {1, 1, 1, (uint32_t)KK};
        int64_t ocs[4];
        bk_compact(osh, ocs);
        in = bk_dma(ISA_I8, ISA_SPACE_LMEM, r[C_ONES], ISA_SPACE_DRAM, l->q_ones, osh, ocs, ocs);
        bk_code_ld(k, &in, 0);
    }
    uint32_t hsh[4] = {1, (uint32_t)s->n, (uint32_t)l->W, (uint32_t)C};
    int64_t hcs[4];
    bk_compact(hsh, hcs);
    return bk_q_to_i8(k, l->xdt, r[C_XRAW], r[C_X8], hsh, hcs, hcs);
}

static int qconv_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    int n = t / l->nrc, r0 = t % l->nrc * l->rows, rn = imin(l->rows, l->OH - r0);
    BkSpan s = bk_window_span(r0, rn, l->sh, l->pt, l->dh, l->kh, l->H);
    if (s.n <= 0 || s.pa > 63 || s.pb > 63)
        return bk_fail(c, ly->node, e, "output rows %d..%d read no input (padding too large)", r0, r0 + rn - 1);
    int OC = l->OC, KK = l->kh * l->kw * l->C;
    uint64_t r[C_NREGS];
    for (int i = 0; i < C_NREGS; i++) r[i] = slot + l->l_reg[i];
    if (l->q_zb) {
        bk_q_load_vec(k, ISA_I32, r[C_WZ], l->q_zb, OC);
        bk_q_load_vec(k, ISA_I32, r[C_KWZ], l->q_kzb, OC);
    }
    if (l->q_bias) bk_q_load_vec(k, ISA_I32, r[C_BIAS], l->q_bias, OC);
    if (l->q_tail) bk_q_load_vec(k, ISA_F32, r[C_MULT], l->q_mults, OC);
    uint64_t x8 = load_operands(l, n, &s, r, k);
    AtlInsn op;
    memset(&op, 0, sizeof op);
    op.op = ISA_OP_CONV;
    op.dtype = ISA_I8;
    op.dst = r[C_ACC];
    op.src = x8;
    op.src2 = r[C_W8];
    op.cin = (uint32_t)l->C; op.ih = (uint32_t)s.n; op.iw = (uint32_t)l->W; op.cout = (uint32_t)OC;
    op.kh = (uint8_t)l->kh; op.kw = (uint8_t)l->kw; op.sh = (uint8_t)l->sh; op.sw = (uint8_t)l->sw;
    op.dh = (uint8_t)l->dh; op.dw = (uint8_t)l->dw;
    op.pad_top = (uint8_t)s.pa; op.pad_bottom = (uint8_t)s.pb;
    op.pad_left = (uint8_t)l->pl; op.pad_right = (uint8_t)l->pr;
    op.groups = 1;
    op.ival = l->q_xz;
    bk_code_cp(k, &op);
    uint32_t osh[4] = {1, (uint32_t)rn, (uint32_t)l->OW, (uint32_t)OC}, wsum[4] = {1, 1, (uint32_t)KK, (uint32_t)OC};
    uint32_t csh[4] = {1, 1, 1, (uint32_t)OC};
    int64_t ocs[4], ccs[4], chan[4] = {0, 0, 0, 1}, s1[4] = {0, l->OW, 1, 0};
    bk_compact(osh, ocs);
    bk_compact(csh, ccs);
    AtlInsn in;
    if (l->q_zb) {   /* - wz' x the window sums: conv(x', ones) */
        op.dst = r[C_S1];
        op.src2 = r[C_ONES];
        op.cout = 1;
        bk_code_cp(k, &op);
        bk_q_sub_outer(k, r[C_ACC], r[C_TMP], r[C_S1], s1, r[C_WZ], chan, osh, ocs);
    }
    if (l->q_xz) {   /* - xz' (sum w - KK wz') per channel */
        bk_q_reduce(k, ISA_OP_V_RSUM, ISA_I8, ISA_I32, r[C_WS], r[C_W8], wsum, 2);
        if (l->q_zb) {
            in = bk_vbin(ISA_OP_V_SUB, ISA_I32, r[C_WS], r[C_WS], r[C_KWZ], csh, ccs, ccs, ccs);
            bk_code_cp(k, &in);
        }
        in = bk_vun(ISA_OP_V_AFFINE, ISA_I32, r[C_WS], r[C_WS], csh, ccs, ccs, (float)l->q_xz, 0.0f);
        bk_code_cp(k, &in);
        in = bk_vbin(ISA_OP_V_SUB, ISA_I32, r[C_ACC], r[C_ACC], r[C_WS], osh, ocs, ocs, chan);
        bk_code_cp(k, &in);
    }
    if (l->q_bias) {
        in = bk_vbin(ISA_OP_V_ADD, ISA_I32, r[C_ACC], r[C_ACC], r[C_BIAS], osh, ocs, ocs, chan);
        bk_code_cp(k, &in);
    }
    uint64_t res = r[C_ACC];
    if (l->q_tail) {
        bk_q_requant(k, l, r[C_ACC], r[C_F], r[C_MULT], chan, r[C_Y], osh, ocs);
        res = r[C_Y];
    }
    /* HWC -> NCHW */
    uint32_t ssh[4] = {1, (uint32_t)OC, (uint32_t)rn, (uint32_t)l->OW};
    int64_t sss[4] = {0, 1, (int64_t)l->OW * OC, OC}, sds[4] = {0, (int64_t)l->OH * l->OW, l->OW, 1};
    uint64_t dst = l->y + (((uint64_t)n * OC * l->OH + (uint64_t)r0) * l->OW) * (uint64_t)l->es;
    in = bk_dma(l->dt, ISA_SPACE_DRAM, dst, ISA_SPACE_LMEM, res, ssh, sds, sss);
    bk_code_st(k, &in);
    return 0;
}

/* Slot layout for l->rows output rows; 0 if it fits. */
static int qconv_plan(const BkCtx *c, BkLayer *ly)
{
    BkLow *l = &ly->lw;
    uint64_t h = (uint64_t)(l->rows - 1) * l->sh + (uint64_t)l->dh * (l->kh - 1) + 1;
    if (h > (uint64_t)l->H) h = (uint64_t)l->H;
    uint64_t in = h * l->W * l->C, KK = (uint64_t)l->kh * l->kw * l->C, OC = (uint64_t)l->OC;
    uint64_t pos = (uint64_t)l->rows * l->OW, out = pos * OC, used = 0;
    const uint64_t bytes[C_NREGS] = {
        in * (uint64_t)l->xes, l->xdt == ISA_I8 ? 0 : in, l->q_bdt == ISA_I8 ? 0 : KK * OC * 2, KK * OC,
        l->q_zb ? KK : 0, l->q_zb ? pos * 4 : 0, out * 4, out * 4, l->q_tail ? out * 4 : 0,
        l->q_tail ? out * (uint64_t)l->es : 0, OC * 4, OC * 4, OC * 4, OC * 4, OC * 4};
    for (int i = 0; i < C_NREGS; i++) l->l_reg[i] = bk_slot_alloc(c, &used, bytes[i]);
    l->nrc = (l->OH + l->rows - 1) / l->rows;
    return used <= ly->slot_size ? 0 : -1;
}

/* Kernel, strides, dilations and pads from the node (2-D, explicit pads),
 * checked against the inferred output and the conv instruction's fields. */
static int qconv_geometry(BkCtx *c, int node, BkLow *l, const IrTensor *x, const IrTensor *w, const IrTensor *y,
                          AtlErr *e)
{
    const IrNode *nd = &c->g->nodes[node];
    if (x->ndim != 4 || w->ndim != 4 || y->ndim != 4)
        return bk_fail(c, node, e, "only 2-D (NCHW) integer convolutions are lowered");
    if (ir_attr_int(nd, "group", 1) != 1) return bk_fail(c, node, e, "grouped integer convolutions are not lowered");
    const char *ap = ir_attr_str(nd, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) return bk_fail(c, node, e, "auto_pad %s is not lowered", ap);
    l->N = (int)x->dims[0]; l->C = (int)x->dims[1]; l->H = (int)x->dims[2]; l->W = (int)x->dims[3];
    l->OC = (int)y->dims[1]; l->OH = (int)y->dims[2]; l->OW = (int)y->dims[3];
    l->kh = (int)w->dims[2]; l->kw = (int)w->dims[3];
    const IrAttr *st = ir_attr(nd, "strides"), *di = ir_attr(nd, "dilations"), *pd = ir_attr(nd, "pads");
    l->sh = st && st->n == 2 ? (int)st->ints[0] : 1; l->sw = st && st->n == 2 ? (int)st->ints[1] : 1;
    l->dh = di && di->n == 2 ? (int)di->ints[0] : 1; l->dw = di && di->n == 2 ? (int)di->ints[1] : 1;
    l->pt = l->pl = l->pb = l->pr = 0;
    if (pd && pd->n == 4) { l->pt = (int)pd->ints[0]; l->pl = (int)pd->ints[1]; l->pb = (int)pd->ints[2]; l->pr = (int)pd->ints[3]; }
    if (l->kh < 1 || l->kw < 1 || l->kh > 255 || l->kw > 255 || l->sh < 1 || l->sw < 1 || l->sh > 63 || l->sw > 63 ||
        l->dh < 1 || l->dw < 1 || l->dh > 63 || l->dw > 63 || l->pl > 63 || l->pr > 63 || l->pt < 0 || l->pb < 0)
        return bk_fail(c, node, e, "kernel %dx%d, stride %dx%d, dilation %dx%d, pads %d/%d/%d/%d exceed the conv instruction",
                       l->kh, l->kw, l->sh, l->sw, l->dh, l->dw, l->pt, l->pl, l->pb, l->pr);
    if ((l->W + l->pl + l->pr - l->dw * (l->kw - 1) - 1) / l->sw + 1 != l->OW ||
        (l->H + l->pt + l->pb - l->dh * (l->kh - 1) - 1) / l->sh + 1 != l->OH || w->dims[0] != l->OC || w->dims[1] != l->C)
        return bk_fail(c, node, e, "output %dx%d does not follow from the input and attributes", l->OH, l->OW);
    if ((int64_t)l->kh * l->kw * l->C > 32767)
        return bk_fail(c, node, e, "kh x kw x C = %lld exceeds 32767: the zero-point expansion's i32 terms could saturate",
                       (long long)l->kh * l->kw * l->C);
    return 0;
}

/* Per-channel vectors: w's zero point and KK x it, with the i8 ones of
 * the window-sum conv (all skipped when the zero point is 0 everywhere);
 * QLinearConv's multipliers. */
static int qconv_vectors(BkCtx *c, int node, BkLow *l, int wz_t, int wshift, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    int OC = l->OC, KK = l->kh * l->kw * l->C, any = 0, rc = 0;
    int32_t *wz = bk_q_zero_points(c, node, wz_t, OC, wshift, &any, e);
    int32_t *v = malloc((size_t)OC * 2 * sizeof *v);
    int8_t *ones = malloc((size_t)KK);
    float *mult = malloc((size_t)OC * sizeof *mult);
    if (!wz || !v || !ones || !mult) { rc = wz ? bk_fail(c, node, e, "out of memory") : -1; goto done; }
    l->q_zb = l->q_kzb = l->q_ones = 0;
    for (int i = 0; i < OC; i++) {
        v[i] = wz[i];
        v[OC + i] = wz[i] * KK;
    }
    memset(ones, 1, (size_t)KK);
    if (any)
        rc = bk_weight(c, v, (size_t)OC * 4, &l->q_zb, e) || bk_weight(c, v + OC, (size_t)OC * 4, &l->q_kzb, e) ||
             bk_weight(c, ones, (size_t)KK, &l->q_ones, e);
    if (!rc && l->q_tail) {
        const IrTensor *ws = &gr->t[nd->in[4]];
        double sx, sy, zy;
        if (bk_q_const_one(gr, nd->in[1], &sx) || bk_q_const_one(gr, nd->in[6], &sy) || bk_q_const_one(gr, nd->in[7], &zy) ||
            !ws->data || (ir_numel(ws) != 1 && ir_numel(ws) != OC)) {
            rc = bk_fail(c, node, e, "x/y scales and the y zero point must be constants of one value, w_scale one or one per output channel");
            goto done;
        }
        for (int i = 0; i < OC; i++) mult[i] = (float)(sx * ir_get_f(ws, ir_numel(ws) == 1 ? 0 : i) / sy);
        l->q_zp = (float)zy;
        bk_q_range(gr->t[nd->out[0]].dtype, &l->q_lo, &l->q_hi);
        rc = bk_weight(c, mult, (size_t)OC * 4, &l->q_mults, e);
    }
done:
    free(wz);
    free(v);
    free(ones);
    free(mult);
    return rc ? -1 : 0;
}

int bk_lower_qconv(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
    if (bk_qmatrix_takes(c, node)) return bk_lower_qmatrix(c, node, ly, e);   /* constant weights, zero point 0 */
    l->kind = BK_K_CONV;
    l->q_tail = !strcmp(nd->op, "QLinearConv");
    int iw = l->q_tail ? 3 : 1, ixz = 2, iwz = l->q_tail ? 5 : 3, ib = l->q_tail ? 8 : -1;
    const IrTensor *x = &gr->t[nd->in[0]], *w = &gr->t[nd->in[iw]], *y = &gr->t[nd->out[0]];
    if ((x->dtype != IR_I8 && x->dtype != IR_U8) || (w->dtype != IR_I8 && w->dtype != IR_U8))
        return bk_fail(c, node, e, "x and w are %s and %s; int8 and uint8 are lowered", ir_dtype_name(x->dtype),
                       ir_dtype_name(w->dtype));
    if (qconv_geometry(c, node, l, x, w, y, e)) return -1;
    double xz = 0;
    if (nd->nin > ixz && nd->in[ixz] >= 0 && bk_q_const_one(gr, nd->in[ixz], &xz))
        return bk_fail(c, node, e, "x's zero point must be a constant of one value");
    l->q_xz = (int)xz - (x->dtype == IR_U8 ? 128 : 0);
    l->xdt = bk_tensor_dt(c, nd->in[0]);
    l->xes = bk_tensor_es(c, nd->in[0]);
    l->q_bdt = bk_tensor_dt(c, nd->in[iw]);
    l->dt = bk_tensor_dt(c, nd->out[0]);
    l->es = bk_tensor_es(c, nd->out[0]);
    if (qconv_vectors(c, node, l, nd->nin > iwz ? nd->in[iwz] : -1, w->dtype == IR_U8 ? 128 : 0, e)) return -1;
    l->q_bias = 0;
    if (ib >= 0 && nd->nin > ib && nd->in[ib] >= 0 && bk_tensor_in_dram(c, nd->in[ib], &l->q_bias, e)) return -1;
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->in[iw], &l->w, e) ||
        bk_tensor_in_dram(c, nd->out[0], &l->y, e))
        return -1;
    /* the most output rows that fit, then fewer while some core has no tile */
    l->rows = l->OH;
    while (qconv_plan(c, ly)) {
        if (l->rows == 1) return bk_fail(c, node, e, "one output row (all %d channels, whole weights) does not fit half of LMEM", l->OC);
        l->rows = (l->rows + 1) / 2;
    }
    while ((int64_t)l->N * l->nrc < c->ncores && l->rows > 1) {
        l->rows = (l->rows + 1) / 2;
        qconv_plan(c, ly);
    }
    ly->gen = qconv_gen;
    ly->is_matrix = 1;
    ly->macs = (uint64_t)l->N * l->OH * l->OW * l->OC * l->kh * l->kw * l->C;
    if (bk_set_tiles(ly, l->N * l->nrc, 1, e)) return -1;
    snprintf(ly->split, sizeof ly->split, "N%d H%d", l->N, l->nrc);
    return 0;
}
