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
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_int.h"
#include "sim/dram.h"
#include "isa/timing.h"

/* The requests of one end of one transfer that map to one channel. */
typedef struct DdSrc {
    uint64_t next;          /* access index of its next request (valid while live) */
    uint64_t arrive;        /* DRAM cycle from which it may send */
    uint32_t run;           /* index in its end's run list */
    uint8_t live, write, end;
} DdSrc;

/* A run of consecutive access indices. */
typedef struct DdRun {
    uint64_t first, count;
} DdRun;

/* Per DMA engine (one per core): its transfer's runs and what is left. */
typedef struct DdXfer {
    DdRun *runs[2];         /* per end (0 dst, 1 src) */
    size_t nruns[2], cap[2];
    uint64_t left;          /* requests not completed */
    uint64_t end;           /* the latest data_end among the completed ones */
    int waiting;            /* its completion check found the DRAM part running: push it when done */
    int active;             /* the transfer in flight has a DRAM part */
} DdXfer;

typedef struct DdChan {
    int *src;               /* live sources: index into SimDdma.src */
    int nsrc, rr;
    int first[2];           /* position in src of the first reading (writing) source; -1 none */
    uint64_t last_admit;    /* DRAM cycle of the last admission + 1 (0: none yet) */
    uint64_t next;          /* its next step (DRAM cycle), DRAM_NEVER if none */
    int adm;                /* that step admits a request (else the controller's) */
    uint8_t room[2];        /* the read and write queues had room when it was planned */
    int dirty;
} DdChan;

struct SimDdma {
    AtlDram *dram;
    int nch, ncores, ch_lo, ch_bits, tx_shift;
    double tck_ps, core_ps;
    DdSrc *src;             /* [core][channel][end] */
    DdChan *chan;
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
    d->xfer = calloc((size_t)d->ncores, sizeof *d->xfer);
    int ok = d->src && d->chan && d->xfer;
    for (int c = 0; ok && c < d->nch; c++) ok = (d->chan[c].src = calloc((size_t)d->ncores * 2, sizeof *d->chan[c].src)) != NULL;
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
    for (int k = 0; d->xfer && k < d->ncores; k++) { free(d->xfer[k].runs[0]); free(d->xfer[k].runs[1]); }
    free(d->chan);
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
        d->chan[c].next = DRAM_NEVER;
        d->chan[c].dirty = 0;
    }

    for (int k = 0; k < d->ncores; k++) {
        d->xfer[k].nruns[0] = d->xfer[k].nruns[1] = 0;
        d->xfer[k].left = 0;
        d->xfer[k].waiting = 0;
        d->xfer[k].active = 0;
    }
}

/* ---- a transfer's runs ---- */

static int add_run(DdXfer *x, int end, uint64_t first, uint64_t last)
{
    if (x->nruns[end]) {
        DdRun *p = &x->runs[end][x->nruns[end] - 1];
        uint64_t plast = p->first + p->count - 1;
        if (first == plast + 1 || first == plast) { /* continues it (sharing an access: once) */
            if (last > plast) p->count += last - plast;
            return 0;
        }
    }
    if (x->nruns[end] == x->cap[end]) {
        size_t cap = x->cap[end] ? 2 * x->cap[end] : 64;
        DdRun *r = realloc(x->runs[end], cap * sizeof *r);
        if (!r) return -1;
        x->runs[end] = r;
        x->cap[end] = cap;
    }
    x->runs[end][x->nruns[end]++] = (DdRun){first, last - first + 1};
    return 0;
}

/* The runs of access indices one end of `in` touches, in the engine's
 * address-ordered walk of its elements (a gather's or scatter's rows as
 * rows 0..n-1, as the flow model prices them). */
static int build_runs(SimDdma *d, DdXfer *x, int end, const AtlInsn *in)
{
    x->nruns[end] = 0;
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
        return add_run(x, end, base >> d->tx_shift, (base + len - 1) >> d->tx_shift);
    }
    /* dense covers whole innermost dimensions: walk the outer ones as an
     * odometer (the addresses mem_elem_addr gives, without its divisions) */
    int outer = 4;
    for (uint64_t p = 1; p < dense; p *= shape[--outer]) {}
    uint32_t at[4] = {0, 0, 0, 0};
    int64_t a = (int64_t)base;
    uint64_t len = dense * (uint64_t)es;
    for (uint64_t idx = 0; idx < total; idx += dense) {
        if (add_run(x, end, (uint64_t)a >> d->tx_shift, ((uint64_t)a + len - 1) >> d->tx_shift)) return -1;
        for (int k = outer - 1; k >= 0; k--) {
            a += st[k];
            if (++at[k] < shape[k]) break;
            a -= (int64_t)shape[k] * st[k];
            at[k] = 0;
        }
    }
    return 0;
}

/* The first access index >= t whose channel field is ch. */
static inline uint64_t in_channel(const SimDdma *d, uint64_t t, uint64_t ch)
{
    if (!d->ch_bits) return t;
    uint64_t mask = ((1ull << d->ch_bits) - 1) << d->ch_lo, want = ch << d->ch_lo;
    uint64_t f = t & mask;
    if (f == want) return t;
    uint64_t high = t >> (d->ch_lo + d->ch_bits);
    if (f > want) high++;
    return high << (d->ch_lo + d->ch_bits) | want;
}

