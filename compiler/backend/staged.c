/* staged.c - batch-staged schedules (GraphTurbo's idea): the network cut
 * into stages, each with its own micro-batch.
 *
 * Early layers have large activations and small weights, late ones the
 * reverse. One micro-batch for the whole network either overflows the
 * cluster's SRAM early (a large one) or re-reads the late weights for
 * every image (a small one). A staged schedule runs stage s in instances
 * of m_s images (m_s growing), so late weights are read once per m_s
 * images while early activations stay small.
 *
 * This file has the graph side and the search:
 *   - bk_stage_cuts: where the node sequence may be cut: exactly one
 *     non-constant tensor crosses (the stage boundary, written to DRAM by
 *     the stage before and read by the next), it holds the batch in front
 *     (dimension 0 the inputs'; inside attention the batch may sit on
 *     another axis, docs/backend.md "When a graph can be split"), and no
 *     graph output is made before it;
 *   - bk_stage_graph: the graph of one stage (nodes [a, b) of the
 *     canonicalised graph; the tensors crossing in are its inputs, those
 *     crossing out or graph outputs its outputs; tensor indices kept);
 *   - bk_stage_plan: the cuts and micro-batches of least estimated cycles,
 *     by dynamic programming over the cut candidates, from what each unit
 *     of the schedule costs when the whole graph is compiled at each
 *     micro-batch (compile.c prices those), plus the boundary's DRAM
 *     write and read; the whole graph priced as placement chip too, so a
 *     stage may run as one instance of the batch on every core (its
 *     weights read once), entered and left through a chip barrier;
 *   - bk_stage_copy_in: a stage graph that reads its boundary through a
 *     copy, which placement may keep in cluster SRAM (compile.c prices
 *     the stage with and without it);
 *   - bk_copy_before: one reader of an activation reads it through a copy
 *     made just before it (compile.c prices a split stage whose readers
 *     re-read DRAM activations so).
 * compile.c compiles each stage as placement split does a whole graph and
 * emits them one after another into one variant. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "compiler/backend/staged.h"
#include "compiler/ops/infer.h"

/* last[t]: the last node reading t (-1 none). */
static void uses(const IrGraph *g, int *last)
{
    for (int t = 0; t < g->nt; t++) last[t] = -1;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] >= 0) last[n->in[k]] = i;
    }
}

int bk_stage_cuts(const IrGraph *g, int *cuts, int max)
{
    int *last = malloc(((size_t)g->nt + 1) * sizeof *last);
    char *open = calloc((size_t)g->nt + 1, 1);
    if (!last || !open) { free(last); free(open); return -1; }
    uses(g, last);
    int64_t batch = g->nin > 0 && g->t[g->inputs[0]].ndim > 0 ? g->t[g->inputs[0]].dims[0] : -1;
    /* after node i: the tensors made at or before i and read after i */
    int n = 0, crossing = 0, outputs_before = 0;
    for (int i = 0; i < g->nn - 1; i++) {
        const IrNode *nd = &g->nodes[i];
        if (nd->dead) continue;
        for (int k = 0; k < nd->nout; k++) {
            int t = nd->out[k];
            if (t < 0 || g->t[t].data) continue;
            if (g->t[t].is_output) outputs_before = 1;
            if (last[t] > i) { open[t] = 1; crossing++; }
        }
        for (int k = 0; k < nd->nin; k++) {
            int t = nd->in[k];
            if (t >= 0 && open[t] && last[t] == i) { open[t] = 0; crossing--; }
        }
        if (crossing == 1 && !outputs_before && n < max) {
            /* the boundary must hold the batch in front (inside attention it may have moved) */
            int b = -1;
            for (int t = 0; t < g->nt && b < 0; t++) if (open[t]) b = t;
            if (b >= 0 && g->t[b].ndim >= 1 && g->t[b].dims[0] == batch) cuts[n++] = i + 1;
        }
    }
    free(open);
    free(last);
    return n;
}

int bk_stage_boundary(const IrGraph *g, int cut)
{
    for (int t = 0; t < g->nt; t++) {
        const IrTensor *x = &g->t[t];
        if (x->data || x->producer < 0 || x->producer >= cut) continue;
        for (int i = cut; i < g->nn; i++) {
            const IrNode *n = &g->nodes[i];
            if (n->dead) continue;
            for (int k = 0; k < n->nin; k++)
                if (n->in[k] == t) return t;
        }
    }
    return -1;
}

