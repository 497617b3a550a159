/* search.c - the tile-shape search.
 *
 * Reads: a lowered layer with candidate shapes (BkLayer.shapes, offered by
 *   its lowering in the order to price them) and a core set.
 * Does: applies each candidate (the lowering's apply: tiles, slot layout,
 *   weight keys), distributes its tiles over the core set as the schedule
 *   will (bk_sched_distribute) and prices that segment with the cost model,
 *   bounded by the best so far (with bands, once for each way of giving
 *   the tiles to the clusters: the spread, row bands, channel bands; a
 *   way that puts every tile where the spread did is not priced again);
 *   stops once min_priced shapes were priced
 *   and the tiles priced exceed the shapes' tile_budget (pricing is linear
 *   in tiles). Applies the cheapest.
 *   With row bands, each shape is priced with its tiles spread over the
 *   core set and, unless that puts every tile on the same core as the
 *   spread does (the same segment, so the same price: about a third of
 *   ResNet-50's), by output rows on the clusters. With bands each plan's
 *   price also carries the DRAM time of the bytes it makes move outside
 *   its own pricing or moves twice: the cells of its inputs it reads from
 *   DRAM although a cluster keeps them (their writer must store them
 *   there too: a re-layout, bk_band_relayout) and the weight copies beyond
 *   one on the chip (bk_band_weight_rereads); otherwise a layer's choice
 *   ignores what it makes its producer write (docs/backend.md, "Re-layouts
 *   priced"); both at BkCtx.band_wprice / band_rprice times their DRAM
 *   time (1 but in the plans compile.c builds to price a byte higher).
 *   A plan that stages its weights in SRAM is priced without the first
 *   copies the layer before may prefetch (prefetchable), as the
 *   schedule runs it, and an int8 layer group after another unit with
 *   its resident weights multicast from SRAM, where the segment before
 *   fetched them (bk_prefetch_mc_assume); the final pricing of the
 *   schedule decides the prefetch itself, so the estimate stays the
 *   simulated cycles.
 *   With BkCtx.band_look (backend/compile.c, "The band way over the
 *   chain" in docs/backend.md) it also keeps, in BkLayer.look, the pick
 *   and the cheapest shape of each other way priced within
 *   BkCtx.band_look_margin percent of it (without the weight copies'
 *   time), each way priced under that bound of its own.
 * Guarantees: the layer is left in the plan of the cheapest candidate
 *   (ties: the earliest), the same choice an unbounded search makes; its
 *   candidates are freed.
 * Why here: the shape is a scheduling question (it depends on the cores
 *   the layer runs on and on what the cost model says of the schedule),
 *   so lowerings only say which shapes fit. */
#include <stdlib.h>
#include <string.h>
#include "compiler/group/group.h"
#include "compiler/lower/lower.h"

static void drop_shapes(BkLayer *ly)
{
    free(ly->shapes.v);
    free(ly->shapes.tiles);
    memset(&ly->shapes, 0, sizeof ly->shapes);
}

/* Bands: whether ly's tiles may go to the clusters by output rows or by
 * output channels (way BK_BANDS_ROWS / CHANNELS) on `cores` (then each
 * is priced beside the spread). */
static int band_choice_any(const BkLayer *ly, BkCoreSet cores)
{
    return ly->band_cores && cores.first == 0 && cores.count == ly->band_cores && !ly->chain && ly->band_chans;
}

static int band_choice(const BkLayer *ly, BkCoreSet cores, int way)
{
    /* a K split across clusters: phase 1's tiles go to the clusters by K
     * (bk_band_distribute), phase 2's by output channels, so that its
     * output lies as the convolution's channel bands would leave it */
    if (ly->lw.kb_phase == 1) return way == BK_BANDS_SPREAD;
    if (ly->lw.kb_phase == 2) return way == BK_BANDS_CHANNELS && band_choice_any(ly, cores);
    if (way == BK_BANDS_SPREAD) return 1;
    if (!ly->band_cores || cores.first != 0 || cores.count != ly->band_cores || ly->chain) return 0;
    return way == BK_BANDS_ROWS ? ly->lw.kind == BK_K_CONV || ly->lw.kind == BK_K_POOL
                                : ly->band_chans && ly->lw.kind == BK_K_CONV;
}

/* The cycles the chip's DRAM takes to carry `bytes`. */
static uint64_t dram_cycles(const BkCtx *c, uint64_t bytes)
{
    double bpc = c->chip->dram_gbps * 1000.0 / c->chip->freq_mhz;
    return bytes && bpc > 0 ? (uint64_t)((double)bytes / bpc + 0.5) : 0;
}

