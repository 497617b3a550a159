/* bk_lower_mm.c - Gemm and MatMul (batched, broadcast, transposed) on the
 * matrix unit.
 *
 * Reads: Gemm (transA, transB, alpha, beta, C) or MatMul with any batch
 *   dims that are either full or broadcast (all 1) on each side.
 * Y[bt][M][N] = A[bt][M][K] x B[bt][K][N]: a constant B is stored once as
 *   [bt][K][N] in the storage dtype with alpha folded in; an activation B
 *   (or A) is read through DMA strides, so transposes cost nothing extra.
 *   Gemm's C (times beta) is stored in f32, per column or full [M][N].
 * Tiles: (n chunk, batch, m chunk), n-chunk-major so consecutive tiles of a
 *   core keep the same B slice (weight key); K is whole inside a tile. A
 *   tile loads A rows and a B column block, runs one `mm` into an f32
 *   accumulator, adds the bias, applies the fused activation, casts to the
 *   storage dtype if needed and stores the block. The tile shape is the
 *   cheapest by the cost model among halvings of M and N that fit a slot. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/bk_int.h"
#include "isa/timing.h"

static int imin(int a, int b) { return a < b ? a : b; }

static int mm_gen(BkCtx *c, const BkGroup *g, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkLow *l = &g->lw;
    int nci = t / (l->bt * l->nmc), r = t % (l->bt * l->nmc), bi = r / l->nmc, mci = r % l->nmc;
    int m0 = mci * l->mt, mn = imin(l->mt, l->M - m0), n0 = nci * l->nt, nn = imin(l->nt, l->Nn - n0);
    int es = c->es, dt = c->dt;
    uint32_t sh[4] = {1, 1, (uint32_t)mn, (uint32_t)l->K};
    int64_t ds[4], ss[4] = {0, 0, l->a_rs, l->a_cs};
    bk_compact(sh, ds);
    uint64_t src = l->x + (uint64_t)(bi * l->a_bs + m0 * l->a_rs) * es;
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_in, ISA_SPACE_DRAM, src, sh, ds, ss);
    bk_code_ld(k, &in, 0);
    sh[2] = (uint32_t)l->K; sh[3] = (uint32_t)nn;
    ss[2] = l->b_rs; ss[3] = l->b_cs;
    bk_compact(sh, ds);
    src = l->w + (uint64_t)(bi * l->b_bs + n0 * l->b_cs) * es;
    in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_w, ISA_SPACE_DRAM, src, sh, ds, ss);
    bk_code_ld(k, &in, l->b_bs == 0 && l->count_pad);   /* count_pad: B is a constant */
    uint32_t osh[4] = {1, 1, (uint32_t)mn, (uint32_t)nn};
    int64_t oc[4];
    bk_compact(osh, oc);
    if (l->b) {
        /* pool_op: 1 = bias is [M][N], 0 = per column */
        sh[2] = l->pool_op ? (uint32_t)mn : 1; sh[3] = (uint32_t)nn;
        ss[2] = l->pool_op ? l->Nn : 0; ss[3] = 1;
        bk_compact(sh, ds);
        src = l->b + (uint64_t)((l->pool_op ? m0 * l->Nn : 0) + n0) * 4;
        in = bk_dma(ISA_F32, ISA_SPACE_LMEM, slot + l->l_b, ISA_SPACE_DRAM, src, sh, ds, ss);
        bk_code_ld(k, &in, !l->pool_op);
    }
    AtlInsn mm;
    memset(&mm, 0, sizeof mm);
    mm.op = ISA_OP_MM;
    mm.dtype = (uint8_t)dt;
    mm.dst = slot + l->l_acc;
    mm.src = slot + l->l_in;
    mm.src2 = slot + l->l_w;
    mm.m = (uint32_t)mn; mm.k = (uint32_t)l->K; mm.n = (uint32_t)nn;
    mm.lda = (uint32_t)l->K; mm.ldb = (uint32_t)nn; mm.ldc = (uint32_t)nn;
    bk_code_cp(k, &mm);
    if (l->b) {
        int64_t bs[4] = {0, 0, l->pool_op ? nn : 0, 1};
        in = bk_vbin(ISA_OP_V_ADD, ISA_F32, slot + l->l_acc, slot + l->l_acc, slot + l->l_b, osh, oc, oc, bs);
        bk_code_cp(k, &in);
    }
    if (l->act[0] && bk_act_code(k, l->act, l->act_alpha, l->act_beta, ISA_F32, slot + l->l_acc, slot + l->l_tmp,
                                 (uint32_t)(mn * nn), 0))
        return bk_fail(c, g->node, e, "activation %s cannot be fused", l->act);
    uint64_t res = slot + l->l_acc;
    if (dt != ISA_F32) {
        memset(&in, 0, sizeof in);
        in.op = ISA_OP_V_CAST;
        in.dtype = ISA_F32;
        in.otype = (uint8_t)dt;
        in.dst = slot + l->l_out;
        in.src = res;
        for (int d = 0; d < 4; d++) { in.shape[d] = osh[d]; in.dst_stride[d] = (int32_t)oc[d]; in.src_stride[d] = (int32_t)oc[d]; }
        bk_code_cp(k, &in);
        res = slot + l->l_out;
    }
    ds[0] = 0; ds[1] = 0; ds[2] = l->Nn; ds[3] = 1;
    uint64_t dst = l->y + ((uint64_t)bi * l->M * l->Nn + (uint64_t)m0 * l->Nn + (uint64_t)n0) * es;
    in = bk_dma(dt, ISA_SPACE_DRAM, dst, ISA_SPACE_LMEM, res, osh, ds, oc);
    bk_code_st(k, &in);
    return 0;
}

