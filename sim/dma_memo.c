/* dma_memo.c - remembers the burst work of DMA transfers (mem_dma_plan), so
 * that loading a program plans each distinct transfer geometry once.
 *
 * Planning a strided transfer walks every burst (the DRAM channels each
 * burst touches, the LMEM banks it spans); a compiled network repeats the
 * same shapes and strides thousands of times at addresses that differ by
 * whole interleave periods, and the walk dominated sim_load (0.3 s of
 * ResNet-50's 0.9 s timing-only run). The work depends on the addresses
 * only through the DRAM channel and LMEM bank each byte falls in, which
 * repeat with period interleave x channels (DRAM) and bank width x banks
 * (LMEM); SRAM does not depend on the address. So the key is the
 * instruction's geometry with each end's base address reduced modulo its
 * period, and the memo returns exactly what the walk computes (the walk's
 * results and their order are stored, not approximated).
 *
 * Ownership: the table hangs off the AtlSim (sim_free releases it through
 * dma_memo_free); entries live as long as the simulator, whose chip fixes
 * every constant the walk reads.
 */
#include <stdlib.h>
#include <string.h>
#include "sim/sim_int.h"

static uint64_t key_hash(const SimDmaKey *k)
{
    const uint8_t *p = (const uint8_t *)k;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < sizeof *k; i++) { h ^= p[i]; h *= 0x100000001b3ull; }
    return h;
}

void dma_memo_key(const AtlSim *s, const AtlInsn *in, uint64_t bytes, SimDmaKey *k)
{
    memset(k, 0, sizeof *k); /* padding too: the key is hashed and compared as bytes */
    k->op = in->op;
    k->dtype = in->dtype;
    k->space[0] = in->dst_space;
    k->space[1] = in->op != ISA_OP_DMA_FILL ? in->src_space : 0;
    k->bytes = bytes;
    for (int d = 0; d < 4; d++) {
        k->shape[d] = in->shape[d];
        k->stride[0][d] = in->dst_stride[d];
        k->stride[1][d] = in->op != ISA_OP_DMA_FILL ? in->src_stride[d] : 0;
    }
    uint64_t dram_period = (uint64_t)s->chip.dram_interleave * (uint64_t)s->chip.dram_channels;
    uint64_t lmem_period = (uint64_t)s->chip.lmem_bank_width * (uint64_t)s->chip.lmem_banks;
    for (int end = 0; end < 2; end++) {
        if (end && in->op == ISA_OP_DMA_FILL) break;
        uint64_t base = end ? in->src : in->dst;
        int space = k->space[end];
        k->phase[end] = space == ISA_SPACE_DRAM ? base % dram_period : space == ISA_SPACE_SRAM || space == ISA_SPACE_PEER ? 0 : base % lmem_period;
    }
}

const SimDmaMemo *dma_memo_find(const AtlSim *s, const SimDmaKey *k)
{
    const SimDmaTable *t = &s->dma_memo;
    if (!t->nslots) return NULL;
    for (size_t j = key_hash(k) & (t->nslots - 1);; j = (j + 1) & (t->nslots - 1)) {
        const SimDmaMemo *m = t->slot[j];
        if (!m) return NULL;
        if (!memcmp(&m->key, k, sizeof *k)) return m;
    }
}

static int table_grow(SimDmaTable *t)
{
    size_t n = t->nslots ? 2 * t->nslots : 1024;
    SimDmaMemo **sl = calloc(n, sizeof *sl);
    if (!sl) return -1;
    for (size_t i = 0; i < t->nslots; i++) {
        SimDmaMemo *m = t->slot[i];
        if (!m) continue;
        size_t j = key_hash(&m->key) & (n - 1);
        while (sl[j]) j = (j + 1) & (n - 1);
        sl[j] = m;
    }
    free(t->slot);
    t->slot = sl;
    t->nslots = n;
    return 0;
}

int dma_memo_add(AtlSim *s, const SimDmaKey *k, const uint64_t w[3])
{
    SimDmaTable *t = &s->dma_memo;
    if ((t->count + 1) * 2 > t->nslots && table_grow(t)) return -1;
    int nch = s->nchan[0] + s->nchan[1];
    SimDmaMemo *m = malloc(sizeof *m + (size_t)(nch ? nch : 1) * sizeof m->chan[0]);
    if (!m) return -1;
    m->key = *k;
    memcpy(m->w, w, sizeof m->w);
    int c = 0;
    for (int end = 0; end < 2; end++) {
        m->nchan[end] = s->nchan[end];
        for (int i = 0; i < s->nchan[end]; i++, c++) {
            int ch = s->chan_list[end][i];
            m->chan[c] = (SimDmaChan){ch, s->chan_work[end][ch], s->chan_bursts[end][ch]};
        }
    }
    size_t j = key_hash(k) & (t->nslots - 1);
    while (t->slot[j]) j = (j + 1) & (t->nslots - 1);
    t->slot[j] = m;
    t->count++;
    return 0;
}

void dma_memo_restore(AtlSim *s, const SimDmaMemo *m, uint64_t w[3])
{
    memcpy(w, m->w, sizeof m->w);
    int c = 0;
    for (int end = 0; end < 2; end++) {
        s->nchan[end] = m->nchan[end];
        for (int i = 0; i < m->nchan[end]; i++, c++) {
            const SimDmaChan *x = &m->chan[c];
            s->chan_list[end][i] = x->ch;
            s->chan_work[end][x->ch] = x->work;
            s->chan_bursts[end][x->ch] = x->bursts;
        }
    }
}

void dma_memo_free(SimDmaTable *t)
{
    for (size_t i = 0; i < t->nslots; i++) free(t->slot[i]);
    free(t->slot);
    memset(t, 0, sizeof *t);
}
