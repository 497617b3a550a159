/* form.c - layer group formation: which consecutive layers run as one
 * group whose intermediates stay on chip.
 *
 * Reads: the lowered layers in execution order (each with its tile shape
 *   chosen) and the core set they run on.
 * Does: an interval dynamic programme over the layer sequence, as
 *   tpu-mlir's layer grouping does: best[e] is the cheapest way to run
 *   layers 0..e-1, either best[e-1] plus layer e-1 alone, or best[s] plus
 *   layers s..e-1 as one group (a chain of window layers, lower/chain.c,
 *   with its slice height chosen by the tile-shape search, or an
 *   attention group of 3 to BK_ATTN_MAX layers, lower/attn.c, with its
 *   query-row chunk chosen so), for every s
 *   with at most BK_CHAIN_MAX members, on all the cores or on the first
 *   cluster alone (whose weights then cross DRAM once, not once per
 *   cluster; the other cores wait at its barrier). Every price is the cost model's
 *   estimate of the segment on the core set (cost/cost.c), so a group is
 *   taken only where the cost model finds it faster than its layers
 *   alone; a group is priced with the bound best[e] - best[s], its
 *   slice-shape search too (bk_choose_shape_under: a candidate that cannot
 *   win stops early, and none of its shapes is priced in full). With --group-weights stream
 *   (BkCtx.weights_stream, for studies and tests) every layer not in a
 *   chain that streams weights costs FORCED cycles more, so the programme
 *   puts as many layers into streaming chains as it can, in the cheapest
 *   such cover.
 * Guarantees: the units cover every layer once, in order; a unit is a
 *   single layer (its own lowering) or a chain layer the caller owns
 *   through `chains`. Layers that cannot be chain members (not window
 *   layers or Int8Add, bk_chain_can_join) end the search backwards.
 * Why a programme over intervals: groups are contiguous in execution
 *   order, and the best split of a prefix does not depend on what follows
 *   it, so O(n x BK_CHAIN_MAX) priced candidates find the cheapest cover. */
#include <stdlib.h>
#include <string.h>
#include "compiler/group/group.h"
#include "compiler/lower/lower.h"

/* --group-weights stream: the extra price of a layer outside a chain that
 * streams weights (more than any network's cycles, so such chains win). */
static const uint64_t FORCED = (uint64_t)1 << 44;

static int price(BkCtx *c, BkLayer *ly, BkCoreSet cores, uint64_t bound, uint64_t *est, AtlErr *e)
{
    BkSegment sg;
    memset(&sg, 0, sizeof sg);
    sg.layer = ly;
    sg.cores = cores;
    int rc = bk_sched_distribute(&sg, e) ? -1 : bk_cost_segment(c, &sg, bound, e);
    *est = sg.est_cycles;
    bk_segment_free(&sg);
    return rc;
}

/* Lowers layers[s..end) as a chain on `cores` with its slice height
 * chosen there and prices it with `bound`: 0 and *cand, *est when it is a
 * chain under the bound; 1 when they are no chain, 2 when it is one but
 * over the bound (cand freed both times); -1 on error. */
typedef int (*GroupLower)(BkCtx *c, const BkLayer *const *members, int nm, BkLayer *ly, AtlErr *e);

static int try_chain(BkCtx *c, BkLayer *layers, int s, int end, BkCoreSet cores, uint64_t bound, BkLayer *cand,
                     uint64_t *est, GroupLower lower, AtlErr *e)
{
    const BkLayer *members[BK_CHAIN_MAX];
    for (int k = s; k < end; k++) members[k - s] = &layers[k];
    memset(cand, 0, sizeof *cand);
    cand->node = layers[end - 1].node;
    cand->layer_id = layers[s].layer_id;   /* > 0: a unit runs before it (group/search.c) */
    cand->tensor = -1;
    cand->slot_size = c->slot;
    /* bands: its slices' output rows stay in the SRAM of the cluster that wrote them */
    cand->band_cores = layers[end - 1].band_cores;
    cand->band_clusters = layers[end - 1].band_clusters;
    cand->band_chans = layers[end - 1].band_chans;
    cand->band_rows = layers[end - 1].band_rows;
    int r = lower(c, members, end - s, cand, e);
    int chosen = r ? 0 : bk_choose_shape_under(c, cand, cores, bound, e);
    int over = r < 0 || chosen < 0 ? -1 : r ? 1 : chosen ? 2 : 2 * price(c, cand, cores, bound, est, e);
    if (over) bk_layer_free(cand);
    return over < 0 ? -1 : over;
}

