/* synth_weights.c - deterministic synthetic initializers for models whose
 * external weight file is absent (see onnx/synth_weights.h).
 *
 * Scale follows PyTorch's default initialisation: weights and biases uniform
 * in +-1/sqrt(fan_in), where fan_in depends on the consuming op (a Conv
 * weight [O, I/g, kh, kw] has fan_in I/g*kh*kw, a MatMul right operand
 * [..., K, N] has K, a Gemm B has K on the side transB says). Normalisation
 * parameters get values near their identity (scale ~1, variance in
 * [0.5, 1.5], mean and bias near 0) so that a timing run never meets NaN.
 * The generator is splitmix64 seeded with the FNV-1a hash of the tensor
 * name, so a tensor's values do not depend on which others are missing.
 */
#include "compiler/onnx/synth_weights.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t name_seed(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int is_float(int dtype)
{
    return dtype == IR_F32 || dtype == IR_F16 || dtype == IR_BF16 || dtype == IR_F64;
}

void synth_fill_uniform(IrTensor *t, const char *name, double lo, double hi)
{
    uint64_t s = name_seed(name);
    int64_t n = ir_numel(t);
    int fl = is_float(t->dtype);
    double ilo = t->dtype == IR_U8 ? 0 : -127, ihi = t->dtype == IR_U8 ? 255 : 127;
    if (t->dtype == IR_F32) { /* the common case without a call per element (ir_set_f stores the same (float)v) */
        float *d = t->data;
        for (int64_t i = 0; i < n; i++) d[i] = (float)(lo + (hi - lo) * ((double)(splitmix64(&s) >> 11) * (1.0 / 9007199254740992.0)));
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(splitmix64(&s) >> 11) * (1.0 / 9007199254740992.0);
        double v = lo + (hi - lo) * u;
        if (!fl) {
            v = floor(v + 0.5);
            if (v < ilo) v = ilo;
            if (v > ihi) v = ihi;
        }
        ir_set_f(t, i, v);
    }
}

/* Product of dims[from..ndim). */
static int64_t dims_product(const IrTensor *t, int from)
{
    int64_t p = 1;
    for (int k = from; k < t->ndim; k++) p *= t->dims[k] > 0 ? t->dims[k] : 1;
    return p;
}

/* Generic fan-in from the shape alone: [out, in, ...] for rank >= 2. */
static int64_t shape_fan_in(const IrTensor *t)
{
    if (t->ndim >= 2) return dims_product(t, 1);
    if (t->ndim == 1 && t->dims[0] > 0) return t->dims[0];
    return 1;
}

static void fill_fan_in(IrTensor *t, int64_t fan_in)
{
    double b = 1.0 / sqrt((double)(fan_in > 0 ? fan_in : 1));
    if (!is_float(t->dtype)) b = 127; /* int8/uint8 weights: the full range */
    synth_fill_uniform(t, t->name, t->dtype == IR_U8 ? 0 : -b, b);
}

static int grow(SynthList *l)
{
    if (l->n < l->cap) return 0;
    int cap = l->cap ? 2 * l->cap : 16;
    char **p = realloc(l->names, (size_t)cap * sizeof *p);
    if (!p) return -1;
    l->names = p;
    l->cap = cap;
    return 0;
}

int synth_missing_tensor(SynthList *l, IrTensor *t, const char *file, AtlErr *e)
{
    const char *name = t->name ? t->name : "";
    if (!is_float(t->dtype) && t->dtype != IR_I8 && t->dtype != IR_U8)
        return atl_fail(e, "external data of '%s' (%s): file '%s' is missing, and --synthetic-weights only "
                        "invents floating-point or int8/uint8 weights (an %s tensor defines the computation)",
                        name, ir_dtype_name(t->dtype), file, ir_dtype_name(t->dtype));
    int64_t numel = ir_numel(t), es = (int64_t)ir_dtype_size(t->dtype);
    if (l->max_bytes && numel >= 0 && (numel > (l->max_bytes - l->bytes) / es))
        return atl_fail(e, "synthetic weights for '%s' (%lld bytes) would bring the invented weights to more than %lld "
                        "bytes, more than the chip's DRAM holds: the model cannot run on it",
                        name, (long long)(numel * es), (long long)l->max_bytes);
    if (ir_alloc_data(t, e)) return atl_err_prefix(e, "synthetic weights for '%s'", name);
    fill_fan_in(t, shape_fan_in(t));
    char *copy = ir_strdup(name);
    if (!copy || grow(l)) {
        free(copy);
        return atl_fail(e, "synthetic weights for '%s': out of memory", name);
    }
    l->names[l->n++] = copy;
    l->bytes += (int64_t)ir_nbytes(t);
    return 0;
}

