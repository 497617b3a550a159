/* topk.c - TopK (a constant, small k) on the vector unit.
 *
 * x is [outer][D][inner] around `axis`; both outputs [outer][k][inner]:
 * the values (x's float dtype) and the indices (int64 in the graph, i32 on
 * the chip), always sorted (largest first, or smallest first with
 * largest = 0; equal values by index, as the interpreter's stable order).
 * A tile is a run of outer rows, its [D][inner] block in LMEM; k rounds of:
 * v.rargmax (v.rargmin) along D (the first of ties) -> round j's index
 * box; the one-hot mask of that index (v.eq against a constant i32 iota,
 * v.cast to floats) picks the value (v.sel into a zeroed box, v.rsum: one
 * non-zero term, exact) -> round j's value box; then v.sel writes -inf
 * (+inf) over the picked element so the next round finds the next one.
 * That marker can tie with values still unpicked (x holding -inf): from
 * round 1 on, when the row's remaining extreme (v.rmax / v.rmin) equals
 * the marker, every unpicked value of the row equals it too, so the index
 * is replaced (v.eq, v.cast, v.sel) by the first still-unpicked one: the
 * v.rargmax of an alive mask (1 unpicked, 0 picked; 1 - the picks so far).
 * Every round's boxes have their own aligned LMEM (vector operands must
 * start aligned, so no writing into column j of one box); the stores put
 * them into column j of the outputs by DMA strides. Cost: k passes over
 * the block, so k is limited to 64. Known limit: NaN (the interpreter's sort
 * has no defined order for it; the chip takes NaN as the extreme). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "compiler/lower/lower.h"

#define TOPK_MAX 64

/* LMEM registers: x, the i32 mask, its float copy, a scratch box, the
 * alive mask ([rows][D][inner]); the remaining extreme, it equal to the
 * marker (float, i32), the first alive index ([rows][inner]); the iota; the
 * marker; then k index boxes and k value boxes ([rows][inner]), TI + j and
 * TI + k + j, each `round` bytes apart (l->kt). */
enum { TX, TM, TF, TQ, TA, TC, TCI, TIB, TIOTA, TINF, TI, TNREG };

static void arg_code(BkCode *k, int op, int dt, uint64_t dst, uint64_t src, const uint32_t sh[4])
{
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = (uint8_t)op;
    in.dtype = in.otype = (uint8_t)dt;
    in.dst = dst;
    in.src = src;
    memcpy(in.shape, sh, sizeof in.shape);
    in.axis = 2;
    bk_code_cp(k, &in);
}

/* Layer fields: od = {1, outer, D, inner}; x; y = values, y_mean =
 * indices (each 0 when unused); w = iota, b = the marker; K = k; M = 1
 * for the smallest; kt = the bytes between round boxes. */
