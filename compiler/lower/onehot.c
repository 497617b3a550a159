/* onehot.c - OneHot on the vector unit.
 *
 * y is [outer][depth][inner] around `axis`, the indices [outer][inner]
 * (integers, i32 on the chip, or floats, truncated toward zero as the
 * interpreter does), values = {off, on} (a constant or a run-time tensor of
 * y's dtype). A tile is a run of outer rows: the indices are compared
 * (v.eq, in their own dtype) with two constant tables broadcast along the
 * rows and inner, j and j - depth for j < depth, so a negative index in
 * [-depth, -1] matches j = index + depth; an index outside [-depth, depth)
 * matches nothing (all off, as ONNX says). The 0/1 sum of the two masks
 * (v.cast to y's dtype when it differs) selects: y = (mask - mask) + off,
 * then v.sel(mask, on). Depth must be a constant (it sets y's shape). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/lower/lower.h"

/* LMEM registers: indices, the two tables, two masks ([rows][depth][inner]
 * each), the mask in y's dtype, y, the off and on values (each operand in
 * its own aligned register). */
enum { OI, OT, OT2, OM, OM2, OF, OY, OV, OV2, ONREG };

/* Layer fields: od = {1, outer, depth, inner}; x = indices, w = tables
 * [2][depth] in xdt, b = values, y; xdt / xes: the indices' dtype (ISA)
 * and size, dt / es y's; K = 1 for float indices. */
static int onehot_gen(BkCtx *c, const BkLayer *g, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)c; (void)e;
    const BkLow *l = &g->lw;
    uint32_t on, o0 = bk_row_range(l, t, &on), D = l->od[2], I = l->od[3];
    uint32_t sh[4] = {1, on, D, I}, rsh[4] = {1, on, 1, I}, tsh[4] = {1, 1, D, 1}, one[4] = {1, 1, 1, 1};
    int64_t cs[4], rc[4], tcs[4], oc[4] = {1, 1, 1, 1};
    bk_compact(sh, cs);
    bk_compact(rsh, rc);
    bk_compact(tsh, tcs);
    int64_t brow[4] = {rc[0], rc[1], 0, rc[3]}, btab[4] = {0, 0, 1, 0}, bval[4] = {0, 0, 0, 0};
    uint64_t r[ONREG];
    for (int i = 0; i < ONREG; i++) r[i] = slot + l->l_reg[i];
    int xdt = l->xdt, ydt = l->dt;
    uint64_t xes = (uint64_t)l->xes, yes = (uint64_t)l->es;
    AtlInsn in = bk_dma(xdt, ISA_SPACE_LMEM, r[OI], ISA_SPACE_DRAM, l->x + (uint64_t)o0 * I * xes, rsh, rc, rc);
    bk_code_ld(k, &in, 0);
    for (int i = 0; i < 2; i++) {
        in = bk_dma(xdt, ISA_SPACE_LMEM, r[OT + i], ISA_SPACE_DRAM, l->w + i * D * xes, tsh, tcs, tcs);
        bk_code_ld(k, &in, 1);
        in = bk_dma(ydt, ISA_SPACE_LMEM, r[OV + i], ISA_SPACE_DRAM, l->b + i * yes, one, oc, oc);
        bk_code_ld(k, &in, 1);
    }
    if (l->K) {   /* float indices: toward zero first */
        in = bk_vun(ISA_OP_V_TRUNC, xdt, r[OI], r[OI], rsh, rc, rc, 0, 0);
        bk_code_cp(k, &in);
    }
    in = bk_vbin(ISA_OP_V_EQ, xdt, r[OM], r[OI], r[OT], sh, cs, brow, btab);
    bk_code_cp(k, &in);
    in = bk_vbin(ISA_OP_V_EQ, xdt, r[OM2], r[OI], r[OT2], sh, cs, brow, btab);
    bk_code_cp(k, &in);
    in = bk_vbin(ISA_OP_V_ADD, xdt, r[OM], r[OM], r[OM2], sh, cs, cs, cs);
    bk_code_cp(k, &in);
    uint64_t mask = r[OM];
    if (xdt != ydt) {
        in = bk_vun(ISA_OP_V_CAST, xdt, r[OF], r[OM], sh, cs, cs, 0, 0);
        in.otype = (uint8_t)ydt;
        bk_code_cp(k, &in);
        mask = r[OF];
    }
    in = bk_vbin(ISA_OP_V_SUB, ydt, r[OY], mask, mask, sh, cs, cs, cs);
    bk_code_cp(k, &in);
    in = bk_vbin(ISA_OP_V_ADD, ydt, r[OY], r[OY], r[OV], sh, cs, cs, bval);
    bk_code_cp(k, &in);
    in = bk_vbin(ISA_OP_V_SEL, ydt, r[OY], mask, r[OV2], sh, cs, cs, bval);
    bk_code_cp(k, &in);
    in = bk_dma(ydt, ISA_SPACE_DRAM, l->y + (uint64_t)o0 * D * I * yes, ISA_SPACE_LMEM, r[OY], sh, cs, cs);
    bk_code_st(k, &in);
    return 0;
}

