/* dram_dma.c - DMA transfers served by the banked DRAM model
 * (`[dram] model = banked`). A transfer's DRAM end is cut into requests of
 * access_bytes: the DMA engine walks that end in address order (its dims
 * from the largest stride to the smallest, tim_dram_walk; the on-chip end
 * is gathered at whatever strides that gives), so every contiguous run of
 * its DRAM addresses becomes a run of access indices and the elements of
 * one access are requested once; each channel takes the transfer's
 * requests that map to it, in that order, as a source of its own. A
 * channel's controller admits one request per DRAM cycle from its
 * sources in turn while its queue has room (a refused one the cycle after
 * the step that makes room), and serves them (dram_ctrl.c).
 * The transfer's DRAM part is done when its last request is: its last
 * read's data has arrived, or its last write's data has been written. Its
 * other servers (the NoC link, SRAM ports, LMEM ports) stay flows
 * (mem.c), and the instruction completes when both parts are done, plus
 * the NoC latency and its issue cycles.
 *
 * Time: the channels count DRAM cycles of tck_ps, the simulator core cycles
 * of 1/freq_mhz; a DRAM cycle d runs before core cycle T's events when it
 * starts earlier (d * tck < T * core period). The run loop takes the
 * channels' steps and its own events in that order (sim.c). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_int.h"
#include "sim/dram_int.h"
#include "isa/timing.h"

/* The requests of one end of one transfer that map to one channel: its
 * list (DdList below, seen from here while it is live). */
typedef struct DdSrc {
    uint64_t arrive;        /* DRAM cycle from which it may send */
    const uint32_t *v;      /* its list's offsets */
    uint64_t base;          /* what they count from */
    size_t pos, n;          /* its next request, and how many */
    int core;
    uint8_t live, write, end;
} DdSrc;

/* A run of consecutive access indices. */
typedef struct DdRun {
    uint64_t first, count;
} DdRun;

/* Access indices, in order, as offsets from a base (a transfer spans
 * less than 2^32 accesses: DRAM is under 2 GiB, and the simulator checks
 * every DMA's bytes against it when it loads the program). */
typedef struct DdList {
    uint32_t *v;
    size_t n, cap;
} DdList;

/* Per DMA engine (one per core): its transfer's requests and what is left. */
typedef struct DdXfer {
    DdRun *runs;            /* one end's runs, while they are dealt out */
    size_t nruns, cap;
    DdList *list;           /* [end * channels + channel]: the requests of each end on each channel */
    uint64_t base[2];       /* per end: the access index its lists count from */
    uint64_t left;          /* requests not completed */
    uint64_t end;           /* the latest data_end among the completed ones */
    int waiting;            /* its completion check found the DRAM part running: push it when done */
    int active;             /* the transfer in flight has a DRAM part */
} DdXfer;

/* A live source of a channel: which, with what the channel looks at
 * every admission kept at hand. */
typedef struct DdRef {
    uint64_t arrive;        /* its DdSrc's */
    int id;                 /* index into SimDdma.src */
    int write;              /* its DdSrc's */
} DdRef;

typedef struct DdChan {
    DdRef *src;             /* live sources, in the order they joined */
    int nsrc, rr;
    int first[2];           /* position in src of the first reading (writing) source; -1 none */
    uint64_t last_admit;    /* DRAM cycle of the last admission + 1 (0: none yet) */
    int adm;                /* its next step admits a request (else the controller's) */
    uint8_t room[2];        /* the read and write queues had room when it was planned */
} DdChan;

struct SimDdma {
    AtlDram *dram;
    int nch, ncores, ch_lo, ch_bits, tx_shift;
    double tck_ps, core_ps;
    DdSrc *src;             /* [core][channel][end] */
    DdChan *chan;
    uint64_t *next;         /* per channel: its next step (DRAM cycle), DRAM_NEVER if none */
    uint64_t dirty;         /* channels that got sources since their step was planned (bit ch; at most 64) */
    DdXfer *xfer;           /* [core] */
};

static inline DdSrc *src_at(SimDdma *d, int core, int ch, int end) { return &d->src[((size_t)core * (size_t)d->nch + (size_t)ch) * 2 + (size_t)end]; }

