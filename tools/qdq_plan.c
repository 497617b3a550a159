/* qdq_plan.c - which units of a float graph are quantised, and the QDQ
 * graph that says so (see quantize.h). The unit rules mirror what
 * ops/qdq_fuse.c recognises, so every unit written here is fused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/quantize.h"
#include "compiler/ops/ops.h"
#include "compiler/ops/qdq.h"
#include "isa/numerics.h"

static int is_op(const IrNode *n, const char *op) { return !strcmp(n->op, op); }
static int is_const(const IrGraph *g, int t) { return t >= 0 && g->t[t].data != NULL; }
static int is_act(const IrGraph *g, int t) { return t >= 0 && !g->t[t].data && g->t[t].dtype == IR_F32; }

/* The live node reading t when it is t's only reader and t is no graph output. */
static int sole_reader(const IrGraph *g, const IrUses *u, int t)
{
    if (t < 0 || g->t[t].is_output) return -1;
    int r = -1, n = 0;
    for (int k = u->start[t]; k < u->start[t + 1]; k++) {
        int c = u->list[k];
        if (g->nodes[c].dead) continue;
        r = c;
        n++;
    }
    return n == 1 ? r : -1;
}

/* A Relu, or a Clip with constant bounds, reading t. */
static int is_fusable_act(const IrGraph *g, int n, int t)
{
    if (n < 0) return 0;
    const IrNode *a = &g->nodes[n];
    if (a->in[0] != t) return 0;
    if (is_op(a, "Relu")) return 1;
    if (!is_op(a, "Clip")) return 0;
    for (int k = 1; k < a->nin; k++) if (a->in[k] >= 0 && !is_const(g, a->in[k])) return 0;
    return 1;
}

/* Conv / Gemm / MatMul with constant weights the int8 operators take. */
static int matrix_ok(const IrGraph *g, const IrNode *n)
{
    if (!is_act(g, n->in[0]) || !is_const(g, n->in[1])) return 0;
    const IrTensor *w = &g->t[n->in[1]];
    if (is_op(n, "Conv")) return (w->ndim == 3 || w->ndim == 4) && (n->nin < 3 || n->in[2] < 0 || is_const(g, n->in[2]));
    if (is_op(n, "Gemm"))
        return w->ndim == 2 && !ir_attr_int(n, "transA", 0) && ir_attr_float(n, "alpha", 1) == 1 &&
               ir_attr_float(n, "beta", 1) == 1 && (n->nin < 3 || n->in[2] < 0 || is_const(g, n->in[2])) &&
               g->t[n->in[0]].ndim == 2;
    return w->ndim == 2 && g->t[n->in[0]].ndim >= 2;   /* MatMul */
}

/* The other inputs of a data-movement op: what ops/qdq_fuse.c accepts. */
static int move_ok(const IrGraph *g, const IrNode *n)
{
    int concat = is_op(n, "Concat");
    for (int k = concat ? n->nin : 1; k < n->nin; k++)
        if (n->in[k] >= 0 && !is_const(g, n->in[k]) && !(is_op(n, "Reshape") && k == 1)) return 0;
    if (concat) for (int k = 0; k < n->nin; k++) if (!is_act(g, n->in[k])) return 0;
    if (is_op(n, "MaxPool") && n->nout > 1 && n->out[1] >= 0) return 0;
    if (is_op(n, "Pad") && !strcmp(ir_attr_str(n, "mode", "constant"), "constant")) {
        if (n->nin > 2 && n->in[2] >= 0 && ir_get_f(&g->t[n->in[2]], 0) != 0) return 0;
        if (g->opset < 11 && ir_attr_float(n, "value", 0) != 0) return 0;
    }
    return is_act(g, n->in[0]);
}

