/* race.c - the data-race detector. An engine has at most one instruction
 * in flight. Each core's LMEM keeps the engines (of any core of the
 * cluster, incl. remote DMA) whose in-flight instruction reads or writes
 * it, in the order they began; that instruction's ranges are in its
 * predecoded record (SimPre), so a core's list holds one entry per
 * instruction (its record), not one per range. Cluster SRAM and DRAM are
 * reached by DMA engines only: each cluster's SRAM and the DRAM keep a set
 * of the ranges in-flight instructions write there (copied; at most 3 per
 * DMA engine, so the set has room for all), and the ranges they read are
 * found, when a write begins, in the records of the busy DMA engines that
 * can reach the memory. Reads, the common case, are thus checked against
 * the few writes and cost no bookkeeping.
 * A new instruction whose range overlaps an in-flight range of another
 * engine in the same memory, where either side writes, started with
 * nothing ordering the two: a semaphore wait or a barrier would have held
 * it until the other's completion (every ordering the chip has - an
 * engine's own stream, semaphores within a cluster, cluster and chip
 * barriers - orders a completion before a start). That is a race and
 * stops the run. The first conflict is reported in the order: the new
 * instruction's ranges, their cores, the in-flight instructions in the
 * order they began, their ranges (in SRAM and DRAM: the in-flight
 * instruction that began at the earliest cycle, ties to the lower engine
 * id). Ranges are the bounding byte range of each operand
 * (docs/simulator.md); in SRAM and DRAM, where several cores write tiles
 * of one tensor at once, overlapping ranges are then compared by their
 * operands' geometry. */
#include <stdio.h>
#include <stdlib.h>
#include "sim/sim_int.h"
#include "isa/operands.h"

int race_init(AtlSim *s)
{
    int cl = s->chip.clusters;
    /* a cluster's SRAM: its own cores' DMAs, and with cluster links one peer write per DMA engine of the chip */
    size_t sram_cap = (size_t)SIM_MAX_RANGES * (size_t)s->cpc + (s->chip.noc_cluster_links ? (size_t)s->ncores : 0);
    size_t dram_cap = (size_t)SIM_MAX_RANGES * (size_t)s->ncores;
    s->race_far = calloc((size_t)cl + 1, sizeof *s->race_far);
    s->race_mem = calloc((size_t)cl * sram_cap + dram_cap, sizeof *s->race_mem);
    s->race_pos = calloc((size_t)s->ncores * SIM_MAX_RANGES, sizeof *s->race_pos);
    s->race_geo = calloc((size_t)s->ncores, sizeof *s->race_geo);
    if (!s->race_far || !s->race_mem || !s->race_pos || !s->race_geo) return -1;
    for (int i = 0; i <= cl; i++) s->race_far[i].w = s->race_mem + (size_t)i * sram_cap;
    return 0;
}

void race_reset(AtlSim *s)
{
    for (int i = 0; i <= s->chip.clusters; i++) s->race_far[i].n = 0;
    for (int i = 0; i < s->ncores; i++) s->race_geo[i].pc = -1;
}

/* The write set of range r's memory: its cluster's SRAM, or the DRAM. */
static SimRaceSet *far_set(AtlSim *s, const SimRange *r)
{
    return &s->race_far[r->space == ISA_SPACE_DRAM ? s->chip.clusters : r->cluster];
}

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

/* An in-flight range in a shared space that conflicts with the new one. */
typedef struct FarHit {
    int eid;                /* its engine, -1 none */
    uint32_t lo, hi;
    int write;
} FarHit;

/* Operand k of DMA engine eid's current instruction, with its windows
 * (cached per engine), or NULL if it has no operand k. */
static const IsaOperand *far_geo(AtlSim *s, int eid, int k)
{
    const SimEngine *e = &s->eng[eid];
    SimGeo *g = &s->race_geo[eid / ISA_NUM_ENGINES];
    if (g->pc != e->pc) {
        g->pc = e->pc;
        g->n = isa_operands(&e->insns[e->pc], g->op);
    }
    if (k >= g->n) return NULL;
    isa_operand_windows(&g->op[k]);
    return &g->op[k];
}

/* Whether in-flight range k2 of engine e2 conflicts with range k (operand
 * k) of engine eid's new instruction, their bounding ranges overlapping:
 * compared by their operands' geometry (isa_operands_disjoint), as tiles
 * of one tensor that several cores write at once interleave in DRAM. */
static int far_conflict(AtlSim *s, int e2, int k2, int eid, int k)
{
    const IsaOperand *a = far_geo(s, eid, k), *b = far_geo(s, e2, k2);
    return !a || !b || !isa_operands_disjoint(a, b);
}

/* Keeps in *h the conflict of the instruction that began first. */
static void far_keep(const AtlSim *s, FarHit *h, int eid, uint32_t lo, uint32_t hi, int write)
{
    uint64_t t = s->eng[eid].t_start, tb = h->eid >= 0 ? s->eng[h->eid].t_start : 0;
    if (h->eid < 0 || t < tb || (t == tb && eid < h->eid)) *h = (FarHit){eid, lo, hi, write};
}

/* Range r = operand k of engine eid's new instruction, in a shared space
 * (a cluster's SRAM or the DRAM), against the in-flight writes there and,
 * if r writes, the in-flight reads (in the records of the busy DMA engines
 * that reach it: the cluster's for SRAM, with cluster links every one's,
 * the chip's for DRAM). Returns 1 with the conflict in *h. */
