/* extra.c - ops beyond the core CNN set that the ONNX test suite and
 * exported models use: ArgMax/ArgMin, Size, GatherElements, Trilu, Hardmax,
 * CumSum. Same contracts as the other ops_*.c files (see ops/ops.h). */
#include "compiler/ops/ops.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* outer x axis x inner decomposition of x around axis */
static void split3(const IrTensor *x, int64_t axis, int64_t *outer, int64_t *dim, int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    for (int k = 0; k < axis; k++) *outer *= x->dims[k];
    for (int k = (int)axis + 1; k < x->ndim; k++) *inner *= x->dims[k];
    *dim = x->ndim ? x->dims[axis] : 1;
}

int infer_argmax(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    y->dtype = IR_I64;
    y->ndim = -1;
    if (x->ndim < 0) return 0;
    int64_t axis;
    if (op_axis(c, ir_attr_int(c->n, "axis", 0), x->ndim, &axis)) return -1;
    int keep = (int)ir_attr_int(c->n, "keepdims", 1);
    y->ndim = 0;
    for (int k = 0; k < x->ndim; k++) {
        if (k != axis) y->dims[y->ndim++] = x->dims[k];
        else if (keep) y->dims[y->ndim++] = 1;
    }
    return 0;
}

/* Index d of the largest x[o, d, i] (x viewed as outer x D x inner), the
 * smallest with ismin; the first of equal ones, or the last with last.
 * A NaN is the extreme for both (numpy's argmax / argmin, the ONNX
 * reference, and the chip's v.rargmax / v.rargmin): the first NaN, or the
 * last one with last. ArgMax/ArgMin and Hardmax. */
static int64_t arg_best(const IrTensor *x, int64_t o, int64_t D, int64_t inner, int64_t i, int ismin, int last)
{
    int64_t best = 0;
    double bv = ir_get_f(x, o * D * inner + i);
    for (int64_t d = 1; d < D; d++) {
        double v = ir_get_f(x, (o * D + d) * inner + i);
        int better;
        if (isnan(bv)) better = last && isnan(v);
        else if (isnan(v)) better = 1;
        else better = ismin ? (v < bv || (last && v == bv)) : (v > bv || (last && v == bv));
        if (better) { bv = v; best = d; }
    }
    return best;
}

int eval_argmax(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    int64_t axis, outer, D, inner;
    op_axis(c, ir_attr_int(c->n, "axis", 0), x->ndim, &axis);
    split3(x, axis, &outer, &D, &inner);
    int ismin = !strcmp(c->n->op, "ArgMin"), last = (int)ir_attr_int(c->n, "select_last_index", 0);
    int64_t *y = c->out[0]->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) y[o * inner + i] = arg_best(x, o, D, inner, i, ismin, last);
    return 0;
}

int infer_size(IrOpCtx *c)
{
    c->out[0]->dtype = IR_I64;
    c->out[0]->ndim = 0;
    return 0;
}

int eval_size(IrOpCtx *c)
{
    ((int64_t *)c->out[0]->data)[0] = ir_numel(c->in[0]);
    return 0;
}

int infer_gatherelements(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *ind = c->in[1];
    if (ind->dtype != IR_I64 && ind->dtype != IR_I32) return op_fail(c, "indices must be int32 or int64");
    if (x->ndim >= 0 && ind->ndim >= 0 && x->ndim != ind->ndim) return op_fail(c, "data rank %d and indices rank %d differ", x->ndim, ind->ndim);
    op_same_shape(c->out[0], ind);
    c->out[0]->dtype = x->dtype;
    if (x->ndim >= 0) { int64_t a; if (op_axis(c, ir_attr_int(c->n, "axis", 0), x->ndim, &a)) return -1; }
    return 0;
}

int eval_gatherelements(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *ind = c->in[1];
    IrTensor *y = c->out[0];
    int64_t axis;
    op_axis(c, ir_attr_int(c->n, "axis", 0), x->ndim, &axis);
    int64_t st[IR_MAXDIM], s = 1, idx[IR_MAXDIM] = {0};
    for (int k = x->ndim - 1; k >= 0; k--) { st[k] = s; s *= x->dims[k]; }
    size_t es = ir_dtype_size(x->dtype);
    int64_t n = ir_numel(y);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = ir_get_i(ind, i), A = x->dims[axis];
        if (v < 0) v += A;
        if (v < 0 || v >= A) return op_fail(c, "index %lld out of range for axis of size %lld", (long long)ir_get_i(ind, i), (long long)A);
        int64_t off = 0;
        for (int k = 0; k < x->ndim; k++) {
            int64_t q = k == axis ? v : idx[k];
            if (q >= x->dims[k]) return op_fail(c, "indices shape exceeds data shape on axis %d", k);
            off += q * st[k];
        }
        memcpy((char *)y->data + (size_t)i * es, (const char *)x->data + (size_t)off * es, es);
        for (int k = y->ndim - 1; k >= 0; k--) {
            if (++idx[k] < y->dims[k]) break;
            idx[k] = 0;
        }
    }
    return 0;
}

int infer_trilu(IrOpCtx *c)
{
    if (c->in[0]->ndim >= 0 && c->in[0]->ndim < 2) return op_fail(c, "input rank %d, needs at least 2", c->in[0]->ndim);
    op_same_shape(c->out[0], c->in[0]);
    return 0;
}

int eval_trilu(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t k = c->nin > 1 && c->in[1] ? ir_get_i(c->in[1], 0) : 0;
    int upper = (int)ir_attr_int(c->n, "upper", 1);
    int64_t N = x->dims[x->ndim - 2], M = x->dims[x->ndim - 1], n = ir_numel(x);
    size_t es = ir_dtype_size(x->dtype);
    for (int64_t i = 0; i < n; i++) {
        int64_t col = i % M, row = (i / M) % (N ? N : 1);
        int keep = upper ? col - row >= k : col - row <= k;
        if (keep) memcpy((char *)y->data + (size_t)i * es, (const char *)x->data + (size_t)i * es, es);
    }
    return 0;
}

int infer_hardmax(IrOpCtx *c)
{
    op_same_shape(c->out[0], c->in[0]);
    if (c->in[0]->ndim >= 0) {
        int64_t a;
        if (op_axis(c, ir_attr_int(c->n, "axis", c->opset >= 13 ? -1 : 1), c->in[0]->ndim, &a)) return -1;
    }
    return 0;
}

