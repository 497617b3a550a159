/* attn.c - attention as one layer group: MatMul (Q x K^T) -> Softmax ->
 * MatMul (x V) with the scores kept in LMEM (docs/backend.md, "Attention
 * groups").
 *
 * Reads: three consecutive lowered layers (their own lowerings, mm.c and
 *   vec.c): a MatMul / Gemm with an activation B, no bias, no C and no
 *   fused activation, whose output [bt][M][S] only a Softmax (or
 *   LogSoftmax) over its last axis reads; that Softmax's output only a
 *   MatMul reads, as its A, not transposed, [bt][M][S] x B [bt][S][Dv]
 *   (B an activation or a constant; no bias, no C). Before them up to
 *   six layers on the paths to Q, K^T and V may be members too, each
 *   read by members alone: Transposes and Gathers of one constant index
 *   (copies: the group reads the operand from the first tensor before
 *   them through the composed strides, trace_operand) and Q's scale (a
 *   Mul or Div by a constant: its own steps on the Q rows in the tile);
 *   after them a Transpose of the output (the rows stored through its
 *   strides). The operand's dims before the last two must collapse into
 *   one batch stride (batch 1); the copies' tensors become
 *   BkPlace.internal.
 * Does: one layer (BK_K_ATTN) whose tile is (batch, chunk of mt query
 *   rows), batch-major: it loads the tile's Q rows [mt][D] (the first
 *   MatMul's A, through its strides), K^T [D][S] and V [S][Dv] (the B
 *   operands, through theirs; weight loads keyed by the batch, so a slot
 *   that already holds them for the same batch skips them), runs one `mm`
 *   into an f32 score block [mt][S], the first MatMul's epilogue (its
 *   alpha, the cast to the storage dtype), the Softmax's own register
 *   program (bk_red_steps) on those rows in the storage dtype, one `mm`
 *   of the probabilities [mt][S] by V into an f32 block [mt][Dv], the
 *   second MatMul's epilogue (alpha, activation, cast) and stores the
 *   rows. The scores and probabilities never leave LMEM (the tensors are
 *   BkPlace.internal). The candidate shapes are query-row chunks that
 *   fit a slot (halvings of M, and chunkings giving the batches about one
 *   or two tiles a core); the group search prices them with the cost
 *   model and group formation (group/form.c) takes the group only where
 *   it is cheaper than the three layers alone.
 * Streaming K and V (a query chunk whose K and V do not fit a slot whole
 *   beside it): the keys are cut into ns chunks of sn (the longest that
 *   fits, a multiple of the LMEM alignment in elements) and an output
 *   tile becomes 2 ns - 1 consecutive tiles on one core (tile_run):
 *   phase p < ns loads Q and the K^T columns of chunk p and computes
 *   those score columns (in f32 straight into the rows; in a narrower
 *   dtype into an f32 block in the slot, scaled by alpha and cast into
 *   the rows), phase ns - 1 also runs the members and the Softmax on the
 *   whole rows, and phase p >= ns - 1 loads V chunk p - ns + 1 and adds
 *   P[:, that chunk] x it into the f32 sums (acc from the second chunk
 *   on), the last one the epilogue and the store. The score rows (in the
 *   storage dtype; the second buffer only for a member of several steps,
 *   one-step members run in place) and the sums live in the resident
 *   region, ONE buffer for all output tiles: (1) the rows are written by
 *   the `mm`s of phases < ns and the vector steps of phase ns - 1, and
 *   last read by the `mm` of phase 2 ns - 2; the next output tile's first
 *   write is its first `mm`, which the in-order matrix engine runs after
 *   that read, and the vector steps of phase ns - 1 precede the `mm` of
 *   their own tile (the emitter's hand-over); (2) the sums are last read
 *   by the epilogue and store of the last phase, tile L; the next output
 *   tile first writes them in its phase ns - 1, tile L + ns, whose loads
 *   the core's in-order DMA queue issues after the stores of tile
 *   L + ns - 2 >= L (ns >= 2), which waited for tile L's compute. The
 *   full simulation's race detector checks this (test_attn_group.c).
 *   K and V chunks are loaded again for every query chunk (the cost model
 *   weighs that against the DRAM round trips of the scores).
 * Guarantees: every element is computed by the same instructions on the
 *   same values in the same order as the three layers' own lowerings
 *   (one `mm` over all of K per score row, a K-split `mm` of the layers
 *   adds its chunks in the same order; score columns of a key chunk are
 *   each the same dot product; P x V over key chunks with acc adds them
 *   in the order of one `mm`; the Softmax program is the standalone
 *   layer's, row by row), so the results are theirs bit for bit, f32
 *   and bf16.
 * Not done: K and V staged in cluster SRAM or shared by a cluster's
 *   cores; the projections (and their bias Adds) as members; copies whose
 *   batch and head dims need two strides (batch > 1). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/lower/lower.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* The group's plan (BkLow.aux, malloc'd, freed with the layer). */
/* An elementwise member between the first MatMul and the Softmax (the
 * scale, a mask Add): a binary op whose registers 0 and 1 are its node's
 * inputs 0 and 1; `sreg` the one that reads the scores (bit r set), the
 * other loaded per tile from `addr` with element strides bs (per batch
 * dim of the scores), rs (rows) and cs (columns), 0 = broadcast. */
typedef struct AttnElem {
    BkLow lw;
    int sreg;
    uint64_t addr;
    int64_t bs[IR_MAXDIM], rs, cs;
    uint64_t l_x;                 /* its loaded operand in the slot */
} AttnElem;

enum { ATTN_MAX_ELEM = 2, ATTN_CORE_MAX = 5, ATTN_MAX_T = 6, ATTN_MAX = BK_ATTN_MAX };
/* group formation passes the members in a BK_CHAIN_MAX array, and the
 * member lists (bk_chain_nodes) are read into arrays of that size */
_Static_assert(BK_ATTN_MAX <= BK_CHAIN_MAX, "attention members fit the chain member arrays");
_Static_assert(ATTN_MAX_T + ATTN_CORE_MAX + 1 <= BK_ATTN_MAX, "leading, core and trailing members");

