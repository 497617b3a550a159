/* shape.c - data-movement and shape ops (Concat, Split, Slice, Reshape,
 * Flatten, Transpose, Squeeze, Unsqueeze, Constant, Shape, Gather, Pad,
 * ConstantOfShape, Range, Expand, Tile, DepthToSpace/SpaceToDepth) and the
 * reductions. They work on any dtype by moving elements as bytes. Where an
 * output shape depends on an input's values (Reshape's shape, Slice's
 * starts...), infer uses the value when the input is constant and leaves the
 * shape unknown otherwise. */
#include "compiler/ops/ops.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void set_unknown(IrTensor *t, int dtype, int ndim)
{
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim && i < IR_MAXDIM; i++) t->dims[i] = -1;
}

static void strides_of(const IrTensor *t, int64_t *st)
{
    int64_t s = 1;
    for (int k = t->ndim - 1; k >= 0; k--) { st[k] = s; s *= t->dims[k]; }
}

/* Copies out[i] = in[src(i)] for each output element, where src is given by
 * per-axis source coordinate tables: coord[k][o_k] (or -1 for "fill").
 * Used by Slice, Tile, Pad, Expand. fill may be NULL when never needed. */
static int gather_copy(IrOpCtx *c, const IrTensor *in, IrTensor *out, int64_t **coord, const void *fill)
{
    int r = out->ndim;
    int64_t st[IR_MAXDIM], idx[IR_MAXDIM] = {0};
    strides_of(in, st);
    size_t es = ir_dtype_size(out->dtype);
    int64_t n = ir_numel(out);
    const char *src = in->data;
    char *dst = out->data;
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0;
        int pad = 0;
        for (int k = 0; k < r; k++) {
            int64_t s = coord[k][idx[k]];
            if (s < 0) pad = 1;
            off += s * st[k];
        }
        if (pad) memcpy(dst + (size_t)i * es, fill, es);
        else memcpy(dst + (size_t)i * es, src + (size_t)off * es, es);
        for (int k = r - 1; k >= 0; k--) {
            if (++idx[k] < out->dims[k]) break;
            idx[k] = 0;
        }
    }
    (void)c;
    return 0;
}

static int64_t **coord_alloc(const IrTensor *out)
{
    int64_t total = 0;
    for (int k = 0; k < out->ndim; k++) total += out->dims[k];
    int64_t **cd = malloc(sizeof(int64_t *) * IR_MAXDIM + sizeof(int64_t) * (size_t)(total + 1));
    if (!cd) return NULL;
    int64_t *p = (int64_t *)(cd + IR_MAXDIM);
    for (int k = 0; k < out->ndim; k++) { cd[k] = p; p += out->dims[k]; }
    return cd;
}

/* ---- Concat ---- */

int infer_concat(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    const IrTensor *a = c->in[0];
    int r = -1;
    for (int i = 0; i < c->nin; i++) {
        if (!c->in[i]) return op_fail(c, "input %d is missing", i);
        if (c->in[i]->dtype != a->dtype) return op_fail(c, "input %d has type %s, input 0 %s", i, ir_dtype_name(c->in[i]->dtype), ir_dtype_name(a->dtype));
        if (c->in[i]->ndim >= 0) {
            if (r >= 0 && c->in[i]->ndim != r) return op_fail(c, "input %d has rank %d, others %d", i, c->in[i]->ndim, r);
            r = c->in[i]->ndim;
        }
    }
    if (r < 0) { set_unknown(y, a->dtype, -1); return 0; }
    int64_t axis;
    if (op_axis(c, ir_attr_int(c->n, "axis", 1), r, &axis)) return -1;
    set_unknown(y, a->dtype, r);
    int64_t sum = 0;
    for (int k = 0; k < r; k++) {
        for (int i = 0; i < c->nin; i++) {
            const IrTensor *t = c->in[i];
            if (t->ndim < 0) { if (k == axis) sum = -1; continue; }
            if (k == axis) { if (sum >= 0 && t->dims[k] >= 0) sum += t->dims[k]; else sum = -1; continue; }
            if (t->dims[k] < 0) continue;
            if (y->dims[k] >= 0 && y->dims[k] != t->dims[k]) {
                char s1[128], s2[128];
                return op_fail(c, "input %d shape %s does not match %s outside axis %lld", i,
                               ir_shape_str(t, s1, sizeof s1), ir_shape_str(c->in[0], s2, sizeof s2), (long long)axis);
            }
            y->dims[k] = t->dims[k];
        }
    }
    y->dims[axis] = sum;
    return 0;
}

int eval_concat(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    int64_t axis;
    op_axis(c, ir_attr_int(c->n, "axis", 1), y->ndim, &axis);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= y->dims[k];
    for (int k = (int)axis + 1; k < y->ndim; k++) inner *= y->dims[k];
    size_t es = ir_dtype_size(y->dtype), row = (size_t)(y->dims[axis] * inner) * es, at = 0;
    for (int i = 0; i < c->nin; i++) {
        size_t chunk = (size_t)(c->in[i]->dims[axis] * inner) * es;
        for (int64_t o = 0; o < outer; o++)
            memcpy((char *)y->data + (size_t)o * row + at, (const char *)c->in[i]->data + (size_t)o * chunk, chunk);
        at += chunk;
    }
    return 0;
}

/* ---- Split ---- */

