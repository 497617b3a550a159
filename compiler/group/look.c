/* look.c - bands: a layer's band way chosen with its consumer's price
 * (docs/backend.md, "The band way over the chain").
 *
 * Reads: a lowered layer whose tile search recorded the cheapest shape of
 *   each way (BkLayer.look, group/search.c with BkCtx.band_look), the
 *   band state of its inputs.
 * Does: re-applies a way's shape (bk_look_apply); prices a layer as the
 *   schedule will run it (bk_look_price): the cost model's cycles
 *   unbounded, the DRAM bytes of its DMAs (counted here from the code the
 *   schedule walk generates, the instructions the emitter writes; written
 *   before the cost model tallied them in BkSegment.est_rd/est_wr, which
 *   this count could now read) and the re-layout bytes its loads
 *   make its producers store; and judges a producer and its consumer
 *   together (bk_look_judge): cycles plus a price per DRAM byte.
 * Why: the tile search chooses each layer's way (spread, row bands,
 *   channel bands) alone, pricing the bytes it moves twice at their DRAM
 *   time; it cannot see that its output layout makes the next layer read
 *   its input through DRAM once per output-channel chunk (ResNet-50's
 *   layer2.x conv2 in channel bands, conv3 after it). The caller
 *   (backend/compile.c, look_resolve) prices the consumer under each of
 *   the producer's near ways and keeps the pair the judge prices lowest. */
#include <stdlib.h>
#include <string.h>
#include "compiler/group/group.h"

int bk_look_apply(BkCtx *c, BkLayer *ly, int opt, AtlErr *e)
{
    if (opt < 0 || opt >= ly->nlook) return atl_fail(e, "internal: band option %d not priced", opt);
    ly->bands = ly->look[opt].way;
    ly->look_cur = opt;
    return ly->look[opt].shape && ly->look_apply ? ly->look_apply(c, ly, ly->look[opt].shape, e) : 0;
}

/* The DRAM bytes of the DMAs of the segment's tables (each end in DRAM
 * counted once, as the emitter's tally does). */
static int seg_bytes(BkCtx *c, const BkSegment *sg, uint64_t *bytes, AtlErr *e)
{
    BkTable tab;
    BkWalk walk;
    memset(&tab, 0, sizeof tab);
    memset(&walk, 0, sizeof walk);
    int rc = 0;
    *bytes = 0;
    for (int core = sg->cores.first; core < sg->cores.first + sg->cores.count && !rc; core++) {
        if ((rc = bk_sched_table(c, sg, core, &tab, e))) break;
        for (int i = 0; i < tab.n && !rc; i++) {
            const BkAction *a = &tab.a[i];
            if (a->kind == BK_ACT_BARRIER || a->kind == BK_ACT_WAIT || a->kind == BK_ACT_COMPUTE) continue;
            const BkCode *k = bk_walk_code(c, sg, &walk, a, core, e);
            if (!k) { rc = -1; break; }
            if (a->kind == BK_ACT_COPY && !k->nst) continue;
            int n, first, last;
            const uint8_t *skip;
            const AtlInsn *ins = bk_action_dma(a, k, &n, &skip, &first, &last);
            for (int j = first; j <= last && j >= 0; j++) {
                if (skip && skip[j]) continue;
                uint64_t b = (uint64_t)isa_dtype_size(ins[j].dtype);
                for (int d = 0; d < 4; d++) b *= ins[j].shape[d];
                int ends = (ins[j].dst_space == ISA_SPACE_DRAM) +
                           (ins[j].op != ISA_OP_DMA_FILL && ins[j].src_space == ISA_SPACE_DRAM);
                *bytes += b * (uint64_t)ends;
            }
        }
    }
    bk_table_free(&tab);
    bk_walk_free(&walk);
    return rc;
}

int bk_look_price(BkCtx *c, BkLayer *ly, BkCoreSet cores, int pf_layer, uint64_t pf_room, BkLookPrice *p, AtlErr *e)
{
    BkSegment sg;
    memset(&sg, 0, sizeof sg);
    memset(p, 0, sizeof *p);
    sg.layer = ly;
    sg.cores = cores;
    int rc = bk_sched_distribute(&sg, e), was_layer = c->pf_layer;
    uint64_t was_room = c->pf_room, pf = 0;
    if (!rc) {
        bk_band_relayout(c, &sg, 1);
        c->pf_layer = pf_layer;
        c->pf_room = pf_room;
        pf = bk_prefetchable(c, &sg);
        c->pf_layer = was_layer;
        c->pf_room = was_room;
        rc = bk_cost_segment(c, &sg, UINT64_MAX, e) < 0 ? -1 : 0;
    }
    if (!rc) {
        if (pf > sg.est_cycles / 4) pf = sg.est_cycles / 4;   /* as the search clamps it (PF_SHARE) */
        p->cycles = sg.est_cycles - pf;
        rc = seg_bytes(c, &sg, &p->bytes, e);
    }
    if (!rc) p->relayout = bk_band_relayout(c, &sg, 0);
    bk_segment_free(&sg);
    return rc;
}

uint64_t bk_look_judge(const BkCtx *c, const BkLayer *prod, const BkLookPrice *p, const BkLookPrice *q)
{
    double bpc = c->chip->dram_gbps * 1000.0 / c->chip->freq_mhz, lam = BK_LOOK_BYTE_PRICE;
    if (bpc <= 0) bpc = 1;
    /* the cells the consumer reads from DRAM that the producer's plan kept
     * in SRAM alone: stored again (a channel-banded producer's plan
     * already stores all of them) */
    double re = prod->bands == BK_BANDS_CHANNELS ? 0 : (double)q->relayout * (1 + lam);
    double j = (double)(p->cycles + q->cycles) + (lam * (double)(p->bytes + q->bytes) + re) / bpc;
    return (uint64_t)(j + 0.5);
}
