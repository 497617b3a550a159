/* revseq.c - ReverseSequence (batch_axis / time_axis 0 and 1,
 * run-time or constant int64 sequence_lens = chip i32).
 *
 * y[b][t] = x[b][len[b]-1-t] for t < len[b], else x[b][t] (rows along the
 * first two axes, in either order; a row is the slice of the trailing dims).
 * The source row of every output row is data, so it is a dma.gather with
 * indices computed on the chip. A tile is a run of output rows j: len of
 * each row's batch is broadcast into LMEM by a small dma.gather of
 * sequence_lens (its index table the constant batch of each row); then,
 * with constant per-row tables t, t+1 and the batch's base row, i32 vector
 * ops compute t' = t < len ? len - (t+1) : t (v.lt, v.sub, v.sel) and the
 * source row base + t' * time_stride (v.mul, v.add). A row whose len is
 * outside [0, T] (t' outside [0, T), or len < 0) gets the row count by a
 * v.sel, so the gather faults naming its entry (the interpreter rejects
 * such lengths too). One dma.gather then copies the tile's rows from x. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/lower/lower.h"

#define MAX16 65535   /* one 16-bit DMA dim */

/* Per-row tables in the weights, [RT_N][rows]: the batch of the row (index
 * into sequence_lens), t, t + 1, the batch's first source row. */
enum { RT_BATCH, RT_T, RT_T1, RT_BASE, RT_N };
/* Scalar constants: 0, T, the row stride of time, the row count. */
enum { RC_ZERO, RC_T, RC_STRIDE, RC_ROWS, RC_N };
/* LMEM registers: len per row, t (then t', then the source row), t + 1,
 * base, two masks, then the scalars. */
enum { RL, RTT, RT1, RB, RM, RM2, RCST, RNREG = RCST + RC_N };

/* Layer fields: od = {1, 1, 1, rows}, chunk[3] rows a tile; x, y; cx =
 * sequence_lens (i32); w = the row tables; b = the scalars; K = rows; Nn =
 * slice elements, split as mt x nt; the batch count in M; dt / es x's
 * storage dtype. */
static int revseq_gen(BkCtx *c, const BkLayer *g, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    (void)c; (void)e;
    const BkLow *l = &g->lw;
    uint32_t p0 = (uint32_t)t * l->chunk[3], pn = l->od[3] - p0 < l->chunk[3] ? l->od[3] - p0 : l->chunk[3];
    uint32_t sh[4] = {1, 1, 1, pn}, one[4] = {1, 1, 1, 1};
    int64_t cs[4], oc[4] = {1, 1, 1, 1}, bc[4] = {0, 0, 0, 0};
    bk_compact(sh, cs);
    uint64_t r[RNREG], *cst = r + RCST, rows = (uint64_t)l->K;
    for (int i = 0; i < RNREG; i++) r[i] = slot + l->l_reg[i];
    /* len of each row's batch: a gather of sequence_lens by the batch table */
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_DMA_GATHER;
    in.dtype = ISA_I32;
    in.dst_space = ISA_SPACE_LMEM;
    in.src_space = in.src2_space = ISA_SPACE_DRAM;
    in.dst = r[RL];
    in.src = l->cx;
    in.src2 = l->w + 4 * ((uint64_t)RT_BATCH * rows + p0);
    in.shape[0] = 1; in.shape[1] = pn; in.shape[2] = 1; in.shape[3] = 1;
    for (int d = 0; d < 4; d++) in.dst_stride[d] = in.src_stride[d] = 4;
    in.limit = (uint32_t)l->M;
    bk_code_ld(k, &in, 0);
    static const int tab_reg[RT_N] = {-1, RTT, RT1, RB};
    for (int i = RT_T; i < RT_N; i++) {
        in = bk_dma(ISA_I32, ISA_SPACE_LMEM, r[tab_reg[i]], ISA_SPACE_DRAM, l->w + 4 * ((uint64_t)i * rows + p0), sh, cs, cs);
        bk_code_ld(k, &in, 0);
    }
    for (int i = 0; i < RC_N; i++) {
        in = bk_dma(ISA_I32, ISA_SPACE_LMEM, cst[i], ISA_SPACE_DRAM, l->b + 4 * (uint64_t)i, one, oc, oc);
        bk_code_ld(k, &in, 1);
    }
    static const struct { int op, dst, a, b; } prog[] = {
        {ISA_OP_V_LT, RM, RTT, RL},             /* t < len */
        {ISA_OP_V_SUB, RT1, RL, RT1},           /* len - (t + 1) */
        {ISA_OP_V_SEL, RTT, RM, RT1},           /* t' */
        {ISA_OP_V_LT, RM, RTT, -1 - RC_ZERO},   /* t' < 0 */
        {ISA_OP_V_LE, RM2, -1 - RC_T, RTT},     /* or T <= t' */
        {ISA_OP_V_OR, RM, RM, RM2},
        {ISA_OP_V_LT, RM2, RL, -1 - RC_ZERO},   /* or len < 0 */
        {ISA_OP_V_OR, RM, RM, RM2},
        {ISA_OP_V_MUL, RTT, RTT, -1 - RC_STRIDE},
        {ISA_OP_V_ADD, RTT, RTT, RB},           /* source row */
        {ISA_OP_V_SEL, RTT, RM, -1 - RC_ROWS},  /* bad length: the row count, the gather faults */
    };
    for (size_t s = 0; s < sizeof prog / sizeof prog[0]; s++) {
        uint64_t a = prog[s].a >= 0 ? r[prog[s].a] : cst[-1 - prog[s].a];
        uint64_t b = prog[s].b >= 0 ? r[prog[s].b] : cst[-1 - prog[s].b];
        in = bk_vbin(prog[s].op, ISA_I32, r[prog[s].dst], a, b, sh, cs, prog[s].a >= 0 ? cs : bc, prog[s].b >= 0 ? cs : bc);
        bk_code_cp(k, &in);
    }
    in = bk_row_index_dma(l, ISA_OP_DMA_GATHER, l->y + (uint64_t)p0 * (uint64_t)l->Nn * (uint64_t)l->es, l->x, r[RTT], pn);
    bk_code_st(k, &in);
    return 0;
}

