/* ir.c - graph IR construction, dtype helpers, topological sort, verifier
 * and printer (see ir/ir.h). */
#include "compiler/ir/ir.h"
#include "util/limits.h"
#include <stdlib.h>
#include <string.h>
#include <math.h>

static const struct { const char *name; size_t size; } dtype_info[IR_NDTYPES] = {
    {"undefined", 0}, {"float32", 4}, {"uint8", 1}, {"int8", 1}, {"uint16", 2},
    {"int16", 2}, {"int32", 4}, {"int64", 8}, {"string", 0}, {"bool", 1},
    {"float16", 2}, {"float64", 8}, {"uint32", 4}, {"uint64", 8},
    {"complex64", 0}, {"complex128", 0}, {"bfloat16", 2},
};

size_t ir_dtype_size(int dtype)
{
    return dtype > 0 && dtype < IR_NDTYPES ? dtype_info[dtype].size : 0;
}

const char *ir_dtype_name(int dtype)
{
    return dtype >= 0 && dtype < IR_NDTYPES ? dtype_info[dtype].name : "invalid";
}

int64_t ir_numel(const IrTensor *t)
{
    if (t->ndim < 0) return -1;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->dims[i] < 0) return -1;
        if (t->dims[i] && n > INT64_MAX / 4 / t->dims[i]) return -1; /* absurd: treat as unknown */
        n *= t->dims[i];
    }
    return n;
}

int ir_shape_known(const IrTensor *t) { return ir_numel(t) >= 0; }

size_t ir_nbytes(const IrTensor *t)
{
    int64_t n = ir_numel(t);
    return n < 0 ? 0 : (size_t)n * ir_dtype_size(t->dtype);
}

float ir_half_to_float(uint16_t h)
{
    int s = h >> 15, ex = (h >> 10) & 31, m = h & 1023;
    float v;
    if (ex == 0) v = ldexpf((float)m, -24);
    else if (ex == 31) v = m ? NAN : INFINITY;
    else v = ldexpf((float)(m | 1024), ex - 25);
    return s ? -v : v;
}

uint16_t ir_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t s = (uint16_t)((x >> 16) & 0x8000);
    int ex = (int)((x >> 23) & 255);
    uint32_t m = x & 0x7fffff;
    if (ex == 255) return (uint16_t)(s | 0x7c00 | (m ? 0x200 : 0));
    int e = ex - 127 + 15;
    if (e >= 31) return (uint16_t)(s | 0x7c00);
    if (e <= 0) {
        if (e < -10) return s;
        m |= 0x800000;
        int shift = 14 - e;
        uint32_t hm = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (hm & 1))) hm++;
        return (uint16_t)(s | hm);
    }
    uint32_t hm = m >> 13, rem = m & 0x1fff;
    uint32_t out = ((uint32_t)e << 10) | hm;
    if (rem > 0x1000 || (rem == 0x1000 && (hm & 1))) out++;
    return (uint16_t)(s | out);
}

