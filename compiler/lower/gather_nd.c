/* gather_nd.c - GatherND, and its mirror ScatterND, constant or
 * run-time indices.
 *
 * Each index tuple (k components, the last index dim) picks a slice of x
 * (the dims after batch_dims + k): y[t] = x[batch(t)][v_0]...[v_k-1][...].
 * With x viewed as rows of one slice, tuple t reads row
 * base[t] + sum_j v_j' * rs_j (v_j' = v_j + d_j when negative; rs_j the
 * row stride of dim batch_dims + j; base the batch's first row, a constant
 * i32 table, absent without batch dims). A tile is a run of tuples: the
 * [tuples][k] i32 indices are loaded, normalised and scaled by i32 vector
 * ops against constant [k] tables (extents d_j, strides rs_j, zeros)
 * broadcast along the tuples, summed over k (v.rsum), and a tuple with any
 * component outside [-d_j, d_j) (v.rmax of its flags) gets the row count,
 * so the gather faults naming its entry; one dma.gather then copies the
 * rows, reading its index table from LMEM.
 * ScatterND (no batch dims): the same row of data (= y's shape) per tuple;
 * updates are [tuples][slice], and one dma.scatter per tile writes its
 * rows into y, which starts as a copy of data (ordering and the single
 * core in lower/scatter.c). The row DMA and the slice split
 * (bk_row_index_dma, bk_row_slices) are shared with lower/revseq.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/lower/lower.h"

#define MAX16 65535

/* LMEM registers: indices, two flag boxes ([tuples][k]), rows, bad flags,
 * batch base ([tuples]), the tables extents, strides, zeros ([k]) and the
 * row count (one i32). */
enum { NI, NM, NM2, NR, NB, NBASE, NEXT, NRS, NZERO, NLIM, NNREG };

/* Layer fields: od = {1, 1, T, k}; chunk[2] tuples a tile; x, y; cx =
 * indices (i32); w = tables {extents[k], strides[k], zeros[k], rows};
 * b = batch base table (0 none); K = rows of x; Nn = slice elements,
 * od2 split as i2 x i3 in mt x nt; dt / es x's storage dtype; scatter:
 * in_addr[0] = updates. */
static int gnd_gen(BkCtx *c, const BkLayer *g, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)c; (void)e;
    const BkLow *l = &g->lw;
    uint32_t kk = l->od[3], t0 = (uint32_t)t * l->chunk[2];
    uint32_t tn = l->od[2] - t0 < l->chunk[2] ? l->od[2] - t0 : l->chunk[2];
    uint32_t sh[4] = {1, 1, tn, kk}, rsh[4] = {1, 1, 1, tn}, ksh[4] = {1, 1, 1, kk}, one[4] = {1, 1, 1, 1};
    int64_t cs[4], rc[4], kc[4], oc[4] = {1, 1, 1, 1}, bk[4] = {0, 0, 0, 1}, bs[4] = {0, 0, 0, 0};
    bk_compact(sh, cs);
    bk_compact(rsh, rc);
    bk_compact(ksh, kc);
    uint64_t r[NNREG];
    for (int i = 0; i < NNREG; i++) r[i] = slot + l->l_reg[i];
    int scatter = l->kind == BK_K_SCATTER_ND;
    if (scatter && t == 0) bk_scatter_copy_loads(k, l->dt, l->y, l->x, (uint64_t)l->K * (uint64_t)l->Nn);
    AtlInsn in = bk_dma(ISA_I32, ISA_SPACE_LMEM, r[NI], ISA_SPACE_DRAM, l->cx + 4 * (uint64_t)t0 * kk, sh, cs, cs);
    bk_code_ld(k, &in, 0);
    for (int i = 0; i < 3; i++) {
        in = bk_dma(ISA_I32, ISA_SPACE_LMEM, r[NEXT + i], ISA_SPACE_DRAM, l->w + 4 * (uint64_t)i * kk, ksh, kc, kc);
        bk_code_ld(k, &in, 1);
    }
    in = bk_dma(ISA_I32, ISA_SPACE_LMEM, r[NLIM], ISA_SPACE_DRAM, l->w + 12 * (uint64_t)kk, one, oc, oc);
    bk_code_ld(k, &in, 1);
    if (l->b) {
        in = bk_dma(ISA_I32, ISA_SPACE_LMEM, r[NBASE], ISA_SPACE_DRAM, l->b + 4 * (uint64_t)t0, rsh, rc, rc);
        bk_code_ld(k, &in, 0);
    }
    static const struct { int op, dst, a, b; } prog[] = {
        {ISA_OP_V_LT, NM, NI, NZERO},   /* v < 0 */
        {ISA_OP_V_MUL, NM, NM, NEXT},   /* ... times d */
        {ISA_OP_V_ADD, NI, NI, NM},     /* v' */
        {ISA_OP_V_LT, NM, NI, NZERO},   /* still below 0 */
        {ISA_OP_V_LE, NM2, NEXT, NI},   /* or d <= v' */
        {ISA_OP_V_OR, NM, NM, NM2},
        {ISA_OP_V_MUL, NI, NI, NRS},    /* v' * row stride */
    };
    for (size_t s = 0; s < sizeof prog / sizeof prog[0]; s++) {
        int ta = prog[s].a >= NEXT, tb = prog[s].b >= NEXT;
        in = bk_vbin(prog[s].op, ISA_I32, r[prog[s].dst], r[prog[s].a], r[prog[s].b], sh, cs, ta ? bk : cs, tb ? bk : cs);
        bk_code_cp(k, &in);
    }
    for (int pass = 0; pass < 2; pass++) {   /* rows = sum over k; bad = max of the flags */
        memset(&in, 0, sizeof in);
        in.op = pass ? ISA_OP_V_RMAX : ISA_OP_V_RSUM;
        in.dtype = in.otype = ISA_I32;
        in.axis = 3;
        memcpy(in.shape, sh, sizeof in.shape);
        in.dst = pass ? r[NB] : r[NR];
        in.src = pass ? r[NM] : r[NI];
        bk_code_cp(k, &in);
    }
    if (l->b) {
        in = bk_vbin(ISA_OP_V_ADD, ISA_I32, r[NR], r[NR], r[NBASE], rsh, rc, rc, rc);
        bk_code_cp(k, &in);
    }
    in = bk_vbin(ISA_OP_V_SEL, ISA_I32, r[NR], r[NB], r[NLIM], rsh, rc, rc, bs);
    bk_code_cp(k, &in);
    uint64_t run = (uint64_t)((int64_t)t0 * l->Nn * l->es);   /* this tile's first tuple's slice */
    in = bk_row_index_dma(l, scatter ? ISA_OP_DMA_SCATTER : ISA_OP_DMA_GATHER, scatter ? l->y : l->y + run,
                          scatter ? l->in_addr[0] + run : l->x, r[NR], tn);
    bk_code_st(k, &in);
    return 0;
}

