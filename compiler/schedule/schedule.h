/* schedule.h - the one schedule: which core runs which tile of which
 * layer group, in which order and LMEM slot, with which sync edges, and
 * which barrier closes it. Emit (emit/) turns it into instruction
 * streams, the cost model (cost/) replays it; neither holds an ordering
 * of its own, both walk the time-step tables this file builds.
 *
 * A schedule is a list of segments. A segment runs one layer or one layer
 * group on a core set and ends with a barrier of a set containing it:
 * every engine of every core of that set joins it, so the next segment on
 * those cores reads what any of them wrote. The v1 schedule is one
 * instance: a segment per layer, every segment on all cores of the chip;
 * with grouping a group may run on one cluster while the other cores only
 * join its barrier.
 *
 * Inside a segment, each core of the set has a time-step table (BkAction
 * list, bk_sched_table): for its tiles T0..Tn-1 (the tiles the segment
 * gives it, in order) and slot b(i) = i mod 2, the 3-stage software
 * pipeline (load i+1 | compute i | store i-1):
 *     [MCAST] [WAIT] L0  L1 C0 S0  L2 C1 S1 ... C(n-1) S(n-1)  BARRIER
 * in issue order, DMA queue L0, L1, S0, L2, S1, ... Sync (semaphore ids
 * below, per slot b), carried by the actions:
 *   - the last load of Li signals LOADED[b]; the first compute of Ci
 *     waits on it;
 *   - inside Ci, whenever the engine changes (MAT -> VEC or back), the
 *     last instruction on the old engine signals TO_VEC[b]/TO_MAT[b] and
 *     the first on the new engine waits on it, so Ci's instructions run
 *     in order and its last instruction completes last;
 *   - the last compute of Ci signals COMPUTED[b]; the first store of Si
 *     waits on it;
 *   - Li+2 reuses slot b: it follows Si in the in-order DMA queue, and Si
 *     started only after Ci completed, so no semaphore is needed for that
 *     (write-after-read on the slot is ordered through COMPUTED).
 *   Every signal is consumed exactly once, by one engine, so all
 *   semaphores are 0 again at the end of each segment.
 * Weight keys: a load of tile i is marked skip_w when the previous tile of
 *   the same slot on this core has the same weight key (the slot still
 *   holds those weights).
 * Weight multicast (the layer's mcast) and inputs in SRAM (in_sram): per
 *   cluster, the lowest core of the set that runs tiles gets an MCAST
 *   action first: the prologue's DMAs, those writing LMEM with a mask of
 *   the cluster's cores that run tiles, the last one signalling WEIGHTS on
 *   each of them; each of those gets a WAIT action (a nop waiting on
 *   WEIGHTS) before its first tile: on the matrix stream for resident
 *   weights (the loads into the slots may go ahead), on the DMA stream
 *   when the input is copied to SRAM (the loads read it). The resident
 *   region lies below the slots, so loads into the slots never touch it;
 *   the previous segment's barrier, which every segment's spans the whole
 *   chip, makes it and the SRAM free. A banded input gathered in P > 1
 *   pieces (bk_band_gather_pieces: one per K chunk) signals WEIGHTS once a
 *   piece; a core then waits before the load of each tile until the
 *   pieces up to the tile's K chunk have signalled (a DMA-stream WAIT per
 *   piece, in order), and for those left before its barrier, so its
 *   first tiles load while the later pieces land.
 * Weights staged in SRAM (the layer's wsram): before a core's first load
 *   of each weight key, the lowest core of its cluster that uses the key's
 *   chunk gets an MCAST action of that tile (BkLayer.stage: the key's
 *   block DRAM -> SRAM, then, when other cores of the cluster use the
 *   chunk, a flag multicast to them signalling WEIGHTS), each other user a
 *   WAIT on the DMA stream. A core's tiles are chunk-major and a chunk's
 *   other users come after its lowest one, so each core receives those
 *   signals from one core in the order it waits for them.
 * DMA-only layers (direct): one COPY action per tile, no slots, no sync.
 * Weight prefetch (prefetch.c; BkSegment.pf_next / pf_in): a segment may
 *   issue the next one's first staging copies (an MCAST of the next
 *   layer's tile, pf = BK_PF_COPY, no signal) in the DMA queue of the core
 *   that would stage them, before its barrier; the next segment's staging
 *   action of that key then keeps only its flag (BK_PF_FLAG), or goes.
 */
