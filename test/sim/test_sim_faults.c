/* test_sim_faults.c - every fault class stops the run with a report naming
 * core, engine, instruction index and disassembly: illegal field, illegal
 * engine, out of bounds, misaligned, deadlock (semaphore and barrier),
 * data race (and its absence when a semaphore orders the accesses),
 * missing end, max cycles, invalid operand data (requant shift, integer
 * zero divisor), dtype classes of vector ops. Never a crash. */
#include "test/test.h"
#include "test/sim/simtest.h"

static AtlChip chip;

/* Runs p; checks the fault kind, location and that the message mentions `needle`. */
static void expect_fault(AtlProgram *p, AtlSimFaultKind kind, int core, int engine, int index, const char *needle,
                         uint64_t max_cycles, AtlSimMode mode)
{
    AtlSimOptions o;
    sim_options_default(&o);
    o.max_cycles = max_cycles;
    o.mode = mode;
    AtlErr e = {{0}};
    AtlSim *s = sim_create(&chip, &o, &e);
    REQUIRE(s);
    REQUIRE(sim_load(s, p, &e) == 0);
    int rc = sim_run(s, &e);
    CHECK(rc == -1);
    const AtlSimFault *f = sim_fault(s);
    CHECKF(f->kind == kind, "kind %s, want %s: %s", sim_fault_name(f->kind), sim_fault_name(kind), e.msg);
    CHECK_EQ_INT(f->core, core);
    CHECK_EQ_INT(f->engine, engine);
    CHECK_EQ_INT(f->index, index);
    CHECK_STR_CONTAINS(e.msg, needle);
    CHECK_STR_CONTAINS(e.msg, sim_fault_name(kind));
    if (index >= 0 && kind != SIM_FAULT_NO_END) CHECK(f->disasm[0] != 0);
    char *j = sim_stats_json(s);
    CHECK_STR_CONTAINS(j, sim_fault_name(kind));
    free(j);
    sim_free(s);
    tp_free(p);
}

TEST(illegal_fields)
{
    AtlProgram p;
    tp_init(&p, 2);
    tp_add(&p, 1, ISA_ENGINE_MAT, I(ISA_OP_NOP));
    tp_add(&p, 1, ISA_ENGINE_MAT, I_mm(ISA_I16, 0, 0, 0, 4, 4, 4));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 1, ISA_ENGINE_MAT, 1, "dtype: i16 is not a matrix dtype", 0, SIM_MODE_FULL);

    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_VEC, I_vec(ISA_OP_V_ADD, ISA_I8, 0, 0, 0, 0));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_VEC, 0, "shape: dimension 3 is 0", 0, SIM_MODE_FULL);

    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_VEC, I_vec(ISA_OP_V_EXP, ISA_I8, 0, 0, 0, 4));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_VEC, 0, "needs a float dtype", 0, SIM_MODE_TIMING);

    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_mm(ISA_I8, 0, 0, 0, 4, 4, 4));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_DMA, 0, "a mat instruction in the dma engine's stream", 0, SIM_MODE_FULL);

    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_wait(I(ISA_OP_NOP), 20));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_DMA, 0, "wait: semaphore 20", 0, SIM_MODE_FULL);

    tp_init(&p, 2);
    AtlInsn cv = I(ISA_OP_CONV);
    cv.dtype = ISA_I8; cv.cin = 6; cv.ih = cv.iw = 4; cv.cout = 4; cv.kh = cv.kw = 1; cv.sh = cv.sw = cv.dh = cv.dw = 1; cv.groups = 4;
    tp_add(&p, 0, ISA_ENGINE_MAT, cv);
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_MAT, 0, "groups: 4 must divide c 6", 0, SIM_MODE_FULL);

    tp_init(&p, 2);
    AtlInsn bad = I(ISA_OP_NOP);
    bad.op = 200;
    tp_add(&p, 0, ISA_ENGINE_VEC, bad);
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_VEC, 0, "illegal opcode 200", 0, SIM_MODE_FULL);

    tp_init(&p, 2);
    AtlInsn mm = I_mm(ISA_I8, 0, 0, 0, 4, 8, 4);
    mm.lda = 4;
    tp_add(&p, 0, ISA_ENGINE_MAT, mm);
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_MAT, 0, "lda: 4 < k 8", 0, SIM_MODE_FULL);

    /* values the 16-bit encoding cannot hold (a program built in C) */
    tp_init(&p, 2);
    AtlInsn d = I_load(0, 0, 64);
    d.shape[0] = 100000;
    tp_add(&p, 0, ISA_ENGINE_DMA, d);
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_DMA, 0, "dimension 0 is 100000", 0, SIM_MODE_FULL);
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_MAT, I_mm(ISA_I8, 0, 0, 0, 70000, 4, 4));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_MAT, 0, "field m: 70000", 0, SIM_MODE_FULL);
}

