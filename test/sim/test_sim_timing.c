/* test_sim_timing.c - simulated cycles against the closed forms of
 * docs/timing.md: one DMA, N cores sharing DRAM, mm/conv equal to the
 * formula (SCALE-Sim 22,399 and 51,679 with weight_double_buffer=0),
 * DMA/compute overlap, semaphores and barriers; and determinism (same
 * program twice: identical stats JSON and trace bytes). */
#include "test/test.h"
#include "test/sim/simtest.h"

static AtlSim *run_prog(const AtlChip *c, AtlProgram *p, int trace)
{
    AtlSimOptions o;
    sim_options_default(&o);
    o.trace = trace;
    AtlErr e = {{0}};
    AtlSim *s = sim_create(c, &o, &e);
    if (!s || sim_load(s, p, &e) || sim_run(s, &e)) { printf("  %s\n", e.msg); sim_free(s); return NULL; }
    return s;
}

TEST(one_dma_equals_formula)
{
    AtlChip c;
    tchip(&c, 1, 1);
    uint32_t sizes[] = {16, 256, 4096, 4100, 65535};
    for (int i = 0; i < 5; i++) {
        AtlProgram p;
        tp_init(&p, 1);
        tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, sizes[i]));
        tp_end_all(&p);
        AtlSim *s = run_prog(&c, &p, 0);
        REQUIRE(s);
        CHECK_EQ_INT(sim_stats(s)->cycles, tim_dma_cycles(&c, ISA_SPACE_LMEM, ISA_SPACE_DRAM, sizes[i]));
        CHECK_EQ_INT(sim_stats(s)->total[ISA_ENGINE_DMA].stall_res, 0);
        sim_free(s);
        tp_free(&p);
    }
    /* store and SRAM paths */
    AtlProgram p;
    tp_init(&p, 1);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_dma(ISA_I8, ISA_SPACE_SRAM, 0, 0, ISA_SPACE_LMEM, 0, 0, 1, 8192));
    tp_end_all(&p);
    AtlSim *s = run_prog(&c, &p, 0);
    REQUIRE(s);
    CHECK_EQ_INT(sim_stats(s)->cycles, tim_dma_cycles(&c, ISA_SPACE_SRAM, ISA_SPACE_LMEM, 8192));
    sim_free(s);
    tp_free(&p);
}

TEST(cores_share_dram_bandwidth)
{
    AtlChip c;
    tchip(&c, 2, 4);
    c.noc_bytes_per_cycle = 64; /* DRAM (16 B/cycle) is the bottleneck */
    uint32_t B = 16384;
    for (int n = 1; n <= 8; n *= 2) {
        AtlProgram p;
        tp_init(&p, 8);
        for (int k = 0; k < n; k++) tp_add(&p, k, ISA_ENGINE_DMA, I_load(0, (uint64_t)k * B, B));
        tp_end_all(&p);
        AtlSim *s = run_prog(&c, &p, 0);
        REQUIRE(s);
        uint64_t cyc = sim_stats(s)->cycles;
        CHECKF(cyc >= (uint64_t)n * B / 16, "%d cores: %llu cycles < %u", n, (unsigned long long)cyc, n * B / 16);
        CHECKF(cyc <= (uint64_t)n * B / 16 + 200, "%d cores: %llu cycles, far above the DRAM bound", n, (unsigned long long)cyc);
        if (n > 1) CHECK(sim_stats(s)->total[ISA_ENGINE_DMA].stall_res > 0);
        /* bursts interleave: every core finishes near the end, none first-come-whole */
        sim_free(s);
        tp_free(&p);
    }
}

/* One DRAM channel shared by transfers of different clusters (separate NoC
 * links): processor sharing served in whole bursts (docs/timing.md). */
