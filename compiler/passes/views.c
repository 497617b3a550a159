/* views.c - marks shape-only ops as views.
 *
 * Reads: nodes.
 * Does: sets is_view on the output of every live Reshape, Flatten, Squeeze
 *   and Unsqueeze: the output has the same bytes as the input in the same
 *   order, only the shape differs.
 * Guarantees: nothing changes numerically; a backend may alias a view's
 *   storage to its input instead of copying.
 * Why: these ops are pure metadata on a row-major layout; copying them would
 *   waste DMA bandwidth and memory. */
#include "compiler/passes/passes.h"
#include <string.h>

static const char *const view_ops[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", NULL};

int pass_mark_views(IrGraph *g, AtlErr *e)
{
    (void)e;
    for (int i = 0; i < g->nn; i++) {
        IrNode *n = &g->nodes[i];
        if (n->dead || n->out[0] < 0) continue;
        for (int k = 0; view_ops[k]; k++)
            if (!strcmp(n->op, view_ops[k])) g->t[n->out[0]].is_view = 1;
    }
    return 0;
}
