/* qdq_fuse.c - QDQ node units -> int8 operators (see ops/qdq.h).
 *
 * Reads: a graph with inferred shapes, nodes in topological order.
 * Does: for each QuantizeLinear q (constant scalar scale and zero point)
 *   whose input only q reads, walks back over one optional Relu / Clip
 *   (constant bounds) to the unit's op, whose activation inputs must come
 *   from DequantizeLinear nodes with constant scalar scale and zero point,
 *   and whose weights from a DequantizeLinear of a constant int8 tensor
 *   (per tensor or per output channel, zero point 0); then
 *   - Conv, Gemm, MatMul (+ a constant bias Add after a MatMul) become
 *     Int8Conv / Int8MatMul: bias in accumulator units
 *     round_half_even(b / (s_x s_w[c])) (an int32 DequantizeLinear's value
 *     b_q s_b, or a float constant), the multiplier s_x s_w[c] / s_y as the
 *     integer pair of num_quant_multiplier;
 *   - Add of two activations becomes Int8Add (f32 ratios s_a / s_y, s_b / s_y);
 *   - GlobalAveragePool becomes Int8GlobalAveragePool;
 *   - a data-movement op (MaxPool, Concat, Reshape, ...) runs on the int8
 *     tensor itself; where an input's scale or zero point differs from the
 *     output's (or an activation follows) a one-input Int8Add rescales;
 *   - DequantizeLinear -> QuantizeLinear is a rescale (or an Identity);
 *   - a Relu / Clip alone between DQ and Q is a rescale with its clamp.
 *   The activation narrows the clamp: Relu to [z_y, .], Clip(a, b) to
 *   [q(a), q(b)] with q QuantizeLinear's own rounding of the bound.
 *   DequantizeLinear nodes nothing live reads any more are marked dead.
 * Guarantees: the fused graph computes ops/int8.c's functions; the
 *   unit's float tensors disappear, its output keeps the QuantizeLinear
 *   output's name. Units that do not fit (see qdq.h) stay float.
 * Why in ops/: the interpreter (interp/), the passes and the compiler all
 *   call it; it is the definition of what a QDQ unit computes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/ops/qdq.h"
#include "compiler/ops/ops.h"
#include "isa/numerics.h"

/* A (de)quantisation parameter set: the int8 tensor, its type, per-tensor
 * scale and zero point (per-channel: scales / nsc values along axis). */
typedef struct QP {
    int src, dt;
    double scale;
    int32_t zp;
    const IrTensor *scales;
    int64_t nsc, axis;
} QP;

static int is_op(const IrNode *n, const char *op) { return !strcmp(n->op, op); }

/* The live node writing t, or -1 (found by scanning, so the graph's
 * producer fields need not be current: hand-built graphs, nodes added by
 * the rewrite itself). */
static int producer(const IrGraph *g, int t)
{
    if (t < 0) return -1;
    for (int i = g->nn - 1; i >= 0; i--) {
        if (g->nodes[i].dead) continue;
        for (int k = 0; k < g->nodes[i].nout; k++) if (g->nodes[i].out[k] == t) return i;
    }
    return -1;
}

/* The constant value of tensor t: its data, or a Constant node's value. */
static const IrTensor *cval(const IrGraph *g, int t)
{
    if (t < 0) return NULL;
    if (g->t[t].data) return &g->t[t];
    int p = producer(g, t);
    if (p < 0 || !is_op(&g->nodes[p], "Constant")) return NULL;
    const IrAttr *a = ir_attr(&g->nodes[p], "value");
    return a && a->type == IR_ATTR_TENSOR && a->t && a->t->data ? a->t : NULL;
}

/* Makes tensor t a constant when a small subgraph of constants computes
 * it (PyTorch exports a bias zero point as Cast(ConstantOfShape(...))):
 * its producer is evaluated with the op table once its inputs are
 * constants (depth levels deep), its output stored as t's data and the
 * node marked dead. 1 when t is (now) a constant, 0 when not, -1 error. */