void qz_plan(const IrGraph *g, const int *keep, int *unit, int *qt, int *same)
{
    IrUses u;
    AtlErr e;
    memset(unit, 0, (size_t)g->nn * sizeof *unit);
    memset(qt, 0, (size_t)g->nt * sizeof *qt);
    for (int t = 0; t < g->nt; t++) same[t] = -1;
    if (ir_consumers(g, &u, &e)) return;
    int *absorbed = calloc((size_t)g->nn + 1, sizeof *absorbed);
    if (!absorbed) { ir_uses_free(&u); return; }
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead || absorbed[i] || (keep && keep[i])) continue;
        int kind = qdq_unit_op(n->op), out = n->out[0];
        if (kind == QDQ_MATRIX && !matrix_ok(g, n)) kind = QDQ_NONE;
        if (kind == QDQ_ADD && (n->nin != 2 || !is_act(g, n->in[0]) || !is_act(g, n->in[1]))) kind = QDQ_NONE;
        if (kind == QDQ_POOL) {
            const IrTensor *x = &g->t[n->in[0]];
            if (!is_act(g, n->in[0]) || x->ndim < 3 || ir_numel(x) / (x->dims[0] * x->dims[1]) >= (1 << 16)) kind = QDQ_NONE;
        }
        if ((kind == QDQ_MOVE || kind == QDQ_ACT) && !(qt[n->in[0]] && (kind == QDQ_ACT ? is_fusable_act(g, i, n->in[0]) : move_ok(g, n))))
            kind = QDQ_NONE;
        if (kind == QDQ_NONE) continue;
        unit[i] = kind;
        /* the unit's output: after a MatMul's bias Add and a fused activation */
        if (kind == QDQ_MATRIX && is_op(n, "MatMul")) {
            int a = sole_reader(g, &u, out);
            if (a >= 0 && is_op(&g->nodes[a], "Add") && g->nodes[a].nin == 2) {
                int other = g->nodes[a].in[0] == out ? g->nodes[a].in[1] : g->nodes[a].in[0];
                const IrTensor *b = &g->t[other];
                int64_t N = g->t[n->in[1]].dims[1];
                if (is_const(g, other) && (ir_numel(b) == N || ir_numel(b) == 1) && b->ndim <= 1 + (b->ndim == 2 && b->dims[0] == 1)) {
                    absorbed[a] = 1;
                    out = g->nodes[a].out[0];
                }
            }
        }
        if (kind == QDQ_MATRIX || kind == QDQ_ADD) {
            int a = sole_reader(g, &u, out);
            if (is_fusable_act(g, a, out)) { absorbed[a] = 1; out = g->nodes[a].out[0]; }
        }
        int ndata = kind == QDQ_ADD ? 2 : is_op(n, "Concat") ? n->nin : 1;
        for (int k = 0; k < ndata; k++) qt[n->in[k]] = 1;
        qt[out] = 1;
        /* data movement keeps its input's parameters (then the unit is exact); Concat and
         * a standalone Relu / Clip get their own */
        if (kind == QDQ_MOVE && !is_op(n, "Concat")) same[out] = same[n->in[0]] >= 0 ? same[n->in[0]] : n->in[0];
    }
    free(absorbed);
    ir_uses_free(&u);
}

/* ---- building the QDQ graph ---- */

static int add_scalar(IrGraph *q, const char *base, const char *suffix, int dt, double v, AtlErr *e)
{
    char name[600];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    for (int k = 2; ir_find(q, name) >= 0; k++) snprintf(name, sizeof name, "%s%s%d", base, suffix, k);
    int t = ir_add_const(q, name, dt, 0, NULL, NULL, e);
    if (t >= 0) ir_set_f(&q->t[t], 0, v);
    return t;
}

static int new_tensor(IrGraph *q, const char *base, const char *suffix, int dt, const IrTensor *like, AtlErr *e)
{
    char name[600];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    for (int k = 2; ir_find(q, name) >= 0; k++) snprintf(name, sizeof name, "%s%s%d", base, suffix, k);
    int t = ir_tensor(q, name, e);
    if (t < 0) return -1;
    q->t[t].dtype = dt;
    q->t[t].ndim = like ? like->ndim : -1;
    if (like) memcpy(q->t[t].dims, like->dims, sizeof like->dims);
    return t;
}

