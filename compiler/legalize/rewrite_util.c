/* rewrite_util.c - building blocks of the backend's graph rewrites
 * (legalize/rewrite_convt.c, legalize/rewrite_ops.c, legalize/rewrite_3d.c, legalize/rewrite_rnn.c): new tensors
 * named "<base>#<what>", constants, nodes, and the ops whose form depends
 * on the opset (Reshape's shape, Pad's pads, Slice's ranges are inputs in
 * newer opsets, attributes in older ones).
 * All work on the backend's private copy of the graph; ids of the new
 * tensors are returned (or -1 with *e set). IrGraph.t may move when a
 * tensor is added: callers re-read tensor pointers afterwards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/legalize/legalize.h"

int bk_rw_tensor(IrGraph *g, const char *base, const char *what, AtlErr *e)
{
    char name[512];
    snprintf(name, sizeof name, "%s#%s", base, what);
    if (ir_find(g, name) >= 0) return atl_fail(e, "tensor name '%s' is already used", name);
    return ir_tensor(g, name, e);
}

/* A constant <base>#<what> (data copied). */
static int named_const(IrGraph *g, const char *base, const char *what, int dtype, int ndim, const int64_t *dims,
                       const void *v, AtlErr *e)
{
    char name[512];
    snprintf(name, sizeof name, "%s#%s", base, what);
    if (ir_find(g, name) >= 0) return atl_fail(e, "tensor name '%s' is already used", name);
    return ir_add_const(g, name, dtype, ndim, dims, v, e);
}

int bk_rw_int_const(IrGraph *g, const char *base, const char *what, const int64_t *v, int n, AtlErr *e)
{
    int64_t d = n;
    return named_const(g, base, what, IR_I64, 1, &d, v, e);
}

int bk_rw_typed_const(IrGraph *g, const char *base, const char *what, int dtype, int ndim, const int64_t *dims,
                      const void *v, AtlErr *e)
{
    return named_const(g, base, what, dtype, ndim, dims, v, e);
}

int bk_rw_float_const(IrGraph *g, const char *base, const char *what, int ndim, const int64_t *dims, const float *v,
                      AtlErr *e)
{
    return named_const(g, base, what, IR_F32, ndim, dims, v, e);
}

int bk_rw_node(IrGraph *g, const char *op, const char *name, const int *ins, int nin, int out, AtlErr *e)
{
    int k = ir_add_node(g, op, name, e);
    if (k < 0) return -1;
    for (int i = 0; i < nin; i++) if (ir_node_add_input(g, k, ins[i], e)) return -1;
    return ir_node_add_output(g, k, out, e) ? -1 : k;
}

int bk_rw_op(IrGraph *g, const char *op, const char *base, const char *what, const int *ins, int nin, AtlErr *e)
{
    int y = bk_rw_tensor(g, base, what, e);
    if (y < 0 || bk_rw_node(g, op, base, ins, nin, y, e) < 0) return -1;
    return y;
}

int bk_rw_reshape_to(IrGraph *g, const char *base, const char *what, int x, const int64_t *dims, int nd, int out, AtlErr *e)
{
    char sname[64];
    snprintf(sname, sizeof sname, "%s_shape", what);
    int y = out >= 0 ? out : bk_rw_tensor(g, base, what, e), k;
    if (y < 0) return -1;
    if (g->opset >= 5) {
        int s = bk_rw_int_const(g, base, sname, dims, nd, e);
        int ins[2] = {x, s};
        if (s < 0 || (k = bk_rw_node(g, "Reshape", base, ins, 2, y, e)) < 0) return -1;
    } else if ((k = bk_rw_node(g, "Reshape", base, &x, 1, y, e)) < 0 || ir_set_attr_ints(g, k, "shape", dims, nd, e)) {
        return -1;
    }
    return y;
}

int bk_rw_reshape(IrGraph *g, const char *base, const char *what, int x, const int64_t *dims, int nd, AtlErr *e)
{
    return bk_rw_reshape_to(g, base, what, x, dims, nd, -1, e);
}

int bk_rw_view(IrGraph *g, const char *base, const char *what, int x, const int64_t *dims, int nd, AtlErr *e)
{
    if (!g->t[x].data) return bk_rw_reshape(g, base, what, x, dims, nd, e);
    int64_t n = 1;
    for (int i = 0; i < nd; i++) n *= dims[i];
    if (n != ir_numel(&g->t[x])) return atl_fail(e, "tensor '%s': reshape to %lld elements", g->t[x].name, (long long)n);
    return named_const(g, base, what, g->t[x].dtype, nd, dims, g->t[x].data, e);
}

