/* nn.c - neural-network ops: Conv, ConvTranspose, Gemm, MatMul, pools,
 * normalisations (Batch/Instance/Layer, LRN), Softmax/LogSoftmax.
 *
 * Spatial ops handle 1, 2 and 3 spatial dimensions by treating them as 3-D
 * with leading unit dimensions. The hot kernels (Conv, Gemm/MatMul) are
 * direct loops ordered so that the innermost loop runs over contiguous
 * memory of both operands and vectorises; no im2col buffer. Float32 only. */
#include "compiler/ops/ops.h"
#include <math.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

static int need_f32(IrOpCtx *c, int i)
{
    if (i < c->nin && c->in[i] && c->in[i]->dtype != IR_F32)
        return op_fail(c, "input %d has type %s; only float32 is supported", i, ir_dtype_name(c->in[i]->dtype));
    return 0;
}

/* ---- spatial geometry ---- */

typedef struct Geo {
    int ns;                            /* number of spatial dims */
    int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3]; /* 3-D, leading 1s */
} Geo;

static int read_ints(IrOpCtx *c, const char *name, int64_t *v, int n, int64_t dflt)
{
    const IrAttr *a = ir_attr(c->n, name);
    for (int i = 0; i < n; i++) v[i] = dflt;
    if (!a) return 0;
    if (a->type != IR_ATTR_INTS || a->n != n)
        return op_fail(c, "attribute '%s' must have %d values, has %d", name, n, a->type == IR_ATTR_INTS ? a->n : 1);
    for (int i = 0; i < n; i++) v[i] = a->ints[i];
    return 0;
}

/* Fills g from x's spatial dims and the node's kernel/stride/pad attributes.
 * kernel: kernel sizes (ns values). Unknown input dims give unknown outputs. */
static int geo_init(IrOpCtx *c, const IrTensor *x, const int64_t *kernel, int ns, int transposed, Geo *g)
{
    int64_t s[3], d[3], p[6];
    if (ns < 1 || ns > 3) return op_fail(c, "%d spatial dimensions; 1 to 3 are supported", ns);
    if (read_ints(c, "strides", s, ns, 1) || read_ints(c, "dilations", d, ns, 1) || read_ints(c, "pads", p, 2 * ns, 0))
        return -1;
    const char *ap = ir_attr_str(c->n, "auto_pad", "NOTSET");
    int ceil_mode = (int)ir_attr_int(c->n, "ceil_mode", 0);
    g->ns = ns;
    int o = 3 - ns;
    for (int i = 0; i < 3; i++) { g->in[i] = g->k[i] = g->s[i] = g->d[i] = g->out[i] = 1; g->pb[i] = g->pe[i] = 0; }
    for (int i = 0; i < ns; i++) {
        int j = o + i;
        g->in[j] = x->dims[2 + i];
        g->k[j] = kernel[i];
        g->s[j] = s[i];
        g->d[j] = d[i];
        g->pb[j] = p[i];
        g->pe[j] = p[ns + i];
        if (s[i] < 1 || d[i] < 1 || kernel[i] < 1) return op_fail(c, "strides, dilations and kernel sizes must be positive");
        if (s[i] > (1 << 20) || d[i] > (1 << 20) || kernel[i] > (1 << 20) || op_check_dim(c, "pad", (double)p[i]) ||
            op_check_dim(c, "pad", (double)p[ns + i]))
            return op_fail(c, "strides, dilations, kernel sizes (<= 2^20) or pads (<= 2^40) out of range");
        if (p[i] < 0 || p[ns + i] < 0) return op_fail(c, "negative pads are not supported");
        int64_t ek = (kernel[i] - 1) * d[i] + 1, in = g->in[j];
        if (in < 0) { g->out[j] = -1; continue; }
        if (transposed) continue; /* ConvTranspose computes its own output size */
        if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
            int64_t out = (in + s[i] - 1) / s[i];
            int64_t total = (out - 1) * s[i] + ek - in;
            if (total < 0) total = 0;
            g->pb[j] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
            g->pe[j] = total - g->pb[j];
            g->out[j] = out;
        } else if (!strcmp(ap, "VALID")) {
            g->pb[j] = g->pe[j] = 0;
            g->out[j] = in < ek ? 0 : (in - ek) / s[i] + 1;
        } else if (!strcmp(ap, "NOTSET")) {
            int64_t span = in + g->pb[j] + g->pe[j] - ek;
            if (span < 0) return op_fail(c, "kernel (extent %lld) is larger than the padded input (%lld)", (long long)ek,
                                         (long long)(in + g->pb[j] + g->pe[j]));
            int64_t out = ceil_mode ? (span + s[i] - 1) / s[i] + 1 : span / s[i] + 1;
            if (ceil_mode && (out - 1) * s[i] >= in + g->pb[j]) out--; /* last window must start inside */
            g->out[j] = out;
        } else {
            return op_fail(c, "auto_pad '%s' is not supported", ap);
        }
    }
    return 0;
}

static int kernel_of(IrOpCtx *c, const IrTensor *w, int ns, int64_t *k)
{
    const IrAttr *a = ir_attr(c->n, "kernel_shape");
    if (a) {
        if (a->type != IR_ATTR_INTS || a->n != ns) return op_fail(c, "kernel_shape must have %d values", ns);
        for (int i = 0; i < ns; i++) {
            k[i] = a->ints[i];
            /* the weights decide: an attribute that says otherwise is an error, not a different kernel */
            if (w && w->ndim == ns + 2 && w->dims[2 + i] >= 0 && k[i] != w->dims[2 + i])
                return op_fail(c, "kernel_shape[%d] = %lld contradicts the weight's kernel size %lld (weight shape dimension %d)",
                               i, (long long)k[i], (long long)w->dims[2 + i], 2 + i);
        }
        return 0;
    }
    if (!w) return op_fail(c, "attribute 'kernel_shape' is required");
    for (int i = 0; i < ns; i++) {
        k[i] = w->dims[2 + i];
        if (k[i] < 0) return op_fail(c, "weight has unknown kernel size");
    }
    return 0;
}

/* ---- Conv ---- */

/* Output shape of a convolution of x by w (bias may be NULL); shared by
 * Conv, ConvInteger and QLinearConv. */