int bk_lower_onehot(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *dep = &gr->t[nd->in[1]], *y = &gr->t[nd->out[0]];
    BkLow *l = &ly->lw;
    l->kind = BK_K_ONEHOT;
    if (!dep->data) return bk_fail(c, node, e, "depth ('%s') must be a constant", dep->name);
    if (ir_numel(&gr->t[nd->in[2]]) != 2) return bk_fail(c, node, e, "values must have 2 elements");
    int xdt = bk_tensor_dt(c, nd->in[0]), ydt = bk_tensor_dt(c, nd->out[0]);
    if (xdt < 0 || ydt < 0) return bk_fail(c, node, e, "indices or values have a dtype the chip cannot hold");
    l->xdt = xdt;
    l->dt = ydt;
    l->xes = isa_dtype_size(xdt);
    l->es = isa_dtype_size(ydt);
    l->K = xdt == ISA_F32 || xdt == ISA_F16 || xdt == ISA_BF16;
    int ax = (int)ir_attr_int(nd, "axis", -1);
    if (ax < 0) ax += y->ndim;
    int64_t outer = 1, D = y->dims[ax], inner = 1;
    for (int d = 0; d < y->ndim; d++) {
        if (d < ax) outer *= y->dims[d];
        else if (d > ax) inner *= y->dims[d];
    }
    if (outer * D * inner == 0) return bk_fail(c, node, e, "an empty output is not lowered");
    if (outer > 65535 || D > 65535 || inner > 65535)
        return bk_fail(c, node, e, "shape %lldx%lldx%lld exceeds 65535 per dimension", (long long)outer, (long long)D, (long long)inner);
    if (l->K && xdt != ISA_F32 && D > 256) return bk_fail(c, node, e, "depth %lld beyond the integers f16/bf16 hold exactly", (long long)D);
    l->od[0] = 1; l->od[1] = (uint32_t)outer; l->od[2] = (uint32_t)D; l->od[3] = (uint32_t)inner;
    int xes = l->xes, yes = l->es;
    uint8_t *tab = malloc((size_t)(2 * D) * (size_t)xes);
    if (!tab) return bk_fail(c, node, e, "out of memory");
    for (int64_t j = 0; j < D; j++) {
        bk_store_elem(xdt, tab, (size_t)j, (double)j);
        bk_store_elem(xdt, tab, (size_t)(D + j), (double)(j - D));
    }
    int rc = bk_weight(c, tab, (size_t)(2 * D) * (size_t)xes, &l->w, e);
    free(tab);
    if (rc || bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->in[2], &l->b, e) ||
        bk_tensor_in_dram(c, nd->out[0], &l->y, e))
        return -1;
    uint64_t blk = (uint64_t)D * (uint64_t)inner, al = c->align;
    uint64_t per_row = blk * (uint64_t)(2 * xes + 2 * yes) + (uint64_t)inner * (uint64_t)xes + 6 * al;
    uint64_t fixed = (uint64_t)(2 * D * xes + 2 * yes) + 4 * al;
    if (bk_row_tiles(c, node, ly, outer, per_row, fixed, e)) return -1;
    uint64_t ch = l->chunk[1], used = 0;
    const uint64_t bytes[ONREG] = {ch * inner * xes, (uint64_t)(D * xes), (uint64_t)(D * xes), ch * blk * xes,
                                   ch * blk * xes, ch * blk * yes, ch * blk * yes, (uint64_t)yes, (uint64_t)yes};
    for (int i = 0; i < ONREG; i++) l->l_reg[i] = bk_slot_alloc(c, &used, bytes[i]);
    if (used > ly->slot_size) return bk_fail(c, node, e, "tile does not fit LMEM");
    for (int t = 0; t < ly->ntiles; t++) ly->tile_wkey[t] = 0;   /* tables and values stay in the slot */
    ly->gen = onehot_gen;
    return 0;
}