TEST(out_of_bounds)
{
    AtlProgram p;
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, (uint64_t)chip.dram_bytes - 100, 200));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_OOB, 0, ISA_ENGINE_DMA, 0, "outside the", 0, SIM_MODE_FULL);

    tp_init(&p, 2);
    tp_add(&p, 1, ISA_ENGINE_MAT, I_mm(ISA_I8, 65536 - 64, 0, 0, 4, 4, 8)); /* C needs 4*8*4 bytes */
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_OOB, 1, ISA_ENGINE_MAT, 0, "dst (C) touches lmem", 0, SIM_MODE_FULL);

    tp_init(&p, 2);
    AtlInsn v = I_vec(ISA_OP_V_MOV, ISA_I32, 0, 64, 0, 8);
    v.src_stride[3] = -100; /* walks below address 0 */
    tp_add(&p, 0, ISA_ENGINE_VEC, v);
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_OOB, 0, ISA_ENGINE_VEC, 0, "src touches lmem", 0, SIM_MODE_FULL);

    tp_init(&p, 2);
    AtlInsn m = I_load(0, 0, 64);
    m.mask = 0x4; /* only 2 cores per cluster in this chip */
    tp_add(&p, 0, ISA_ENGINE_DMA, m);
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_DMA, 0, "mask", 0, SIM_MODE_FULL);
}

TEST(misaligned)
{
    AtlProgram p;
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_MAT, I_mm(ISA_I8, 0, 8, 1024, 4, 4, 4));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_MISALIGNED, 0, ISA_ENGINE_MAT, 0, "not aligned to 16 bytes", 0, SIM_MODE_FULL);

    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_dma(ISA_I32, ISA_SPACE_LMEM, 0, 0, ISA_SPACE_DRAM, 2, 0, 1, 4));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_MISALIGNED, 0, ISA_ENGINE_DMA, 0, "4-byte element", 0, SIM_MODE_FULL);
}

TEST(deadlock)
{
    AtlProgram p;
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, 64));
    tp_add(&p, 1, ISA_ENGINE_VEC, I(ISA_OP_NOP));
    tp_add(&p, 1, ISA_ENGINE_VEC, I_wait(I(ISA_OP_NOP), 3));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_DEADLOCK, 1, ISA_ENGINE_VEC, 1, "waits on semaphore 3", 0, SIM_MODE_FULL);

    /* barrier that needs more arrivals than will ever come */
    tp_init(&p, 2);
    AtlInsn b = I(ISA_OP_BARRIER);
    b.scope = ISA_SCOPE_CLUSTER; b.bar_id = 1; b.bar_count = 3;
    tp_add(&p, 0, ISA_ENGINE_DMA, b);
    tp_add(&p, 1, ISA_ENGINE_DMA, b);
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_DEADLOCK, 0, ISA_ENGINE_DMA, 0, "barrier 1", 0, SIM_MODE_FUNCTIONAL);

    /* two engines each waiting for the other */
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_MAT, sync_ws(I(ISA_OP_NOP), 0, 1));
    tp_add(&p, 0, ISA_ENGINE_VEC, sync_ws(I(ISA_OP_NOP), 1, 0));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_DEADLOCK, 0, ISA_ENGINE_MAT, 0, "2 blocked", 0, SIM_MODE_FULL);
}

