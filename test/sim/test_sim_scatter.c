/* test_sim_scatter.c - dma.scatter end to end: its text form round-trips
 * through the assembler and disassembler and its binary form through the
 * encoder and decoder; run on the simulator it equals a plain-C scatter
 * (LMEM -> DRAM and DRAM -> LMEM, negative and repeated indices (the last
 * entry wins), f32 and i8) and leaves the rows it does not name alone; an
 * index outside [-limit, limit) is a data fault naming the index and its
 * entry with nothing written; a destination whose `limit` rows leave
 * memory is refused before the run; the firmware relocator bounds the
 * destination by all `limit` rows and the table by shape[1] i32s, as does
 * the race detector (a read of an unnamed row within them races); the
 * compiler's cost of a scatter equals that of the gather of the same
 * shape. */
#include "test/test.h"
#include "test/sim/simtest.h"
#include "firmware/fw.h"
#include "compiler/cost/cost.h"
#include "isa/timing.h"
#include "isa/regs.h"

static AtlChip chip;

/* y[a][idx[j] (+limit if < 0)][c] = x[a][j][c] for y [A][L][C] of f32 */
static AtlInsn scatter_f32(int dsp, int ssp, uint64_t dst, uint64_t src, uint64_t idx, uint32_t A, uint32_t n, uint32_t L, uint32_t C)
{
    AtlInsn g = I(ISA_OP_DMA_SCATTER);
    g.dtype = ISA_F32;
    g.dst_space = (uint8_t)dsp; g.src_space = (uint8_t)ssp; g.src2_space = ISA_SPACE_DRAM;
    g.dst = dst; g.src = src; g.src2 = idx;
    g.shape[0] = A; g.shape[1] = n; g.shape[2] = 1; g.shape[3] = C;
    g.dst_stride[0] = (int32_t)(L * C * 4); g.dst_stride[1] = (int32_t)(C * 4); g.dst_stride[3] = 4;
    g.src_stride[0] = (int32_t)(n * C * 4); g.src_stride[1] = (int32_t)(C * 4); g.src_stride[3] = 4;
    g.limit = L;
    return g;
}

TEST(asm_disasm_encode_round_trip)
{
    const char *text = "dma.scatter dtype=f32 dst=dram:0x40 src=lmem:0x1000 idx=sram:0x2000 shape=2,3,1,5 "
                       "dstride=140,20,0,4 sstride=60,20,0,4 limit=7";
    AtlInsn a;
    AtlErr e = {{0}};
    REQUIRE(isa_asm_line(text, &a, &e) == 0);
    CHECK_EQ_INT(a.op, ISA_OP_DMA_SCATTER);
    CHECK_EQ_INT(a.src2_space, ISA_SPACE_SRAM);
    CHECK_EQ_INT(a.src_space, ISA_SPACE_LMEM);
    CHECK_EQ_INT(a.limit, 7);
    char buf[512];
    isa_disasm(&a, buf, sizeof buf);
    CHECK_STR_CONTAINS(buf, "dma.scatter");
    CHECK_STR_CONTAINS(buf, "idx=sram:0x2000");
    AtlInsn b;
    REQUIRE(isa_asm_line(buf, &b, &e) == 0);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    uint8_t rec[ISA_INSN_BYTES];
    REQUIRE(isa_encode(&a, rec, &e) == 0);
    AtlInsn d;
    REQUIRE(isa_decode(rec, &d, &e) == 0);
    CHECK(memcmp(&a, &d, sizeof a) == 0);
}

