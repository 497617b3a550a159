/* qelem.c - Int8Add and Int8GlobalAveragePool on the vector unit, exactly
 * as ops/int8.c defines them: every f32 step is one instruction with one
 * IEEE single rounding, the integers exact.
 *
 * Int8Add (a register program run by lower/vec.c's elementwise tiles,
 * inputs broadcast by their strides): per input, v.cast to f32 (exact),
 * v.affine (1, -zero point) (exact: small integers), v.affine (scale, 0)
 * (the one rounding of the product); v.add of the two; v.round (half to
 * even); v.affine (1, y zero point); v.clip to [y_min, y_max]; v.cast to
 * the output's chip dtype (i8, or i16 for uint8).
 * Int8GlobalAveragePool: tiles of rows (n, c) of [HW] elements; v.rsum
 * into i32 (exact), v.cast f32 (exact below 2^24, which HW < 65536
 * guarantees), v.affine (1, -HW x x zero point), v.affine (scale, 0), then
 * the same tail. */
#include <string.h>
#include "compiler/lower/quant.h"

int bk_int8_add_program(const IrGraph *g, const IrNode *nd, BkLow *l, int nin, int *out, int *nscratch)
{
    (void)g;
    static const char *const scale_attr[2] = {"a_scale", "b_scale"}, *const zp_attr[2] = {"a_zero_point", "b_zero_point"};
    if (l->nsteps + 4 * nin + 5 > BK_MAXSTEP) return -1;
    int acc = nin, reg = nin;   /* scratch: one f32 register per input, then the output */
    for (int i = 0; i < nin; i++, reg++) {
        l->steps[l->nsteps++] = (BkStep){ISA_OP_V_CAST, reg, i, -1, 0, 0};
        l->steps[l->nsteps++] = (BkStep){ISA_OP_V_AFFINE, reg, reg, -1, 1.0f, -(float)ir_attr_int(nd, zp_attr[i], 0)};
        l->steps[l->nsteps++] = (BkStep){ISA_OP_V_AFFINE, reg, reg, -1, ir_attr_float(nd, scale_attr[i], 1.0f), 0};
        l->reg_dt[reg] = ISA_F32;
        if (i) l->steps[l->nsteps++] = (BkStep){ISA_OP_V_ADD, acc, acc, reg, 0, 0};
    }
    l->steps[l->nsteps++] = (BkStep){ISA_OP_V_ROUND, acc, acc, -1, 0, 0};
    l->steps[l->nsteps++] = (BkStep){ISA_OP_V_AFFINE, acc, acc, -1, 1.0f, (float)ir_attr_int(nd, "y_zero_point", 0)};
    l->steps[l->nsteps++] = (BkStep){ISA_OP_V_CLIP, acc, acc, -1, (float)ir_attr_int(nd, "y_min", -128),
                                     (float)ir_attr_int(nd, "y_max", 127)};
    l->steps[l->nsteps++] = (BkStep){ISA_OP_V_CAST, reg, acc, -1, 0, 0};
    l->reg_dt[reg] = (int8_t)l->dt;
    *out = reg;
    *nscratch = reg - nin + 1;
    return 1;
}

/* Layer fields: od = {1, rows, 1, HW}; x, y; xdt / dt the chip dtypes;
 * q_xz = HW x x's zero point; q_mult the scale; q_zp, q_lo, q_hi the tail.
 * Slot: l_in the rows (x's dtype), l_acc the i32 sums, l_tmp f32, l_out. */
static int gap_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)c; (void)e;
    const BkLow *l = &ly->lw;
    uint32_t on, o0 = bk_row_range(l, t, &on);
    uint32_t sh[4] = {1, 1, on, l->od[3]}, rsh[4] = {1, 1, 1, on};
    int64_t cs[4], rc[4];
    bk_compact(sh, cs);
    bk_compact(rsh, rc);
    AtlInsn in = bk_dma(l->xdt, ISA_SPACE_LMEM, slot + l->l_in, ISA_SPACE_DRAM,
                        l->x + (uint64_t)o0 * l->od[3] * (uint64_t)l->xes, sh, cs, cs);
    bk_code_ld(k, &in, 0);
    bk_q_reduce(k, ISA_OP_V_RSUM, l->xdt, ISA_I32, slot + l->l_acc, slot + l->l_in, sh, 3);
    uint64_t f = slot + l->l_tmp;
    in = bk_q_cast(ISA_I32, ISA_F32, f, slot + l->l_acc, rsh, rc, rc);
    bk_code_cp(k, &in);
    in = bk_vun(ISA_OP_V_AFFINE, ISA_F32, f, f, rsh, rc, rc, 1.0f, -(float)l->q_xz);
    bk_code_cp(k, &in);
    in = bk_vun(ISA_OP_V_AFFINE, ISA_F32, f, f, rsh, rc, rc, l->q_mult, 0.0f);
    bk_code_cp(k, &in);
    bk_q_tail(k, f, 0, NULL, l->q_zp, l->q_lo, l->q_hi, l->dt, slot + l->l_out, rsh, rc);
    in = bk_dma(l->dt, ISA_SPACE_DRAM, l->y + (uint64_t)o0 * (uint64_t)l->es, ISA_SPACE_LMEM, slot + l->l_out, rsh, rc, rc);
    bk_code_st(k, &in);
    return 0;
}

int bk_lower_int8_gap(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]];
    BkLow *l = &ly->lw;
    l->kind = BK_K_REDUCE;
    int64_t rows = x->dims[0] * x->dims[1], len = ir_numel(x) / (rows ? rows : 1);
    if (rows < 1 || len < 1 || len >= 65536 || rows > 65535 * 65535LL)
        return bk_fail(c, node, e, "%lld rows of %lld elements: at most 65535 elements per channel", (long long)rows, (long long)len);
    l->xdt = bk_tensor_dt(c, nd->in[0]);
    l->xes = bk_tensor_es(c, nd->in[0]);
    l->dt = bk_tensor_dt(c, nd->out[0]);
    l->es = bk_tensor_es(c, nd->out[0]);
    l->q_xz = (int)(len * ir_attr_int(nd, "x_zero_point", 0));
    l->q_mult = ir_attr_float(nd, "scale", 1.0f);
    l->q_zp = (float)ir_attr_int(nd, "y_zero_point", 0);
    l->q_lo = (int)ir_attr_int(nd, "y_min", -128);
    l->q_hi = (int)ir_attr_int(nd, "y_max", 127);
    l->od[0] = 1; l->od[1] = (uint32_t)rows; l->od[2] = 1; l->od[3] = (uint32_t)len;
    if (rows > 65535) return bk_fail(c, node, e, "%lld rows exceed 65535", (long long)rows);
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    uint64_t per_row = (uint64_t)len * (uint64_t)l->xes + 4 + 4 + (uint64_t)l->es, used = 0;
    if (bk_row_tiles(c, node, ly, rows, per_row, 4 * c->align, e)) return -1;
    uint64_t ch = l->chunk[1];
    l->l_in = bk_slot_alloc(c, &used, ch * (uint64_t)len * (uint64_t)l->xes);
    l->l_acc = bk_slot_alloc(c, &used, ch * 4);
    l->l_tmp = bk_slot_alloc(c, &used, ch * 4);
    l->l_out = bk_slot_alloc(c, &used, ch * (uint64_t)l->es);
    if (used > ly->slot_size) return bk_fail(c, node, e, "a tile does not fit LMEM");
    ly->gen = gap_gen;
    return 0;
}
