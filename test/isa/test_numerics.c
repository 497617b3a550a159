/* test_numerics.c - isa/numerics against the rules of docs/isa-numerics.md:
 * fp16/bf16 conversion (exhaustive f16 round trip, ties to even, overflow,
 * subnormals, NaN, -0), float->int rounding and saturation, requant
 * rounding (half away from zero) and clamping, saturating integer ops. */
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

int main(void)
{
    RUN(f16_exhaustive_round_trip);
    RUN(f16_values);
    RUN(bf16_values);
    RUN(f32_from_double);
    RUN(float_to_int);
    RUN(requant_rounding);
    RUN(int_ops_saturate);
    RUN(float_ops);
    return test_summary("test_numerics");
}
