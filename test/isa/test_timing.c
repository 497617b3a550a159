/* test_timing.c - isa/timing closed forms against hand-computed values and
 * the SCALE-Sim weight-stationary reference numbers (docs/timing.md). */
#include "test/test.h"
#include "test/sim/simtest.h"

TEST(scalesim_reference)
{
    AtlChip c;
    tchip(&c, 1, 1);
    c.mm_rows = c.mm_cols = 32;
    CHECK_EQ_INT(tim_mm_cycles(&c, ISA_I8, 256, 256, 256), 22399);
    AtlInsn cv = I(ISA_OP_CONV);
    cv.dtype = ISA_I8; cv.cin = 256; cv.ih = 56; cv.iw = 56; cv.cout = 64; cv.kh = cv.kw = 1;
    cv.sh = cv.sw = cv.dh = cv.dw = 1; cv.groups = 1;
    CHECK_EQ_INT(tim_conv_cycles(&c, &cv), 51679);
    CHECK_EQ_INT(tim_conv_macs(&cv), 3136ull * 256 * 64);
    /* double-buffered weights: first fold 2R+C+M-2, later folds R+C+M-2 */
    c.mm_weight_double_buffer = 1;
    CHECK_EQ_INT(tim_mm_cycles(&c, ISA_I8, 256, 256, 256), 350 + 63 * 318 - 1);
    CHECK(tim_mm_cycles(&c, ISA_I8, 256, 256, 256) < 22399);
    c.mm_weight_double_buffer = 0;
    /* rate and issue */
    c.mm_issue_cycles = 7;
    CHECK_EQ_INT(tim_mm_cycles(&c, ISA_F32, 256, 256, 256), 22400 * 4 - 1 + 7);
    CHECK_EQ_INT(tim_mm_cycles(&c, ISA_F16, 1, 1, 1), (64 + 32 + 1 - 2) * 2 - 1 + 7);
    CHECK_EQ_INT(tim_mm_folds(&c, 33, 64), 4);
}

TEST(conv_as_gemm)
{
    AtlChip c;
    tchip(&c, 1, 1);
    AtlInsn cv = I(ISA_OP_CONV);
    cv.dtype = ISA_I8; cv.cin = 16; cv.ih = 10; cv.iw = 12; cv.cout = 24; cv.kh = 3; cv.kw = 3;
    cv.sh = 2; cv.sw = 1; cv.dh = cv.dw = 1; cv.pad_top = cv.pad_bottom = 1; cv.pad_left = cv.pad_right = 1; cv.groups = 2;
    /* OH = (10+2-3)/2+1 = 5, OW = 12; per group M=60, K=9*8=72, N=12 */
    uint64_t folds = 9 * 2, per = 2 * 8 + 8 + 60 - 2;
    CHECK_EQ_INT(tim_conv_out(10, 3, 2, 1, 1, 1), 5);
    CHECK_EQ_INT(tim_conv_cycles(&c, &cv), 2 * folds * per - 1);
    CHECK_EQ_INT(tim_conv_macs(&cv), 2ull * 60 * 72 * 12);
    CHECK_EQ_INT(tim_conv_out(5, 7, 1, 1, 0, 0), 0);
}

TEST(vector_formulas)
{
    AtlChip c;
    tchip(&c, 1, 1); /* 16 lanes, issue 2, transcendental 4 */
    CHECK_EQ_INT(tim_vec_cycles(&c, ISA_OP_V_ADD, ISA_F32, 100), 7 + 2);
    CHECK_EQ_INT(tim_vec_cycles(&c, ISA_OP_V_ADD, ISA_I8, 100), 2 + 2);
    CHECK_EQ_INT(tim_vec_cycles(&c, ISA_OP_V_ADD, ISA_BF16, 64), 2 + 2);
    CHECK_EQ_INT(tim_vec_cycles(&c, ISA_OP_V_EXP, ISA_F32, 100), 7 * 4 + 2);
    CHECK_EQ_INT(tim_requant_cycles(&c, 100), 7 + 2);
    CHECK_EQ_INT(tim_cast_cycles(&c, ISA_I8, ISA_F32, 64), 4 + 2);
    CHECK_EQ_INT(tim_reduce_cycles(&c, ISA_I16, 64), 2 + 2);
    /* new ops: the transcendentals in v.exp's class, comparisons/rounding/div
     * at the plain rate, arg-reductions and v.rmin like v.rmax */
    CHECK_EQ_INT(tim_vec_cycles(&c, ISA_OP_V_ATANH, ISA_F32, 100), 7 * 4 + 2);
    CHECK_EQ_INT(tim_vec_cycles(&c, ISA_OP_V_DIV, ISA_F32, 100), 7 + 2);
    CHECK_EQ_INT(tim_vec_cycles(&c, ISA_OP_V_FLOOR, ISA_F16, 100), 4 + 2);
    AtlInsn a = I(ISA_OP_V_RARGMAX);
    a.dtype = ISA_I16; a.shape[0] = a.shape[1] = 1; a.shape[2] = 4; a.shape[3] = 16;
    AtlInsn m = a;
    m.op = ISA_OP_V_RMAX; m.otype = ISA_I16;
    CHECK_EQ_INT(tim_compute_cycles(&c, &a), 2 + 2);
    CHECK_EQ_INT(tim_compute_cycles(&c, &a), tim_compute_cycles(&c, &m));
    a.op = ISA_OP_V_RMIN;
    CHECK_EQ_INT(tim_compute_cycles(&c, &a), 2 + 2);
    AtlInsn p = I(ISA_OP_V_MAXPOOL);
    p.dtype = ISA_I8; p.cin = 64; p.ih = 8; p.iw = 8; p.kh = p.kw = 2; p.sh = p.sw = 2;
    CHECK_EQ_INT(tim_pool_cycles(&c, &p), 16 * 4 + 2); /* 4x4x64 = 1024 outputs / 64 per step, x 4 window */
}