static int materialize(IrGraph *g, int t, int depth, AtlErr *e)
{
    if (t < 0) return 0;
    if (g->t[t].data) return 1;
    int p = producer(g, t);
    if (p < 0 || depth <= 0 || is_op(&g->nodes[p], "DequantizeLinear") || is_op(&g->nodes[p], "QuantizeLinear") ||
        g->nodes[p].nout != 1 || !ir_op_find(g->nodes[p].op, g->opset))
        return 0;
    for (int k = 0; k < g->nodes[p].nin; k++) {
        int r = materialize(g, g->nodes[p].in[k], depth - 1, e);
        if (r <= 0) return r;
    }
    IrNode *n = &g->nodes[p];
    IrTensor *in[16], out = g->t[t], *outs[1] = {&out};
    if (n->nin > 16) return 0;
    for (int k = 0; k < n->nin; k++) in[k] = n->in[k] >= 0 ? &g->t[n->in[k]] : NULL;
    out.data = NULL;
    if (ir_node_infer(g, n, in, outs, e) || !ir_shape_known(&out) || ir_numel(&out) > 65536 || ir_alloc_data(&out, e)) return -1;
    IrOpCtx c = {n, g->opset, in, n->nin, outs, 1, e};
    if (ir_op_find(n->op, g->opset)->eval(&c)) { free(out.data); return atl_err_prefix(e, "node '%s' (%s)", n->name, n->op); }
    g->t[t] = out;
    n->dead = 1;
    return 1;
}

/* Scale (float, scalar) and zero point (int8/uint8/int32 scalar or absent)
 * of a Quantize/DequantizeLinear node; per-axis allowed when per_axis. */
static int node_qp(const IrGraph *g, const IrNode *n, int per_axis, QP *q)
{
    const IrTensor *s = cval(g, n->in[1]), *z = n->nin > 2 ? cval(g, n->in[2]) : NULL;
    if (!s || !op_dtype_is_float(s->dtype) || (n->nin > 2 && n->in[2] >= 0 && !z)) return 0;
    int64_t ns = ir_numel(s);
    if (ns < 1 || (ns > 1 && !per_axis)) return 0;
    for (int64_t i = 0; i < ns; i++) {
        double v = ir_get_f(s, i);
        if (!(v > 0) || !isfinite(v)) return 0;
    }
    q->scale = ir_get_f(s, 0);
    q->scales = s;
    q->nsc = ns;
    q->axis = ir_attr_int(n, "axis", 1);
    q->zp = 0;
    q->dt = z ? z->dtype : IR_U8;
    if (z) {   /* one zero point, or one per channel that are all equal (weights: all 0) */
        if (ir_numel(z) != 1 && ir_numel(z) != ns) return 0;
        q->zp = (int32_t)ir_get_i(z, 0);
        for (int64_t i = 0; i < ir_numel(z); i++) if (ir_get_i(z, i) != q->zp) return 0;
    }
    return 1;
}

/* t is a DequantizeLinear output of an int8 / uint8 activation with scalar
 * parameters. */
static int dq_act(const IrGraph *g, int t, QP *q)
{
    int p = producer(g, t);
    if (p < 0 || !is_op(&g->nodes[p], "DequantizeLinear")) return 0;
    const IrNode *n = &g->nodes[p];
    int x = n->in[0];
    if (x < 0 || n->nin < 2 || cval(g, x) || (g->t[x].dtype != IR_I8 && g->t[x].dtype != IR_U8)) return 0;
    if (!node_qp(g, n, 0, q) || q->dt != g->t[x].dtype) return 0;
    q->src = x;
    return 1;
}

/* t is a DequantizeLinear of a constant of type dt (per tensor or per
 * `axis`, zero point 0). */
static int dq_const(const IrGraph *g, int t, int dt, int64_t axis, QP *q, const IrTensor **val)
{
    int p = producer(g, t);
    if (p < 0 || !is_op(&g->nodes[p], "DequantizeLinear")) return 0;
    const IrNode *n = &g->nodes[p];
    const IrTensor *v = n->nin < 2 ? NULL : cval(g, n->in[0]);
    if (!v || v->dtype != dt || !node_qp(g, n, 1, q) || q->zp != 0) return 0;
    if (q->nsc > 1) {
        int64_t ax = q->axis < 0 ? q->axis + v->ndim : q->axis;
        if (ax != (axis < 0 ? axis + v->ndim : axis) || v->dims[ax] != q->nsc) return 0;
    }
    q->src = n->in[0];
    *val = v;
    return 1;
}

