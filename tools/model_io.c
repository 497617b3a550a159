/* model_io.c - model loading and array/tensor conversion for the CLI
 * (see model_io.h). */
#include "tools/model_io.h"
#include "compiler/onnx/onnx.h"
#include <stdlib.h>
#include <string.h>

static const struct { AtlNpyDtype npy; int ir; } dmap[] = {
    {ATL_NPY_F32, IR_F32}, {ATL_NPY_F16, IR_F16}, {ATL_NPY_I8, IR_I8}, {ATL_NPY_U8, IR_U8},
    {ATL_NPY_I32, IR_I32}, {ATL_NPY_I64, IR_I64}, {ATL_NPY_BOOL, IR_BOOL},
};

int model_load(const char *path, const IrInputShape *shapes, int nshapes, IrGraph *g, AtlErr *e)
{
    return model_load_opts(path, shapes, nshapes, NULL, g, e);
}

int model_load_opts(const char *path, const IrInputShape *shapes, int nshapes, OnnxLoadOpts *o, IrGraph *g, AtlErr *e)
{
    if (onnx_load_file_opts(path, o, g, e)) return -1;
    if (ir_toposort(g, e) || ir_verify(g, e)) return atl_err_prefix(e, "%s", path);
    if (ir_apply_input_shapes(g, shapes, nshapes, e)) return -1;
    if (ir_infer_shapes(g, e)) return atl_err_prefix(e, "%s", path);
    return 0;
}

int model_load_buffer(const uint8_t *buf, size_t len, const char *name, const IrInputShape *shapes, int nshapes, IrGraph *g,
                      AtlErr *e)
{
    if (onnx_load_buffer(buf, len, NULL, g, e)) return atl_err_prefix(e, "%s", name);
    if (ir_toposort(g, e) || ir_verify(g, e)) return atl_err_prefix(e, "%s", name);
    if (ir_apply_input_shapes(g, shapes, nshapes, e)) return -1;
    if (ir_infer_shapes(g, e)) return atl_err_prefix(e, "%s", name);
    return 0;
}

int model_tensor_from_array(const AtlNdArray *a, const char *name, IrTensor *t, AtlErr *e)
{
    memset(t, 0, sizeof *t);
    t->producer = -1;
    t->dtype = 0;
    for (size_t i = 0; i < sizeof dmap / sizeof dmap[0]; i++) if (dmap[i].npy == a->dtype) t->dtype = dmap[i].ir;
    if (!t->dtype) return atl_fail(e, "array '%s': dtype not supported", name);
    t->ndim = a->ndim;
    for (int k = 0; k < a->ndim; k++) t->dims[k] = a->shape[k];
    t->name = ir_strdup(name);
    if (!t->name) return atl_fail(e, "out of memory");
    if (ir_alloc_data(t, e)) { ir_tensor_free_contents(t); return atl_err_prefix(e, "input '%s'", name); }
    memcpy(t->data, a->data, ir_nbytes(t));
    return 0;
}