int eval_hardmax(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    int64_t axis, outer = 1, D = 1, inner = 1;
    op_axis(c, ir_attr_int(c->n, "axis", c->opset >= 13 ? -1 : 1), x->ndim, &axis);
    for (int k = 0; k < axis; k++) outer *= x->dims[k];
    if (c->opset >= 13) { D = x->dims[axis]; for (int k = (int)axis + 1; k < x->ndim; k++) inner *= x->dims[k]; }
    else for (int k = (int)axis; k < x->ndim; k++) D *= x->dims[k];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) ir_set_f(c->out[0], (o * D + arg_best(x, o, D, inner, i, 0, 0)) * inner + i, 1.0);
    return 0;
}

int infer_cumsum(IrOpCtx *c)
{
    op_same_shape(c->out[0], c->in[0]);
    if (ir_numel(c->in[1]) > 1) return op_fail(c, "axis must be a scalar");
    return 0;
}

int eval_cumsum(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t axis, outer, D, inner;
    if (op_axis(c, ir_get_i(c->in[1], 0), x->ndim, &axis)) return -1;
    split3(x, axis, &outer, &D, &inner);
    int excl = (int)ir_attr_int(c->n, "exclusive", 0), rev = (int)ir_attr_int(c->n, "reverse", 0);
    int isf = op_dtype_is_float(x->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double sf = 0;
            int64_t si = 0;
            for (int64_t q = 0; q < D; q++) {
                int64_t d = rev ? D - 1 - q : q, at = (o * D + d) * inner + i;
                if (excl) { if (isf) ir_set_f(y, at, sf); else ir_set_i(y, at, si); }
                if (isf) sf += ir_get_f(x, at); else si = (int64_t)((uint64_t)si + (uint64_t)ir_get_i(x, at));
                if (!excl) { if (isf) ir_set_f(y, at, sf); else ir_set_i(y, at, si); }
            }
        }
    return 0;
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---- */

int infer_nllloss(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *t = c->in[1];
    if (!op_dtype_is_float(x->dtype)) return op_fail(c, "input must be a float tensor");
    if (t->dtype != IR_I64 && t->dtype != IR_I32) return op_fail(c, "target must be int32 or int64");
    if (x->ndim >= 0 && x->ndim < 2) return op_fail(c, "input rank %d, needs at least 2", x->ndim);
    if (x->ndim >= 0 && t->ndim >= 0 && t->ndim != x->ndim - 1) return op_fail(c, "target rank %d, expected %d", t->ndim, x->ndim - 1);
    const char *red = ir_attr_str(c->n, "reduction", "mean");
    if (strcmp(red, "mean") && strcmp(red, "sum") && strcmp(red, "none")) return op_fail(c, "reduction '%s' is not supported", red);
    IrTensor *y = c->out[0];
    if (!strcmp(red, "none")) op_same_shape(y, t);
    else y->ndim = 0;
    y->dtype = x->dtype;
    if (c->nout > 1 && c->out[1]) op_same_shape(c->out[1], x);
    return 0;
}

/* loss from log-probabilities lp [N,C,D] (D = product of the trailing dims) */
static int nll_core(IrOpCtx *c, const IrTensor *lp, const IrTensor *t, const IrTensor *w, IrTensor *y)
{
    int64_t N = lp->dims[0], C = lp->dims[1], D = 1;
    for (int k = 2; k < lp->ndim; k++) D *= lp->dims[k];
    const IrAttr *ia = ir_attr(c->n, "ignore_index");
    int64_t ign = ia ? ia->i : 0;
    const char *red = ir_attr_str(c->n, "reduction", "mean");
    int none = !strcmp(red, "none"), mean = !strcmp(red, "mean");
    double sum = 0, wsum = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++) {
            int64_t cls = ir_get_i(t, n * D + d);
            double loss = 0, wt = 0;
            if (!(ia && cls == ign)) {
                if (cls < 0 || cls >= C) return op_fail(c, "target %lld is out of range for %lld classes", (long long)cls, (long long)C);
                wt = w ? ir_get_f(w, cls) : 1.0;
                loss = -ir_get_f(lp, (n * C + cls) * D + d) * wt;
            }
            if (none) ir_set_f(y, n * D + d, loss);
            sum += loss;
            wsum += wt;
        }
    if (!none) ir_set_f(y, 0, mean ? sum / wsum : sum);
    return 0;
}

int eval_nllloss(IrOpCtx *c)
{
    return nll_core(c, c->in[0], c->in[1], c->nin > 2 ? c->in[2] : NULL, c->out[0]);
}

int infer_sceloss(IrOpCtx *c) { return infer_nllloss(c); }

int eval_sceloss(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor lp = *x;
    lp.data = malloc(ir_nbytes(x) + 8);
    if (!lp.data) return op_fail(c, "out of memory");
    int64_t N = x->dims[0], C = x->dims[1], D = 1;
    for (int k = 2; k < x->ndim; k++) D *= x->dims[k];
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++) {
            double mx = -INFINITY, s = 0;
            for (int64_t k = 0; k < C; k++) { double v = ir_get_f(x, (n * C + k) * D + d); if (v > mx) mx = v; }
            for (int64_t k = 0; k < C; k++) s += exp(ir_get_f(x, (n * C + k) * D + d) - mx);
            for (int64_t k = 0; k < C; k++) ir_set_f(&lp, (n * C + k) * D + d, ir_get_f(x, (n * C + k) * D + d) - mx - log(s));
        }
    int rc = nll_core(c, &lp, c->in[1], c->nin > 2 ? c->in[2] : NULL, c->out[0]);
    if (!rc && c->nout > 1 && c->out[1]) memcpy(c->out[1]->data, lp.data, ir_nbytes(x));
    free(lp.data);
    return rc;
}

/* ---- QuantizeLinear / DequantizeLinear ---- */

/* per-tensor or per-axis (1-D scale along `axis`) parameter index of element i */
static int64_t qparam_index(const IrTensor *x, const IrTensor *scale, int64_t axis, int64_t i)
{
    if (ir_numel(scale) <= 1) return 0;
    int64_t inner = 1;
    for (int k = (int)axis + 1; k < x->ndim; k++) inner *= x->dims[k];
    return (i / inner) % x->dims[axis];
}

