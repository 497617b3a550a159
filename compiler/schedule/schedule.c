/* schedule.c - segments, tiles on cores, and the time-step table of each
 * core (the sync scheme is in schedule.h's header). The order of loads,
 * computes and stores is decided here and nowhere else: emit/emit.c and
 * cost/cost.c both walk bk_sched_table. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/schedule/schedule.h"
#include "compiler/lower/lower.h"

void bk_sched_init(BkSchedule *s) { memset(s, 0, sizeof *s); }

void bk_segment_free(BkSegment *sg)
{
    free(sg->tile_core);
    sg->tile_core = NULL;
    sg->tile_cap = 0;
    bk_band_free(sg);
}

void bk_sched_free(BkSchedule *s)
{
    for (int i = 0; i < s->n; i++) bk_segment_free(&s->seg[i]);
    free(s->seg);
    memset(s, 0, sizeof *s);
}

int bk_sched_distribute(BkSegment *sg, AtlErr *e)
{
    const BkLayer *ly = sg->layer;
    int nt = ly->ntiles, run = ly->tile_run > 0 ? ly->tile_run : 1;
    if (nt % run) return atl_fail(e, "internal: %d tiles are not whole runs of %d", nt, run);
    if (!sg->tile_core || sg->tile_cap < nt) {   /* kept from candidate to candidate when large enough */
        free(sg->tile_core);
        sg->tile_cap = nt ? nt : 1;
        if (!(sg->tile_core = malloc((size_t)sg->tile_cap * sizeof *sg->tile_core))) {
            sg->tile_cap = 0;
            return atl_fail(e, "out of memory distributing tiles");
        }
    }
    int units = nt / run, used = 0, last = -1;
    for (int t = 0; t < nt; t++) {
        sg->tile_core[t] = sg->cores.first + (int)((int64_t)(t / run) * sg->cores.count / units);
        if (sg->tile_core[t] != last) { used++; last = sg->tile_core[t]; }
    }
    sg->cores_used = used;
    return bk_band_distribute(sg, e);
}

int bk_sched_add(BkSchedule *s, BkLayer *ly, BkCoreSet cores, BkCoreSet bar_set, int bar_id, AtlErr *e)
{
    if (cores.first < bar_set.first || cores.first + cores.count > bar_set.first + bar_set.count)
        return atl_fail(e, "internal: a segment's cores are not inside its barrier's set");
    if (s->n == s->cap) {
        int nc = s->cap ? 2 * s->cap : 64;
        BkSegment *p = realloc(s->seg, (size_t)nc * sizeof *p);
        if (!p) return atl_fail(e, "out of memory in the schedule");
        s->seg = p;
        s->cap = nc;
    }
    BkSegment *sg = &s->seg[s->n];
    memset(sg, 0, sizeof *sg);
    sg->layer = ly;
    sg->cores = cores;
    sg->bar.id = bar_id;
    sg->bar.set = bar_set;
    sg->bar.count = ISA_NUM_ENGINES * bar_set.count;
    sg->bar.scope = ISA_SCOPE_CHIP;
    if (bk_sched_distribute(sg, e)) return -1;
    return s->n++;
}

uint32_t bk_sched_cluster_mask(const BkSegment *sg, int cpc, int cluster)
{
    /* the cores cluster x cpc + j, j < cpc (no division a tile: every
     * table of the tile search asks) */
    uint32_t m = 0;
    int lo = cluster * cpc;
    for (int t = 0; t < sg->layer->ntiles; t++) {
        unsigned j = (unsigned)(sg->tile_core[t] - lo);
        if (j < (unsigned)cpc) m |= 1u << j;
    }
    return m;
}

static int push(BkTable *t, BkActKind kind, int tile, int slot, int wait, int signal, AtlErr *e)
{
    if (bk_table_reserve(t, e)) return -1;
    BkAction *a = &t->a[t->n++];
    memset(a, 0, sizeof *a);
    a->kind = (uint8_t)kind;
    a->tile = tile;
    a->piece = -1;
    a->slot = (uint8_t)slot;
    a->wait = (int8_t)wait;
    a->signal = (int8_t)signal;
    return 0;
}

/* A WAIT on semaphore sem (WEIGHTS, or INPUT: bk_sched_input_sem): on
 * the DMA stream when the tiles' loads read what the prologue copies to
 * SRAM (dma), else on the matrix stream. */