#ifndef ATOLL_COMPILER_SCHEDULE_SCHEDULE_H
#define ATOLL_COMPILER_SCHEDULE_SCHEDULE_H
#include <stdint.h>
#include <stdlib.h>
#include "compiler/target/layer.h"

/* Semaphores of the sync scheme, per slot b (0/1). */
enum {
    BK_SEM_LOADED = 0,   /* +b: the tile's loads have landed */
    BK_SEM_COMPUTED = 2, /* +b: the tile's computes are done */
    BK_SEM_TO_MAT = 4,   /* +b: hand-over inside a tile, vec -> mat */
    BK_SEM_TO_VEC = 6,   /* +b: hand-over inside a tile, mat -> vec */
    BK_SEM_WEIGHTS = 8,  /* the multicast resident weights have landed */
    BK_SEM_INPUT = 9,    /* a staged input (or a piece of its gather) has landed, when weights are staged too */
    BK_SEMS_USED = 10,
    /* the first semaphore a pipeline's own messages may take
     * (backend/pipeline.c): INPUT's, since a split's stages stage no
     * input and no weights (compile.c) */
    BK_SEMS_SPLIT = BK_SEM_INPUT
};

/* The semaphore a layer's staged input (its prologue, or each piece of
 * its gather) signals: WEIGHTS, or INPUT when its weights are staged too
 * (their keys' flags signal WEIGHTS from other cores, in another order).
 * Inline: bands.c and schedule.c both use it (no object-level circle). */
static inline int bk_sched_input_sem(const BkLayer *ly) { return ly->in_sram && ly->wsram ? BK_SEM_INPUT : BK_SEM_WEIGHTS; }

/* Cores first .. first+count-1 (chip-wide core ids). */
typedef struct BkCoreSet { int first, count; } BkCoreSet;

/* The barrier closing a segment: every engine of every core of `set`
 * joins barrier `id` (chip scope); it opens when `count` have. The set
 * holds the segment's core set and may be larger: cores that run nothing
 * of the segment then only wait for it (so the next segment on them reads
 * what it wrote). */
typedef struct BkBarrier { int id, count, scope; BkCoreSet set; } BkBarrier;   /* scope: ISA_SCOPE_* */

/* One layer group on a core set, closed by a barrier of that set. */
typedef struct BkSegment {
    BkLayer *layer;               /* the group it runs (today: one layer; not owned) */
    BkCoreSet cores;
    int *tile_core;               /* core of each tile (malloc'd, room for tile_cap) */
    int tile_cap;
    int cores_used;               /* cores of the set that run at least one tile */
    BkBarrier bar;
    /* placement split: the instance it runs (images inst*m .. inst*m+m-1 of
     * the io tensors) and the copy of the DRAM activation region it uses
     * (its cluster's); the emitter moves io and activation addresses there */
    int inst, act_copy;
    /* the cost model's estimate (cost/cost.c) */
    uint64_t est_cycles;          /* first instruction to barrier release */
    uint64_t est_compute;         /* max over cores of the busiest compute engine */
    uint64_t est_dma;             /* max over cores of DMA busy cycles */
    uint64_t est_rd, est_wr;      /* bytes its DMAs read from / write to DRAM, as the replay
                                   * issued them (0 when a bound stopped it) */
    /* measured by the emitter (emit/emit.h, BkEmitUse) */
    uint64_t dram_rd, dram_wr;    /* bytes its DMAs read from / write to DRAM */
    uint64_t lmem_peak;           /* highest LMEM byte any of its instructions touches */
    /* bands: the cluster that writes each output cell (channel c, row r
     * at c x nrows + r; -2: several or unknown) and per row the clusters
     * writing its cells (bit k; bit 31: a cell without an owner); malloc'd,
     * NULL when the layer is not a window layer of one image */
    int8_t *cell_owner;
    uint32_t *row_mask;
    int *chan_run;                /* per channel: as BkBand.run, of cell_owner */
    int nch, nrows;
    /* weight prefetch across the barrier (prefetch.c): pf_next, the next
     * segment whose first weights this one fetches (not owned; NULL none),
     * each core's copy placed at pf_pos (BK_PF_*); pf_in, what the
     * previous one fetched of this one's (BK_PF_IN_*, 0 nothing) */
    const struct BkSegment *pf_next;
    int pf_pos, pf_in;
    /* pf_in == BK_PF_IN_MC: the SRAM bytes [pf_base, pf_base + pf_span) of
     * every cluster hold the prologue's resident weights as laid out in
     * LMEM (copied there by the segment before); the prologue reads them */
    uint64_t pf_base, pf_span;
    uint64_t est_alone;           /* est_cycles before the prefetch decisions (0: none made) */
} BkSegment;

