/* test_sim_dram.c - DMA served by the banked DRAM model ([dram] model =
 * banked): one transfer alone takes what its requests take in the DRAM
 * model (dram_replay of the same requests) plus the NoC latency and issue
 * cycles; an access pattern costs what it costs (a column of a matrix is
 * many row activations, the same bytes in a row are not), where the flow
 * model charges the bytes only; the address mapping changes a tile load's
 * time; transfers of several cores share a channel; every DMA kind moves
 * the right bytes; runs are deterministic; a 4-D strided transfer makes
 * one request per access unit its elements touch, in address order (the
 * DMA engine walks the DRAM end by its strides), so an NCHW store that
 * writes one element per channel plane in its instruction's order costs
 * the lines it covers, not a request per element; a request refused for
 * want of queue room arrives when room is made, as in the replay. */
#include <math.h>
#include <stdlib.h>
#include "test/test.h"
#include "test/sim/simtest.h"
#include "sim/dram.h"

/* tchip with one channel of the default DDR4-3200 device, banked. */
static void banked_chip(AtlChip *c, int cores)
{
    tchip(c, 1, cores);
    c->dram_model = CFG_DRAM_BANKED;
}

static uint64_t run_cycles(const AtlChip *c, AtlProgram *p, AtlSimMode mode)
{
    AtlSim *s;
    AtlErr e = {{0}};
    int rc = trun(c, p, mode, &s, &e);
    uint64_t cy = rc == 0 ? sim_stats(s)->cycles : 0;
    if (rc) printf("  %s\n", e.msg);
    sim_free(s);
    return cy;
}

/* One load of `rows` rows of `cols` bytes, `pitch` apart in DRAM, alone. */
static uint64_t one_load(const AtlChip *c, uint64_t dram, int32_t pitch, uint32_t rows, uint32_t cols)
{
    AtlProgram p;
    tp_init(&p, 1);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_dma(ISA_I8, ISA_SPACE_LMEM, 0, (int32_t)cols, ISA_SPACE_DRAM, dram, pitch, rows, cols));
    tp_end_all(&p);
    uint64_t cy = run_cycles(c, &p, SIM_MODE_TIMING);
    tp_free(&p);
    return cy;
}

/* Alone, a load's DRAM part is the replay of its requests (one offered per
 * DRAM cycle, as the simulator's channel admits them), converted to core
 * cycles, then the NoC latency and the issue cycles. */
TEST(one_load_is_its_requests)
{
    AtlChip c;
    banked_chip(&c, 1);
    uint64_t cy = one_load(&c, 0, 4096, 1, 4096);
    DramTraceReq r[64];
    for (int i = 0; i < 64; i++) r[i] = (DramTraceReq){(uint64_t)i * 64, 0};
    AtlErr e = {{0}};
    AtlDram *d = dram_new(&c, &e);
    REQUIRE(d);
    DramReplay rp;
    dram_replay(d, r, 64, &rp);
    dram_free(d);
    uint64_t dram_core = (rp.cycles * 625 + 999) / 1000; /* DRAM cycles of 625 ps at 1 GHz */
    CHECK_EQ_INT(cy, dram_core + (uint64_t)c.noc_latency + (uint64_t)c.dma_issue_cycles);
    /* 64 reads through a queue of 32: the 33rd arrives the cycle after the
     * first read issues and frees its slot (not earlier, which would count
     * its wait in the queue as less), so the latencies are the replay's */
    AtlSim *s;
    AtlErr e2 = {{0}};
    AtlProgram p;
    tp_init(&p, 1);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, 4096));
    tp_end_all(&p);
    REQUIRE(trun(&c, &p, SIM_MODE_TIMING, &s, &e2) == 0);
    const AtlSimDram *sd = &sim_stats(s)->dram;
    CHECK_EQ_INT(sd->reads, rp.st.reads);
    CHECK_EQ_INT(sd->row_hits, rp.st.row_hits);
    double want_lat = (double)rp.st.read_latency / (double)rp.st.reads;
    CHECKF(fabs(sd->read_latency - want_lat) < 1e-9, "average read latency %.3f DRAM cycles, the replay's %.3f", sd->read_latency,
           want_lat);
    sim_free(s);
    tp_free(&p);
    /* 64 reads of one row in one bank group: tCCD_L (8 cycles) apart */
    CHECK(rp.cycles >= 22 + 63 * 8 + 26);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The 64-byte lines the source of a 4-D strided load touches, found by
 * walking its elements one by one in the instruction's order: each
 * distinct line once, in ascending order; at most `cap`. */