TEST(race_detected)
{
    /* the vector unit reads a buffer the DMA is still filling: no semaphore */
    AtlProgram p;
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, 4096));
    tp_add(&p, 0, ISA_ENGINE_VEC, I_vec(ISA_OP_V_RELU, ISA_I8, 8192, 1024, 0, 64));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_RACE, 0, ISA_ENGINE_VEC, 0, "while core 0 dma instruction #0", 0, SIM_MODE_FULL);

    /* a remote core's multicast DMA writing into an LMEM range this core's mm reads */
    tp_init(&p, 2);
    tp_add(&p, 1, ISA_ENGINE_MAT, I_mm(ISA_I8, 16384, 0, 4096, 16, 16, 16));
    AtlInsn m = I_load(0, 0, 8192);
    m.mask = 0x3;
    tp_add(&p, 0, ISA_ENGINE_DMA, I(ISA_OP_NOP));
    tp_add(&p, 0, ISA_ENGINE_DMA, m);
    tp_end_all(&p);
    /* both start at cycle 0; core 0's DMA issues first, so core 1's mm is the one that finds the conflict */
    expect_fault(&p, SIM_FAULT_RACE, 1, ISA_ENGINE_MAT, 0, "of core 1 while core 0 dma instruction #1", 0, SIM_MODE_TIMING);

    /* write-after-read: DMA overwrites the input of an in-flight mm */
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_MAT, I_mm(ISA_I8, 16384, 0, 4096, 16, 16, 16));
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(40960, 0, 64));
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(4096, 0, 256));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_RACE, 0, ISA_ENGINE_DMA, 1, "is still reading", 0, SIM_MODE_FULL);
}

TEST(race_reports_first_begun)
{
    /* two DMA writes in flight into core 0's LMEM (its own, and core 1's
     * multicast) that a vector read overlaps: the report names the one that
     * began first, whichever engine it is */
    for (int own_first = 1; own_first >= 0; own_first--) {
        AtlProgram p;
        tp_init(&p, 2);
        if (!own_first) tp_add(&p, 0, ISA_ENGINE_DMA, I_load(20480, 0, 256)); /* core 0's big load begins later */
        tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, 4096));
        AtlInsn m = I_load(4096, 0, 4096);
        m.mask = 0x1;
        tp_add(&p, 1, ISA_ENGINE_DMA, m);
        tp_add(&p, 0, ISA_ENGINE_VEC, I_vec(ISA_OP_V_RELU, ISA_I8, 49152, 32768, 0, 4096)); /* no conflict: time passes */
        tp_add(&p, 0, ISA_ENGINE_VEC, I_vec(ISA_OP_V_RELU, ISA_I8, 49152, 4000, 0, 1024)); /* reads across both */
        tp_end_all(&p);
        expect_fault(&p, SIM_FAULT_RACE, 0, ISA_ENGINE_VEC, 1,
                     own_first ? "while core 0 dma instruction #0" : "while core 1 dma instruction #0", 0, SIM_MODE_TIMING);
    }
}

TEST(no_race_with_semaphore)
{
    AtlProgram p;
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(I_load(0, 0, 4096), 0));
    tp_add(&p, 0, ISA_ENGINE_VEC, I_wait(I_vec(ISA_OP_V_RELU, ISA_I8, 8192, 1024, 0, 64), 0));
    /* disjoint buffers in flight together are fine */
    tp_add(&p, 0, ISA_ENGINE_MAT, I_mm(ISA_I8, 32768, 16384, 20480, 16, 16, 16));
    tp_end_all(&p);
    AtlSim *s;
    AtlErr e = {{0}};
    CHECKF(trun(&chip, &p, SIM_MODE_FULL, &s, &e) == 0, "%s", e.msg);
    sim_free(s);
    tp_free(&p);
}

TEST(missing_end)
{
    AtlProgram p;
    tp_init(&p, 2);
    tp_end_all(&p);
    p.streams[1 * 3 + ISA_ENGINE_VEC].count = 0; /* drop core 1 vec's end */
    tp_add(&p, 1, ISA_ENGINE_VEC, I(ISA_OP_NOP));
    expect_fault(&p, SIM_FAULT_NO_END, 1, ISA_ENGINE_VEC, 1, "ran off its end (1 instructions) without `end`", 0, SIM_MODE_FULL);
}

