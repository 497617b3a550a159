/* prefetch.c - the cost model decides the weight prefetch across each
 * segment barrier (schedule/prefetch.c; docs/backend.md, "Weight prefetch
 * across the barrier").
 *
 * Reads: a schedule whose segments are all priced.
 * Does: boundary by boundary, in order: when segment i may stage segment
 *   i+1's first weight keys, prices i+1 without its first copies, then i
 *   with them at each position (BK_PF_*, bounded by the best so far), and
 *   keeps the position whose two segments sum lowest, or none when none
 *   beats the pair without prefetch. Segment i+1 is then priced as it will
 *   run (its own prefetch of i+2 is decided next, with i+1 as the first of
 *   the pair). Each boundary costs at most 2 + BK_PF_POSITIONS - 1
 *   segment pricings; boundaries whose next layer stages nothing cost
 *   none.
 * Why: the copies otherwise open every staged layer with every stager
 *   sharing DRAM at once while no matrix unit works, and close the layer
 *   before with DRAM nearly idle. */
#include <stdint.h>
#include "compiler/cost/cost.h"

typedef struct Priced { uint64_t cyc, comp, dma, rd, wr; int whole; } Priced;

static Priced keep(const BkSegment *sg)
{
    return (Priced){sg->est_cycles, sg->est_compute, sg->est_dma, sg->est_rd, sg->est_wr, sg->layer->gather_whole};
}

static void put_back(BkSegment *sg, Priced p)
{
    sg->est_cycles = p.cyc;
    sg->est_compute = p.comp;
    sg->est_dma = p.dma;
    sg->est_rd = p.rd;
    sg->est_wr = p.wr;
    sg->layer->gather_whole = p.whole;
}

int bk_cost_prefetch(BkCtx *c, BkSchedule *s, AtlErr *e)
{
    static const int order[] = {BK_PF_LOAD1, BK_PF_LOAD2, BK_PF_LOAD4, BK_PF_BARRIER, BK_PF_SPREAD};
    bk_prefetch_compact(c, s);
    for (int i = 0; i < s->n; i++) s->seg[i].est_alone = s->seg[i].est_cycles;
    for (int i = 0; i + 1 < s->n; i++) {
        BkSegment *a = &s->seg[i], *b = &s->seg[i + 1];
        Priced pa = keep(a), pb = keep(b);
        /* before the barrier: the one position every kind allows */
        int rc = bk_prefetch_set(c, s, i, BK_PF_BARRIER, e);
        if (rc < 0) return -1;
        if (rc) continue;
        if (c->prefetch_spread && b->pf_in == BK_PF_IN_MC) {   /* forced (tests) */
            if (bk_prefetch_set(c, s, i, BK_PF_SPREAD, e) < 0 || bk_cost_segment(c, b, UINT64_MAX, e) < 0 ||
                bk_cost_segment(c, a, UINT64_MAX, e) < 0)
                return -1;
            continue;
        }
        if (bk_cost_segment(c, b, pb.cyc, e) < 0) return -1;
        uint64_t eb = b->est_cycles, best = pa.cyc + pb.cyc;
        int pick = BK_PF_NONE;
        for (int k = 0; k < (int)(sizeof order / sizeof order[0]) && eb < pb.cyc; k++) {
            int no = bk_prefetch_set(c, s, i, order[k], e);
            if (no < 0) return -1;
            if (no) continue;
            int over = bk_cost_segment(c, a, best - eb, e);
            if (over < 0) return -1;
            if (!over && a->est_cycles + eb < best) {
                best = a->est_cycles + eb;
                pick = order[k];
            }
        }
        if (pick == BK_PF_NONE) {
            if (bk_prefetch_set(c, s, i, BK_PF_NONE, e) < 0) return -1;
            put_back(a, pa);
            put_back(b, pb);
            continue;
        }
        /* b keeps its pricing with pf_in; a is priced again at the pick
         * (the last one priced may be another position) */
        if (bk_prefetch_set(c, s, i, pick, e) < 0 || bk_cost_segment(c, a, UINT64_MAX, e) < 0) return -1;
    }
    return 0;
}
