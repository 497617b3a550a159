/* split.c - placement split's graph: one instance of the batch.
 *
 * Placement split (docs/backend.md, "Placement over clusters") runs a
 * batch of B images as B/m instances of m images, each whole on one
 * cluster. The backend then compiles the graph at batch m and the emitter
 * moves each instance's io addresses to its images. That is only the same
 * computation when no op mixes images, i.e. when the graph is separable
 * along dimension 0:
 *   - every non-constant tensor has dimension 0 scaled by B/m between the
 *     batch-B graph and the batch-m one, the other dimensions equal (so an
 *     instance's part of any tensor is one contiguous block, since DRAM
 *     tensors are row-major in ONNX order);
 *   - no op works along axis 0: an axis / axes attribute or constant axes
 *     input naming it (with the ONNX defaults when absent), a Transpose
 *     moving it, a Slice, Pad or Tile changing it, BatchNormalization in
 *     training mode, MeanVarianceNormalization's default axes, recurrences
 *     (RNN, GRU, LSTM: dimension 0 is the sequence), and ops whose indices
 *     or equations can reach any axis (Einsum, GatherND, ScatterND, ...).
 * The check is conservative: a graph it refuses runs with placement chip.
 * bk_split_graph clones the batch-B graph, sets its inputs' dimension 0 to
 * m, infers shapes and checks; the caller owns and frees the clone. */
#include <stdio.h>
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

/* 1 when constant tensor t (axes) names axis 0 of a rank-`rank` tensor. */
static int names_axis0(const IrTensor *t, int rank)
{
    int64_t ne = ir_numel(t);
    for (int64_t i = 0; i < ne; i++)
        if (norm_axis(ir_get_i(t, i), rank) == 0) return 1;
    return 0;
}

/* Why node n of g (the batch-m graph) works along dimension 0, "" if it does not. */
static void node_mixes(const IrGraph *g, const IrNode *n, char *why, size_t cap)
{
    why[0] = 0;
    int rank = n->nin > 0 && n->in[0] >= 0 ? g->t[n->in[0]].ndim : 0;
    if (in_list(mixing_ops, n->op)) { snprintf(why, cap, "op %s may reach any axis", n->op); return; }
    const IrAttr *ax = ir_attr(n, "axis");
    if (ax && norm_axis(ax->i, rank) == 0) { snprintf(why, cap, "axis 0"); return; }
    if (!ax && in_list(axis0_default, n->op)) { snprintf(why, cap, "axis 0 (the default)"); return; }
    const IrAttr *axes = ir_attr(n, "axes");
    if (axes)
        for (int i = 0; i < axes->n; i++)
            if (norm_axis(axes->ints[i], rank) == 0) { snprintf(why, cap, "axes include 0"); return; }
    if (!strcmp(n->op, "Trilu") && rank <= 2) { snprintf(why, cap, "a matrix whose rows are the images"); return; }
    /* MeanVarianceNormalization's axes default to [0, 2, 3] */
    if (!axes && !strcmp(n->op, "MeanVarianceNormalization")) { snprintf(why, cap, "axes include 0 (the default)"); return; }
    int reduce = !strncmp(n->op, "Reduce", 6);
    if (reduce && !axes) {
        const IrTensor *a = const_in(g, n, 1);
        int noop = (int)ir_attr_int(n, "noop_with_empty_axes", 0);
        if (a ? names_axis0(a, rank) : !noop) { snprintf(why, cap, "reduces axis 0"); return; }
    }
    if (!strcmp(n->op, "Transpose")) {
        const IrAttr *p = ir_attr(n, "perm");
        if (rank > 1 && (!p || p->n < 1 || p->ints[0] != 0)) { snprintf(why, cap, "moves axis 0"); return; }
    }
    if (!strcmp(n->op, "Slice")) {
        const IrTensor *a = const_in(g, n, 3);
        if (n->nin < 4 || n->in[3] < 0 || !a || names_axis0(a, rank)) { snprintf(why, cap, "may slice axis 0"); return; }
    }
    if (!strcmp(n->op, "Pad")) {
        const IrTensor *p = const_in(g, n, 1);
        if (n->nin > 3 && n->in[3] >= 0) { snprintf(why, cap, "pads given per axis"); return; }
        if (!p || ir_numel(p) != 2 * rank || ir_get_i(p, 0) != 0 || ir_get_i(p, rank) != 0) { snprintf(why, cap, "may pad axis 0"); return; }
    }
    if (!strcmp(n->op, "Tile")) {
        const IrTensor *r = const_in(g, n, 1);
        if (!r || ir_numel(r) < 1 || ir_get_i(r, 0) != 1) { snprintf(why, cap, "may repeat axis 0"); return; }
    }
    if (!strcmp(n->op, "BatchNormalization") && ir_attr_int(n, "training_mode", 0)) { snprintf(why, cap, "batch statistics"); return; }
}

/* "" when every non-constant tensor of inst is its counterpart in full with
 * dimension 0 divided by ratio; else why not. */
static void shapes_scale(const IrGraph *full, const IrGraph *inst, int64_t ratio, char *why, size_t cap)
{
    why[0] = 0;
    for (int t = 0; t < inst->nt && t < full->nt; t++) {
        const IrTensor *a = &full->t[t], *b = &inst->t[t];
        if (b->data || (b->producer < 0 && !b->is_input)) continue;
        int ok = a->ndim == b->ndim && a->ndim >= 1 && b->dims[0] > 0 && a->dims[0] == b->dims[0] * ratio;
        for (int d = 1; ok && d < a->ndim; d++) ok = a->dims[d] == b->dims[d] && a->dims[d] >= 0;
        if (!ok) {
            char sa[64], sb[64];
            snprintf(why, cap, "tensor '%s' is %s at the batch but %s per instance, not dimension 0 scaled", a->name,
                     ir_shape_str(a, sa, sizeof sa), ir_shape_str(b, sb, sizeof sb));
            return;
        }
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
    }
    AtlErr ie;
    memset(&ie, 0, sizeof ie);
    if (ir_apply_input_shapes(inst, sh, inst->nin, &ie) || ir_infer_shapes(inst, &ie)) {
        snprintf(why, cap, "the graph does not infer at batch %d: %s", m, ie.msg);
        ir_free(inst);
        return 1;
    }
    shapes_scale(g, inst, B / m, why, cap);
    for (int i = 0; !why[0] && i < inst->nn; i++) {
        const IrNode *n = &inst->nodes[i];
        if (n->dead) continue;
        char r[96];
        node_mixes(inst, n, r, sizeof r);
        if (r[0]) snprintf(why, cap, "node '%s' (%s) works across images: %s", n->name ? n->name : "", n->op, r);
    }
    if (why[0]) { ir_free(inst); return 1; }
    return 0;
}