/* fold_overlap: consecutive folds overlap their fill and drain; off, the
 * SCALE-Sim formula above is untouched (scalesim_reference runs with it off). */
TEST(fold_overlap)
{
    AtlChip c;
    tchip(&c, 1, 1);
    c.mm_rows = c.mm_cols = 32;
    c.mm_fold_overlap = 1;
    /* 64 folds: the first 2R+C+M-2 = 350, each later one R + M = 288 (weights not double-buffered) */
    CHECK_EQ_INT(tim_mm_cycles(&c, ISA_I8, 256, 256, 256), 350 + 63 * 288 - 1);
    c.mm_weight_double_buffer = 1; /* the weight load hides behind the M = 256 rows */
    CHECK_EQ_INT(tim_mm_cycles(&c, ISA_I8, 256, 256, 256), 350 + 63 * 256 - 1);
    /* a fully-connected layer at batch 1 (M = 1): later folds take R cycles, the weight load */
    uint64_t fc_on = tim_mm_cycles(&c, ISA_I8, 1, 2048, 1000);
    CHECK_EQ_INT(fc_on, (2 * 32 + 32 + 1 - 2) + (64 * 32 - 1) * 32ull - 1);
    c.mm_fold_overlap = 0;
    uint64_t fc_off = tim_mm_cycles(&c, ISA_I8, 1, 2048, 1000);
    CHECK_EQ_INT(fc_off, (2 * 32 + 32 + 1 - 2) + (64 * 32 - 1) * (32ull + 32 + 1 - 2) - 1);
    CHECK(fc_off > fc_on * 19 / 10);
    /* conv: groups x folds, the same bracket; rate multiplies it */
    c.mm_fold_overlap = 1;
    c.mm_weight_double_buffer = 0;
    AtlInsn cv = I(ISA_OP_CONV);
    cv.dtype = ISA_F16; cv.cin = 256; cv.ih = 56; cv.iw = 56; cv.cout = 64; cv.kh = cv.kw = 1;
    cv.sh = cv.sw = cv.dh = cv.dw = 1; cv.groups = 1;
    CHECK_EQ_INT(tim_conv_cycles(&c, &cv), ((2 * 32 + 32 + 3136 - 2) + 15 * (32 + 3136ull)) * 2 - 1);
}