static int split_sizes(IrOpCtx *c, int64_t dim, int64_t *sz, int *known)
{
    int n = 0;
    int rc = op_int_list(c, c->opset < 13 ? "split" : NULL, c->opset < 13 ? -1 : 1, sz, IR_MAXDIM * 64, &n);
    *known = 1;
    if (rc < 0) return -1;
    if (rc == 2) { *known = 0; return 0; }
    if (rc == 1) {
        if (n != c->nout) return op_fail(c, "split has %d sizes for %d outputs", n, c->nout);
        int64_t s = 0;
        for (int i = 0; i < n; i++) {
            if (sz[i] < 0) return op_fail(c, "negative split size");
            if (op_check_dim(c, "split size", (double)sz[i])) return -1;
            s += sz[i];
        }
        if (dim >= 0 && s != dim) return op_fail(c, "split sizes add up to %lld, axis has %lld", (long long)s, (long long)dim);
        return 0;
    }
    if (dim < 0) { *known = 0; return 0; }
    int64_t parts = c->nout;
    if (c->opset >= 18 && ir_attr(c->n, "num_outputs")) {
        parts = ir_attr_int(c->n, "num_outputs", c->nout);
        if (parts != c->nout) return op_fail(c, "num_outputs %lld but %d outputs", (long long)parts, c->nout);
        int64_t each = (dim + parts - 1) / parts;
        for (int i = 0; i < c->nout; i++) { int64_t left = dim - each * i; sz[i] = left < each ? (left < 0 ? 0 : left) : each; }
        return 0;
    }
    if (dim % parts) return op_fail(c, "axis of %lld cannot be split evenly into %lld", (long long)dim, (long long)parts);
    for (int i = 0; i < c->nout; i++) sz[i] = dim / parts;
    return 0;
}

int infer_split(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    if (c->nout > IR_MAXDIM * 64) return op_fail(c, "too many outputs");
    for (int i = 0; i < c->nout; i++) if (c->out[i]) set_unknown(c->out[i], x->dtype, x->ndim);
    if (x->ndim < 0) return 0;
    int64_t axis;
    if (op_axis(c, ir_attr_int(c->n, "axis", 0), x->ndim, &axis)) return -1;
    int64_t sz[IR_MAXDIM * 64];
    int known;
    if (split_sizes(c, x->dims[axis], sz, &known)) return -1;
    for (int i = 0; i < c->nout; i++) {
        if (!c->out[i]) continue;
        op_same_shape(c->out[i], x);
        c->out[i]->dims[axis] = known ? sz[i] : -1;
    }
    return 0;
}

int eval_split(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    int64_t axis;
    op_axis(c, ir_attr_int(c->n, "axis", 0), x->ndim, &axis);
    int64_t sz[IR_MAXDIM * 64];
    int known;
    if (split_sizes(c, x->dims[axis], sz, &known)) return -1;
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= x->dims[k];
    for (int k = (int)axis + 1; k < x->ndim; k++) inner *= x->dims[k];
    size_t es = ir_dtype_size(x->dtype), row = (size_t)(x->dims[axis] * inner) * es, at = 0;
    for (int i = 0; i < c->nout; i++) {
        size_t chunk = (size_t)(sz[i] * inner) * es;
        if (c->out[i])
            for (int64_t o = 0; o < outer; o++)
                memcpy((char *)c->out[i]->data + (size_t)o * chunk, (const char *)x->data + (size_t)o * row + at, chunk);
        at += chunk;
    }
    return 0;
}

/* ---- Slice ---- */

/* Resolves per-axis start/step/count. Returns 1 when known, 0 when the
 * parameters are not constant. */
static int slice_params(IrOpCtx *c, const IrTensor *x, int64_t *start, int64_t *step, int64_t *cnt)
{
    int64_t st[IR_MAXDIM], en[IR_MAXDIM], ax[IR_MAXDIM], sp[IR_MAXDIM];
    int ns = 0, ne = 0, na = 0, np = 0, r1, r2, r3 = 0, r4 = 0;
    if (c->opset < 10) {
        r1 = op_int_list(c, "starts", -1, st, IR_MAXDIM, &ns);
        r2 = op_int_list(c, "ends", -1, en, IR_MAXDIM, &ne);
        r3 = op_int_list(c, "axes", -1, ax, IR_MAXDIM, &na);
    } else {
        r1 = op_int_list(c, NULL, 1, st, IR_MAXDIM, &ns);
        r2 = op_int_list(c, NULL, 2, en, IR_MAXDIM, &ne);
        r3 = op_int_list(c, NULL, 3, ax, IR_MAXDIM, &na);
        r4 = op_int_list(c, NULL, 4, sp, IR_MAXDIM, &np);
    }
    if (r1 < 0 || r2 < 0 || r3 < 0 || r4 < 0) return -1;
    if (r1 != 1 || r2 != 1 || r3 == 2 || r4 == 2) return 0;
    if (ns != ne) return op_fail(c, "starts has %d values, ends %d", ns, ne);
    if (r3 == 0) { na = ns; for (int i = 0; i < ns; i++) ax[i] = i; }
    if (r4 == 0) { np = ns; for (int i = 0; i < ns; i++) sp[i] = 1; }
    if (na != ns || np != ns) return op_fail(c, "starts, axes and steps lengths differ");
    int r = x->ndim;
    for (int k = 0; k < r; k++) { start[k] = 0; step[k] = 1; cnt[k] = x->dims[k]; }
    for (int i = 0; i < ns; i++) {
        int64_t a;
        if (op_axis(c, ax[i], r, &a)) return -1;
        int64_t d = x->dims[a], s = st[i], e = en[i], p = sp[i];
        if (p == 0) return op_fail(c, "step 0 on axis %lld", (long long)a);
        if (d < 0) { cnt[a] = -1; continue; }
        if (s < 0) s += d;
        if (e < 0) e += d;
        if (p > 0) {
            s = s < 0 ? 0 : s > d ? d : s;
            e = e < 0 ? 0 : e > d ? d : e;
            cnt[a] = e > s ? (e - s + p - 1) / p : 0;
        } else {
            s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            cnt[a] = s > e ? (s - e + (-p) - 1) / (-p) : 0;
        }
        start[a] = s;
        step[a] = p;
    }
    return 1;
}