static double qp_scale(const QP *q, int64_t i) { return q->nsc > 1 ? ir_get_f(q->scales, i) : q->scale; }

/* The Q node of a unit: constant scalar scale, int8/uint8 output. */
static int q_node(const IrGraph *g, const IrNode *n, QP *q)
{
    if (!node_qp(g, n, 0, q) || (q->dt != IR_I8 && q->dt != IR_U8)) return 0;
    q->src = n->out[0];
    return 1;
}

/* Tensor t is read only by node `reader` and is not a graph output. */
static int only_reader(const IrGraph *g, const IrUses *u, int t, int reader)
{
    if (t < 0 || g->t[t].is_output) return 0;
    int n = u->start[t + 1] - u->start[t], live = 0;
    for (int i = 0; i < n; i++) {
        int r = u->list[u->start[t] + i];
        if (g->nodes[r].dead) continue;
        if (r != reader) return 0;
        live++;
    }
    return live >= 1;
}

int qdq_unit_op(const char *op)
{
    static const char *const matrix[] = {"Conv", "Gemm", "MatMul", NULL};
    static const char *const move[] = {"MaxPool", "Concat", "Reshape", "Flatten", "Transpose", "Squeeze",
                                       "Unsqueeze", "Identity", "Slice", "Pad", NULL};
    for (int i = 0; matrix[i]; i++) if (!strcmp(op, matrix[i])) return QDQ_MATRIX;
    for (int i = 0; move[i]; i++) if (!strcmp(op, move[i])) return QDQ_MOVE;
    if (!strcmp(op, "Add")) return QDQ_ADD;
    if (!strcmp(op, "GlobalAveragePool")) return QDQ_POOL;
    if (!strcmp(op, "Relu") || !strcmp(op, "Clip")) return QDQ_ACT;
    return QDQ_NONE;
}

/* ---- the unit found at one QuantizeLinear ---- */

typedef struct Unit {
    int q, act, core, bias_add;   /* node indices (-1 none) */
    QP y;                         /* output parameters */
    int32_t lo, hi;               /* clamp, activation included */
    int kind;                     /* QDQ_* of the core, or QDQ_NONE for DQ -> Q */
} Unit;

/* QuantizeLinear's own rounding of a float bound, clamped to the type. */
static int32_t q_bound(float v, const QP *y, int32_t lo, int32_t hi)
{
    double r = num_round_half_even((double)(v / (float)y->scale)) + y->zp;
    return (int32_t)(r < lo ? lo : r > hi ? hi : r);
}

/* The activation's clamp; 0 when the node is not a fusable activation. */
static int act_clamp(const IrGraph *g, const IrNode *a, Unit *u)
{
    if (is_op(a, "Relu")) {
        if (u->y.zp > u->lo) u->lo = u->y.zp;
        return 1;
    }
    if (!is_op(a, "Clip")) return 0;
    float lo = -INFINITY, hi = INFINITY;
    if (g->opset < 11) { lo = ir_attr_float(a, "min", -INFINITY); hi = ir_attr_float(a, "max", INFINITY); }
    else {
        if (a->nin > 1 && a->in[1] >= 0) { const IrTensor *t = cval(g, a->in[1]); if (!t || ir_numel(t) != 1) return 0; lo = (float)ir_get_f(t, 0); }
        if (a->nin > 2 && a->in[2] >= 0) { const IrTensor *t = cval(g, a->in[2]); if (!t || ir_numel(t) != 1) return 0; hi = (float)ir_get_f(t, 0); }
    }
    int32_t l = isfinite(lo) ? q_bound(lo, &u->y, u->lo, u->hi) : u->lo, h = isfinite(hi) ? q_bound(hi, &u->y, u->lo, u->hi) : u->hi;
    if (l > u->lo) u->lo = l;
    if (h < u->hi) u->hi = h;
    return u->lo <= u->hi;
}