static int quant_common(IrOpCtx *c, int64_t *axis)
{
    const IrTensor *x = c->in[0], *s = c->in[1];
    *axis = 0;
    if (s->ndim > 1) return op_fail(c, "scale must be a scalar or 1-D");
    if (s->ndim == 1 && ir_numel(s) != 1 && x->ndim >= 0) {
        if (op_axis(c, ir_attr_int(c->n, "axis", 1), x->ndim, axis)) return -1;
        if (x->dims[*axis] >= 0 && s->dims[0] >= 0 && s->dims[0] != x->dims[*axis])
            return op_fail(c, "scale has %lld values for axis %lld of size %lld", (long long)s->dims[0], (long long)*axis, (long long)x->dims[*axis]);
    }
    if (c->nin > 2 && c->in[2] && ir_numel(c->in[2]) >= 0 && ir_numel(s) >= 0 && ir_numel(c->in[2]) != ir_numel(s))
        return op_fail(c, "zero point and scale sizes differ");
    return 0;
}

int infer_quantize(IrOpCtx *c)
{
    int64_t axis;
    if (!op_dtype_is_float(c->in[0]->dtype)) return op_fail(c, "input must be float");
    if (quant_common(c, &axis)) return -1;
    op_same_shape(c->out[0], c->in[0]);
    int dt = c->nin > 2 && c->in[2] ? c->in[2]->dtype : IR_U8;
    if (dt != IR_U8 && dt != IR_I8) return op_fail(c, "zero point type %s is not supported (uint8, int8)", ir_dtype_name(dt));
    c->out[0]->dtype = dt;
    return 0;
}

int eval_quantize(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *s = c->in[1], *z = c->nin > 2 ? c->in[2] : NULL;
    IrTensor *y = c->out[0];
    int64_t axis;
    if (quant_common(c, &axis)) return -1;
    double lo = y->dtype == IR_U8 ? 0 : -128, hi = y->dtype == IR_U8 ? 255 : 127;
    int64_t n = ir_numel(x);
    for (int64_t i = 0; i < n; i++) {
        int64_t q = qparam_index(x, s, axis, i);
        /* divide in the input precision, as the reference does */
        double r = x->dtype == IR_F32 ? (double)((float)ir_get_f(x, i) / (float)ir_get_f(s, q)) : ir_get_f(x, i) / ir_get_f(s, q);
        double v = nearbyint(r) + (z ? ir_get_f(z, q) : 0);
        ir_set_f(y, i, v < lo ? lo : v > hi ? hi : v);
    }
    return 0;
}

int infer_dequantize(IrOpCtx *c)
{
    int64_t axis;
    if (quant_common(c, &axis)) return -1;
    op_same_shape(c->out[0], c->in[0]);
    c->out[0]->dtype = c->in[1]->dtype;
    return 0;
}

int eval_dequantize(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *s = c->in[1], *z = c->nin > 2 ? c->in[2] : NULL;
    int64_t axis;
    if (quant_common(c, &axis)) return -1;
    int64_t n = ir_numel(x);
    for (int64_t i = 0; i < n; i++) {
        int64_t q = qparam_index(x, s, axis, i);
        ir_set_f(c->out[0], i, (ir_get_f(x, i) - (z ? ir_get_f(z, q) : 0)) * ir_get_f(s, q));
    }
    return 0;
}

/* ---- OneHot, EyeLike ---- */

int infer_onehot(IrOpCtx *c)
{
    const IrTensor *ind = c->in[0], *depth = c->in[1], *vals = c->in[2];
    IrTensor *y = c->out[0];
    y->dtype = vals->dtype;
    y->ndim = -1;
    if (ind->ndim < 0) return 0;
    int r = ind->ndim + 1;
    if (r > IR_MAXDIM) return op_fail(c, "result rank too large");
    int64_t axis;
    if (op_axis(c, ir_attr_int(c->n, "axis", -1), r, &axis)) return -1;
    int64_t d = -1;
    if (depth->data) {
        if (ir_numel(depth) != 1) return op_fail(c, "depth must have one value");
        if (op_check_dim(c, "depth", ir_get_f(depth, 0))) return -1;
        d = (int64_t)ir_get_f(depth, 0);
        if (d < 1) return op_fail(c, "depth %lld must be positive", (long long)d);
    }
    if (vals->ndim >= 0 && ir_numel(vals) != 2) return op_fail(c, "values must have 2 elements");
    y->ndim = r;
    for (int k = 0, j = 0; k < r; k++) y->dims[k] = k == axis ? d : ind->dims[j++];
    return 0;
}

int eval_onehot(IrOpCtx *c)
{
    const IrTensor *ind = c->in[0], *vals = c->in[2];
    IrTensor *y = c->out[0];
    int64_t axis;
    op_axis(c, ir_attr_int(c->n, "axis", -1), y->ndim, &axis);
    int64_t D = y->dims[axis], outer = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= y->dims[k];
    for (int k = (int)axis + 1; k < y->ndim; k++) inner *= y->dims[k];
    size_t es = ir_dtype_size(y->dtype);
    int64_t n = ir_numel(y);
    for (int64_t i = 0; i < n; i++) memcpy((char *)y->data + (size_t)i * es, vals->data, es);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t v = (int64_t)ir_get_f(ind, o * inner + i);
            if (v < 0) v += D;
            if (v < 0 || v >= D) continue;
            memcpy((char *)y->data + (size_t)((o * D + v) * inner + i) * es, (const char *)vals->data + es, es);
        }
    return 0;
}

int infer_eyelike(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    if (x->ndim >= 0 && x->ndim != 2) return op_fail(c, "input must be 2-D");
    op_same_shape(c->out[0], x);
    int64_t dt = ir_attr_int(c->n, "dtype", x->dtype);
    if (dt <= 0 || dt >= IR_NDTYPES || !ir_dtype_size((int)dt)) return op_fail(c, "dtype %lld is not supported", (long long)dt);
    c->out[0]->dtype = (int)dt;
    return 0;
}

int eval_eyelike(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    int64_t k = ir_attr_int(c->n, "k", 0), R = y->dims[0], C = y->dims[1];
    for (int64_t i = 0; i < R; i++)
        if (i + k >= 0 && i + k < C) ir_set_f(y, i * C + i + k, 1.0);
    return 0;
}

/* ---- ScatterElements ---- */

/* The reduction attribute of ScatterElements and ScatterND as its index in
 * scatter_reductions (0 none, 1 add, 2 mul); -1 with a message otherwise. */
static const char *const scatter_reductions[] = {"none", "add", "mul"};

