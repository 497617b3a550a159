/* cost.c - the cost model: estimated cycles of a schedule segment.
 *
 * Reads: a segment of the schedule (schedule/schedule.h) and the chip.
 *   Every duration comes from the isa/timing.h formulas the simulator
 *   uses: tim_compute_cycles for mm/conv/vector ops, tim_occupancy with
 *   the DRAM channel, NoC link and DMA port bandwidths for each DMA burst,
 *   tim_dma_path_latency, dma.issue_cycles.
 * Does: walks every core's time-step table (bk_sched_table, the one the
 *   emitter walks: same tiles, slots, weight skipping and sync) and
 *   replays all cores together, following the actions' semaphores:
 *     DMA queue of a core  its DMA actions' instructions in table order,
 *                          one at a time; an instruction that waits on a
 *                          semaphore starts once it has been signalled;
 *     compute              a compute action starts when the semaphore it
 *                          waits on (its loads, or the multicast weights
 *                          for the matrix-stream WAIT; a DMA-stream WAIT
 *                          is a nop in the DMA queue) has been signalled
 *                          and its engines are free; inside it an engine
 *                          change waits for the previous engine (the
 *                          emitter's hand-over); an action without
 *                          instructions completes when its wait is met;
 *                          the matrix and vector steps of a core issue in
 *                          time order, each taking the LMEM banks its
 *                          operands touch (as the simulator does): a step
 *                          waits for banks an earlier one holds and lasts
 *                          at least their occupancy;
 *     signals              at the completion of the action's last
 *                          instruction (and of an MCAST's instructions
 *                          carrying their own, a gather piece's flag); a
 *                          multicast's on every core of its mask. Each semaphore is waited on by one queue,
 *                          so its k-th wait takes its k-th signal.
 *   Each DMA is one flow whose work on a server is the sum over its bursts
 *   (dma.burst_bytes) of its bytes there at that server's bandwidth: the
 *   DRAM channel(s), the cluster's NoC link, the DMA port of every LMEM
 *   end's core (flow.c computes it, memoised exactly per end; a server
 *   both ends use carries the larger end). With `[dram] model = banked`
 *   the DRAM's servers are each channel's buses, ranks and banks, and a
 *   DMA is priced with the same DMA of the cores that issue it about
 *   together (siblings(): banked.c merges their requests). Servers are shared as the
 *   simulator shares them (share.c): equally among the flows on them,
 *   bursts delivered in the order of their fluid finish, ghosts; a flow
 *   is done when delivered on every server, and its instruction completes
 *   latency + issue cycles later. The segment ends with its barrier, and
 *   every engine of it starts at the previous barrier's release, in core
 *   order for equal times, as the simulator releases them.
 * Guarantees: est_cycles (first instruction to barrier release),
 *   est_compute (max over cores of the busiest compute engine),
 *   est_dma (max over cores of DMA engine busy time) and est_rd, est_wr
 *   (the DRAM bytes of every DMA the replay starts, counted as the
 *   simulator counts them) of the segment.
 *   bk_cost_segment with a bound stops as soon as the estimate is known
 *   to exceed it (an event at time t means some DMA completes at or after
 *   t; a core's compute engine is busy until its last issued step ends
 *   plus the cycles of the steps queued behind it), so a shape search can
 *   drop a candidate worse than its best so far early; each core's
 *   queues are built from its table as the replay reaches them
 *   (build_more), so such a candidate never generates the code of the
 *   tiles it did not reach. The DMA pricer is the context's
 *   (BkCtx.flow, its memo kept over the whole compile) when it has one,
 *   and so are the replay's buffers (bk_flow_workspace: reset, not
 *   regrown, for every candidate). The next event is found from each
 *   core's next times, kept and recomputed for the cores an event touched
 *   (CEvents).
 * Why: the group search picks tile shapes by it, and `atoll compile
 *   --estimate` reports it per layer. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "compiler/cost/cost.h"
#include "compiler/cost/share.h"
#include "compiler/cost/banked.h"
#include "compiler/cost/memo.h"
#include "compiler/cost/genkey.h"
#include "compiler/cost/lanes.h"
#include "isa/operands.h"
#include "isa/timing.h"

uint64_t bk_insn_cycles(const AtlChip *chip, const AtlInsn *in)
{
    if (in->op == ISA_OP_DMA_COPY || in->op == ISA_OP_DMA_FILL)
        return tim_dma_cycles(chip, in->dst_space, in->op == ISA_OP_DMA_FILL ? in->dst_space : in->src_space,
                              isa_shape_bytes(in));
    if (isa_ops[in->op].format == ISA_FMT_DMA_GATHER)   /* gather and scatter */
        return tim_dma_cycles(chip, in->dst_space, in->src_space, isa_shape_bytes(in)) +
               tim_gather_index_cycles(chip, in->src2_space, in->shape[1]);
    return tim_compute_cycles(chip, in);
}

void bk_insn_dram_bytes(const AtlInsn *in, uint64_t *rd, uint64_t *wr)
{
    if (isa_ops[in->op].engine != ISA_ENGINE_DMA || in->op == ISA_OP_NOP) return;
    uint64_t n = isa_shape_bytes(in);
    if (in->dst_space == ISA_SPACE_DRAM) *wr += n;
    if (in->op != ISA_OP_DMA_FILL && in->src_space == ISA_SPACE_DRAM) *rd += n;
}

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* One DMA instruction of a core's queue. */
typedef struct CDma {
    AtlInsn in;
    int8_t wait, signal;   /* semaphores, -1 none */
    uint8_t kind;          /* the action's BkActKind */
    uint32_t mask;         /* a multicast's signal goes to these cores of the cluster (0: this core) */
    int ord;               /* how many DMAs of actions of its kind the core queued before it */
} CDma;

#define NKINDS (BK_ACT_BARRIER + 1)

/* One compute action: its instructions cp[first, end). */
typedef struct CComp {
    int first, end;
    int8_t wait, signal;
    uint8_t nop_eng;       /* 0, or 1 + the engine of a lone nop (one step): a WAIT (the matrix
                              stream idles until its semaphore) or a tile-start hand-over */
    /* replay */
    int pos;               /* steps done (instructions, or the WAIT's one) */
    uint64_t ready;        /* its wait was met at */
    uint64_t prev_end;     /* end of its step pos - 1 */
} CComp;

/* Signal times of one semaphore of a core, and how many were consumed. */
typedef struct CSem {
    uint64_t *t;
    int n, cap, used;
} CSem;