/* Locates the unit at Q node qi (no checks of the core's inputs yet). */
static int find_unit(const IrGraph *g, const IrUses *us, int qi, Unit *u)
{
    const IrNode *q = &g->nodes[qi];
    memset(u, 0, sizeof *u);
    u->q = qi; u->act = u->core = u->bias_add = -1;
    if (q->dead || !is_op(q, "QuantizeLinear") || q->nin < 2 || q->in[0] < 0 || q->nout < 1 || q->out[0] < 0 ||
        !q_node(g, q, &u->y))
        return 0;
    u->lo = u->y.dt == IR_U8 ? 0 : -128;
    u->hi = u->y.dt == IR_U8 ? 255 : 127;
    int t = q->in[0], p = producer(g, t);
    if (p < 0) return 0;
    /* DequantizeLinear -> QuantizeLinear reads the int8 tensor itself: others may read the float one too */
    if (is_op(&g->nodes[p], "DequantizeLinear")) { u->kind = QDQ_NONE; u->core = p; return 1; }
    if (!only_reader(g, us, t, qi)) return 0;
    if (qdq_unit_op(g->nodes[p].op) == QDQ_ACT) {
        int t2 = g->nodes[p].in[0], p2 = producer(g, t2);
        if (!act_clamp(g, &g->nodes[p], u)) return 0;
        u->act = p;
        int k = p2 >= 0 && only_reader(g, us, t2, p) ? qdq_unit_op(g->nodes[p2].op) : QDQ_NONE;
        if (k == QDQ_MATRIX || k == QDQ_ADD) p = p2;
        else { u->kind = QDQ_ACT; u->core = p; u->act = -1; return 1; }   /* Relu / Clip alone: a clamped rescale */
    }
    const IrNode *c = &g->nodes[p];
    u->core = p;
    u->kind = qdq_unit_op(c->op);
    /* MatMul followed by a constant bias Add */
    if (u->kind == QDQ_ADD && c->nin == 2) {
        for (int k = 0; k < 2; k++) {
            int m = producer(g, c->in[1 - k]);
            if (cval(g, c->in[k]) && m >= 0 && is_op(&g->nodes[m], "MatMul") &&
                only_reader(g, us, c->in[1 - k], p)) {
                u->bias_add = p;
                u->core = m;
                u->kind = QDQ_MATRIX;
            }
        }
    }
    return u->kind != QDQ_NONE && u->kind != QDQ_ACT;
}

/* ---- building the int8 operators ---- */

static int fresh_name(const IrGraph *g, const char *base, const char *suffix, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s", base, suffix);
    for (int k = 2; ir_find(g, buf) >= 0; k++) snprintf(buf, n, "%s%s%d", base, suffix, k);
    return 0;
}

static int add_const(IrGraph *g, const char *base, const char *suffix, int dt, int nd, const int64_t *dims,
                     const void *data, AtlErr *e)
{
    char name[512];
    fresh_name(g, base, suffix, name, sizeof name);
    return ir_add_const(g, name, dt, nd, dims, data, e);
}

/* A new node op(ins) -> out named after base; copies src's attributes when src >= 0. */
static int new_node(IrGraph *g, const char *op, const char *base, const int *ins, int nin, int out, int src, AtlErr *e)
{
    char name[512];
    snprintf(name, sizeof name, "%s_int8", base);
    int n = ir_add_node(g, op, name, e);
    if (n < 0) return -1;
    for (int i = 0; i < nin; i++) if (ir_node_add_input(g, n, ins[i], e)) return -1;
    if (ir_node_add_output(g, n, out, e)) return -1;
    if (src < 0) return n;
    /* g->nodes may have moved: index, not pointer */
    for (int k = 0; k < g->nodes[src].nattrs; k++) {
        const IrAttr a = g->nodes[src].attrs[k];
        int rc = 0;
        if (a.type == IR_ATTR_INT) rc = ir_set_attr_int(g, n, a.name, a.i, e);
        else if (a.type == IR_ATTR_INTS) rc = ir_set_attr_ints(g, n, a.name, a.ints, a.n, e);
        else if (a.type == IR_ATTR_FLOAT) rc = ir_set_attr_float(g, n, a.name, a.f, e);
        else if (a.type == IR_ATTR_STRING) rc = ir_set_attr_str(g, n, a.name, a.s, e);
        if (rc) return -1;
    }
    return n;
}

static int set_out_attrs(IrGraph *g, int n, const Unit *u, AtlErr *e)
{
    return ir_set_attr_int(g, n, "y_zero_point", u->y.zp, e) || ir_set_attr_int(g, n, "y_min", u->lo, e) ||
           ir_set_attr_int(g, n, "y_max", u->hi, e) || ir_set_attr_int(g, n, "to", u->y.dt, e);
}

