/* pattern.c - absorbs nodes into their neighbours before lowering.
 *
 * Reads: the graph, IrNode.act marks of passes/fuse.c.
 * Does:
 *   - fused activations: a producer with `act` set applies the activation
 *     in its epilogue; the activation node is skipped and the producer's
 *     output shares storage with the activation's output (its only
 *     consumer), so the intermediate never exists in DRAM;
 *   - the Gelu pattern PyTorch exports (erf form):
 *       d = x / sqrt(2); e = Erf(d); a = e + 1; m = x * a; y = m * 0.5
 *     (either operand order of the Add/Muls) becomes one v.gelu layer at the
 *     last Mul; the inner nodes are skipped when nothing else uses them;
 *   - residual tails (unless grouping is off, BkCtx.grouping): an Add of
 *     two same-shaped float tensors, one of them
 *     the output of a Conv that nothing else reads, is absorbed into that
 *     Conv's epilogue (BkCtx.tail; its fused activation too) when its other
 *     operand exists before the Conv runs (a graph input, or produced by
 *     an earlier node). The Conv then writes the Add's output: its own
 *     output shares the Add's storage and never exists in DRAM. Of two
 *     Conv operands, the later one takes the Add (the earlier one's output
 *     is then the residual).
 * Guarantees: every skipped node's result is either unused or equal to a
 *   tensor that the absorbing layer writes.
 * Why: the vector unit has gelu but no erf, and fusing saves DRAM round
 *   trips (a residual Add alone is a DRAM-bound layer: two reads and a
 *   write per element). */
#include <string.h>
#include <math.h>
#include "compiler/legalize/legalize.h"

static int is_op(const IrNode *n, const char *op) { return !strcmp(n->op, op); }

/* 1 and *v when tensor t is a constant with a single value. */
static int scalar_const(const IrGraph *g, int t, double *v)
{
    if (t < 0 || !g->t[t].data || ir_numel(&g->t[t]) != 1) return 0;
    *v = ir_get_f(&g->t[t], 0);
    return 1;
}

static int single_use(const IrUses *u, int t) { return u->start[t + 1] - u->start[t] == 1; }
static int only_user(const IrUses *u, int t) { return u->list[u->start[t]]; }

/* Other operand of a binary node n, given one operand t; -1 if n doesn't take t. */
static int other_in(const IrNode *n, int t)
{
    if (n->nin != 2) return -1;
    if (n->in[0] == t) return n->in[1];
    if (n->in[1] == t) return n->in[0];
    return -1;
}

static void match_gelu(BkCtx *c, const IrUses *u, int erf_node)
{
    const IrGraph *g = c->g;
    const IrNode *en = &g->nodes[erf_node];
    int d = en->in[0];
    if (d < 0 || g->t[d].producer < 0) return;
    int dn = g->t[d].producer;
    const IrNode *dv = &g->nodes[dn];
    double k;
    int x = -1;
    if (is_op(dv, "Div") && scalar_const(g, dv->in[1], &k) && fabs(k - sqrt(2.0)) < 1e-3) x = dv->in[0];
    else if (is_op(dv, "Mul") && scalar_const(g, dv->in[1], &k) && fabs(k - sqrt(0.5)) < 1e-3) x = dv->in[0];
    else if (is_op(dv, "Mul") && scalar_const(g, dv->in[0], &k) && fabs(k - sqrt(0.5)) < 1e-3) x = dv->in[1];
    if (x < 0 || !single_use(u, d)) return;
    int e = en->out[0];
    if (!single_use(u, e)) return;
    int an = only_user(u, e);
    const IrNode *ad = &g->nodes[an];
    int one = other_in(ad, e);
    if (!is_op(ad, "Add") || !scalar_const(g, one, &k) || k != 1.0) return;
    int a = ad->out[0];
    if (!single_use(u, a)) return;
    int mn = only_user(u, a);
    const IrNode *m1 = &g->nodes[mn];
    int m = m1->out[0];
    if (!is_op(m1, "Mul") || other_in(m1, a) != x || !single_use(u, m)) return;
    int ln = only_user(u, m);
    const IrNode *m2 = &g->nodes[ln];
    if (!is_op(m2, "Mul") || !scalar_const(g, other_in(m2, m), &k) || k != 0.5) return;
    if (g->t[d].is_output || g->t[e].is_output || g->t[a].is_output || g->t[m].is_output) return;
    c->skip[dn] = c->skip[erf_node] = c->skip[an] = c->skip[mn] = 1;
    c->gelu_src[ln] = x;
}

static int same_shape(const IrTensor *a, const IrTensor *b)
{
    if (a->ndim != b->ndim) return 0;
    for (int d = 0; d < a->ndim; d++) if (a->dims[d] != b->dims[d]) return 0;
    return 1;
}

static int is_float(int irdt) { return irdt == IR_F32 || irdt == IR_F16 || irdt == IR_BF16 || irdt == IR_F64; }

static void match_tail(BkCtx *c, const IrUses *u, int an)
{
    const IrGraph *g = c->g;
    const IrNode *a = &g->nodes[an];
    if (a->nin != 2 || a->nout < 1 || a->out[0] < 0 || a->in[0] < 0 || a->in[1] < 0) return;
    const IrTensor *y = &g->t[a->out[0]];
    if (!is_float(y->dtype)) return;
    int best = -1, bk = -1;
    for (int k = 0; k < 2; k++) {
        int t = a->in[k], q = a->in[1 - k], p = g->t[t].producer;
        const IrTensor *x = &g->t[t], *r = &g->t[q];
        if (p < 0 || x->data || r->data || x->is_output || !same_shape(x, y) || !same_shape(r, y)) continue;
        if (!is_op(&g->nodes[p], "Conv") || c->skip[p] || c->tail[p] >= 0 || !single_use(u, t)) continue;
        if (r->producer >= p) continue;   /* the residual must exist when the Conv runs */
        if (p > best) { best = p; bk = k; }
    }
    if (best < 0) return;
    c->skip[an] = 1;
    c->tail[best] = an;
    c->pl[a->in[bk]].root = a->out[0];
}

int bk_match_patterns(BkCtx *c, AtlErr *e)
{
    const IrGraph *g = c->g;
    IrUses u;
    if (ir_consumers(g, &u, e)) return -1;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead) continue;
        if (is_op(n, "Erf")) match_gelu(c, &u, i);
    }
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead || !n->act[0] || c->skip[i] || n->nout < 1) continue;
        int t = n->out[0];
        if (t < 0 || !single_use(&u, t)) continue;
        int an = only_user(&u, t);
        if (c->skip[an]) continue;
        c->skip[an] = 1;
        c->act_on[i] = 1;
        c->pl[t].root = g->nodes[an].out[0];
    }
    for (int i = 0; c->grouping && i < g->nn; i++)
        if (!g->nodes[i].dead && !c->skip[i] && is_op(&g->nodes[i], "Add")) match_tail(c, &u, i);
    ir_uses_free(&u);
    return 0;
}
