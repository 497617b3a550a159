/* resize.c - Resize (opsets 10-17) and Upsample (7-9): nearest, linear
 * and cubic interpolation over any number of axes, with every coordinate
 * transformation and nearest-rounding mode of the spec.
 *
 * Interpolation is separable: for each axis and each output coordinate we
 * precompute up to 4 (input index, weight) taps; an output element is the
 * sum over the product of its axes' taps. Taps with zero weight are dropped,
 * so unscaled axes cost one tap. resize_axis_matrix gives one axis's taps
 * as a dense matrix to the backend (lower/resize.c), so the chip
 * interpolates with exactly the interpreter's weights. */
#include "compiler/ops/ops.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Tap { int64_t idx[4]; double w[4]; int n; int outside; } Tap;

typedef struct RParams {
    int mode;            /* 0 nearest, 1 linear, 2 cubic */
    int ctm;             /* coordinate transformation mode index */
    int nearest;         /* 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil */
    double a;            /* cubic coefficient */
    int exclude_outside;
    double extrapolation;
    int have_scales;
    double scales[IR_MAXDIM];
    int64_t sizes[IR_MAXDIM];
    double roi[2 * IR_MAXDIM];
} RParams;

enum { CT_HALF, CT_PT_HALF, CT_ALIGN, CT_ASYM, CT_TF_HALF_NN, CT_TF_CROP };
static const char *ctm_names[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                  "tf_half_pixel_for_nn", "tf_crop_and_resize"};
static const char *nearest_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

static int lookup(const char *s, const char **names, int n)
{
    for (int i = 0; i < n; i++) if (!strcmp(s, names[i])) return i;
    return -1;
}

/* Reads attributes and scales/sizes. Returns 1 when the output shape is
 * known, 0 when scales/sizes are not constant. */
