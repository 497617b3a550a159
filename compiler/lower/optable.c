/* optable.c - what the backend knows about an op, in one table: which
 * lowering runs it and on which dtypes.
 *
 * Each row: the op, its lowering, and its dtype rule:
 *   FLOAT     float tensors only;
 *   INT(k)    also integer and bool tensors, where the first k inputs
 *             (k = ALL: every input) carry data of the output's storage
 *             dtype and the rest set shapes or are indices; INT(0): the
 *             inputs may have any dtype (comparisons, IsNaN, Where's
 *             condition);
 *   OWN       the lowering checks its own mixed dtypes (index-producing
 *             and index-consuming ops, quantised ops).
 * PROG marks the ops the elementwise lowering runs as a register program
 * of lower/elem_prog.c (that table holds the programs, per attribute and
 * dtype variant); a node of such an op whose variant has no program is
 * refused like an op with no row. Ops that legalize/ rewrites into others
 * before lowering (ConvTranspose, RNN/GRU/LSTM, Einsum, Det, ...: the
 * rules of legalize/rewrite_ops.c and the rewrite_*.c files) never reach
 * this table.
 * Integer vector arithmetic saturates where ONNX wraps; the chip has no
 * 64-bit integers (target/dtype.c, docs/backend.md "Data types"). */
#include <string.h>
#include "compiler/lower/lower.h"
#include "compiler/lower/quant.h"

