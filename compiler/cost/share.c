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
 * A use's delivery is projected when it joins and again when asked after
 * another flow joined its server (joins only delay it); the projection
 * walks the flows before it. The arithmetic is the simulator's, operation
 * for operation, so both give the same doubles.
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
    int use;
} Job;

typedef struct Use {
    double fin;            /* projected delivery */
    double q, iq;
    uint64_t work, joins;  /* joins: the server's join count at the projection */
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

struct BkShare {
    Server *sv;
    int nsv;
    Use *use;
    int nuse, capuse;
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
    free(s);
}

/* Busy time job j still lacks behind its fluid share when its server has
 * given x of virtual time (isa/timing.h, the simulator's formula). */
static double lag(const Job *j, double x)
{
    return tim_burst_lag(x - j->v0, j->q, j->iq, j->wl, j->last, j->none);
}

/* Lag of the jobs after job i (an index from head) when i's work is done. */
static double lag_after(const Server *p, int i)
{
    if (p->ports != 1) return 0;   /* several ports: the fluid share as is */
    const Job *j = p->job + p->head;
    double l = 0, x = j[i].f;
    for (int k = i + 1; k < p->n; k++) l += lag(&j[k], x);
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

/* Delivery of use u on its server if nothing else joins: the real time the
 * fluid schedule reaches its virtual finish, less the lags after it. */
static double project(const BkShare *s, const Server *p, int u)
{
    const Job *j = p->job + p->head;
    double t = p->tv, v = p->v, dn = (double)p->n;
    (void)s;
    if (p->ports == 1) {
        for (int i = 0; i < p->n; i++, dn -= 1.0) {
            t += (j[i].f - v) * dn;
            v = j[i].f;
            if (j[i].use == u) return t - lag_after(p, i);
        }
        return t;
    }
    for (int i = 0, n = p->n; i < p->n; i++, n--) {
        double slow = n <= p->ports ? 1.0 : (double)n / p->ports;
        t += (j[i].f - v) * slow;
        v = j[i].f;
        if (j[i].use == u) return t;
    }
    return t;
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
    u->work = work;
    u->q = bursts ? (double)work / (double)bursts : 0;
    u->iq = u->q > 0 ? 1 / u->q : 0;
    Job job = {p->v + (double)work, p->v, u->q, u->iq, 0, 0, 0, id};
    tim_burst_prepare(job.f - job.v0, job.q, job.iq, &job.wl, &job.last, &job.none);
    /* after the jobs that finish no later */
    Job *j = p->job + p->head;
    int k = p->n;
    while (k > 0 && j[k - 1].f > job.f) { j[k] = j[k - 1]; k--; }
    j[k] = job;
    p->n++;
    p->joins++;
    u->fin = project(s, p, id);
    u->joins = p->joins;
    return id;
}

double bk_share_due(BkShare *s, int u)
{
    Use *us = &s->use[u];
    const Server *p = &s->sv[us->sv];
    if (!us->gone && us->joins != p->joins) {
        us->fin = project(s, p, u);
        us->joins = p->joins;
    }
    return us->fin;
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