int infer_slice(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    set_unknown(y, x->dtype, x->ndim);
    if (x->ndim < 0) return 0;
    int64_t start[IR_MAXDIM], step[IR_MAXDIM], cnt[IR_MAXDIM];
    int k = slice_params(c, x, start, step, cnt);
    if (k < 0) return -1;
    if (k == 1) for (int i = 0; i < x->ndim; i++) y->dims[i] = cnt[i];
    return 0;
}

int eval_slice(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t start[IR_MAXDIM], step[IR_MAXDIM], cnt[IR_MAXDIM];
    if (slice_params(c, x, start, step, cnt) != 1) return op_fail(c, "slice parameters are not known");
    int64_t **cd = coord_alloc(y);
    if (!cd) return op_fail(c, "out of memory");
    for (int k = 0; k < y->ndim; k++)
        for (int64_t i = 0; i < y->dims[k]; i++) cd[k][i] = start[k] + i * step[k];
    gather_copy(c, x, y, cd, NULL);
    free(cd);
    return 0;
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze, Transpose ---- */

int infer_reshape(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t sh[IR_MAXDIM];
    int n = 0;
    int rc = op_int_list(c, c->opset < 5 ? "shape" : NULL, c->opset < 5 ? -1 : 1, sh, IR_MAXDIM, &n);
    if (rc < 0) return -1;
    if (rc == 0) return op_fail(c, "no target shape");
    if (rc == 2) {
        const IrTensor *s = c->in[1];
        set_unknown(y, x->dtype, s->ndim == 1 && s->dims[0] >= 0 && s->dims[0] <= IR_MAXDIM ? (int)s->dims[0] : -1);
        return 0;
    }
    int allowzero = (int)ir_attr_int(c->n, "allowzero", 0);
    set_unknown(y, x->dtype, n);
    int neg = -1;
    int64_t prod = 1;
    int unknown = 0;
    for (int i = 0; i < n; i++) {
        int64_t d = sh[i];
        if (op_check_dim(c, "target dimension", (double)d)) return -1;
        if (d == 0 && !allowzero) {
            if (x->ndim < 0 || i >= x->ndim) { if (x->ndim >= 0) return op_fail(c, "shape[%d]=0 copies a dimension the input does not have", i); unknown = 1; continue; }
            d = x->dims[i];
        }
        if (d == -1) { if (neg >= 0) return op_fail(c, "more than one -1 in the target shape"); neg = i; continue; }
        if (d < -1) return op_fail(c, "invalid target dimension %lld", (long long)d);
        y->dims[i] = d;
        if (d < 0) unknown = 1; else prod *= d;
    }
    int64_t total = ir_numel(x);
    if (neg >= 0) {
        if (total >= 0 && !unknown) {
            if (prod == 0 || total % prod) return op_fail(c, "cannot reshape %lld elements with a -1 dimension (others give %lld)", (long long)total, (long long)prod);
            y->dims[neg] = total / prod;
        }
    } else if (total >= 0 && !unknown && total != prod) {
        char s1[128], s2[128];
        return op_fail(c, "cannot reshape %s (%lld elements) to %s (%lld elements)", ir_shape_str(x, s1, sizeof s1),
                       (long long)total, ir_shape_str(y, s2, sizeof s2), (long long)prod);
    }
    return 0;
}

int eval_reshape(IrOpCtx *c)
{
    memcpy(c->out[0]->data, c->in[0]->data, ir_nbytes(c->in[0]));
    return 0;
}

int infer_flatten(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    set_unknown(y, x->dtype, 2);
    if (x->ndim < 0) return 0;
    int64_t axis = ir_attr_int(c->n, "axis", 1);
    if (axis < -x->ndim || axis > x->ndim) return op_fail(c, "axis %lld out of range for rank %d", (long long)axis, x->ndim);
    if (axis < 0) axis += x->ndim;
    int64_t a = 1, b = 1;
    for (int k = 0; k < x->ndim; k++) {
        int64_t *p = k < axis ? &a : &b;
        if (x->dims[k] < 0 || *p < 0) *p = -1;
        else if (op_check_dim(c, "flattened dimension", (double)*p * (double)x->dims[k])) return -1;
        else *p *= x->dims[k];
    }
    y->dims[0] = a;
    y->dims[1] = b;
    return 0;
}

int eval_flatten(IrOpCtx *c) { return eval_reshape(c); }

static int axes_list(IrOpCtx *c, int64_t *ax, int *n)
{
    int rc = op_int_list(c, c->opset < 13 ? "axes" : NULL, c->opset < 13 ? -1 : 1, ax, IR_MAXDIM, n);
    return rc;
}

int infer_squeeze(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t ax[IR_MAXDIM];
    int n = 0;
    int rc = axes_list(c, ax, &n);
    if (rc < 0) return -1;
    if (x->ndim < 0 || rc == 2) { set_unknown(y, x->dtype, -1); return 0; }
    int drop[IR_MAXDIM] = {0};
    if (rc == 0) {
        for (int k = 0; k < x->ndim; k++) {
            if (x->dims[k] < 0) { set_unknown(y, x->dtype, -1); return 0; }
            drop[k] = x->dims[k] == 1;
        }
    } else {
        for (int i = 0; i < n; i++) {
            int64_t a;
            if (op_axis(c, ax[i], x->ndim, &a)) return -1;
            if (x->dims[a] >= 0 && x->dims[a] != 1) return op_fail(c, "cannot squeeze axis %lld of size %lld", (long long)a, (long long)x->dims[a]);
            drop[a] = 1;
        }
    }
    y->dtype = x->dtype;
    y->ndim = 0;
    for (int k = 0; k < x->ndim; k++) if (!drop[k]) y->dims[y->ndim++] = x->dims[k];
    return 0;
}

int eval_squeeze(IrOpCtx *c) { return eval_reshape(c); }

int infer_unsqueeze(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t ax[IR_MAXDIM];
    int n = 0;
    int rc = axes_list(c, ax, &n);
    if (rc < 0) return -1;
    if (rc == 0) return op_fail(c, "axes are required");
    if (x->ndim < 0 || rc == 2) { set_unknown(y, x->dtype, rc == 2 || x->ndim < 0 ? -1 : x->ndim + n); return 0; }
    int r = x->ndim + n;
    if (r > IR_MAXDIM) return op_fail(c, "result rank %d exceeds %d", r, IR_MAXDIM);
    int ins[IR_MAXDIM] = {0};
    for (int i = 0; i < n; i++) {
        int64_t a;
        if (op_axis(c, ax[i], r, &a)) return -1;
        if (ins[a]) return op_fail(c, "axis %lld repeated", (long long)a);
        ins[a] = 1;
    }
    y->dtype = x->dtype;
    y->ndim = r;
    for (int k = 0, j = 0; k < r; k++) y->dims[k] = ins[k] ? 1 : x->dims[j++];
    return 0;
}

int eval_unsqueeze(IrOpCtx *c) { return eval_reshape(c); }

static int perm_of(IrOpCtx *c, int r, int64_t *perm)
{
    const IrAttr *a = ir_attr(c->n, "perm");
    if (!a) { for (int k = 0; k < r; k++) perm[k] = r - 1 - k; return 0; }
    if (a->type != IR_ATTR_INTS || a->n != r) return op_fail(c, "perm has %d values for rank %d", a->n, r);
    int seen[IR_MAXDIM] = {0};
    for (int k = 0; k < r; k++) {
        if (op_axis(c, a->ints[k], r, &perm[k])) return -1;
        if (seen[perm[k]]++) return op_fail(c, "perm repeats axis %lld", (long long)perm[k]);
    }
    return 0;
}

int infer_transpose(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    set_unknown(y, x->dtype, x->ndim);
    if (x->ndim < 0) return 0;
    int64_t perm[IR_MAXDIM];
    if (perm_of(c, x->ndim, perm)) return -1;
    for (int k = 0; k < x->ndim; k++) y->dims[k] = x->dims[perm[k]];
    return 0;
}

int eval_transpose(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t perm[IR_MAXDIM], st[IR_MAXDIM];
    if (perm_of(c, x->ndim, perm)) return -1;
    strides_of(x, st);
    int64_t **cd = coord_alloc(y);
    if (!cd) return op_fail(c, "out of memory");
    /* express as a gather over a permuted view: coordinate tables hold
     * offsets directly, so use unit strides on a flat view */
    IrTensor flat = *x;
    flat.ndim = y->ndim;
    for (int k = 0; k < y->ndim; k++) {
        flat.dims[k] = 1;
        for (int64_t i = 0; i < y->dims[k]; i++) cd[k][i] = i * st[perm[k]];
    }
    /* with all flat dims 1, strides_of gives 1 for every axis */
    gather_copy(c, &flat, y, cd, NULL);
    free(cd);
    return 0;
}

/* ---- Constant, Shape, ConstantOfShape, Range ---- */

int infer_constant(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    const IrAttr *a;
    if ((a = ir_attr(c->n, "value")) && a->t) { op_same_shape(y, a->t); return 0; }
    if ((a = ir_attr(c->n, "value_float"))) { y->dtype = IR_F32; y->ndim = 0; return 0; }
    if ((a = ir_attr(c->n, "value_int"))) { y->dtype = IR_I64; y->ndim = 0; return 0; }
    if ((a = ir_attr(c->n, "value_floats"))) { y->dtype = IR_F32; y->ndim = 1; y->dims[0] = a->n; return 0; }
    if ((a = ir_attr(c->n, "value_ints"))) { y->dtype = IR_I64; y->ndim = 1; y->dims[0] = a->n; return 0; }
    return op_fail(c, "no supported value attribute (value, value_float(s), value_int(s))");
}

int eval_constant(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    const IrAttr *a;
    if ((a = ir_attr(c->n, "value")) && a->t) { memcpy(y->data, a->t->data, ir_nbytes(a->t)); return 0; }
    if ((a = ir_attr(c->n, "value_float"))) { ((float *)y->data)[0] = a->f; return 0; }
    if ((a = ir_attr(c->n, "value_int"))) { ((int64_t *)y->data)[0] = a->i; return 0; }
    if ((a = ir_attr(c->n, "value_floats"))) { memcpy(y->data, a->floats, (size_t)a->n * 4); return 0; }
    if ((a = ir_attr(c->n, "value_ints"))) { memcpy(y->data, a->ints, (size_t)a->n * 8); return 0; }
    return op_fail(c, "no value");
}

static void shape_range(IrOpCtx *c, int r, int64_t *s, int64_t *e)
{
    *s = c->opset >= 15 ? ir_attr_int(c->n, "start", 0) : 0;
    *e = c->opset >= 15 ? ir_attr_int(c->n, "end", r) : r;
    if (*s < 0) *s += r;
    if (*e < 0) *e += r;
    *s = *s < 0 ? 0 : *s > r ? r : *s;
    *e = *e < 0 ? 0 : *e > r ? r : *e;
    if (*e < *s) *e = *s;
}

int infer_shape(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    y->dtype = IR_I64;
    y->ndim = 1;
    if (c->in[0]->ndim < 0) { y->dims[0] = -1; return 0; }
    int64_t s, e;
    shape_range(c, c->in[0]->ndim, &s, &e);
    y->dims[0] = e - s;
    return 0;
}

int eval_shape(IrOpCtx *c)
{
    int64_t s, e;
    shape_range(c, c->in[0]->ndim, &s, &e);
    for (int64_t k = s; k < e; k++) ((int64_t *)c->out[0]->data)[k - s] = c->in[0]->dims[k];
    return 0;
}

int infer_constantofshape(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    const IrAttr *a = ir_attr(c->n, "value");
    int dt = a && a->t ? a->t->dtype : IR_F32;
    if (a && a->t && ir_numel(a->t) != 1) return op_fail(c, "value must have one element");
    int64_t sh[IR_MAXDIM];
    int n = 0;
    const IrTensor *s = c->in[0];
    if (s->ndim != 1 && s->ndim >= 0) return op_fail(c, "shape input must be 1-D");
    int rc = op_int_list(c, NULL, 0, sh, IR_MAXDIM, &n);
    if (rc < 0) return -1;
    if (rc != 1) { set_unknown(y, dt, s->ndim == 1 && s->dims[0] >= 0 && s->dims[0] <= IR_MAXDIM ? (int)s->dims[0] : -1); return 0; }
    set_unknown(y, dt, n);
    for (int i = 0; i < n; i++) {
        if (sh[i] < 0) return op_fail(c, "negative dimension %lld", (long long)sh[i]);
        if (op_check_dim(c, "dimension", (double)sh[i])) return -1;
        y->dims[i] = sh[i];
    }
    return 0;
}

int eval_constantofshape(IrOpCtx *c)
{
    const IrAttr *a = ir_attr(c->n, "value");
    IrTensor *y = c->out[0];
    if (!a || !a->t) return 0; /* zeros */
    size_t es = ir_dtype_size(y->dtype);
    int64_t n = ir_numel(y);
    for (int64_t i = 0; i < n; i++) memcpy((char *)y->data + (size_t)i * es, a->t->data, es);
    return 0;
}

int infer_range(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    int dt = c->in[0]->dtype;
    for (int i = 1; i < 3; i++) if (c->in[i]->dtype != dt) return op_fail(c, "start, limit and delta types differ");
    set_unknown(y, dt, 1);
    for (int i = 0; i < 3; i++) {
        if (!c->in[i]->data) return 0;
        if (ir_numel(c->in[i]) != 1) return op_fail(c, "input %d must be a scalar", i);
    }
    int64_t n;
    if (op_dtype_is_float(dt)) {
        double s = ir_get_f(c->in[0], 0), l = ir_get_f(c->in[1], 0), d = ir_get_f(c->in[2], 0);
        if (d == 0) return op_fail(c, "delta is zero");
        double q = ceil((l - s) / d);
        if (!(q < 1e9)) return op_fail(c, "range too long");
        n = q > 0 ? (int64_t)q : 0;
    } else {
        int64_t s = ir_get_i(c->in[0], 0), l = ir_get_i(c->in[1], 0), d = ir_get_i(c->in[2], 0);
        if (d == 0) return op_fail(c, "delta is zero");
        double q = ceil(((double)l - (double)s) / (double)d);
        if (!(q < 1e9)) return op_fail(c, "range too long");
        n = q > 0 ? (int64_t)q : 0;
    }
    y->dims[0] = n;
    return 0;
}

int eval_range(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    int64_t n = y->dims[0];
    if (op_dtype_is_float(y->dtype)) {
        double s = ir_get_f(c->in[0], 0), d = ir_get_f(c->in[2], 0);
        for (int64_t i = 0; i < n; i++) ir_set_f(y, i, s + (double)i * d);
    } else {
        int64_t s = ir_get_i(c->in[0], 0), d = ir_get_i(c->in[2], 0);
        for (int64_t i = 0; i < n; i++) ir_set_i(y, i, s + i * d);
    }
    return 0;
}

/* ---- Gather ---- */

int infer_gather(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *ind = c->in[1];
    IrTensor *y = c->out[0];
    if (ind->dtype != IR_I64 && ind->dtype != IR_I32) return op_fail(c, "indices must be int32 or int64");
    if (x->ndim < 0 || ind->ndim < 0) { set_unknown(y, x->dtype, -1); return 0; }
    int64_t axis;
    if (op_axis(c, ir_attr_int(c->n, "axis", 0), x->ndim, &axis)) return -1;
    int r = x->ndim - 1 + ind->ndim;
    if (r > IR_MAXDIM) return op_fail(c, "result rank %d exceeds %d", r, IR_MAXDIM);
    y->dtype = x->dtype;
    y->ndim = 0;
    for (int k = 0; k < axis; k++) y->dims[y->ndim++] = x->dims[k];
    for (int k = 0; k < ind->ndim; k++) y->dims[y->ndim++] = ind->dims[k];
    for (int k = (int)axis + 1; k < x->ndim; k++) y->dims[y->ndim++] = x->dims[k];
    if (ind->data && x->dims[axis] >= 0) {
        int64_t n = ir_numel(ind);
        for (int64_t i = 0; i < n; i++) {
            int64_t v = ir_get_i(ind, i);
            if (v < -x->dims[axis] || v >= x->dims[axis])
                return op_fail(c, "index %lld is out of range for axis %lld of size %lld", (long long)v, (long long)axis, (long long)x->dims[axis]);
        }
    }
    return 0;
}

int eval_gather(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *ind = c->in[1];
    IrTensor *y = c->out[0];
    int64_t axis;
    op_axis(c, ir_attr_int(c->n, "axis", 0), x->ndim, &axis);
    int64_t outer = 1, inner = 1, A = x->dims[axis], ni = ir_numel(ind);
    for (int k = 0; k < axis; k++) outer *= x->dims[k];
    for (int k = (int)axis + 1; k < x->ndim; k++) inner *= x->dims[k];
    size_t es = ir_dtype_size(x->dtype), chunk = (size_t)inner * es;
    char *dst = y->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < ni; j++) {
            int64_t v = ir_get_i(ind, j);
            if (v < 0) v += A;
            if (v < 0 || v >= A) return op_fail(c, "index %lld out of range", (long long)ir_get_i(ind, j));
            memcpy(dst, (const char *)x->data + (size_t)(o * A + v) * chunk, chunk);
            dst += chunk;
        }
    return 0;
}

