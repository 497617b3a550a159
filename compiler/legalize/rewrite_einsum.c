/* rewrite_einsum.c - Einsum of one or two inputs as ops the chip lowers.
 *
 * Reads: an Einsum node of the backend's private, shape-inferred copy (the
 *   equation parsed by op_einsum_parse, the interpreter's own parser, so
 *   both read it alike).
 * Does: per input, label analysis of the equation:
 *   - a label repeated in one term (a diagonal, "ii->i"): the two axes moved
 *     last by a Transpose, the pair flattened by a Reshape to n*n, and a
 *     Gather of the indices k*(n+1) (stride n+1 walks the diagonal);
 *   - labels in neither the output nor the other input: moved last and
 *     summed by one ReduceSum (adjacent axes);
 *   - two inputs: labels in both and in the output are the batch, in both
 *     but not the output are contracted, the rest belong to one side: A as
 *     [batch, A-only, contracted], B as [batch, contracted, B-only], each
 *     reshaped to 3-D, one batched MatMul, reshaped back;
 *   - a final Transpose to the output's label order.
 *   A float64 (or float16) Einsum works in float32 (the interpreter's
 *   MatMul takes f32 only; on the chip every float tensor has the one
 *   storage dtype, so the Casts copy) and casts the result back.
 * Not lowered (an error naming the node and the equation): more than two
 *   inputs, and a size-1 dimension broadcast against a longer one.
 * Why: every step is a lowering the chip already has, with its tiling and
 * cost model; no Einsum-specific instruction or tile code. */
#include <stdio.h>
#include <string.h>
#include "compiler/legalize/legalize.h"
#include "compiler/ops/ops.h"

typedef struct Ein {
    IrGraph *g;
    OpEinsum q;
    char base[400];
    char what[64];
    int step;
    AtlErr *e;
} Ein;

typedef struct Operand {
    int t;                    /* tensor id */
    char lab[IR_MAXDIM + 1];  /* one label per axis */
} Operand;

/* A fresh name for the next intermediate tensor. */
static const char *next_what(Ein *c, const char *kind)
{
    snprintf(c->what, sizeof c->what, "einsum%d_%s", c->step++, kind);
    return c->what;
}

static int64_t size_of(const Ein *c, char l) { return c->q.size[(unsigned char)l]; }

static int64_t volume(const Ein *c, const char *labs)
{
    int64_t v = 1;
    for (const char *s = labs; *s; s++) v *= size_of(c, *s);
    return v;
}

/* x viewed with the dims of `labs` (or the given dims). */
static int view_dims(Ein *c, int x, const int64_t *dims, int nd)
{
    const IrTensor *t = &c->g->t[x];
    int same = t->ndim == nd;
    for (int i = 0; same && i < nd; i++) same = t->dims[i] == dims[i];
    return same ? x : bk_rw_reshape(c->g, c->base, next_what(c, "view"), x, dims, nd, c->e);
}

static int view_labels(Ein *c, int x, const char *labs)
{
    int64_t dims[IR_MAXDIM];
    int nd = (int)strlen(labs);
    for (int i = 0; i < nd; i++) dims[i] = size_of(c, labs[i]);
    return view_dims(c, x, dims, nd);
}

/* o's axes in the order `to` (a permutation of o's distinct labels). */
static int permute(Ein *c, Operand *o, const char *to)
{
    int64_t perm[IR_MAXDIM];
    int r = (int)strlen(o->lab), id = 1;
    for (int i = 0; i < r; i++) {
        perm[i] = strchr(o->lab, to[i]) - o->lab;
        id &= perm[i] == i;
    }
    if (!id && (o->t = bk_rw_transpose(c->g, c->base, next_what(c, "perm"), o->t, perm, r, -1, c->e)) < 0) return -1;
    memcpy(o->lab, to, (size_t)r + 1);
    return 0;
}