static int topk_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)e;
    const BkLow *l = &ly->lw;
    uint32_t on, o0 = bk_row_range(l, t, &on), D = l->od[2], I = l->od[3], K = (uint32_t)l->K;
    uint32_t sh[4] = {1, on, D, I}, rsh[4] = {1, on, 1, I}, ksh[4] = {1, on, K, I}, ish[4] = {1, 1, D, 1}, one[4] = {1, 1, 1, 1};
    int64_t cs[4], rc[4], kc[4], ic[4], oc[4] = {1, 1, 1, 1};
    bk_compact(sh, cs);
    bk_compact(rsh, rc);
    bk_compact(ksh, kc);
    bk_compact(ish, ic);
    int64_t brow[4] = {rc[0], rc[1], 0, rc[3]}, bcls[4] = {0, 0, 1, 0}, bsc[4] = {0, 0, 0, 0};
    int64_t col[4] = {kc[0], kc[1], 0, kc[3]};   /* [rows][1][inner] into column j of [rows][k][inner] */
    int dt = c->dt;
    uint64_t es = (uint64_t)c->es, r[TNREG];
    for (int i = 0; i < TNREG; i++) r[i] = slot + l->l_reg[i];
    uint64_t round = (uint64_t)l->kt;
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, r[TX], ISA_SPACE_DRAM, l->x + (uint64_t)o0 * D * I * es, sh, cs, cs);
    bk_code_ld(k, &in, 0);
    in = bk_dma(ISA_I32, ISA_SPACE_LMEM, r[TIOTA], ISA_SPACE_DRAM, l->w, ish, ic, ic);
    bk_code_ld(k, &in, 1);
    in = bk_dma(dt, ISA_SPACE_LMEM, r[TINF], ISA_SPACE_DRAM, l->b, one, oc, oc);
    bk_code_ld(k, &in, 1);
    for (uint32_t j = 0; j < K; j++) {
        uint64_t idx = r[TI] + j * round, val = r[TI] + (K + j) * round;
        arg_code(k, l->M ? ISA_OP_V_RARGMIN : ISA_OP_V_RARGMAX, dt, idx, r[TX], sh);
        if (j > 0) {   /* the extreme is the marker: the first unpicked index */
            arg_code(k, l->M ? ISA_OP_V_RMIN : ISA_OP_V_RMAX, dt, r[TC], r[TX], sh);
            in = bk_vbin(ISA_OP_V_EQ, dt, r[TC], r[TC], r[TINF], rsh, rc, rc, bsc);
            bk_code_cp(k, &in);
            in = bk_vun(ISA_OP_V_CAST, dt, r[TCI], r[TC], rsh, rc, rc, 0, 0);
            in.otype = ISA_I32;
            bk_code_cp(k, &in);
            arg_code(k, ISA_OP_V_RARGMAX, dt, r[TIB], r[TA], sh);
            in = bk_vbin(ISA_OP_V_SEL, ISA_I32, idx, r[TCI], r[TIB], rsh, rc, rc, rc);
            bk_code_cp(k, &in);
        }
        /* the one-hot of the index picks the value */
        in = bk_vbin(ISA_OP_V_EQ, ISA_I32, r[TM], idx, r[TIOTA], sh, cs, brow, bcls);
        bk_code_cp(k, &in);
        in = bk_vun(ISA_OP_V_CAST, ISA_I32, r[TF], r[TM], sh, cs, cs, 0, 0);
        in.otype = (uint8_t)dt;
        bk_code_cp(k, &in);
        in = bk_vbin(ISA_OP_V_SUB, dt, r[TQ], r[TF], r[TF], sh, cs, cs, cs);
        bk_code_cp(k, &in);
        in = bk_vbin(ISA_OP_V_SEL, dt, r[TQ], r[TF], r[TX], sh, cs, cs, cs);
        bk_code_cp(k, &in);
        arg_code(k, ISA_OP_V_RSUM, dt, val, r[TQ], sh);
        if (j + 1 == K) break;
        /* remove the pick: the marker over it, and off the alive mask */
        in = bk_vbin(ISA_OP_V_SEL, dt, r[TX], r[TF], r[TINF], sh, cs, cs, bsc);
        bk_code_cp(k, &in);
        if (j == 0) {
            in = bk_vun(ISA_OP_V_AFFINE, dt, r[TA], r[TF], sh, cs, cs, 0.0f, 1.0f);   /* 1s (F is finite) */
            bk_code_cp(k, &in);
        }
        in = bk_vbin(ISA_OP_V_SUB, dt, r[TA], r[TA], r[TF], sh, cs, cs, cs);
        bk_code_cp(k, &in);
    }
    for (uint32_t j = 0; j < K; j++) {
        if (l->y) {
            in = bk_dma(dt, ISA_SPACE_DRAM, l->y + ((uint64_t)o0 * K + j) * I * es, ISA_SPACE_LMEM, r[TI] + (K + j) * round,
                        rsh, col, rc);
            bk_code_st(k, &in);
        }
        if (l->y_mean) {
            in = bk_dma(ISA_I32, ISA_SPACE_DRAM, l->y_mean + ((uint64_t)o0 * K + j) * I * 4, ISA_SPACE_LMEM,
                        r[TI] + j * round, rsh, col, rc);
            bk_code_st(k, &in);
        }
    }
    return 0;
}