static int push_wait(BkTable *t, int dma, int sem, AtlErr *e)
{
    if (push(t, BK_ACT_WAIT, -1, 0, sem, -1, e)) return -1;
    t->a[t->n - 1].engine = (uint8_t)(dma ? ISA_ENGINE_DMA : ISA_ENGINE_MAT);
    return 0;
}

/* The prologue's MCAST (piece -1: all of it; else gather piece `piece`),
 * to the cluster's cores in mask, signalling sem. */
static int push_mcast(BkTable *t, int piece, uint32_t mask, int sem, AtlErr *e)
{
    if (push(t, BK_ACT_MCAST, -1, 0, -1, sem, e)) return -1;
    t->a[t->n - 1].mask = mask;
    t->a[t->n - 1].piece = piece;
    return 0;
}

/* Weights staged in SRAM (BkLayer.wsram): per chunk (weight key / run)
 * the cores of `core`'s cluster whose tiles use it (bits of the cluster's
 * cores), in t->users (*n chunks); -1 out of memory. */
static int stage_users(const BkCtx *c, const BkSegment *sg, int core, BkTable *t, int *n)
{
    const BkLayer *ly = sg->layer;
    int cpc = c->chip->cores_per_cluster, run = ly->tile_run > 0 ? ly->tile_run : 1, nch = 0, top = INT_MIN;
    /* the chunks: the highest key's, + 1 (x / run grows with x) */
    for (int tl = 0; tl < ly->ntiles; tl++)
        if (ly->tile_wkey[tl] > top) top = ly->tile_wkey[tl];
    if (ly->ntiles && top / run + 1 > 0) nch = top / run + 1;
    *n = nch;
    if (nch > t->capusers) {
        uint32_t *p = realloc(t->users, (size_t)nch * sizeof *p);
        if (!p) return -1;
        t->users = p;
        t->capusers = nch;
    }
    uint32_t *users = t->users;
    if (nch) memset(users, 0, (size_t)nch * sizeof *users);
    /* the tiles on core's cluster, cores lo .. lo + cpc - 1 (a division
     * per tile cost a third of the table's time) */
    int lo = core / cpc * cpc;
    for (int tl = 0; tl < ly->ntiles; tl++) {
        int tc = sg->tile_core[tl], key = ly->tile_wkey[tl];
        if (tc >= lo && tc < lo + cpc && key >= 0) users[run == 1 ? key : key / run] |= 1u << (tc - lo);
    }
    return 0;
}

/* Before core's first load of a weight key (wsram): the chunk's lowest
 * core in the cluster stages it (an MCAST action of that tile, its flag
 * signalling the chunk's other cores), the others wait for that signal
 * (a DMA-stream nop): each receives the signals of its chunk's keys from
 * one core, in the order it loads them (its tiles are chunk-major). */
static int stage_or_wait(const BkLayer *ly, BkTable *t, int core, int cpc, const uint32_t *users, uint8_t *seen, int tile,
                         int pf_tile, AtlErr *e);

static int table_of(const BkCtx *c, const BkSegment *sg, int core, BkTable *t, AtlErr *e);

int bk_sched_table(const BkCtx *c, const BkSegment *sg, int core, BkTable *t, AtlErr *e)
{
    if (table_of(c, sg, core, t, e)) return -1;
    return sg->pf_next ? bk_prefetch_actions(c, sg, core, t, e) : 0;
}