static float bf16_to_float(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if (isnan(f)) return 0x7fc0;
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

double ir_get_f(const IrTensor *t, int64_t i)
{
    const void *d = t->data;
    switch (t->dtype) {
    case IR_F32: return ((const float *)d)[i];
    case IR_F64: return ((const double *)d)[i];
    case IR_F16: return ir_half_to_float(((const uint16_t *)d)[i]);
    case IR_BF16: return bf16_to_float(((const uint16_t *)d)[i]);
    case IR_U8: return ((const uint8_t *)d)[i];
    case IR_I8: return ((const int8_t *)d)[i];
    case IR_U16: return ((const uint16_t *)d)[i];
    case IR_I16: return ((const int16_t *)d)[i];
    case IR_I32: return ((const int32_t *)d)[i];
    case IR_I64: return (double)((const int64_t *)d)[i];
    case IR_U32: return ((const uint32_t *)d)[i];
    case IR_U64: return (double)((const uint64_t *)d)[i];
    case IR_BOOL: return ((const uint8_t *)d)[i] != 0;
    default: return 0;
    }
}

int64_t ir_get_i(const IrTensor *t, int64_t i)
{
    const void *d = t->data;
    switch (t->dtype) {
    case IR_I64: return ((const int64_t *)d)[i];
    case IR_U64: return (int64_t)((const uint64_t *)d)[i];
    case IR_I32: return ((const int32_t *)d)[i];
    case IR_U32: return ((const uint32_t *)d)[i];
    case IR_U8: return ((const uint8_t *)d)[i];
    case IR_I8: return ((const int8_t *)d)[i];
    case IR_U16: return ((const uint16_t *)d)[i];
    case IR_I16: return ((const int16_t *)d)[i];
    case IR_BOOL: return ((const uint8_t *)d)[i] != 0;
    default: {
        double v = ir_get_f(t, i);
        if (!(v == v)) return 0;
        if (v >= 9.2e18) return INT64_MAX;
        if (v <= -9.2e18) return INT64_MIN;
        return (int64_t)v;
    }
    }
}

void ir_set_f(IrTensor *t, int64_t i, double v)
{
    void *d = t->data;
    switch (t->dtype) {
    case IR_F32: ((float *)d)[i] = (float)v; return;
    case IR_F64: ((double *)d)[i] = v; return;
    case IR_F16: ((uint16_t *)d)[i] = ir_float_to_half((float)v); return;
    case IR_BF16: ((uint16_t *)d)[i] = float_to_bf16((float)v); return;
    case IR_BOOL: ((uint8_t *)d)[i] = v != 0; return;
    default:
        if (!(v == v)) v = 0;
        if (v > 9.2e18) v = 9.2e18;
        if (v < -9.2e18) v = -9.2e18;
        ir_set_i(t, i, (int64_t)v);
    }
}

void ir_set_i(IrTensor *t, int64_t i, int64_t v)
{
    void *d = t->data;
    switch (t->dtype) {
    case IR_I64: ((int64_t *)d)[i] = v; return;
    case IR_U64: ((uint64_t *)d)[i] = (uint64_t)v; return;
    case IR_I32: ((int32_t *)d)[i] = (int32_t)(uint32_t)v; return;
    case IR_U32: ((uint32_t *)d)[i] = (uint32_t)v; return;
    case IR_U8: ((uint8_t *)d)[i] = (uint8_t)v; return;
    case IR_I8: ((int8_t *)d)[i] = (int8_t)(uint8_t)v; return;
    case IR_U16: ((uint16_t *)d)[i] = (uint16_t)v; return;
    case IR_I16: ((int16_t *)d)[i] = (int16_t)(uint16_t)v; return;
    case IR_BOOL: ((uint8_t *)d)[i] = v != 0; return;
    default: ir_set_f(t, i, (double)v);
    }
}

const char *ir_shape_str(const IrTensor *t, char *buf, size_t n)
{
    if (t->ndim < 0) { snprintf(buf, n, "?"); return buf; }
    if (t->ndim == 0) { snprintf(buf, n, "scalar"); return buf; }
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < t->ndim && k < n; i++) {
        if (t->dims[i] < 0) k += (size_t)snprintf(buf + k, n - k, "%s?", i ? "x" : "");
        else k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "x" : "", (long long)t->dims[i]);
    }
    return buf;
}

char *ir_strdup(const char *s)
{
    size_t n = strlen(s ? s : "");
    char *p = malloc(n + 1);
    if (p) memcpy(p, s ? s : "", n + 1);
    return p;
}

void ir_init(IrGraph *g)
{
    memset(g, 0, sizeof *g);
    g->opset = 13;
}

void ir_tensor_free_contents(IrTensor *t)
{
    free(t->name);
    free(t->data);
    t->name = NULL;
    t->data = NULL;
}

void ir_attr_free(IrAttr *a)
{
    free(a->name);
    free(a->s);
    free(a->floats);
    free(a->ints);
    if (a->t) { ir_tensor_free_contents(a->t); free(a->t); }
    memset(a, 0, sizeof *a);
}

static void node_free(IrNode *n)
{
    free(n->name); free(n->op); free(n->domain);
    for (int i = 0; i < n->nattrs; i++) ir_attr_free(&n->attrs[i]);
    free(n->attrs); free(n->in); free(n->out);
    memset(n, 0, sizeof *n);
}

