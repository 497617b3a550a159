/* pipeline.c - the canonical pass order (see passes/passes.h). QDQ node
 * units become int8 operators first (ops/qdq.h). Folding runs
 * before and after BatchNorm folding so that BN parameters computed from
 * constants are visible (and a Pad's pads before its fold into a conv),
 * and dead-node removal after both. */
#include "compiler/passes/passes.h"
#include "compiler/ops/infer.h"
#include "compiler/ops/qdq.h"

int pass_run_all(IrGraph *g, AtlErr *e)
{
    if (ir_toposort(g, e) || ir_infer_shapes(g, e)) return -1;
    /* QDQ node units first: folding would turn their weights' DequantizeLinear into float constants */
    int units = 0;
    if (qdq_fuse(g, &units, e)) return -1;
    if (units && (ir_toposort(g, e) || ir_infer_shapes(g, e))) return atl_err_prefix(e, "after fusing QDQ units");
    /* folding evaluates nodes: one that contradicts changed input shapes is named with why */
    if (pass_fold_constants(g, e) || pass_remove_identity(g, e) || pass_fold_batchnorm(g, e)) return ir_reshape_hint(g, e);
    if (pass_fold_pad(g, e) || pass_fold_constants(g, e) || pass_remove_dead(g, e) || ir_toposort(g, e))
        return ir_reshape_hint(g, e);
    if (pass_mark_views(g, e) || pass_fuse_activations(g, e)) return -1;
    if (ir_infer_shapes(g, e)) return atl_err_prefix(e, "after passes");
    return ir_verify(g, e) ? atl_err_prefix(e, "after passes") : 0;
}
