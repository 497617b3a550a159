/* table.c - the operator table (see ops/ops.h): each op's opsets, input
 * counts, shape inference and reference kernel (the helpers the op
 * implementations share are in common.c). Opset ranges: 6 is accepted where the op's opset-6
 * semantics are handled (legacy `broadcast` attributes included); 18 is the
 * newest opset accepted; ops whose semantics never changed (Not, Global*Pool, Softplus,
 * Softsign)
 * are accepted from opset 1. */
#include "compiler/ops/ops.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROW(name, since, until, mi, ma, fam) {name, since, until, mi, ma, infer_##fam, eval_##fam}
static const IrOpDef op_table[] = {
    ROW("Abs", 6, 18, 1, 1, unary), ROW("Add", 6, 18, 2, 2, binary),
    ROW("AveragePool", 6, 18, 1, 1, pool), ROW("BatchNormalization", 6, 18, 5, 5, batchnorm),
    ROW("Cast", 6, 18, 1, 1, cast), ROW("Ceil", 6, 18, 1, 1, unary),
    ROW("Clip", 6, 18, 1, 3, clip), ROW("Concat", 6, 18, 1, 1 << 20, concat),
    ROW("Constant", 6, 18, 0, 0, constant), ROW("ConstantOfShape", 9, 18, 1, 1, constantofshape),
    ROW("Conv", 6, 18, 2, 3, conv), ROW("ConvTranspose", 6, 18, 2, 3, convtranspose),
    ROW("DepthToSpace", 6, 18, 1, 1, depthspace), ROW("Div", 6, 18, 2, 2, binary),
    ROW("Dropout", 6, 18, 1, 3, dropout), ROW("Elu", 6, 18, 1, 1, unary),
    ROW("Equal", 7, 18, 2, 2, binary), ROW("Erf", 9, 18, 1, 1, unary),
    ROW("Exp", 6, 18, 1, 1, unary), ROW("Expand", 8, 18, 2, 2, expand),
    ROW("Flatten", 6, 18, 1, 1, flatten), ROW("Floor", 6, 18, 1, 1, unary),
    ROW("Gather", 6, 18, 2, 2, gather), ROW("Gemm", 6, 18, 2, 3, gemm),
    ROW("GlobalAveragePool", 1, 18, 1, 1, globalpool), ROW("GlobalMaxPool", 1, 18, 1, 1, globalpool),
    ROW("Greater", 7, 18, 2, 2, binary), ROW("HardSigmoid", 6, 18, 1, 1, unary),
    ROW("HardSwish", 14, 18, 1, 1, unary), ROW("Identity", 6, 18, 1, 1, identity),
    ROW("InstanceNormalization", 6, 18, 3, 3, instancenorm), ROW("LRN", 6, 18, 1, 1, lrn),
    ROW("LayerNormalization", 17, 18, 2, 3, layernorm), ROW("LeakyRelu", 6, 18, 1, 1, unary),
    ROW("Less", 7, 18, 2, 2, binary), ROW("Log", 6, 18, 1, 1, unary),
    ROW("LogSoftmax", 6, 18, 1, 1, softmax), ROW("MatMul", 6, 18, 2, 2, matmul),
    ROW("Max", 6, 18, 1, 1 << 20, variadic), ROW("MaxPool", 6, 18, 1, 1, pool),
    ROW("Mean", 6, 18, 1, 1 << 20, variadic), ROW("Min", 6, 18, 1, 1 << 20, variadic),
    ROW("Mul", 6, 18, 2, 2, binary), ROW("Neg", 6, 18, 1, 1, unary),
    ROW("Not", 1, 18, 1, 1, unary), ROW("PRelu", 6, 18, 2, 2, binary),
    ROW("Pad", 6, 18, 1, 4, pad), ROW("Pow", 6, 18, 2, 2, binary),
    ROW("Range", 11, 18, 3, 3, range), ROW("Reciprocal", 6, 18, 1, 1, unary),
    ROW("ReduceMax", 6, 18, 1, 2, reduce), ROW("ReduceMean", 6, 18, 1, 2, reduce),
    ROW("ReduceMin", 6, 18, 1, 2, reduce), ROW("ReduceSum", 6, 18, 1, 2, reduce),
    ROW("Relu", 6, 18, 1, 1, unary), ROW("Reshape", 5, 18, 1, 2, reshape),
    ROW("Resize", 10, 18, 1, 4, resize), ROW("Selu", 6, 18, 1, 1, unary),
    ROW("Shape", 6, 18, 1, 1, shape), ROW("Sigmoid", 6, 18, 1, 1, unary),
    ROW("Slice", 6, 18, 1, 5, slice), ROW("Softmax", 6, 18, 1, 1, softmax),
    ROW("SpaceToDepth", 6, 18, 1, 1, depthspace), ROW("Split", 6, 18, 1, 2, split),
    ROW("Sqrt", 6, 18, 1, 1, unary), ROW("Squeeze", 6, 18, 1, 2, squeeze),
    ROW("Sub", 6, 18, 2, 2, binary), ROW("Sum", 6, 18, 1, 1 << 20, variadic),
    ROW("Tanh", 6, 18, 1, 1, unary), ROW("Tile", 6, 18, 2, 2, tile),
    ROW("Transpose", 6, 18, 1, 1, transpose), ROW("Unsqueeze", 6, 18, 1, 2, unsqueeze),
    ROW("Upsample", 7, 9, 1, 2, resize), ROW("Where", 9, 18, 3, 3, where),
    /* beyond the core CNN set */
    ROW("Acos", 7, 18, 1, 1, unary), ROW("Acosh", 9, 18, 1, 1, unary), ROW("And", 7, 18, 2, 2, binary),
    ROW("ArgMax", 6, 18, 1, 1, argmax), ROW("ArgMin", 6, 18, 1, 1, argmax), ROW("Asin", 7, 18, 1, 1, unary),
    ROW("Asinh", 9, 18, 1, 1, unary), ROW("Atan", 7, 18, 1, 1, unary), ROW("Atanh", 9, 18, 1, 1, unary),
    ROW("BitShift", 11, 18, 2, 2, binary), ROW("CastLike", 15, 18, 2, 2, castlike), ROW("Celu", 12, 18, 1, 1, unary),
    ROW("Cos", 7, 18, 1, 1, unary), ROW("Cosh", 9, 18, 1, 1, unary), ROW("CumSum", 11, 18, 2, 2, cumsum),
    ROW("GatherElements", 11, 18, 2, 2, gatherelements), ROW("GreaterOrEqual", 12, 18, 2, 2, binary),
    ROW("Hardmax", 6, 18, 1, 1, hardmax), ROW("IsInf", 10, 18, 1, 1, unary), ROW("IsNaN", 9, 18, 1, 1, unary),
    ROW("LessOrEqual", 12, 18, 2, 2, binary), ROW("Mod", 10, 18, 2, 2, binary), ROW("Or", 7, 18, 2, 2, binary),
    ROW("ReduceL1", 6, 18, 1, 2, reduce), ROW("ReduceL2", 6, 18, 1, 2, reduce), ROW("ReduceLogSum", 6, 18, 1, 2, reduce),
    ROW("ReduceLogSumExp", 6, 18, 1, 2, reduce), ROW("ReduceProd", 6, 18, 1, 2, reduce),
    ROW("ReduceSumSquare", 6, 18, 1, 2, reduce), ROW("Round", 11, 18, 1, 1, unary), ROW("Shrink", 9, 18, 1, 1, unary),
    ROW("Sign", 9, 18, 1, 1, unary), ROW("Sin", 7, 18, 1, 1, unary), ROW("Sinh", 9, 18, 1, 1, unary),
    ROW("Size", 6, 18, 1, 1, size), ROW("Softplus", 1, 18, 1, 1, unary), ROW("Softsign", 1, 18, 1, 1, unary),
    ROW("Tan", 7, 18, 1, 1, unary), ROW("ThresholdedRelu", 10, 18, 1, 1, unary), ROW("Trilu", 14, 18, 1, 2, trilu),
    ROW("Xor", 7, 18, 2, 2, binary), ROW("NegativeLogLikelihoodLoss", 12, 18, 2, 3, nllloss),
    ROW("SoftmaxCrossEntropyLoss", 12, 18, 2, 3, sceloss), ROW("QuantizeLinear", 10, 18, 2, 3, quantize),
    ROW("DequantizeLinear", 10, 18, 2, 3, dequantize), ROW("OneHot", 9, 18, 3, 3, onehot),
    ROW("EyeLike", 9, 18, 1, 1, eyelike), ROW("ScatterElements", 11, 18, 3, 3, scatterelements),
    ROW("ConvInteger", 10, 18, 2, 4, convinteger), ROW("QLinearConv", 10, 18, 8, 9, qlinearconv),
    ROW("MatMulInteger", 10, 18, 2, 4, matmulinteger), ROW("QLinearMatMul", 10, 18, 8, 8, qlinearmatmul),
    ROW("GatherND", 11, 18, 2, 2, gathernd), ROW("ScatterND", 11, 18, 3, 3, scatternd), ROW("TopK", 6, 18, 1, 2, topk),
    ROW("NonZero", 9, 18, 1, 1, nonzero), ROW("Compress", 9, 18, 2, 2, compress),
    ROW("MeanVarianceNormalization", 9, 18, 1, 1, mvn), ROW("HannWindow", 17, 18, 1, 1, window),
    ROW("HammingWindow", 17, 18, 1, 1, window), ROW("BlackmanWindow", 17, 18, 1, 1, window),
    ROW("NonMaxSuppression", 10, 18, 2, 5, nms), ROW("Einsum", 12, 18, 1, 8, einsum),
    ROW("RNN", 7, 18, 3, 6, rnn), ROW("GRU", 7, 18, 3, 6, rnn), ROW("LSTM", 7, 18, 3, 8, rnn),
    ROW("Scatter", 9, 10, 3, 3, scatterelements), ROW("ReverseSequence", 10, 18, 2, 2, reversesequence),
    ROW("DynamicQuantizeLinear", 11, 18, 1, 1, dynquant), ROW("Det", 11, 18, 1, 1, det),
    /* the int8 operators QDQ node units run as (ops/int8.c, ops/qdq_fuse.c); not ONNX ops */
    ROW("Int8Conv", 1, 18, 4, 4, int8conv), ROW("Int8MatMul", 1, 18, 4, 4, int8matmul),
    ROW("Int8Add", 1, 18, 1, 2, int8add), ROW("Int8GlobalAveragePool", 1, 18, 1, 1, int8gap),
};
enum { NOPS = sizeof op_table / sizeof op_table[0] };

