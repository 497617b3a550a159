/* interp.c - the reference interpreter (see interp/interp.h). Values live in an
 * array parallel to the graph's tensors; constants and caller inputs are
 * borrowed, node outputs owned and freed after their last use. Each node
 * runs its op's infer (which, with every input concrete, gives exact output
 * shapes) and then its eval. A graph with QDQ node units runs as its int8
 * operators (ops/qdq.h), the way the compiler runs it. */
#include "compiler/interp/interp.h"
#include "compiler/ops/ops.h"
#include "compiler/ops/qdq.h"
#include <stdlib.h>
#include <string.h>

void interp_free_outputs(IrTensor *outputs, int n)
{
    if (!outputs) return;
    for (int i = 0; i < n; i++) ir_tensor_free_contents(&outputs[i]);
    free(outputs);
}

static int check_input(const IrTensor *decl, const IrTensor *given, AtlErr *e)
{
    char a[128], b[128];
    if (decl->dtype && decl->dtype != given->dtype)
        return atl_fail(e, "input '%s': given %s, the model expects %s", decl->name, ir_dtype_name(given->dtype),
                        ir_dtype_name(decl->dtype));
    if (!ir_dtype_size(given->dtype)) return atl_fail(e, "input '%s': type %s is not supported", decl->name, ir_dtype_name(given->dtype));
    int bad = decl->ndim >= 0 && decl->ndim != given->ndim;
    for (int k = 0; !bad && decl->ndim >= 0 && k < decl->ndim; k++)
        if (decl->dims[k] >= 0 && decl->dims[k] != given->dims[k]) bad = 1;
    if (bad)
        return atl_fail(e, "input '%s': given shape %s, the model expects %s", decl->name, ir_shape_str(given, a, sizeof a),
                        ir_shape_str(decl, b, sizeof b));
    return 0;
}

int interp_run(const IrGraph *g, const IrTensor *inputs, int ninputs, IrTensor **outputs, AtlErr *e)
{
    return interp_run_observed(g, inputs, ninputs, outputs, NULL, NULL, e);
}

/* A QDQ graph runs as its int8 operators (ops/qdq.h): on a fused copy,
 * whose tensor indices are g's (new tensors come after them). */
static int run_fused(const IrGraph *g, const IrTensor *inputs, int ninputs, IrTensor **outputs, InterpObserver observe,
                     void *ctx, AtlErr *e)
{
    IrGraph f;
    if (ir_clone(g, &f, e)) return -1;
    int rc = qdq_fuse(&f, NULL, e) || ir_toposort(&f, e) ? -1
           : interp_run_observed(&f, inputs, ninputs, outputs, observe, ctx, e);
    ir_free(&f);
    return rc;
}

