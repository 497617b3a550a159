/* common.c - helpers the op implementations share (declared in ops/ops.h):
 * failure messages naming the node, axis and integer-list attributes,
 * shape checks and broadcasting. Apart from table.c so that the table,
 * which names every op's functions, is not also what they call. */
#include "compiler/ops/ops.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int op_fail(IrOpCtx *c, const char *fmt, ...)
{
    if (!c->e) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->e->msg, sizeof c->e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int op_axis(IrOpCtx *c, int64_t axis, int r, int64_t *out)
{
    if (axis < -r || axis >= (r ? r : 1)) return op_fail(c, "axis %lld is out of range for rank %d", (long long)axis, r);
    *out = axis < 0 ? axis + r : axis;
    return 0;
}

int op_int_list(IrOpCtx *c, const char *attr, int idx, int64_t *vals, int max, int *n)
{
    const IrAttr *a = attr ? ir_attr(c->n, attr) : NULL;
    if (a && (a->type == IR_ATTR_INTS || a->type == IR_ATTR_INT)) {
        int cnt = a->type == IR_ATTR_INT ? 1 : a->n;
        if (cnt > max) return op_fail(c, "attribute '%s' has %d values, at most %d supported", attr, cnt, max);
        for (int i = 0; i < cnt; i++) vals[i] = a->type == IR_ATTR_INT ? a->i : a->ints[i];
        *n = cnt;
        return 1;
    }
    if (idx < 0 || idx >= c->nin || !c->in[idx]) return 0;
    const IrTensor *t = c->in[idx];
    if (!t->data) return 2;
    int64_t cnt = ir_numel(t);
    if (cnt > max) return op_fail(c, "input %d has %lld values, at most %d supported", idx, (long long)cnt, max);
    for (int64_t i = 0; i < cnt; i++) vals[i] = ir_get_i(t, i);
    *n = (int)cnt;
    return 1;
}

void op_same_shape(IrTensor *dst, const IrTensor *src)
{
    dst->dtype = src->dtype;
    dst->ndim = src->ndim;
    memcpy(dst->dims, src->dims, sizeof dst->dims);
}

int op_check_dim(IrOpCtx *c, const char *what, double v)
{
    if (!(v >= -(double)OP_MAX_DIM && v <= (double)OP_MAX_DIM))
        return op_fail(c, "%s %g is out of range (|value| <= 2^40)", what, v);
    return 0;
}

int op_dtype_is_float(int dt)
{
    return dt == IR_F32 || dt == IR_F64 || dt == IR_F16 || dt == IR_BF16;
}

int op_broadcast_shape(IrOpCtx *c, IrTensor **ins, int n, IrTensor *out)
{
    int r = 0;
    for (int i = 0; i < n; i++) {
        if (!ins[i]) continue;
        if (ins[i]->ndim < 0) { out->ndim = -1; return 0; }
        if (ins[i]->ndim > r) r = ins[i]->ndim;
    }
    out->ndim = r;
    for (int k = 0; k < r; k++) {
        int64_t d = 1;
        int unknown = 0;
        for (int i = 0; i < n; i++) {
            if (!ins[i]) continue;
            int off = r - ins[i]->ndim;
            if (k < off) continue;
            int64_t x = ins[i]->dims[k - off];
            if (x < 0) { unknown = 1; continue; }
            if (x == 1) continue;
            if (d != 1 && d != x) {
                char a[128], b[128];
                return op_fail(c, "shapes %s and %s cannot be broadcast (dimension %d: %lld vs %lld)",
                               ir_shape_str(ins[0], a, sizeof a), ir_shape_str(ins[i], b, sizeof b), k,
                               (long long)d, (long long)x);
            }
            d = x;
        }
        out->dims[k] = (unknown && d == 1) ? -1 : d;
    }
    return 0;
}
