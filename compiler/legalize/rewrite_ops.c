/* rewrite_ops.c - ops the chip runs as a few ops it already lowers.
 *
 * Reads: a canonicalised, shape-inferred graph (the backend's private copy,
 *   see backend/compile.c; the caller's graph is never changed).
 * Does: replaces each live node of the table `rules` by a small graph
 *   whose last node writes the node's output (its tensor names start with
 *   the output's name and '#'):
 *   - Sum / Mean / Max / Min of more than BK_MAXIN inputs: a chain of nodes
 *     of at most BK_MAXIN inputs (an elementwise step program loads at most
 *     that many); Mean = the Sum chain times 1/n;
 *   - InstanceNormalization: mean = ReduceMean over the spatial axes,
 *     d = x - mean, var = ReduceMean(d * d), d * (var + eps)^-1/2 (Pow by
 *     -0.5 is v.rsqrt), times scale and plus bias seen as [C, 1, ...];
 *   - BatchNormalization (inference) with a non-constant scale, bias, mean
 *     or var: k = scale * (var + eps)^-1/2, t = bias - mean * k on [C],
 *     then x * k + t with k, t seen as [C, 1, ...] (constant parameters
 *     keep the folded lowering of lower/vec.c);
 *   - LRN: the squares seen as [N, 1, C, D1*...*Dk], a Conv with a
 *     [size x 1] kernel of alpha/size and bias `bias` (pads floor((size-1)/2)
 *     before, ceil((size-1)/2) after along C) gives bias + alpha/size *
 *     window sum, then x * that^-beta (Pow: exp(-beta log t), t > 0);
 *   - CumSum with a constant axis (forward / reverse, inclusive /
 *     exclusive): a MatMul with a constant 0/1 triangular L x L matrix
 *     (see cumsum_rewrite);
 *   - AveragePool with count_include_pad=1 and ceil_mode=1: the pads made
 *     explicit by a zero Pad, then the pool with no pads and
 *     count_include_pad=0. ONNX divides by the window's part inside the
 *     padded input (ceil_mode's extra windows reach beyond it); the pool
 *     instruction's countpad divides by kh*kw, and its count of valid
 *     positions, on the padded input, is exactly ONNX's divisor;
 *   - MeanVarianceNormalization: as InstanceNormalization over its axes
 *     (default [0, 2, 3]) without scale and bias, eps 1e-9 as the
 *     interpreter's;
 *   - BatchNormalization with training_mode=1: the batch statistics over N
 *     and the spatial axes as InstanceNormalization's, then scale and bias
 *     per channel; running mean / var = input * momentum + batch statistic
 *     * (1 - momentum);
 *   - Reduce* over non-adjacent axes: a Transpose moving them last, the
 *     same Reduce over the (now adjacent) trailing axes keeping dims, a
 *     Reshape to the output's shape;
 *   - BitShift: its shift amount s replaced by 2^s (legalize/rewrite_int.c);
 *   - MaxPool with its Indices output: per-tap Slices, Equal with the
 *     pooled maximum and a Where chain (legalize/rewrite_pool_idx.c);
 *   - 3-D Conv / MaxPool / AveragePool and dilated MaxPool: legalize/rewrite_3d.c;
 *   - Einsum of one or two inputs: legalize/rewrite_einsum.c;
 *   - Det of matrices up to 3x3: legalize/rewrite_det.c.
 * Why: each is a composition of ops with existing lowerings, so it gets
 * their tilings and cost model without new instructions or tile code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/legalize/legalize.h"
#include "compiler/ops/infer.h"

static int is_op(const IrNode *n, const char *op) { return !strcmp(n->op, op); }

static const char *nm(const IrNode *n) { return n->name ? n->name : "?"; }

static int scalar_const(IrGraph *g, const char *base, const char *what, float v, AtlErr *e)
{
    return bk_rw_float_const(g, base, what, 0, NULL, &v, e);
}

/* op(a, b) -> new tensor */
static int bin(IrGraph *g, const char *op, const char *base, const char *what, int a, int b, AtlErr *e)
{
    int ins[2] = {a, b};
    return bk_rw_op(g, op, base, what, ins, 2, e);
}