typedef struct CCore {
    CDma *q;
    int nq, capq;
    int *at[NKINDS];   /* per action kind: queue position of its ord-th DMA */
    int nat[NKINDS], capat[NKINDS];
    AtlInsn *cp;       /* compute instructions of all actions, concatenated */
    int ncp, capcp;
    CComp *comp;
    int ncomp, capcomp;
    int opened;        /* actions [0, opened) had their wait met */
    int loaded_by[2];  /* per slot, the engine whose compute last waited for its loads (bk_sched_handover) */
    int next_act[ISA_NUM_ENGINES]; /* no action before it has a step left on the engine */
    int cand_eng;      /* the engine of the next compute step to issue, -1 none */
    int cand_act;      /* its action */
    uint64_t cand_t;   /* its issue time */
    CSem sem[BK_SEMS_USED];
    /* replay state */
    int pos;           /* next DMA in q */
    int active;        /* a DMA flow is on its servers */
    uint64_t start, dma_free, busy_dma;
    uint64_t eng_free[ISA_NUM_ENGINES], busy[ISA_NUM_ENGINES];
    uint64_t pend[ISA_NUM_ENGINES]; /* cycles of the steps queued and not issued, per engine, before LMEM waits */
    uint64_t *bank_free, banks_free; /* per LMEM bank (lmem.banks, cores of the segment), held by compute until */
    int ufirst, nuse;  /* the active flow's uses (share.c ids ufirst ..) */
    uint64_t due;      /* its projected completion */
    uint64_t rbanks, wbanks; /* banked DRAM: the banks its reads, writes use */
    uint64_t lat;      /* latency + issue, counted after the flow */
    /* the queues are built from the table as the replay needs them */
    BkTable tab;       /* the core's time-step table */
    BkWalk walk;       /* its code (two slots, the prologue) */
    int next;          /* tab.a[0, next) are in the queues */
} CCore;

#define GROW(v, n, cap)                                                              \
    ((n) < (cap) ? 0 : grow((void **)&(v), &(cap), sizeof *(v)))

static int grow(void **v, int *cap, size_t size)
{
    int nc = *cap ? 2 * *cap : 16;
    void *p = realloc(*v, (size_t)nc * size);
    if (!p) return -1;
    *v = p;
    *cap = nc;
    return 0;
}

static int q_push(CCore *k, const AtlInsn *in, int kind, int wait, int signal, uint32_t mask)
{
    if (GROW(k->q, k->nq, k->capq) || GROW(k->at[kind], k->nat[kind], k->capat[kind])) return -1;
    k->at[kind][k->nat[kind]] = k->nq;
    CDma *d = &k->q[k->nq++];   /* filled in place: no temporary of the instruction */
    d->in = *in;
    d->wait = (int8_t)wait;
    d->signal = (int8_t)signal;
    d->kind = (uint8_t)kind;
    d->mask = mask;
    d->ord = k->nat[kind]++;
    return 0;
}

static int comp_push(CCore *k, int first, int wait, int signal, int nop_eng)
{
    if (GROW(k->comp, k->ncomp, k->capcomp)) return -1;
    k->comp[k->ncomp++] = (CComp){first, k->ncp, (int8_t)wait, (int8_t)signal, (uint8_t)nop_eng, 0, 0, 0};
    return 0;
}

static int cp_push(CCore *k, const AtlInsn *in)
{
    if (GROW(k->cp, k->ncp, k->capcp)) return -1;
    k->cp[k->ncp++] = *in;
    return 0;
}

static int signal_at(CCore *k, int sem, uint64_t t)
{
    CSem *s = &k->sem[sem];
    if (GROW(s->t, s->n, s->cap)) return -1;
    s->t[s->n++] = t;
    return 0;
}

/* 1 and the time when semaphore sem has a signal for the next wait. */
static int signalled(const CCore *k, int sem, uint64_t *t)
{
    const CSem *s = &k->sem[sem];
    if (s->used >= s->n) return 0;
    *t = s->t[s->used];
    return 1;
}

/* The LMEM banks of compute instruction in, held from its start (at or
 * after t, once every bank it touches is free) for the cycles its bytes
 * take there, as the simulator reserves them (sim/mem.c
 * mem_lmem_reserve); *cyc becomes its duration, at least that long.
 * Returns the start. */
static uint64_t lmem_reserve(const AtlChip *ch, CCore *k, const AtlInsn *in, uint64_t t, uint64_t *cyc)
{
    IsaOperand ops[ISA_MAX_OPERANDS];
    uint64_t banks[4] = {0, 0, 0, 0}, rd, wr;
    int n = isa_operands(in, ops);
    for (int i = 0; i < n; i++)
        if (ops[i].end < 0) tim_lmem_span(ch, (uint64_t)ops[i].lo, (uint64_t)ops[i].hi, banks);
    tim_lmem_bytes(in, &rd, &wr);
    uint64_t occ = tim_lmem_occ(ch, banks, rd + wr), start = t;
    if (k->banks_free > t)
        for (int w = 0; w < 4; w++)
            for (uint64_t m = banks[w]; m; m &= m - 1) start = max64(start, k->bank_free[w * 64 + __builtin_ctzll(m)]);
    uint64_t until = start + occ;
    k->banks_free = max64(k->banks_free, until);
    for (int w = 0; w < 4; w++)
        for (uint64_t m = banks[w]; m; m &= m - 1) k->bank_free[w * 64 + __builtin_ctzll(m)] = until;
    if (occ > *cyc) *cyc = occ;
    return start;
}

/* Compute replay. The matrix and vector engines of a core each run their
 * steps in action order; a step issues when its engine is free and, for
 * the first step of an action, its wait was met, or, after a step on the
 * other engine, that step ended (the emitter's hand-over). Steps issue in
 * time order over both engines (issue time, then matrix first), as in the
 * simulator, because each takes the LMEM banks it touches
 * (lmem_reserve) and a later issue waits for them. */
static int steps(const CComp *a) { return a->nop_eng ? 1 : a->end - a->first; }

static int step_engine(const CCore *k, const CComp *a, int pos)
{
    if (a->nop_eng) return a->nop_eng - 1;
    int eng = isa_ops[k->cp[a->first + pos].op].engine;
    return eng == ISA_ENGINE_ANY ? ISA_ENGINE_VEC : eng;
}

/* 1 when action a has a step left on engine eng. */
static int has_step_on(const CCore *k, const CComp *a, int eng)
{
    for (int p = a->pos; p < steps(a); p++)
        if (step_engine(k, a, p) == eng) return 1;
    return 0;
}

