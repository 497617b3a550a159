/* test_sim_robust.c - random instruction streams (random opcodes, dtypes,
 * spaces, addresses near the ends of memories, shapes, negative strides,
 * semaphores, barriers) must end in a clean finish or a fault report, never
 * a crash or hang; the sanitizer pass of `make test` checks every access. */
#include "test/test.h"
#include "test/sim/simtest.h"

static uint64_t pick_addr(uint64_t size)
{
    switch (trand() % 4) {
    case 0: return trand() % 256;
    case 1: return size - trand() % 512;            /* near the end: OOB often */
    case 2: return (uint64_t)(trand() % 64) * 64;
    default: return trand() % (size + 64);
    }
}

static AtlInsn random_insn(const AtlChip *c, int engine)
{
    static const int dma_ops[] = {ISA_OP_DMA_COPY, ISA_OP_DMA_FILL, ISA_OP_NOP};
    int op;
    if (trand() % 10 == 0) op = (int)(trand() % (ISA_NUM_OPS + 2));             /* anything, even illegal */
    else if (engine == ISA_ENGINE_DMA) op = dma_ops[trand() % 3];
    else if (engine == ISA_ENGINE_MAT) op = trand() % 2 ? ISA_OP_MM : ISA_OP_CONV;
    else op = ISA_OP_V_ADD + (int)(trand() % (ISA_OP_V_CAST - ISA_OP_V_ADD + 1));
    AtlInsn x = I(op);
    static const int mat_dt[] = {ISA_I8, ISA_I8, ISA_F16, ISA_BF16, ISA_F32};
    int sane = trand() % 8 != 0;   /* most instructions are well-formed, some are not */
    x.dtype = (uint8_t)(sane ? (engine == ISA_ENGINE_MAT ? mat_dt[trand() % 5] : (int)(trand() % 6)) : (int)(trand() % 7));
    x.otype = (uint8_t)(sane && num_is_float(x.dtype) ? ISA_F16 + (int)(trand() % 3) : (int)(trand() % (sane ? 3 : 7)));
    if (sane && num_op_is_transcendental(op) && !num_is_float(x.dtype)) x.dtype = ISA_F32;
    x.dst_space = (uint8_t)(trand() % (sane ? 3 : 4));
    x.src_space = (uint8_t)(trand() % (sane ? 3 : 4));
    uint64_t lm = (uint64_t)c->lmem_bytes;
    uint64_t dsz = x.dst_space == ISA_SPACE_DRAM ? (uint64_t)c->dram_bytes : x.dst_space == ISA_SPACE_SRAM ? (uint64_t)c->sram_bytes : lm;
    uint64_t ssz = x.src_space == ISA_SPACE_DRAM ? (uint64_t)c->dram_bytes : x.src_space == ISA_SPACE_SRAM ? (uint64_t)c->sram_bytes : lm;
    int dma = op == ISA_OP_DMA_COPY || op == ISA_OP_DMA_FILL;
    x.dst = sane ? (uint64_t)(trand() % 32) * 64 : pick_addr(dma ? dsz : lm);
    x.src = sane ? (uint64_t)(trand() % 32) * 64 : pick_addr(dma ? ssz : lm);
    x.src2 = sane ? (uint64_t)(trand() % 32) * 64 : pick_addr(lm);
    int es = isa_dtype_size(x.dtype) ? isa_dtype_size(x.dtype) : 1;
    x.src_core = (uint8_t)(trand() % 3);
    x.mask = trand() % 4 == 0 ? trand() % 8 : 0;
    for (int d = 0; d < 4; d++) {
        x.shape[d] = d < 2 ? 1 + trand() % 2 : (sane ? 1 : 0) + trand() % 9;
        x.dst_stride[d] = ((int32_t)(trand() % 20) - 4) * (dma && sane ? es : 1);
        x.src_stride[d] = ((int32_t)(trand() % 20) - 4) * (dma && sane ? es : 1);
        x.src2_stride[d] = (int32_t)(trand() % 8) - 2;
    }
    x.m = (sane ? 1 : 0) + trand() % 20; x.k = (sane ? 1 : 0) + trand() % 40; x.n = (sane ? 1 : 0) + trand() % 20;
    x.lda = x.k + trand() % 3; x.ldb = x.n + trand() % 3; x.ldc = x.n + trand() % 3;
    x.cin = 1 + trand() % 8; x.ih = 1 + trand() % 8; x.iw = 1 + trand() % 8; x.cout = 1 + trand() % 8;
    x.kh = (uint8_t)((sane ? 1 : 0) + trand() % 3); x.kw = (uint8_t)((sane ? 1 : 0) + trand() % 3);
    x.sh = (uint8_t)((sane ? 1 : 0) + trand() % 2); x.sw = (uint8_t)(1 + trand() % 2); x.dh = 1; x.dw = (uint8_t)((sane ? 1 : 0) + trand() % 2);
    x.pad_top = (uint8_t)(trand() % 3); x.pad_left = (uint8_t)(trand() % 3);
    x.pad_bottom = (uint8_t)(trand() % 2); x.pad_right = (uint8_t)(trand() % 2);
    x.groups = (uint16_t)(sane ? 1 : trand() % 3);
    x.acc = (uint8_t)(trand() % 2); x.count_pad = (uint8_t)(trand() % 2); x.per_channel = (uint8_t)(trand() % 2);
    x.axis = (uint8_t)(trand() % (sane ? 4 : 5));
    x.ival = (int32_t)(trand() % (sane ? 200 : 300)) - (sane ? 100 : 150);
    x.lo = -(int32_t)(trand() % (sane ? 128 : 130)); x.hi = (int32_t)(trand() % (sane ? 128 : 130));
    if (sane && x.cin % x.groups) x.groups = 1;
    x.alpha = (float)((int)(trand() % 9) - 4) * 0.5f; x.beta = (float)(trand() % 5);
    x.scope = (uint8_t)(trand() % 2); x.bar_id = (uint16_t)(trand() % 3); x.bar_count = (uint16_t)(1 + trand() % 3);
    if (trand() % 3 == 0) x.wait = (uint8_t)(1 + trand() % 3);
    if (trand() % 3 == 0) x.signal = (uint8_t)(1 + trand() % 3);
    if (trand() % 20 == 0) x.op = ISA_OP_BARRIER;
    x.layer = (uint16_t)(trand() % 4);
    return x;
}

