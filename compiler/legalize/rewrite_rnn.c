/* rewrite_rnn.c - RNN, GRU and LSTM as ops the chip already lowers, by
 * unrolling the (static) sequence.
 *
 * Reads: a canonicalised, shape-inferred graph (the backend's private copy,
 *   see backend/compile.c; the caller's graph is never changed).
 * Does: replaces each live RNN / GRU / LSTM node (forward, reverse,
 *   bidirectional; initial_h, initial_c, B, P each given or absent; clip;
 *   GRU linear_before_reset 0 or 1; layout 0 or 1; any of Y, Y_h, Y_c
 *   wanted) by, per direction d and gate k (W_k, R_k the gate's [H, In] and
 *   [H, H] rows of W[d], R[d]; Gemm always with transB = 1):
 *     Xp_k   = Gemm(X as [S*B, I], W_k, Wb_k + Rb_k)   all steps at once
 *              (GRU's h gate with linear_before_reset = 1: Wb_h only)
 *     x_k(t) = the B rows of time t of Xp_k         (one Split, Reshapes)
 *   then per time step t (reverse: t = S-1 .. 0), with a(v) = the gate's
 *   activation of clip(v) (Clip only when `clip` is set):
 *     RNN   h = Tanh(Gemm(h, R, x(t)))
 *     GRU   z = Sigmoid(Gemm(h, R_z, x_z(t)))   r = Sigmoid(Gemm(h, R_r, x_r(t)))
 *           hh = Tanh(Gemm(r*h, R_h, x_h(t)))                 lbr = 0
 *           hh = Tanh(x_h(t) + r * Gemm(h, R_h, Rb_h))        lbr = 1
 *           h = hh + z * (h - hh)         (= (1-z) hh + z h)
 *     LSTM  i = Sigmoid(Gemm(h, R_i, x_i(t)) + P_i*c)   f likewise with P_f
 *           c = f*c + i*Tanh(Gemm(h, R_c, x_c(t)))
 *           o = Sigmoid(Gemm(h, R_o, x_o(t)) + P_o*c)   h = o * Tanh(c)
 *   The states start as initial_h / initial_c (a Slice of direction d) or
 *   zeros. Y is a Concat of the steps' h in time order, Y_h / Y_c a
 *   Concat over the directions, both shaped by Reshapes straight into
 *   layout 0 or 1 (no Transpose). Weight and bias slices of constants fold
 *   into new constants (pass_fold_constants), so constant weights are
 *   pre-sliced at compile time and the Gemm lowering stores them
 *   transposed; run-time weights stay Slices read with strides. The
 *   activations are then fused into their Gemm/Add (pass_fuse_activations).
 * Rejects (naming the node): sequence_lens that is not a constant equal to
 *   the sequence length for every batch entry, the `activations` attribute
 *   (the importer keeps no string lists; the defaults Sigmoid/Tanh are
 *   used), LSTM input_forget = 1, non-f32 X/W/R, unknown shapes.
 * Why: the recurrence has a static length, so the unrolled graph is plain
 *   Gemm and element-wise work that gets the existing tiling, placement and
 *   cost model; no new instruction or lowering is needed. The cost is one
 *   group per op per step (docs/backend.md gives the count), and the steps
 *   of one direction are serial by data dependence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/legalize/legalize.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"

enum { K_RNN, K_GRU, K_LSTM };

static const struct RnnKind {
    const char *op;
    int gates;
    const char *f, *g, *h; /* default activations (ONNX spec) */
} kinds[] = {
    {"RNN", 1, "Tanh", NULL, NULL},
    {"GRU", 3, "Sigmoid", "Tanh", NULL},
    {"LSTM", 4, "Sigmoid", "Tanh", "Tanh"},
};

typedef struct Rw {
    IrGraph *g;
    AtlErr *e;
    int kind, ndir, layout, lbr, reverse;
    int64_t S, B, I, H;
    float clip;
    int x, w, r, bias, h0, c0, p; /* tensors, -1 when absent */
    char base[400], name[256];    /* base of new tensor names; the node's name */
    int d;                        /* the direction being built */
    long long t;                  /* its time step (-1: all steps) */
} Rw;