typedef int (*LowerFn)(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
enum { FLOAT = -3, OWN = -2, ALL = -1 };
#define INT(k) (k)
enum { PROG = 1 };

typedef struct OpRow {
    const char *op;
    LowerFn lower;
    int ints;      /* FLOAT, OWN, or INT(k) */
    int flags;     /* PROG */
} OpRow;

static const OpRow rows[] = {
    /* matrix unit */
    {"Conv", bk_lower_conv, FLOAT, 0},
    {"Gemm", bk_lower_mm, FLOAT, 0},
    {"MatMul", bk_lower_mm, FLOAT, 0},
    {"MaxPool", bk_lower_pool, INT(1), 0},
    {"AveragePool", bk_lower_pool, FLOAT, 0},
    {"Resize", bk_lower_move, INT(1), 0},   /* nearest as copies; interpolating: lower/resize.c via move */
    {"Upsample", bk_lower_move, INT(1), 0},
    /* vector unit: elementwise, instruction per op or fixed step lists (lower/vec.c) */
    {"Add", bk_lower_elem, INT(ALL), 0}, {"Sub", bk_lower_elem, INT(ALL), 0}, {"Mul", bk_lower_elem, INT(ALL), 0},
    {"Div", bk_lower_elem, INT(ALL), 0}, {"Max", bk_lower_elem, INT(ALL), 0}, {"Min", bk_lower_elem, INT(ALL), 0},
    {"Pow", bk_lower_elem, INT(1), 0}, {"Relu", bk_lower_elem, INT(1), 0}, {"LeakyRelu", bk_lower_elem, FLOAT, 0},
    {"Clip", bk_lower_elem, INT(ALL), 0}, {"Sigmoid", bk_lower_elem, FLOAT, 0}, {"Tanh", bk_lower_elem, FLOAT, 0},
    {"Exp", bk_lower_elem, FLOAT, 0}, {"Log", bk_lower_elem, FLOAT, 0}, {"Sqrt", bk_lower_elem, FLOAT, 0},
    {"Reciprocal", bk_lower_elem, FLOAT, 0}, {"Neg", bk_lower_elem, INT(1), 0}, {"Abs", bk_lower_elem, INT(1), 0},
    {"HardSigmoid", bk_lower_elem, FLOAT, 0}, {"HardSwish", bk_lower_elem, FLOAT, 0}, {"Gelu", bk_lower_elem, FLOAT, 0},
    {"BatchNormalization", bk_lower_elem, FLOAT, 0}, {"Identity", bk_lower_identity, INT(1), 0},
    {"PRelu", bk_lower_elem, FLOAT, 0}, {"Elu", bk_lower_elem, FLOAT, 0}, {"Celu", bk_lower_elem, FLOAT, 0},
    {"Selu", bk_lower_elem, FLOAT, 0}, {"Softplus", bk_lower_elem, FLOAT, 0}, {"Softsign", bk_lower_elem, FLOAT, 0},
    {"Shrink", bk_lower_elem, FLOAT, 0}, {"ThresholdedRelu", bk_lower_elem, FLOAT, 0}, {"Sum", bk_lower_elem, FLOAT, 0},
    {"Mean", bk_lower_elem, FLOAT, 0},
    /* vector unit: register programs of lower/elem_prog.c */
    {"Floor", bk_lower_elem, FLOAT, PROG}, {"Ceil", bk_lower_elem, FLOAT, PROG}, {"Round", bk_lower_elem, FLOAT, PROG},
    {"Sin", bk_lower_elem, FLOAT, PROG}, {"Cos", bk_lower_elem, FLOAT, PROG}, {"Tan", bk_lower_elem, FLOAT, PROG},
    {"Asin", bk_lower_elem, FLOAT, PROG}, {"Acos", bk_lower_elem, FLOAT, PROG}, {"Atan", bk_lower_elem, FLOAT, PROG},
    {"Sinh", bk_lower_elem, FLOAT, PROG}, {"Cosh", bk_lower_elem, FLOAT, PROG}, {"Asinh", bk_lower_elem, FLOAT, PROG},
    {"Acosh", bk_lower_elem, FLOAT, PROG}, {"Atanh", bk_lower_elem, FLOAT, PROG}, {"Erf", bk_lower_elem, FLOAT, PROG},
    {"Sign", bk_lower_elem, FLOAT, PROG}, {"Mod", bk_lower_elem, INT(ALL), PROG},
    {"Equal", bk_lower_elem, INT(0), PROG}, {"Less", bk_lower_elem, INT(0), PROG},
    {"Greater", bk_lower_elem, INT(0), PROG}, {"LessOrEqual", bk_lower_elem, INT(0), PROG},
    {"GreaterOrEqual", bk_lower_elem, INT(0), PROG}, {"IsNaN", bk_lower_elem, INT(0), PROG},
    {"IsInf", bk_lower_elem, INT(0), PROG}, {"Not", bk_lower_elem, INT(ALL), PROG},
    {"And", bk_lower_elem, INT(ALL), PROG}, {"Or", bk_lower_elem, INT(ALL), PROG},
    {"Xor", bk_lower_elem, INT(ALL), PROG}, {"Where", bk_lower_elem, INT(0), PROG},
    {"BitShift", bk_lower_elem, INT(ALL), PROG},
    {"Cast", bk_lower_cast, OWN, 0}, {"CastLike", bk_lower_cast, OWN, 0},
    /* vector unit: reductions, softmax, normalisation */
    {"ReduceSum", bk_lower_reduce, INT(1), 0}, {"ReduceMax", bk_lower_reduce, INT(1), 0},
    {"ReduceMin", bk_lower_reduce, INT(1), 0}, {"ReduceMean", bk_lower_reduce, FLOAT, 0},
    {"GlobalAveragePool", bk_lower_reduce, FLOAT, 0}, {"GlobalMaxPool", bk_lower_reduce, FLOAT, 0},
    {"ReduceSumSquare", bk_lower_reduce, FLOAT, 0}, {"ReduceL1", bk_lower_reduce, FLOAT, 0},
    {"ReduceL2", bk_lower_reduce, FLOAT, 0}, {"ReduceLogSum", bk_lower_reduce, FLOAT, 0},
    {"ReduceLogSumExp", bk_lower_reduce, FLOAT, 0}, {"ReduceProd", bk_lower_reduce, FLOAT, 0},
    {"Softmax", bk_lower_softmax, FLOAT, 0}, {"LogSoftmax", bk_lower_softmax, FLOAT, 0},
    {"LayerNormalization", bk_lower_layernorm, FLOAT, 0},
    /* data movement: strided DMA copies (lower/move.c) */
    {"Transpose", bk_lower_move, INT(1), 0}, {"Concat", bk_lower_move, INT(ALL), 0},
    {"Slice", bk_lower_move, INT(1), 0}, {"Split", bk_lower_move, INT(1), 0}, {"Gather", bk_lower_move, INT(1), 0},
    {"Pad", bk_lower_move, INT(1), 0}, {"Expand", bk_lower_move, INT(1), 0}, {"Reshape", bk_lower_move, INT(1), 0},
    {"Flatten", bk_lower_move, INT(1), 0}, {"Squeeze", bk_lower_move, INT(1), 0},
    {"Unsqueeze", bk_lower_move, INT(1), 0}, {"Dropout", bk_lower_move, INT(1), 0},
    {"Tile", bk_lower_move, FLOAT, 0}, {"DepthToSpace", bk_lower_move, FLOAT, 0},
    {"SpaceToDepth", bk_lower_move, FLOAT, 0},
    /* index-producing and index-consuming ops */
    {"ArgMax", bk_lower_arg, OWN, 0}, {"ArgMin", bk_lower_arg, OWN, 0}, {"Hardmax", bk_lower_arg, OWN, 0},
    {"TopK", bk_lower_topk, OWN, 0}, {"NegativeLogLikelihoodLoss", bk_lower_loss, OWN, 0},
    {"SoftmaxCrossEntropyLoss", bk_lower_loss, OWN, 0}, {"Trilu", bk_lower_trilu, OWN, 0},
    {"OneHot", bk_lower_onehot, OWN, 0}, {"GatherElements", bk_lower_gather_elements, OWN, 0},
    {"GatherND", bk_lower_gather_nd, OWN, 0}, {"ScatterElements", bk_lower_gather_elements, OWN, 0},
    {"Scatter", bk_lower_gather_elements, OWN, 0}, {"ScatterND", bk_lower_gather_nd, OWN, 0},
    {"ReverseSequence", bk_lower_revseq, OWN, 0},
    /* quantised ops */
    {"QuantizeLinear", bk_lower_qdq, OWN, 0}, {"DequantizeLinear", bk_lower_qdq, OWN, 0},
    {"MatMulInteger", bk_lower_qmatmul, OWN, 0}, {"QLinearMatMul", bk_lower_qmatmul, OWN, 0},
    {"ConvInteger", bk_lower_qconv, OWN, 0}, {"QLinearConv", bk_lower_qconv, OWN, 0},
    {"DynamicQuantizeLinear", bk_lower_dynquant, OWN, 0},
    /* the int8 operators of QDQ node units (ops/int8.c) */
    {"Int8Conv", bk_lower_qmatrix, OWN, 0}, {"Int8MatMul", bk_lower_qmatrix, OWN, 0},
    {"Int8Add", bk_lower_elem, OWN, 0}, {"Int8GlobalAveragePool", bk_lower_int8_gap, OWN, 0},
};

static const OpRow *row_of(const char *op)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) if (!strcmp(rows[i].op, op)) return &rows[i];
    return NULL;
}