/* A one-input Int8Add: rescale x (parameters a) into the unit's output. */
static int rescale(IrGraph *g, const char *base, const QP *a, const Unit *u, int out, AtlErr *e)
{
    int ins[1] = {a->src};
    int n = new_node(g, "Int8Add", base, ins, 1, out, -1, e);
    if (n < 0) return -1;
    float r = (float)(a->scale / u->y.scale);
    return ir_set_attr_float(g, n, "a_scale", r, e) || ir_set_attr_int(g, n, "a_zero_point", a->zp, e) ||
           set_out_attrs(g, n, u, e) ? -1 : 0;
}

static int same_qp(const QP *a, const QP *b)
{
    return a->dt == b->dt && a->zp == b->zp && (float)a->scale == (float)b->scale;
}

/* The matrix operator: Conv -> Int8Conv, Gemm / MatMul -> Int8MatMul.
 * 1 fused, 0 does not fit, -1 error. */
static int fuse_matrix(IrGraph *g, Unit *u, int dry, AtlErr *e)
{
    const IrNode *c = &g->nodes[u->core];
    int conv = is_op(c, "Conv"), gemm = is_op(c, "Gemm");
    QP x, w, bq;
    const IrTensor *wv = NULL, *bv = NULL;
    if (!dq_act(g, c->in[0], &x)) return 0;
    int64_t ta = gemm ? ir_attr_int(c, "transA", 0) : 0, tb = gemm ? ir_attr_int(c, "transB", 0) : 0;
    if (ta || (gemm && (ir_attr_float(c, "alpha", 1) != 1 || ir_attr_float(c, "beta", 1) != 1))) return 0;
    /* weights: Conv OIHW per output channel (axis 0); MatMul [K, N] per column (axis 1); Gemm B [K, N] or [N, K] */
    int64_t axis = conv ? 0 : tb ? 0 : 1;
    if (!dq_const(g, c->in[1], IR_I8, axis, &w, &wv)) return 0;
    if (!conv && wv->ndim != 2) return 0;
    if (conv && (wv->ndim < 3 || wv->ndim > 4)) return 0;
    int64_t M = conv ? wv->dims[0] : tb ? wv->dims[0] : wv->dims[1];
    int64_t K = ir_numel(wv) / M;
    /* bias: Conv / Gemm input 2, or the Add after a MatMul */
    int bt = conv || gemm ? (c->nin > 2 ? c->in[2] : -1) : -1;
    if (u->bias_add >= 0) {
        const IrNode *a = &g->nodes[u->bias_add];
        bt = cval(g, a->in[0]) ? a->in[0] : a->in[1];
    }
    int bias_dq = 0;
    if (bt >= 0) {
        bias_dq = dq_const(g, bt, IR_I32, 0, &bq, &bv);
        if (!bias_dq) bv = cval(g, bt);
        if (!bv || (!bias_dq && !op_dtype_is_float(bv->dtype))) return 0;
        int64_t nb = ir_numel(bv);
        if (nb != M && !(nb == 1 && !conv)) return 0;
    }
    int32_t *bias = calloc((size_t)M, sizeof *bias), *rq = calloc((size_t)M * 2, sizeof *rq);
    int8_t *wt = NULL;
    int rc = 0;
    if (!bias || !rq) { rc = atl_fail(e, "out of memory"); goto done; }
    /* every |acc| stays below 2^31: K |x - zx| max|w| + |bias| */
    double wmax = 0, xspan = x.dt == IR_U8 ? 255 : 255;
    for (int64_t i = 0; i < ir_numel(wv); i++) if (fabs(ir_get_f(wv, i)) > wmax) wmax = fabs(ir_get_f(wv, i));
    for (int64_t m = 0; m < M; m++) {
        double sw = qp_scale(&w, m), sacc = x.scale * sw;
        if (bv) {
            int64_t bi = ir_numel(bv) == 1 ? 0 : m;
            double b = bias_dq ? ir_get_f(bv, bi) * qp_scale(&bq, bi) : ir_get_f(bv, bi);
            double q = num_round_half_even(b / sacc);
            if (!(fabs(q) < 1073741824.0)) goto done;   /* does not fit: stays float */
            bias[m] = (int32_t)q;
        }
        if ((double)K * xspan * wmax + fabs((double)bias[m]) >= 2147483648.0) goto done;
        if (num_quant_multiplier(sacc / u->y.scale, &rq[2 * m], &rq[2 * m + 1])) goto done;
    }
    rc = 1;
    if (dry) goto done;
    /* weights in the operator's layout: Conv as is, matmuls [K][N] */
    int wsrc = w.src;
    if (!conv && tb) {
        wt = malloc((size_t)ir_numel(wv));
        if (!wt) { rc = atl_fail(e, "out of memory"); goto done; }
        for (int64_t k = 0; k < K; k++)
            for (int64_t n = 0; n < M; n++) wt[k * M + n] = (int8_t)ir_get_i(wv, n * K + k);
        int64_t d[2] = {K, M};
        if ((wsrc = add_const(g, g->t[w.src].name, "_kn", IR_I8, 2, d, wt, e)) < 0) { rc = -1; goto done; }
    } else if (!g->t[w.src].data) {
        /* a Constant node's value: as a constant of its own */
        if ((wsrc = add_const(g, g->t[w.src].name, "_w", IR_I8, wv->ndim, wv->dims, wv->data, e)) < 0) { rc = -1; goto done; }
    }
    const char *base = g->nodes[u->core].name;
    int64_t d1[1] = {M}, d2[2] = {M, 2};
    int tb_ = add_const(g, base, "_bias_i32", IR_I32, 1, d1, bias, e);
    int trq = tb_ < 0 ? -1 : add_const(g, base, "_requant", IR_I32, 2, d2, rq, e);
    if (trq < 0) { rc = -1; goto done; }
    int ins[4] = {x.src, wsrc, tb_, trq};
    int n = new_node(g, conv ? "Int8Conv" : "Int8MatMul", base, ins, 4, g->nodes[u->q].out[0], conv ? u->core : -1, e);
    if (n < 0 || set_out_attrs(g, n, u, e) ||
        ir_set_attr_int(g, n, conv ? "x_zero_point" : "a_zero_point", x.zp, e)) rc = -1;
done:
    free(bias);
    free(rq);
    free(wt);
    return rc;
}