static size_t distinct_lines(const AtlInsn *in, uint64_t *lines, size_t cap)
{
    size_t n = 0;
    int es = isa_dtype_size(in->dtype);
    for (uint32_t i0 = 0; i0 < in->shape[0]; i0++)
        for (uint32_t i1 = 0; i1 < in->shape[1]; i1++)
            for (uint32_t i2 = 0; i2 < in->shape[2]; i2++)
                for (uint32_t i3 = 0; i3 < in->shape[3]; i3++) {
                    uint64_t a = in->src + (uint64_t)i0 * (uint64_t)in->src_stride[0] + (uint64_t)i1 * (uint64_t)in->src_stride[1] +
                                 (uint64_t)i2 * (uint64_t)in->src_stride[2] + (uint64_t)i3 * (uint64_t)in->src_stride[3];
                    for (uint64_t l = a / 64; l <= (a + (uint64_t)es - 1) / 64 && n < cap; l++) lines[n++] = l;
                }
    qsort(lines, n, sizeof *lines, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || lines[i] != lines[u - 1]) lines[u++] = lines[i];
    return u;
}

/* A 4-D strided load makes one request per 64-byte line its elements
 * touch, in address order: its time is the replay of those lines, and
 * their count is the reads counted. Two patterns: a dense innermost
 * dimension of 5 fp32 elements (the instruction's order is already the
 * address order), and one element per channel plane in the instruction's
 * order (the innermost stride 12544, as NCHW stores are): the engine
 * walks the 4 contiguous elements along the stride-4 dimension together,
 * 2 x 5 x 3 = 30 runs of 16 bytes, each inside one line (the base is 36
 * bytes into a line and 3000 is 56 modulo 64, so the runs start 36, 28
 * and 20 bytes in), where walking in the instruction's order would make
 * one request per element, 120. */
TEST(strided_load_requests_each_line_once)
{
    AtlChip c;
    banked_chip(&c, 1);
    static const int32_t strides[2][4] = {{40000, 3000, 200, 4}, {40000, 3000, 4, 12544}};
    for (int k = 0; k < 2; k++) {
        AtlInsn in = I_dma(ISA_F32, ISA_SPACE_LMEM, 0, 0, ISA_SPACE_DRAM, 4096 + 100, 0, 1, 1);
        in.shape[0] = 2; in.shape[1] = 3; in.shape[2] = 4; in.shape[3] = 5;
        memcpy(in.src_stride, strides[k], sizeof in.src_stride);
        in.dst_stride[0] = 240; in.dst_stride[1] = 80; in.dst_stride[2] = 20; in.dst_stride[3] = 4;
        uint64_t lines[256];
        size_t n = distinct_lines(&in, lines, 256);
        REQUIRE(n > 0 && n < 256);
        if (k == 1) CHECK_EQ_INT(n, 30);
        AtlProgram p;
        tp_init(&p, 1);
        tp_add(&p, 0, ISA_ENGINE_DMA, in);
        tp_end_all(&p);
        AtlSim *s;
        AtlErr e = {{0}};
        REQUIRE(trun(&c, &p, SIM_MODE_TIMING, &s, &e) == 0);
        uint64_t cy = sim_stats(s)->cycles, reads = sim_stats(s)->dram.reads;
        sim_free(s);
        tp_free(&p);
        DramTraceReq r[256];
        for (size_t i = 0; i < n; i++) r[i] = (DramTraceReq){lines[i] * 64, 0};
        AtlDram *d = dram_new(&c, &e);
        REQUIRE(d);
        DramReplay rp;
        dram_replay(d, r, n, &rp);
        dram_free(d);
        CHECKF(reads == n, "pattern %d: %llu reads, its elements touch %zu lines", k, (unsigned long long)reads, n);
        uint64_t dram_core = (rp.cycles * 625 + 999) / 1000;
        CHECK_EQ_INT(cy, dram_core + (uint64_t)c.noc_latency + (uint64_t)c.dma_issue_cycles);
    }
}

/* An NCHW store of a tile of 4 pixels x 16 channels held channel-innermost
 * in LMEM (the order a convolution produces it): in its instruction's
 * order each element goes to another channel plane (256 bytes apart), 64
 * single-element writes. The engine writes each plane's 4 contiguous
 * elements (16 bytes) as one request: 16 writes, all in one 8 KiB DRAM
 * row of one bank, so one activation (a miss: the bank starts closed) and
 * 15 row hits. The bytes are the element-by-element copy's, with the
 * banked model as with the flow model. */
