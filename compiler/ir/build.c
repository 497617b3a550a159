/* build.c - helpers for building graphs in code (see ir/ir.h): used by
 * tests, the benchmark and passes that insert tensors. */
#include "compiler/ir/ir.h"
#include <stdlib.h>
#include <string.h>

int ir_add_input(IrGraph *g, const char *name, int dtype, int ndim, const int64_t *dims, AtlErr *e)
{
    int t = ir_tensor(g, name, e);
    if (t < 0) return -1;
    int *p = realloc(g->inputs, (size_t)(g->nin + 1) * sizeof *p);
    if (!p) return atl_fail(e, "out of memory");
    g->inputs = p;
    p[g->nin++] = t;
    IrTensor *x = &g->t[t];
    x->is_input = 1;
    x->dtype = dtype;
    x->ndim = ndim;
    for (int k = 0; k < ndim && k < IR_MAXDIM; k++) x->dims[k] = dims[k];
    return t;
}

int ir_add_output(IrGraph *g, const char *name, AtlErr *e)
{
    int t = ir_tensor(g, name, e);
    if (t < 0) return -1;
    int *p = realloc(g->outputs, (size_t)(g->nout + 1) * sizeof *p);
    if (!p) return atl_fail(e, "out of memory");
    g->outputs = p;
    p[g->nout++] = t;
    g->t[t].is_output = 1;
    return t;
}

int ir_add_const(IrGraph *g, const char *name, int dtype, int ndim, const int64_t *dims, const void *data, AtlErr *e)
{
    if (ndim < 0 || ndim > IR_MAXDIM) return atl_fail(e, "constant '%s': rank %d out of range", name, ndim);
    int t = ir_tensor(g, name, e);
    if (t < 0) return -1;
    IrTensor *x = &g->t[t];
    x->dtype = dtype;
    x->ndim = ndim;
    for (int k = 0; k < ndim; k++) x->dims[k] = dims[k];
    if (ir_alloc_data(x, e)) return -1;
    if (data) memcpy(x->data, data, ir_nbytes(x));
    return t;
}

static int add_names(IrGraph *g, int node, const char *list, int out, AtlErr *e)
{
    if (!list || !*list) return 0;
    const char *p = list;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        char name[512];
        if (n >= sizeof name) return atl_fail(e, "tensor name too long");
        memcpy(name, p, n);
        name[n] = 0;
        int t = -1;
        if (n && (t = ir_tensor(g, name, e)) < 0) return -1;
        if ((out ? ir_node_add_output : ir_node_add_input)(g, node, t, e)) return -1;
        if (!c) return 0;
        p = c + 1;
    }
}

int ir_add_op(IrGraph *g, const char *op, const char *name, const char *ins, const char *outs, AtlErr *e)
{
    int n = ir_add_node(g, op, name, e);
    if (n < 0) return -1;
    if (add_names(g, n, ins, 0, e) || add_names(g, n, outs, 1, e)) return -1;
    return n;
}

int ir_set_attr_int(IrGraph *g, int node, const char *name, int64_t v, AtlErr *e)
{
    IrAttr *a = ir_node_add_attr(g, node, name, IR_ATTR_INT, e);
    if (!a) return -1;
    a->i = v;
    return 0;
}

int ir_set_attr_float(IrGraph *g, int node, const char *name, float v, AtlErr *e)
{
    IrAttr *a = ir_node_add_attr(g, node, name, IR_ATTR_FLOAT, e);
    if (!a) return -1;
    a->f = v;
    return 0;
}

int ir_set_attr_ints(IrGraph *g, int node, const char *name, const int64_t *v, int n, AtlErr *e)
{
    IrAttr *a = ir_node_add_attr(g, node, name, IR_ATTR_INTS, e);
    if (!a) return -1;
    a->ints = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!a->ints) return atl_fail(e, "out of memory");
    memcpy(a->ints, v, sizeof(int64_t) * (size_t)n);
    a->n = n;
    return 0;
}

int ir_set_attr_str(IrGraph *g, int node, const char *name, const char *v, AtlErr *e)
{
    IrAttr *a = ir_node_add_attr(g, node, name, IR_ATTR_STRING, e);
    if (!a) return -1;
    a->s = ir_strdup(v);
    return a->s ? 0 : atl_fail(e, "out of memory");
}
