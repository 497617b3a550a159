/* staged.h - batch-staged schedules: stage cuts, stage graphs and the
 * search for cuts and micro-batches (staged.c). */
#ifndef ATOLL_COMPILER_BACKEND_STAGED_H
#define ATOLL_COMPILER_BACKEND_STAGED_H
#include <stdint.h>
#include "compiler/ir/ir.h"
#include "util/err.h"

#define BK_MAX_STAGES 8

/* What the units of the schedule cost when the whole graph is compiled at
 * micro-batch m: unit u starts at node first[u] (in the canonicalised
 * graph's order) and costs est[u] cycles per instance. chip: the graph
 * compiled as placement chip (m is then the whole batch, one instance on
 * every core of the chip). */
typedef struct BkStageCosts {
    int m, n;
    int *first;
    uint64_t *est;
    int chip;
} BkStageCosts;

/* A staged schedule: stage i runs nodes start[i] .. start[i+1]-1 in
 * instances of m[i] images, or with chip[i] as one instance of the whole
 * batch (m[i]) on every core of the chip; est its estimated cycles per
 * cluster. bk_stage_plan leaves bands_at 0. */
typedef struct BkStagePlan {
    int n;
    int start[BK_MAX_STAGES + 1];
    int m[BK_MAX_STAGES];
    int chip[BK_MAX_STAGES];
    uint64_t est;
    int bands_at;   /* > 0: the search priced a chip stage starting at this node
                       with bands, and they beat its DRAM plan (compile.c builds
                       that stage with bands first) */
} BkStagePlan;

/* Node indices c (ascending) at which g may be cut: exactly one
 * non-constant tensor made before c is read from c on, and no graph output
 * is made before c. Returns how many (at most max), -1 out of memory. */
int bk_stage_cuts(const IrGraph *g, int *cuts, int max);
/* The tensor crossing cut c (a bk_stage_cuts result), -1 none. */
int bk_stage_boundary(const IrGraph *g, int cut);
/* The graph of nodes [a, b) of g (same tensor indices; the others dead and
 * compacted away): inputs, the non-constant tensors it reads and does not
 * make; outputs, those it makes that later nodes read or g outputs. The
 * caller frees *out (ir_free). */
int bk_stage_graph(const IrGraph *g, int a, int b, IrGraph *out, AtlErr *e);
/* The plan of least cycles over the cut candidates (cuts, ascending, all
 * unit starts in every split costs[k]) and the micro-batches of costs
 * (growing m, stage to stage; a chip costs last, a stage of it runs its
 * units once and may only start and end where that compile starts a
 * unit), per_cluster images per cluster, cut_cycles[i] the price of a
 * boundary at cuts[i], chip_sync what a cut into or out of a chip stage
 * adds (the chip barrier); nn the node count. A plan of one chip stage
 * (placement chip itself) is not one. -1 if none. */
int bk_stage_plan(const BkStageCosts *costs, int ncosts, const int *cuts, int ncuts, int nn, int per_cluster,
                  const uint64_t *cut_cycles, uint64_t chip_sync, BkStagePlan *plan);
/* The last cut of cuts (ascending, ncuts) before node `start` at which
 * the chip compile `chip` starts a unit (where a chip stage starting one
 * cut earlier than `start` would start), -1 none. */
int bk_stage_reach(const BkStageCosts *chip, const int *cuts, int ncuts, int start, int nn);
/* c's units from node `from` on replaced by tail's (units of the graph
 * from `from` on compiled as a stage of its own, their first nodes in c's
 * numbering): a chip stage starting at `from` or later then costs what
 * that stage's build prices. -1 out of memory (c unchanged). */
int bk_stage_splice(BkStageCosts *c, int from, const BkStageCosts *tail);
/* Stage graph sg reads its input t through a copy (an Identity node
 * into a new activation tensor that every reader of t then reads), so
 * placement may keep the copy in cluster SRAM. */
int bk_stage_copy_in(IrGraph *sg, int t, AtlErr *e);
/* Node `reader` of g (topologically sorted) reads activation t through a
 * copy made just before it: an Identity into a new tensor `T/reread_copy`
 * placed in the node order right before the reader, so the copy lives
 * only from there to the reader (placement may keep it in cluster SRAM
 * where t, live across a peak, could not stay); t's other readers keep
 * reading t. */
int bk_copy_before(IrGraph *g, int t, int reader, AtlErr *e);
#endif