/* x ^ p for a constant p */
static int pow_const(IrGraph *g, const char *base, const char *what, int x, float p, AtlErr *e)
{
    char pname[64];
    snprintf(pname, sizeof pname, "%s_exp", what);
    int pt = scalar_const(g, base, pname, p, e);
    return pt < 0 ? -1 : bin(g, "Pow", base, what, x, pt, e);
}

/* ReduceMean of x over the given axes keeping them. */
static int mean_axes(IrGraph *g, const char *base, const char *what, int x, const int64_t *axes, int na, AtlErr *e)
{
    return bk_rw_reduce(g, "ReduceMean", base, what, x, axes, na, 1, -1, e);
}

/* x - mean(x) and (var(x) + eps)^-1/2 over the given axes (kept), as the
 * normalisations compute them: the variance from the centred values. */
static int centre_scale(IrGraph *g, const char *base, int x, const int64_t *axes, int na, float eps, int *d, int *rstd,
                        int *mean, int *var, AtlErr *e)
{
    *mean = mean_axes(g, base, "norm_mean", x, axes, na, e);
    *d = *mean < 0 ? -1 : bin(g, "Sub", base, "norm_centred", x, *mean, e);
    int sq = *d < 0 ? -1 : bin(g, "Mul", base, "norm_square", *d, *d, e);
    *var = sq < 0 ? -1 : mean_axes(g, base, "norm_var", sq, axes, na, e);
    int et = *var < 0 ? -1 : scalar_const(g, base, "norm_eps", eps, e);
    int ve = et < 0 ? -1 : bin(g, "Add", base, "norm_var_eps", *var, et, e);
    *rstd = ve < 0 ? -1 : pow_const(g, base, "norm_rstd", ve, -0.5f, e);
    return *rstd < 0 ? -1 : 0;
}

/* t (C values) seen as [C, 1, ...] against an input of rank r. */
static int per_channel(IrGraph *g, const char *base, const char *what, int t, int64_t C, int r, AtlErr *e)
{
    int64_t dims[IR_MAXDIM];
    dims[0] = C;
    for (int d = 1; d < r - 1; d++) dims[d] = 1;
    return bk_rw_view(g, base, what, t, dims, r - 1, e);
}

/* y = x * k + t with k, t (C values each) seen as [C, 1, ...]. */
static int channel_affine(IrGraph *g, const char *base, const char *what, int x, int k, int t, int64_t C, int r, int y,
                          AtlErr *e)
{
    char w[3][64];
    snprintf(w[0], sizeof w[0], "%s_k", what);
    snprintf(w[1], sizeof w[1], "%s_t", what);
    snprintf(w[2], sizeof w[2], "%s_xk", what);
    int kc = per_channel(g, base, w[0], k, C, r, e);
    int tc = kc < 0 ? -1 : per_channel(g, base, w[1], t, C, r, e);
    int xk = tc < 0 ? -1 : bin(g, "Mul", base, w[2], x, kc, e);
    int ins[2] = {xk, tc};
    return xk < 0 || bk_rw_node(g, "Add", base, ins, 2, y, e) < 0 ? -1 : 0;
}

static int variadic_applies(const IrGraph *g, int node)
{
    const IrNode *n = &g->nodes[node];
    return n->nin > BK_MAXIN && (is_op(n, "Sum") || is_op(n, "Mean") || is_op(n, "Max") || is_op(n, "Min"));
}

static int variadic_rewrite(IrGraph *g, int node, AtlErr *e)
{
    char base[400];
    int ins[64], n = g->nodes[node].nin, y = g->nodes[node].out[0];
    if (n > 64) return atl_fail(e, "node '%s' (%s): %d inputs (at most 64 are lowered)", nm(&g->nodes[node]), g->nodes[node].op, n);
    for (int i = 0; i < n; i++) ins[i] = g->nodes[node].in[i];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    int mean = is_op(&g->nodes[node], "Mean");
    char op[16];
    snprintf(op, sizeof op, "%s", mean ? "Sum" : g->nodes[node].op);
    int s = bk_rw_fold(g, op, base, "part", ins, n, mean ? -1 : y, e);
    if (s < 0) return -1;
    if (mean) {
        int k = scalar_const(g, base, "inv_count", 1.0f / (float)n, e);
        int mi[2] = {s, k};
        if (k < 0 || bk_rw_node(g, "Mul", base, mi, 2, y, e) < 0) return -1;
    }
    return 0;
}

