/* mem.c - the memory and contention model. Every shared resource (DRAM
 * channel, a cluster's NoC link per direction, a cluster SRAM port, an LMEM
 * bank, a core's DMA port into LMEM) is a server with a next-free time and a
 * bandwidth. A DMA burst reserves every server on its path at once, starting
 * when all are free (cut-through); a matrix/vector instruction reserves the
 * LMEM banks its operands touch. Waiting for a server is a resource stall. */
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

/* Byte address of linear element `idx` of a strided 4-D operand (byte strides). */
static uint64_t elem_addr(uint64_t base, const uint32_t shape[4], const int32_t st[4], uint64_t idx)
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
    int banks = s->chip.lmem_banks, nb = 0;
    memset(pre->banks, 0, sizeof pre->banks);
    for (int i = 0; i < pre->nr; i++) {
        int f, n;
        bank_span(s, pre->r[i].lo, pre->r[i].hi - pre->r[i].lo, &f, &n);
        for (int j = 0; j < n; j++) {
            int b = (f + j) % banks;
            if (!(pre->banks[b >> 6] >> (b & 63) & 1)) { pre->banks[b >> 6] |= 1ull << (b & 63); nb++; }
        }
    }
    pre->lmem_occ = nb ? tim_occupancy(pre->lmem_rd + pre->lmem_wr, (double)nb * s->chip.lmem_bank_bytes_per_cycle) : 0;
}

uint64_t mem_lmem_reserve(AtlSim *s, int core, int engine, uint64_t t, const SimPre *pre)
{
    SimServer *bk = s->core[core].banks;
    int eid = sim_eid(core, engine);
    uint64_t start = t;
    for (int w = 0; w < 4; w++)
        for (uint64_t m = pre->banks[w]; m; m &= m - 1) {
            int b = w * 64 + __builtin_ctzll(m);
            if (bk[b].free > start) start = bk[b].free;
        }
    for (int w = 0; w < 4; w++)
        for (uint64_t m = pre->banks[w]; m; m &= m - 1) {
            int b = w * 64 + __builtin_ctzll(m);
            bk[b].free = start + pre->lmem_occ;
            bk[b].owner = eid;
        }
    return start;
}

/* Occupancy of a server for `bytes`, remembering the last answer. */
static inline uint64_t srv_occ(SimServer *v, uint64_t bytes)
{
    if (bytes != v->memo_bytes) { v->memo_bytes = bytes; v->memo_occ = tim_occupancy(bytes, v->bw); }
    return v->memo_occ;
}

/* How many consecutive elements (from a multiple of the answer) are contiguous. */
static uint64_t dense_run(const uint32_t shape[4], const int32_t st[4], int es)
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

void mem_dma_begin(AtlSim *s, int core, int engine, const AtlInsn *in)
{
    SimEngine *e = &s->eng[sim_eid(core, engine)];
    int es = isa_dtype_size(in->dtype);
    e->dma_dense[0] = dense_run(in->shape, in->dst_stride, es);
    e->dma_dense[1] = in->op == ISA_OP_DMA_COPY ? dense_run(in->shape, in->src_stride, es) : 1;
    uint64_t total = (uint64_t)in->shape[0] * in->shape[1] * in->shape[2] * in->shape[3];
    e->dma_es = es;
    e->dma_esh = es == 4 ? 2 : es == 2 ? 1 : 0;
    e->dma_bb = (uint64_t)s->chip.dma_burst_bytes;
    if (e->dma_bb >= (uint64_t)es) e->dma_bb -= e->dma_bb % (uint64_t)es;   /* whole elements per burst */
    e->dma_flat[0] = e->dma_dense[0] >= total;
    e->dma_flat[1] = e->dma_dense[1] >= total;
    const SimPre *pre = &e->pre[e->pc];
    e->dma_off = 0;
    e->dma_end = pre->bytes;
    int src = in->op == ISA_OP_DMA_FILL ? in->dst_space : in->src_space;
    e->dma_latency = tim_dma_path_latency(&s->chip, in->dst_space, src);
    /* the fast path: a contiguous copy between DRAM and the LMEM of one core */
    int cl = core / s->cpc, lcore = -1;
    e->dma_fast = 0;
    if (in->op != ISA_OP_DMA_COPY || !e->dma_flat[0] || !e->dma_flat[1] || s->il_shift < 0 || s->bank_shift < 0) return;
    if (in->dst_space == ISA_SPACE_LMEM && in->src_space == ISA_SPACE_DRAM && !(in->mask & (in->mask - 1u))) {
        lcore = in->mask ? __builtin_ctz(in->mask) : core % s->cpc;
        e->dma_lmem = in->dst;
        e->dma_dram = in->src;
        e->dma_noc = &s->noc_in[cl];
    } else if (in->dst_space == ISA_SPACE_DRAM && in->src_space == ISA_SPACE_LMEM) {
        lcore = in->src_core;
        e->dma_lmem = in->src;
        e->dma_dram = in->dst;
        e->dma_noc = &s->noc_out[cl];
    } else {
        return;
    }
    SimCore *lc = &s->core[cl * s->cpc + lcore];
    e->dma_fast = 1;
    e->dma_port = lc->dma_port;
    e->dma_banks = lc->banks;
    e->dma_occ_noc = tim_occupancy(e->dma_bb, e->dma_noc->bw);
    e->dma_occ_port = tim_occupancy(e->dma_bb, e->dma_port->bw);
    e->dma_occ_ch = tim_occupancy(e->dma_bb, s->dram_ch[0].bw);
}

