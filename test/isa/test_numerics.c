/* test_numerics.c - isa/numerics against the rules of docs/isa-numerics.md:
 * fp16/bf16 conversion (exhaustive f16 round trip, ties to even, overflow,
 * subnormals, NaN, -0), float->int rounding and saturation, requant
 * rounding (half away from zero) and clamping, saturating integer ops,
 * comparisons, division/modulo (INT_MIN / -1, negative operands, zero
 * divisors, IEEE x/0), rounding ops, sign, the new transcendentals, the
 * v.sel condition, the arg-reduction step (ties, NaN) and op dtype classes. */
#include <math.h>
#include <stdint.h>
#include "test/test.h"
#include "isa/isa.h"
#include "isa/numerics.h"

static uint32_t fbits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static float bitsf(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

TEST(f16_exhaustive_round_trip)
{
    int bad = 0;
    for (uint32_t h = 0; h < 65536 && bad < 5; h++) {
        float f = num_f16_to_f32((uint16_t)h);
        uint16_t back = num_f32_to_f16(f);
        int isnan16 = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
        if (isnan16) { if (!isnan(f) || back != (h | 0x200)) { bad++; CHECKF(0, "NaN %04x -> %04x", h, back); } }
        else if (back != h) { bad++; CHECKF(0, "f16 %04x -> %g -> %04x", h, f, back); }
    }
}

TEST(f16_values)
{
    CHECK(num_f16_to_f32(0x3c00) == 1.0f);
    CHECK(num_f16_to_f32(0x7bff) == 65504.0f);
    CHECK(num_f16_to_f32(0x0001) == ldexpf(1.0f, -24));   /* smallest subnormal */
    CHECK(num_f16_to_f32(0x0400) == ldexpf(1.0f, -14));   /* smallest normal */
    CHECK(signbit(num_f16_to_f32(0x8000)) && num_f16_to_f32(0x8000) == 0.0f);
    CHECK(isinf(num_f16_to_f32(0xfc00)) && num_f16_to_f32(0xfc00) < 0);
    /* ties to even */
    CHECK_EQ_INT(num_f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00);        /* halfway, even stays */
    CHECK_EQ_INT(num_f32_to_f16(1.0f + 3 * ldexpf(1, -11)), 0x3c02);    /* halfway, odd rounds up */
    CHECK_EQ_INT(num_f32_to_f16(1.0f + ldexpf(1, -11) + ldexpf(1, -20)), 0x3c01); /* above half */
    /* overflow */
    CHECK_EQ_INT(num_f32_to_f16(65519.0f), 0x7bff);
    CHECK_EQ_INT(num_f32_to_f16(65520.0f), 0x7c00);
    CHECK_EQ_INT(num_f32_to_f16(-1e30f), 0xfc00);
    CHECK_EQ_INT(num_f32_to_f16(INFINITY), 0x7c00);
    /* subnormals and underflow */
    CHECK_EQ_INT(num_f32_to_f16(ldexpf(1, -25)), 0x0000);                /* exactly half the min subnormal: even -> 0 */
    CHECK_EQ_INT(num_f32_to_f16(ldexpf(1.5f, -25)), 0x0001);
    CHECK_EQ_INT(num_f32_to_f16(ldexpf(3, -25)), 0x0002);                /* 1.5 ulp -> 2 (even) */
    CHECK_EQ_INT(num_f32_to_f16(-ldexpf(1, -30)), 0x8000);               /* underflow keeps the sign */
    CHECK_EQ_INT(num_f32_to_f16(ldexpf(1023.5f, -24)), 0x0400);          /* rounds up into the normals */
    CHECK_EQ_INT(num_f32_to_f16(-0.0f), 0x8000);
    /* NaN: quiet, sign kept */
    CHECK_EQ_INT(num_f32_to_f16(bitsf(0xff800001)) & 0xfe00, 0xfe00);
    /* directly from double: one rounding (via f32 would double-round) */
    double x = 1.0 + ldexp(1, -11) + ldexp(1, -40);
    CHECK_EQ_INT(num_f64_to_f16(x), 0x3c01);
}

TEST(bf16_values)
{
    CHECK(num_bf16_to_f32(0x3f80) == 1.0f);
    CHECK_EQ_INT(num_f32_to_bf16(1.0f), 0x3f80);
    CHECK_EQ_INT(num_f32_to_bf16(bitsf(0x3f808000)), 0x3f80);   /* tie, even */
    CHECK_EQ_INT(num_f32_to_bf16(bitsf(0x3f818000)), 0x3f82);   /* tie, odd -> up */
    CHECK_EQ_INT(num_f32_to_bf16(bitsf(0x3f808001)), 0x3f81);
    CHECK_EQ_INT(num_f32_to_bf16(bitsf(0x7f7fffff)), 0x7f80);   /* overflow -> inf */
    CHECK_EQ_INT(num_f32_to_bf16(bitsf(0x00010000)), 0x0001);   /* subnormal kept */
    CHECK_EQ_INT(num_f32_to_bf16(-0.0f), 0x8000);
    CHECK_EQ_INT(num_f32_to_bf16(bitsf(0x7f800001)), 0x7fc0);   /* sNaN -> qNaN */
    CHECK(isnan(num_bf16_to_f32(0x7f81)));
    /* f32 and f64 paths agree on every float (sampled) */
    uint32_t st = 1;
    int bad = 0;
    for (int i = 0; i < 200000 && bad < 3; i++) {
        st = st * 1664525u + 1013904223u;
        float f = bitsf(st);
        if (isnan(f)) continue;
        if (num_f32_to_bf16(f) != num_f64_to_bf16((double)f)) { bad++; CHECKF(0, "bf16 paths differ at %08x", st); }
    }
}

TEST(f32_from_double)
{
    CHECK(num_f64_to_f32(1e300) == INFINITY);
    CHECK(num_f64_to_f32(-1e300) == -INFINITY);
    CHECK(num_f64_to_f32(0.1) == 0.1f);
    CHECK(fbits(num_f64_to_f32(ldexp(1, -149))) == 1);
    CHECK(fbits(num_f64_to_f32(ldexp(1, -150))) == 0);         /* tie to even -> 0 */
    CHECK(signbit(num_f64_to_f32(-0.0)));
    /* the fast path (the host's conversion) against the generic encoder:
     * random bit patterns over every exponent, and the rounding boundaries */
    uint64_t s = 0x243f6a8885a308d3ull;
    int same = 0, n = 0;
    for (int i = 0; i < 2000000; i++, n++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        double x;
        uint64_t bits = i % 2 ? s : (s & 0x800fffffffffffffull) | ((uint64_t)(0x380 + (s >> 20) % 0x100) << 52);
        memcpy(&x, &bits, 8);
        same += isnan(x) || fbits(num_f64_to_f32(x)) == num_f64_to_bits(x, 8, 23);
    }
    static const double edges[] = {0x1.fffffefffffffp+127, 0x1.ffffffp+127, 0x1.fffffep+127, 0x1p-149, 0x1.8p-149,
                                   0x1p-150, 0x1.0000000000001p-150, 0x1p-126, 0x1.fffffcp-127, 0x1.fffffep-127, 1e-320};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++, n += 2)
        same += (fbits(num_f64_to_f32(edges[i])) == num_f64_to_bits(edges[i], 8, 23)) +
                (fbits(num_f64_to_f32(-edges[i])) == num_f64_to_bits(-edges[i], 8, 23));
    CHECK_EQ_INT(same, n);
}

