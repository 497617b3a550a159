/* test_sim_vec_ext.c - the vector ops added for the backend's ONNX coverage
 * (comparisons, v.sel, bitwise, v.div/v.mod, rounding, v.sign, the
 * trigonometric/hyperbolic transcendentals and erf, v.rmin, v.rargmax /
 * v.rargmin) in the simulator against plain-C expectations written here:
 * ties, NaN, -0, inf, INT_MIN / -1, negative operands of mod, broadcast
 * strides. Faults (zero divisor, wrong dtype class) are in
 * test_sim_faults.c. */
#include <math.h>
#include "test/test.h"
#include "test/sim/simtest.h"

static AtlChip chip;

/* LMEM image: operand a at 0, b at 4096, the destination at 8192 (its old
 * contents matter to v.sel). */
typedef struct { uint8_t a[4096], b[4096], d[4096]; } Lmem;
enum { A_AT = 0, B_AT = 4096, D_AT = 8192 };

/* Loads `m` into core 0's LMEM by DMA, runs `in` on the vector engine after
 * it; returns the sim (caller frees) or NULL. */
static AtlSim *run_vec(const Lmem *m, AtlInsn in)
{
    AtlProgram p;
    tp_init(&p, 1);
    tp_seg(&p, 0, m, sizeof *m);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(I_load(0, 0, (uint32_t)sizeof *m), 0));
    tp_add(&p, 0, ISA_ENGINE_VEC, I_wait(in, 0));
    tp_end_all(&p);
    AtlSim *s;
    AtlErr e = {{0}};
    int rc = trun(&chip, &p, SIM_MODE_FULL, &s, &e);
    tp_free(&p);
    if (rc) { printf("  run: %s\n", e.msg); sim_free(s); return NULL; }
    return s;
}

/* Whether a float result equals the expectation rounded to dt, bit for bit
 * (any NaN matches a NaN). */
static int same_float(const uint8_t *got, int dt, float want)
{
    uint8_t w[4];
    num_store_f64(w, dt, want);
    if (isnan(want)) return isnan(num_load_f64(got, dt));
    return !memcmp(w, got, (size_t)isa_dtype_size(dt));
}

TEST(int_compare_bitwise_div_mod)
{
    static Lmem m;
    static const int ops[] = {ISA_OP_V_EQ, ISA_OP_V_LT, ISA_OP_V_LE, ISA_OP_V_AND, ISA_OP_V_OR, ISA_OP_V_XOR, ISA_OP_V_DIV, ISA_OP_V_MOD};
    static const int dts[] = {ISA_I8, ISA_I16, ISA_I32};
    for (int d = 0; d < 3; d++)
        for (int o = 0; o < 8; o++) {
            int dt = dts[d], es = isa_dtype_size(dt), n = 48, op = ops[o];
            int64_t lo, hi;
            num_int_range(dt, &lo, &hi);
            for (int i = 0; i < 4096; i++) { m.a[i] = (uint8_t)trand(); m.b[i] = (uint8_t)(trand() % 7); }
            const int64_t fixed[][2] = {{lo, -1}, {5, 5}, {-7, 3}, {7, -3}, {-7, -3}, {hi, lo}, {lo, lo}, {-6, 3}, {0, -5}};
            for (int i = 0; i < 9; i++) { num_store_int(m.a + i * es, dt, fixed[i][0]); num_store_int(m.b + i * es, dt, fixed[i][1]); }
            if (op == ISA_OP_V_DIV || op == ISA_OP_V_MOD)
                for (int i = 0; i < n; i++)
                    if (!num_load_int(m.b + i * es, dt)) num_store_int(m.b + i * es, dt, -2);
            AtlSim *s = run_vec(&m, I_vec(op, dt, D_AT, A_AT, B_AT, (uint32_t)n));
            REQUIRE(s);
            const uint8_t *D = sim_lmem(s, 0, D_AT, 4096);
            for (int i = 0; i < n; i++) {
                int64_t a = num_load_int(m.a + i * es, dt), b = num_load_int(m.b + i * es, dt), r;
                switch (op) {
                case ISA_OP_V_EQ: r = a == b; break;
                case ISA_OP_V_LT: r = a < b; break;
                case ISA_OP_V_LE: r = a <= b; break;
                case ISA_OP_V_AND: r = a & b; break;
                case ISA_OP_V_OR: r = a | b; break;
                case ISA_OP_V_XOR: r = a ^ b; break;
                case ISA_OP_V_DIV: r = a / b; break;
                default: r = ((a % b) + b) % b;   /* sign of the divisor */
                }
                r = r < lo ? lo : r > hi ? hi : r;
                int64_t got = num_load_int(D + i * es, dt);
                if (got != r) { CHECKF(0, "%s %s [%d]: %lld op %lld = %lld want %lld", isa_ops[op].mnemonic, isa_dtype_name(dt), i,
                                       (long long)a, (long long)b, (long long)got, (long long)r); break; }
            }
            /* the fixed cases, spelled out */
            if (op == ISA_OP_V_DIV) CHECK_EQ_INT(num_load_int(D, dt), hi);              /* INT_MIN / -1 saturates */
            if (op == ISA_OP_V_MOD) CHECK_EQ_INT(num_load_int(D + 2 * es, dt), 2);      /* -7 mod 3 */
            if (op == ISA_OP_V_MOD) CHECK_EQ_INT(num_load_int(D + 3 * es, dt), -2);     /* 7 mod -3 */
            if (op == ISA_OP_V_DIV) CHECK_EQ_INT(num_load_int(D + 2 * es, dt), -2);     /* -7 / 3 toward zero */
            sim_free(s);
        }
}