static int fail(Rw *w, const char *fmt, const char *what)
{
    return atl_fail(w->e, "node '%s' (%s): %s%s", w->name, kinds[w->kind].op, fmt, what ? what : "");
}

/* "rnn_d<d>_t<t>_<part>": unique per direction, step and part. */
static const char *tag(const Rw *w, const char *part, char *buf, size_t n)
{
    if (w->t < 0) snprintf(buf, n, "rnn_d%d_%s", w->d, part);
    else snprintf(buf, n, "rnn_d%d_t%lld_%s", w->d, w->t, part);
    return buf;
}

static int node_to_new(Rw *w, const char *op, const int *ins, int nin, const char *part)
{
    char what[128];
    int y = bk_rw_tensor(w->g, w->base, tag(w, part, what, sizeof what), w->e);
    return y < 0 || bk_rw_node(w->g, op, w->name, ins, nin, y, w->e) < 0 ? -1 : y;
}

static int op2(Rw *w, const char *op, int a, int b, const char *part)
{
    int ins[2] = {a, b};
    return a < 0 || b < 0 ? -1 : node_to_new(w, op, ins, 2, part);
}

static int reshape(Rw *w, int x, const int64_t *dims, int nd, const char *part)
{
    char what[128];
    return x < 0 ? -1 : bk_rw_reshape(w->g, w->base, tag(w, part, what, sizeof what), x, dims, nd, w->e);
}

static int slice(Rw *w, int x, int n, const int64_t *axes, const int64_t *starts, const int64_t *ends, const char *part)
{
    char what[128];
    return bk_rw_slice(w->g, w->base, tag(w, part, what, sizeof what), x, n, axes, starts, ends, w->e);
}

/* Gemm(a, b^T (+ c)); c < 0: none. */
static int gemm(Rw *w, int a, int b, int c, const char *part)
{
    int ins[3] = {a, b, c};
    if (a < 0 || b < 0) return -1;
    int y = node_to_new(w, "Gemm", ins, c >= 0 ? 3 : 2, part);
    return y < 0 || ir_set_attr_int(w->g, w->g->nn - 1, "transB", 1, w->e) ? -1 : y;
}

/* A new f32 constant of shape dims[0..nd), every element v (Clip bounds,
 * zero initial states). */
static int f32_const(Rw *w, const char *part, int nd, const int64_t *dims, float v)
{
    char what[128];
    int t = bk_rw_tensor(w->g, w->base, tag(w, part, what, sizeof what), w->e);
    if (t < 0) return -1;
    IrTensor *x = &w->g->t[t];
    x->dtype = IR_F32;
    x->ndim = nd;
    for (int i = 0; i < nd; i++) x->dims[i] = dims[i];
    if (ir_alloc_data(x, w->e)) return -1;
    for (int64_t i = 0, n = ir_numel(x); i < n; i++) ((float *)x->data)[i] = v;
    return t;
}

/* act(clip(x)): the gate activation, after the Clip the `clip` attribute asks for. */
static int activate(Rw *w, const char *act, int x, const char *part)
{
    char p2[96];
    if (x < 0) return -1;
    if (w->clip > 0) {
        snprintf(p2, sizeof p2, "%s_clip", part);
        if (w->g->opset >= 11) {
            char lo[96], hi[96];
            snprintf(lo, sizeof lo, "%s_lo", p2);
            snprintf(hi, sizeof hi, "%s_hi", p2);
            int ins[3] = {x, f32_const(w, lo, 0, NULL, -w->clip), f32_const(w, hi, 0, NULL, w->clip)};
            if (ins[1] < 0 || ins[2] < 0 || (x = node_to_new(w, "Clip", ins, 3, p2)) < 0) return -1;
        } else {
            if ((x = node_to_new(w, "Clip", &x, 1, p2)) < 0) return -1;
            int k = w->g->nn - 1;
            if (ir_set_attr_float(w->g, k, "min", -w->clip, w->e) || ir_set_attr_float(w->g, k, "max", w->clip, w->e)) return -1;
        }
    }
    snprintf(p2, sizeof p2, "%s_act", part);
    return node_to_new(w, act, &x, 1, p2);
}

