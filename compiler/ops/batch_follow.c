/* batch_follow.c - constants that an export fixed at its batch follow a new
 * batch (see ops/infer.h, ir_batch_follow).
 *
 * Most exports trace the model at batch 1 and write what they saw as
 * constants: the target of a Reshape that splits heads is [1,128,12,64],
 * a class token concatenated in front of the patches is [1,1,768]. Run at
 * batch 4 the graph then means something else (the Reshape would fold the
 * images into one another) or nothing (the Concat's shapes disagree). When
 * the caller says the new dimension 0 is a batch (`--batch`, or an
 * instance of a placement split), the images are independent by
 * definition, so a constant that held the exported batch where the batch
 * goes is made to hold the new one:
 *   - Reshape: the data's dimension 0 is the new batch and the constant
 *     target's is the exported one: the target's dimension 0 becomes the
 *     new batch. The export reshaped each image's elements alone (its
 *     dimension 0 was the batch on both sides), so each image's block of
 *     the data still becomes that image's block of the result;
 *   - Concat along an axis other than 0: a constant input whose dimension
 *     0 is the exported batch while a computed input's is the new one,
 *     every image of the constant alike (always at an exported batch of
 *     1): the constant is repeated (or cut) to the new batch; an input
 *     that an Expand of a constant image makes at the exported batch
 *     expands to the new one.
 * A constant is an initializer or a live Constant node's value (the
 * reference interpreter runs the graph before any folding).
 * Each such node reads a new constant named after the old one with
 * "@target<N>" or "@batch<N>" (the old one may have other readers; a second node that
 * reads the same constant shares the new one). Anything else that
 * depends on the exported batch still fails in inference, naming its
 * node. */
#include "compiler/ops/infer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of tensor t when it is a constant: its data, or the `value` of
 * the live Constant node that makes it (the interpreter runs those as
 * nodes); NULL otherwise. */
static const IrTensor *const_value(const IrGraph *g, int t)
{
    if (t < 0) return NULL;
    const IrTensor *x = &g->t[t];
    if (x->data) return x;
    int p = x->producer;
    if (p < 0 || p >= g->nn || g->nodes[p].dead || strcmp(g->nodes[p].op, "Constant")) return NULL;
    const IrAttr *v = ir_attr(&g->nodes[p], "value");
    return v && v->t && v->t->data ? v->t : NULL;
}

/* Index of a constant made from input k of node i for the new batch: with
 * `images`, dimension 0 set to the new batch and every image a copy of
 * image 0; without, a copy whose element 0 is the new batch (a Reshape or
 * Expand target). Named NAME@batchN / NAME@targetN (.2, .3 ... past a
 * tensor of that name with other contents); one with the same contents is
 * shared. -1 on failure. */
static int follow_const(IrGraph *g, int i, int k, int images, AtlErr *e)
{
    int src = g->nodes[i].in[k];
    const IrTensor *old = const_value(g, src);
    int64_t dims[IR_MAXDIM];
    int ndim = old->ndim, dtype = old->dtype;
    memcpy(dims, old->dims, sizeof dims);
    size_t image = images ? ir_nbytes(old) / (size_t)old->dims[0] : ir_nbytes(old);
    int64_t copies = images ? g->batch_to : 1;
    if (images) dims[0] = g->batch_to;
    size_t bytes = image * (size_t)copies;
    IrTensor made = {.dtype = dtype, .ndim = ndim};
    memcpy(made.dims, dims, sizeof dims);
    made.data = malloc(bytes + 1);
    if (!made.data) return atl_fail(e, "out of memory");
    for (int64_t b = 0; b < copies; b++) memcpy((uint8_t *)made.data + (size_t)b * image, old->data, image);
    if (!images) ir_set_i(&made, 0, g->batch_to);
    char name[512];
    int t = -1;
    for (int u = 1; t < 0; u++) {
        char suf[32] = "";
        if (u > 1) snprintf(suf, sizeof suf, ".%d", u);
        snprintf(name, sizeof name, "%.440s@%s%lld%s", g->t[src].name, images ? "batch" : "target", (long long)g->batch_to, suf);
        int have = ir_find(g, name);
        if (have < 0) t = ir_add_const(g, name, dtype, ndim, dims, made.data, e);   /* may move g->t */
        else if (g->t[have].data && g->t[have].dtype == dtype && g->t[have].ndim == ndim &&
                 !memcmp(g->t[have].dims, dims, sizeof dims) && !memcmp(g->t[have].data, made.data, bytes))
            t = have;
        if (t < 0 && have < 0) break;   /* ir_add_const failed */
    }
    free(made.data);
    return t;
}

/* 1 when every image (dimension 0 slice) of constant t equals the first. */
static int images_alike(const IrTensor *t)
{
    size_t all = ir_nbytes(t), image = all / (size_t)t->dims[0];
    const uint8_t *p = t->data;
    for (size_t o = image; o < all; o += image)
        if (memcmp(p, p + o, image)) return 0;
    return 1;
}

/* 1 when tensor t is computed from a graph input (so its dimension 0 can
 * be the batch), 0 when only from constants (a channel scale reshaped to
 * [1,C,1,1] must not follow a batch of C), -1 when out of memory. */
