/* quant.c - quantised ONNX ops on the chip: QuantizeLinear and
 * DequantizeLinear as vector programs, MatMulInteger and QLinearMatMul on
 * the matrix unit's i8 path (the instructions they share with qconv.c
 * and dynquant.c are in qcommon.c). Every result is the reference
 * interpreter's exactly (compiler/ops/extra.c, ops/nn.c); docs/backend.md
 * "Quantised ops".
 *
 * Quantisation parameters (scales, zero points) are compiled in (f32 or
 * i32 vectors in the weights region), as a deployed quantised model has
 * them; only QuantizeLinear / DequantizeLinear also take run-time ones
 * (e.g. computed by DynamicQuantizeLinear's expansion): each tile loads
 * their chunk in the storage dtype and converts it to f32 by v.cast
 * (exact). Storage: int8 -> chip i8, uint8 -> chip i16 (compiler/target/dtype.c).
 *
 * DequantizeLinear y = (x - zp) * scale, x int8 / uint8, per tensor or per
 *   axis: x is seen as [outer][C][i1][i2] (C = the axis' size, 1 per
 *   tensor); a tile is a box of it (bk_box_of) and loads its C-chunk of
 *   scale and zero point (f32), broadcast along the other dims by stride
 *   0. Program: v.cast x -> f32 (exact), v.sub zp (exact: small integers),
 *   v.mul scale: one f32 rounding of the exact product, as the reference
 *   rounds its double product once to f32.
 * QuantizeLinear y = saturate(round_half_even(x / scale) + zp), int8 or
 *   uint8 output, same tiling: v.div (f32 division, as the reference divides
 *   in f32), then the quantising tail shared with QLinearMatMul: v.round
 *   (half to even, = nearbyint), + zp (exact below 2^24; anything larger
 *   saturates either way), v.clip to the output range (int8 -128..127,
 *   uint8 0..255: uint8 lives in an i16, so v.cast alone would not saturate
 *   it), v.cast f32 -> i8 / i16 (exact on the clipped integers). A NaN
 *   becomes 0 (the reference leaves it undefined).
 * MatMulInteger / QLinearMatMul: Y[bt][M][N] with K whole per tile, tiles
 *   (batch, m chunk, n chunk). A uint8 operand becomes i8 on the vector
 *   unit by subtracting 128 (v.affine in i16, then v.cast to i8, both
 *   exact), which is folded into its zero point: za' = za - 128. The zero
 *   points are then applied by the expansion
 *     sum_k (a - za)(b - zb) = sum_k a b - za (sum_k b - K zb) - zb sum_k a
 *   with a, b, za, zb the i8-shifted values: one i8 `mm` (exact i32 sums),
 *   the column sums of B and row sums of A by v.rsum (i8 -> i32), and
 *   outer-product corrections by v.mul with stride-0 broadcasts and v.sub,
 *   all in i32; terms whose zero point is 0 everywhere are skipped.
 *   Why the expansion rather than subtracting the zero points first: a - za
 *   spans -255..255, which leaves i8, so the full-rate i8 path could not
 *   take it (the alternatives, f32 at quarter rate or splitting into two i8
 *   halves, cost 4x or 2x the matrix work; the corrections are O(M N + (M
 *   + N) K) vector work against O(M N K)). Zero points are per tensor, per
 *   row of A and per column of B (as the reference reads them). Every i32
 *   term is bounded by 2^30 for K <= 32767 (|a|, |b|, |za|, |zb| <= 128),
 *   so nothing saturates; a longer K is rejected, as is a K that does not
 *   fit one LMEM slot (no K split here).
 * QLinearMatMul requantises as the reference does, in f32: v.cast i32 ->
 *   f32, v.affine by the f32 multiplier (float)(sa * sb / sy) (one f32
 *   rounding, the reference's float product), then the quantising tail.
 *   Not v.requant: its exact 64-bit product and ties rounded half away
 *   from zero (2.5 -> 3 where the reference gives 2) would differ from the
 *   reference; scales must be single values (the reference reads only the
 *   first). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/lower/quant.h"

static int imin(int a, int b) { return a < b ? a : b; }

/* ---- QuantizeLinear / DequantizeLinear ---- */

