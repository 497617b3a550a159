/* mm.c - Gemm and MatMul (batched, broadcast, transposed) on the
 * matrix unit, with K split and weight multicast.
 *
 * Reads: Gemm (transA, transB, alpha, beta, C) or MatMul with any batch
 *   dims that are either full or broadcast (all 1) on each side.
 * Y[bt][M][N] = A[bt][M][K] x B[bt][K][N]: a constant B is stored once as
 *   [bt][K][N] in the storage dtype with alpha folded in; an activation B
 *   (or A) is read through DMA strides, so transposes cost nothing extra.
 *   Gemm's constant C (times beta) is stored in f32, per column or full
 *   [M][N]; a non-constant C is read per tile from DRAM with broadcast
 *   strides, cast to f32 and scaled by beta in the epilogue. With an
 *   activation B, alpha scales the f32 sums in the epilogue.
 * Tiles: a tile is (output tile, k chunk); output tiles are (n chunk,
 *   batch, m chunk), n-chunk-major so consecutive tiles of a core keep the
 *   same B slice (weight key = B block). A tile loads its A block
 *   [mt][kt] and B block [kt][nt] and runs one `mm`. With one k chunk
 *   (K whole) the f32 accumulator is in the slot; the tile adds the bias,
 *   applies the fused activation, casts to the storage dtype if needed and
 *   stores the block.
 * K split (only when no tile with K whole fits a slot): the k chunks of one
 *   output tile are consecutive tiles on one core (BkLayer.tile_run).
 *   Its f32 accumulator is resident (alloc/lmem.c), one of TWO
 *   buffers chosen by the output tile's parity: chunk 0 runs `mm` without
 *   acc, later chunks with acc=1 (same k order as one unsplit `mm`, so the
 *   sums are bit-identical), the last chunk adds the bias, applies the
 *   activation, casts, and its store stage stores the block; the other
 *   chunks store nothing.
 *   Why two buffers suffice with the pipeline emitter unchanged: the
 *   emitter queues a core's DMAs as L0, L1, S0, L2, S1, ..., so the loads of
 *   local tile i follow the stores of local tile i-2; the simulator's DMA
 *   engine runs one instruction at a time, in queue order (docs/simulator.md),
 *   so those loads complete, and LOADED is signalled, only after those
 *   stores finished. Output tile j's last chunk is local tile (j+1)kc-1 and
 *   output tile j+2's first chunk is local tile (j+2)kc; its loads follow
 *   the stores of tile (j+2)kc-2 >= (j+1)kc-1 (kc >= 1), which waited for
 *   tile j's last compute (COMPUTED). So the first `mm` of output tile j+2,
 *   which waits for its LOADED, starts after output tile j's result was
 *   computed and stored, and overwrites the buffer j+2 shares with j only
 *   then; output tile j+1 uses the other buffer. Chunks of one output tile
 *   add into it in order: their `mm`s run on the one in-order matrix
 *   engine, and the vector epilogue of the last chunk is ordered after its
 *   `mm` by the emitter's hand-over. Buffer parity is the global output
 *   tile index: each core runs whole runs of consecutive output tiles, so
 *   its consecutive output tiles alternate too. The full-simulation tests
 *   (race detector on) check this: one buffer instead of two races.
 * Weight multicast (constant, unbatched B on a chip with clusters of
 *   several cores): the whole B, block-major [n chunk][k chunk][kt][nt]
 *   (each block aligned), is resident in every core of a cluster that
 *   runs tiles, written once per cluster by the multicast prologue
 *   (mm_prologue) the schedule places; tiles then load only A and the bias. With a K
 *   split too, the resident region holds B first, then the accumulators.
 * Tile shape: offered as candidates for the group search (group/search.c),
 *   which keeps the cheapest by the cost model: halvings of M and N (and
 *   the B modes: per-tile loads, B multicast when possible, A resident
 *   when A is small: the multicast prologue copies A whole into the
 *   resident region once a cluster, a_prologue) that fit, at one K depth: K whole when a tile with K whole fills the
 *   matrix unit (mt >= its rows and nt >= its columns, or all of M, N),
 *   else the first halving of K where one does (choose()). Only that depth
 *   is priced, and only its shapes with few enough tiles, which keeps the
 *   search cheap: a chip whose LMEM holds useful whole-K tiles prices no
 *   split at all. A weight-bound layer (weight_bound: reading B from DRAM
 *   takes longer than the MACs, e.g. a classifier at batch 1) also offers
 *   the next DEEP_K_DEPTHS halvings of that depth. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/lower/lower.h"
#include "isa/timing.h"

static int imin(int a, int b) { return a < b ? a : b; }

/* Position of tile t: output tile j = (nci, bi, mci), k chunk kci. */
typedef struct MmTile { int j, nci, bi, mci, kci, m0, mn, n0, nn, k0, kn; } MmTile;