/* The search's table: best[e] the cheapest price of layers [0, e), from[e]
 * where its last unit starts, where[e] that unit's cores, chains[e - 1]
 * the group it is (when it holds more than one layer). */
typedef struct FormTable { uint64_t *best; int *from; BkCoreSet *where; BkLayer *chains; } FormTable;

/* cand, layers [s, end) on set priced est, becomes the last unit of
 * best[end] when that is cheaper; otherwise it is freed. */
static void offer(FormTable *t, int s, int end, BkCoreSet set, BkLayer *cand, uint64_t est)
{
    if (t->best[s] + est >= t->best[end]) { bk_layer_free(cand); return; }
    bk_layer_free(&t->chains[end - 1]);
    t->chains[end - 1] = *cand;
    t->best[end] = t->best[s] + est;
    t->from[end] = s;
    t->where[end] = set;
}

int bk_form_groups(BkCtx *c, BkLayer *layers, int n, BkCoreSet cores, BkLayer *chains, BkUnit *units, int *nunits,
                   AtlErr *e)
{
    uint64_t *best = calloc((size_t)n + 1, sizeof *best);
    int *from = malloc(((size_t)n + 1) * sizeof *from);   /* start of the last unit of best[e] */
    BkCoreSet *where = malloc(((size_t)n + 1) * sizeof *where);   /* cores of the last unit of best[e] */
    int rc = -1;
    if (!best || !from || !where) { atl_fail(e, "out of memory forming groups"); goto done; }
    /* a group may also run on the first cluster alone: its weights then
     * cross DRAM once instead of once per cluster */
    BkCoreSet sets[2] = {cores, {cores.first, c->chip->cores_per_cluster}};
    int nsets = c->chip->clusters > 1 && cores.count > c->chip->cores_per_cluster ? 2 : 1;
    memset(chains, 0, (size_t)n * sizeof *chains);
    FormTable dp = {best, from, where, chains};
    for (int end = 1; end <= n; end++) {
        uint64_t one;
        if (price(c, &layers[end - 1], cores, UINT64_MAX, &one, e) < 0) goto done;
        uint64_t forced = c->weights_stream || c->cslice_only ? FORCED : 0;
        best[end] = best[end - 1] + one + forced;
        from[end] = end - 1;
        where[end] = cores;
        int most = c->group_max > 0 && c->group_max < BK_CHAIN_MAX ? c->group_max : BK_CHAIN_MAX;
        /* an attention group (lower/attn.c): the 3 to BK_ATTN_MAX layers ending here */
        for (int s = end - 3; c->grouping && s >= 0 && end - s <= BK_ATTN_MAX && end - s <= most; s--)
            for (int k = 0; k < nsets; k++) {
                if (best[s] >= best[end]) break;
                BkLayer cand;
                uint64_t est = 0;
                int over = try_chain(c, layers, s, end, sets[k], best[end] - best[s], &cand, &est, bk_lower_attn, e);
                if (over < 0) goto done;
                if (over == 1) break;
                if (over) continue;
                est += forced * (uint64_t)(end - s);
                offer(&dp, s, end, sets[k], &cand, est);
            }
        if (!c->grouping || !bk_chain_can_join(c, &layers[end - 1])) continue;
        for (int s = end - 2; s >= 0 && end - s <= most && bk_chain_can_join(c, &layers[s]); s--)
            for (int k = 0; k < nsets; k++) {
                if (best[s] >= best[end]) break;
                BkLayer cand;
                uint64_t est = 0;
                int over = try_chain(c, layers, s, end, sets[k], best[end] - best[s], &cand, &est, bk_lower_chain, e);
                if (over < 0) goto done;
                if (over == 1) break;   /* no chain: not on the other set either */
                if (over) continue;
                if (!(c->cslice_only ? bk_chain_cslices(&cand) : bk_chain_streams(&cand))) est += forced * (uint64_t)(end - s);
                offer(&dp, s, end, sets[k], &cand, est);
            }
    }
    /* the units, back from the end */
    int k = 0;
    for (int end = n; end > 0; end = from[end]) k++;
    *nunits = k;
    for (int end = n; end > 0; end = from[end]) {
        BkUnit *u = &units[--k];
        u->first = from[end];
        u->count = end - from[end];
        u->ly = u->count > 1 ? &chains[end - 1] : &layers[end - 1];
        u->cores = where[end];
    }
    /* chains priced but not taken */
    for (int end = n; end > 0; end--) {
        int used = 0;
        for (int i = 0; i < *nunits; i++) if (units[i].ly == &chains[end - 1]) used = 1;
        if (!used) bk_layer_free(&chains[end - 1]);
    }
    rc = 0;
done:
    free(best);
    free(from);
    free(where);
    return rc;
}
