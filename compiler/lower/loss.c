/* loss.c - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
 * on the vector unit, as one step program per tile.
 *
 * x is [N][C][D] (D = the trailing dims), the labels [N][D] (int64 in the
 * graph, i32 on the chip), the optional weight [C]. A tile holds a run of
 * the N rows with their whole [C][D] block, or, when one such row does not
 * fit a slot, one row's [C][d chunk] block:
 *   SoftmaxCrossEntropyLoss first turns x into log-probabilities in place
 *     along C (v.rmax m, x - m, v.exp into a scratch box, v.rsum, v.log,
 *     subtract: the LogSoftmax steps of lower/vec.c) and stores them as
 *     the optional log_prob output.
 *   The label picks its class by a one-hot mask: v.eq (i32) of the label
 *     broadcast along C against a constant i32 iota [C] broadcast along N
 *     and D, cast to the float dtype (exact 0/1). The picked value is
 *     v.sel(mask, x) into a zeroed box (a select, not a multiply: x may be
 *     -inf), summed over C (one non-zero term: exact); the weight likewise
 *     (or the mask summed: 1, or 0 for an ignored label). ignore_index:
 *     its entry of the iota is INT32_MIN, which no valid label equals, so
 *     its mask row is all zero (loss 0, weight 0), as in the interpreter.
 *   loss = -(picked * weight); reduction none stores it per (n, d); sum and
 *     mean reduce it (and, for mean, the picked weights) over D then N and
 *     divide with v.div: sum / sum of weights, so a fully ignored batch
 *     gives 0/0 = NaN exactly as compiler/ops/extra.c does.
 * Why a step program and not a graph rewrite into LogSoftmax, Equal, Where
 * and reductions: the mask, the selects and both sums stay in LMEM (one
 * load of x, one store), it needs no integer compare or Where lowering,
 * and SoftmaxCrossEntropyLoss at opset 12 would need LogSoftmax along one
 * axis, which opset < 13 LogSoftmax does not mean.
 * sum / mean reduce across tiles: all their tiles run in order on one core
 * and add their partial sums into two accumulators in resident LMEM
 * (alloc/lmem.c; the first tile moves, the others add); the last tile
 * divides (mean) and stores. */
#include <stdio.h>
#include <string.h>
#include "compiler/lower/lower.h"

/* LMEM registers (offsets in l_reg): x / log-probabilities, the i32 mask,
 * its float copy, a scratch box ([rows][C][D]); labels, picked sum,
 * weight sum, row scratch ([rows][D]); iota, weight ([C]); two scalars and
 * a per-row partial. */
enum { LX, LM, LF, LQ, LL, LPS, LWS, LT, LIOTA, LW, LS1, LS2, LNREG };

enum { RED_NONE, RED_SUM, RED_MEAN };

static void reduce_code(BkCode *k, int op, int dt, uint64_t dst, uint64_t src, const uint32_t sh[4])
{
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = (uint8_t)op;
    in.dtype = in.otype = (uint8_t)dt;
    in.axis = 2;
    memcpy(in.shape, sh, sizeof in.shape);
    in.dst = dst;
    in.src = src;
    bk_code_cp(k, &in);
}

/* Layer fields: od = {1, N, C, D}, chunk[1] / chunk[3] rows and d per
 * tile, nch[1] / nch[3] their counts; x, cx = labels (i32), b = weight (0
 * none), w = iota, y = loss, y_mean = log_prob (0 none); nin = 1 for
 * SoftmaxCrossEntropyLoss; M = reduction (RED_*); l_accres = the two
 * resident accumulators (sum / mean over several tiles), acc_bytes apart. */