/* An action completes: its signal goes out at `end`. */
static int action_done(CCore *k, const CComp *a, uint64_t end)
{
    return a->signal >= 0 ? signal_at(k, a->signal, end) : 0;
}

/* Opens every action whose wait is met, in order, and finds the next step
 * to issue (k->cand_*). */
static int comp_refresh(CCore *k)
{
    while (k->opened < k->ncomp) {
        CComp *a = &k->comp[k->opened];
        uint64_t t = 0;
        if (a->wait >= 0) {
            if (!signalled(k, a->wait, &t)) break;
            k->sem[a->wait].used++;
        }
        a->ready = t;
        k->opened++;
        if (!steps(a) && action_done(k, a, t)) return -1;
    }
    k->cand_eng = -1;
    k->cand_t = UINT64_MAX;
    for (int eng = ISA_ENGINE_MAT; eng <= ISA_ENGINE_VEC; eng++) {
        /* an opened action without a step left on eng never gets one */
        int i = k->next_act[eng];
        while (i < k->opened && !has_step_on(k, &k->comp[i], eng)) i++;
        k->next_act[eng] = i;
        if (i >= k->opened) continue;
        const CComp *a = &k->comp[i];
        if (step_engine(k, a, a->pos) != eng) continue;   /* its earlier step runs elsewhere first */
        uint64_t t = k->eng_free[eng];
        if (a->pos == 0) t = max64(t, a->ready);
        else if (step_engine(k, a, a->pos - 1) != eng) t = max64(t, a->prev_end);
        if (t < k->cand_t) {
            k->cand_t = t;
            k->cand_eng = eng;
            k->cand_act = i;
        }
    }
    return 0;
}

/* Issues core k's next compute step (k->cand_*). */
static int comp_issue(const AtlChip *ch, CCore *k)
{
    int eng = k->cand_eng;
    CComp *a = &k->comp[k->cand_act];
    uint64_t start = k->cand_t, end = start;
    if (a->nop_eng) {
        k->eng_free[eng] = max64(k->eng_free[eng], start);
    } else {
        const AtlInsn *in = &k->cp[a->first + a->pos];
        uint64_t cyc = tim_compute_cycles(ch, in);
        k->pend[eng] -= cyc;
        start = lmem_reserve(ch, k, in, start, &cyc);
        end = start + cyc;
        k->eng_free[eng] = end;
        k->busy[eng] += cyc;
    }
    a->prev_end = end;
    if (++a->pos == steps(a) && action_done(k, a, end)) return -1;
    return comp_refresh(k);
}

/* The DMA at the head of core's queue finished at done: its signal goes
 * out (to every core of a multicast's mask), the computes waiting for it
 * run; the queue moves on. */
static int dma_finished(const AtlChip *ch, CCore *ks, int core, uint64_t done)
{
    CCore *k = &ks[core];
    const CDma *d = &k->q[k->pos];
    k->dma_free = done;
    if (d->signal >= 0) {
        if (d->mask) {
            int cpc = ch->cores_per_cluster, base = core / cpc * cpc;
            for (int j = 0; j < cpc; j++)
                if (d->mask >> j & 1 && (signal_at(&ks[base + j], d->signal, done) || comp_refresh(&ks[base + j])))
                    return -1;
        } else if (signal_at(k, d->signal, done)) return -1;
    }
    if (comp_refresh(k)) return -1;
    k->pos++;
    return 0;
}

static AtlInsn nop_insn(void)
{
    AtlInsn n;
    memset(&n, 0, sizeof n);
    n.op = ISA_OP_NOP;
    return n;
}

/* Queues a DMA action's instructions (bk_action_dma; a nop when it has
 * none, as the emitter does), the wait on the first, the signal on the
 * last. */
static int push_dma(CCore *k, const BkCode *code, const BkAction *a)
{
    int n, first, last;
    const uint8_t *skip;
    const AtlInsn *ins = bk_action_dma(a, code, &n, &skip, &first, &last);
    if (last < 0) {
        AtlInsn nop = nop_insn();
        return q_push(k, &nop, a->kind, a->wait, a->signal, a->mask);
    }
    for (int j = first; j <= last; j++) {
        if (skip && skip[j]) continue;
        const AtlInsn *in = &ins[j];
        /* an MCAST's gather pieces signal too, to its mask (bk_band_gather_pieces) */
        int own = a->kind == BK_ACT_MCAST && in->signal ? in->signal - 1 : -1;
        if (q_push(k, in, a->kind, j == first ? a->wait : -1, j == last ? a->signal : own,
                   j == last || own >= 0 ? a->mask : 0))
            return -1;
        if (a->kind == BK_ACT_MCAST && in->dst_space == ISA_SPACE_LMEM) k->q[k->nq - 1].in.mask = a->mask;
    }
    return 0;
}

/* The emitter's hand-over at a tile's start (bk_sched_handover): two
 * lone nops, the engine that waited last signalling and the new one
 * waiting for that before its wait for the loads. */
static int loaded_handover(CCore *k, const BkCode *code, const BkAction *a)
{
    int eng = ISA_ENGINE_VEC, was;
    if (code->ncp) {
        eng = isa_ops[code->cp[0].op].engine;
        if (eng == ISA_ENGINE_ANY) eng = ISA_ENGINE_VEC;
    }
    int sem = bk_sched_handover(k->loaded_by, a, eng, &was);
    return sem >= 0 && (comp_push(k, k->ncp, -1, sem, was + 1) || comp_push(k, k->ncp, sem, -1, eng + 1)) ? -1 : 0;
}

/* Core k's next action of its table (k->tab.a[k->next]) into its
 * queues. */
static int build_step(BkCtx *c, const BkSegment *sg, int core, CCore *k, AtlErr *e)
{
    const BkAction *a = &k->tab.a[k->next++];
    if (a->kind == BK_ACT_BARRIER) {
        k->loaded_by[0] = k->loaded_by[1] = -1;
        return 0;
    }
    if (a->kind == BK_ACT_WAIT && a->engine == ISA_ENGINE_DMA) {
        AtlInsn nop = nop_insn();
        if (q_push(k, &nop, a->kind, a->wait, a->signal, 0)) goto oom;
        return 0;
    }
    if (a->kind == BK_ACT_WAIT) {
        if (comp_push(k, k->ncp, a->wait, a->signal, ISA_ENGINE_MAT + 1)) goto oom;
        return 0;
    }
    const BkCode *code = bk_walk_code(c, sg, &k->walk, a, core, e);
    if (!code) return -1;
    int rc = 0;
    if (a->kind == BK_ACT_COMPUTE && loaded_handover(k, code, a)) goto oom;
    if (a->kind == BK_ACT_COMPUTE) {
        int first = k->ncp;
        for (int j = 0; j < code->ncp && !rc; j++) {
            int eng = isa_ops[code->cp[j].op].engine;
            k->pend[eng == ISA_ENGINE_ANY ? ISA_ENGINE_VEC : eng] += tim_compute_cycles(c->chip, &code->cp[j]);
            rc = cp_push(k, &code->cp[j]);
        }
        if (!rc) rc = comp_push(k, first, a->wait, a->signal, 0);
    } else if (a->kind != BK_ACT_COPY || code->nst) rc = push_dma(k, code, a);
    if (rc) goto oom;
    return 0;
oom:
    return atl_fail(e, "out of memory in the cost model");
}