static int conv_shape(IrOpCtx *c, const IrTensor *x, const IrTensor *w, const IrTensor *bias, int dtype)
{
    if (w->ndim < 0) { c->out[0]->dtype = dtype; c->out[0]->ndim = x->ndim; for (int i = 0; i < x->ndim; i++) c->out[0]->dims[i] = -1; return 0; }
    if (w->ndim < 3) return op_fail(c, "weight has rank %d, needs at least 3", w->ndim);
    if (x->ndim >= 0 && x->ndim != w->ndim)
        return op_fail(c, "input rank %d does not match weight rank %d", x->ndim, w->ndim);
    int ns = w->ndim - 2;
    int64_t group = ir_attr_int(c->n, "group", 1);
    if (group < 1) return op_fail(c, "group must be positive");
    if (x->ndim >= 0 && x->dims[1] >= 0 && w->dims[1] >= 0 && x->dims[1] != w->dims[1] * group)
        return op_fail(c, "input has %lld channels but weight expects %lld x group %lld", (long long)x->dims[1],
                       (long long)w->dims[1], (long long)group);
    if (w->dims[0] >= 0 && w->dims[0] % group)
        return op_fail(c, "%lld output channels are not divisible by group %lld", (long long)w->dims[0], (long long)group);
    if (bias && bias->ndim >= 0 && ir_numel(bias) >= 0 && w->dims[0] >= 0 && ir_numel(bias) != w->dims[0])
        return op_fail(c, "bias has %lld values for %lld output channels", (long long)ir_numel(bias), (long long)w->dims[0]);
    IrTensor *y = c->out[0];
    y->dtype = dtype;
    y->ndim = w->ndim;
    y->dims[0] = x->ndim >= 0 ? x->dims[0] : -1;
    y->dims[1] = w->dims[0];
    if (x->ndim < 0) { for (int i = 0; i < ns; i++) y->dims[2 + i] = -1; return 0; }
    int64_t k[3];
    Geo g;
    if (kernel_of(c, w, ns, k) || geo_init(c, x, k, ns, 0, &g)) return -1;
    for (int i = 0; i < ns; i++) y->dims[2 + i] = g.out[3 - ns + i];
    return 0;
}

int infer_conv(IrOpCtx *c)
{
    if (need_f32(c, 0) || need_f32(c, 1) || need_f32(c, 2)) return -1;
    return conv_shape(c, c->in[0], c->in[1], c->nin > 2 ? c->in[2] : NULL, IR_F32);
}

int eval_conv(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *w = c->in[1], *b = c->nin > 2 ? c->in[2] : NULL;
    IrTensor *y = c->out[0];
    int ns = w->ndim - 2;
    int64_t k[3];
    Geo g;
    if (kernel_of(c, w, ns, k) || geo_init(c, x, k, ns, 0, &g)) return -1;
    int64_t N = x->dims[0], C = x->dims[1], M = w->dims[0], G = ir_attr_int(c->n, "group", 1);
    int64_t Cg = C / G, Mg = M / G;
    int64_t ID = g.in[0], IH = g.in[1], IW = g.in[2], OD = g.out[0], OH = g.out[1], OW = g.out[2];
    int64_t KD = g.k[0], KH = g.k[1], KW = g.k[2];
    int64_t isz = ID * IH * IW, osz = OD * OH * OW, ksz = KD * KH * KW;
    const float *X = x->data, *W = w->data, *B = b ? b->data : NULL;
    float *Y = y->data;
    int64_t *lo = malloc(sizeof(int64_t) * (size_t)KW * 2 + 16);
    if (!lo) return op_fail(c, "out of memory");
    int64_t *hi = lo + KW;
    for (int64_t kw = 0; kw < KW; kw++) { /* valid ow range for this kernel column */
        int64_t a = kw * g.d[2] - g.pb[2];
        int64_t l = a >= 0 ? 0 : (-a + g.s[2] - 1) / g.s[2];
        int64_t h = IW - a <= 0 ? 0 : (IW - a - 1) / g.s[2] + 1;
        if (h > OW) h = OW;
        lo[kw] = l; hi[kw] = h;
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t gr = 0; gr < G; gr++)
            for (int64_t m = gr * Mg; m < (gr + 1) * Mg; m++) {
                float *O = Y + (n * M + m) * osz;
                float bias = B ? B[m] : 0.0f;
                for (int64_t i = 0; i < osz; i++) O[i] = bias;
                for (int64_t ci = 0; ci < Cg; ci++) {
                    const float *I = X + (n * C + gr * Cg + ci) * isz;
                    const float *Wk = W + (m * Cg + ci) * ksz;
                    for (int64_t kd = 0; kd < KD; kd++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                float wv = Wk[(kd * KH + kh) * KW + kw];
                                int64_t a = kw * g.d[2] - g.pb[2], l = lo[kw], h = hi[kw];
                                for (int64_t od = 0; od < OD; od++) {
                                    int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
                                    if (id < 0 || id >= ID) continue;
                                    for (int64_t oh = 0; oh < OH; oh++) {
                                        int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
                                        if (ih < 0 || ih >= IH) continue;
                                        float *orow = O + (od * OH + oh) * OW;
                                        const float *irow = I + (id * IH + ih) * IW + a;
                                        if (g.s[2] == 1)
                                            for (int64_t ow = l; ow < h; ow++) orow[ow] += wv * irow[ow];
                                        else
                                            for (int64_t ow = l; ow < h; ow++) orow[ow] += wv * irow[ow * g.s[2]];
                                    }
                                }
                            }
                }
            }
    free(lo);
    return 0;
}

/* ---- ConvTranspose ---- */

static int convt_geo(IrOpCtx *c, const IrTensor *x, const IrTensor *w, Geo *g)
{
    int ns = w->ndim - 2;
    int64_t k[3], op[3], os[3];
    if (kernel_of(c, w, ns, k) || geo_init(c, x, k, ns, 1, g)) return -1;
    if (read_ints(c, "output_padding", op, ns, 0)) return -1;
    const IrAttr *osa = ir_attr(c->n, "output_shape");
    int have_os = 0;
    if (osa) {
        if (osa->type != IR_ATTR_INTS || (osa->n != ns && osa->n != ns + 2)) return op_fail(c, "output_shape must have %d values", ns);
        for (int i = 0; i < ns; i++) os[i] = osa->ints[osa->n - ns + i];
        have_os = 1;
    }
    const char *ap = ir_attr_str(c->n, "auto_pad", "NOTSET");
    int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    for (int i = 0; i < ns; i++) {
        int j = 3 - ns + i;
        int64_t in = g->in[j], ek = (g->k[j] - 1) * g->d[j] + 1;
        if (in < 0) { g->out[j] = -1; continue; }
        if (have_os || same) {
            int64_t target = have_os ? os[i] : in * g->s[j];
            int64_t total = g->s[j] * (in - 1) + op[i] + ek - target;
            if (total < 0) total = 0;
            if (!strcmp(ap, "SAME_UPPER") || (!same && have_os)) { g->pb[j] = total / 2; g->pe[j] = total - total / 2; }
            else { g->pb[j] = total - total / 2; g->pe[j] = total / 2; }
            if (!same && have_os && ir_attr(c->n, "pads")) {} /* explicit pads are overridden by output_shape */
            g->out[j] = target;
        } else {
            g->out[j] = g->s[j] * (in - 1) + op[i] + ek - g->pb[j] - g->pe[j];
        }
        if (g->out[j] < 0) return op_fail(c, "output size would be negative");
    }
    return 0;
}