TEST(max_cycles)
{
    AtlProgram p;
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, 60000));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_MAX_CYCLES, 0, ISA_ENGINE_DMA, 0, "limit of 1000 cycles", 1000, SIM_MODE_FULL);
}

TEST(bad_requant_data)
{
    AtlProgram p;
    tp_init(&p, 2);
    int32_t params[2] = {1 << 30, 40}; /* 31 + 40 > 62 */
    tp_seg(&p, 0, params, sizeof params);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(I_load(256, 0, 8), 0));
    AtlInsn r = I(ISA_OP_V_REQUANT);
    r.dst = 512; r.src = 0; r.src2 = 256; r.shape[0] = r.shape[1] = r.shape[2] = 1; r.shape[3] = 4; r.lo = -128; r.hi = 127;
    tp_add(&p, 0, ISA_ENGINE_VEC, I_wait(r, 0));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_DATA, 0, ISA_ENGINE_VEC, 0, "shift 40", 0, SIM_MODE_FULL);
}

/* Integer v.div / v.mod with a zero divisor: a data fault naming the
 * element; nothing is written (dst keeps the loaded bytes). */
static void zero_divisor_case(int op, int dt)
{
    AtlProgram p;
    tp_init(&p, 2);
    int es = isa_dtype_size(dt);
    uint8_t data[64] = {0};
    for (int i = 0; i < 16; i++) num_store_int(data + i * es, dt, i == 6 ? 0 : i - 8);  /* src2[6] = 0; src2[8] = 0 too */
    tp_seg(&p, 0, data, sizeof data);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(I_load(256, 0, 64), 0));
    AtlInsn d = I_vec(op, dt, 512, 256, 256, 4);
    d.shape[2] = 4; d.src_stride[2] = d.src2_stride[2] = d.dst_stride[2] = 4;
    tp_add(&p, 0, ISA_ENGINE_VEC, I_wait(d, 0));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_DATA, 0, ISA_ENGINE_VEC, 0, "zero divisor at element [0,0,1,2] (#6) of src2", 0, SIM_MODE_FULL);
}

TEST(zero_divisor)
{
    zero_divisor_case(ISA_OP_V_DIV, ISA_I8);
    zero_divisor_case(ISA_OP_V_DIV, ISA_I32);
    zero_divisor_case(ISA_OP_V_MOD, ISA_I16);
    /* dst untouched by the faulting instruction */
    AtlProgram p;
    tp_init(&p, 2);
    int32_t data[4] = {5, 0, 7, 9};
    tp_seg(&p, 0, data, sizeof data);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(I_load(0, 0, 16), 0));
    tp_add(&p, 0, ISA_ENGINE_VEC, I_wait(I_vec(ISA_OP_V_DIV, ISA_I32, 0, 0, 0, 4), 0));
    tp_end_all(&p);
    AtlSim *s;
    AtlErr e = {{0}};
    CHECK(trun(&chip, &p, SIM_MODE_FULL, &s, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "v.div: zero divisor at element [0,0,0,1] (#1)");
    CHECK(!memcmp(sim_lmem(s, 0, 0, 16), data, 16));
    sim_free(s);
    tp_free(&p);
    /* float division by zero is IEEE, not a fault */
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_VEC, I_vec(ISA_OP_V_DIV, ISA_F32, 0, 0, 64, 4));
    tp_add(&p, 0, ISA_ENGINE_VEC, I_vec(ISA_OP_V_MOD, ISA_BF16, 0, 0, 64, 4));
    tp_end_all(&p);
    CHECKF(trun(&chip, &p, SIM_MODE_FULL, &s, &e) == 0, "%s", e.msg);
    sim_free(s);
    tp_free(&p);
}