typedef struct AttnPlan {
    int nm, nodes[ATTN_MAX];
    int bt, M, D, S, Dv;
    int nbd;                      /* batch dims of the scores ([..][M][S]) and their sizes */
    int64_t bd[IR_MAXDIM];
    BkLow q, v;                   /* the two MatMuls' lowerings (operands, strides, epilogues) */
    BkLow p;                      /* the Softmax's (its register program) */
    int ne;
    AttnElem el[ATTN_MAX_ELEM];
    int mt, nmc;                  /* query rows a tile, chunks of M */
    int sn, ns, np;               /* key chunk, chunks of S (1: K and V whole), phases an output tile */
    int qs_node;                  /* Q's scale member (a Mul / Div by a constant), -1 none; */
    BkLow qs;                     /* its lowering (register program, the constant's address) */
    uint64_t l_qs, l_q2;          /* the constant and the scaled Q rows in the slot */
    uint64_t y;                   /* where the output rows go: the second MatMul's output, or a */
    int64_t y_bs, y_rs, y_cs;     /* trailing Transpose member's, through its strides */
    uint64_t l_q, l_k, l_v, l_s, l_sd, l_sc, l_sacc, l_max, l_sum, l_o, l_od, l_tmp;
} AttnPlan;

static AttnPlan *plan_of(const BkLayer *ly) { return ly->lw.kind == BK_K_ATTN ? (AttnPlan *)(void *)ly->lw.aux : NULL; }

/* Elementwise member el on the score rows [m0, m0+mn) of batch bi at sc
 * (storage dtype), its result at dst: its other operand's box loaded
 * (broadcast dims of extent 1, read with stride 0, as lower/vec.c's
 * elem_gen does), then its own steps. */
static void elem_member(const BkCtx *c, const AttnPlan *a, const AttnElem *el, int bi, int m0, int mn, uint64_t slot,
                        uint64_t sc, uint64_t dst, BkCode *k)
{
    const BkLow *l = &el->lw;
    uint32_t ext[4] = {1, 1, (uint32_t)mn, (uint32_t)a->S}, ie[4] = {1, 1, el->rs ? (uint32_t)mn : 1, el->cs ? (uint32_t)a->S : 1};
    int64_t full[4], ds[4], ss[4] = {0, 0, el->rs, el->cs}, rx[4];
    bk_compact(ext, full);
    bk_compact(ie, ds);
    for (int d = 0; d < 4; d++) rx[d] = ss[d] ? ds[d] : 0;
    int xdt = l->reg_dt[el->sreg & 1 ? 1 : 0];
    uint64_t xo = (uint64_t)m0 * (uint64_t)el->rs;
    for (int d = a->nbd - 1, r = bi; d >= 0; d--) {   /* batch bi's index along each batch dim */
        xo += (uint64_t)(r % a->bd[d]) * (uint64_t)el->bs[d];
        r /= (int)a->bd[d];
    }
    if (el->sreg != 3) {
        AtlInsn in = bk_dma(xdt, ISA_SPACE_LMEM, slot + el->l_x, ISA_SPACE_DRAM, el->addr + xo * (uint64_t)isa_dtype_size(xdt), ie, ds, ss);
        bk_code_ld(k, &in, 0);
    }
    uint64_t reg[3];
    const int64_t *rst[3];
    for (int r = 0; r < 2; r++) {
        int s = el->sreg >> r & 1;
        reg[r] = s ? sc : slot + el->l_x;
        rst[r] = s ? full : rx;
    }
    reg[2] = dst;
    rst[2] = full;
    for (int i = 0; i < l->nsteps; i++) {
        const BkStep *st = &l->steps[i];
        AtlInsn in;
        if (st->b >= 0)
            in = bk_vbin(st->op, l->reg_dt[st->a], reg[st->dst], reg[st->a], reg[st->b], ext, rst[st->dst], rst[st->a], rst[st->b]);
        else
            in = bk_vun(st->op, l->reg_dt[st->a], reg[st->dst], reg[st->a], ext, rst[st->dst], rst[st->a], st->alpha, st->beta);
        bk_code_cp(k, &in);
    }
    (void)c;
}

/* Q's scale member on the tile's mn Q rows at l_q: its constant loaded
 * (read with stride 0), its own steps into l_q2 (registers 0 the rows, 1
 * the constant, 2 the result, as the standalone layer runs them);
 * returns where the scaled rows are. */
static uint64_t q_scale(const BkCtx *c, const AttnPlan *a, int mn, uint64_t slot, BkCode *k)
{
    const BkLow *l = &a->qs;
    uint32_t one[4] = {1, 1, 1, 1}, ext[4] = {1, 1, (uint32_t)mn, (uint32_t)a->D};
    int64_t o1[4], full[4], zero[4] = {0, 0, 0, 0};
    bk_compact(one, o1);
    bk_compact(ext, full);
    AtlInsn in = bk_dma(c->dt, ISA_SPACE_LMEM, slot + a->l_qs, ISA_SPACE_DRAM, l->in_addr[1], one, o1, o1);
    bk_code_ld(k, &in, 0);
    const uint64_t reg[3] = {slot + a->l_q, slot + a->l_qs, slot + a->l_q2};
    const int64_t *rst[3] = {full, zero, full};
    for (int i = 0; i < l->nsteps; i++) {
        const BkStep *st = &l->steps[i];
        if (st->b >= 0)
            in = bk_vbin(st->op, l->reg_dt[st->a], reg[st->dst], reg[st->a], reg[st->b], ext, rst[st->dst], rst[st->a], rst[st->b]);
        else
            in = bk_vun(st->op, l->reg_dt[st->a], reg[st->dst], reg[st->a], ext, rst[st->dst], rst[st->a], st->alpha, st->beta);
        bk_code_cp(k, &in);
    }
    return slot + a->l_q2;
}

/* The two score buffers at `row` (the slot, or streaming the resident
 * region): b[0] the scores in the storage dtype after the first MatMul's
 * epilogue, b[1] the other one the elementwise members alternate into. */
static void score_bufs(const BkCtx *c, const AttnPlan *a, uint64_t row, uint64_t b[2])
{
    int f32 = c->dt == ISA_F32 || a->ns > 1;
    b[0] = row + (f32 ? a->l_s : a->l_sd);
    b[1] = row + (f32 ? a->l_sd : a->l_s);
}