int infer_convtranspose(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *w = c->in[1];
    if (need_f32(c, 0) || need_f32(c, 1) || need_f32(c, 2)) return -1;
    if (w->ndim < 3 || w->ndim > 5) return op_fail(c, "weight has rank %d, needs 3 to 5", w->ndim);
    int64_t G = ir_attr_int(c->n, "group", 1);
    if (G < 1) return op_fail(c, "group must be positive");
    IrTensor *y = c->out[0];
    y->dtype = IR_F32;
    y->ndim = w->ndim;
    y->dims[0] = x->ndim >= 0 ? x->dims[0] : -1;
    y->dims[1] = w->dims[1] < 0 ? -1 : w->dims[1] * G;
    int ns = w->ndim - 2;
    if (x->ndim < 0) { for (int i = 0; i < ns; i++) y->dims[2 + i] = -1; return 0; }
    if (x->ndim != w->ndim) return op_fail(c, "input rank %d does not match weight rank %d", x->ndim, w->ndim);
    if (x->dims[1] >= 0 && w->dims[0] >= 0 && x->dims[1] != w->dims[0])
        return op_fail(c, "input has %lld channels, weight expects %lld", (long long)x->dims[1], (long long)w->dims[0]);
    Geo g;
    if (convt_geo(c, x, w, &g)) return -1;
    for (int i = 0; i < ns; i++) y->dims[2 + i] = g.out[3 - ns + i];
    return 0;
}

int eval_convtranspose(IrOpCtx *c)
{
    const IrTensor *x = c->in[0], *w = c->in[1], *b = c->nin > 2 ? c->in[2] : NULL;
    IrTensor *y = c->out[0];
    Geo g;
    if (convt_geo(c, x, w, &g)) return -1;
    int64_t N = x->dims[0], C = x->dims[1], G = ir_attr_int(c->n, "group", 1);
    int64_t Cg = C / G, Mg = w->dims[1], M = Mg * G;
    int64_t isz = g.in[0] * g.in[1] * g.in[2], osz = g.out[0] * g.out[1] * g.out[2], ksz = g.k[0] * g.k[1] * g.k[2];
    const float *X = x->data, *W = w->data;
    float *Y = y->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            float bias = b ? ((const float *)b->data)[m] : 0.0f;
            float *O = Y + (n * M + m) * osz;
            for (int64_t i = 0; i < osz; i++) O[i] = bias;
        }
    for (int64_t n = 0; n < N; n++)
        for (int64_t gr = 0; gr < G; gr++)
            for (int64_t ci = 0; ci < Cg; ci++) {
                const float *I = X + (n * C + gr * Cg + ci) * isz;
                for (int64_t mo = 0; mo < Mg; mo++) {
                    float *O = Y + (n * M + gr * Mg + mo) * osz;
                    const float *Wk = W + ((gr * Cg + ci) * Mg + mo) * ksz;
                    for (int64_t kd = 0; kd < g.k[0]; kd++)
                        for (int64_t kh = 0; kh < g.k[1]; kh++)
                            for (int64_t kw = 0; kw < g.k[2]; kw++) {
                                float wv = Wk[(kd * g.k[1] + kh) * g.k[2] + kw];
                                for (int64_t id = 0; id < g.in[0]; id++) {
                                    int64_t od = id * g.s[0] - g.pb[0] + kd * g.d[0];
                                    if (od < 0 || od >= g.out[0]) continue;
                                    for (int64_t ih = 0; ih < g.in[1]; ih++) {
                                        int64_t oh = ih * g.s[1] - g.pb[1] + kh * g.d[1];
                                        if (oh < 0 || oh >= g.out[1]) continue;
                                        const float *irow = I + (id * g.in[1] + ih) * g.in[2];
                                        float *orow = O + (od * g.out[1] + oh) * g.out[2];
                                        for (int64_t iw = 0; iw < g.in[2]; iw++) {
                                            int64_t ow = iw * g.s[2] - g.pb[2] + kw * g.d[2];
                                            if (ow >= 0 && ow < g.out[2]) orow[ow] += wv * irow[iw];
                                        }
                                    }
                                }
                            }
                }
            }
    return 0;
}

/* ---- matrix products ---- */

/* C[M,N] += A[M,K] * B[K,N] with element strides; picks a loop order whose
 * innermost loop is contiguous. */
static void sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t sam, int64_t sak,
                  const float *B, int64_t sbk, int64_t sbn, float *C, float alpha)
{
    if (sbn == 1) {
        for (int64_t m = 0; m < M; m++) {
            float *crow = C + m * N;
            for (int64_t k = 0; k < K; k++) {
                float a = alpha * A[m * sam + k * sak];
                const float *brow = B + k * sbk;
                for (int64_t n = 0; n < N; n++) crow[n] += a * brow[n];
            }
        }
    } else if (sak == 1 && sbk == 1) {
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                const float *a = A + m * sam, *b = B + n * sbn;
                float s = 0;
                for (int64_t k = 0; k < K; k++) s += a[k] * b[k];
                C[m * N + n] += alpha * s;
            }
    } else {
        for (int64_t m = 0; m < M; m++)
            for (int64_t k = 0; k < K; k++) {
                float a = alpha * A[m * sam + k * sak];
                for (int64_t n = 0; n < N; n++) C[m * N + n] += a * B[k * sbk + n * sbn];
            }
    }
}

