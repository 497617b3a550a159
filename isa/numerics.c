/* numerics.c - implementation of the shared numeric semantics (numerics.h,
 * docs/isa-numerics.md). One generic rounding routine from double to a
 * binary format with E exponent and M mantissa bits serves f16, bf16 and
 * f32, so every narrowing is a single correctly rounded step. */
#include <math.h>
#include <string.h>
#include "isa/isa.h"
#include "isa/numerics.h"

/* Round-half-even of a non-negative double that is < 2^62. */
static double rne_nonneg(double a)
{
    double f = floor(a), d = a - f;
    if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0.0)) f += 1.0;
    return f;
}

double num_round_half_even(double x)
{
    if (!isfinite(x) || fabs(x) >= 4503599627370496.0) return x; /* >= 2^52: already integral */
    return x < 0 ? -rne_nonneg(-x) : rne_nonneg(x);
}

/* Encode x in a binary format with `eb` exponent and `mb` mantissa bits. */
uint32_t num_f64_to_bits(double x, int eb, int mb)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint32_t sign = (uint32_t)(bits >> 63) << (eb + mb);
    uint32_t emax = (1u << eb) - 1, mmask = (1u << mb) - 1;
    if (isnan(x)) {
        uint32_t m = (uint32_t)((bits >> (52 - mb)) & mmask) | (1u << (mb - 1));
        return sign | (emax << mb) | m;
    }
    if (isinf(x)) return sign | (emax << mb);
    double a = fabs(x);
    if (a == 0.0) return sign;
    int bias = (1 << (eb - 1)) - 1, emin = 1 - bias, e;
    (void)frexp(a, &e);
    int E = e - 1;                       /* a = 1.f x 2^E */
    int q = (E < emin ? emin : E) - mb;  /* exponent of one unit in the last place */
    if (q - 1 > 1023) return sign | (emax << mb);
    double r = rne_nonneg(ldexp(a, -q)); /* exact scaling, then one rounding */
    uint64_t m = (uint64_t)r;
    if (m == 0) return sign;
    if (m >> (mb + 1)) { m >>= 1; q++; }
    if (m >> mb) {
        int64_t ef = (int64_t)q + mb + bias;
        if (ef >= (int64_t)emax) return sign | (emax << mb);
        return sign | ((uint32_t)ef << mb) | ((uint32_t)m & mmask);
    }
    return sign | (uint32_t)m;           /* subnormal */
}

uint16_t num_f64_to_f16(double x) { return (uint16_t)num_f64_to_bits(x, 5, 10); }
uint16_t num_f64_to_bf16(double x) { return (uint16_t)num_f64_to_bits(x, 8, 7); }
uint16_t num_f32_to_f16(float f) { return num_f64_to_f16((double)f); }

uint16_t num_f32_to_bf16(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    if ((b & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((b >> 16) | 0x40);
    b += 0x7fffu + ((b >> 16) & 1u);
    return (uint16_t)(b >> 16);
}

float num_f64_to_f32(double x)
{
    /* in float's range the host's double -> float conversion is IEEE
     * round-to-nearest-even with gradual underflow, the same as the generic
     * encoder (test_numerics checks them against each other); NaN payloads
     * and values beyond FLT_MAX (overflow) take the generic rule */
    if (fabs(x) <= 0x1.fffffep+127) return (float)x;
    uint32_t b = num_f64_to_bits(x, 8, 23);
    float f;
    memcpy(&f, &b, 4);
    return f;
}

float num_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, b;
    if (e == 31) b = sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0);
    else if (e) b = sign | ((e + 112) << 23) | (m << 13);
    else if (!m) b = sign;
    else {
        float f = ldexpf((float)m, -24);
        return sign ? -f : f;
    }
    float f;
    memcpy(&f, &b, 4);
    return f;
}