/* 1 when member el writes its result over the scores it reads: when
 * streaming (the rows are resident: a second buffer would halve the
 * query rows a tile holds) and it is one step (each element read before
 * it is written; a longer program may overwrite the scores with a
 * partial result another step reads). */
static int in_place(const AttnPlan *a, const AttnElem *el) { return a->ns > 1 && el->lw.nsteps == 1; }

/* The buffer the probabilities end in (a member not in place writes the
 * other one). */
static uint64_t probs_at(const BkCtx *c, const AttnPlan *a, uint64_t row)
{
    uint64_t b[2];
    int n = 0;
    score_bufs(c, a, row, b);
    for (int i = 0; i < a->ne; i++) n += !in_place(a, &a->el[i]);
    return b[n % 2];
}

/* Tile t: phase ph of output tile j = t / np (batch, query chunk). K and
 * V whole (ns = 1): one phase, everything in the slot. Streamed (ns > 1,
 * docs/backend.md "Attention groups"): phase p < ns computes the score
 * columns of key chunk p (in f32 straight into the rows; else into an
 * f32 chunk in the slot, scaled by alpha and cast into the rows), the
 * last of them also the members and the Softmax on the whole rows; phase
 * p >= ns - 1 adds P[:, chunk p - ns + 1] x V chunk into the f32 sums
 * (acc from the second chunk on), the last of them the epilogue and the
 * store. The score rows and the sums lie in the resident region (one
 * buffer: the header says why one suffices), Q, the K and V chunks and the Softmax's
 * scratch in the slot. */
static int attn_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const AttnPlan *a = plan_of(ly);
    const BkLow *q = &a->q, *v = &a->v;
    int dt = c->dt, es = c->es, st = a->ns > 1;
    int j = t / a->np, ph = t % a->np;
    int bi = j / a->nmc, m0 = (j % a->nmc) * a->mt, mn = imin(a->mt, a->M - m0);
    int kc = ph < a->ns ? ph : -1, vc = ph >= a->ns - 1 ? ph - (a->ns - 1) : -1;
    uint64_t row = st ? 0 : slot;
    AtlInsn in, mm;
    memset(&mm, 0, sizeof mm);
    mm.op = ISA_OP_MM;
    mm.dtype = (uint8_t)dt;
    uint32_t osh[4] = {1, 1, (uint32_t)mn, (uint32_t)a->S};
    int64_t oc[4];
    bk_compact(osh, oc);
    if (kc >= 0) {
        int s0 = kc * a->sn, sn = imin(a->sn, a->S - s0), chunk = st && dt != ISA_F32;
        /* Q rows [mn][D], K^T columns [D][sn] (K whole: a slot keeps it for the batch) */
        uint32_t sh[4] = {1, 1, (uint32_t)mn, (uint32_t)a->D};
        int64_t ds[4], ss[4] = {0, 0, q->a_rs, q->a_cs};
        bk_compact(sh, ds);
        uint64_t src = q->x + (uint64_t)(bi * q->a_bs + m0 * q->a_rs) * es;
        in = bk_dma(dt, ISA_SPACE_LMEM, slot + a->l_q, ISA_SPACE_DRAM, src, sh, ds, ss);
        bk_code_ld(k, &in, 0);
        sh[2] = (uint32_t)a->D; sh[3] = (uint32_t)sn;
        ss[2] = q->b_rs; ss[3] = q->b_cs;
        bk_compact(sh, ds);
        in = bk_dma(dt, ISA_SPACE_LMEM, slot + a->l_k, ISA_SPACE_DRAM, q->w + (uint64_t)(bi * q->b_bs + s0 * q->b_cs) * es, sh, ds, ss);
        bk_code_ld(k, &in, !st);
        uint64_t qa = slot + a->l_q;
        if (a->qs_node >= 0) qa = q_scale(c, a, mn, slot, k);
        /* score columns [s0, s0+sn) = Q x K^T (f32) */
        mm.dst = chunk ? slot + a->l_sc : row + a->l_s + (uint64_t)s0 * 4;
        mm.src = qa;
        mm.src2 = slot + a->l_k;
        mm.m = (uint32_t)mn; mm.k = (uint32_t)a->D; mm.n = (uint32_t)sn;
        mm.lda = (uint32_t)a->D; mm.ldb = (uint32_t)sn; mm.ldc = chunk ? (uint32_t)sn : (uint32_t)a->S;
        bk_code_cp(k, &mm);
        if (chunk) {
            /* the first MatMul's alpha and cast (it has no activation), chunk by chunk */
            uint32_t csh[4] = {1, 1, (uint32_t)mn, (uint32_t)sn};
            int64_t cc[4];
            bk_compact(csh, cc);
            if (q->mm_alpha != 1.0f) {
                in = bk_vun(ISA_OP_V_AFFINE, ISA_F32, slot + a->l_sc, slot + a->l_sc, csh, cc, cc, q->mm_alpha, 0.0f);
                bk_code_cp(k, &in);
            }
            memset(&in, 0, sizeof in);
            in.op = ISA_OP_V_CAST;
            in.dtype = ISA_F32;
            in.otype = (uint8_t)dt;
            in.dst = row + a->l_s + (uint64_t)s0 * es;
            in.src = slot + a->l_sc;
            for (int d = 0; d < 4; d++) { in.shape[d] = csh[d]; in.dst_stride[d] = (int32_t)oc[d]; in.src_stride[d] = (int32_t)cc[d]; }
            bk_code_cp(k, &in);
        }
    }
    /* V rows [s0, s0+sn) [sn][Dv] (loaded before the members' operands) */
    int s0 = imax(vc, 0) * a->sn, sn = imin(a->sn, a->S - s0);
    if (vc >= 0) {
        uint32_t sh[4] = {1, 1, (uint32_t)sn, (uint32_t)a->Dv};
        int64_t ds[4], ss[4] = {0, 0, v->b_rs, v->b_cs};
        bk_compact(sh, ds);
        in = bk_dma(dt, ISA_SPACE_LMEM, slot + a->l_v, ISA_SPACE_DRAM, v->w + (uint64_t)(bi * v->b_bs + s0 * v->b_rs) * es, sh, ds, ss);
        bk_code_ld(k, &in, !st);
    }
    if (kc == a->ns - 1) {
        /* the first MatMul's alpha and cast (done chunk by chunk above
         * when streaming in a narrower dtype), the members, the Softmax */
        uint64_t sc = row + a->l_s, buf[2];
        score_bufs(c, a, row, buf);
        if (!st || dt == ISA_F32) {
            if (q->mm_alpha != 1.0f) {
                in = bk_vun(ISA_OP_V_AFFINE, ISA_F32, row + a->l_s, row + a->l_s, osh, oc, oc, q->mm_alpha, 0.0f);
                bk_code_cp(k, &in);
            }
            if (bk_matrix_epilogue(k, q, dt, row + a->l_s, 0, row + a->l_sd, 0, osh, oc, &sc))
                return bk_fail(c, ly->node, e, "internal: attention scores epilogue");
        }
        /* the elementwise members, each into the other of two score buffers */
        if (sc != buf[0]) return bk_fail(c, ly->node, e, "internal: attention scores misplaced");
        for (int i = 0; i < a->ne; i++) {
            const AttnElem *el = &a->el[i];
            uint64_t dst = in_place(a, el) ? sc : buf[sc == buf[0]];
            elem_member(c, a, el, bi, m0, mn, slot, sc, dst, k);
            sc = dst;
        }
        if (sc != probs_at(c, a, row)) return bk_fail(c, ly->node, e, "internal: attention probabilities misplaced");
        /* the Softmax over each score row, in the storage dtype */
        const uint64_t regs[BK_R_NREGS] = {sc, slot + a->l_sacc, slot + a->l_sum, slot + a->l_max};
        uint32_t rsh[4] = {1, (uint32_t)mn, (uint32_t)a->S, 1};
        bk_red_steps(&a->p, dt, regs, rsh, k);
    }
    if (vc < 0) return 0;
    /* out (+)= P[:, s0..] x V chunk (f32) */
    mm.acc = vc > 0;
    mm.dst = row + a->l_o;
    mm.src = probs_at(c, a, row) + (uint64_t)s0 * es;
    mm.src2 = slot + a->l_v;
    mm.m = (uint32_t)mn; mm.k = (uint32_t)sn; mm.n = (uint32_t)a->Dv;
    mm.lda = (uint32_t)a->S; mm.ldb = (uint32_t)a->Dv; mm.ldc = (uint32_t)a->Dv;
    bk_code_cp(k, &mm);
    if (vc < a->ns - 1) return 0;
    /* the second MatMul's epilogue (alpha, activation, cast), the store */
    osh[3] = (uint32_t)a->Dv;
    bk_compact(osh, oc);
    if (v->mm_alpha != 1.0f) {
        in = bk_vun(ISA_OP_V_AFFINE, ISA_F32, row + a->l_o, row + a->l_o, osh, oc, oc, v->mm_alpha, 0.0f);
        bk_code_cp(k, &in);
    }
    uint64_t res;
    if (bk_matrix_epilogue(k, v, dt, row + a->l_o, slot + a->l_tmp, slot + a->l_od, 0, osh, oc, &res))
        return bk_fail(c, ly->node, e, "activation %s cannot be fused", v->act);
    int64_t ys[4] = {0, 0, a->y_rs, a->y_cs};
    uint64_t dst = a->y + (uint64_t)(bi * a->y_bs + m0 * a->y_rs) * es;
    in = bk_dma(dt, ISA_SPACE_DRAM, dst, ISA_SPACE_LMEM, res, osh, ys, oc);
    bk_code_st(k, &in);
    return 0;
}