int interp_run_observed(const IrGraph *g, const IrTensor *inputs, int ninputs, IrTensor **outputs,
                        InterpObserver observe, void *ctx, AtlErr *e)
{
    *outputs = NULL;
    if (qdq_count_units(g) > 0) return run_fused(g, inputs, ninputs, outputs, observe, ctx, e);
    int nt = g->nt, rc = -1, maxio = 1;
    IrTensor *v = calloc((size_t)nt + 1, sizeof *v);
    char *owned = calloc((size_t)nt + 1, 1);
    int *uses = calloc((size_t)nt + 1, sizeof *uses);
    for (int i = 0; i < g->nn; i++) {
        if (g->nodes[i].nin > maxio) maxio = g->nodes[i].nin;
        if (g->nodes[i].nout > maxio) maxio = g->nodes[i].nout;
    }
    IrTensor **in = calloc((size_t)maxio, sizeof *in), **out = calloc((size_t)maxio, sizeof *out);
    IrTensor *res = calloc((size_t)g->nout + 1, sizeof *res);
    if (!v || !owned || !uses || !in || !out || !res) { atl_fail(e, "out of memory"); goto done; }
    for (int t = 0; t < nt; t++) {
        v[t] = g->t[t];
        if (!g->t[t].data) v[t].data = NULL;
    }
    for (int i = 0; i < g->nin; i++) {
        int t = g->inputs[i], found = 0;
        for (int j = 0; j < ninputs && !found; j++) {
            if (strcmp(inputs[j].name, g->t[t].name)) continue;
            if (check_input(&g->t[t], &inputs[j], e)) goto done;
            v[t].dtype = inputs[j].dtype;
            v[t].ndim = inputs[j].ndim;
            memcpy(v[t].dims, inputs[j].dims, sizeof v[t].dims);
            v[t].data = inputs[j].data;
            found = 1;
        }
        if (!found) { atl_fail(e, "graph input '%s' was not given", g->t[t].name); goto done; }
    }
    for (int i = 0; i < g->nn; i++)
        for (int j = 0; j < g->nodes[i].nin; j++)
            if (g->nodes[i].in[j] >= 0) uses[g->nodes[i].in[j]]++;
    for (int i = 0; i < g->nout; i++) uses[g->outputs[i]]++;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead) continue;
        for (int j = 0; j < n->nin; j++) {
            int t = n->in[j];
            in[j] = t >= 0 ? &v[t] : NULL;
            if (t >= 0 && !v[t].data) {
                atl_fail(e, "node '%s' (%s): input '%s' has no value (not produced before use)", n->name, n->op, g->t[t].name);
                goto done;
            }
        }
        for (int j = 0; j < n->nout; j++) {
            int t = n->out[j];
            out[j] = t >= 0 ? &v[t] : NULL;
            if (t >= 0) {
                if (owned[t]) { free(v[t].data); owned[t] = 0; }
                v[t].data = NULL;
                v[t].dtype = 0;
                v[t].ndim = -1;
            }
        }
        if (ir_node_infer(g, n, in, out, e)) goto done;
        for (int j = 0; j < n->nout; j++) {
            if (!out[j]) continue;
            if (!ir_shape_known(out[j])) {
                atl_fail(e, "node '%s' (%s): output '%s' shape could not be determined", n->name, n->op, out[j]->name);
                goto done;
            }
            if (ir_alloc_data(out[j], e)) { atl_err_prefix(e, "node '%s' (%s)", n->name, n->op); goto done; }
            owned[n->out[j]] = 1;
        }
        const IrOpDef *d = ir_op_find(n->op, g->opset);
        IrOpCtx c = {n, g->opset, in, n->nin, out, n->nout, e};
        if (d->eval(&c)) { atl_err_prefix(e, "node '%s' (%s)", n->name, n->op); goto done; }
        for (int j = 0; observe && j < n->nout; j++)
            if (out[j] && observe(ctx, n->out[j], out[j], e)) { atl_err_prefix(e, "node '%s' (%s)", n->name, n->op); goto done; }
        for (int j = 0; j < n->nin; j++) {
            int t = n->in[j];
            if (t >= 0 && --uses[t] == 0 && owned[t]) { free(v[t].data); v[t].data = NULL; owned[t] = 0; }
        }
        for (int j = 0; j < n->nout; j++) {
            int t = n->out[j];
            if (t >= 0 && uses[t] == 0 && owned[t]) { free(v[t].data); v[t].data = NULL; owned[t] = 0; }
        }
    }
    for (int i = 0; i < g->nout; i++) {
        int t = g->outputs[i];
        if (!v[t].data) { atl_fail(e, "graph output '%s' was not computed", g->t[t].name); goto done; }
        res[i] = v[t];
        res[i].name = ir_strdup(g->t[t].name);
        res[i].producer = -1;
        if (owned[t] && uses[t] == 1) { owned[t] = 0; }
        else {
            size_t nb = ir_nbytes(&v[t]);
            res[i].data = malloc(nb ? nb : 1);
            if (!res[i].data || !res[i].name) { atl_fail(e, "out of memory"); goto done; }
            memcpy(res[i].data, v[t].data, nb);
        }
        uses[t]--;
    }
    *outputs = res;
    res = NULL;
    rc = 0;
done:
    if (res) interp_free_outputs(res, g->nout);
    if (v && owned)
        for (int t = 0; t < nt; t++) if (owned[t]) free(v[t].data);
    free(v); free(owned); free(uses); free(in); free(out);
    return rc;
}