void ir_free(IrGraph *g)
{
    for (int i = 0; i < g->nt; i++) ir_tensor_free_contents(&g->t[i]);
    for (int i = 0; i < g->nn; i++) node_free(&g->nodes[i]);
    free(g->t); free(g->nodes); free(g->inputs); free(g->outputs);
    free(g->name); free(g->hash);
    memset(g, 0, sizeof *g);
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

int ir_find(const IrGraph *g, const char *name)
{
    if (!g->hcap) return -1;
    size_t m = g->hcap - 1, h = (size_t)name_hash(name) & m;
    for (;; h = (h + 1) & m) {
        int k = g->hash[h];
        if (k < 0) return -1;
        if (!strcmp(g->t[k].name, name)) return k;
    }
}

static int hash_insert(IrGraph *g, int k, AtlErr *e)
{
    if ((size_t)(g->nt + 1) * 2 > g->hcap) {
        size_t cap = g->hcap ? g->hcap * 2 : 64;
        int *h = malloc(cap * sizeof *h);
        if (!h) return atl_fail(e, "out of memory growing the tensor table");
        for (size_t i = 0; i < cap; i++) h[i] = -1;
        free(g->hash);
        g->hash = h;
        g->hcap = cap;
        for (int i = 0; i < g->nt; i++) {
            if (i == k) continue;
            size_t p = (size_t)name_hash(g->t[i].name) & (cap - 1);
            while (h[p] >= 0) p = (p + 1) & (cap - 1);
            h[p] = i;
        }
    }
    size_t p = (size_t)name_hash(g->t[k].name) & (g->hcap - 1);
    while (g->hash[p] >= 0) p = (p + 1) & (g->hcap - 1);
    g->hash[p] = k;
    return 0;
}

int ir_tensor(IrGraph *g, const char *name, AtlErr *e)
{
    int k = ir_find(g, name);
    if (k >= 0) return k;
    if (g->nt == g->capt) {
        int cap = g->capt ? g->capt * 2 : 64;
        IrTensor *t = realloc(g->t, (size_t)cap * sizeof *t);
        if (!t) return atl_fail(e, "out of memory adding tensor '%s'", name);
        g->t = t;
        g->capt = cap;
    }
    IrTensor *t = &g->t[g->nt];
    memset(t, 0, sizeof *t);
    t->name = ir_strdup(name);
    if (!t->name) return atl_fail(e, "out of memory adding tensor '%s'", name);
    t->ndim = -1;
    t->producer = -1;
    k = g->nt;
    if (hash_insert(g, k, e)) { free(t->name); return -1; }
    g->nt++;
    return k;
}

int ir_add_node(IrGraph *g, const char *op, const char *name, AtlErr *e)
{
    if (g->nn == g->capn) {
        int cap = g->capn ? g->capn * 2 : 64;
        IrNode *n = realloc(g->nodes, (size_t)cap * sizeof *n);
        if (!n) return atl_fail(e, "out of memory adding node '%s'", name);
        g->nodes = n;
        g->capn = cap;
    }
    IrNode *n = &g->nodes[g->nn];
    memset(n, 0, sizeof *n);
    n->op = ir_strdup(op);
    n->name = ir_strdup(name);
    n->domain = ir_strdup("");
    if (!n->op || !n->name || !n->domain) { node_free(n); return atl_fail(e, "out of memory adding node '%s'", name); }
    return g->nn++;
}

static int push_int(int **arr, int *n, int v)
{
    int *p = realloc(*arr, (size_t)(*n + 1) * sizeof *p);
    if (!p) return -1;
    p[(*n)++] = v;
    *arr = p;
    return 0;
}

int ir_node_add_input(IrGraph *g, int node, int tensor, AtlErr *e)
{
    IrNode *n = &g->nodes[node];
    if (push_int(&n->in, &n->nin, tensor)) return atl_fail(e, "out of memory in node '%s'", n->name);
    return 0;
}

int ir_node_add_output(IrGraph *g, int node, int tensor, AtlErr *e)
{
    IrNode *n = &g->nodes[node];
    if (push_int(&n->out, &n->nout, tensor)) return atl_fail(e, "out of memory in node '%s'", n->name);
    return 0;
}

IrAttr *ir_node_add_attr(IrGraph *g, int node, const char *name, int type, AtlErr *e)
{
    IrNode *n = &g->nodes[node];
    for (int i = 0; i < n->nattrs; i++) {   /* setting a name again replaces it (ir_attr finds the first) */
        IrAttr *old = &n->attrs[i];
        if (strcmp(old->name, name)) continue;
        char *keep = old->name;
        old->name = NULL;
        ir_attr_free(old);
        old->name = keep;
        old->type = type;
        return old;
    }
    IrAttr *a = realloc(n->attrs, (size_t)(n->nattrs + 1) * sizeof *a);
    if (!a) { atl_fail(e, "out of memory in node '%s'", n->name); return NULL; }
    n->attrs = a;
    a = &a[n->nattrs];
    memset(a, 0, sizeof *a);
    a->name = ir_strdup(name);
    if (!a->name) { atl_fail(e, "out of memory in node '%s'", n->name); return NULL; }
    a->type = type;
    n->nattrs++;
    return a;
}

int ir_alloc_data(IrTensor *t, AtlErr *e)
{
    int64_t n = ir_numel(t);
    size_t es = ir_dtype_size(t->dtype);
    if (n < 0) return atl_fail(e, "tensor '%s': cannot allocate data for an unknown shape", t->name);
    if (!es) return atl_fail(e, "tensor '%s': dtype %s is not supported", t->name, ir_dtype_name(t->dtype));
    uint64_t max = atl_limit(ATL_LIMIT_TENSOR_BYTES);
    if ((uint64_t)n > max / es) {
        char sh[128];
        return atl_fail(e, "tensor '%s' (%s %s) needs %.0f bytes, more than the limit of %llu bytes for one tensor "
                        "(raise with ATOLL_MAX_TENSOR_BYTES)", t->name, ir_dtype_name(t->dtype), ir_shape_str(t, sh, sizeof sh),
                        (double)n * (double)es, (unsigned long long)max);
    }
    free(t->data);
    t->data = calloc((size_t)(n ? n : 1), es);
    if (!t->data) return atl_fail(e, "tensor '%s': out of memory for %lld elements", t->name, (long long)n);
    return 0;
}

const IrAttr *ir_attr(const IrNode *n, const char *name)
{
    for (int i = 0; i < n->nattrs; i++)
        if (!strcmp(n->attrs[i].name, name)) return &n->attrs[i];
    return NULL;
}

int64_t ir_attr_int(const IrNode *n, const char *name, int64_t dflt)
{
    const IrAttr *a = ir_attr(n, name);
    if (!a) return dflt;
    if (a->type == IR_ATTR_FLOAT) {
        /* a float where an int belongs: saturate, so that a range check
         * downstream rejects it instead of the conversion being undefined */
        if (!(a->f == a->f)) return dflt;
        if (a->f >= 9.2e18f) return INT64_MAX;
        if (a->f <= -9.2e18f) return INT64_MIN;
        return (int64_t)a->f;
    }
    return a->i;
}

float ir_attr_float(const IrNode *n, const char *name, float dflt)
{
    const IrAttr *a = ir_attr(n, name);
    if (!a) return dflt;
    if (a->type == IR_ATTR_INT) return (float)a->i;
    return a->f;
}

const char *ir_attr_str(const IrNode *n, const char *name, const char *dflt)
{
    const IrAttr *a = ir_attr(n, name);
    return a && a->s ? a->s : dflt;
}

void ir_compact(IrGraph *g)
{
    int k = 0;
    for (int i = 0; i < g->nn; i++) {
        if (g->nodes[i].dead) node_free(&g->nodes[i]);
        else g->nodes[k++] = g->nodes[i];
    }
    g->nn = k;
    for (int i = 0; i < g->nt; i++) g->t[i].producer = -1;
    for (int i = 0; i < g->nn; i++)
        for (int j = 0; j < g->nodes[i].nout; j++)
            if (g->nodes[i].out[j] >= 0) g->t[g->nodes[i].out[j]].producer = i;
}

int ir_toposort(IrGraph *g, AtlErr *e)
{
    ir_compact(g);
    int nn = g->nn;
    int *prod = malloc(((size_t)g->nt + 1) * sizeof *prod);
    int *indeg = calloc((size_t)nn + 1, sizeof *indeg);
    int *order = malloc(((size_t)nn + 1) * sizeof *order);
    IrUses u = {0};
    int rc = -1;
    if (!prod || !indeg || !order) { atl_fail(e, "out of memory sorting the graph"); goto out; }
    for (int i = 0; i < g->nt; i++) prod[i] = -1;
    for (int i = 0; i < nn; i++)
        for (int j = 0; j < g->nodes[i].nout; j++) {
            int t = g->nodes[i].out[j];
            if (t < 0) continue;
            if (prod[t] >= 0 && prod[t] != i) {
                atl_fail(e, "tensor '%s' is produced by both node '%s' and node '%s'",
                         g->t[t].name, g->nodes[prod[t]].name, g->nodes[i].name);
                goto out;
            }
            prod[t] = i;
        }
    for (int i = 0; i < nn; i++)
        for (int j = 0; j < g->nodes[i].nin; j++) {
            int t = g->nodes[i].in[j], dup = 0;
            for (int k = 0; k < j; k++) if (g->nodes[i].in[k] == t) dup = 1;
            if (t >= 0 && prod[t] >= 0 && !dup) indeg[i]++;
        }
    if (ir_consumers(g, &u, e)) goto out;
    int head = 0, tail = 0;
    for (int i = 0; i < nn; i++) if (!indeg[i]) order[tail++] = i;
    while (head < tail) {
        int i = order[head++];
        for (int j = 0; j < g->nodes[i].nout; j++) {
            int t = g->nodes[i].out[j];
            if (t < 0) continue;
            for (int k = u.start[t]; k < u.start[t + 1]; k++) {
                int c = u.list[k];
                if (--indeg[c] == 0) order[tail++] = c;
            }
        }
    }
    if (tail < nn) {
        for (int i = 0; i < nn; i++)
            if (indeg[i]) { atl_fail(e, "node '%s' (%s) is on a cycle", g->nodes[i].name, g->nodes[i].op); break; }
        goto out;
    }
    IrNode *sorted = malloc(((size_t)nn + 1) * sizeof *sorted);
    if (!sorted) { atl_fail(e, "out of memory sorting the graph"); goto out; }
    for (int i = 0; i < nn; i++) sorted[i] = g->nodes[order[i]];
    if (nn) memcpy(g->nodes, sorted, (size_t)nn * sizeof *sorted);
    free(sorted);
    ir_compact(g);
    rc = 0;
out:
    ir_uses_free(&u);
    free(prod); free(indeg); free(order);
    return rc;
}

int ir_uses_where(const IrGraph *g, int t, int (*accept)(const IrNode *n, int k))
{
    int uses = 0;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++) {
            if (n->in[k] != t) continue;
            if (!accept(n, k)) return -1;
            uses++;
        }
    }
    return uses;
}