/* Replaces each pair of axes with one label by their diagonal. */
static int take_diagonals(Ein *c, Operand *o)
{
    for (;;) {
        int r = (int)strlen(o->lab), p = -1, q = -1;
        for (int i = 0; i < r && p < 0; i++)
            for (int j = i + 1; j < r; j++)
                if (o->lab[i] == o->lab[j]) { p = i; q = j; break; }
        if (p < 0) return 0;
        int64_t perm[IR_MAXDIM], dims[IR_MAXDIM], n = size_of(c, o->lab[p]), idx[4096];
        char lab[IR_MAXDIM + 1];
        int k = 0, id = 1;
        for (int d = 0; d < r; d++)
            if (d != p && d != q) { lab[k] = o->lab[d]; dims[k] = size_of(c, o->lab[d]); perm[k++] = d; }
        perm[k] = p;
        perm[k + 1] = q;
        for (int d = 0; d < r; d++) id &= perm[d] == d;
        if (n > 4096) return atl_fail(c->e, "einsum diagonal of length %lld (at most 4096)", (long long)n);
        if (!id && (o->t = bk_rw_transpose(c->g, c->base, next_what(c, "diag_perm"), o->t, perm, r, -1, c->e)) < 0)
            return -1;
        dims[k] = n * n;
        if ((o->t = view_dims(c, o->t, dims, k + 1)) < 0) return -1;
        for (int64_t i = 0; i < n; i++) idx[i] = i * (n + 1);
        int ins[2] = {o->t, bk_rw_int_const(c->g, c->base, next_what(c, "diag_idx"), idx, (int)n, c->e)};
        int y = ins[1] < 0 ? -1 : bk_rw_tensor(c->g, c->base, next_what(c, "diag"), c->e), gn;
        if (y < 0 || (gn = bk_rw_node(c->g, "Gather", c->base, ins, 2, y, c->e)) < 0 ||
            ir_set_attr_int(c->g, gn, "axis", k, c->e))
            return -1;
        o->t = y;
        lab[k] = o->lab[p];
        lab[k + 1] = 0;
        memcpy(o->lab, lab, (size_t)k + 2);
    }
}

/* Sums o over the labels in neither the output nor `other`. */
static int sum_out(Ein *c, Operand *o, const char *other)
{
    char order[IR_MAXDIM + 1], summed[IR_MAXDIM + 1];
    int nk = 0, ns = 0, r = (int)strlen(o->lab);
    for (int i = 0; i < r; i++) {
        char l = o->lab[i];
        if (strchr(c->q.out, l) || strchr(other, l)) order[nk++] = l;
        else summed[ns++] = l;
    }
    if (!ns) return 0;
    memcpy(order + nk, summed, (size_t)ns);
    order[r] = 0;
    if (permute(c, o, order)) return -1;
    int64_t axes[IR_MAXDIM];
    for (int i = 0; i < ns; i++) axes[i] = nk + i;
    o->t = bk_rw_reduce(c->g, "ReduceSum", c->base, next_what(c, "sum"), o->t, axes, ns, 0, -1, c->e);
    o->lab[nk] = 0;
    return o->t < 0 ? -1 : 0;
}

/* Labels of a that pass `keep` (in b or not, in the output or not). */
static void pick(const char *a, const char *b, int in_b, const char *out, int in_out, char *dst)
{
    int k = 0;
    for (const char *s = a; *s; s++)
        if ((strchr(b, *s) != NULL) == in_b && (strchr(out, *s) != NULL) == in_out) dst[k++] = *s;
    dst[k] = 0;
}

/* a and b (distinct labels each, all in the output or the other) as one
 * batched MatMul; the result in a. */