/* Add of two activations -> Int8Add. */
static int fuse_add(IrGraph *g, Unit *u, int dry, AtlErr *e)
{
    const IrNode *c = &g->nodes[u->core];
    QP a, b;
    if (c->nin != 2 || !dq_act(g, c->in[0], &a) || !dq_act(g, c->in[1], &b)) return 0;
    if (dry) return 1;
    int ins[2] = {a.src, b.src};
    int n = new_node(g, "Int8Add", c->name, ins, 2, g->nodes[u->q].out[0], -1, e);
    if (n < 0) return -1;
    return ir_set_attr_float(g, n, "a_scale", (float)(a.scale / u->y.scale), e) ||
           ir_set_attr_int(g, n, "a_zero_point", a.zp, e) ||
           ir_set_attr_float(g, n, "b_scale", (float)(b.scale / u->y.scale), e) ||
           ir_set_attr_int(g, n, "b_zero_point", b.zp, e) || set_out_attrs(g, n, u, e) ? -1 : 1;
}

static int fuse_pool(IrGraph *g, Unit *u, int dry, AtlErr *e)
{
    const IrNode *c = &g->nodes[u->core];
    QP x;
    if (!dq_act(g, c->in[0], &x)) return 0;
    const IrTensor *xt = &g->t[x.src];
    if (xt->ndim < 3 || !ir_shape_known(xt)) return 0;
    int64_t len = ir_numel(xt) / (xt->dims[0] * xt->dims[1]);
    if (len < 1 || len >= (1 << 16)) return 0;
    if (dry) return 1;
    int ins[1] = {x.src};
    int n = new_node(g, "Int8GlobalAveragePool", c->name, ins, 1, g->nodes[u->q].out[0], -1, e);
    if (n < 0) return -1;
    return ir_set_attr_float(g, n, "scale", (float)(x.scale / ((double)len * u->y.scale)), e) ||
           ir_set_attr_int(g, n, "x_zero_point", x.zp, e) || set_out_attrs(g, n, u, e) ? -1 : 1;
}