static void scatter_case(int dsp, int dt_i8)
{
    enum { A = 3, L = 6, C = 5, N = 4 };
    int ssp = dsp == ISA_SPACE_LMEM ? ISA_SPACE_DRAM : ISA_SPACE_LMEM, es = dt_i8 ? 1 : 4;
    AtlProgram p;
    tp_init(&p, 1);
    float x[A * N * C], y0[A * L * C];
    int8_t x8[A * N * C], y08[A * L * C];
    for (int i = 0; i < A * N * C; i++) { x[i] = (float)i * 0.5f - 7; x8[i] = (int8_t)(i * 3 - 100); }
    for (int i = 0; i < A * L * C; i++) { y0[i] = 1000.0f + (float)i; y08[i] = (int8_t)(i - 60); }
    int32_t idx[N] = {5, 0, -1, 2};   /* -1 names row 5 again: entry 2 wins */
    uint64_t dst = dsp == ISA_SPACE_LMEM ? 0x100 : 0x4000, src = ssp == ISA_SPACE_LMEM ? 0x100 : 0x1000;
    tp_seg(&p, 0x3000, idx, sizeof idx);
    if (dsp == ISA_SPACE_DRAM) tp_seg(&p, dst, dt_i8 ? (const void *)y08 : (const void *)y0, (size_t)(A * L * C * es));
    else tp_seg(&p, 0x6000, dt_i8 ? (const void *)y08 : (const void *)y0, (size_t)(A * L * C * es));
    if (ssp == ISA_SPACE_DRAM) tp_seg(&p, src, dt_i8 ? (const void *)x8 : (const void *)x, (size_t)(A * N * C * es));
    else tp_seg(&p, 0x8000, dt_i8 ? (const void *)x8 : (const void *)x, (size_t)(A * N * C * es));
    /* variant the LMEM end from DRAM first (same queue, in order) */
    AtlInsn st = I(ISA_OP_DMA_COPY);
    st.dtype = ISA_I8; st.dst_space = ISA_SPACE_LMEM; st.src_space = ISA_SPACE_DRAM; st.dst = 0x100;
    st.src = dsp == ISA_SPACE_LMEM ? 0x6000 : 0x8000;
    st.shape[0] = st.shape[1] = st.shape[2] = 1;
    st.shape[3] = (uint32_t)((dsp == ISA_SPACE_LMEM ? A * L * C : A * N * C) * es);
    st.dst_stride[3] = st.src_stride[3] = 1;
    tp_add(&p, 0, ISA_ENGINE_DMA, st);
    AtlInsn g = scatter_f32(dsp, ssp, dst, src, 0x3000, A, N, L, C);
    if (dt_i8) {
        g.dtype = ISA_I8;
        for (int d = 0; d < 4; d++) { g.dst_stride[d] /= 4; g.src_stride[d] /= 4; }
    }
    tp_add(&p, 0, ISA_ENGINE_DMA, g);
    tp_end_all(&p);
    AtlSim *s;
    AtlErr e = {{0}};
    int rc = trun(&chip, &p, SIM_MODE_FULL, &s, &e);
    CHECKF(rc == 0, "%s", e.msg);
    if (!rc) {
        const uint8_t *y = dsp == ISA_SPACE_LMEM ? sim_lmem(s, 0, 0x100, A * L * C * es) : sim_dram(s, 0x4000, A * L * C * es);
        REQUIRE(y);
        float want[A * L * C];
        int8_t want8[A * L * C];
        memcpy(want, y0, sizeof want);
        memcpy(want8, y08, sizeof want8);
        for (int a = 0; a < A; a++)
            for (int j = 0; j < N; j++)
                for (int c = 0; c < C; c++) {
                    int r = idx[j] < 0 ? idx[j] + L : idx[j];
                    want[(a * L + r) * C + c] = x[(a * N + j) * C + c];
                    want8[(a * L + r) * C + c] = x8[(a * N + j) * C + c];
                }
        for (int i = 0; i < A * L * C; i++) {
            if (dt_i8) CHECK_EQ_INT((int8_t)y[i], want8[i]);
            else {
                float v;
                memcpy(&v, y + 4 * i, 4);
                CHECKF(v == want[i], "element %d: %g, want %g", i, v, want[i]);
            }
        }
    }
    sim_free(s);
    tp_free(&p);
}

TEST(exec_matches_plain_c)
{
    scatter_case(ISA_SPACE_LMEM, 0);
    scatter_case(ISA_SPACE_DRAM, 0);
    scatter_case(ISA_SPACE_DRAM, 1);
}

