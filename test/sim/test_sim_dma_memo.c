/* test_sim_dma_memo.c - the DMA plan memo (sim/dma_memo.c) gives exactly
 * what walking the bursts gives.
 *
 * Random strided transfers (DRAM, SRAM, LMEM at both ends, fills, several
 * dtypes) are planned twice: in one simulator each transfer follows a twin
 * whose base addresses differ by whole periods (DRAM interleave x channels,
 * LMEM bank width x banks), so its plan comes from the memo; in a fresh
 * simulator of its own each is walked burst by burst; half of them repeat
 * the previous geometry at another phase, whose plan differs. Every planned
 * server, its work and its per-burst share must agree. Reaches into the
 * simulator's internals (sim/sim_int.h), as only the plan shows this. */
#include "test/test.h"
#include "test/sim/simtest.h"
#include "sim/sim_int.h"

enum { NTRANSFERS = 300 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void memo_chip(AtlChip *c)
{
    tchip(c, 2, 2);
    c->dram_channels = 4;
    c->dram_interleave = 256;
    c->dram_gbps = 64;
}

/* A random transfer (not necessarily legal). */
static AtlInsn any_transfer(const AtlChip *c)
{
    static const int dts[] = {ISA_I8, ISA_F16, ISA_F32};
    static const int spaces[] = {ISA_SPACE_DRAM, ISA_SPACE_SRAM, ISA_SPACE_LMEM};
    int dt = dts[rnd(3)], es = isa_dtype_size(dt);
    uint32_t rows = 1 + rnd(12), cols = 1 + rnd(300);
    int dsp = spaces[rnd(3)], ssp = spaces[rnd(3)];
    int32_t dstride = (int32_t)(cols * es + rnd(3) * 64 + rnd(2) * es), sstride = (int32_t)(cols * es + rnd(5) * 32);
    uint64_t extent_d = (uint64_t)rows * (uint64_t)dstride, extent_s = (uint64_t)rows * (uint64_t)sstride;
    uint64_t cap_d = dsp == ISA_SPACE_DRAM ? 1 << 20 : dsp == ISA_SPACE_SRAM ? (uint64_t)c->sram_bytes / 2 : (uint64_t)c->lmem_bytes / 2;
    uint64_t cap_s = ssp == ISA_SPACE_DRAM ? 1 << 20 : ssp == ISA_SPACE_SRAM ? (uint64_t)c->sram_bytes / 2 : (uint64_t)c->lmem_bytes / 2;
    uint64_t dst = (rnd((uint32_t)(cap_d - extent_d) / 16)) * 16, src = (rnd((uint32_t)(cap_s - extent_s) / 16)) * 16;
    AtlInsn x = I_dma(dt, dsp, dst, dstride, ssp, src, sstride, rows, cols);
    if (rnd(5) == 0) { /* a fill: no source */
        x.op = ISA_OP_DMA_FILL;
        x.src = 0; x.src_space = 0;
        memset(x.src_stride, 0, sizeof x.src_stride);
    }
    return x;
}

/* A random transfer the simulator accepts, with its twin (twin_of). */
static AtlInsn random_transfer(const AtlSim *s, const AtlChip *c)
{
    for (;;) {
        AtlInsn x = any_transfer(c);
        SimPre pre;
        AtlSimFaultKind kind;
        char msg[256];
        if (!sim_check_insn(s, 0, ISA_ENGINE_DMA, &x, &pre, &kind, msg, sizeof msg)) return x;
    }
}

/* The same transfer with every base moved by a whole period forward. */
static AtlInsn twin_of(const AtlChip *c, AtlInsn x)
{
    uint64_t dram = (uint64_t)c->dram_interleave * (uint64_t)c->dram_channels * (1 + rnd(8));
    uint64_t lmem = (uint64_t)c->lmem_bank_width * (uint64_t)c->lmem_banks * (1 + rnd(4));
    x.dst += x.dst_space == ISA_SPACE_DRAM ? dram : x.dst_space == ISA_SPACE_SRAM ? 64 * (1 + rnd(8)) : lmem;
    if (x.op != ISA_OP_DMA_FILL) x.src += x.src_space == ISA_SPACE_DRAM ? dram : x.src_space == ISA_SPACE_SRAM ? 64 * (1 + rnd(8)) : lmem;
    return x;
}

static int same_plan(const AtlSim *a, int ia, const AtlSim *b, int ib, int k)
{
    const SimEngine *ea = &a->eng[ISA_ENGINE_DMA], *eb = &b->eng[ISA_ENGINE_DMA];
    const SimPre *pa = &ea->pre[ia], *pb = &eb->pre[ib];
    CHECKF(pa->dma_solo == pb->dma_solo && pa->dma_latency == pb->dma_latency && pa->nuse == pb->nuse,
           "transfer %d: solo %llu/%llu latency %llu/%llu servers %u/%u", k, (unsigned long long)pa->dma_solo,
           (unsigned long long)pb->dma_solo, (unsigned long long)pa->dma_latency, (unsigned long long)pb->dma_latency, pa->nuse, pb->nuse);
    if (pa->nuse != pb->nuse) return 0;
    int ok = 1;
    for (uint32_t u = 0; u < pa->nuse; u++) {
        const SimUse *x = &ea->plan[pa->use_at + u], *y = &eb->plan[pb->use_at + u];
        if (x->ps != y->ps || x->work != y->work || x->q != y->q || x->iq != y->iq) ok = 0;
    }
    CHECKF(ok, "transfer %d: the planned servers differ", k);
    return ok;
}

TEST(memo_plans_equal_burst_walks)
{
    AtlChip c;
    memo_chip(&c);
    AtlErr e;
    AtlInsn xs[NTRANSFERS];
    AtlProgram p;
    AtlSim *s = sim_create(&c, NULL, &e);
    REQUIRE(s);
    tp_init(&p, 1);
    for (int k = 0; k < NTRANSFERS; k++) {
        AtlInsn twin;
        SimPre pre;
        AtlSimFaultKind kind;
        char msg[256];
        do {
            xs[k] = random_transfer(s, &c);
            if (k && rnd(2)) { /* the previous geometry at another phase: must not share its plan */
                AtlInsn y = xs[k - 1];
                y.dst += 16 * (1 + rnd(40));
                if (y.op != ISA_OP_DMA_FILL) y.src += 16 * (1 + rnd(40));
                if (!sim_check_insn(s, 0, ISA_ENGINE_DMA, &y, &pre, &kind, msg, sizeof msg)) xs[k] = y;
            }
            twin = twin_of(&c, xs[k]);
        } while (sim_check_insn(s, 0, ISA_ENGINE_DMA, &twin, &pre, &kind, msg, sizeof msg));
        tp_add(&p, 0, ISA_ENGINE_DMA, twin);
        tp_add(&p, 0, ISA_ENGINE_DMA, xs[k]);
    }
    tp_add(&p, 0, ISA_ENGINE_DMA, I(ISA_OP_END));
    REQUIRE(sim_load(s, &p, &e) == 0);
    /* every transfer found its twin's plan: one memo entry per pair */
    CHECK(s->dma_memo.count <= NTRANSFERS);
    int agree = 0;
    for (int k = 0; k < NTRANSFERS; k++) {
        AtlProgram q;
        tp_init(&q, 1);
        tp_add(&q, 0, ISA_ENGINE_DMA, xs[k]);
        tp_add(&q, 0, ISA_ENGINE_DMA, I(ISA_OP_END));
        AtlSim *fresh = sim_create(&c, NULL, &e);
        REQUIRE(fresh);
        REQUIRE(sim_load(fresh, &q, &e) == 0);
        CHECK_EQ_INT(fresh->dma_memo.count, 1);
        agree += same_plan(s, 2 * k + 1, fresh, 0, k);
        sim_free(fresh);
        prog_free(&q);
    }
    CHECK_EQ_INT(agree, NTRANSFERS);
    sim_free(s);
    prog_free(&p);
}

TEST(memo_keeps_cycles_of_a_run)
{
    /* the same program twice on one simulator (the second load plans from
     * the memo only) gives the same cycles and stats */
    AtlChip c;
    memo_chip(&c);
    AtlErr e;
    AtlProgram p;
    AtlSim *s = sim_create(&c, NULL, &e);
    REQUIRE(s);
    tp_init(&p, 1);
    for (int k = 0; k < 60; k++) tp_add(&p, 0, ISA_ENGINE_DMA, random_transfer(s, &c));
    tp_add(&p, 0, ISA_ENGINE_DMA, I(ISA_OP_END));
    REQUIRE(sim_load(s, &p, &e) == 0);
    int r = sim_run(s, &e);
    CHECKF(r == 0, "%s", e.msg);
    REQUIRE(r == 0);
    uint64_t cycles = sim_stats(s)->cycles, rd = sim_stats(s)->bytes.dram_rd;
    size_t entries = s->dma_memo.count;
    REQUIRE(sim_load(s, &p, &e) == 0);
    CHECK_EQ_INT(s->dma_memo.count, entries);
    REQUIRE(sim_run(s, &e) == 0);
    CHECK_EQ_INT(sim_stats(s)->cycles, cycles);
    CHECK_EQ_INT(sim_stats(s)->bytes.dram_rd, rd);
    CHECK(cycles > 0);
    sim_free(s);
    prog_free(&p);
}

int main(void)
{
    RUN(memo_plans_equal_burst_walks);
    RUN(memo_keeps_cycles_of_a_run);
    return test_summary("test_sim_dma_memo");
}