/* Where a segment issues the next one's staging copies in a core's DMA
 * queue: after its last load (BK_PF_LOAD1), after its second-to-last
 * (BK_PF_LOAD2), after its fourth-to-last (BK_PF_LOAD4), or just before
 * its barrier (BK_PF_BARRIER); a core with fewer loads issues them after
 * its first, one with none before its barrier. Multicast weights are
 * copied in parts by every core of the cluster, each at that position,
 * or (BK_PF_SPREAD) each core's part in pieces after its loads. */
enum { BK_PF_NONE, BK_PF_BARRIER, BK_PF_LOAD1, BK_PF_LOAD2, BK_PF_LOAD4, BK_PF_SPREAD, BK_PF_POSITIONS };
/* BK_PF_SPREAD (multicast weights only): each core of the cluster copies
 * its part in this many pieces, spread over its loads */
enum { BK_PF_SPREAD_PARTS = 4 };
/* BkSegment.pf_in: the first staged weight keys (the stagers' copies into
 * SRAM), or every core's first tile's weight loads into its LMEM slot 0 */
enum { BK_PF_IN_SRAM = 1, BK_PF_IN_LMEM = 2, BK_PF_IN_MC = 3 };

typedef struct BkSchedule {
    BkSegment *seg;
    int n, cap;
} BkSchedule;

/* One entry of a core's time-step table, in issue order. */
typedef enum {
    BK_ACT_MCAST,   /* the layer's prologue DMA (tile -1), or a tile's weight staging, masked to `mask` (DMA) */
    BK_ACT_WAIT,    /* a nop on `engine`'s stream waiting on `wait` */
    BK_ACT_LOAD,    /* tile's loads into its slot (DMA) */
    BK_ACT_COMPUTE, /* tile's computes (matrix / vector, hand-overs inside) */
    BK_ACT_STORE,   /* tile's stores (DMA) */
    BK_ACT_COPY,    /* a DMA-only tile (DMA) */
    BK_ACT_BARRIER  /* every engine joins the segment's barrier */
} BkActKind;