AtlInsn bk_row_index_dma(const BkLow *l, int op, uint64_t dst, uint64_t src, uint64_t idx, uint32_t n)
{
    AtlInsn in;
    int64_t es = l->es, row = (int64_t)l->Nn * es;
    memset(&in, 0, sizeof in);
    in.op = (uint8_t)op;
    in.dtype = (uint8_t)l->dt;
    in.dst_space = in.src_space = ISA_SPACE_DRAM;
    in.src2_space = ISA_SPACE_LMEM;
    in.dst = dst;
    in.src = src;
    in.src2 = idx;
    in.shape[0] = 1; in.shape[1] = n; in.shape[2] = (uint32_t)l->mt; in.shape[3] = (uint32_t)l->nt;
    in.dst_stride[0] = in.src_stride[0] = in.dst_stride[1] = in.src_stride[1] = (int32_t)row;
    in.dst_stride[2] = in.src_stride[2] = (int32_t)(l->nt * es);
    in.dst_stride[3] = in.src_stride[3] = (int32_t)es;
    in.limit = (uint32_t)l->K;
    return in;
}

int bk_row_slices(BkCtx *c, int node, BkLow *l, int64_t slice, AtlErr *e)
{
    if (slice * l->es > INT32_MAX) return bk_fail(c, node, e, "slices beyond 2 GiB are not lowered");
    int64_t i3 = slice <= MAX16 ? slice : MAX16;
    while (slice % i3) i3--;
    if (slice / i3 > MAX16) return bk_fail(c, node, e, "slice size %lld cannot be split into two 16-bit dims", (long long)slice);
    l->Nn = (int)slice;
    l->mt = (int)(slice / i3);
    l->nt = (int)i3;
    return 0;
}