static int loss_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)e;
    const BkLow *l = &ly->lw;
    uint32_t C = l->od[2], D = l->od[3], nd3 = l->nch[3];
    uint32_t o0 = (uint32_t)t / nd3 * l->chunk[1], d0 = (uint32_t)t % nd3 * l->chunk[3];
    uint32_t on = l->od[1] - o0 < l->chunk[1] ? l->od[1] - o0 : l->chunk[1];
    uint32_t dn = D - d0 < l->chunk[3] ? D - d0 : l->chunk[3];
    uint32_t sh[4] = {1, on, C, dn}, rsh[4] = {1, on, 1, dn}, csh[4] = {1, 1, C, 1};
    int64_t cs[4], rc[4], ccs[4];
    int64_t xs[4] = {0, (int64_t)C * D, D, 1}, ls[4] = {0, D, 0, 1};   /* DRAM element strides */
    bk_compact(sh, cs);
    bk_compact(rsh, rc);
    bk_compact(csh, ccs);
    int64_t brow[4] = {rc[0], rc[1], 0, rc[3]}, bcls[4] = {0, 0, 1, 0};
    int dt = c->dt;
    uint64_t es = (uint64_t)c->es, r[LNREG];
    for (int i = 0; i < LNREG; i++) r[i] = slot + l->l_reg[i];
    uint64_t xoff = ((uint64_t)o0 * C * D + d0) * es, roff = (uint64_t)o0 * D + d0;
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, r[LX], ISA_SPACE_DRAM, l->x + xoff, sh, cs, xs);
    bk_code_ld(k, &in, 0);
    in = bk_dma(ISA_I32, ISA_SPACE_LMEM, r[LL], ISA_SPACE_DRAM, l->cx + roff * 4, rsh, rc, ls);
    bk_code_ld(k, &in, 0);
    in = bk_dma(ISA_I32, ISA_SPACE_LMEM, r[LIOTA], ISA_SPACE_DRAM, l->w, csh, ccs, ccs);
    bk_code_ld(k, &in, 1);
    if (l->b) {
        in = bk_dma(dt, ISA_SPACE_LMEM, r[LW], ISA_SPACE_DRAM, l->b, csh, ccs, ccs);
        bk_code_ld(k, &in, 1);
    }
    if (l->nin) {   /* log-softmax along C, in place */
        reduce_code(k, ISA_OP_V_RMAX, dt, r[LT], r[LX], sh);
        in = bk_vbin(ISA_OP_V_SUB, dt, r[LX], r[LX], r[LT], sh, cs, cs, brow);
        bk_code_cp(k, &in);
        in = bk_vun(ISA_OP_V_EXP, dt, r[LQ], r[LX], sh, cs, cs, 0, 0);
        bk_code_cp(k, &in);
        reduce_code(k, ISA_OP_V_RSUM, dt, r[LT], r[LQ], sh);
        in = bk_vun(ISA_OP_V_LOG, dt, r[LT], r[LT], rsh, rc, rc, 0, 0);
        bk_code_cp(k, &in);
        in = bk_vbin(ISA_OP_V_SUB, dt, r[LX], r[LX], r[LT], sh, cs, cs, brow);
        bk_code_cp(k, &in);
        if (l->y_mean) {
            in = bk_dma(dt, ISA_SPACE_DRAM, l->y_mean + xoff, ISA_SPACE_LMEM, r[LX], sh, xs, cs);
            bk_code_st(k, &in);
        }
    }
    /* the one-hot mask of each label, as floats */
    in = bk_vbin(ISA_OP_V_EQ, ISA_I32, r[LM], r[LL], r[LIOTA], sh, cs, brow, bcls);
    bk_code_cp(k, &in);
    in = bk_vun(ISA_OP_V_CAST, ISA_I32, r[LF], r[LM], sh, cs, cs, 0, 0);
    in.otype = (uint8_t)dt;
    bk_code_cp(k, &in);
    /* picked = sum over C of sel(mask, x); weight = likewise of w, or of the mask */
    for (int pass = 0; pass < (l->b ? 2 : 1); pass++) {
        in = bk_vbin(ISA_OP_V_SUB, dt, r[LQ], r[LF], r[LF], sh, cs, cs, cs);
        bk_code_cp(k, &in);
        in = bk_vbin(ISA_OP_V_SEL, dt, r[LQ], r[LF], pass ? r[LW] : r[LX], sh, cs, cs, pass ? bcls : cs);
        bk_code_cp(k, &in);
        reduce_code(k, ISA_OP_V_RSUM, dt, pass ? r[LWS] : r[LPS], r[LQ], sh);
    }
    if (!l->b) reduce_code(k, ISA_OP_V_RSUM, dt, r[LWS], r[LF], sh);
    in = bk_vbin(ISA_OP_V_MUL, dt, r[LPS], r[LPS], r[LWS], rsh, rc, rc, rc);
    bk_code_cp(k, &in);
    in = bk_vun(ISA_OP_V_AFFINE, dt, r[LPS], r[LPS], rsh, rc, rc, -1.0f, 0);
    bk_code_cp(k, &in);
    if (l->M == RED_NONE) {
        in = bk_dma(dt, ISA_SPACE_DRAM, l->y + roff * es, ISA_SPACE_LMEM, r[LPS], rsh, ls, rc);
        bk_code_st(k, &in);
        return 0;
    }
    /* over d per row, then over the rows; across tiles into the accumulators */
    uint32_t dsh[4] = {1, on, dn, 1}, nsh[4] = {1, 1, on, 1}, one[4] = {1, 1, 1, 1};
    int64_t st1[4] = {1, 1, 1, 1};
    int mean = l->M == RED_MEAN, many = ly->ntiles > 1;
    uint64_t acc[2] = {l->l_accres, l->l_accres + l->acc_bytes};
    for (int i = 0; i < 1 + mean; i++) {
        uint64_t part = r[i ? LS2 : LS1];
        reduce_code(k, ISA_OP_V_RSUM, dt, r[LT], r[i ? LWS : LPS], dsh);
        reduce_code(k, ISA_OP_V_RSUM, dt, part, r[LT], nsh);
        if (!many) continue;
        if (t == 0) in = bk_vun(ISA_OP_V_MOV, dt, acc[i], part, one, st1, st1, 0, 0);
        else in = bk_vbin(ISA_OP_V_ADD, dt, acc[i], acc[i], part, one, st1, st1, st1);
        bk_code_cp(k, &in);
    }
    if (t != ly->ntiles - 1) return 0;
    uint64_t s1 = many ? acc[0] : r[LS1], s2 = many ? acc[1] : r[LS2];
    if (mean) {
        in = bk_vbin(ISA_OP_V_DIV, dt, r[LS1], s1, s2, one, st1, st1, st1);
        bk_code_cp(k, &in);
        s1 = r[LS1];
    }
    in = bk_dma(dt, ISA_SPACE_DRAM, l->y, ISA_SPACE_LMEM, s1, one, st1, st1);
    bk_code_st(k, &in);
    return 0;
}