/* Slot layout (and, streaming, the resident rows) for mt query rows and
 * key chunks of sn; 0 when it fits. K and V whole (sn >= S): everything
 * in the slot, as one tile needs it. Streamed: what outlives a tile in
 * the resident region (the score rows in the storage dtype, the other
 * score buffer when there are members, the f32 output sums), the rest
 * in the slot (and, below f32, an f32 block of one key chunk's scores). */
static int layout(const BkCtx *c, BkLayer *ly, AttnPlan *a, int mt, int sn)
{
    uint64_t m = (uint64_t)mt, S = (uint64_t)a->S, es = (uint64_t)c->es, used = 0, res = 0;
    int f32 = c->dt == ISA_F32, sacc = 0;
    for (int i = 0; i < a->p.nsteps; i++) sacc |= a->p.steps[i].dst == BK_R_ACC;
    a->mt = mt;
    a->nmc = (a->M + mt - 1) / mt;
    a->sn = imin(sn, a->S);
    a->ns = (a->S + a->sn - 1) / a->sn;
    a->np = a->ns == 1 ? 1 : 2 * a->ns - 1;
    int st = a->ns > 1;
    uint64_t *rw = st ? &res : &used;
    a->l_q = bk_slot_alloc(c, &used, m * (uint64_t)a->D * es);
    a->l_k = bk_slot_alloc(c, &used, (uint64_t)a->D * (uint64_t)a->sn * es);
    a->l_v = bk_slot_alloc(c, &used, (uint64_t)a->sn * (uint64_t)a->Dv * es);
    a->l_s = bk_slot_alloc(c, rw, m * S * (st ? es : 4));
    int other = 0;   /* streaming: a member not in place */
    for (int i = 0; i < a->ne; i++) other |= !in_place(a, &a->el[i]);
    a->l_sd = f32 && !a->ne ? 0 : st && !other ? 0 : bk_slot_alloc(c, rw, m * S * es);
    a->l_sc = st && !f32 ? bk_slot_alloc(c, &used, m * (uint64_t)a->sn * 4) : 0;
    for (int i = 0; i < a->ne; i++) {
        AttnElem *el = &a->el[i];
        uint64_t xes = (uint64_t)isa_dtype_size(el->lw.reg_dt[el->sreg & 1 ? 1 : 0]);
        el->l_x = el->sreg == 3 ? 0 : bk_slot_alloc(c, &used, (el->rs ? m : 1) * (el->cs ? S : 1) * xes);
    }
    a->l_sacc = sacc ? bk_slot_alloc(c, &used, m * S * es) : 0;
    a->l_max = bk_slot_alloc(c, &used, m * es);
    a->l_sum = bk_slot_alloc(c, &used, m * es);
    a->l_o = bk_slot_alloc(c, rw, m * (uint64_t)a->Dv * 4);
    a->l_od = f32 ? 0 : bk_slot_alloc(c, &used, m * (uint64_t)a->Dv * es);
    a->l_tmp = a->v.act[0] ? bk_slot_alloc(c, &used, m * (uint64_t)a->Dv * 4) : 0;
    a->l_qs = a->qs_node >= 0 ? bk_slot_alloc(c, &used, es) : 0;
    a->l_q2 = a->qs_node >= 0 ? bk_slot_alloc(c, &used, m * (uint64_t)a->D * es) : 0;
    if (bk_reserve_resident(c, ly, res)) return -1;
    return used <= ly->slot_size ? 0 : -1;
}

