/* bnfold.c - folds inference BatchNormalization into the preceding
 * Conv or Gemm.
 *
 * Reads: nodes, consumers, constant data, shapes.
 * Does: for BatchNormalization(x = Conv/Gemm output, scale, B, mean, var)
 *   with all four parameters constant, a constant weight (and bias, if any)
 *   on the producer, and x used only by the BN: with a = scale/sqrt(var+eps)
 *   per output channel, writes new constants W' = W*a (per output channel;
 *   for Gemm per column of op(B)) and bias' = (bias - mean)*a + B, points the
 *   producer at them and at the BN's output, and marks the BN dead. New
 *   constants get fresh names, so weights shared with other nodes are left
 *   alone. Gemm is folded only with beta == 1 and a 1-D or absent C.
 * Guarantees: results unchanged up to float rounding; no BN follows a
 *   foldable Conv/Gemm.
 * Why: a BN after a linear op is itself linear; folding removes a whole
 *   pass over the activation tensor. */
#include "compiler/passes/passes.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

static int const_f32(const IrGraph *g, int t, int64_t n)
{
    return t >= 0 && g->t[t].data && g->t[t].dtype == IR_F32 && ir_numel(&g->t[t]) == n;
}

static int fresh_const(IrGraph *g, const char *base, const char *suffix, int ndim, const int64_t *dims, AtlErr *e)
{
    char name[600];
    for (int k = 0;; k++) {
        snprintf(name, sizeof name, k ? "%s%s_%d" : "%s%s", base, suffix, k);
        if (ir_find(g, name) < 0) break;
    }
    return ir_add_const(g, name, IR_F32, ndim, dims, NULL, e);
}

static int fold_one(IrGraph *g, int pi, int bi, AtlErr *e)
{
    IrNode *p = &g->nodes[pi], *bn = &g->nodes[bi];
    int isconv = !strcmp(p->op, "Conv");
    int wt = p->in[1];
    if (wt < 0 || !g->t[wt].data || g->t[wt].dtype != IR_F32) return 0;
    int64_t M;
    int tb = 0;
    if (isconv) M = g->t[wt].dims[0];
    else {
        if (ir_attr_float(p, "beta", 1.0f) != 1.0f || g->t[wt].ndim != 2) return 0;
        tb = (int)ir_attr_int(p, "transB", 0);
        M = g->t[wt].dims[tb ? 0 : 1];
    }
    for (int j = 1; j < 5; j++) if (!const_f32(g, bn->in[j], M)) return 0;
    int bt = p->nin > 2 ? p->in[2] : -1;
    if (bt >= 0 && !const_f32(g, bt, M)) return 0;
    if (bt >= 0 && !isconv && g->t[bt].ndim != 1) return 0;
    float eps = ir_attr_float(bn, "epsilon", 1e-5f);
    /* new weight */
    IrTensor w0 = g->t[wt];
    int nw = fresh_const(g, p->name, "_bnfold_w", w0.ndim, w0.dims, e);
    if (nw < 0) return -1;
    int64_t one[1] = {M};
    int nb = fresh_const(g, p->name, "_bnfold_b", 1, one, e);
    if (nb < 0) return -1;
    p = &g->nodes[pi]; /* tensor table may have moved; nodes did not, but be explicit */
    const float *W = g->t[wt].data, *sc = g->t[bn->in[1]].data, *bb = g->t[bn->in[2]].data;
    const float *mu = g->t[bn->in[3]].data, *va = g->t[bn->in[4]].data, *B0 = bt >= 0 ? g->t[bt].data : NULL;
    float *W1 = g->t[nw].data, *B1 = g->t[nb].data;
    int64_t per = ir_numel(&g->t[wt]) / (M ? M : 1);
    for (int64_t m = 0; m < M; m++) {
        float a = sc[m] / sqrtf(va[m] + eps);
        B1[m] = ((B0 ? B0[m] : 0.0f) - mu[m]) * a + bb[m];
        if (isconv || tb)
            for (int64_t k = 0; k < per; k++) W1[m * per + k] = W[m * per + k] * a;
        else
            for (int64_t k = 0; k < per; k++) W1[k * M + m] = W[k * M + m] * a;
    }
    p->in[1] = nw;
    if (p->nin > 2) p->in[2] = nb;
    else if (ir_node_add_input(g, pi, nb, e)) return -1;
    p = &g->nodes[pi];
    int y = bn->out[0];
    g->t[p->out[0]].producer = -1;
    p->out[0] = y;
    g->t[y].producer = pi;
    bn->dead = 1;
    return 1;
}

int pass_fold_batchnorm(IrGraph *g, AtlErr *e)
{
    IrUses u;
    if (ir_consumers(g, &u, e)) return -1;
    for (int i = 0; i < g->nn; i++) {
        IrNode *bn = &g->nodes[i];
        if (bn->dead || strcmp(bn->op, "BatchNormalization") || bn->nin < 5 || bn->in[0] < 0) continue;
        if (ir_attr_int(bn, "training_mode", 0)) continue; /* uses batch statistics */
        if (bn->nout > 1) { int extra = 0; for (int j = 1; j < bn->nout; j++) if (bn->out[j] >= 0) extra = 1; if (extra) continue; }
        int x = bn->in[0], pi = g->t[x].producer;
        if (pi < 0 || g->nodes[pi].dead || g->t[x].is_output || u.start[x + 1] - u.start[x] != 1) continue;
        const char *op = g->nodes[pi].op;
        if (strcmp(op, "Conv") && strcmp(op, "Gemm")) continue;
        if (g->nodes[pi].out[0] != x || g->nodes[pi].nout != 1) continue;
        if (fold_one(g, pi, i, e) < 0) { ir_uses_free(&u); return -1; }
    }
    ir_uses_free(&u);
    return 0;
}