int ir_from_inputs(const IrGraph *g, int t, AtlErr *e)
{
    int *stack = malloc(((size_t)g->nt + 1) * sizeof *stack);
    uint8_t *seen = calloc((size_t)g->nt + 1, 1);
    if (!stack || !seen) { free(stack); free(seen); return atl_fail(e, "out of memory"); }
    int n = 0, found = 0;
    stack[n++] = t;
    seen[t] = 1;
    while (n && !found) {
        const IrTensor *x = &g->t[stack[--n]];
        if (x->is_input) { found = 1; break; }
        if (x->data || x->producer < 0 || x->producer >= g->nn || g->nodes[x->producer].dead) continue;
        const IrNode *p = &g->nodes[x->producer];
        for (int k = 0; k < p->nin; k++)
            if (p->in[k] >= 0 && !seen[p->in[k]]) { seen[p->in[k]] = 1; stack[n++] = p->in[k]; }
    }
    free(stack);
    free(seen);
    return found;
}

/* Reshape: the target's dimension 0 is the exported batch, the data's
 * the new one, and the data comes from the inputs. */
static int follow_reshape(IrGraph *g, int i, AtlErr *e)
{
    const IrNode *n = &g->nodes[i];
    if (n->nin < 2 || n->in[0] < 0 || n->in[1] < 0) return 0;
    const IrTensor *x = &g->t[n->in[0]], *sh = const_value(g, n->in[1]);
    if (!sh || sh->ndim != 1 || ir_numel(sh) < 1 || x->ndim < 1 || x->dims[0] != g->batch_to) return 0;
    if (ir_get_i(sh, 0) != g->batch_from) return 0;
    int r = ir_from_inputs(g, n->in[0], e);
    if (r <= 0) return r;
    int t = follow_const(g, i, 1, 0, e);
    if (t < 0) return -1;
    g->nodes[i].in[1] = t;
    return 1;
}

static int any_use(const IrNode *n, int k) { (void)n; (void)k; return 1; }

/* A Concat input made by an Expand of a constant image (dimension 0 of 1)
 * to a constant shape holding the exported batch (a class token expanded
 * to the traced batch), read by that Concat only: the shape follows the
 * batch, and so does the Expand's output. 1 changed, 0 not, -1 error. */
static int follow_expand(IrGraph *g, int t, int rank, AtlErr *e)
{
    int p = g->t[t].producer;
    if (p < 0 || p >= g->nn || g->nodes[p].dead || strcmp(g->nodes[p].op, "Expand") || g->nodes[p].nin < 2) return 0;
    const IrTensor *x = const_value(g, g->nodes[p].in[0]), *sh = const_value(g, g->nodes[p].in[1]);
    if (!x || !sh || sh->ndim != 1 || ir_numel(sh) != rank || ir_get_i(sh, 0) != g->batch_from) return 0;
    if (x->ndim == rank && x->dims[0] != 1) return 0;
    if (g->t[t].is_output || ir_uses_where(g, t, any_use) != 1) return 0;
    int k = follow_const(g, p, 1, 0, e);
    if (k < 0) return -1;
    g->nodes[p].in[1] = k;
    g->t[t].dims[0] = g->batch_to;
    return 1;
}

/* Concat along another axis than 0: constant inputs at the exported batch
 * beside a computed input at the new one. */
static int follow_concat(IrGraph *g, int i, AtlErr *e)
{
    const IrNode *n = &g->nodes[i];
    int batched = 0, rank = -1;
    for (int k = 0; k < n->nin && !batched; k++) {
        const IrTensor *x = n->in[k] >= 0 ? &g->t[n->in[k]] : NULL;
        if (!x || const_value(g, n->in[k]) || x->ndim < 1 || x->dims[0] != g->batch_to) continue;
        int r = ir_from_inputs(g, n->in[k], e);
        if (r < 0) return -1;
        if (r) batched = 1, rank = x->ndim;
    }
    int64_t axis = ir_attr_int(n, "axis", 0);
    if (!batched || (axis < 0 ? axis + rank : axis) == 0) return 0;
    int changed = 0;
    for (int k = 0; k < n->nin; k++) {
        if (n->in[k] < 0) continue;
        const IrTensor *c = const_value(g, n->in[k]);
        if (!c) {
            const IrTensor *x = &g->t[n->in[k]];
            int r = x->ndim == rank && x->dims[0] == g->batch_from ? follow_expand(g, n->in[k], rank, e) : 0;
            if (r < 0) return -1;
            changed |= r;
            continue;
        }
        if (c->ndim != rank || c->dims[0] != g->batch_from || c->dims[0] < 1 || !images_alike(c)) continue;
        int t = follow_const(g, i, k, 1, e);
        if (t < 0) return -1;
        g->nodes[i].in[k] = t;
        changed = 1;
    }
    return changed;
}

static const struct {
    const char *op;
    int (*follow)(IrGraph *g, int i, AtlErr *e);   /* 1 changed, 0 not, -1 error */
} followers[] = {
    {"Reshape", follow_reshape},
    {"Concat", follow_concat},
};

int ir_batch_follow(IrGraph *g, int node, AtlErr *e)
{
    if (!g->batch_follow || g->batch_from == g->batch_to || g->batch_from < 1 || g->batch_to < 1) return 0;
    for (size_t f = 0; f < sizeof followers / sizeof followers[0]; f++) {
        if (strcmp(g->nodes[node].op, followers[f].op)) continue;
        int r = followers[f].follow(g, node, e);
        if (r < 0) return -1;
        if (r && !g->batch_followed++)
            snprintf(g->batch_followed_first, sizeof g->batch_followed_first, "%s", g->nodes[node].name ? g->nodes[node].name : "");
    }
    return 0;
}
