/* cast.c - Cast and CastLike: a copy when the input and output have the
 * same storage dtype (the same chip values), else one v.cast on the
 * vector unit (round half even, saturate): integer -> bool takes
 * min(|x|, 1) first; float -> integer takes v.trunc first, as ONNX
 * truncates toward zero; float -> bool is x != 0 with NaN true, by v.eq
 * (lower/elem_prog.c). CastLike is a Cast to its second input's dtype,
 * which it does not read. */
#include "compiler/lower/lower.h"

int bk_lower_cast(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *n = &gr->nodes[node];
    const IrTensor *x = &gr->t[n->in[0]], *y = &gr->t[n->out[0]];
    int xdt = bk_tensor_dt(c, n->in[0]), ydt = bk_tensor_dt(c, n->out[0]);
    if (xdt < 0) return bk_fail(c, node, e, "input '%s' has dtype %s, which the chip cannot hold", x->name, ir_dtype_name(x->dtype));
    int to_bool = y->dtype == IR_BOOL && x->dtype != IR_BOOL;   /* int8 -> bool is not a copy */
    if (xdt == ydt && !to_bool) return bk_lower_move(c, node, ly, e);   /* the same chip values: a copy */
    return bk_lower_elem(c, node, ly, e);
}
