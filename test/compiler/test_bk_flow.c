/* test_bk_flow.c - the cost model's DMA pricing (compiler/cost/flow.c): the
 * fast walk and the memo must give exactly the work and the burst counts
 * of the reference (burst by burst, every address by division) on every
 * server. A DMA whose two ends use one server (DRAM to DRAM on one
 * channel) puts the larger end's work there, as the simulator does
 * (copy_ends_share_a_server).
 *
 * Random DMAs (copies and fills, DRAM/LMEM ends, dense, strided, transposed
 * and negative strides, multicast masks, unaligned bases) on configs/a1.ini,
 * configs/tiny.ini and a chip with 3 DRAM channels and 1.5 KiB interleave (not
 * powers of two), 64-byte bursts and 5 slow LMEM banks; each DMA is planned three
 * ways and the per-server work and latency compared. The memo is used with
 * a repeated stream so that hits are checked too (the stats must show
 * hits). */
#include <stdlib.h>
#include "test/test.h"
#include "test/compiler/rand64.h"
#include "compiler/cost/cost.h"
#include "isa/config.h"
#include "isa/timing.h"

static uint64_t rng = 88172645463325252ull;
static int pick(int n) { return rand64_pick(&rng, n); }

/* A random DMA of at most ~64K elements. */
static AtlInsn random_dma(const AtlChip *ch)
{
    static const int dts[] = {ISA_F32, ISA_F16, ISA_I8, ISA_I32};
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = pick(8) ? ISA_OP_DMA_COPY : ISA_OP_DMA_FILL;
    in.dtype = (uint8_t)dts[pick(4)];
    int es = isa_dtype_size(in.dtype);
    int sp = pick(4);
    in.dst_space = (uint8_t)(sp == 0 || sp == 3 ? ISA_SPACE_LMEM : ISA_SPACE_DRAM);
    in.src_space = (uint8_t)(sp == 1 || sp == 3 ? ISA_SPACE_LMEM : ISA_SPACE_DRAM);
    uint32_t lim[4] = {2, 4, 64, 300};
    for (int d = 0; d < 4; d++) in.shape[d] = pick(3) ? 1 + (uint32_t)pick((int)lim[d]) : 1;
    /* strides: dense, transposed (inner dim far apart), padded, or negative */
    for (int end = 0; end < 2; end++) {
        int32_t *st = end ? in.src_stride : in.dst_stride;
        int kind = pick(4);
        int64_t s = es;
        for (int d = 3; d >= 0; d--) {
            st[d] = (int32_t)s;
            s *= in.shape[d] + (kind == 2 ? (uint32_t)pick(3) : 0);
        }
        if (kind == 1) { int32_t t = st[3]; st[3] = st[2]; st[2] = t; }
        if (kind == 3) st[1 + pick(3)] *= -1;
        if (pick(6) == 0) st[3] = es * (int32_t)(ch->dram_interleave / es + pick(3)); /* step past the interleave */
    }
    uint64_t span = 1u << 22;
    in.dst = 8 * span + (uint64_t)pick(1 << 20) * (pick(2) ? (uint64_t)es : 1);
    in.src = 8 * span + (uint64_t)pick(1 << 20) * (pick(2) ? (uint64_t)es : 1);
    if (in.dst_space == ISA_SPACE_DRAM) in.dst |= (uint64_t)(1 + pick(3)) << 32; /* region tag */
    if (in.src_space == ISA_SPACE_DRAM) in.src |= (uint64_t)(1 + pick(3)) << 32;
    if (in.dst_space == ISA_SPACE_LMEM && pick(3) == 0) in.mask = (uint32_t)(1 + pick((1 << ch->cores_per_cluster) - 1));
    return in;
}

/* Work and bursts per server of a plan (dense: w[0..nsv) the work,
 * w[nsv..2 nsv) the bursts), and its latency. */
static void dense(const BkFlowPlan *f, uint64_t *w, int nsv, uint64_t *lat)
{
    memset(w, 0, 2 * (size_t)nsv * sizeof *w);
    for (int u = 0; u < f->nuse; u++) {
        w[f->use[u].server] += f->use[u].work;
        w[nsv + f->use[u].server] += f->use[u].bursts;
    }
    *lat = f->lat;
}