static MmTile tile_at(const BkLow *l, int t)
{
    MmTile p;
    p.kci = t % l->nkc;
    p.j = t / l->nkc;
    p.nci = p.j / (l->bt * l->nmc);
    int r = p.j % (l->bt * l->nmc);
    p.bi = r / l->nmc;
    p.mci = r % l->nmc;
    p.m0 = p.mci * l->mt; p.mn = imin(l->mt, l->M - p.m0);
    p.n0 = p.nci * l->nt; p.nn = imin(l->nt, l->Nn - p.n0);
    p.k0 = p.kci * l->kt; p.kn = imin(l->kt, l->K - p.k0);
    return p;
}

/* Bytes between resident B blocks, and between the two accumulators. */
static uint64_t wblock_bytes(const BkCtx *c, const BkLow *l) { return bk_align_up(c, (uint64_t)l->kt * l->nt * c->es); }
static uint64_t acc_bytes(const BkCtx *c, const BkLow *l) { return bk_align_up(c, (uint64_t)l->mt * l->nt * 4); }

/* The bias, activation, cast and store of an output tile whose f32 sums
 * are at acc. */
static int epilogue(BkCtx *c, const BkLayer *g, const MmTile *p, uint64_t slot, uint64_t acc, BkCode *k, AtlErr *e)
{
    const BkLow *l = &g->lw;
    int es = c->es, dt = c->dt;
    uint32_t osh[4] = {1, 1, (uint32_t)p->mn, (uint32_t)p->nn};
    int64_t oc[4], ds[4];
    bk_compact(osh, oc);
    AtlInsn in;
    if (l->mm_alpha != 1.0f) {
        in = bk_vun(ISA_OP_V_AFFINE, ISA_F32, acc, acc, osh, oc, oc, l->mm_alpha, 0.0f);
        bk_code_cp(k, &in);
    }
    if (l->cx) {   /* C block [mn][nn] loaded (storage dtype) -> f32 at l_b, times beta */
        if (dt != ISA_F32) {
            memset(&in, 0, sizeof in);
            in.op = ISA_OP_V_CAST;
            in.dtype = (uint8_t)dt;
            in.otype = ISA_F32;
            in.dst = slot + l->l_b;
            in.src = slot + l->l_c;
            for (int d = 0; d < 4; d++) { in.shape[d] = osh[d]; in.dst_stride[d] = (int32_t)oc[d]; in.src_stride[d] = (int32_t)oc[d]; }
            bk_code_cp(k, &in);
        }
        if (l->c_beta != 1.0f) {
            in = bk_vun(ISA_OP_V_AFFINE, ISA_F32, slot + l->l_b, slot + l->l_b, osh, oc, oc, l->c_beta, 0.0f);
            bk_code_cp(k, &in);
        }
    }
    if (l->b || l->cx) {
        int64_t bs[4] = {0, 0, l->pool_op || l->cx ? p->nn : 0, 1};
        in = bk_vbin(ISA_OP_V_ADD, ISA_F32, acc, acc, slot + l->l_b, osh, oc, oc, bs);
        bk_code_cp(k, &in);
    }
    uint64_t res;
    if (bk_matrix_epilogue(k, l, dt, acc, slot + l->l_tmp, slot + l->l_out, 0, osh, oc, &res))
        return bk_fail(c, g->node, e, "activation %s cannot be fused", l->act);
    ds[0] = 0; ds[1] = 0; ds[2] = l->Nn; ds[3] = 1;
    uint64_t dst = l->y + ((uint64_t)p->bi * l->M * l->Nn + (uint64_t)p->m0 * l->Nn + (uint64_t)p->n0) * es;
    in = bk_dma(dt, ISA_SPACE_DRAM, dst, ISA_SPACE_LMEM, res, osh, ds, oc);
    bk_code_st(k, &in);
    return 0;
}

