/* quant.h - the quantised-op lowerings and the pieces they share
 * (qcommon.c): quantise / dequantise and integer matmuls (quant.c),
 * integer convolutions (qconv.c) and DynamicQuantizeLinear (dynquant.c).
 * See quant.c's header for the numerics and docs/backend.md "Quantised
 * ops". */
#ifndef ATOLL_COMPILER_LOWER_QUANT_H
#define ATOLL_COMPILER_LOWER_QUANT_H
#include "compiler/lower/lower.h"

/* v.cast from -> to of block sh (destination / source element strides). */
AtlInsn bk_q_cast(int from, int to, uint64_t dst, uint64_t src, const uint32_t sh[4], const int64_t ds[4],
                  const int64_t ss[4]);
/* acc -= a x b (i32) over block sh (compact strides cs), a and b read
 * with strides as / bs (stride-0 broadcasts make an outer product); tmp is
 * scratch of the block's size. */
void bk_q_sub_outer(BkCode *k, uint64_t acc, uint64_t tmp, uint64_t a, const int64_t as[4], uint64_t b,
                    const int64_t bs[4], const uint32_t sh[4], const int64_t cs[4]);
/* The requantisation of QLinearMatMul / QLinearConv: the i32 block acc
 * cast to f32 into f, times the multiplier (register mult read with
 * strides ms, or l->q_mult when mult is 0), then bk_q_tail with l's zero
 * point, range and output dtype into y. */
void bk_q_requant(BkCode *k, const BkLow *l, uint64_t acc, uint64_t f, uint64_t mult, const int64_t ms[4], uint64_t y,
                  const uint32_t sh[4], const int64_t cs[4]);
/* The quantising tail on the f32 block f (shape sh, compact strides cs):
 * round half to even, add the zero point (register z read with strides
 * zs, or the scalar zp when z is 0), clip to [lo, hi], cast into y (ydt). */
void bk_q_tail(BkCode *k, uint64_t f, uint64_t z, const int64_t zs[4], float zp, int lo, int hi, int ydt, uint64_t y,
               const uint32_t sh[4], const int64_t cs[4]);
/* The integer requantisation of Int8Conv / Int8MatMul (BkLow.q_mode
 * BK_RQ_INT): v.requant of the i32 block acc (shape sh) with the
 * per-channel (mult, shift) pairs at rq, ties to even, l's zero point and
 * clamp lowered by `shift` (128 for a uint8 output, then widened by the
 * caller), into the i8 block y. Shared by lower/qmatrix.c and the int8
 * members of a layer group (lower/chain.c). */
void bk_q_requant_int(BkCode *k, const BkLow *l, uint64_t acc, uint64_t rq, uint64_t y, const uint32_t sh[4], int shift);
/* The requantisation modes of the int8 matrix layers (BkLow.q_mode):
 * i32 sums out (ConvInteger), f32 multiplier (QLinearConv), integer
 * pairs (Int8Conv, Int8MatMul). */
enum { BK_RQ_NONE, BK_RQ_FLOAT, BK_RQ_INT };
/* The range of a quantised IR type (int8 or uint8). */
void bk_q_range(int irdt, int *lo, int *hi);
/* Constant tensor t (index < 0: absent) as its single value; -1 if it is
 * not a constant of one value. */
int bk_q_const_one(const IrGraph *g, int t, double *v);
/* An operand block in i8 at a8 (strides ds): int8 as loaded at raw
 * (strides cs; returns raw, ds unused); uint8 (chip i16) minus 128 in
 * place, then narrowed into a8 (both exact; returns a8). */
uint64_t bk_q_to_i8(BkCode *k, int dt, uint64_t raw, uint64_t a8, const uint32_t sh[4], const int64_t cs[4],
                    const int64_t ds[4]);
/* Reduction op (v.rsum, v.rmax, v.rmin) of the contiguous block src
 * (dtype dt, shape sh) along axis into dst (dtype ot). */
void bk_q_reduce(BkCode *k, int op, int dt, int ot, uint64_t dst, uint64_t src, const uint32_t sh[4], int axis);
/* A contiguous vector of n elements of dtype dt from DRAM (a per-tile load). */
void bk_q_load_vec(BkCode *k, int dt, uint64_t dst, uint64_t src, int n);
/* Zero point of an operand (tensor t: a constant, or absent when < 0)
 * shifted into i8 (minus `shift`) as a malloc'd i32 vector of n (one
 * value: broadcast; else one per index); *any = 1 if some value is not 0.
 * NULL with the node named on error. */
int32_t *bk_q_zero_points(BkCtx *c, int node, int t, int64_t n, int shift, int *any, AtlErr *e);

/* n as a x b with both at most 65535 (a = 1 when n fits); -1 if impossible. */
int bk_q_split_dim(int64_t n, uint32_t *a, uint32_t *b);

/* quant.c: QuantizeLinear and DequantizeLinear; MatMulInteger and QLinearMatMul. */
int bk_lower_qdq(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
int bk_lower_qmatmul(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* qconv.c: ConvInteger and QLinearConv. */
int bk_lower_qconv(BkCtx *c, int node, BkLayer *g, AtlErr *e);
/* qmatrix.c: Int8Conv, Int8MatMul, and QLinearConv / ConvInteger whose
 * weights are a constant with zero point 0 (bk_qmatrix_takes says so):
 * tiled with K splits on the i8 matrix unit. */
int bk_lower_qmatrix(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
int bk_qmatrix_takes(const BkCtx *c, int node);
/* qelem.c: Int8Add's register program (called by lower/elem_prog.c) and
 * Int8GlobalAveragePool. */
int bk_int8_add_program(const IrGraph *g, const IrNode *nd, BkLow *l, int nin, int *out, int *nscratch);
int bk_lower_int8_gap(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* dynquant.c: DynamicQuantizeLinear. */
int bk_lower_dynquant(BkCtx *c, int node, BkLayer *g, AtlErr *e);
#endif