static void compare_ways(const AtlChip *ch, const char *name, int ndma)
{
    AtlErr e;
    BkFlowPlanner *p = bk_flow_new(ch, &e);
    REQUIRE(p);
    int nsv = bk_flow_servers(p), ncores = cfg_total_cores(ch), bad = 0;
    uint64_t *w[3];
    for (int i = 0; i < 3; i++) { w[i] = calloc(2 * (size_t)nsv, sizeof *w[i]); REQUIRE(w[i]); }
    AtlInsn *dmas = calloc((size_t)ndma, sizeof *dmas);
    REQUIRE(dmas);
    for (int i = 0; i < ndma; i++) dmas[i] = random_dma(ch);
    uint64_t nonzero = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < ndma && bad < 5; i++) {
            int core = (i * 7) % ncores;
            uint64_t lat[3];
            for (int how = 0; how < 3; how++) {
                BkFlowPlan f;
                REQUIRE(bk_flow_plan(p, core, &dmas[i], NULL, how, &f, &e) == 0);
                dense(&f, w[how], nsv, &lat[how]);
            }
            for (int s = 0; s < nsv; s++) nonzero += w[2][s] != 0;
            int same = lat[0] == lat[2] && lat[1] == lat[2] && !memcmp(w[0], w[2], 2 * (size_t)nsv * sizeof *w[0]) &&
                       !memcmp(w[1], w[2], 2 * (size_t)nsv * sizeof *w[0]);
            if (!same) {
                bad++;
                const AtlInsn *in = &dmas[i];
                CHECKF(0, "%s dma %d: op %d dt %d %d<-%d dst %llx src %llx shape %u %u %u %u ds %d %d %d %d ss %d %d %d %d",
                       name, i, in->op, in->dtype, in->dst_space, in->src_space, (unsigned long long)in->dst,
                       (unsigned long long)in->src, in->shape[0], in->shape[1], in->shape[2], in->shape[3],
                       in->dst_stride[0], in->dst_stride[1], in->dst_stride[2], in->dst_stride[3], in->src_stride[0],
                       in->src_stride[1], in->src_stride[2], in->src_stride[3]);
                for (int s = 0; s < 2 * nsv; s++)
                    if (w[0][s] != w[2][s] || w[1][s] != w[2][s])
                        printf("    server %d %s: memo %llu walk %llu reference %llu\n", s % nsv, s < nsv ? "work" : "bursts",
                               (unsigned long long)w[0][s], (unsigned long long)w[1][s], (unsigned long long)w[2][s]);
            }
        }
    uint64_t hits, misses;
    bk_flow_stats(p, &hits, &misses);
    CHECKF(hits >= (uint64_t)ndma, "%s: memo hits %llu, misses %llu", name, (unsigned long long)hits, (unsigned long long)misses);
    CHECK(nonzero > (uint64_t)ndma); /* the DMAs did put work on servers */
    printf("  %s: %d DMAs x 2 passes, memo %llu hits / %llu misses\n", name, ndma, (unsigned long long)hits,
           (unsigned long long)misses);
    for (int i = 0; i < 3; i++) free(w[i]);
    free(dmas);
    bk_flow_free(p);
}

TEST(walk_and_memo_match_reference_a1)
{
    AtlChip ch;
    AtlErr e;
    REQUIRE(cfg_load("configs/a1.ini", &ch, &e) == 0);
    compare_ways(&ch, "a1", 1500);
}

TEST(walk_and_memo_match_reference_tiny)
{
    AtlChip ch;
    AtlErr e;
    REQUIRE(cfg_load("configs/tiny.ini", &ch, &e) == 0);
    compare_ways(&ch, "tiny", 800);
}

TEST(walk_and_memo_match_reference_odd_chip)
{
    AtlChip ch;
    AtlErr e;
    REQUIRE(cfg_load("configs/a1.ini", &ch, &e) == 0);
    ch.dram_channels = 3;      /* channel = chunk % 3: no mask */
    ch.dram_interleave = 1536; /* not a power of two either */
    ch.dma_burst_bytes = 64;
    ch.lmem_banks = 5;         /* bursts can be limited by the banks */
    ch.lmem_bank_bytes_per_cycle = 8;
    compare_ways(&ch, "odd", 1000);
}

/* A DRAM-to-DRAM copy on tiny's one channel: the channel carries the
 * larger end's work (the simulator merges a transfer's uses of one
 * server, sim/mem.c), not the sum of both; the NoC carries it both ways. */
TEST(copy_ends_share_a_server)
{
    AtlChip ch;
    AtlErr e;
    REQUIRE(cfg_load("configs/tiny.ini", &ch, &e) == 0);
    BkFlowPlanner *p = bk_flow_new(&ch, &e);
    REQUIRE(p);
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_DMA_COPY;
    in.dtype = ISA_F32;
    in.dst_space = in.src_space = ISA_SPACE_DRAM;
    in.shape[0] = in.shape[1] = 1;
    in.shape[2] = 64;
    in.shape[3] = 96;
    in.dst_stride[3] = in.src_stride[3] = 4;
    in.dst_stride[2] = in.src_stride[2] = 4 * 96;
    in.src = 1u << 20;
    in.dst = 2u << 20;
    uint64_t bytes = 64 * 96 * 4, one = tim_occupancy(ch.dma_burst_bytes, tim_dram_channel_bytes_per_cycle(&ch));
    for (int how = 0; how < 3; how++) {
        BkFlowPlan f;
        REQUIRE(bk_flow_plan(p, 0, &in, NULL, how, &f, &e) == 0);
        int chans = 0;
        for (int u = 0; u < f.nuse; u++) {
            if (f.use[u].server >= ch.dram_channels) continue;
            chans++;
            CHECK_EQ_INT(f.use[u].work, bytes / (uint64_t)ch.dma_burst_bytes * one);
            CHECK_EQ_INT(f.use[u].bursts, bytes / (uint64_t)ch.dma_burst_bytes);
        }
        CHECK_EQ_INT(chans, 1);
        CHECK_EQ_INT(f.nuse, 3); /* the channel, the NoC link in and out */
    }
    bk_flow_free(p);
}

int main(void)
{
    RUN(walk_and_memo_match_reference_a1);
    RUN(walk_and_memo_match_reference_tiny);
    RUN(walk_and_memo_match_reference_odd_chip);
    RUN(copy_ends_share_a_server);
    return test_summary("test_bk_flow");
}
