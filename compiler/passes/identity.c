/* identity.c - removes Identity and inference-mode Dropout nodes.
 *
 * Reads: nodes, graph inputs/outputs.
 * Does: for each live Identity, or Dropout whose mask output is absent or
 *   unused and which has no training_mode input, rewires every consumer of
 *   the node's output to read its input instead. When the output is a graph
 *   output (whose name must survive), the producer of the input is made to
 *   write the output tensor directly, provided the input is produced by a
 *   node and is itself neither a graph output nor used elsewhere.
 * Guarantees: results unchanged; no live Identity/Dropout remains unless
 *   it connects a graph input or constant straight to a graph output.
 * Why: they are no-ops at inference time; removing them shortens chains
 *   that later pattern-matching passes (BatchNorm folding, fusion) look at. */
#include "compiler/passes/passes.h"
#include <string.h>

static int used_elsewhere(const IrGraph *g, int t, int except)
{
    for (int i = 0; i < g->nn; i++) {
        if (i == except || g->nodes[i].dead) continue;
        for (int j = 0; j < g->nodes[i].nin; j++) if (g->nodes[i].in[j] == t) return 1;
    }
    return 0;
}

int pass_remove_identity(IrGraph *g, AtlErr *e)
{
    (void)e;
    for (int i = 0; i < g->nn; i++) {
        IrNode *n = &g->nodes[i];
        if (n->dead || n->nin < 1 || n->in[0] < 0 || n->out[0] < 0) continue;
        int isid = !strcmp(n->op, "Identity");
        int isdrop = !strcmp(n->op, "Dropout") && n->nin < 3 &&
                     (n->nout < 2 || n->out[1] < 0 || (!used_elsewhere(g, n->out[1], -1) && !g->t[n->out[1]].is_output));
        if (!isid && !isdrop) continue;
        int src = n->in[0], dst = n->out[0];
        if (g->t[dst].is_output) {
            int p = g->t[src].producer;
            if (p < 0 || g->nodes[p].dead || g->t[src].is_output || used_elsewhere(g, src, i)) continue;
            for (int j = 0; j < g->nodes[p].nout; j++) if (g->nodes[p].out[j] == src) g->nodes[p].out[j] = dst;
            g->t[dst].producer = p;
            g->t[src].producer = -1;
        } else {
            for (int k = 0; k < g->nn; k++) {
                if (g->nodes[k].dead) continue;
                for (int j = 0; j < g->nodes[k].nin; j++) if (g->nodes[k].in[j] == dst) g->nodes[k].in[j] = src;
            }
        }
        n->dead = 1;
    }
    return 0;
}