/* Builds core k's queues from its table until the replay has what it
 * looks at: a DMA at the head of the queue and a compute action not yet
 * opened (each as far as the table has one), the compute actions opened
 * as their waits are met (comp_refresh); with `all`, the whole table.
 * The replay then sees what it would with every queue built up front, so
 * a candidate the bound stops early never generates the rest of its code. */
static int build_more(BkCtx *c, const BkSegment *sg, int core, CCore *k, int all, AtlErr *e)
{
    while (k->next < k->tab.n && (all || k->pos >= k->nq || k->opened >= k->ncomp)) {
        int ncomp = k->ncomp;
        if (build_step(c, sg, core, k, e)) return -1;
        if (k->ncomp != ncomp && comp_refresh(k)) return atl_fail(e, "out of memory in the cost model");
    }
    return 0;
}

/* Core k's table; its queues start empty (build_more fills them). */
static int build_core(BkCtx *c, const BkSegment *sg, int core, CCore *k, AtlErr *e)
{
    if (bk_sched_table(c, sg, core, &k->tab, e)) return -1;
    if (!k->bank_free && !(k->bank_free = calloc((size_t)c->chip->lmem_banks, sizeof *k->bank_free)))
        return atl_fail(e, "out of memory in the cost model");
    return 0;
}

static int same_transfer(const AtlInsn *a, const AtlInsn *b)
{
    return a->op == b->op && a->dtype == b->dtype && a->dst_space == b->dst_space && a->src_space == b->src_space &&
           a->dst >> 32 == b->dst >> 32 && a->src >> 32 == b->src >> 32 &&
           !memcmp(a->shape, b->shape, sizeof a->shape) && !memcmp(a->dst_stride, b->dst_stride, sizeof a->dst_stride) &&
           !memcmp(a->src_stride, b->src_stride, sizeof a->src_stride);
}

/* The cores of the segment that issue the same DMA as core `core`'s at
 * queue position pos (the same instruction of the same action of their
 * tables: its kind and place among them) about when it starts at `now`,
 * in core order, it among them, with when each starts (start[]): what the
 * banked DRAM sees at once from cores in lock step. A core counts when
 * the DMA is in flight there, or next in its queue and ready (at
 * max(now, when its queue and semaphore let it start)), or next after the
 * one in flight there, its semaphore known (when that one is due). A core
 * done with it, further behind, or waiting on a compute not yet timed is
 * left out: its requests meet other traffic. */
static int siblings(const CCore *ks, const BkSegment *sg, int core, int pos, uint64_t now, const AtlInsn **part,
                    uint64_t *start)
{
    const CDma *d = &ks[core].q[pos];
    int n = 0;
    for (int j = sg->cores.first; j < sg->cores.first + sg->cores.count && n < BK_BANKED_MAXPART; j++) {
        if (j == core) { start[n] = now; part[n++] = &d->in; continue; }
        const CCore *o = &ks[j];
        if (d->ord >= o->nat[d->kind]) continue;
        int at = o->at[d->kind][d->ord];
        const CDma *x = &o->q[at];
        if (o->pos > at || o->pos < at - 1 || !same_transfer(&x->in, &d->in)) continue;
        uint64_t t, sig;
        if (o->pos == at && o->active) t = o->start;
        else {
            if (o->pos == at - 1 && !o->active) continue;   /* the one before has not started */
            t = o->pos == at ? max64(o->dma_free, now) : max64(o->due, now);
            if (x->wait >= 0) {
                /* its semaphore's next signal (the DMA in flight before it took its own) */
                if (!signalled(o, x->wait, &sig)) continue;
                t = max64(t, sig);
            }
        }
        start[n] = t;
        part[n++] = &x->in;
    }
    return n;
}

/* The times at which core k has something for the replay to do next
 * (UINT64_MAX: nothing): issue its next compute step (EV_ISSUE), check
 * its active flow's completion (EV_CHECK), start the DMA at the head of
 * its queue (EV_START). They change only with the core's own state, so
 * the replay recomputes them for the cores an event touched (the dirty
 * list) and keeps each kind's earliest core in a tournament tree: a node
 * holds the winner of its two children, the left one (lower cores) on
 * equal times, so the root is the first core of the least time, as a
 * scan in core order finds it. */
enum { EV_ISSUE, EV_CHECK, EV_START, EV_KINDS };

typedef struct CEvents {
    int nc, leaves;              /* cores; leaves: a power of two >= nc */
    uint64_t *t[EV_KINDS];       /* per leaf (UINT64_MAX beyond nc) */
    int *win[EV_KINDS];          /* tree nodes 1 .. 2 * leaves - 1: the winning leaf */
    uint8_t *dirty;
    int *list, nlist;
} CEvents;

static void ev_free(CEvents *v)
{
    for (int k = 0; k < EV_KINDS; k++) { free(v->t[k]); free(v->win[k]); }
    free(v->dirty);
    free(v->list);
    memset(v, 0, sizeof *v);
}

/* v for nc cores, every leaf at UINT64_MAX and every core dirty; its
 * buffers kept when it had nc cores already (-1 on OOM). */
static int ev_init(CEvents *v, int nc)
{
    if (v->nc != nc || !v->list) {
        ev_free(v);
        v->nc = nc;
        v->leaves = 1;
        while (v->leaves < nc) v->leaves *= 2;
        int L = v->leaves, ok = (v->dirty = malloc((size_t)L)) && (v->list = malloc((size_t)L * sizeof *v->list));
        for (int k = 0; k < EV_KINDS && ok; k++)
            ok = (v->t[k] = malloc((size_t)L * sizeof *v->t[k])) && (v->win[k] = malloc(2 * (size_t)L * sizeof *v->win[k]));
        if (!ok) { ev_free(v); return -1; }
    }
    int L = v->leaves;
    memset(v->dirty, 0, (size_t)L);
    v->nlist = 0;
    for (int k = 0; k < EV_KINDS; k++) {
        for (int i = 0; i < L; i++) { v->t[k][i] = UINT64_MAX; v->win[k][L + i] = i; }
        for (int n = L - 1; n >= 1; n--) v->win[k][n] = v->win[k][2 * n];
    }
    for (int i = 0; i < nc; i++) { v->dirty[i] = 1; v->list[v->nlist++] = i; }
    return 0;
}

