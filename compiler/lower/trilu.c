/* trilu.c - Trilu on the vector unit.
 *
 * x is [B][N][M] (B = the leading dims). Which elements survive depends only
 * on (row, column), so the compiler writes a constant keep-mask [N][M] in
 * x's storage dtype (1 kept: col - row >= k for upper, <= k for lower; 0
 * zeroed). A tile is a box [b rows of matrices][r rows][M]: y = 0 (mask -
 * mask), then v.sel(mask broadcast over the matrices, x): a select, not a
 * multiply, so an inf or NaN in a zeroed place still gives 0, and integers
 * are copied bit-exactly. k must be a constant (the chip conformance runner
 * freezes it). Whole matrices per tile when one fits the slot, otherwise
 * runs of rows of one matrix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/lower/lower.h"

/* Layer fields: od = {1, B, N, M}, chunk[1..2] = matrices and rows per
 * tile, nch[1..2] their counts; x, y; w = the mask; dt / es x's storage
 * dtype and size. */
static int trilu_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)e;
    const BkLow *l = &ly->lw;
    uint32_t b0 = (uint32_t)(t / (int)l->nch[2]) * l->chunk[1], r0 = (uint32_t)(t % (int)l->nch[2]) * l->chunk[2];
    uint32_t bn = l->od[1] - b0 < l->chunk[1] ? l->od[1] - b0 : l->chunk[1];
    uint32_t rn = l->od[2] - r0 < l->chunk[2] ? l->od[2] - r0 : l->chunk[2];
    uint32_t sh[4] = {1, bn, rn, l->od[3]}, msh[4] = {1, 1, rn, l->od[3]};
    int64_t cs[4], ms[4], ds[4];
    bk_compact(sh, cs);
    bk_compact(msh, ms);
    bk_compact(l->od, ds);
    int64_t mb[4] = {0, 0, ms[2], ms[3]};
    int dt = l->dt;
    uint64_t off = ((uint64_t)b0 * (uint64_t)ds[1] + (uint64_t)r0 * (uint64_t)ds[2]) * (uint64_t)l->es;
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_in, ISA_SPACE_DRAM, l->x + off, sh, cs, ds);
    bk_code_ld(k, &in, 0);
    in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_w, ISA_SPACE_DRAM, l->w + (uint64_t)r0 * l->od[3] * (uint64_t)l->es, msh, ms, ms);
    bk_code_ld(k, &in, l->nch[2] == 1);
    in = bk_vbin(ISA_OP_V_SUB, dt, slot + l->l_out, slot + l->l_w, slot + l->l_w, sh, cs, mb, mb);
    bk_code_cp(k, &in);
    in = bk_vbin(ISA_OP_V_SEL, dt, slot + l->l_out, slot + l->l_w, slot + l->l_in, sh, cs, mb, cs);
    bk_code_cp(k, &in);
    in = bk_dma(dt, ISA_SPACE_DRAM, l->y + off, ISA_SPACE_LMEM, slot + l->l_out, sh, ds, cs);
    bk_code_st(k, &in);
    return 0;
}

int bk_lower_trilu(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]];
    BkLow *l = &ly->lw;
    l->kind = BK_K_TRILU;
    l->dt = bk_tensor_dt(c, nd->in[0]);
    if (l->dt < 0) return bk_fail(c, node, e, "input '%s' has dtype %s, which the chip cannot hold", x->name, ir_dtype_name(x->dtype));
    l->es = isa_dtype_size(l->dt);
    if (bk_need_dt(c, node, nd->out[0], l->dt, e)) return -1;
    int r = x->ndim;
    if (r < 2) return bk_fail(c, node, e, "input rank %d, needs at least 2", r);
    int64_t kk = 0;
    if (nd->nin > 1 && nd->in[1] >= 0) {
        const IrTensor *kt = &gr->t[nd->in[1]];
        if (!kt->data || ir_numel(kt) != 1) return bk_fail(c, node, e, "k ('%s') must be a constant scalar", kt->name);
        kk = ir_get_i(kt, 0);
    }
    int upper = ir_attr_int(nd, "upper", 1) != 0;
    int64_t B = 1, N = x->dims[r - 2], M = x->dims[r - 1];
    for (int d = 0; d < r - 2; d++) B *= x->dims[d];
    if (B * N * M == 0) return bk_fail(c, node, e, "an empty input is not lowered");
    if (B > 65535 || N > 65535 || M > 65535) return bk_fail(c, node, e, "shape %lldx%lldx%lld exceeds 65535 per dimension",
                                                          (long long)B, (long long)N, (long long)M);
    l->od[0] = 1; l->od[1] = (uint32_t)B; l->od[2] = (uint32_t)N; l->od[3] = (uint32_t)M;
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    uint8_t *mask = malloc((size_t)(N * M) * (size_t)l->es);
    if (!mask) return bk_fail(c, node, e, "out of memory");
    for (int64_t i = 0; i < N * M; i++) {
        int64_t row = i / M, col = i % M;
        bk_store_elem(l->dt, mask, (size_t)i, (upper ? col - row >= kk : col - row <= kk) ? 1.0 : 0.0);
    }
    int rc = bk_weight(c, mask, (size_t)(N * M) * (size_t)l->es, &l->w, e);
    free(mask);
    if (rc) return -1;
    /* matrices per tile when a whole one fits (x, y, mask), else rows of one */
    uint64_t room = ly->slot_size > 8 * c->align ? ly->slot_size - 8 * c->align : 0;
    uint64_t row = (uint64_t)M * (uint64_t)l->es, mat = (uint64_t)N * row;
    if (3 * mat <= room) {
        uint64_t bc = (uint64_t)(B + c->ncores - 1) / (uint64_t)c->ncores, fit = (room - mat) / (2 * mat);
        l->chunk[1] = (uint32_t)(bc < fit ? bc : fit);
        l->chunk[2] = (uint32_t)N;
    } else {
        if (3 * row > room) return bk_fail(c, node, e, "one row of %lld elements does not fit half of LMEM", (long long)M);
        l->chunk[1] = 1;
        l->chunk[2] = (uint32_t)(room / (3 * row));
    }
    l->chunk[0] = 1; l->chunk[3] = (uint32_t)M;
    for (int d = 0; d < 4; d++) l->nch[d] = (l->od[d] + l->chunk[d] - 1) / l->chunk[d];
    uint64_t used = 0, box = (uint64_t)l->chunk[1] * l->chunk[2] * row;
    l->l_in = bk_slot_alloc(c, &used, box);
    l->l_out = bk_slot_alloc(c, &used, box);
    l->l_w = bk_slot_alloc(c, &used, (uint64_t)l->chunk[2] * row);
    if (used > ly->slot_size) return bk_fail(c, node, e, "tile does not fit LMEM");
    int nt = (int)(l->nch[1] * l->nch[2]);
    if (bk_set_tiles(ly, nt, 1, e)) return -1;
    if (l->nch[2] == 1) for (int t = 0; t < nt; t++) ly->tile_wkey[t] = 0;   /* the whole mask stays in the slot */
    snprintf(ly->split, sizeof ly->split, "%ux%u", l->nch[1], l->nch[2]);
    ly->gen = trilu_gen;
    return 0;
}