int model_array_from_tensor(const IrTensor *t, AtlNdArray *a, AtlErr *e)
{
    memset(a, 0, sizeof *a);
    int found = 0;
    for (size_t i = 0; i < sizeof dmap / sizeof dmap[0]; i++)
        if (dmap[i].ir == t->dtype) { a->dtype = dmap[i].npy; found = 1; }
    if (!found) return atl_fail(e, "tensor '%s': %s cannot be stored in .npy by atoll", t->name, ir_dtype_name(t->dtype));
    if (t->ndim > ATL_NPY_MAXDIM) return atl_fail(e, "tensor '%s': rank too large", t->name);
    a->ndim = t->ndim;
    for (int k = 0; k < t->ndim; k++) a->shape[k] = t->dims[k];
    if (atl_ndarray_alloc(a, e)) return -1;
    memcpy(a->data, t->data, ir_nbytes(t));
    a->name = ir_strdup(t->name);
    return a->name ? 0 : atl_fail(e, "out of memory");
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static int push_tensor(IrTensor **list, int *n, int *cap, AtlErr *e)
{
    if (*n < *cap) return 0;
    int c = *cap ? 2 * *cap : 8;
    IrTensor *p = realloc(*list, (size_t)c * sizeof *p);
    if (!p) return atl_fail(e, "out of memory");
    *list = p;
    *cap = c;
    return 0;
}

/* The graph input called name, or -1. */
static int graph_input(const IrGraph *g, const char *name)
{
    for (int i = 0; i < g->nin; i++)
        if (!strcmp(g->t[g->inputs[i]].name, name)) return g->inputs[i];
    return -1;
}

static int input_unknown(const IrGraph *g, const char *spec, const char *name, AtlErr *e)
{
    char list[512] = "";
    size_t k = 0;
    for (int j = 0; j < g->nin && k < sizeof list - 1; j++)
        k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", j ? ", " : "", g->t[g->inputs[j]].name);
    return atl_fail(e, "--input %s: the model has no input named '%s' (its inputs: %s)", spec, name, list);
}

/* .npz members: graph inputs are read, no larger than their shape needs
 * when it is known; anything else (expected outputs in a reference file)
 * is skipped without being inflated. */
static int select_inputs(void *ctx, const char *key, uint64_t *max_bytes, AtlErr *e)
{
    const IrGraph *g = ctx;
    (void)e;
    int t = graph_input(g, key);
    if (t < 0) return 0;
    int64_t n = ir_numel(&g->t[t]);
    size_t es = ir_dtype_size(g->t[t].dtype);
    *max_bytes = n >= 0 && es ? atl_npy_max_file_bytes((uint64_t)n * es) : 0;
    return 1;
}

int model_read_inputs(const IrGraph *g, const char *const *specs, int nspecs, IrTensor **out, int *nout, AtlErr *e)
{
    IrTensor *list = NULL;
    int n = 0, cap = 0;
    for (int i = 0; i < nspecs; i++) {
        const char *spec = specs[i], *eq = strchr(spec, '=');
        if (ends_with(spec, ".npz") && !eq) {
            AtlNdArray *l;
            int k, m;
            if (atl_npz_read_select(spec, select_inputs, (void *)g, &l, &m, e)) goto fail;
            for (k = 0; k < m; k++) {
                if (push_tensor(&list, &n, &cap, e) || model_tensor_from_array(&l[k], l[k].name, &list[n], e)) break;
                n++;
            }
            atl_ndarray_list_free(l, m);
            if (k < m) goto fail;
            continue;
        }
        char name[512];
        const char *file = spec;
        if (eq) {
            size_t L = (size_t)(eq - spec);
            if (L >= sizeof name) { atl_fail(e, "--input '%s': name too long", spec); goto fail; }
            memcpy(name, spec, L);
            name[L] = 0;
            file = eq + 1;
            if (graph_input(g, name) < 0) { input_unknown(g, spec, name, e); goto fail; }
        } else {
            if (g->nin != 1) {
                atl_fail(e, "--input %s: the model has %d inputs; name them (--input NAME=X.npy) or use an .npz", spec, g->nin);
                goto fail;
            }
            snprintf(name, sizeof name, "%s", g->t[g->inputs[0]].name);
        }
        AtlNdArray a;
        if (atl_npy_read(file, &a, e)) goto fail;
        int r = push_tensor(&list, &n, &cap, e) || model_tensor_from_array(&a, name, &list[n], e);
        atl_ndarray_free(&a);
        if (r) goto fail;
        n++;
    }
    *out = list;
    *nout = n;
    return 0;
fail:
    model_free_inputs(list, n);
    return -1;
}

void model_free_inputs(IrTensor *list, int n)
{
    for (int i = 0; i < n; i++) ir_tensor_free_contents(&list[i]);
    free(list);
}

int model_batch_shapes(const char *model, int batch, int only_unknown, const OnnxLoadOpts *opts, IrInputShape *shapes,
                       int *n, int max, AtlErr *e)
{
    IrGraph g;
    OnnxLoadOpts lo = {opts->synthetic_weights, 0, 0, opts->synthetic_max_bytes};
    if (onnx_load_file_opts(model, &lo, &g, e)) { ir_free(&g); return -1; }
    int rc = 0;
    for (int i = 0; i < g.nin && !rc; i++) {
        const IrTensor *t = &g.t[g.inputs[i]];
        int given = 0;
        for (int k = 0; k < *n; k++) if (!strcmp(shapes[k].name, t->name)) given = 1;
        if (given || (only_unknown && (t->ndim < 1 || t->dims[0] >= 0))) continue;
        if (t->ndim < 1) { rc = atl_fail(e, "%s: --batch: input '%s' has no batch dimension", model, t->name); break; }
        if (*n == max) { rc = atl_fail(e, "%s: too many inputs", model); break; }
        IrInputShape *s = &shapes[(*n)++];
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "%s", t->name);
        s->ndim = t->ndim;
        s->dims[0] = batch;
        for (int d = 1; d < t->ndim; d++) {
            if (t->dims[d] < 0) {
                rc = atl_fail(e, "%s: --batch: input '%s' dimension %d is unknown; give --input-shape", model, t->name, d);
                break;
            }
            s->dims[d] = t->dims[d];
        }
    }
    ir_free(&g);
    return rc;
}