static void ev_mark(CEvents *v, int core)
{
    if (!v->dirty[core]) { v->dirty[core] = 1; v->list[v->nlist++] = core; }
}

/* Leaf `core` of kind k's tree gets time t: the winners above it again
 * (nothing to do when the time is the same), up to the first node whose
 * winner stays another leaf (its time, so every node above, unchanged). */
static void ev_set(CEvents *v, int k, int core, uint64_t t)
{
    if (v->t[k][core] == t) return;
    v->t[k][core] = t;
    const uint64_t *tk = v->t[k];
    int *w = v->win[k];
    for (int n = (v->leaves + core) / 2; n >= 1; n /= 2) {
        int l = w[2 * n], r = w[2 * n + 1], x = tk[r] < tk[l] ? r : l;
        if (x == w[n] && x != core) break;
        w[n] = x;
    }
}

/* The first core of kind k's least time (-1: none) and that time. */
static int ev_first(const CEvents *v, int k, uint64_t *t)
{
    int i = v->win[k][1];
    *t = v->t[k][i];
    return *t == UINT64_MAX ? -1 : i;
}

/* Core k's next times into leaf `core` (its queues built as far as the
 * replay looks, build_more). */
static int next_events(BkCtx *c, const BkSegment *sg, int core, CCore *k, CEvents *v, AtlErr *e)
{
    if (k->next < k->tab.n && (k->pos >= k->nq || k->opened >= k->ncomp) && build_more(c, sg, core, k, 0, e)) return -1;
    uint64_t start = UINT64_MAX;
    if (!k->active && k->pos < k->nq) {
        const CDma *d = &k->q[k->pos];
        uint64_t sig;
        if (d->wait < 0) start = k->dma_free;
        else if (signalled(k, d->wait, &sig)) start = max64(k->dma_free, sig);
    }
    ev_set(v, EV_ISSUE, core, k->cand_eng >= 0 ? k->cand_t : UINT64_MAX);
    ev_set(v, EV_CHECK, core, k->active ? k->due : UINT64_MAX);
    ev_set(v, EV_START, core, start);
    return 0;
}

/* Marks the cores dma_finished touches when core's head DMA completes:
 * it, and the cores of a multicast's mask. */
static void touched_by_finish(const AtlChip *ch, const CCore *ks, int core, CEvents *v)
{
    const CDma *d = &ks[core].q[ks[core].pos];
    ev_mark(v, core);
    if (d->signal >= 0 && d->mask) {
        int cpc = ch->cores_per_cluster, base = core / cpc * cpc;
        for (int j = 0; j < cpc; j++)
            if (d->mask >> j & 1) ev_mark(v, base + j);
    }
}

/* Projected completion of core k's active flow: its last delivery on any
 * server (re-projected where flows joined since), then latency + issue. */
static uint64_t flow_due(BkShare *sh, const CCore *k)
{
    double last = (double)k->start;
    for (int j = 0; j < k->nuse; j++) {
        double f = bk_share_due(sh, k->ufirst + j);
        if (f > last) last = f;
    }
    double x = last - 1e-6;
    uint64_t c = x > 0 ? (uint64_t)x : 0;
    if ((double)c < x) c++; /* ceil */
    return c + k->lat;
}

static void core_free(CCore *k)
{
    free(k->q); free(k->cp); free(k->comp); free(k->bank_free);
    for (int a = 0; a < NKINDS; a++) free(k->at[a]);
    for (int s = 0; s < BK_SEMS_USED; s++) free(k->sem[s].t);
    bk_table_free(&k->tab);
    bk_walk_free(&k->walk);
}

/* Core k as calloc leaves it, but for its buffers (kept, emptied): the
 * same replay, without growing every queue again for every candidate. */
static void core_reset(CCore *k, int banks)
{
    CCore keep = *k;
    memset(k, 0, sizeof *k);
    k->q = keep.q; k->capq = keep.capq;
    for (int a = 0; a < NKINDS; a++) { k->at[a] = keep.at[a]; k->capat[a] = keep.capat[a]; }
    k->cp = keep.cp; k->capcp = keep.capcp;
    k->comp = keep.comp; k->capcomp = keep.capcomp;
    for (int s = 0; s < BK_SEMS_USED; s++) { k->sem[s].t = keep.sem[s].t; k->sem[s].cap = keep.sem[s].cap; }
    k->tab = keep.tab;
    k->tab.n = 0;
    k->walk = keep.walk;
    if ((k->bank_free = keep.bank_free)) memset(k->bank_free, 0, (size_t)banks * sizeof *k->bank_free);
    k->loaded_by[0] = k->loaded_by[1] = -1;
}

/* The replay's cores and servers, kept with the context's DMA pricer
 * between calls (bk_flow_workspace) so that pricing candidate after
 * candidate reuses their buffers; every call starts from their reset. */
typedef struct CWork {
    CCore *ks;
    int nks;
    BkShare *sh;
    CEvents ev;
    uint64_t gen_asks, gen_hits;   /* generator-key lookups and their hits (bk_cost_gen_stats) */
    uint64_t floor_asks, floor_hits; /* floors taken, and the replays they spared (bk_cost_floor_stats) */
} CWork;

static void work_free(void *v)
{
    CWork *w = v;
    if (!w) return;
    for (int i = 0; i < w->nks; i++) core_free(&w->ks[i]);
    free(w->ks);
    bk_share_free(w->sh);
    ev_free(&w->ev);
    free(w);
}

/* w ready for a segment on nc cores and nsv servers (-1 on OOM). */
static int work_ready(CWork *w, int nc, int nsv, int banks)
{
    if (w->nks != nc) {
        for (int i = 0; i < w->nks; i++) core_free(&w->ks[i]);
        free(w->ks);
        w->nks = 0;
        if (!(w->ks = calloc((size_t)nc, sizeof *w->ks))) return -1;
        w->nks = nc;
    }
    for (int i = 0; i < nc; i++) core_reset(&w->ks[i], banks);
    if (w->sh) bk_share_reset(w->sh);
    else if (!(w->sh = bk_share_new(nsv))) return -1;
    return 0;
}