int ir_consumers(const IrGraph *g, IrUses *u, AtlErr *e)
{
    u->start = calloc((size_t)g->nt + 2, sizeof *u->start);
    size_t total = 0;
    for (int i = 0; i < g->nn; i++) total += (size_t)g->nodes[i].nin;
    u->list = malloc((total + 1) * sizeof *u->list);
    if (!u->start || !u->list) { ir_uses_free(u); return atl_fail(e, "out of memory building consumer map"); }
    for (int i = 0; i < g->nn; i++)
        for (int j = 0; j < g->nodes[i].nin; j++)
            if (g->nodes[i].in[j] >= 0 && !g->nodes[i].dead) u->start[g->nodes[i].in[j] + 1]++;
    for (int t = 0; t < g->nt; t++) u->start[t + 1] += u->start[t];
    int *fill = malloc(((size_t)g->nt + 1) * sizeof *fill);
    if (!fill) { ir_uses_free(u); return atl_fail(e, "out of memory building consumer map"); }
    memcpy(fill, u->start, (size_t)g->nt * sizeof *fill);
    for (int i = 0; i < g->nn; i++) {
        if (g->nodes[i].dead) continue;
        for (int j = 0; j < g->nodes[i].nin; j++) {
            int t = g->nodes[i].in[j];
            if (t < 0) continue;
            /* a node using the same tensor twice is listed once */
            int seen = 0;
            for (int k = u->start[t]; k < fill[t]; k++) if (u->list[k] == i) seen = 1;
            if (!seen) u->list[fill[t]++] = i;
        }
    }
    /* close gaps left by de-duplication */
    int k = 0;
    for (int t = 0; t < g->nt; t++) {
        int s = u->start[t];
        u->start[t] = k;
        for (int q = s; q < fill[t]; q++) u->list[k++] = u->list[q];
    }
    u->start[g->nt] = k;
    free(fill);
    return 0;
}