TEST(nchw_store_writes_each_line_once)
{
    float tile[64];
    for (int i = 0; i < 64; i++) tile[i] = (float)i * 0.5f - 3.0f; /* [pixel][channel] */
    float want[16 * 64];                                              /* 16 planes of 64 floats: 4 pixels written */
    memset(want, 0, sizeof want);
    for (int px = 0; px < 4; px++)
        for (int ch = 0; ch < 16; ch++) want[ch * 64 + px] = tile[px * 16 + ch];
    for (int model = 0; model < 2; model++) {
        AtlChip c;
        banked_chip(&c, 1);
        if (model) c.dram_model = CFG_DRAM_FLOW;
        AtlProgram p;
        tp_init(&p, 1);
        AtlInsn ld = I_dma(ISA_F32, ISA_SPACE_LMEM, 0, 0, ISA_SPACE_DRAM, 65536, 0, 1, 64);
        uint8_t raw[sizeof tile];
        memcpy(raw, tile, sizeof raw);
        tp_seg(&p, 65536, raw, sizeof raw);
        tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(ld, 0));
        AtlInsn st = I_dma(ISA_F32, ISA_SPACE_DRAM, 8192, 0, ISA_SPACE_LMEM, 0, 0, 4, 16);
        st.dst_stride[2] = 4; st.dst_stride[3] = 256;  /* pixel along a plane, channel across planes */
        st.src_stride[2] = 64; st.src_stride[3] = 4;   /* LMEM: [pixel][channel] */
        tp_add(&p, 0, ISA_ENGINE_DMA, I_wait(st, 0));
        tp_expect(&p, 8192, ISA_F32, 16 * 64, want);
        tp_end_all(&p);
        AtlSim *s;
        AtlErr e = {{0}};
        REQUIRE(trun(&c, &p, SIM_MODE_FULL, &s, &e) == 0);
        char *rep = NULL;
        CHECKF(sim_check_expect(s, &p, &rep) == 0, "%s model: %s", model ? "flow" : "banked", rep ? rep : "");
        free(rep);
        if (!model) {
            const AtlSimDram *sd = &sim_stats(s)->dram;
            CHECK_EQ_INT(sd->writes, 16);
            CHECK_EQ_INT(sd->row_hits, 15 + 3);   /* and the load's 4 reads: a miss, then 3 hits */
            CHECK_EQ_INT(sd->row_misses, 1 + 1);
            CHECK_EQ_INT(sd->row_conflicts, 0);
        }
        sim_free(s);
        tp_free(&p);
    }
}

/* The access pattern: 64 elements of one column (128 KiB apart: the next
 * row of the same bank under RoBaRaCoCh)
 * need 64 activations; the same bytes in a row need one. The flow model
 * charges both the same. */
TEST(pattern_costs)
{
    AtlChip c;
    banked_chip(&c, 1);
    uint64_t row = one_load(&c, 0, 256, 1, 256), col = one_load(&c, 0, 1 << 17, 64, 4);
    CHECKF(col > 8 * row, "a 64-row column took %llu cycles, a 256-byte row %llu", (unsigned long long)col, (unsigned long long)row);
    c.dram_model = CFG_DRAM_FLOW;
    uint64_t frow = one_load(&c, 0, 256, 1, 256), fcol = one_load(&c, 0, 1 << 17, 64, 4);
    CHECKF(fcol <= frow + 64, "flow: column %llu, row %llu", (unsigned long long)fcol, (unsigned long long)frow);
}

/* docs/timing.md's worked example: a 64 x 256-byte tile at a 4096-byte
 * pitch spans 32 DRAM rows of 8 KiB. RoBaRaCoCh puts consecutive 8 KiB
 * in different bank groups and banks: 2 rows in each of 16 banks, opened
 * in parallel. ChRaBaRoCo puts them in consecutive rows of one bank: 32
 * row switches one after the other, each tRP + tRCD. */
TEST(mapping_changes_a_tile_load)
{
    AtlChip c;
    banked_chip(&c, 1);
    uint64_t ro = one_load(&c, 0, 4096, 64, 256);
    c.dram_mapping = CFG_MAP_CHRABAROCO;
    uint64_t ch = one_load(&c, 0, 4096, 64, 256);
    printf("  64 x 256-byte tile: RoBaRaCoCh %llu cycles, ChRaBaRoCo %llu\n", (unsigned long long)ro, (unsigned long long)ch);
    CHECKF(ch > ro * 3 / 2, "RoBaRaCoCh %llu cycles, ChRaBaRoCo %llu", (unsigned long long)ro, (unsigned long long)ch);
}

/* Two cores loading from the one channel at once share it: each takes
 * longer than alone, and together no less than the bytes at the peak. */