/* Segments priced once per compile (docs/backend.md, "Segments priced
 * once per compile"). Once every queue is built, the replay reads only
 * the chip, the segment's cores and each core's queues (its DMAs with
 * their semaphores, kinds and masks, its compute instructions and
 * actions); those are its fingerprint: two 64-bit hashes of all of them
 * (an instruction's layer id aside: nothing prices it) and the queues'
 * sizes, a memo key of SEG_KEY words. Its value: SEG_DONE, the highest
 * lower bound the replay passed (seg_find) and the five estimates, or
 * SEG_STOPPED, the bound that stopped the replay and the estimate it
 * stopped at. The same memo holds generator keys (genkey.h: BK_GEN_KEY
 * words, another length) with the same values. */
enum { SEG_KEY = 6, SEG_VAL = 7, SEG_DONE = 0, SEG_STOPPED = 1 };

static void seg_key(const AtlChip *ch, const BkSegment *sg, const CCore *ks, uint64_t key[SEG_KEY])
{
    Lanes h = lanes_start();
    uint64_t nq = 0, ncp = 0;
    lanes_bytes(&h, ch, sizeof *ch);
    int cores[2] = {sg->cores.first, sg->cores.count};
    lanes_bytes(&h, cores, sizeof cores);
    for (int core = sg->cores.first; core < sg->cores.first + sg->cores.count; core++) {
        const CCore *k = &ks[core];
        int n[3] = {k->nq, k->ncp, k->ncomp};
        lanes_bytes(&h, n, sizeof n);
        for (int i = 0; i < k->nq; i++) {
            const CDma *d = &k->q[i];
            AtlInsn in = d->in;
            in.layer = 0;
            int64_t f[5] = {d->wait, d->signal, d->kind, d->mask, d->ord};
            lanes_bytes(&h, &in, sizeof in);
            lanes_bytes(&h, f, sizeof f);
        }
        for (int i = 0; i < k->ncp; i++) {
            AtlInsn in = k->cp[i];
            in.layer = 0;
            lanes_bytes(&h, &in, sizeof in);
        }
        for (int i = 0; i < k->ncomp; i++) {
            const CComp *a = &k->comp[i];
            int64_t f[5] = {a->first, a->end, a->wait, a->signal, a->nop_eng};
            lanes_bytes(&h, f, sizeof f);
        }
        nq += (uint64_t)k->nq;
        ncp += (uint64_t)k->ncp;
    }
    lanes_end(&h, key);
    key[2] = nq;
    key[3] = ncp;
    key[4] = (uint64_t)sg->cores.first;
    key[5] = (uint64_t)sg->cores.count;
}

/* The price kept under key, as the replay with `bound` would give it: 0
 * (done), 1 (stopped: est_cycles above the bound) or -1 when the memo
 * cannot tell (not kept, or stopped under a lower bound). A done price
 * keeps the highest lower bound its replay passed (`reach`: the replay
 * with a bound stops exactly when the bound is below it), so it answers
 * 0 with every estimate, or 1 with reach as est_cycles (the replay's is
 * above the bound and at most reach): callers read a stopped call's
 * est_cycles only against its bound. */
static int seg_find(BkMemo *m, const uint64_t *key, int nkey, uint64_t bound, BkSegment *sg)
{
    int nv;
    const uint64_t *v = m ? bk_memo_find(m, key, nkey, &nv) : NULL;
    if (!v || nv != SEG_VAL) return -1;
    if (v[0] == SEG_STOPPED && bound > v[1]) return -1;
    int stopped = v[0] == SEG_STOPPED || v[1] > bound;
    sg->est_cycles = v[0] == SEG_DONE && stopped ? v[1] : v[2];
    sg->est_compute = stopped ? 0 : v[3];
    sg->est_dma = stopped ? 0 : v[4];
    sg->est_rd = stopped ? 0 : v[5];
    sg->est_wr = stopped ? 0 : v[6];
    return stopped;
}

/* The replay's price (rc 0 done, with the highest lower bound it passed,
 * reach; 1 stopped under bound) kept under key:
 * a new entry, or one that replaces a stopped price (the only kind
 * seg_find cannot use). Without memory it is simply not kept. */
static void seg_keep(BkMemo *m, const uint64_t *key, int nkey, uint64_t bound, uint64_t reach, int rc,
                     const BkSegment *sg)
{
    uint64_t v[SEG_VAL] = {rc ? SEG_STOPPED : SEG_DONE, rc ? bound : reach, sg->est_cycles, sg->est_compute, sg->est_dma,
                           sg->est_rd, sg->est_wr};
    int nv;
    const uint64_t *old = bk_memo_find(m, key, nkey, &nv);
    /* the memo's own value words (memo.h: valid until the next store) */
    if (old && nv == SEG_VAL) memcpy((uint64_t *)old, v, sizeof v);
    else if (!old) bk_memo_store(m, key, nkey, v, SEG_VAL);
}

/* A floor of the price a replay of the segment gives (its est_cycles when
 * it runs to its end), from its whole queues, without pricing a DMA: the
 * barrier plus the most of
 *   - a core's compute steps on one engine (an engine runs its steps one
 *     at a time, each at least its cycles: lmem_reserve only delays and
 *     lengthens them);
 *   - the DRAM bytes of the segment's copies at the chip's DRAM bandwidth,
 *     less two cycles for the doubles (flow.c puts each burst's bytes on
 *     the channels they fall in at a channel's bandwidth, rounded up, so
 *     the busiest channel has at least its share of the work; a copy from
 *     DRAM to DRAM counts once, as flow.c takes the larger end's work on
 *     a channel both ends use; share.c serves a channel one cycle of work
 *     per cycle, ghosts included, and the flow last in its order is
 *     delivered at its fluid finish, after all of it).
 * So a replay bounded below the floor stops, or ends above its bound; the
 * tile search, group formation and the prefetch read either as over. The
 * floor of some cores' queues is one of the whole segment's, so it is
 * taken action by action as the queues are built (CFloor: what they add
 * up to so far), and the building stops once it is above the bound. */
typedef struct CFloor { uint64_t most, bytes; } CFloor;

static uint64_t floor_of(const AtlChip *ch, const CFloor *f)
{
    double bpc = tim_dram_bytes_per_cycle(ch);
    uint64_t dram = bpc > 0 ? (uint64_t)((double)f->bytes / bpc) : 0;
    return max64(f->most, dram > 2 ? dram - 2 : 0) + (uint64_t)ch->barrier_cycles;
}

