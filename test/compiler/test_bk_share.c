/* test_bk_share.c - the servers of the cost model's replay
 * (compiler/cost/share.c) against a reference written the plain way: every
 * delivery projected when its flow joins and again whenever asked after a
 * join on its server, each walking the jobs before it and summing the lags
 * of every job after it, with an array shifted on every departure. Any
 * faster bookkeeping in share.c must give the same doubles, bit for bit
 * (the replay's cycles are their ceilings; docs/backend.md, "Segments
 * priced once per compile", for what was tried).
 *
 * Random flows of 1-4 uses on six servers (one of three ports, as a
 * cluster's SRAM), works that tie (equal virtual finishes), flows without
 * bursts, joins among the jobs and after them, ghosts (flows delivered
 * before their share is used up); flows are asked for their latest
 * delivery at random times, and leave when it has passed. */
#include <stdlib.h>
#include "test/test.h"
#include "test/compiler/rand64.h"
#include "compiler/cost/share.h"
#include "isa/timing.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static int pick(int n) { return rand64_pick(&rng, n); }

enum { NSV = 6, MAXJ = 4096, MAXU = 1 << 16 };

/* The reference: share.c as it was, one job list per server. */
typedef struct RJob { double f, v0, q, iq, wl, last, none; int use; } RJob;
typedef struct RUse { double fin; uint64_t joins; int sv, gone; } RUse;
typedef struct RSrv { RJob job[MAXJ]; int n, ports; double v, tv; uint64_t joins; } RSrv;
typedef struct Ref { RSrv sv[NSV]; RUse use[MAXU]; int nuse; } Ref;

static double r_lag_after(const RSrv *p, int i)
{
    if (p->ports != 1) return 0;
    double l = 0, x = p->job[i].f;
    for (int k = i + 1; k < p->n; k++) {
        const RJob *j = &p->job[k];
        l += tim_burst_lag(x - j->v0, j->q, j->iq, j->wl, j->last, j->none);
    }
    return l;
}

static double r_project(const RSrv *p, int u)
{
    double t = p->tv, v = p->v;
    for (int i = 0, n = p->n; i < p->n; i++, n--) {
        double slow = p->ports == 1 ? (double)n : n <= p->ports ? 1.0 : (double)n / p->ports;
        t += (p->job[i].f - v) * slow;
        v = p->job[i].f;
        if (p->job[i].use == u) return t - r_lag_after(p, i);
    }
    return t;
}

static void r_advance(Ref *r, RSrv *p, double t)
{
    if (t < p->tv) return;
    while (p->n) {
        RJob *j = &p->job[0];
        int shared = p->n > p->ports;
        double slow = !shared ? 1.0 : p->ports == 1 ? (double)p->n : (double)p->n / p->ports;
        double end = p->tv + (j->f - p->v) * slow;
        if (end > t) { p->v += (t - p->tv) * (shared ? (double)p->ports / p->n : 1.0); p->tv = t; return; }
        RUse *u = &r->use[j->use];
        if (!u->gone) {
            u->gone = 1;
            if (u->joins != p->joins) u->fin = end - r_lag_after(p, 0);
        }
        p->tv = end;
        p->v = j->f;
        memmove(p->job, p->job + 1, (size_t)(p->n - 1) * sizeof *p->job);
        p->n--;
    }
    p->v = 0;
    p->tv = t;
}

static int r_join(Ref *r, int sv, uint64_t work, uint64_t bursts, double t)
{
    RSrv *p = &r->sv[sv];
    r_advance(r, p, t);
    int id = r->nuse++;
    RUse *u = &r->use[id];
    memset(u, 0, sizeof *u);
    u->sv = sv;
    double q = bursts ? (double)work / (double)bursts : 0;
    RJob job = {p->v + (double)work, p->v, q, q > 0 ? 1 / q : 0, 0, 0, 0, id};
    tim_burst_prepare(job.f - job.v0, job.q, job.iq, &job.wl, &job.last, &job.none);
    int k = p->n;
    while (k > 0 && p->job[k - 1].f > job.f) { p->job[k] = p->job[k - 1]; k--; }
    p->job[k] = job;
    p->n++;
    p->joins++;
    u->fin = r_project(p, id);
    u->joins = p->joins;
    return id;
}