int ddma_create(AtlSim *s, AtlErr *e)
{
    SimDdma *d = calloc(1, sizeof *d);
    if (!d) return atl_fail(e, "sim: out of memory");
    s->dd = d;
    d->dram = dram_new(&s->chip, e);
    if (!d->dram) return -1;
    d->nch = dram_num_channels(d->dram);
    d->ncores = s->ncores;
    dram_channel_field(d->dram, &d->ch_lo, &d->ch_bits);
    for (d->tx_shift = 0; (1u << d->tx_shift) < dram_access_bytes(d->dram); d->tx_shift++) {}
    d->tck_ps = dram_tck_ps(d->dram);
    d->core_ps = 1e6 / s->chip.freq_mhz;
    d->src = calloc((size_t)d->ncores * (size_t)d->nch * 2, sizeof *d->src);
    d->chan = calloc((size_t)d->nch, sizeof *d->chan);
    d->next = calloc((size_t)d->nch, sizeof *d->next);
    d->xfer = calloc((size_t)d->ncores, sizeof *d->xfer);
    int ok = d->src && d->chan && d->next && d->xfer;
    for (int c = 0; ok && c < d->nch; c++) ok = (d->chan[c].src = calloc((size_t)d->ncores * 2, sizeof *d->chan[c].src)) != NULL;
    for (int k = 0; ok && k < d->ncores; k++) ok = (d->xfer[k].list = calloc((size_t)d->nch * 2, sizeof *d->xfer[k].list)) != NULL;
    if (!ok) return atl_fail(e, "sim: out of memory");
    ddma_reset(s);
    return 0;
}

void ddma_free(AtlSim *s)
{
    SimDdma *d = s->dd;
    if (!d) return;
    dram_free(d->dram);
    for (int c = 0; d->chan && c < d->nch; c++) free(d->chan[c].src);
    for (int k = 0; d->xfer && k < d->ncores; k++) {
        for (int i = 0; d->xfer[k].list && i < 2 * d->nch; i++) free(d->xfer[k].list[i].v);
        free(d->xfer[k].list);
        free(d->xfer[k].runs);
    }
    free(d->chan);
    free(d->next);
    free(d->src);
    free(d->xfer);
    free(d);
    s->dd = NULL;
}

void ddma_reset(AtlSim *s)
{
    SimDdma *d = s->dd;
    dram_reset(d->dram);
    memset(d->src, 0, (size_t)d->ncores * (size_t)d->nch * 2 * sizeof *d->src);
    for (int c = 0; c < d->nch; c++) {
        d->chan[c].nsrc = d->chan[c].rr = 0;
        d->chan[c].first[0] = d->chan[c].first[1] = -1;
        d->chan[c].last_admit = 0;
        d->next[c] = DRAM_NEVER;
    }
    d->dirty = 0;

    for (int k = 0; k < d->ncores; k++) {
        d->xfer[k].nruns = 0;
        d->xfer[k].left = 0;
        d->xfer[k].waiting = 0;
        d->xfer[k].active = 0;
    }
}

/* ---- a transfer's runs ---- */

/* An array of *cap elements of `size` bytes with twice the room (64 at
 * first): the new array (*cap updated), or NULL when out of memory (the
 * old one stays). */
static void *grow(void *v, size_t *cap, size_t size)
{
    size_t n = *cap ? 2 * *cap : 64;
    void *p = realloc(v, n * size);
    if (p) *cap = n;
    return p;
}

static int add_run(DdXfer *x, uint64_t first, uint64_t last)
{
    if (x->nruns) {
        DdRun *p = &x->runs[x->nruns - 1];
        uint64_t plast = p->first + p->count - 1;
        if (first == plast + 1 || first == plast) { /* continues it (sharing an access: once) */
            if (last > plast) p->count += last - plast;
            return 0;
        }
    }
    if (x->nruns == x->cap) {
        DdRun *r = grow(x->runs, &x->cap, sizeof *r);
        if (!r) return -1;
        x->runs = r;
    }
    x->runs[x->nruns++] = (DdRun){first, last - first + 1};
    return 0;
}

/* The runs of access indices one end of `in` touches, in the engine's
 * address-ordered walk of its elements (a gather's or scatter's rows as
 * rows 0..n-1, as the flow model prices them). */