int bk_op_lowered(const char *op) { return row_of(op) != NULL; }

int bk_check_dtypes(const BkCtx *c, int node, AtlErr *e)
{
    const IrGraph *g = c->g;
    const IrNode *n = &g->nodes[node];
    if (c->gelu_src[node] >= 0) return 0;   /* a float pattern */
    for (int k = 0; k < n->nout; k++) {
        int t = n->out[k];
        if (t >= 0 && bk_tensor_dt(c, t) < 0)
            return bk_fail(c, node, e, "output '%s' has dtype %s, which the chip cannot hold", g->t[t].name, ir_dtype_name(g->t[t].dtype));
    }
    const OpRow *r = row_of(n->op);
    if (r && r->ints == OWN) return 0;
    int yt = -1;                             /* the first output present (RNN's are optional) */
    for (int k = 0; k < n->nout && yt < 0; k++) yt = n->out[k];
    if (yt < 0) return 0;
    int ydt = bk_tensor_dt(c, yt);
    int ints = r ? r->ints : FLOAT;
    int lim = ints >= 0 ? ints : n->nin;
    if (lim > n->nin) lim = n->nin;
    if (!bk_is_int_dt(ydt)) {
        /* a float layer reads its data inputs as floats */
        for (int k = 0; k < lim; k++) {
            int t = n->in[k];
            if (t >= 0 && !g->t[t].data && bk_is_int_dt(bk_tensor_dt(c, t)))
                return bk_fail(c, node, e, "input '%s' is %s and output '%s' is %s: mixed dtypes are not lowered",
                               g->t[t].name, ir_dtype_name(g->t[t].dtype), g->t[yt].name, ir_dtype_name(g->t[yt].dtype));
        }
        return 0;
    }
    if (ints == FLOAT)
        return bk_fail(c, node, e, "output '%s' is %s: this op is not lowered on integer or bool tensors", g->t[yt].name,
                       ir_dtype_name(g->t[yt].dtype));
    for (int k = 0; k < lim; k++) {
        int t = n->in[k];
        if (t >= 0 && bk_tensor_dt(c, t) != ydt)
            return bk_fail(c, node, e, "input '%s' is %s (chip %s) and output '%s' is %s (chip %s): mixed dtypes are not lowered",
                           g->t[t].name, ir_dtype_name(g->t[t].dtype), isa_dtype_name(bk_tensor_dt(c, t) < 0 ? ydt : bk_tensor_dt(c, t)),
                           g->t[yt].name, ir_dtype_name(g->t[yt].dtype), isa_dtype_name(ydt));
    }
    return 0;
}

int bk_lower_node(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrNode *n = &c->g->nodes[node];
    const OpRow *r = row_of(n->op);
    if (r && r->ints == OWN && r->lower != bk_lower_cast) return r->lower(c, node, ly, e);
    if (bk_check_dtypes(c, node, e)) return -1;
    if (c->gelu_src[node] >= 0) return bk_lower_elem(c, node, ly, e);
    if (!r || ((r->flags & PROG) && !bk_elem_has_program(c->g, n)))
        return bk_fail(c, node, e, "no lowering for this op on the Atoll chip");
    return r->lower(c, node, ly, e);
}