/* Rows [k*H, (k+1)*H) of direction d of a [D, n*H, cols] tensor, as [H, cols]. */
static int gate_rows(Rw *w, int src, int k, int64_t cols, const char *part)
{
    int64_t axes[2] = {0, 1}, st[2] = {w->d, k * w->H}, en[2] = {w->d + 1, (k + 1) * w->H}, dims[2] = {w->H, cols};
    char p2[96];
    snprintf(p2, sizeof p2, "%s_rows", part);
    return reshape(w, slice(w, src, 2, axes, st, en, p2), dims, 2, part);
}

/* Entries [k*H, (k+1)*H) of direction d of a [D, n*H] tensor, as [1, H]. */
static int gate_vec(Rw *w, int src, int k, const char *part)
{
    int64_t axes[2] = {0, 1}, st[2] = {w->d, k * w->H}, en[2] = {w->d + 1, (k + 1) * w->H};
    return slice(w, src, 2, axes, st, en, part);
}

/* The initial state of direction d ([D,B,H], layout 1 [B,D,H]) as [B, H], or zeros. */
static int initial_state(Rw *w, int src, const char *part)
{
    int64_t axis = w->layout ? 1 : 0, st = w->d, en = w->d + 1, dims[2] = {w->B, w->H};
    char p2[96];
    if (src >= 0) {
        snprintf(p2, sizeof p2, "%s_slice", part);
        return reshape(w, slice(w, src, 1, &axis, &st, &en, p2), dims, 2, part);
    }
    return f32_const(w, part, 2, dims, 0.0f);
}

typedef struct Dir {
    int *xs[4];  /* per gate and time step: rows of X W_k^T + bias, [1,B,H] (layout 1: [B,1,H]) */
    int rk[4];   /* per gate: R_k [H, H] */
    int rbh;     /* GRU linear_before_reset: Rb_h [1, H] or -1 */
    int pk[3];   /* LSTM peepholes [1, H] (i, o, f) or -1 */
    int h, c;    /* current states [B, H] */
} Dir;

static const char *const gate_names[3][4] = {{"g"}, {"z", "r", "h"}, {"i", "o", "f", "c"}};

/* Splits a projection [S,B,H] (layout 1: [B,S,H]) into its S time steps
 * xs[0..S): one Split, equal parts (no `split` list in any opset). */
static int split_steps(Rw *w, int xp, int *xs, const char *gn)
{
    char part[64], what[128];
    if (xp < 0) return -1;
    if (w->S == 1) {
        xs[0] = xp;
        return 0;
    }
    int k = ir_add_node(w->g, "Split", w->name, w->e);
    if (k < 0 || ir_node_add_input(w->g, k, xp, w->e) || ir_set_attr_int(w->g, k, "axis", w->layout ? 1 : 0, w->e)) return -1;
    for (int64_t t = 0; t < w->S; t++) {
        snprintf(part, sizeof part, "xs_%s_%lld", gn, (long long)t);
        if ((xs[t] = bk_rw_tensor(w->g, w->base, tag(w, part, what, sizeof what), w->e)) < 0 ||
            ir_node_add_output(w->g, k, xs[t], w->e))
            return -1;
    }
    return 0;
}