int bk_lower_loss(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]];
    BkLow *l = &ly->lw;
    l->kind = BK_K_LOSS;
    l->nin = !strcmp(nd->op, "SoftmaxCrossEntropyLoss");
    const char *red = ir_attr_str(nd, "reduction", "mean");
    l->M = !strcmp(red, "none") ? RED_NONE : !strcmp(red, "sum") ? RED_SUM : !strcmp(red, "mean") ? RED_MEAN : -1;
    if (l->M < 0) return bk_fail(c, node, e, "reduction '%s' is not one of none, sum, mean", red);
    if (x->ndim < 2) return bk_fail(c, node, e, "input rank %d, needs at least 2", x->ndim);
    if (bk_need_dt(c, node, nd->in[0], c->dt, e) || bk_need_dt(c, node, nd->in[1], ISA_I32, e) ||
        bk_need_dt(c, node, nd->out[0], c->dt, e))
        return -1;
    int64_t N = x->dims[0], C = x->dims[1], D = 1;
    for (int d = 2; d < x->ndim; d++) D *= x->dims[d];
    if (N * C * D == 0) return bk_fail(c, node, e, "an empty input is not lowered");
    if (N > 65535 || C > 65535 || D > 65535)
        return bk_fail(c, node, e, "shape %lldx%lldx%lld exceeds 65535 per dimension", (long long)N, (long long)C, (long long)D);
    l->od[0] = 1; l->od[1] = (uint32_t)N; l->od[2] = (uint32_t)C; l->od[3] = (uint32_t)D;
    const IrAttr *ia = ir_attr(nd, "ignore_index");
    int64_t hole = ia && ia->i >= 0 && ia->i < C ? ia->i : -1;
    l->b = l->y_mean = 0;
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->in[1], &l->cx, e) ||
        bk_tensor_in_dram(c, nd->out[0], &l->y, e) || bk_iota_weight(c, C, hole, &l->w, e))
        return -1;
    if (nd->nin > 2 && nd->in[2] >= 0) {
        if (ir_numel(&gr->t[nd->in[2]]) != C) return bk_fail(c, node, e, "weight has %lld values for %lld classes",
                                                             (long long)ir_numel(&gr->t[nd->in[2]]), (long long)C);
        if (bk_need_dt(c, node, nd->in[2], c->dt, e) || bk_tensor_in_dram(c, nd->in[2], &l->b, e)) return -1;
    }
    if (l->nin && nd->nout > 1 && nd->out[1] >= 0 && bk_tensor_in_dram(c, nd->out[1], &l->y_mean, e)) return -1;
    uint64_t es = (uint64_t)c->es, al = c->align;
    if (l->M != RED_NONE) {   /* two accumulators below the slots */
        l->acc_bytes = bk_align_up(c, es);
        l->l_accres = 0;
        if (bk_reserve_resident(c, ly, 2 * l->acc_bytes)) return bk_fail(c, node, e, "no LMEM left for the accumulators");
    }
    /* bytes per (row, d) element of a tile: x, mask, its float copy, scratch
     * ([C] each), label, picked sum, weight sum, row scratch */
    uint64_t per_elem = (uint64_t)C * (3 * es + 4) + 3 * es + 4;
    uint64_t fixed = (uint64_t)C * (4 + es) + 4 * es + 16 * al;
    uint64_t room = ly->slot_size > fixed ? ly->slot_size - fixed : 0, fit = room / per_elem;
    if (fit < 1) return bk_fail(c, node, e, "one element's %lld classes do not fit half of LMEM", (long long)C);
    uint64_t rows = 1, dch = (uint64_t)D;
    if (fit >= (uint64_t)D) {
        rows = fit / (uint64_t)D;
        uint64_t spread = (uint64_t)(N + c->ncores - 1) / (uint64_t)c->ncores;
        if (l->M == RED_NONE && rows > spread) rows = spread;   /* sum / mean: one core anyway */
        if (rows > (uint64_t)N) rows = (uint64_t)N;
    } else dch = fit;
    l->chunk[0] = 1; l->chunk[1] = (uint32_t)rows; l->chunk[2] = (uint32_t)C; l->chunk[3] = (uint32_t)dch;
    for (int d = 0; d < 4; d++) l->nch[d] = (l->od[d] + l->chunk[d] - 1) / l->chunk[d];
    int nt = (int)(l->nch[1] * l->nch[3]);
    if (bk_set_tiles(ly, nt, l->M == RED_NONE ? 1 : nt, e)) return -1;
    snprintf(ly->split, sizeof ly->split, "rows %u x d %u", l->nch[1], l->nch[3]);
    uint64_t box = rows * dch, used = 0;
    const uint64_t bytes[LNREG] = {box * C * es, box * C * 4, box * C * es, box * C * es, box * 4, box * es, box * es, box * es,
                                   (uint64_t)C * 4, (uint64_t)C * es, es, es};
    for (int i = 0; i < LNREG; i++) l->l_reg[i] = bk_slot_alloc(c, &used, bytes[i]);
    if (used > ly->slot_size) return bk_fail(c, node, e, "tile does not fit LMEM");
    for (int t = 0; t < ly->ntiles; t++) ly->tile_wkey[t] = 0;   /* iota and weight stay in the slot */
    ly->gen = loss_gen;
    return 0;
}
