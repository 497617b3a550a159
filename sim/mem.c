/* mem.c - the memory and contention model. A matrix/vector instruction
 * reserves the LMEM banks its operands touch (each bank has a next-free
 * time). A DMA transfer is a flow: it occupies every shared resource on its
 * path (DRAM channels, its cluster's NoC link, the cluster's SRAM ports, the
 * LMEM DMA port of each core it reads or writes) from its start to its
 * delivery, and each resource shares its time equally among the transfers on
 * it (processor sharing, the fluid limit of round-robin bursts). A transfer
 * costs two events whatever its size, and its delivery time moves only when
 * another transfer joins one of its resources. Waiting for a resource held
 * by others is a resource stall. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_int.h"
#include "isa/timing.h"

uint8_t *mem_space_ptr(AtlSim *s, int core, int space, int lcore)
{
    int cl = core / s->cpc;
    switch (space) {
    case ISA_SPACE_DRAM: return s->dram;
    case ISA_SPACE_SRAM: return s->sram[cl];
    default: return s->core[cl * s->cpc + lcore].lmem;
    }
}

uint8_t *mem_end_ptr(AtlSim *s, int core, int space, uint64_t addr, int lcore)
{
    if (space == ISA_SPACE_PEER) return s->sram[isa_peer_cluster(addr)] + isa_peer_offset(addr);
    return mem_space_ptr(s, core, space, lcore) + addr;
}

/* Byte address of linear element `idx` of a strided 4-D operand (byte strides). */
uint64_t mem_elem_addr(uint64_t base, const uint32_t shape[4], const int32_t st[4], uint64_t idx)
{
    int64_t a = (int64_t)base;
    for (int d = 3; d >= 0; d--) {
        uint64_t i = idx % shape[d];
        idx /= shape[d];
        a += (int64_t)i * st[d];
    }
    return (uint64_t)a;
}

/* Bank servers touched by [addr, addr+bytes) of one core: first bank and count. */
static inline void bank_span(const AtlSim *s, uint64_t addr, uint64_t bytes, int *first, int *nb)
{
    if (s->bank_shift >= 0) {
        uint64_t w = (uint64_t)1 << s->bank_shift, banks = (uint64_t)s->chip.lmem_banks;
        uint64_t rows = ((addr & (w - 1)) + bytes + w - 1) >> s->bank_shift;
        *first = (int)((addr >> s->bank_shift) & (banks - 1));
        *nb = (int)(rows < banks ? rows : banks);
        return;
    }
    uint64_t w = (uint64_t)s->chip.lmem_bank_width, banks = (uint64_t)s->chip.lmem_banks, row = addr / w;
    uint64_t rows = (addr - row * w + bytes + w - 1) / w;
    *first = (int)(banks & (banks - 1) ? row % banks : row & (banks - 1));
    *nb = (int)(rows < banks ? rows : banks);
}

void mem_pre_banks(const AtlSim *s, SimPre *pre)
{
    memset(pre->banks, 0, sizeof pre->banks);
    for (int i = 0; i < pre->nr; i++) tim_lmem_span(&s->chip, pre->r[i].lo, pre->r[i].hi, pre->banks);
    pre->lmem_occ = tim_lmem_occ(&s->chip, pre->banks, pre->lmem_rd + pre->lmem_wr);
}

/* Length of the run of ones at the bottom of x. */
static inline int run_len(uint64_t x) { return ~x ? __builtin_ctzll(~x) : 64; }

