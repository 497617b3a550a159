/* infer.c - graph-wide shape inference and --input-shape handling (see
 * ops/infer.h). Each node's shapes come from its op's infer function in the op
 * table; this file only walks the graph and reconciles the results with
 * the shapes declared in the model. */
#include "compiler/ops/infer.h"
#include "compiler/ops/ops.h"
#include <stdlib.h>
#include <string.h>
#include <errno.h>

int ir_parse_input_shape(const char *spec, IrInputShape *s, AtlErr *e)
{
    memset(s, 0, sizeof *s);
    const char *eq = strrchr(spec, '=');
    if (!eq || eq == spec) return atl_fail(e, "--input-shape '%s': expected NAME=DIMS, e.g. input=1x3x224x224", spec);
    size_t nl = (size_t)(eq - spec);
    if (nl >= sizeof s->name) return atl_fail(e, "--input-shape '%s': name too long", spec);
    memcpy(s->name, spec, nl);
    const char *p = eq + 1;
    while (*p) {
        if (s->ndim == IR_MAXDIM) return atl_fail(e, "--input-shape '%s': more than %d dimensions", spec, IR_MAXDIM);
        if (*p < '0' || *p > '9') return atl_fail(e, "--input-shape '%s': '%s' is not a dimension (positive integers separated by 'x')", spec, p);
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || v <= 0 || v > ((long long)1 << 31))
            return atl_fail(e, "--input-shape '%s': dimension %d must be between 1 and 2^31", spec, s->ndim);
        s->dims[s->ndim++] = v;
        p = end;
        if (*p == 'x' || *p == ',') { p++; if (!*p) return atl_fail(e, "--input-shape '%s': trailing separator", spec); }
        else if (*p) return atl_fail(e, "--input-shape '%s': unexpected '%c' (use 'x' between dimensions)", spec, *p);
    }
    return 0;
}

int ir_apply_input_shapes(IrGraph *g, const IrInputShape *s, int n, AtlErr *e)
{
    int changed = 0;
    for (int i = 0; i < n; i++) {
        int t = ir_find(g, s[i].name);
        int ok = 0;
        for (int j = 0; j < g->nin; j++) if (g->inputs[j] == t) ok = 1;
        if (t < 0 || !ok) {
            char list[512] = "";
            size_t k = 0;
            for (int j = 0; j < g->nin && k < sizeof list - 1; j++)
                k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", j ? ", " : "", g->t[g->inputs[j]].name);
            return atl_fail(e, "--input-shape: '%s' is not a graph input (inputs: %s)", s[i].name, list);
        }
        IrTensor *x = &g->t[t];
        char a[128], b[128];
        IrTensor want = *x;
        want.ndim = s[i].ndim;
        memcpy(want.dims, s[i].dims, sizeof want.dims);
        if (x->ndim >= 0 && x->ndim != s[i].ndim)
            return atl_fail(e, "--input-shape: input '%s' has rank %d (%s), given %s", x->name, x->ndim,
                            ir_shape_str(x, a, sizeof a), ir_shape_str(&want, b, sizeof b));
        int differs = 0;
        for (int k = 0; k < s[i].ndim && x->ndim >= 0; k++)
            if (x->dims[k] >= 0 && x->dims[k] != s[i].dims[k]) differs = 1;
        if (differs) {
            if (!changed)
                snprintf(g->reshaped, sizeof g->reshaped, "input '%.100s' [%s] -> [%s]", x->name,
                         ir_shape_str(x, a, sizeof a), ir_shape_str(&want, b, sizeof b));
            if (x->dims[0] >= 0 && x->dims[0] != s[i].dims[0] && !g->batch_from) {
                g->batch_from = x->dims[0];
                g->batch_to = s[i].dims[0];
                g->batch_follow = s[i].is_batch;
            }
            changed = 1;
        }
        x->ndim = s[i].ndim;
        memcpy(x->dims, s[i].dims, sizeof x->dims);
    }
    /* the declared shapes of computed tensors describe the old inputs */
    for (int i = 0; changed && i < g->nn; i++)
        for (int k = 0; k < g->nodes[i].nout; k++) {
            int t = g->nodes[i].out[k];
            if (t >= 0 && !g->t[t].data) g->t[t].ndim = -1;
        }
    return 0;
}

int ir_reshape_hint(const IrGraph *g, AtlErr *e)
{
    if (!e || !g->reshaped[0] || strstr(e->msg, "the graph itself depends")) return -1;
    size_t k = strlen(e->msg);
    char batch[96] = "";
    if (g->batch_from && !g->batch_follow)
        snprintf(batch, sizeof batch, "; if dimension 0 is the batch, give it with --batch %lld", (long long)g->batch_to);
    if (k < sizeof e->msg)
        snprintf(e->msg + k, sizeof e->msg - k, " (the input shapes differ from the exported ones: %s; the graph itself "
                 "depends on the exported shape at this node, e.g. through a constant shape%s; export the model with "
                 "dynamic dimensions or compile it at the exported shape)", g->reshaped, batch);
    return -1;
}

/* After a batch change: a Reshape whose target is a constant still holding
 * the exported batch in front folds the new batch into it. */