static int contract(Ein *c, Operand *a, Operand *b)
{
    char bat[IR_MAXDIM + 1], con[IR_MAXDIM + 1], ao[IR_MAXDIM + 1], bo[IR_MAXDIM + 1], t[3 * IR_MAXDIM + 1];
    pick(a->lab, b->lab, 1, c->q.out, 1, bat);
    pick(a->lab, b->lab, 1, c->q.out, 0, con);
    pick(a->lab, b->lab, 0, c->q.out, 1, ao);
    pick(b->lab, a->lab, 0, c->q.out, 1, bo);
    if (strlen(bat) + strlen(ao) + strlen(bo) > IR_MAXDIM) return atl_fail(c->e, "einsum result of rank above %d", IR_MAXDIM);
    snprintf(t, sizeof t, "%s%s%s", bat, ao, con);
    if (permute(c, a, t)) return -1;
    snprintf(t, sizeof t, "%s%s%s", bat, con, bo);
    if (permute(c, b, t)) return -1;
    int64_t B = volume(c, bat), M = volume(c, ao), K = volume(c, con), N = volume(c, bo);
    int64_t ad[3] = {B, M, K}, bd[3] = {B, K, N};
    int ins[2] = {view_dims(c, a->t, ad, 3), view_dims(c, b->t, bd, 3)};
    if (ins[0] < 0 || ins[1] < 0) return -1;
    int mm = bk_rw_op(c->g, "MatMul", c->base, next_what(c, "mm"), ins, 2, c->e);
    snprintf(t, sizeof t, "%s%s%s", bat, ao, bo);
    if (mm < 0 || (a->t = view_labels(c, mm, t)) < 0) return -1;
    memcpy(a->lab, t, strlen(t) + 1);
    return 0;
}

/* Makes the node that produced `last` write y instead (a copy when `last`
 * is a graph tensor that no new node produced). */
static int write_to(Ein *c, int last, int y, int first_new_node)
{
    IrGraph *g = c->g;
    int k = g->nn - 1;
    if (k >= first_new_node && g->nodes[k].nout >= 1 && g->nodes[k].out[0] == last) {
        g->nodes[k].out[0] = y;
        g->t[last].producer = -1;
        g->t[y].producer = k;
        return 0;
    }
    return bk_rw_reshape_to(g, c->base, next_what(c, "copy"), last, g->t[y].dims, g->t[y].ndim, y, c->e) < 0 ? -1 : 0;
}

static int cast(Ein *c, int x, int to, int out)
{
    int y = out >= 0 ? out : bk_rw_tensor(c->g, c->base, next_what(c, "f32"), c->e), k;
    if (y < 0 || (k = bk_rw_node(c->g, "Cast", c->base, &x, 1, y, c->e)) < 0 || ir_set_attr_int(c->g, k, "to", to, c->e))
        return -1;
    return y;
}

int bk_rewrite_einsum(IrGraph *g, int node, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    const char *eq = ir_attr_str(n, "equation", "?"), *name = n->name ? n->name : "?";
    Ein c = {.g = g, .e = e};
    IrTensor *ins[2] = {NULL, NULL}, *outs[1] = {&g->t[n->out[0]]};
    if (n->nin > 2)
        return atl_fail(e, "node '%s' (Einsum): equation '%s' has %d inputs (at most 2 are lowered)", name, eq, n->nin);
    for (int i = 0; i < n->nin; i++) ins[i] = &g->t[n->in[i]];
    IrOpCtx oc = {.n = n, .opset = g->opset, .in = ins, .nin = n->nin, .out = outs, .nout = 1, .e = e};
    if (op_einsum_parse(&oc, &c.q)) return -1;
    Operand op[2];
    int nin = n->nin, y = n->out[0], first = g->nn, wide = g->t[y].dtype != IR_F32;
    for (int i = 0; i < nin; i++) {
        const IrTensor *t = &g->t[n->in[i]];
        for (int d = 0; d < t->ndim; d++)
            if (t->dims[d] != c.q.size[(unsigned char)c.q.in[i][d]])
                return atl_fail(e, "node '%s' (Einsum): equation '%s' broadcasts a size-1 dimension (not lowered)", name, eq);
        op[i].t = n->in[i];
        memcpy(op[i].lab, c.q.in[i], sizeof op[i].lab);
    }
    snprintf(c.base, sizeof c.base, "%s", g->t[y].name);
    for (int i = 0; i < nin; i++) {
        if (wide && (op[i].t = cast(&c, op[i].t, IR_F32, -1)) < 0) return -1;
        if (take_diagonals(&c, &op[i]) || sum_out(&c, &op[i], nin == 2 ? op[1 - i].lab : "")) return -1;
    }
    if (nin == 2 && contract(&c, &op[0], &op[1])) return -1;
    if (permute(&c, &op[0], c.q.out)) return -1;
    if (wide) return cast(&c, op[0].t, g->t[y].dtype, y) < 0 ? -1 : 0;
    return write_to(&c, op[0].t, y, first);
}