TEST(dram_channel_is_shared_fairly_in_bursts)
{
    AtlChip c;
    tchip(&c, 2, 2);
    c.noc_bytes_per_cycle = 64; /* DRAM (16 B/cycle, one channel) is the bottleneck */
    uint64_t B = 4096, burst = 256 / 16; /* 256 busy cycles alone, 16 per burst */
    /* B and 2B at once: the small one gets half the channel until it is
     * done, its last burst served before the big one's current burst */
    AtlProgram p;
    tp_init(&p, 4);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, (uint32_t)B));
    tp_add(&p, 2, ISA_ENGINE_DMA, I_load(0, 65536, (uint32_t)(2 * B)));
    tp_end_all(&p);
    AtlSim *s = run_prog(&c, &p, 0);
    REQUIRE(s);
    CHECK_EQ_INT(sim_stats(s)->engine[0 * 3 + ISA_ENGINE_DMA].busy,
                 tim_dma_cycles(&c, ISA_SPACE_LMEM, ISA_SPACE_DRAM, B) + B / 16 - burst);
    CHECK_EQ_INT(sim_stats(s)->engine[2 * 3 + ISA_ENGINE_DMA].busy,
                 tim_dma_cycles(&c, ISA_SPACE_LMEM, ISA_SPACE_DRAM, 2 * B) + B / 16);
    /* 12 engine issues; per transfer its delivery, plus one re-projection
     * of the first when the second joins: not one per burst (48) */
    CHECKF(sim_stats(s)->events == 4 * 3 + 2 + 1, "%llu events", (unsigned long long)sim_stats(s)->events);
    sim_free(s);
    tp_free(&p);
    /* four equal transfers at once finish one burst apart, in start order,
     * the last after all the work: no lock step */
    tp_init(&p, 4);
    for (int k = 0; k < 4; k++) tp_add(&p, k, ISA_ENGINE_DMA, I_load(0, (uint64_t)k * 65536, (uint32_t)B));
    tp_end_all(&p);
    s = run_prog(&c, &p, 0);
    REQUIRE(s);
    for (int k = 0; k < 4; k++)
        CHECK_EQ_INT(sim_stats(s)->engine[k * 3 + ISA_ENGINE_DMA].busy,
                     tim_dma_cycles(&c, ISA_SPACE_LMEM, ISA_SPACE_DRAM, B) + 3 * B / 16 - (uint64_t)(3 - k) * burst);
    sim_free(s);
    tp_free(&p);
}

static void big_chip(AtlChip *c, int wdb)
{
    tchip(c, 1, 1);
    c->mm_rows = c->mm_cols = 32;
    c->lmem_bytes = 4 << 20;
    c->lmem_banks = 16;
    c->lmem_bank_bytes_per_cycle = 64;
    c->mm_weight_double_buffer = wdb;
}

TEST(mm_equals_scalesim)
{
    AtlChip c;
    big_chip(&c, 0);
    AtlProgram p;
    tp_init(&p, 1);
    tp_add(&p, 0, ISA_ENGINE_MAT, I_mm(ISA_I8, 1 << 20, 0, 65536, 256, 256, 256));
    tp_end_all(&p);
    AtlSim *s = run_prog(&c, &p, 0);
    REQUIRE(s);
    CHECK_EQ_INT(sim_stats(s)->cycles, 22399);
    CHECK_EQ_INT(sim_stats(s)->macs, 256 * 256 * 256);
    CHECK_NEAR(sim_stats(s)->mm_util, 16777216.0 / (22399.0 * 1024), 1e-9);
    sim_free(s);
    /* conv 1x1 56x56x256 -> 64 */
    tp_free(&p);
    tp_init(&p, 1);
    AtlInsn cv = I(ISA_OP_CONV);
    cv.dtype = ISA_I8; cv.cin = 256; cv.ih = 56; cv.iw = 56; cv.cout = 64; cv.kh = cv.kw = 1;
    cv.sh = cv.sw = cv.dh = cv.dw = 1; cv.groups = 1; cv.src = 0; cv.src2 = 1 << 20; cv.dst = 2 << 20;
    tp_add(&p, 0, ISA_ENGINE_MAT, cv);
    tp_end_all(&p);
    s = run_prog(&c, &p, 0);
    REQUIRE(s);
    CHECK_EQ_INT(sim_stats(s)->cycles, 51679);
    sim_free(s);
    /* with weight double buffering it is faster, by the closed form */
    big_chip(&c, 1);
    s = run_prog(&c, &p, 0);
    REQUIRE(s);
    CHECK_EQ_INT(sim_stats(s)->cycles, tim_conv_cycles(&c, &cv));
    CHECK(sim_stats(s)->cycles < 51679);
    uint64_t wdb = sim_stats(s)->cycles;
    sim_free(s);
    /* and with the folds' fill and drain overlapped, faster again, by the closed form */
    c.mm_fold_overlap = 1;
    s = run_prog(&c, &p, 0);
    REQUIRE(s);
    CHECK_EQ_INT(sim_stats(s)->cycles, tim_conv_cycles(&c, &cv));
    CHECK_EQ_INT(sim_stats(s)->cycles, (2 * 32 + 32 + 3136 - 2) + 15 * 3136 - 1);
    CHECK(sim_stats(s)->cycles < wdb);
    sim_free(s);
    tp_free(&p);
}