static double r_due(Ref *r, int u)
{
    RUse *us = &r->use[u];
    RSrv *p = &r->sv[us->sv];
    if (!us->gone && us->joins != p->joins) {
        us->fin = r_project(p, u);
        us->joins = p->joins;
    }
    return us->fin;
}

typedef struct Flow { int first, n; double start; } Flow;

/* One random run: flows join at rising times, are asked for their latest
 * delivery, and leave once it has passed; every answer compared. */
/* A flow's latest delivery, as cost.c's flow_due asks for it. */
static double flow_latest(BkShare *s, int first, int n, double last)
{
    for (int j = 0; j < n; j++) {
        double f = bk_share_due(s, first + j);
        if (f > last) last = f;
    }
    return last;
}

static void one_run(Ref *r, BkShare *s, int nflows, int big)
{
    memset(r, 0, sizeof *r);
    bk_share_reset(s);
    for (int sv = 0; sv < NSV; sv++) {
        int ports = sv == NSV - 1 ? 3 : 1;
        r->sv[sv].ports = ports;
        bk_share_set_ports(s, sv, ports);
    }
    Flow fl[64];
    int nact = 0, mism = 0;
    double now = 0;
    for (int f = 0; f < nflows && r->nuse < MAXU - 8; f++) {
        now += (double)pick(big ? 400 : 40);
        /* some flows ask and leave before the next joins */
        for (int a = 0; a < nact; a++) {
            if (pick(3)) continue;
            double want = now;
            for (int u = 0; u < fl[a].n; u++) {
                double d = r_due(r, fl[a].first + u);
                if (d > want) want = d;
            }
            double got = flow_latest(s, fl[a].first, fl[a].n, now);
            if (memcmp(&got, &want, sizeof got)) mism++;
            /* a flow delivered by now leaves (ghosts stay on their servers) */
            if (want <= now + (double)pick(50)) {
                for (int u = 0; u < fl[a].n; u++) {
                    bk_share_leave(s, fl[a].first + u);
                    r->use[fl[a].first + u].gone = 1;
                }
                fl[a--] = fl[--nact];
            }
        }
        if (nact == 64) continue;
        /* a new flow on 1-4 distinct servers */
        int n = 1 + pick(4), used = 0;
        Flow *nf = &fl[nact++];
        nf->n = 0;
        nf->start = now;
        for (int u = 0; u < n; u++) {
            int sv = pick(NSV);
            if (used >> sv & 1) continue;
            used |= 1 << sv;
            /* works from a few values, so virtual finishes tie */
            uint64_t work = pick(4) ? (uint64_t)(4 * (1 + pick(big ? 64 : 8))) : (uint64_t)(1 + pick(3000));
            uint64_t bursts = pick(8) ? (work + 3) / 4 : 0;
            int id = r_join(r, sv, work, bursts, now);
            int id2 = bk_share_join(s, sv, work, bursts, now);
            CHECK_EQ_INT(id2, id);
            if (nf->n++ == 0) nf->first = id;
        }
        /* the new flow's latest, as the replay asks at its start */
        double want = now;
        for (int u = 0; u < nf->n; u++) {
            double d = r_due(r, nf->first + u);
            if (d > want) want = d;
        }
        double got = flow_latest(s, nf->first, nf->n, now);
        if (memcmp(&got, &want, sizeof got)) mism++;
        /* and a use alone now and then */
        if (!pick(5)) {
            int u = nf->first + pick(nf->n);
            double a = bk_share_due(s, u), b = r_due(r, u);
            if (memcmp(&a, &b, sizeof a)) mism++;
        }
    }
    CHECK_EQ_INT(mism, 0);
}

TEST(latest_matches_reference)
{
    static Ref r;
    BkShare *s = bk_share_new(NSV);
    REQUIRE(s);
    for (int run = 0; run < 200; run++) one_run(&r, s, 300, run & 1);
    bk_share_free(s);
}

int main(void)
{
    RUN(latest_matches_reference);
    return test_summary("test_bk_share");
}