/* ---- reductions ---- */

static int reduce_axes(IrOpCtx *c, int r, int *red, int *noop)
{
    int64_t ax[IR_MAXDIM];
    int n = 0;
    int from_input = !strcmp(c->n->op, "ReduceSum") ? c->opset >= 13 : c->opset >= 18;
    int rc = op_int_list(c, from_input ? NULL : "axes", from_input ? 1 : -1, ax, IR_MAXDIM, &n);
    if (rc < 0) return -1;
    if (rc == 2) return 2;
    *noop = 0;
    for (int k = 0; k < r; k++) red[k] = 0;
    if (rc == 0 || n == 0) {
        if (ir_attr_int(c->n, "noop_with_empty_axes", 0)) { *noop = 1; return 0; }
        for (int k = 0; k < r; k++) red[k] = 1;
        return 0;
    }
    for (int i = 0; i < n; i++) {
        int64_t a;
        if (op_axis(c, ax[i], r, &a)) return -1;
        red[a] = 1;
    }
    return 0;
}

int infer_reduce(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int keep = (int)ir_attr_int(c->n, "keepdims", 1);
    if (x->ndim < 0) { set_unknown(y, x->dtype, -1); return 0; }
    int red[IR_MAXDIM], noop;
    int rc = reduce_axes(c, x->ndim, red, &noop);
    if (rc < 0) return -1;
    if (rc == 2) { set_unknown(y, x->dtype, keep ? x->ndim : -1); return 0; }
    if (noop) { op_same_shape(y, x); return 0; }
    y->dtype = x->dtype;
    y->ndim = 0;
    for (int k = 0; k < x->ndim; k++) {
        if (!red[k]) y->dims[y->ndim++] = x->dims[k];
        else if (keep) y->dims[y->ndim++] = 1;
    }
    return 0;
}