int bk_lower_revseq(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]];
    BkLow *l = &ly->lw;
    l->kind = BK_K_REVSEQ;
    l->dt = bk_tensor_dt(c, nd->in[0]);
    if (l->dt < 0) return bk_fail(c, node, e, "data '%s' has a dtype the chip cannot hold", x->name);
    l->es = isa_dtype_size(l->dt);
    if (bk_need_dt(c, node, nd->in[1], ISA_I32, e) || bk_need_dt(c, node, nd->out[0], l->dt, e)) return -1;
    int ta = (int)ir_attr_int(nd, "time_axis", 0);
    if (x->ndim < 2 || (ta != 0 && ta != 1)) return bk_fail(c, node, e, "time_axis %d of a rank-%d input", ta, x->ndim);
    int64_t T = x->dims[ta], B = x->dims[1 - ta], rows = T * B, slice = 1;
    for (int d = 2; d < x->ndim; d++) slice *= x->dims[d];
    if (rows == 0 || slice == 0) return bk_fail(c, node, e, "an empty ReverseSequence is not lowered");
    if (rows >= (1 << 22) || B >= (1 << 22)) return bk_fail(c, node, e, "%lld rows (dma.gather takes 1..2^22-1)", (long long)rows);
    if (bk_row_slices(c, node, l, slice, e)) return -1;
    int32_t *tab = malloc((size_t)(RT_N * rows) * sizeof *tab);
    if (!tab) return bk_fail(c, node, e, "out of memory");
    int64_t tstride = ta == 0 ? B : 1, bstride = ta == 0 ? 1 : T;
    for (int64_t j = 0; j < rows; j++) {
        int64_t b = ta == 0 ? j % B : j / T, t = ta == 0 ? j / B : j % T;
        tab[RT_BATCH * rows + j] = (int32_t)b;
        tab[RT_T * rows + j] = (int32_t)t;
        tab[RT_T1 * rows + j] = (int32_t)(t + 1);
        tab[RT_BASE * rows + j] = (int32_t)(b * bstride);
    }
    int32_t cst[RC_N] = {0, (int32_t)T, (int32_t)tstride, (int32_t)rows};
    int rc = bk_weight(c, tab, (size_t)(RT_N * rows) * sizeof *tab, &l->w, e) || bk_weight(c, cst, sizeof cst, &l->b, e);
    free(tab);
    if (rc) return -1;
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->in[1], &l->cx, e) ||
        bk_tensor_in_dram(c, nd->out[0], &l->y, e))
        return -1;
    l->K = (int)rows;
    l->M = (int)B;
    l->od[0] = l->od[1] = l->od[2] = 1;
    l->od[3] = (uint32_t)rows;
    /* runs of rows: at most 65535 (one 16-bit gather dim), at least one
     * run per core, the six i32 boxes within the slot */
    uint64_t room = ly->slot_size > 16 * c->align ? ly->slot_size - 16 * c->align : 0;
    uint64_t ch = (uint64_t)(rows + c->ncores - 1) / (uint64_t)c->ncores;
    if (ch > MAX16) ch = MAX16;
    if (ch > room / 24) ch = room / 24;
    if (ch < 1) return bk_fail(c, node, e, "tile does not fit LMEM");
    l->chunk[0] = l->chunk[1] = l->chunk[2] = 1;
    l->chunk[3] = (uint32_t)ch;
    uint64_t used = 0;
    for (int i = 0; i < RNREG; i++) l->l_reg[i] = bk_slot_alloc(c, &used, i >= RCST ? 4 : 4 * ch);
    if (used > ly->slot_size) return bk_fail(c, node, e, "tile does not fit LMEM");
    int nt = (int)(((uint64_t)rows + ch - 1) / ch);
    if (bk_set_tiles(ly, nt, 1, e)) return -1;
    for (int t = 0; t < nt; t++) ly->tile_wkey[t] = 0;   /* the scalars stay in the slot */
    snprintf(ly->split, sizeof ly->split, "rows %d", nt);
    ly->gen = revseq_gen;
    return 0;
}
