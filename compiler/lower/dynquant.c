/* dynquant.c - DynamicQuantizeLinear on the vector unit, exact
 * against the reference interpreter (ops/extra.c eval_dynquant).
 *
 * The reference: mx = max(0, max x), mn = min(0, min x) (f32), scale =
 * (mx - mn) / 255 in f32 (1 when that is 0), zp = saturate(nearbyint(-mn
 * / scale)) to 0..255, y = saturate(nearbyint(x / scale) + zp). The scale
 * depends on every element, so the layer is ONE tile on one core holding
 * the whole of x (seen as [a][b], a x b = numel, both <= 65535); a tensor
 * larger than a slot is rejected naming the node (a cross-tile reduction
 * would be needed). Program, all in f32 (x cast first when the storage
 * dtype is not f32): v.rmax / v.rmin along b then a; v.relu and v.clip
 * include 0; v.sub, v.div by a register holding 255 (a division, as the
 * reference divides; a multiply by 1/255 would round twice); v.eq against
 * a zero register adds 1 to a zero scale; the zero point -mn / scale
 * (v.affine by -1 is exact, v.div), v.round (half to even), v.clip 0..255;
 * y by v.div, then the quantising tail (bk_q_tail) with the zero point
 * register broadcast by stride 0. Stores y and the zero point as chip i16
 * (uint8), the scale in the float storage dtype. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <math.h>
#include "compiler/lower/quant.h"

/* registers: x as loaded, x in f32, y, a row of partial extremes, the
 * maximum, minimum, scale (and its storage-dtype copy), zero point (f32 and
 * i16), the constants 255 and 0, a scalar scratch */
enum { D_X, D_F, D_Y, D_ROW, D_MX, D_MN, D_SC, D_SCO, D_ZP, D_ZPI, D_C255, D_ZERO, D_T, D_NREGS };

static int dynq_gen(BkCtx *c, const BkLayer *g, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkLow *l = &g->lw;
    (void)c;
    (void)t;
    (void)e;
    uint64_t r[D_NREGS];
    for (int i = 0; i < D_NREGS; i++) r[i] = slot + l->l_reg[i];
    uint32_t sh[4] = {1, 1, l->od[2], l->od[3]}, rsh[4] = {1, 1, l->od[2], 1}, one[4] = {1, 1, 1, 1};
    int64_t cs[4], rcs[4], ocs[4], bc[4] = {0, 0, 0, 0};
    bk_compact(sh, cs);
    bk_compact(rsh, rcs);
    bk_compact(one, ocs);
    AtlInsn in = bk_dma(l->xdt, ISA_SPACE_LMEM, r[D_X], ISA_SPACE_DRAM, l->x, sh, cs, cs);
    bk_code_ld(k, &in, 0);
    bk_q_load_vec(k, ISA_F32, r[D_C255], l->w, 1);
    bk_q_load_vec(k, ISA_F32, r[D_ZERO], l->w + 4, 1);
    uint64_t x = r[D_X];
    if (l->xdt != ISA_F32) {
        in = bk_q_cast(l->xdt, ISA_F32, r[D_F], x, sh, cs, cs);
        bk_code_cp(k, &in);
        x = r[D_F];
    }
    /* mx = max(max x, 0), mn = min(min x, 0) */
    bk_q_reduce(k, ISA_OP_V_RMAX, ISA_F32, ISA_F32, r[D_ROW], x, sh, 3);
    bk_q_reduce(k, ISA_OP_V_RMAX, ISA_F32, ISA_F32, r[D_MX], r[D_ROW], rsh, 2);
    bk_q_reduce(k, ISA_OP_V_RMIN, ISA_F32, ISA_F32, r[D_ROW], x, sh, 3);
    bk_q_reduce(k, ISA_OP_V_RMIN, ISA_F32, ISA_F32, r[D_MN], r[D_ROW], rsh, 2);
    const struct { int op, dst, a, b; float alpha, beta; } scalar[] = {
        {ISA_OP_V_RELU, D_MX, D_MX, -1, 0, 0},
        {ISA_OP_V_CLIP, D_MN, D_MN, -1, -INFINITY, 0.0f},
        {ISA_OP_V_SUB, D_SC, D_MX, D_MN, 0, 0},
        {ISA_OP_V_DIV, D_SC, D_SC, D_C255, 0, 0},
        {ISA_OP_V_EQ, D_T, D_SC, D_ZERO, 0, 0},
        {ISA_OP_V_ADD, D_SC, D_SC, D_T, 0, 0},          /* a zero scale becomes 1 */
        {ISA_OP_V_AFFINE, D_ZP, D_MN, -1, -1.0f, 0.0f},
        {ISA_OP_V_DIV, D_ZP, D_ZP, D_SC, 0, 0},
        {ISA_OP_V_ROUND, D_ZP, D_ZP, -1, 0, 0},
        {ISA_OP_V_CLIP, D_ZP, D_ZP, -1, 0.0f, 255.0f},
    };
    for (size_t i = 0; i < sizeof scalar / sizeof *scalar; i++) {
        if (scalar[i].b >= 0)
            in = bk_vbin(scalar[i].op, ISA_F32, r[scalar[i].dst], r[scalar[i].a], r[scalar[i].b], one, ocs, ocs, ocs);
        else
            in = bk_vun(scalar[i].op, ISA_F32, r[scalar[i].dst], r[scalar[i].a], one, ocs, ocs, scalar[i].alpha, scalar[i].beta);
        bk_code_cp(k, &in);
    }
    in = bk_vbin(ISA_OP_V_DIV, ISA_F32, r[D_F], x, r[D_SC], sh, cs, cs, bc);
    bk_code_cp(k, &in);
    bk_q_tail(k, r[D_F], r[D_ZP], bc, 0.0f, 0, 255, ISA_I16, r[D_Y], sh, cs);
    in = bk_dma(ISA_I16, ISA_SPACE_DRAM, l->y, ISA_SPACE_LMEM, r[D_Y], sh, cs, cs);
    bk_code_st(k, &in);
    if (l->q_yscale) {
        uint64_t sc = r[D_SC];
        if (l->dt != ISA_F32) {
            in = bk_q_cast(ISA_F32, l->dt, r[D_SCO], sc, one, ocs, ocs);
            bk_code_cp(k, &in);
            sc = r[D_SCO];
        }
        in = bk_dma(l->dt, ISA_SPACE_DRAM, l->q_yscale, ISA_SPACE_LMEM, sc, one, ocs, ocs);
        bk_code_st(k, &in);
    }
    if (l->q_yzp) {
        in = bk_q_cast(ISA_F32, ISA_I16, r[D_ZPI], r[D_ZP], one, ocs, ocs);
        bk_code_cp(k, &in);
        in = bk_dma(ISA_I16, ISA_SPACE_DRAM, l->q_yzp, ISA_SPACE_LMEM, r[D_ZPI], one, ocs, ocs);
        bk_code_st(k, &in);
    }
    return 0;
}