/* A vector op's class key prices it in the simulator as in the formula. */
TEST(vector_class_keys)
{
    AtlChip c;
    tchip(&c, 1, 1);
    c.vec_div_cycles = 6;
    AtlProgram p;
    tp_init(&p, 1);
    AtlInsn d = I(ISA_OP_V_DIV);
    d.dtype = ISA_F32; d.shape[0] = d.shape[1] = 1; d.shape[2] = 4; d.shape[3] = 64;
    d.src = 0; d.src2 = 4096; d.dst = 8192;
    for (int k = 0; k < 4; k++) { d.src_stride[k] = d.src2_stride[k] = d.dst_stride[k] = 0; }
    d.src_stride[3] = d.src2_stride[3] = d.dst_stride[3] = 4;
    d.src_stride[2] = d.src2_stride[2] = d.dst_stride[2] = 256;
    tp_add(&p, 0, ISA_ENGINE_VEC, d);
    tp_end_all(&p);
    AtlSim *s = run_prog(&c, &p, 0);
    REQUIRE(s);
    CHECK_EQ_INT(sim_stats(s)->cycles, (256 / 16) * 6 + 2);
    sim_free(s);
    tp_free(&p);
}

/* Tiled GEMM with double buffering: DMA of tile i+1 overlaps mm of tile i. */
static void tiled(AtlProgram *p, int tiles, int overlap)
{
    tp_init(p, 1);
    for (int i = 0; i < tiles; i++) {
        uint64_t buf = (uint64_t)(i % 2) * 8192;
        /* sem 0: tile loaded; sem 1: buffer free again */
        AtlInsn ld = I_load(buf, (uint64_t)i * 4096, 4096);
        if (overlap ? i >= 2 : i >= 1) ld = I_wait(ld, 1);
        tp_add(p, 0, ISA_ENGINE_DMA, I_sig(ld, 0));
        AtlInsn mm = I_mm(ISA_I8, 32768, buf, buf + 2048, 32, 64, 32);
        tp_add(p, 0, ISA_ENGINE_MAT, sync_ws(mm, 0, 1));
    }
    tp_end_all(p);
}

TEST(double_buffering_overlaps)
{
    AtlChip c;
    tchip(&c, 1, 1);
    AtlProgram p1, p2;
    tiled(&p1, 8, 0);
    tiled(&p2, 8, 1);
    AtlSim *s1 = run_prog(&c, &p1, 0), *s2 = run_prog(&c, &p2, 0);
    REQUIRE(s1 && s2);
    uint64_t dma = tim_dma_cycles(&c, ISA_SPACE_LMEM, ISA_SPACE_DRAM, 4096), mm = tim_mm_cycles(&c, ISA_I8, 32, 64, 32);
    /* serial: every tile waits for the previous mm; overlapped: bounded by the DMA stream */
    CHECK(sim_stats(s1)->cycles >= 8 * (dma + mm));
    CHECK(sim_stats(s2)->cycles < sim_stats(s1)->cycles);
    CHECK(sim_stats(s2)->cycles <= dma + 8 * mm + 50); /* mm-bound here: loads hide behind it */
    CHECK(sim_stats(s2)->total[ISA_ENGINE_MAT].stall_sem > 0);
    sim_free(s1); sim_free(s2);
    tp_free(&p1); tp_free(&p2);
}