static int build_runs(SimDdma *d, DdXfer *x, int end, const AtlInsn *in)
{
    x->nruns = 0;
    int es = isa_dtype_size(in->dtype);
    uint64_t base = end ? in->src : in->dst;
    uint32_t shape[4];
    int32_t st[4];
    tim_dram_walk(in->shape, end ? in->src_stride : in->dst_stride, shape, st);
    uint64_t total = (uint64_t)shape[0] * shape[1] * shape[2] * shape[3];
    uint64_t dense = mem_dense_run(shape, st, es);
    if (!total) return 0;
    if (dense >= total) {
        uint64_t len = total * (uint64_t)es;
        return add_run(x, base >> d->tx_shift, (base + len - 1) >> d->tx_shift);
    }
    /* dense covers whole innermost dimensions: walk the outer ones as an
     * odometer (the addresses mem_elem_addr gives, without its divisions) */
    int outer = 4;
    for (uint64_t p = 1; p < dense; p *= shape[--outer]) {}
    uint32_t at[4] = {0, 0, 0, 0};
    int64_t a = (int64_t)base;
    uint64_t len = dense * (uint64_t)es;
    for (uint64_t idx = 0; idx < total; idx += dense) {
        if (add_run(x, (uint64_t)a >> d->tx_shift, ((uint64_t)a + len - 1) >> d->tx_shift)) return -1;
        for (int k = outer - 1; k >= 0; k--) {
            a += st[k];
            if (++at[k] < shape[k]) break;
            a -= (int64_t)shape[k] * st[k];
            at[k] = 0;
        }
    }
    return 0;
}

/* Deals end `end`'s runs out to the channels: each channel's list gets
 * the access indices that map to it, in the runs' order. Returns the
 * number of requests, or -1 when out of memory. */
static int64_t deal(SimDdma *d, DdXfer *x, int end)
{
    DdList *l = &x->list[end * d->nch];
    uint64_t mask = ((uint64_t)1 << d->ch_bits) - 1, total = 0, base = UINT64_MAX;
    for (int ch = 0; ch < d->nch; ch++) l[ch].n = 0;
    for (size_t i = 0; i < x->nruns; i++) base = x->runs[i].first < base ? x->runs[i].first : base;
    x->base[end] = base;
    for (size_t i = 0; i < x->nruns; i++) {
        const DdRun *r = &x->runs[i];
        for (uint64_t a = r->first; a < r->first + r->count; a++) {
            DdList *li = &l[(a >> d->ch_lo) & mask];
            if (li->n == li->cap) {
                uint32_t *v = grow(li->v, &li->cap, sizeof *v);
                if (!v) return -1;
                li->v = v;
            }
            li->v[li->n++] = (uint32_t)(a - base);
        }
        total += r->count;
    }
    return (int64_t)total;
}

uint64_t ddma_dram_cycle(const AtlSim *s, uint64_t t)
{
    double x = (double)t * s->dd->core_ps / s->dd->tck_ps - 1e-9;
    uint64_t c = x > 0 ? (uint64_t)x : 0;
    return (double)c < x ? c + 1 : c;
}

int ddma_start(AtlSim *s, int core, const AtlInsn *in, uint64_t t)
{
    SimDdma *d = s->dd;
    DdXfer *x = &d->xfer[core];
    int copy = in->op != ISA_OP_DMA_FILL;
    int ends[2] = {in->dst_space == ISA_SPACE_DRAM, copy && in->src_space == ISA_SPACE_DRAM};
    x->active = ends[0] || ends[1];
    if (!x->active) return 0;
    uint64_t arrive = ddma_dram_cycle(s, t), total = 0;
    x->left = 0;
    x->end = 0;
    x->waiting = 0;
    for (int end = 0; end < 2; end++) {
        if (!ends[end]) continue;
        int64_t n;
        if (build_runs(d, x, end, in) || (n = deal(d, x, end)) < 0) return -1;
        total += (uint64_t)n;
        for (int ch = 0; ch < d->nch; ch++) {
            DdSrc *sr = src_at(d, core, ch, end);
            const DdList *l = &x->list[end * d->nch + ch];
            sr->end = (uint8_t)end;
            sr->write = end == 0;
            sr->v = l->v;
            sr->base = x->base[end];
            sr->pos = 0;
            sr->n = l->n;
            sr->core = core;
            sr->arrive = arrive;
            sr->live = l->n > 0;
            if (!sr->live) continue;
            DdChan *c = &d->chan[ch];
            if (c->first[sr->write] < 0) c->first[sr->write] = c->nsrc;
            c->src[c->nsrc++] = (DdRef){arrive, (core * d->nch + ch) * 2 + end, sr->write};
            d->dirty |= 1ull << ch;
        }
    }
    x->left = total;
    return 1;
}

/* ---- stepping ---- */