TEST(float_compare_div_mod)
{
    static Lmem m;
    static const int ops[] = {ISA_OP_V_EQ, ISA_OP_V_LT, ISA_OP_V_LE, ISA_OP_V_DIV, ISA_OP_V_MOD};
    static const int dts[] = {ISA_F32, ISA_F16, ISA_BF16};
    float av[16] = {1.5f, -0.0f, 0.0f, NAN, NAN, 3.0f, INFINITY, -INFINITY, 1.0f, -1.0f, 0.0f, -7.5f, 7.5f, 5.0f, 1e-3f, 2.0f};
    float bv[16] = {1.5f, 0.0f, -0.0f, NAN, 1.0f, NAN, INFINITY, 2.0f, 0.0f, -0.0f, 0.0f, 2.0f, -2.0f, INFINITY, 3.0f, 3.0f};
    for (int d = 0; d < 3; d++)
        for (int o = 0; o < 5; o++) {
            int dt = dts[d], es = isa_dtype_size(dt), op = ops[o];
            for (int i = 0; i < 16; i++) { num_store_f64(m.a + i * es, dt, av[i]); num_store_f64(m.b + i * es, dt, bv[i]); }
            AtlSim *s = run_vec(&m, I_vec(op, dt, D_AT, A_AT, B_AT, 16));
            REQUIRE(s);
            const uint8_t *D = sim_lmem(s, 0, D_AT, 64);
            for (int i = 0; i < 16; i++) {
                float a = (float)num_load_f64(m.a + i * es, dt), b = (float)num_load_f64(m.b + i * es, dt), r;
                switch (op) {
                case ISA_OP_V_EQ: r = a == b ? 1.0f : 0.0f; break;
                case ISA_OP_V_LT: r = a < b ? 1.0f : 0.0f; break;
                case ISA_OP_V_LE: r = a <= b ? 1.0f : 0.0f; break;
                case ISA_OP_V_DIV: r = a / b; break;
                default: r = fmodf(a, b);
                }
                if (!same_float(D + i * es, dt, r)) {
                    CHECKF(0, "%s %s [%d]: %g op %g = %g want %g", isa_ops[op].mnemonic, isa_dtype_name(dt), i, a, b,
                           num_load_f64(D + i * es, dt), r);
                    break;
                }
            }
            if (op == ISA_OP_V_EQ) {
                CHECK(num_load_f64(D + 1 * es, dt) == 1.0 && num_load_f64(D + 3 * es, dt) == 0.0); /* -0 == +0; NaN != NaN */
            }
            if (op == ISA_OP_V_DIV) {
                CHECK(isinf(num_load_f64(D + 8 * es, dt)) && num_load_f64(D + 8 * es, dt) > 0);   /* 1 / +0 */
                CHECK(isinf(num_load_f64(D + 9 * es, dt)) && num_load_f64(D + 9 * es, dt) > 0);   /* -1 / -0 */
                CHECK(isnan(num_load_f64(D + 10 * es, dt)));                                      /* 0 / 0 */
            }
            if (op == ISA_OP_V_MOD) CHECK(num_load_f64(D + 11 * es, dt) == -1.5 && num_load_f64(D + 12 * es, dt) == 1.5);
            sim_free(s);
        }
}

