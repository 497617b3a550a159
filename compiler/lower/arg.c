/* arg.c - ArgMax, ArgMin and Hardmax on the vector unit.
 *
 * x is viewed as [outer][red][inner] around the reduced axis (Hardmax before
 * opset 13: every axis from `axis` on is reduced, the 2-D coercion). A tile
 * is a run of outer rows with their whole [red][inner] block in LMEM:
 *   ArgMax / ArgMin: one v.rargmax / v.rargmin along the reduced dim (`last`
 *     = select_last_index) gives the i32 indices [rows][inner], stored as
 *     they are: the output (int64 in the graph) is i32 on the chip.
 *   Hardmax: the same v.rargmax (first of ties), then the one-hot
 *     v.eq(index broadcast along red, i32 iota [red] broadcast along rows
 *     and inner) and one v.cast of those exact 0/1 values to the float
 *     storage dtype.
 * NaN: v.rargmax / v.rargmin take a NaN as the extreme (numpy), as the
 * interpreter does (compiler/ops/extra.c).
 * Helpers shared with the other index lowerings: bk_row_tiles /
 * bk_row_range (runs of outer rows spread over the cores; OneHot, TopK),
 * bk_iota_weight (the i32 iota; losses, TopK) and bk_need_dt (their dtype
 * checks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/lower/lower.h"

int bk_row_tiles(BkCtx *c, int node, BkLayer *ly, int64_t outer, uint64_t per_row, uint64_t fixed, AtlErr *e)
{
    BkLow *l = &ly->lw;
    uint64_t fit = ly->slot_size > fixed ? (ly->slot_size - fixed) / (per_row ? per_row : 1) : 0;
    if (fit < 1) return bk_fail(c, node, e, "one row (%llu bytes) does not fit half of LMEM", (unsigned long long)per_row);
    uint64_t ch = (uint64_t)(outer + c->ncores - 1) / (uint64_t)c->ncores;
    if (ch > fit) ch = fit;
    if (ch > 65535) ch = 65535;
    if (ch < 1) ch = 1;
    l->chunk[0] = 1; l->chunk[1] = (uint32_t)ch; l->chunk[2] = l->od[2]; l->chunk[3] = l->od[3];
    int nt = (int)((outer + (int64_t)ch - 1) / (int64_t)ch);
    if (bk_set_tiles(ly, nt, 1, e)) return -1;
    snprintf(ly->split, sizeof ly->split, "rows %d", nt);
    return 0;
}

/* Rows [o0, o0 + *on) of tile t (chunk[1] rows per tile, od[1] in all). */
int bk_need_dt(const BkCtx *c, int node, int t, int want, AtlErr *e)
{
    const IrTensor *x = &c->g->t[t];
    int dt = bk_tensor_dt(c, t);
    if (dt == want) return 0;
    return bk_fail(c, node, e, "'%s' is %s (chip %s); this lowering takes chip %s there", x->name, ir_dtype_name(x->dtype),
                   dt < 0 ? "none" : isa_dtype_name(dt), isa_dtype_name(want));
}

uint32_t bk_row_range(const BkLow *l, int t, uint32_t *on)
{
    uint32_t o0 = (uint32_t)t * l->chunk[1];
    *on = l->od[1] - o0 < l->chunk[1] ? l->od[1] - o0 : l->chunk[1];
    return o0;
}

/* Layer fields: od = {1, outer, red, inner}; x, y; w = i32 iota (Hardmax);
 * M = 1 for ArgMin, K = select_last_index, nin = 1 for Hardmax;
 * l_in = x block, l_out = i32 indices, l_acc = i32 one-hot, l_w = iota. */
