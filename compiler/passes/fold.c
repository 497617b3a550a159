/* fold.c - constant folding with shape propagation.
 *
 * Reads: nodes in topological order, inferred shapes, constant data.
 * Does: walks the nodes once; a node whose present inputs are all constants
 *   (or a Shape, Size or EyeLike node whose input shape is fully known) is
 *   evaluated with the
 *   op table's kernel, its outputs become constants and the node is marked
 *   dead. Every other node is re-inferred, so shapes that became known
 *   through folding flow forward in the same walk.
 * Guarantees: results unchanged; no live node has only constant inputs
 *   (except where the result would exceed FOLD_MAX_ELEMS elements);
 *   PyTorch's Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains
 *   collapse into a Reshape with a constant shape once input shapes are
 *   known, so the Reshape's output shape is static.
 * Why: later passes and the backend need static shapes and must not spend
 *   device time on computations known at compile time. */
#include "compiler/passes/passes.h"
#include "compiler/ops/infer.h"
#include "compiler/ops/ops.h"
#include <stdlib.h>
#include <string.h>

#define FOLD_MAX_ELEMS ((int64_t)1 << 24)

/* Shape, Size and EyeLike read only their input's dims (and dtype) */
static int shape_only(const IrNode *n)
{
    return !strcmp(n->op, "Shape") || !strcmp(n->op, "Size") || !strcmp(n->op, "EyeLike");
}

static int foldable(const IrGraph *g, const IrNode *n)
{
    if (shape_only(n)) {
        int t = n->in[0];
        return t >= 0 && ir_shape_known(&g->t[t]);
    }
    if (!strcmp(n->op, "Dropout") && n->nin > 2) return 0;
    for (int j = 0; j < n->nin; j++)
        if (n->in[j] >= 0 && !g->t[n->in[j]].data) return 0;
    return 1;
}

int pass_fold_constants(IrGraph *g, AtlErr *e)
{
    IrNodeIo io;
    if (ir_node_io_alloc(g, &io, e)) return -1;
    IrTensor **in = io.in, **out = io.out;
    IrTensor shape_in;
    int rc = -1;
    for (int i = 0; i < g->nn; i++) {
        IrNode *n = &g->nodes[i];
        if (n->dead) continue;
        if (ir_batch_follow(g, i, e)) goto done;   /* constants this folding made known may hold the exported batch */
        ir_node_io_bind(g, n, &io);
        int fold = foldable(g, n);
        if (fold && shape_only(n)) {
            /* these need only the input's dims: give a dummy data pointer */
            shape_in = g->t[n->in[0]];
            shape_in.data = (void *)1;
            in[0] = &shape_in;
        }
        if (ir_node_infer(g, n, in, out, e)) goto done;
        for (int j = 0; j < n->nout && fold; j++)
            if (out[j] && (!ir_shape_known(out[j]) || ir_numel(out[j]) > FOLD_MAX_ELEMS)) fold = 0;
        if (!fold) {
            for (int j = 0; j < n->nout; j++) {
                if (!out[j]) continue;
                IrTensor *t = &g->t[n->out[j]];
                t->dtype = out[j]->dtype;
                if (out[j]->ndim >= 0) { t->ndim = out[j]->ndim; memcpy(t->dims, out[j]->dims, sizeof t->dims); }
            }
            continue;
        }
        int ok = 1;
        for (int j = 0; j < n->nout && ok; j++)
            if (out[j] && ir_alloc_data(out[j], e)) ok = 0;
        if (ok) {
            const IrOpDef *d = ir_op_find(n->op, g->opset);
            IrOpCtx c = {n, g->opset, in, n->nin, out, n->nout, e};
            if (d->eval(&c)) { atl_err_prefix(e, "constant folding node '%s' (%s)", n->name, n->op); ok = 0; }
        }
        if (!ok) {
            for (int j = 0; j < n->nout; j++) if (out[j]) { free(out[j]->data); out[j]->data = NULL; }
            goto done;
        }
        for (int j = 0; j < n->nout; j++) {
            if (!out[j]) continue;
            IrTensor *t = &g->t[n->out[j]];
            free(t->data);
            t->data = out[j]->data;
            t->dtype = out[j]->dtype;
            t->ndim = out[j]->ndim;
            memcpy(t->dims, out[j]->dims, sizeof t->dims);
            t->producer = -1;
        }
        n->dead = 1;
    }
    rc = 0;
done:
    ir_node_io_free(&io);
    return rc;
}