TEST(conditional_select)
{
    static Lmem m;
    /* f32: conditions non-zero, zero, -0, NaN, -inf, denormal, zero, 2 */
    float cond[8] = {1.0f, 0.0f, -0.0f, NAN, -INFINITY, 1e-45f, 0.0f, 2.0f};
    uint32_t nanbits = 0x7fa12345;  /* a NaN payload in src2 is moved bit for bit */
    for (int i = 0; i < 8; i++) {
        memcpy(m.a + 4 * i, &cond[i], 4);
        float b = (float)(10 + i), d = (float)(-100 - i);
        memcpy(m.b + 4 * i, &b, 4);
        memcpy(m.d + 4 * i, &d, 4);
    }
    memcpy(m.b + 4 * 7, &nanbits, 4);
    AtlSim *s = run_vec(&m, I_vec(ISA_OP_V_SEL, ISA_F32, D_AT, A_AT, B_AT, 8));
    REQUIRE(s);
    const uint8_t *D = sim_lmem(s, 0, D_AT, 32);
    for (int i = 0; i < 8; i++) {
        int take = isnan(cond[i]) || cond[i] != 0.0f;
        CHECKF(!memcmp(D + 4 * i, (take ? m.b : m.d) + 4 * i, 4), "f32 sel [%d] cond %g", i, cond[i]);
    }
    sim_free(s);
    /* bf16 and i16 with the condition broadcast over rows (stride 0), as
     * Where with a [4] condition over a [3][4] tensor */
    static const int dts[] = {ISA_BF16, ISA_I16, ISA_I8};
    for (int d = 0; d < 3; d++) {
        int dt = dts[d], es = isa_dtype_size(dt);
        const double cv[4] = {0.0, -1.0, dt == ISA_BF16 ? NAN : 0.0, 3.0};
        for (int j = 0; j < 4; j++) num_store_f64(m.a + j * es, dt, cv[j]);
        if (dt == ISA_BF16) num_store_f64(m.a, dt, -0.0);
        for (int i = 0; i < 12; i++) { num_store_f64(m.b + i * es, dt, i + 1); num_store_f64(m.d + i * es, dt, -(i + 1)); }
        AtlInsn in = I_vec(ISA_OP_V_SEL, dt, D_AT, A_AT, B_AT, 4);
        in.shape[2] = 3; in.src_stride[2] = 0; in.src2_stride[2] = 4; in.dst_stride[2] = 4;
        s = run_vec(&m, in);
        REQUIRE(s);
        D = sim_lmem(s, 0, D_AT, 64);
        for (int r = 0; r < 3; r++)
            for (int j = 0; j < 4; j++) {
                int i = r * 4 + j, take = isnan(cv[j]) || cv[j] != 0.0;
                CHECKF(num_load_f64(D + i * es, dt) == (take ? i + 1 : -(i + 1)), "%s sel [%d][%d]", isa_dtype_name(dt), r, j);
            }
        sim_free(s);
    }
}

TEST(where_as_mov_then_sel)
{
    /* Where(c, a, b): v.mov dst <- b; v.sel dst, c, a -- the lowering the backend uses */
    static Lmem m;
    float c[6] = {1, 0, NAN, -0.0f, 5, 0}, a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {-1, -2, -3, -4, -5, -6};
    memcpy(m.a, c, sizeof c);
    memcpy(m.b, a, sizeof a);
    memcpy(m.d, b, sizeof b);
    AtlProgram p;
    tp_init(&p, 1);
    tp_seg(&p, 0, &m, sizeof m);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_sig(I_load(0, 0, (uint32_t)sizeof m), 0));
    tp_add(&p, 0, ISA_ENGINE_VEC, I_wait(I_vec(ISA_OP_V_MOV, ISA_F32, 12288, D_AT, 0, 6), 0));
    tp_add(&p, 0, ISA_ENGINE_VEC, I_vec(ISA_OP_V_SEL, ISA_F32, 12288, A_AT, B_AT, 6));
    tp_end_all(&p);
    AtlSim *s;
    AtlErr e = {{0}};
    REQUIRE(trun(&chip, &p, SIM_MODE_FULL, &s, &e) == 0);
    const float *d = (const float *)sim_lmem(s, 0, 12288, 24);
    for (int i = 0; i < 6; i++) CHECK(d[i] == ((isnan(c[i]) || c[i] != 0) ? a[i] : b[i]));
    sim_free(s);
    tp_free(&p);
}