static int mm_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    MmTile p = tile_at(l, t);
    int es = c->es, dt = c->dt, last = p.kci == l->nkc - 1;
    uint32_t sh[4] = {1, 1, (uint32_t)p.mn, (uint32_t)p.kn};
    int64_t ds[4], ss[4] = {0, 0, l->a_rs, l->a_cs};
    bk_compact(sh, ds);
    uint64_t src = l->x + (uint64_t)(p.bi * l->a_bs + p.m0 * l->a_rs + p.k0 * l->a_cs) * es;
    AtlInsn in;
    uint64_t asrc = slot + l->l_in;
    uint32_t lda = (uint32_t)p.kn;
    if (l->a_res) {   /* resident [bt][M][K] (a_prologue) */
        asrc = l->l_wres + ((uint64_t)p.bi * l->M * l->K + (uint64_t)p.m0 * l->K + (uint64_t)p.k0) * es;
        lda = (uint32_t)l->K;
    } else {
        in = bk_dma(dt, ISA_SPACE_LMEM, asrc, ISA_SPACE_DRAM, src, sh, ds, ss);
        bk_code_ld(k, &in, 0);
    }
    uint64_t bsrc = slot + l->l_w;
    if (ly->mcast && !l->a_res) {
        bsrc = l->l_wres + (uint64_t)(p.nci * l->nkc + p.kci) * wblock_bytes(c, l);
    } else {
        sh[2] = (uint32_t)p.kn; sh[3] = (uint32_t)p.nn;
        ss[2] = l->b_rs; ss[3] = l->b_cs;
        bk_compact(sh, ds);
        src = l->w + (uint64_t)(p.bi * l->b_bs + p.k0 * l->b_rs + p.n0 * l->b_cs) * es;
        in = bk_dma(dt, ISA_SPACE_LMEM, bsrc, ISA_SPACE_DRAM, src, sh, ds, ss);
        bk_code_ld(k, &in, l->b_bs == 0 && l->count_pad);   /* count_pad: B is a constant */
    }
    if (l->b && last) {
        /* pool_op: 1 = bias is [M][N], 0 = per column */
        sh[2] = l->pool_op ? (uint32_t)p.mn : 1; sh[3] = (uint32_t)p.nn;
        ss[2] = l->pool_op ? l->Nn : 0; ss[3] = 1;
        bk_compact(sh, ds);
        src = l->b + (uint64_t)((l->pool_op ? p.m0 * l->Nn : 0) + p.n0) * 4;
        in = bk_dma(ISA_F32, ISA_SPACE_LMEM, slot + l->l_b, ISA_SPACE_DRAM, src, sh, ds, ss);
        bk_code_ld(k, &in, !l->pool_op);
    }
    if (l->cx && last) {
        /* C read with its broadcast strides, compact [mn][nn] in the slot */
        sh[2] = (uint32_t)p.mn; sh[3] = (uint32_t)p.nn;
        ss[2] = l->c_rs; ss[3] = l->c_cs;
        bk_compact(sh, ds);
        src = l->cx + (uint64_t)(p.m0 * l->c_rs + p.n0 * l->c_cs) * es;
        in = bk_dma(dt, ISA_SPACE_LMEM, slot + (dt == ISA_F32 ? l->l_b : l->l_c), ISA_SPACE_DRAM, src, sh, ds, ss);
        bk_code_ld(k, &in, 0);
    }
    uint64_t acc = l->nkc > 1 ? l->l_accres + (uint64_t)(p.j % 2) * acc_bytes(c, l) : slot + l->l_acc;
    AtlInsn mm;
    memset(&mm, 0, sizeof mm);
    mm.op = ISA_OP_MM;
    mm.dtype = (uint8_t)dt;
    mm.acc = p.kci > 0;
    mm.dst = acc;
    mm.src = asrc;
    mm.src2 = bsrc;
    mm.m = (uint32_t)p.mn; mm.k = (uint32_t)p.kn; mm.n = (uint32_t)p.nn;
    mm.lda = lda; mm.ldb = (uint32_t)p.nn; mm.ldc = (uint32_t)p.nn;
    bk_code_cp(k, &mm);
    return last ? epilogue(c, ly, &p, slot, acc, k, e) : 0;
}

/* The multicast prologue: constant B [K][N] in DRAM -> resident blocks
 * [n chunk][k chunk][kn][nn], one DMA per kind of block (full or last,
 * along n and k). The emitter sets the mask and the signal. */