int infer_gemm(IrOpCtx *c)
{
    const IrTensor *a = c->in[0], *b = c->in[1];
    if (need_f32(c, 0) || need_f32(c, 1) || need_f32(c, 2)) return -1;
    if ((a->ndim >= 0 && a->ndim != 2) || (b->ndim >= 0 && b->ndim != 2))
        return op_fail(c, "A and B must be 2-D (got ranks %d and %d)", a->ndim, b->ndim);
    int ta = (int)ir_attr_int(c->n, "transA", 0), tb = (int)ir_attr_int(c->n, "transB", 0);
    int64_t M = a->ndim < 0 ? -1 : a->dims[ta ? 1 : 0], K1 = a->ndim < 0 ? -1 : a->dims[ta ? 0 : 1];
    int64_t K2 = b->ndim < 0 ? -1 : b->dims[tb ? 1 : 0], N = b->ndim < 0 ? -1 : b->dims[tb ? 0 : 1];
    if (K1 >= 0 && K2 >= 0 && K1 != K2) return op_fail(c, "inner dimensions differ: %lld vs %lld", (long long)K1, (long long)K2);
    IrTensor *y = c->out[0];
    y->dtype = IR_F32;
    y->ndim = 2;
    y->dims[0] = M;
    y->dims[1] = N;
    if (c->nin > 2 && c->in[2] && c->in[2]->ndim >= 0) {
        IrTensor tmp = *y;
        IrTensor *ins[2] = {y, c->in[2]};
        if (op_broadcast_shape(c, ins, 2, &tmp)) return -1;
        if (tmp.ndim != 2 || (M >= 0 && tmp.dims[0] != M) || (N >= 0 && tmp.dims[1] != N))
            return op_fail(c, "C cannot be broadcast to %lldx%lld", (long long)M, (long long)N);
    }
    return 0;
}

int eval_gemm(IrOpCtx *c)
{
    const IrTensor *a = c->in[0], *b = c->in[1], *cc = c->nin > 2 ? c->in[2] : NULL;
    IrTensor *y = c->out[0];
    int ta = (int)ir_attr_int(c->n, "transA", 0), tb = (int)ir_attr_int(c->n, "transB", 0);
    float alpha = ir_attr_float(c->n, "alpha", 1.0f), beta = ir_attr_float(c->n, "beta", 1.0f);
    int64_t M = y->dims[0], N = y->dims[1], K = a->dims[ta ? 0 : 1];
    float *Y = y->data;
    if (cc) {
        const float *C = cc->data;
        int r = cc->ndim;
        int64_t d0 = r == 2 ? cc->dims[0] : 1, d1 = r >= 1 ? cc->dims[r - 1] : 1;
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++)
                Y[m * N + n] = beta * C[(d0 == 1 ? 0 : m) * d1 + (d1 == 1 ? 0 : n)];
    }
    int64_t sam = ta ? 1 : K, sak = ta ? M : 1, sbk = tb ? 1 : N, sbn = tb ? K : 1;
    sgemm(M, N, K, a->data, sam, sak, b->data, sbk, sbn, Y, alpha);
    return 0;
}

/* Numpy-style matmul output shape (1-D operands promoted, batch dims
 * broadcast); shared by MatMul, MatMulInteger and QLinearMatMul. */
static int matmul_shape(IrOpCtx *c, const IrTensor *a, const IrTensor *b, IrTensor *y)
{
    if (a->ndim < 0 || b->ndim < 0) { y->ndim = -1; return 0; }
    if (a->ndim == 0 || b->ndim == 0) return op_fail(c, "scalar operands are not allowed");
    IrTensor ab = *a, bb = *b;
    if (a->ndim == 1) { ab.ndim = 2; ab.dims[0] = 1; ab.dims[1] = a->dims[0]; }
    if (b->ndim == 1) { bb.ndim = 2; bb.dims[0] = b->dims[0]; bb.dims[1] = 1; }
    int64_t K1 = ab.dims[ab.ndim - 1], K2 = bb.dims[bb.ndim - 2];
    if (K1 >= 0 && K2 >= 0 && K1 != K2) return op_fail(c, "inner dimensions differ: %lld vs %lld", (long long)K1, (long long)K2);
    IrTensor ba = ab, bbb = bb, out;
    ba.ndim -= 2; bbb.ndim -= 2;
    IrTensor *ins[2] = {&ba, &bbb};
    if (op_broadcast_shape(c, ins, 2, &out)) return -1;
    y->ndim = out.ndim;
    memcpy(y->dims, out.dims, sizeof y->dims);
    if (a->ndim > 1) y->dims[y->ndim++] = ab.dims[ab.ndim - 2];
    if (b->ndim > 1) y->dims[y->ndim++] = bb.dims[bb.ndim - 1];
    if (y->ndim > IR_MAXDIM) return op_fail(c, "rank too large");
    return 0;
}

int infer_matmul(IrOpCtx *c)
{
    if (need_f32(c, 0) || need_f32(c, 1)) return -1;
    c->out[0]->dtype = IR_F32;
    return matmul_shape(c, c->in[0], c->in[1], c->out[0]);
}

/* Calls kern(ctx, M, N, K, a_off, b_off, y_off) for every matrix of a
 * batched matmul (offsets in elements). */
typedef void (*MmKernel)(void *ctx, int64_t M, int64_t N, int64_t K, int64_t ao, int64_t bo, int64_t yo);
static int matmul_batched(IrOpCtx *c, const IrTensor *a, const IrTensor *b, MmKernel kern, void *ctx)
{
    IrTensor ab = *a, bb = *b;
    if (a->ndim == 1) { ab.ndim = 2; ab.dims[0] = 1; ab.dims[1] = a->dims[0]; }
    if (b->ndim == 1) { bb.ndim = 2; bb.dims[0] = b->dims[0]; bb.dims[1] = 1; }
    int64_t M = ab.dims[ab.ndim - 2], K = ab.dims[ab.ndim - 1], N = bb.dims[bb.ndim - 1];
    IrTensor ba = ab, bbb = bb, out;
    ba.ndim -= 2; bbb.ndim -= 2;
    IrTensor *ins[2] = {&ba, &bbb};
    if (op_broadcast_shape(c, ins, 2, &out)) return -1;
    int64_t nb = ir_numel(&out);
    int r = out.ndim;
    int64_t sa[IR_MAXDIM], sb[IR_MAXDIM];
    const IrTensor *src[2] = {&ba, &bbb};
    int64_t *dst[2] = {sa, sb};
    for (int q = 0; q < 2; q++) { /* batch strides in units of matrices */
        int64_t s = 1;
        int off = r - src[q]->ndim;
        for (int k = r - 1; k >= 0; k--) {
            if (k < off) { dst[q][k] = 0; continue; }
            dst[q][k] = src[q]->dims[k - off] == 1 ? 0 : s;
            s *= src[q]->dims[k - off];
        }
    }
    for (int64_t i = 0; i < nb; i++) {
        int64_t rem = i, ia = 0, ib = 0;
        for (int k = r - 1; k >= 0; k--) {
            int64_t idx = rem % out.dims[k];
            rem /= out.dims[k];
            ia += idx * sa[k];
            ib += idx * sb[k];
        }
        kern(ctx, M, N, K, ia * M * K, ib * K * N, i * M * N);
    }
    return 0;
}