static int far_find(AtlSim *s, const SimRaceSet *set, const SimRange *r, int k, int eid, FarHit *h)
{
    h->eid = -1;
    for (int j = 0; j < set->n; j++) {
        const SimFarRange *f = &set->w[j];
        if (f->eid != eid && f->lo < r->hi && r->lo < f->hi && far_conflict(s, f->eid, f->k, eid, k))
            far_keep(s, h, f->eid, f->lo, f->hi, 1);
    }
    if (r->write) {
        int all = r->space == ISA_SPACE_DRAM || s->chip.noc_cluster_links;
        int first = all ? 0 : r->cluster * s->cpc, last = all ? s->ncores : first + s->cpc;
        uint8_t bit = SIM_FAR_BIT(r->space, 0);
        for (int c = first; c < last; c++) {
            int o = sim_eid(c, ISA_ENGINE_DMA);
            const SimEngine *e = &s->eng[o];
            if (o == eid || e->state != ST_BUSY || !(e->pre[e->pc].far & bit)) continue;
            const SimPre *p = &e->pre[e->pc];
            for (int i = 0; i < p->nr; i++) {
                const SimRange *f = &p->r[i];
                if (f->space == r->space && (f->space == ISA_SPACE_DRAM || f->cluster == r->cluster) && !f->write &&
                    f->lo < r->hi && r->lo < f->hi && far_conflict(s, o, i, eid, k))
                    far_keep(s, h, o, f->lo, f->hi, 0);
            }
        }
    }
    return h->eid >= 0;
}

/* Raises the race of range r (described by `where`) of the new
 * instruction against in-flight range [lo, hi) of engine o. */
static int race_raise(AtlSim *s, int core, int engine, int index, const SimRange *r, const char *where, int o,
                      uint32_t lo, uint32_t hi, int write, const char *order)
{
    int oc = o / ISA_NUM_ENGINES, oe = o % ISA_NUM_ENGINES, oindex = s->eng[o].pc;
    const int *lines = s->eng[o].lines;
    char other[256], line[32] = "";
    sim_disasm(&s->eng[o].insns[oindex], other, sizeof other);
    if (lines && lines[oindex]) snprintf(line, sizeof line, " (line %d)", lines[oindex]);
    sim_raise(s, SIM_FAULT_RACE, core, engine, index,
              "%s %s bytes [0x%x, 0x%x)%s while core %d %s instruction #%d%s `%s` is still %s [0x%x, 0x%x); %s",
              r->write ? "writes" : "reads", isa_space_name(r->space), r->lo, r->hi, where, oc, isa_engine_name(oe),
              oindex, line, other, write ? "writing" : "reading", lo, hi, order);
    return -1;
}

int race_begin(AtlSim *s, int core, int engine, int index, const SimPre *pre)
{
    int eid = sim_eid(core, engine), lcore = core % s->cpc, base = core - lcore;
    char where[32];
    for (int i = 0; i < pre->nr; i++) {
        const SimRange *r = &pre->r[i];
        if (r->space != ISA_SPACE_LMEM) {
            FarHit h;
            if (!far_find(s, far_set(s, r), r, i, eid, &h)) continue;
            where[0] = 0;
            if (r->space == ISA_SPACE_SRAM) snprintf(where, sizeof where, " of cluster %d", r->cluster);
            return race_raise(s, core, engine, index, r, where, h.eid, h.lo, h.hi, h.write,
                              "no semaphore or barrier orders them");
        }
        for (uint32_t m = r->cores; m; m &= m - 1) {
            int lc = __builtin_ctz(m), o;
            const SimRange *f = race_find(&s->core[base + lc], lc, r, eid, &o);
            if (!f) continue;
            snprintf(where, sizeof where, " of core %d", base + lc);
            return race_raise(s, core, engine, index, r, where, o, f->lo, f->hi, f->write, "no semaphore orders them");
        }
    }
    for (uint32_t m = pre->cores; m; m &= m - 1) {
        SimCore *c = &s->core[base + __builtin_ctz(m)];
        if (c->ninfl < c->capinfl) c->infl[c->ninfl++] = (SimInflight){pre, eid};
    }
    if (pre->far & SIM_FAR_WRITES)
        for (int i = 0; i < pre->nr; i++) {
            const SimRange *r = &pre->r[i];
            if (r->space == ISA_SPACE_LMEM || !r->write) continue;
            SimRaceSet *set = far_set(s, r);
            s->race_pos[core * SIM_MAX_RANGES + i] = set->n;
            set->w[set->n++] = (SimFarRange){r->lo, r->hi, eid, (uint8_t)i};
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
    if (!(pre->far & SIM_FAR_WRITES)) return;
    for (int i = 0; i < pre->nr; i++) {
        const SimRange *r = &pre->r[i];
        if (r->space == ISA_SPACE_LMEM || !r->write) continue;
        SimRaceSet *set = far_set(s, r);
        int j = s->race_pos[core * SIM_MAX_RANGES + i];
        set->w[j] = set->w[--set->n]; /* the last one takes its place */
        s->race_pos[set->w[j].eid / ISA_NUM_ENGINES * SIM_MAX_RANGES + set->w[j].k] = j;
    }
}
