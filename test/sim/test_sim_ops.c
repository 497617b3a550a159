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
    /* accumulating past INT32_MAX wraps (two's complement), it does not saturate */
    memset(&c, 0, sizeof c);
    c.dt = ISA_I8; c.m = 1; c.k = 1; c.n = 1; c.lda = 1; c.ldb = 1; c.ldc = 1;
    c.A[0] = 1; c.B[0] = 1; c.C0[0] = INT32_MAX;
    AtlInsn in = I_mm(ISA_I8, 32768, 0, 16384, 1, 1, 1);
    in.acc = 1;
    s = run_one(in, ISA_ENGINE_MAT, mm_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    memcpy(&got, sim_lmem(s, 0, 32768, 4), 4);
    CHECK_EQ_INT(got, INT32_MIN);
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


/* -------------------------------------------------------------- conv */
typedef struct { AtlInsn in; int8_t X[4096]; int8_t W[4096]; int32_t Y0[8192]; float Xf[4096], Wf[4096]; } ConvCase;

static void conv_setup(AtlSim *s, void *ctx)
{
    ConvCase *c = ctx;
    const AtlInsn *in = &c->in;
    int es = isa_dtype_size(in->dtype);
    uint8_t *X = sim_lmem(s, 0, 0, 8192), *W = sim_lmem(s, 0, 16384, 8192), *Y = sim_lmem(s, 0, 32768, 32768);
    for (int i = 0; i < 4096; i++) {
        if (in->dtype == ISA_I8) { X[i] = (uint8_t)c->X[i]; W[i] = (uint8_t)c->W[i]; }
        else if (i < 2048) { num_store_f64(X + i * es, in->dtype, c->Xf[i]); num_store_f64(W + i * es, in->dtype, c->Wf[i]); }
    }
    memcpy(Y, c->Y0, sizeof c->Y0);
}

/* v rounded to float dtype dt (f32, f16, bf16) and back */
static float as_dtype(int dt, float v)
{
    if (dt == ISA_F16) return num_f16_to_f32(num_f32_to_f16(v));
    if (dt == ISA_BF16) return num_bf16_to_f32(num_f32_to_bf16(v));
    return v;
}

/* inexact: float operands with rounding in every sum, so the order of the
 * sums shows (*order_shows counts outputs the plain (kh, kw, c) order
 * would give other bits); else small dyadic values, exact in any order. */
static void conv_case_v(int dt, int C, int H, int W, int OC, int kh, int kw, int sh, int sw, int dh, int dw,
                        int pt, int pl, int pb, int pr, int G, int acc, int padv, int inexact, int *order_shows)
{
    static ConvCase c;
    memset(&c, 0, sizeof c);
    AtlInsn in = I(ISA_OP_CONV);
    in.dtype = (uint8_t)dt; in.dst = 32768; in.src = 0; in.src2 = 16384; in.acc = (uint8_t)acc;
    in.cin = (uint32_t)C; in.ih = (uint32_t)H; in.iw = (uint32_t)W; in.cout = (uint32_t)OC;
    in.kh = (uint8_t)kh; in.kw = (uint8_t)kw; in.sh = (uint8_t)sh; in.sw = (uint8_t)sw; in.dh = (uint8_t)dh; in.dw = (uint8_t)dw;
    in.pad_top = (uint8_t)pt; in.pad_left = (uint8_t)pl; in.pad_bottom = (uint8_t)pb; in.pad_right = (uint8_t)pr;
    in.groups = (uint16_t)G; in.ival = padv;
    c.in = in;
    for (int i = 0; i < 4096; i++) {
        c.X[i] = trand_i8(); c.W[i] = trand_i8();
        c.Xf[i] = (float)((int)(trand() % 32) - 16) / 4.0f; c.Wf[i] = (float)((int)(trand() % 32) - 16) / 2.0f;
        if (inexact) {
            /* the values as the dtype stores them (f16/bf16 round), so the reference reads the sim's operands */
            c.Xf[i] = as_dtype(dt, (float)((int)(trand() % 2001) - 1000) / 3.0f);
            c.Wf[i] = as_dtype(dt, (float)((int)(trand() % 2001) - 1000) / 7.0f);
        }
    }
    for (int i = 0; i < 8192; i++) c.Y0[i] = (int32_t)(trand() % 1000) - 500;
    if (dt != ISA_I8) for (int i = 0; i < 8192; i++) { float f = (float)c.Y0[i]; memcpy(&c.Y0[i], &f, 4); }
    AtlSim *s = run_one(in, ISA_ENGINE_MAT, conv_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    int OH = (H + pt + pb - dh * (kh - 1) - 1) / sh + 1, OW = (W + pl + pr - dw * (kw - 1) - 1) / sw + 1;
    int cg = C / G, ocg = OC / G, bad = 0;
    const uint8_t *Y = sim_lmem(s, 0, 32768, 32768);
    for (int oy = 0; oy < OH && !bad; oy++)
        for (int ox = 0; ox < OW && !bad; ox++)
            for (int oc = 0; oc < OC && !bad; oc++) {
                int g = oc / ocg;
                int64_t ri = 0;
                float rf = 0.0f, plain = 0.0f;
                if (acc) { if (dt == ISA_I8) ri = c.Y0[(oy * OW + ox) * OC + oc]; else memcpy(&rf, &c.Y0[(oy * OW + ox) * OC + oc], 4); }
                plain = rf;
                /* docs/isa-numerics.md: blocks of NUM_CONV_CBLOCK channels, then kh, kw, c */
                for (int cb = 0; cb < cg; cb += NUM_CONV_CBLOCK)
                    for (int ky = 0; ky < kh; ky++)
                        for (int kx = 0; kx < kw; kx++)
                            for (int ci = cb; ci < cg && ci < cb + NUM_CONV_CBLOCK; ci++) {
                                int iy = oy * sh - pt + ky * dh, ix = ox * sw - pl + kx * dw;
                                int in_img = iy >= 0 && iy < H && ix >= 0 && ix < W;
                                int xi = (iy * W + ix) * C + g * cg + ci, wi = ((ky * kw + kx) * cg + ci) * OC + oc;
                                if (dt == ISA_I8) ri += (int64_t)(in_img ? c.X[xi] : padv) * c.W[wi];
                                else rf += (in_img ? c.Xf[xi] : (float)padv) * c.Wf[wi];
                            }
                for (int ky = 0; ky < kh && order_shows; ky++)
                    for (int kx = 0; kx < kw; kx++)
                        for (int ci = 0; ci < cg; ci++) {
                            int iy = oy * sh - pt + ky * dh, ix = ox * sw - pl + kx * dw;
                            int in_img = iy >= 0 && iy < H && ix >= 0 && ix < W;
                            int xi = (iy * W + ix) * C + g * cg + ci, wi = ((ky * kw + kx) * cg + ci) * OC + oc;
                            plain += (in_img ? c.Xf[xi] : (float)padv) * c.Wf[wi];
                        }
                if (order_shows && plain != rf) ++*order_shows;
                const uint8_t *p = Y + ((size_t)(oy * OW + ox) * OC + oc) * 4;
                if (dt == ISA_I8) {
                    int32_t got;
                    memcpy(&got, p, 4);
                    if (got != ri) { bad = 1; CHECKF(0, "conv C%d H%d W%d OC%d k%dx%d s%d d%d g%d: y[%d][%d][%d]=%d want %lld",
                                                     C, H, W, OC, kh, kw, sh, dh, G, oy, ox, oc, got, (long long)ri); }
                } else {
                    float got;
                    memcpy(&got, p, 4);
                    if (got != rf) { bad = 1; CHECKF(0, "%s conv y[%d][%d][%d]=%.9g want %.9g", isa_dtype_name(dt), oy, ox, oc, got, rf); }
                }
            }
    sim_free(s);
}

static void conv_case(int dt, int C, int H, int W, int OC, int kh, int kw, int sh, int sw, int dh, int dw,
                      int pt, int pl, int pb, int pr, int G, int acc, int padv)
{
    conv_case_v(dt, C, H, W, OC, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, G, acc, padv, 0, NULL);
}

TEST(conv_i8_variants)
{
    conv_case(ISA_I8, 3, 5, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0);   /* same padding */
    conv_case(ISA_I8, 3, 5, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, -7);  /* pad value (zero point) */
    conv_case(ISA_I8, 4, 7, 7, 6, 3, 2, 2, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0);   /* stride, asym pad, acc */
    conv_case(ISA_I8, 4, 9, 9, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 0, 0);   /* dilation */
    conv_case(ISA_I8, 8, 5, 5, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, 0, 0);   /* depthwise */
    conv_case(ISA_I8, 6, 4, 5, 9, 1, 3, 1, 2, 1, 1, 0, 1, 0, 1, 3, 1, 3);   /* groups=3 */
    conv_case(ISA_I8, 16, 6, 6, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0);  /* 1x1 */
}

TEST(conv_float)
{
    conv_case(ISA_F32, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0);
    conv_case(ISA_F16, 4, 4, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1);
    conv_case(ISA_BF16, 2, 6, 3, 2, 2, 2, 1, 1, 2, 1, 0, 0, 1, 1, 2, 0, 0);
}

/* A float conv's sums go block by block of NUM_CONV_CBLOCK input channels,
 * tap by tap within a block (what lets a compiler cut a conv into chunks of
 * whole blocks and get the uncut sums bit for bit). The operands round in
 * every sum, and the check that the plain (kh, kw, c) order gives other
 * bits for some outputs shows the case tells the orders apart. */
TEST(conv_float_channel_blocks)
{
    int shows = 0;
    conv_case_v(ISA_F32, 24, 5, 5, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, &shows);
    conv_case_v(ISA_F32, 20, 4, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, &shows);   /* a part block, acc */
    conv_case_v(ISA_F32, 32, 4, 4, 4, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0, 0, 1, &shows);   /* 2 groups of 16 */
    conv_case_v(ISA_F32, 26, 6, 6, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 2, 1, 3, 1, &shows);   /* groups of 13, dilation, pad value */
    conv_case_v(ISA_F16, 20, 4, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, &shows);   /* widened to f32 */
    CHECKF(shows > 0, "no output tells the block order from the plain order (%d)", shows);
}

/* ------------------------------------------------------------ vector */
typedef struct { int dt; uint8_t a[4096], b[4096]; } VecCase;
static void vec_setup(AtlSim *s, void *ctx)
{
    VecCase *c = ctx;
    memcpy(sim_lmem(s, 0, 0, 4096), c->a, 4096);
    memcpy(sim_lmem(s, 0, 4096, 4096), c->b, 4096);
}

TEST(vec_int_binary_saturating)
{
    static VecCase c;
    static const int ops[] = {ISA_OP_V_ADD, ISA_OP_V_SUB, ISA_OP_V_MUL, ISA_OP_V_MAX, ISA_OP_V_MIN};
    static const int dts[] = {ISA_I8, ISA_I16, ISA_I32};
    for (int d = 0; d < 3; d++)
        for (int o = 0; o < 5; o++) {
            int dt = dts[d], es = isa_dtype_size(dt), n = 37;
            for (int i = 0; i < 4096; i++) { c.a[i] = (uint8_t)trand(); c.b[i] = (uint8_t)trand(); }
            /* force extremes into the first elements */
            int64_t lo, hi;
            num_int_range(dt, &lo, &hi);
            num_store_int(c.a, dt, hi); num_store_int(c.b, dt, hi);
            num_store_int(c.a + es, dt, lo); num_store_int(c.b + es, dt, hi);
            num_store_int(c.a + 2 * es, dt, lo); num_store_int(c.b + 2 * es, dt, lo);
            AtlSim *s = run_one(I_vec(ops[o], dt, 8192, 0, 4096, (uint32_t)n), ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
            REQUIRE(s);
            const uint8_t *D = sim_lmem(s, 0, 8192, 4096);
            for (int i = 0; i < n; i++) {
                int64_t a = num_load_int(c.a + i * es, dt), b = num_load_int(c.b + i * es, dt), r;
                switch (ops[o]) {
                case ISA_OP_V_ADD: r = a + b; break;
                case ISA_OP_V_SUB: r = a - b; break;
                case ISA_OP_V_MUL: r = a * b; break;
                case ISA_OP_V_MAX: r = a > b ? a : b; break;
                default: r = a < b ? a : b;
                }
                r = r < lo ? lo : r > hi ? hi : r;
                int64_t got = num_load_int(D + i * es, dt);
                if (got != r) { CHECKF(0, "%s %s [%d]: %lld op %lld = %lld want %lld", isa_ops[ops[o]].mnemonic,
                                       isa_dtype_name(dt), i, (long long)a, (long long)b, (long long)got, (long long)r); break; }
            }
            sim_free(s);
        }
}

TEST(vec_float_binary)
{
    static VecCase c;
    static const int ops[] = {ISA_OP_V_ADD, ISA_OP_V_SUB, ISA_OP_V_MUL, ISA_OP_V_MAX, ISA_OP_V_MIN};
    static const int dts[] = {ISA_F32, ISA_F16, ISA_BF16};
    float av[12] = {1.5f, -0.0f, 0.0f, INFINITY, NAN, 3.0f, 60000.0f, -2.0f, 1e-7f, 0.1f, -INFINITY, 7.0f};
    float bv[12] = {2.25f, 0.0f, -0.0f, -INFINITY, 1.0f, NAN, 60000.0f, -3.0f, 1e-7f, 0.2f, 5.0f, -7.0f};
    for (int d = 0; d < 3; d++)
        for (int o = 0; o < 5; o++) {
            int dt = dts[d], es = isa_dtype_size(dt);
            for (int i = 0; i < 12; i++) { num_store_f64(c.a + i * es, dt, av[i]); num_store_f64(c.b + i * es, dt, bv[i]); }
            AtlSim *s = run_one(I_vec(ops[o], dt, 8192, 0, 4096, 12), ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
            REQUIRE(s);
            const uint8_t *D = sim_lmem(s, 0, 8192, 64);
            for (int i = 0; i < 12; i++) {
                float a = (float)num_load_f64(c.a + i * es, dt), b = (float)num_load_f64(c.b + i * es, dt), r;
                switch (ops[o]) {
                case ISA_OP_V_ADD: r = a + b; break;
                case ISA_OP_V_SUB: r = a - b; break;
                case ISA_OP_V_MUL: r = a * b; break;
                case ISA_OP_V_MAX: r = (isnan(a) || isnan(b)) ? NAN : a > b ? a : b > a ? b : (signbit(a) ? b : a); break;
                default: r = (isnan(a) || isnan(b)) ? NAN : a < b ? a : b < a ? b : (signbit(a) ? a : b);
                }
                double got = num_load_f64(D + i * es, dt);
                uint8_t want[4];
                num_store_f64(want, dt, r);
                int same = isnan(r) ? isnan(got) : !memcmp(want, D + i * es, (size_t)es);
                if (!same) { CHECKF(0, "%s %s [%d]: %g op %g = %g, want %g", isa_ops[ops[o]].mnemonic, isa_dtype_name(dt), i, a, b, got, r); break; }
            }
            /* 60000 + 60000 overflows f16 to inf; bf16 and f32 hold it */
            if (ops[o] == ISA_OP_V_ADD) CHECK(isinf(num_load_f64(D + 6 * es, dt)) == (dt == ISA_F16));
            sim_free(s);
        }
}

TEST(vec_int_relu_clip_mov)
{
    static VecCase c;
    int16_t *a = (int16_t *)c.a;
    for (int i = 0; i < 40; i++) a[i] = (int16_t)(i * 1700 - 32000);
    AtlSim *s = run_one(I_vec(ISA_OP_V_RELU, ISA_I16, 8192, 0, 0, 40), ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    const int16_t *d = (const int16_t *)sim_lmem(s, 0, 8192, 80);
    for (int i = 0; i < 40; i++) CHECK_EQ_INT(d[i], a[i] > 0 ? a[i] : 0);
    sim_free(s);
    AtlInsn in = I_vec(ISA_OP_V_CLIP, ISA_I16, 8192, 0, 0, 40);
    in.alpha = -1000.5f; in.beta = 2500.5f;   /* bounds round half to even: -1000, 2500 */
    s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    d = (const int16_t *)sim_lmem(s, 0, 8192, 80);
    for (int i = 0; i < 40; i++) CHECK_EQ_INT(d[i], a[i] < -1000 ? -1000 : a[i] > 2500 ? 2500 : a[i]);
    sim_free(s);
    /* mov keeps NaN payloads bit for bit */
    uint32_t nanbits = 0x7fa12345;
    memcpy(c.a, &nanbits, 4);
    s = run_one(I_vec(ISA_OP_V_MOV, ISA_F32, 8192, 0, 0, 1), ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    CHECK(!memcmp(sim_lmem(s, 0, 8192, 4), &nanbits, 4));
    sim_free(s);
}

TEST(vec_broadcast_strides)
{
    /* dst[4][6] = a[4][6] (row stride 8) + b[6] broadcast over rows (stride 0), f32 */
    static VecCase c;
    float *a = (float *)c.a, *b = (float *)c.b;
    for (int i = 0; i < 64; i++) { a[i] = (float)i * 0.5f; b[i] = (float)(100 * i); }
    AtlInsn in = I_vec(ISA_OP_V_ADD, ISA_F32, 8192, 0, 4096, 6);
    in.shape[2] = 4; in.src_stride[2] = 8; in.src2_stride[2] = 0; in.dst_stride[2] = 6;
    AtlSim *s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    const float *d = (const float *)sim_lmem(s, 0, 8192, 4096);
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 6; j++) CHECK(d[r * 6 + j] == a[r * 8 + j] + b[j]);
    /* negative stride: reverse a vector */
    in = I_vec(ISA_OP_V_MOV, ISA_F32, 8192, 4 * 12, 0, 10);
    in.src_stride[3] = -1;
    s = (sim_free(s), run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL));
    REQUIRE(s);
    d = (const float *)sim_lmem(s, 0, 8192, 4096);
    for (int j = 0; j < 10; j++) CHECK(d[j] == a[12 - j]);
    sim_free(s);
}

TEST(vec_float_unary_and_dtypes)
{
    static VecCase c;
    static const int ops[] = {ISA_OP_V_AFFINE, ISA_OP_V_RELU, ISA_OP_V_LRELU, ISA_OP_V_CLIP, ISA_OP_V_SIGMOID, ISA_OP_V_TANH,
                              ISA_OP_V_EXP, ISA_OP_V_LOG, ISA_OP_V_GELU, ISA_OP_V_RECIP, ISA_OP_V_SQRT, ISA_OP_V_RSQRT};
    static const int dts[] = {ISA_F32, ISA_F16, ISA_BF16};
    float vals[16] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 3.0f, -2.5f, 10.0f, 1e-3f, INFINITY, -INFINITY, NAN, 65504.0f, -7.75f, 0.1f, 2.0f};
    for (int d = 0; d < 3; d++)
        for (int o = 0; o < 12; o++) {
            int dt = dts[d], es = isa_dtype_size(dt);
            for (int i = 0; i < 16; i++) num_store_f64(c.a + i * es, dt, vals[i]);
            AtlInsn in = I_vec(ops[o], dt, 8192, 0, 0, 16);
            in.alpha = 0.25f; in.beta = 2.0f;
            AtlSim *s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
            REQUIRE(s);
            const uint8_t *D = sim_lmem(s, 0, 8192, 4096);
            for (int i = 0; i < 16; i++) {
                float x = (float)num_load_f64(c.a + i * es, dt), r;
                switch (ops[o]) {
                case ISA_OP_V_AFFINE: r = x * 0.25f + 2.0f; break;
                case ISA_OP_V_RELU: r = x > 0 ? x : (isnan(x) ? x : 0.0f); break;
                case ISA_OP_V_LRELU: r = (x >= 0 || isnan(x)) ? x : 0.25f * x; break;
                case ISA_OP_V_CLIP: r = isnan(x) ? x : x < 0.25f ? 0.25f : x > 2.0f ? 2.0f : x; break;
                case ISA_OP_V_SIGMOID: r = 1.0f / (1.0f + expf(-x)); break;
                case ISA_OP_V_TANH: r = tanhf(x); break;
                case ISA_OP_V_EXP: r = expf(x); break;
                case ISA_OP_V_LOG: r = logf(x); break;
                case ISA_OP_V_GELU: r = 0.5f * x * (1.0f + erff(x / sqrtf(2.0f))); break;
                case ISA_OP_V_RECIP: r = 1.0f / x; break;
                case ISA_OP_V_SQRT: r = sqrtf(x); break;
                default: r = 1.0f / sqrtf(x);
                }
                uint8_t want[4];
                num_store_f64(want, dt, r);
                if (memcmp(want, D + i * es, (size_t)es)) {
                    CHECKF(0, "%s %s x=%g: got %g want %g", isa_ops[ops[o]].mnemonic, isa_dtype_name(dt), x,
                           num_load_f64(D + i * es, dt), num_load_f64(want, dt));
                    break;
                }
            }
            sim_free(s);
        }
}

TEST(vec_int_unary)
{
    static VecCase c;
    int8_t *a = (int8_t *)c.a;
    for (int i = 0; i < 32; i++) a[i] = (int8_t)(i * 9 - 128);
    AtlInsn in = I_vec(ISA_OP_V_AFFINE, ISA_I8, 8192, 0, 0, 32);
    in.alpha = 1.5f; in.beta = 0.5f;
    AtlSim *s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    const int8_t *d = (const int8_t *)sim_lmem(s, 0, 8192, 32);
    for (int i = 0; i < 32; i++) {
        double v = a[i] * 1.5 + 0.5, r = nearbyint(v);   /* default rounding: half to even */
        r = r < -128 ? -128 : r > 127 ? 127 : r;
        CHECK_EQ_INT(d[i], (int)r);
    }
    sim_free(s);
    in = I_vec(ISA_OP_V_LRELU, ISA_I8, 8192, 0, 0, 32);
    in.alpha = 0.1f;
    s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    d = (const int8_t *)sim_lmem(s, 0, 8192, 32);
    for (int i = 0; i < 32; i++) CHECK_EQ_INT(d[i], a[i] >= 0 ? a[i] : (int)nearbyint(a[i] * (double)0.1f));
    sim_free(s);
}

TEST(vec_pool)
{
    static VecCase c;
    int8_t *x = (int8_t *)c.a;
    int C = 3, H = 5, W = 5;
    for (int i = 0; i < C * H * W; i++) x[i] = trand_i8();
    for (int op = 0; op < 2; op++)
        for (int cp = 0; cp < 2; cp++) {
            AtlInsn in = I(op ? ISA_OP_V_AVGPOOL : ISA_OP_V_MAXPOOL);
            in.dtype = ISA_I8; in.dst = 8192; in.src = 0; in.cin = 3; in.ih = 5; in.iw = 5; in.kh = 3; in.kw = 3;
            in.sh = 2; in.sw = 2; in.pad_top = in.pad_left = in.pad_bottom = in.pad_right = 1; in.count_pad = (uint8_t)cp;
            AtlSim *s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
            REQUIRE(s);
            const int8_t *d = (const int8_t *)sim_lmem(s, 0, 8192, 256);
            for (int oy = 0; oy < 3; oy++)
                for (int ox = 0; ox < 3; ox++)
                    for (int ch = 0; ch < C; ch++) {
                        int mx = -1000, sum = 0, cnt = 0;
                        for (int ky = 0; ky < 3; ky++)
                            for (int kx = 0; kx < 3; kx++) {
                                int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                int v = x[(iy * W + ix) * C + ch];
                                mx = v > mx ? v : mx; sum += v; cnt++;
                            }
                        int want = op ? (int)nearbyint((double)sum / (cp ? 9 : cnt)) : mx;
                        CHECK_EQ_INT(d[(oy * 3 + ox) * C + ch], want);
                    }
            sim_free(s);
        }
    /* float average */
    float *xf = (float *)c.a;
    for (int i = 0; i < 16; i++) xf[i] = (float)i;
    AtlInsn in = I(ISA_OP_V_AVGPOOL);
    in.dtype = ISA_F32; in.dst = 8192; in.src = 0; in.cin = 1; in.ih = 4; in.iw = 4; in.kh = 2; in.kw = 2; in.sh = 2; in.sw = 2;
    AtlSim *s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    const float *df = (const float *)sim_lmem(s, 0, 8192, 16);
    CHECK(df[0] == 2.5f && df[1] == 4.5f && df[2] == 10.5f && df[3] == 12.5f);
    sim_free(s);
}

TEST(vec_reduce)
{
    static VecCase c;
    int16_t *x = (int16_t *)c.a;
    for (int i = 0; i < 2 * 3 * 4 * 5; i++) x[i] = (int16_t)(trand() % 60000 - 30000);
    for (int axis = 0; axis < 4; axis++)
        for (int mx = 0; mx < 2; mx++) {
            AtlInsn in = I(mx ? ISA_OP_V_RMAX : ISA_OP_V_RSUM);
            in.dtype = ISA_I16; in.otype = mx ? ISA_I16 : ISA_I32; in.dst = 8192; in.src = 0; in.axis = (uint8_t)axis;
            in.shape[0] = 2; in.shape[1] = 3; in.shape[2] = 4; in.shape[3] = 5;
            AtlSim *s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
            REQUIRE(s);
            const uint8_t *d = sim_lmem(s, 0, 8192, 1024);
            int dims[4] = {2, 3, 4, 5}, od[4] = {2, 3, 4, 5};
            od[axis] = 1;
            for (int a = 0; a < od[0]; a++) for (int b = 0; b < od[1]; b++) for (int cc = 0; cc < od[2]; cc++) for (int e = 0; e < od[3]; e++) {
                int64_t r = mx ? -100000 : 0;
                for (int t = 0; t < dims[axis]; t++) {
                    int idx[4] = {a, b, cc, e};
                    idx[axis] = t;
                    int v = x[((idx[0] * 3 + idx[1]) * 4 + idx[2]) * 5 + idx[3]];
                    r = mx ? (v > r ? v : r) : r + v;
                }
                int oi = ((a * od[1] + b) * od[2] + cc) * od[3] + e;
                CHECK_EQ_INT(num_load_int(d + oi * (mx ? 2 : 4), mx ? ISA_I16 : ISA_I32), r);
            }
            sim_free(s);
        }
    /* f32 sum rounded to f16 */
    float *xf = (float *)c.a;
    for (int i = 0; i < 8; i++) xf[i] = 1000.25f;
    AtlInsn in = I(ISA_OP_V_RSUM);
    in.dtype = ISA_F32; in.otype = ISA_F16; in.dst = 8192; in.src = 0; in.axis = 3;
    in.shape[0] = in.shape[1] = in.shape[2] = 1; in.shape[3] = 8;
    AtlSim *s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    uint16_t h;
    memcpy(&h, sim_lmem(s, 0, 8192, 2), 2);
    CHECK(num_f16_to_f32(h) == 8000.0f); /* 8002 rounds to the f16 grid (spacing 4) */
    sim_free(s);
    /* f32 max along axis 2 of [1][1][3][2]: a NaN in a column makes that column NaN */
    float v[6] = {1.0f, -5.0f, 4.0f, NAN, -2.0f, -1.0f};
    memcpy(c.a, v, sizeof v);
    in = I(ISA_OP_V_RMAX);
    in.dtype = ISA_F32; in.otype = ISA_BF16; in.dst = 8192; in.src = 0; in.axis = 2;
    in.shape[0] = in.shape[1] = 1; in.shape[2] = 3; in.shape[3] = 2;
    s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    uint16_t m2[2];
    memcpy(m2, sim_lmem(s, 0, 8192, 4), 4);
    CHECK(num_bf16_to_f32(m2[0]) == 4.0f);
    CHECK(isnan(num_bf16_to_f32(m2[1])));
    sim_free(s);
}

TEST(vec_requant)
{
    static VecCase c;
    int32_t *x = (int32_t *)c.a, *pp = (int32_t *)c.b;
    for (int i = 0; i < 24; i++) x[i] = (int32_t)(trand() % 200000) - 100000;
    x[0] = 3 << 20; x[1] = -(3 << 20); x[2] = INT32_MAX; x[3] = INT32_MIN;
    x[4] = 5; x[5] = -5; x[6] = 7; x[7] = 3 << 20 | 1 << 19;   /* ties with a multiplier of 2^30 */
    for (int ch = 0; ch < 6; ch++) { pp[2 * ch] = 1073741824 + ch * 12345; pp[2 * ch + 1] = ch - 2; }
    pp[8] = 1 << 30; pp[9] = 0; pp[10] = 1 << 30; pp[11] = 1;
    for (int mode = 0; mode < 4; mode++) {
        int per = mode & 1, even = mode >> 1;
        AtlInsn in = I(ISA_OP_V_REQUANT);
        in.dst = 8192; in.src = 0; in.src2 = 4096; in.shape[0] = in.shape[1] = 1; in.shape[2] = 4; in.shape[3] = 6;
        in.per_channel = (uint8_t)per; in.ival = -3; in.lo = -100; in.hi = 120; in.round_even = (uint8_t)even;
        AtlSim *s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
        REQUIRE(s);
        const int8_t *d = (const int8_t *)sim_lmem(s, 0, 8192, 24);
        for (int i = 0; i < 24; i++) {
            int ch = per ? i % 6 : 0;
            /* reference in long double-free integer arithmetic: round half away from zero,
             * or with `even` a tie to the even neighbour */
            __int128 p = (__int128)x[i] * pp[2 * ch];
            int sh = 31 + pp[2 * ch + 1];
            __int128 ap = p >= 0 ? p : -p, q = (ap + ((__int128)1 << (sh - 1))) >> sh;
            if (even && (ap & (((__int128)1 << sh) - 1)) == ((__int128)1 << (sh - 1)) && (q & 1)) q--;
            if (p < 0) q = -q;
            long long y = -3 + (long long)q;
            y = y < -100 ? -100 : y > 120 ? 120 : y;
            CHECK_EQ_INT(d[i], y);
        }
        sim_free(s);
    }
}

TEST(vec_cast)
{
    static VecCase c;
    float *x = (float *)c.a;
    float v[12] = {2.5f, -2.5f, 3.5f, 1e10f, -1e10f, NAN, 127.49f, -128.5f, 0.5f, -0.0f, 65520.0f, 1.0f / 3.0f};
    memcpy(x, v, sizeof v);
    AtlInsn in = I_vec(ISA_OP_V_CAST, ISA_F32, 8192, 0, 0, 12);
    in.otype = ISA_I8;
    AtlSim *s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    const int8_t *d = (const int8_t *)sim_lmem(s, 0, 8192, 12);
    int want[12] = {2, -2, 4, 127, -128, 0, 127, -128, 0, 0, 127, 0};
    for (int i = 0; i < 12; i++) CHECK_EQ_INT(d[i], want[i]);
    sim_free(s);
    in.otype = ISA_F16;
    s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    const uint16_t *h = (const uint16_t *)sim_lmem(s, 0, 8192, 24);
    CHECK_EQ_INT(h[0], 0x4100);      /* 2.5 */
    CHECK_EQ_INT(h[3], 0x7c00);      /* 1e10 -> +inf */
    CHECK((h[5] & 0x7e00) == 0x7e00); /* NaN stays a quiet NaN */
    CHECK_EQ_INT(h[9], 0x8000);      /* -0 kept */
    CHECK_EQ_INT(h[10], 0x7c00);     /* 65520 rounds up to inf */
    CHECK_EQ_INT(h[11], 0x3555);     /* 1/3 */
    sim_free(s);
    /* i32 -> i16 saturates; i32 -> bf16 rounds once */
    int32_t *xi = (int32_t *)c.a;
    xi[0] = 40000; xi[1] = -40000; xi[2] = 16777217; xi[3] = 5;
    in = I_vec(ISA_OP_V_CAST, ISA_I32, 8192, 0, 0, 4);
    in.otype = ISA_I16;
    s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    const int16_t *d16 = (const int16_t *)sim_lmem(s, 0, 8192, 8);
    CHECK_EQ_INT(d16[0], 32767); CHECK_EQ_INT(d16[1], -32768); CHECK_EQ_INT(d16[3], 5);
    sim_free(s);
    in.otype = ISA_BF16;
    s = run_one(in, ISA_ENGINE_VEC, vec_setup, &c, SIM_MODE_FULL);
    REQUIRE(s);
    d16 = (const int16_t *)sim_lmem(s, 0, 8192, 8);
    CHECK(num_bf16_to_f32((uint16_t)d16[2]) == 16777216.0f);
    CHECK(num_bf16_to_f32((uint16_t)d16[0]) == 39936.0f); /* 40000 -> nearest bf16 */
    sim_free(s);
}

/* --------------------------------------------------------------- DMA */
TEST(dma_copy_fill_multicast)
{
    AtlChip c4;
    tchip(&c4, 1, 4);
    AtlProgram p;
    tp_init(&p, 4);
    uint8_t img[600];
    for (int i = 0; i < 600; i++) img[i] = (uint8_t)(i * 7 + 1);
    tp_seg(&p, 4096, img, sizeof img);
    /* 2-D strided gather: 10 rows of 12 bytes, source row stride 50 -> lmem rows of 16 */
    tp_add(&p, 1, ISA_ENGINE_DMA, I_sig(I_dma(ISA_I8, ISA_SPACE_LMEM, 0, 16, ISA_SPACE_DRAM, 4096, 50, 10, 12), 0));
    /* fill i16 pattern 0x1234 into 8 elements at lmem 1024 of cores 0,2,3 (multicast) */
    AtlInsn f = I(ISA_OP_DMA_FILL);
    f.dtype = ISA_I16; f.dst_space = ISA_SPACE_LMEM; f.dst = 1024; f.mask = 0xd; f.ival = 0x1234;
    f.shape[0] = f.shape[1] = f.shape[2] = 1; f.shape[3] = 8; f.dst_stride[3] = 2;
    tp_add(&p, 1, ISA_ENGINE_DMA, f);
    /* copy core 1's lmem rows to cores 0 and 2 (multicast from a remote LMEM source) */
    AtlInsn m = I_dma(ISA_I8, ISA_SPACE_LMEM, 2048, 16, ISA_SPACE_LMEM, 0, 16, 10, 12);
    m.mask = 0x5; m.src_core = 1; m.wait = 1;
    tp_add(&p, 1, ISA_ENGINE_DMA, m);
    /* to SRAM and back to DRAM, transposing 10x12 -> 12x10 with element strides */
    AtlInsn t = I_dma(ISA_I8, ISA_SPACE_SRAM, 0, 1, ISA_SPACE_LMEM, 0, 16, 10, 12);
    t.src_core = 1; t.dst_stride[3] = 10; t.wait = 0;
    tp_add(&p, 1, ISA_ENGINE_DMA, I_sig(t, 1));
    tp_add(&p, 1, ISA_ENGINE_DMA, I_wait(I_dma(ISA_I8, ISA_SPACE_DRAM, 8192, 0, ISA_SPACE_SRAM, 0, 0, 1, 120), 1));
    tp_end_all(&p);
    AtlSim *s;
    AtlErr e = {{0}};
    int rc = trun(&c4, &p, SIM_MODE_FULL, &s, &e);
    CHECKF(rc == 0, "%s", e.msg);
    if (!rc) {
        for (int c = 0; c < 3; c += 2)
            for (int r = 0; r < 10; r++)
                for (int j = 0; j < 12; j++) CHECK_EQ_INT(*sim_lmem(s, c, 2048 + r * 16 + j, 1), img[r * 50 + j]);
        for (int c = 0; c < 4; c++) {
            uint16_t v;
            memcpy(&v, sim_lmem(s, c, 1024 + 14, 2), 2);
            CHECK_EQ_INT(v, c == 1 ? 0 : 0x1234);
        }
        const uint8_t *out = sim_dram(s, 8192, 120);
        for (int r = 0; r < 10; r++)
            for (int j = 0; j < 12; j++) CHECK_EQ_INT(out[j * 10 + r], img[r * 50 + j]);
        CHECK_EQ_INT(sim_stats(s)->bytes.dram_rd, 120);
        CHECK_EQ_INT(sim_stats(s)->bytes.sram_rd, 120);
        CHECK_EQ_INT(sim_stats(s)->bytes.dram_wr, 120);
        CHECK_EQ_INT(sim_stats(s)->bytes.lmem_wr, 120 + 16 * 3 + 120 * 2);
    }
    sim_free(s);
    tp_free(&p);
}

int main(void)
{
    tchip(&chip, 1, 1);
    RUN(mm_i8_shapes);
    RUN(mm_i8_extremes);
    RUN(mm_float_dtypes);
    RUN(mm_functional_mode_same_result);
    RUN(conv_i8_variants);
    RUN(conv_float);
    RUN(conv_float_channel_blocks);
    RUN(vec_int_binary_saturating);
    RUN(vec_float_binary);
    RUN(vec_int_relu_clip_mov);
    RUN(vec_broadcast_strides);
    RUN(vec_float_unary_and_dtypes);
    RUN(vec_int_unary);
    RUN(vec_pool);
    RUN(vec_reduce);
    RUN(vec_requant);
    RUN(vec_cast);
    RUN(dma_copy_fill_multicast);
    return test_summary("test_sim_ops");
}