int bk_rw_pad(IrGraph *g, const char *base, const char *what, int x, const int64_t *pads, int r, float value, AtlErr *e)
{
    char pname[64], vname[64];
    snprintf(pname, sizeof pname, "%s_pads", what);
    snprintf(vname, sizeof vname, "%s_value", what);
    int y = bk_rw_tensor(g, base, what, e), k;
    if (y < 0) return -1;
    if (g->opset >= 11) {
        int p = bk_rw_int_const(g, base, pname, pads, 2 * r, e);
        int v = value != 0 ? bk_rw_float_const(g, base, vname, 0, NULL, &value, e) : -2;
        int ins[3] = {x, p, v};
        if (p < 0 || v == -1 || (k = bk_rw_node(g, "Pad", base, ins, v >= 0 ? 3 : 2, y, e)) < 0) return -1;
    } else if ((k = bk_rw_node(g, "Pad", base, &x, 1, y, e)) < 0 ||
               ir_set_attr_ints(g, k, g->opset < 2 ? "paddings" : "pads", pads, 2 * r, e) ||
               (value != 0 && ir_set_attr_float(g, k, "value", value, e))) {
        return -1;
    }
    return y;
}

int bk_rw_index(IrGraph *g, const char *base, const char *what, int x, int axis, int64_t i, AtlErr *e)
{
    char iname[64];
    snprintf(iname, sizeof iname, "%s_idx", what);
    int it = named_const(g, base, iname, IR_I64, 0, NULL, &i, e);
    if (it < 0) return -1;
    int ins[2] = {x, it}, y = bk_rw_tensor(g, base, what, e), k;
    if (y < 0 || (k = bk_rw_node(g, "Gather", base, ins, 2, y, e)) < 0 || ir_set_attr_int(g, k, "axis", axis, e)) return -1;
    return y;
}

int bk_rw_fold(IrGraph *g, const char *op, const char *base, const char *what, const int *ins, int n, int out, AtlErr *e)
{
    char w[96];
    int acc = -1, used = 0, step = 0;
    if (n == 1 && out < 0) return ins[0];
    while (used < n) {
        int part[BK_MAXIN], np = 0;
        if (acc >= 0) part[np++] = acc;
        while (np < BK_MAXIN && used < n) part[np++] = ins[used++];
        snprintf(w, sizeof w, "%s%d", what, step++);
        int y = used == n && out >= 0 ? out : bk_rw_tensor(g, base, w, e);
        if (y < 0 || bk_rw_node(g, op, base, part, np, y, e) < 0) return -1;
        acc = y;
    }
    return acc;
}

int bk_rw_attr_ints(const IrNode *n, const char *name, int64_t *v, int cnt, int64_t dflt)
{
    const IrAttr *a = ir_attr(n, name);
    for (int i = 0; i < cnt; i++) v[i] = dflt;
    if (!a) return 0;
    if (a->type != IR_ATTR_INTS || a->n != cnt) return -1;
    for (int i = 0; i < cnt; i++) v[i] = a->ints[i];
    return 0;
}

int bk_rw_slice(IrGraph *g, const char *base, const char *what, int x, int n, const int64_t *axes, const int64_t *starts,
                  const int64_t *ends, AtlErr *e)
{
    char nm[96];
    int y = bk_rw_tensor(g, base, what, e);
    if (y < 0) return -1;
    if (g->opset < 10) { /* starts, ends, axes as attributes */
        int k = bk_rw_node(g, "Slice", base, &x, 1, y, e);
        if (k < 0 || ir_set_attr_ints(g, k, "starts", starts, n, e) || ir_set_attr_ints(g, k, "ends", ends, n, e) ||
            ir_set_attr_ints(g, k, "axes", axes, n, e))
            return -1;
        return y;
    }
    int ins[4] = {x};
    static const char *const parts[3] = {"starts", "ends", "axes"};
    const int64_t *vals[3] = {starts, ends, axes};
    for (int i = 0; i < 3; i++) {
        snprintf(nm, sizeof nm, "%s_%s", what, parts[i]);
        if ((ins[1 + i] = bk_rw_int_const(g, base, nm, vals[i], n, e)) < 0) return -1;
    }
    return bk_rw_node(g, "Slice", base, ins, 4, y, e) < 0 ? -1 : y;
}

int bk_rw_transpose(IrGraph *g, const char *base, const char *what, int x, const int64_t *perm, int r, int out, AtlErr *e)
{
    int y = out >= 0 ? out : bk_rw_tensor(g, base, what, e), k;
    if (y < 0 || (k = bk_rw_node(g, "Transpose", base, &x, 1, y, e)) < 0 || ir_set_attr_ints(g, k, "perm", perm, r, e))
        return -1;
    return y;
}

int bk_rw_reduce(IrGraph *g, const char *op, const char *base, const char *what, int x, const int64_t *axes, int na,
                 int keepdims, int out, AtlErr *e)
{
    char aname[64];
    snprintf(aname, sizeof aname, "%s_axes", what);
    int y = out >= 0 ? out : bk_rw_tensor(g, base, what, e), k;
    if (y < 0) return -1;
    /* axes became an input in opset 13 for ReduceSum, 18 for the others */
    if (g->opset >= (strcmp(op, "ReduceSum") ? 18 : 13)) {
        int at = bk_rw_int_const(g, base, aname, axes, na, e);
        int ins[2] = {x, at};
        if (at < 0 || (k = bk_rw_node(g, op, base, ins, 2, y, e)) < 0) return -1;
    } else if ((k = bk_rw_node(g, op, base, &x, 1, y, e)) < 0 || ir_set_attr_ints(g, k, "axes", axes, na, e)) {
        return -1;
    }
    return ir_set_attr_int(g, k, "keepdims", keepdims, e) ? -1 : y;
}