const IrOpDef *ir_op_table(int *n) { *n = NOPS; return op_table; }

const IrOpDef *ir_op_find(const char *op, int opset)
{
    for (int i = 0; i < NOPS; i++)
        if (!strcmp(op_table[i].name, op) && opset >= op_table[i].since && opset <= op_table[i].until)
            return &op_table[i];
    return NULL;
}

int ir_op_known(const char *op)
{
    for (int i = 0; i < NOPS; i++)
        if (!strcmp(op_table[i].name, op)) return 1;
    return 0;
}

const char *ir_op_names(void)
{
    static const char names[] =
        "Abs Add AveragePool BatchNormalization Cast Ceil Clip Concat Constant ConstantOfShape Conv "
        "ConvTranspose DepthToSpace Div Dropout Elu Equal Erf Exp Expand Flatten Floor Gather Gemm "
        "GlobalAveragePool GlobalMaxPool Greater HardSigmoid HardSwish Identity InstanceNormalization LRN "
        "LayerNormalization LeakyRelu Less Log LogSoftmax MatMul Max MaxPool Mean Min Mul Neg Not PRelu Pad "
        "Pow Range Reciprocal ReduceMax ReduceMean ReduceMin ReduceSum Relu Reshape Resize Selu Shape "
        "Sigmoid Slice Softmax SpaceToDepth Split Sqrt Squeeze Sub Sum Tanh Tile Transpose Unsqueeze "
        "Upsample Where Acos Acosh And ArgMax ArgMin Asin Asinh Atan Atanh BitShift CastLike Celu Cos Cosh CumSum "
        "GatherElements GreaterOrEqual Hardmax IsInf IsNaN LessOrEqual Mod Or ReduceL1 ReduceL2 ReduceLogSum "
        "ReduceLogSumExp ReduceProd ReduceSumSquare Round Shrink Sign Sin Sinh Size Softplus Softsign Tan "
        "ThresholdedRelu Trilu Xor NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss QuantizeLinear DequantizeLinear OneHot EyeLike "
        "ScatterElements ConvInteger QLinearConv MatMulInteger QLinearMatMul GatherND ScatterND TopK NonZero "
        "Compress MeanVarianceNormalization HannWindow HammingWindow BlackmanWindow NonMaxSuppression Einsum "
        "RNN GRU LSTM Scatter ReverseSequence DynamicQuantizeLinear Det Int8Conv Int8MatMul Int8Add Int8GlobalAveragePool";
    return names;
}

