/* cost.c - the cost model: estimated cycles of a group schedule.
 *
 * Reads: a BkGroup and the chip. Every duration comes from the isa/timing.h
 *   formulas the simulator uses: tim_compute_cycles for mm/conv/vector ops,
 *   tim_occupancy with the DRAM channel, NoC link and DMA port bandwidths
 *   for each DMA burst, tim_dma_path_latency, dma.issue_cycles.
 * Does: generates every tile as the emitter would (same slots, same weight
 *   skipping) and replays all cores' time-step tables together:
 *     DMA queue of a core  L0, L1, S0, L2, S1, ...  (in order, one at a time)
 *     compute              Ci starts when Li has landed and its engines are
 *                          free; inside Ci an engine change waits for the
 *                          previous engine (the emitter's hand-over);
 *     store Si             waits for Ci (a tile without stores leaves
 *                          the emitter's nop, which waits all the same).
 *   each DMA is one flow whose work on a server is the sum over its bursts
 *   (dma.burst_bytes) of its bytes there at that server's bandwidth: the
 *   DRAM channel(s), the cluster's NoC link, the DMA port of every LMEM
 *   end's core (bk_flow.c computes it, memoised exactly per end). Servers
 *   are shared equally among the flows on them (processor sharing, as in
 *   the simulator, docs/timing.md); a flow is done when done on every
 *   server and its instruction completes latency + issue
 *   cycles later. Not modelled: the simulator's burst-order correction and
 *   ghost flows, LMEM bank conflicts with matrix/vector instructions. The
 *   layer ends with the barrier.
 * Guarantees: est_cycles (first instruction to barrier release), est_compute
 *   (max over cores of the busiest compute engine) and est_dma (max over
 *   cores of DMA engine busy time).
 *   bk_cost_group_bounded stops as soon as the estimate is known to exceed
 *   a bound (an event at time t means some DMA completes at or after t), so
 *   a tile search can drop a candidate worse than its best so far early.
 * Why: the tile planner picks the tile shape with the lowest estimate, and
 *   `atoll compile --estimate` reports it per layer. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "compiler/target/target.h"
#include "isa/timing.h"

static uint64_t dma_bytes(const AtlInsn *in)
{
    uint64_t n = (uint64_t)isa_dtype_size(in->dtype);
    for (int d = 0; d < 4; d++) n *= in->shape[d];
    return n;
}

uint64_t bk_insn_cycles(const AtlChip *chip, const AtlInsn *in)
{
    if (in->op == ISA_OP_DMA_COPY || in->op == ISA_OP_DMA_FILL)
        return tim_dma_cycles(chip, in->dst_space, in->op == ISA_OP_DMA_FILL ? in->dst_space : in->src_space,
                              dma_bytes(in));
    if (isa_ops[in->op].format == ISA_FMT_DMA_GATHER)   /* gather and scatter */
        return tim_dma_cycles(chip, in->dst_space, in->src_space, dma_bytes(in)) +
               tim_gather_index_cycles(chip, in->src2_space, in->shape[1]);
    return tim_compute_cycles(chip, in);
}

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* One DMA of a core's queue. */
typedef struct CDma {
    AtlInsn in;
    int dep;           /* tile whose compute must be done first, -1 none */
    int loads_tile;    /* tile whose loads this completes, -1 none */
} CDma;

typedef struct CCore {
    CDma *q;
    int nq, capq;
    AtlInsn *cp;       /* compute instructions of all tiles, concatenated */
    int ncp, capcp;
    int *cp_first;     /* per local tile: first compute index; [n] = ncp */
    int n;             /* tiles */
    uint64_t *c_end;   /* per local tile; UINT64_MAX until computed */
    uint64_t *l_end;   /* per local tile: loads landed */
    int loaded, computed;
    int need_w;        /* waits for the cluster's multicast weights */
    /* replay state */
    int pos;           /* next DMA in q */
    int active;        /* a DMA flow is on its servers */
    uint64_t start, dma_free, busy_dma;
    uint64_t eng_free[ISA_NUM_ENGINES], busy[ISA_NUM_ENGINES];
    int nuse;          /* uses of the active flow not yet received */
    uint64_t lat;      /* latency + issue, counted after the flow */
} CCore;