TEST(cores_share_a_channel)
{
    AtlChip c;
    banked_chip(&c, 2);
    AtlProgram p;
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, 16384));
    tp_end_all(&p);
    uint64_t alone = run_cycles(&c, &p, SIM_MODE_TIMING);
    tp_free(&p);
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, 16384));
    tp_add(&p, 1, ISA_ENGINE_DMA, I_load(0, 1 << 20, 16384));
    tp_end_all(&p);
    uint64_t both = run_cycles(&c, &p, SIM_MODE_TIMING);
    tp_free(&p);
    CHECKF(both > alone + alone / 2, "alone %llu, two at once %llu", (unsigned long long)alone, (unsigned long long)both);
    /* 32 KiB at 25.6 GB/s = 1280 ns */
    CHECK(both >= 1280);
}

/* Loads, stores, DRAM-to-DRAM copies, fills and gathers move the right bytes
 * with the banked model, and a run repeats to the cycle. */
TEST(every_dma_kind_moves_the_bytes)
{
    AtlChip c;
    banked_chip(&c, 1);
    uint8_t src[1024], want_fill[64];
    for (int i = 0; i < 1024; i++) src[i] = (uint8_t)(i * 7 + 3);
    memset(want_fill, 0x5a, sizeof want_fill);
    AtlProgram p;
    tp_init(&p, 1);
    tp_seg(&p, 0, src, sizeof src);
    /* DRAM -> DRAM, a strided load into LMEM and its store back, a fill */
    AtlInsn cp = I_dma(ISA_I8, ISA_SPACE_DRAM, 65536, 64, ISA_SPACE_DRAM, 0, 64, 16, 64);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(cp, 0));
    AtlInsn ld = I_dma(ISA_I8, ISA_SPACE_LMEM, 0, 32, ISA_SPACE_DRAM, 0, 64, 16, 32); /* the left half of each 64-byte row */
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(ld, 1));
    AtlInsn st = I_dma(ISA_I8, ISA_SPACE_DRAM, 131072, 32, ISA_SPACE_LMEM, 0, 32, 16, 32);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_wait(st, 1));
    AtlInsn fill = I(ISA_OP_DMA_FILL);
    fill.dtype = ISA_I8; fill.dst_space = ISA_SPACE_DRAM; fill.dst = 200000; fill.ival = 0x5a;
    fill.shape[0] = fill.shape[1] = fill.shape[2] = 1; fill.shape[3] = 64; fill.dst_stride[3] = 1;
    tp_add(&p, 0, ISA_ENGINE_DMA, fill);
    uint8_t half[512];
    for (int r = 0; r < 16; r++) memcpy(half + r * 32, src + r * 64, 32);
    tp_expect(&p, 65536, ISA_I8, 1024, src);
    tp_expect(&p, 131072, ISA_I8, 512, half);
    tp_expect(&p, 200000, ISA_I8, 64, want_fill);
    tp_end_all(&p);
    AtlSim *s;
    AtlErr e = {{0}};
    REQUIRE(trun(&c, &p, SIM_MODE_FULL, &s, &e) == 0);
    char *rep = NULL;
    CHECK_EQ_INT(sim_check_expect(s, &p, &rep), 0);
    if (rep) printf("%s", rep);
    free(rep);
    uint64_t first = sim_stats(s)->cycles;
    sim_free(s);
    REQUIRE(trun(&c, &p, SIM_MODE_FULL, &s, &e) == 0);
    CHECK_EQ_INT(sim_stats(s)->cycles, first);
    sim_free(s);
    tp_free(&p);
}

/* A run whose DRAM work passes --max-cycles stops with that fault. */
TEST(max_cycles_stops_dram_work)
{
    AtlChip c;
    banked_chip(&c, 1);
    AtlProgram p;
    tp_init(&p, 1);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, 32768));
    tp_end_all(&p);
    AtlSimOptions o;
    sim_options_default(&o);
    o.max_cycles = 500;
    AtlErr e = {{0}};
    AtlSim *s = sim_create(&c, &o, &e);
    REQUIRE(s);
    REQUIRE(sim_load(s, &p, &e) == 0);
    CHECK(sim_run(s, &e) == -1);
    CHECK_EQ_INT(sim_fault(s)->kind, SIM_FAULT_MAX_CYCLES);
    CHECK_STR_CONTAINS(e.msg, "limit of 500 cycles");
    sim_free(s);
    tp_free(&p);
}

int main(void)
{
    RUN(one_load_is_its_requests);
    RUN(strided_load_requests_each_line_once);
    RUN(nchw_store_writes_each_line_once);
    RUN(pattern_costs);
    RUN(mapping_changes_a_tile_load);
    RUN(cores_share_a_channel);
    RUN(every_dma_kind_moves_the_bytes);
    RUN(max_cycles_stops_dram_work);
    return test_summary("test_sim_dram");
}