static int layout(const BkCtx *c, const BkGroup *g, BkLow *l)
{
    uint64_t used = 0, mt = (uint64_t)l->mt, nt = (uint64_t)l->nt;
    l->l_in = bk_slot_alloc(c, &used, mt * l->K * c->es);
    l->l_w = bk_slot_alloc(c, &used, (uint64_t)l->K * nt * c->es);
    l->l_b = l->b ? bk_slot_alloc(c, &used, (l->pool_op ? mt : 1) * nt * 4) : 0;
    l->l_acc = bk_slot_alloc(c, &used, mt * nt * 4);
    l->l_tmp = !strcmp(l->act, "HardSwish") ? bk_slot_alloc(c, &used, mt * nt * 4) : 0;
    l->l_out = c->dt != ISA_F32 ? bk_slot_alloc(c, &used, mt * nt * c->es) : 0;
    return used <= g->slot_size ? 0 : -1;
}

static void keys(BkGroup *g)
{
    const BkLow *l = &g->lw;
    for (int t = 0; t < g->ntiles; t++) {
        int nci = t / (l->bt * l->nmc), bi = t % (l->bt * l->nmc) / l->nmc;
        g->tile_wkey[t] = l->b_bs == 0 ? nci : nci * l->bt + bi;
    }
}

static int choose(BkCtx *c, BkGroup *g, AtlErr *e)
{
    BkLow *l = &g->lw;
    int bm = -1, bn = -1;
    uint64_t best = UINT64_MAX;
    for (int nt = l->Nn;; nt = (nt + 1) / 2) {
        for (int mt = l->M;; mt = (mt + 1) / 2) {
            l->mt = mt; l->nt = nt;
            if (layout(c, g, l) == 0) {
                l->nmc = (l->M + mt - 1) / mt;
                l->nnc = (l->Nn + nt - 1) / nt;
                if (bk_assign_tiles(c, g, l->nnc * l->bt * l->nmc, e)) return -1;
                keys(g);
                if (bk_cost_group(c, g, e)) return -1;
                if (g->est_cycles < best) { best = g->est_cycles; bm = mt; bn = nt; }
            }
            if (mt == 1) break;
        }
        if (nt == 1) break;
    }
    if (bm < 0)
        return bk_fail(c, g->node, e, "K = %d is too deep: one row of A and one column of B do not fit half of "
                       "LMEM (%d bytes); splitting K is not lowered yet", l->K, (int)g->slot_size);
    l->mt = bm; l->nt = bn;
    layout(c, g, l);
    l->nmc = (l->M + bm - 1) / bm;
    l->nnc = (l->Nn + bn - 1) / bn;
    if (bk_assign_tiles(c, g, l->nnc * l->bt * l->nmc, e)) return -1;
    keys(g);
    snprintf(g->split, sizeof g->split, "B%d M%d N%d", l->bt, l->nmc, l->nnc);
    return bk_cost_group(c, g, e);
}