typedef struct BkAction {
    uint8_t kind;                 /* BkActKind */
    uint8_t slot;                 /* LOAD / COMPUTE / STORE: the slot b */
    uint8_t skip_w;               /* LOAD: the slot still holds this tile's weights */
    uint8_t engine;               /* WAIT: the stream it holds (ISA_ENGINE_MAT, or DMA when
                                   * the tiles' loads read what the prologue copied to SRAM) */
    int8_t wait;                  /* semaphore the first instruction waits on, -1 none */
    int8_t signal;                /* semaphore the last instruction signals, -1 none */
    uint32_t mask;                /* MCAST: cores of the cluster its LMEM writes go to and its signal reaches */
    int tile;                     /* LOAD / COMPUTE / STORE / COPY: the layer's tile; MCAST:
                                   * the tile whose weight key it stages (wsram), -1 the prologue */
    int piece;                    /* MCAST of the prologue: the gather piece it issues (-1: all of it) */
    uint8_t part, parts;          /* MCAST of the prologue, parts > 1: this core issues part
                                   * `part` of it (bk_prefetch_mc_part) */
    uint8_t pf;                   /* MCAST of a tile's staging: BK_PF_COPY, the copy of the next
                                   * segment's key (prefetch); BK_PF_FLAG, only the flag (the
                                   * previous segment copied the key); 0: both as usual;
                                   * BK_PF_LMEM: the next segment's tile's weight loads;
                                   * BK_PF_MC (tile -1): the next segment's multicast
                                   * weights DRAM -> SRAM (its prologue's, re-aimed) */
} BkAction;

/* The tile-start hand-over of a compute action a whose first instruction
 * runs on engine eng (docs/backend.md, "Attention groups"): its wait for
 * the slot's loads (BK_SEM_LOADED + slot) must come after the previous
 * tile of that slot took its signal, so when the waiting engine changes,
 * the engine that waited last (*from) signals the returned semaphore and
 * eng waits for it first; -1 when no hand-over is needed. loaded_by holds
 * per slot the engine that waited last (-1 none); the emitter (emit.c)
 * and the cost model (cost.c) both keep it, per core and segment.
 * Inline: emit and cost both use it (no object-level circle). */
static inline int bk_sched_handover(int *loaded_by, const BkAction *a, int eng, int *from)
{
    int slot = a->wait - BK_SEM_LOADED;
    if (slot < 0 || slot > 1) return -1;
    *from = loaded_by[slot];
    loaded_by[slot] = eng;
    if (*from < 0 || *from == eng) return -1;
    return (eng == ISA_ENGINE_MAT ? BK_SEM_TO_MAT : BK_SEM_TO_VEC) + a->slot;
}
enum { BK_PF_COPY = 1, BK_PF_FLAG = 2, BK_PF_LMEM = 3, BK_PF_MC = 4 };

/* A core's table: actions (malloc'd by bk_sched_table, grown as needed). */
typedef struct BkTable {
    BkAction *a;
    int n, cap;
    /* scratch of bk_sched_table (weights staged in SRAM: each chunk's
     * users, each key seen), kept from table to table */
    uint32_t *users;
    uint8_t *seen;
    int capusers, capseen;
} BkTable;

void bk_sched_init(BkSchedule *s);
void bk_sched_free(BkSchedule *s);
/* Appends a segment running ly on cores, closed by barrier bar_id over
 * bar_set (which must contain cores; chip scope, or cluster scope when
 * bar_set is one cluster's cores and the schedule is split), and
 * distributes its tiles over the cores (bk_sched_distribute); returns its
 * index, or -1. */
int bk_sched_add(BkSchedule *s, BkLayer *ly, BkCoreSet cores, BkCoreSet bar_set, int bar_id, AtlErr *e);
/* Tiles to the segment's cores: runs of tile_run consecutive tiles stay
 * on one core, in order; runs go to cores in contiguous balanced blocks
 * (run k of K on core first + floor(k * count / K)); sets cores_used.
 * Bands (BkLayer.bands on the chip's cores): by output rows or output
 * channels instead (bk_band_distribute). Sets cell_owner with bands on. */
int bk_sched_distribute(BkSegment *sg, AtlErr *e);

/* bands.c - row and channel bands (docs/backend.md, "Row and channel
 * bands in every cluster"). bk_band_distribute: a conv/pool layer's tiles
 * to the cluster whose share of the output rows holds the tile's middle
 * row (BK_BANDS_ROWS), or a conv's output-channel chunks in contiguous
 * ranges to the clusters (BK_BANDS_CHANNELS), then over that cluster's
 * cores as bk_sched_distribute does; and sg->cell_owner from the tiles'
 * cells and cores (both with BkLayer.band_cores set; 0 when nothing was
 * done). bk_band_code rewrites the DMAs of one tile's code on `cluster`:
 * cells of a banded input its cluster owns are read from its SRAM, the
 * others from DRAM (marked needed); cells of the banded output go to the
 * own SRAM and, when another cluster reads them (before the schedule is
 * final: when a row within 3 has a cell of another cluster), to DRAM.
 * bk_band_publish records a segment's output owners in the context;
 * bk_band_finalize, once the schedule is complete, publishes every
 * segment's in order, collects the cells each load reads from DRAM and
 * sets band_final. */