uint64_t mem_lmem_reserve(AtlSim *s, int core, int engine, uint64_t t, const SimPre *pre)
{
    SimCore *c = &s->core[core];
    SimServer *bk = c->banks;
    uint64_t start = t;
    if (c->banks_free < t) c->banks_free = t;
    int busy = c->banks_free > t; /* some bank is reserved beyond t */
    for (int w = 0; w < 4 && busy; w++) {
        uint64_t m = pre->banks[w];
        if (!m) continue;
        int lo = __builtin_ctzll(m);
        if (!(((m >> lo) + 1) & (m >> lo))) { /* one run of banks: a plain loop */
            for (int b = w * 64 + lo, hi = b + run_len(m >> lo); b < hi; b++)
                if (bk[b].free > start) start = bk[b].free;
            continue;
        }
        for (; m; m &= m - 1) {
            int b = w * 64 + __builtin_ctzll(m);
            if (bk[b].free > start) start = bk[b].free;
        }
    }
    uint64_t until = start + pre->lmem_occ;
    if (until > c->banks_free) c->banks_free = until;
    for (int w = 0; w < 4; w++) {
        uint64_t m = pre->banks[w];
        if (!m) continue;
        int lo = __builtin_ctzll(m);
        if (!(((m >> lo) + 1) & (m >> lo))) {
            for (int b = w * 64 + lo, hi = b + run_len(m >> lo); b < hi; b++) bk[b].free = until;
            continue;
        }
        for (; m; m &= m - 1) bk[w * 64 + __builtin_ctzll(m)].free = until;
    }
    return start;
}

/* ------------------------------------------------------------ DMA flows */

/* Busy time transfer j still lacks behind its fluid share when the server
 * has given x of virtual time: bursts are served whole, in the order of
 * their virtual finish (ties: arrival order), so j, later in that order
 * than the transfer finishing at x, has had only its bursts that end
 * before x. This is what keeps identical transfers that start together
 * finishing one burst apart, as round-robin bursts do, instead of all at
 * once. */
static inline double ps_lag(const SimPsJob *j, double x)
{
    return tim_burst_lag(x - j->v0, j->q, j->iq, j->wl, j->last, j->none);
}

/* The parts of ps_lag that depend on the job alone, computed when it joins. */
static inline void ps_job_prepare(SimPsJob *j)
{
    tim_burst_prepare(j->f - j->v0, j->q, j->iq, &j->wl, &j->last, &j->none);
}

/* Lag of the transfers after position i of server p when job i's work is done. */
static inline double ps_lag_after(const SimPs *p, int i)
{
    if (p->ports != 1) return 0; /* several ports: the fluid share as is */
    double lag = 0, x = p->job[i].f;
    for (int k = i + 1; k < p->n; k++) lag += ps_lag(&p->job[k], x);
    return lag;
}

/* Moves server i's virtual time to real time t; transfers whose work there
 * is done by then leave it (the transfer's SimUse records when, unless it
 * was delivered already and stayed as a ghost: its uses are gone then). */
static void ps_advance(AtlSim *s, int i, double t)
{
    SimPs *p = &s->ps[i];
    if (t < p->tv) return;
    while (p->n) {
        int shared = p->n > p->ports;
        /* real cycles per virtual cycle (n / 1 is n: no division for one port) */
        double slow = !shared ? 1.0 : p->ports == 1 ? (double)p->n : (double)p->n / p->ports;
        double end = p->tv + (p->job[0].f - p->v) * slow;
        if (end > t) { p->v += (t - p->tv) * (shared ? (double)p->ports / p->n : 1.0); p->tv = t; return; }
        SimUse *us = p->job[0].use;
        if (!us->gone) {
            us->gone = 1;
            /* a projection made since the last join there is this already */
            if (us->joins != p->joins) us->fin = end - ps_lag_after(p, 0);
        }
        p->tv = end;
        p->v = p->job[0].f;
        p->n--;
        p->job++; /* the rest move up when a join needs the room (mem_dma_join) */
    }
    p->job = p->mem;
    p->v = 0; /* idle: restart the virtual clock (keeps it small and exact) */
    p->tv = t;
}

/* Projected time at which the transfer with work us on p is done there if
 * nothing else joins: the real time at which p's fluid schedule reaches its
 * virtual finish, less the burst lags of the transfers after it. */
static double ps_project(const SimPs *p, const SimUse *us)
{
    double t = p->tv, v = p->v;
    if (p->ports == 1) { /* the common case: n flows share it, n real cycles per virtual one */
        double dn = (double)p->n; /* n counted down as a double (exact) */
        for (int i = 0; i < p->n; i++, dn -= 1.0) {
            t += (p->job[i].f - v) * dn;
            v = p->job[i].f;
            if (p->job[i].use == us) return t - ps_lag_after(p, i);
        }
        return t;
    }
    for (int i = 0, n = p->n; i < p->n; i++, n--) {
        /* real cycles per virtual cycle; several ports: the fluid share as is */
        double slow = n <= p->ports ? 1.0 : (double)n / p->ports;
        t += (p->job[i].f - v) * slow;
        v = p->job[i].f;
        if (p->job[i].use == us) return t;
    }
    return t;
}

