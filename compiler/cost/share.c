/* share.c - the servers of the cost model's replay (cost.c): DRAM
 * channels, NoC links and DMA ports, each shared by the DMA flows on it as
 * the simulator shares them (sim/mem.c, docs/timing.md "Bursts, not
 * fluid, at the end").
 *
 * A server divides its time equally among its flows (processor sharing):
 * in virtual time v every flow on it receives one cycle of service per
 * virtual cycle, so a flow of `work` cycles joining at virtual v0 has its
 * fluid finish at virtual f = v0 + work, and the server's real time runs n
 * cycles per virtual cycle while n flows are on it. Its bursts are served
 * whole, in the order of their fluid finish (ties: the flow that joined
 * first), so a flow is done on a server at the real time the fluid
 * schedule reaches its f, less the parts of the current bursts of the
 * flows after it in that order that are not served yet (at most one burst
 * each, of the flow's average burst work q = work / bursts). That keeps
 * identical transfers that start together finishing one burst apart, as
 * round-robin bursts do, where pure sharing finishes them at once and
 * keeps cores in lock step. A flow delivered ahead of its fluid finish
 * stays on the server as a ghost until its share is used up, so the flows
 * it went ahead of are not sped up. A server of several ports (a
 * cluster's SRAM) serves that many flows at full speed and shares beyond
 * that, its fluid schedule as is (no burst lag), as the simulator's does.
 *
 * A use's delivery is projected when asked, if a flow joined its server
 * since its last projection (joins only delay it; a server's state changes
 * only at joins, so a projection between two joins gives the same double
 * whenever it is made): the walk over the jobs before it, less the lags of
 * the jobs after it. Each job keeps that sum of lags; a job joining after
 * all of them adds its term (the same additions in the same order), one
 * joining among them makes it unknown. A flow's latest delivery
 * (bk_share_latest) sums the lags only of the uses that can be the latest:
 * a lag only lowers a delivery. The arithmetic is the simulator's,
 * operation for operation, so both give the same doubles.
 * Owns: the servers' job lists and the uses (bk_share_free). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/cost/share.h"
#include "isa/timing.h"

/* A flow on a server, by virtual finish. */
typedef struct Job {
    double f, v0;          /* virtual finish and join */
    double q, iq;          /* work per burst, its inverse */
    double wl, last, none; /* the parts of the lag that depend on the job alone */
    double la;             /* the lag of the la_n jobs after it at its finish (lag_after) */
    int la_n;              /* -1: not known (a job joined among them since) */
    int use;
} Job;

typedef struct Use {
    double fin;            /* projected delivery */
    uint64_t joins;        /* the server's join count at the projection */
    int sv;
    int gone;              /* left its server, or delivered (a ghost while on it) */
} Use;

typedef struct Server {
    Job *job;              /* job[head .. head + n) */
    int head, n, cap;
    double v, tv;          /* virtual time, and the real time it was taken at */
    uint64_t joins;
    int ports;             /* flows served at full speed at once */
} Server;

/* A use's time before its lag (bk_share_latest). */
typedef struct Walked { double t; int at, u; } Walked;

struct BkShare {
    Server *sv;
    int nsv;
    Use *use;
    int nuse, capuse;
    Walked *walk;
    int capwalk;
};

BkShare *bk_share_new(int nservers)
{
    BkShare *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->sv = calloc((size_t)nservers, sizeof *s->sv);
    if (!s->sv) { free(s); return NULL; }
    s->nsv = nservers;
    for (int i = 0; i < nservers; i++) s->sv[i].ports = 1;
    return s;
}

void bk_share_free(BkShare *s)
{
    if (!s) return;
    for (int i = 0; i < s->nsv; i++) free(s->sv[i].job);
    free(s->sv);
    free(s->use);
    free(s->walk);
    free(s);
}

/* Busy time job j still lacks behind its fluid share when its server has
 * given x of virtual time (isa/timing.h, the simulator's formula). */
static double lag(const Job *j, double x)
{
    return tim_burst_lag(x - j->v0, j->q, j->iq, j->wl, j->last, j->none);
}

/* Lag of the jobs after job i (an index from head) when i's work is done,
 * summed in their order. The sum is kept with the job: a job joining after
 * all of them adds its term to it (the same additions in the same order),
 * one joining among them makes it unknown (insert). */
static double lag_after(Server *p, int i)
{
    if (p->ports != 1) return 0;   /* several ports: the fluid share as is */
    Job *j = p->job + p->head;
    double l = 0, x = j[i].f;
    int k = i + 1;
    if (j[i].la_n >= 0) { l = j[i].la; k += j[i].la_n; }
    for (; k < p->n; k++) l += lag(&j[k], x);
    j[i].la = l;
    j[i].la_n = p->n - i - 1;
    return l;
}

/* Moves server p's virtual time to real time t; jobs done by then leave
 * (a use still waiting for its delivery gets it, unless it was projected
 * since the last join there). */
static void advance(BkShare *s, Server *p, double t)
{
    if (t < p->tv) return;
    while (p->n) {
        Job *j = &p->job[p->head];
        /* real cycles per virtual cycle (the simulator's arithmetic, sim/mem.c) */
        int shared = p->n > p->ports;
        double slow = !shared ? 1.0 : p->ports == 1 ? (double)p->n : (double)p->n / p->ports;
        double end = p->tv + (j->f - p->v) * slow;
        if (end > t) { p->v += (t - p->tv) * (shared ? (double)p->ports / p->n : 1.0); p->tv = t; return; }
        Use *u = &s->use[j->use];
        if (!u->gone) {
            u->gone = 1;
            if (u->joins != p->joins) u->fin = end - lag_after(p, 0);
        }
        p->tv = end;
        p->v = j->f;
        p->head++;
        p->n--;
    }
    p->head = 0;
    p->v = 0; /* idle: the virtual clock restarts */
    p->tv = t;
}