/* One burst of a fast-path transfer (see mem_dma_begin), with the same
 * result as the general path below: the DRAM channel, the cluster's link,
 * the LMEM DMA port and the banks the burst covers. Returns 0 without doing
 * anything when the burst crosses a channel interleave boundary (the
 * general path splits it). */
static int dma_burst_fast(AtlSim *s, SimEngine *e, int eid, uint64_t t, uint64_t bytes, uint64_t *next, uint64_t *done)
{
    uint64_t off = e->dma_off, il = (uint64_t)s->chip.dram_interleave, ua = e->dma_dram + off;
    if ((ua & (il - 1)) + bytes > il) return 0;
    SimServer *ch = &s->dram_ch[(ua >> s->il_shift) & ((uint64_t)s->chip.dram_channels - 1)];
    SimServer *noc = e->dma_noc, *port = e->dma_port, *bk = e->dma_banks;
    int f, nb, mask = s->chip.lmem_banks - 1;
    bank_span(s, e->dma_lmem + off, bytes, &f, &nb);
    uint64_t oc = e->dma_occ_ch, on = e->dma_occ_noc, op = e->dma_occ_port;
    if (bytes != e->dma_bb) { oc = tim_occupancy(bytes, ch->bw); on = tim_occupancy(bytes, noc->bw); op = tim_occupancy(bytes, port->bw); }
    uint64_t ob = bytes == (uint64_t)s->chip.dma_burst_bytes ? s->bank_occ_full[nb]
                : tim_occupancy(bytes, (double)nb * s->chip.lmem_bank_bytes_per_cycle);
    uint64_t t0 = t, tself = t;
#define SEE(v) do { uint64_t fr_ = (v)->free; if (fr_ > t0) t0 = fr_; if ((v)->owner == eid && fr_ > tself) tself = fr_; } while (0)
    SEE(ch); SEE(noc); SEE(port);
    for (int j = 0; j < nb; j++) SEE(&bk[(f + j) & mask]);
#undef SEE
    ch->free = t0 + oc; ch->owner = eid;
    noc->free = t0 + on; noc->owner = eid;
    port->free = t0 + op; port->owner = eid;
    for (int j = 0; j < nb; j++) { bk[(f + j) & mask].free = t0 + ob; bk[(f + j) & mask].owner = eid; }
    uint64_t occ_eng = on > op ? on : op;
    if (ob > occ_eng) occ_eng = ob;
    uint64_t occ_all = oc > occ_eng ? oc : occ_eng;
    if (!occ_eng) occ_eng = occ_all;
    e->st.stall_res += t0 - tself;
    e->dma_off += bytes;
    *done = t0 + occ_all + e->dma_latency;
    *next = t0 + occ_eng;
    return 1;
}

static int add_lmem_end(AtlSim *s, SimPathEnt *p, int n, int core, uint64_t addr, uint64_t bytes)
{
    SimCore *c = &s->core[core];
    int f, nb;
    p[n++] = (SimPathEnt){c->dma_port, srv_occ(c->dma_port, bytes), 0};
    bank_span(s, addr, bytes, &f, &nb);
    uint64_t occ = bytes == (uint64_t)s->chip.dma_burst_bytes ? s->bank_occ_full[nb]
                 : tim_occupancy(bytes, (double)nb * s->chip.lmem_bank_bytes_per_cycle);
    for (int j = 0, b = f; j < nb; j++, b = b + 1 == s->chip.lmem_banks ? 0 : b + 1) p[n++] = (SimPathEnt){&c->banks[b], occ, 0};
    return n;
}

/* DRAM end of a burst: its elements' contiguous runs are split at channel
 * interleave boundaries; each channel touched carries its share. */