/* How many consecutive elements (from a multiple of the answer) are contiguous. */
uint64_t mem_dense_run(const uint32_t shape[4], const int32_t st[4], int es)
{
    uint64_t dense = 1;
    int64_t expect = es;
    for (int d = 3; d >= 0; d--) {
        if (st[d] != expect && shape[d] > 1) break;
        dense *= shape[d];
        expect = (int64_t)shape[d] * st[d];
    }
    return dense;
}


/* Adds the transfer's work on server ps; both ends of a transfer on one
 * server (SRAM to SRAM, LMEM to the same LMEM) overlap: the larger counts. */
static void use_add(SimEngine *e, int ps, uint64_t work, uint64_t bursts)
{
    for (int i = 0; i < e->nuse; i++)
        if (e->use[i].ps == ps) {
            if (work > e->use[i].work) { e->use[i].work = work; e->use[i].bursts = bursts; }
            return;
        }
    e->use[e->nuse++] = (SimUse){.ps = ps, .work = work, .bursts = bursts};
}

/* Work per channel of the DRAM end of one burst, times mult: the burst's
 * contiguous runs are split at channel interleave boundaries; each channel
 * is busy for its bytes at its bandwidth. */
static void dram_burst_work(AtlSim *s, int end, uint64_t base, const uint32_t shape[4], const int32_t st[4], int es,
                            uint64_t idx, uint64_t nelem, uint64_t dense, int flat, uint64_t mult)
{
    uint64_t il = (uint64_t)s->chip.dram_interleave, nch = (uint64_t)s->chip.dram_channels;
    int sh = s->il_shift, pow2 = sh >= 0, nt = 0;
    uint64_t *chb = s->chan_bytes, *w = s->chan_work[end];
    int *touched = s->chan_touched;
    while (nelem) {
        uint64_t run = dense - idx % dense;
        if (run > nelem) run = nelem;
        uint64_t ua = flat ? base + idx * (uint64_t)es : mem_elem_addr(base, shape, st, idx);
        uint64_t len = run * (uint64_t)es;
        while (len) {
            uint64_t ch, take;
            if (pow2) { ch = (ua >> sh) & (nch - 1); take = il - (ua & (il - 1)); }
            else { ch = (ua / il) % nch; take = il - ua % il; }
            if (take > len) take = len;
            if (!chb[ch]) touched[nt++] = (int)ch;
            chb[ch] += take;
            ua += take;
            len -= take;
        }
        nelem -= run;
        idx += run;
    }
    double bw = tim_dram_channel_bytes_per_cycle(&s->chip);
    for (int k = 0; k < nt; k++) {
        int ch = touched[k];
        if (!w[ch]) s->chan_list[end][s->nchan[end]++] = ch;
        w[ch] += mult * tim_occupancy(chb[ch], bw);
        s->chan_bursts[end][ch] += mult;
        chb[ch] = 0;
    }
}

/* Work of one burst (at byte offset off, `bytes` long), times mult, on every
 * server of the path: w[0]/w[1] the dst/src end if SRAM or LMEM, w[2] the
 * NoC link; DRAM ends go to s->chan_work. */