int bk_stage_graph(const IrGraph *g, int a, int b, IrGraph *out, AtlErr *e)
{
    if (ir_clone(g, out, e)) return -1;
    int nt = out->nt;
    char *made = calloc((size_t)nt + 1, 1), *read = calloc((size_t)nt + 1, 1), *later = calloc((size_t)nt + 1, 1);
    int *ins = malloc(((size_t)nt + 1) * sizeof *ins), *outs = malloc(((size_t)nt + 1) * sizeof *outs);
    int rc = -1;
    if (!made || !read || !later || !ins || !outs) { atl_fail(e, "out of memory cutting stages"); goto done; }
    for (int i = 0; i < out->nn; i++) {
        IrNode *n = &out->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] >= 0) {
                if (i >= a && i < b) read[n->in[k]] = 1;
                if (i >= b) later[n->in[k]] = 1;
            }
        if (i >= a && i < b)
            for (int k = 0; k < n->nout; k++)
                if (n->out[k] >= 0) made[n->out[k]] = 1;
        if (i < a || i >= b) n->dead = 1;
    }
    int ni = 0, no = 0;
    for (int t = 0; t < nt; t++) {
        IrTensor *x = &out->t[t];
        int was_out = x->is_output;
        x->is_input = x->is_output = 0;
        if (x->data) continue;
        if (read[t] && !made[t]) { x->is_input = 1; ins[ni++] = t; }
        if (made[t] && (later[t] || was_out)) { x->is_output = 1; outs[no++] = t; }
    }
    /* graph inputs keep their order first (the variant's io order) */
    free(out->inputs);
    free(out->outputs);
    out->inputs = ins;
    out->outputs = outs;
    ins = outs = NULL;
    out->nin = ni;
    out->nout = no;
    ir_compact(out);
    rc = 0;
done:
    free(made); free(read); free(later); free(ins); free(outs);
    if (rc) ir_free(out);
    return rc;
}

/* 1 when the compile of c starts a unit at node pos (or pos is an end). */
static int unit_starts(const BkStageCosts *c, int pos, int nn)
{
    if (pos == 0 || pos == nn) return 1;
    for (int u = 0; u < c->n; u++)
        if (c->first[u] == pos) return 1;
    return 0;
}

int bk_stage_plan(const BkStageCosts *costs, int ncosts, const int *cuts, int ncuts, int nn, int per_cluster,
                  const uint64_t *cut_cycles, uint64_t chip_sync, BkStagePlan *plan)
{
    /* positions: 0, the cuts, nn; a stage from position p to q at micro-batch
     * k costs (per_cluster / m_k) * the units of that compile starting in [p, q)
     * (a chip stage: its units once) */
    int np = ncuts + 2;
    int *pos = malloc((size_t)np * sizeof *pos);
    uint64_t *best = malloc((size_t)np * (size_t)ncosts * sizeof *best);
    int *from = malloc((size_t)np * (size_t)ncosts * sizeof *from);
    int *fromk = malloc((size_t)np * (size_t)ncosts * sizeof *fromk);
    if (!pos || !best || !from || !fromk) { free(pos); free(best); free(from); free(fromk); return -1; }
    pos[0] = 0;
    for (int i = 0; i < ncuts; i++) pos[i + 1] = cuts[i];
    pos[np - 1] = nn;
    for (int i = 0; i < np * ncosts; i++) { best[i] = UINT64_MAX; from[i] = -1; fromk[i] = -1; }
    /* best[q][k]: positions 0..q covered, the last stage at micro-batch k */
    for (int q = 1; q < np; q++)
        for (int k = 0; k < ncosts; k++) {
            const BkStageCosts *c = &costs[k];
            if (c->chip && !unit_starts(c, pos[q], nn)) continue;
            for (int p = 0; p < q; p++) {
                if (c->chip && !unit_starts(c, pos[p], nn)) continue;
                uint64_t stage = 0;
                int units = 0;
                for (int u = 0; u < c->n; u++)
                    if (c->first[u] >= pos[p] && c->first[u] < pos[q]) { stage += c->est[u]; units++; }
                if (!units) continue;
                if (!c->chip) stage *= (uint64_t)(per_cluster / c->m);
                if (p == 0) {
                    if (stage < best[q * ncosts + k]) { best[q * ncosts + k] = stage; from[q * ncosts + k] = 0; fromk[q * ncosts + k] = -1; }
                    continue;
                }
                /* micro-batches grow stage by stage (costs are in growing m, chip last) */
                for (int j = 0; j < k; j++) {
                    uint64_t b = best[p * ncosts + j];
                    if (b == UINT64_MAX) continue;
                    uint64_t tot = b + stage + cut_cycles[p - 1] + (c->chip || costs[j].chip ? chip_sync : 0);
                    if (tot < best[q * ncosts + k]) { best[q * ncosts + k] = tot; from[q * ncosts + k] = p; fromk[q * ncosts + k] = j; }
                }
            }
        }
    int bk = -1;
    for (int k = 0; k < ncosts; k++) {
        uint64_t b = best[(np - 1) * ncosts + k];
        if (b == UINT64_MAX || (costs[k].chip && from[(np - 1) * ncosts + k] == 0)) continue;   /* one chip stage: placement chip */
        if (bk < 0 || b < best[(np - 1) * ncosts + bk]) bk = k;
    }
    int rc = -1;
    if (bk >= 0) {
        int st[BK_MAX_STAGES + 1], sk[BK_MAX_STAGES + 1], n = 0, q = np - 1, k = bk;
        while (q > 0 && n <= BK_MAX_STAGES) {
            st[n] = q;
            sk[n++] = k;
            int p = from[q * ncosts + k], j = fromk[q * ncosts + k];
            q = p;
            k = j;
        }
        if (q == 0 && n <= BK_MAX_STAGES) {
            memset(plan, 0, sizeof *plan);
            plan->n = n;
            plan->est = best[(np - 1) * ncosts + bk];
            plan->start[0] = 0;
            for (int i = 0; i < n; i++) {
                plan->start[i + 1] = pos[st[n - 1 - i]];
                plan->m[i] = costs[sk[n - 1 - i]].m;
                plan->chip[i] = costs[sk[n - 1 - i]].chip;
            }
            rc = 0;
        }
    }
    free(pos); free(best); free(from); free(fromk);
    return rc;
}

