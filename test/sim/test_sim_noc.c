/* test_sim_noc.c - DMA between clusters over the NoC's cluster links
 * ([noc] cluster_links = 1, `peer@C:` operands): a lone copy takes the
 * closed form of docs/timing.md (issue + SRAM latency + hops x hop_cycles
 * + its bursts at the slower of a link and an SRAM port), on a ring and on
 * a mesh, pushed and pulled; copies crossing one link share it, copies on
 * disjoint links do not slow each other; no DRAM bandwidth or DRAM bytes
 * are used and the bytes and energy are counted per link crossed; the data
 * lands in the other cluster's SRAM and `signal` counts on the mask's cores
 * there; a peer operand is an illegal instruction on a chip without
 * cluster links, in dma.fill, at both ends or naming a cluster the chip
 * lacks; a copy into another cluster's SRAM races with that cluster's own
 * reads; and the trace names the clusters and links and draws the
 * semaphore arrow across clusters. */
#include "test/test.h"
#include "test/sim/simtest.h"

/* 4 clusters x 1 core (ring, or a 2 x 2 mesh): links of 16 B/cycle and 5
 * cycles a hop, SRAM ports of 32 B/cycle: a link is every copy's bottleneck. */
static void noc_chip(AtlChip *c, int topology)
{
    tchip(c, 4, 1);
    c->noc_cluster_links = 1;
    c->noc_topology = topology;
    c->noc_link_bytes_per_cycle = 16;
    c->noc_hop_cycles = 5;
}

static AtlSim *run_prog(const AtlChip *c, AtlProgram *p, int trace, AtlErr *e)
{
    AtlSimOptions o;
    sim_options_default(&o);
    o.trace = trace;
    tp_end_all(p);
    AtlSim *s = sim_create(c, &o, e);
    if (!s || sim_load(s, p, e) || sim_run(s, e)) { sim_free(s); return NULL; }
    return s;
}

/* A copy of n bytes between core 0's LMEM and cluster `cl`'s SRAM (push:
 * into it, else out of it). */
static AtlInsn peer_copy(int push, int cl, uint64_t off, uint32_t n)
{
    uint64_t peer = isa_peer_addr(cl, off);
    return push ? I_dma(ISA_I8, ISA_SPACE_PEER, peer, 0, ISA_SPACE_LMEM, 0, 0, 1, n)
                : I_dma(ISA_I8, ISA_SPACE_LMEM, 0, 0, ISA_SPACE_PEER, peer, 0, 1, n);
}

TEST(routes_on_ring_and_mesh)
{
    AtlChip c;
    int links[TIM_NOC_MAX_HOPS];
    noc_chip(&c, CFG_NOC_RING);
    CHECK_EQ_INT(tim_noc_route(&c, 0, 0, links), 0);
    CHECK_EQ_INT(tim_noc_route(&c, 0, 1, links), 1);
    CHECK_EQ_INT(links[0], 0 * TIM_NOC_DIRS + 0);
    CHECK_EQ_INT(tim_noc_route(&c, 0, 3, links), 1);     /* the shorter way: backwards */
    CHECK_EQ_INT(links[0], 0 * TIM_NOC_DIRS + 1);
    CHECK_EQ_INT(tim_noc_route(&c, 3, 1, links), 2);     /* a tie: forwards, 3 -> 0 -> 1 */
    CHECK_EQ_INT(links[0], 3 * TIM_NOC_DIRS + 0);
    CHECK_EQ_INT(links[1], 0 * TIM_NOC_DIRS + 0);
    noc_chip(&c, CFG_NOC_MESH);                            /* 2 x 2: clusters 0 1 / 2 3 */
    CHECK_EQ_INT(tim_noc_mesh_cols(&c), 2);
    CHECK_EQ_INT(tim_noc_route(&c, 0, 3, links), 2);     /* along the row, then the column */
    CHECK_EQ_INT(links[0], 0 * TIM_NOC_DIRS + 0);
    CHECK_EQ_INT(links[1], 1 * TIM_NOC_DIRS + 2);
    CHECK_EQ_INT(tim_noc_route(&c, 3, 0, links), 2);
    CHECK_EQ_INT(links[0], 3 * TIM_NOC_DIRS + 1);
    CHECK_EQ_INT(links[1], 2 * TIM_NOC_DIRS + 3);
    c.clusters = 16;
    CHECK_EQ_INT(tim_noc_mesh_cols(&c), 4);
    c.clusters = 8;
    CHECK_EQ_INT(tim_noc_mesh_cols(&c), 2);              /* 2 and 4 are as near sqrt(8): the smaller */
    CHECK_EQ_INT(tim_noc_route(&c, 0, 7, links), 4);     /* (0,0) -> (1,3) */
}