static void burst_work(AtlSim *s, const SimEngine *e, const AtlInsn *in, uint64_t off, uint64_t bytes, uint64_t mult,
                       uint64_t w[3])
{
    const AtlChip *c = &s->chip;
    uint64_t idx = off >> e->dma_esh, nelem = bytes >> e->dma_esh;
    int ends = in->op != ISA_OP_DMA_FILL ? 2 : 1;
    for (int end = 0; end < ends; end++) {
        int space = end ? in->src_space : in->dst_space;
        uint64_t base = end ? in->src : in->dst;
        const int32_t *st = end ? in->src_stride : in->dst_stride;
        if (space == ISA_SPACE_DRAM) {
            /* (the banked model serves the DRAM end as requests: sim/dram_dma.c) */
            if (!s->dd) dram_burst_work(s, end, base, in->shape, st, e->dma_es, idx, nelem, e->dma_dense[end], e->dma_flat[end], mult);
        } else if (space == ISA_SPACE_SRAM || space == ISA_SPACE_PEER) {
            w[end] += mult * tim_occupancy(bytes, (double)c->sram_bytes_per_cycle);
        } else {
            uint64_t a = e->dma_flat[end] ? base + idx * (uint64_t)e->dma_es : mem_elem_addr(base, in->shape, st, idx);
            int f, nb;
            bank_span(s, a, bytes, &f, &nb);
            uint64_t op = tim_occupancy(bytes, (double)c->dma_lmem_bytes_per_cycle);
            uint64_t ob = tim_occupancy(bytes, (double)nb * c->lmem_bank_bytes_per_cycle);
            w[end] += mult * (op > ob ? op : ob);
        }
    }
    w[2] += mult * tim_occupancy(bytes, (double)c->noc_bytes_per_cycle);
}

/* Every burst of an end looks the same: a contiguous DRAM range inside one
 * interleave unit, a contiguous LMEM range with bursts of whole bank rows,
 * or SRAM. */
static int end_uniform(const AtlSim *s, const SimEngine *e, int space, uint64_t base, int flat, uint64_t bytes)
{
    if (space == ISA_SPACE_SRAM || space == ISA_SPACE_PEER) return 1;
    if (!flat) return 0;
    if (space == ISA_SPACE_DRAM) {
        uint64_t il = (uint64_t)s->chip.dram_interleave;
        return base % il + bytes <= il;
    }
    return e->dma_bb % (uint64_t)s->chip.lmem_bank_width == 0;
}