/* The per-direction parts computed once: projections of X, R slices, biases. */
static int direction_setup(Rw *w, Dir *dr)
{
    const struct RnnKind *kd = &kinds[w->kind];
    int64_t x2[2] = {w->S * w->B, w->I}, x3[3] = {w->S, w->B, w->H};
    if (w->layout) { x3[0] = w->B; x3[1] = w->S; }
    w->t = -1;
    int xflat = reshape(w, w->x, x2, 2, "x2");
    if (xflat < 0) return -1;
    dr->rbh = -1;
    for (int k = 0; k < kd->gates; k++) {
        const char *gn = gate_names[w->kind][k];
        char part[64];
        int bias = -1;
        if (w->bias >= 0) {
            snprintf(part, sizeof part, "wb_%s", gn);
            int wb = gate_vec(w, w->bias, k, part);
            snprintf(part, sizeof part, "rb_%s", gn);
            int rb = gate_vec(w, w->bias, kd->gates + k, part);
            snprintf(part, sizeof part, "b_%s", gn);
            if (w->kind == K_GRU && k == 2 && w->lbr) { bias = wb; dr->rbh = rb; }
            else bias = op2(w, "Add", wb, rb, part);
            if (bias < 0) return -1;
        }
        snprintf(part, sizeof part, "w_%s", gn);
        int wk = gate_rows(w, w->w, k, w->I, part);
        snprintf(part, sizeof part, "r_%s", gn);
        if ((dr->rk[k] = gate_rows(w, w->r, k, w->H, part)) < 0) return -1;
        snprintf(part, sizeof part, "xp2_%s", gn);
        int xp = gemm(w, xflat, wk, bias, part);
        snprintf(part, sizeof part, "xp_%s", gn);
        if (split_steps(w, reshape(w, xp, x3, 3, part), dr->xs[k], gn)) return -1;
    }
    for (int k = 0; k < 3; k++) {
        char part[64];
        snprintf(part, sizeof part, "p_%s", gate_names[K_LSTM][k]);
        dr->pk[k] = w->p >= 0 ? gate_vec(w, w->p, k, part) : -1;
        if (w->p >= 0 && dr->pk[k] < 0) return -1;
    }
    if ((dr->h = initial_state(w, w->h0, "h0")) < 0) return -1;
    if (w->kind == K_LSTM && (dr->c = initial_state(w, w->c0, "c0")) < 0) return -1;
    return 0;
}

/* x_k(t): the rows of time step w->t of gate k's projection, [B, H]. */
static int x_at(Rw *w, const Dir *dr, int k)
{
    int64_t dims[2] = {w->B, w->H};
    char part[32];
    snprintf(part, sizeof part, "x_%s", gate_names[w->kind][k]);
    return reshape(w, dr->xs[k][w->t], dims, 2, part);
}

/* LSTM gate pre-activation Gemm(h, R_k, x_k(t)) (+ P * c). */
static int lstm_gate(Rw *w, Dir *dr, int k, int peep, int c, const char *act)
{
    const char *gn = gate_names[K_LSTM][k];
    char part[32];
    snprintf(part, sizeof part, "pre_%s", gn);
    int v = gemm(w, dr->h, dr->rk[k], x_at(w, dr, k), part);
    if (peep >= 0) {
        snprintf(part, sizeof part, "peep_%s", gn);
        int pc = op2(w, "Mul", peep, c, part);
        snprintf(part, sizeof part, "sum_%s", gn);
        v = op2(w, "Add", v, pc, part);
    }
    return activate(w, act, v, gn);
}

/* One time step: updates dr->h (and dr->c). */
static int step(Rw *w, Dir *dr)
{
    const struct RnnKind *kd = &kinds[w->kind];
    if (w->kind == K_RNN) return (dr->h = activate(w, kd->f, gemm(w, dr->h, dr->rk[0], x_at(w, dr, 0), "pre"), "h")) < 0 ? -1 : 0;
    if (w->kind == K_GRU) {
        int z = activate(w, kd->f, gemm(w, dr->h, dr->rk[0], x_at(w, dr, 0), "pre_z"), "z");
        int r = activate(w, kd->f, gemm(w, dr->h, dr->rk[1], x_at(w, dr, 1), "pre_r"), "r");
        int pre;
        if (w->lbr) pre = op2(w, "Add", x_at(w, dr, 2), op2(w, "Mul", r, gemm(w, dr->h, dr->rk[2], dr->rbh, "rh"), "r_rh"), "pre_h");
        else pre = gemm(w, op2(w, "Mul", r, dr->h, "rxh"), dr->rk[2], x_at(w, dr, 2), "pre_h");
        int hh = activate(w, kd->g, pre, "hh");
        int dz = op2(w, "Mul", z, op2(w, "Sub", dr->h, hh, "h_minus_hh"), "z_diff");
        return (dr->h = op2(w, "Add", hh, dz, "h")) < 0 ? -1 : 0;
    }
    int i = lstm_gate(w, dr, 0, dr->pk[0], dr->c, kd->f);
    int f = lstm_gate(w, dr, 2, dr->pk[2], dr->c, kd->f);
    int cand = lstm_gate(w, dr, 3, -1, -1, kd->g);
    int c = op2(w, "Add", op2(w, "Mul", f, dr->c, "f_c"), op2(w, "Mul", i, cand, "i_cand"), "c");
    if (c < 0) return -1;
    dr->c = c;
    int o = lstm_gate(w, dr, 1, dr->pk[1], c, kd->f);
    int hc = node_to_new(w, kd->h, &c, 1, "c_out");
    return hc < 0 || (dr->h = op2(w, "Mul", o, hc, "h")) < 0 ? -1 : 0;
}