static int scatter_mode(IrOpCtx *c)
{
    const char *red = ir_attr_str(c->n, "reduction", "none");
    for (int m = 0; m < (int)(sizeof scatter_reductions / sizeof scatter_reductions[0]); m++)
        if (!strcmp(red, scatter_reductions[m])) return m;
    return op_fail(c, "reduction '%s' is not supported", red);
}

int infer_scatterelements(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *ind = c->in[1], *upd = c->in[2];
    if (ind->dtype != IR_I64 && ind->dtype != IR_I32) return op_fail(c, "indices must be int32 or int64");
    if (upd->dtype != x->dtype) return op_fail(c, "updates type differs from data");
    if (ind->ndim >= 0 && upd->ndim >= 0) {
        int same = ind->ndim == upd->ndim;
        for (int k = 0; same && k < ind->ndim; k++) same = ind->dims[k] == upd->dims[k];
        if (!same) return op_fail(c, "indices and updates shapes differ");
    }
    if (scatter_mode(c) < 0) return -1;
    op_same_shape(c->out[0], x);
    return 0;
}

int eval_scatterelements(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *ind = c->in[1], *upd = c->in[2];
    IrTensor *y = c->out[0];
    memcpy(y->data, x->data, ir_nbytes(x));
    int64_t axis;
    if (op_axis(c, ir_attr_int(c->n, "axis", 0), x->ndim, &axis)) return -1;
    int mode = scatter_mode(c);
    if (mode < 0) return -1;
    int64_t st[IR_MAXDIM], s = 1, idx[IR_MAXDIM] = {0};
    for (int k = x->ndim - 1; k >= 0; k--) { st[k] = s; s *= x->dims[k]; }
    int64_t n = ir_numel(ind);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = ir_get_i(ind, i), A = x->dims[axis], off = 0;
        if (v < 0) v += A;
        if (v < 0 || v >= A) return op_fail(c, "index %lld out of range for axis of size %lld", (long long)ir_get_i(ind, i), (long long)A);
        for (int k = 0; k < x->ndim; k++) {
            int64_t q = k == axis ? v : idx[k];
            if (q >= x->dims[k]) return op_fail(c, "indices shape exceeds data shape on axis %d", k);
            off += q * st[k];
        }
        double u = ir_get_f(upd, i);
        if (mode == 0 && !op_dtype_is_float(y->dtype)) ir_set_i(y, off, ir_get_i(upd, i));
        else ir_set_f(y, off, mode == 1 ? ir_get_f(y, off) + u : mode == 2 ? ir_get_f(y, off) * u : u);
        for (int k = ind->ndim - 1; k >= 0; k--) {
            if (++idx[k] < ind->dims[k]) break;
            idx[k] = 0;
        }
    }
    return 0;
}

/* ---- GatherND, ScatterND ---- */

/* Splits a GatherND/ScatterND index tensor: returns k (index tuple length) */
static int nd_k(IrOpCtx *c, const IrTensor *x, const IrTensor *ind, int b, int64_t *k)
{
    if (ind->dtype != IR_I64) return op_fail(c, "indices must be int64");
    if (ind->ndim < 1) return op_fail(c, "indices must have rank >= 1");
    *k = ind->dims[ind->ndim - 1];
    if (*k < 0) return 0;
    if (b < 0 || b >= ind->ndim || b > x->ndim) return op_fail(c, "batch_dims %d out of range", b);
    if (b + *k > x->ndim) return op_fail(c, "index tuples of length %lld exceed data rank %d", (long long)*k, x->ndim);
    return 0;
}

int infer_gathernd(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *ind = c->in[1];
    IrTensor *y = c->out[0];
    y->dtype = x->dtype;
    y->ndim = -1;
    if (x->ndim < 0 || ind->ndim < 0) return 0;
    int b = (int)ir_attr_int(c->n, "batch_dims", 0);
    int64_t k;
    if (nd_k(c, x, ind, b, &k)) return -1;
    if (k < 0) return 0;
    int r = ind->ndim - 1 + x->ndim - b - (int)k;
    if (r > IR_MAXDIM) return op_fail(c, "result rank too large");
    y->ndim = 0;
    for (int i = 0; i < ind->ndim - 1; i++) y->dims[y->ndim++] = ind->dims[i];
    for (int i = b + (int)k; i < x->ndim; i++) y->dims[y->ndim++] = x->dims[i];
    return 0;
}

int eval_gathernd(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *ind = c->in[1];
    IrTensor *y = c->out[0];
    int b = (int)ir_attr_int(c->n, "batch_dims", 0);
    int64_t k = ind->dims[ind->ndim - 1], slice = 1, st[IR_MAXDIM], s = 1, batch = 1, per_batch = 1;
    for (int i = x->ndim - 1; i >= 0; i--) { st[i] = s; s *= x->dims[i]; }
    for (int i = b + (int)k; i < x->ndim; i++) slice *= x->dims[i];
    for (int i = 0; i < b; i++) batch *= ind->dims[i];
    int64_t tuples = ir_numel(ind) / (k ? k : 1);
    per_batch = batch ? tuples / batch : 0;
    int64_t bstride = b ? st[b - 1] : 0;
    size_t es = ir_dtype_size(x->dtype);
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = (per_batch ? t / per_batch : 0) * bstride;
        for (int64_t j = 0; j < k; j++) {
            int64_t v = ir_get_i(ind, t * k + j), d = x->dims[b + j];
            if (v < 0) v += d;
            if (v < 0 || v >= d) return op_fail(c, "index %lld out of range for axis %lld", (long long)ir_get_i(ind, t * k + j), (long long)(b + j));
            off += v * st[b + j];
        }
        memcpy((char *)y->data + (size_t)(t * slice) * es, (const char *)x->data + (size_t)off * es, (size_t)slice * es);
    }
    return 0;
}

int infer_scatternd(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *ind = c->in[1];
    int64_t k;
    if (c->in[2]->dtype != x->dtype) return op_fail(c, "updates type differs from data");
    if (x->ndim >= 0 && ind->ndim >= 0 && nd_k(c, x, ind, 0, &k)) return -1;
    if (scatter_mode(c) < 0) return -1;
    op_same_shape(c->out[0], x);
    return 0;
}