static int arg_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)e;
    const BkLow *l = &ly->lw;
    uint32_t on, o0 = bk_row_range(l, t, &on);
    uint32_t sh[4] = {1, on, l->od[2], l->od[3]}, rsh[4] = {1, on, 1, l->od[3]};
    int64_t cs[4], rc[4];
    bk_compact(sh, cs);
    bk_compact(rsh, rc);
    int dt = c->dt, es = c->es;
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_in, ISA_SPACE_DRAM,
                        l->x + (uint64_t)o0 * l->od[2] * l->od[3] * (uint64_t)es, sh, cs, cs);
    bk_code_ld(k, &in, 0);
    memset(&in, 0, sizeof in);
    in.op = l->M ? ISA_OP_V_RARGMIN : ISA_OP_V_RARGMAX;
    in.dtype = (uint8_t)dt;
    in.dst = slot + l->l_out;
    in.src = slot + l->l_in;
    memcpy(in.shape, sh, sizeof in.shape);
    in.axis = 2;
    in.last = (uint8_t)l->K;
    bk_code_cp(k, &in);
    if (!l->nin) {
        in = bk_dma(ISA_I32, ISA_SPACE_DRAM, l->y + (uint64_t)o0 * l->od[3] * 4, ISA_SPACE_LMEM, slot + l->l_out, rsh, rc, rc);
        bk_code_st(k, &in);
        return 0;
    }
    uint32_t ish[4] = {1, 1, l->od[2], 1};
    int64_t ics[4], bidx[4] = {rc[0], rc[1], 0, rc[3]}, biota[4] = {0, 0, 1, 0};
    bk_compact(ish, ics);
    in = bk_dma(ISA_I32, ISA_SPACE_LMEM, slot + l->l_w, ISA_SPACE_DRAM, l->w, ish, ics, ics);
    bk_code_ld(k, &in, 1);
    in = bk_vbin(ISA_OP_V_EQ, ISA_I32, slot + l->l_acc, slot + l->l_out, slot + l->l_w, sh, cs, bidx, biota);
    bk_code_cp(k, &in);
    in = bk_vun(ISA_OP_V_CAST, ISA_I32, slot + l->l_in, slot + l->l_acc, sh, cs, cs, 0, 0);
    in.otype = (uint8_t)dt;
    bk_code_cp(k, &in);
    in = bk_dma(dt, ISA_SPACE_DRAM, l->y + (uint64_t)o0 * l->od[2] * l->od[3] * (uint64_t)es, ISA_SPACE_LMEM,
                slot + l->l_in, sh, cs, cs);
    bk_code_st(k, &in);
    return 0;
}

int bk_iota_weight(BkCtx *c, int64_t n, int64_t hole, uint64_t *tagged, AtlErr *e)
{
    int32_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v) return atl_fail(e, "out of memory");
    for (int64_t i = 0; i < n; i++) v[i] = i == hole ? INT32_MIN : (int32_t)i;
    int rc = bk_weight(c, v, (size_t)n * sizeof *v, tagged, e);
    free(v);
    return rc;
}

int bk_lower_arg(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]];
    BkLow *l = &ly->lw;
    l->kind = BK_K_ARG;
    int hard = !strcmp(nd->op, "Hardmax"), r = x->ndim;
    if (bk_need_dt(c, node, nd->in[0], c->dt, e) || bk_need_dt(c, node, nd->out[0], hard ? c->dt : ISA_I32, e)) return -1;
    int ax = (int)ir_attr_int(nd, "axis", hard ? (gr->opset >= 13 ? -1 : 1) : 0);
    if (ax < 0) ax += r;
    if (ax < 0 || ax >= (r ? r : 1)) return bk_fail(c, node, e, "axis out of range");
    int a1 = hard && gr->opset < 13 ? r - 1 : ax;
    int64_t outer = 1, red = 1, inner = 1;
    for (int d = 0; d < r; d++) {
        if (d < ax) outer *= x->dims[d];
        else if (d <= a1) red *= x->dims[d];
        else inner *= x->dims[d];
    }
    if (outer * red * inner == 0) return bk_fail(c, node, e, "an empty input is not lowered");
    if (outer > 65535 || red > 65535 || inner > 65535)
        return bk_fail(c, node, e, "shape %lldx%lldx%lld around the axis exceeds 65535 per dimension", (long long)outer,
                       (long long)red, (long long)inner);
    l->od[0] = 1; l->od[1] = (uint32_t)outer; l->od[2] = (uint32_t)red; l->od[3] = (uint32_t)inner;
    l->M = !strcmp(nd->op, "ArgMin");
    l->K = hard ? 0 : (int)ir_attr_int(nd, "select_last_index", 0) != 0;
    l->nin = hard;
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    if (hard && bk_iota_weight(c, red, -1, &l->w, e)) return -1;
    uint64_t blk = (uint64_t)red * (uint64_t)inner;
    uint64_t per_row = blk * (uint64_t)c->es + (hard ? blk * 4 : 0) + (uint64_t)inner * 4 + 2 * c->align;
    if (bk_row_tiles(c, node, ly, outer, per_row, (uint64_t)red * 4 + 4 * c->align, e)) return -1;
    uint64_t ch = l->chunk[1], used = 0;
    l->l_in = bk_slot_alloc(c, &used, ch * blk * (uint64_t)c->es);
    l->l_out = bk_slot_alloc(c, &used, ch * (uint64_t)inner * 4);
    l->l_acc = hard ? bk_slot_alloc(c, &used, ch * blk * 4) : 0;
    l->l_w = hard ? bk_slot_alloc(c, &used, (uint64_t)red * 4) : 0;
    if (used > ly->slot_size) return bk_fail(c, node, e, "tile does not fit LMEM");
    if (hard) for (int t = 0; t < ly->ntiles; t++) ly->tile_wkey[t] = 0;   /* the iota stays in the slot */
    ly->gen = arg_gen;
    return 0;
}