TEST(lone_copy_equals_formula)
{
    static const int topo[] = {CFG_NOC_RING, CFG_NOC_MESH};
    for (int t = 0; t < 2; t++)
        for (int push = 0; push < 2; push++) {
            AtlChip c;
            noc_chip(&c, topo[t]);
            AtlProgram p;
            tp_init(&p, 1);
            tp_add(&p, 0, ISA_ENGINE_DMA, peer_copy(push, 2, 0x100, 4100));
            AtlErr e = {{0}};
            AtlSim *s = run_prog(&c, &p, 0, &e);
            CHECKF(s, "%s", e.msg);
            if (s) {
                /* two hops either way (ring 0 -> 1 -> 2; mesh 0 -> 1 -> 3 is to 3, 0 -> 2 is one hop) */
                int hops = tim_noc_route(&c, 0, 2, NULL);
                CHECK_EQ_INT(hops, topo[t] == CFG_NOC_RING ? 2 : 1);
                uint64_t want = tim_dma_route_cycles(&c, push ? ISA_SPACE_PEER : ISA_SPACE_LMEM, push ? ISA_SPACE_LMEM : ISA_SPACE_PEER,
                                                     hops, 4100);
                /* by hand: issue 4 + SRAM 10 + hops x 5 + 16 bursts of 256 and one of 4 at 16 B/cycle */
                CHECK_EQ_INT(want, 4 + 10 + 5 * (uint64_t)hops + 16 * 16 + 1);
                CHECK_EQ_INT(sim_stats(s)->cycles, want);
                CHECK_EQ_INT(sim_stats(s)->total[ISA_ENGINE_DMA].stall_res, 0);
                const AtlSimBytes *b = &sim_stats(s)->bytes;
                CHECK_EQ_INT(b->dram_rd + b->dram_wr + b->noc, 0);   /* no DRAM, no DRAM link */
                CHECK_EQ_INT(b->peer, 4100);
                CHECK_EQ_INT(b->peer_link, 4100 * (uint64_t)hops);
                CHECK_EQ_INT(push ? b->sram_wr : b->sram_rd, 4100);
            }
            sim_free(s);
            tp_free(&p);
        }
}

/* Runs the copies of cores 0 and 2 (one each) at once: their cycles. */
static uint64_t two_copies(AtlInsn a, AtlInsn b)
{
    AtlChip c;
    noc_chip(&c, CFG_NOC_RING);
    AtlProgram p;
    tp_init(&p, 3);
    tp_add(&p, 0, ISA_ENGINE_DMA, a);
    tp_add(&p, 2, ISA_ENGINE_DMA, b);
    AtlErr e = {{0}};
    AtlSim *s = run_prog(&c, &p, 0, &e);
    CHECKF(s, "%s", e.msg);
    uint64_t cycles = s ? sim_stats(s)->cycles : 0;
    sim_free(s);
    tp_free(&p);
    return cycles;
}

