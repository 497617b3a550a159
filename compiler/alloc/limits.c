/* limits.c - the backend's size checks, run once after DRAM placement
 * and before any lowering or tile search, so that a model the chip cannot
 * hold is refused at once with the tensor named, instead of dividing by a
 * zero-size dimension or searching tiles for minutes over a tensor larger
 * than the chip's DRAM.
 *
 * Every tensor a live node or the graph reads or writes must have every
 * dimension below 2^32 (the .abm stores 32-bit dimensions) and fit the
 * chip's DRAM; the io and activation regions must fit it together. Empty
 * tensors are refused unless they are constants (shape parameters such as
 * absent axes, or outputs folded to constants): the .abm describes no
 * empty input, output or activation (the reference interpreter runs them). */
#include <stdlib.h>
#include "compiler/alloc/alloc.h"

/* Checks tensor t alone; sh is scratch for its shape text. */
static int check_one(const BkCtx *c, int t, char *sh, size_t shcap, AtlErr *e)
{
    const IrTensor *x = &c->g->t[t];
    if (x->ndim < 0) return 0;   /* unknown: the input checks or the lowering say so */
    double numel = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (x->dims[d] < 0) return 0;
        if (x->dims[d] == 0 && !x->data)
            return atl_fail(e, "tensor '%s' (shape %s) is empty: the backend compiles no empty inputs, outputs or "
                            "activations (the .abm describes none; `atoll interp` runs them)", x->name,
                            ir_shape_str(x, sh, shcap));
        if (x->dims[d] >= ((int64_t)1 << 32))
            return atl_fail(e, "tensor '%s' (shape %s): dimension %d is %lld; the chip's model format holds dimensions "
                            "below 2^32", x->name, ir_shape_str(x, sh, shcap), d, (long long)x->dims[d]);
        numel *= (double)x->dims[d];
    }
    double bytes = numel * bk_tensor_es(c, t);
    if (bytes > (double)c->chip->dram_bytes)
        return atl_fail(e, "tensor '%s' (%s, shape %s) takes %.0f bytes on the chip, more than the %d bytes of DRAM of "
                        "chip '%s'", x->name, ir_dtype_name(x->dtype), ir_shape_str(x, sh, shcap), bytes,
                        c->chip->dram_bytes, c->chip->name);
    return 0;
}

/* node: a live node that reads or writes t (named in the message), or -1 */
static int check_tensor(const BkCtx *c, int t, int node, AtlErr *e)
{
    char sh[128];
    if (check_one(c, t, sh, sizeof sh, e) == 0) return 0;
    if (node >= 0) {
        const IrNode *n = &c->g->nodes[node];
        atl_err_prefix(e, "node '%s' (%s)", n->name ? n->name : "", n->op);
    }
    return -1;
}

int bk_check_limits(const BkCtx *c, AtlErr *e)
{
    const IrGraph *g = c->g;
    char *seen = calloc((size_t)g->nt + 1, 1);
    if (!seen) return atl_fail(e, "out of memory");
    int rc = 0;
    for (int n = 0; n < g->nn && !rc; n++) {
        const IrNode *nd = &g->nodes[n];
        if (nd->dead || c->skip[n]) continue;
        for (int k = 0; k < nd->nin + nd->nout && !rc; k++) {
            int t = k < nd->nin ? nd->in[k] : nd->out[k - nd->nin];
            if (t >= 0 && !seen[t]++) rc = check_tensor(c, t, n, e);
        }
    }
    for (int i = 0; i < g->nin && !rc; i++)
        if (!seen[g->inputs[i]]++) rc = check_tensor(c, g->inputs[i], -1, e);
    for (int i = 0; i < g->nout && !rc; i++)
        if (!seen[g->outputs[i]]++) rc = check_tensor(c, g->outputs[i], -1, e);
    free(seen);
    if (!rc && c->io_bytes + c->act_bytes > (uint64_t)c->chip->dram_bytes)
        rc = atl_fail(e, "the graph's inputs and outputs (%llu bytes) and its activations (%llu bytes) need more than the "
                      "%d bytes of DRAM of chip '%s'", (unsigned long long)c->io_bytes, (unsigned long long)c->act_bytes,
                      c->chip->dram_bytes, c->chip->name);
    return rc;
}