static int resize_params(IrOpCtx *c, const IrTensor *x, RParams *p)
{
    memset(p, 0, sizeof *p);
    int upsample = !strcmp(c->n->op, "Upsample");
    const char *mode = ir_attr_str(c->n, "mode", "nearest");
    p->mode = !strcmp(mode, "nearest") ? 0 : (!strcmp(mode, "linear") || !strcmp(mode, "bilinear")) ? 1 : !strcmp(mode, "cubic") ? 2 : -1;
    if (p->mode < 0 || (p->mode == 2 && (upsample || c->opset < 11))) return op_fail(c, "mode '%s' is not supported", mode);
    if (upsample || c->opset < 11) {
        p->ctm = CT_ASYM;
        p->nearest = 2;
    } else {
        const char *ct = ir_attr_str(c->n, "coordinate_transformation_mode", "half_pixel");
        p->ctm = lookup(ct, ctm_names, 6);
        if (p->ctm < 0) return op_fail(c, "coordinate_transformation_mode '%s' is not supported", ct);
        const char *nm = ir_attr_str(c->n, "nearest_mode", "round_prefer_floor");
        p->nearest = lookup(nm, nearest_names, 4);
        if (p->nearest < 0) return op_fail(c, "nearest_mode '%s' is not supported", nm);
        p->a = ir_attr_float(c->n, "cubic_coeff_a", -0.75f);
        p->exclude_outside = (int)ir_attr_int(c->n, "exclude_outside", 0);
        p->extrapolation = ir_attr_float(c->n, "extrapolation_value", 0.0f);
    }
    int r = x->ndim;
    const IrTensor *sc = NULL, *sz = NULL, *roi = NULL;
    /* opset 18: axes select which dimensions scales/sizes/roi describe */
    int64_t axes[IR_MAXDIM];
    int na = r;
    for (int k = 0; k < r; k++) axes[k] = k;
    const char *policy = "stretch";
    if (!upsample && c->opset >= 18) {
        if (ir_attr_int(c->n, "antialias", 0)) return op_fail(c, "antialias=1 is not supported");
        policy = ir_attr_str(c->n, "keep_aspect_ratio_policy", "stretch");
        if (strcmp(policy, "stretch") && strcmp(policy, "not_larger") && strcmp(policy, "not_smaller"))
            return op_fail(c, "keep_aspect_ratio_policy '%s' is not supported", policy);
        const IrAttr *aa = ir_attr(c->n, "axes");
        if (aa) {
            if (aa->type != IR_ATTR_INTS || aa->n > r) return op_fail(c, "axes must list at most %d axes", r);
            na = aa->n;
            int seen[IR_MAXDIM] = {0};
            for (int i = 0; i < na; i++) {
                if (op_axis(c, aa->ints[i], r, &axes[i])) return -1;
                if (seen[axes[i]]++) return op_fail(c, "axis %lld repeated", (long long)axes[i]);
            }
        }
    }
    if (upsample && c->opset < 9) {
        const IrAttr *a = ir_attr(c->n, "scales");
        if (!a || a->type != IR_ATTR_FLOATS || a->n != r) return op_fail(c, "attribute 'scales' must have %d values", r);
        for (int k = 0; k < r; k++) p->scales[k] = a->floats[k];
        p->have_scales = 1;
    } else if (upsample || c->opset < 11) {
        sc = c->nin > 1 ? c->in[1] : NULL;
        if (!sc) return op_fail(c, "scales input is required");
    } else {
        roi = c->nin > 1 ? c->in[1] : NULL;
        sc = c->nin > 2 ? c->in[2] : NULL;
        sz = c->nin > 3 ? c->in[3] : NULL;
        if (sc && ir_numel(sc) == 0) sc = NULL;
        if (sz && ir_numel(sz) == 0) sz = NULL;
        if (!sc && !sz) return op_fail(c, "one of scales and sizes is required");
        if (sc && sz) return op_fail(c, "only one of scales and sizes may be given");
    }
    for (int k = 0; k < r; k++) { p->roi[k] = 0; p->roi[r + k] = 1; }
    if (roi && p->ctm == CT_TF_CROP) {
        if (!roi->data) return 0;
        if (ir_numel(roi) != 2 * na) return op_fail(c, "roi must have %d values", 2 * na);
        for (int i = 0; i < na; i++) { p->roi[axes[i]] = ir_get_f(roi, i); p->roi[r + axes[i]] = ir_get_f(roi, na + i); }
    }
    if (sc) {
        if (!sc->data) return 0;
        if (ir_numel(sc) != na) return op_fail(c, "scales has %lld values for %d axes", (long long)ir_numel(sc), na);
        for (int k = 0; k < r; k++) p->scales[k] = 1;
        for (int i = 0; i < na; i++) {
            p->scales[axes[i]] = ir_get_f(sc, i);
            if (!(p->scales[axes[i]] > 0)) return op_fail(c, "scale %g must be positive", p->scales[axes[i]]);
        }
        p->have_scales = 1;
    }
    if (p->have_scales) {
        for (int k = 0; k < r; k++) {
            if (x->dims[k] < 0) { p->sizes[k] = -1; continue; }
            double in = (double)x->dims[k];
            if (p->ctm == CT_TF_CROP) in *= p->roi[r + k] - p->roi[k];
            if (op_check_dim(c, "output size", floor(in * p->scales[k]))) return -1;
            p->sizes[k] = (int64_t)floor(in * p->scales[k]);
        }
    } else {
        if (!sz->data) return 0;
        if (ir_numel(sz) != na) return op_fail(c, "sizes has %lld values for %d axes", (long long)ir_numel(sz), na);
        for (int k = 0; k < r; k++) { p->sizes[k] = x->dims[k]; p->scales[k] = 1; }
        for (int i = 0; i < na; i++) {
            int64_t k = axes[i];
            p->sizes[k] = ir_get_i(sz, i);
            if (p->sizes[k] < 0) return op_fail(c, "negative size");
            if (op_check_dim(c, "size", (double)p->sizes[k])) return -1;
            p->scales[k] = x->dims[k] > 0 ? (double)p->sizes[k] / (double)x->dims[k] : 1;
        }
        if (strcmp(policy, "stretch")) { /* one scale for all listed axes */
            double s = p->scales[axes[0]];
            for (int i = 1; i < na; i++) {
                double v = p->scales[axes[i]];
                s = !strcmp(policy, "not_larger") ? (v < s ? v : s) : (v > s ? v : s);
            }
            for (int i = 0; i < na; i++) {
                p->scales[axes[i]] = s;
                if (op_check_dim(c, "size", nearbyint(s * (double)x->dims[axes[i]]))) return -1;
                p->sizes[axes[i]] = (int64_t)nearbyint(s * (double)x->dims[axes[i]]);
            }
        }
    }
    return 1;
}