TEST(rounding_and_sign)
{
    static Lmem m;
    static const int ops[] = {ISA_OP_V_FLOOR, ISA_OP_V_CEIL, ISA_OP_V_ROUND, ISA_OP_V_TRUNC, ISA_OP_V_SIGN};
    static const int dts[] = {ISA_F32, ISA_F16, ISA_BF16};
    float vals[16] = {2.5f, -2.5f, 0.5f, -0.5f, 1.5f, -0.0f, NAN, INFINITY, -INFINITY, 1e-3f, 65504.0f, -7.75f, 1e20f, 3.0f, -0.2f, 0.0f};
    for (int d = 0; d < 3; d++)
        for (int o = 0; o < 5; o++) {
            int dt = dts[d], es = isa_dtype_size(dt), op = ops[o];
            for (int i = 0; i < 16; i++) num_store_f64(m.a + i * es, dt, vals[i]);
            AtlSim *s = run_vec(&m, I_vec(op, dt, D_AT, A_AT, 0, 16));
            REQUIRE(s);
            const uint8_t *D = sim_lmem(s, 0, D_AT, 64);
            for (int i = 0; i < 16; i++) {
                float x = (float)num_load_f64(m.a + i * es, dt), r;
                switch (op) {
                case ISA_OP_V_FLOOR: r = floorf(x); break;
                case ISA_OP_V_CEIL: r = ceilf(x); break;
                case ISA_OP_V_ROUND: r = nearbyintf(x); break;   /* default rounding mode: half to even */
                case ISA_OP_V_TRUNC: r = truncf(x); break;
                default: r = isnan(x) ? x : x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f;
                }
                if (!same_float(D + i * es, dt, r)) {
                    CHECKF(0, "%s %s x=%g: got %g want %g", isa_ops[op].mnemonic, isa_dtype_name(dt), x, num_load_f64(D + i * es, dt), r);
                    break;
                }
            }
            sim_free(s);
        }
    /* integers: rounding ops copy, sign gives -1/0/1 */
    static const int idts[] = {ISA_I8, ISA_I16, ISA_I32};
    for (int d = 0; d < 3; d++)
        for (int o = 0; o < 5; o++) {
            int dt = idts[d], es = isa_dtype_size(dt), op = ops[o], n = 40;
            for (int i = 0; i < 4096; i++) m.a[i] = (uint8_t)trand();
            int64_t lo, hi;
            num_int_range(dt, &lo, &hi);
            num_store_int(m.a, dt, lo); num_store_int(m.a + es, dt, 0); num_store_int(m.a + 2 * es, dt, hi);
            AtlSim *s = run_vec(&m, I_vec(op, dt, D_AT, A_AT, 0, (uint32_t)n));
            REQUIRE(s);
            const uint8_t *D = sim_lmem(s, 0, D_AT, 4096);
            for (int i = 0; i < n; i++) {
                int64_t x = num_load_int(m.a + i * es, dt), want = op == ISA_OP_V_SIGN ? (x > 0 ? 1 : x < 0 ? -1 : 0) : x;
                if (num_load_int(D + i * es, dt) != want) {
                    CHECKF(0, "%s %s x=%lld got %lld", isa_ops[op].mnemonic, isa_dtype_name(dt), (long long)x,
                           (long long)num_load_int(D + i * es, dt));
                    break;
                }
            }
            sim_free(s);
        }
}