/* node op(a, s, z) -> y with an optional axis. */
static int qdq_node(IrGraph *q, const char *op, const char *name, int a, int s, int z, int y, int axis, AtlErr *e)
{
    int n = ir_add_node(q, op, name, e);
    if (n < 0 || ir_node_add_input(q, n, a, e) || ir_node_add_input(q, n, s, e) || ir_node_add_input(q, n, z, e) ||
        ir_node_add_output(q, n, y, e))
        return -1;
    return axis >= 0 ? ir_set_attr_int(q, n, "axis", axis, e) : 0;
}

/* T -> Q -> DQ: the producer writes T_f, the DequantizeLinear writes T;
 * a graph input keeps its name and its readers get T_dq. */
static int quantize_tensor(IrGraph *q, int t, float scale, int zp, AtlErr *e)
{
    char name[600];
    const char *base = q->t[t].name;
    IrTensor like = q->t[t];
    int ts = add_scalar(q, base, "_scale", IR_F32, scale, e);
    int tz = ts < 0 ? -1 : add_scalar(q, base, "_zero_point", IR_I8, zp, e);
    int tq = tz < 0 ? -1 : new_tensor(q, base, "_quantized", IR_I8, &like, e);
    if (tq < 0) return -1;
    int src = t, dst = t, p = q->t[t].producer;
    if (p >= 0) {
        if ((src = new_tensor(q, base, "_float", IR_F32, &like, e)) < 0) return -1;
        for (int k = 0; k < q->nodes[p].nout; k++) if (q->nodes[p].out[k] == t) q->nodes[p].out[k] = src;
    } else {
        if ((dst = new_tensor(q, base, "_dequantized", IR_F32, &like, e)) < 0) return -1;
        for (int i = 0; i < q->nn; i++)
            for (int k = 0; k < q->nodes[i].nin; k++) if (q->nodes[i].in[k] == t) q->nodes[i].in[k] = dst;
    }
    snprintf(name, sizeof name, "%s_QuantizeLinear", base);
    if (qdq_node(q, "QuantizeLinear", name, src, ts, tz, tq, -1, e)) return -1;
    snprintf(name, sizeof name, "%s_DequantizeLinear", base);
    return qdq_node(q, "DequantizeLinear", name, tq, ts, tz, dst, -1, e);
}

/* The weights of a matrix unit: symmetric int8 per output channel behind a
 * DequantizeLinear; the Conv / Gemm bias as int32 with scale s_x s_w. */