int bk_band_distribute(BkSegment *sg, AtlErr *e);
void bk_band_free(BkSegment *sg);   /* the segment's band arrays */
int bk_band_code(BkCtx *c, const BkSegment *sg, BkCode *k, int cluster, AtlErr *e);
void bk_band_publish(BkCtx *c, const BkSegment *sg);
uint64_t bk_band_relayout(BkCtx *c, const BkSegment *sg, int reset);
/* Applies the marks of need every band holds back (BkBand.pend). */
void bk_band_apply_marks(BkCtx *c);
uint64_t bk_band_weight_rereads(const BkSegment *sg);
int bk_band_finalize(BkCtx *c, BkSchedule *s, AtlErr *e);
/* Pieces of the segment's input gather: its layer's K chunks when it is a
 * K-split convolution whose banded input is gathered (staged) and whose
 * weights are not multicast, each piece's flag signalling WEIGHTS (the
 * MCAST action's instructions that carry a signal of their own keep it);
 * else 1 (one flag, at the end). */
int bk_band_gather_pieces(const BkCtx *c, const BkSegment *sg);
/* schedule.c: the pieces of the segment's staged input: the bands'
 * gather's (bk_band_gather_pieces), or without bands a convolution's
 * copy by K chunk (bk_conv_stage_pieces). */
int bk_stage_pieces(const BkCtx *c, const BkSegment *sg);
/* prefetch.c - weight prefetch across a segment's barrier (docs/backend.md,
 * "Weight prefetch across the barrier"). bk_prefetch_tile: the tile of
 * segment sg whose weights `core` fetches first: with staged weights, its
 * first tile when core is the lowest of its cluster using the tile's chunk;
 * otherwise its first tile with weights; -1 none. bk_prefetch_set: makes
 * segment i fetch segment i+1's first weights at position pos (BK_PF_*;
 * BK_PF_NONE undoes it): the stagers' first copies into SRAM, moving
 * segment i+1's staging region (BkLayer.wsram_base) so that the copied
 * blocks are disjoint in every cluster from what segment i reads or
 * writes there; or, when segment i+1 loads its weights per tile from
 * constant DRAM, every core's first tile's weight loads into its LMEM
 * slot 0, just before its barrier only (BK_PF_BARRIER); 0 done, 1 not
 * possible (nothing to prefetch, cores differ, no disjoint region, that
 * position), -1 error.
 * bk_prefetch_actions inserts segment sg's prefetch MCASTs into core's
 * table. */
int bk_prefetch_tile(const BkCtx *c, const BkSegment *sg, int core);
int bk_prefetch_set(BkCtx *c, BkSchedule *s, int i, int pos, AtlErr *e);
int bk_prefetch_actions(const BkCtx *c, const BkSegment *sg, int core, BkTable *t, AtlErr *e);
/* Multicast weights fetched into SRAM (BK_PF_IN_MC): rewrites the
 * prologue's DMAs in k (constant DRAM -> resident LMEM) into the
 * prefetch's copies DRAM -> SRAM at base + (LMEM offset from the lowest
 * destination) when copy, else into SRAM -> LMEM reads of those copies. */
void bk_prefetch_mc_code(BkCode *k, uint64_t base, int copy);
/* Keeps in k (the prologue's DMAs) part `part` of `parts`: each DMA cut
 * along its outermost dimension longer than 1 (one shorter than parts
 * taken apart first), the parts' byte ranges disjoint. With the multicast
 * weights in SRAM every core of the cluster that runs tiles issues one
 * part, so their DMA engines read the cluster's SRAM ports side by side.
 * -1 out of memory. */