/* bytes at `price` times their DRAM time (0: a context that sets none) */
static uint64_t priced(uint64_t bytes, uint64_t price)
{
    return bytes * (price ? price : 1);
}

/* The DRAM cycles of the weight copies the layer before may take over
 * (docs/backend.md, "Weight prefetch across the barrier", "Priced in the
 * tile search"): the first key of every core that stages one
 * (bk_prefetch_tile) of a conv whose weights are staged in SRAM, at most
 * the cycles the layer before's busiest DMA engine idles in its plan
 * (BkCtx.pf_room; the caller also keeps it under PF_SHARE of the plan's
 * own cycles). The search prices a plan without them, as the schedule
 * mostly runs it: otherwise every stager's copy opens the layer with the
 * matrix units idle in the price but not in the program, and a plan that
 * stages loses to one that multicasts whole weights to every core and
 * cannot prefetch (ResNet-50's layer1 1x1 convolutions). 0 unless the
 * layer before was priced here just before, with --prefetch never, for
 * weights not staged, for a layer whose input fits an SRAM staging copy
 * (a shape stages its input or its weights, not both: the rival that
 * stages its input moves fewer DRAM bytes, resnet20_cifar's stages 6 to
 * 8 on a1), or where every output-channel chunk stays on one cluster
 * (channel bands, whose input is gathered through DRAM). */
enum { PF_SHARE = 4 };
uint64_t bk_prefetchable(const BkCtx *c, const BkSegment *sg)
{
    const BkLayer *ly = sg->layer;
    const BkLow *l = &ly->lw;
    if (c->prefetch_never || !ly->wsram || !ly->stage || ly->chain || c->pf_layer < 0 ||
        ly->layer_id != c->pf_layer + 1 || l->kind != BK_K_CONV || l->groups != 1)
        return 0;
    if (bk_conv_input_may_stage(c, ly) || l->ngc < 1) return 0;
    int cpc = c->chip->cores_per_cluster, spans = 0;
    int *home = malloc((size_t)l->ngc * sizeof *home);   /* each chunk's first cluster */
    if (!home) return 0;
    for (int g = 0; g < l->ngc; g++) home[g] = -1;
    for (int t = 0; t < ly->ntiles && !spans; t++) {
        int g = bk_tile_pos(l, t).gci, k = sg->tile_core[t] / cpc;
        if (g < 0 || g >= l->ngc) continue;
        if (home[g] < 0) home[g] = k;
        spans = home[g] != k;
    }
    free(home);
    if (!spans) return 0;
    uint64_t bytes = 0;
    for (int core = sg->cores.first; core < sg->cores.first + sg->cores.count; core++) {
        int t = bk_prefetch_tile(c, sg, core);
        if (t < 0) continue;
        BkTilePos p = bk_tile_pos(l, t);
        int kc = l->nkc > 1 ? l->C - p.kci * l->kchunk : l->C, oc = l->OC - p.gci * l->gchunk;
        if (l->nkc > 1 && kc > l->kchunk) kc = l->kchunk;
        if (oc > l->gchunk) oc = l->gchunk;
        bytes += (uint64_t)l->kh * l->kw * (uint64_t)kc * (uint64_t)oc * (uint64_t)l->es;
    }
    uint64_t cyc = dram_cycles(c, bytes);
    return cyc < c->pf_room ? cyc : c->pf_room;
}

/* 1 when the segment's tiles sit on the cores they had in `prev` (a way
 * that changes nothing needs no pricing of its own). */
static int same_cores(const BkSegment *sg, const int *prev)
{
    return prev && !memcmp(sg->tile_core, prev, (size_t)sg->layer->ntiles * sizeof *prev);
}

/* The band way over the chain (BkCtx.band_look): each way's cheapest
 * BK_LOOK_PER_WAY shapes, cheapest first (index -1: none). */
typedef struct Kept { int idx[BK_BANDS_WAYS][BK_LOOK_PER_WAY]; uint64_t price[BK_BANDS_WAYS][BK_LOOK_PER_WAY], room[BK_BANDS_WAYS][BK_LOOK_PER_WAY]; } Kept;

static void kept_add(Kept *k, int w, int i, uint64_t price, uint64_t room)
{
    int at = BK_LOOK_PER_WAY;
    while (at > 0 && (k->idx[w][at - 1] < 0 || price < k->price[w][at - 1])) at--;
    if (at == BK_LOOK_PER_WAY) return;
    for (int j = BK_LOOK_PER_WAY - 1; j > at; j--) {
        k->idx[w][j] = k->idx[w][j - 1];
        k->price[w][j] = k->price[w][j - 1];
        k->room[w][j] = k->room[w][j - 1];
    }
    k->idx[w][at] = i;
    k->price[w][at] = price;
    k->room[w][at] = room;
}