TEST(float_to_int)
{
    CHECK_EQ_INT(num_f64_to_int_sat(2.5, -128, 127), 2);
    CHECK_EQ_INT(num_f64_to_int_sat(3.5, -128, 127), 4);
    CHECK_EQ_INT(num_f64_to_int_sat(-2.5, -128, 127), -2);
    CHECK_EQ_INT(num_f64_to_int_sat(-3.5, -128, 127), -4);
    CHECK_EQ_INT(num_f64_to_int_sat(2.4999, -128, 127), 2);
    CHECK_EQ_INT(num_f64_to_int_sat(127.5, -128, 127), 127);
    CHECK_EQ_INT(num_f64_to_int_sat(1e9, -128, 127), 127);
    CHECK_EQ_INT(num_f64_to_int_sat(-INFINITY, -128, 127), -128);
    CHECK_EQ_INT(num_f64_to_int_sat(NAN, -128, 127), 0);
    CHECK_EQ_INT(num_f64_to_int_sat(2147483647.5, INT32_MIN, INT32_MAX), INT32_MAX);
    CHECK_EQ_INT(num_f64_to_int_sat(-2147483648.5, INT32_MIN, INT32_MAX), INT32_MIN);
    CHECK(num_round_half_even(0.5) == 0.0 && num_round_half_even(1.5) == 2.0 && num_round_half_even(-0.5) == 0.0);
}

