/* model_io.c - model loading and array/tensor conversion for the CLI
 * (see model_io.h); element conversions are the public API's
 * (atl_convert), so the CLI and programs convert alike. */
#include "tools/model_io.h"
#include "compiler/driver/driver.h"
#include "compiler/onnx/onnx.h"
#include "compiler/ops/ops.h"
#include "atoll.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* .npy, IR and public (include/atoll.h) numbering of each element type. */
static const struct { int npy, ir, atl; } dmap[] = {
    {ATL_NPY_F32, IR_F32, ATL_FP32}, {ATL_NPY_F16, IR_F16, ATL_FP16}, {ATL_NPY_I8, IR_I8, ATL_INT8},
    {ATL_NPY_U8, IR_U8, ATL_UINT8}, {ATL_NPY_I32, IR_I32, ATL_INT32}, {ATL_NPY_I64, IR_I64, ATL_INT64},
    {ATL_NPY_BOOL, IR_BOOL, ATL_BOOL}, {ATL_NPY_F64, IR_F64, ATL_FP64}, {ATL_NPY_I16, IR_I16, ATL_INT16},
    {ATL_NPY_U16, IR_U16, ATL_UINT16}, {ATL_NPY_U32, IR_U32, ATL_UINT32}, {ATL_NPY_U64, IR_U64, ATL_UINT64},
    {-1, IR_BF16, ATL_BF16},
};

static int atl_of_ir(int ir)
{
    for (size_t i = 0; i < sizeof dmap / sizeof dmap[0]; i++) if (dmap[i].ir == ir) return dmap[i].atl;
    return -1;
}

int model_convert_tensor(IrTensor *t, int dtype, const char *what, AtlErr *e)
{
    if (t->dtype == dtype) return 0;
    int from = atl_of_ir(t->dtype), to = atl_of_ir(dtype);
    if (from < 0 || to < 0) return atl_fail(e, "%s: %s cannot become %s", what, ir_dtype_name(t->dtype), ir_dtype_name(dtype));
    int64_t n = ir_numel(t);
    IrTensor c = *t;
    c.dtype = dtype;
    c.data = NULL;
    if (ir_alloc_data(&c, e)) return -1;
    char msg[256];
    if (atl_convert(t->data, from, c.data, to, (size_t)(n > 0 ? n : 0), msg, sizeof msg)) {
        free(c.data);
        return atl_fail(e, "%s: %s", what, msg);
    }
    free(t->data);
    t->data = c.data;
    t->dtype = dtype;
    return 0;
}

int model_import(const char *path, OnnxLoadOpts *o, IrGraph *g, AtlErr *e)
{
    if (onnx_load_file_opts(path, o, g, e)) return -1;
    if (ir_toposort(g, e) || ir_verify(g, e)) return atl_err_prefix(e, "%s", path);
    return 0;
}

int model_fix_shapes(const char *cmd, IrGraph *g, const IrInputShape *shapes, int nshapes, const char *path, AtlErr *e)
{
    if (ir_apply_input_shapes(g, shapes, nshapes, e)) return -1;
    if (!ir_infer_shapes(g, e)) return 0;
    /* the message holds the unsupported ops that fit; the rest go to stderr */
    char *rep = strstr(e->msg, "\n  ... and ") ? ir_unsupported_report(g, NULL, NULL) : NULL;
    if (rep) fprintf(stderr, "atoll %s: %s: these ops are not supported:\n%s", cmd, path, rep);
    free(rep);
    return atl_err_prefix(e, "%s", path);
}

int model_load_opts(const char *cmd, const char *path, const IrInputShape *shapes, int nshapes, OnnxLoadOpts *o, IrGraph *g,
                    AtlErr *e)
{
    return model_import(path, o, g, e) || model_fix_shapes(cmd, g, shapes, nshapes, path, e) ? -1 : 0;
}