static int table_of(const BkCtx *c, const BkSegment *sg, int core, BkTable *t, AtlErr *e)
{
    const BkLayer *ly = sg->layer;
    t->n = 0;
    if (core < sg->cores.first || core >= sg->cores.first + sg->cores.count)
        return push(t, BK_ACT_BARRIER, -1, 0, -1, -1, e);   /* waits for the segment only */
    if (ly->direct) {
        for (int tile = 0; tile < ly->ntiles; tile++)
            if (sg->tile_core[tile] == core && push(t, BK_ACT_COPY, tile, 0, -1, -1, e)) return -1;
        return push(t, BK_ACT_BARRIER, -1, 0, -1, -1, e);
    }
    /* a gather in pieces (np > 1): the lowest core issues piece 0, then
     * each next piece after its own load of a tile (so its tiles do not
     * wait for the whole gather); every core waits once a piece, before
     * the load of the first tile of the piece's K chunk */
    int np = 0, waited = 0, issued = 0, lowest = 0, isem = bk_sched_input_sem(ly);
    if (ly->mcast || ly->in_sram) {
        int cpc = c->chip->cores_per_cluster, cl = core / cpc;
        uint32_t m = bk_sched_cluster_mask(sg, cpc, cl);
        if (m >> (core % cpc) & 1) {
            int p = ly->in_sram || ly->wsram_hi > ly->wsram_lo ? bk_stage_pieces(c, sg) : 1;
            lowest = core == cl * cpc + bk_lowest_bit(m);
            /* multicast weights the segment before fetched into SRAM: every
             * core issues a part (the SRAM ports side by side), waits for all */
            int parts = sg->pf_in == BK_PF_IN_MC && p == 1 ? bk_popcount(m) : 1;
            if (parts > 1) {
                if (push_mcast(t, -1, m, isem, e)) return -1;
                t->a[t->n - 1].part = (uint8_t)bk_popcount(m & ((1u << (core % cpc)) - 1));
                t->a[t->n - 1].parts = (uint8_t)parts;
                for (int q = 0; q < parts; q++)
                    if (push_wait(t, 0, isem, e)) return -1;
            } else {
                if (lowest && push_mcast(t, p > 1 ? issued++ : -1, m, isem, e)) return -1;
                if (p > 1) np = p;
                else if (push_wait(t, ly->in_sram || ly->wsram_hi > ly->wsram_lo, isem, e)) return -1;
            }
        }
    }
    uint32_t mask = np && lowest ? t->a[0].mask : 0;
    uint32_t *users = NULL;
    uint8_t *seen = NULL;
    int nch = 0, nkeys = 0;
    /* fetched by the previous segment: its first key's copy (SRAM), or its first tile's weights (LMEM) */
    int pf_tile = sg->pf_in == BK_PF_IN_SRAM ? bk_prefetch_tile(c, sg, core) : -1;
    int pf_lmem = sg->pf_in == BK_PF_IN_LMEM && bk_prefetch_tile(c, sg, core) >= 0;
    if (ly->wsram) {
        for (int tile = 0; tile < ly->ntiles; tile++)
            if (ly->tile_wkey[tile] + 1 > nkeys) nkeys = ly->tile_wkey[tile] + 1;
        if (stage_users(c, sg, core, t, &nch)) return atl_fail(e, "out of memory in the schedule");
        if (nkeys > t->capseen) {
            uint8_t *p = realloc(t->seen, (size_t)nkeys);
            if (!p) return atl_fail(e, "out of memory in the schedule");
            t->seen = p;
            t->capseen = nkeys;
        }
        users = t->users;
        seen = t->seen;
        if (nkeys) memset(seen, 0, (size_t)nkeys);
    }
    int prev = -1, wk[2] = {-1, -1}, i = 0, rc = 0;   /* prev: the tile loaded last, awaiting compute */
    for (int tile = 0; tile <= ly->ntiles && !rc; tile++) {
        int next = -1;
        if (tile < ly->ntiles) {
            if (sg->tile_core[tile] != core) continue;
            next = tile;
        }
        if (next >= 0 && ly->wsram && (rc = stage_or_wait(ly, t, core, c->chip->cores_per_cluster, users, seen, next, pf_tile, e)))
            break;
        if (next >= 0) {
            int b = i % 2, key = ly->tile_wkey[next];
            int skip = (i > 0 && key >= 0 && wk[b] == key) || (i == 0 && pf_lmem);
            int need = !np ? 0 : (ly->chain ? bk_chain_tile_piece(ly, next) : bk_tile_pos(&ly->lw, next).kci) + 1;
            for (; !rc && mask && issued < need; issued++) rc = push_mcast(t, issued, mask, isem, e);
            for (; !rc && waited < need; waited++) rc = push_wait(t, 1, isem, e);
            if (rc) break;
            wk[b] = key;
            if ((rc = push(t, BK_ACT_LOAD, next, b, -1, BK_SEM_LOADED + b, e))) break;
            t->a[t->n - 1].skip_w = (uint8_t)skip;
            if (mask && issued < np && (rc = push_mcast(t, issued++, mask, isem, e))) break;
        }
        if (prev >= 0) {
            int b = (i - 1) % 2;
            if ((rc = push(t, BK_ACT_COMPUTE, prev, b, BK_SEM_LOADED + b, BK_SEM_COMPUTED + b, e) ||
                      push(t, BK_ACT_STORE, prev, b, BK_SEM_COMPUTED + b, -1, e))) break;
        }
        if (next >= 0) { prev = next; i++; }
    }
    /* every piece issued and every signal consumed before the barrier */
    for (; !rc && mask && issued < np; issued++) rc = push_mcast(t, issued, mask, isem, e);
    for (; !rc && waited < np; waited++) rc = push_wait(t, 1, isem, e);
    return rc ? -1 : push(t, BK_ACT_BARRIER, -1, 0, -1, -1, e);
}

