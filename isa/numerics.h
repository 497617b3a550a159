/* numerics.h - the numeric semantics every engine shares (and the compiler's
 * reference interpreter will share): fp16/bf16 <-> fp32 conversion, rounding
 * and saturating casts, requantisation, integer saturating arithmetic and the
 * activation functions. docs/isa-numerics.md states every rule precisely;
 * the simulator never does arithmetic on operands except through these.
 */
#ifndef ATOLL_ISA_NUMERICS_H
#define ATOLL_ISA_NUMERICS_H
#include <stdint.h>

/* IEEE binary16 and bfloat16. Encoding rounds to nearest, ties to even;
 * overflow gives +-inf; NaN stays NaN (quiet bit set, sign and the top
 * payload bits kept); subnormals are produced and decoded; -0 is kept. */
float num_f16_to_f32(uint16_t h);
float num_bf16_to_f32(uint16_t h);
uint16_t num_f32_to_f16(float f);
uint16_t num_f32_to_bf16(float f);
/* Directly from double (one rounding, no double rounding via f32). */
uint16_t num_f64_to_f16(double x);
uint16_t num_f64_to_bf16(double x);
float num_f64_to_f32(double x);
/* The bits of x in a binary format of eb exponent and mb mantissa bits
 * (eb + mb < 32), by the rules above: what the three encoders share. */
uint32_t num_f64_to_bits(double x, int eb, int mb);

/* A float conv sums its products over the input channels of a group in
 * blocks of NUM_CONV_CBLOCK channels: block by block, within a block tap
 * by tap (kh, kw), within a tap channel by channel. A compiler that cuts a
 * conv's input channels into chunks of whole blocks (each chunk one conv,
 * acc=1 after the first) therefore gets the uncut conv's sums bit for bit,
 * whatever the chunk size: schedules that tile a layer differently agree
 * (compiler/lower/conv.c says where its chunks are not whole blocks). */
#define NUM_CONV_CBLOCK 8

/* Round half to even of a finite double to an integer-valued double. */
double num_round_half_even(double x);
/* Float -> integer of range [lo, hi]: round half to even, saturate, NaN -> 0. */
int64_t num_f64_to_int_sat(double x, int64_t lo, int64_t hi);
int64_t num_sat(int64_t x, int64_t lo, int64_t hi);
/* Range of an integer dtype (ISA_I8/I16/I32); 0 for others. */
int num_int_range(int dtype, int64_t *lo, int64_t *hi);
int num_is_float(int dtype);

/* Requantise one i32 to i8:
 *   s = 31 + shift, valid for 1 <= s <= 62 (returns -1 otherwise),
 *   p = (int64)x * mult (exact),
 *   r = sign(p) * floor((|p| + 2^(s-1)) / 2^s)   (round half away from zero),
 *   y = clamp(zp + r, lo, hi).                                              */
int num_requant(int32_t x, int32_t mult, int32_t shift, int32_t zp,
                int32_t lo, int32_t hi, int8_t *y);
/* The same with the tie rule chosen: even = 1 rounds ties of p / 2^s to
 * even (ONNX QuantizeLinear's rule; v.requant with `even`), 0 away from
 * zero. The result is clamped to [lo, hi] only (no i8 narrowing), so the
 * reference interpreter can requantise into any integer range. */
int num_requant_round(int32_t x, int32_t mult, int32_t shift, int32_t zp, int32_t lo, int32_t hi, int even,
                      int32_t *y);
/* The integer multiplier of a real multiplier m > 0 for num_requant:
 * m ~= mult * 2^-(31 + shift) with mult in [2^30, 2^31) (m's 31 leading
 * bits, rounded half to even) and 1 <= 31 + shift <= 62; when m is too
 * small for that, mult keeps fewer bits (31 + shift = 62, mult =
 * round(m * 2^62), possibly 0), and when m >= 2^30, -1. Deterministic:
 * the quantiser, the interpreter and the compiler all derive the pair
 * from the same double here. */
int num_quant_multiplier(double m, int32_t *mult, int32_t *shift);

/* Integer binary ops of vector unit (v.add/sub/mul/max/min, comparisons
 * v.eq/lt/le giving 0/1, bitwise v.and/or/xor, v.div toward zero, v.mod with
 * the divisor's sign) by ISA opcode: computed exactly in 64 bits, then
 * saturated to the dtype's range (i8, i16 and i32 all saturate; so does
 * INT_MIN / -1). A zero divisor gives 0 here; the simulator faults first
 * (num_int_divisor_faults). Returns 0 for an op that is not binary. v.sel is
 * not a binop (num_is_nonzero). */
int64_t num_int_binop(int op, int64_t a, int64_t b, int dtype);
/* Whether integer op `op` with divisor b is a data fault (v.div/v.mod by 0). */
int num_int_divisor_faults(int op, int64_t b);
/* Float binary ops in fp32: arithmetic, max/min (NaN wins), comparisons
 * (IEEE: NaN unordered, -0 == +0; result 1.0f / 0.0f), v.div (IEEE), v.mod
 * (fmodf: the sign of the dividend). */
float num_f32_binop(int op, float a, float b);
/* v.sel's condition: an element is "true" when non-zero; for floats NaN is
 * true and -0 is zero. */
int num_is_nonzero(const void *p, int dtype);
/* Float unary ops (v.mov .. v.rsqrt, v.floor/ceil/round/trunc, v.sign,
 * v.sin .. v.erf) in fp32 using libm's float functions. v.round is half to
 * even; v.sign keeps NaN and maps both zeros to +0. */
float num_f32_unop(int op, float x, float alpha, float beta);
/* Integer unary ops (mov, affine, relu, lrelu, clip): computed in double
 * (exact for every i32), then round half to even and saturate; floor, ceil,
 * round and trunc are exact copies, sign gives -1/0/+1. Transcendental ops
 * are not defined for integers (returns 0; the simulator rejects them). */
int64_t num_int_unop(int op, int64_t x, float alpha, float beta, int dtype);
/* Whether a unary opcode is transcendental (priced at transcendental_cycles)
 * and float-only. */
int num_op_is_transcendental(int op);
/* Whether op accepts operand dtype: transcendentals need a float dtype,
 * v.and/or/xor an integer one; every other op accepts any dtype. */
int num_op_dtype_ok(int op, int dtype);
/* v.rargmax / v.rargmin step: whether value v at a later index replaces the
 * current best. Strictly greater (less) replaces; equal replaces only with
 * `last`; a NaN is the extreme (the first NaN, or the last NaN with last). */
int num_arg_replaces(int op, double v, double best, int last);

/* Element access by dtype. Loads widen exactly (ints to int64 / double,
 * floats to double). num_store_f64 rounds to the dtype (floats: nearest even
 * directly from double; ints: half to even + saturation, NaN -> 0). */
double num_load_f64(const void *p, int dtype);
int64_t num_load_int(const void *p, int dtype);
void num_store_f64(void *p, int dtype, double v);
void num_store_int(void *p, int dtype, int64_t v); /* saturates */
#endif