static int always(const IrGraph *g, int node) { (void)g; (void)node; return 1; }

static int instnorm_rewrite(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    int x = n->in[0], s = n->in[1], b = n->in[2], y = n->out[0], r = g->t[x].ndim;
    float eps = ir_attr_float(n, "epsilon", 1e-5f);
    int64_t C = g->t[x].dims[1];
    if (r < 3) return atl_fail(e, "node '%s' (InstanceNormalization): input rank %d (at least 3)", nm(n), r);
    char base[400];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    int64_t axes[IR_MAXDIM];
    int na = 0, d, rs, mean, var;
    for (int a = 2; a < r; a++) axes[na++] = a;
    if (centre_scale(g, base, x, axes, na, eps, &d, &rs, &mean, &var, e)) return -1;
    int nr = bin(g, "Mul", base, "in_normed", d, rs, e);
    return nr < 0 ? -1 : channel_affine(g, base, "in_affine", nr, s, b, C, r, y, e);
}

static int batchnorm_applies(const IrGraph *g, int node)
{
    const IrNode *n = &g->nodes[node];
    if (!is_op(n, "BatchNormalization") || n->nin < 5 || ir_attr_int(n, "training_mode", 0)) return 0;
    for (int i = 1; i < n->nout; i++) if (n->out[i] >= 0) return 0;
    for (int i = 1; i < 5; i++) if (n->in[i] >= 0 && !g->t[n->in[i]].data) return 1;
    return 0;
}

static int batchnorm_rewrite(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    int x = n->in[0], s = n->in[1], b = n->in[2], m = n->in[3], v = n->in[4], y = n->out[0], r = g->t[x].ndim;
    float eps = ir_attr_float(n, "epsilon", 1e-5f);
    int64_t C = r >= 2 ? g->t[x].dims[1] : 1;
    if (r < 2) return atl_fail(e, "node '%s' (BatchNormalization): input rank %d (at least 2)", nm(n), r);
    char base[400];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    int et = scalar_const(g, base, "bn_eps", eps, e);
    int ve = et < 0 ? -1 : bin(g, "Add", base, "bn_var_eps", v, et, e);
    int rs = ve < 0 ? -1 : pow_const(g, base, "bn_rstd", ve, -0.5f, e);
    int k = rs < 0 ? -1 : bin(g, "Mul", base, "bn_k", s, rs, e);
    int mk = k < 0 ? -1 : bin(g, "Mul", base, "bn_mk", m, k, e);
    int t = mk < 0 ? -1 : bin(g, "Sub", base, "bn_t", b, mk, e);
    return t < 0 ? -1 : channel_affine(g, base, "bn_affine", x, k, t, C, r, y, e);
}

static int mvn_rewrite(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    int x = n->in[0], y = n->out[0], r = g->t[x].ndim, na = 0, d, rs, mean, var;
    int64_t axes[IR_MAXDIM];
    const IrAttr *a = ir_attr(n, "axes");
    if (a && (a->type != IR_ATTR_INTS || a->n > r))
        return atl_fail(e, "node '%s' (MeanVarianceNormalization): axes must list at most %d axes", nm(n), r);
    if (a) for (int i = 0; i < a->n; i++) axes[na++] = a->ints[i] < 0 ? a->ints[i] + r : a->ints[i];
    else for (int i = 0; i < 4; i += 1 + (i == 0)) if (i < r) axes[na++] = i; /* default [0, 2, 3] */
    for (int i = 0; i < na; i++)
        if (axes[i] < 0 || axes[i] >= r) return atl_fail(e, "node '%s' (MeanVarianceNormalization): axis out of range for rank %d", nm(n), r);
    char base[400];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    /* the interpreter's epsilon: (x - mean) / sqrt(var + 1e-9) */
    if (centre_scale(g, base, x, axes, na, 1e-9f, &d, &rs, &mean, &var, e)) return -1;
    int ins[2] = {d, rs};
    return bk_rw_node(g, "Mul", base, ins, 2, y, e) < 0 ? -1 : 0;
}