static int reshape_keeps_old_batch(const IrGraph *g, const IrNode *n, IrTensor *const *in, AtlErr *e)
{
    if (!g->batch_from || strcmp(n->op, "Reshape") || n->nin < 2 || !in[0] || !in[1] || !in[1]->data) return 0;
    const IrTensor *sh = in[1];
    if (ir_numel(sh) < 1 || in[0]->ndim < 1 || in[0]->dims[0] != g->batch_to) return 0;
    if (ir_get_i(sh, 0) != g->batch_from) return 0;
    if (n->in[0] >= 0 && ir_from_inputs(g, n->in[0], e) == 0) return 0;   /* a constant reshaped: no image */
    char a[128];
    size_t k = 0;
    a[0] = 0;
    for (int64_t i = 0; i < ir_numel(sh) && k < sizeof a - 24; i++)
        k += (size_t)snprintf(a + k, sizeof a - k, "%s%lld", i ? "," : "", (long long)ir_get_i(sh, i));
    return atl_fail(e, "node '%s' (Reshape): its target shape [%s] is a constant that holds the exported batch %lld, so at "
                    "batch %lld it would fold the images into one another: the graph itself depends on the exported shape "
                    "here (%s); give the batch with --batch %lld (constants that hold the exported batch then follow it), "
                    "export the model with a dynamic batch (torch.onnx.export(..., dynamic_axes=...)) or compile it at the "
                    "exported shape", n->name, a, (long long)g->batch_from, (long long)g->batch_to, g->reshaped,
                    (long long)g->batch_to);
}

/* Merges an inferred shape into a declared one; fails on contradiction. */
static int merge_shape(const IrNode *n, IrTensor *decl, const IrTensor *inf, AtlErr *e)
{
    char a[128], b[128];
    if (decl->dtype && inf->dtype && decl->dtype != inf->dtype)
        return atl_fail(e, "node '%s' (%s): output '%s' is %s but the model declares %s", n->name, n->op, decl->name,
                        ir_dtype_name(inf->dtype), ir_dtype_name(decl->dtype));
    if (decl->ndim >= 0 && inf->ndim >= 0) {
        int bad = decl->ndim != inf->ndim;
        for (int k = 0; k < inf->ndim && !bad; k++)
            if (decl->dims[k] >= 0 && inf->dims[k] >= 0 && decl->dims[k] != inf->dims[k]) bad = 1;
        if (bad)
            return atl_fail(e, "node '%s' (%s): output '%s' has inferred shape %s but the model declares %s", n->name,
                            n->op, decl->name, ir_shape_str(inf, a, sizeof a), ir_shape_str(decl, b, sizeof b));
        for (int k = 0; k < inf->ndim; k++)
            if (inf->dims[k] >= 0) decl->dims[k] = inf->dims[k];
    } else if (inf->ndim >= 0) {
        decl->ndim = inf->ndim;
        memcpy(decl->dims, inf->dims, sizeof decl->dims);
    }
    if (inf->dtype) decl->dtype = inf->dtype;
    return 0;
}

int ir_node_io_alloc(const IrGraph *g, IrNodeIo *io, AtlErr *e)
{
    int maxio = 1;
    for (int i = 0; i < g->nn; i++) {
        if (g->nodes[i].nin > maxio) maxio = g->nodes[i].nin;
        if (g->nodes[i].nout > maxio) maxio = g->nodes[i].nout;
    }
    io->in = calloc((size_t)maxio, sizeof *io->in);
    io->out = calloc((size_t)maxio, sizeof *io->out);
    io->tmp = calloc((size_t)maxio, sizeof *io->tmp);
    if (io->in && io->out && io->tmp) return 0;
    ir_node_io_free(io);
    return atl_fail(e, "out of memory");
}

void ir_node_io_bind(const IrGraph *g, const IrNode *n, IrNodeIo *io)
{
    for (int j = 0; j < n->nin; j++) io->in[j] = n->in[j] >= 0 ? &g->t[n->in[j]] : NULL;
    for (int j = 0; j < n->nout; j++) {
        if (n->out[j] < 0) { io->out[j] = NULL; continue; }
        memset(&io->tmp[j], 0, sizeof io->tmp[j]);
        io->tmp[j].name = g->t[n->out[j]].name;
        io->tmp[j].ndim = -1;
        io->out[j] = &io->tmp[j];
    }
}

void ir_node_io_free(IrNodeIo *io)
{
    free(io->in); free(io->out); free(io->tmp);
    io->in = io->out = NULL;
    io->tmp = NULL;
}

int ir_infer_shapes(IrGraph *g, AtlErr *e)
{
    if (ir_check_supported(g, e)) return -1;
    IrNodeIo io;
    if (ir_node_io_alloc(g, &io, e)) return -1;
    IrTensor **in = io.in, **out = io.out;
    int rc = -1;
    for (int i = 0; i < g->nn; i++) {
        IrNode *n = &g->nodes[i];
        if (n->dead) continue;
        if (ir_batch_follow(g, i, e)) goto done;
        ir_node_io_bind(g, n, &io);
        for (int j = 0; j < n->nin; j++)
            if (in[j] && !ir_dtype_size(in[j]->dtype)) {
                atl_fail(e, "node '%s' (%s): input '%s' has %s type", n->name, n->op, in[j]->name,
                         in[j]->dtype ? ir_dtype_name(in[j]->dtype) : "an unknown or non-tensor");
                goto done;
            }
        if (ir_node_infer(g, n, in, out, e) || reshape_keeps_old_batch(g, n, in, e)) goto done;
        for (int j = 0; j < n->nout; j++)
            if (out[j] && merge_shape(n, &g->t[n->out[j]], out[j], e)) goto done;
    }
    rc = 0;
done:
    if (rc) ir_reshape_hint(g, e);
    ir_node_io_free(&io);
    return rc;
}