typedef struct AttnShape { int mt, sn; } AttnShape;

static int apply_shape(BkCtx *c, BkLayer *ly, const void *shape, AtlErr *e)
{
    AttnPlan *a = plan_of(ly);
    const AttnShape *s = shape;
    if (layout(c, ly, a, s->mt, s->sn)) return bk_fail(c, ly->node, e, "internal: an attention slice does not fit");
    if (bk_set_tiles(ly, a->bt * a->nmc * a->np, a->np, e)) return -1;
    /* K and V whole: those of batch t / nmc; streamed chunks: none (each
     * phase loads other chunks) */
    for (int t = 0; t < ly->ntiles; t++) ly->tile_wkey[t] = a->ns == 1 ? t / a->nmc : -1;
    if (a->ns == 1) snprintf(ly->split, sizeof ly->split, "B%d M%d attn", a->bt, a->nmc);
    else snprintf(ly->split, sizeof ly->split, "B%d M%d S%d attn", a->bt, a->nmc, a->ns);
    return 0;
}

/* 1 when a live node other than `reader`, or a graph output, reads the
 * storage of tensor t. */
static int read_elsewhere(const BkCtx *c, int t, int reader)
{
    const IrGraph *g = c->g;
    int r = bk_tensor_root(c, t);
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].is_output && bk_tensor_root(c, i) == r) return 1;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead || i == reader) continue;
        if (c->gelu_src[i] >= 0 && bk_tensor_root(c, c->gelu_src[i]) == r) return 1;
        for (int j = 0; j < n->nin; j++)
            if (n->in[j] >= 0 && !g->t[n->in[j]].data && bk_tensor_root(c, n->in[j]) == r) return 1;
    }
    return 0;
}

/* 1 when the tensor's storage lies in cluster SRAM bands (the band
 * rewrite of a layer's DMA knows only window layers and chains). */
static int banded(const BkCtx *c, int t) { return c->pl[bk_tensor_root(c, t)].band; }

static int is_mm(const BkCtx *c, const BkLayer *ly)
{
    const BkLow *l = &ly->lw;
    return ly->node >= 0 && l->kind == BK_K_MM && !l->b && !l->cx && !ly->chain;
}

/* 1 when layer ly (node n) reads the scores `st` (of dims sd) as an
 * elementwise member: Add, Sub, Mul or Div of two float inputs of the
 * storage dtype, no fused activation, its output of the scores' shape;
 * fills el. */
static int elem_ok(const BkCtx *c, const BkLayer *ly, int st, AttnElem *el)
{
    const IrGraph *g = c->g;
    const IrNode *n = &g->nodes[ly->node];
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div"};
    int op = 0;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) op |= !strcmp(n->op, ops[i]);
    const BkLow *l = &ly->lw;
    if (!op || l->kind != BK_K_ELEM || ly->chain || n->nin != 2 || l->nin != 2 || l->act[0] || l->out_reg != 2 || l->nregs != 3 ||
        c->act_on[ly->node] || c->gelu_src[ly->node] >= 0 || c->tail[ly->node] >= 0)
        return 0;
    for (int r = 0; r < 3; r++)
        if (l->reg_dt[r] != c->dt) return 0;
    for (int i = 0; i < l->nsteps; i++)
        if (l->steps[i].dst != 2) return 0;
    const IrTensor *y = &g->t[n->out[0]], *s = &g->t[st];
    if (y->ndim != s->ndim || y->ndim < 2) return 0;
    for (int d = 0; d < y->ndim; d++)
        if (y->dims[d] != s->dims[d]) return 0;
    el->lw = *l;
    el->lw.aux = NULL;
    el->sreg = (n->in[0] == st) | (n->in[1] == st) << 1;
    if (!el->sreg) return 0;
    if (el->sreg == 3) return 1;
    int x = n->in[el->sreg & 1 ? 1 : 0];
    const IrTensor *xt = &g->t[x];
    if (xt->ndim > y->ndim || (!xt->data && c->pl[bk_tensor_root(c, x)].band)) return 0;
    int64_t str = 1, bs[IR_MAXDIM];
    for (int d = y->ndim - 1; d >= 0; d--) {   /* the ONNX broadcast: dims aligned from the right */
        int xd = d - (y->ndim - xt->ndim);
        int64_t sz = xd >= 0 ? xt->dims[xd] : 1;
        if (sz != 1 && sz != y->dims[d]) return 0;
        bs[d] = sz == 1 ? 0 : str;
        str *= sz;
    }
    memcpy(el->bs, bs, sizeof bs);
    el->rs = bs[y->ndim - 2];
    el->cs = bs[y->ndim - 1];
    el->addr = l->in_addr[el->sreg & 1 ? 1 : 0];
    return 1;
}

/* 1 when the layers form an attention group (see the header); fills a's
 * members. */