static int bn_training_applies(const IrGraph *g, int node)
{
    const IrNode *n = &g->nodes[node];
    return n->nin >= 5 && g->opset >= 14 && ir_attr_int(n, "training_mode", 0);
}

/* running = stat_in * momentum + batch (seen as [C]) * (1 - momentum), into out */
static int running_stat(IrGraph *g, const char *base, const char *what, int stat_in, int batch, int64_t C, float mom,
                        int out, AtlErr *e)
{
    char w[5][64];
    static const char *const sfx[5] = {"c", "mom", "old", "rest", "new"};
    for (int i = 0; i < 5; i++) snprintf(w[i], sizeof w[i], "%s_%s", what, sfx[i]);
    int bc = bk_rw_reshape(g, base, w[0], batch, &C, 1, e);
    int mt = bc < 0 ? -1 : scalar_const(g, base, w[1], mom, e);
    int om = mt < 0 ? -1 : bin(g, "Mul", base, w[2], stat_in, mt, e);
    int rt = om < 0 ? -1 : scalar_const(g, base, w[3], 1.0f - mom, e);
    int nw = rt < 0 ? -1 : bin(g, "Mul", base, w[4], bc, rt, e);
    int ins[2] = {om, nw};
    return nw < 0 || bk_rw_node(g, "Add", base, ins, 2, out, e) < 0 ? -1 : 0;
}

/* Training-mode BatchNormalization: the batch statistics over N and the
 * spatial axes normalise x; running mean / var (outputs 1, 2) blend the
 * inputs with the batch statistics by momentum. */
static int bn_training_rewrite(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    int x = n->in[0], y = n->out[0], r = g->t[x].ndim, na = 0, d, rs, mean, var;
    if (r < 2) return atl_fail(e, "node '%s' (BatchNormalization): input rank %d (at least 2)", nm(n), r);
    float eps = ir_attr_float(n, "epsilon", 1e-5f), mom = ir_attr_float(n, "momentum", 0.9f);
    int64_t C = g->t[x].dims[1], axes[IR_MAXDIM];
    for (int a = 0; a < r; a++) if (a != 1) axes[na++] = a;
    char base[400];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    int outs[3] = {y, n->nout > 1 ? n->out[1] : -1, n->nout > 2 ? n->out[2] : -1};
    int ins[5] = {n->in[0], n->in[1], n->in[2], n->in[3], n->in[4]};
    if (centre_scale(g, base, x, axes, na, eps, &d, &rs, &mean, &var, e)) return -1;
    int nr = bin(g, "Mul", base, "bn_normed", d, rs, e);
    if (nr < 0 || channel_affine(g, base, "bn_affine", nr, ins[1], ins[2], C, r, y, e)) return -1;
    if (outs[1] >= 0 && running_stat(g, base, "bn_run_mean", ins[3], mean, C, mom, outs[1], e)) return -1;
    return outs[2] >= 0 ? running_stat(g, base, "bn_run_var", ins[4], var, C, mom, outs[2], e) : 0;
}

/* A Reduce* over constant axes that are not one adjacent run. */
static int reduce_axes(const IrGraph *g, const IrNode *n, int64_t *axes)
{
    int na = 0, r = g->t[n->in[0]].ndim;
    const IrAttr *a = ir_attr(n, "axes");
    if (a && a->type == IR_ATTR_INTS && a->n <= IR_MAXDIM) for (int i = 0; i < a->n; i++) axes[na++] = a->ints[i];
    else if (!a && n->nin > 1 && n->in[1] >= 0 && g->t[n->in[1]].data && ir_numel(&g->t[n->in[1]]) <= IR_MAXDIM)
        for (int64_t i = 0; i < ir_numel(&g->t[n->in[1]]); i++) axes[na++] = ir_get_i(&g->t[n->in[1]], i);
    for (int i = 0; i < na; i++) if (axes[i] < 0) axes[i] += r;
    return na;
}

static int reduce_gap_applies(const IrGraph *g, int node)
{
    const IrNode *n = &g->nodes[node];
    int64_t axes[IR_MAXDIM];
    if (strncmp(n->op, "Reduce", 6) || !ir_shape_known(&g->t[n->in[0]])) return 0;
    int na = reduce_axes(g, n, axes), r = g->t[n->in[0]].ndim, red[IR_MAXDIM] = {0}, runs = 0;
    for (int i = 0; i < na; i++) {
        if (axes[i] < 0 || axes[i] >= r) return 0; /* the lowering reports it */
        red[axes[i]] = 1;
    }
    for (int d = 0; d < r; d++) runs += red[d] && (d == 0 || !red[d - 1]);
    return runs > 1;
}