/* The bound of way w's next candidate: the price its kept list must beat
 * (UINT64_MAX while not full). */
static uint64_t kept_bound(const Kept *k, int w)
{
    return k->idx[w][BK_LOOK_PER_WAY - 1] < 0 ? UINT64_MAX : k->price[w][BK_LOOK_PER_WAY - 1];
}

/* Copies of the kept shapes into ly->look, the pick (shape `pick`, way
 * pick_way) first, then every other within `margin` percent of its price. */
static int keep_looks(BkLayer *ly, const Kept *k, int pick, int pick_way, uint64_t best, uint64_t room, int margin, AtlErr *e)
{
    const BkShapes *q = &ly->shapes;
    for (int i = 0; i < ly->nlook; i++) free(ly->look[i].shape);
    ly->nlook = ly->look_cur = 0;
    ly->look_apply = q->apply;
    for (int w = -1; w < BK_BANDS_WAYS; w++)
        for (int j = 0; j < (w < 0 ? 1 : BK_LOOK_PER_WAY) && ly->nlook < BK_LOOK_OPTS; j++) {
            int i = w < 0 ? pick : k->idx[w][j], way = w < 0 ? pick_way : w;
            if (i < 0 || (w >= 0 && ((i == pick && w == pick_way) || k->price[w][j] > best + best / 100 * (uint64_t)margin))) continue;
            BkLookOpt *o = &ly->look[ly->nlook];
            *o = (BkLookOpt){way, w < 0 || j == 0 || (j == 1 && k->idx[w][0] == pick && w == pick_way) ? 0 : j, NULL,
                             w < 0 ? best : k->price[w][j], w < 0 ? room : k->room[w][j]};
            if (q->n) {
                if (!(o->shape = malloc(q->size))) return atl_fail(e, "out of memory in the tile search");
                memcpy(o->shape, (const char *)q->v + (size_t)i * q->size, q->size);
            }
            ly->nlook++;
        }
    return 0;
}

int bk_choose_shape(BkCtx *c, BkLayer *ly, BkCoreSet cores, AtlErr *e)
{
    return bk_choose_shape_under(c, ly, cores, UINT64_MAX, e) < 0 ? -1 : 0;
}

