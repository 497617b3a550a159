/* split.c - placement split's graph: one instance of the batch.
 *
 * Placement split (docs/backend.md, "Placement over clusters") runs a
 * batch of B images as B/m instances of m images, each whole on one
 * cluster. The backend then compiles the graph at batch m and the emitter
 * moves each instance's io addresses to its images. That is only the same
 * computation when no op mixes images, i.e. when the graph is separable
 * along dimension 0:
 *   - every non-constant tensor has one dimension, its batch axis, scaled
 *     by B/m between the batch-B graph and the batch-m one, the others
 *     equal; for the graph's inputs and outputs that is dimension 0 (so an
 *     instance's part of them is one contiguous block, since DRAM tensors
 *     are row-major in ONNX order). Inside the graph the batch may move
 *     (a Transpose of [B,N,3,H,D] to [3,B,H,N,D] in attention): an
 *     instance's activations are its own, whatever their layout;
 *   - no op works along the batch axis: an axis / axes attribute or
 *     constant axes input naming it (with the ONNX defaults when absent),
 *     a Slice, Pad or Tile changing it, BatchNormalization in training
 *     mode, MeanVarianceNormalization's default axes, recurrences (RNN,
 *     GRU, LSTM: dimension 0 is the sequence), and ops whose indices or
 *     equations can reach any axis (Einsum, GatherND, ScatterND, ...);
 *   - every op keeps the images apart where the batch axis moves (all of
 *     this only when there are several instances, m < B): a
 *     Transpose carries it where its perm says, a Gather (on another
 *     axis) where its indices' rank puts it, a Reshape only with the same
 *     elements before it on both sides; any other op has it at the same
 *     place (counted from the last axis) in every computed input and
 *     output.
 * The check is conservative: a graph it refuses runs with placement chip.
 * bk_split_graph clones the batch-B graph, sets its inputs' dimension 0 to
 * m, infers shapes and checks; the caller owns and frees the clone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/backend/split.h"
#include "compiler/ops/infer.h"

/* Ops whose indices or semantics may reach dimension 0 whatever their
 * attributes say. */
static const char *const mixing_ops[] = {
    "Einsum", "GatherND", "ScatterND", "ReverseSequence", "NonMaxSuppression", "Compress", "NonZero", "Unique",
    "Shape", "Size", "Loop", "If", "Scan", "CumSum", "Det", "SequenceConstruct", "ConcatFromSequence",
    "RNN", "GRU", "LSTM",          /* recurrences: dimension 0 is the sequence (layout 0) */
    "RoiAlign", "MaxRoiPool", NULL};  /* regions name their image */

/* Ops that may have the batch on an axis other than 0: they work on each
 * position alone (broadcasting), or along axes they name (node_mixes and
 * node_moves check those against the batch axis). */
static const char *const moved_ok[] = {
    "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less", "LessOrEqual", "Greater",
    "GreaterOrEqual", "And", "Or", "Xor", "Not", "Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf",
    "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Clip", "Cast", "Identity", "Gelu", "Elu", "Selu", "Softplus",
    "Floor", "Ceil", "Round", "Sign", "Dropout", "MatMul", "Softmax", "LogSoftmax", "LayerNormalization", "Concat",
    "Split", NULL};

/* Ops with an `axis` attribute that defaults to 0 when absent. */
static const char *const axis0_default[] = {"Gather", "GatherElements", "ScatterElements", "Scatter", "Split",
                                            "ArgMax", "ArgMin", "Concat", NULL};

static int in_list(const char *const *l, const char *op)
{
    for (int i = 0; l[i]; i++)
        if (!strcmp(l[i], op)) return 1;
    return 0;
}

static int64_t norm_axis(int64_t a, int rank) { return a < 0 ? a + rank : a; }

/* Constant int tensor input k of n, or NULL. */
static const IrTensor *const_in(const IrGraph *g, const IrNode *n, int k)
{
    if (k >= n->nin || n->in[k] < 0) return NULL;
    const IrTensor *t = &g->t[n->in[k]];
    return t->data ? t : NULL;
}

/* 1 when constant tensor t (axes) names axis a of a rank-`rank` tensor. */
static int names_axis(const IrTensor *t, int rank, int a)
{
    int64_t ne = ir_numel(t);
    for (int64_t i = 0; i < ne; i++)
        if (norm_axis(ir_get_i(t, i), rank) == a) return 1;
    return 0;
}