/* The kept axes first, the reduced ones last (now adjacent) by a Transpose,
 * the same Reduce over them, a Reshape to the output's shape. */
static int reduce_gap_rewrite(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    int64_t axes[IR_MAXDIM], perm[IR_MAXDIM], tail[IR_MAXDIM];
    int x = n->in[0], y = n->out[0], r = g->t[x].ndim, na = reduce_axes(g, n, axes), red[IR_MAXDIM] = {0}, k = 0, nr = 0;
    for (int i = 0; i < na; i++) red[axes[i]] = 1;
    for (int d = 0; d < r; d++) if (!red[d]) perm[k++] = d;
    for (int d = 0; d < r; d++) if (red[d]) { tail[nr++] = k; perm[k++] = d; }
    char base[400], op[32];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    snprintf(op, sizeof op, "%s", n->op);
    int64_t yd[IR_MAXDIM];
    int yr = g->t[y].ndim;
    for (int d = 0; d < yr; d++) yd[d] = g->t[y].dims[d];
    int xt = bk_rw_transpose(g, base, "reduce_moved", x, perm, r, -1, e);
    int rd = xt < 0 ? -1 : bk_rw_reduce(g, op, base, "reduce_tail", xt, tail, nr, 1, -1, e);
    return rd < 0 || bk_rw_reshape_to(g, base, "reduce_out", rd, yd, yr, y, e) < 0 ? -1 : 0;
}

static int lrn_rewrite(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    int x = n->in[0], y = n->out[0], r = g->t[x].ndim;
    int64_t size = ir_attr_int(n, "size", 0);
    float alpha = ir_attr_float(n, "alpha", 1e-4f), beta = ir_attr_float(n, "beta", 0.75f), bias = ir_attr_float(n, "bias", 1.0f);
    if (r < 3 || size < 1 || size > 4096) return atl_fail(e, "node '%s' (LRN): needs rank >= 3 and 1 <= size <= 4096", nm(n));
    int64_t N = g->t[x].dims[0], C = g->t[x].dims[1], S = 1, xd[IR_MAXDIM];
    for (int d = 0; d < r; d++) xd[d] = g->t[x].dims[d];
    for (int d = 2; d < r; d++) S *= xd[d];
    char base[400];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    float wv[4096], bv = bias;
    for (int64_t i = 0; i < size; i++) wv[i] = alpha / (float)size;
    int64_t vd[4] = {N, 1, C, S}, wd[4] = {1, 1, size, 1}, one = 1;
    int64_t pads[4] = {(size - 1) / 2, 0, size / 2, 0}, ks[2] = {size, 1};
    int sq = bin(g, "Mul", base, "lrn_square", x, x, e);
    int sv = sq < 0 ? -1 : bk_rw_reshape(g, base, "lrn_rows", sq, vd, 4, e);
    int wt = sv < 0 ? -1 : bk_rw_float_const(g, base, "lrn_window", 4, wd, wv, e);
    int bt = wt < 0 ? -1 : bk_rw_float_const(g, base, "lrn_bias", 1, &one, &bv, e);
    int ci[3] = {sv, wt, bt};
    int sum = bt < 0 ? -1 : bk_rw_op(g, "Conv", base, "lrn_sum", ci, 3, e);
    if (sum < 0) return -1;
    int k = g->nn - 1;
    if (ir_set_attr_ints(g, k, "pads", pads, 4, e) || ir_set_attr_ints(g, k, "kernel_shape", ks, 2, e)) return -1;
    int st = bk_rw_reshape(g, base, "lrn_sum_x", sum, xd, r, e);
    int p = st < 0 ? -1 : pow_const(g, base, "lrn_scale", st, -beta, e);
    int ins[2] = {x, p};
    return p < 0 || bk_rw_node(g, "Mul", base, ins, 2, y, e) < 0 ? -1 : 0;
}