/* The channel's next step: an admission (a source with a request for a
 * queue with room) or the controller's next command, whichever is first;
 * the front end's admission goes first on a tie, as in dram_replay.
 * Sources are listed in the order they joined, so by arrival: the first
 * one with room is the earliest. */
static void chan_plan(SimDdma *d, int ch)
{
    DdChan *c = &d->chan[ch];
    int room[2];
    uint64_t cmd = dram_poll(d->dram, ch, room);
    c->room[0] = (uint8_t)room[0];
    c->room[1] = (uint8_t)room[1];
    /* the first source (in the list's order) of a direction with room
     * (without branches: which one it is changes from step to step) */
    unsigned f0 = room[0] ? (unsigned)c->first[0] : UINT_MAX, f1 = room[1] ? (unsigned)c->first[1] : UINT_MAX;
    unsigned f = f0 < f1 ? f0 : f1; /* (-1, none, is UINT_MAX) */
    uint64_t adm = DRAM_NEVER;
    if (f != UINT_MAX) {
        uint64_t arrive = c->src[f].arrive;
        adm = arrive > c->last_admit ? arrive : c->last_admit;
    }
    c->adm = adm <= cmd && adm != DRAM_NEVER;
    d->next[ch] = c->adm ? adm : cmd;
}

/* The channel with the earliest step (-1 none; ties: the lowest), and its
 * DRAM cycle. Without branches on the times: which channel goes next
 * changes from step to step. */
static inline int earliest(SimDdma *d, uint64_t *at)
{
    for (uint64_t m = d->dirty; m; m &= m - 1) chan_plan(d, __builtin_ctzll(m));
    d->dirty = 0;
    const uint64_t *next = d->next;
    uint64_t bt = next[0];
    int best = 0;
    for (int ch = 1; ch < d->nch; ch++) {
        uint64_t v = next[ch];
        best = v < bt ? ch : best;
        bt = v < bt ? v : bt;
    }
    *at = bt;
    return bt == DRAM_NEVER ? -1 : best;
}

int ddma_before(AtlSim *s, uint64_t t)
{
    uint64_t at;
    if (earliest(s->dd, &at) < 0) return 0;
    return t == UINT64_MAX || (double)at * s->dd->tck_ps < (double)t * s->dd->core_ps;
}

uint64_t ddma_done_at(const AtlSim *s, int core)
{
    const SimDdma *d = s->dd;
    double x = (double)(d->xfer[core].end + 1) * d->tck_ps / d->core_ps - 1e-9;
    uint64_t c = x > 0 ? (uint64_t)x : 0;
    return (double)c < x ? c + 1 : c;
}

int ddma_check(AtlSim *s, int core, uint64_t *done_at)
{
    DdXfer *x = &s->dd->xfer[core];
    *done_at = 0;
    if (x->left) {
        x->waiting = 1; /* the request that completes it reports it (ddma_advance) */
        return 1;
    }
    if (x->active) *done_at = ddma_done_at(s, core);
    return 0;
}

/* A request of core's transfer completed with its data at DRAM cycle end:
 * 1 if that finished a transfer whose completion check waits for it. */
static inline int completed(SimDdma *d, int core, uint64_t end)
{
    DdXfer *x = &d->xfer[core];
    if (end > x->end) x->end = end;
    if (--x->left || !x->waiting) return 0;
    x->waiting = 0;
    return 1;
}

/* Finds the first reading and writing source of the channel's list. */
static void find_firsts(const SimDdma *d, DdChan *c)
{
    c->first[0] = c->first[1] = -1;
    for (int i = c->nsrc - 1; i >= 0; i--) c->first[c->src[i].write] = i;
}

/* The source (its place in the channel's list) whose request the channel
 * admits at DRAM cycle `at`: the next in turn that has arrived and has
 * room. */
static int admit_source(const DdChan *c, uint64_t at)
{
    int k = 0, i = c->rr < c->nsrc ? c->rr : 0;
    for (; k < c->nsrc; k++, i = i + 1 < c->nsrc ? i + 1 : 0) {
        if (c->src[i].arrive <= at && c->room[c->src[i].write]) break;
    }
    return i;
}