/* registers: x as loaded, the f32 work block, the output, scale and zero
 * point chunks (f32), and those as loaded when they are run-time tensors */
enum { Q_X, Q_F, Q_Y, Q_S, Q_Z, Q_SRAW, Q_ZRAW, Q_NREGS };

/* Loads the parameter chunk at src (dtype dt) into f32 register dst, via
 * raw and a v.cast when dt is not f32. */
static void load_param(BkCode *k, int dt, uint64_t dst, uint64_t raw, uint64_t src, const uint32_t sh[4],
                       const int64_t cs[4])
{
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, dt == ISA_F32 ? dst : raw, ISA_SPACE_DRAM, src, sh, cs, cs);
    bk_code_ld(k, &in, 0);
    if (dt == ISA_F32) return;
    in = bk_q_cast(dt, ISA_F32, dst, raw, sh, cs, cs);
    bk_code_cp(k, &in);
}

static int qdq_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    (void)c;
    (void)e;
    uint32_t o[4], ext[4];
    bk_box_of(l, t, o, ext);
    int64_t cs[4], ds[4];
    bk_compact(ext, cs);
    bk_compact(l->od, ds);
    uint64_t off = 0, r[Q_NREGS];
    for (int d = 0; d < 4; d++) off += (uint64_t)o[d] * (uint64_t)ds[d];
    for (int i = 0; i < Q_NREGS; i++) r[i] = slot + l->l_reg[i];
    AtlInsn in = bk_dma(l->xdt, ISA_SPACE_LMEM, r[Q_X], ISA_SPACE_DRAM, l->x + off * (uint64_t)l->xes, ext, cs, ds);
    bk_code_ld(k, &in, 0);
    /* the C chunk of scale and zero point, read along dim 1 (stride 0 elsewhere) */
    uint32_t psh[4] = {1, 1, 1, ext[1]};
    int64_t pcs[4], ps[4] = {0, 1, 0, 0};
    bk_compact(psh, pcs);
    load_param(k, l->q_sdt, r[Q_S], r[Q_SRAW], l->w + (uint64_t)o[1] * (uint64_t)isa_dtype_size(l->q_sdt), psh, pcs);
    if (l->b)
        load_param(k, l->q_zdt, r[Q_Z], r[Q_ZRAW], l->b + (uint64_t)o[1] * (uint64_t)isa_dtype_size(l->q_zdt), psh, pcs);
    uint64_t x = r[Q_X], f = r[Q_F], z = l->b ? r[Q_Z] : 0, res = f;
    if (l->xdt != ISA_F32) {
        in = bk_q_cast(l->xdt, ISA_F32, f, x, ext, cs, cs);
        bk_code_cp(k, &in);
        x = f;
    }
    if (l->q_tail) {
        in = bk_vbin(ISA_OP_V_DIV, ISA_F32, f, x, r[Q_S], ext, cs, cs, ps);
        bk_code_cp(k, &in);
        bk_q_tail(k, f, z, ps, 0.0f, l->q_lo, l->q_hi, l->dt, r[Q_Y], ext, cs);
        res = r[Q_Y];
    } else {
        if (z) {
            in = bk_vbin(ISA_OP_V_SUB, ISA_F32, f, x, z, ext, cs, cs, ps);
            bk_code_cp(k, &in);
        }
        in = bk_vbin(ISA_OP_V_MUL, ISA_F32, f, f, r[Q_S], ext, cs, cs, ps);
        bk_code_cp(k, &in);
        if (l->dt != ISA_F32) {
            in = bk_q_cast(ISA_F32, l->dt, r[Q_Y], f, ext, cs, cs);
            bk_code_cp(k, &in);
            res = r[Q_Y];
        }
    }
    in = bk_dma(l->dt, ISA_SPACE_DRAM, l->y + off * (uint64_t)l->es, ISA_SPACE_LMEM, res, ext, ds, cs);
    bk_code_st(k, &in);
    return 0;
}