/* Why node n of g (the batch-m graph) works along its input's batch axis
 * bx (-1: input 0 holds no images), "" if it does not. */
static void node_mixes(const IrGraph *g, const IrNode *n, int bx, char *why, size_t cap)
{
    why[0] = 0;
    int rank = n->nin > 0 && n->in[0] >= 0 ? g->t[n->in[0]].ndim : 0;
    if (in_list(mixing_ops, n->op)) { snprintf(why, cap, "op %s may reach any axis", n->op); return; }
    if (bx < 0) return;                                 /* input 0 holds no images */
    const IrAttr *ax = ir_attr(n, "axis");
    if (ax && norm_axis(ax->i, rank) == bx) { snprintf(why, cap, "axis %d, the batch", bx); return; }
    if (!ax && bx == 0 && in_list(axis0_default, n->op)) { snprintf(why, cap, "axis 0 (the default), the batch"); return; }
    const IrAttr *axes = ir_attr(n, "axes");
    if (axes)
        for (int i = 0; i < axes->n; i++)
            if (norm_axis(axes->ints[i], rank) == bx) { snprintf(why, cap, "axes include %d, the batch", bx); return; }
    if (!strcmp(n->op, "Trilu") && rank - 2 <= bx) { snprintf(why, cap, "a matrix whose rows or columns are the images"); return; }
    /* MeanVarianceNormalization's axes default to [0, 2, 3] */
    if (!axes && !strcmp(n->op, "MeanVarianceNormalization") && (bx == 0 || bx == 2 || bx == 3)) {
        snprintf(why, cap, "axes include %d (the default), the batch", bx);
        return;
    }
    int reduce = !strncmp(n->op, "Reduce", 6);
    if (reduce && !axes) {
        const IrTensor *a = const_in(g, n, 1);
        int noop = (int)ir_attr_int(n, "noop_with_empty_axes", 0);
        if (a ? names_axis(a, rank, bx) : !noop) { snprintf(why, cap, "reduces axis %d, the batch", bx); return; }
    }
    if (!strcmp(n->op, "Slice")) {
        const IrTensor *a = const_in(g, n, 3);
        if (n->nin < 4 || n->in[3] < 0 || !a || names_axis(a, rank, bx)) { snprintf(why, cap, "may slice axis %d, the batch", bx); return; }
    }
    if (!strcmp(n->op, "Pad")) {
        const IrTensor *p = const_in(g, n, 1);
        if (n->nin > 3 && n->in[3] >= 0) { snprintf(why, cap, "pads given per axis"); return; }
        if (!p || ir_numel(p) != 2 * rank || ir_get_i(p, bx) != 0 || ir_get_i(p, rank + bx) != 0) {
            snprintf(why, cap, "may pad axis %d, the batch", bx);
            return;
        }
    }
    if (!strcmp(n->op, "Tile")) {
        const IrTensor *r = const_in(g, n, 1);
        if (!r || ir_numel(r) <= bx || ir_get_i(r, bx) != 1) { snprintf(why, cap, "may repeat axis %d, the batch", bx); return; }
    }
    if (!strcmp(n->op, "BatchNormalization") && ir_attr_int(n, "training_mode", 0)) { snprintf(why, cap, "batch statistics"); return; }
}

/* Each non-constant tensor's batch axis in bax[] (-1 for constants): the
 * one dimension where full's is inst's times ratio, the others equal; ""
 * when there is one for every tensor (dimension 0 for the graph's inputs
 * and outputs), else why not. At ratio 1 (one instance holds the batch,
 * so nothing need be kept apart) it is taken to be dimension 0. */