/* Core k's whole queues (as build_more with all), the floor f taken as
 * they grow: 1 (and *fl) once it is above bound, 0 built, -1 error. */
static int build_floor(BkCtx *c, const BkSegment *sg, int core, CCore *k, CFloor *f, uint64_t bound, uint64_t *fl,
                       AtlErr *e)
{
    const AtlChip *ch = c->chip;
    while (k->next < k->tab.n) {
        int ncomp = k->ncomp, nq = k->nq;
        if (build_step(c, sg, core, k, e)) return -1;
        if (k->ncomp != ncomp && comp_refresh(k)) return atl_fail(e, "out of memory in the cost model");
        f->most = max64(f->most, max64(k->pend[ISA_ENGINE_MAT], k->pend[ISA_ENGINE_VEC]));
        for (int i = nq; i < k->nq; i++) {
            const AtlInsn *in = &k->q[i].in;
            uint64_t n = in->op == ISA_OP_DMA_COPY ? isa_shape_bytes(in) : 0;
            f->bytes += in->src_space == ISA_SPACE_DRAM || in->dst_space == ISA_SPACE_DRAM ? n : 0;
        }
        if ((*fl = floor_of(ch, f)) > bound) return 1;
    }
    return 0;
}

static int cost_once(BkCtx *c, BkSegment *sg, uint64_t bound, AtlErr *e)
{
    const AtlChip *ch = c->chip;
    int nc = cfg_total_cores(ch), rc = -1, banked = ch->dram_model == CFG_DRAM_BANKED;
    CCore *ks = NULL;
    BkShare *sh = NULL;
    BkFlowPlanner *fp = c->flow ? c->flow : bk_flow_new(ch, e);
    if (!fp) goto done;
    void **slot = bk_flow_workspace(fp, work_free);
    if (!*slot) *slot = calloc(1, sizeof(CWork));
    CWork *w = *slot;
    if (!w || ev_init(&w->ev, nc) || work_ready(w, nc, bk_flow_servers(fp), ch->lmem_banks)) {
        atl_fail(e, "out of memory in the cost model");
        goto done;
    }
    CEvents ev = w->ev;   /* its buffers are w's (a copy: the replay's hot loop keeps it at hand) */
    ks = w->ks;
    sh = w->sh;
    /* a segment whose code has a generator key (genkey.h) is looked up
     * before any of its queues is built, and its replay kept there too */
    BkMemo *segs = banked ? NULL : bk_flow_segments(fp);
    uint64_t gkey[BK_GEN_KEY];
    int gen = segs && bk_gen_key(c, sg, gkey);
    w->gen_asks += (uint64_t)gen;
    if (gen && (rc = seg_find(segs, gkey, BK_GEN_KEY, bound, sg)) >= 0) {
        w->gen_hits++;
        goto done;
    }
    rc = -1;
    for (int sv = 0; sv < bk_flow_servers(fp); sv++) bk_share_set_ports(sh, sv, bk_flow_server_ports(fp, sv));
    for (int core = sg->cores.first; core < sg->cores.first + sg->cores.count; core++)
        if (build_core(c, sg, core, &ks[core], e)) goto done;
    for (int core = 0; core < nc; core++)
        if (comp_refresh(&ks[core])) goto oom;
    /* banked DRAM prices a DMA with the same DMA of the other cores'
     * queues (siblings): those are built whole. A pricer that keeps
     * segments (cost.h; flow model): a call without a bound builds them
     * whole too (its replay would) and takes a kept price; a replay that
     * runs to its end is kept */
    uint64_t key[SEG_KEY];
    /* a bounded call: its queues built whole, with their floor, and no
     * replay (nor the rest of its code) once the floor is above the bound
     * (docs/backend.md, "Segments priced once per compile"). Not with
     * banked DRAM (banked.c prices requests to banks and rows, not the
     * channels' bytes the floor counts) */
    int floor = !banked && bound != UINT64_MAX;
    int whole = banked || (segs && bound == UINT64_MAX);
    CFloor fs = {0, 0};
    w->floor_asks += (uint64_t)floor;
    for (int core = sg->cores.first; core < sg->cores.first + sg->cores.count; core++) {
        uint64_t fl = 0;
        int over = floor ? build_floor(c, sg, core, &ks[core], &fs, bound, &fl, e) : build_more(c, sg, core, &ks[core], whole, e);
        if (over < 0) goto done;
        if (over) {
            w->floor_hits++;
            sg->est_cycles = fl;
            sg->est_compute = sg->est_dma = sg->est_rd = sg->est_wr = 0;
            rc = 1;
            if (gen) seg_keep(segs, gkey, BK_GEN_KEY, bound, fl, rc, sg);
            goto done;
        }
    }
    if (segs && whole) {
        seg_key(ch, sg, ks, key);
        if ((rc = seg_find(segs, key, SEG_KEY, bound, sg)) >= 0) goto done;
        rc = -1;
    }
    /* replay, event by event: a DMA starts when its queue reaches it and
     * its wait is met (its flow joins its servers, share.c); it completes
     * at its projected delivery plus latency and issue, checked again
     * there because flows that joined since may have delayed it (as the
     * simulator's EV_DMA_CHECK). Checks go before starts at the same
     * time, lower cores first. */
    /* held: the latest time a core's compute engine is known to be busy
     * until (its issued steps end where they were timed, and the steps
     * queued behind them last at least their cycles), so est_cycles is at
     * least held + barrier; it only grows, and an event changes only the
     * cores it marks */
    uint64_t now = 0, rd = 0, wr = 0, held = 0, reach = 0;
    for (;;) {
        for (int i = 0; i < ev.nlist; i++) {
            int core = ev.list[i];
            CCore *k = &ks[core];
            ev.dirty[core] = 0;
            if (next_events(c, sg, core, k, &ev, e)) goto done;
            held = max64(held, max64(k->eng_free[ISA_ENGINE_MAT] + k->pend[ISA_ENGINE_MAT],
                                     k->eng_free[ISA_ENGINE_VEC] + k->pend[ISA_ENGINE_VEC]));
        }
        ev.nlist = 0;
        uint64_t tc, ts, tp;
        int cp = ev_first(&ev, EV_ISSUE, &tp), cc = ev_first(&ev, EV_CHECK, &tc), cs = ev_first(&ev, EV_START, &ts);
        if (cc < 0 && cs < 0 && cp < 0) break;
        uint64_t first = tc < ts ? tc : ts;
        uint64_t next = max64(tp < first ? tp : first, now);
        /* something completes at or after `next`, and a compute engine is busy until held */
        uint64_t at_least = max64(next, held) + (uint64_t)ch->barrier_cycles;
        reach = max64(reach, at_least);
        if (bound != UINT64_MAX && at_least > bound) {
            sg->est_cycles = at_least;
            sg->est_compute = sg->est_dma = sg->est_rd = sg->est_wr = 0;
            rc = 1;
            if (gen) seg_keep(segs, gkey, BK_GEN_KEY, bound, reach, rc, sg);
            goto done;
        }
        now = next;
        /* at one time: DMA completions (their signals), then DMA starts,
         * then compute issues */
        if (cp >= 0 && tp < first) {
            ev_mark(&ev, cp);
            if (comp_issue(ch, &ks[cp])) goto oom;
            continue;
        }
        if (cc >= 0 && tc <= ts) {
            CCore *k = &ks[cc];
            uint64_t due = flow_due(sh, k);
            ev_mark(&ev, cc);
            if (due > now) { k->due = due; continue; }
            for (int j = 0; j < k->nuse; j++) bk_share_leave(sh, k->ufirst + j);
            k->active = 0;
            k->busy_dma += now - k->start;
            touched_by_finish(ch, ks, cc, &ev);
            if (dma_finished(ch, ks, cc, now)) goto oom;
            continue;
        }
        CCore *k = &ks[cs];
        ev_mark(&ev, cs);
        const AtlInsn *in = &k->q[k->pos].in;
        if (k->q[k->pos].wait >= 0) k->sem[k->q[k->pos].wait].used++;
        k->start = now;
        k->nuse = 0;
        bk_insn_dram_bytes(in, &rd, &wr);
        if (in->op != ISA_OP_NOP) {
            BkFlowPlan fl;
            const AtlInsn *part[BK_BANKED_MAXPART];
            uint64_t pstart[BK_BANKED_MAXPART];
            BkFlowPeers peers = {part, pstart, 0, 0, 0};
            if (banked) {
                peers.npart = siblings(ks, sg, cs, k->pos, now, part, pstart);
                /* the other direction's requests of other transfers (a
                 * sibling's are in the merge) */
                for (int j = 0; j < nc; j++)
                    if (j != cs && ks[j].active && !same_transfer(&ks[j].q[ks[j].pos].in, in)) {
                        peers.rbanks |= ks[j].rbanks;
                        peers.wbanks |= ks[j].wbanks;
                    }
            }
            if (bk_flow_plan(fp, cs, in, &peers, BK_FLOW_MEMO, &fl, e)) goto done;
            for (int u = 0; u < fl.nuse; u++) {
                int id = bk_share_join(sh, fl.use[u].server, fl.use[u].work, fl.use[u].bursts, (double)now);
                if (id < 0) goto oom;
                if (u == 0) k->ufirst = id;
            }
            k->nuse = fl.nuse;
            k->lat = fl.lat;
            k->rbanks = fl.rbanks;
            k->wbanks = fl.wbanks;
        }
        if (k->nuse > 0) {
            k->active = 1;
            k->due = flow_due(sh, k);
            continue;
        }
        /* nothing to move: done at once (a nop), or after the fixed costs */
        uint64_t done = k->start + (in->op == ISA_OP_NOP ? 0 : k->lat);
        touched_by_finish(ch, ks, cs, &ev);
        if (dma_finished(ch, ks, cs, done)) goto oom;
    }
    uint64_t worst = 0, wcomp = 0, wdma = 0;
    for (int core = 0; core < nc; core++) {
        CCore *k = &ks[core];
        worst = max64(worst, k->dma_free);
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) worst = max64(worst, k->eng_free[eng]);
        wcomp = max64(wcomp, max64(k->busy[ISA_ENGINE_MAT], k->busy[ISA_ENGINE_VEC]));
        wdma = max64(wdma, k->busy_dma);
    }
    sg->est_cycles = worst + (uint64_t)ch->barrier_cycles;
    sg->est_compute = wcomp;
    sg->est_dma = wdma;
    sg->est_rd = rd;
    sg->est_wr = wr;
    rc = 0;
    if (segs) {
        if (!whole) seg_key(ch, sg, ks, key);   /* the replay reached every queue's end: all built */
        seg_keep(segs, key, SEG_KEY, bound, reach, rc, sg);
    }
    if (gen) seg_keep(segs, gkey, BK_GEN_KEY, bound, reach, rc, sg);
    goto done;