/* Why node n's op is not supported at g's opset, as "op 'X' ... is not
 * supported (...)"; 0 when it is supported. */
static int unsupported_why(const IrGraph *g, const IrNode *n, char *why, size_t cap)
{
    if (n->domain[0] && strcmp(n->domain, "ai.onnx")) {
        snprintf(why, cap, "op '%s' of domain '%s' is not supported (only the default ONNX domain) (not in the op table)", n->op,
                 n->domain);
        return 1;
    }
    if (ir_op_find(n->op, g->opset)) return 0;
    if (ir_op_known(n->op)) {
        int lo = 99, hi = 0;
        for (int i = 0; i < NOPS; i++)
            if (!strcmp(op_table[i].name, n->op)) {
                if (op_table[i].since < lo) lo = op_table[i].since;
                if (op_table[i].until > hi) hi = op_table[i].until;
            }
        snprintf(why, cap, "op '%s' is not supported at opset %d (supported for opsets %d-%d)", n->op, g->opset, lo, hi);
        return 1;
    }
    snprintf(why, cap, "op '%s' (opset %d) is not supported (not in the op table)", n->op, g->opset);
    return 1;
}

static int node_supported(const IrGraph *g, const IrNode *n, AtlErr *e)
{
    char why[512];
    if (unsupported_why(g, n, why, sizeof why)) return atl_fail(e, "node '%s': %s", n->name, why);
    const IrOpDef *d = ir_op_find(n->op, g->opset);
    if (n->nin < d->min_in || n->nin > d->max_in)
        return atl_fail(e, "node '%s' (%s): %d inputs, expected %d to %d", n->name, n->op, n->nin, d->min_in,
                        d->max_in > 100 ? 100 : d->max_in);
    if (n->nout < 1) return atl_fail(e, "node '%s' (%s): no outputs", n->name, n->op);
    return 0;
}