/* How a constant is used, by (op, input slot). */
typedef enum SynthRule {
    RULE_DIM1_ON,      /* fan_in = prod(dims[1:]) of this tensor (Conv weights) */
    RULE_BIAS_OF_W,    /* fan_in of the node's input 1 (Conv/Gemm bias) */
    RULE_GEMM_B,       /* K is dims[0], or dims[1] with transB */
    RULE_MATMUL_B,     /* [..., K, N]: K = dims[-2] */
    RULE_MATMUL_A,     /* [..., M, K]: K = dims[-1] */
    RULE_SCALE,        /* normalisation scale: [0.8, 1.2] */
    RULE_SHIFT,        /* normalisation bias / mean: [-0.1, 0.1] */
    RULE_VARIANCE,     /* [0.5, 1.5] */
    RULE_EMBEDDING     /* Gather table: [-1, 1] */
} SynthRule;

static const struct { const char *op; int slot; SynthRule rule; } rules[] = {
    {"Conv", 1, RULE_DIM1_ON}, {"Conv", 2, RULE_BIAS_OF_W},
    {"ConvTranspose", 1, RULE_DIM1_ON}, {"ConvTranspose", 2, RULE_BIAS_OF_W},
    {"Gemm", 1, RULE_GEMM_B}, {"Gemm", 2, RULE_BIAS_OF_W}, {"Gemm", 0, RULE_MATMUL_A},
    {"MatMul", 1, RULE_MATMUL_B}, {"MatMul", 0, RULE_MATMUL_A},
    {"BatchNormalization", 1, RULE_SCALE}, {"BatchNormalization", 2, RULE_SHIFT},
    {"BatchNormalization", 3, RULE_SHIFT}, {"BatchNormalization", 4, RULE_VARIANCE},
    {"LayerNormalization", 1, RULE_SCALE}, {"LayerNormalization", 2, RULE_SHIFT},
    {"InstanceNormalization", 1, RULE_SCALE}, {"InstanceNormalization", 2, RULE_SHIFT},
    {"GroupNormalization", 1, RULE_SCALE}, {"GroupNormalization", 2, RULE_SHIFT},
    {"Gather", 0, RULE_EMBEDDING},
};

static int64_t gemm_b_fan_in(const IrNode *n, const IrTensor *b)
{
    if (b->ndim != 2) return shape_fan_in(b);
    return ir_attr_int(n, "transB", 0) ? b->dims[1] : b->dims[0];
}

static void refill(IrGraph *g, int ti, const IrNode *n, int slot)
{
    IrTensor *t = &g->t[ti];
    size_t k;
    for (k = 0; k < sizeof rules / sizeof rules[0]; k++)
        if (rules[k].slot == slot && !strcmp(rules[k].op, n->op)) break;
    if (k == sizeof rules / sizeof rules[0]) return; /* generic fill stays */
    const IrTensor *w = n->nin > 1 && n->in[1] >= 0 ? &g->t[n->in[1]] : NULL;
    switch (rules[k].rule) {
    case RULE_DIM1_ON: fill_fan_in(t, shape_fan_in(t)); break;
    case RULE_BIAS_OF_W:
        if (w) fill_fan_in(t, !strcmp(n->op, "Gemm") ? gemm_b_fan_in(n, w) : shape_fan_in(w));
        break;
    case RULE_GEMM_B: fill_fan_in(t, gemm_b_fan_in(n, t)); break;
    case RULE_MATMUL_B: fill_fan_in(t, t->ndim >= 2 ? t->dims[t->ndim - 2] : shape_fan_in(t)); break;
    case RULE_MATMUL_A: fill_fan_in(t, t->ndim >= 1 ? t->dims[t->ndim - 1] : 1); break;
    case RULE_SCALE: if (is_float(t->dtype)) synth_fill_uniform(t, t->name, 0.8, 1.2); break;
    case RULE_SHIFT: if (is_float(t->dtype)) synth_fill_uniform(t, t->name, -0.1, 0.1); break;
    case RULE_VARIANCE: if (is_float(t->dtype)) synth_fill_uniform(t, t->name, 0.5, 1.5); break;
    case RULE_EMBEDDING: if (is_float(t->dtype)) synth_fill_uniform(t, t->name, -1, 1); break;
    }
}

int synth_refine(IrGraph *g, const SynthList *l, AtlErr *e)
{
    if (!l || !l->n) return 0;
    /* first consumer (node, slot) of each listed tensor */
    for (int i = 0; i < l->n; i++) {
        int ti = ir_find(g, l->names[i]);
        if (ti < 0 || !g->t[ti].data) continue;
        int done = 0;
        for (int n = 0; n < g->nn && !done; n++) {
            const IrNode *node = &g->nodes[n];
            for (int s = 0; s < node->nin && !done; s++)
                if (node->in[s] == ti) { refill(g, ti, node, s); done = 1; }
        }
    }
    (void)e;
    return 0;
}

void synth_list_free(SynthList *l)
{
    if (!l) return;
    for (int i = 0; i < l->n; i++) free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}
