/* elementwise.c - element-wise ops: unary maths and activations,
 * broadcasting binary/variadic ops, comparisons, Where, Cast, Clip,
 * Identity, Dropout (inference). Floats are computed in double (written
 * back rounded), integers in int64 with wrap-around, so every numeric dtype
 * works; float32 tensors of equal shape take a direct loop. */
#include "compiler/ops/ops.h"
#include <math.h>
#include <float.h>
#include <string.h>

/* ---- broadcasting iteration ---- */

/* Strides of `in` when broadcast to out's shape (0 along broadcast dims). */
static void bstrides(const IrTensor *in, const IrTensor *out, int64_t *st)
{
    int r = out->ndim, off = r - in->ndim;
    int64_t s = 1;
    for (int k = r - 1; k >= 0; k--) {
        if (k < off) { st[k] = 0; continue; }
        int64_t d = in->dims[k - off];
        st[k] = d == 1 ? 0 : s;
        s *= d;
    }
}

typedef struct BIter {
    int r, n;
    int64_t dims[IR_MAXDIM], idx[IR_MAXDIM];
    int64_t st[3][IR_MAXDIM], off[3];
} BIter;

static void biter_init(BIter *it, const IrTensor *out, const IrTensor **ins, int n)
{
    memset(it, 0, sizeof *it);
    it->r = out->ndim;
    it->n = n;
    memcpy(it->dims, out->dims, sizeof it->dims);
    for (int i = 0; i < n; i++) bstrides(ins[i], out, it->st[i]);
}

static void biter_next(BIter *it)
{
    for (int d = it->r - 1; d >= 0; d--) {
        it->idx[d]++;
        for (int i = 0; i < it->n; i++) it->off[i] += it->st[i][d];
        if (it->idx[d] < it->dims[d]) return;
        for (int i = 0; i < it->n; i++) it->off[i] -= it->st[i][d] * it->dims[d];
        it->idx[d] = 0;
    }
}

/* Legacy (opset < 7) broadcast: B's dims line up with A's starting at `axis`. */
static void legacy_view(IrOpCtx *c, IrTensor *b, IrTensor *view)
{
    *view = *b;
    if (c->opset < 7 && !strcmp(c->n->op, "PRelu") && c->in[0] && c->in[0]->ndim >= 2 && b->ndim == 1 &&
        b->dims[0] == c->in[0]->dims[1] && b->dims[0] != c->in[0]->dims[c->in[0]->ndim - 1]) {
        /* opset-6 PRelu: a per-channel slope lines up with axis 1 */
        view->ndim = c->in[0]->ndim;
        for (int k = 0; k < view->ndim; k++) view->dims[k] = k == 1 ? b->dims[0] : 1;
        return;
    }
    if (c->opset >= 7 || !ir_attr_int(c->n, "broadcast", 0) || !c->in[0] || c->in[0]->ndim < 0 || b->ndim < 0) return;
    int ra = c->in[0]->ndim;
    int64_t axis = ir_attr_int(c->n, "axis", ra - b->ndim);
    if (axis < 0) axis += ra;
    if (axis < 0 || axis + b->ndim > ra) return;
    view->ndim = ra;
    for (int k = 0; k < ra; k++) view->dims[k] = 1;
    for (int k = 0; k < b->ndim; k++) view->dims[axis + k] = b->dims[k];
}

/* ---- unary ---- */