int bk_lower_topk(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]];
    BkLow *l = &ly->lw;
    l->kind = BK_K_TOPK;
    if (bk_need_dt(c, node, nd->in[0], c->dt, e)) return -1;
    if (nd->nout > 1 && nd->out[1] >= 0 && bk_need_dt(c, node, nd->out[1], ISA_I32, e)) return -1;
    int64_t kk;
    if (nd->nin > 1 && nd->in[1] >= 0) {
        const IrTensor *kt = &gr->t[nd->in[1]];
        if (!kt->data || ir_numel(kt) != 1) return bk_fail(c, node, e, "K ('%s') must be a constant", kt->name);
        kk = ir_get_i(kt, 0);
    } else kk = ir_attr_int(nd, "k", 1);   /* opset 1-9 */
    int r = x->ndim, ax = (int)ir_attr_int(nd, "axis", -1);
    if (ax < 0) ax += r;
    if (ax < 0 || ax >= r) return bk_fail(c, node, e, "axis out of range");
    int64_t outer = 1, D = x->dims[ax], inner = 1;
    for (int d = 0; d < r; d++) {
        if (d < ax) outer *= x->dims[d];
        else if (d > ax) inner *= x->dims[d];
    }
    if (kk < 1 || kk > D) return bk_fail(c, node, e, "K = %lld outside 1..%lld", (long long)kk, (long long)D);
    if (kk > TOPK_MAX) return bk_fail(c, node, e, "K = %lld: at most %d rounds are lowered", (long long)kk, TOPK_MAX);
    if (outer * inner == 0) return bk_fail(c, node, e, "an empty input is not lowered");
    if (outer > 65535 || D > 65535 || inner > 65535)
        return bk_fail(c, node, e, "shape %lldx%lldx%lld exceeds 65535 per dimension", (long long)outer, (long long)D, (long long)inner);
    l->od[0] = 1; l->od[1] = (uint32_t)outer; l->od[2] = (uint32_t)D; l->od[3] = (uint32_t)inner;
    l->K = (int)kk;
    l->M = ir_attr_int(nd, "largest", 1) == 0;
    l->y = l->y_mean = 0;
    uint8_t marker[4];
    bk_store_elem(c->dt, marker, 0, l->M ? INFINITY : -INFINITY);
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_iota_weight(c, D, -1, &l->w, e) ||
        bk_weight(c, marker, (size_t)c->es, &l->b, e))
        return -1;
    if (nd->nout > 0 && nd->out[0] >= 0 && bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    if (nd->nout > 1 && nd->out[1] >= 0 && bk_tensor_in_dram(c, nd->out[1], &l->y_mean, e)) return -1;
    uint64_t es = (uint64_t)c->es, blk = (uint64_t)D * (uint64_t)inner, al = c->align, I = (uint64_t)inner;
    uint64_t per_row = blk * (4 * es + 4) + I * (es + 8) + (uint64_t)kk * I * (4 + es) + 12 * al;
    if (bk_row_tiles(c, node, ly, outer, per_row, (uint64_t)D * 4 + es + 2 * (uint64_t)kk * al + 4 * al, e)) return -1;
    uint64_t ch = l->chunk[1], used = 0;
    const uint64_t bytes[TNREG] = {ch * blk * es, ch * blk * 4, ch * blk * es, ch * blk * es, ch * blk * es, ch * I * es,
                                   ch * I * 4, ch * I * 4, (uint64_t)D * 4, es, 2 * (uint64_t)kk * bk_align_up(c, ch * I * 4)};
    for (int i = 0; i < TNREG; i++) l->l_reg[i] = bk_slot_alloc(c, &used, bytes[i]);
    l->kt = (int)bk_align_up(c, ch * I * 4);   /* holds an i32 box and a value box (es <= 4) */
    if (used > ly->slot_size) return bk_fail(c, node, e, "tile does not fit LMEM");
    for (int t = 0; t < ly->ntiles; t++) ly->tile_wkey[t] = 0;   /* iota and marker stay in the slot */
    ly->gen = topk_gen;
    return 0;
}