int bk_lower_gather_nd(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]], *it = &gr->t[nd->in[1]];
    BkLow *l = &ly->lw;
    int scatter = !strcmp(nd->op, "ScatterND");
    const char *mn = scatter ? "dma.scatter" : "dma.gather";
    l->kind = scatter ? BK_K_SCATTER_ND : BK_K_GATHER_ND;
    l->dt = bk_tensor_dt(c, nd->in[0]);
    if (l->dt < 0) return bk_fail(c, node, e, "data '%s' has a dtype the chip cannot hold", x->name);
    l->es = isa_dtype_size(l->dt);
    if (bk_need_dt(c, node, nd->in[1], ISA_I32, e) || bk_need_dt(c, node, nd->out[0], l->dt, e)) return -1;
    if (scatter && (bk_scatter_check(c, node, l->dt, e) || bk_tensor_in_dram(c, nd->in[2], &l->in_addr[0], e))) return -1;
    int bd = (int)ir_attr_int(nd, "batch_dims", 0);
    if (it->ndim < 1) return bk_fail(c, node, e, "indices must have rank >= 1");
    int64_t kk = it->dims[it->ndim - 1], T = ir_numel(it) / (kk ? kk : 1), slice = 1, rows, nb = 1;
    if (kk < 1 || bd < 0 || bd + kk > x->ndim) return bk_fail(c, node, e, "index tuples of %lld with batch_dims %d", (long long)kk, bd);
    for (int d = bd + (int)kk; d < x->ndim; d++) slice *= x->dims[d];
    for (int d = 0; d < bd; d++) nb *= it->dims[d];
    rows = ir_numel(x) / (slice ? slice : 1);
    if (T == 0 || slice == 0) return bk_fail(c, node, e, "an empty %s is not lowered", nd->op);
    if (rows >= (1 << 22)) return bk_fail(c, node, e, "%lld rows of x (%s takes 1..2^22-1)", (long long)rows, mn);
    if (kk > MAX16 || T > INT32_MAX) return bk_fail(c, node, e, "too many indices");
    if (bk_row_slices(c, node, l, slice, e)) return -1;
    /* tables: extents, row strides, zeros, the row count; batch bases */
    int32_t *tab = calloc((size_t)(3 * kk + 1), sizeof *tab);
    if (!tab) return bk_fail(c, node, e, "out of memory");
    int64_t rs = 1;
    for (int64_t j = kk - 1; j >= 0; j--) {
        tab[j] = (int32_t)x->dims[bd + j];
        tab[kk + j] = (int32_t)rs;
        rs *= x->dims[bd + j];
    }
    tab[3 * kk] = (int32_t)rows;
    int rc = bk_weight(c, tab, (size_t)(3 * kk + 1) * sizeof *tab, &l->w, e);
    free(tab);
    if (rc) return -1;
    l->b = 0;
    if (bd > 0) {
        int32_t *base = malloc((size_t)T * sizeof *base);
        if (!base) return bk_fail(c, node, e, "out of memory");
        int64_t per = T / nb;
        for (int64_t t = 0; t < T; t++) base[t] = (int32_t)(t / per * rs);
        rc = bk_weight(c, base, (size_t)T * sizeof *base, &l->b, e);
        free(base);
        if (rc) return -1;
    }
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->in[1], &l->cx, e) ||
        bk_tensor_in_dram(c, nd->out[0], &l->y, e))
        return -1;
    l->K = (int)rows;
    l->od[0] = l->od[1] = 1;
    l->od[2] = (uint32_t)(T < MAX16 ? T : MAX16);
    if (T > MAX16) return bk_fail(c, node, e, "%lld index tuples (at most 65535 are lowered)", (long long)T);
    l->od[3] = (uint32_t)kk;
    uint64_t room = ly->slot_size > 16 * c->align ? ly->slot_size - 16 * c->align : 0;
    int cores = scatter ? 1 : c->ncores;   /* a scatter runs on one core (lower/scatter.c) */
    uint64_t per_t = 4 * (3 * (uint64_t)kk + 3), ch = (uint64_t)(T + cores - 1) / (uint64_t)cores;
    if (ch > room / per_t) ch = room / per_t;
    if (ch < 1) return bk_fail(c, node, e, "tile does not fit LMEM");
    l->chunk[0] = l->chunk[1] = 1;
    l->chunk[2] = (uint32_t)ch;
    l->chunk[3] = (uint32_t)kk;
    uint64_t used = 0;
    const uint64_t bytes[NNREG] = {4 * ch * kk, 4 * ch * kk, 4 * ch * kk, 4 * ch, 4 * ch, 4 * ch,
                                   4 * (uint64_t)kk, 4 * (uint64_t)kk, 4 * (uint64_t)kk, 4};
    for (int i = 0; i < NNREG; i++) l->l_reg[i] = bk_slot_alloc(c, &used, bytes[i]);
    if (used > ly->slot_size) return bk_fail(c, node, e, "tile does not fit LMEM");
    int nt = (int)(((uint64_t)T + ch - 1) / ch);
    if (scatter ? bk_scatter_tiles(c, ly, nt, e) : bk_set_tiles(ly, nt, 1, e)) return -1;
    for (int t = 0; t < nt; t++) ly->tile_wkey[t] = 0;   /* the tables stay in the slot */
    snprintf(ly->split, sizeof ly->split, "tuples %d", nt);
    ly->gen = gnd_gen;
    return 0;
}
