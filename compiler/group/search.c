/* search.c - the tile-shape search.
 *
 * Reads: a lowered layer with candidate shapes (BkLayer.shapes, offered by
 *   its lowering in the order to price them) and a core set.
 * Does: applies each candidate (the lowering's apply: tiles, slot layout,
 *   weight keys), distributes its tiles over the core set as the schedule
 *   will (bk_sched_distribute) and prices that segment with the cost model,
 *   bounded by the best so far; stops once min_priced shapes were priced
 *   and the tiles priced exceed the shapes' tile_budget (pricing is linear
 *   in tiles). Applies the cheapest.
 *   With row bands, each shape is priced with its tiles spread over the
 *   core set and, unless that puts every tile on the same core as the
 *   spread does (the same segment, so the same price: about a third of
 *   ResNet-50's), by output rows on the clusters.
 * Guarantees: the layer is left in the plan of the cheapest candidate
 *   (ties: the earliest), the same choice an unbounded search makes; its
 *   candidates are freed.
 * Why here: the shape is a scheduling question (it depends on the cores
 *   the layer runs on and on what the cost model says of the schedule),
 *   so lowerings only say which shapes fit. */
#include <stdlib.h>
#include <string.h>
#include "compiler/group/group.h"

static void drop_shapes(BkLayer *ly)
{
    free(ly->shapes.v);
    free(ly->shapes.tiles);
    memset(&ly->shapes, 0, sizeof ly->shapes);
}

/* Row bands: whether ly's tiles may go to the clusters by output rows on
 * `cores` (then both ways are priced). */
static int band_choice(const BkLayer *ly, BkCoreSet cores)
{
    return ly->band_cores && cores.first == 0 && cores.count == ly->band_cores && !ly->chain &&
           (ly->lw.kind == BK_K_CONV || ly->lw.kind == BK_K_POOL);
}

int bk_choose_shape(BkCtx *c, BkLayer *ly, BkCoreSet cores, AtlErr *e)
{
    BkShapes *q = &ly->shapes;
    int ways = band_choice(ly, cores) ? 2 : 1;
    if (q->n == 0 && ways == 1) return 0;
    int pick = 0, pick_bands = 0, rc = -1;
    BkSegment sg;
    memset(&sg, 0, sizeof sg);
    int *spread = NULL, cap = 0;   /* with two ways: the shape's tiles' cores when spread */
    if (q->n > 1 || ways > 1) {
        sg.layer = ly;
        sg.cores = cores;
        uint64_t best = UINT64_MAX;
        int64_t spent = 0;
        for (int i = 0; i < (q->n ? q->n : 1); i++) {
            spent += q->n ? q->tiles[i] : 0;
            if (q->tile_budget && i >= q->min_priced && spent > q->tile_budget) break;
            if (q->n && q->apply(c, ly, (char *)q->v + (size_t)i * q->size, e)) goto done;
            for (int b = 0; b < ways; b++) {
                ly->bands = b;
                if (bk_sched_distribute(&sg, e)) goto done;
                size_t bytes = (size_t)ly->ntiles * sizeof *sg.tile_core;
                if (ways > 1 && !b && bytes) {
                    if (ly->ntiles > cap) {
                        free(spread);
                        cap = ly->ntiles;
                        if (!(spread = malloc(bytes))) { atl_fail(e, "out of memory in the tile search"); goto done; }
                    }
                    memcpy(spread, sg.tile_core, bytes);
                }
                if (b && (!bytes || !memcmp(spread, sg.tile_core, bytes))) continue;
                int over = bk_cost_segment(c, &sg, best, e);
                if (over < 0) goto done;
                if (!over && sg.est_cycles < best) { best = sg.est_cycles; pick = i; pick_bands = b; }
            }
        }
    }
    ly->bands = pick_bands;
    rc = q->n ? q->apply(c, ly, (char *)q->v + (size_t)pick * q->size, e) : 0;
done:
    free(spread);
    bk_segment_free(&sg);
    drop_shapes(ly);
    return rc;
}