TEST(random_programs_never_crash)
{
    AtlChip c;
    tchip(&c, 1, 2);
    c.dram_bytes = 1 << 20;
    c.sram_bytes = 8192;
    c.lmem_bytes = 8192;
    c.lmem_alignment = 1 + (int)(trand() % 2) * 3;
    int kinds[SIM_NUM_FAULTS] = {0};
    for (int iter = 0; iter < 1500; iter++) {
        c.lmem_alignment = iter % 3 ? 1 : 64;
        AtlProgram p;
        tp_init(&p, 2);
        for (int core = 0; core < 2; core++)
            for (int en = 0; en < ISA_NUM_ENGINES; en++) {
                int n = (int)(trand() % 4);
                for (int i = 0; i < n; i++) tp_add(&p, core, en, random_insn(&c, en));
            }
        if (iter % 4) tp_end_all(&p);
        for (int mode = 0; mode < 3; mode++) {
            AtlSimOptions o;
            sim_options_default(&o);
            o.mode = (AtlSimMode)mode;
            o.max_cycles = 2000000;
            o.trace = iter % 2;
            AtlErr e = {{0}};
            AtlSim *s = sim_create(&c, &o, &e);
            REQUIRE(s);
            REQUIRE(sim_load(s, &p, &e) == 0);
            int rc = sim_run(s, &e);
            const AtlSimFault *f = sim_fault(s);
            CHECK((rc == 0) == (f->kind == SIM_FAULT_NONE));
            if (rc) CHECK(strlen(e.msg) > 10);
            kinds[f->kind]++;
            char *a = sim_report_text(s), *b = sim_stats_json(s), *t = sim_trace_json(s);
            CHECK(a && b && t);
            free(a); free(b); free(t);
            sim_free(s);
        }
        tp_free(&p);
    }
    /* the generator reaches clean runs and the main fault kinds */
    CHECK(kinds[SIM_FAULT_NONE] > 0);
    CHECK(kinds[SIM_FAULT_ILLEGAL] > 0);
    CHECK(kinds[SIM_FAULT_OOB] > 0);
    CHECK(kinds[SIM_FAULT_DEADLOCK] > 0);
    CHECK(kinds[SIM_FAULT_NO_END] > 0);
    for (int k = 0; k < SIM_NUM_FAULTS; k++) printf("  %-24s %d\n", sim_fault_name((AtlSimFaultKind)k), kinds[k]);
}

int main(void)
{
    RUN(random_programs_never_crash);
    return test_summary("test_sim_robust");
}