/* An int8 tensor like float tensor t (same shape), for a value between two new nodes. */
static int int8_like(IrGraph *g, int t, int dt, AtlErr *e)
{
    char name[512];
    fresh_name(g, g->t[t].name, "_q", name, sizeof name);
    int k = ir_tensor(g, name, e);
    if (k < 0) return -1;
    g->t[k].dtype = dt;
    g->t[k].ndim = g->t[t].ndim;
    memcpy(g->t[k].dims, g->t[t].dims, sizeof g->t[k].dims);
    return k;
}

/* Data movement on the int8 tensors (see the file comment). */
static int fuse_move(IrGraph *g, Unit *u, int dry, AtlErr *e)
{
    const IrNode *c = &g->nodes[u->core];
    int concat = is_op(c, "Concat");
    int ndata = concat ? c->nin : 1;
    QP in[64];
    if (ndata > 64) return 0;
    for (int k = 0; k < ndata; k++) if (!dq_act(g, c->in[k], &in[k])) return 0;
    for (int k = ndata; k < c->nin; k++)   /* shape / index / pad inputs must be constants */
        if (c->in[k] >= 0 && !cval(g, c->in[k]) && !(is_op(c, "Reshape") && k == 1)) return 0;
    if (is_op(c, "Pad")) {
        if (strcmp(ir_attr_str(c, "mode", "constant"), "constant")) { /* edge / reflect copy values */ }
        else if (c->nin > 2 && c->in[2] >= 0 && ir_get_f(cval(g, c->in[2]), 0) != 0) return 0;
        else if (g->opset < 11 && ir_attr_float(c, "value", 0) != 0) return 0;
    }
    if (is_op(c, "MaxPool") && c->nout > 1 && c->out[1] >= 0) return 0;
    int exact = u->lo == (u->y.dt == IR_U8 ? 0 : -128) && u->hi == (u->y.dt == IR_U8 ? 255 : 127);
    for (int k = 0; k < ndata; k++) exact &= same_qp(&in[k], &u->y) || concat;
    if (dry) return 1;
    const char *base = c->name;
    char nb[512];
    snprintf(nb, sizeof nb, "%s", base);
    int ins[64 + 8], nin = c->nin;
    int core = u->core, yq = g->nodes[u->q].out[0];
    for (int k = 0; k < nin; k++) ins[k] = g->nodes[core].in[k];
    for (int k = 0; k < ndata; k++) {
        ins[k] = in[k].src;
        if (concat && !same_qp(&in[k], &u->y)) {   /* each input into the output's parameters */
            snprintf(nb, sizeof nb, "%s_input%d", base, k);
            int t = int8_like(g, in[k].src, u->y.dt, e);
            Unit v = *u;
            v.lo = u->y.dt == IR_U8 ? 0 : -128;
            v.hi = u->y.dt == IR_U8 ? 255 : 127;
            if (t < 0 || rescale(g, nb, &in[k], &v, t, e)) return -1;
            ins[k] = t;
        }
    }
    if (is_op(&g->nodes[core], "Pad") && !strcmp(ir_attr_str(&g->nodes[core], "mode", "constant"), "constant") && g->opset >= 11) {
        /* the pad value 0.0 is the zero point in the integers */
        int8_t zb = (int8_t)in[0].zp;
        uint8_t ub = (uint8_t)in[0].zp;
        int z = add_const(g, base, "_pad_zp", in[0].dt, 0, NULL, in[0].dt == IR_U8 ? (const void *)&ub : (const void *)&zb, e);
        if (z < 0) return -1;
        while (nin < 3) ins[nin++] = -1;
        ins[2] = z;
    }
    int out = yq;
    if (!exact && !concat) out = int8_like(g, yq, in[0].dt, e);
    if (out < 0) return -1;
    int n = new_node(g, g->nodes[core].op, base, ins, nin, out, core, e);
    if (n < 0) return -1;
    if (is_op(&g->nodes[core], "Pad") && g->opset < 11) {
        for (int k = 0; k < g->nodes[n].nattrs; k++)
            if (!strcmp(g->nodes[n].attrs[k].name, "value")) g->nodes[n].attrs[k].f = (float)in[0].zp;
    }
    if (!exact && !concat) {
        QP mid = in[0];
        mid.src = out;
        snprintf(nb, sizeof nb, "%s_rescale", base);
        if (rescale(g, nb, &mid, u, yq, e)) return -1;
    }
    return 1;
}