TEST(requant_rounding)
{
    int8_t y;
    /* mult = 2^30, shift = 0: y = round(x / 2) */
    CHECK(num_requant(5, 1 << 30, 0, 0, -128, 127, &y) == 0); CHECK_EQ_INT(y, 3);     /* 2.5 -> 3 (away) */
    num_requant(-5, 1 << 30, 0, 0, -128, 127, &y); CHECK_EQ_INT(y, -3);               /* -2.5 -> -3 */
    num_requant(3, 1 << 30, 0, 0, -128, 127, &y); CHECK_EQ_INT(y, 2);                 /* 1.5 -> 2 */
    num_requant(7, 1 << 30, 1, 0, -128, 127, &y); CHECK_EQ_INT(y, 2);                 /* 7/4 = 1.75 -> 2 */
    num_requant(6, 1 << 30, 1, 0, -128, 127, &y); CHECK_EQ_INT(y, 2);                 /* 1.5 -> 2 */
    num_requant(-6, 1 << 30, 1, 0, -128, 127, &y); CHECK_EQ_INT(y, -2);
    num_requant(5, 1 << 30, 1, 0, -128, 127, &y); CHECK_EQ_INT(y, 1);                 /* 1.25 -> 1 */
    /* zero point and clamps */
    num_requant(100, 1 << 30, -1, 10, -128, 127, &y); CHECK_EQ_INT(y, 110);           /* 100 * 2^30 / 2^30 + 10 */
    num_requant(1000, 1 << 30, 0, 0, -20, 20, &y); CHECK_EQ_INT(y, 20);
    num_requant(-1000, 1 << 30, 0, 0, -20, 20, &y); CHECK_EQ_INT(y, -20);
    /* extremes stay exact in 64 bits */
    num_requant(INT32_MIN, INT32_MIN, 31, 0, -128, 127, &y); CHECK_EQ_INT(y, 1);     /* 2^62 / 2^62 */
    num_requant(INT32_MAX, INT32_MAX, 31, -5, -128, 127, &y); CHECK_EQ_INT(y, -4);   /* (2^31-1)^2 / 2^62 = 0.99999... -> 1 */
    /* shift range */
    CHECK(num_requant(1, 1, -31, 0, -128, 127, &y) == -1);
    CHECK(num_requant(1, 1, 32, 0, -128, 127, &y) == -1);
    CHECK(num_requant(1, 1, -30, 0, -128, 127, &y) == 0);
}

TEST(requant_ties_to_even)
{
    int32_t y;
    /* y = x / 2: ties go to the even neighbour */
    const int32_t x2[] = {5, 7, -5, 3, 1, -1, 4}, y2[] = {2, 4, -2, 2, 0, 0, 2};
    for (int i = 0; i < 7; i++) {
        CHECK(num_requant_round(x2[i], 1 << 30, 0, 0, -128, 127, 1, &y) == 0);
        CHECKF(y == y2[i], "%d / 2 -> %d, want %d", x2[i], y, y2[i]);
    }
    /* y = x / 4: 6 / 4 = 1.5 -> 2, 10 / 4 = 2.5 -> 2, 14 / 4 = 3.5 -> 4, 5 / 4 -> 1 */
    const int32_t x4[] = {6, 10, 14, 5, -10}, y4[] = {2, 2, 4, 1, -2};
    for (int i = 0; i < 5; i++) {
        num_requant_round(x4[i], 1 << 30, 1, 0, -128, 127, 1, &y);
        CHECKF(y == y4[i], "%d / 4 -> %d, want %d", x4[i], y, y4[i]);
    }
    /* zero point and saturation at the int8 ends, and no narrowing beyond [lo, hi] */
    num_requant_round(1000, 1 << 30, 0, -3, -128, 127, 1, &y); CHECK_EQ_INT(y, 127);
    num_requant_round(-1000, 1 << 30, 0, 3, -128, 127, 1, &y); CHECK_EQ_INT(y, -128);
    num_requant_round(511, 1 << 30, 0, 0, 0, 255, 1, &y); CHECK_EQ_INT(y, 255);    /* 255.5 -> 256 -> 255 */
    num_requant_round(509, 1 << 30, 0, 0, 0, 255, 1, &y); CHECK_EQ_INT(y, 254);    /* 254.5 -> 254 */
    CHECK(num_requant_round(1, 1, 32, 0, -128, 127, 1, &y) == -1);
}