typedef struct MmF32 { const float *a, *b; float *y; } MmF32;
static void mm_f32(void *ctx, int64_t M, int64_t N, int64_t K, int64_t ao, int64_t bo, int64_t yo)
{
    MmF32 *m = ctx;
    sgemm(M, N, K, m->a + ao, K, 1, m->b + bo, N, 1, m->y + yo, 1.0f);
}

int eval_matmul(IrOpCtx *c)
{
    MmF32 m = {c->in[0]->data, c->in[1]->data, c->out[0]->data};
    return matmul_batched(c, c->in[0], c->in[1], mm_f32, &m);
}

/* ---- pools ---- */

int infer_pool(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    int ismax = !strcmp(c->n->op, "MaxPool");
    if (!ismax && need_f32(c, 0)) return -1;
    if (ismax && x->dtype != IR_F32 && x->dtype != IR_U8 && x->dtype != IR_I8 && x->dtype != IR_F64)
        return op_fail(c, "type %s is not supported", ir_dtype_name(x->dtype));
    IrTensor *y = c->out[0];
    op_same_shape(y, x);
    if (x->ndim < 0) return 0;
    if (x->ndim < 3) return op_fail(c, "input rank %d, needs at least 3", x->ndim);
    int64_t k[3];
    Geo g;
    if (kernel_of(c, NULL, x->ndim - 2, k) || geo_init(c, x, k, x->ndim - 2, 0, &g)) return -1;
    for (int i = 0; i < g.ns; i++) y->dims[2 + i] = g.out[3 - g.ns + i];
    if (c->nout > 1 && c->out[1]) {
        if (!ismax) return op_fail(c, "has a second output");
        op_same_shape(c->out[1], y);
        c->out[1]->dtype = IR_I64;
    }
    return 0;
}

int eval_pool(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0], *ind = c->nout > 1 ? c->out[1] : NULL;
    int ismax = !strcmp(c->n->op, "MaxPool");
    int cip = (int)ir_attr_int(c->n, "count_include_pad", 0);
    int colmajor = (int)ir_attr_int(c->n, "storage_order", 0);
    int64_t k[3];
    Geo g;
    if (kernel_of(c, NULL, x->ndim - 2, k) || geo_init(c, x, k, x->ndim - 2, 0, &g)) return -1;
    int64_t NC = x->dims[0] * x->dims[1];
    int64_t isz = g.in[0] * g.in[1] * g.in[2];
    int64_t oi = 0;
    for (int64_t p = 0; p < NC; p++)
        for (int64_t od = 0; od < g.out[0]; od++)
            for (int64_t oh = 0; oh < g.out[1]; oh++)
                for (int64_t ow = 0; ow < g.out[2]; ow++, oi++) {
                    double acc = ismax ? -INFINITY : 0;
                    int64_t cnt = 0, best = -1, padcnt = 0;
                    for (int64_t kd = 0; kd < g.k[0]; kd++) {
                        int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
                        for (int64_t kh = 0; kh < g.k[1]; kh++) {
                            int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
                            for (int64_t kw = 0; kw < g.k[2]; kw++) {
                                int64_t iw = ow * g.s[2] - g.pb[2] + kw * g.d[2];
                                int inpad = id < g.in[0] + g.pe[0] && ih < g.in[1] + g.pe[1] && iw < g.in[2] + g.pe[2];
                                if (id < 0 || ih < 0 || iw < 0 || id >= g.in[0] || ih >= g.in[1] || iw >= g.in[2]) {
                                    if (inpad) padcnt++;
                                    continue;
                                }
                                int64_t ix = (id * g.in[1] + ih) * g.in[2] + iw;
                                double v = ir_get_f(x, p * isz + ix);
                                if (ismax) {
                                    if (v > acc || best < 0) {
                                        acc = v;
                                        best = colmajor ? (iw * g.in[1] + ih) * g.in[0] + id : ix;
                                    }
                                }
                                else acc += v;
                                cnt++;
                            }
                        }
                    }
                    if (ismax) {
                        ir_set_f(y, oi, acc);
                        if (ind) ((int64_t *)ind->data)[oi] = p * isz + (best < 0 ? 0 : best);
                    } else {
                        int64_t div = cip ? cnt + padcnt : cnt;
                        ir_set_f(y, oi, div ? acc / (double)div : 0);
                    }
                }
    return 0;
}

int infer_globalpool(IrOpCtx *c)
{
    if (need_f32(c, 0)) return -1;
    op_same_shape(c->out[0], c->in[0]);
    if (c->in[0]->ndim >= 0 && c->in[0]->ndim < 2) return op_fail(c, "input rank %d, needs at least 2", c->in[0]->ndim);
    for (int i = 2; i < c->in[0]->ndim; i++) c->out[0]->dims[i] = 1;
    return 0;
}

int eval_globalpool(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    int ismax = !strcmp(c->n->op, "GlobalMaxPool");
    int64_t NC = x->dims[0] * x->dims[1], sp = ir_numel(x) / (NC ? NC : 1);
    const float *X = x->data;
    float *Y = c->out[0]->data;
    for (int64_t p = 0; p < NC; p++) {
        const float *r = X + p * sp;
        double acc = ismax ? -INFINITY : 0;
        for (int64_t i = 0; i < sp; i++) acc = ismax ? (r[i] > acc ? r[i] : acc) : acc + r[i];
        Y[p] = (float)(ismax ? acc : acc / (double)sp);
    }
    return 0;
}

/* ---- normalisations ---- */

int infer_batchnorm(IrOpCtx *c)
{
    for (int i = 0; i < 5; i++) if (need_f32(c, i)) return -1;
    int training = c->opset >= 14 && ir_attr_int(c->n, "training_mode", 0);
    for (int i = 1; i < c->nout; i++)
        if (c->out[i] && !training) return op_fail(c, "running mean/var outputs without training_mode=1 are not supported");
    const IrTensor *x = c->in[0];
    op_same_shape(c->out[0], x);
    for (int i = 1; i < c->nout && i < 3; i++)
        if (c->out[i]) op_same_shape(c->out[i], c->in[2 + i]);
    if (x->ndim >= 0 && x->ndim < 2) return op_fail(c, "input rank %d, needs at least 2", x->ndim);
    for (int i = 1; i < 5; i++)
        if (x->ndim >= 0 && x->dims[1] >= 0 && ir_numel(c->in[i]) >= 0 && ir_numel(c->in[i]) != x->dims[1])
            return op_fail(c, "input %d has %lld values for %lld channels", i, (long long)ir_numel(c->in[i]), (long long)x->dims[1]);
    return 0;
}

