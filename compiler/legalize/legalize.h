/* legalize.h - the graph made ready for lowering.
 *   rewrite_*.c  ops the chip runs as other ops (ConvTranspose, RNN/GRU/
 *                LSTM, Einsum, Det, 3-D conv/pools, variadic ops, ...),
 *                rewritten on the backend's own copy of the graph
 *                (rewrite_ops.c holds the table of rules)
 *   pattern.c    fused activations and the Gelu pattern: nodes absorbed
 *                into another layer (BkCtx.skip, act_on, gelu_src) */
#ifndef ATOLL_COMPILER_LEGALIZE_LEGALIZE_H
#define ATOLL_COMPILER_LEGALIZE_LEGALIZE_H
#include "compiler/target/target.h"

/* pattern.c */
/* Marks nodes absorbed by patterns (fused activations, Gelu). */
int bk_match_patterns(BkCtx *c, AtlErr *e);

/* rewrite_convt.c: ConvTranspose -> (Reshape, Pad, Reshape, [Pad],) Conv
 * on the backend's own copy of the graph; count = live nodes some
 * rewrite_*.c replaces (ConvTranspose, RNN, GRU, LSTM). */
int bk_rewrite_count(const IrGraph *g);
int bk_rewrite_convtranspose(IrGraph *g, AtlErr *e);
/* rewrite_rnn.c: RNN / GRU / LSTM unrolled into Gemm, element-wise ops
 * and views on the same copy; count = live RNN, GRU and LSTM nodes. */
int bk_rewrite_rnn_count(const IrGraph *g);
int bk_rewrite_rnn(IrGraph *g, AtlErr *e);

/* rewrite_ops.c: ops the chip runs as other ops (variadic Sum/Mean/Max/
 * Min of more than BK_MAXIN inputs, InstanceNormalization, LRN, run-time
 * BatchNormalization incl. training mode, MeanVarianceNormalization, Reduce*
 * over non-adjacent axes, Einsum (rewrite_einsum.c), Det (rewrite_det.c),
 * and rewrite_3d.c's 3-D Conv/pools and dilated MaxPool), rewritten on
 * the backend's own copy; count = nodes to rewrite. */
int bk_rewrite_ops_count(const IrGraph *g);
int bk_rewrite_ops(IrGraph *g, AtlErr *e);
/* rewrite_3d.c: which nodes it rewrites, and the rewrite of one. */
int bk_rewrite_3d_applies(const IrGraph *g, int node);
int bk_rewrite_3d(IrGraph *g, int node, AtlErr *e);
/* rewrite_einsum.c: Einsum of one or two inputs as Transpose / Reshape /
 * Gather / ReduceSum / MatMul. */
int bk_rewrite_einsum(IrGraph *g, int node, AtlErr *e);
/* rewrite_det.c: Det of n x n matrices, n <= 3, by the explicit formula
 * (Gathers, Muls, ReduceSums); larger n fail naming the node and n. */
int bk_rewrite_det(IrGraph *g, int node, AtlErr *e);

/* rewrite_int.c: BitShift(x, s) -> BitShift(x, 2^s) marked with the
 * attribute BK_SHIFT_BY_POW2 (applies: not yet marked). */
#define BK_SHIFT_BY_POW2 "atoll_shift_by_pow2"
int bk_rewrite_bitshift_applies(const IrGraph *g, int node);
int bk_rewrite_bitshift(IrGraph *g, int node, AtlErr *e);

/* rewrite_pool_idx.c: MaxPool with its Indices output as the pool,
 * per-tap strided Slices, Equal and a Where chain (applies: Indices present). */
int bk_rewrite_pool_idx_applies(const IrGraph *g, int node);
int bk_rewrite_pool_idx(IrGraph *g, int node, AtlErr *e);

/* rewrite_util.c: graph building for the rewrites. New tensors are
 * named "<base>#<what>"; each returns the new tensor (or node) or -1. */
int bk_rw_tensor(IrGraph *g, const char *base, const char *what, AtlErr *e);
int bk_rw_int_const(IrGraph *g, const char *base, const char *what, const int64_t *v, int n, AtlErr *e);
/* A constant of IR dtype `dtype` (v: its raw elements; NULL: zeros). */
int bk_rw_typed_const(IrGraph *g, const char *base, const char *what, int dtype, int ndim, const int64_t *dims,
                      const void *v, AtlErr *e);
int bk_rw_float_const(IrGraph *g, const char *base, const char *what, int ndim, const int64_t *dims, const float *v,
                      AtlErr *e);
/* Node op(ins) -> out (returns the node). */
int bk_rw_node(IrGraph *g, const char *op, const char *name, const int *ins, int nin, int out, AtlErr *e);
/* Node op(ins) -> a new tensor <base>#<what> (returns the tensor). */
int bk_rw_op(IrGraph *g, const char *op, const char *base, const char *what, const int *ins, int nin, AtlErr *e);
int bk_rw_reshape(IrGraph *g, const char *base, const char *what, int x, const int64_t *dims, int nd, AtlErr *e);
/* The same, writing tensor `out` (-1: a new one). */
int bk_rw_reshape_to(IrGraph *g, const char *base, const char *what, int x, const int64_t *dims, int nd, int out, AtlErr *e);
/* x seen as dims: a reshaped copy of a constant, else a Reshape node. */
int bk_rw_view(IrGraph *g, const char *base, const char *what, int x, const int64_t *dims, int nd, AtlErr *e);
/* Constant Pad of x (rank r) by pads (2 r values) with `value`. */
int bk_rw_pad(IrGraph *g, const char *base, const char *what, int x, const int64_t *pads, int r, float value, AtlErr *e);
/* x[..., i, ...] along axis (the axis dropped): Gather by a scalar constant. */
int bk_rw_index(IrGraph *g, const char *base, const char *what, int x, int axis, int64_t i, AtlErr *e);
/* op (Sum / Max / Min) of n tensors as a chain of nodes of at most
 * BK_MAXIN inputs; the last writes `out` (-1: a new tensor; one input
 * is then returned as it is). */
int bk_rw_fold(IrGraph *g, const char *op, const char *base, const char *what, const int *ins, int n, int out, AtlErr *e);
/* Slice of x on n axes, [starts, ends) each, step 1 (before opset 10,
 * where Slice takes attributes the chip does not lower: Gathers). */
int bk_rw_slice(IrGraph *g, const char *base, const char *what, int x, int n, const int64_t *axes, const int64_t *starts,
                const int64_t *ends, AtlErr *e);
/* Integer list attribute of cnt values (dflt when absent); -1 wrong length. */
int bk_rw_attr_ints(const IrNode *n, const char *name, int64_t *v, int cnt, int64_t dflt);
/* Transpose of x (rank r) by perm, into out (or a new tensor if out < 0). */
int bk_rw_transpose(IrGraph *g, const char *base, const char *what, int x, const int64_t *perm, int r, int out, AtlErr *e);
/* Reduce op (ReduceSum, ReduceMean, ...) of x over axes, its axes an
 * attribute or an input as the opset wants, into out (or a new tensor). */
int bk_rw_reduce(IrGraph *g, const char *op, const char *base, const char *what, int x, const int64_t *axes, int na,
                 int keepdims, int out, AtlErr *e);
#endif