static void batch_axes(const IrGraph *full, const IrGraph *inst, int64_t ratio, int *bax, char *why, size_t cap)
{
    why[0] = 0;
    for (int t = 0; t < inst->nt; t++) {
        const IrTensor *b = &inst->t[t];
        bax[t] = -1;
        if (b->data || (b->producer < 0 && !b->is_input)) continue;
        if (t >= full->nt) { snprintf(why, cap, "tensor '%s' is new in the instance", b->name); return; }
        const IrTensor *a = &full->t[t];
        int ok = a->ndim == b->ndim && a->ndim >= 1, at = ratio == 1 ? 0 : -1;
        for (int d = 0; ok && d < a->ndim; d++) {
            ok = a->dims[d] >= 0 && b->dims[d] > 0;
            if (ok && a->dims[d] != b->dims[d]) {
                ok = at < 0 && a->dims[d] == b->dims[d] * ratio;
                at = d;
            }
        }
        if (ok && at != 0 && (b->is_input || b->is_output)) ok = 0;
        if (!ok || at < 0) {
            char sa[64], sb[64];
            snprintf(why, cap, "tensor '%s' is %s at the batch but %s per instance, not one dimension%s scaled", a->name,
                     ir_shape_str(a, sa, sizeof sa), ir_shape_str(b, sb, sizeof sb),
                     b->is_input || b->is_output ? " (0, an input or output)" : "");
            return;
        }
        bax[t] = at;
    }
}

/* Product of dims [0, k) of t. */
static int64_t dims_before(const IrTensor *t, int k)
{
    int64_t p = 1;
    for (int d = 0; d < k; d++) p *= t->dims[d];
    return p;
}

/* Why node n (of the batch-m graph, batch axes bax) does not keep its
 * images apart where the batch axis moves, "" if it does. */
static void node_moves(const IrGraph *g, const IrNode *n, const int *bax, char *why, size_t cap)
{
    why[0] = 0;
    int x = -1, y = n->nout > 0 ? n->out[0] : -1;
    for (int k = 0; k < n->nin && x < 0; k++)
        if (n->in[k] >= 0 && bax[n->in[k]] >= 0) x = n->in[k];
    if (x < 0 || y < 0 || bax[y] < 0) return;          /* constants only, or nothing batched out */
    int bi = bax[x], bo = bax[y], ri = g->t[x].ndim, ro = g->t[y].ndim;
    if (!strcmp(n->op, "Transpose")) {
        const IrAttr *p = ir_attr(n, "perm");
        int to = p && bo < p->n ? (int)p->ints[bo] : ri - 1 - bo;   /* no perm: reversed */
        if (to != bi) snprintf(why, cap, "moves the batch from axis %d to %d, not where its perm puts it", bi, bo);
        return;
    }
    if (!strcmp(n->op, "Gather") && n->nin > 1 && n->in[1] >= 0) {
        int64_t a = norm_axis(ir_attr_int(n, "axis", 0), n->in[0] >= 0 ? g->t[n->in[0]].ndim : 0);
        int ir = g->t[n->in[1]].ndim, want;
        if (n->in[0] == x) want = bi < a ? bi : bi - 1 + ir;    /* gathering from the images */
        else want = (int)a + bi;                               /* a constant table indexed by the images */
        if ((n->in[0] == x && bi == a) || bo != want)
            snprintf(why, cap, "gathers on axis %lld with the batch on axis %d", (long long)a, bi);
        return;
    }
    if (!strcmp(n->op, "Reshape") || !strcmp(n->op, "Flatten") || !strcmp(n->op, "Squeeze") || !strcmp(n->op, "Unsqueeze")) {
        /* the same elements before the batch axis on both sides: each image's
         * elements are then the same run of each such row on both sides */
        if (dims_before(&g->t[x], bi) != dims_before(&g->t[y], bo))
            snprintf(why, cap, "reshapes the batch axis %d into axis %d with other elements before it", bi, bo);
        return;
    }
    int all0 = 1;                                       /* the batch in front everywhere: node_mixes decides */
    for (int k = 0; k < n->nin; k++) all0 &= n->in[k] < 0 || bax[n->in[k]] <= 0;
    for (int k = 0; k < n->nout; k++) all0 &= n->out[k] < 0 || bax[n->out[k]] <= 0;
    if (all0) return;
    /* the batch off axis 0: only ops known to keep each position apart, or
     * to work along an axis they name (not the batch's) */
    if (!in_list(moved_ok, n->op)) { snprintf(why, cap, "%s with the batch on axis %d", n->op, bi); return; }
    if (!strcmp(n->op, "Softmax") || !strcmp(n->op, "LogSoftmax")) {
        /* before opset 13 they flatten from their axis (default 1) */
        int64_t a = norm_axis(ir_attr_int(n, "axis", g->opset < 13 ? 1 : -1), ri);
        if (g->opset < 13 ? bi >= a : bi == a) { snprintf(why, cap, "normalises over the batch on axis %d", bi); return; }
    }
    if (!strcmp(n->op, "LayerNormalization") && bi >= norm_axis(ir_attr_int(n, "axis", -1), ri)) {
        snprintf(why, cap, "normalises over the batch on axis %d", bi);
        return;
    }
    for (int k = 0; k < n->nin; k++)                    /* the rest: the same place counted from the end */
        if (n->in[k] >= 0 && bax[n->in[k]] >= 0 && g->t[n->in[k]].ndim - bax[n->in[k]] != ro - bo) {
            snprintf(why, cap, "input %d has the batch on axis %d, its output on axis %d", k, bax[n->in[k]], bo);
            return;
        }
    for (int k = 1; k < n->nout; k++)
        if (n->out[k] >= 0 && bax[n->out[k]] >= 0 && g->t[n->out[k]].ndim - bax[n->out[k]] != ro - bo) {
            snprintf(why, cap, "output %d has the batch on axis %d, output 0 on axis %d", k, bax[n->out[k]], bo);
            return;
        }
}