typedef struct UParam { double alpha, beta, gamma; } UParam;
typedef double (*UFn)(double, const UParam *);
static double u_abs(double x, const UParam *p) { (void)p; return fabs(x); }
static double u_neg(double x, const UParam *p) { (void)p; return -x; }
static double u_sqrt(double x, const UParam *p) { (void)p; return sqrt(x); }
static double u_recip(double x, const UParam *p) { (void)p; return 1.0 / x; }
static double u_exp(double x, const UParam *p) { (void)p; return exp(x); }
static double u_log(double x, const UParam *p) { (void)p; return log(x); }
static double u_relu(double x, const UParam *p) { (void)p; return x > 0 ? x : 0; }
static double u_leaky(double x, const UParam *p) { return x >= 0 ? x : p->alpha * x; }
static double u_elu(double x, const UParam *p) { return x >= 0 ? x : p->alpha * (exp(x) - 1); }
static double u_selu(double x, const UParam *p) { return p->gamma * (x > 0 ? x : p->alpha * exp(x) - p->alpha); }
static double u_sigmoid(double x, const UParam *p) { (void)p; return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)); }
static double u_tanh(double x, const UParam *p) { (void)p; return tanh(x); }
static double u_hsig(double x, const UParam *p) { double y = p->alpha * x + p->beta; return y < 0 ? 0 : y > 1 ? 1 : y; }
static double u_hswish(double x, const UParam *p) { (void)p; double y = x / 6 + 0.5; return x * (y < 0 ? 0 : y > 1 ? 1 : y); }
static double u_erf(double x, const UParam *p) { (void)p; return erf(x); }
static double u_floor(double x, const UParam *p) { (void)p; return floor(x); }
static double u_ceil(double x, const UParam *p) { (void)p; return ceil(x); }
static double u_not(double x, const UParam *p) { (void)p; return x == 0; }
static double u_cos(double x, const UParam *p) { (void)p; return cos(x); }
static double u_sin(double x, const UParam *p) { (void)p; return sin(x); }
static double u_tan(double x, const UParam *p) { (void)p; return tan(x); }
static double u_acos(double x, const UParam *p) { (void)p; return acos(x); }
static double u_asin(double x, const UParam *p) { (void)p; return asin(x); }
static double u_atan(double x, const UParam *p) { (void)p; return atan(x); }
static double u_cosh(double x, const UParam *p) { (void)p; return cosh(x); }
static double u_sinh(double x, const UParam *p) { (void)p; return sinh(x); }
static double u_acosh(double x, const UParam *p) { (void)p; return acosh(x); }
static double u_asinh(double x, const UParam *p) { (void)p; return asinh(x); }
static double u_atanh(double x, const UParam *p) { (void)p; return atanh(x); }
static double u_sign(double x, const UParam *p) { (void)p; return x > 0 ? 1 : x < 0 ? -1 : 0; }
static double u_round(double x, const UParam *p) { (void)p; return nearbyint(x); }
static double u_softplus(double x, const UParam *p) { (void)p; return x > 30 ? x : log1p(exp(x)); }
static double u_softsign(double x, const UParam *p) { (void)p; return x / (1 + fabs(x)); }
static double u_thrrelu(double x, const UParam *p) { return x > p->alpha ? x : 0; }
static double u_celu(double x, const UParam *p) { return (x > 0 ? x : 0) + fmin(0, p->alpha * (exp(x / p->alpha) - 1)); }
static double u_shrink(double x, const UParam *p) { return x < -p->alpha ? x + p->beta : x > p->alpha ? x - p->beta : 0; }
static double u_isnan(double x, const UParam *p) { (void)p; return x != x; }
static double u_isinf(double x, const UParam *p) { return isinf(x) && ((x > 0 && p->alpha != 0) || (x < 0 && p->beta != 0)); }

/* op, kernel, default parameters, the attribute names that set them (NULL:
 * "alpha"/"beta"/"gamma"), whether the output is bool */