int bk_prefetch_mc_part(BkCode *k, int part, int parts);
/* The tile search's view of segment sg (a layer group whose prologue
 * only multicasts resident weights, not yet in a schedule): as the
 * schedule mostly runs it, its weights fetched into SRAM by the segment
 * before (pf_in = BK_PF_IN_MC at BkCtx.sram_stage, the first place
 * set_mc tries). 1 assumed, 0 not (no such prologue, --prefetch never,
 * SRAM holds activations there or is too small), -1 error. */
int bk_prefetch_mc_assume(BkCtx *c, BkSegment *sg, AtlErr *e);
/* Before the decisions: every staged layer's slots down to the fewest its
 * tiles' cores need (BkLayer.cores_ok), which moves addresses only. */
void bk_prefetch_compact(const BkCtx *c, BkSchedule *s);
/* Frees one segment's arrays. */
void bk_segment_free(BkSegment *sg);
/* Bit i set when core i of the cluster runs a tile of the segment. */
uint32_t bk_sched_cluster_mask(const BkSegment *sg, int cores_per_cluster, int cluster);
/* The time-step table of `core` in segment sg (see the file comment),
 * replacing t's contents. */
int bk_sched_table(const BkCtx *c, const BkSegment *sg, int core, BkTable *t, AtlErr *e);
/* Room for one more action in t (grown by doubling); -1 out of memory.
 * Inline: schedule.c and prefetch.c both grow tables, and schedule.c
 * already calls prefetch.c (no loop between the two objects). */
static inline int bk_table_reserve(BkTable *t, AtlErr *e)
{
    if (t->n < t->cap) return 0;
    int nc = t->cap ? 2 * t->cap : 32;
    BkAction *p = (BkAction *)realloc(t->a, (size_t)nc * sizeof *p);
    if (!p) return atl_fail(e, "out of memory in the schedule");
    t->a = p;
    t->cap = nc;
    return 0;
}
void bk_table_free(BkTable *t);

/* The code of the tiles a table walk is at: LOAD (or COPY) generates the
 * tile's code into its slot's buffer, COMPUTE and STORE find it there.
 * bk_walk_code returns the code an action uses (NULL for MCAST / WAIT /
 * BARRIER), generating it when the action is a LOAD or COPY, for `core`
 * (with activations in every cluster's SRAM, its SRAM writes reach the
 * other clusters' copies: bk_code_replicate_sram). */
typedef struct BkWalk { BkCode code[4]; } BkWalk;   /* the two slots', an MCAST's (prologue, gather piece, weight staging),
                                                     * a scratch one (the next segment's tile a prefetch takes loads of) */
const BkCode *bk_walk_code(BkCtx *c, const BkSegment *sg, BkWalk *w, const BkAction *a, int core, AtlErr *e);
void bk_walk_free(BkWalk *w);
/* The instructions a DMA action (MCAST, LOAD, STORE, COPY) issues: the
 * code's list for its kind (loads for LOAD, else the `st` list), *n of
 * them, *skip marking those it leaves out (a LOAD's weight loads when
 * skip_w; else NULL), *first / *last the first and last it issues (-1
 * when none: the action is then a nop carrying its wait and signal). */
const AtlInsn *bk_action_dma(const BkAction *a, const BkCode *k, int *n, const uint8_t **skip, int *first, int *last);
/* LMEM base of slot b of the segment's layer. */
uint64_t bk_slot_base(const BkLayer *ly, int b);

/* Number of set bits of m. */
static inline int bk_popcount(uint32_t m)
{
    int n = 0;
    for (; m; m &= m - 1) n++;
    return n;
}

/* Index of the lowest set bit of m (m != 0). */
static inline int bk_lowest_bit(uint32_t m)
{
    int i = 0;
    while (!(m >> i & 1)) i++;
    return i;
}
#endif
