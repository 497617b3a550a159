/* group.h - the choices the backend makes by asking the cost model.
 *   search.c  the tile-shape search: of the shapes a lowering left open
 *             (BkLayer.shapes), the cheapest on the layer's core set.
 *   form.c    layer groups: which consecutive layers run as one group
 *             whose intermediates stay in LMEM (an interval dynamic
 *             programme over the layer sequence). */
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
#endif