static int mm_prologue(BkCtx *c, const BkLayer *ly, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    (void)e;
    int es = c->es, fn = l->Nn / l->nt, rn = l->Nn % l->nt, fk = l->K / l->kt, rk = l->K % l->kt;
    int64_t blk = (int64_t)(wblock_bytes(c, l) / (uint64_t)es);
    for (int pn = 0; pn < 2; pn++)
        for (int pk = 0; pk < 2; pk++) {
            int cn = pn ? rn > 0 : fn, wn = pn ? rn : l->nt, ck = pk ? rk > 0 : fk, wk = pk ? rk : l->kt;
            int nc0 = pn ? fn : 0, kc0 = pk ? fk : 0;
            if (!cn || !ck) continue;
            uint32_t sh[4] = {(uint32_t)cn, (uint32_t)ck, (uint32_t)wk, (uint32_t)wn};
            int64_t ss[4] = {l->nt, (int64_t)l->kt * l->Nn, l->Nn, 1};
            int64_t ds[4] = {l->nkc * blk, blk, wn, 1};
            uint64_t dst = l->l_wres + (uint64_t)(nc0 * l->nkc + kc0) * (uint64_t)blk * es;
            uint64_t src = l->w + ((uint64_t)kc0 * l->kt * l->Nn + (uint64_t)nc0 * l->nt) * es;
            AtlInsn in = bk_dma(c->dt, ISA_SPACE_LMEM, dst, ISA_SPACE_DRAM, src, sh, ds, ss);
            bk_code_st(k, &in);
        }
    return 0;
}

/* The resident-A prologue (B mode 2): A [bt][M][K] in DRAM (its strides)
 * -> the resident region, compact, one DMA. The emitter sets the mask and
 * the signal. */
static int a_prologue(BkCtx *c, const BkLayer *ly, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    (void)e;
    uint32_t sh[4] = {1, (uint32_t)l->bt, (uint32_t)l->M, (uint32_t)l->K};
    int64_t ss[4] = {0, l->a_bs, l->a_rs, l->a_cs}, ds[4];
    bk_compact(sh, ds);
    AtlInsn in = bk_dma(c->dt, ISA_SPACE_LMEM, l->l_wres, ISA_SPACE_DRAM, l->x, sh, ds, ss);
    bk_code_st(k, &in);
    return 0;
}

/* Bytes of A whole (resident in B mode 2). */
static uint64_t a_bytes(const BkCtx *c, const BkLow *l) { return bk_align_up(c, (uint64_t)l->bt * l->M * l->K * c->es); }

/* Chunk counts, resident region (multicast B, K-split accumulators) and
 * slot layout for the tile shape in l and B mode m (1 = multicast);
 * 0 if it fits. */
static int plan(const BkCtx *c, BkLayer *ly, int m)
{
    BkLow *l = &ly->lw;
    uint64_t mt = (uint64_t)l->mt, nt = (uint64_t)l->nt, kt = (uint64_t)l->kt;
    l->nmc = (l->M + l->mt - 1) / l->mt;
    l->nnc = (l->Nn + l->nt - 1) / l->nt;
    l->nkc = (l->K + l->kt - 1) / l->kt;
    /* resident A: every tile's k chunk of it must start aligned, as a
     * slot's operands do */
    if (m == 2 && (((uint64_t)l->K * c->es) % c->align || ((uint64_t)l->kt * c->es) % c->align)) return -1;
    ly->mcast = m != 0;
    l->a_res = m == 2;
    ly->prologue = m == 1 ? mm_prologue : m == 2 ? a_prologue : NULL;
    l->l_wres = 0;
    uint64_t res = m == 1 ? (uint64_t)l->nnc * l->nkc * wblock_bytes(c, l) : m == 2 ? a_bytes(c, l) : 0;
    l->l_accres = res;
    if (l->nkc > 1) res += 2 * acc_bytes(c, l);
    if (bk_reserve_resident(c, ly, res)) return -1;
    uint64_t used = 0;
    l->l_in = m == 2 ? 0 : bk_slot_alloc(c, &used, mt * kt * c->es);
    l->l_w = m == 1 ? 0 : bk_slot_alloc(c, &used, kt * nt * c->es);
    l->l_b = l->b || l->cx ? bk_slot_alloc(c, &used, (l->pool_op || l->cx ? mt : 1) * nt * 4) : 0;
    l->l_c = l->cx && c->dt != ISA_F32 ? bk_slot_alloc(c, &used, mt * nt * c->es) : 0;
    l->l_acc = l->nkc == 1 ? bk_slot_alloc(c, &used, mt * nt * 4) : 0;
    l->l_tmp = !strcmp(l->act, "HardSwish") ? bk_slot_alloc(c, &used, mt * nt * 4) : 0;
    l->l_out = c->dt != ISA_F32 ? bk_slot_alloc(c, &used, mt * nt * c->es) : 0;
    return used <= ly->slot_size ? 0 : -1;
}