TEST(trig_hyperbolic_erf)
{
    static Lmem m;
    static const int ops[] = {ISA_OP_V_SIN, ISA_OP_V_COS, ISA_OP_V_TAN, ISA_OP_V_ASIN, ISA_OP_V_ACOS, ISA_OP_V_ATAN,
                              ISA_OP_V_SINH, ISA_OP_V_COSH, ISA_OP_V_ASINH, ISA_OP_V_ACOSH, ISA_OP_V_ATANH, ISA_OP_V_ERF};
    static const int dts[] = {ISA_F32, ISA_F16, ISA_BF16};
    float vals[16] = {0.0f, -0.0f, 0.5f, -0.5f, 1.0f, -1.0f, 2.0f, 10.0f, 100.0f, -3.25f, 0.1f, 1.5f, INFINITY, -INFINITY, NAN, 0.999f};
    for (int d = 0; d < 3; d++)
        for (int o = 0; o < 12; o++) {
            int dt = dts[d], es = isa_dtype_size(dt), op = ops[o];
            for (int i = 0; i < 16; i++) num_store_f64(m.a + i * es, dt, vals[i]);
            AtlSim *s = run_vec(&m, I_vec(op, dt, D_AT, A_AT, 0, 16));
            REQUIRE(s);
            const uint8_t *D = sim_lmem(s, 0, D_AT, 64);
            for (int i = 0; i < 16; i++) {
                float x = (float)num_load_f64(m.a + i * es, dt), r;
                switch (op) {
                case ISA_OP_V_SIN: r = sinf(x); break;
                case ISA_OP_V_COS: r = cosf(x); break;
                case ISA_OP_V_TAN: r = tanf(x); break;
                case ISA_OP_V_ASIN: r = asinf(x); break;
                case ISA_OP_V_ACOS: r = acosf(x); break;
                case ISA_OP_V_ATAN: r = atanf(x); break;
                case ISA_OP_V_SINH: r = sinhf(x); break;
                case ISA_OP_V_COSH: r = coshf(x); break;
                case ISA_OP_V_ASINH: r = asinhf(x); break;
                case ISA_OP_V_ACOSH: r = acoshf(x); break;
                case ISA_OP_V_ATANH: r = atanhf(x); break;
                default: r = erff(x);
                }
                if (!same_float(D + i * es, dt, r)) {
                    CHECKF(0, "%s %s x=%g: got %g want %g", isa_ops[op].mnemonic, isa_dtype_name(dt), x, num_load_f64(D + i * es, dt), r);
                    break;
                }
            }
            sim_free(s);
        }
}

/* Plain-C reduction of x[2][3][4][5] (i16) along `axis` at output position
 * (a,b,c,e): min, or the index of the max / min (first or last of ties). */
static int64_t ref_reduce(const int16_t *x, int axis, const int pos[4], int what, int last)
{
    static const int dims[4] = {2, 3, 4, 5};
    int64_t best = 0, at = 0;
    for (int t = 0; t < dims[axis]; t++) {
        int idx[4] = {pos[0], pos[1], pos[2], pos[3]};
        idx[axis] = t;
        int64_t v = x[((idx[0] * 3 + idx[1]) * 4 + idx[2]) * 5 + idx[3]];
        int take = !t || (what == ISA_OP_V_RARGMAX ? (v > best || (last && v == best)) : (v < best || (last && v == best)));
        if (take) { best = v; at = t; }
    }
    return what == ISA_OP_V_RMIN ? best : at;
}