TEST(quant_multiplier)
{
    int32_t m, s, y;
    CHECK(num_quant_multiplier(0.5, &m, &s) == 0); CHECK_EQ_INT(m, 1 << 30); CHECK_EQ_INT(s, 0);
    CHECK(num_quant_multiplier(1.0, &m, &s) == 0); CHECK_EQ_INT(m, 1 << 30); CHECK_EQ_INT(s, -1);
    CHECK(num_quant_multiplier(0.75, &m, &s) == 0); CHECK_EQ_INT(m, 3 << 29); CHECK_EQ_INT(s, 0);
    /* a typical conv multiplier: within 2^-31 relative, and applied by num_requant_round */
    CHECK(num_quant_multiplier(0.0123456789, &m, &s) == 0);
    CHECK(m >= (1 << 30));
    CHECK_NEAR((double)m * ldexp(1.0, -(31 + s)), 0.0123456789, 0.0123456789 * 1e-9);
    num_requant_round(10000, m, s, 0, -128, 127, 1, &y); CHECK_EQ_INT(y, 123);     /* 123.456789 */
    /* tiny multipliers keep fewer bits; huge ones and non-positive ones are refused */
    CHECK(num_quant_multiplier(1e-12, &m, &s) == 0); CHECK_EQ_INT(s, 31); CHECK_EQ_INT(m, 4611686);
    CHECK(num_quant_multiplier(2e9, &m, &s) == -1);
    CHECK(num_quant_multiplier(0, &m, &s) == -1);
    CHECK(num_quant_multiplier(-1, &m, &s) == -1);
    CHECK(num_quant_multiplier(NAN, &m, &s) == -1);
}

TEST(int_ops_saturate)
{
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_ADD, 100, 100, ISA_I8), 127);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_SUB, -100, 100, ISA_I8), -128);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_MUL, -128, -128, ISA_I16), 16384);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_MUL, 300, 300, ISA_I16), 32767);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_ADD, INT32_MAX, 1, ISA_I32), INT32_MAX);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_MUL, INT32_MIN, -1, ISA_I32), INT32_MAX);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_MIN, -3, 2, ISA_I8), -3);
    CHECK_EQ_INT(num_int_unop(ISA_OP_V_AFFINE, 10, 0.25f, 0.0f, ISA_I8), 2);        /* 2.5 -> 2 */
    CHECK_EQ_INT(num_int_unop(ISA_OP_V_CLIP, 50, -10.0f, 20.0f, ISA_I8), 20);
    CHECK_EQ_INT(num_int_unop(ISA_OP_V_RELU, -5, 0, 0, ISA_I32), 0);
}

TEST(float_ops)
{
    CHECK(isnan(num_f32_binop(ISA_OP_V_MAX, NAN, 1.0f)));
    CHECK(isnan(num_f32_binop(ISA_OP_V_MIN, 1.0f, NAN)));
    CHECK(!signbit(num_f32_binop(ISA_OP_V_MAX, -0.0f, 0.0f)));
    CHECK(signbit(num_f32_binop(ISA_OP_V_MIN, 0.0f, -0.0f)));
    CHECK(num_f32_unop(ISA_OP_V_SIGMOID, 0.0f, 0, 0) == 0.5f);
    CHECK(num_f32_unop(ISA_OP_V_RSQRT, 4.0f, 0, 0) == 0.5f);
    CHECK(isinf(num_f32_unop(ISA_OP_V_RECIP, 0.0f, 0, 0)));
    CHECK(isnan(num_f32_unop(ISA_OP_V_LOG, -1.0f, 0, 0)));
    CHECK(num_f32_unop(ISA_OP_V_GELU, 0.0f, 0, 0) == 0.0f);
    CHECK_NEAR(num_f32_unop(ISA_OP_V_GELU, 1.0f, 0, 0), 0.8413447, 1e-6);
    CHECK(num_op_is_transcendental(ISA_OP_V_EXP) && !num_op_is_transcendental(ISA_OP_V_RELU));
}