/* Assigns the tiles of the planned shape (k chunks of an output tile as
 * one run) and their weight keys (the B block; B of every batch is the
 * same block when B is not batched). */
static int assign(BkCtx *c, BkLayer *ly, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    if (bk_set_tiles(ly, l->nnc * l->bt * l->nmc * l->nkc, l->nkc, e)) return -1;
    for (int t = 0; t < ly->ntiles; t++) {
        MmTile p = tile_at(l, t);
        ly->tile_wkey[t] = (l->b_bs == 0 ? p.nci : p.nci * l->bt + p.bi) * l->nkc + p.kci;
    }
    return 0;
}

typedef struct MmShape { int mt, nt, kt, mode; } MmShape;

enum { DEEP_K_DEPTHS = 2 };   /* deeper K depths a weight-bound layer also offers */
/* A resident (B mode 2) offered when A takes at most 1/A_RES_SHARE of
 * LMEM (the cost model then prices it beside the other modes): a
 * quarter, so that a classifier keeps its A at batch > 1 too (ResNet-50's
 * fc, 2048 inputs: 8 KB at batch 1, 64 KB at 8, 128 KB at 16; the
 * staged schedule's chip stage at batch 8 on a1: 157 K -> 135 K cycles
 * estimated; a sixteenth, before, offered it at batch 1 to 4 only) */
enum { A_RES_SHARE = 4 };

/* The candidates with depth kt: every (B mode, nt, mt) halving that fits.
 * Counts them into d (how many, the fewest tiles per B mode, whether one
 * fills the matrix unit: nt >= its columns and mt >= its rows, or all of
 * N, M); with `limit`, also offers those of mode m with at most limit[m]
 * tiles as candidate shapes, in this order. modes: bit m for B mode m
 * (0 per-tile loads, 1 multicast B, 2 resident A). -1 on error. */
typedef struct MmDepth { int fitted, full; int64_t min_tiles[3]; } MmDepth;

static int scan_depth(BkCtx *c, BkLayer *ly, int kt, int modes, const int64_t *limit, MmDepth *d, AtlErr *e)
{
    BkLow *l = &ly->lw;
    memset(d, 0, sizeof *d);
    d->min_tiles[0] = d->min_tiles[1] = d->min_tiles[2] = INT64_MAX;
    for (int m = 0; m < 3; m++)
        for (int nt = l->Nn; modes >> m & 1; nt = (nt + 1) / 2) {
            for (int mt = l->M;; mt = (mt + 1) / 2) {
                l->mt = mt; l->nt = nt; l->kt = kt;
                if (plan(c, ly, m) == 0) {
                    int64_t tiles = (int64_t)l->nnc * l->bt * l->nmc * l->nkc;
                    d->fitted++;
                    if (tiles < d->min_tiles[m]) d->min_tiles[m] = tiles;
                    if (nt >= imin(l->Nn, c->chip->mm_cols) && mt >= imin(l->M, c->chip->mm_rows)) d->full = 1;
                    MmShape s = {mt, nt, kt, m};
                    if (limit && tiles <= limit[m] && bk_push_shape(ly, &s, sizeof s, tiles, e)) return -1;
                }
                if (mt == 1) break;
            }
            if (nt == 1) break;
        }
    return 0;
}

/* The plan of shape `shape` (an MmShape): slot layout, tiles, split. */
static int apply_shape(BkCtx *c, BkLayer *ly, const void *shape, AtlErr *e)
{
    const MmShape *s = shape;
    BkLow *l = &ly->lw;
    l->mt = s->mt; l->nt = s->nt; l->kt = s->kt;
    if (plan(c, ly, s->mode)) return bk_fail(c, ly->node, e, "internal: a candidate tile shape does not fit");
    if (assign(c, ly, e)) return -1;
    snprintf(ly->split, sizeof ly->split, "B%d M%d N%d%s%.0d%s", l->bt, l->nmc, l->nnc, l->nkc > 1 ? " K" : "",
             l->nkc > 1 ? l->nkc : 0, l->a_res ? " ar" : ly->mcast ? " mc" : "");
    return 0;
}