int mem_dma_plan(AtlSim *s, int core, int engine, const AtlInsn *in, SimPre *pre)
{
    SimEngine *e = &s->eng[sim_eid(core, engine)];
    int es = isa_dtype_size(in->dtype), cl = core / s->cpc;
    e->dma_dense[0] = mem_dense_run(in->shape, in->dst_stride, es);
    e->dma_dense[1] = in->op != ISA_OP_DMA_FILL ? mem_dense_run(in->shape, in->src_stride, es) : 1;
    uint64_t total = (uint64_t)in->shape[0] * in->shape[1] * in->shape[2] * in->shape[3];
    e->dma_es = es;
    e->dma_esh = es == 4 ? 2 : es == 2 ? 1 : 0;
    e->dma_bb = (uint64_t)s->chip.dma_burst_bytes;
    if (e->dma_bb >= (uint64_t)es) e->dma_bb -= e->dma_bb % (uint64_t)es;   /* whole elements per burst */
    e->dma_flat[0] = e->dma_dense[0] >= total;
    e->dma_flat[1] = e->dma_dense[1] >= total;
    uint64_t bytes = pre->bytes;
    int copy = in->op != ISA_OP_DMA_FILL;
    int src_space = copy ? in->src_space : in->dst_space;
    int hops = pre->hops;   /* a peer end's cluster links (check.c) */
    pre->dma_latency = tim_dma_route_latency(&s->chip, in->dst_space, src_space, hops) + (uint64_t)s->chip.dma_issue_cycles;
    if (s->dd && (in->dst_space == ISA_SPACE_DRAM || src_space == ISA_SPACE_DRAM)) {
        /* the banked model times the DRAM access itself: only the NoC's latency stays fixed */
        uint64_t a = in->dst_space == ISA_SPACE_DRAM ? (uint64_t)s->chip.noc_latency : tim_dma_route_latency(&s->chip, in->dst_space, in->dst_space, hops);
        uint64_t b = src_space == ISA_SPACE_DRAM ? (uint64_t)s->chip.noc_latency : tim_dma_route_latency(&s->chip, src_space, src_space, hops);
        pre->dma_latency = (a > b ? a : b) + (uint64_t)s->chip.dma_issue_cycles;
    }
    if (isa_ops[in->op].format == ISA_FMT_DMA_GATHER) pre->dma_latency += tim_gather_index_cycles(&s->chip, in->src2_space, in->shape[1]);
    /* work on each server: bursts of dma_bb bytes, each busy for its bytes
     * there at that server's bandwidth; summed over bursts (two bursts stand
     * for all when every burst looks the same) */
    uint64_t w[3] = {0, 0, 0}, full = bytes / e->dma_bb, rest = bytes % e->dma_bb, nbursts = full + (rest != 0);
    SimDmaKey key;
    dma_memo_key(s, in, bytes, &key);
    const SimDmaMemo *memo = dma_memo_find(s, &key);
    if (memo) {
        dma_memo_restore(s, memo, w);
    } else {
        if (end_uniform(s, e, in->dst_space, in->dst, e->dma_flat[0], bytes) &&
            (!copy || end_uniform(s, e, in->src_space, in->src, e->dma_flat[1], bytes))) {
            if (full) burst_work(s, e, in, 0, e->dma_bb, full, w);
            if (rest) burst_work(s, e, in, full * e->dma_bb, rest, 1, w);
        } else {
            /* every burst walked on the host: bounded by the run's work limit */
            if (bytes > s->work_left) return 2;
            s->work_left -= bytes;
            for (uint64_t off = 0; off < bytes; off += e->dma_bb)
                burst_work(s, e, in, off, bytes - off < e->dma_bb ? bytes - off : e->dma_bb, 1, w);
        }
        if (dma_memo_add(s, &key, w)) return -1;
    }
    e->nuse = 0;
    for (int end = 0; end < 1 + copy; end++) {
        int space = end ? in->src_space : in->dst_space;
        if (space == ISA_SPACE_DRAM) {
            for (int k = 0; k < s->nchan[end]; k++) { /* (none with the banked model) */
                int ch = s->chan_list[end][k];
                use_add(e, ch, s->chan_work[end][ch], s->chan_bursts[end][ch]);
                s->chan_work[end][ch] = s->chan_bursts[end][ch] = 0;
            }
            s->nchan[end] = 0;
        } else if (space == ISA_SPACE_SRAM) {
            use_add(e, s->ps_sram + cl, w[end], nbursts);
        } else if (space == ISA_SPACE_PEER) {
            /* the other cluster's SRAM ports, and every cluster link on the way there (or back) */
            use_add(e, s->ps_sram + pre->peer, w[end], nbursts);
            int links[TIM_NOC_MAX_HOPS], n = end ? tim_noc_route(&s->chip, pre->peer, cl, links) : tim_noc_route(&s->chip, cl, pre->peer, links);
            double bw = (double)s->chip.noc_link_bytes_per_cycle;
            uint64_t lw = full * tim_occupancy(e->dma_bb, bw) + (rest ? tim_occupancy(rest, bw) : 0);
            for (int k = 0; k < n && k < TIM_NOC_MAX_HOPS; k++) use_add(e, s->ps_link + links[k], lw, nbursts);
        } else {
            uint32_t m = end ? 1u << in->src_core : in->mask ? in->mask : 1u << (core % s->cpc);
            for (; m; m &= m - 1) use_add(e, s->ps_port + cl * s->cpc + __builtin_ctz(m), w[end], nbursts);
        }
    }
    if (in->dst_space == ISA_SPACE_DRAM && (!copy || src_space != ISA_SPACE_DRAM))
        use_add(e, s->ps_noc_out + cl, w[2], nbursts);
    else if (src_space == ISA_SPACE_DRAM && in->dst_space != ISA_SPACE_DRAM)
        use_add(e, s->ps_noc_in + cl, w[2], nbursts);
    else if (src_space == ISA_SPACE_DRAM && copy) {
        use_add(e, s->ps_noc_in + cl, w[2], nbursts);
        use_add(e, s->ps_noc_out + cl, w[2], nbursts);
    }
    pre->dma_solo = 0;
    for (int i = 0; i < e->nuse; i++) {
        SimUse *us = &e->use[i];
        if (us->work > pre->dma_solo) pre->dma_solo = us->work;
        us->q = us->bursts ? (double)us->work / (double)us->bursts : 0;
        us->iq = us->q > 0 ? 1 / us->q : 0;
        us->fin = 0; /* the room of bursts from now on */
    }
    if (e->nplan + (size_t)e->nuse > e->capplan) {
        size_t cap = e->capplan ? 2 * e->capplan : 64;
        while (cap < e->nplan + (size_t)e->nuse) cap *= 2;
        SimUse *pl = realloc(e->plan, cap * sizeof *pl);
        if (!pl) return -1;
        e->plan = pl;
        e->capplan = cap;
    }
    pre->use_at = (uint32_t)e->nplan;
    pre->nuse = pre->nshared = (uint32_t)e->nuse;
    memcpy(e->plan + e->nplan, e->use, (size_t)e->nuse * sizeof *e->use);
    e->nplan += (size_t)e->nuse;
    e->nuse = 0;
    e->use = e->scratch;
    return 0;
}