/* DequantizeLinear -> QuantizeLinear, or a Relu / Clip between them. */
static int fuse_requant(IrGraph *g, Unit *u, int dry, AtlErr *e)
{
    QP x;
    int t = u->kind == QDQ_ACT ? g->nodes[u->core].in[0] : g->nodes[u->q].in[0];
    if (!dq_act(g, t, &x)) return 0;
    if (dry) return 1;
    return rescale(g, g->nodes[u->core].name, &x, u, g->nodes[u->q].out[0], e) ? -1 : 1;
}

static int fuse_unit(IrGraph *g, Unit *u, int dry, AtlErr *e)
{
    int k = u->kind;
    if (k == QDQ_MOVE && u->act >= 0 && is_op(&g->nodes[u->core], "Concat")) return 0;
    return k == QDQ_MATRIX ? fuse_matrix(g, u, dry, e) : k == QDQ_ADD ? fuse_add(g, u, dry, e)
         : k == QDQ_POOL ? fuse_pool(g, u, dry, e) : k == QDQ_MOVE ? fuse_move(g, u, dry, e)
         : fuse_requant(g, u, dry, e);
}

/* Marks the unit's float nodes dead (the Q, the activation, the core and
 * its bias Add). */
static void retire(IrGraph *g, const Unit *u)
{
    g->nodes[u->q].dead = 1;
    if (u->act >= 0) g->nodes[u->act].dead = 1;
    if (u->bias_add >= 0) g->nodes[u->bias_add].dead = 1;
    if (u->kind != QDQ_NONE) g->nodes[u->core].dead = 1;
}

/* DequantizeLinear (and Constant) nodes whose outputs nothing live reads. */
static int drop_unread(IrGraph *g, AtlErr *e)
{
    for (int changed = 1; changed;) {
        changed = 0;
        IrUses us;
        if (ir_consumers(g, &us, e)) return -1;
        for (int i = 0; i < g->nn; i++) {
            IrNode *n = &g->nodes[i];
            if (n->dead || (!is_op(n, "DequantizeLinear") && !is_op(n, "Constant"))) continue;
            int t = n->out[0], live = g->t[t].is_output;
            for (int k = us.start[t]; k < us.start[t + 1] && !live; k++) live = !g->nodes[us.list[k]].dead;
            if (!live) { n->dead = 1; changed = 1; }
        }
        ir_uses_free(&us);
    }
    return 0;
}

static int walk(IrGraph *g, int dry, int *count, AtlErr *e)
{
    *count = 0;
    /* the parameters of every Quantize/DequantizeLinear (and a dequantised constant) as constants */
    for (int i = 0; !dry && i < g->nn; i++) {
        if (g->nodes[i].dead || (!is_op(&g->nodes[i], "DequantizeLinear") && !is_op(&g->nodes[i], "QuantizeLinear"))) continue;
        for (int k = is_op(&g->nodes[i], "DequantizeLinear") ? 0 : 1; k < g->nodes[i].nin; k++)
            if (materialize(g, g->nodes[i].in[k], 4, e) < 0) return -1;
    }
    int nn = g->nn;   /* units of the graph as given, not the nodes added */
    for (int i = 0; i < nn; i++) {
        if (g->nodes[i].dead || !is_op(&g->nodes[i], "QuantizeLinear")) continue;
        IrUses us;
        if (ir_consumers(g, &us, e)) return -1;
        Unit u;
        int found = find_unit(g, &us, i, &u);
        ir_uses_free(&us);
        if (!found) continue;
        int rc = fuse_unit(g, &u, dry, e);
        if (rc < 0) return -1;
        if (!rc) continue;
        (*count)++;
        if (!dry) retire(g, &u);
    }
    return dry ? 0 : drop_unread(g, e);
}

int qdq_fuse(IrGraph *g, int *nunits, AtlErr *e)
{
    int n = 0;
    int rc = walk(g, 0, &n, e);
    if (nunits) *nunits = n;
    return rc;
}

int qdq_count_units(const IrGraph *g)
{
    int n = 0;
    AtlErr e = {{0}};
    /* a dry walk only reads g */
    return walk((IrGraph *)g, 1, &n, &e) ? 0 : n;
}