int model_load_batch(const char *cmd, const char *path, const IrInputShape *shapes, int nshapes, int batch, OnnxLoadOpts *o,
                     IrGraph *g, AtlErr *e)
{
    IrInputShape sh[MODEL_MAX_SHAPES];
    if (nshapes > MODEL_MAX_SHAPES) return atl_fail(e, "%s: more than %d input shapes", path, MODEL_MAX_SHAPES);
    if (nshapes > 0) memcpy(sh, shapes, sizeof sh[0] * (size_t)nshapes);   /* shapes may be NULL when there are none */
    if (model_import(path, o, g, e)) return -1;
    if (drv_batch_shapes(g, batch, sh, &nshapes, MODEL_MAX_SHAPES, NULL, 0, e)) return atl_err_prefix(e, "%s", path);
    return model_fix_shapes(cmd, g, sh, nshapes, path, e);
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
    for (size_t i = 0; i < sizeof dmap / sizeof dmap[0]; i++) if (dmap[i].npy == (int)a->dtype) t->dtype = dmap[i].ir;
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
        if (dmap[i].ir == t->dtype && dmap[i].npy >= 0) { a->dtype = (AtlNpyDtype)dmap[i].npy; found = 1; }
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

/* The graph input (or output, when outputs is set) called name, or -1. */
static int graph_port(const IrGraph *g, const char *name, int outputs)
{
    int n = outputs ? g->nout : g->nin;
    const int *ids = outputs ? g->outputs : g->inputs;
    for (int i = 0; i < n; i++)
        if (!strcmp(g->t[ids[i]].name, name)) return ids[i];
    return -1;
}

static int port_unknown(const IrGraph *g, const char *spec, const char *name, int outputs, AtlErr *e)
{
    char list[512] = "";
    size_t k = 0;
    int n = outputs ? g->nout : g->nin;
    const int *ids = outputs ? g->outputs : g->inputs;
    for (int j = 0; j < n && k < sizeof list - 1; j++)
        k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", j ? ", " : "", g->t[ids[j]].name);
    return atl_fail(e, "%s %s: the model has no %s named '%s' (its %ss: %s)", outputs ? "--expect" : "--input", spec,
                    outputs ? "output" : "input", name, outputs ? "output" : "input", list);
}

/* Which .npz members to read: the graph's inputs (or outputs), each no
 * larger than its shape needs at up to 8 bytes per element (an array of a
 * wider type is converted) when the shape is known; anything else
 * (expected outputs in a reference file) is skipped without being
 * inflated. */
typedef struct PortSelect {
    const IrGraph *g;
    int outputs;
} PortSelect;

static int select_ports(void *ctx, const char *key, uint64_t *max_bytes, AtlErr *e)
{
    const PortSelect *ps = ctx;
    (void)e;
    int t = graph_port(ps->g, key, ps->outputs);
    if (t < 0) return 0;
    int64_t n = ir_numel(&ps->g->t[t]);
    *max_bytes = n >= 0 ? atl_npy_max_file_bytes((uint64_t)n * 8) : 0;
    return 1;
}

/* An array read for graph input t of another dtype: converted when that
 * is lossless for the model (floats of any width into a float input,
 * integers that fit into an integer input), with one note per input. */
static int adapt_input(const char *cmd, const IrGraph *g, IrTensor *t, const char *file, AtlErr *e)
{
    int k = ir_find(g, t->name);
    if (k < 0 || !g->t[k].is_input || g->t[k].dtype == t->dtype || !g->t[k].dtype) return 0;
    int want = g->t[k].dtype, had = t->dtype;
    int ff = (want == IR_F32 || want == IR_F16 || want == IR_BF16 || want == IR_F64) ==
             (had == IR_F32 || had == IR_F16 || had == IR_BF16 || had == IR_F64);
    if (!ff) return 0;            /* float vs integer: the interpreter names the mismatch */
    char what[600];
    snprintf(what, sizeof what, "%s: input '%s'", file, t->name);
    if (model_convert_tensor(t, want, what, e)) return -1;
    fprintf(stderr, "atoll %s: note: input '%s' is %s in %s; converted to the model's %s\n", cmd, t->name, ir_dtype_name(had),
            file, ir_dtype_name(want));
    return 0;
}

/* model_read_inputs and model_read_outputs: arrays named like the graph's
 * inputs, or its outputs. */
static int read_ports(const char *cmd, const IrGraph *g, int outputs, const char *const *specs, int nspecs, IrTensor **out,
                      int *nout, AtlErr *e)
{
    PortSelect ps = {g, outputs};
    IrTensor *list = NULL;
    int n = 0, cap = 0;
    for (int i = 0; i < nspecs; i++) {
        const char *spec = specs[i], *eq = strchr(spec, '=');
        if (ends_with(spec, ".npz") && !eq) {
            AtlNdArray *l;
            int k, m;
            if (atl_npz_read_select(spec, select_ports, &ps, &l, &m, e)) goto fail;
            for (k = 0; k < m; k++) {
                if (push_tensor(&list, &n, &cap, e) || model_tensor_from_array(&l[k], l[k].name, &list[n], e)) break;
                n++;
                if (adapt_input(cmd, g, &list[n - 1], spec, e)) break;
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
            if (graph_port(g, name, outputs) < 0) { port_unknown(g, spec, name, outputs, e); goto fail; }
        } else {
            int np = outputs ? g->nout : g->nin;
            if (np != 1) {
                atl_fail(e, "%s %s: the model has %d %ss; name them (%s NAME=X.npy) or use an .npz", outputs ? "--expect" : "--input",
                         spec, np, outputs ? "output" : "input", outputs ? "--expect" : "--input");
                goto fail;
            }
            snprintf(name, sizeof name, "%s", g->t[outputs ? g->outputs[0] : g->inputs[0]].name);
        }
        AtlNdArray a;
        if (atl_npy_read(file, &a, e)) goto fail;
        int r = push_tensor(&list, &n, &cap, e) || model_tensor_from_array(&a, name, &list[n], e);
        atl_ndarray_free(&a);
        if (r) goto fail;
        n++;
        if (adapt_input(cmd, g, &list[n - 1], file, e)) goto fail;
    }
    *out = list;
    *nout = n;
    return 0;
fail:
    model_free_inputs(list, n);
    return -1;
}

int model_read_inputs(const char *cmd, const IrGraph *g, const char *const *specs, int nspecs, IrTensor **out, int *nout, AtlErr *e)
{
    return read_ports(cmd, g, 0, specs, nspecs, out, nout, e);
}

int model_read_outputs(const char *cmd, const IrGraph *g, const char *const *specs, int nspecs, IrTensor **out, int *nout, AtlErr *e)
{
    return read_ports(cmd, g, 1, specs, nspecs, out, nout, e);
}

void model_free_inputs(IrTensor *list, int n)
{
    for (int i = 0; i < n; i++) ir_tensor_free_contents(&list[i]);
    free(list);
}