/* Appends printf text to a growable string; -1 when out of memory. */
static int str_add(char **s, size_t *n, size_t *cap, const char *fmt, ...) ATL_PRINTF(4, 5);
static int str_add(char **s, size_t *n, size_t *cap, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(*s ? *s + *n : NULL, *s ? *cap - *n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) return -1;
        if (*s && (size_t)k < *cap - *n) { *n += (size_t)k; return 0; }
        size_t c = (*cap ? *cap : 256) * 2 + (size_t)k;
        char *p = realloc(*s, c);
        if (!p) return -1;
        *s = p;
        *cap = c;
    }
}

char *ir_unsupported_report(const IrGraph *g, int *nops, int *nnodes)
{
    char *out = NULL, why[512];
    size_t n = 0, cap = 0;
    int ops = 0, nodes = 0;
    /* one line per distinct reason (op, domain, opset), with its nodes */
    char *done = calloc((size_t)g->nn + 1, 1);
    if (!done) return NULL;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *a = &g->nodes[i];
        if (a->dead || done[i] || !unsupported_why(g, a, why, sizeof why)) continue;
        int count = 0;
        for (int j = i; j < g->nn; j++) {
            const IrNode *b = &g->nodes[j];
            if (b->dead || done[j] || strcmp(a->op, b->op) || strcmp(a->domain, b->domain)) continue;
            done[j] = 1;
            count++;
        }
        if (str_add(&out, &n, &cap, "  %s: %d node%s: ", why, count, count == 1 ? "" : "s")) goto oom;
        int k = 0;
        for (int j = i; j < g->nn; j++) {
            const IrNode *b = &g->nodes[j];
            if (b->dead || strcmp(a->op, b->op) || strcmp(a->domain, b->domain)) continue;
            if (str_add(&out, &n, &cap, "%s'%s'", k++ ? ", " : "", b->name)) goto oom;
        }
        if (str_add(&out, &n, &cap, "\n")) goto oom;
        ops++;
        nodes += count;
    }
    free(done);
    if (nops) *nops = ops;
    if (nnodes) *nnodes = nodes;
    return out;
