/* gather_el.c - GatherElements, and its mirror ScatterElements
 * (and Scatter, opset 9/10), constant or run-time indices.
 *
 * y[p] = x[p with its `axis` coordinate replaced by idx[p]]: in flat terms
 * y[p] = x[base[p] + idx'[p] * stride], with base[p] the offset of p's
 * other coordinates in x (a constant i32 table, one entry per output
 * element), stride x's stride along the axis and idx' = idx + A when idx is
 * negative (A = x's extent there). A tile is a run of output elements: the
 * indices (i32 on the chip) and their base entries are loaded, the flat
 * indices computed with i32 vector ops (v.lt, v.mul, v.add; an index still
 * outside [0, A) becomes numel(x) by a v.sel, so the gather faults naming
 * its entry instead of reading a neighbour), and one dma.gather over x
 * viewed as rows of one element copies the elements, reading the index
 * table straight from LMEM. Why a gather: the chip has no other way to
 * address memory by data (the same reason as lower/gather.c).
 * ScatterElements: y[p with its axis coordinate replaced by idx[p]] =
 * updates[p], the same flat indices (into data's shape, which is y's), the
 * tile a run of update elements, ending in one dma.scatter of updates into
 * y viewed as rows of one element; y starts as a copy of data, ordering
 * and the single core in lower/scatter.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/lower/lower.h"

/* LMEM registers: indices / flat indices, base entries, a mask, a second
 * mask, then the four i32 constants {0, A, stride, numel(x)}, one aligned
 * register each (vector operands start aligned). */
enum { C_ZERO, C_EXTENT, C_STRIDE, C_LIMIT, C_N };
enum { GI, GB, GM, GM2, GC, GNREG = GC + C_N };

/* Layer fields: od = {1, 1, 1, P}, chunk[3] elements a tile; x, y; cx =
 * indices (i32); w = base table; b = the constants; K = numel(x); dt / es
 * x's storage dtype and size; scatter: in_addr[0] = updates. */
static int gel_gen(BkCtx *c, const BkLayer *g, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)e;
    const BkLow *l = &g->lw;
    uint32_t p0 = (uint32_t)t * l->chunk[3], pn = l->od[3] - p0 < l->chunk[3] ? l->od[3] - p0 : l->chunk[3];
    uint32_t sh[4] = {1, 1, 1, pn}, one[4] = {1, 1, 1, 1};
    int64_t cs[4], bc[4] = {0, 0, 0, 0}, oc[4] = {1, 1, 1, 1};
    bk_compact(sh, cs);
    uint64_t r[GNREG], *cst = r + GC;
    for (int i = 0; i < GNREG; i++) r[i] = slot + l->l_reg[i];
    if (l->kind == BK_K_SCATTER_EL && t == 0) bk_scatter_copy_loads(k, l->dt, l->y, l->x, (uint64_t)l->K);
    AtlInsn in = bk_dma(ISA_I32, ISA_SPACE_LMEM, r[GI], ISA_SPACE_DRAM, l->cx + 4 * (uint64_t)p0, sh, cs, cs);
    bk_code_ld(k, &in, 0);
    in = bk_dma(ISA_I32, ISA_SPACE_LMEM, r[GB], ISA_SPACE_DRAM, l->w + 4 * (uint64_t)p0, sh, cs, cs);
    bk_code_ld(k, &in, 0);
    for (int i = 0; i < C_N; i++) {
        in = bk_dma(ISA_I32, ISA_SPACE_LMEM, cst[i], ISA_SPACE_DRAM, l->b + 4 * (uint64_t)i, one, oc, oc);
        bk_code_ld(k, &in, 1);
    }
    static const struct { int op, dst, a, b; } prog[] = {
        {ISA_OP_V_LT, GM, GI, -1 - C_ZERO},       /* idx < 0 */
        {ISA_OP_V_MUL, GM, GM, -1 - C_EXTENT},    /* ... times A */
        {ISA_OP_V_ADD, GI, GI, GM},               /* idx' */
        {ISA_OP_V_LT, GM, GI, -1 - C_ZERO},       /* still below 0 */
        {ISA_OP_V_LE, GM2, -1 - C_EXTENT, GI},    /* or A <= idx' */
        {ISA_OP_V_OR, GM, GM, GM2},
        {ISA_OP_V_MUL, GI, GI, -1 - C_STRIDE},
        {ISA_OP_V_ADD, GI, GI, GB},               /* flat index */
        {ISA_OP_V_SEL, GI, GM, -1 - C_LIMIT},     /* out of range: numel(x), the gather faults */
    };
    for (size_t s = 0; s < sizeof prog / sizeof prog[0]; s++) {
        uint64_t a = prog[s].a >= 0 ? r[prog[s].a] : cst[-1 - prog[s].a];
        uint64_t b = prog[s].b >= 0 ? r[prog[s].b] : cst[-1 - prog[s].b];
        in = bk_vbin(prog[s].op, ISA_I32, r[prog[s].dst], a, b, sh, cs, prog[s].a >= 0 ? cs : bc, prog[s].b >= 0 ? cs : bc);
        bk_code_cp(k, &in);
    }
    int scatter = l->kind == BK_K_SCATTER_EL;
    memset(&in, 0, sizeof in);
    in.op = scatter ? ISA_OP_DMA_SCATTER : ISA_OP_DMA_GATHER;
    in.dtype = (uint8_t)l->dt;
    in.dst_space = in.src_space = ISA_SPACE_DRAM;
    in.src2_space = ISA_SPACE_LMEM;
    in.dst = scatter ? l->y : l->y + (uint64_t)p0 * (uint64_t)l->es;
    in.src = scatter ? l->in_addr[0] + (uint64_t)p0 * (uint64_t)l->es : l->x;
    in.src2 = r[GI];
    in.shape[0] = 1; in.shape[1] = pn; in.shape[2] = 1; in.shape[3] = 1;
    for (int d = 0; d < 4; d++) in.dst_stride[d] = in.src_stride[d] = l->es;
    in.limit = (uint32_t)l->K;
    bk_code_st(k, &in);
    return 0;
}