static int quantize_weights(IrGraph *q, int node, float sx, AtlErr *e)
{
    IrNode *n = &q->nodes[node];
    int conv = is_op(n, "Conv"), tb = is_op(n, "Gemm") && ir_attr_int(n, "transB", 0);
    int wt = n->in[1], bt = (conv || is_op(n, "Gemm")) && n->nin > 2 ? n->in[2] : -1;
    const IrTensor *w = &q->t[wt];
    int64_t M = conv || tb ? w->dims[0] : w->dims[1], total = ir_numel(w), K = total / M;
    int axis = conv || tb ? 0 : 1;
    float *sc = malloc((size_t)M * sizeof *sc);
    int8_t *wq = malloc((size_t)total), *zq = calloc((size_t)M, 1);
    int32_t *bq = NULL, *zb = NULL;
    float *bs = NULL;
    int rc = -1;
    if (!sc || !wq || !zq) { atl_fail(e, "out of memory"); goto done; }
    /* element i's channel: rows (axis 0) or columns (axis 1) */
#define CH(i) (axis == 0 ? (i) / K : (i) % M)
    double *amax = calloc((size_t)M, sizeof *amax);
    if (!amax) { atl_fail(e, "out of memory"); goto done; }
    for (int64_t i = 0; i < total; i++) { double v = fabs(ir_get_f(w, i)); if (v > amax[CH(i)]) amax[CH(i)] = v; }
    for (int64_t m = 0; m < M; m++) sc[m] = amax[m] > 0 ? (float)(amax[m] / 127) : 1.0f;
    free(amax);
    for (int64_t i = 0; i < total; i++) {
        double v = num_round_half_even(ir_get_f(w, i) / sc[CH(i)]);
        wq[i] = (int8_t)(v < -127 ? -127 : v > 127 ? 127 : v);
    }
#undef CH
    char base[600];
    IrTensor wl = *w;
    int64_t d1[1] = {M};
    snprintf(base, sizeof base, "%s_quantized", q->t[wt].name);
    int tq = ir_add_const(q, base, IR_I8, wl.ndim, wl.dims, wq, e);
    snprintf(base, sizeof base, "%s_scale", q->t[wt].name);
    int ts = tq < 0 ? -1 : ir_add_const(q, base, IR_F32, 1, d1, sc, e);
    snprintf(base, sizeof base, "%s_zero_point", q->t[wt].name);
    int tz = ts < 0 ? -1 : ir_add_const(q, base, IR_I8, 1, d1, zq, e);
    int td = tz < 0 ? -1 : new_tensor(q, q->t[wt].name, "_dequantized", IR_F32, &wl, e);
    snprintf(base, sizeof base, "%s_DequantizeLinear", q->t[wt].name);
    if (td < 0 || qdq_node(q, "DequantizeLinear", base, tq, ts, tz, td, axis, e)) goto done;
    q->nodes[node].in[1] = td;
    if (bt >= 0) {
        const IrTensor *b = &q->t[bt];
        int64_t nb = ir_numel(b);
        bq = malloc((size_t)M * sizeof *bq);
        zb = calloc((size_t)M, sizeof *zb);
        bs = malloc((size_t)M * sizeof *bs);
        if (!bq || !zb || !bs) { atl_fail(e, "out of memory"); goto done; }
        int fits = nb == M;
        for (int64_t m = 0; m < M && fits; m++) {
            bs[m] = sx * sc[m];
            double v = num_round_half_even(ir_get_f(b, m) / bs[m]);
            fits = fabs(v) < 1073741824.0;
            bq[m] = (int32_t)v;
        }
        if (fits) {   /* else the bias stays a float constant (ops/qdq_fuse.c rounds it) */
            IrTensor bl = *b;
            snprintf(base, sizeof base, "%s_quantized", bl.name);
            int bqt = ir_add_const(q, base, IR_I32, 1, d1, bq, e);
            snprintf(base, sizeof base, "%s_scale", bl.name);
            int bst = bqt < 0 ? -1 : ir_add_const(q, base, IR_F32, 1, d1, bs, e);
            snprintf(base, sizeof base, "%s_zero_point", bl.name);
            int bzt = bst < 0 ? -1 : ir_add_const(q, base, IR_I32, 1, d1, zb, e);
            int bdt = bzt < 0 ? -1 : new_tensor(q, bl.name, "_dequantized", IR_F32, &bl, e);
            snprintf(base, sizeof base, "%s_DequantizeLinear", bl.name);
            if (bdt < 0 || qdq_node(q, "DequantizeLinear", base, bqt, bst, bzt, bdt, 0, e)) goto done;
            q->nodes[node].in[2] = bdt;
        }
    }
    rc = 0;
done:
    free(sc); free(wq); free(zq); free(bq); free(zb); free(bs);
    return rc;
}

int qz_build(const IrGraph *g, const int *unit, const int *qt, const float *scale, const int *zp, IrGraph *out, AtlErr *e)
{
    if (ir_clone(g, out, e)) return -1;
    int nt = g->nt, nn = g->nn;
    for (int t = 0; t < nt; t++) out->t[t].is_view = 0;
    for (int i = 0; i < nn; i++) out->nodes[i].act[0] = 0;
    if (g->opset < 13) { ir_free(out); return atl_fail(e, "per-channel weights need opset 13 (the model has opset %d)", g->opset); }
    for (int i = 0; i < nn; i++)
        if (unit[i] == QDQ_MATRIX && quantize_weights(out, i, scale[g->nodes[i].in[0]], e)) goto fail;
    for (int t = 0; t < nt; t++)
        if (qt[t] && quantize_tensor(out, t, scale[t], zp[t], e)) goto fail;
    if (ir_toposort(out, e)) goto fail;
    return 0;
fail:
    ir_free(out);
    return -1;
}
