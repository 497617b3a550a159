/* rewrite_int.c - BitShift on the chip: the shift amount s replaced by
 * p = 2^s (a rule of legalize/rewrite_ops.c's table, on the backend's private
 * copy), so that the shift is a short elementwise program of
 * lower/elem_prog.c ("BitShift_right" / "BitShift_left<W>").
 *
 * x, s are uint8 / uint16 / uint32 (chip i16 / i32 / i32, all values
 * non-negative). p comes from a table indexed by s: a constant s gives a
 * constant of s's shape, a run-time s a Gather from the constant table
 * [1, 2, 4, ...] by s cast to int64 (dma.gather, lower/gather.c), which
 * faults naming the index on a shift of W (the unsigned width) or more:
 * the table holds s = 0 .. W-1 (uint32: 0 .. 30, as 2^31 is no chip i32).
 * The rewritten node is a BitShift(x, p) marked with the attribute
 * BK_SHIFT_BY_POW2 (so that the rule does not apply to it again).
 * Why: the chip has no shift instruction; a multiply / divide by 2^s is
 * one, and 2^s of a run-time s needs an indexed load. */
#include <stdio.h>
#include "compiler/legalize/legalize.h"

/* Unsigned width of an integer IR dtype the rewrite handles, 0 otherwise. */
static int uwidth(int dtype) { return dtype == IR_U8 ? 8 : dtype == IR_U16 ? 16 : dtype == IR_U32 ? 32 : 0; }

/* 2^s in dtype dt: a constant of s's shape when s is constant, else
 * Gather([1, 2, 4, ...], Cast(s, int64)). */
static int lookup(IrGraph *g, const char *base, const char *what, int s, int dt, int W, const char *node, AtlErr *e)
{
    int ntab = W > 31 ? 31 : W;
    char tn[64];
    if (g->t[s].data) {
        int64_t n = ir_numel(&g->t[s]), dims[IR_MAXDIM];
        int nd = g->t[s].ndim;
        for (int i = 0; i < nd; i++) dims[i] = g->t[s].dims[i];
        int k = bk_rw_typed_const(g, base, what, dt, nd, dims, NULL, e);   /* zeros, set below */
        for (int64_t i = 0; k >= 0 && i < n; i++) {
            int64_t v = ir_get_i(&g->t[s], i);
            if (v < 0 || v >= ntab)
                return atl_fail(e, "node '%s' (BitShift): shift %lld of '%s' is outside 0..%d (the chip's tables)", node,
                                (long long)v, g->t[s].name, ntab - 1);
            ir_set_i(&g->t[k], i, (int64_t)1 << v);
        }
        return k;
    }
    int64_t tab[32];
    for (int i = 0; i < ntab; i++) tab[i] = (int64_t)1 << i;
    snprintf(tn, sizeof tn, "%s_table", what);
    int64_t d = ntab;
    int k = bk_rw_typed_const(g, base, tn, dt, 1, &d, NULL, e);
    for (int i = 0; k >= 0 && i < ntab; i++) ir_set_i(&g->t[k], i, tab[i]);
    snprintf(tn, sizeof tn, "%s_index", what);
    int idx = k < 0 ? -1 : bk_rw_op(g, "Cast", base, tn, &s, 1, e);
    if (idx < 0 || ir_set_attr_int(g, g->nn - 1, "to", IR_I64, e)) return -1;
    int ins[2] = {k, idx};
    return bk_rw_op(g, "Gather", base, what, ins, 2, e);
}

int bk_rewrite_bitshift_applies(const IrGraph *g, int node)
{
    return !ir_attr_int(&g->nodes[node], BK_SHIFT_BY_POW2, 0);
}

int bk_rewrite_bitshift(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    int x = n->in[0], s = n->in[1], y = n->out[0], dt = g->t[x].dtype, W = uwidth(dt);
    const char *name = n->name ? n->name : "?";
    if (!W)
        return atl_fail(e, "node '%s' (BitShift): input '%s' is %s: the chip lowers uint8, uint16 and uint32 shifts", name,
                        g->t[x].name, ir_dtype_name(dt));
    char base[400], nname[400], dir[8];
    snprintf(base, sizeof base, "%s", g->t[y].name);
    snprintf(nname, sizeof nname, "%s", name);
    snprintf(dir, sizeof dir, "%s", ir_attr_str(n, "direction", "LEFT"));
    int p = lookup(g, base, "shift_pow2", s, dt, W, nname, e);
    if (p < 0) return -1;
    int ins[2] = {x, p};
    int k = bk_rw_node(g, "BitShift", nname, ins, 2, y, e);
    if (k < 0 || ir_set_attr_int(g, k, BK_SHIFT_BY_POW2, 1, e)) return -1;
    return ir_set_attr_str(g, k, "direction", dir, e);
}