oom:
    free(done);
    free(out);
    return NULL;
}

/* The error for unsupported ops: one node says which; several give a count
 * and the report's lines that fit the message (the tools print the rest
 * from ir_unsupported_report). */
static int unsupported_error(const IrGraph *g, const IrNode *n, const char *why, AtlErr *e)
{
    int nops = 0, nnodes = 0;
    char *rep = ir_unsupported_report(g, &nops, &nnodes);
    if (nnodes <= 1 || !rep || !e) {
        free(rep);
        return atl_fail(e, "node '%s': %s", n->name, why);
    }
    atl_fail(e, "%d nodes use %d op%s that Atoll does not support:\n", nnodes, nops, nops == 1 ? "" : "s");
    size_t k = strlen(e->msg);
    int shown = 0;
    for (const char *p = rep, *nl; (nl = strchr(p, '\n')); p = nl + 1, shown++) {
        size_t len = (size_t)(nl + 1 - p);
        if (k + len + 80 >= sizeof e->msg && shown < nops - 1) break;
        if (k + len >= sizeof e->msg) break;
        memcpy(e->msg + k, p, len);
        k += len;
        e->msg[k] = 0;
    }
    if (shown < nops)
        snprintf(e->msg + k, sizeof e->msg - k, "  ... and %d more op%s\n", nops - shown, nops - shown == 1 ? "" : "s");
    k = strlen(e->msg);
    if (k && e->msg[k - 1] == '\n') e->msg[k - 1] = 0;
    free(rep);
    return -1;
}

int ir_check_supported(const IrGraph *g, AtlErr *e)
{
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        char why[512];
        if (n->dead) continue;
        if (unsupported_why(g, n, why, sizeof why)) return unsupported_error(g, n, why, e);
    }
    for (int i = 0; i < g->nn; i++)
        if (!g->nodes[i].dead && node_supported(g, &g->nodes[i], e)) return -1;
    for (int i = 0; i < g->nin; i++) {
        const IrTensor *t = &g->t[g->inputs[i]];
        if (!ir_dtype_size(t->dtype))
            return atl_fail(e, "graph input '%s': type %s is not supported (tensors of numeric types only)",
                            t->name, t->dtype ? ir_dtype_name(t->dtype) : "non-tensor");
    }
    return 0;
}

int ir_node_infer(const IrGraph *g, const IrNode *n, IrTensor **in, IrTensor **out, AtlErr *e)
{
    if (node_supported(g, n, e)) return -1;
    const IrOpDef *d = ir_op_find(n->op, g->opset);
    IrOpCtx c = {n, g->opset, in, n->nin, out, n->nout, e};
    /* only the recurrent ops may omit their first output (Y; Y_h is used) */
    int rec = !strcmp(n->op, "RNN") || !strcmp(n->op, "GRU") || !strcmp(n->op, "LSTM"), any = 0;
    for (int j = 0; j < n->nout; j++) any |= out[j] != NULL;
    if (!any || (!out[0] && !rec)) return atl_fail(e, "node '%s' (%s): first output is omitted", n->name, n->op);
    for (int j = 0; j < d->min_in; j++)
        if (!in[j]) return atl_fail(e, "node '%s' (%s): input %d is required but omitted", n->name, n->op, j);
    if (d->infer(&c)) return atl_err_prefix(e, "node '%s' (%s)", n->name, n->op);
    for (int i = 0; i < n->nout; i++) {
        if (!out[i]) continue;
        if (out[i]->ndim > IR_MAXDIM)
            return atl_fail(e, "node '%s' (%s): output '%s' has rank %d, more than %d", n->name, n->op, out[i]->name,
                            out[i]->ndim, IR_MAXDIM);
        for (int k = 0; k < out[i]->ndim; k++)
            if (out[i]->dims[k] < -1)
                return atl_fail(e, "node '%s' (%s): output '%s' would have negative dimension %lld", n->name, n->op,
                                out[i]->name, (long long)out[i]->dims[k]);
    }
    return 0;
}

/* ---- helpers ---- */