static int add_dram_end(AtlSim *s, SimPathEnt *p, int n, uint64_t base, const uint32_t shape[4],
                        const int32_t st[4], int es, uint64_t idx, uint64_t nelem, uint64_t dense, int flat)
{
    uint64_t il = (uint64_t)s->chip.dram_interleave, nch = (uint64_t)s->chip.dram_channels;
    int sh = s->il_shift, pow2 = sh >= 0;
    uint64_t *chb = s->chan_bytes;
    int *touched = s->chan_touched, nt = 0;
    if (flat && pow2) {
        /* one contiguous run: usually inside one interleave unit */
        uint64_t ua = base + idx * (uint64_t)es, len = nelem * (uint64_t)es;
        if ((ua & (il - 1)) + len <= il) {
            SimServer *ch = &s->dram_ch[(ua >> sh) & (nch - 1)];
            p[n++] = (SimPathEnt){ch, srv_occ(ch, len), 1};
            return n;
        }
    }
    while (nelem) {
        uint64_t run = dense - idx % dense;
        if (run > nelem) run = nelem;
        uint64_t ua = flat ? base + idx * (uint64_t)es : elem_addr(base, shape, st, idx);
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
    for (int k = 0; k < nt; k++) {
        p[n++] = (SimPathEnt){&s->dram_ch[touched[k]], srv_occ(&s->dram_ch[touched[k]], chb[touched[k]]), 1};
        chb[touched[k]] = 0;
    }
    return n;
}

static int add_end(AtlSim *s, SimPathEnt *p, int n, int core, int space, uint64_t addr, uint64_t bytes,
                   uint32_t lcores)
{
    int cl = core / s->cpc;
    switch (space) {
    case ISA_SPACE_SRAM: {
        SimServer *best = &s->sram_port[cl * s->chip.sram_ports];
        for (int i = 1; i < s->chip.sram_ports; i++)
            if (s->sram_port[cl * s->chip.sram_ports + i].free < best->free) best = &s->sram_port[cl * s->chip.sram_ports + i];
        p[n++] = (SimPathEnt){best, srv_occ(best, bytes), 0};
        return n;
    }
    default:
        for (uint32_t m = lcores; m; m &= m - 1) n = add_lmem_end(s, p, n, cl * s->cpc + __builtin_ctz(m), addr, bytes);
        return n;
    }
}

uint64_t mem_dma_burst(AtlSim *s, int core, int engine, const AtlInsn *in, uint64_t t, uint64_t *done)
{
    SimEngine *e = &s->eng[sim_eid(core, engine)];
    SimPathEnt *path = s->path;
    int n = 0, es = e->dma_es;
    uint64_t bytes = e->dma_end - e->dma_off;
    if (bytes > e->dma_bb) bytes = e->dma_bb;
    uint64_t next;
    if (e->dma_fast && dma_burst_fast(s, e, sim_eid(core, engine), t, bytes, &next, done)) return next;
    uint64_t idx = e->dma_off >> e->dma_esh, nelem = bytes >> e->dma_esh;
    uint32_t own = 1u << (core % s->cpc);
    int cl = core / s->cpc;
    if (in->dst_space == ISA_SPACE_DRAM)
        n = add_dram_end(s, path, n, in->dst, in->shape, in->dst_stride, es, idx, nelem, e->dma_dense[0], e->dma_flat[0]);
    else
        n = add_end(s, path, n, core, in->dst_space, e->dma_flat[0] ? in->dst + idx * (uint64_t)es
                    : elem_addr(in->dst, in->shape, in->dst_stride, idx), bytes,
                    in->mask ? in->mask : own);
    int src_space = in->dst_space;
    if (in->op == ISA_OP_DMA_COPY) {
        src_space = in->src_space;
        if (in->src_space == ISA_SPACE_DRAM)
            n = add_dram_end(s, path, n, in->src, in->shape, in->src_stride, es, idx, nelem, e->dma_dense[1], e->dma_flat[1]);
        else
            n = add_end(s, path, n, core, in->src_space, e->dma_flat[1] ? in->src + idx * (uint64_t)es
                        : elem_addr(in->src, in->shape, in->src_stride, idx), bytes,
                        1u << in->src_core);
    }
    if (in->dst_space == ISA_SPACE_DRAM && (in->op == ISA_OP_DMA_FILL || src_space != ISA_SPACE_DRAM))
        path[n++] = (SimPathEnt){&s->noc_out[cl], srv_occ(&s->noc_out[cl], bytes), 0};
    else if (src_space == ISA_SPACE_DRAM && in->dst_space != ISA_SPACE_DRAM)
        path[n++] = (SimPathEnt){&s->noc_in[cl], srv_occ(&s->noc_in[cl], bytes), 0};
    else if (src_space == ISA_SPACE_DRAM) {
        path[n++] = (SimPathEnt){&s->noc_in[cl], srv_occ(&s->noc_in[cl], bytes), 0};
        path[n++] = (SimPathEnt){&s->noc_out[cl], srv_occ(&s->noc_out[cl], bytes), 0};
    }
    int eid = sim_eid(core, engine);
    uint64_t t0 = t, tself = t;
    for (int i = 0; i < n; i++) {
        uint64_t f = path[i].sv->free;
        if (f > t0) t0 = f;
        if (path[i].sv->owner == eid && f > tself) tself = f;
    }
    uint64_t occ_all = 0, occ_eng = 0;
    for (int i = 0; i < n; i++) {
        uint64_t o = path[i].occ;
        path[i].sv->free = t0 + o;
        path[i].sv->owner = eid;
        if (o > occ_all) occ_all = o;
        if (!path[i].channel && o > occ_eng) occ_eng = o;
    }
    if (!occ_eng) occ_eng = occ_all;
    e->st.stall_res += t0 - tself;
    e->dma_off += bytes;
    *done = t0 + occ_all + e->dma_latency;
    return t0 + occ_eng;
}