static int cumsum_applies(const IrGraph *g, int node)
{
    const IrNode *n = &g->nodes[node];
    return n->nin >= 2 && n->in[1] >= 0 && g->t[n->in[1]].data && ir_numel(&g->t[n->in[1]]) == 1;
}

/* CumSum along an axis of length L as a matmul with a constant 0/1
 * triangular matrix T: y[i] = sum_j T[i][j] x[j], T[i][j] = 1 for j <= i
 * (forward), j >= i (reverse), strictly so when exclusive. x is seen as
 * [outer, L] (axis last: y = x T^T) or [outer, L, inner] (y = T x, T
 * broadcast over the batch). */
static int cumsum_rewrite(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    int x = n->in[0], y = n->out[0], r = g->t[x].ndim;
    int64_t a = ir_get_i(&g->t[n->in[1]], 0);
    int excl = (int)ir_attr_int(n, "exclusive", 0), rev = (int)ir_attr_int(n, "reverse", 0);
    if (a < 0) a += r;
    if (r < 1 || a < 0 || a >= r) return atl_fail(e, "node '%s' (CumSum): axis out of range for rank %d", nm(n), r);
    int64_t outer = 1, L = g->t[x].dims[a], inner = 1;
    for (int d = 0; d < r; d++) {
        if (d < a) outer *= g->t[x].dims[d];
        else if (d > a) inner *= g->t[x].dims[d];
    }
    if (L > 8192) return atl_fail(e, "node '%s' (CumSum): axis length %lld (at most 8192: an L x L matrix)", nm(n), (long long)L);
    float *t = calloc((size_t)(L * L), sizeof *t);
    if (!t) return atl_fail(e, "out of memory");
    char base[400];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    /* row i of the stored matrix: T[i][.] (inner > 1) or column i of T^T */
    for (int64_t i = 0; i < L; i++)
        for (int64_t j = 0; j < L; j++) {
            int on = rev ? (excl ? j > i : j >= i) : (excl ? j < i : j <= i);
            if (on) t[inner > 1 ? i * L + j : j * L + i] = 1.0f;
        }
    int64_t md[2] = {L, L}, x2[2] = {outer, L}, x3[3] = {outer, L, inner}, yd[IR_MAXDIM];
    for (int d = 0; d < r; d++) yd[d] = g->t[x].dims[d];
    int mt = bk_rw_float_const(g, base, "cumsum_band", 2, md, t, e);
    free(t);
    /* a float64 (or f16) x: MatMul takes f32, so Casts around it (on the
     * chip every float tensor has the one storage dtype: the Casts copy) */
    int wide = g->t[x].dtype != IR_F32, xf = x;
    if (mt >= 0 && wide) {
        xf = bk_rw_op(g, "Cast", base, "cumsum_to_f32", &x, 1, e);
        if (xf < 0 || ir_set_attr_int(g, g->nn - 1, "to", IR_F32, e)) return -1;
    }
    int xv = mt < 0 || xf < 0 ? -1 : bk_rw_reshape(g, base, "cumsum_rows", xf, inner > 1 ? x3 : x2, inner > 1 ? 3 : 2, e);
    int ins[2] = {inner > 1 ? mt : xv, inner > 1 ? xv : mt};
    int yv = xv < 0 ? -1 : bk_rw_op(g, "MatMul", base, "cumsum_mm", ins, 2, e);
    if (yv < 0) return -1;
    if (!wide) return bk_rw_reshape_to(g, base, "cumsum_out", yv, yd, r, y, e) < 0 ? -1 : 0;
    int yr = bk_rw_reshape(g, base, "cumsum_out", yv, yd, r, e);
    int cn = yr < 0 ? -1 : bk_rw_node(g, "Cast", base, &yr, 1, y, e);
    return cn < 0 || ir_set_attr_int(g, cn, "to", g->t[y].dtype, e) ? -1 : 0;
}

static int avgpool_ceil_applies(const IrGraph *g, int node)
{
    const IrNode *n = &g->nodes[node];
    return ir_attr_int(n, "count_include_pad", 0) && ir_attr_int(n, "ceil_mode", 0) &&
           !strcmp(ir_attr_str(n, "auto_pad", "NOTSET"), "NOTSET") && g->t[n->in[0]].ndim >= 3;
}

