/* race.c - the data-race detector. Each core's LMEM keeps the engines (of
 * any core of the cluster, incl. remote DMA) whose in-flight instruction
 * reads or writes it, in the order they began; an engine has at most one
 * instruction in flight, and that instruction's ranges are in its
 * predecoded record (SimPre), so a core's list holds one entry per
 * instruction (its record), not one per range.
 * A new instruction whose range overlaps an in-flight range of another
 * engine, where either side writes, started with nothing ordering the two
 * (a semaphore would have delayed it until completion): that is a race and
 * stops the run. The first conflict is reported in the order: the new
 * instruction's ranges, their cores, the in-flight instructions in the
 * order they began, their ranges. Ranges are the bounding byte range of
 * each operand (docs/simulator.md). */
#include "sim/sim_int.h"

/* Range r (of an instruction of engine eid) on cluster-local core lc
 * against the in-flight instructions there: the first conflicting range,
 * with its engine in *who, or NULL. */
static const SimRange *race_find(const SimCore *c, int lc, const SimRange *r, int eid, int *who)
{
    for (int j = 0; j < c->ninfl; j++) {
        const SimInflight *in = &c->infl[j];
        if (in->eid == eid) continue;
        for (int k = 0; k < in->pre->nr; k++) {
            const SimRange *f = &in->pre->r[k];
            if (!(f->cores >> lc & 1) || f->hi <= r->lo || r->hi <= f->lo || !(f->write || r->write)) continue;
            *who = in->eid;
            return f;
        }
    }
    return NULL;
}

int race_begin(AtlSim *s, int core, int engine, int index, const SimPre *pre)
{
    int eid = sim_eid(core, engine), lcore = core % s->cpc, base = core - lcore;
    for (int i = 0; i < pre->nr; i++) {
        const SimRange *r = &pre->r[i];
        for (uint32_t m = r->cores; m; m &= m - 1) {
            int lc = __builtin_ctz(m), o;
            const SimRange *f = race_find(&s->core[base + lc], lc, r, eid, &o);
            if (!f) continue;
            int oc = o / ISA_NUM_ENGINES, oe = o % ISA_NUM_ENGINES, oindex = s->eng[o].pc;
            char other[256];
            sim_disasm(&s->eng[o].insns[oindex], other, sizeof other);
            sim_raise(s, SIM_FAULT_RACE, core, engine, index,
                      "%s lmem bytes [0x%x, 0x%x) of core %d while core %d %s instruction #%d `%s` "
                      "is still %s [0x%x, 0x%x); no semaphore orders them",
                      r->write ? "writes" : "reads", r->lo, r->hi, base + lc, oc, isa_engine_name(oe),
                      oindex, other, f->write ? "writing" : "reading", f->lo, f->hi);
            return -1;
        }
    }
    for (uint32_t m = pre->cores; m; m &= m - 1) {
        SimCore *c = &s->core[base + __builtin_ctz(m)];
        if (c->ninfl < c->capinfl) c->infl[c->ninfl++] = (SimInflight){pre, eid};
    }
    return 0;
}

void race_end(AtlSim *s, int core, int engine, const SimPre *pre)
{
    int eid = sim_eid(core, engine), base = core - core % s->cpc;
    for (uint32_t m = pre->cores; m; m &= m - 1) {
        SimCore *c = &s->core[base + __builtin_ctz(m)];
        int j = 0;
        while (j < c->ninfl && c->infl[j].eid != eid) j++;
        if (j == c->ninfl) continue;
        for (c->ninfl--; j < c->ninfl; j++) c->infl[j] = c->infl[j + 1]; /* the others stay in order */
    }
}
