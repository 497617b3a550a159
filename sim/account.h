/* account.h - per-instruction statistics (busy cycles, MACs, bytes per
 * memory level, per-layer spans), counted as each instruction completes.
 * Inline in the run loop (sim.c, its only user): it runs once per simulated
 * instruction. report.c turns the counts into the end-of-run figures. */
#ifndef ATOLL_SIM_ACCOUNT_H
#define ATOLL_SIM_ACCOUNT_H
#include "sim/sim_int.h"

/* Adds the busy span [start, end) of one engine to the timeline (see
 * AtlSimTimeline in sim.h), first widening the buckets while `end` lies
 * past the last one. */
static void timeline_add(AtlSimTimeline *t, int engine, uint64_t start, uint64_t end)
{
    if (end <= start) return;
    if (!t->bucket_cycles) t->bucket_cycles = 64;
    while (end > t->bucket_cycles * SIM_TIMELINE_BUCKETS) {
        for (int g = 0; g < ISA_NUM_ENGINES; g++) {
            uint64_t *b = t->busy[g];
            for (int i = 0; i < SIM_TIMELINE_BUCKETS / 2; i++) b[i] = b[2 * i] + b[2 * i + 1];
            for (int i = SIM_TIMELINE_BUCKETS / 2; i < SIM_TIMELINE_BUCKETS; i++) b[i] = 0;
        }
        t->bucket_cycles *= 2;
    }
    uint64_t w = t->bucket_cycles;
    for (uint64_t i = start / w; i * w < end; i++) {
        uint64_t lo = i * w > start ? i * w : start, hi = (i + 1) * w < end ? (i + 1) * w : end;
        t->busy[engine][i] += hi - lo;
    }
}

/* Adds one instruction of an engine of kind `engine` to l: its span
 * [start, end), DMA and DRAM bytes, and the time since the engine's
 * previous instruction completed (held). */
SIM_HOT static void layer_add(AtlLayerStats *l, int engine, const SimPre *pre, uint64_t start, uint64_t end, uint64_t dma_bytes,
                             uint64_t dram_bytes, uint64_t held)
{
    if (!l->used || start < l->first) l->first = start;
    if (!l->used || end > l->last) l->last = end;
    l->used = 1;
    l->insns++;
    l->macs += pre->macs;
    l->dma_bytes += dma_bytes;
    l->dram_bytes += dram_bytes;
    l->busy[engine] += end - start;
    l->held_by[engine] += held;
}

SIM_HOT static void stats_account(AtlSim *s, int core, int engine, const SimPre *pre, uint64_t start, uint64_t end)
{
    AtlSimStats *st = &s->stats;
    SimEngine *e = &s->eng[sim_eid(core, engine)];
    uint64_t busy = end - start;
    e->st.insns++;
    e->st.busy += busy;
    timeline_add(&st->timeline, engine, start, end);
    st->insns++;
    if (end > st->cycles) st->cycles = end;
    int fmt = pre->fmt;
    AtlSimBytes *b = &st->bytes;
    uint64_t dma_bytes = 0, dram_bytes = 0;
    if (sim_pre_is_dma(pre)) {
        uint64_t n = pre->bytes, ndst = 1;
        if (pre->dst_space == ISA_SPACE_LMEM && pre->mask) ndst = (uint64_t)__builtin_popcount(pre->mask);
        dma_bytes = n;
        if (fmt != ISA_FMT_DMA_FILL) {
            switch (pre->src_space) {
            case ISA_SPACE_DRAM: b->dram_rd += n; break;
            case ISA_SPACE_SRAM: case ISA_SPACE_PEER: b->sram_rd += n; break;
            default: b->lmem_rd += n;
            }
        }
        switch (pre->dst_space) {
        case ISA_SPACE_DRAM: b->dram_wr += n; break;
        case ISA_SPACE_SRAM: case ISA_SPACE_PEER: b->sram_wr += n; break;
        default: b->lmem_wr += n * ndst;
        }
        if (pre->dst_space == ISA_SPACE_PEER || (fmt != ISA_FMT_DMA_FILL && pre->src_space == ISA_SPACE_PEER)) {
            b->peer += n;
            b->peer_link += n * pre->hops;
        }
        if (pre->dst_space == ISA_SPACE_DRAM || (fmt != ISA_FMT_DMA_FILL && pre->src_space == ISA_SPACE_DRAM)) b->noc += n;
        dram_bytes = (pre->dst_space == ISA_SPACE_DRAM ? n : 0) + (fmt != ISA_FMT_DMA_FILL && pre->src_space == ISA_SPACE_DRAM ? n : 0);
    } else {
        b->lmem_rd += pre->lmem_rd;
        b->lmem_wr += pre->lmem_wr;
        st->macs += pre->macs;
        if (pre->macs && pre->dtype < ISA_NUM_DTYPES) st->macs_by_dtype[pre->dtype] += pre->macs;
        if (engine == ISA_ENGINE_VEC) st->vec_elems += pre->elems;
    }
    if (pre->layer < st->nlayers && pre->op != ISA_OP_END) { /* `end` is no layer's work */
        layer_add(&st->layers[pre->layer], engine, pre, start, end, dma_bytes, dram_bytes, end - e->t_done);
        if (pre->member && st->members)
            layer_add(&st->members[(size_t)pre->layer * ISA_MAX_MEMBERS + pre->member - 1u], engine, pre, start, end, dma_bytes,
                      dram_bytes, end - e->t_done);
    }
    e->t_done = end;
}
#endif