/* Each vector class has its own key; the defaults (1) price every class as before. */
TEST(vector_classes)
{
    AtlChip c;
    tchip(&c, 1, 1); /* 16 lanes, issue 2 */
    static const struct { int op, cls; } ops[] = {
        {ISA_OP_V_ADD, TIM_VEC_ARITH}, {ISA_OP_V_MUL, TIM_VEC_ARITH}, {ISA_OP_V_AND, TIM_VEC_ARITH},
        {ISA_OP_V_FLOOR, TIM_VEC_ARITH}, {ISA_OP_V_DIV, TIM_VEC_DIV}, {ISA_OP_V_MOD, TIM_VEC_DIV},
        {ISA_OP_V_EXP, TIM_VEC_TRANSCENDENTAL}, {ISA_OP_V_ERF, TIM_VEC_TRANSCENDENTAL},
        {ISA_OP_V_EQ, TIM_VEC_COMPARE}, {ISA_OP_V_MAX, TIM_VEC_COMPARE}, {ISA_OP_V_SEL, TIM_VEC_COMPARE},
        {ISA_OP_V_RSUM, TIM_VEC_REDUCE}, {ISA_OP_V_RARGMIN, TIM_VEC_REDUCE}, {ISA_OP_V_MAXPOOL, TIM_VEC_REDUCE},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) CHECK_EQ_INT(tim_vec_class(ops[i].op), ops[i].cls);
    c.vec_arith_cycles = 2; c.vec_div_cycles = 9; c.vec_compare_cycles = 3; c.vec_reduce_cycles = 5;
    CHECK_EQ_INT(tim_vec_cycles(&c, ISA_OP_V_ADD, ISA_F32, 100), 7 * 2 + 2);
    CHECK_EQ_INT(tim_vec_cycles(&c, ISA_OP_V_DIV, ISA_F32, 100), 7 * 9 + 2);
    CHECK_EQ_INT(tim_vec_cycles(&c, ISA_OP_V_LT, ISA_F32, 100), 7 * 3 + 2);
    CHECK_EQ_INT(tim_vec_cycles(&c, ISA_OP_V_EXP, ISA_F32, 100), 7 * 4 + 2);
    CHECK_EQ_INT(tim_reduce_cycles(&c, ISA_I16, 64), 2 * 5 + 2);
    AtlInsn p = I(ISA_OP_V_MAXPOOL);
    p.dtype = ISA_I8; p.cin = 64; p.ih = 8; p.iw = 8; p.kh = p.kw = 2; p.sh = p.sw = 2;
    CHECK_EQ_INT(tim_pool_cycles(&c, &p), 16 * 4 * 5 + 2);
    AtlInsn d = I(ISA_OP_V_DIV);
    d.dtype = ISA_F32; d.shape[0] = d.shape[1] = 1; d.shape[2] = 4; d.shape[3] = 25;
    CHECK_EQ_INT(tim_compute_cycles(&c, &d), 7 * 9 + 2);
}

TEST(dma_formula)
{
    AtlChip c;
    tchip(&c, 1, 1); /* DRAM 16 B/cycle, latency 100 ns + NoC 20, issue 4, burst 256 */
    CHECK_EQ_INT(tim_dram_latency(&c), 120);
    CHECK(tim_dma_path_bw(&c, ISA_SPACE_LMEM, ISA_SPACE_DRAM) == 16.0);
    CHECK_EQ_INT(tim_dma_cycles(&c, ISA_SPACE_LMEM, ISA_SPACE_DRAM, 4096), 4 + 120 + 256);
    CHECK_EQ_INT(tim_dma_cycles(&c, ISA_SPACE_LMEM, ISA_SPACE_DRAM, 4100), 4 + 120 + 257);
    CHECK_EQ_INT(tim_dma_cycles(&c, ISA_SPACE_LMEM, ISA_SPACE_SRAM, 4096), 4 + 10 + 128);
    CHECK_EQ_INT(tim_dma_cycles(&c, ISA_SPACE_LMEM, ISA_SPACE_LMEM, 4096), 4 + 0 + 64);
    CHECK_EQ_INT(tim_occupancy(256, 16.0), 16);
    CHECK_EQ_INT(tim_occupancy(257, 16.0), 17);
}

/* The banked DRAM's address mapping, defined once for the simulator and
 * the cost model, and the alignment of DRAM regions it implies: the flow
 * model needs whole rounds of channels; the banked model also the bytes
 * below the row field (RoBaRaCoCh: every field but the row; ChRaBaRoCo:
 * the column), so that an offset into a region has its bank there. */
TEST(dram_fields_and_region_align)
{
    AtlChip a1, ddr4;
    AtlErr e;
    REQUIRE(cfg_load("configs/a1.ini", &a1, &e) == 0);
    REQUIRE(cfg_load("configs/dram/ddr4-3200.ini", &ddr4, &e) == 0);
    CHECK_EQ_INT(tim_dram_region_align(&a1), 4096 * 4);   /* interleave x channels */
    int lo[TIM_DRAM_FIELDS], bits[TIM_DRAM_FIELDS];
    /* DDR4-3200, one channel, RoBaRaCoCh from the bottom: column (8 KiB / 64 B),
     * rank, bank group, bank, row */
    CHECK_EQ_INT(tim_dram_fields(&ddr4, lo, bits), 0 + 7 + 0 + 2 + 2 + 16);
    CHECK_EQ_INT(lo[TIM_DRAM_COL], 0);
    CHECK_EQ_INT(lo[TIM_DRAM_BG], 7);
    CHECK_EQ_INT(lo[TIM_DRAM_BANK], 9);
    CHECK_EQ_INT(lo[TIM_DRAM_ROW], 11);
    CHECK_EQ_INT(bits[TIM_DRAM_ROW], 16);
    CHECK_EQ_INT(tim_dram_region_align(&ddr4), 128 * 1024);   /* 2^(11 + 6) */
    ddr4.dram_mapping = CFG_MAP_CHRABAROCO;
    tim_dram_fields(&ddr4, lo, bits);
    CHECK_EQ_INT(lo[TIM_DRAM_ROW], 7);
    CHECK_EQ_INT(lo[TIM_DRAM_BANK], 23);
    CHECK_EQ_INT(tim_dram_region_align(&ddr4), 8192);        /* one row */
    ddr4.dram_model = CFG_DRAM_FLOW;
    CHECK_EQ_INT(tim_dram_region_align(&ddr4), 4096);        /* flow: channels only */
}