TEST(links_are_shared)
{
    AtlChip c;
    noc_chip(&c, CFG_NOC_RING);
    uint64_t one = tim_dma_route_cycles(&c, ISA_SPACE_PEER, ISA_SPACE_LMEM, 1, 8192);
    /* core 0 pushes to cluster 1 (link 0 -> 1) while core 2 (cluster 2) pushes to 3 (link 2 -> 3):
     * disjoint links, and each destination SRAM has its own ports */
    CHECK_EQ_INT(two_copies(peer_copy(1, 1, 0, 8192), peer_copy(1, 3, 0, 8192)), one);
    /* ... while core 2 pushes to 1 (link 2 -> 1): two links into one SRAM of 2 ports */
    CHECK_EQ_INT(two_copies(peer_copy(1, 1, 0, 8192), peer_copy(1, 1, 0x4000, 8192)), one);
    /* ... while core 2 pulls from 1 (link 1 -> 2): the other way out of that SRAM */
    CHECK_EQ_INT(two_copies(peer_copy(1, 1, 0, 8192), peer_copy(0, 1, 0x4000, 8192)), one);
    /* core 0 and core 3 both push to cluster 1: 0 -> 1, and 3 -> 0 -> 1 (a tie, forwards) share
     * link 0 -> 1, each getting half of it */
    AtlProgram p;
    tp_init(&p, 4);
    tp_add(&p, 0, ISA_ENGINE_DMA, peer_copy(1, 1, 0, 8192));
    tp_add(&p, 3, ISA_ENGINE_DMA, peer_copy(1, 1, 0x4000, 8192));
    AtlErr e = {{0}};
    AtlSim *s = run_prog(&c, &p, 0, &e);
    CHECKF(s, "%s", e.msg);
    if (s) {
        /* 2 x 512 cycles of work on the shared link, the last burst of the first one apart, plus the
         * longer path's latency */
        uint64_t two_hop = tim_dma_route_cycles(&c, ISA_SPACE_PEER, ISA_SPACE_LMEM, 2, 8192);
        CHECK(sim_stats(s)->cycles >= two_hop + 512 - 16);
        CHECK(sim_stats(s)->cycles <= two_hop + 512 + 16);
        CHECK(sim_stats(s)->total[ISA_ENGINE_DMA].stall_res >= 512 - 32);
        CHECK_EQ_INT(sim_stats(s)->bytes.peer_link, 3 * 8192);
    }
    sim_free(s);
    tp_free(&p);
}

TEST(data_lands_and_signals_the_other_cluster)
{
    AtlChip c;
    noc_chip(&c, CFG_NOC_RING);
    AtlProgram p;
    tp_init(&p, 4);
    uint8_t x[256];
    for (int i = 0; i < 256; i++) x[i] = (uint8_t)(i * 7 + 1);
    tp_seg(&p, 0x1000, x, sizeof x);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(I_load(0, 0x1000, 256), 0));
    AtlInsn push = peer_copy(1, 2, 0x800, 256);
    push.mask = 1;                               /* core 0 of cluster 2: core 2 */
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(I_wait(push, 0), 3));
    /* core 2 waits for the data, then stores its SRAM copy to DRAM */
    tp_add(&p, 2, ISA_ENGINE_DMA, I_wait(I(ISA_OP_NOP), 3));
    tp_add(&p, 2, ISA_ENGINE_DMA, I_dma(ISA_I8, ISA_SPACE_DRAM, 0x2000, 0, ISA_SPACE_SRAM, 0x800, 0, 1, 256));
    /* mask 0: the issuing core counts it (core 0's second copy waits for the first) */
    AtlInsn back = peer_copy(0, 2, 0x800, 256);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(back, 4));
    tp_add(&p, 0, ISA_ENGINE_DMA, I_wait(I(ISA_OP_NOP), 4));
    tp_expect(&p, 0x2000, ISA_I8, 256, x);
    AtlErr e = {{0}};
    AtlSim *s = run_prog(&c, &p, 1, &e);
    CHECKF(s, "%s", e.msg);
    if (s) {
        char *rep = NULL;
        CHECK(sim_check_expect(s, &p, &rep) == 0);
        free(rep);
        uint8_t *sr = sim_sram(s, 2, 0x800, 256);
        CHECK(sr && !memcmp(sr, x, 256));
        sr = sim_sram(s, 0, 0x800, 256);                    /* cluster 0's own SRAM is untouched */
        CHECK(sr && sr[0] == 0);
        char *tr = sim_trace_json(s);
        REQUIRE(tr);
        CHECK_STR_CONTAINS(tr, "\"noc\":{\"from_cluster\":0,\"to_cluster\":2,\"hops\":2}");
        CHECK_STR_CONTAINS(tr, "\"noc\":{\"from_cluster\":2,\"to_cluster\":0,\"hops\":2}");
        /* the arrow of semaphore 3 starts on core 0's DMA and ends on core 2's */
        CHECK_STR_CONTAINS(tr, "{\"ph\":\"s\",\"cat\":\"sem\",\"name\":\"signal\",\"id\":1,\"pid\":0,\"tid\":0");
        CHECK_STR_CONTAINS(tr, "{\"ph\":\"f\",\"cat\":\"sem\",\"name\":\"signal\",\"id\":2,\"pid\":2,\"tid\":0");
        free(tr);
        /* energy: every link a byte crosses */
        CHECK(sim_stats(s)->energy.noc == (double)(sim_stats(s)->bytes.noc + 2 * 256 * 2) * c.e_noc_byte);
    }
    sim_free(s);
    tp_free(&p);
}