oom:
    atl_fail(e, "out of memory in the cost model");
done:
    if (fp != c->flow) bk_flow_free(fp);   /* and its workspace */
    return rc;
}

void bk_cost_gen_stats(BkFlowPlanner *p, uint64_t *asks, uint64_t *hits)
{
    const CWork *w = *bk_flow_workspace(p, work_free);
    *asks = w ? w->gen_asks : 0;
    *hits = w ? w->gen_hits : 0;
}

void bk_cost_floor_stats(BkFlowPlanner *p, uint64_t *asks, uint64_t *hits)
{
    const CWork *w = *bk_flow_workspace(p, work_free);
    *asks = w ? w->floor_asks : 0;
    *hits = w ? w->floor_hits : 0;
}

/* A gather that may go in pieces (bk_band_gather_pieces) is priced both
 * ways and the cheaper kept in BkLayer.gather_whole (equal: the pieces),
 * so the tile search compares each shape at its better way and the final
 * pricing leaves the layer as the emitter will walk it. */
int bk_cost_segment(BkCtx *c, BkSegment *sg, uint64_t bound, AtlErr *e)
{
    sg->layer->gather_whole = 0;
    int rc = cost_once(c, sg, bound, e);
    if (rc < 0 || bk_stage_pieces(c, sg) < 2) return rc;
    uint64_t cyc = sg->est_cycles, comp = sg->est_compute, dma = sg->est_dma, rd = sg->est_rd, wr = sg->est_wr;
    /* whole: kept only when below the pieces (and within the bound) */
    uint64_t b2 = rc == 0 && cyc - 1 < bound ? cyc - 1 : bound;
    sg->layer->gather_whole = 1;
    int rc2 = cyc ? cost_once(c, sg, b2, e) : 1;
    if (rc2 <= 0) return rc2;
    sg->layer->gather_whole = 0;
    sg->est_cycles = cyc;
    sg->est_compute = comp;
    sg->est_dma = dma;
    sg->est_rd = rd;
    sg->est_wr = wr;
    return rc;
}