int bk_lower_dynquant(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
    l->kind = BK_K_REDUCE;
    const IrTensor *x = &gr->t[nd->in[0]];
    int64_t n = ir_numel(x);
    l->od[0] = l->od[1] = 1;
    if (n < 1 || bk_q_split_dim(n, &l->od[2], &l->od[3]))
        return bk_fail(c, node, e, "%lld elements cannot be laid out as [a][b] with a, b <= 65535", (long long)n);
    l->xdt = bk_tensor_dt(c, nd->in[0]);
    l->xes = bk_tensor_es(c, nd->in[0]);
    l->dt = c->dt;   /* the scale's */
    const float consts[2] = {255.0f, 0.0f};
    if (bk_weight(c, consts, sizeof consts, &l->w, e) || bk_tensor_in_dram(c, nd->in[0], &l->x, e) ||
        bk_tensor_in_dram(c, nd->out[0], &l->y, e))
        return -1;
    l->q_yscale = l->q_yzp = 0;
    if (nd->nout > 1 && nd->out[1] >= 0 && bk_tensor_in_dram(c, nd->out[1], &l->q_yscale, e)) return -1;
    if (nd->nout > 2 && nd->out[2] >= 0 && bk_tensor_in_dram(c, nd->out[2], &l->q_yzp, e)) return -1;
    uint64_t used = 0, un = (uint64_t)n;
    const uint64_t bytes[D_NREGS] = {un * (uint64_t)l->xes, un * 4, un * 2, (uint64_t)l->od[2] * 4, 4, 4, 4, 4, 4, 4, 4, 4, 4};
    for (int i = 0; i < D_NREGS; i++) l->l_reg[i] = bk_slot_alloc(c, &used, bytes[i]);
    if (used > ly->slot_size)
        return bk_fail(c, node, e, "x (%lld elements) does not fit one LMEM slot; the scale needs all of it in one tile",
                       (long long)n);
    ly->gen = dynq_gen;
    if (bk_set_tiles(ly, 1, 1, e)) return -1;
    snprintf(ly->split, sizeof ly->split, "one tile");
    return 0;
}