static int matches(const BkCtx *c, const BkLayer *const *m, int nm, AttnPlan *a)
{
    const IrGraph *g = c->g;
    const BkLayer *m1 = m[0], *sm = m[nm - 2], *m2 = m[nm - 1];
    if (nm < 3 || nm > ATTN_CORE_MAX || !is_mm(c, m1) || !is_mm(c, m2) || sm->node < 0 || sm->lw.kind != BK_K_SOFTMAX) return 0;
    const IrNode *n1 = &g->nodes[m1->node], *ns = &g->nodes[sm->node], *n2 = &g->nodes[m2->node];
    if (c->act_on[m1->node] || c->act_on[sm->node] || c->tail[m1->node] >= 0 || c->tail[sm->node] >= 0 || c->tail[m2->node] >= 0)
        return 0;
    if (c->gelu_src[m1->node] >= 0 || c->gelu_src[sm->node] >= 0 || c->gelu_src[m2->node] >= 0) return 0;
    const BkLow *q = &m1->lw, *p = &sm->lw, *v = &m2->lw;
    if (q->act[0] || p->od[3] != 1 || p->od[2] != (uint32_t)q->Nn || p->od[1] != (uint32_t)q->bt * (uint32_t)q->M ||
        p->red_shard)
        return 0;
    if (v->bt != q->bt || v->M != q->M || v->K != q->Nn || v->a_rs != v->K || v->a_cs != 1) return 0;
    /* the scores flow member to member, each intermediate read only by the next */
    int st = n1->out[0];
    const IrTensor *sct = &g->t[st];
    if (sct->ndim < 2) return 0;
    a->nbd = sct->ndim - 2;
    for (int d = 0; d < a->nbd; d++) a->bd[d] = sct->dims[d];
    a->ne = nm - 3;
    for (int i = 1; i < nm; i++) {
        const IrNode *n = &g->nodes[m[i]->node];
        if (read_elsewhere(c, st, m[i]->node) || banded(c, st)) return 0;
        if (i < nm - 2 && !elem_ok(c, m[i], st, &a->el[i - 1])) return 0;
        if (i >= nm - 2 && (n->in[0] != st || (i == nm - 1 && n->in[1] == st))) return 0;
        st = n->out[0];
    }
    for (int i = 0; i < 2; i++)
        if ((!g->t[n1->in[i]].data && banded(c, n1->in[i])) || (!g->t[n2->in[i]].data && banded(c, n2->in[i]))) return 0;
    (void)ns;
    return !banded(c, n2->out[0]);
}

/* 1 when layer t may lead the group as an operand's copy: a Transpose,
 * or a Gather of one index (a constant scalar) along an axis, of an
 * activation; 2 for a Mul or Div of an activation by a constant scalar
 * (Q's scale, applied to the Q rows in the tile) on the vector unit, one
 * step or a reciprocal and a multiply, in the storage dtype. */
static int lead_kind(const BkCtx *c, const BkLayer *t)
{
    if (t->node < 0 || t->chain) return 0;
    const IrGraph *g = c->g;
    const IrNode *n = &g->nodes[t->node];
    if (n->nin < 1 || n->in[0] < 0 || n->nout != 1) return 0;
    if (!strcmp(n->op, "Transpose")) return !g->t[n->in[0]].data;
    if (!strcmp(n->op, "Gather"))
        return n->nin == 2 && !g->t[n->in[0]].data && n->in[1] >= 0 && g->t[n->in[1]].data && g->t[n->in[1]].ndim == 0;
    if (strcmp(n->op, "Mul") && strcmp(n->op, "Div")) return 0;
    const BkLow *l = &t->lw;
    if (n->nin != 2 || l->kind != BK_K_ELEM || l->nin != 2 || l->act[0] || l->out_reg != 2 || l->nregs != 3 ||
        c->act_on[t->node] || c->gelu_src[t->node] >= 0 || c->tail[t->node] >= 0 || g->t[n->in[0]].data ||
        !g->t[n->in[1]].data || ir_numel(&g->t[n->in[1]]) != 1)
        return 0;
    for (int r = 0; r < 3; r++)
        if (l->reg_dt[r] != c->dt) return 0;
    for (int i = 0; i < l->nsteps; i++)
        if (l->steps[i].dst != 2) return 0;
    return 2;
}

static int is_transpose(const BkCtx *c, const BkLayer *t)
{
    return lead_kind(c, t) == 1 && !strcmp(c->g->nodes[t->node].op, "Transpose");
}

/* The element strides, in Transpose node tn's input x (out = 0) or
 * output (out = 1), of the dims of its other tensor (compact), and in *bs
 * the stride of those dims but the last two collapsed into one batch
 * index (0: all of extent 1); -1 when they do not collapse. */
static int perm_strides(const IrNode *tn, const IrTensor *x, int out, int64_t *ts, int64_t *bs)
{
    const IrAttr *pa = ir_attr(tn, "perm");
    int r = x->ndim;
    int64_t xs[IR_MAXDIM], td[IR_MAXDIM], span = 1;
    int perm[IR_MAXDIM];
    for (int d = 0; d < r; d++) {
        perm[d] = pa ? (int)pa->ints[d] : r - 1 - d;
        if (perm[d] < 0 || perm[d] >= r) return -1;
    }
    /* compact strides of the tensor the data lies in (x, or the output
     * whose dim d is x's perm[d]) */
    int64_t dims[IR_MAXDIM];
    for (int d = 0; d < r; d++) dims[d] = out ? x->dims[perm[d]] : x->dims[d];
    xs[r - 1] = 1;
    for (int d = r - 2; d >= 0; d--) xs[d] = xs[d + 1] * dims[d + 1];
    for (int d = 0; d < r; d++) {
        if (out) { ts[perm[d]] = xs[d]; td[perm[d]] = x->dims[perm[d]]; }   /* x's dim perm[d] is the output's d */
        else { ts[d] = xs[perm[d]]; td[d] = x->dims[perm[d]]; }
    }
    *bs = 0;
    for (int d = r - 3; d >= 0; d--) {
        if (td[d] == 1) continue;
        if (!*bs) *bs = ts[d];   /* the innermost batch dim of extent > 1 */
        if (ts[d] != *bs * span) return -1;
        span *= td[d];
    }
    return 0;
}

/* An operand read through the leading members: the tensor `src` its
 * data lies in, and for each dim d of src either the operand's dim map[d]
 * walks it or it is fixed at index fix[d] (map[d] = -1). */
typedef struct AttnView { int src, map[IR_MAXDIM]; int64_t fix[IR_MAXDIM]; } AttnView;

/* The leading member (of n) that produces tensor t, -1 none. */
static int lead_of(const BkCtx *c, const BkLayer *const *lead, int n, int t)
{
    for (int i = 0; i < n; i++)
        if (c->g->nodes[lead[i]->node].out[0] == t) return i;
    return -1;
}

/* 1 when every live reader of tensor t (and no graph output) is one of
 * the group's nodes. */