int eval_batchnorm(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    const float *X = x->data, *sc = c->in[1]->data, *bi = c->in[2]->data, *mu = c->in[3]->data, *va = c->in[4]->data;
    float eps = ir_attr_float(c->n, "epsilon", 1e-5f);
    float *Y = c->out[0]->data;
    int64_t N = x->dims[0], C = x->dims[1], sp = 1;
    for (int i = 2; i < x->ndim; i++) sp *= x->dims[i];
    int training = c->opset >= 14 && ir_attr_int(c->n, "training_mode", 0);
    float mom = ir_attr_float(c->n, "momentum", 0.9f);
    for (int64_t ch = 0; ch < C; ch++) {
        float m = mu[ch], v = va[ch];
        if (training) { /* batch statistics; running stats updated with momentum */
            double s = 0, q = 0;
            for (int64_t n = 0; n < N; n++)
                for (int64_t i = 0; i < sp; i++) s += X[(n * C + ch) * sp + i];
            s /= (double)(N * sp);
            for (int64_t n = 0; n < N; n++)
                for (int64_t i = 0; i < sp; i++) { double d = X[(n * C + ch) * sp + i] - s; q += d * d; }
            q /= (double)(N * sp);
            if (c->nout > 1 && c->out[1]) ((float *)c->out[1]->data)[ch] = (float)(mu[ch] * mom + s * (1 - mom));
            if (c->nout > 2 && c->out[2]) ((float *)c->out[2]->data)[ch] = (float)(va[ch] * mom + q * (1 - mom));
            m = (float)s;
            v = (float)q;
        }
        float a = sc[ch] / sqrtf(v + eps), b = bi[ch] - m * a;
        for (int64_t n = 0; n < N; n++) {
            const float *r = X + (n * C + ch) * sp;
            float *o = Y + (n * C + ch) * sp;
            for (int64_t i = 0; i < sp; i++) o[i] = r[i] * a + b;
        }
    }
    return 0;
}

int infer_instancenorm(IrOpCtx *c)
{
    for (int i = 0; i < 3; i++) if (need_f32(c, i)) return -1;
    op_same_shape(c->out[0], c->in[0]);
    if (c->in[0]->ndim >= 0 && c->in[0]->ndim < 3) return op_fail(c, "input rank %d, needs at least 3", c->in[0]->ndim);
    return 0;
}

int eval_instancenorm(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    const float *X = x->data, *sc = c->in[1]->data, *bi = c->in[2]->data;
    float eps = ir_attr_float(c->n, "epsilon", 1e-5f);
    float *Y = c->out[0]->data;
    int64_t N = x->dims[0], C = x->dims[1], sp = 1;
    for (int i = 2; i < x->ndim; i++) sp *= x->dims[i];
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++) {
            const float *r = X + (n * C + ch) * sp;
            float *o = Y + (n * C + ch) * sp;
            double m = 0, v = 0;
            for (int64_t i = 0; i < sp; i++) m += r[i];
            m /= (double)sp;
            for (int64_t i = 0; i < sp; i++) v += (r[i] - m) * (r[i] - m);
            v /= (double)sp;
            double a = sc[ch] / sqrt(v + eps);
            for (int64_t i = 0; i < sp; i++) o[i] = (float)((r[i] - m) * a + bi[ch]);
        }
    return 0;
}

int infer_layernorm(IrOpCtx *c)
{
    for (int i = 0; i < 3; i++) if (need_f32(c, i)) return -1;
    const IrTensor *x = c->in[0];
    op_same_shape(c->out[0], x);
    int64_t axis = ir_attr_int(c->n, "axis", -1);
    if (x->ndim < 0) { for (int i = 1; i < c->nout; i++) if (c->out[i]) { c->out[i]->dtype = IR_F32; c->out[i]->ndim = -1; } return 0; }
    if (op_axis(c, axis, x->ndim, &axis)) return -1;
    for (int i = 1; i < c->nout && i < 3; i++) {
        if (!c->out[i]) continue;
        op_same_shape(c->out[i], x);
        for (int k = (int)axis; k < x->ndim; k++) c->out[i]->dims[k] = 1;
    }
    return 0;
}

/* Expands t (broadcastable to dims[0..r)) into a dense array of that shape. */
static float *expand_dense(const IrTensor *t, const int64_t *dims, int r, int64_t total)
{
    float *o = malloc((size_t)total * sizeof *o + 4);
    if (!o) return NULL;
    int off = r - t->ndim;
    for (int64_t i = 0; i < total; i++) {
        int64_t rem = i, src = 0, s = 1;
        for (int k = r - 1; k >= 0; k--) {
            int64_t idx = rem % dims[k];
            rem /= dims[k];
            if (k >= off) {
                int64_t d = t->dims[k - off];
                src += (d == 1 ? 0 : idx) * s;
                s *= d;
            }
        }
        o[i] = ((const float *)t->data)[src];
    }
    return o;
}

int eval_layernorm(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    int64_t axis = ir_attr_int(c->n, "axis", -1);
    if (op_axis(c, axis, x->ndim, &axis)) return -1;
    float eps = ir_attr_float(c->n, "epsilon", 1e-5f);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= x->dims[k];
    for (int k = (int)axis; k < x->ndim; k++) inner *= x->dims[k];
    float *sc = expand_dense(c->in[1], x->dims + axis, x->ndim - (int)axis, inner);
    float *bi = c->nin > 2 && c->in[2] ? expand_dense(c->in[2], x->dims + axis, x->ndim - (int)axis, inner) : NULL;
    if (!sc || (c->nin > 2 && c->in[2] && !bi)) { free(sc); free(bi); return op_fail(c, "out of memory"); }
    const float *X = x->data;
    float *Y = c->out[0]->data;
    float *Mo = c->nout > 1 && c->out[1] ? c->out[1]->data : NULL;
    float *Is = c->nout > 2 && c->out[2] ? c->out[2]->data : NULL;
    for (int64_t o = 0; o < outer; o++) {
        const float *r = X + o * inner;
        double m = 0, v = 0;
        for (int64_t i = 0; i < inner; i++) m += r[i];
        m /= (double)inner;
        for (int64_t i = 0; i < inner; i++) v += (r[i] - m) * (r[i] - m);
        v /= (double)inner;
        double is = 1.0 / sqrt(v + eps);
        for (int64_t i = 0; i < inner; i++) Y[o * inner + i] = (float)((r[i] - m) * is * sc[i] + (bi ? bi[i] : 0));
        if (Mo) Mo[o] = (float)m;
        if (Is) Is[o] = (float)is;
    }
    free(sc);
    free(bi);
    return 0;
}

