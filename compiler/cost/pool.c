/* pool.c - the DMA pricers of one compile, shared by its builds (cost.h).
 *
 * A compile with placement auto at batch > 1 builds the same layers many
 * times for the same chip: the staged search prices the whole graph split
 * and on the chip, then each stage is built, rebuilt for every shortcut
 * rewrite and re-read copy tried, and a chip stage again with bands
 * (backend/compile.c). Most of those builds price segments an earlier one
 * priced already, instruction for instruction. A pool keeps one pricer
 * per chip (compared parameter for parameter: a split stage's chip has
 * its share of the DRAM bandwidth, so it is another chip) for the whole
 * compile, each with the flow memo and the memo of whole segments
 * (bk_flow_keep_segments), so a later build finds those prices.
 * Owns: its pricers and a copy of each one's chip (the pricer points at
 * the copy, so it outlives the build that asked first). */
#include <stdlib.h>
#include <string.h>
#include "compiler/cost/cost.h"

/* Chips a compile prices on: the whole chip and a split stage's share for
 * each cluster count (placement auto uses two, pipeline a few more). */
enum { POOL_MAX = 16 };

struct BkFlowPool {
    AtlChip *chip[POOL_MAX];
    BkFlowPlanner *flow[POOL_MAX];
    int n;
};

BkFlowPool *bk_flow_pool_new(void)
{
    return calloc(1, sizeof(BkFlowPool));
}

void bk_flow_pool_free(BkFlowPool *pool)
{
    if (!pool) return;
    for (int i = 0; i < pool->n; i++) {
        bk_flow_free(pool->flow[i]);
        free(pool->chip[i]);
    }
    free(pool);
}

BkFlowPlanner *bk_flow_pool_get(BkFlowPool *pool, const AtlChip *chip)
{
    for (int i = 0; i < pool->n; i++)
        if (!memcmp(pool->chip[i], chip, sizeof *chip)) return pool->flow[i];
    if (pool->n == POOL_MAX) return NULL;
    AtlChip *copy = malloc(sizeof *copy);
    if (!copy) return NULL;
    memcpy(copy, chip, sizeof *copy);
    AtlErr e;
    BkFlowPlanner *p = bk_flow_new(copy, &e);
    if (!p) { free(copy); return NULL; }
    bk_flow_keep_segments(p);
    pool->chip[pool->n] = copy;
    pool->flow[pool->n++] = p;
    return p;
}