static int q_push(CCore *k, const AtlInsn *in, int dep, int loads)
{
    if (k->nq == k->capq) {
        int nc = k->capq ? 2 * k->capq : 16;
        CDma *p = realloc(k->q, (size_t)nc * sizeof *p);
        if (!p) return -1;
        k->q = p;
        k->capq = nc;
    }
    k->q[k->nq++] = (CDma){*in, dep, loads};
    return 0;
}

static int cp_push(CCore *k, const AtlInsn *in)
{
    if (k->ncp == k->capcp) {
        int nc = k->capcp ? 2 * k->capcp : 16;
        AtlInsn *p = realloc(k->cp, (size_t)nc * sizeof *p);
        if (!p) return -1;
        k->cp = p;
        k->capcp = nc;
    }
    k->cp[k->ncp++] = *in;
    return 0;
}

/* Compute timeline of local tile i once its loads landed at t. */
static void run_compute(const AtlChip *ch, CCore *k, int i, uint64_t t)
{
    uint64_t end = t;
    int prev = -1;
    for (int j = k->cp_first[i]; j < k->cp_first[i + 1]; j++) {
        int eng = isa_ops[k->cp[j].op].engine;
        if (eng == ISA_ENGINE_ANY) eng = ISA_ENGINE_VEC;
        uint64_t start = k->eng_free[eng];
        if (j == k->cp_first[i] || eng != prev) start = max64(start, end);
        uint64_t cyc = tim_compute_cycles(ch, &k->cp[j]);
        end = start + cyc;
        k->eng_free[eng] = end;
        k->busy[eng] += cyc;
        prev = eng;
    }
    k->c_end[i] = end;
}

/* Computes every loaded tile whose inputs (and resident weights) are in. */
static void advance(const AtlChip *ch, CCore *k, uint64_t wdone, int wknown)
{
    while (k->computed < k->loaded && (!k->need_w || wknown)) {
        uint64_t t = k->l_end[k->computed];
        if (k->need_w) t = max64(t, wdone);
        run_compute(ch, k, k->computed, t);
        k->computed++;
    }
}

/* The DMA at the head of core's queue finished at done: its tile's loads
 * (or the cluster's multicast weights, loads_tile -2) are in, so the
 * computes waiting for them run; the queue moves on. */
static void dma_finished(const AtlChip *ch, CCore *ks, int core, uint64_t done, uint64_t *wdone, int *wknown)
{
    CCore *k = &ks[core];
    int cpc = ch->cores_per_cluster, cl = core / cpc, lt = k->q[k->pos].loads_tile;
    k->dma_free = done;
    if (lt >= 0) { k->l_end[lt] = done; k->loaded = lt + 1; }
    if (lt == -2) {
        wdone[cl] = done;
        wknown[cl] = 1;
        for (int j = 0; j < cpc; j++) advance(ch, &ks[cl * cpc + j], done, 1);
    } else advance(ch, k, wdone[cl], wknown[cl]);
    k->pos++;
}