TEST(int_compare_bitwise_div_mod)
{
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_EQ, -5, -5, ISA_I8), 1);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_EQ, -5, 5, ISA_I8), 0);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_LT, INT32_MIN, INT32_MAX, ISA_I32), 1);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_LT, 3, 3, ISA_I16), 0);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_LE, 3, 3, ISA_I16), 1);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_LE, 4, 3, ISA_I16), 0);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_AND, -1, 0x5a, ISA_I8), 0x5a);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_OR, -128, 1, ISA_I8), -127);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_XOR, -1, 0x0f, ISA_I8), -16);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_XOR, INT32_MIN, -1, ISA_I32), INT32_MAX);
    /* division truncates toward zero; INT_MIN / -1 saturates */
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_DIV, 7, 2, ISA_I32), 3);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_DIV, -7, 2, ISA_I32), -3);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_DIV, 7, -2, ISA_I32), -3);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_DIV, INT32_MIN, -1, ISA_I32), INT32_MAX);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_DIV, -128, -1, ISA_I8), 127);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_DIV, -32768, -1, ISA_I16), 32767);
    /* modulo takes the sign of the divisor */
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_MOD, 7, 3, ISA_I32), 1);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_MOD, -7, 3, ISA_I32), 2);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_MOD, 7, -3, ISA_I32), -2);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_MOD, -7, -3, ISA_I32), -1);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_MOD, -6, 3, ISA_I32), 0);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_MOD, INT32_MIN, -1, ISA_I32), 0);
    CHECK_EQ_INT(num_int_binop(ISA_OP_V_MOD, -128, 127, ISA_I8), 126);
    CHECK(num_int_divisor_faults(ISA_OP_V_DIV, 0) && num_int_divisor_faults(ISA_OP_V_MOD, 0));
    CHECK(!num_int_divisor_faults(ISA_OP_V_DIV, -1) && !num_int_divisor_faults(ISA_OP_V_ADD, 0));
}

TEST(float_compare_div_mod)
{
    CHECK(num_f32_binop(ISA_OP_V_EQ, -0.0f, 0.0f) == 1.0f);
    CHECK(num_f32_binop(ISA_OP_V_EQ, NAN, NAN) == 0.0f);
    CHECK(num_f32_binop(ISA_OP_V_LT, NAN, 1.0f) == 0.0f && num_f32_binop(ISA_OP_V_LE, 1.0f, NAN) == 0.0f);
    CHECK(num_f32_binop(ISA_OP_V_LT, -INFINITY, -3e38f) == 1.0f);
    CHECK(num_f32_binop(ISA_OP_V_LE, -0.0f, 0.0f) == 1.0f && num_f32_binop(ISA_OP_V_LT, -0.0f, 0.0f) == 0.0f);
    CHECK(!signbit(num_f32_binop(ISA_OP_V_EQ, 1.0f, 2.0f)));
    float pinf = num_f32_binop(ISA_OP_V_DIV, 1.0f, 0.0f), ninf = num_f32_binop(ISA_OP_V_DIV, 1.0f, -0.0f);
    CHECK(isinf(pinf) && pinf > 0 && isinf(ninf) && ninf < 0);
    CHECK(isnan(num_f32_binop(ISA_OP_V_DIV, 0.0f, 0.0f)));
    CHECK(num_f32_binop(ISA_OP_V_DIV, 1.0f, 3.0f) == 1.0f / 3.0f);
    CHECK(num_f32_binop(ISA_OP_V_MOD, -7.5f, 2.0f) == -1.5f);   /* sign of the dividend */
    CHECK(num_f32_binop(ISA_OP_V_MOD, 7.5f, -2.0f) == 1.5f);
    CHECK(signbit(num_f32_binop(ISA_OP_V_MOD, -4.0f, 2.0f)));   /* -0 */
    CHECK(isnan(num_f32_binop(ISA_OP_V_MOD, 1.0f, 0.0f)) && isnan(num_f32_binop(ISA_OP_V_MOD, INFINITY, 1.0f)));
    CHECK(num_f32_binop(ISA_OP_V_MOD, 5.0f, INFINITY) == 5.0f);
}