static const struct { const char *op; UFn fn; double alpha, beta, gamma; const char *an, *bn; int to_bool; } unary_ops[] = {
    {"Abs", u_abs, 0, 0, 0, NULL, NULL, 0}, {"Neg", u_neg, 0, 0, 0, NULL, NULL, 0}, {"Sqrt", u_sqrt, 0, 0, 0, NULL, NULL, 0},
    {"Reciprocal", u_recip, 0, 0, 0, NULL, NULL, 0}, {"Exp", u_exp, 0, 0, 0, NULL, NULL, 0}, {"Log", u_log, 0, 0, 0, NULL, NULL, 0},
    {"Relu", u_relu, 0, 0, 0, NULL, NULL, 0}, {"LeakyRelu", u_leaky, 0.01, 0, 0, NULL, NULL, 0}, {"Elu", u_elu, 1.0, 0, 0, NULL, NULL, 0},
    {"Selu", u_selu, 1.67326319217681884765625, 0, 1.05070102214813232421875, NULL, NULL, 0},
    {"Sigmoid", u_sigmoid, 0, 0, 0, NULL, NULL, 0}, {"Tanh", u_tanh, 0, 0, 0, NULL, NULL, 0}, {"HardSigmoid", u_hsig, 0.2, 0.5, 0, NULL, NULL, 0},
    {"HardSwish", u_hswish, 0, 0, 0, NULL, NULL, 0}, {"Erf", u_erf, 0, 0, 0, NULL, NULL, 0}, {"Floor", u_floor, 0, 0, 0, NULL, NULL, 0},
    {"Ceil", u_ceil, 0, 0, 0, NULL, NULL, 0}, {"Not", u_not, 0, 0, 0, NULL, NULL, 0},
    {"Cos", u_cos, 0, 0, 0, NULL, NULL, 0}, {"Sin", u_sin, 0, 0, 0, NULL, NULL, 0}, {"Tan", u_tan, 0, 0, 0, NULL, NULL, 0}, {"Acos", u_acos, 0, 0, 0, NULL, NULL, 0},
    {"Asin", u_asin, 0, 0, 0, NULL, NULL, 0}, {"Atan", u_atan, 0, 0, 0, NULL, NULL, 0}, {"Cosh", u_cosh, 0, 0, 0, NULL, NULL, 0}, {"Sinh", u_sinh, 0, 0, 0, NULL, NULL, 0},
    {"Acosh", u_acosh, 0, 0, 0, NULL, NULL, 0}, {"Asinh", u_asinh, 0, 0, 0, NULL, NULL, 0}, {"Atanh", u_atanh, 0, 0, 0, NULL, NULL, 0},
    {"Sign", u_sign, 0, 0, 0, NULL, NULL, 0}, {"Round", u_round, 0, 0, 0, NULL, NULL, 0}, {"Softplus", u_softplus, 0, 0, 0, NULL, NULL, 0},
    {"Softsign", u_softsign, 0, 0, 0, NULL, NULL, 0}, {"ThresholdedRelu", u_thrrelu, 1.0, 0, 0, NULL, NULL, 0}, {"Celu", u_celu, 1.0, 0, 0, NULL, NULL, 0},
    {"Shrink", u_shrink, 0.5, 0, 0, "lambd", "bias", 0}, {"IsNaN", u_isnan, 0, 0, 0, NULL, NULL, 1},
    {"IsInf", u_isinf, 1, 1, 0, "detect_positive", "detect_negative", 1},
};

static int find_unary(const char *op)
{
    for (int i = 0; i < (int)(sizeof unary_ops / sizeof unary_ops[0]); i++)
        if (!strcmp(unary_ops[i].op, op)) return i;
    return -1;
}

int infer_unary(IrOpCtx *c)
{
    op_same_shape(c->out[0], c->in[0]);
    if (!strcmp(c->n->op, "Not") && c->in[0]->dtype != IR_BOOL) return op_fail(c, "input must be bool");
    int k = find_unary(c->n->op);
    if (k >= 0 && unary_ops[k].to_bool) c->out[0]->dtype = IR_BOOL;
    return 0;
}

int eval_unary(IrOpCtx *c)
{
    int k = find_unary(c->n->op);
    if (k < 0) return op_fail(c, "no unary kernel");
    const char *an = unary_ops[k].an ? unary_ops[k].an : "alpha", *bn = unary_ops[k].bn ? unary_ops[k].bn : "beta";
    UParam p = {ir_attr_float(c->n, an, (float)unary_ops[k].alpha), ir_attr_float(c->n, bn, (float)unary_ops[k].beta),
                ir_attr_float(c->n, "gamma", (float)unary_ops[k].gamma)};
    if (!strcmp(c->n->op, "Selu")) { /* keep full precision of the defaults */
        if (!ir_attr(c->n, "alpha")) p.alpha = unary_ops[k].alpha;
        if (!ir_attr(c->n, "gamma")) p.gamma = unary_ops[k].gamma;
    }
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t n = ir_numel(y);
    UFn fn = unary_ops[k].fn;
    if (x->dtype == IR_F32 && y->dtype == IR_F32) {
        const float *a = x->data;
        float *o = y->data;
        if (fn == u_relu) { for (int64_t i = 0; i < n; i++) o[i] = a[i] > 0 ? a[i] : 0; return 0; }
        for (int64_t i = 0; i < n; i++) o[i] = (float)fn(a[i], &p);
        return 0;
    }
    int isint = !op_dtype_is_float(x->dtype);
    for (int64_t i = 0; i < n; i++) {
        if (isint && fn == u_neg) ir_set_i(y, i, (int64_t)(0 - (uint64_t)ir_get_i(x, i)));
        else if (isint && fn == u_abs) { int64_t v = ir_get_i(x, i); ir_set_i(y, i, v < 0 ? (int64_t)(0 - (uint64_t)v) : v); }
        else ir_set_f(y, i, fn(ir_get_f(x, i), &p));
    }
    return 0;
}