float num_bf16_to_f32(uint16_t h)
{
    uint32_t b = (uint32_t)h << 16;
    if ((b & 0x7fffffffu) > 0x7f800000u) b |= 0x400000u;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

int64_t num_sat(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

int64_t num_f64_to_int_sat(double x, int64_t lo, int64_t hi)
{
    if (isnan(x)) return 0;
    if (x <= (double)lo) return lo;
    if (x >= (double)hi) return hi;
    return num_sat((int64_t)num_round_half_even(x), lo, hi);
}

int num_int_range(int dtype, int64_t *lo, int64_t *hi)
{
    switch (dtype) {
    case ISA_I8: *lo = INT8_MIN; *hi = INT8_MAX; return 1;
    case ISA_I16: *lo = INT16_MIN; *hi = INT16_MAX; return 1;
    case ISA_I32: *lo = INT32_MIN; *hi = INT32_MAX; return 1;
    default: *lo = *hi = 0; return 0;
    }
}

int num_is_float(int dtype) { return dtype == ISA_F16 || dtype == ISA_BF16 || dtype == ISA_F32; }

int num_requant_round(int32_t x, int32_t mult, int32_t shift, int32_t zp, int32_t lo, int32_t hi, int even,
                      int32_t *y)
{
    int64_t s = 31 + (int64_t)shift;
    if (s < 1 || s > 62) return -1;
    int64_t p = (int64_t)x * (int64_t)mult;
    uint64_t ap = p < 0 ? (uint64_t)0 - (uint64_t)p : (uint64_t)p;
    uint64_t half = (uint64_t)1 << (s - 1), rest = ap & (((uint64_t)1 << s) - 1);
    int64_t r = (int64_t)((ap + half) >> s);
    if (even && rest == half && (r & 1)) r--;   /* a tie rounded up to an odd value goes back down */
    if (p < 0) r = -r;
    *y = (int32_t)num_sat((int64_t)zp + r, lo, hi);
    return 0;
}

int num_requant(int32_t x, int32_t mult, int32_t shift, int32_t zp,
                int32_t lo, int32_t hi, int8_t *y)
{
    int32_t v;
    if (num_requant_round(x, mult, shift, zp, lo, hi, 0, &v)) return -1;
    *y = (int8_t)num_sat(v, INT8_MIN, INT8_MAX);
    return 0;
}

int num_quant_multiplier(double m, int32_t *mult, int32_t *shift)
{
    if (!(m > 0) || m >= 1073741824.0) return -1;
    int e;
    double f = frexp(m, &e);                     /* m = f * 2^e, f in [0.5, 1) */
    double q = num_round_half_even(ldexp(f, 31));
    if (q >= 2147483648.0) { q /= 2; e++; }      /* f rounded up to 1 */
    int s = 31 - e;                              /* m ~= q * 2^-s */
    if (s < 1) return -1;
    if (s > 62) {                                /* too small: keep round(m * 2^62) */
        q = num_round_half_even(ldexp(m, 62));
        s = 62;
    }
    *mult = (int32_t)q;
    *shift = s - 31;
    return 0;
}

/* Integer division toward zero; the caller has excluded b == 0. The one
 * overflowing case (INT_MIN / -1) is exact in 64 bits and saturates later. */
static int64_t int_div_trunc(int64_t a, int64_t b) { return a / b; }

/* Remainder with the sign of the divisor (Python %, ONNX Mod fmod=0). */
static int64_t int_mod_floor(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

int num_int_divisor_faults(int op, int64_t b)
{
    return b == 0 && (op == ISA_OP_V_DIV || op == ISA_OP_V_MOD);
}

int64_t num_int_binop(int op, int64_t a, int64_t b, int dtype)
{
    int64_t lo, hi, r;
    num_int_range(dtype, &lo, &hi);
    switch (op) {
    case ISA_OP_V_ADD: r = a + b; break;
    case ISA_OP_V_SUB: r = a - b; break;
    case ISA_OP_V_MUL: r = a * b; break;
    case ISA_OP_V_MAX: r = a > b ? a : b; break;
    case ISA_OP_V_MIN: r = a < b ? a : b; break;
    case ISA_OP_V_EQ: r = a == b; break;
    case ISA_OP_V_LT: r = a < b; break;
    case ISA_OP_V_LE: r = a <= b; break;
    case ISA_OP_V_AND: r = a & b; break;
    case ISA_OP_V_OR: r = a | b; break;
    case ISA_OP_V_XOR: r = a ^ b; break;
    case ISA_OP_V_DIV: r = b ? int_div_trunc(a, b) : 0; break;
    case ISA_OP_V_MOD: r = b ? int_mod_floor(a, b) : 0; break;
    default: return 0;
    }
    return num_sat(r, lo, hi);
}

float num_f32_binop(int op, float a, float b)
{
    switch (op) {
    case ISA_OP_V_ADD: return a + b;
    case ISA_OP_V_SUB: return a - b;
    case ISA_OP_V_MUL: return a * b;
    /* max/min: NaN in either operand gives NaN (fmaxf would drop it) */
    case ISA_OP_V_MAX: return (isnan(a) || isnan(b)) ? a + b : (a > b ? a : (b > a ? b : (signbit(a) ? b : a)));
    case ISA_OP_V_MIN: return (isnan(a) || isnan(b)) ? a + b : (a < b ? a : (b < a ? b : (signbit(a) ? a : b)));
    /* comparisons: IEEE (NaN unordered, -0 == +0) */
    case ISA_OP_V_EQ: return a == b ? 1.0f : 0.0f;
    case ISA_OP_V_LT: return a < b ? 1.0f : 0.0f;
    case ISA_OP_V_LE: return a <= b ? 1.0f : 0.0f;
    case ISA_OP_V_DIV: return a / b;
    case ISA_OP_V_MOD: return fmodf(a, b);
    default: return 0.0f;
    }
}

float num_f32_unop(int op, float x, float alpha, float beta)
{
    switch (op) {
    case ISA_OP_V_MOV: return x;
    case ISA_OP_V_AFFINE: return x * alpha + beta;
    case ISA_OP_V_RELU: return isnan(x) ? x : (x > 0.0f ? x : 0.0f);
    case ISA_OP_V_LRELU: return x >= 0.0f || isnan(x) ? x : alpha * x;
    case ISA_OP_V_CLIP: return isnan(x) ? x : (x < alpha ? alpha : (x > beta ? beta : x));
    case ISA_OP_V_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case ISA_OP_V_TANH: return tanhf(x);
    case ISA_OP_V_EXP: return expf(x);
    case ISA_OP_V_LOG: return logf(x);
    case ISA_OP_V_GELU: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case ISA_OP_V_RECIP: return 1.0f / x;
    case ISA_OP_V_SQRT: return sqrtf(x);
    case ISA_OP_V_RSQRT: return 1.0f / sqrtf(x);
    case ISA_OP_V_FLOOR: return floorf(x);
    case ISA_OP_V_CEIL: return ceilf(x);
    case ISA_OP_V_ROUND: return (float)num_round_half_even((double)x);
    case ISA_OP_V_TRUNC: return truncf(x);
    case ISA_OP_V_SIGN: return isnan(x) ? x : (x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f));
    case ISA_OP_V_SIN: return sinf(x);
    case ISA_OP_V_COS: return cosf(x);
    case ISA_OP_V_TAN: return tanf(x);
    case ISA_OP_V_ASIN: return asinf(x);
    case ISA_OP_V_ACOS: return acosf(x);
    case ISA_OP_V_ATAN: return atanf(x);
    case ISA_OP_V_SINH: return sinhf(x);
    case ISA_OP_V_COSH: return coshf(x);
    case ISA_OP_V_ASINH: return asinhf(x);
    case ISA_OP_V_ACOSH: return acoshf(x);
    case ISA_OP_V_ATANH: return atanhf(x);
    case ISA_OP_V_ERF: return erff(x);
    default: return 0.0f;
    }
}

/* Which dtypes each vector op accepts beyond "any dtype": the transcendental
 * class (float only, priced at transcendental_cycles) and the bitwise class
 * (integer only). Indexed by opcode; unlisted ops are 0 = any dtype. */
enum { CLASS_ANY = 0, CLASS_TRANSCENDENTAL, CLASS_INT_ONLY };
static const uint8_t op_class[ISA_NUM_OPS] = {
    [ISA_OP_V_SIGMOID] = CLASS_TRANSCENDENTAL, [ISA_OP_V_TANH] = CLASS_TRANSCENDENTAL,
    [ISA_OP_V_EXP] = CLASS_TRANSCENDENTAL, [ISA_OP_V_LOG] = CLASS_TRANSCENDENTAL,
    [ISA_OP_V_GELU] = CLASS_TRANSCENDENTAL, [ISA_OP_V_RECIP] = CLASS_TRANSCENDENTAL,
    [ISA_OP_V_SQRT] = CLASS_TRANSCENDENTAL, [ISA_OP_V_RSQRT] = CLASS_TRANSCENDENTAL,
    [ISA_OP_V_SIN] = CLASS_TRANSCENDENTAL, [ISA_OP_V_COS] = CLASS_TRANSCENDENTAL,
    [ISA_OP_V_TAN] = CLASS_TRANSCENDENTAL, [ISA_OP_V_ASIN] = CLASS_TRANSCENDENTAL,
    [ISA_OP_V_ACOS] = CLASS_TRANSCENDENTAL, [ISA_OP_V_ATAN] = CLASS_TRANSCENDENTAL,
    [ISA_OP_V_SINH] = CLASS_TRANSCENDENTAL, [ISA_OP_V_COSH] = CLASS_TRANSCENDENTAL,
    [ISA_OP_V_ASINH] = CLASS_TRANSCENDENTAL, [ISA_OP_V_ACOSH] = CLASS_TRANSCENDENTAL,
    [ISA_OP_V_ATANH] = CLASS_TRANSCENDENTAL, [ISA_OP_V_ERF] = CLASS_TRANSCENDENTAL,
    [ISA_OP_V_AND] = CLASS_INT_ONLY, [ISA_OP_V_OR] = CLASS_INT_ONLY, [ISA_OP_V_XOR] = CLASS_INT_ONLY,
};

int num_op_is_transcendental(int op)
{
    return op >= 0 && op < ISA_NUM_OPS && op_class[op] == CLASS_TRANSCENDENTAL;
}

int num_op_dtype_ok(int op, int dtype)
{
    if (op < 0 || op >= ISA_NUM_OPS) return 0;
    if (op_class[op] == CLASS_TRANSCENDENTAL) return num_is_float(dtype);
    if (op_class[op] == CLASS_INT_ONLY) return !num_is_float(dtype);
    return 1;
}

int num_is_nonzero(const void *p, int dtype)
{
    if (num_is_float(dtype)) return num_load_f64(p, dtype) != 0.0; /* NaN != 0; -0 == 0 */
    return num_load_int(p, dtype) != 0;
}

int num_arg_replaces(int op, double v, double best, int last)
{
    if (isnan(best)) return last && isnan(v);
    if (isnan(v)) return 1;
    if (v == best) return last;
    return op == ISA_OP_V_RARGMIN ? v < best : v > best;
}

int64_t num_int_unop(int op, int64_t x, float alpha, float beta, int dtype)
{
    int64_t lo, hi;
    num_int_range(dtype, &lo, &hi);
    double v = (double)x;
    switch (op) {
    case ISA_OP_V_MOV: return x;
    case ISA_OP_V_RELU: return x > 0 ? x : 0;
    case ISA_OP_V_AFFINE: v = v * (double)alpha + (double)beta; break;
    case ISA_OP_V_LRELU: if (x >= 0) return x; v = v * (double)alpha; break;
    case ISA_OP_V_CLIP:
        if (v < (double)alpha) v = (double)alpha;
        if (v > (double)beta) v = (double)beta;
        break;
    case ISA_OP_V_FLOOR: case ISA_OP_V_CEIL: case ISA_OP_V_ROUND: case ISA_OP_V_TRUNC: return x;
    case ISA_OP_V_SIGN: return (x > 0) - (x < 0);
    default: return 0;
    }
    return num_f64_to_int_sat(v, lo, hi);
}

double num_load_f64(const void *p, int dtype)
{
    switch (dtype) {
    case ISA_F16: { uint16_t h; memcpy(&h, p, 2); return num_f16_to_f32(h); }
    case ISA_BF16: { uint16_t h; memcpy(&h, p, 2); return num_bf16_to_f32(h); }
    case ISA_F32: { float f; memcpy(&f, p, 4); return f; }
    default: return (double)num_load_int(p, dtype);
    }
}

int64_t num_load_int(const void *p, int dtype)
{
    switch (dtype) {
    case ISA_I8: return *(const int8_t *)p;
    case ISA_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case ISA_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    default: {
        int64_t lo, hi;
        (void)lo; (void)hi;
        return num_f64_to_int_sat(num_load_f64(p, dtype), INT64_MIN / 2, INT64_MAX / 2);
    }
    }
}

void num_store_f64(void *p, int dtype, double v)
{
    int64_t lo, hi;
    switch (dtype) {
    case ISA_F16: { uint16_t h = num_f64_to_f16(v); memcpy(p, &h, 2); return; }
    case ISA_BF16: { uint16_t h = num_f64_to_bf16(v); memcpy(p, &h, 2); return; }
    case ISA_F32: { float f = num_f64_to_f32(v); memcpy(p, &f, 4); return; }
    default:
        num_int_range(dtype, &lo, &hi);
        num_store_int(p, dtype, num_f64_to_int_sat(v, lo, hi));
    }
}

void num_store_int(void *p, int dtype, int64_t v)
{
    switch (dtype) {
    case ISA_I8: *(int8_t *)p = (int8_t)num_sat(v, INT8_MIN, INT8_MAX); return;
    case ISA_I16: { int16_t x = (int16_t)num_sat(v, INT16_MIN, INT16_MAX); memcpy(p, &x, 2); return; }
    case ISA_I32: { int32_t x = (int32_t)num_sat(v, INT32_MIN, INT32_MAX); memcpy(p, &x, 4); return; }
    default: num_store_f64(p, dtype, (double)v);
    }
}