int bk_lower_mm(BkCtx *c, int node, BkGroup *g, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &g->lw;
    l->kind = BK_K_MM;
    int gemm = !strcmp(nd->op, "Gemm");
    const IrTensor *a = &gr->t[nd->in[0]], *b = &gr->t[nd->in[1]], *y = &gr->t[nd->out[0]];
    int ta = gemm ? (int)ir_attr_int(nd, "transA", 0) : 0, tb = gemm ? (int)ir_attr_int(nd, "transB", 0) : 0;
    float alpha = gemm ? ir_attr_float(nd, "alpha", 1.0f) : 1.0f, beta = gemm ? ir_attr_float(nd, "beta", 1.0f) : 1.0f;
    if (a->ndim < 1 || b->ndim < 1 || y->ndim < 1) return bk_fail(c, node, e, "scalar operands");
    /* A as [abt][M][K] */
    int64_t M = a->ndim == 1 ? 1 : a->dims[a->ndim - 2], K = a->dims[a->ndim - 1];
    if (ta) { int64_t s = M; M = K; K = s; }
    int64_t N = b->ndim == 1 ? 1 : b->dims[b->ndim - 1];
    if (tb) N = b->dims[0];
    int64_t abt = 1, bbt = 1, ybt = 1;
    for (int d = 0; d < a->ndim - 2; d++) abt *= a->dims[d];
    for (int d = 0; d < b->ndim - 2; d++) bbt *= b->dims[d];
    for (int d = 0; d < y->ndim - 2; d++) ybt *= y->dims[d];
    if ((abt != 1 && abt != ybt) || (bbt != 1 && bbt != ybt))
        return bk_fail(c, node, e, "partially broadcast batch dimensions are not lowered");
    if (M > 65535 || K > 65535 || N > 65535) return bk_fail(c, node, e, "a matrix dimension exceeds 65535");
    l->bt = (int)ybt; l->M = (int)M; l->K = (int)K; l->Nn = (int)N;
    l->a_bs = abt == 1 ? 0 : M * K;
    l->a_rs = ta ? 1 : K; l->a_cs = ta ? M : 1;
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    if (b->data) {
        size_t nb = (size_t)bbt * K * N;
        uint8_t *wb = malloc(nb * (size_t)c->es);
        if (!wb) return bk_fail(c, node, e, "out of memory");
        for (int64_t q = 0; q < bbt; q++)
            for (int64_t kk = 0; kk < K; kk++)
                for (int64_t n = 0; n < N; n++) {
                    int64_t src = q * K * N + (tb ? n * K + kk : kk * N + n);
                    bk_store_elem(c->dt, wb, (size_t)(q * K * N + kk * N + n), alpha * ir_get_f(b, src));
                }
        int rc = bk_weight(c, wb, nb * c->es, &l->w, e);
        free(wb);
        if (rc) return -1;
        l->b_rs = N; l->b_cs = 1;
        l->count_pad = 1;            /* marks B as constant (weight loads may be skipped) */
    } else {
        if (alpha != 1.0f) return bk_fail(c, node, e, "alpha != 1 with a non-constant B is not lowered");
        if (bk_tensor_in_dram(c, nd->in[1], &l->w, e)) return -1;
        l->b_rs = tb ? 1 : N; l->b_cs = tb ? K : 1;
        l->count_pad = 0;
    }
    l->b_bs = bbt == 1 ? 0 : K * N;
    l->b = 0;
    l->pool_op = 0;
    if (gemm && nd->nin > 2 && nd->in[2] >= 0) {
        const IrTensor *ct = &gr->t[nd->in[2]];
        if (!ct->data) return bk_fail(c, node, e, "a non-constant C is not lowered");
        int64_t cn = ir_numel(ct);
        int full = cn == M * N && !(ct->ndim >= 1 && ct->dims[ct->ndim - 1] == N && cn == N);
        if (!(cn == 1 || cn == N || full)) return bk_fail(c, node, e, "C of shape %lld elements is not lowered", (long long)cn);
        size_t nbias = full ? (size_t)(M * N) : (size_t)N;
        float *bb = malloc(nbias * sizeof *bb);
        if (!bb) return bk_fail(c, node, e, "out of memory");
        for (size_t i = 0; i < nbias; i++) bb[i] = beta * (float)ir_get_f(ct, cn == 1 ? 0 : (int64_t)i);
        int rc = bk_weight(c, bb, nbias * 4, &l->b, e);
        free(bb);
        if (rc) return -1;
        l->pool_op = full;
    }
    if (c->act_on[node]) {
        snprintf(l->act, sizeof l->act, "%s", nd->act);
        l->act_alpha = nd->act_alpha;
        l->act_beta = nd->act_beta;
    }
    g->gen = mm_gen;
    g->is_matrix = 1;
    g->macs = (uint64_t)ybt * M * K * N;
    return choose(c, g, e);
}