/* Delivery time of engine e's transfer when its last server is done at
 * `last`: integer work and one transfer alone give exact integers; shares
 * are rounded up to the next cycle; then its path latency. */
static inline uint64_t dma_due_at(const SimEngine *e, double last)
{
    double x = last - 1e-6;
    uint64_t c = x > 0 ? (uint64_t)x : 0;
    if ((double)c < x) c++; /* ceil */
    return c + e->dma_latency;
}

uint64_t mem_dma_join(AtlSim *s, int eid, const SimPre *pre, uint64_t t)
{
    SimEngine *e = &s->eng[eid];
    e->nuse = pre->nuse;
    e->nshared = pre->nshared;
    e->use = e->plan + pre->use_at; /* each instruction runs once per load: its plan is its state */
    e->dma_solo = pre->dma_solo;
    e->dma_latency = pre->dma_latency;
    e->dma_start = t;
    e->dma_last0 = (double)t;
    double last = (double)t; /* the latest done time on a shared server */
    for (int u = 0; u < e->nuse; u++) {
        int i = e->use[u].ps;
        SimPs *p = &s->ps[i];
        if (e->use[u].excl) { /* alone there, always: done after its work */
            e->use[u].gone = 1;
            e->use[u].fin = (double)(t + e->use[u].work);
            if (e->use[u].fin > e->dma_last0) e->dma_last0 = e->use[u].fin;
            continue;
        }
        ps_advance(s, i, (double)t);
        e->use[u].gone = 0;
        if (p->job + p->n == p->mem + p->cap && p->job != p->mem) { /* no room after the last: move up */
            memmove(p->mem, p->job, (size_t)p->n * sizeof *p->job);
            p->job = p->mem;
        }
        if (p->n == p->cap) {
            SimPsJob *j = realloc(p->mem, 2 * (size_t)p->cap * sizeof *j);
            /* out of memory: the transfer is not seen by the others there */
            if (!j) {
                e->use[u].gone = 1;
                e->use[u].fin = (double)(t + e->use[u].work);
                if (e->use[u].fin > last) last = e->use[u].fin;
                continue;
            }
            p->mem = p->job = j;
            p->cap *= 2;
        }
        SimUse *us = &e->use[u];
        double f = p->v + (double)us->work;
        SimPsJob job = {f, p->v, us->q, us->iq, 0, 0, 0, us};
        ps_job_prepare(&job);
        if (p->ports == 1) {
            /* one pass: its place (after those done no later), its first
             * projection there (the walk of ps_project, with the flow count
             * it joins to), then the lags of those after it as they move up */
            int n = p->n, k = 0;
            double t = p->tv, v = p->v, dn = (double)(n + 1), lag = 0;
            for (; k < n && p->job[k].f <= f; k++, dn -= 1.0) {
                t += (p->job[k].f - v) * dn;
                v = p->job[k].f;
            }
            t += (f - v) * dn;
            for (int i = n; i > k; i--) p->job[i] = p->job[i - 1];
            for (int i = k + 1; i <= n; i++) lag += ps_lag(&p->job[i], f);
            p->job[k] = job;
            p->n++;
            p->joins++;
            us->fin = t - lag; /* no other server's join can move it */
        } else {
            int k = p->n;
            while (k > 0 && p->job[k - 1].f > f) { p->job[k] = p->job[k - 1]; k--; }
            p->job[k] = job;
            p->n++;
            p->joins++;
            us->fin = ps_project(p, us);
        }
        us->joins = p->joins;
        if (us->fin > last) last = us->fin;
    }
    return dma_due_at(e, e->dma_last0 > last ? e->dma_last0 : last); /* as mem_dma_due would find */
}

