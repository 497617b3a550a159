/* dead.c - dead-node removal.
 *
 * Reads: nodes, graph outputs.
 * Does: marks dead every node none of whose outputs is a graph output or
 *   read by a live node, repeating backwards until nothing changes, then
 *   drops dead nodes and constants no live node reads.
 * Guarantees: results unchanged; every live node contributes to an output.
 * Why: folding and rewiring leave orphans (Shape chains, BN parameters)
 *   that would otherwise be compiled and stored. */
#include "compiler/passes/passes.h"
#include <stdlib.h>

int pass_remove_dead(IrGraph *g, AtlErr *e)
{
    int *uses = calloc((size_t)g->nt + 1, sizeof *uses);
    if (!uses) return atl_fail(e, "out of memory");
    for (int i = 0; i < g->nn; i++)
        if (!g->nodes[i].dead)
            for (int j = 0; j < g->nodes[i].nin; j++) if (g->nodes[i].in[j] >= 0) uses[g->nodes[i].in[j]]++;
    for (int i = g->nn - 1; i >= 0; i--) {
        IrNode *n = &g->nodes[i];
        if (n->dead) continue;
        int live = 0;
        for (int j = 0; j < n->nout; j++) {
            int t = n->out[j];
            if (t >= 0 && (uses[t] || g->t[t].is_output)) live = 1;
        }
        if (live) continue;
        n->dead = 1;
        for (int j = 0; j < n->nin; j++) if (n->in[j] >= 0) uses[n->in[j]]--;
    }
    for (int t = 0; t < g->nt; t++)
        if (g->t[t].data && !uses[t] && !g->t[t].is_output) {
            free(g->t[t].data);
            g->t[t].data = NULL;
            g->t[t].ndim = -1;
            g->t[t].dtype = 0;
        }
    free(uses);
    ir_compact(g);
    return 0;
}