/* Offers depth kt's shapes (d: its scan) with at most max(16 x cores,
 * 2 x the fewest of their B mode) tiles. */
static int offer_depth(BkCtx *c, BkLayer *ly, int kt, int modes, MmDepth *d, AtlErr *e)
{
    if (!d->fitted) return 0;
    int64_t limit[3];
    for (int m = 0; m < 3; m++) {
        int64_t few = d->min_tiles[m] == INT64_MAX ? 0 : 2 * d->min_tiles[m];
        limit[m] = few > 16 * (int64_t)c->ncores ? few : 16 * (int64_t)c->ncores;
    }
    return scan_depth(c, ly, kt, modes, limit, d, e);
}

/* 1 when reading B from DRAM (each element once) takes more than twice
 * as long as the whole chip's matrix units take for the MACs (each
 * element used once per row of A it multiplies: M, times bt when B is
 * shared by the batch): a classifier at batch 1 (ResNet-50's fc, M = 1).
 * Such a layer is DRAM-bound and a core's last tile computes after the
 * DRAM has delivered everything, so deeper K splits (smaller tiles)
 * shorten that tail. */
static int weight_bound(const BkCtx *c, const BkLow *l)
{
    int rate = tim_mm_rate(c->chip, l->dt);
    double bpc = tim_dram_bytes_per_cycle(c->chip), es = l->es ? l->es : c->es;
    if (rate <= 0 || bpc <= 0) return 0;
    if (c->chip->dram_model != CFG_DRAM_FLOW) return 0;   /* the banked model: the cost model prices deeper splits up to 18% above the simulator */
    double macs = (double)c->chip->mm_rows * c->chip->mm_cols / rate * cfg_total_cores(c->chip);
    double rows = (double)l->M * (l->b_bs == 0 ? l->bt : 1);
    return es / bpc > 2.0 * rows / macs;
}

/* The candidate shapes. The depth: K whole when a tile with K whole fills
 * the matrix unit, else K halved until one does (or until halving again
 * would go below the unit's rows, or to 1). Only that depth is offered
 * (and, weight-bound, the next DEEP_K_DEPTHS halvings not below the
 * unit's rows),
 * and only its shapes with at most max(16 x cores, 2 x the fewest of their
 * B mode) tiles: many small tiles are slow to price and never cheapest
 * (per mode: the slots of the multicast mode are smaller, so its tiles
 * are too). The group search prices them all. */
static int choose(BkCtx *c, BkLayer *ly, AtlErr *e)
{
    BkLow *l = &ly->lw;
    MmDepth d;
    /* per-tile loads; B multicast when B is a constant shared by the
     * batch; A resident when it is small (every output chunk re-reads it
     * otherwise: ResNet-50's classifier, 8 KB a k chunk at a time by all
     * 16 cores at once, from one DRAM channel) */
    int cl = c->chip->cores_per_cluster > 1;
    /* (A resident with the flow DRAM model only: under the banked one the
     * cost model prices its layers up to 13% above the simulator) */
    int ares = cl && c->chip->dram_model == CFG_DRAM_FLOW && a_bytes(c, l) * A_RES_SHARE <= (uint64_t)c->chip->lmem_bytes;
    int modes = 1 | (l->count_pad && l->b_bs == 0 && cl) << 1 | ares << 2;
    int kt = l->K;
    for (;; kt = (kt + 1) / 2) {
        if (scan_depth(c, ly, kt, modes, NULL, &d, e)) return -1;
        if (d.full || kt == 1 || (d.fitted && (kt + 1) / 2 < c->chip->mm_rows)) break;
    }
    if (offer_depth(c, ly, kt, modes, &d, e)) return -1;
    /* weight-bound: also two deeper K splits, while a chunk fills the
     * unit's rows */
    for (int k = 0, deep = kt; d.fitted && weight_bound(c, l) && k < DEEP_K_DEPTHS; k++) {
        deep = (deep + 1) / 2;
        if (deep < c->chip->mm_rows || deep == kt) break;
        MmDepth dd;
        if (scan_depth(c, ly, deep, modes, NULL, &dd, e) || offer_depth(c, ly, deep, modes, &dd, e)) return -1;
    }
    if (ly->shapes.n == 0)
        return bk_fail(c, ly->node, e, "one row of A and one column of B do not fit half of LMEM (%d bytes) even "
                       "with K = %d split into chunks of 1", (int)c->slot, l->K);
    ly->shapes.apply = apply_shape;
    return 0;
}