/* ---- binary and variadic ---- */

typedef double (*BFn)(double, double);
typedef int64_t (*BIFn)(int64_t, int64_t);
static double b_add(double a, double b) { return a + b; }
static double b_sub(double a, double b) { return a - b; }
static double b_mul(double a, double b) { return a * b; }
static double b_div(double a, double b) { return a / b; }
static double b_pow(double a, double b) { return pow(a, b); }
static double b_eq(double a, double b) { return a == b; }
static double b_lt(double a, double b) { return a < b; }
static double b_gt(double a, double b) { return a > b; }
static double b_prelu(double a, double b) { return a < 0 ? a * b : a; }
static double b_max(double a, double b) { return (a != a || b != b) ? NAN : a > b ? a : b; }
static double b_min(double a, double b) { return (a != a || b != b) ? NAN : a < b ? a : b; }
static int64_t i_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t i_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t i_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static int64_t i_div(int64_t a, int64_t b) { return b == 0 || (b == -1 && a == INT64_MIN) ? 0 : a / b; }
static int64_t i_pow(int64_t a, int64_t b)
{
    int64_t r = 1;
    if (b < 0) return a == 1 ? 1 : a == -1 ? (b & 1 ? -1 : 1) : 0;
    /* by squaring: the products wrap modulo 2^64, where multiplication is
     * associative, so this is the repeated product, in log2(b) steps
     * rather than b (an int32 exponent near 2^31 took seconds) */
    for (; b; b >>= 1, a = i_mul(a, a))
        if (b & 1) r = i_mul(r, a);
    return r;
}
static int64_t i_eq(int64_t a, int64_t b) { return a == b; }
static int64_t i_lt(int64_t a, int64_t b) { return a < b; }
static int64_t i_gt(int64_t a, int64_t b) { return a > b; }
static int64_t i_prelu(int64_t a, int64_t b) { return a < 0 ? i_mul(a, b) : a; }
static int64_t i_max(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t i_min(int64_t a, int64_t b) { return a < b ? a : b; }
static double b_ge(double a, double b) { return a >= b; }
static double b_le(double a, double b) { return a <= b; }
static int64_t i_ge(int64_t a, int64_t b) { return a >= b; }
static int64_t i_le(int64_t a, int64_t b) { return a <= b; }
static double b_and(double a, double b) { return a != 0 && b != 0; }
static double b_or(double a, double b) { return a != 0 || b != 0; }
static double b_xor(double a, double b) { return (a != 0) != (b != 0); }
static int64_t i_and(int64_t a, int64_t b) { return a && b; }
static int64_t i_or(int64_t a, int64_t b) { return a || b; }
static int64_t i_xor(int64_t a, int64_t b) { return !a != !b; }
static double b_fmod(double a, double b) { return fmod(a, b); }
static int64_t i_fmod(int64_t a, int64_t b) { return b == 0 || (b == -1 && a == INT64_MIN) ? 0 : a % b; }
static double b_pymod(double a, double b) { double r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
static int64_t i_pymod(int64_t a, int64_t b)
{
    int64_t r = i_fmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static double b_none(double a, double b) { (void)b; return a; }
static int64_t i_shl(int64_t a, int64_t b) { return b < 0 || b >= 64 ? 0 : (int64_t)((uint64_t)a << b); }
static int64_t i_shr(int64_t a, int64_t b) { return b < 0 || b >= 64 ? 0 : (int64_t)((uint64_t)a >> b); }

static const struct { const char *op; BFn f; BIFn i; int cmp; } binary_ops[] = {
    {"Add", b_add, i_add, 0}, {"Sub", b_sub, i_sub, 0}, {"Mul", b_mul, i_mul, 0}, {"Div", b_div, i_div, 0},
    {"Pow", b_pow, i_pow, 0}, {"Equal", b_eq, i_eq, 1}, {"Less", b_lt, i_lt, 1}, {"Greater", b_gt, i_gt, 1},
    {"PRelu", b_prelu, i_prelu, 0}, {"Max", b_max, i_max, 0}, {"Min", b_min, i_min, 0},
    {"Sum", b_add, i_add, 0}, {"Mean", b_add, i_add, 0},
    {"GreaterOrEqual", b_ge, i_ge, 1}, {"LessOrEqual", b_le, i_le, 1},
    {"And", b_and, i_and, 1}, {"Or", b_or, i_or, 1}, {"Xor", b_xor, i_xor, 1},
    {"Mod", b_pymod, i_pymod, 0}, {"Mod_fmod", b_fmod, i_fmod, 0},
    {"BitShift", b_none, i_shl, 0}, {"BitShift_RIGHT", b_none, i_shr, 0},
};

static int find_binary(const char *op)
{
    for (int i = 0; i < (int)(sizeof binary_ops / sizeof binary_ops[0]); i++)
        if (!strcmp(binary_ops[i].op, op)) return i;
    return -1;
}

/* the kernel row for this node: Mod and BitShift pick one by attribute */
static int binary_row(IrOpCtx *c)
{
    if (!strcmp(c->n->op, "Mod") && ir_attr_int(c->n, "fmod", 0)) return find_binary("Mod_fmod");
    if (!strcmp(c->n->op, "BitShift") && !strcmp(ir_attr_str(c->n, "direction", ""), "RIGHT")) return find_binary("BitShift_RIGHT");
    return find_binary(c->n->op);
}

int infer_binary(IrOpCtx *c)
{
    IrTensor bv;
    legacy_view(c, c->in[1], &bv);
    IrTensor *ins[2] = {c->in[0], &bv};
    int k = binary_row(c);
    if (k < 0) return op_fail(c, "no binary kernel");
    if (!strcmp(c->n->op, "BitShift") && op_dtype_is_float(c->in[0]->dtype)) return op_fail(c, "BitShift needs integer inputs");
    if (!strcmp(c->n->op, "Mod") && op_dtype_is_float(c->in[0]->dtype) && !ir_attr_int(c->n, "fmod", 0))
        return op_fail(c, "Mod of floats needs fmod=1");
    if (strcmp(c->n->op, "Pow") && c->in[0]->dtype != c->in[1]->dtype)
        return op_fail(c, "input types differ: %s and %s", ir_dtype_name(c->in[0]->dtype), ir_dtype_name(c->in[1]->dtype));
    if (op_broadcast_shape(c, ins, 2, c->out[0])) return -1;
    c->out[0]->dtype = binary_ops[k].cmp ? IR_BOOL : c->in[0]->dtype;
    return 0;
}

/* out = f(a, b) with broadcasting; a or b may alias out. */
static void apply_binary(int k, const IrTensor *a, const IrTensor *b, IrTensor *out)
{
    int64_t n = ir_numel(out);
    int isint = !op_dtype_is_float(a->dtype) && !op_dtype_is_float(b->dtype);
    BFn f = binary_ops[k].f;
    if (a->dtype == IR_F32 && b->dtype == IR_F32 && out->dtype == IR_F32) {
        const float *x = a->data, *y = b->data;
        float *o = out->data;
        if (ir_numel(a) == n && ir_numel(b) == n) {
            if (f == b_add) { for (int64_t i = 0; i < n; i++) o[i] = x[i] + y[i]; return; }
            if (f == b_mul) { for (int64_t i = 0; i < n; i++) o[i] = x[i] * y[i]; return; }
            if (f == b_sub) { for (int64_t i = 0; i < n; i++) o[i] = x[i] - y[i]; return; }
            if (f == b_div) { for (int64_t i = 0; i < n; i++) o[i] = x[i] / y[i]; return; }
            for (int64_t i = 0; i < n; i++) o[i] = (float)f(x[i], y[i]);
            return;
        }
        const IrTensor *ins[2] = {a, b};
        BIter it;
        biter_init(&it, out, ins, 2);
        for (int64_t i = 0; i < n; i++, biter_next(&it)) o[i] = (float)f(x[it.off[0]], y[it.off[1]]);
        return;
    }
    const IrTensor *ins[2] = {a, b};
    BIter it;
    biter_init(&it, out, ins, 2);
    for (int64_t i = 0; i < n; i++, biter_next(&it)) {
        if (isint) {
            int64_t v = binary_ops[k].i(ir_get_i(a, it.off[0]), ir_get_i(b, it.off[1]));
            ir_set_i(out, i, v);
        } else if (f == b_pow && !op_dtype_is_float(out->dtype)) {
            ir_set_i(out, i, (int64_t)pow(ir_get_f(a, it.off[0]), ir_get_f(b, it.off[1])));
        } else {
            ir_set_f(out, i, f(ir_get_f(a, it.off[0]), ir_get_f(b, it.off[1])));
        }
    }
}

int eval_binary(IrOpCtx *c)
{
    IrTensor bv;
    legacy_view(c, c->in[1], &bv);
    apply_binary(binary_row(c), c->in[0], &bv, c->out[0]);
    return 0;
}

int infer_variadic(IrOpCtx *c)
{
    for (int i = 0; i < c->nin; i++) {
        if (!c->in[i]) return op_fail(c, "input %d is missing", i);
        if (c->in[i]->dtype != c->in[0]->dtype) return op_fail(c, "input %d has type %s, input 0 %s", i,
                                                               ir_dtype_name(c->in[i]->dtype), ir_dtype_name(c->in[0]->dtype));
    }
    if (op_broadcast_shape(c, c->in, c->nin, c->out[0])) return -1;
    c->out[0]->dtype = c->in[0]->dtype;
    return 0;
}

int eval_variadic(IrOpCtx *c)
{
    int k = find_binary(c->n->op);
    IrTensor *o = c->out[0];
    /* broadcast-copy input 0, then fold the rest in place */
    const IrTensor *ins[1] = {c->in[0]};
    BIter it;
    biter_init(&it, o, ins, 1);
    int64_t n = ir_numel(o);
    size_t es = ir_dtype_size(o->dtype);
    for (int64_t i = 0; i < n; i++, biter_next(&it))
        memcpy((char *)o->data + (size_t)i * es, (const char *)c->in[0]->data + (size_t)it.off[0] * es, es);
    for (int i = 1; i < c->nin; i++) apply_binary(k, o, c->in[i], o);
    if (!strcmp(c->n->op, "Mean"))
        for (int64_t i = 0; i < n; i++) ir_set_f(o, i, ir_get_f(o, i) / c->nin);
    return 0;
}

/* ---- Where ---- */

int infer_where(IrOpCtx *c)
{
    if (c->in[0]->dtype != IR_BOOL) return op_fail(c, "condition must be bool, not %s", ir_dtype_name(c->in[0]->dtype));
    if (c->in[1]->dtype != c->in[2]->dtype) return op_fail(c, "X and Y types differ");
    if (op_broadcast_shape(c, c->in, 3, c->out[0])) return -1;
    c->out[0]->dtype = c->in[1]->dtype;
    return 0;
}

int eval_where(IrOpCtx *c)
{
    const IrTensor *ins[3] = {c->in[0], c->in[1], c->in[2]};
    IrTensor *o = c->out[0];
    BIter it;
    biter_init(&it, o, ins, 3);
    int64_t n = ir_numel(o);
    size_t es = ir_dtype_size(o->dtype);
    const uint8_t *cond = c->in[0]->data;
    for (int64_t i = 0; i < n; i++, biter_next(&it)) {
        const IrTensor *src = cond[it.off[0]] ? c->in[1] : c->in[2];
        int64_t off = cond[it.off[0]] ? it.off[1] : it.off[2];
        memcpy((char *)o->data + (size_t)i * es, (const char *)src->data + (size_t)off * es, es);
    }
    return 0;
}

/* ---- Cast, Clip, Identity, Dropout ---- */

int infer_cast(IrOpCtx *c)
{
    int64_t to = ir_attr_int(c->n, "to", 0);
    if (!ir_dtype_size((int)to) || to >= IR_NDTYPES) return op_fail(c, "cast to type %lld is not supported", (long long)to);
    op_same_shape(c->out[0], c->in[0]);
    c->out[0]->dtype = (int)to;
    return 0;
}

int infer_castlike(IrOpCtx *c)
{
    op_same_shape(c->out[0], c->in[0]);
    c->out[0]->dtype = c->in[1]->dtype;
    return 0;
}

int eval_castlike(IrOpCtx *c) { return eval_cast(c); }

int eval_cast(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t n = ir_numel(y);
    int fx = op_dtype_is_float(x->dtype), fy = op_dtype_is_float(y->dtype);
    for (int64_t i = 0; i < n; i++) {
        if (!fx && !fy) ir_set_i(y, i, ir_get_i(x, i));
        else ir_set_f(y, i, ir_get_f(x, i));
    }
    return 0;
}

int infer_clip(IrOpCtx *c)
{
    op_same_shape(c->out[0], c->in[0]);
    return 0;
}

int eval_clip(IrOpCtx *c)
{
    double lo = -INFINITY, hi = INFINITY;
    if (c->opset < 11) {
        lo = ir_attr_float(c->n, "min", -FLT_MAX);
        hi = ir_attr_float(c->n, "max", FLT_MAX);
    } else {
        if (c->nin > 1 && c->in[1]) lo = ir_get_f(c->in[1], 0);
        if (c->nin > 2 && c->in[2]) hi = ir_get_f(c->in[2], 0);
    }
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int64_t n = ir_numel(y);
    for (int64_t i = 0; i < n; i++) {
        double v = ir_get_f(x, i);
        if (v < lo) v = lo;
        if (v > hi) v = hi;
        ir_set_f(y, i, v);
    }
    return 0;
}

int infer_identity(IrOpCtx *c)
{
    op_same_shape(c->out[0], c->in[0]);
    return 0;
}

int eval_identity(IrOpCtx *c)
{
    memcpy(c->out[0]->data, c->in[0]->data, ir_nbytes(c->in[0]));
    return 0;
}

int infer_dropout(IrOpCtx *c)
{
    /* training_mode (opset 12+) with a non-zero ratio means random dropout:
     * refused here when both are constant, otherwise by eval */
    if (c->opset >= 12 && c->nin > 2 && c->in[2] && c->in[2]->data && ir_get_i(c->in[2], 0) &&
        (c->nin < 2 || !c->in[1] || (c->in[1]->data && ir_get_f(c->in[1], 0) != 0)))
        return op_fail(c, "training_mode=true with a non-zero ratio (random dropout) is not supported");
    if (c->opset < 7 && !ir_attr_int(c->n, "is_test", 0) && c->nout > 1 && c->out[1])
        return op_fail(c, "training mode (is_test=0) with a mask output is not supported");
    op_same_shape(c->out[0], c->in[0]);
    if (c->nout > 1 && c->out[1]) {
        op_same_shape(c->out[1], c->in[0]);
        c->out[1]->dtype = c->opset >= 10 ? IR_BOOL : c->in[0]->dtype;
    }
    return 0;
}

int eval_dropout(IrOpCtx *c)
{
    if (c->opset >= 12 && c->nin > 2 && c->in[2] && ir_get_i(c->in[2], 0)) {
        double ratio = c->nin > 1 && c->in[1] ? ir_get_f(c->in[1], 0) : 0.5;
        if (ratio != 0) return op_fail(c, "training_mode=true with ratio %g (random dropout) is not supported", ratio);
    }
    memcpy(c->out[0]->data, c->in[0]->data, ir_nbytes(c->in[0]));
    if (c->nout > 1 && c->out[1]) {
        int64_t n = ir_numel(c->out[1]);
        for (int64_t i = 0; i < n; i++) ir_set_f(c->out[1], i, 1.0);
    }
    return 0;
}
