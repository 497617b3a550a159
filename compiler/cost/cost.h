/* cost.h - the cost model: what a schedule segment costs on the chip.
 *   cost.c    replays a segment's time-step tables (schedule/schedule.h)
 *             with the isa/timing.h formulas the simulator uses
 *   share.c   the servers of the replay, shared as the simulator's are
 *   flow.c    the DMA pricing: work per DRAM channel, NoC link and DMA port
 *             of one DMA (fast walk, exact memo)
 *   banked.c  with `[dram] model = banked`: the DRAM's buses, ranks and
 *             banks, by requests, rows and sibling DMAs
 *   prefetch.c which segment boundaries prefetch the next weights, where */
#ifndef ATOLL_COMPILER_COST_COST_H
#define ATOLL_COMPILER_COST_COST_H
#include <stdint.h>
#include "compiler/schedule/schedule.h"

/* Prices segment sg: fills its est_cycles, est_compute, est_dma and the
 * DRAM bytes its DMAs read and write (est_rd, est_wr: counted as the
 * simulator counts them, sim/account.h: a DMA's bytes once for a DRAM
 * source, once for a DRAM destination, a multicast once); 0. With a
 * bound (UINT64_MAX: none) it may stop once est_cycles is known to exceed
 * it: returns 1 then, with est_cycles = a lower bound > bound and
 * est_compute = est_dma = est_rd = est_wr = 0; -1 on error. A search that keeps a candidate
 * only when est_cycles < best can pass bound = best and skip the
 * candidate on 1: the choice is the same, found sooner. */
int bk_cost_segment(BkCtx *c, BkSegment *sg, uint64_t bound, AtlErr *e);
/* prefetch.c: for each boundary of the priced schedule s (every segment's
 * est_cycles set), whether and where the segment before stages the next
 * one's first weight keys (bk_prefetch_set): the position that prices the
 * two segments lowest, none when none is below them without it; leaves
 * every segment priced as it will be emitted. */
int bk_cost_prefetch(BkCtx *c, BkSchedule *s, AtlErr *e);
/* Adds the DRAM bytes DMA `in` reads and writes to *rd, *wr (nothing for
 * other instructions): what the simulator counts (sim/account.h). */
void bk_insn_dram_bytes(const AtlInsn *in, uint64_t *rd, uint64_t *wr);
/* Cycles of one instruction alone (DMA: no contention). */
uint64_t bk_insn_cycles(const AtlChip *chip, const AtlInsn *in);

/* flow.c: the work one DMA puts on each server of the cost model's
 * processor-sharing replay. Servers: DRAM channels [0, channels), NoC link
 * in per cluster, NoC link out per cluster, DMA port per core, SRAM ports
 * per cluster; with the banked model then its servers (banked.c). */
typedef struct BkFlowPlanner BkFlowPlanner;
typedef struct BkFlowUse { int server; uint64_t work, bursts; } BkFlowUse;
/* use[0..nuse): servers with work (cycles of exclusive service) and the
 * number of its bursts that put work there; valid until the next
 * bk_flow_plan call. lat: latency + issue after the flow. rbanks, wbanks:
 * with the banked model, the banks its DRAM reads and writes use. */
typedef struct BkFlowPlan { const BkFlowUse *use; int nuse; uint64_t lat, rbanks, wbanks; } BkFlowPlan;
enum { BK_FLOW_MEMO = 0, BK_FLOW_WALK = 1, BK_FLOW_REFERENCE = 2 }; /* how: all give the same plan */
BkFlowPlanner *bk_flow_new(const AtlChip *chip, AtlErr *e);
void bk_flow_free(BkFlowPlanner *p);
/* The slot of a workspace the cost model keeps with the pricer between
 * bk_cost_segment calls (cost.c's replay buffers, reused candidate after
 * candidate; nothing of one call's result stays in it); bk_flow_free frees
 * what it holds with free_fn. */
void **bk_flow_workspace(BkFlowPlanner *p, void (*free_fn)(void *));
int bk_flow_servers(const BkFlowPlanner *p);
/* How many flows server sv serves at full speed at once (a cluster's SRAM:
 * its ports; the others 1). */
int bk_flow_server_ports(const BkFlowPlanner *p, int sv);
/* What a DMA meets on a banked DRAM (`[dram] model = banked`, banked.c):
 * part[0..npart), the same instruction issued by other cores about the
 * same time, it among them, in core order, each starting at start[] (core
 * cycles); the banks (bit bank % 64) DRAM reads and writes in flight on
 * other cores use (their plans' rbanks, wbanks). */
typedef struct BkFlowPeers {
    const AtlInsn *const *part;
    const uint64_t *start;
    int npart;
    uint64_t rbanks, wbanks;
} BkFlowPeers;
/* Plans DMA `in` (DMA_COPY, DMA_FILL, DMA_GATHER or DMA_SCATTER, the last
 * two as the copy from/into rows 0..shape[1]-1 plus the index read) issued
 * by core `core`; peers only matter with the banked model (NULL: alone). */
int bk_flow_plan(BkFlowPlanner *p, int core, const AtlInsn *in, const BkFlowPeers *peers, int how, BkFlowPlan *out, AtlErr *e);
void bk_flow_stats(const BkFlowPlanner *p, uint64_t *hits, uint64_t *misses);
/* Whole segments priced again (docs/backend.md, "Segments priced once per
 * compile"): a pricer told to keep them (bk_flow_keep_segments) holds a
 * memo of each segment's price under the fingerprint of everything its
 * replay reads (cost.c); bk_flow_segments gives it (NULL when not kept or
 * out of memory), and bk_flow_free frees it. */
struct BkMemo;
void bk_flow_keep_segments(BkFlowPlanner *p);
struct BkMemo *bk_flow_segments(BkFlowPlanner *p);
/* Of a pricer that keeps segments: how many bk_cost_segment replays were
 * looked up by their generator key (cost/genkey.h), and how many found a
 * kept price there. */
void bk_cost_gen_stats(BkFlowPlanner *p, uint64_t *asks, uint64_t *hits);
/* Of a pricer (BkCtx.flow): how many bounded calls took a floor of their
 * price as their code was built (cost.c, build_floor), and how many it
 * spared the replay (the floor above the bound). */
void bk_cost_floor_stats(BkFlowPlanner *p, uint64_t *asks, uint64_t *hits);
/* Pricers shared by the builds of one compile (pool.c): one per chip (its
 * parameters compared whole), each keeping segments; the pool owns them
 * and a copy of each chip. bk_flow_pool_get returns the chip's (made on
 * first ask; NULL on OOM or when the pool is full: the caller then makes
 * its own). */
typedef struct BkFlowPool BkFlowPool;
BkFlowPool *bk_flow_pool_new(void);
void bk_flow_pool_free(BkFlowPool *pool);
BkFlowPlanner *bk_flow_pool_get(BkFlowPool *pool, const AtlChip *chip);
#endif