int bk_choose_shape_under(BkCtx *c, BkLayer *ly, BkCoreSet cores, uint64_t bound, AtlErr *e)
{
    BkShapes *q = &ly->shapes;
    int ways = 0;
    for (int b = BK_BANDS_ROWS; b < BK_BANDS_WAYS; b++) ways += band_choice(ly, cores, b);
    if (q->n == 0 && !ways) return 0;
    int pick = 0, pick_bands = 0, rc = -1, found = bound == UINT64_MAX;
    uint64_t pick_room = 0, best = bound;
    /* the choice over the chain: each way's cheapest, under its own bound */
    int look = c->band_look && ways;
    Kept kept;
    for (int b = 0; b < BK_BANDS_WAYS; b++)
        for (int j = 0; j < BK_LOOK_PER_WAY; j++) kept.idx[b][j] = -1;
    int *spread = NULL;
    BkSegment sg;
    memset(&sg, 0, sizeof sg);
    if (q->n > 1 || ways) {
        sg.layer = ly;
        sg.cores = cores;
        int64_t spent = 0;
        for (int i = 0; i < (q->n ? q->n : 1); i++) {
            spent += q->n ? q->tiles[i] : 0;
            if (q->tile_budget && i >= q->min_priced && spent > q->tile_budget) break;
            if (q->n && q->apply(c, ly, (char *)q->v + (size_t)i * q->size, e)) goto done;
            for (int b = 0; b < BK_BANDS_WAYS; b++) {
                /* channel bands: every cluster a range of output-channel chunks */
                if (!band_choice(ly, cores, b) || (b == BK_BANDS_CHANNELS && ly->lw.ngc < ly->band_clusters)) continue;
                ly->bands = b;
                if (bk_sched_distribute(&sg, e)) goto done;
                if (b == BK_BANDS_SPREAD && ways) {
                    free(spread);
                    if (!(spread = malloc((size_t)(ly->ntiles ? ly->ntiles : 1) * sizeof *spread))) {
                        atl_fail(e, "out of memory in the tile search");
                        goto done;
                    }
                    memcpy(spread, sg.tile_core, (size_t)ly->ntiles * sizeof *spread);
                } else if (same_cores(&sg, spread)) {
                    /* the spread gives each cluster a range of channel chunks: say so */
                    if (b == BK_BANDS_CHANNELS && pick == i && pick_bands == BK_BANDS_SPREAD) pick_bands = b;
                    continue;
                }
                /* a plan that cannot run on these cores (weights staged in SRAM) */
                if (ly->cores_ok && !ly->cores_ok(c, ly, sg.tile_core)) continue;
                /* bands: plus the DRAM time of the bytes this plan moves
                 * again (weights: known from its cores, so the bound
                 * shrinks by them) or makes others move (re-layouts) */
                int extra = c->bands && !c->band_final;
                uint64_t wcyc = extra ? dram_cycles(c, priced(bk_band_weight_rereads(&sg), c->band_wprice)) : 0;
                /* the band way over the chain keeps each way's cheapest
                 * without the weight copies' time (the judge prices their
                 * bytes, backend/compile.c), up to the margin above the
                 * pick's price: `keep` is that bound */
                uint64_t keep = 0;
                if (look && best != UINT64_MAX) {
                    keep = best + best / 100 * (uint64_t)c->band_look_margin;
                    if (kept_bound(&kept, b) < keep) keep = kept_bound(&kept, b);
                } else if (look) keep = UINT64_MAX;
                uint64_t need = best == UINT64_MAX ? best : best > wcyc ? best - wcyc : 0;   /* to beat the pick */
                if (keep > need) need = keep;
                if (!need) continue;
                if (extra) bk_band_relayout(c, &sg, 1);
                uint64_t pf = extra ? bk_prefetchable(c, &sg) : 0;
                /* an int8 group after another unit: its resident weights
                 * as the schedule mostly runs them, fetched into SRAM by
                 * the segment before (bk_prefetch_mc_assume; not float
                 * groups: there group formation, which prices the plan
                 * picked so without the prefetch, formed other groups,
                 * MobileNetV2-1.0 with --sram-activations never 0.9%
                 * slower) */
                sg.pf_in = 0;   /* sg serves every candidate: no assumption left from the last */
                if (ly->chain && ly->lw.dt == ISA_I8 && ly->mcast && ly->layer_id > 0 &&
                    bk_prefetch_mc_assume(c, &sg, e) < 0)
                    goto done;
                int over = bk_cost_segment(c, &sg, need == UINT64_MAX ? need : need + pf, e);
                if (!over && pf > sg.est_cycles / PF_SHARE) pf = sg.est_cycles / PF_SHARE;
                if (over < 0) goto done;
                uint64_t room = !over && sg.est_cycles > sg.est_dma ? sg.est_cycles - sg.est_dma : 0;
                uint64_t own = sg.est_cycles;   /* without the weight copies' time */
                if (!over && extra) {
                    own += dram_cycles(c, priced(bk_band_relayout(c, &sg, 0), c->band_rprice));
                    own = own > pf ? own - pf : 0;
                    sg.est_cycles = own + wcyc;
                }
                if (!over && look && own < keep) kept_add(&kept, b, i, own, room);
                if (!over && sg.est_cycles < best) { best = sg.est_cycles; pick = i; pick_bands = b; found = 1; pick_room = room; }
            }
        }
    } else found = 1;   /* one shape, no ways: the caller prices it */
    if (!found) { rc = 1; goto done; }   /* nothing under the bound */
    if (look && keep_looks(ly, &kept, pick, pick_bands, best, pick_room, c->band_look_margin, e)) goto done;
    ly->bands = pick_bands;
    rc = q->n ? q->apply(c, ly, (char *)q->v + (size_t)pick * q->size, e) : 0;
    if (c->bands && !c->band_final && !ly->chain) {
        c->pf_layer = q->n > 1 || ways ? ly->layer_id : -1;   /* priced here */
        c->pf_room = pick_room;
    }
done:
    free(spread);
    bk_segment_free(&sg);
    drop_shapes(ly);
    return rc;
}

int bk_price_layer(BkCtx *c, BkLayer *ly, BkCoreSet cores, uint64_t *cycles, AtlErr *e)
{
    BkSegment sg;
    memset(&sg, 0, sizeof sg);
    sg.layer = ly;
    sg.cores = cores;
    int rc = bk_sched_distribute(&sg, e);
    if (!rc) {
        int extra = c->bands && !c->band_final;
        uint64_t wcyc = extra ? dram_cycles(c, priced(bk_band_weight_rereads(&sg), c->band_wprice)) : 0;
        if (extra) bk_band_relayout(c, &sg, 1);
        rc = bk_cost_segment(c, &sg, UINT64_MAX, e) < 0 ? -1 : 0;
        if (!rc) *cycles = sg.est_cycles + wcyc + (extra ? dram_cycles(c, priced(bk_band_relayout(c, &sg, 0), c->band_rprice)) : 0);
    }
    bk_segment_free(&sg);
    return rc;
}