/* Gemm's C as an activation: read from DRAM per tile, broadcast to
 * [M][N] by the ONNX unidirectional rule (shape (), (N), (1|M, 1|N)). */
static int gemm_runtime_c(BkCtx *c, int node, BkLow *l, float beta, AtlErr *e)
{
    const IrTensor *ct = &c->g->t[c->g->nodes[node].in[2]];
    int r = ct->ndim;
    int64_t cm = r >= 2 ? ct->dims[r - 2] : 1, cn = r >= 1 ? ct->dims[r - 1] : 1;
    if (r > 2 || (cm != 1 && cm != l->M) || (cn != 1 && cn != l->Nn))
        return bk_fail(c, node, e, "C '%s' (rank %d) does not broadcast to [%d][%d]", ct->name, r, l->M, l->Nn);
    if (bk_tensor_in_dram(c, c->g->nodes[node].in[2], &l->cx, e)) return -1;
    l->c_rs = cm == 1 ? 0 : cn;
    l->c_cs = cn == 1 ? 0 : 1;
    l->c_beta = beta;
    return 0;
}

/* Fused activation, generator and the tile search, once A, B and the
 * bias or C are set. */
static int finish(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrNode *nd = &c->g->nodes[node];
    BkLow *l = &ly->lw;
    if (c->act_on[node]) {
        snprintf(l->act, sizeof l->act, "%s", nd->act);
        l->act_alpha = nd->act_alpha;
        l->act_beta = nd->act_beta;
    }
    ly->gen = mm_gen;
    ly->is_matrix = 1;
    ly->macs = (uint64_t)l->bt * l->M * l->K * l->Nn;
    return choose(c, ly, e);
}

int bk_mm_batches(const BkCtx *c, int node, const IrTensor *a, const IrTensor *b, const IrTensor *y, int64_t bt[3],
                  AtlErr *e)
{
    const IrTensor *t[3] = {a, b, y};
    for (int i = 0; i < 3; i++) {
        bt[i] = 1;
        for (int d = 0; d < t[i]->ndim - 2; d++) bt[i] *= t[i]->dims[d];
    }
    if ((bt[0] != 1 && bt[0] != bt[2]) || (bt[1] != 1 && bt[1] != bt[2]))
        return bk_fail(c, node, e, "partially broadcast batch dimensions are not lowered");
    return 0;
}

int bk_lower_mm(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
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
    int64_t bt[3];
    if (bk_mm_batches(c, node, a, b, y, bt, e)) return -1;
    int64_t abt = bt[0], bbt = bt[1], ybt = bt[2];
    if (M > 65535 || K > 65535 || N > 65535) return bk_fail(c, node, e, "a matrix dimension exceeds 65535");
    if (M < 1 || K < 1 || N < 1 || ybt < 1)
        return bk_fail(c, node, e, "an empty product (batch %lld, M %lld, K %lld, N %lld) is not lowered", (long long)ybt,
                       (long long)M, (long long)K, (long long)N);
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
        if (bk_weight_take(c, wb, nb * c->es, &l->w, e)) return -1;
        l->b_rs = N; l->b_cs = 1;
        l->count_pad = 1;            /* marks B as constant (weight loads may be skipped) */
        l->mm_alpha = 1.0f;
    } else {
        l->mm_alpha = alpha;          /* applied to the f32 sums in the epilogue */
        if (bk_tensor_in_dram(c, nd->in[1], &l->w, e)) return -1;
        l->b_rs = tb ? 1 : N; l->b_cs = tb ? K : 1;
        l->count_pad = 0;
    }
    l->b_bs = bbt == 1 ? 0 : K * N;
    l->b = 0;
    l->pool_op = 0;
    if (gemm && nd->nin > 2 && nd->in[2] >= 0) {
        const IrTensor *ct = &gr->t[nd->in[2]];
        if (!ct->data) return gemm_runtime_c(c, node, l, beta, e) ? -1 : finish(c, node, ly, e);
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
    return finish(c, node, ly, e);
}