/* The copy is an Identity (lowered as DMA copies, lower/move.c) into a new activation
 * tensor named after t; toposort puts it first, as it reads only t. */
int bk_stage_copy_in(IrGraph *sg, int t, AtlErr *e)
{
    if (t < 0 || t >= sg->nt || !sg->t[t].name) return atl_fail(e, "internal: stage input %d has no name to copy", t);
    char name[512];
    snprintf(name, sizeof name, "%s/stage_copy", sg->t[t].name);
    if (ir_find(sg, name) >= 0) return atl_fail(e, "internal: stage input '%s' is copied twice", sg->t[t].name);
    int nn = sg->nn;
    int c = ir_tensor(sg, name, e);
    if (c < 0) return -1;
    for (int i = 0; i < nn; i++) {
        IrNode *n = &sg->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] == t) n->in[k] = c;
    }
    int node = ir_add_node(sg, "Identity", name, e);
    if (node < 0 || ir_node_add_input(sg, node, t, e) || ir_node_add_output(sg, node, c, e)) return -1;
    return ir_toposort(sg, e) || ir_infer_shapes(sg, e) ? -1 : 0;
}

int bk_copy_before(IrGraph *g, int t, int reader, AtlErr *e)
{
    if (t < 0 || t >= g->nt || !g->t[t].name || reader < 0 || reader >= g->nn || g->nodes[reader].dead)
        return atl_fail(e, "internal: no activation %d or reader %d to copy for", t, reader);
    char name[512];
    snprintf(name, sizeof name, "%s/reread_copy", g->t[t].name);
    if (ir_find(g, name) >= 0) return atl_fail(e, "internal: activation '%s' is copied twice", g->t[t].name);
    int c = ir_tensor(g, name, e);
    if (c < 0) return -1;
    IrNode *r = &g->nodes[reader];
    for (int k = 0; k < r->nin; k++)
        if (r->in[k] == t) r->in[k] = c;
    int node = ir_add_node(g, "Identity", name, e);
    if (node < 0 || ir_node_add_input(g, node, t, e) || ir_node_add_output(g, node, c, e)) return -1;
    /* the new node (last) moves to the reader's place, the rest up one */
    IrNode copy = g->nodes[node];
    memmove(&g->nodes[reader + 1], &g->nodes[reader], (size_t)(node - reader) * sizeof copy);
    g->nodes[reader] = copy;
    ir_compact(g);
    return ir_infer_shapes(g, e) ? -1 : 0;
}

int bk_stage_reach(const BkStageCosts *chip, const int *cuts, int ncuts, int start, int nn)
{
    int best = -1;
    for (int i = 0; i < ncuts; i++)
        if (cuts[i] < start && unit_starts(chip, cuts[i], nn)) best = cuts[i];
    return best;
}

int bk_stage_splice(BkStageCosts *c, int from, const BkStageCosts *tail)
{
    int keep = 0;
    for (int u = 0; u < c->n; u++) keep += c->first[u] < from;
    int n = keep + tail->n;
    int *first = malloc((size_t)(n ? n : 1) * sizeof *first);
    uint64_t *est = malloc((size_t)(n ? n : 1) * sizeof *est);
    if (!first || !est) { free(first); free(est); return -1; }
    int k = 0;
    for (int u = 0; u < c->n; u++)
        if (c->first[u] < from) { first[k] = c->first[u]; est[k++] = c->est[u]; }
    for (int u = 0; u < tail->n; u++) { first[k] = tail->first[u]; est[k++] = tail->est[u]; }
    free(c->first);
    free(c->est);
    c->first = first;
    c->est = est;
    c->n = n;
    return 0;
}