int infer_lrn(IrOpCtx *c)
{
    if (need_f32(c, 0)) return -1;
    if (ir_attr_int(c->n, "size", 0) < 1) return op_fail(c, "attribute 'size' must be positive");
    if (c->in[0]->ndim >= 0 && c->in[0]->ndim < 2) return op_fail(c, "input rank %d, needs at least 2", c->in[0]->ndim);
    op_same_shape(c->out[0], c->in[0]);
    return 0;
}

int eval_lrn(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    int64_t size = ir_attr_int(c->n, "size", 1);
    double alpha = ir_attr_float(c->n, "alpha", 1e-4f), beta = ir_attr_float(c->n, "beta", 0.75f), bias = ir_attr_float(c->n, "bias", 1.0f);
    int64_t N = x->dims[0], C = x->dims[1], sp = 1;
    for (int i = 2; i < x->ndim; i++) sp *= x->dims[i];
    const float *X = x->data;
    float *Y = c->out[0]->data;
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t i = 0; i < sp; i++) {
                double s = 0;
                for (int64_t q = ch - lo; q <= ch + hi; q++)
                    if (q >= 0 && q < C) { double v = X[(n * C + q) * sp + i]; s += v * v; }
                Y[(n * C + ch) * sp + i] = (float)(X[(n * C + ch) * sp + i] / pow(bias + alpha / (double)size * s, beta));
            }
    return 0;
}

int infer_softmax(IrOpCtx *c)
{
    if (need_f32(c, 0)) return -1;
    op_same_shape(c->out[0], c->in[0]);
    if (c->in[0]->ndim >= 0) {
        int64_t axis;
        if (op_axis(c, ir_attr_int(c->n, "axis", c->opset >= 13 ? -1 : 1), c->in[0]->ndim, &axis)) return -1;
    }
    return 0;
}

int eval_softmax(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    int64_t axis;
    if (op_axis(c, ir_attr_int(c->n, "axis", c->opset >= 13 ? -1 : 1), x->ndim, &axis)) return -1;
    int64_t outer = 1, D = 1, inner = 1;
    for (int k = 0; k < axis; k++) outer *= x->dims[k];
    if (c->opset >= 13) {
        D = x->ndim ? x->dims[axis] : 1;
        for (int k = (int)axis + 1; k < x->ndim; k++) inner *= x->dims[k];
    } else {
        for (int k = (int)axis; k < x->ndim; k++) D *= x->dims[k];
    }
    int islog = !strcmp(c->n->op, "LogSoftmax");
    const float *X = x->data;
    float *Y = c->out[0]->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *r = X + o * D * inner + i;
            float *w = Y + o * D * inner + i;
            double mx = -INFINITY, s = 0;
            for (int64_t d = 0; d < D; d++) if (r[d * inner] > mx) mx = r[d * inner];
            for (int64_t d = 0; d < D; d++) s += exp(r[d * inner] - mx);
            for (int64_t d = 0; d < D; d++)
                w[d * inner] = (float)(islog ? r[d * inner] - mx - log(s) : exp(r[d * inner] - mx) / s);
        }
    return 0;
}

/* ---- integer convolution and matmul (ConvInteger, QLinearConv,
 * MatMulInteger, QLinearMatMul) ----
 * Operands are widened to int32 with their zero points subtracted and
 * accumulated exactly in int32 (int64 for the matmul dot products); the
 * QLinear ops then requantise: round-half-even(acc * s_a * s_b / s_y) + z_y,
 * saturated to the output type. Zero points and scales are per tensor, or
 * per output channel (weights) / per row (A) / per column (B). */

static int need_8bit(IrOpCtx *c, int i)
{
    if (i < c->nin && c->in[i] && c->in[i]->dtype != IR_U8 && c->in[i]->dtype != IR_I8)
        return op_fail(c, "input %d has type %s; only uint8 and int8 are supported", i, ir_dtype_name(c->in[i]->dtype));
    return 0;
}

/* value of a per-tensor or per-index parameter (NULL -> 0) */
static double qparam(const IrTensor *t, int64_t i)
{
    if (!t) return 0;
    return ir_numel(t) <= 1 ? ir_get_f(t, 0) : ir_get_f(t, i);
}

/* int32 copy of t minus its zero point; per-channel zp indexes dim 0 */
static int32_t *widen(const IrTensor *t, const IrTensor *zp)
{
    int64_t n = ir_numel(t), per = t->ndim > 0 && t->dims[0] ? n / t->dims[0] : 1;
    int32_t *o = malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (!o) return NULL;
    for (int64_t i = 0; i < n; i++) o[i] = (int32_t)ir_get_i(t, i) - (int32_t)qparam(zp, i / (per ? per : 1));
    return o;
}

/* direct integer convolution, same loop order as eval_conv */
static void conv_i32(const Geo *g, int64_t N, int64_t C, int64_t M, int64_t G, const int32_t *X, const int32_t *W, int32_t *Y)
{
    int64_t Cg = C / G, Mg = M / G, isz = g->in[0] * g->in[1] * g->in[2], osz = g->out[0] * g->out[1] * g->out[2];
    int64_t ksz = g->k[0] * g->k[1] * g->k[2];
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            int64_t gr = m / Mg;
            int32_t *O = Y + (n * M + m) * osz;
            for (int64_t ci = 0; ci < Cg; ci++) {
                const int32_t *I = X + (n * C + gr * Cg + ci) * isz, *Wk = W + (m * Cg + ci) * ksz;
                for (int64_t kd = 0; kd < g->k[0]; kd++)
                    for (int64_t kh = 0; kh < g->k[1]; kh++)
                        for (int64_t kw = 0; kw < g->k[2]; kw++) {
                            int32_t wv = Wk[(kd * g->k[1] + kh) * g->k[2] + kw];
                            for (int64_t od = 0; od < g->out[0]; od++) {
                                int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                                if (id < 0 || id >= g->in[0]) continue;
                                for (int64_t oh = 0; oh < g->out[1]; oh++) {
                                    int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                                    if (ih < 0 || ih >= g->in[1]) continue;
                                    for (int64_t ow = 0; ow < g->out[2]; ow++) {
                                        int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
                                        if (iw >= 0 && iw < g->in[2])
                                            O[(od * g->out[1] + oh) * g->out[2] + ow] += wv * I[(id * g->in[1] + ih) * g->in[2] + iw];
                                    }
                                }
                            }
                        }
            }
        }
}