uint64_t mem_dma_due(AtlSim *s, int eid)
{
    SimEngine *e = &s->eng[eid];
    double last = e->dma_last0; /* the start and the unshared servers (fixed at join) */
    for (int u = 0; u < e->nshared; u++) {
        SimUse *us = &e->use[u];
        const SimPs *p = &s->ps[us->ps];
        if (!us->gone && us->joins != p->joins) { /* somebody joined since the last projection there */
            us->fin = ps_project(p, us);
            us->joins = p->joins;
        }
        if (us->fin > last) last = us->fin;
    }
    return dma_due_at(e, last);
}

/* A delivered transfer whose fluid share of a server is not used up yet
 * (it was served ahead of others' partial bursts) stays there as a ghost
 * until it is: the others are behind by just that much, so nobody's
 * projected delivery moves earlier. */
void mem_dma_leave(AtlSim *s, int eid, uint64_t t)
{
    (void)t;
    SimEngine *e = &s->eng[eid];
    for (int u = 0; u < e->nshared; u++) e->use[u].gone = 1; /* ghosts where not done yet */
    e->nuse = 0;
}

int mem_dma_mark_exclusive(AtlSim *s)
{
    int *user = malloc((size_t)s->nps * sizeof *user), neng = s->ncores * ISA_NUM_ENGINES;
    if (!user) return -1;
    for (int i = 0; i < s->nps; i++) user[i] = -1;  /* -1 nobody, -2 several engines, else the engine */
    for (int eid = 0; eid < neng; eid++)
        for (size_t k = 0; k < s->eng[eid].nplan; k++) {
            int i = s->eng[eid].plan[k].ps;
            user[i] = user[i] == -1 || user[i] == eid ? eid : -2;
        }
    for (int eid = 0; eid < neng; eid++)
        for (size_t k = 0; k < s->eng[eid].nplan; k++) s->eng[eid].plan[k].excl = user[s->eng[eid].plan[k].ps] >= 0;
    free(user);
    /* every transfer's shared servers first (mem_dma_due looks at those
     * only); servers are independent, so their order changes nothing */
    for (int eid = 0; eid < neng; eid++) {
        SimEngine *e = &s->eng[eid];
        for (int i = 0; i < e->count; i++) {
            SimPre *pre = &e->pre[i];
            /* (its DMA fields share room with the mat/vec ones); an instruction
             * never planned (not reached by the checks, or faulting) has none,
             * and e->plan may be NULL then */
            if (!sim_pre_is_dma(pre) || !pre->nuse) continue;
            SimUse *u = e->plan + pre->use_at, tmp;
            uint32_t ns = 0;
            for (uint32_t k = 0; k < pre->nuse; k++)
                if (!u[k].excl) {
                    tmp = u[k];
                    memmove(u + ns + 1, u + ns, (k - ns) * sizeof *u); /* keeps both groups in order */
                    u[ns++] = tmp;
                }
            pre->nshared = ns;
        }
    }
    return 0;
}

/* Puts every DMA server back to idle at time 0. */
void mem_reset(AtlSim *s)
{
    for (int i = 0; i < s->nps; i++) {
        s->ps[i].v = s->ps[i].tv = 0;
        s->ps[i].n = 0;
        s->ps[i].job = s->ps[i].mem;
        s->ps[i].joins = 0;
        s->ps[i].ports = i >= s->ps_sram && i < s->ps_port ? s->chip.sram_ports : 1;
    }
    for (int i = 0; i < s->ncores * ISA_NUM_ENGINES; i++) s->eng[i].nuse = 0;
}