int bk_lower_qdq(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
    l->kind = BK_K_ELEM;
    l->q_tail = !strcmp(nd->op, "QuantizeLinear");
    const IrTensor *x = &gr->t[nd->in[0]], *s = &gr->t[nd->in[1]], *y = &gr->t[nd->out[0]];
    int zt = nd->nin > 2 ? nd->in[2] : -1;
    int qt = l->q_tail ? y->dtype : x->dtype;   /* the quantised side */
    if (qt != IR_I8 && qt != IR_U8)
        return bk_fail(c, node, e, "%s '%s' is %s; int8 and uint8 are lowered", l->q_tail ? "output" : "input",
                       l->q_tail ? y->name : x->name, ir_dtype_name(qt));
    int64_t C = ir_numel(s), outer = 1, inner = ir_numel(x);
    if (C > 1) {
        int64_t axis = ir_attr_int(nd, "axis", 1);
        if (axis < 0) axis += x->ndim;
        if (axis < 0 || axis >= x->ndim || x->dims[axis] != C)
            return bk_fail(c, node, e, "scale of %lld values does not match the axis", (long long)C);
        inner = 1;
        for (int d = 0; d < x->ndim; d++) {
            if (d < axis) outer *= x->dims[d];
            else if (d > axis) inner *= x->dims[d];
        }
    }
    if (zt >= 0 && ir_numel(&gr->t[zt]) != C) return bk_fail(c, node, e, "zero point and scale sizes differ");
    l->od[0] = (uint32_t)outer;
    l->od[1] = (uint32_t)C;
    if (outer > 65535 || C > 65535 || bk_q_split_dim(inner, &l->od[2], &l->od[3]))
        return bk_fail(c, node, e, "shape %lld x %lld x %lld exceeds 65535 per dimension", (long long)outer, (long long)C,
                       (long long)inner);
    l->xdt = bk_tensor_dt(c, nd->in[0]);
    l->xes = bk_tensor_es(c, nd->in[0]);
    l->dt = bk_tensor_dt(c, nd->out[0]);
    l->es = bk_tensor_es(c, nd->out[0]);
    bk_q_range(qt, &l->q_lo, &l->q_hi);
    /* scale and zero point: constants as f32 vectors of C, run-time ones
     * read in their storage dtypes */
    float *v = malloc((size_t)C * 2 * sizeof *v);
    if (!v) return bk_fail(c, node, e, "out of memory");
    for (int64_t i = 0; i < C; i++) {
        v[i] = s->data ? (float)ir_get_f(s, i) : 0.0f;
        v[C + i] = zt >= 0 && gr->t[zt].data ? (float)ir_get_i(&gr->t[zt], i) : 0.0f;
    }
    l->q_sdt = s->data ? ISA_F32 : bk_tensor_dt(c, nd->in[1]);
    l->q_zdt = zt >= 0 && !gr->t[zt].data ? bk_tensor_dt(c, zt) : ISA_F32;
    int rc = s->data ? bk_weight(c, v, (size_t)C * 4, &l->w, e) : bk_tensor_in_dram(c, nd->in[1], &l->w, e);
    l->b = 0;
    if (!rc && zt >= 0)
        rc = gr->t[zt].data ? bk_weight(c, v + C, (size_t)C * 4, &l->b, e) : bk_tensor_in_dram(c, zt, &l->b, e);
    free(v);
    if (rc || bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    /* per box element: x, the f32 block, the output, and at most one
     * scale and zero point each, f32 and as loaded */
    if (bk_fit_box(c, l, ly->slot_size, (uint64_t)l->xes + 4 + (uint64_t)l->es + 16))
        return bk_fail(c, node, e, "even one element box does not fit LMEM");
    uint64_t n = (uint64_t)l->chunk[0] * l->chunk[1] * l->chunk[2] * l->chunk[3], used = 0;
    const uint64_t bytes[Q_NREGS] = {n * (uint64_t)l->xes, n * 4, n * (uint64_t)l->es, (uint64_t)l->chunk[1] * 4,
                                     (uint64_t)l->chunk[1] * 4, (uint64_t)l->chunk[1] * 4, (uint64_t)l->chunk[1] * 4};
    for (int i = 0; i < Q_NREGS; i++) l->l_reg[i] = bk_slot_alloc(c, &used, bytes[i]);
    if (used > ly->slot_size) return bk_fail(c, node, e, "tile does not fit LMEM");
    ly->gen = qdq_gen;
    if (bk_set_tiles(ly, (int)(l->nch[0] * l->nch[1] * l->nch[2] * l->nch[3]), 1, e)) return -1;
    snprintf(ly->split, sizeof ly->split, "%ux%ux%ux%u", l->nch[0], l->nch[1], l->nch[2], l->nch[3]);
    return 0;
}

/* ---- MatMulInteger / QLinearMatMul ---- */

/* registers: A and B as loaded and as i8, the i32 sums, an i32 scratch,
 * the f32 block and output of the requantisation, row sums of A, column
 * sums of B, the zero-point chunks (A's per row, B's per column, K x B's) */
enum { M_ARAW, M_A8, M_BRAW, M_B8, M_ACC, M_TMP, M_F, M_Y, M_RA, M_CB, M_ZA, M_ZB, M_KZB, M_NREGS };

static int imm_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    (void)c;
    (void)e;
    int nci = t % l->nnc, mci = t / l->nnc % l->nmc, bi = t / l->nnc / l->nmc;
    int m0 = mci * l->mt, mn = imin(l->mt, l->M - m0), n0 = nci * l->nt, nn = imin(l->nt, l->Nn - n0), K = l->K;
    uint64_t r[M_NREGS];
    for (int i = 0; i < M_NREGS; i++) r[i] = slot + l->l_reg[i];
    uint32_t ash[4] = {1, 1, (uint32_t)mn, (uint32_t)K}, bsh[4] = {1, 1, (uint32_t)K, (uint32_t)nn};
    uint32_t ysh[4] = {1, 1, (uint32_t)mn, (uint32_t)nn}, csh[4] = {1, 1, 1, (uint32_t)nn};
    int64_t acs[4], bcs[4], ycs[4], ccs[4], ass[4] = {0, 0, l->a_rs, l->a_cs}, bss[4] = {0, 0, l->b_rs, l->b_cs};
    int64_t row[4] = {0, 0, 1, 0}, col[4] = {0, 0, 0, 1};
    bk_compact(ash, acs);
    bk_compact(bsh, bcs);
    bk_compact(ysh, ycs);
    bk_compact(csh, ccs);
    int bes = isa_dtype_size(l->q_bdt);
    uint64_t src = l->x + (uint64_t)((int64_t)bi * l->a_bs + (int64_t)m0 * l->a_rs) * (uint64_t)l->xes;
    AtlInsn in = bk_dma(l->xdt, ISA_SPACE_LMEM, r[M_ARAW], ISA_SPACE_DRAM, src, ash, acs, ass);
    bk_code_ld(k, &in, 0);
    src = l->w + (uint64_t)((int64_t)bi * l->b_bs + (int64_t)n0 * l->b_cs) * (uint64_t)bes;
    in = bk_dma(l->q_bdt, ISA_SPACE_LMEM, r[M_BRAW], ISA_SPACE_DRAM, src, bsh, bcs, bss);
    bk_code_ld(k, &in, 0);
    if (l->q_za) bk_q_load_vec(k, ISA_I32, r[M_ZA], l->q_za + (uint64_t)m0 * 4, mn);
    if (l->q_zb) {
        bk_q_load_vec(k, ISA_I32, r[M_ZB], l->q_zb + (uint64_t)n0 * 4, nn);
        if (l->q_za) bk_q_load_vec(k, ISA_I32, r[M_KZB], l->q_kzb + (uint64_t)n0 * 4, nn);
    }
    uint64_t a8 = bk_q_to_i8(k, l->xdt, r[M_ARAW], r[M_A8], ash, acs, acs);
    uint64_t b8 = bk_q_to_i8(k, l->q_bdt, r[M_BRAW], r[M_B8], bsh, bcs, bcs);
    AtlInsn mm;
    memset(&mm, 0, sizeof mm);
    mm.op = ISA_OP_MM;
    mm.dtype = ISA_I8;
    mm.dst = r[M_ACC];
    mm.src = a8;
    mm.src2 = b8;
    mm.m = (uint32_t)mn; mm.k = (uint32_t)K; mm.n = (uint32_t)nn;
    mm.lda = (uint32_t)K; mm.ldb = (uint32_t)nn; mm.ldc = (uint32_t)nn;
    bk_code_cp(k, &mm);
    if (l->q_za) {   /* - za (x) (colsum(B) - K zb) */
        bk_q_reduce(k, ISA_OP_V_RSUM, ISA_I8, ISA_I32, r[M_CB], b8, bsh, 2);
        if (l->q_zb) {
            in = bk_vbin(ISA_OP_V_SUB, ISA_I32, r[M_CB], r[M_CB], r[M_KZB], csh, ccs, ccs, ccs);
            bk_code_cp(k, &in);
        }
        bk_q_sub_outer(k, r[M_ACC], r[M_TMP], r[M_ZA], row, r[M_CB], col, ysh, ycs);
    }
    if (l->q_zb) {   /* - rowsum(A) (x) zb */
        bk_q_reduce(k, ISA_OP_V_RSUM, ISA_I8, ISA_I32, r[M_RA], a8, ash, 3);
        bk_q_sub_outer(k, r[M_ACC], r[M_TMP], r[M_RA], row, r[M_ZB], col, ysh, ycs);
    }
    uint64_t res = r[M_ACC];
    if (l->q_tail) {
        bk_q_requant(k, l, r[M_ACC], r[M_F], 0, NULL, r[M_Y], ysh, ycs);
        res = r[M_Y];
    }
    int64_t ds[4] = {0, 0, l->Nn, 1};
    uint64_t dst = l->y + ((uint64_t)bi * l->M * l->Nn + (uint64_t)m0 * l->Nn + (uint64_t)n0) * (uint64_t)l->es;
    in = bk_dma(l->dt, ISA_SPACE_DRAM, dst, ISA_SPACE_LMEM, res, ysh, ds, ycs);
    bk_code_st(k, &in);
    return 0;
}

