/* model_io.c - model loading and array/tensor conversion for the CLI
 * (see model_io.h). */
#include "tools/model_io.h"
#include "compiler/onnx.h"
#include <stdlib.h>
#include <string.h>

static const struct { AtlNpyDtype npy; int ir; } dmap[] = {
    {ATL_NPY_F32, IR_F32}, {ATL_NPY_F16, IR_F16}, {ATL_NPY_I8, IR_I8}, {ATL_NPY_U8, IR_U8},
    {ATL_NPY_I32, IR_I32}, {ATL_NPY_I64, IR_I64}, {ATL_NPY_BOOL, IR_BOOL},
};

int model_load(const char *path, const IrInputShape *shapes, int nshapes, IrGraph *g, AtlErr *e)
{
    if (onnx_load_file(path, g, e)) return -1;
    if (ir_toposort(g, e) || ir_verify(g, e)) return atl_err_prefix(e, "%s", path);
    if (ir_apply_input_shapes(g, shapes, nshapes, e)) return -1;
    if (ir_infer_shapes(g, e)) return atl_err_prefix(e, "%s", path);
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
    if (!t->name || ir_alloc_data(t, e)) { ir_tensor_free_contents(t); return atl_fail(e, "out of memory"); }
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