int bk_split_graph(const IrGraph *g, int m, IrGraph *inst, char *why, size_t cap, AtlErr *e)
{
    why[0] = 0;
    int64_t B = g->nin > 0 && g->t[g->inputs[0]].ndim > 0 ? g->t[g->inputs[0]].dims[0] : -1;
    if (B < 1 || m < 1 || B % m) { snprintf(why, cap, "the batch (%lld) is not a multiple of the micro-batch %d", (long long)B, m); return 1; }
    for (int k = 0; k < g->nin; k++)
        if (g->t[g->inputs[k]].ndim < 1 || g->t[g->inputs[k]].dims[0] != B) {
            snprintf(why, cap, "input '%s' does not have the batch as dimension 0", g->t[g->inputs[k]].name);
            return 1;
        }
    if (g->nin > 64) { snprintf(why, cap, "more than 64 inputs"); return 1; }
    if (ir_clone(g, inst, e)) return -1;
    IrInputShape sh[64];
    for (int k = 0; k < inst->nin; k++) {
        const IrTensor *x = &inst->t[inst->inputs[k]];
        memset(&sh[k], 0, sizeof sh[k]);
        snprintf(sh[k].name, sizeof sh[k].name, "%s", x->name);
        sh[k].ndim = x->ndim;
        memcpy(sh[k].dims, x->dims, sizeof x->dims);
        sh[k].dims[0] = m;
        sh[k].is_batch = 1;     /* an instance holds m of the batch's images: constants at B follow m */
    }
    AtlErr ie;
    memset(&ie, 0, sizeof ie);
    if (ir_apply_input_shapes(inst, sh, inst->nin, &ie) || ir_infer_shapes(inst, &ie)) {
        snprintf(why, cap, "the graph does not infer at batch %d: %s", m, ie.msg);
        ir_free(inst);
        return 1;
    }
    int *bax = malloc(((size_t)inst->nt + 1) * sizeof *bax);
    if (!bax) { ir_free(inst); return atl_fail(e, "out of memory"); }
    batch_axes(g, inst, B / m, bax, why, cap);
    /* one instance holds the whole batch (m = B): there are no images to keep apart */
    for (int i = 0; !why[0] && B > m && i < inst->nn; i++) {
        const IrNode *n = &inst->nodes[i];
        if (n->dead) continue;
        char r[112];
        int x = -1;
        for (int k = 0; k < n->nin && x < 0; k++)
            if (n->in[k] >= 0 && bax[n->in[k]] >= 0) x = n->in[k];
        /* the axis rules read input 0's axes: its batch axis, a batched input's of the
         * same rank, none for a constant table a Gather indexes, else 0 (conservative) */
        int in0 = n->nin > 0 && n->in[0] >= 0 ? n->in[0] : -1, bx = 0;
        if (x >= 0 && in0 >= 0 && !strcmp(n->op, "Gather") && bax[in0] < 0) bx = -1;
        else if (x >= 0 && in0 >= 0 && inst->t[x].ndim == inst->t[in0].ndim) bx = bax[x];
        node_mixes(inst, n, bx, r, sizeof r);
        if (!r[0]) node_moves(inst, n, bax, r, sizeof r);
        if (r[0]) snprintf(why, cap, "node '%s' (%s) works across images: %s", n->name ? n->name : "", n->op, r);
    }
    free(bax);
    if (why[0]) { ir_free(inst); return 1; }
    return 0;
}