void ir_uses_free(IrUses *u)
{
    free(u->start);
    free(u->list);
    u->start = u->list = NULL;
}

int ir_verify(const IrGraph *g, AtlErr *e)
{
    if (g->nout == 0) return atl_fail(e, "the graph has no outputs (GraphProto.output, field 12): nothing to compute");
    char *defined = calloc((size_t)g->nt + 1, 1);
    if (!defined) return atl_fail(e, "out of memory verifying the graph");
    for (int t = 0; t < g->nt; t++)
        if (g->t[t].data || g->t[t].is_input) defined[t] = 1;
    for (int i = 0; i < g->nin; i++) defined[g->inputs[i]] = 1;
    int rc = 0;
    for (int i = 0; i < g->nn && !rc; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead) continue;
        for (int j = 0; j < n->nin && !rc; j++) {
            int t = n->in[j];
            if (t < -1 || t >= g->nt)
                rc = atl_fail(e, "node '%s' (%s): input %d refers to tensor %d, out of range", n->name, n->op, j, t);
            else if (t >= 0 && !defined[t])
                rc = atl_fail(e, "node '%s' (%s): input %d '%s' is not a graph input, constant or earlier node output",
                              n->name, n->op, j, g->t[t].name);
        }
        for (int j = 0; j < n->nout && !rc; j++) {
            int t = n->out[j];
            if (t < -1 || t >= g->nt)
                rc = atl_fail(e, "node '%s' (%s): output %d refers to tensor %d, out of range", n->name, n->op, j, t);
            else if (t >= 0 && defined[t])
                rc = atl_fail(e, "node '%s' (%s): output '%s' is already defined (input, constant or another node)",
                              n->name, n->op, g->t[t].name);
            else if (t >= 0) defined[t] = 1;
        }
    }
    for (int i = 0; i < g->nout && !rc; i++)
        if (!defined[g->outputs[i]])
            rc = atl_fail(e, "graph output '%s' is never produced", g->t[g->outputs[i]].name);
    free(defined);
    return rc;
}