/* Admits the request of the source at place i of channel ch's list at DRAM
 * cycle `at`. Returns its core, or -1 - core when the request was answered
 * at once and that finished a waited-for transfer.
 *
 * Out of turn (out_of_turn = 1): a channel's admission at most a DRAM
 * cycle after the step just taken is taken at once, before the other
 * channels' steps up to it, when that cannot be told apart: a step of
 * another channel in between can only report a request done, the
 * completion check that queues comes at least two DRAM cycles after that
 * step, so this drain of steps (ddma_advance until it has nothing before
 * the next event) reaches the admission before the simulator runs
 * anything that could add a source; and the admission reports nothing
 * unless it is a read answered from the write queue: such a read is left
 * for its turn (ADMIT_LATER, nothing done). The controller's turn between
 * reads and writes, which working out its next step would make first,
 * comes before the push (dram_settle). */
#define ADMIT_LATER INT_MIN
static int admit(SimDdma *d, int ch, int i, uint64_t at, int out_of_turn)
{
    DdChan *c = &d->chan[ch];
    DdSrc *sr = &d->src[c->src[i].id];
    int core = sr->core;
    uint64_t line = sr->base + sr->v[sr->pos];
    if (out_of_turn) {
        if (!sr->write && dram_may_forward(d->dram, ch, line)) return ADMIT_LATER;
        dram_settle(d->dram, ch);
    }
    DramLoc loc;
    DramDone done;
    dram_locate(d->dram, line, &loc);
    int fwd = dram_push(d->dram, &loc, line, sr->write, at, (uint32_t)core, &done);
    c->last_admit = at + 1;
    c->rr = i + 1;
    if (++sr->pos == sr->n) {
        sr->live = 0;
        memmove(c->src + i, c->src + i + 1, (size_t)(c->nsrc - i - 1) * sizeof *c->src);
        c->nsrc--;
        c->rr = i;
        find_firsts(d, c);
    }
    return fwd && completed(d, core, done.data_end) ? -1 - core : core;
}

/* After a command at `at`: the admission its room allows, out of turn,
 * before the channel's next step is planned (it comes no later than the
 * controller's next command, which is after `at`). */
static void admit_after_command(SimDdma *d, int ch, uint64_t at, uint64_t lim)
{
    DdChan *c = &d->chan[ch];
    int room[2];
    dram_room(d->dram, ch, room);
    unsigned f0 = room[0] ? (unsigned)c->first[0] : UINT_MAX, f1 = room[1] ? (unsigned)c->first[1] : UINT_MAX;
    unsigned f = f0 < f1 ? f0 : f1;
    if (f == UINT_MAX) return;
    uint64_t arrive = c->src[f].arrive, a = arrive > c->last_admit ? arrive : c->last_admit;
    if (a > at + 1 || a >= lim || a > dram_floor(d->dram, ch)) return;
    c->room[0] = (uint8_t)room[0];
    c->room[1] = (uint8_t)room[1];
    admit(d, ch, admit_source(c, a), a, 1);
}

int ddma_advance(AtlSim *s, uint64_t t, int *core_out)
{
    SimDdma *d = s->dd;
    /* the first DRAM cycle that does not start before core cycle t */
    uint64_t lim = DRAM_NEVER;
    if (t != UINT64_MAX) {
        double limit = (double)t * d->core_ps;
        lim = (uint64_t)(limit / d->tck_ps);
        while (lim && (double)(lim - 1) * d->tck_ps >= limit) lim--;
        while ((double)lim * d->tck_ps < limit) lim++;
    }
    for (;;) {
        uint64_t at;
        int ch = earliest(d, &at);
        if (ch < 0 || at >= lim) return 0;
        DdChan *c = &d->chan[ch];
        int reported = -1;
        if (c->adm) {
            int r = admit(d, ch, admit_source(c, at), at, 0);
            if (r < 0) reported = -1 - r;
            chan_plan(d, ch);
            /* the next admission, a cycle later, out of turn */
            uint64_t a = d->next[ch];
            if (reported < 0 && c->adm && a <= at + 1 && a < lim && admit(d, ch, admit_source(c, a), a, 1) != ADMIT_LATER)
                chan_plan(d, ch);
        } else {
            DramDone done;
            /* a request refused for want of room is admitted the cycle after
             * the step that makes room, as dram_replay offers it (never earlier) */
            if (c->last_admit < at + 1) c->last_admit = at + 1;
            if (dram_step(d->dram, ch, &done) && completed(d, (int)done.tag, done.data_end)) reported = (int)done.tag;
            else admit_after_command(d, ch, at, lim);
            chan_plan(d, ch);
        }
        if (reported >= 0) {
            *core_out = reported;
            return 1;
        }
    }
}

void ddma_stats(const AtlSim *s, DramStats *out)
{
    dram_stats(s->dd->dram, out);
}