/* The real time server p's fluid schedule reaches the virtual finish of
 * use u's job, *at its index (from head); the delivery is that less
 * lag_after(p, *at) (none on a server of several ports). */
static double reach(const Server *p, int u, int *at)
{
    const Job *j = p->job + p->head;
    double t = p->tv, v = p->v, dn = (double)p->n;
    int i = 0;
    if (p->ports == 1) {
        for (; i < p->n; i++, dn -= 1.0) {
            t += (j[i].f - v) * dn;
            v = j[i].f;
            if (j[i].use == u) break;
        }
    } else {
        for (int n = p->n; i < p->n; i++, n--) {
            double slow = n <= p->ports ? 1.0 : (double)n / p->ports;
            t += (j[i].f - v) * slow;
            v = j[i].f;
            if (j[i].use == u) break;
        }
    }
    *at = i;
    return t;
}

/* Delivery of use u on its server if nothing else joins: the real time the
 * fluid schedule reaches its virtual finish, less the lags after it. */
static double project(Server *p, int u)
{
    int i;
    double t = reach(p, u, &i);
    return i < p->n ? t - lag_after(p, i) : t;
}

int bk_share_join(BkShare *s, int sv, uint64_t work, uint64_t bursts, double t)
{
    Server *p = &s->sv[sv];
    advance(s, p, t);
    if (s->nuse == s->capuse) {
        int nc = s->capuse ? 2 * s->capuse : 256;
        Use *nu = realloc(s->use, (size_t)nc * sizeof *nu);
        if (!nu) return -1;
        s->use = nu;
        s->capuse = nc;
    }
    if (p->head + p->n == p->cap) {
        if (p->head) {
            memmove(p->job, p->job + p->head, (size_t)p->n * sizeof *p->job);
            p->head = 0;
        } else {
            int nc = p->cap ? 2 * p->cap : 16;
            Job *nj = realloc(p->job, (size_t)nc * sizeof *nj);
            if (!nj) return -1;
            p->job = nj;
            p->cap = nc;
        }
    }
    int id = s->nuse++;
    Use *u = &s->use[id];
    memset(u, 0, sizeof *u);
    u->sv = sv;
    double q = bursts ? (double)work / (double)bursts : 0;
    Job job = {p->v + (double)work, p->v, q, q > 0 ? 1 / q : 0, 0, 0, 0, 0, 0, id};
    tim_burst_prepare(job.f - job.v0, job.q, job.iq, &job.wl, &job.last, &job.none);
    /* after the jobs that finish no later */
    Job *j = p->job + p->head;
    int k = p->n;
    while (k > 0 && j[k - 1].f > job.f) { j[k] = j[k - 1]; k--; }
    j[k] = job;
    if (k < p->n) {
        /* among others: the sums of lags that reach past it are unknown */
        j[k].la_n = -1;
        for (int i = 0; i < k; i++)
            if (j[i].la_n > k - 1 - i) j[i].la_n = -1;
    }
    p->n++;
    p->joins++;
    u->joins = p->joins - 1;   /* projected when asked (bk_share_due, bk_share_latest) */
    return id;
}

double bk_share_due(BkShare *s, int u)
{
    Use *us = &s->use[u];
    Server *p = &s->sv[us->sv];
    if (!us->gone && us->joins != p->joins) {
        us->fin = project(p, u);
        us->joins = p->joins;
    }
    return us->fin;
}

double bk_share_latest(BkShare *s, int first, int n, double last)
{
    if (s->capwalk < n) {
        Walked *nw = realloc(s->walk, (size_t)n * sizeof *nw);
        if (!nw) {   /* no room to keep the walks: each use projected whole */
            for (int j = 0; j < n; j++) {
                double f = bk_share_due(s, first + j);
                if (f > last) last = f;
            }
            return last;
        }
        s->walk = nw;
        s->capwalk = n;
    }
    /* the deliveries known, and the other uses' times before their lags */
    int nw = 0;
    for (int j = 0; j < n; j++) {
        Use *us = &s->use[first + j];
        Server *p = &s->sv[us->sv];
        if (us->gone || us->joins == p->joins) {
            if (us->fin > last) last = us->fin;
            continue;
        }
        Walked *w = &s->walk[nw];
        w->t = reach(p, first + j, &w->at);
        if (p->ports != 1 || w->at == p->n) {
            us->fin = w->t;
            us->joins = p->joins;
            if (us->fin > last) last = us->fin;
            continue;
        }
        w->u = first + j;
        nw++;
    }
    /* latest first: a lag only lowers a delivery, so a use whose time
     * before its lag is no later than the latest delivery cannot be later */
    for (;;) {
        int best = -1;
        for (int i = 0; i < nw; i++)
            if (s->walk[i].t > last && (best < 0 || s->walk[i].t > s->walk[best].t)) best = i;
        if (best < 0) return last;
        Walked *w = &s->walk[best];
        Use *us = &s->use[w->u];
        Server *p = &s->sv[us->sv];
        us->fin = w->t - lag_after(p, w->at);
        us->joins = p->joins;
        if (us->fin > last) last = us->fin;
        w->t = -INFINITY;
    }
}

void bk_share_leave(BkShare *s, int u) { s->use[u].gone = 1; }

void bk_share_set_ports(BkShare *s, int sv, int ports) { s->sv[sv].ports = ports > 0 ? ports : 1; }

void bk_share_reset(BkShare *s)
{
    for (int i = 0; i < s->nsv; i++) {
        Server *p = &s->sv[i];
        p->head = p->n = 0;
        p->v = p->tv = 0;
        p->joins = 0;
    }
    s->nuse = 0;
}