static void print_tensor_ref(const IrGraph *g, int t, FILE *fp)
{
    char sh[128];
    if (t < 0) { fprintf(fp, "-"); return; }
    const IrTensor *x = &g->t[t];
    fprintf(fp, "%%%s:%s[%s]%s%s", x->name, ir_dtype_name(x->dtype), ir_shape_str(x, sh, sizeof sh),
            x->data ? "=const" : "", x->is_view ? "(view)" : "");
}

void ir_print(const IrGraph *g, FILE *fp)
{
    fprintf(fp, "graph %s (opset %d): %d nodes, %d tensors\n", g->name ? g->name : "", g->opset, g->nn, g->nt);
    for (int i = 0; i < g->nin; i++) { fprintf(fp, "  input "); print_tensor_ref(g, g->inputs[i], fp); fprintf(fp, "\n"); }
    size_t cbytes = 0;
    int nconst = 0;
    for (int t = 0; t < g->nt; t++)
        if (g->t[t].data) { nconst++; cbytes += ir_nbytes(&g->t[t]); }
    fprintf(fp, "  constants: %d (%zu bytes)\n", nconst, cbytes);
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead) continue;
        fprintf(fp, "  %s = %s(", n->name, n->op);
        for (int j = 0; j < n->nin; j++) { if (j) fprintf(fp, ", "); print_tensor_ref(g, n->in[j], fp); }
        fprintf(fp, ") -> ");
        for (int j = 0; j < n->nout; j++) { if (j) fprintf(fp, ", "); print_tensor_ref(g, n->out[j], fp); }
        for (int a = 0; a < n->nattrs; a++) {
            const IrAttr *at = &n->attrs[a];
            fprintf(fp, " %s=", at->name);
            switch (at->type) {
            case IR_ATTR_INT: fprintf(fp, "%lld", (long long)at->i); break;
            case IR_ATTR_FLOAT: fprintf(fp, "%g", at->f); break;
            case IR_ATTR_STRING: fprintf(fp, "\"%s\"", at->s ? at->s : ""); break;
            case IR_ATTR_INTS:
                fprintf(fp, "[");
                for (int k = 0; k < at->n; k++) fprintf(fp, "%s%lld", k ? "," : "", (long long)at->ints[k]);
                fprintf(fp, "]");
                break;
            case IR_ATTR_FLOATS:
                fprintf(fp, "[");
                for (int k = 0; k < at->n; k++) fprintf(fp, "%s%g", k ? "," : "", at->floats[k]);
                fprintf(fp, "]");
                break;
            case IR_ATTR_TENSOR: fprintf(fp, "<tensor>"); break;
            default: fprintf(fp, "<type %d>", at->type);
            }
        }
        if (n->act[0]) fprintf(fp, " +fused(%s)", n->act);
        fprintf(fp, "\n");
    }
    for (int i = 0; i < g->nout; i++) { fprintf(fp, "  output "); print_tensor_ref(g, g->outputs[i], fp); fprintf(fp, "\n"); }
}
