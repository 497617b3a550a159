/* test_sim_race.c - the race detector in cluster SRAM and DRAM
 * (sim/race.c): a DMA read of DRAM bytes another core's DMA is writing is
 * reported at the second one to start, naming both, in timing and full
 * mode; a write while another core is still reading is one too; each
 * cluster has its own SRAM; of several in-flight reads the one that began
 * first is named; and the per-engine operand cache starts afresh with each
 * program loaded (a stale one would hide a race). */
#include "test/test.h"
#include "test/sim/simtest.h"

static AtlChip chip; /* 2 clusters x 2 cores */

/* Runs p (ended) in mode; returns the run's result with the message in e. */
static int run(AtlProgram *p, AtlSimMode mode, AtlErr *e, AtlSimFault *f)
{
    AtlSim *s;
    tp_end_all(p);
    int rc = trun(&chip, p, mode, &s, e);
    if (s && f) *f = *sim_fault(s);
    sim_free(s);
    return rc;
}

/* Runs p in mode: a race at core's DMA instruction #index whose message
 * has both needles (the second may be NULL). Frees p. */
static void expect_race(AtlProgram *p, AtlSimMode mode, int core, int index, const char *needle, const char *needle2)
{
    AtlErr e = {{0}};
    AtlSimFault f;
    CHECK(run(p, mode, &e, &f) == -1);
    CHECKF(f.kind == SIM_FAULT_RACE, "%s", e.msg);
    CHECK_EQ_INT(f.core, core);
    CHECK_EQ_INT(f.engine, ISA_ENGINE_DMA);
    CHECK_EQ_INT(f.index, index);
    CHECK_STR_CONTAINS(e.msg, needle);
    if (needle2) CHECK_STR_CONTAINS(e.msg, needle2);
    tp_free(p);
}

static AtlInsn copy(int dsp, uint64_t dst, int ssp, uint64_t src, uint32_t bytes)
{
    return I_dma(ISA_I8, dsp, dst, 0, ssp, src, 0, 1, bytes);
}

TEST(dram_read_while_written)
{
    static const AtlSimMode modes[] = {SIM_MODE_FULL, SIM_MODE_TIMING};
    for (int m = 0; m < 2; m++) {
        AtlProgram p;
        tp_init(&p, 3);
        tp_add(&p, 0, ISA_ENGINE_DMA, I_store(0x10000, 0, 4096));
        tp_add(&p, 2, ISA_ENGINE_DMA, I_load(0, 0x10800, 1024)); /* core 2 is in cluster 1 */
        expect_race(&p, modes[m], 2, 0, "reads dram bytes [0x10800, 0x10c00) while core 0 dma instruction #0 `dma.copy",
                    "is still writing [0x10000, 0x11000); no semaphore or barrier orders them");
    }
}

TEST(dram_written_while_read)
{
    AtlProgram p;
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0x40000, 64));       /* short, unrelated */
    tp_add(&p, 0, ISA_ENGINE_DMA, I_store(0x10100, 0, 16));      /* into what core 1 still reads */
    tp_add(&p, 1, ISA_ENGINE_DMA, I_load(0, 0x10000, 8192));
    expect_race(&p, SIM_MODE_TIMING, 0, 1, "writes dram bytes [0x10100, 0x10110) while core 1 dma instruction #0",
                "is still reading [0x10000, 0x12000)");
}

TEST(sram_per_cluster)
{
    /* core 0 (cluster 0) writes sram:0 while core 2 (cluster 1) reads its own sram:0 */
    AtlProgram p;
    tp_init(&p, 3);
    tp_add(&p, 0, ISA_ENGINE_DMA, copy(ISA_SPACE_SRAM, 0, ISA_SPACE_LMEM, 0, 4096));
    tp_add(&p, 2, ISA_ENGINE_DMA, copy(ISA_SPACE_LMEM, 0, ISA_SPACE_SRAM, 0, 4096));
    AtlErr e = {{0}};
    CHECKF(run(&p, SIM_MODE_FULL, &e, NULL) == 0, "%s", e.msg);
    tp_free(&p);
    /* core 1, in cluster 0, reading the same bytes races */
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_DMA, copy(ISA_SPACE_SRAM, 0, ISA_SPACE_LMEM, 0, 4096));
    AtlInsn rd = copy(ISA_SPACE_LMEM, 0, ISA_SPACE_SRAM, 0xf00, 512);
    rd.src_core = 0;
    tp_add(&p, 1, ISA_ENGINE_DMA, rd);
    expect_race(&p, SIM_MODE_FULL, 1, 0, "reads sram bytes [0xf00, 0x1100) of cluster 0 while core 0 dma instruction #0", NULL);
}

TEST(names_read_that_began_first)
{
    /* two reads of the buffer in flight, core 1's from cycle 0 and core 3's
     * from later (or the other way round); core 0's write names the first */
    for (int one_first = 1; one_first >= 0; one_first--) {
        AtlProgram p;
        tp_init(&p, 4);
        tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0x40000, 512)); /* time passes */
        tp_add(&p, 0, ISA_ENGINE_DMA, I_store(0x10000, 0, 64));
        int late = one_first ? 3 : 1, early = one_first ? 1 : 3;
        tp_add(&p, early, ISA_ENGINE_DMA, I_load(0, 0x10000, 8192));
        tp_add(&p, late, ISA_ENGINE_DMA, I_load(0, 0x40000, 64));
        tp_add(&p, late, ISA_ENGINE_DMA, I_load(0x4000, 0x10000, 8192));
        expect_race(&p, SIM_MODE_TIMING, 0, 1, one_first ? "while core 1 dma instruction #0" : "while core 3 dma instruction #0", NULL);
    }
}

/* Cores 0 and 1 store 64 x 16 i32 column tiles of a 64 x 32 matrix at
 * once, core 1's `shift` columns right of core 0's. */
static void tiles(AtlProgram *p, int shift)
{
    tp_init(p, 2);
    for (int c = 0; c < 2; c++) {
        AtlInsn st = I_dma(ISA_I32, ISA_SPACE_DRAM, 0x10000 + (uint64_t)(c * shift * 4), 128, ISA_SPACE_LMEM, 0, 64, 64, 16);
        st.src_core = (uint8_t)c;
        tp_add(p, c, ISA_ENGINE_DMA, st);
    }
    tp_end_all(p);
}

TEST(operands_fresh_per_load)
{
    AtlProgram a, b;
    tiles(&a, 16); /* side by side: no race */
    tiles(&b, 12); /* four shared columns, at the same instruction indices */
    AtlErr e = {{0}};
    AtlSim *s = sim_create(&chip, NULL, &e);
    REQUIRE(s);
    CHECKF(sim_load(s, &a, &e) == 0 && sim_run(s, &e) == 0, "%s", e.msg);
    CHECKF(sim_load(s, &b, &e) == 0, "%s", e.msg);
    CHECK(sim_run(s, &e) == -1);
    CHECK(sim_fault(s)->kind == SIM_FAULT_RACE);
    CHECK_STR_CONTAINS(e.msg, "writes dram bytes [0x10030, 0x11ff0) while core 0 dma instruction #0");
    sim_free(s);
    tp_free(&a);
    tp_free(&b);
}

int main(void)
{
    tchip(&chip, 2, 2);
    RUN(dram_read_while_written);
    RUN(dram_written_while_read);
    RUN(sram_per_cluster);
    RUN(names_read_that_began_first);
    RUN(operands_fresh_per_load);
    return test_summary("test_sim_race");
}