/* Slot layout and chunk counts for the tile shape (mt, nt) in l; 0 if it
 * fits. */
static int imm_plan(const BkCtx *c, BkLayer *ly)
{
    BkLow *l = &ly->lw;
    uint64_t mt = (uint64_t)l->mt, nt = (uint64_t)l->nt, K = (uint64_t)l->K, used = 0;
    int ai8 = l->xdt == ISA_I8, bi8 = l->q_bdt == ISA_I8;
    const uint64_t bytes[M_NREGS] = {
        mt * K * (uint64_t)l->xes, ai8 ? 0 : mt * K, K * nt * (uint64_t)isa_dtype_size(l->q_bdt), bi8 ? 0 : K * nt,
        mt * nt * 4, mt * nt * 4, l->q_tail ? mt * nt * 4 : 0, l->q_tail ? mt * nt * (uint64_t)l->es : 0,
        mt * 4, nt * 4, mt * 4, nt * 4, nt * 4};
    for (int i = 0; i < M_NREGS; i++) l->l_reg[i] = bk_slot_alloc(c, &used, bytes[i]);
    l->nmc = (l->M + l->mt - 1) / l->mt;
    l->nnc = (l->Nn + l->nt - 1) / l->nt;
    return used <= ly->slot_size ? 0 : -1;
}