int32_t *op_conv_int(IrOpCtx *c, const IrTensor *x, int32_t xzv, const IrTensor *w, const IrTensor *wz)
{
    int ns = w->ndim - 2;
    int64_t k[3];
    Geo g;
    if (kernel_of(c, w, ns, k) || geo_init(c, x, k, ns, 0, &g)) return NULL;
    int32_t *X = widen(x, NULL), *W = widen(w, wz), *acc = calloc((size_t)ir_numel(c->out[0]) + 1, sizeof *acc);
    if (!X || !W || !acc) { free(X); free(W); free(acc); op_fail(c, "out of memory"); return NULL; }
    for (int64_t i = 0; i < ir_numel(x); i++) X[i] -= xzv;
    conv_i32(&g, x->dims[0], x->dims[1], w->dims[0], ir_attr_int(c->n, "group", 1), X, W, acc);
    free(X);
    free(W);
    return acc;
}

/* runs the integer conv of inputs (xi, wi) with zero points (xzi, wzi);
 * returns a malloc'd int32 accumulator of y's shape */
static int32_t *conv_int_acc(IrOpCtx *c, int xi, int xzi, int wi, int wzi)
{
    const IrTensor *xz = xzi < c->nin ? c->in[xzi] : NULL, *wz = wzi < c->nin ? c->in[wzi] : NULL;
    if (xz && ir_numel(xz) > 1) { op_fail(c, "x zero point must be a scalar"); return NULL; }
    return op_conv_int(c, c->in[xi], (int32_t)qparam(xz, 0), c->in[wi], wz);
}

int op_conv_shape(IrOpCtx *c, const IrTensor *x, const IrTensor *w, const IrTensor *bias, int dtype)
{
    return conv_shape(c, x, w, bias, dtype);
}

int infer_convinteger(IrOpCtx *c)
{
    if (need_8bit(c, 0) || need_8bit(c, 1) || need_8bit(c, 2) || need_8bit(c, 3)) return -1;
    return conv_shape(c, c->in[0], c->in[1], NULL, IR_I32);
}

int eval_convinteger(IrOpCtx *c)
{
    int32_t *acc = conv_int_acc(c, 0, 2, 1, 3);
    if (!acc) return -1;
    memcpy(c->out[0]->data, acc, ir_nbytes(c->out[0]));
    free(acc);
    return 0;
}

static void requant(IrTensor *y, int64_t i, double v, const IrTensor *yz)
{
    double lo = y->dtype == IR_U8 ? 0 : -128, hi = y->dtype == IR_U8 ? 255 : 127;
    v = nearbyint(v) + qparam(yz, 0);
    ir_set_f(y, i, v < lo ? lo : v > hi ? hi : v);
}

int infer_qlinearconv(IrOpCtx *c)
{
    if (need_8bit(c, 0) || need_8bit(c, 3) || need_8bit(c, 2) || need_8bit(c, 5) || need_8bit(c, 7)) return -1;
    if (c->nin > 8 && c->in[8] && c->in[8]->dtype != IR_I32) return op_fail(c, "bias must be int32");
    return conv_shape(c, c->in[0], c->in[3], c->nin > 8 ? c->in[8] : NULL, c->in[7]->dtype);
}

int eval_qlinearconv(IrOpCtx *c)
{
    int32_t *acc = conv_int_acc(c, 0, 2, 3, 5);
    if (!acc) return -1;
    IrTensor *y = c->out[0];
    const IrTensor *B = c->nin > 8 ? c->in[8] : NULL;
    int64_t M = y->dims[1], sp = ir_numel(y) / (y->dims[0] * M != 0 ? y->dims[0] * M : 1), n = ir_numel(y);
    double xs = qparam(c->in[1], 0), ys = qparam(c->in[6], 0);
    for (int64_t i = 0; i < n; i++) {
        int64_t m = (i / sp) % M;
        double a = (double)acc[i] + (B ? ir_get_f(B, m) : 0);
        requant(y, i, (float)(a * (float)(xs * qparam(c->in[4], m) / ys)), c->in[7]);
    }
    free(acc);
    return 0;
}

/* integer matmul with per-tensor/per-row (A) and per-column (B) zero points;
 * dst gets the int32 sums */
typedef struct MmInt { const IrTensor *a, *b, *az, *bz; int32_t *acc; } MmInt;
static void mm_int(void *ctx, int64_t M, int64_t N, int64_t K, int64_t ao, int64_t bo, int64_t yo)
{
    MmInt *m = ctx;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            int64_t s = 0;
            double za = qparam(m->az, i), zb = qparam(m->bz, j);
            for (int64_t k = 0; k < K; k++)
                s += (ir_get_i(m->a, ao + i * K + k) - (int64_t)za) * (ir_get_i(m->b, bo + k * N + j) - (int64_t)zb);
            m->acc[yo + i * N + j] = (int32_t)s;
        }
}

int op_matmul_shape(IrOpCtx *c, const IrTensor *a, const IrTensor *b, IrTensor *y) { return matmul_shape(c, a, b, y); }

int op_matmul_int(IrOpCtx *c, const IrTensor *a, const IrTensor *az, const IrTensor *b, int32_t *acc)
{
    MmInt m = {a, b, az, NULL, acc};
    return matmul_batched(c, a, b, mm_int, &m);
}

int infer_matmulinteger(IrOpCtx *c)
{
    if (need_8bit(c, 0) || need_8bit(c, 1) || need_8bit(c, 2) || need_8bit(c, 3)) return -1;
    c->out[0]->dtype = IR_I32;
    return matmul_shape(c, c->in[0], c->in[1], c->out[0]);
}

int eval_matmulinteger(IrOpCtx *c)
{
    MmInt m = {c->in[0], c->in[1], c->nin > 2 ? c->in[2] : NULL, c->nin > 3 ? c->in[3] : NULL, c->out[0]->data};
    return matmul_batched(c, c->in[0], c->in[1], mm_int, &m);
}

int infer_qlinearmatmul(IrOpCtx *c)
{
    if (need_8bit(c, 0) || need_8bit(c, 3) || need_8bit(c, 2) || need_8bit(c, 5) || need_8bit(c, 7)) return -1;
    c->out[0]->dtype = c->in[7]->dtype;
    return matmul_shape(c, c->in[0], c->in[3], c->out[0]);
}

int eval_qlinearmatmul(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    int64_t n = ir_numel(y);
    int32_t *acc = calloc((size_t)n + 1, sizeof *acc);
    if (!acc) return op_fail(c, "out of memory");
    MmInt m = {c->in[0], c->in[3], c->in[2], c->in[5], acc};
    if (matmul_batched(c, c->in[0], c->in[3], mm_int, &m)) { free(acc); return -1; }
    float mult = (float)(qparam(c->in[1], 0) * qparam(c->in[4], 0) / qparam(c->in[6], 0));
    for (int64_t i = 0; i < n; i++) requant(y, i, (float)((float)acc[i] * mult), c->in[7]);
    free(acc);
    return 0;
}
