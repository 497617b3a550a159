/* clone.c - a deep copy of a graph (tensors with their data, nodes with
 * their attributes, graph inputs/outputs, marks such as is_view and fused
 * activations).
 *
 * Why: the backend rewrites some ops into others before lowering
 * (bk_rewrite.c) and takes its graph as const; it rewrites a private copy
 * so the caller's graph, which the interpreter may still run, is unchanged.
 * Tensor indices and node indices of the copy equal the source's. */
#include <stdlib.h>
#include <string.h>
#include "compiler/ir/ir.h"

static int copy_array(void **dst, const void *src, size_t bytes)
{
    *dst = NULL;
    if (!src || !bytes) return 0;
    *dst = malloc(bytes);
    if (!*dst) return -1;
    memcpy(*dst, src, bytes);
    return 0;
}

static int copy_tensor_body(IrTensor *d, const IrTensor *s, AtlErr *e)
{
    d->dtype = s->dtype;
    d->ndim = s->ndim;
    memcpy(d->dims, s->dims, sizeof d->dims);
    d->producer = s->producer;
    d->is_input = s->is_input;
    d->is_output = s->is_output;
    d->is_view = s->is_view;
    if (s->data && copy_array(&d->data, s->data, ir_nbytes(s) ? ir_nbytes(s) : 1))
        return atl_fail(e, "out of memory copying tensor '%s'", s->name);
    return 0;
}

static int copy_attr(IrAttr *d, const IrAttr *s, AtlErr *e)
{
    d->f = s->f;
    d->i = s->i;
    d->n = s->n;
    int bad = (s->s && !(d->s = ir_strdup(s->s))) ||
              copy_array((void **)&d->floats, s->floats, (size_t)s->n * sizeof *s->floats) ||
              copy_array((void **)&d->ints, s->ints, (size_t)s->n * sizeof *s->ints);
    if (!bad && s->t) {
        d->t = calloc(1, sizeof *d->t);
        bad = !d->t || (s->t->name && !(d->t->name = ir_strdup(s->t->name)));
        if (!bad && copy_tensor_body(d->t, s->t, e)) return -1;
    }
    return bad ? atl_fail(e, "out of memory copying attribute '%s'", s->name) : 0;
}

static int copy_node(IrGraph *dst, const IrNode *s, AtlErr *e)
{
    int k = ir_add_node(dst, s->op, s->name, e);
    if (k < 0) return -1;
    IrNode *d = &dst->nodes[k];
    free(d->domain);
    d->domain = ir_strdup(s->domain ? s->domain : "");
    if (!d->domain) return atl_fail(e, "out of memory copying node '%s'", s->name);
    d->dead = s->dead;
    memcpy(d->act, s->act, sizeof d->act);
    d->act_alpha = s->act_alpha;
    d->act_beta = s->act_beta;
    for (int i = 0; i < s->nin; i++) if (ir_node_add_input(dst, k, s->in[i], e)) return -1;
    for (int i = 0; i < s->nout; i++) if (ir_node_add_output(dst, k, s->out[i], e)) return -1;
    for (int i = 0; i < s->nattrs; i++) {
        IrAttr *a = ir_node_add_attr(dst, k, s->attrs[i].name, s->attrs[i].type, e);
        if (!a || copy_attr(a, &s->attrs[i], e)) return -1;
    }
    return 0;
}

int ir_clone(const IrGraph *src, IrGraph *dst, AtlErr *e)
{
    ir_init(dst);
    int rc = -1;
    dst->opset = src->opset;
    if (src->name && !(dst->name = ir_strdup(src->name))) { atl_fail(e, "out of memory copying the graph"); goto done; }
    for (int i = 0; i < src->nt; i++) {
        int k = ir_tensor(dst, src->t[i].name, e);
        if (k < 0) goto done;
        if (k != i) { atl_fail(e, "tensor name '%s' is used twice", src->t[i].name); goto done; }
        if (copy_tensor_body(&dst->t[k], &src->t[i], e)) goto done;
    }
    for (int i = 0; i < src->nn; i++) if (copy_node(dst, &src->nodes[i], e)) goto done;
    if (copy_array((void **)&dst->inputs, src->inputs, (size_t)src->nin * sizeof *src->inputs) ||
        copy_array((void **)&dst->outputs, src->outputs, (size_t)src->nout * sizeof *src->outputs)) {
        atl_fail(e, "out of memory copying the graph");
        goto done;
    }
    dst->nin = src->nin;
    dst->nout = src->nout;
    rc = 0;
done:
    if (rc) ir_free(dst);
    return rc;
}