static int avgpool_ceil_rewrite(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    int x = n->in[0], y = n->out[0], r = g->t[x].ndim, ns = r - 2, any = 0;
    int64_t pads[2 * IR_MAXDIM] = {0}, sp[2 * IR_MAXDIM], k[IR_MAXDIM], st[IR_MAXDIM];
    if (bk_rw_attr_ints(n, "pads", sp, 2 * ns, 0) || bk_rw_attr_ints(n, "kernel_shape", k, ns, 0) ||
        bk_rw_attr_ints(n, "strides", st, ns, 1))
        return atl_fail(e, "node '%s' (AveragePool): pads, kernel_shape or strides of the wrong length", nm(n));
    for (int i = 0; i < ns; i++) {
        pads[2 + i] = sp[i];
        pads[r + 2 + i] = sp[ns + i];
        any |= sp[i] != 0 || sp[ns + i] != 0;
    }
    char base[400];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    int xp = any ? bk_rw_pad(g, base, "avgpool_pads", x, pads, r, 0.0f, e) : x;
    int pn = xp < 0 ? -1 : bk_rw_node(g, "AveragePool", base, &xp, 1, y, e);
    if (pn < 0 || ir_set_attr_ints(g, pn, "kernel_shape", k, ns, e) || ir_set_attr_ints(g, pn, "strides", st, ns, e) ||
        ir_set_attr_int(g, pn, "ceil_mode", 1, e) || ir_set_attr_int(g, pn, "count_include_pad", 0, e))
        return -1;
    return 0;
}

typedef struct RewriteRule {
    const char *op;                       /* NULL: any op (applies decides) */
    int (*applies)(const IrGraph *g, int node);
    int (*rewrite)(IrGraph *g, int node, AtlErr *e);
} RewriteRule;

static const RewriteRule rules[] = {
    {NULL, variadic_applies, variadic_rewrite},
    {"InstanceNormalization", always, instnorm_rewrite},
    {"BatchNormalization", batchnorm_applies, batchnorm_rewrite},
    {"LRN", always, lrn_rewrite},
    {"CumSum", cumsum_applies, cumsum_rewrite},
    {"AveragePool", avgpool_ceil_applies, avgpool_ceil_rewrite},
    {"BitShift", bk_rewrite_bitshift_applies, bk_rewrite_bitshift},
    {"MaxPool", bk_rewrite_pool_idx_applies, bk_rewrite_pool_idx},
    {NULL, bk_rewrite_3d_applies, bk_rewrite_3d},
    {"Einsum", always, bk_rewrite_einsum},
    {"Det", always, bk_rewrite_det},
    {"MeanVarianceNormalization", always, mvn_rewrite},
    {"BatchNormalization", bn_training_applies, bn_training_rewrite},
    {NULL, reduce_gap_applies, reduce_gap_rewrite},
};

static const RewriteRule *rule_of(const IrGraph *g, int node)
{
    const IrNode *n = &g->nodes[node];
    if (n->dead) return NULL;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if ((!rules[i].op || is_op(n, rules[i].op)) && rules[i].applies(g, node)) return &rules[i];
    return NULL;
}

int bk_rewrite_ops_count(const IrGraph *g)
{
    int cnt = 0;
    for (int i = 0; i < g->nn; i++) cnt += rule_of(g, i) != NULL;
    return cnt;
}

int bk_rewrite_ops(IrGraph *g, AtlErr *e)
{
    /* rounds: the nodes a rewrite adds get shapes, then are rewritten in
     * turn (a 3-D dilated MaxPool becomes dilated 2-D ones) */
    for (int round = 0; round < 4 && bk_rewrite_ops_count(g); round++) {
        int nn = g->nn;
        for (int i = 0; i < nn; i++) {
            const RewriteRule *r = rule_of(g, i);
            if (!r) continue;
            if (!ir_shape_known(&g->t[g->nodes[i].in[0]]))
                return atl_fail(e, "node '%s' (%s): the input shape must be known", nm(&g->nodes[i]), g->nodes[i].op);
            if (r->rewrite(g, i, e)) return -1;
            g->nodes[i].dead = 1;
        }
        if (ir_toposort(g, e) || ir_infer_shapes(g, e)) return -1;
    }
    return 0;
}
