/* race.c - the data-race detector. Each core's LMEM keeps the byte ranges
 * that in-flight instructions (of any engine of the cluster, incl. remote
 * DMA) read or write. A new instruction whose range overlaps an in-flight
 * range of another engine, where either side writes, started with nothing
 * ordering the two (a semaphore would have delayed it until completion):
 * that is a race and stops the run. Ranges are the bounding byte range of
 * each operand (docs/simulator.md). */
#include "sim/sim_int.h"

/* Cluster-local cores of a range; own: the mask of the instruction's own core. */
static inline uint32_t range_cores(const SimRange *r, uint32_t own)
{
    return r->cores ? r->cores : own;
}

int race_begin(AtlSim *s, int core, int engine, int index, const SimPre *pre)
{
    int eid = sim_eid(core, engine), lcore = core % s->cpc, base = core - lcore;
    uint32_t own = 1u << lcore;
    for (int i = 0; i < pre->nr; i++) {
        const SimRange *r = &pre->r[i];
        for (uint32_t m = range_cores(r, own); m; m &= m - 1) {
            int lc = __builtin_ctz(m);
            SimCore *c = &s->core[base + lc];
            for (int j = 0; j < c->ninfl; j++) {
                const SimInflight *f = &c->infl[j];
                if (f->eid == eid || f->hi <= r->lo || r->hi <= f->lo || !(f->write || r->write)) continue;
                int oc = f->eid / ISA_NUM_ENGINES, oe = f->eid % ISA_NUM_ENGINES;
                char other[256];
                sim_disasm(&s->eng[f->eid].insns[f->index], other, sizeof other);
                sim_raise(s, SIM_FAULT_RACE, core, engine, index,
                          "%s lmem bytes [0x%x, 0x%x) of core %d while core %d %s instruction #%d `%s` "
                          "is still %s [0x%x, 0x%x); no semaphore orders them",
                          r->write ? "writes" : "reads", r->lo, r->hi, base + lc, oc, isa_engine_name(oe),
                          f->index, other, f->write ? "writing" : "reading", f->lo, f->hi);
                return -1;
            }
        }
    }
    for (int i = 0; i < pre->nr; i++) {
        const SimRange *r = &pre->r[i];
        for (uint32_t m = range_cores(r, own); m; m &= m - 1) {
            SimCore *c = &s->core[base + __builtin_ctz(m)];
            if (c->ninfl < c->capinfl)
                c->infl[c->ninfl++] = (SimInflight){r->lo, r->hi, eid, index, r->write};
        }
    }
    return 0;
}

void race_end(AtlSim *s, int core, int engine, const SimPre *pre)
{
    int eid = sim_eid(core, engine), lcore = core % s->cpc, base = core - lcore;
    uint32_t m = 0, own = 1u << lcore;
    for (int i = 0; i < pre->nr; i++) m |= range_cores(&pre->r[i], own);
    for (; m; m &= m - 1) {
        SimCore *c = &s->core[base + __builtin_ctz(m)];
        int k = 0;
        for (int j = 0; j < c->ninfl; j++)
            if (c->infl[j].eid != eid) c->infl[k++] = c->infl[j];
        c->ninfl = k;
    }
}
