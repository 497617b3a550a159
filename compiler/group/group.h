/* group.h - the choices the backend makes by asking the cost model.
 *   search.c  the tile-shape search: of the shapes a lowering left open
 *             (BkLayer.shapes), the cheapest on the layer's core set.
 * Layer groups (several layers whose intermediates stay in LMEM) and
 * their slicing are formed here too, judged the same way. */
#ifndef ATOLL_COMPILER_GROUP_GROUP_H
#define ATOLL_COMPILER_GROUP_GROUP_H
#include "compiler/cost/cost.h"

/* Prices ly's candidate shapes on `cores` in their order (stopping as
 * BkShapes says) and applies the cheapest (the first of equal cost);
 * frees the candidates. Nothing to do when the lowering left none. */
int bk_choose_shape(BkCtx *c, BkLayer *ly, BkCoreSet cores, AtlErr *e);
#endif
