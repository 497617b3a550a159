/* group.h - the choices the backend makes by asking the cost model.
 *   search.c  the tile-shape search: of the shapes a lowering left open
 *             (BkLayer.shapes), the cheapest on the layer's core set.
 *   form.c    layer groups: which consecutive layers run as one group
 *             whose intermediates stay in LMEM (an interval dynamic
 *             programme over the layer sequence).
 *   look.c    bands: a layer's band way judged with its consumer's
 *             price (the caller, backend/compile.c, prices the consumer
 *             under each of the producer's kept options). */
#ifndef ATOLL_COMPILER_GROUP_GROUP_H
#define ATOLL_COMPILER_GROUP_GROUP_H
#include "compiler/cost/cost.h"

/* Prices ly's candidate shapes on `cores` in their order (stopping as
 * BkShapes says) and applies the cheapest (the first of equal cost);
 * frees the candidates. Nothing to do when the lowering left none. */
int bk_choose_shape(BkCtx *c, BkLayer *ly, BkCoreSet cores, AtlErr *e);
/* The same, but a shape whose price (with the bands' extra DRAM time) is
 * not under `bound` is never picked: 1, the layer left without a plan
 * (the caller frees it), when no shape is under it, else 0 or -1. Group
 * formation prices a candidate group so, against the cost of its layers
 * alone, and stops early where it cannot win. */
int bk_choose_shape_under(BkCtx *c, BkLayer *ly, BkCoreSet cores, uint64_t bound, AtlErr *e);
/* The price of ly's plan as a segment on cores, as the search prices it
 * (with bands: plus its weight copies' and re-layouts' DRAM time) into
 * *cycles; 0, or -1. */
int bk_price_layer(BkCtx *c, BkLayer *ly, BkCoreSet cores, uint64_t *cycles, AtlErr *e);
/* The DRAM cycles of the first weight copies of the segment's layer that
 * the layer before (c->pf_layer, leaving c->pf_room) may prefetch, which
 * the search prices the plan without (search.c). */
uint64_t bk_prefetchable(const BkCtx *c, const BkSegment *sg);
/* One unit of the schedule: layers [first, first+count) of the sequence,
 * run as ly (a single layer's own lowering, or their group) on `cores`. */
typedef struct BkUnit { BkLayer *ly; int first, count; BkCoreSet cores; } BkUnit;

/* Covers layers[0..n) (lowered, shapes chosen, execution order) with
 * units, each a layer alone or a group where the cost model finds the
 * group cheaper on `cores` (only with c->grouping). Groups are built in
 * chains[0..n) (zeroed first; the caller frees each with bk_layer_free);
 * units[0..n) gets *nunits entries. */
int bk_form_groups(BkCtx *c, BkLayer *layers, int n, BkCoreSet cores, BkLayer *chains, BkUnit *units, int *nunits,
                   AtlErr *e);

/* look.c. A layer's price as the schedule runs it: the cost model's
 * cycles (unbounded, no extra DRAM time), the DRAM bytes of its DMAs and
 * the re-layout bytes its loads make its banded inputs' producers store
 * (bk_band_relayout). */
typedef struct BkLookPrice { uint64_t cycles, bytes, relayout; } BkLookPrice;
/* The price of a DRAM byte in the judge, in multiples of its DRAM time
 * (docs/backend.md, "The band way over the chain"). */
#define BK_LOOK_BYTE_PRICE 0.25
/* Applies option `opt` of ly (BkLayer.look: a shape and its way). */
int bk_look_apply(BkCtx *c, BkLayer *ly, int opt, AtlErr *e);
/* (the layer before is pf_layer, leaving pf_room for ly's prefetch:
 * the cycles are without the copies it may take over, as the search
 * prices them) */
int bk_look_price(BkCtx *c, BkLayer *ly, BkCoreSet cores, int pf_layer, uint64_t pf_room, BkLookPrice *p, AtlErr *e);
/* The judge of producer prod (priced p) and its consumer (q): cycles plus
 * BK_LOOK_BYTE_PRICE times the DRAM time of their bytes, plus the
 * re-layout the consumer makes the producer store, at its DRAM time and
 * byte price. */
uint64_t bk_look_judge(const BkCtx *c, const BkLayer *prod, const BkLookPrice *p, const BkLookPrice *q);
#endif