int eval_scatternd(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *ind = c->in[1], *upd = c->in[2];
    IrTensor *y = c->out[0];
    memcpy(y->data, x->data, ir_nbytes(x));
    int64_t k = ind->dims[ind->ndim - 1], slice = 1, st[IR_MAXDIM], s = 1;
    for (int i = x->ndim - 1; i >= 0; i--) { st[i] = s; s *= x->dims[i]; }
    for (int i = (int)k; i < x->ndim; i++) slice *= x->dims[i];
    int64_t tuples = ir_numel(ind) / (k ? k : 1);
    if (ir_numel(upd) != tuples * slice) return op_fail(c, "updates have %lld elements, expected %lld", (long long)ir_numel(upd), (long long)(tuples * slice));
    int mode = scatter_mode(c);
    if (mode < 0) return -1;
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = 0;
        for (int64_t j = 0; j < k; j++) {
            int64_t v = ir_get_i(ind, t * k + j), d = x->dims[j];
            if (v < 0) v += d;
            if (v < 0 || v >= d) return op_fail(c, "index %lld out of range for axis %lld", (long long)ir_get_i(ind, t * k + j), (long long)j);
            off += v * st[j];
        }
        for (int64_t q = 0; q < slice; q++) {
            double u = ir_get_f(upd, t * slice + q), o = ir_get_f(y, off + q);
            ir_set_f(y, off + q, mode == 1 ? o + u : mode == 2 ? o * u : u);
        }
    }
    return 0;
}

/* ---- TopK ---- */

/* A value and its index; sorted by value, ties by index (TopK, NonMaxSuppression). */
typedef struct KV { double v; int64_t i; } KV;
static int kv_desc(const void *a, const void *b)
{
    const KV *x = a, *y = b;
    if (x->v != y->v) return x->v > y->v ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}
static int kv_asc(const void *a, const void *b)
{
    const KV *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int topk_k(IrOpCtx *c, int64_t *k)
{
    if (c->opset < 10) { *k = ir_attr_int(c->n, "k", -1); return 1; }
    if (c->nin < 2 || !c->in[1]) return op_fail(c, "K input is required");
    if (!c->in[1]->data) return 0;
    if (ir_numel(c->in[1]) != 1) return op_fail(c, "K must have one value");
    *k = ir_get_i(c->in[1], 0);
    return 1;
}

int infer_topk(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    for (int o = 0; o < 2 && o < c->nout; o++) {
        if (!c->out[o]) continue;
        op_same_shape(c->out[o], x);
        if (o == 1) c->out[1]->dtype = IR_I64;
    }
    if (x->ndim < 0) return 0;
    int64_t axis, k;
    if (op_axis(c, ir_attr_int(c->n, "axis", -1), x->ndim, &axis)) return -1;
    int r = topk_k(c, &k);
    if (r < 0) return -1;
    if (r && (k < 0 || (x->dims[axis] >= 0 && k > x->dims[axis])))
        return op_fail(c, "K=%lld is out of range for an axis of %lld", (long long)k, (long long)x->dims[axis]);
    for (int o = 0; o < 2 && o < c->nout; o++)
        if (c->out[o]) c->out[o]->dims[axis] = r ? k : -1;
    return 0;
}

int eval_topk(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    int64_t axis, k, outer, D, inner;
    op_axis(c, ir_attr_int(c->n, "axis", -1), x->ndim, &axis);
    if (topk_k(c, &k) != 1) return op_fail(c, "K is not known");
    split3(x, axis, &outer, &D, &inner);
    int largest = (int)ir_attr_int(c->n, "largest", 1);
    KV *kv = malloc(sizeof(KV) * (size_t)(D + 1));
    if (!kv) return op_fail(c, "out of memory");
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t d = 0; d < D; d++) { kv[d].v = ir_get_f(x, (o * D + d) * inner + i); kv[d].i = d; }
            qsort(kv, (size_t)D, sizeof *kv, largest ? kv_desc : kv_asc);
            for (int64_t j = 0; j < k; j++) {
                int64_t at = (o * k + j) * inner + i;
                if (c->out[0]) {
                    if (op_dtype_is_float(x->dtype)) ir_set_f(c->out[0], at, kv[j].v);
                    else ir_set_i(c->out[0], at, ir_get_i(x, (o * D + kv[j].i) * inner + i));
                }
                if (c->nout > 1 && c->out[1]) ((int64_t *)c->out[1]->data)[at] = kv[j].i;
            }
        }
    free(kv);
    return 0;
}

/* ---- NonZero, Compress ---- */

int infer_nonzero(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    y->dtype = IR_I64;
    y->ndim = 2;
    y->dims[0] = x->ndim < 0 ? -1 : (x->ndim ? x->ndim : 1);
    y->dims[1] = -1;
    if (x->data) {
        int64_t n = ir_numel(x), nz = 0;
        for (int64_t i = 0; i < n; i++) nz += ir_get_f(x, i) != 0;
        y->dims[1] = nz;
    }
    return 0;
}

int eval_nonzero(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t n = ir_numel(x), nz = y->dims[1], j = 0;
    int r = x->ndim;
    for (int64_t i = 0; i < n; i++) {
        if (ir_get_f(x, i) == 0) continue;
        int64_t rem = i;
        for (int k = r - 1; k >= 0; k--) { ((int64_t *)y->data)[k * nz + j] = rem % x->dims[k]; rem /= x->dims[k]; }
        if (r == 0) ((int64_t *)y->data)[j] = 0;
        j++;
    }
    return 0;
}

int infer_compress(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *cond = c->in[1];
    IrTensor *y = c->out[0];
    y->dtype = x->dtype;
    if (cond->dtype != IR_BOOL) return op_fail(c, "condition must be bool");
    if (cond->ndim >= 0 && cond->ndim != 1) return op_fail(c, "condition must be 1-D");
    const IrAttr *ax = ir_attr(c->n, "axis");
    int64_t cnt = -1;
    if (cond->data) { cnt = 0; for (int64_t i = 0; i < ir_numel(cond); i++) cnt += ir_get_i(cond, i) != 0; }
    if (!ax) { y->ndim = 1; y->dims[0] = cnt; return 0; }
    if (x->ndim < 0) { y->ndim = -1; return 0; }
    int64_t axis;
    if (op_axis(c, ax->i, x->ndim, &axis)) return -1;
    if (cond->data && x->dims[axis] >= 0) {
        int64_t lim = ir_numel(cond) < x->dims[axis] ? ir_numel(cond) : x->dims[axis];
        cnt = 0;
        for (int64_t i = 0; i < lim; i++) cnt += ir_get_i(cond, i) != 0;
    }
    op_same_shape(y, x);
    y->dims[axis] = cnt;
    return 0;
}