/* QLinearMatMul: the multiplier, output zero point and range. */
static int requant_params(BkCtx *c, int node, BkLow *l, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    double sa, sb, sy, zy;
    if (bk_q_const_one(gr, nd->in[1], &sa) || bk_q_const_one(gr, nd->in[4], &sb) || bk_q_const_one(gr, nd->in[6], &sy) ||
        bk_q_const_one(gr, nd->in[7], &zy))
        return bk_fail(c, node, e, "scales and the output zero point must be constants of one value");
    l->q_mult = (float)(sa * sb / sy);
    l->q_zp = (float)zy;
    bk_q_range(gr->t[nd->out[0]].dtype, &l->q_lo, &l->q_hi);
    return 0;
}

int bk_lower_qmatmul(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
    l->kind = BK_K_MM;
    l->q_tail = !strcmp(nd->op, "QLinearMatMul");
    int ib = l->q_tail ? 3 : 1, iza = 2, izb = l->q_tail ? 5 : 3;
    const IrTensor *a = &gr->t[nd->in[0]], *b = &gr->t[nd->in[ib]], *y = &gr->t[nd->out[0]];
    if ((a->dtype != IR_I8 && a->dtype != IR_U8) || (b->dtype != IR_I8 && b->dtype != IR_U8))
        return bk_fail(c, node, e, "operands are %s and %s; int8 and uint8 are lowered", ir_dtype_name(a->dtype),
                       ir_dtype_name(b->dtype));
    if (a->ndim < 2 || b->ndim < 2) return bk_fail(c, node, e, "1-D operands are not lowered");
    int64_t M = a->dims[a->ndim - 2], K = a->dims[a->ndim - 1], N = b->dims[b->ndim - 1];
    int64_t bt[3];
    if (bk_mm_batches(c, node, a, b, y, bt, e)) return -1;
    int64_t abt = bt[0], bbt = bt[1], ybt = bt[2];
    if (M < 1 || N < 1 || K < 1 || M > 65535 || N > 65535) return bk_fail(c, node, e, "M %lld or N %lld outside 1..65535", (long long)M, (long long)N);
    if (K > 32767)
        return bk_fail(c, node, e, "K = %lld exceeds 32767: the zero-point expansion's i32 terms could saturate", (long long)K);
    l->bt = (int)ybt; l->M = (int)M; l->K = (int)K; l->Nn = (int)N;
    l->a_bs = abt == 1 ? 0 : M * K; l->a_rs = K; l->a_cs = 1;
    l->b_bs = bbt == 1 ? 0 : K * N; l->b_rs = N; l->b_cs = 1;
    l->xdt = bk_tensor_dt(c, nd->in[0]);
    l->xes = bk_tensor_es(c, nd->in[0]);
    l->q_bdt = bk_tensor_dt(c, nd->in[ib]);
    l->dt = bk_tensor_dt(c, nd->out[0]);
    l->es = bk_tensor_es(c, nd->out[0]);
    if (l->q_tail && requant_params(c, node, l, e)) return -1;
    int any_a, any_b, rc = -1;
    int32_t *za = bk_q_zero_points(c, node, nd->nin > iza ? nd->in[iza] : -1, M, a->dtype == IR_U8 ? 128 : 0, &any_a, e);
    int32_t *zb = za ? bk_q_zero_points(c, node, nd->nin > izb ? nd->in[izb] : -1, N, b->dtype == IR_U8 ? 128 : 0, &any_b, e) : NULL;
    if (!zb) { free(za); return -1; }
    l->q_za = l->q_zb = l->q_kzb = 0;
    rc = any_a ? bk_weight(c, za, (size_t)M * 4, &l->q_za, e) : 0;
    if (!rc && any_b) {
        rc = bk_weight(c, zb, (size_t)N * 4, &l->q_zb, e);
        for (int64_t j = 0; j < N; j++) zb[j] *= (int32_t)K;
        if (!rc) rc = bk_weight(c, zb, (size_t)N * 4, &l->q_kzb, e);
    }
    free(za);
    free(zb);
    if (rc || bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->in[ib], &l->w, e) ||
        bk_tensor_in_dram(c, nd->out[0], &l->y, e))
        return -1;
    /* the largest block that fits, halving the longer side; then smaller
     * row chunks while some core has no tile and they still fill the unit */
    l->mt = l->M;
    l->nt = l->Nn;
    while (imm_plan(c, ly)) {
        if (l->mt == 1 && l->nt == 1)
            return bk_fail(c, node, e, "one row of A and one column of B (K = %d) do not fit half of LMEM", l->K);
        if (l->nt >= l->mt) l->nt = (l->nt + 1) / 2;
        else l->mt = (l->mt + 1) / 2;
    }
    while ((int64_t)l->bt * l->nmc * l->nnc < c->ncores && l->mt > c->chip->mm_rows) {
        l->mt = (l->mt + 1) / 2;
        imm_plan(c, ly);
    }
    ly->gen = imm_gen;
    ly->is_matrix = 1;
    ly->macs = (uint64_t)l->bt * l->M * l->K * l->Nn;
    if (bk_set_tiles(ly, l->bt * l->nmc * l->nnc, 1, e)) return -1;
    snprintf(ly->split, sizeof ly->split, "B%d M%d N%d", l->bt, l->nmc, l->nnc);
    return 0;
}