/* Reductions: value fed to the accumulator, how two combine, and the final
 * transform given the element count. */
enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQ };
static const struct { const char *op; int kind; } reduce_ops[] = {
    {"ReduceSum", R_SUM}, {"ReduceMean", R_MEAN}, {"ReduceMax", R_MAX}, {"ReduceMin", R_MIN},
    {"ReduceProd", R_PROD}, {"ReduceL1", R_L1}, {"ReduceL2", R_L2}, {"ReduceLogSum", R_LOGSUM},
    {"ReduceLogSumExp", R_LOGSUMEXP}, {"ReduceSumSquare", R_SUMSQ},
};

int eval_reduce(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int red[IR_MAXDIM], noop;
    if (reduce_axes(c, x->ndim, red, &noop)) return -1;
    int64_t n = ir_numel(x), m = ir_numel(y);
    if (noop) { memcpy(y->data, x->data, ir_nbytes(x)); return 0; }
    int kind = -1;
    for (size_t i = 0; i < sizeof reduce_ops / sizeof reduce_ops[0]; i++)
        if (!strcmp(reduce_ops[i].op, c->n->op)) kind = reduce_ops[i].kind;
    if (kind < 0) return op_fail(c, "no reduction kernel");
    double *acc = malloc(sizeof(double) * (size_t)(m + 1));
    if (!acc) return op_fail(c, "out of memory");
    double init = kind == R_MAX ? -INFINITY : kind == R_MIN ? INFINITY : kind == R_PROD ? 1 : 0;
    for (int64_t i = 0; i < m; i++) acc[i] = init;
    int64_t ost[IR_MAXDIM], s = 1, idx[IR_MAXDIM] = {0};
    for (int k = x->ndim - 1; k >= 0; k--) { ost[k] = red[k] ? 0 : s; if (!red[k]) s *= x->dims[k]; }
    int64_t o = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = ir_get_f(x, i);
        switch (kind) {
        case R_MAX: if (v > acc[o] || v != v) acc[o] = v; break;
        case R_MIN: if (v < acc[o] || v != v) acc[o] = v; break;
        case R_PROD: acc[o] *= v; break;
        case R_L1: acc[o] += fabs(v); break;
        case R_L2: case R_SUMSQ: acc[o] += v * v; break;
        case R_LOGSUMEXP: acc[o] += exp(v); break;
        default: acc[o] += v;
        }
        for (int k = x->ndim - 1; k >= 0; k--) {
            o += ost[k];
            if (++idx[k] < x->dims[k]) break;
            o -= ost[k] * x->dims[k];
            idx[k] = 0;
        }
    }
    int64_t cnt = m ? n / m : 1;
    for (int64_t i = 0; i < m; i++) {
        double v = acc[i];
        if (kind == R_MEAN) v /= (double)(cnt ? cnt : 1);
        else if (kind == R_L2) v = sqrt(v);
        else if (kind == R_LOGSUM || kind == R_LOGSUMEXP) v = log(v);
        ir_set_f(y, i, v);
    }
    free(acc);
    return 0;
}

