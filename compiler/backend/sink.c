/* sink.c - a split stage's shortcut convolutions run just before the
 * convolution whose residual they are.
 *
 * Layers run in the graph's node order, and placement packs the
 * activations by their lives in that order. A ResNet block with a
 * downsample comes from ONNX as conv1, downsample, conv2, conv3 (+ the
 * residual Add absorbed into conv3's tail), so the downsample's output,
 * the largest tensor of the block, is alive while conv2 reads conv1's
 * output and writes its own: in fp32 at one image a cluster, layer1.0
 * needs its input, conv1's output and the downsample's (4.8 MB) beside
 * 4 MiB of SRAM, and layer2.0 its input with conv1's output and the
 * downsample's (6.4 MB). Run just before conv3, the downsample's output
 * lives only from there, and what spills is smaller or read fewer times:
 * layer1.0 spills conv2's output (read once by a 1x1 convolution)
 * instead of conv1's (read by the 3x3 conv2, whose tiles re-read it),
 * layer2.0 conv1's and conv2's outputs (1.6 + 0.4 MB) instead of conv1's
 * and the downsample's (1.6 + 1.6 MB).
 *
 * Reads: a graph and the context of a stage built from it (its residual
 *   tails, BkCtx.tail, and absorbed nodes, BkCtx.skip).
 * Does: finds each convolution P with a tail Add whose other input q is
 *   made by a convolution D before P - 1, read by that Add alone and not
 *   a graph output; moves D to just before P (the nodes between move up
 *   one). The tail stays P's (bk_match_patterns takes the later
 *   convolution, and q still exists when P runs). int8 graphs (a
 *   quantised ResNet's Int8Conv and Int8Add nodes): the Int8Add is a
 *   layer of its own, P the Int8Conv making its other input, and the
 *   downsample D comes first in the block (before conv1, reading the
 *   same input), so a strided D is moved and made to read the subsampled
 *   copy in one rewrite (compile.c, sink_stage).
 * Guarantees: the order stays topological (only the Add reads D's
 *   output, and it comes after P); the graph computes the same values.
 *   The driver (compile.c, sink_stage) builds the stage with each move,
 *   one at a time, and keeps a move only when the cost model prices the
 *   stage lower with it (layer2.0's prices higher: its input and the
 *   downsample's output still do not fit together, and conv2 then reads
 *   conv1's output from DRAM with no room left for a copy).
 * Also: a shortcut D whose input x an earlier pointwise convolution f
 *   reads (and nothing else) may instead run first, just before f, f's
 *   output over x's dying bytes (bk_hoist_apply): in layer1.0 only two
 *   tensors are then ever live beside each other, x and conv1's output
 *   sharing bytes (docs/backend.md, "Shortcuts run late"). */
#include <stdio.h>
#include <string.h>
#include "compiler/backend/sink.h"
#include "compiler/ir/ir.h"
#include "compiler/ops/infer.h"
#include "compiler/alloc/alloc.h"

/* The nodes that read tensor t (dead ones aside). */
static int readers(const IrGraph *g, int t)
{
    int n = 0;
    for (int i = 0; i < g->nn; i++) {
        if (g->nodes[i].dead) continue;
        for (int k = 0; k < g->nodes[i].nin; k++) n += g->nodes[i].in[k] == t;
    }
    return n;
}

/* 1 when node k is a convolution (float, or int8: Int8Conv). */
static int is_conv(const IrGraph *g, int k)
{
    return !strcmp(g->nodes[k].op, "Conv") || !strcmp(g->nodes[k].op, "Int8Conv");
}

/* The shortcut of residual Add a (its input other than tensor `main`)
 * when a convolution before node k - 1 makes it and a alone reads it:
 * that convolution's node, else -1 (before node k - gap + 1). */
static int shortcut_of(const IrGraph *g, const BkCtx *c, const IrNode *a, int main, int k, int gap)
{
    if (a->nin != 2 || main < 0) return -1;
    int q = a->in[0] == main ? a->in[1] : a->in[0];
    if (q < 0 || g->t[q].data || g->t[q].is_output || g->t[q].is_input) return -1;
    int s = g->t[q].producer;
    if (s < 0 || s > k - gap || c->skip[s] || !is_conv(g, s) || g->nodes[s].nout != 1) return -1;
    return readers(g, q) == 1 ? s : -1;
}