static int build_core(BkCtx *c, BkGroup *g, int core, CCore *k, BkCode *code, AtlErr *e)
{
    int n = 0;
    for (int t = 0; t < g->ntiles; t++) if (g->tile_core[t] == core) n++;
    k->n = n;
    k->cp_first = calloc((size_t)n + 1, sizeof *k->cp_first);
    k->c_end = calloc((size_t)n + 1, sizeof *k->c_end);
    k->l_end = calloc((size_t)n + 1, sizeof *k->l_end);
    if (!k->cp_first || !k->c_end || !k->l_end) return atl_fail(e, "out of memory in the cost model");
    for (int i = 0; i <= n; i++) k->c_end[i] = UINT64_MAX;
    int li = 0, wk[2] = {-1, -1};
    /* per local tile: loads (possibly skipped), computes, stores; queue order L0, L1, S0, L2, S1, ... */
    AtlInsn *st_all = NULL;
    int *st_first = calloc((size_t)n + 1, sizeof *st_first), nst = 0, capst = 0;
    if (!st_first) return atl_fail(e, "out of memory in the cost model");
    int rc = -1;
    for (int t = 0; t < g->ntiles; t++) {
        if (g->tile_core[t] != core) continue;
        int s = li % 2;
        bk_code_reset(code);
        if (g->gen(c, g, t, g->slot_off + (uint64_t)s * g->slot_size, code, e)) goto done;
        if (code->oom) { atl_fail(e, "out of memory in the cost model"); goto done; }
        if (g->direct) {
            for (int j = 0; j < code->nst; j++) if (q_push(k, &code->st[j], -1, -1)) goto oom;
            k->cp_first[li + 1] = k->ncp;
            li++;
            continue;
        }
        int key = g->tile_wkey[t];
        int skip = key >= 0 && wk[s] == key;
        wk[s] = key;
        int last = -1;
        for (int j = 0; j < code->nld; j++) if (!(skip && code->ld_w[j])) last = j;
        /* loads of tile li go into the queue right before the stores of tile li-1 */
        for (int j = 0; j < code->nld; j++) {
            if (skip && code->ld_w[j]) continue;
            if (q_push(k, &code->ld[j], -1, j == last ? li : -1)) goto oom;
        }
        if (last < 0) {
            AtlInsn nop;
            memset(&nop, 0, sizeof nop);
            nop.op = ISA_OP_NOP;
            if (q_push(k, &nop, -1, li)) goto oom;
        }
        if (li >= 1 && st_first[li] == st_first[li - 1]) {
            /* a tile without stores (a K chunk before the last): the
             * emitter's nop in its place still waits for its compute */
            AtlInsn nop;
            memset(&nop, 0, sizeof nop);
            nop.op = ISA_OP_NOP;
            if (q_push(k, &nop, li - 1, -1)) goto oom;
        }
        if (li >= 1) for (int j = st_first[li - 1]; j < st_first[li]; j++)
            if (q_push(k, &st_all[j], j == st_first[li - 1] ? li - 1 : -1, -1)) goto oom;
        for (int j = 0; j < code->ncp; j++) if (cp_push(k, &code->cp[j])) goto oom;
        k->cp_first[li + 1] = k->ncp;
        for (int j = 0; j < code->nst; j++) {
            if (nst == capst) {
                int nc = capst ? 2 * capst : 16;
                AtlInsn *p = realloc(st_all, (size_t)nc * sizeof *p);
                if (!p) goto oom;
                st_all = p;
                capst = nc;
            }
            st_all[nst++] = code->st[j];
        }
        st_first[li + 1] = nst;
        li++;
    }
    if (!g->direct && n > 0) {
        for (int j = st_first[n - 1]; j < st_first[n]; j++)
            if (q_push(k, &st_all[j], j == st_first[n - 1] ? n - 1 : -1, -1)) goto oom;
        if (st_first[n] == st_first[n - 1]) {
            AtlInsn nop;
            memset(&nop, 0, sizeof nop);
            nop.op = ISA_OP_NOP;
            if (q_push(k, &nop, n - 1, -1)) goto oom;
        }
    }
    rc = 0;
    goto done;
oom:
    atl_fail(e, "out of memory in the cost model");
done:
    free(st_all);
    free(st_first);
    return rc;
}

int bk_cost_group(BkCtx *c, BkGroup *g, AtlErr *e)
{
    return bk_cost_group_bounded(c, g, UINT64_MAX, e) < 0 ? -1 : 0;
}