/* Writes out (an existing tensor) as Concat(parts, axis) reshaped to dims;
 * each part is first reshaped to pdims. */
static int assemble(Rw *w, int out, const int *parts, int n, const int64_t *pdims, int pnd, int axis, const int64_t *dims,
                    int nd, const char *part)
{
    int ins[256] = {0}, *big = n > 256 ? calloc((size_t)n, sizeof *big) : ins;
    if (!big) return atl_fail(w->e, "out of memory");
    int rc = -1;
    char p2[64];
    w->d = 0;
    for (int i = 0; i < n; i++) {
        w->t = i;
        snprintf(p2, sizeof p2, "%s_part", part);
        if ((big[i] = reshape(w, parts[i], pdims, pnd, p2)) < 0) goto done;
    }
    w->t = -1;
    int cat = big[0];
    if (n > 1) {
        snprintf(p2, sizeof p2, "%s_cat", part);
        if ((cat = node_to_new(w, "Concat", big, n, p2)) < 0 || ir_set_attr_int(w->g, w->g->nn - 1, "axis", axis, w->e)) goto done;
    }
    char what[128];
    rc = bk_rw_reshape_to(w->g, w->base, tag(w, part, what, sizeof what), cat, dims, nd, out, w->e) < 0 ? -1 : 0;
done:
    if (big != ins) free(big);
    return rc;
}

static int input_or_absent(const IrNode *n, int i) { return n->nin > i ? n->in[i] : -1; }

/* The node's attributes and tensors; rejects what is not unrolled. */
static int plan(IrGraph *g, int node, Rw *w)
{
    const IrNode *n = &g->nodes[node];
    snprintf(w->name, sizeof w->name, "%s", n->name ? n->name : "?");
    const char *dir = ir_attr_str(n, "direction", "forward");
    w->ndir = !strcmp(dir, "bidirectional") ? 2 : 1;
    w->reverse = !strcmp(dir, "reverse");
    if (ir_attr(n, "activations"))
        return fail(w, "the 'activations' attribute is not supported (the default activations are unrolled)", NULL);
    if (w->kind == K_LSTM && ir_attr_int(n, "input_forget", 0)) return fail(w, "input_forget = 1 is not supported", NULL);
    w->layout = g->opset >= 14 ? (int)ir_attr_int(n, "layout", 0) : 0;
    w->lbr = (int)ir_attr_int(n, "linear_before_reset", 0);
    const IrAttr *cl = ir_attr(n, "clip");
    w->clip = cl ? cl->f : 0;
    w->x = n->in[0];
    w->w = n->in[1];
    w->r = n->in[2];
    w->bias = input_or_absent(n, 3);
    int sl = input_or_absent(n, 4);
    w->h0 = input_or_absent(n, 5);
    w->c0 = w->kind == K_LSTM ? input_or_absent(n, 6) : -1;
    w->p = w->kind == K_LSTM ? input_or_absent(n, 7) : -1;
    const IrTensor *x = &g->t[w->x], *r = &g->t[w->r];
    if (x->dtype != IR_F32 || g->t[w->w].dtype != IR_F32 || r->dtype != IR_F32)
        return fail(w, "X, W and R must be float32", NULL);
    if (!ir_shape_known(x) || x->ndim != 3 || !ir_shape_known(r) || r->ndim != 3)
        return fail(w, "X and R must have known 3-D shapes", NULL);
    w->S = x->dims[w->layout ? 1 : 0];
    w->B = x->dims[w->layout ? 0 : 1];
    w->I = x->dims[2];
    w->H = r->dims[2];
    if (sl >= 0) {
        const IrTensor *s = &g->t[sl];
        int ok = s->data && ir_numel(s) == w->B;
        for (int64_t b = 0; ok && b < w->B; b++) ok = ir_get_i(s, b) == w->S;
        if (!ok) {
            char msg[160];
            snprintf(msg, sizeof msg, "%lld for every batch entry (the chip unrolls a static length)", (long long)w->S);
            return fail(w, "sequence_lens must be a constant equal to the sequence length ", msg);
        }
    }
    for (int o = 0; o < 3; o++) {
        int t = n->nout > o ? n->out[o] : -1;
        if (t >= 0 && !w->base[0]) snprintf(w->base, sizeof w->base, "%s", g->t[t].name);
    }
    return 0;
}