static int find_shortcuts(const IrGraph *g, const BkCtx *c, int *d, int *p, int max, int gap)
{
    int n = 0;
    for (int k = 0; k < g->nn && n < max; k++) {
        if (c->skip[k] || g->nodes[k].dead) continue;
        const IrNode *nd = &g->nodes[k];
        int s = -1, at = k;
        if (c->tail[k] >= 0 && nd->nout >= 1) s = shortcut_of(g, c, &g->nodes[c->tail[k]], nd->out[0], k, gap);
        else if (!strcmp(nd->op, "Int8Add") && nd->nin == 2) {
            /* int8: the Add is a layer of its own after the convolution
             * making its other input (no Int8Conv absorbs it as a tail) */
            for (int i = 0; i < 2 && s < 0; i++) {
                int m = nd->in[i], pm = m >= 0 ? g->t[m].producer : -1;
                if (pm < 0 || pm >= k || c->skip[pm] || strcmp(g->nodes[pm].op, "Int8Conv")) continue;
                if ((s = shortcut_of(g, c, nd, m, pm, gap)) >= 0) at = pm;
            }
        }
        if (s < 0 || (n && s < p[n - 1])) continue;
        d[n] = s;
        p[n++] = at;
    }
    return n;
}

int bk_sink_find(const IrGraph *g, const BkCtx *c, int *d, int *p, int max)
{
    return find_shortcuts(g, c, d, p, max, 2);
}

int bk_shortcut_find(const IrGraph *g, const BkCtx *c, int *d, int *p, int max)
{
    return find_shortcuts(g, c, d, p, max, 1);
}

void bk_sink_move(IrGraph *g, int d, int p)
{
    IrNode keep = g->nodes[d];
    memmove(&g->nodes[d], &g->nodes[d + 1], (size_t)(p - 1 - d) * sizeof keep);
    g->nodes[p - 1] = keep;
    ir_compact(g);   /* the producers again */
}

int bk_hoist_at(const IrGraph *g, const BkCtx *c, int d)
{
    const IrNode *nd = &g->nodes[d];
    if (nd->dead || nd->nin < 1 || nd->in[0] < 0) return -1;
    int rx = bk_tensor_root(c, nd->in[0]), f = -1, later = 0;
    for (int i = 0; i < g->nn && !later; i++) {
        const IrNode *a = &g->nodes[i];
        for (int q = 0; i != d && !a->dead && !c->skip[i] && q < a->nin; q++)   /* absorbed nodes read nothing */
            if (a->in[q] >= 0 && bk_tensor_root(c, a->in[q]) == rx) {
                if (f < 0) f = i;
                else later = 1;   /* x read by two nodes other than d */
            }
    }
    if (f < 0 || f > d || later || c->skip[f] || c->tail[f] >= 0 || !bk_overlay_shape_ok(g, f)) return -1;
    for (int q = 0; q < nd->nin; q++)   /* each input of d made before f: the order stays topological */
        if (nd->in[q] >= 0 && g->t[nd->in[q]].producer >= f) return -1;
    const IrTensor *x = &g->t[g->nodes[f].in[0]], *y = &g->t[g->nodes[f].out[0]];
    int ry = bk_tensor_root(c, g->nodes[f].out[0]);
    if (bk_tensor_root(c, g->nodes[f].in[0]) != rx || x->is_input || x->is_output || g->t[rx].is_input || g->t[rx].is_output) return -1;
    return y->is_output || g->t[ry].is_output ? -1 : f;
}

int bk_hoist_apply(IrGraph *g, const BkCtx *c, int d, AtlErr *e)
{
    int f = bk_hoist_at(g, c, d);
    if (f < 0) return 0;
    if (ir_set_attr_int(g, f, BK_OVERLAY_ATTR, 1, e)) return -1;
    IrNode keep = g->nodes[d];
    memmove(&g->nodes[f + 1], &g->nodes[f], (size_t)(d - f) * sizeof keep);
    g->nodes[f] = keep;
    ir_compact(g);   /* the producers again */
    return 1;
}

/* 1 when attribute `name` of n is absent or all its values are v. */
static int attr_all(const IrNode *n, const char *name, int64_t v)
{
    const IrAttr *a = ir_attr(n, name);
    for (int i = 0; a && i < a->n; i++)
        if (a->ints[i] != v) return 0;
    return 1;
}

int bk_subsample_ok(const IrGraph *g, int k)
{
    const IrNode *nd = &g->nodes[k];
    if (nd->dead || !is_conv(g, k) || nd->nin < 2 || nd->in[0] < 0 || nd->in[1] < 0) return 0;
    const IrTensor *x = &g->t[nd->in[0]], *w = &g->t[nd->in[1]];
    const IrAttr *s = ir_attr(nd, "strides");
    if (x->data || x->ndim != 4 || w->ndim != 4 || w->dims[2] != 1 || w->dims[3] != 1 || !s || s->n != 2) return 0;
    if ((s->ints[0] < 2 && s->ints[1] < 2) || s->ints[0] < 1 || s->ints[1] < 1) return 0;
    if (!attr_all(nd, "pads", 0) || !attr_all(nd, "dilations", 1) || ir_attr_int(nd, "group", 1) != 1) return 0;
    return !ir_attr(nd, "auto_pad") || !strcmp(ir_attr(nd, "auto_pad")->s ? ir_attr(nd, "auto_pad")->s : "", "NOTSET");
}