/* Moves source s (of channel ch) to its next request: at or after `from`
 * in its current run, else in the runs after it (runs may go back in the
 * address space, or repeat one); returns 0 when it has none left. */
static int src_seek(SimDdma *d, const DdXfer *x, DdSrc *s, int ch, uint64_t from)
{
    const DdRun *r = x->runs[s->end];
    size_t n = x->nruns[s->end];
    for (; s->run < n; s->run++, from = 0) {
        uint64_t lo = r[s->run].first > from ? r[s->run].first : from, hi = r[s->run].first + r[s->run].count;
        if (lo >= hi) continue;
        uint64_t t = in_channel(d, lo, (uint64_t)ch);
        if (t < hi) { s->next = t; return 1; }
    }
    return 0;
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
        x->nruns[end] = 0;
        if (!ends[end]) continue;
        if (build_runs(d, x, end, in)) return -1;
        for (size_t i = 0; i < x->nruns[end]; i++) total += x->runs[end][i].count;
        for (int ch = 0; ch < d->nch; ch++) {
            DdSrc *sr = src_at(d, core, ch, end);
            sr->end = (uint8_t)end;
            sr->write = end == 0;
            sr->run = 0;
            sr->arrive = arrive;
            sr->live = (uint8_t)src_seek(d, x, sr, ch, 0);
            if (!sr->live) continue;
            DdChan *c = &d->chan[ch];
            if (c->first[sr->write] < 0) c->first[sr->write] = c->nsrc;
            c->src[c->nsrc++] = (core * d->nch + ch) * 2 + end;
            c->dirty = 1;
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
    c->dirty = 0;
    uint64_t adm = DRAM_NEVER;
    int room[2];
    uint64_t cmd = dram_poll(d->dram, ch, room);
    c->room[0] = (uint8_t)room[0];
    c->room[1] = (uint8_t)room[1];
    /* the first source (in the list's order) of a direction with room */
    int f = -1;
    for (int w = 0; w < 2; w++)
        if (room[w] && c->first[w] >= 0 && (f < 0 || c->first[w] < f)) f = c->first[w];
    if (f >= 0) {
        const DdSrc *sr = &d->src[c->src[f]];
        adm = sr->arrive > c->last_admit ? sr->arrive : c->last_admit;
    }
    c->adm = adm != DRAM_NEVER && adm <= cmd;
    c->next = c->adm ? adm : cmd;
}

/* The channel with the earliest step (-1 none), and its DRAM cycle. */
static inline int earliest(SimDdma *d, uint64_t *at)
{
    int best = -1;
    uint64_t bt = DRAM_NEVER;
    for (int ch = 0; ch < d->nch; ch++) {
        DdChan *c = &d->chan[ch];
        if (c->dirty) chan_plan(d, ch);
        if (c->next < bt) { bt = c->next; best = ch; }
    }
    *at = bt;
    return best;
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
    for (int i = c->nsrc - 1; i >= 0; i--) c->first[d->src[c->src[i]].write] = i;
}

/* Admits the next request at DRAM cycle `at`: from the next source in turn
 * that has arrived and has room. Returns its core, or -1 - core when the
 * request was answered at once and that finished a waited-for transfer. */
static int admit(SimDdma *d, int ch, uint64_t at)
{
    DdChan *c = &d->chan[ch];
    int k = 0, i = c->rr < c->nsrc ? c->rr : 0;
    for (; k < c->nsrc; k++, i = i + 1 < c->nsrc ? i + 1 : 0) {
        const DdSrc *sr = &d->src[c->src[i]];
        if (sr->arrive <= at && c->room[sr->write]) break;
    }
    int id = c->src[i], core = id / (2 * d->nch);
    DdSrc *sr = &d->src[id];
    DramLoc loc;
    DramDone done;
    dram_decode(d->dram, sr->next << d->tx_shift, &loc);
    int fwd = dram_push(d->dram, &loc, sr->next, sr->write, at, (uint32_t)core, &done);
    c->last_admit = at + 1;
    c->rr = i + 1;
    if (!src_seek(d, &d->xfer[core], sr, ch, sr->next + 1)) {
        sr->live = 0;
        memmove(c->src + i, c->src + i + 1, (size_t)(c->nsrc - i - 1) * sizeof *c->src);
        c->nsrc--;
        c->rr = i;
        find_firsts(d, c);
    }
    return fwd && completed(d, core, done.data_end) ? -1 - core : core;
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
        c->dirty = 1;
        if (c->adm) {
            int r = admit(d, ch, at);
            if (r < 0) { *core_out = -1 - r; return 1; }
            continue;
        }
        DramDone done;
        /* a request refused for want of room is admitted the cycle after the
         * step that makes room, as dram_replay offers it (never earlier) */
        if (c->last_admit < at + 1) c->last_admit = at + 1;
        if (dram_step(d->dram, ch, &done) && completed(d, (int)done.tag, done.data_end)) {
            *core_out = (int)done.tag;
            return 1;
        }
    }
}

void ddma_stats(const AtlSim *s, DramStats *out)
{
    dram_stats(s->dd->dram, out);
}