TEST(barrier_and_semaphore_timing)
{
    AtlChip c;
    tchip(&c, 2, 2);
    AtlProgram p;
    tp_init(&p, 4);
    /* core 3's DMA is slow; every DMA engine meets at a chip barrier */
    tp_add(&p, 3, ISA_ENGINE_DMA, I_load(0, 0, 8192));
    for (int k = 0; k < 4; k++) {
        AtlInsn b = I(ISA_OP_BARRIER);
        b.scope = ISA_SCOPE_CHIP; b.bar_id = 5; b.bar_count = 4;
        tp_add(&p, k, ISA_ENGINE_DMA, I_sig(b, 2));
        tp_add(&p, k, ISA_ENGINE_VEC, I_wait(I_vec(ISA_OP_V_RELU, ISA_I8, 4096, 4096, 0, 64), 2));
    }
    tp_end_all(&p);
    AtlSim *s = run_prog(&c, &p, 1);
    REQUIRE(s);
    uint64_t load = tim_dma_cycles(&c, ISA_SPACE_LMEM, ISA_SPACE_DRAM, 8192);
    /* 64 i8 in place: 3 cycles of compute, but 128 bytes through one 16 B/cycle bank take 8 */
    uint64_t relu = tim_vec_cycles(&c, ISA_OP_V_RELU, ISA_I8, 64);
    CHECK_EQ_INT(relu, 3);
    relu = 8;
    CHECK_EQ_INT(sim_stats(s)->cycles, load + 10 + relu);
    CHECK_EQ_INT(sim_stats(s)->engine[0 * 3 + ISA_ENGINE_DMA].stall_bar, load + 10);
    CHECK_EQ_INT(sim_stats(s)->engine[1 * 3 + ISA_ENGINE_VEC].stall_sem, load + 10);
    char *tr = sim_trace_json(s);
    REQUIRE(tr);
    CHECK_STR_CONTAINS(tr, "\"ph\":\"s\"");
    CHECK_STR_CONTAINS(tr, "\"ph\":\"f\"");
    CHECK_STR_CONTAINS(tr, "barrier scope=1 id=5 count=4 signal=2");
    free(tr);
    sim_free(s);
    tp_free(&p);
}

/* Engines released by one barrier start together: the DMA engine released
 * first must not run its transfer ahead while the matrix engine released
 * with it is still waiting to be issued (it once did, and the mm consumed
 * a LOADED signal sent in its future). */
TEST(barrier_release_keeps_causality)
{
    AtlChip c;
    tchip(&c, 1, 1);
    AtlProgram p;
    tp_init(&p, 1);
    AtlInsn b = I(ISA_OP_BARRIER);
    b.scope = ISA_SCOPE_CLUSTER; b.bar_id = 1; b.bar_count = 2;
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, 256));   /* arrives last, so it is released first */
    tp_add(&p, 0, ISA_ENGINE_DMA, b);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(I_load(0, 0, 8192), 0));
    tp_add(&p, 0, ISA_ENGINE_MAT, b);
    tp_add(&p, 0, ISA_ENGINE_MAT, I_wait(I_mm(ISA_I8, 16384, 0, 4096, 8, 8, 8), 0));
    tp_end_all(&p);
    AtlSim *s = run_prog(&c, &p, 1);
    REQUIRE(s);
    uint64_t load = tim_dma_cycles(&c, ISA_SPACE_LMEM, ISA_SPACE_DRAM, 8192);
    /* the mm waits for the whole second load after the release */
    CHECK(sim_stats(s)->engine[ISA_ENGINE_MAT].stall_sem >= load);
    sim_free(s);
    tp_free(&p);
}