/* The order a DMA engine walks a DRAM end in with the banked model: the
 * largest stride outermost, by magnitude; dimensions of size 1 outermost;
 * equal strides keep the instruction's order. */
TEST(dram_walk_order)
{
    static const struct {
        uint32_t shape[4];
        int32_t st[4];
        uint32_t want_shape[4];
        int32_t want_st[4];
    } cases[] = {
        /* an NCHW store of a [rows][pixels][channels] tile: channel planes outermost, pixels innermost */
        {{1, 2, 28, 256}, {0, 224, 4, 12544}, {1, 256, 2, 28}, {0, 12544, 224, 4}},
        /* already in address order: unchanged */
        {{1, 9, 171, 16}, {0, 1048576, 2048, 4}, {1, 9, 171, 16}, {0, 1048576, 2048, 4}},
        /* size-1 dimensions outermost whatever their strides; a zero stride innermost */
        {{3, 1, 5, 1}, {0, 4000, 8, 99}, {1, 1, 5, 3}, {4000, 99, 8, 0}},
        /* negative strides by magnitude; equal magnitudes keep their order */
        {{2, 3, 4, 5}, {-4, 64, -64, 1024}, {5, 3, 4, 2}, {1024, 64, -64, -4}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint32_t sh[4];
        int32_t st[4];
        tim_dram_walk(cases[k].shape, cases[k].st, sh, st);
        for (int d = 0; d < 4; d++) {
            CHECKF(sh[d] == cases[k].want_shape[d], "case %zu: shape[%d] = %u, want %u", k, d, sh[d], cases[k].want_shape[d]);
            CHECKF(st[d] == cases[k].want_st[d], "case %zu: stride[%d] = %d, want %d", k, d, st[d], cases[k].want_st[d]);
        }
    }
}

/* tim_lmem_span sets its banks a range at a time: the same set as bank by
 * bank, (row + j) mod banks, for spans that wrap, cover every bank, or
 * start and end inside a row, and bank counts of one to four words. */
TEST(lmem_span_ranges)
{
    AtlChip c;
    tchip(&c, 1, 1);
    static const int nbanks[] = {1, 3, 16, 32, 64, 100, 128, 256};
    static const int widths[] = {1, 4, 64};
    for (size_t a = 0; a < sizeof nbanks / sizeof *nbanks; a++)
        for (size_t b = 0; b < sizeof widths / sizeof *widths; b++) {
            c.lmem_banks = nbanks[a];
            c.lmem_bank_width = widths[b];
            uint64_t wd = (uint64_t)widths[b], nb = (uint64_t)nbanks[a];
            for (uint64_t lo = 0; lo < 3 * nb * wd; lo += 1 + lo / 7)
                for (uint64_t len = 0; len < (nb + 2) * wd; len += 1 + len / 5) {
                    uint64_t got[4] = {0, 0, 0, 0}, want[4] = {0, 0, 0, 0};
                    tim_lmem_span(&c, lo, lo + len, got);
                    uint64_t row = lo / wd, rows = (lo - row * wd + len + wd - 1) / wd;
                    for (uint64_t j = 0; j < rows && j < nb; j++) {
                        uint64_t k = (row + j) % nb;
                        want[k >> 6] |= 1ull << (k & 63);
                    }
                    CHECK(!memcmp(got, want, sizeof got));
                }
        }
}

int main(void)
{
    RUN(scalesim_reference);
    RUN(conv_as_gemm);
    RUN(vector_formulas);
    RUN(fold_overlap);
    RUN(vector_classes);
    RUN(dma_formula);
    RUN(dram_fields_and_region_align);
    RUN(dram_walk_order);
    RUN(lmem_span_ranges);
    return test_summary("test_timing");
}