/* ---- Pad ---- */

static int pad_params(IrOpCtx *c, int r, int64_t *pb, int64_t *pe, int *known)
{
    int64_t p[2 * IR_MAXDIM], ax[IR_MAXDIM];
    int n = 0, na = 0;
    *known = 1;
    int rc = op_int_list(c, c->opset < 11 ? (c->opset < 2 ? "paddings" : "pads") : NULL, c->opset < 11 ? -1 : 1, p, 2 * IR_MAXDIM, &n);
    if (rc < 0) return -1;
    if (rc == 0) return op_fail(c, "pads are required");
    if (rc == 2) { *known = 0; return 0; }
    int rc2 = c->opset >= 18 ? op_int_list(c, NULL, 3, ax, IR_MAXDIM, &na) : 0;
    if (rc2 < 0) return -1;
    if (rc2 == 2) { *known = 0; return 0; }
    if (rc2 == 0) { na = r; for (int i = 0; i < r; i++) ax[i] = i; }
    if (n != 2 * na) return op_fail(c, "pads has %d values, expected %d", n, 2 * na);
    for (int k = 0; k < r; k++) pb[k] = pe[k] = 0;
    for (int i = 0; i < na; i++) {
        int64_t a;
        if (op_axis(c, ax[i], r, &a)) return -1;
        pb[a] = p[i];
        pe[a] = p[na + i];
    }
    return 0;
}