static void multi_prog(AtlProgram *p)
{
    tp_init(p, 8);
    uint8_t data[8192];
    for (int i = 0; i < 8192; i++) data[i] = (uint8_t)(i * 31 + 7);
    tp_seg(p, 0, data, sizeof data);
    for (int k = 0; k < 8; k++) {
        for (int t = 0; t < 4; t++) {
            tp_add(p, k, ISA_ENGINE_DMA, I_sig(I_load((uint64_t)(t % 2) * 4096, (uint64_t)((k + t) % 4) * 2048, 4096), 0));
            AtlInsn mm = I_mm(ISA_I8, 16384, (uint64_t)(t % 2) * 4096, (uint64_t)(t % 2) * 4096 + 2048, 16, 64, 32);
            mm.acc = t > 0;
            mm.layer = (uint16_t)(1 + t % 2);
            tp_add(p, k, ISA_ENGINE_MAT, sync_ws(mm, 0, 1));
            if (t < 3) { AtlInsn n = I(ISA_OP_NOP); tp_add(p, k, ISA_ENGINE_DMA, I_wait(n, 1)); }
        }
        AtlInsn st = I_store(65536 + (uint64_t)k * 2048, 16384, 2048);
        tp_add(p, k, ISA_ENGINE_DMA, I_wait(st, 1));
    }
    tp_end_all(p);
}

TEST(deterministic_stats_and_trace)
{
    AtlChip c;
    tchip(&c, 2, 4);
    AtlProgram p;
    multi_prog(&p);
    AtlSim *s1 = run_prog(&c, &p, 1), *s2 = run_prog(&c, &p, 1);
    REQUIRE(s1 && s2);
    char *j1 = sim_stats_json(s1), *j2 = sim_stats_json(s2), *t1 = sim_trace_json(s1), *t2 = sim_trace_json(s2);
    REQUIRE(j1 && j2 && t1 && t2);
    CHECK(!strcmp(j1, j2));
    CHECK(!strcmp(t1, t2));
    CHECK(!memcmp(sim_dram(s1, 65536, 16384), sim_dram(s2, 65536, 16384), 16384));
    CHECK_STR_CONTAINS(j1, "\"layers\"");
    CHECK_STR_CONTAINS(j1, "\"bound\"");
    CHECK(sim_stats(s1)->layers[1].used && sim_stats(s1)->layers[2].used);
    char *csv = sim_layers_csv(s1);
    REQUIRE(csv);
    CHECK_STR_CONTAINS(csv, "layer,first,last,cycles,insns,macs");
    CHECK_STR_CONTAINS(csv, "\n1,");
    CHECK_STR_CONTAINS(csv, "\n2,");
    free(csv);
    char *r = sim_report_text(s1);
    REQUIRE(r);
    CHECK_STR_CONTAINS(r, "utilisation");
    CHECK_STR_CONTAINS(r, "energy");
    free(r);
    free(j1); free(j2); free(t1); free(t2);
    sim_free(s1); sim_free(s2);
    tp_free(&p);
}

TEST(expect_regions)
{
    AtlChip c;
    tchip(&c, 1, 1);
    AtlProgram p;
    tp_init(&p, 1);
    int8_t x[64];
    for (int i = 0; i < 64; i++) x[i] = (int8_t)(i - 32);
    tp_seg(&p, 0, x, 64);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(I_load(0, 0, 64), 0));
    tp_add(&p, 0, ISA_ENGINE_VEC, sync_ws(I_vec(ISA_OP_V_RELU, ISA_I8, 256, 0, 0, 64), 0, 1));
    tp_add(&p, 0, ISA_ENGINE_DMA, I_wait(I_store(1024, 256, 64), 1));
    tp_end_all(&p);
    int8_t want[64];
    for (int i = 0; i < 64; i++) want[i] = x[i] > 0 ? x[i] : 0;
    tp_expect(&p, 1024, ISA_I8, 64, want);
    want[5] = 99;
    tp_expect(&p, 1024, ISA_I8, 64, want);
    AtlSim *s = run_prog(&c, &p, 0);
    REQUIRE(s);
    char *rep = NULL;
    CHECK_EQ_INT(sim_check_expect(s, &p, &rep), 1);
    CHECK_STR_CONTAINS(rep, "pass");
    CHECK_STR_CONTAINS(rep, "FAIL: 1 of 64 elements differ; first at 5");
    free(rep);
    sim_free(s);
    tp_free(&p);
}