static int read_inside(const BkCtx *c, int t, const int *nodes, int nn)
{
    const IrGraph *g = c->g;
    int r = bk_tensor_root(c, t);
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].is_output && bk_tensor_root(c, i) == r) return 0;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        int in = 0, reads = c->gelu_src[i] >= 0 && bk_tensor_root(c, c->gelu_src[i]) == r;
        if (n->dead) continue;
        for (int j = 0; j < n->nin; j++)
            reads |= n->in[j] >= 0 && !g->t[n->in[j]].data && bk_tensor_root(c, n->in[j]) == r;
        for (int k = 0; k < nn; k++) in |= nodes[k] == i;
        if (reads && !in) return 0;
    }
    return 1;
}

/* Operand tensor t of the group (which: 0 Q, 1 K^T, 2 V) traced back
 * through the leading members (their bit set in *used; Q's scale, a Mul
 * or Div by a constant, recorded in a->qs): its data's tensor, DRAM
 * address, batch / row / column strides and offset into a->q or a->v.
 * 0, or 1 when it cannot be read so (a Gather of a non-constant index,
 * batch dims that do not collapse into one stride). */
static int trace_operand(BkCtx *c, const BkLayer *const *lead, int nl, int t, int which, AttnPlan *a, unsigned *used)
{
    const IrGraph *g = c->g;
    AttnView v;
    const IrTensor *ot = &g->t[t];
    int r = ot->ndim;
    if (r < 2) return 1;
    v.src = t;
    for (int d = 0; d < r; d++) { v.map[d] = d; v.fix[d] = 0; }
    for (int i; (i = lead_of(c, lead, nl, v.src)) >= 0;) {
        const IrNode *n = &g->nodes[lead[i]->node];
        const IrTensor *x = &g->t[n->in[0]];
        AttnView w;
        w.src = n->in[0];
        if (lead_kind(c, lead[i]) == 2) {
            /* Q's scale: Q's rows are loaded from its input, then scaled */
            if (which != 0 || a->qs_node >= 0 || x->ndim != g->t[v.src].ndim) return 1;
            a->qs_node = lead[i]->node;
            a->qs = lead[i]->lw;
            a->qs.aux = NULL;
            memcpy(w.map, v.map, sizeof w.map);
            memcpy(w.fix, v.fix, sizeof w.fix);
        } else if (!strcmp(n->op, "Transpose")) {
            const IrAttr *pa = ir_attr(n, "perm");
            int xr = x->ndim;
            for (int d = 0; d < xr; d++) {
                int pd = pa ? (int)pa->ints[d] : xr - 1 - d;
                if (pd < 0 || pd >= xr) return 1;
                w.map[pd] = v.map[d];
                w.fix[pd] = v.fix[d];
            }
        } else {   /* Gather of one index along `axis`: that dim fixed */
            int xr = x->ndim, ax = (int)ir_attr_int(n, "axis", 0);
            if (ax < 0) ax += xr;
            int64_t q = ir_get_i(&g->t[n->in[1]], 0);
            if (ax < 0 || ax >= xr) return 1;
            if (q < 0) q += x->dims[ax];
            if (q < 0 || q >= x->dims[ax]) return 1;
            for (int d = 0, k = 0; d < xr; d++) {
                if (d == ax) { w.map[d] = -1; w.fix[d] = q; continue; }
                w.map[d] = v.map[k];
                w.fix[d] = v.fix[k];
                k++;
            }
        }
        *used |= 1u << i;
        v = w;
    }
    if (v.src == t) return 0;   /* not through the members: the MatMul's own strides */
    const IrTensor *xt = &g->t[v.src];
    if (banded(c, v.src) || !c->pl[bk_tensor_root(c, v.src)].placed) return 1;
    int64_t xs[IR_MAXDIM], st[IR_MAXDIM] = {0}, off = 0, bs = 0, span = 1;
    xs[xt->ndim - 1] = 1;
    for (int d = xt->ndim - 2; d >= 0; d--) xs[d] = xs[d + 1] * xt->dims[d + 1];
    for (int d = 0; d < xt->ndim; d++) {
        if (v.map[d] < 0) off += v.fix[d] * xs[d];
        else st[v.map[d]] = xs[d];
    }
    for (int d = r - 3; d >= 0; d--) {   /* the batch dims (all but the last two) as one stride */
        if (ot->dims[d] == 1) continue;
        if (!bs) bs = st[d];
        if (st[d] != bs * span) return 1;
        span *= ot->dims[d];
    }
    uint64_t addr;
    AtlErr ignore;
    if (bk_tensor_in_dram(c, v.src, &addr, &ignore)) return 1;
    addr += (uint64_t)off * (uint64_t)c->es;
    if (which == 0) { a->q.x = addr; a->q.a_bs = a->q.a_bs ? bs : 0; a->q.a_rs = st[r - 2]; a->q.a_cs = st[r - 1]; }
    else {
        BkLow *l = which == 1 ? &a->q : &a->v;
        l->w = addr; l->b_bs = l->b_bs ? bs : 0; l->b_rs = st[r - 2]; l->b_cs = st[r - 1];
    }
    return 0;
}

/* Folds a trailing Transpose member tl of the second MatMul's output
 * (node n2; nothing else reads that output) into the stores: the rows go
 * straight to the Transpose's output through its strides. 0, or 1. */
static int fold_output(BkCtx *c, const BkLayer *tl, int n2, AttnPlan *a)
{
    const IrGraph *g = c->g;
    const IrNode *tn = &g->nodes[tl->node];
    int y = g->nodes[n2].out[0], t = tn->out[0];
    const IrTensor *yt = &g->t[y];
    if (tn->in[0] != y || yt->ndim < 2 || yt->ndim != g->t[t].ndim || read_elsewhere(c, y, tl->node) || banded(c, t) ||
        !c->pl[bk_tensor_root(c, t)].placed)
        return 1;
    int64_t ts[IR_MAXDIM], bs;
    uint64_t addr;
    AtlErr ignore;
    if (perm_strides(tn, yt, 1, ts, &bs) || bk_tensor_in_dram(c, t, &addr, &ignore)) return 1;
    a->y = addr;
    a->y_bs = bs;
    a->y_rs = ts[yt->ndim - 2];
    a->y_cs = ts[yt->ndim - 1];
    return 0;
}