int bk_cost_group_bounded(BkCtx *c, BkGroup *g, uint64_t bound, AtlErr *e)
{
    const AtlChip *ch = c->chip;
    int nc = c->ncores, rc = -1;
    BkCode code;
    memset(&code, 0, sizeof code);
    CCore *ks = calloc((size_t)nc, sizeof *ks);
    int *nflows = NULL;  /* active flows per server */
    double *share = NULL; /* per server: service each of its flows got in the last step */
    double *by_n = NULL;  /* dt / n for the flow counts n met in this step */
    uint64_t *by_n_stamp = NULL, *sv_stamp = NULL, stamp = 0; /* stamp: the current step */
    int *done_sv = NULL, *fin = NULL;     /* servers left in this step; cores whose flow finished */
    int *u_sv = NULL, *u_core = NULL, nu = 0; /* uses of the active flows */
    double *u_rem = NULL;
    BkFlowPlanner *fp = bk_flow_new(ch, e);
    if (!fp) goto done;
    int nsv = bk_flow_servers(fp);
    size_t maxu = (size_t)nsv * (size_t)nc;  /* each core has at most one flow, on distinct servers */
    nflows = calloc((size_t)nsv, sizeof *nflows);
    share = calloc((size_t)nsv, sizeof *share);
    by_n = calloc((size_t)nc + 1, sizeof *by_n);
    by_n_stamp = calloc((size_t)nc + 1, sizeof *by_n_stamp);
    sv_stamp = calloc((size_t)nsv, sizeof *sv_stamp);
    done_sv = calloc(maxu, sizeof *done_sv);
    fin = calloc((size_t)nc, sizeof *fin);
    u_sv = calloc(maxu, sizeof *u_sv);
    u_core = calloc(maxu, sizeof *u_core);
    u_rem = calloc(maxu, sizeof *u_rem);
    if (!ks || !nflows || !share || !by_n || !by_n_stamp || !sv_stamp || !done_sv || !fin || !u_sv || !u_core || !u_rem) {
        atl_fail(e, "out of memory in the cost model");
        goto done;
    }
    uint64_t *wdone = calloc((size_t)ch->clusters, sizeof *wdone);
    int *wknown = calloc((size_t)ch->clusters, sizeof *wknown);
    if (!wdone || !wknown) { free(wdone); free(wknown); atl_fail(e, "out of memory in the cost model"); goto done; }
    if (g->mcast) {
        int cpc = ch->cores_per_cluster;
        for (int cl = 0; cl < ch->clusters; cl++) {
            uint32_t m = bk_cluster_mask(c, g, cl);
            if (!m) { wknown[cl] = 1; continue; }
            bk_code_reset(&code);
            if (g->prologue(c, g, &code, e)) { free(wdone); free(wknown); goto done; }
            CCore *lead = &ks[cl * cpc + bk_lowest_bit(m)];
            for (int i = 0; i < code.nst; i++) {
                AtlInsn in = code.st[i];
                in.mask = m;
                if (q_push(lead, &in, -1, i == code.nst - 1 ? -2 : -1)) { free(wdone); free(wknown); atl_fail(e, "out of memory"); goto done; }
            }
            for (int j = 0; j < cpc; j++) if (m >> j & 1) ks[cl * cpc + j].need_w = 1;
        }
    }
    for (int core = 0; core < nc; core++)
        if (build_core(c, g, core, &ks[core], &code, e)) { free(wdone); free(wknown); goto done; }
    /* replay: processor sharing. Each server divides its time equally
     * among the flows on it; a flow is done when it has received its work
     * on every server, and its instruction completes latency + issue
     * cycles later. Events: flow starts and per-server completions. The
     * uses of all active flows are one list (server, work left, core); the
     * order of uses never matters (the next event is a minimum, and each
     * use's update is its own). */
    double t = 0;
    for (;;) {
        int cs = -1;
        double ts = INFINITY, tc = INFINITY;
        for (int u = 0; u < nu; u++) {
            double f = t + u_rem[u] * nflows[u_sv[u]];
            if (f < tc) tc = f;
        }
        for (int core = 0; core < nc; core++) {
            CCore *k = &ks[core];
            if (k->active || k->pos >= k->nq) continue;
            const CDma *d = &k->q[k->pos];
            double r = (double)k->dma_free;
            if (d->dep >= 0) r = k->c_end[d->dep] == UINT64_MAX ? INFINITY : fmax(r, (double)k->c_end[d->dep]);
            if (r < ts) { ts = r; cs = core; }
        }
        if (ts == INFINITY && tc == INFINITY) break;
        double next = fmin(ts, tc);
        if (next < t) next = t;
        /* something completes at or after `next`, so est_cycles is at least this */
        uint64_t at_least = (uint64_t)ceil(next - 1e-6) + (uint64_t)ch->barrier_cycles;
        if (bound != UINT64_MAX && at_least > bound) {
            g->est_cycles = at_least;
            g->est_compute = g->est_dma = 0;
            free(wdone);
            free(wknown);
            rc = 1;
            goto done;
        }
        double dt = next - t;
        stamp++;
        t = next;
        /* each use gets its server's share of dt (dt / flows there, computed
         * once per server and flow count); a use whose work is received
         * leaves the list, and its server once every share is handed out */
        int ndone = 0, nfin = 0;
        for (int u = 0; u < nu;) {
            int sv = u_sv[u];
            if (dt > 0) {
                if (sv_stamp[sv] != stamp) {
                    int n = nflows[sv];
                    if (by_n_stamp[n] != stamp) { by_n[n] = dt / n; by_n_stamp[n] = stamp; }
                    share[sv] = by_n[n];
                    sv_stamp[sv] = stamp;
                }
                u_rem[u] -= share[sv];
            }
            if (u_rem[u] <= 1e-6) {
                done_sv[ndone++] = sv;
                if (--ks[u_core[u]].nuse == 0) fin[nfin++] = u_core[u];
                nu--;
                u_sv[u] = u_sv[nu];
                u_rem[u] = u_rem[nu];
                u_core[u] = u_core[nu];
            } else u++;
        }
        for (int j = 0; j < ndone; j++) nflows[done_sv[j]]--;
        /* finished flows in core order */
        for (int j = 1; j < nfin; j++)
            for (int i = j; i > 0 && fin[i - 1] > fin[i]; i--) { int x = fin[i]; fin[i] = fin[i - 1]; fin[i - 1] = x; }
        for (int j = 0; j < nfin; j++) {
            int core = fin[j];
            CCore *k = &ks[core];
            k->active = 0;
            uint64_t done = (uint64_t)ceil(t - 1e-6) + k->lat;
            k->busy_dma += done - k->start;
            dma_finished(ch, ks, core, done, wdone, wknown);
        }
        if (cs >= 0 && ts <= t) {
            CCore *k = &ks[cs];
            const AtlInsn *in = &k->q[k->pos].in;
            k->start = (uint64_t)ceil(t - 1e-6);
            k->nuse = 0;
            if (in->op != ISA_OP_NOP) {
                BkFlowPlan fl;
                if (bk_flow_plan(fp, cs, in, BK_FLOW_MEMO, &fl, e)) { free(wdone); free(wknown); goto done; }
                for (int u = 0; u < fl.nuse; u++) {
                    u_sv[nu] = fl.use[u].server;
                    u_rem[nu] = (double)fl.use[u].work;
                    u_core[nu++] = cs;
                    nflows[fl.use[u].server]++;
                }
                k->nuse = fl.nuse;
                k->lat = fl.lat;
            }
            if (k->nuse > 0) { k->active = 1; continue; }
            /* nothing to move: done at once (a nop), or after the fixed costs */
            uint64_t done = k->start + (in->op == ISA_OP_NOP ? 0 : k->lat);
            dma_finished(ch, ks, cs, done, wdone, wknown);
        }
    }
    free(wdone);
    free(wknown);
    uint64_t worst = 0, wcomp = 0, wdma = 0;
    for (int core = 0; core < nc; core++) {
        CCore *k = &ks[core];
        worst = max64(worst, k->dma_free);
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) worst = max64(worst, k->eng_free[eng]);
        wcomp = max64(wcomp, max64(k->busy[ISA_ENGINE_MAT], k->busy[ISA_ENGINE_VEC]));
        wdma = max64(wdma, k->busy_dma);
    }
    g->est_cycles = worst + (uint64_t)ch->barrier_cycles;
    g->est_compute = wcomp;
    g->est_dma = wdma;
    rc = 0;
done:
    for (int core = 0; ks && core < nc; core++) {
        free(ks[core].q); free(ks[core].cp); free(ks[core].cp_first); free(ks[core].c_end); free(ks[core].l_end);
    }
    free(ks);
    free(nflows);
    free(share);
    free(by_n);
    free(by_n_stamp);
    free(sv_stamp);
    free(done_sv);
    free(fin);
    free(u_sv);
    free(u_core);
    free(u_rem);
    bk_flow_free(fp);
    bk_code_free(&code);
    return rc;
}
