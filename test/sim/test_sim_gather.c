/* test_sim_gather.c - dma.gather end to end: its text form round-trips
 * through the assembler and disassembler and its binary form through the
 * encoder and decoder; run on the simulator it equals a plain-C gather
 * (DRAM -> LMEM and DRAM -> DRAM, negative indices, f32 and i8); an index
 * outside [-limit, limit) is a data fault naming the index, its entry and
 * the instruction, with nothing written; a source whose `limit` rows leave
 * memory, or limit 0, is refused before the run; the firmware relocator
 * checks the index table and all `limit` source rows against the region. */
#include "test/test.h"
#include "test/sim/simtest.h"
#include "firmware/fw.h"
#include "isa/regs.h"

static AtlChip chip;

/* y[a][j][c] = x[a][idx[j] (+limit if < 0)][c] for x [A][L][C] of f32 */
static AtlInsn gather_f32(int dsp, uint64_t dst, uint64_t src, uint64_t idx, uint32_t A, uint32_t n, uint32_t L, uint32_t C)
{
    AtlInsn g = I(ISA_OP_DMA_GATHER);
    g.dtype = ISA_F32;
    g.dst_space = (uint8_t)dsp; g.src_space = ISA_SPACE_DRAM; g.src2_space = ISA_SPACE_DRAM;
    g.dst = dst; g.src = src; g.src2 = idx;
    g.shape[0] = A; g.shape[1] = n; g.shape[2] = 1; g.shape[3] = C;
    g.dst_stride[0] = (int32_t)(n * C * 4); g.dst_stride[1] = (int32_t)(C * 4); g.dst_stride[3] = 4;
    g.src_stride[0] = (int32_t)(L * C * 4); g.src_stride[1] = (int32_t)(C * 4); g.src_stride[3] = 4;
    g.limit = L;
    return g;
}

TEST(asm_disasm_encode_round_trip)
{
    const char *text = "dma.gather dtype=f32 dst=lmem:0x40 src=dram:0x1000 idx=dram:0x2000 shape=2,3,1,5 "
                       "dstride=60,20,0,4 sstride=140,20,0,4 limit=7";
    AtlInsn a;
    AtlErr e = {{0}};
    REQUIRE(isa_asm_line(text, &a, &e) == 0);
    CHECK_EQ_INT(a.op, ISA_OP_DMA_GATHER);
    CHECK_EQ_INT(a.src2_space, ISA_SPACE_DRAM);
    CHECK_EQ_INT(a.dst_space, ISA_SPACE_LMEM);
    CHECK_EQ_INT(a.limit, 7);
    CHECK(a.src2 == 0x2000);
    char buf[512];
    isa_disasm(&a, buf, sizeof buf);
    CHECK_STR_CONTAINS(buf, "idx=dram:0x2000");
    CHECK_STR_CONTAINS(buf, "limit=7");
    AtlInsn b;
    REQUIRE(isa_asm_line(buf, &b, &e) == 0);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    uint8_t rec[ISA_INSN_BYTES];
    REQUIRE(isa_encode(&a, rec, &e) == 0);
    AtlInsn d;
    REQUIRE(isa_decode(rec, &d, &e) == 0);
    CHECK(memcmp(&a, &d, sizeof a) == 0);
    a.limit = 1u << 22;   /* 22 bits */
    CHECK(isa_encode(&a, rec, &e) != 0);
    CHECK_STR_CONTAINS(e.msg, "limit");
}

static void gather_case(int dsp, int dt_i8)
{
    enum { A = 3, L = 6, C = 5, N = 4 };
    AtlProgram p;
    tp_init(&p, 1);
    float x[A * L * C];
    int8_t x8[A * L * C];
    for (int i = 0; i < A * L * C; i++) { x[i] = (float)i * 0.5f - 7; x8[i] = (int8_t)(i * 3 - 100); }
    int32_t idx[N] = {5, 0, -1, -6};
    tp_seg(&p, 0x1000, dt_i8 ? (const void *)x8 : (const void *)x, dt_i8 ? sizeof x8 : sizeof x);
    tp_seg(&p, 0x3000, idx, sizeof idx);
    AtlInsn g = gather_f32(dsp, dsp == ISA_SPACE_LMEM ? 0x100 : 0x4000, 0x1000, 0x3000, A, N, L, C);
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
        int es = dt_i8 ? 1 : 4;
        const uint8_t *y = dsp == ISA_SPACE_LMEM ? sim_lmem(s, 0, 0x100, A * N * C * es) : sim_dram(s, 0x4000, A * N * C * es);
        REQUIRE(y);
        for (int a = 0; a < A; a++)
            for (int j = 0; j < N; j++)
                for (int c = 0; c < C; c++) {
                    int r = idx[j] < 0 ? idx[j] + L : idx[j], at = (a * N + j) * C + c, from = (a * L + r) * C + c;
                    if (dt_i8) CHECK_EQ_INT((int8_t)y[at], x8[from]);
                    else {
                        float v;
                        memcpy(&v, y + 4 * at, 4);
                        CHECK(v == x[from]);
                    }
                }
        CHECK(sim_stats(s)->cycles > 0);
    }
    sim_free(s);
    tp_free(&p);
}