int eval_compress(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *cond = c->in[1];
    IrTensor *y = c->out[0];
    size_t es = ir_dtype_size(x->dtype);
    const IrAttr *ax = ir_attr(c->n, "axis");
    int64_t outer = 1, D = ir_numel(x), inner = 1, axis = 0;
    if (ax) { op_axis(c, ax->i, x->ndim, &axis); split3(x, axis, &outer, &D, &inner); }
    int64_t lim = ir_numel(cond) < D ? ir_numel(cond) : D;
    char *dst = y->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t d = 0; d < lim; d++)
            if (ir_get_i(cond, d)) {
                memcpy(dst, (const char *)x->data + (size_t)((o * D + d) * inner) * es, (size_t)inner * es);
                dst += (size_t)inner * es;
            }
    return 0;
}

/* ---- MeanVarianceNormalization, window functions ---- */

int infer_mvn(IrOpCtx *c)
{
    if (c->in[0]->dtype != IR_F32) return op_fail(c, "only float32 is supported");
    op_same_shape(c->out[0], c->in[0]);
    return 0;
}

int eval_mvn(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int red[IR_MAXDIM] = {0};
    const IrAttr *a = ir_attr(c->n, "axes");
    if (a) {
        for (int i = 0; i < a->n; i++) { int64_t ax; if (op_axis(c, a->ints[i], x->ndim, &ax)) return -1; red[ax] = 1; }
    } else {
        int def[3] = {0, 2, 3};
        for (int i = 0; i < 3; i++) if (def[i] < x->ndim) red[def[i]] = 1;
    }
    int64_t n = ir_numel(x), m = 1;
    for (int k = 0; k < x->ndim; k++) if (!red[k]) m *= x->dims[k];
    double *sum = calloc((size_t)m + 1, sizeof *sum), *sq = calloc((size_t)m + 1, sizeof *sq);
    int64_t *map = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!sum || !sq || !map) { free(sum); free(sq); free(map); return op_fail(c, "out of memory"); }
    for (int64_t i = 0; i < n; i++) { /* index of i's group */
        int64_t rem = i, g = 0, s = 1;
        for (int k = x->ndim - 1; k >= 0; k--) {
            int64_t idx = rem % x->dims[k];
            rem /= x->dims[k];
            if (!red[k]) { g += idx * s; s *= x->dims[k]; }
        }
        map[i] = g;
        double v = ir_get_f(x, i);
        sum[g] += v;
        sq[g] += v * v;
    }
    double cnt = (double)(m ? n / m : 1);
    for (int64_t i = 0; i < n; i++) {
        double mean = sum[map[i]] / cnt, var = sq[map[i]] / cnt - mean * mean;
        ir_set_f(y, i, (ir_get_f(x, i) - mean) / sqrt(var + 1e-9));
    }
    free(sum); free(sq); free(map);
    return 0;
}

int infer_window(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    int64_t dt = ir_attr_int(c->n, "output_datatype", IR_F32);
    if (dt <= 0 || dt >= IR_NDTYPES || !ir_dtype_size((int)dt)) return op_fail(c, "output_datatype %lld is not supported", (long long)dt);
    y->dtype = (int)dt;
    y->ndim = 1;
    y->dims[0] = -1;
    if (c->in[0]->data) {
        if (ir_numel(c->in[0]) != 1) return op_fail(c, "size must be a scalar");
        int64_t n = ir_get_i(c->in[0], 0);
        if (n < 0 || n > ((int64_t)1 << 30)) return op_fail(c, "size %lld is out of range", (long long)n);
        y->dims[0] = n;
    }
    return 0;
}

int eval_window(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    int64_t n = y->dims[0];
    double N = ir_attr_int(c->n, "periodic", 1) ? (double)n : (double)(n - 1);
    const char *op = c->n->op;
    for (int64_t i = 0; i < n; i++) {
        double t = 2 * M_PI * (double)i / N, v;
        if (!strcmp(op, "HannWindow")) v = 0.5 - 0.5 * cos(t);
        else if (!strcmp(op, "HammingWindow")) v = 25.0 / 46.0 - (1 - 25.0 / 46.0) * cos(t);
        else v = 0.42 - 0.5 * cos(t) + 0.08 * cos(2 * t);
        ir_set_f(y, i, v);
    }
    return 0;
}

/* ---- NonMaxSuppression ---- */

/* corners (y1, x1, y2, x2) of box i, normalised so y1 <= y2, x1 <= x2 */
static void box_corners(const float *b, int center, float *o)
{
    if (center) {
        o[0] = b[1] - b[3] / 2; o[2] = b[1] + b[3] / 2;
        o[1] = b[0] - b[2] / 2; o[3] = b[0] + b[2] / 2;
    } else {
        o[0] = b[0] < b[2] ? b[0] : b[2]; o[2] = b[0] < b[2] ? b[2] : b[0];
        o[1] = b[1] < b[3] ? b[1] : b[3]; o[3] = b[1] < b[3] ? b[3] : b[1];
    }
}

static float iou(const float *a, const float *b)
{
    float ih = fminf(a[2], b[2]) - fmaxf(a[0], b[0]), iw = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
    if (ih <= 0 || iw <= 0) return 0;
    float inter = ih * iw, ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
    return ua > 0 ? inter / ua : 0;
}

/* Runs NMS; with sel NULL only counts the selected boxes. */
static int64_t nms_run(IrOpCtx *c, int64_t *sel)
{
    const IrTensor *boxes = c->in[0], *scores = c->in[1];
    int64_t B = scores->dims[0], C = scores->dims[1], N = scores->dims[2];
    int64_t maxout = c->nin > 2 && c->in[2] && ir_numel(c->in[2]) ? ir_get_i(c->in[2], 0) : 0;
    float thr = c->nin > 3 && c->in[3] && ir_numel(c->in[3]) ? (float)ir_get_f(c->in[3], 0) : 0;
    int has_st = c->nin > 4 && c->in[4] && ir_numel(c->in[4]);
    float st = has_st ? (float)ir_get_f(c->in[4], 0) : 0;
    int center = (int)ir_attr_int(c->n, "center_point_box", 0);
    KV *cand = malloc(sizeof(KV) * (size_t)(N + 1));   /* score, box; sorted by kv_desc (TopK's order) */
    int64_t *keep = malloc(sizeof(int64_t) * (size_t)(N + 1));
    int64_t total = 0;
    if (!cand || !keep) { free(cand); free(keep); op_fail(c, "out of memory"); return -1; }
    for (int64_t b = 0; b < B; b++)
        for (int64_t k = 0; k < C; k++) {
            int64_t nc = 0, nk = 0;
            for (int64_t i = 0; i < N; i++) {
                float s = ((const float *)scores->data)[(b * C + k) * N + i];
                if (!has_st || s > st) { cand[nc].v = s; cand[nc].i = i; nc++; }
            }
            qsort(cand, (size_t)nc, sizeof *cand, kv_desc);
            for (int64_t j = 0; j < nc && nk < maxout; j++) {
                float bj[4], bk[4];
                box_corners((const float *)boxes->data + (b * N + cand[j].i) * 4, center, bj);
                int ok = 1;
                for (int64_t q = 0; q < nk && ok; q++) {
                    box_corners((const float *)boxes->data + (b * N + keep[q]) * 4, center, bk);
                    if (iou(bj, bk) > thr) ok = 0;
                }
                if (!ok) continue;
                keep[nk++] = cand[j].i;
                if (sel) { sel[total * 3] = b; sel[total * 3 + 1] = k; sel[total * 3 + 2] = cand[j].i; }
                total++;
            }
        }
    free(cand);
    free(keep);
    return total;
}