int infer_resize(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    y->dtype = x->dtype;
    y->ndim = x->ndim;
    for (int k = 0; k < x->ndim; k++) y->dims[k] = -1;
    if (x->ndim < 0) return 0;
    if (!op_dtype_is_float(x->dtype) && x->dtype != IR_U8 && x->dtype != IR_I8 && x->dtype != IR_I32 && x->dtype != IR_I64)
        return op_fail(c, "type %s is not supported", ir_dtype_name(x->dtype));
    RParams p;
    int k = resize_params(c, x, &p);
    if (k < 0) return -1;
    if (k == 1) for (int i = 0; i < x->ndim; i++) y->dims[i] = p.sizes[i];
    return 0;
}

static void cubic_coeffs(double s, double A, double *w)
{
    double t;
    t = s + 1; w[0] = ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
    t = s;     w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    t = 1 - s; w[2] = ((A + 2) * t - (A + 3)) * t * t + 1;
    t = 2 - s; w[3] = ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
}

static void make_taps(const RParams *p, int k, int r, int64_t in, int64_t out, Tap *taps)
{
    double scale = p->scales[k];
    /* the spec's "length_resized" is in*scale, not the floored output size */
    double lr = p->have_scales ? (double)in * scale : (double)out;
    for (int64_t o = 0; o < out; o++) {
        Tap *t = &taps[o];
        double x;
        switch (p->ctm) {
        case CT_HALF: x = (o + 0.5) / scale - 0.5; break;
        case CT_PT_HALF: x = lr > 1 ? (o + 0.5) / scale - 0.5 : 0; break;
        case CT_ALIGN: x = lr > 1 ? (double)o * (double)(in - 1) / (lr - 1) : 0; break;
        case CT_TF_HALF_NN: x = (o + 0.5) / scale; break;
        case CT_TF_CROP: {
            double s = p->roi[k], e = p->roi[r + k];
            x = lr > 1 ? s * (double)(in - 1) + (double)o * (e - s) * (double)(in - 1) / (lr - 1) : 0.5 * (s + e) * (double)(in - 1);
            break;
        }
        default: x = o / scale;
        }
        t->outside = p->ctm == CT_TF_CROP && (x < 0 || x > (double)(in - 1));
        if (p->mode == 0) {
            double f = floor(x), v;
            switch (p->nearest) {
            case 0: v = (x - f == 0.5) ? f : round(x); break;
            case 1: v = (x - f == 0.5) ? f + 1 : round(x); break;
            case 2: v = f; break;
            default: v = ceil(x);
            }
            int64_t i = (int64_t)v;
            t->idx[0] = i < 0 ? 0 : i >= in ? in - 1 : i;
            t->w[0] = 1;
            t->n = 1;
            continue;
        }
        if (p->mode == 1 && p->ctm != CT_TF_CROP) x = x < 0 ? 0 : x > (double)(in - 1) ? (double)(in - 1) : x;
        double f = floor(x), s = x - f;
        int64_t base = (int64_t)f;
        double w[4];
        int n, first;
        if (p->mode == 1) { w[0] = 1 - s; w[1] = s; n = 2; first = 0; }
        else { cubic_coeffs(s, p->a, w); n = 4; first = -1; }
        double sum = 0;
        t->n = 0;
        for (int j = 0; j < n; j++) {
            int64_t i = base + first + j;
            if (p->exclude_outside && (i < 0 || i >= in)) continue;
            sum += w[j];
            if (w[j] == 0) continue;
            t->idx[t->n] = i < 0 ? 0 : i >= in ? in - 1 : i;
            t->w[t->n++] = w[j];
        }
        if (p->exclude_outside && sum != 0)
            for (int j = 0; j < t->n; j++) t->w[j] /= sum;
    }
}

