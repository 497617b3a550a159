/* fuse.c - activation fusion marks.
 *
 * Reads: nodes, consumers.
 * Does: when a Conv, ConvTranspose, Gemm, MatMul or Add output feeds exactly
 *   one node, that node is an activation (Relu, LeakyRelu, Clip with
 *   constant bounds, Sigmoid, Tanh, HardSigmoid, HardSwish) and the output is
 *   not a graph output, records the activation and its parameters in the
 *   producer (IrNode.act, act_alpha, act_beta).
 * Guarantees: the graph still computes the same values (the activation node
 *   stays and the interpreter runs it); a backend may apply the activation
 *   in the producer's epilogue and skip the activation node.
 * Why: applying the activation while the result is still in the compute
 *   unit's registers saves a full round trip through memory. */
#include "compiler/passes/passes.h"
#include <string.h>
#include <float.h>

static const char *const producers[] = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Add", NULL};
static const char *const acts[] = {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", NULL};

static int in_list(const char *op, const char *const *l)
{
    for (int i = 0; l[i]; i++) if (!strcmp(op, l[i])) return 1;
    return 0;
}

int pass_fuse_activations(IrGraph *g, AtlErr *e)
{
    IrUses u;
    if (ir_consumers(g, &u, e)) return -1;
    for (int i = 0; i < g->nn; i++) {
        IrNode *p = &g->nodes[i];
        if (p->dead || !in_list(p->op, producers) || p->out[0] < 0) continue;
        int t = p->out[0];
        if (g->t[t].is_output || u.start[t + 1] - u.start[t] != 1) continue;
        IrNode *a = &g->nodes[u.list[u.start[t]]];
        if (a->dead || !in_list(a->op, acts) || a->in[0] != t) continue;
        float alpha = 0, beta = 0;
        if (!strcmp(a->op, "LeakyRelu")) alpha = ir_attr_float(a, "alpha", 0.01f);
        else if (!strcmp(a->op, "HardSigmoid")) { alpha = ir_attr_float(a, "alpha", 0.2f); beta = ir_attr_float(a, "beta", 0.5f); }
        else if (!strcmp(a->op, "Clip")) {
            if (g->opset < 11) { alpha = ir_attr_float(a, "min", -FLT_MAX); beta = ir_attr_float(a, "max", FLT_MAX); }
            else {
                alpha = -FLT_MAX; beta = FLT_MAX;
                if (a->nin > 1 && a->in[1] >= 0) { if (!g->t[a->in[1]].data) continue; alpha = (float)ir_get_f(&g->t[a->in[1]], 0); }
                if (a->nin > 2 && a->in[2] >= 0) { if (!g->t[a->in[2]].data) continue; beta = (float)ir_get_f(&g->t[a->in[2]], 0); }
            }
        }
        snprintf(p->act, sizeof p->act, "%s", a->op);
        p->act_alpha = alpha;
        p->act_beta = beta;
    }
    ir_uses_free(&u);
    return 0;
}