int bk_lower_attn(BkCtx *c, const BkLayer *const *members, int nm, BkLayer *ly, AtlErr *e)
{
    /* leading Transposes feeding Q, K^T or V (folded into the loads) */
    int nt = 0;
    while (nt < nm && nt < ATTN_MAX_T && lead_kind(c, members[nt])) nt++;
    const BkLayer *const *tr = members;
    members += nt;
    nm -= nt;
    /* a trailing Transpose of the output (folded into the stores) */
    const BkLayer *ty = nm > 3 && is_transpose(c, members[nm - 1]) ? members[nm - 1] : NULL;
    nm -= ty != NULL;
    /* the flow DRAM model only: with `[dram] model = banked` the cost
     * model does not see refreshes, which the group's compute-dense span
     * moves into the DMA-bound layers around it (encoder_block on HBM2:
     * the group 1,244 simulated cycles faster than its four layers, the
     * model 35 cycles faster in all; the estimate's total error -6.4% ->
     * -9.3%) */
    if (nm < 3 || nm > ATTN_CORE_MAX || c->chip->dram_model != CFG_DRAM_FLOW || !is_mm(c, members[0]) ||
        !is_mm(c, members[nm - 1]) || members[nm - 2]->lw.kind != BK_K_SOFTMAX)
        return 1;
    AttnPlan *a = calloc(1, sizeof *a);
    if (!a) return bk_fail(c, members[nm - 1]->node, e, "out of memory");
    if (!matches(c, members, nm, a)) { free(a); return 1; }
    a->nm = nt + nm + (ty != NULL);
    for (int i = 0; i < nt; i++) a->nodes[i] = tr[i]->node;
    for (int i = 0; i < nm; i++) a->nodes[nt + i] = members[i]->node;
    if (ty) a->nodes[nt + nm] = ty->node;
    a->q = members[0]->lw;
    a->p = members[nm - 2]->lw;
    a->v = members[nm - 1]->lw;
    a->q.aux = a->p.aux = a->v.aux = NULL;
    a->y = a->v.y;
    a->y_bs = (int64_t)a->v.M * a->v.Nn; a->y_rs = a->v.Nn; a->y_cs = 1;
    a->qs_node = -1;
    unsigned used = 0;
    const IrNode *n1 = &c->g->nodes[members[0]->node], *n2 = &c->g->nodes[members[nm - 1]->node];
    int bad = trace_operand(c, tr, nt, n1->in[0], 0, a, &used) || trace_operand(c, tr, nt, n1->in[1], 1, a, &used) ||
              trace_operand(c, tr, nt, n2->in[1], 2, a, &used) || used != (1u << nt) - 1;
    for (int i = 0; i < nt && !bad; i++) bad = !read_inside(c, c->g->nodes[tr[i]->node].out[0], a->nodes, a->nm);
    if (bad) { free(a); return 1; }
    if (ty && fold_output(c, ty, members[nm - 1]->node, a)) { free(a); return 1; }
    a->bt = a->q.bt; a->M = a->q.M; a->D = a->q.K; a->S = a->q.Nn; a->Dv = a->v.Nn;
    BkLow *l = &ly->lw;
    l->kind = BK_K_ATTN;
    l->dt = l->xdt = c->dt;
    l->es = l->xes = c->es;
    l->aux = (int32_t *)(void *)a;
    ly->gen = attn_gen;
    ly->is_matrix = 1;
    ly->macs = members[0]->macs + members[nm - 1]->macs;
    /* query-row chunks: halvings of M, and those giving the batches one
     * or two tiles a core */
    int cand[40], nc = 0;
    for (int mt = a->M;; mt = (mt + 1) / 2) {
        cand[nc++] = mt;
        if (mt == 1 || nc >= 20) break;
    }
    for (int per = 1; per <= 2; per++) {
        int chunks = (per * c->ncores + a->bt - 1) / a->bt;
        if (chunks > 1 && chunks <= a->M) cand[nc++] = (a->M + chunks - 1) / chunks;
    }
    /* key chunks (streaming) for the query chunks whose K and V do not
     * fit whole: the longest that fits, a multiple of the alignment in
     * storage elements (so every chunk's columns and probabilities start
     * aligned); offered when within the tile cap, or the fewest tiles */
    int sn[40], unit = (int)(c->align / (uint64_t)c->es);
    int64_t cap = 16 * (int64_t)c->ncores, few = INT64_MAX;
    for (int i = 0; i < nc; i++) {
        sn[i] = a->S;
        if (!layout(c, ly, a, cand[i], a->S)) continue;
        sn[i] = 0;
        for (int n = 2; n * unit <= a->S; n++) {
            int w = ((a->S + n - 1) / n + unit - 1) / unit * unit;
            if (w < a->S && !layout(c, ly, a, cand[i], w)) { sn[i] = w; break; }
        }
        if (sn[i] && (int64_t)a->bt * a->nmc * a->np < few) few = (int64_t)a->bt * a->nmc * a->np;
    }
    if (few < INT64_MAX && few > cap) cap = few;
    for (int i = 0; i < nc; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++) dup |= cand[j] == cand[i];
        if (dup || !sn[i] || layout(c, ly, a, cand[i], sn[i])) continue;
        int64_t tiles = (int64_t)a->bt * a->nmc * a->np;
        if (tiles > (a->ns == 1 ? 16 * (int64_t)c->ncores : cap)) continue;
        AttnShape s = {cand[i], sn[i]};
        if (bk_push_shape(ly, &s, sizeof s, tiles, e)) return -1;
    }
    if (!ly->shapes.n) return 1;
    ly->shapes.apply = apply_shape;
    return 0;
}

int bk_attn_nodes(const BkLayer *ly, int *nodes, int max)
{
    const AttnPlan *a = plan_of(ly);
    if (!a) return 0;
    for (int i = 0; i < a->nm && i < max; i++) nodes[i] = a->nodes[i];
    return a->nm;
}

void bk_attn_mark_internal(BkCtx *c, const BkLayer *ly)
{
    const AttnPlan *a = plan_of(ly);
    if (!a) return;
    for (int i = 0; i < a->nm - 1; i++) c->pl[bk_tensor_root(c, c->g->nodes[a->nodes[i]].out[0])].internal = 1;
}
