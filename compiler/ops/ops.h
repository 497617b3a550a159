/* ops.h - the operator table: one row per ONNX op with its supported opset
 * range, a shape-inference function and an evaluation function.
 *
 * Adding an op is adding a row to ops/table.c plus its two functions.
 *
 * infer: sets dtype/ndim/dims of every present output from the inputs'
 *   dtypes and shapes. An input's data is available (non-NULL) only when it is
 *   a constant; when a shape depends on data that is unknown, infer leaves
 *   the dims (or rank) unknown (-1) instead of failing. Inconsistent shapes
 *   are errors. In the interpreter every input has data, so infer then yields
 *   fully known shapes.
 * eval: all inputs have data; every present output has the shape infer gave
 *   it and zeroed data of that size. eval fills the outputs.
 * Both return 0 or -1 with a message in c->e (the caller prefixes the node).
 */
#ifndef ATOLL_COMPILER_OPS_H
#define ATOLL_COMPILER_OPS_H
#include "compiler/ir/ir.h"

typedef struct IrOpCtx {
    const IrNode *n;
    int opset;
    IrTensor **in;   /* in[i] is NULL for an omitted optional input */
    int nin;
    IrTensor **out;  /* out[i] is NULL for an omitted optional output */
    int nout;
    AtlErr *e;
} IrOpCtx;

typedef int (*IrOpFn)(IrOpCtx *c);

typedef struct IrOpDef {
    const char *name;
    int since, until;   /* supported default-domain opset range */
    int min_in, max_in; /* input count range */
    IrOpFn infer, eval;
} IrOpDef;

/* The row for `op` at `opset`, or NULL. */
const IrOpDef *ir_op_find(const char *op, int opset);
/* Whether a row for `op` exists at any opset. */
int ir_op_known(const char *op);
/* "Abs Add ..." - the supported op names, for error messages. */
const char *ir_op_names(void);
const IrOpDef *ir_op_table(int *n);

/* Checks that every node of g is supported at g->opset. One unsupported
 * node: the error names it, its op and the opset. Several: the error counts
 * them and lists, per op, the nodes (as many lines as fit the message). */
int ir_check_supported(const IrGraph *g, AtlErr *e);
/* Every unsupported op of g, one line per op ("  op 'X' (opset 13) is not
 * supported (...): 3 nodes: 'a', 'b', 'c'\n"), malloc'd (the caller
 * frees); NULL when every op is supported (or out of memory). *nops and
 * *nnodes (may be NULL) get the counts. */
char *ir_unsupported_report(const IrGraph *g, int *nops, int *nnodes);

/* Runs a node's infer function on graph tensors (used by shape inference,
 * constant folding and the interpreter). */
int ir_node_infer(const IrGraph *g, const IrNode *n, IrTensor **in, IrTensor **out, AtlErr *e);

/* The interpolation of axis k of Resize/Upsample node `node` (scales, sizes
 * and roi constant) exactly as eval_resize computes it, as a dense
 * row-major [out][in] matrix m (taps whose clamped indices coincide are
 * summed) and per output index outside[o] (tf_crop_and_resize: that output
 * takes *extrap instead). Used by the backend (lower/resize.c). Returns
 * 0, or -1 with e set. */
int resize_axis_matrix(const IrGraph *g, int node, int k, double *m, uint8_t *outside, double *extrap, AtlErr *e);

/* ---- helpers shared by the ops_*.c files ---- */
int op_fail(IrOpCtx *c, const char *fmt, ...) ATL_PRINTF(2, 3);
/* Normalises a possibly negative axis against rank r. */
int op_axis(IrOpCtx *c, int64_t axis, int r, int64_t *out);
/* Reads an integer list either from attribute `attr` (when opset < since_input
 * or the input is absent) or from input `idx`. Returns 1 if found, 0 if
 * absent, 2 if the input exists but is not constant, -1 on error. */
int op_int_list(IrOpCtx *c, const char *attr, int idx, int64_t *vals, int max, int *n);
/* Copies dtype and shape. */
void op_same_shape(IrTensor *dst, const IrTensor *src);
/* Numpy broadcast of in shapes into out (dims may be unknown). */
int op_broadcast_shape(IrOpCtx *c, IrTensor **ins, int n, IrTensor *out);
int op_dtype_is_float(int dt);
/* Einsum's equation against its inputs' ranks (ops/extra.c; the backend's
 * Einsum rewrite reads it too): letters per input axis and of the output,
 * ellipsis dims as the letters '0'.. so they broadcast like named ones,
 * the implicit output (no "->") made explicit; size[letter] its dimension. */
#define OP_EINSUM_MAXIN 8
typedef struct OpEinsum {
    int nin;
    char in[OP_EINSUM_MAXIN][IR_MAXDIM + 1];
    char out[IR_MAXDIM + 1];
    int64_t size[128];
} OpEinsum;
int op_einsum_parse(IrOpCtx *c, OpEinsum *q);
/* Largest dimension an op may produce from attribute/input values (2^40);
 * larger values from a malformed model are errors, never overflow. */
#define OP_MAX_DIM ((int64_t)1 << 40)
int op_check_dim(IrOpCtx *c, const char *what, double v);

/* nn.c: the integer convolution and matmul that ConvInteger, QLinearConv,
 * MatMulInteger, QLinearMatMul and the int8 operators (ops/int8.c) share.
 * op_conv_shape: the output shape of a convolution of x by w (node c's
 * attributes) in dtype. op_conv_int: sum (x - xz)(w - wz) over each window
 * (padding contributes 0; wz NULL, one value or one per output channel),
 * exact int32, as a malloc'd array of out[0]'s shape (NULL with c->e set).
 * op_matmul_shape: numpy matmul shape. op_matmul_int: acc (y's size) =
 * sum (a - az) b, batched and broadcast like MatMul. */
int op_conv_shape(IrOpCtx *c, const IrTensor *x, const IrTensor *w, const IrTensor *bias, int dtype);
int32_t *op_conv_int(IrOpCtx *c, const IrTensor *x, int32_t xz, const IrTensor *w, const IrTensor *wz);
int op_matmul_shape(IrOpCtx *c, const IrTensor *a, const IrTensor *b, IrTensor *y);
int op_matmul_int(IrOpCtx *c, const IrTensor *a, const IrTensor *az, const IrTensor *b, int32_t *acc);

/* the op implementations, by file */
#define OP(name) int infer_##name(IrOpCtx *c); int eval_##name(IrOpCtx *c);
#include "compiler/ops/list.h"
#undef OP
#endif