int bk_subsample_find(const IrGraph *g, const BkCtx *c, int *d, int max)
{
    int n = 0;
    for (int k = 0; k < g->nn && n < max; k++) {
        const IrNode *nd = &g->nodes[k];
        if (c->skip[k] || !bk_subsample_ok(g, k)) continue;
        const IrTensor *x = &g->t[nd->in[0]];
        /* x read before k, and not after it */
        int before = 0, after = 0;
        for (int i = 0; i < g->nn; i++) {
            if (g->nodes[i].dead || i == k) continue;
            for (int q = 0; q < g->nodes[i].nin; q++)
                if (g->nodes[i].in[q] == nd->in[0]) { before += i < k; after += i > k; }
        }
        if (before && !after && !x->is_output) d[n++] = k;
    }
    return n;
}

int bk_subsample_apply(IrGraph *g, int d, AtlErr *e)
{
    IrNode *nd = &g->nodes[d];
    int x = nd->in[0], first = -1;
    for (int i = 0; i < d && first < 0; i++)
        for (int q = 0; q < g->nodes[i].nin; q++)
            if (!g->nodes[i].dead && g->nodes[i].in[q] == x) first = i;
    const IrAttr *s = ir_attr(nd, "strides");
    if (first < 0 || !s || s->n != 2 || !g->t[x].name) return atl_fail(e, "internal: no strided 1x1 convolution at node %d", d);
    int64_t two = 2, starts[2] = {0, 0}, ends[2] = {g->t[x].dims[2], g->t[x].dims[3]}, axes[2] = {2, 3};
    int64_t steps[2] = {s->ints[0], s->ints[1]}, ones[2] = {1, 1};
    char name[512];
    const char *const part[4] = {"starts", "ends", "axes", "steps"};
    const int64_t *vals[4] = {starts, ends, axes, steps};
    int in[4];
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "%s/subsample_%s", g->t[x].name, part[k]);
        if ((in[k] = ir_add_const(g, name, IR_I64, 1, &two, vals[k], e)) < 0) return -1;
    }
    snprintf(name, sizeof name, "%s/subsample", g->t[x].name);
    if (ir_find(g, name) >= 0) return atl_fail(e, "internal: '%s' is subsampled twice", g->t[x].name);
    int t = ir_tensor(g, name, e);
    if (t < 0) return -1;
    int node = ir_add_node(g, "Slice", name, e);
    if (node < 0 || ir_node_add_input(g, node, x, e)) return -1;
    for (int k = 0; k < 4; k++)
        if (ir_node_add_input(g, node, in[k], e)) return -1;
    if (ir_node_add_output(g, node, t, e)) return -1;
    for (int k = 0; k < g->nodes[d].nattrs; k++)   /* its strides 1 (in place: the attribute is found by name) */
        if (!strcmp(g->nodes[d].attrs[k].name, "strides")) memcpy(g->nodes[d].attrs[k].ints, ones, sizeof ones);
    g->nodes[d].in[0] = t;
    /* the Slice (last) moves to just before x's first reader, the rest down one */
    IrNode copy = g->nodes[node];
    memmove(&g->nodes[first + 1], &g->nodes[first], (size_t)(node - first) * sizeof copy);
    g->nodes[first] = copy;
    ir_compact(g);
    return ir_infer_shapes(g, e) ? -1 : 0;
}

int bk_overlay_mark(IrGraph *g, const BkCtx *c, AtlErr *e)
{
    int n = 0;
    for (int k = 0; k < g->nn; k++) {
        if (c->skip[k] || c->tail[k] >= 0 || !bk_overlay_shape_ok(g, k)) continue;
        const IrTensor *x = &g->t[g->nodes[k].in[0]], *y = &g->t[g->nodes[k].out[0]];
        int rx = bk_tensor_root(c, g->nodes[k].in[0]), ry = bk_tensor_root(c, g->nodes[k].out[0]), later = 0;
        if (x->is_input || x->is_output || g->t[rx].is_input || g->t[rx].is_output) continue;
        if (y->is_output || g->t[ry].is_output) continue;   /* in the io region */
        for (int i = k + 1; i < g->nn && !later; i++) {
            const IrNode *a = &g->nodes[i];
            for (int q = 0; !a->dead && q < a->nin; q++) later |= a->in[q] >= 0 && bk_tensor_root(c, a->in[q]) == rx;
        }
        if (later) continue;
        if (ir_set_attr_int(g, k, BK_OVERLAY_ATTR, 1, e)) return -1;
        n++;
    }
    return n;
}