int infer_nms(IrOpCtx *c)
{
    const IrTensor *boxes = c->in[0], *scores = c->in[1];
    if (boxes->dtype != IR_F32 || scores->dtype != IR_F32) return op_fail(c, "boxes and scores must be float32");
    if ((boxes->ndim >= 0 && boxes->ndim != 3) || (scores->ndim >= 0 && scores->ndim != 3))
        return op_fail(c, "boxes must be [batch, boxes, 4] and scores [batch, classes, boxes]");
    if (boxes->ndim == 3 && boxes->dims[2] >= 0 && boxes->dims[2] != 4) return op_fail(c, "boxes must have 4 coordinates");
    IrTensor *y = c->out[0];
    y->dtype = IR_I64;
    y->ndim = 2;
    y->dims[0] = -1;
    y->dims[1] = 3;
    int known = boxes->data && scores->data;
    for (int i = 2; i < c->nin; i++) if (c->in[i] && !c->in[i]->data) known = 0;
    if (known) {
        if (boxes->dims[0] != scores->dims[0] || boxes->dims[1] != scores->dims[2])
            return op_fail(c, "boxes and scores disagree on batch or box count");
        int64_t n = nms_run(c, NULL);
        if (n < 0) return -1;
        y->dims[0] = n;
    }
    return 0;
}

int eval_nms(IrOpCtx *c)
{
    return nms_run(c, c->out[0]->data) < 0 ? -1 : 0;
}

/* ---- Einsum ---- */

int op_einsum_parse(IrOpCtx *c, OpEinsum *q)
{
    const char *eq = ir_attr_str(c->n, "equation", NULL);
    if (!eq) return op_fail(c, "attribute 'equation' is required");
    memset(q, 0, sizeof *q);
    q->nin = c->nin;
    if (c->nin > OP_EINSUM_MAXIN) return op_fail(c, "at most %d inputs", OP_EINSUM_MAXIN);
    const char *arrow = strstr(eq, "->");
    int ell = 0; /* rank of the ellipsis part */
    const char *p = eq;
    for (int i = 0; i < c->nin; i++) {
        const IrTensor *t = c->in[i];
        char named[64];
        int nn = 0, has_ell = 0;
        while (*p && *p != ',' && (!arrow || p < arrow)) {
            if (*p == '.') { if (strncmp(p, "...", 3)) return op_fail(c, "bad ellipsis in '%s'", eq); has_ell = 1; named[nn++] = '.'; p += 3; continue; }
            if (*p != ' ') { if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) || nn > 60) return op_fail(c, "bad equation '%s'", eq); named[nn++] = *p; }
            p++;
        }
        if (*p == ',') p++;
        int ne = has_ell ? t->ndim - (nn - 1) : 0;
        if (ne < 0 || (!has_ell && nn != t->ndim)) return op_fail(c, "input %d has rank %d, equation term has %d letters", i, t->ndim, nn - has_ell);
        if (has_ell) ell = ne > ell ? ne : ell;
        int k = 0;
        for (int j = 0; j < nn; j++) {
            if (named[j] == '.') { for (int e = 0; e < ne; e++) q->in[i][k++] = (char)('0' + (ell - ne) + e); }
            else q->in[i][k++] = named[j];
        }
        for (int j = 0; j < k; j++) {
            unsigned char l = (unsigned char)q->in[i][j];
            int64_t d = t->dims[j];
            if (q->size[l] && q->size[l] != d && d != 1 && q->size[l] != 1)
                return op_fail(c, "dimension of '%c' differs between inputs", l);
            if (!q->size[l] || q->size[l] == 1) q->size[l] = d;
        }
    }
    int k = 0;
    if (arrow) {
        for (p = arrow + 2; *p; p++) {
            if (*p == ' ') continue;
            if (*p == '.') { for (int e = 0; e < ell; e++) q->out[k++] = (char)('0' + e); p += 2; continue; }
            if (k >= IR_MAXDIM || !q->size[(unsigned char)*p]) return op_fail(c, "output letter '%c' is not an input letter", *p);
            q->out[k++] = *p;
        }
    } else { /* implicit: ellipsis, then letters appearing once, alphabetically */
        for (int e = 0; e < ell; e++) q->out[k++] = (char)('0' + e);
        for (int l = 'A'; l <= 'z'; l++) {
            if (!((l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z'))) continue;
            int cnt = 0;
            for (int i = 0; i < q->nin; i++) for (const char *s = q->in[i]; *s; s++) cnt += *s == l;
            if (cnt == 1 && k < IR_MAXDIM) q->out[k++] = (char)l;
        }
    }
    q->out[k] = 0;
    return 0;
}

int infer_einsum(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    y->dtype = c->in[0]->dtype;
    y->ndim = -1;
    for (int i = 0; i < c->nin; i++) if (!c->in[i] || c->in[i]->ndim < 0) return 0;
    OpEinsum q;
    if (op_einsum_parse(c, &q)) return -1;
    y->ndim = (int)strlen(q.out);
    for (int k = 0; k < y->ndim; k++) y->dims[k] = q.size[(unsigned char)q.out[k]];
    return 0;
}

int eval_einsum(IrOpCtx *c)
{
    OpEinsum q;
    if (op_einsum_parse(c, &q)) return -1;
    char letters[64];
    int nl = 0;
    for (int l = 0; l < 128; l++) if (q.size[l]) letters[nl++] = (char)l;
    int64_t idx[128] = {0}, total = 1;
    for (int j = 0; j < nl; j++) {
        total *= q.size[(unsigned char)letters[j]];
        if (total > ((int64_t)1 << 32)) return op_fail(c, "more than 2^32 index combinations: too large for the reference Einsum");
    }
    IrTensor *y = c->out[0];
    double *acc = calloc((size_t)ir_numel(y) + 1, sizeof *acc);
    if (!acc) return op_fail(c, "out of memory");
    for (int64_t it = 0; it < total; it++) {
        int64_t rem = it;
        for (int j = nl - 1; j >= 0; j--) { unsigned char l = (unsigned char)letters[j]; idx[l] = rem % q.size[l]; rem /= q.size[l]; }
        double prod = 1;
        for (int i = 0; i < q.nin; i++) {
            const IrTensor *t = c->in[i];
            int64_t off = 0;
            for (int k = 0; k < t->ndim; k++) off = off * t->dims[k] + (t->dims[k] == 1 ? 0 : idx[(unsigned char)q.in[i][k]]);
            prod *= ir_get_f(t, off);
        }
        int64_t o = 0;
        for (int k = 0; k < y->ndim; k++) o = o * y->dims[k] + idx[(unsigned char)q.out[k]];
        acc[o] += prod;
    }
    for (int64_t i = 0; i < ir_numel(y); i++) ir_set_f(y, i, acc[i]);
    free(acc);
    return 0;
}

/* ---- ReverseSequence, DynamicQuantizeLinear, Det ---- */

int infer_reversesequence(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    if (c->in[1]->dtype != IR_I64) return op_fail(c, "sequence_lens must be int64");
    if (x->ndim >= 0 && x->ndim < 2) return op_fail(c, "input rank %d, needs at least 2", x->ndim);
    int64_t ta = ir_attr_int(c->n, "time_axis", 0), ba = ir_attr_int(c->n, "batch_axis", 1);
    if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0))) return op_fail(c, "time_axis/batch_axis must be 0/1 or 1/0");
    op_same_shape(c->out[0], x);
    return 0;
}