TEST(rounding_sign_and_transcendentals)
{
    static const int ops[] = {ISA_OP_V_FLOOR, ISA_OP_V_CEIL, ISA_OP_V_ROUND, ISA_OP_V_TRUNC};
    /* x, floor, ceil, round (half even), trunc */
    static const float t[][5] = {
        {2.5f, 2, 3, 2, 2}, {3.5f, 3, 4, 4, 3}, {-2.5f, -3, -2, -2, -2}, {-0.5f, -1, -0.0f, -0.0f, -0.0f},
        {0.49999997f, 0, 1, 0, 0}, {-7.0f, -7, -7, -7, -7}, {8388609.0f, 8388609.0f, 8388609.0f, 8388609.0f, 8388609.0f},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        for (int o = 0; o < 4; o++) {
            float got = num_f32_unop(ops[o], t[i][0], 0, 0);
            CHECKF(got == t[i][o + 1] && signbit(got) == signbit(t[i][o + 1]), "%s(%g) = %g want %g",
                   isa_ops[ops[o]].mnemonic, t[i][0], got, t[i][o + 1]);
        }
    for (int o = 0; o < 4; o++) {
        CHECK(isnan(num_f32_unop(ops[o], NAN, 0, 0)));
        CHECK(num_f32_unop(ops[o], -INFINITY, 0, 0) == -INFINITY);
        CHECK(signbit(num_f32_unop(ops[o], -0.0f, 0, 0)));
        CHECK_EQ_INT(num_int_unop(ops[o], -77, 0, 0, ISA_I8), -77);
        CHECK_EQ_INT(num_int_unop(ops[o], INT32_MIN, 0, 0, ISA_I32), INT32_MIN);
    }
    CHECK(num_f32_unop(ISA_OP_V_SIGN, -3e-40f, 0, 0) == -1.0f);
    CHECK(num_f32_unop(ISA_OP_V_SIGN, INFINITY, 0, 0) == 1.0f);
    CHECK(isnan(num_f32_unop(ISA_OP_V_SIGN, NAN, 0, 0)));
    float z = num_f32_unop(ISA_OP_V_SIGN, -0.0f, 0, 0);
    CHECK(z == 0.0f && !signbit(z));  /* -0 -> +0 */
    CHECK_EQ_INT(num_int_unop(ISA_OP_V_SIGN, -128, 0, 0, ISA_I8), -1);
    CHECK_EQ_INT(num_int_unop(ISA_OP_V_SIGN, 0, 0, 0, ISA_I8), 0);
    CHECK_EQ_INT(num_int_unop(ISA_OP_V_SIGN, INT32_MAX, 0, 0, ISA_I32), 1);
    CHECK(num_f32_unop(ISA_OP_V_SIN, 0.5f, 0, 0) == sinf(0.5f));
    CHECK(num_f32_unop(ISA_OP_V_ACOS, 1.0f, 0, 0) == 0.0f);
    CHECK(isnan(num_f32_unop(ISA_OP_V_ASIN, 2.0f, 0, 0)));
    CHECK(isnan(num_f32_unop(ISA_OP_V_ACOSH, 0.5f, 0, 0)));
    CHECK(isinf(num_f32_unop(ISA_OP_V_ATANH, 1.0f, 0, 0)));
    CHECK(isinf(num_f32_unop(ISA_OP_V_COSH, 100.0f, 0, 0)));
    CHECK(num_f32_unop(ISA_OP_V_ERF, INFINITY, 0, 0) == 1.0f);
    CHECK(signbit(num_f32_unop(ISA_OP_V_ATAN, -0.0f, 0, 0)));
}

TEST(sel_condition_and_arg_step)
{
    float f[4] = {-0.0f, NAN, 0.0f, 1e-45f};
    CHECK(!num_is_nonzero(&f[0], ISA_F32) && num_is_nonzero(&f[1], ISA_F32));
    CHECK(!num_is_nonzero(&f[2], ISA_F32) && num_is_nonzero(&f[3], ISA_F32));
    uint16_t bneg0 = 0x8000, bnan = 0x7fc1;
    CHECK(!num_is_nonzero(&bneg0, ISA_BF16) && num_is_nonzero(&bnan, ISA_BF16) && num_is_nonzero(&bnan, ISA_F16));
    int8_t i8 = -128;
    CHECK(num_is_nonzero(&i8, ISA_I8) && num_is_nonzero(&bneg0, ISA_I16));
    int32_t zero = 0;
    CHECK(!num_is_nonzero(&zero, ISA_I32));
    /* strictly better replaces; ties only with last; -0 ties +0 */
    CHECK(num_arg_replaces(ISA_OP_V_RARGMAX, 2, 1, 0) && !num_arg_replaces(ISA_OP_V_RARGMAX, 1, 2, 1));
    CHECK(num_arg_replaces(ISA_OP_V_RARGMIN, 1, 2, 0) && !num_arg_replaces(ISA_OP_V_RARGMIN, 2, 1, 1));
    CHECK(!num_arg_replaces(ISA_OP_V_RARGMAX, 3, 3, 0) && num_arg_replaces(ISA_OP_V_RARGMAX, 3, 3, 1));
    CHECK(!num_arg_replaces(ISA_OP_V_RARGMIN, -0.0, 0.0, 0) && num_arg_replaces(ISA_OP_V_RARGMIN, -0.0, 0.0, 1));
    /* NaN is the extreme for both; the first NaN stays unless last */
    CHECK(num_arg_replaces(ISA_OP_V_RARGMAX, NAN, INFINITY, 0) && num_arg_replaces(ISA_OP_V_RARGMIN, NAN, -INFINITY, 0));
    CHECK(!num_arg_replaces(ISA_OP_V_RARGMAX, INFINITY, NAN, 1) && !num_arg_replaces(ISA_OP_V_RARGMIN, -INFINITY, NAN, 1));
    CHECK(!num_arg_replaces(ISA_OP_V_RARGMAX, NAN, NAN, 0) && num_arg_replaces(ISA_OP_V_RARGMAX, NAN, NAN, 1));
}

TEST(op_dtype_classes)
{
    CHECK(num_op_is_transcendental(ISA_OP_V_SIN) && num_op_is_transcendental(ISA_OP_V_ERF));
    CHECK(!num_op_is_transcendental(ISA_OP_V_FLOOR) && !num_op_is_transcendental(ISA_OP_V_DIV));
    CHECK(!num_op_dtype_ok(ISA_OP_V_ATANH, ISA_I16) && num_op_dtype_ok(ISA_OP_V_ATANH, ISA_BF16));
    CHECK(!num_op_dtype_ok(ISA_OP_V_EXP, ISA_I8));
    CHECK(!num_op_dtype_ok(ISA_OP_V_XOR, ISA_F32) && !num_op_dtype_ok(ISA_OP_V_AND, ISA_F16) && num_op_dtype_ok(ISA_OP_V_OR, ISA_I8));
    CHECK(num_op_dtype_ok(ISA_OP_V_DIV, ISA_I8) && num_op_dtype_ok(ISA_OP_V_SEL, ISA_BF16) && num_op_dtype_ok(ISA_OP_V_SIGN, ISA_I32));
    CHECK(!num_op_dtype_ok(-1, ISA_F32) && !num_op_dtype_ok(ISA_NUM_OPS, ISA_F32));
}

int main(void)
{
    RUN(f16_exhaustive_round_trip);
    RUN(f16_values);
    RUN(bf16_values);
    RUN(f32_from_double);
    RUN(float_to_int);
    RUN(requant_rounding);
    RUN(requant_ties_to_even);
    RUN(quant_multiplier);
    RUN(int_ops_saturate);
    RUN(float_ops);
    RUN(int_compare_bitwise_div_mod);
    RUN(float_compare_div_mod);
    RUN(rounding_sign_and_transcendentals);
    RUN(sel_condition_and_arg_step);
    RUN(op_dtype_classes);
    return test_summary("test_numerics");
}