TEST(exec_matches_plain_c)
{
    gather_case(ISA_SPACE_LMEM, 0);
    gather_case(ISA_SPACE_DRAM, 0);
    gather_case(ISA_SPACE_DRAM, 1);
}

static void fault_case(int32_t bad, const char *needle)
{
    AtlProgram p;
    tp_init(&p, 1);
    float x[4 * 2] = {1, 2, 3, 4, 5, 6, 7, 8}, sentinel[4] = {-1, -1, -1, -1};
    int32_t idx[2] = {1, bad};
    tp_seg(&p, 0x1000, x, sizeof x);
    tp_seg(&p, 0x2000, idx, sizeof idx);
    tp_seg(&p, 0x4000, sentinel, sizeof sentinel);
    tp_add(&p, 0, ISA_ENGINE_DMA, I(ISA_OP_NOP));
    tp_add(&p, 0, ISA_ENGINE_DMA, gather_f32(ISA_SPACE_DRAM, 0x4000, 0x1000, 0x2000, 1, 2, 4, 2));
    AtlErr e = {{0}};
    AtlSim *s = tp_run_to_fault(&chip, &p, &e);
    REQUIRE(s);
    const AtlSimFault *f = sim_fault(s);
    CHECK(f->kind == SIM_FAULT_DATA);
    CHECK_EQ_INT(f->index, 1);
    CHECK_EQ_INT(f->engine, ISA_ENGINE_DMA);
    CHECK_STR_CONTAINS(e.msg, needle);
    CHECK_STR_CONTAINS(e.msg, "entry 1 of idx");
    CHECK_STR_CONTAINS(f->disasm, "dma.gather");
    const float *y = (const float *)sim_dram(s, 0x4000, 16);
    for (int i = 0; i < 4; i++) CHECK(y[i] == -1);   /* nothing written */
    sim_free(s);
    tp_free(&p);
}

TEST(out_of_range_index_faults)
{
    fault_case(4, "index 4 (entry 1 of idx) is outside [-4, 4)");
    fault_case(-5, "index -5");
    fault_case(1000000, "index 1000000");
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

TEST(static_checks)
{
    AtlInsn g = gather_f32(ISA_SPACE_DRAM, 0x4000, 0x1000, 0x2000, 1, 2, 4, 2);
    g.limit = 0;
    refuse_case(g, "field limit: 0 indexed rows");
    g = gather_f32(ISA_SPACE_DRAM, 0x4000, (uint64_t)chip.dram_bytes - 24, 0x2000, 1, 2, 4, 2);
    refuse_case(g, "src touches dram");   /* 2 rows of 8 bytes fit below the end, all 4 do not */
    g = gather_f32(ISA_SPACE_DRAM, 0x4000, 0x1000, (uint64_t)chip.dram_bytes - 4, 1, 2, 4, 2);
    refuse_case(g, "idx touches dram");
}

TEST(firmware_relocates_and_checks_idx)
{
    uint64_t base[ABM_REGION_COUNT] = {0x10000, 0x20000, 0x30000}, size[ABM_REGION_COUNT] = {0x1000, 0x1000, 0x100};
    AtlInsn g = gather_f32(ISA_SPACE_DRAM, ATL_RELOC_ADDR(ABM_REGION_ACTIVATIONS, 0x40), ATL_RELOC_ADDR(ABM_REGION_WEIGHTS, 0),
                           ATL_RELOC_ADDR(ABM_REGION_IO, 0xf8), 1, 2, 4, 2);
    uint8_t rec[ISA_INSN_BYTES];
    AtlErr e = {{0}};
    char why[256] = "";
    REQUIRE(isa_encode(&g, rec, &e) == 0);
    CHECKF(fw_reloc_insn(rec, base, size, why, sizeof why) == 0, "%s", why);
    AtlInsn d;
    REQUIRE(isa_decode(rec, &d, &e) == 0);
    CHECK(d.src2 == 0x300f8 && d.src == 0x10000 && d.dst == 0x20040);
    g.src2 = ATL_RELOC_ADDR(ABM_REGION_IO, 0xfc);        /* 2 indices = 8 bytes from 0xfc: beyond 0x100 */
    REQUIRE(isa_encode(&g, rec, &e) == 0);
    CHECK(fw_reloc_insn(rec, base, size, why, sizeof why) != 0);
    CHECK_STR_CONTAINS(why, "idx=io+0xfc");
    g = gather_f32(ISA_SPACE_DRAM, ATL_RELOC_ADDR(ABM_REGION_ACTIVATIONS, 0), ATL_RELOC_ADDR(ABM_REGION_IO, 0xf0),
                   ATL_RELOC_ADDR(ABM_REGION_IO, 0), 1, 2, 4, 2);   /* 2 gathered rows fit, all 4 do not */
    REQUIRE(isa_encode(&g, rec, &e) == 0);
    CHECK(fw_reloc_insn(rec, base, size, why, sizeof why) != 0);
    CHECK_STR_CONTAINS(why, "src=io+0xf0");
}

int main(void)
{
    tchip(&chip, 1, 1);
    RUN(asm_disasm_encode_round_trip);
    RUN(exec_matches_plain_c);
    RUN(out_of_range_index_faults);
    RUN(static_checks);
    RUN(firmware_relocates_and_checks_idx);
    return test_summary("test_sim_gather");
}