TEST(rmin_and_arg_reductions_int)
{
    static Lmem m;
    int16_t *x = (int16_t *)m.a;
    for (int i = 0; i < 120; i++) x[i] = (int16_t)((int)(trand() % 5) * 7000 - 14000); /* few values: many ties */
    x[0] = INT16_MIN; x[119] = INT16_MAX;
    static const int ops[] = {ISA_OP_V_RMIN, ISA_OP_V_RARGMAX, ISA_OP_V_RARGMIN};
    for (int axis = 0; axis < 4; axis++)
        for (int o = 0; o < 3; o++)
            for (int last = 0; last < 2; last++) {
                int op = ops[o];
                if (op == ISA_OP_V_RMIN && last) continue;
                AtlInsn in = I(op);
                in.dtype = ISA_I16; in.otype = ISA_I16; in.dst = D_AT; in.src = A_AT; in.axis = (uint8_t)axis; in.last = (uint8_t)last;
                if (op == ISA_OP_V_RMIN) in.last = 0;
                else in.otype = 0;
                in.shape[0] = 2; in.shape[1] = 3; in.shape[2] = 4; in.shape[3] = 5;
                AtlSim *s = run_vec(&m, in);
                REQUIRE(s);
                const uint8_t *d = sim_lmem(s, 0, D_AT, 1024);
                int od[4] = {2, 3, 4, 5}, bad = 0;
                od[axis] = 1;
                for (int a = 0; a < od[0] && !bad; a++) for (int b = 0; b < od[1]; b++) for (int c = 0; c < od[2]; c++) for (int e = 0; e < od[3]; e++) {
                    int pos[4] = {a, b, c, e}, oi = ((a * od[1] + b) * od[2] + c) * od[3] + e;
                    int64_t want = ref_reduce(x, axis, pos, op, last);
                    int64_t got = op == ISA_OP_V_RMIN ? num_load_int(d + oi * 2, ISA_I16) : num_load_int(d + oi * 4, ISA_I32);
                    if (got != want && !bad) { bad = 1; CHECKF(0, "%s axis %d last %d at %d: %lld want %lld", isa_ops[op].mnemonic, axis, last, oi,
                                                          (long long)got, (long long)want); }
                }
                sim_free(s);
            }
}

TEST(rmin_and_arg_reductions_float)
{
    /* [4][3] along axis 2: column 0 has NaNs at 1 and 3, column 1 ties
     * -0/+0 and -1/-1, column 2 alternates +-inf */
    static Lmem m;
    const float v[12] = {1.0f, -0.0f, INFINITY, NAN, 0.0f, -INFINITY, 5.0f, -1.0f, INFINITY, NAN, -1.0f, -INFINITY};
    static const int dts[] = {ISA_F32, ISA_F16, ISA_BF16};
    /* expected indices per column: argmax first/last, argmin first/last */
    const int32_t amax[2][3] = {{1, 0, 0}, {3, 1, 2}}, amin[2][3] = {{1, 2, 1}, {3, 3, 3}};
    for (int d = 0; d < 3; d++) {
        int dt = dts[d], es = isa_dtype_size(dt);
        for (int i = 0; i < 12; i++) num_store_f64(m.a + i * es, dt, v[i]);
        for (int o = 0; o < 2; o++)
            for (int last = 0; last < 2; last++) {
                AtlInsn in = I(o ? ISA_OP_V_RARGMIN : ISA_OP_V_RARGMAX);
                in.dtype = (uint8_t)dt; in.dst = D_AT; in.src = A_AT; in.axis = 2; in.last = (uint8_t)last;
                in.shape[0] = in.shape[1] = 1; in.shape[2] = 4; in.shape[3] = 3;
                AtlSim *s = run_vec(&m, in);
                REQUIRE(s);
                int32_t got[3];
                memcpy(got, sim_lmem(s, 0, D_AT, 12), 12);
                for (int c = 0; c < 3; c++)
                    CHECKF(got[c] == (o ? amin : amax)[last][c], "%s %s last=%d column %d: %d", isa_ops[in.op].mnemonic,
                           isa_dtype_name(dt), last, c, got[c]);
                sim_free(s);
            }
        AtlInsn in = I(ISA_OP_V_RMIN);
        in.dtype = (uint8_t)dt; in.otype = ISA_F32; in.dst = D_AT; in.src = A_AT; in.axis = 2;
        in.shape[0] = in.shape[1] = 1; in.shape[2] = 4; in.shape[3] = 3;
        AtlSim *s = run_vec(&m, in);
        REQUIRE(s);
        float mn[3];
        memcpy(mn, sim_lmem(s, 0, D_AT, 12), 12);
        CHECK(isnan(mn[0]) && mn[1] == -1.0f && mn[2] == -INFINITY);
        sim_free(s);
    }
}

int main(void)
{
    tchip(&chip, 1, 1);
    RUN(int_compare_bitwise_div_mod);
    RUN(float_compare_div_mod);
    RUN(conditional_select);
    RUN(where_as_mov_then_sel);
    RUN(rounding_and_sign);
    RUN(trig_hyperbolic_erf);
    RUN(rmin_and_arg_reductions_int);
    RUN(rmin_and_arg_reductions_float);
    return test_summary("test_sim_vec_ext");
}
