/* tiles.c - the LMEM tile planner's shared parts.
 *
 * LMEM of every core is split into two equal slots (double buffering): the
 * tile being computed uses one while the next tile loads into the other
 * (a group may first reserve a resident region at the bottom of LMEM for
 * multicast weights or K-split accumulators, bk_resident.c; its slots then
 * share what is left: BkGroup.slot_off, slot_size).
 * Reads: the chip (lmem bytes, alignment, bank width and count).
 * Guarantees:
 *   - a slot is lmem/2 rounded down to a multiple of the bank row
 *     (banks x bank_width), so slot 1 starts on bank 0 like slot 0 and both
 *     slots see the same bank pattern (the cost of a tile does not depend
 *     on its slot);
 *   - every buffer in a slot starts on max(lmem alignment, bank_width), so
 *     operands start at the beginning of a bank row;
 *   - tiles go to cores in contiguous, balanced blocks (tile t of T on core
 *     floor(t*cores/T)); consecutive tiles of one core share weights when
 *     the lowering orders tiles weight-chunk-major, which lets the emitter
 *     skip re-loading them (weight keys);
 *   - bk_assign_tile_runs keeps runs of `run` consecutive tiles on one core
 *     (tiles that accumulate into one LMEM-resident result, e.g. the
 *     K chunks of one output tile).
 * Each lowering chooses its tile shape by trying candidates that fit the
 *   slot and keeping the one bk_cost_group prices cheapest. */
#include <stdlib.h>
#include "compiler/target/target.h"

uint64_t bk_slot_alloc(const BkCtx *c, uint64_t *used, uint64_t bytes)
{
    uint64_t a = c->align;
    uint64_t off = (*used + a - 1) / a * a;
    *used = off + (bytes + a - 1) / a * a;
    return off;
}

int bk_assign_tiles(BkCtx *c, BkGroup *g, int ntiles, AtlErr *e)
{
    return bk_assign_tile_runs(c, g, ntiles, 1, e);
}

int bk_assign_tile_runs(BkCtx *c, BkGroup *g, int ntiles, int run, AtlErr *e)
{
    if (run < 1 || ntiles % run) return atl_fail(e, "internal: %d tiles are not whole runs of %d", ntiles, run);
    free(g->tile_core);
    free(g->tile_wkey);
    g->tile_core = malloc((size_t)(ntiles ? ntiles : 1) * sizeof(int));
    g->tile_wkey = malloc((size_t)(ntiles ? ntiles : 1) * sizeof(int));
    if (!g->tile_core || !g->tile_wkey) return atl_fail(e, "out of memory assigning tiles");
    g->ntiles = ntiles;
    int used = 0, last = -1;
    for (int t = 0; t < ntiles; t++) {
        int units = ntiles / run;
        g->tile_core[t] = (int)((int64_t)(t / run) * c->ncores / units);
        g->tile_wkey[t] = -1;
        if (g->tile_core[t] != last) { used++; last = g->tile_core[t]; }
    }
    g->cores_used = used;
    return 0;
}

void bk_group_free(BkGroup *g)
{
    free(g->tile_core);
    free(g->tile_wkey);
    g->tile_core = g->tile_wkey = NULL;
    free(g->copies);
    g->copies = NULL;
    free(g->lw.aux);
    g->lw.aux = NULL;
}