static void fault_case(int32_t bad, const char *needle)
{
    AtlProgram p;
    tp_init(&p, 1);
    float x[2 * 2] = {1, 2, 3, 4}, sentinel[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    int32_t idx[2] = {1, bad};
    tp_seg(&p, 0x1000, x, sizeof x);
    tp_seg(&p, 0x2000, idx, sizeof idx);
    tp_seg(&p, 0x4000, sentinel, sizeof sentinel);
    tp_add(&p, 0, ISA_ENGINE_DMA, I(ISA_OP_NOP));
    tp_add(&p, 0, ISA_ENGINE_DMA, scatter_f32(ISA_SPACE_DRAM, ISA_SPACE_DRAM, 0x4000, 0x1000, 0x2000, 1, 2, 4, 2));
    AtlErr e = {{0}};
    AtlSim *s = tp_run_to_fault(&chip, &p, &e);
    REQUIRE(s);
    const AtlSimFault *f = sim_fault(s);
    CHECK(f->kind == SIM_FAULT_DATA);
    CHECK_EQ_INT(f->index, 1);
    CHECK_STR_CONTAINS(e.msg, needle);
    CHECK_STR_CONTAINS(e.msg, "dma.scatter: index");
    CHECK_STR_CONTAINS(e.msg, "entry 1 of idx");
    const float *y = (const float *)sim_dram(s, 0x4000, 32);
    for (int i = 0; i < 8; i++) CHECK(y[i] == -1);   /* entry 0 was valid, still nothing written */
    sim_free(s);
    tp_free(&p);
}

TEST(out_of_range_index_faults)
{
    fault_case(4, "index 4 (entry 1 of idx) is outside [-4, 4)");
    fault_case(-5, "index -5");
}

static void refuse_case(AtlInsn g, const char *needle)
{
    AtlProgram p;
    tp_init(&p, 1);
    tp_add(&p, 0, ISA_ENGINE_DMA, g);
    AtlErr e = {{0}};
    AtlSim *s = tp_run_to_fault(&chip, &p, &e);
    REQUIRE(s);
    CHECK_STR_CONTAINS(e.msg, needle);
    sim_free(s);
    tp_free(&p);
}

TEST(static_checks_bound_dst_by_limit_rows)
{
    /* 2 rows of 8 bytes fit below the end of DRAM, all 4 do not */
    AtlInsn g = scatter_f32(ISA_SPACE_DRAM, ISA_SPACE_DRAM, (uint64_t)chip.dram_bytes - 24, 0x1000, 0x2000, 1, 2, 4, 2);
    refuse_case(g, "dst touches dram");
    g = scatter_f32(ISA_SPACE_DRAM, ISA_SPACE_DRAM, 0x4000, 0x1000, 0x2000, 1, 2, 4, 2);
    g.limit = 0;
    refuse_case(g, "field limit: 0 indexed rows");
}

TEST(firmware_bounds_dst_by_limit_rows)
{
    uint64_t base[ABM_REGION_COUNT] = {0x10000, 0x20000, 0x30000}, size[ABM_REGION_COUNT] = {0x1000, 0x1000, 0x100};
    /* dst: 4 rows of 8 bytes from io+0xe0 fit (0x100); the source's 2 rows from weights+0 fit */
    AtlInsn g = scatter_f32(ISA_SPACE_DRAM, ISA_SPACE_DRAM, ATL_RELOC_ADDR(ABM_REGION_IO, 0xe0), ATL_RELOC_ADDR(ABM_REGION_WEIGHTS, 0),
                            ATL_RELOC_ADDR(ABM_REGION_ACTIVATIONS, 0xff8), 1, 2, 4, 2);
    uint8_t rec[ISA_INSN_BYTES];
    AtlErr e = {{0}};
    char why[256] = "";
    REQUIRE(isa_encode(&g, rec, &e) == 0);
    CHECKF(fw_reloc_insn(rec, base, size, why, sizeof why) == 0, "%s", why);
    AtlInsn d;
    REQUIRE(isa_decode(rec, &d, &e) == 0);
    CHECK(d.dst == 0x300e0 && d.src == 0x10000 && d.src2 == 0x20ff8);
    g.dst = ATL_RELOC_ADDR(ABM_REGION_IO, 0xf0);   /* 2 rows fit, all 4 do not */
    REQUIRE(isa_encode(&g, rec, &e) == 0);
    CHECK(fw_reloc_insn(rec, base, size, why, sizeof why) != 0);
    CHECK_STR_CONTAINS(why, "dst=io+0xf0");
    g.dst = ATL_RELOC_ADDR(ABM_REGION_IO, 0xe0);
    g.src = ATL_RELOC_ADDR(ABM_REGION_IO, 0xf0);   /* the source is shape rows only: 2 x 8 bytes fit */
    REQUIRE(isa_encode(&g, rec, &e) == 0);
    CHECKF(fw_reloc_insn(rec, base, size, why, sizeof why) == 0, "%s", why);
    g.src2 = ATL_RELOC_ADDR(ABM_REGION_ACTIVATIONS, 0xffc);   /* 2 i32s from 0xffc leave the region */
    REQUIRE(isa_encode(&g, rec, &e) == 0);
    CHECK(fw_reloc_insn(rec, base, size, why, sizeof why) != 0);
    CHECK_STR_CONTAINS(why, "idx=activations+0xffc");
}

/* The race detector sees a scatter write all `limit` rows of its
 * destination: a vector read of row 7 while a scatter of 2 rows into 8 is
 * in flight is a race; with limit 2 it is not. */
static void race_case(uint32_t limit, int expect_race)
{
    AtlProgram p;
    tp_init(&p, 1);
    float x[2 * 64] = {0};
    int32_t idx[2] = {0, 1};
    tp_seg(&p, 0x1000, x, sizeof x);
    tp_seg(&p, 0x2000, idx, sizeof idx);
    AtlInsn g = scatter_f32(ISA_SPACE_LMEM, ISA_SPACE_DRAM, 0, 0x1000, 0x2000, 1, 2, 8, 64);
    g.limit = limit;
    tp_add(&p, 0, ISA_ENGINE_DMA, g);
    tp_add(&p, 0, ISA_ENGINE_VEC, I_vec(ISA_OP_V_RELU, ISA_I8, 0x4000, 7 * 256, 0, 64));
    if (!expect_race) {
        tp_end_all(&p);
        AtlSim *s;
        AtlErr e = {{0}};
        int rc = trun(&chip, &p, SIM_MODE_FULL, &s, &e);
        CHECKF(rc == 0, "%s", e.msg);
        sim_free(s);
        tp_free(&p);
        return;
    }
    AtlErr e = {{0}};
    AtlSim *s = tp_run_to_fault(&chip, &p, &e);
    REQUIRE(s);
    CHECK(sim_fault(s)->kind == SIM_FAULT_RACE);
    CHECK_STR_CONTAINS(e.msg, "dma instruction #0");
    sim_free(s);
    tp_free(&p);
}

TEST(race_detector_sees_limit_rows_written)
{
    race_case(8, 1);
    race_case(2, 0);
}

TEST(cost_equals_the_mirror_gather)
{
    AtlInsn sc = scatter_f32(ISA_SPACE_LMEM, ISA_SPACE_DRAM, 0x100, 0x1000, 0x2000, 3, 4, 6, 5), ga = sc, cp = sc;
    ga.op = ISA_OP_DMA_GATHER;   /* src and dst swap roles: same bytes both ways */
    cp.op = ISA_OP_DMA_COPY; cp.limit = 0; cp.src2 = 0; cp.src2_space = 0;
    uint64_t c_sc = bk_insn_cycles(&chip, &sc), c_ga = bk_insn_cycles(&chip, &ga), c_cp = bk_insn_cycles(&chip, &cp);
    CHECK(c_sc == c_ga);
    CHECK(c_sc == c_cp + tim_gather_index_cycles(&chip, ISA_SPACE_DRAM, 4));
}

int main(void)
{
    tchip(&chip, 1, 1);
    RUN(asm_disasm_encode_round_trip);
    RUN(exec_matches_plain_c);
    RUN(out_of_range_index_faults);
    RUN(static_checks_bound_dst_by_limit_rows);
    RUN(firmware_bounds_dst_by_limit_rows);
    RUN(race_detector_sees_limit_rows_written);
    RUN(cost_equals_the_mirror_gather);
    return test_summary("test_sim_scatter");
}