int infer_pad(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    set_unknown(y, x->dtype, x->ndim);
    if (x->ndim < 0) return 0;
    const char *mode = ir_attr_str(c->n, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
        return op_fail(c, "mode '%s' is not supported", mode);
    int64_t pb[IR_MAXDIM], pe[IR_MAXDIM];
    int known;
    if (pad_params(c, x->ndim, pb, pe, &known)) return -1;
    if (!known) return 0;
    for (int k = 0; k < x->ndim; k++) {
        if (op_check_dim(c, "pad", (double)pb[k]) || op_check_dim(c, "pad", (double)pe[k])) return -1;
        y->dims[k] = x->dims[k] < 0 ? -1 : x->dims[k] + pb[k] + pe[k];
        if (x->dims[k] >= 0 && y->dims[k] < 0) return op_fail(c, "pads remove more than axis %d has", k);
        if (!strcmp(mode, "reflect") && x->dims[k] >= 0 && (pb[k] > 0 || pe[k] > 0) && (pb[k] >= x->dims[k] || pe[k] >= x->dims[k]))
            return op_fail(c, "reflect pad %lld/%lld is not smaller than axis %d of size %lld", (long long)pb[k], (long long)pe[k], k, (long long)x->dims[k]);
    }
    return 0;
}

int eval_pad(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t pb[IR_MAXDIM], pe[IR_MAXDIM];
    int known;
    if (pad_params(c, x->ndim, pb, pe, &known) || !known) return op_fail(c, "pads are not known");
    const char *mode = ir_attr_str(c->n, "mode", "constant");
    int m = !strcmp(mode, "constant") ? 0 : !strcmp(mode, "reflect") ? 1 : 2;
    char fill[16] = {0};
    IrTensor ft = *y;
    ft.data = fill;
    ft.ndim = 0;
    double v = c->opset < 11 ? ir_attr_float(c->n, "value", 0.0f) : (c->nin > 2 && c->in[2] ? ir_get_f(c->in[2], 0) : 0.0);
    ir_set_f(&ft, 0, v);
    int64_t **cd = coord_alloc(y);
    if (!cd) return op_fail(c, "out of memory");
    for (int k = 0; k < y->ndim; k++) {
        int64_t d = x->dims[k];
        for (int64_t i = 0; i < y->dims[k]; i++) {
            int64_t s = i - pb[k];
            if (s < 0 || s >= d) {
                if (m == 0 || d == 0) s = -1;
                else if (m == 2) s = s < 0 ? 0 : d - 1;
                else if (d == 1) s = 0;
                else {
                    int64_t per = 2 * (d - 1);
                    s = ((s % per) + per) % per;
                    if (s >= d) s = per - s;
                }
            }
            cd[k][i] = s;
        }
    }
    gather_copy(c, x, y, cd, fill);
    free(cd);
    return 0;
}

/* ---- Expand, Tile ---- */

int infer_expand(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t sh[IR_MAXDIM];
    int n = 0;
    int rc = op_int_list(c, NULL, 1, sh, IR_MAXDIM, &n);
    if (rc < 0) return -1;
    if (rc != 1) { set_unknown(y, x->dtype, -1); return 0; }
    IrTensor t = {0};
    t.ndim = n;
    for (int i = 0; i < n; i++) {
        if (sh[i] < 0 || op_check_dim(c, "shape value", (double)sh[i])) return op_fail(c, "shape value %lld is out of range", (long long)sh[i]);
        t.dims[i] = sh[i];
    }
    IrTensor *ins[2] = {c->in[0], &t};
    if (op_broadcast_shape(c, ins, 2, y)) return -1;
    y->dtype = x->dtype;
    return 0;
}

int eval_expand(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t **cd = coord_alloc(y);
    if (!cd) return op_fail(c, "out of memory");
    IrTensor v = *x; /* x seen with y's rank */
    int off = y->ndim - x->ndim;
    v.ndim = y->ndim;
    for (int k = 0; k < y->ndim; k++) v.dims[k] = k < off ? 1 : x->dims[k - off];
    for (int k = 0; k < y->ndim; k++)
        for (int64_t i = 0; i < y->dims[k]; i++) cd[k][i] = v.dims[k] == 1 ? 0 : i;
    gather_copy(c, &v, y, cd, NULL);
    free(cd);
    return 0;
}

int infer_tile(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    set_unknown(y, x->dtype, x->ndim);
    int64_t rep[IR_MAXDIM];
    int n = 0;
    int rc = op_int_list(c, NULL, 1, rep, IR_MAXDIM, &n);
    if (rc < 0) return -1;
    if (rc != 1 || x->ndim < 0) return 0;
    if (n != x->ndim) return op_fail(c, "repeats has %d values for rank %d", n, x->ndim);
    for (int k = 0; k < n; k++) {
        if (rep[k] < 0) return op_fail(c, "negative repeat");
        if (op_check_dim(c, "tiled dimension", (double)rep[k] * (double)(x->dims[k] < 0 ? 1 : x->dims[k]))) return -1;
        y->dims[k] = x->dims[k] < 0 ? -1 : x->dims[k] * rep[k];
    }
    return 0;
}

int eval_tile(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t **cd = coord_alloc(y);
    if (!cd) return op_fail(c, "out of memory");
    for (int k = 0; k < y->ndim; k++)
        for (int64_t i = 0; i < y->dims[k]; i++) cd[k][i] = i % x->dims[k];
    gather_copy(c, x, y, cd, NULL);
    free(cd);
    return 0;
}

/* ---- DepthToSpace / SpaceToDepth ---- */

int infer_depthspace(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t b = ir_attr_int(c->n, "blocksize", 0);
    if (b < 1 || b > (1 << 20)) return op_fail(c, "blocksize must be between 1 and 2^20");
    set_unknown(y, x->dtype, 4);
    if (x->ndim < 0) return 0;
    if (x->ndim != 4) return op_fail(c, "input must be 4-D");
    int d2s = !strcmp(c->n->op, "DepthToSpace");
    y->dims[0] = x->dims[0];
    if (d2s) {
        if (x->dims[1] >= 0 && x->dims[1] % (b * b)) return op_fail(c, "channels %lld not divisible by blocksize^2", (long long)x->dims[1]);
        y->dims[1] = x->dims[1] < 0 ? -1 : x->dims[1] / (b * b);
        y->dims[2] = x->dims[2] < 0 ? -1 : x->dims[2] * b;
        y->dims[3] = x->dims[3] < 0 ? -1 : x->dims[3] * b;
    } else {
        for (int k = 2; k < 4; k++)
            if (x->dims[k] >= 0 && x->dims[k] % b) return op_fail(c, "spatial size %lld not divisible by blocksize", (long long)x->dims[k]);
        y->dims[1] = x->dims[1] < 0 ? -1 : x->dims[1] * b * b;
        y->dims[2] = x->dims[2] < 0 ? -1 : x->dims[2] / b;
        y->dims[3] = x->dims[3] < 0 ? -1 : x->dims[3] / b;
    }
    return 0;
}

int eval_depthspace(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t b = ir_attr_int(c->n, "blocksize", 1);
    int d2s = !strcmp(c->n->op, "DepthToSpace");
    int crd = !strcmp(ir_attr_str(c->n, "mode", "DCR"), "CRD");
    size_t es = ir_dtype_size(x->dtype);
    int64_t N = y->dims[0], C = y->dims[1], H = y->dims[2], W = y->dims[3];
    int64_t XC = x->dims[1], XH = x->dims[2], XW = x->dims[3];
    int64_t o = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++, o++) {
                    int64_t src;
                    if (d2s) {
                        int64_t i = h % b, j = w % b;
                        int64_t ic = crd ? ch * b * b + i * b + j : (i * b + j) * C + ch;
                        src = ((n * XC + ic) * XH + h / b) * XW + w / b;
                    } else {
                        int64_t XCc = XC, blk = ch / XCc, ic = ch % XCc, i = blk / b, j = blk % b;
                        src = ((n * XC + ic) * XH + h * b + i) * XW + w * b + j;
                    }
                    memcpy((char *)y->data + (size_t)o * es, (const char *)x->data + (size_t)src * es, es);
                }
    return 0;
}