TEST(multicast_signals_every_destination)
{
    /* core 0 multicasts into cores 0..3; each core's vector unit waits on
     * semaphore 3 of its own core, relus the data and stores it */
    AtlChip c;
    tchip(&c, 1, 4);
    AtlProgram p;
    tp_init(&p, 4);
    int8_t x[256];
    for (int i = 0; i < 256; i++) x[i] = (int8_t)(i - 128);
    tp_seg(&p, 0, x, 256);
    AtlInsn m = I_load(0, 0, 256);
    m.mask = 0xf;
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(m, 3));
    for (int k = 0; k < 4; k++) {
        tp_add(&p, k, ISA_ENGINE_VEC, sync_ws(I_vec(ISA_OP_V_RELU, ISA_I8, 1024, 0, 0, 256), 3, 4));
        AtlInsn st = I_store(4096 + (uint64_t)k * 256, 1024, 256);
        st.src_core = (uint8_t)k;
        tp_add(&p, k, ISA_ENGINE_DMA, I_wait(st, 4));
        /* and a cluster barrier used twice by all four DMA engines */
        for (int r = 0; r < 2; r++) {
            AtlInsn b = I(ISA_OP_BARRIER);
            b.scope = ISA_SCOPE_CLUSTER; b.bar_id = 9; b.bar_count = 4;
            tp_add(&p, k, ISA_ENGINE_DMA, b);
        }
    }
    tp_end_all(&p);
    for (int mode = 0; mode < 2; mode++) {
        AtlSim *s;
        AtlErr e = {{0}};
        int rc = trun(&c, &p, mode ? SIM_MODE_FUNCTIONAL : SIM_MODE_FULL, &s, &e);
        CHECKF(rc == 0, "%s", e.msg);
        if (!rc) {
            for (int k = 0; k < 4; k++) {
                const int8_t *y = (const int8_t *)sim_dram(s, 4096 + (uint64_t)k * 256, 256);
                for (int i = 0; i < 256; i++) if (y[i] != (x[i] > 0 ? x[i] : 0)) { CHECKF(0, "core %d elem %d", k, i); break; }
            }
            if (!mode) CHECK(sim_stats(s)->total[ISA_ENGINE_DMA].stall_bar > 0);
        }
        sim_free(s);
    }
    tp_free(&p);
}

TEST(sram_ports_contend)
{
    /* 4 cores of a cluster read SRAM at once through 2 ports: about twice
     * as long as one core alone */
    AtlChip c;
    tchip(&c, 1, 4);
    uint64_t t1 = 0, t4 = 0;
    for (int n = 1; n <= 4; n += 3) {
        AtlProgram p;
        tp_init(&p, 4);
        for (int k = 0; k < n; k++) tp_add(&p, k, ISA_ENGINE_DMA, I_dma(ISA_I8, ISA_SPACE_LMEM, 0, 0, ISA_SPACE_SRAM, 0, 0, 1, 16384));
        tp_end_all(&p);
        AtlSim *s = run_prog(&c, &p, 0);
        REQUIRE(s);
        if (n == 1) t1 = sim_stats(s)->cycles; else t4 = sim_stats(s)->cycles;
        sim_free(s);
        tp_free(&p);
    }
    CHECK_EQ_INT(t1, tim_dma_cycles(&c, ISA_SPACE_LMEM, ISA_SPACE_SRAM, 16384));
    CHECKF(t4 >= 2 * (t1 - 14) && t4 <= 2 * t1 + 64, "1 core %llu, 4 cores %llu", (unsigned long long)t1, (unsigned long long)t4);
}

int main(void)
{
    RUN(one_dma_equals_formula);
    RUN(cores_share_dram_bandwidth);
    RUN(dram_channel_is_shared_fairly_in_bursts);
    RUN(mm_equals_scalesim);
    RUN(vector_class_keys);
    RUN(double_buffering_overlaps);
    RUN(barrier_and_semaphore_timing);
    RUN(barrier_release_keeps_causality);
    RUN(deterministic_stats_and_trace);
    RUN(expect_regions);
    RUN(multicast_signals_every_destination);
    RUN(sram_ports_contend);
    return test_summary("test_sim_timing");
}