/* Loads p on chip c: the fault of core 0's DMA instruction `index`. */
static void expect_illegal(const AtlChip *c, AtlInsn in, const char *msg)
{
    AtlProgram p;
    tp_init(&p, 1);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, 64));
    tp_add(&p, 0, ISA_ENGINE_DMA, in);
    AtlErr e = {{0}};
    AtlSim *s = tp_run_to_fault(c, &p, &e);
    CHECKF(s, "no fault: %s", e.msg);
    if (s) {
        const AtlSimFault *f = sim_fault(s);
        CHECK_EQ_INT(f->kind, SIM_FAULT_ILLEGAL);
        CHECK_EQ_INT(f->core, 0);
        CHECK_EQ_INT(f->index, 1);
        CHECK_STR_CONTAINS(e.msg, "illegal instruction");
        CHECK_STR_CONTAINS(e.msg, msg);
    }
    sim_free(s);
    tp_free(&p);
}

TEST(peer_operands_that_are_illegal)
{
    AtlChip c;
    noc_chip(&c, CFG_NOC_RING);
    c.noc_cluster_links = 0;
    expect_illegal(&c, peer_copy(1, 1, 0, 64), "`dma.copy dtype=i8 dst=peer@1:0x0 src=lmem:0x0");
    expect_illegal(&c, peer_copy(0, 3, 0, 64),
                   "dma.copy: field src: peer@3 names another cluster's SRAM, but chip test has no cluster links ([noc] cluster_links = 0)");
    noc_chip(&c, CFG_NOC_RING);
    expect_illegal(&c, peer_copy(1, 4, 0, 64), "dma.copy: field dst: cluster 4 is not one of the chip's 4");
    AtlInsn both = peer_copy(1, 1, 0, 64);
    both.src_space = ISA_SPACE_PEER;
    both.src = isa_peer_addr(2, 0);
    expect_illegal(&c, both, "at most one end of a copy is another cluster's SRAM");
    AtlInsn fill = I(ISA_OP_DMA_FILL);
    fill.dtype = ISA_I8;
    fill.dst_space = ISA_SPACE_PEER;
    fill.dst = isa_peer_addr(1, 0);
    fill.shape[0] = fill.shape[1] = fill.shape[2] = 1;
    fill.shape[3] = 64;
    fill.dst_stride[3] = 1;
    expect_illegal(&c, fill, "dma.fill: field dst: only dma.copy reaches another cluster's SRAM");
    AtlInsn far = peer_copy(1, 1, (uint64_t)c.sram_bytes - 32, 64);
    AtlProgram p;
    tp_init(&p, 1);
    tp_add(&p, 0, ISA_ENGINE_DMA, far);
    AtlErr e = {{0}};
    AtlSim *s = tp_run_to_fault(&c, &p, &e);
    CHECK(s && sim_fault(s)->kind == SIM_FAULT_OOB);
    CHECK_STR_CONTAINS(e.msg, "touches peer bytes [262112, 262176) outside the 262144-byte space");
    sim_free(s);
    tp_free(&p);
}