static int stage_or_wait(const BkLayer *ly, BkTable *t, int core, int cpc, const uint32_t *users, uint8_t *seen, int tile,
                         int pf_tile, AtlErr *e)
{
    int key = ly->tile_wkey[tile], run = ly->tile_run > 0 ? ly->tile_run : 1;
    if (key < 0 || seen[key]) return 0;
    seen[key] = 1;
    uint32_t all = users[key / run], me = 1u << (core % cpc), others = all & ~me;
    if ((all & (me - 1)) == 0) {   /* the lowest user stages */
        /* copied by the previous segment (prefetch): only the flag, if anyone waits */
        if (tile == pf_tile && !others) return 0;
        if (push(t, BK_ACT_MCAST, tile, 0, -1, others ? BK_SEM_WEIGHTS : -1, e)) return -1;
        t->a[t->n - 1].mask = others;
        t->a[t->n - 1].pf = (uint8_t)(tile == pf_tile ? BK_PF_FLAG : 0);
        return 0;
    }
    if (push(t, BK_ACT_WAIT, -1, 0, BK_SEM_WEIGHTS, -1, e)) return -1;
    t->a[t->n - 1].engine = ISA_ENGINE_DMA;
    return 0;
}

void bk_table_free(BkTable *t)
{
    free(t->a);
    free(t->users);
    free(t->seen);
    memset(t, 0, sizeof *t);
}

int bk_stage_pieces(const BkCtx *c, const BkSegment *sg)
{
    if (sg->layer->chain) return bk_chain_stage_pieces(sg->layer);
    return c->bands ? bk_band_gather_pieces(c, sg) : bk_conv_stage_pieces(c, sg->layer);
}

const AtlInsn *bk_action_dma(const BkAction *a, const BkCode *k, int *n, const uint8_t **skip, int *first, int *last)
{
    const AtlInsn *ins = a->kind == BK_ACT_LOAD ? k->ld : k->st;
    *n = a->kind == BK_ACT_LOAD ? k->nld : k->nst;
    *skip = a->kind == BK_ACT_LOAD && a->skip_w ? k->ld_w : NULL;
    *first = *last = -1;
    int lo = 0, hi = *n;
    if (a->kind == BK_ACT_MCAST && a->piece >= 0) {
        /* gather piece a->piece: after the a->piece-th instruction carrying a
         * signal of its own (a piece's flag) up to the next one, or the end */
        int flags = 0;
        for (int j = 0; j < *n; j++)
            if (ins[j].signal) {
                if (++flags == a->piece) lo = j + 1;
                if (flags == a->piece + 1) { hi = j + 1; break; }
            }
        if (a->piece > flags) lo = hi;   /* no such piece: a nop */
    }
    for (int j = lo; j < hi; j++)
        if (!(*skip && (*skip)[j])) {
            if (*first < 0) *first = j;
            *last = j;
        }
    return ins;
}

uint64_t bk_slot_base(const BkLayer *ly, int b) { return ly->slot_off + (uint64_t)b * ly->slot_size; }