static int rewrite_one(IrGraph *g, int node, int kind, AtlErr *e)
{
    Rw w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.e = e;
    w.kind = kind;
    if (plan(g, node, &w)) return -1;
    const IrNode *n = &g->nodes[node];
    int y = n->out[0], yh = n->nout > 1 ? n->out[1] : -1, yc = n->nout > 2 ? n->out[2] : -1;
    g->nodes[node].dead = 1;
    if (!w.base[0]) return 0; /* no output is wanted */
    int64_t S = w.S, D = w.ndir, B = w.B, H = w.H;
    int *ys = calloc((size_t)(S * D) + 1, sizeof *ys), *xs = calloc((size_t)(4 * S) + 1, sizeof *xs), finals_h[2], finals_c[2];
    if (!ys || !xs) {
        free(ys);
        free(xs);
        return atl_fail(e, "out of memory");
    }
    int rc = -1;
    for (int d = 0; d < w.ndir; d++) {
        Dir dr;
        w.d = d;
        for (int k = 0; k < 4; k++) dr.xs[k] = xs + k * S;
        if (direction_setup(&w, &dr)) goto done;
        int rev = w.reverse || d == 1;
        for (int64_t s = 0; s < S; s++) {
            w.t = rev ? S - 1 - s : s;
            w.d = d;
            if (step(&w, &dr)) goto done;
            ys[w.t * D + d] = dr.h;
        }
        finals_h[d] = dr.h;
        finals_c[d] = dr.c;
    }
    /* layout 0: Y [S, D, B, H], states [D, B, H]; layout 1: Y [B, S, D, H], states [B, D, H] */
    int64_t y4[4] = {S, D, B, H}, y4l[4] = {B, S, D, H}, s3[3] = {D, B, H}, s3l[3] = {B, D, H};
    int64_t row[2] = {B, H}, col[3] = {B, 1, H};
    const int64_t *pd = w.layout ? col : row;
    int pnd = w.layout ? 3 : 2, axis = w.layout ? 1 : 0;
    if (y >= 0 && assemble(&w, y, ys, (int)(S * D), pd, pnd, axis, w.layout ? y4l : y4, 4, "y")) goto done;
    if (yh >= 0 && assemble(&w, yh, finals_h, (int)D, pd, pnd, axis, w.layout ? s3l : s3, 3, "y_h")) goto done;
    if (yc >= 0 && kind == K_LSTM && assemble(&w, yc, finals_c, (int)D, pd, pnd, axis, w.layout ? s3l : s3, 3, "y_c")) goto done;
    rc = 0;
done:
    free(ys);
    free(xs);
    return rc;
}

static int rnn_kind(const IrNode *n)
{
    for (int k = 0; k < (int)(sizeof kinds / sizeof kinds[0]); k++)
        if (!n->dead && !strcmp(n->op, kinds[k].op)) return k;
    return -1;
}

int bk_rewrite_rnn_count(const IrGraph *g)
{
    int cnt = 0;
    for (int i = 0; i < g->nn; i++) cnt += rnn_kind(&g->nodes[i]) >= 0;
    return cnt;
}

int bk_rewrite_rnn(IrGraph *g, AtlErr *e)
{
    int nn = g->nn, any = 0;
    for (int i = 0; i < nn; i++) {
        int k = rnn_kind(&g->nodes[i]);
        if (k < 0) continue;
        if (rewrite_one(g, i, k, e)) return -1;
        any = 1;
    }
    /* constant weight slices become constants; activations fuse into their Gemm/Add */
    if (!any) return 0;
    return ir_toposort(g, e) || ir_infer_shapes(g, e) || pass_fold_constants(g, e) || pass_fuse_activations(g, e) ? -1 : 0;
}
