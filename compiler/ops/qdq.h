/* qdq.h - QDQ node units and the int8 operators they run as.
 *
 * A QDQ model (ONNX Runtime's quantize_static format, `atoll quantize`'s
 * output) spells an int8 operator as DequantizeLinear -> float op ->
 * QuantizeLinear. qdq_fuse finds every such node unit and replaces it by
 * the int8 operator of ops/int8.c (Int8Conv, Int8MatMul, Int8Add,
 * Int8GlobalAveragePool) or by the op itself on the int8 tensor (MaxPool,
 * Concat and the data-movement ops when the scales agree). The reference
 * interpreter runs every QDQ graph through it, and so does the compiler,
 * so both compute the same integer function; docs/quantization.md lists
 * the units and their semantics.
 *
 * The unit ops (qdq_unit_op) are also what `atoll quantize` wraps in
 * QuantizeLinear / DequantizeLinear pairs, so every unit it writes is one
 * qdq_fuse recognises. */
#ifndef ATOLL_COMPILER_OPS_QDQ_H
#define ATOLL_COMPILER_OPS_QDQ_H
#include "compiler/ir/ir.h"

/* Rewrites every QDQ node unit of g (shapes inferred, nodes in
 * topological order) into its int8 operator. New nodes are appended and
 * the replaced ones marked dead: call ir_toposort afterwards. *nunits
 * (may be NULL) gets the number of units fused. A unit whose constants do
 * not fit the int8 operators (a weight zero point that is not 0, a
 * multiplier >= 2^30, an accumulator that could leave int32) is left as
 * it is. 0, or -1 with e set (out of memory). */
int qdq_fuse(IrGraph *g, int *nunits, AtlErr *e);
/* How many units qdq_fuse would fuse (nothing is changed). */
int qdq_count_units(const IrGraph *g);

/* The role an op plays in a QDQ unit: QDQ_MATRIX (Conv, Gemm, MatMul with
 * constant weights), QDQ_ADD (Add of two activations), QDQ_POOL
 * (GlobalAveragePool), QDQ_MOVE (ops that move int8 values unchanged:
 * MaxPool, Concat, Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
 * Identity, Slice, Pad with a constant zero), QDQ_ACT (Relu, Clip, fused
 * into the unit before it), or QDQ_NONE. */
enum { QDQ_NONE, QDQ_MATRIX, QDQ_ADD, QDQ_POOL, QDQ_MOVE, QDQ_ACT };
int qdq_unit_op(const char *op);
#endif