const BkCode *bk_walk_code(BkCtx *c, const BkSegment *sg, BkWalk *w, const BkAction *a, int core, AtlErr *e)
{
    const BkLayer *ly = sg->layer;
    BkCode *k = &w->code[a->slot & 1];
    switch (a->kind) {
    case BK_ACT_MCAST:
        /* its own buffer: a gather's pieces and a tile's weight staging
         * come between loads and computes (the slots' code stays) */
        k = &w->code[2];
        bk_code_reset(k);
        if (a->pf == BK_PF_MC) {
            /* the next segment's multicast weights, constant: DRAM -> SRAM */
            const BkSegment *nx = sg->pf_next;
            if (nx->layer->prologue(c, nx->layer, k, e)) return NULL;
            bk_prefetch_mc_code(k, nx->pf_base, 1);
            if (k->oom || (a->parts > 1 && bk_prefetch_mc_part(k, a->part, a->parts))) {
                atl_fail(e, "out of memory generating code");
                return NULL;
            }
            return k;
        }
        if (a->pf == BK_PF_COPY || a->pf == BK_PF_LMEM) {
            /* the next segment's weights, constant: DRAM -> SRAM (its staging
             * copy) or -> LMEM (its tile's weight loads into slot 0), no band
             * or copy rewriting */
            const BkLayer *nly = sg->pf_next->layer;
            BkCode *t = &w->code[3];
            if (a->pf == BK_PF_COPY && nly->stage(c, nly, a->tile, BK_STAGE_COPY, k, e)) return NULL;
            if (a->pf == BK_PF_LMEM) {
                bk_code_reset(t);
                if (nly->gen(c, nly, a->tile, bk_slot_base(nly, 0), t, e)) return NULL;
                for (int j = 0; j < t->nld; j++)
                    if (t->ld_w[j]) bk_code_st(k, &t->ld[j]);
            }
            if (k->oom || (a->pf == BK_PF_LMEM && t->oom)) { atl_fail(e, "out of memory generating code"); return NULL; }
            return k;
        }
        if (a->tile >= 0) {
            int mode = a->pf == BK_PF_FLAG ? BK_STAGE_FLAG : BK_STAGE_COPY | (a->mask ? BK_STAGE_FLAG : 0);
            if (ly->stage(c, ly, a->tile, mode, k, e)) return NULL;
        } else if (ly->prologue(c, ly, k, e))
            return NULL;
        else if ((!c->bands && bk_conv_stage_pieces(c, ly) > 1) || bk_chain_stage_pieces(ly) > 1) {
            /* a staged input in pieces (lower/conv.c), a chain's staged
             * streamed weights (lower/chain.c): each piece's flag signals
             * the input's semaphore */
            for (int j = 0; j < k->nst; j++)
                if (k->st[j].signal) k->st[j].signal = (uint8_t)(bk_sched_input_sem(ly) + 1);
        }
        else if (sg->pf_in == BK_PF_IN_MC) {
            bk_prefetch_mc_code(k, sg->pf_base, 0);   /* read what the segment before fetched */
            if (a->parts > 1 && bk_prefetch_mc_part(k, a->part, a->parts)) {
                atl_fail(e, "out of memory generating code");
                return NULL;
            }
        }
        break;
    case BK_ACT_LOAD:
    case BK_ACT_COPY:
        bk_code_reset(k);
        if (ly->gen(c, ly, a->tile, a->kind == BK_ACT_COPY ? 0 : bk_slot_base(ly, a->slot), k, e)) return NULL;
        break;
    case BK_ACT_COMPUTE:
    case BK_ACT_STORE:
        break;
    default:
        return NULL;
    }
    /* bands: each cluster's cells of banded tensors from / to its SRAM */
    if (c->bands && (a->kind == BK_ACT_MCAST || a->kind == BK_ACT_LOAD || a->kind == BK_ACT_COPY) &&
        bk_band_code(c, sg, k, core / c->chip->cores_per_cluster, e))
        return NULL;
    /* activations in every cluster's SRAM: each SRAM write reaches them all */
    if (c->sram_copies > 1 && (a->kind == BK_ACT_MCAST || a->kind == BK_ACT_LOAD || a->kind == BK_ACT_COPY))
        bk_code_replicate_sram(k, c->sram_copies, core / c->chip->cores_per_cluster);
    if (k->oom) { atl_fail(e, "out of memory generating code"); return NULL; }
    return k;
}

void bk_walk_free(BkWalk *w)
{
    bk_code_free(&w->code[0]);
    bk_code_free(&w->code[1]);
    bk_code_free(&w->code[2]);
    bk_code_free(&w->code[3]);
}