TEST(vector_dtype_classes)
{
    static const int float_only[] = {ISA_OP_V_SIN, ISA_OP_V_ERF, ISA_OP_V_ACOSH};
    static const int int_only[] = {ISA_OP_V_AND, ISA_OP_V_OR, ISA_OP_V_XOR};
    AtlProgram p;
    for (int i = 0; i < 3; i++) {
        tp_init(&p, 2);
        tp_add(&p, 0, ISA_ENGINE_VEC, I_vec(float_only[i], ISA_I32, 0, 0, 0, 4));
        tp_end_all(&p);
        expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_VEC, 0, "needs a float dtype, not i32", 0, SIM_MODE_TIMING);
        tp_init(&p, 2);
        tp_add(&p, 0, ISA_ENGINE_VEC, I_vec(int_only[i], i == 1 ? ISA_BF16 : ISA_F32, 0, 0, 0, 4));
        tp_end_all(&p);
        expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_VEC, 0, "field dtype: ", 0, SIM_MODE_FULL);
    }
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_VEC, I_vec(ISA_OP_V_AND, ISA_F32, 0, 0, 0, 4));
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_VEC, 0, "v.and: field dtype: v.and needs an integer dtype, not f32", 0, SIM_MODE_FULL);
    /* arg-reductions: axis and the last flag are checked */
    AtlInsn a = I(ISA_OP_V_RARGMAX);
    a.dtype = ISA_F32; a.shape[0] = a.shape[1] = a.shape[2] = 1; a.shape[3] = 4; a.axis = 4;
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_VEC, a);
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_VEC, 0, "field axis: 4 > 3", 0, SIM_MODE_FULL);
    a.axis = 3; a.last = 2;
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_VEC, a);
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_ILLEGAL, 0, ISA_ENGINE_VEC, 0, "field last: 2 is not 0 or 1", 0, SIM_MODE_FULL);
    a.last = 0; a.dst = (uint64_t)chip.lmem_bytes - 64; a.shape[2] = 32;  /* 32 i32 results = 128 bytes */
    tp_init(&p, 2);
    tp_add(&p, 0, ISA_ENGINE_VEC, a);
    tp_end_all(&p);
    expect_fault(&p, SIM_FAULT_OOB, 0, ISA_ENGINE_VEC, 0, "dst touches lmem bytes", 0, SIM_MODE_FULL);
}

TEST(partial_program_runs)
{
    /* one core of two, only its DMA stream used: the rest counts as ended */
    AtlProgram p;
    tp_init(&p, 1);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, 64));
    tp_add(&p, 0, ISA_ENGINE_DMA, I(ISA_OP_END));
    AtlSim *s;
    AtlErr e = {{0}};
    CHECKF(trun(&chip, &p, SIM_MODE_FULL, &s, &e) == 0, "%s", e.msg);
    CHECK_EQ_INT(sim_stats(s)->insns, 2);
    sim_free(s);
    tp_free(&p);
}

TEST(load_errors)
{
    AtlProgram p;
    tp_init(&p, 3);
    tp_end_all(&p);
    AtlErr e = {{0}};
    AtlSim *s = sim_create(&chip, NULL, &e);
    REQUIRE(s);
    CHECK(sim_load(s, &p, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "program uses 3 cores but chip 'test' has 2");
    CHECK(sim_run(s, &e) == -1);
    tp_free(&p);
    tp_init(&p, 2);
    uint8_t x[16] = {0};
    tp_seg(&p, (uint64_t)chip.dram_bytes - 8, x, 16);
    tp_end_all(&p);
    CHECK(sim_load(s, &p, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "does not fit");
    tp_free(&p);
    sim_free(s);
    AtlChip bad = chip;
    bad.cores_per_cluster = 0;
    CHECK(sim_create(&bad, NULL, &e) == NULL);
    CHECK_STR_CONTAINS(e.msg, "invalid configuration");
}

int main(void)
{
    tchip(&chip, 1, 2);
    RUN(illegal_fields);
    RUN(out_of_bounds);
    RUN(misaligned);
    RUN(deadlock);
    RUN(race_detected);
    RUN(race_reports_first_begun);
    RUN(no_race_with_semaphore);
    RUN(missing_end);
    RUN(max_cycles);
    RUN(bad_requant_data);
    RUN(zero_divisor);
    RUN(vector_dtype_classes);
    RUN(partial_program_runs);
    RUN(load_errors);
    return test_summary("test_sim_faults");
}