int eval_reversesequence(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t ta = ir_attr_int(c->n, "time_axis", 0), ba = 1 - ta;
    int64_t T = x->dims[ta], Bn = x->dims[ba], inner = 1;
    for (int k = 2; k < x->ndim; k++) inner *= x->dims[k];
    size_t es = ir_dtype_size(x->dtype);
    for (int64_t b = 0; b < Bn; b++) {
        int64_t len = ir_get_i(c->in[1], b);
        if (len < 0 || len > T) return op_fail(c, "sequence length %lld out of range", (long long)len);
        for (int64_t t = 0; t < T; t++) {
            int64_t src = t < len ? len - 1 - t : t;
            int64_t di = ta == 0 ? t * Bn + b : b * T + t, si = ta == 0 ? src * Bn + b : b * T + src;
            memcpy((char *)y->data + (size_t)(di * inner) * es, (const char *)x->data + (size_t)(si * inner) * es, (size_t)inner * es);
        }
    }
    return 0;
}

int infer_dynquant(IrOpCtx *c)
{
    if (c->in[0]->dtype != IR_F32) return op_fail(c, "input must be float32");
    op_same_shape(c->out[0], c->in[0]);
    c->out[0]->dtype = IR_U8;
    for (int o = 1; o < 3 && o < c->nout; o++)
        if (c->out[o]) { c->out[o]->ndim = 0; c->out[o]->dtype = o == 1 ? IR_F32 : IR_U8; }
    return 0;
}

int eval_dynquant(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    int64_t n = ir_numel(x);
    float mn = 0, mx = 0;
    for (int64_t i = 0; i < n; i++) { float v = ((const float *)x->data)[i]; if (v < mn) mn = v; if (v > mx) mx = v; }
    float scale = (mx - mn) / 255.0f;
    if (scale == 0) scale = 1; /* all zeros: any scale represents them */
    float zf = nearbyintf(-mn / scale);
    float zp = zf < 0 ? 0 : zf > 255 ? 255 : zf;
    for (int64_t i = 0; i < n; i++) {
        float v = nearbyintf(((const float *)x->data)[i] / scale) + zp;
        ((uint8_t *)c->out[0]->data)[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    if (c->nout > 1 && c->out[1]) ((float *)c->out[1]->data)[0] = scale;
    if (c->nout > 2 && c->out[2]) ((uint8_t *)c->out[2]->data)[0] = (uint8_t)zp;
    return 0;
}

int infer_det(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    if (!op_dtype_is_float(x->dtype)) return op_fail(c, "input must be float");
    y->dtype = x->dtype;
    if (x->ndim < 0) { y->ndim = -1; return 0; }
    if (x->ndim < 2 || (x->dims[x->ndim - 1] >= 0 && x->dims[x->ndim - 2] >= 0 && x->dims[x->ndim - 1] != x->dims[x->ndim - 2]))
        return op_fail(c, "input must be [..., M, M]");
    y->ndim = x->ndim - 2;
    memcpy(y->dims, x->dims, sizeof y->dims);
    return 0;
}

int eval_det(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    int64_t M = x->dims[x->ndim - 1], nb = ir_numel(c->out[0]);
    double *a = malloc(sizeof(double) * (size_t)(M * M + 1));
    if (!a) return op_fail(c, "out of memory");
    for (int64_t b = 0; b < nb; b++) {
        for (int64_t i = 0; i < M * M; i++) a[i] = ir_get_f(x, b * M * M + i);
        double det = 1;
        for (int64_t k = 0; k < M && det != 0; k++) { /* LU with partial pivoting */
            int64_t p = k;
            for (int64_t i = k + 1; i < M; i++) if (fabs(a[i * M + k]) > fabs(a[p * M + k])) p = i;
            if (a[p * M + k] == 0) { det = 0; break; }
            if (p != k) { for (int64_t j = 0; j < M; j++) { double t = a[k * M + j]; a[k * M + j] = a[p * M + j]; a[p * M + j] = t; } det = -det; }
            det *= a[k * M + k];
            for (int64_t i = k + 1; i < M; i++) {
                double f = a[i * M + k] / a[k * M + k];
                for (int64_t j = k; j < M; j++) a[i * M + j] -= f * a[k * M + j];
            }
        }
        ir_set_f(c->out[0], b, det);
    }
    free(a);
    return 0;
}
