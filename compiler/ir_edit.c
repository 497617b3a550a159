/* ir_edit.c - small graph edits the backend's rewrites share
 * (bk_rewrite_convt.c, bk_rewrite_rnn.c): fresh derived tensor names, 1-D
 * int64 constants, a node from index lists, Reshape in the form the graph's
 * opset takes (the shape an input from opset 5 on, an attribute before) and
 * Slice (starts/ends/axes inputs from opset 10 on; before, where Slice takes
 * them as attributes the chip does not lower, one Gather per axis).
 * Why one place: every rewrite names its new tensors "<base>#<what>" and
 * must fail, not silently reuse, when such a name is already taken. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/ir.h"

int ir_edit_tensor(IrGraph *g, const char *base, const char *what, AtlErr *e)
{
    char name[512];
    snprintf(name, sizeof name, "%s#%s", base, what);
    if (ir_find(g, name) >= 0) return atl_fail(e, "tensor name '%s' is already used", name);
    return ir_tensor(g, name, e);
}

int ir_edit_int_const(IrGraph *g, const char *base, const char *what, const int64_t *v, int n, AtlErr *e)
{
    int t = ir_edit_tensor(g, base, what, e);
    if (t < 0) return -1;
    IrTensor *x = &g->t[t];
    x->dtype = IR_I64;
    x->ndim = 1;
    x->dims[0] = n;
    if (ir_alloc_data(x, e)) return -1;
    memcpy(x->data, v, (size_t)n * sizeof *v);
    return t;
}

int ir_edit_node(IrGraph *g, const char *op, const char *name, const int *ins, int nin, int out, AtlErr *e)
{
    int k = ir_add_node(g, op, name, e);
    if (k < 0) return -1;
    for (int i = 0; i < nin; i++) if (ir_node_add_input(g, k, ins[i], e)) return -1;
    return ir_node_add_output(g, k, out, e) ? -1 : k;
}

int ir_edit_reshape_to(IrGraph *g, const char *base, const char *what, int x, const int64_t *dims, int nd, int y, AtlErr *e)
{
    char sname[96];
    snprintf(sname, sizeof sname, "%s_shape", what);
    int k;
    if (g->opset >= 5) {
        int s = ir_edit_int_const(g, base, sname, dims, nd, e);
        int ins[2] = {x, s};
        if (s < 0 || (k = ir_edit_node(g, "Reshape", base, ins, 2, y, e)) < 0) return -1;
    } else if ((k = ir_edit_node(g, "Reshape", base, &x, 1, y, e)) < 0 || ir_set_attr_ints(g, k, "shape", dims, nd, e)) {
        return -1;
    }
    return y;
}

int ir_edit_reshape(IrGraph *g, const char *base, const char *what, int x, const int64_t *dims, int nd, AtlErr *e)
{
    int y = ir_edit_tensor(g, base, what, e);
    return y < 0 ? -1 : ir_edit_reshape_to(g, base, what, x, dims, nd, y, e);
}

/* Opsets before 10 take Slice's starts/ends as attributes, which the chip
 * does not lower: one Gather of the index range per axis instead. */
static int slice_by_gathers(IrGraph *g, const char *base, const char *what, int x, int n, const int64_t *axes,
                            const int64_t *starts, const int64_t *ends, int y, AtlErr *e)
{
    char nm[128];
    for (int i = 0; i < n; i++) {
        int64_t cnt = ends[i] - starts[i], idx[1];
        int64_t *v = cnt > 1 ? malloc((size_t)cnt * sizeof *v) : idx;
        if (!v) return atl_fail(e, "out of memory");
        for (int64_t j = 0; j < cnt; j++) v[j] = starts[i] + j;
        snprintf(nm, sizeof nm, "%s_idx%d", what, i);
        int ins[2] = {x, ir_edit_int_const(g, base, nm, v, (int)cnt, e)};
        if (v != idx) free(v);
        snprintf(nm, sizeof nm, "%s_axis%d", what, i);
        int out = i == n - 1 ? y : ir_edit_tensor(g, base, nm, e), k;
        if (ins[1] < 0 || out < 0 || (k = ir_edit_node(g, "Gather", base, ins, 2, out, e)) < 0 ||
            ir_set_attr_int(g, k, "axis", axes[i], e))
            return -1;
        x = out;
    }
    return y;
}

int ir_edit_slice(IrGraph *g, const char *base, const char *what, int x, int n, const int64_t *axes, const int64_t *starts,
                  const int64_t *ends, AtlErr *e)
{
    char nm[96];
    int y = ir_edit_tensor(g, base, what, e);
    if (y < 0) return -1;
    if (g->opset < 10) return slice_by_gathers(g, base, what, x, n, axes, starts, ends, y, e);
    int ins[4] = {x};
    static const char *const parts[3] = {"starts", "ends", "axes"};
    const int64_t *vals[3] = {starts, ends, axes};
    for (int i = 0; i < 3; i++) {
        snprintf(nm, sizeof nm, "%s_%s", what, parts[i]);
        if ((ins[1 + i] = ir_edit_int_const(g, base, nm, vals[i], n, e)) < 0) return -1;
    }
    return ir_edit_node(g, "Slice", base, ins, 4, y, e) < 0 ? -1 : y;
}