int eval_resize(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    RParams p;
    if (resize_params(c, x, &p) != 1) return op_fail(c, "scales/sizes are not known");
    int r = x->ndim;
    int64_t total = 0;
    for (int k = 0; k < r; k++) total += y->dims[k];
    Tap *taps = malloc(sizeof(Tap) * (size_t)(total + 1));
    if (!taps) return op_fail(c, "out of memory");
    Tap *ax[IR_MAXDIM];
    Tap *q = taps;
    for (int k = 0; k < r; k++) { ax[k] = q; make_taps(&p, k, r, x->dims[k], y->dims[k], q); q += y->dims[k]; }
    int64_t st[IR_MAXDIM], s = 1, idx[IR_MAXDIM] = {0};
    for (int k = r - 1; k >= 0; k--) { st[k] = s; s *= x->dims[k]; }
    int64_t n = ir_numel(y);
    for (int64_t i = 0; i < n; i++) {
        int outside = 0;
        int64_t combos = 1;
        for (int k = 0; k < r; k++) { const Tap *t = &ax[k][idx[k]]; outside |= t->outside; combos *= t->n; }
        double acc = 0;
        if (outside) acc = p.extrapolation;
        else
            for (int64_t cidx = 0; cidx < combos; cidx++) {
                int64_t rem = cidx, off = 0;
                double w = 1;
                for (int k = r - 1; k >= 0; k--) {
                    const Tap *t = &ax[k][idx[k]];
                    int j = (int)(rem % t->n);
                    rem /= t->n;
                    off += t->idx[j] * st[k];
                    w *= t->w[j];
                }
                acc += w * ir_get_f(x, off);
            }
        if (!op_dtype_is_float(y->dtype)) acc = round(acc);
        ir_set_f(y, i, acc);
        for (int k = r - 1; k >= 0; k--) {
            if (++idx[k] < y->dims[k]) break;
            idx[k] = 0;
        }
    }
    free(taps);
    return 0;
}

int resize_axis_matrix(const IrGraph *g, int node, int k, double *m, uint8_t *outside, double *extrap, AtlErr *e)
{
    const IrNode *n = &g->nodes[node];
    IrTensor *in[8] = {0}, *out[1];
    int nin = n->nin < 8 ? n->nin : 8;
    for (int i = 0; i < nin; i++) in[i] = n->in[i] >= 0 ? (IrTensor *)&g->t[n->in[i]] : NULL;
    out[0] = (IrTensor *)&g->t[n->out[0]];
    IrOpCtx c = {n, g->opset, in, nin, out, 1, e};
    const IrTensor *x = in[0];
    RParams p;
    int rc = resize_params(&c, x, &p);
    if (rc < 0) return -1;
    if (rc == 0) return atl_fail(e, "scales/sizes/roi are not constants");
    int r = x->ndim;
    int64_t ni = x->dims[k], no = p.sizes[k];
    Tap *taps = malloc(sizeof(Tap) * (size_t)(no + 1));
    if (!taps) return atl_fail(e, "out of memory");
    make_taps(&p, k, r, ni, no, taps);
    memset(m, 0, sizeof *m * (size_t)(ni * no));
    for (int64_t o = 0; o < no; o++) {
        for (int j = 0; j < taps[o].n; j++) m[o * ni + taps[o].idx[j]] += taps[o].w[j];
        outside[o] = (uint8_t)taps[o].outside;
    }
    *extrap = p.extrapolation;
    free(taps);
    return 0;
}