TEST(peer_write_races_with_the_clusters_own_read)
{
    static const AtlSimMode modes[] = {SIM_MODE_FULL, SIM_MODE_TIMING};
    for (int m = 0; m < 2; m++) {
        AtlChip c;
        noc_chip(&c, CFG_NOC_RING);
        AtlProgram p;
        tp_init(&p, 2);
        /* core 1 (cluster 1) reads its SRAM; core 0, after a short load, writes into the middle of it
         * over the NoC (found among the in-flight reads of every cluster's DMA engines) */
        tp_add(&p, 1, ISA_ENGINE_DMA, I_dma(ISA_I8, ISA_SPACE_LMEM, 0, 0, ISA_SPACE_SRAM, 0, 0, 1, 8192));
        tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0x4000, 0x40000, 64));
        tp_add(&p, 0, ISA_ENGINE_DMA, peer_copy(1, 1, 0x1000, 64));
        AtlSimOptions o;
        sim_options_default(&o);
        o.mode = modes[m];
        tp_end_all(&p);
        AtlErr e = {{0}};
        AtlSim *s = sim_create(&c, &o, &e);
        REQUIRE(s && sim_load(s, &p, &e) == 0);
        CHECK(sim_run(s, &e) == -1);
        CHECK_EQ_INT(sim_fault(s)->kind, SIM_FAULT_RACE);
        CHECK_EQ_INT(sim_fault(s)->core, 0);
        CHECK_EQ_INT(sim_fault(s)->index, 1);
        CHECK_STR_CONTAINS(e.msg, "writes sram bytes [0x1000, 0x1040) of cluster 1 while core 1 dma instruction #0");
        CHECK_STR_CONTAINS(e.msg, "is still reading [0x0, 0x2000); no semaphore or barrier orders them");
        sim_free(s);
        /* the other way round: the read starts while the copy is landing (in cluster 1's write set) */
        p.streams[0].insns[0] = p.streams[0].insns[1];
        p.streams[0].insns[1] = I_load(0x4000, 0x40000, 64);
        s = sim_create(&c, &o, &e);
        REQUIRE(s && sim_load(s, &p, &e) == 0);
        CHECK(sim_run(s, &e) == -1);
        CHECK_EQ_INT(sim_fault(s)->core, 1);
        CHECK_STR_CONTAINS(e.msg, "reads sram bytes [0x0, 0x2000) of cluster 1 while core 0 dma instruction #0 `dma.copy dtype=i8 "
                                  "dst=peer@1:0x1000");
        sim_free(s);
        /* cluster 2's SRAM at the same offsets is another memory */
        p.streams[0].insns[0] = peer_copy(1, 2, 0x1000, 64);
        s = sim_create(&c, &o, &e);
        REQUIRE(s && sim_load(s, &p, &e) == 0);
        CHECKF(sim_run(s, &e) == 0, "%s", e.msg);
        sim_free(s);
        tp_free(&p);
    }
}

int main(void)
{
    RUN(routes_on_ring_and_mesh);
    RUN(lone_copy_equals_formula);
    RUN(links_are_shared);
    RUN(data_lands_and_signals_the_other_cluster);
    RUN(peer_operands_that_are_illegal);
    RUN(peer_write_races_with_the_clusters_own_read);
    return test_summary("test_sim_noc");
}