int bk_lower_gather_elements(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]], *it = &gr->t[nd->in[1]];
    BkLow *l = &ly->lw;
    int scatter = strcmp(nd->op, "GatherElements") != 0;   /* ScatterElements, Scatter */
    const char *mn = scatter ? "dma.scatter" : "dma.gather";
    l->kind = scatter ? BK_K_SCATTER_EL : BK_K_GATHER_EL;
    l->dt = bk_tensor_dt(c, nd->in[0]);
    if (l->dt < 0) return bk_fail(c, node, e, "data '%s' has dtype %s, which the chip cannot hold", x->name, ir_dtype_name(x->dtype));
    l->es = isa_dtype_size(l->dt);
    if (bk_need_dt(c, node, nd->in[1], ISA_I32, e) || bk_need_dt(c, node, nd->out[0], l->dt, e)) return -1;
    if (scatter && (bk_scatter_check(c, node, l->dt, e) || bk_tensor_in_dram(c, nd->in[2], &l->in_addr[0], e))) return -1;
    int r = x->ndim, ax = (int)ir_attr_int(nd, "axis", 0);
    if (ax < 0) ax += r;
    if (ax < 0 || ax >= r || it->ndim != r) return bk_fail(c, node, e, "axis or index rank out of range");
    int64_t nx = ir_numel(x), P = ir_numel(it), xs[IR_MAXDIM], s = 1;
    if (nx == 0 || P == 0) return bk_fail(c, node, e, "an empty %s is not lowered", nd->op);
    if (nx >= (1 << 22)) return bk_fail(c, node, e, "x has %lld elements (%s takes rows 1..2^22-1)", (long long)nx, mn);
    if (P > INT32_MAX) return bk_fail(c, node, e, "too many indices");
    for (int d = r - 1; d >= 0; d--) { xs[d] = s; s *= x->dims[d]; }
    int32_t *base = malloc((size_t)P * sizeof *base);
    if (!base) return bk_fail(c, node, e, "out of memory");
    int64_t pos[IR_MAXDIM] = {0};
    for (int64_t p = 0; p < P; p++) {
        int64_t off = 0;
        for (int d = 0; d < r; d++) {
            if (d != ax && pos[d] >= x->dims[d]) { free(base); return bk_fail(c, node, e, "indices shape exceeds data shape on axis %d", d); }
            if (d != ax) off += pos[d] * xs[d];
        }
        base[p] = (int32_t)off;
        for (int d = r - 1; d >= 0; d--) { if (++pos[d] < it->dims[d]) break; pos[d] = 0; }
    }
    int32_t cst[C_N] = {0, (int32_t)x->dims[ax], (int32_t)xs[ax], (int32_t)nx};
    int rc = bk_weight(c, base, (size_t)P * sizeof *base, &l->w, e) || bk_weight(c, cst, sizeof cst, &l->b, e);
    free(base);
    if (rc) return -1;
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->in[1], &l->cx, e) ||
        bk_tensor_in_dram(c, nd->out[0], &l->y, e))
        return -1;
    l->K = (int)nx;
    l->od[0] = l->od[1] = l->od[2] = 1;
    l->od[3] = (uint32_t)P;
    /* runs of output elements: at most 65535 (one 16-bit gather dim), at
     * least one run per core, four i32 boxes within the slot */
    uint64_t room = ly->slot_size > 8 * c->align ? ly->slot_size - 8 * c->align : 0;
    int cores = scatter ? 1 : c->ncores;   /* a scatter runs on one core (lower/scatter.c) */
    uint64_t ch = (uint64_t)(P + cores - 1) / (uint64_t)cores;
    if (ch > 65535) ch = 65535;
    if (ch > room / 16) ch = room / 16;
    if (ch < 1) return bk_fail(c, node, e, "tile does not fit LMEM");
    l->chunk[0] = l->chunk[1] = l->chunk[2] = 1;
    l->chunk[3] = (uint32_t)ch;
    uint64_t used = 0;
    for (int i = 0; i < GNREG; i++) l->l_reg[i] = bk_slot_alloc(c, &used, i >= GC ? 4 : 4 * ch);
    if (used > ly->slot_size) return bk_fail(c, node, e, "tile does not fit LMEM");
    int nt = (int)(((uint64_t)P + ch - 1) / ch);
    if (scatter ? bk_scatter_tiles(c, ly, nt, e) : bk_set_tiles(ly, nt, 1, e)) return -1;
    for (int t = 0; t < nt; t++) ly->tile_wkey[t] = 0;   /* the constants stay in the slot */
    snprintf(ly->split, sizeof ly->split, "runs %d", nt);
    ly->gen = gel_gen;
    return 0;
}
