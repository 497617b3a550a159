/* rnn.c - the recurrent ops RNN, GRU and LSTM (forward, reverse and
 * bidirectional, sequence_lens, initial states, LSTM peepholes, clip,
 * layout 0 and 1), in plain float32 loops. The `activations` attribute
 * (non-default activation functions) is reported as not supported: the
 * importer does not keep string-list attribute contents.
 *
 * Gate layouts follow the spec: RNN one gate, GRU [z, r, h], LSTM
 * [i, o, f, c]; B holds the W biases then the R biases; P is [i, o, f]. */
#include "compiler/ops/ops.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { K_RNN, K_GRU, K_LSTM };

typedef struct Act { int fn; float alpha, beta; } Act;
enum { A_SIGMOID, A_TANH, A_RELU, A_AFFINE, A_LEAKY, A_THRRELU, A_SCALEDTANH, A_HARDSIG, A_ELU, A_SOFTSIGN, A_SOFTPLUS };

static float act_apply(const Act *a, float x)
{
    switch (a->fn) {
    case A_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case A_TANH: return tanhf(x);
    case A_RELU: return x > 0 ? x : 0;
    case A_AFFINE: return a->alpha * x + a->beta;
    case A_LEAKY: return x >= 0 ? x : a->alpha * x;
    case A_THRRELU: return x > a->alpha ? x : 0;
    case A_SCALEDTANH: return a->alpha * tanhf(a->beta * x);
    case A_HARDSIG: { float y = a->alpha * x + a->beta; return y < 0 ? 0 : y > 1 ? 1 : y; }
    case A_ELU: return x >= 0 ? x : a->alpha * (expf(x) - 1);
    case A_SOFTSIGN: return x / (1 + fabsf(x));
    default: return logf(1 + expf(x));
    }
}

typedef struct RnnCfg {
    int kind, G, ndir, layout;
    int64_t S, B, I, H;
    Act act[2][3];   /* per direction: f, g, h */
    float clip;
    int lbr;         /* GRU linear_before_reset */
} RnnCfg;

static int rnn_cfg(IrOpCtx *c, RnnCfg *r)
{
    memset(r, 0, sizeof *r);
    const char *op = c->n->op;
    r->kind = !strcmp(op, "RNN") ? K_RNN : !strcmp(op, "GRU") ? K_GRU : K_LSTM;
    r->G = r->kind == K_RNN ? 1 : r->kind == K_GRU ? 3 : 4;
    const char *dir = ir_attr_str(c->n, "direction", "forward");
    if (strcmp(dir, "forward") && strcmp(dir, "reverse") && strcmp(dir, "bidirectional"))
        return op_fail(c, "direction '%s' is not supported", dir);
    r->ndir = !strcmp(dir, "bidirectional") ? 2 : 1;
    r->layout = c->opset >= 14 ? (int)ir_attr_int(c->n, "layout", 0) : 0;
    if (r->kind == K_LSTM && ir_attr_int(c->n, "input_forget", 0)) return op_fail(c, "input_forget=1 is not supported");
    r->lbr = (int)ir_attr_int(c->n, "linear_before_reset", 0);
    const IrAttr *cl = ir_attr(c->n, "clip");
    r->clip = cl ? cl->f : 0;
    const IrTensor *x = c->in[0], *w = c->in[1];
    if (x->dtype != IR_F32 || w->dtype != IR_F32) return op_fail(c, "only float32 is supported");
    r->H = ir_attr_int(c->n, "hidden_size", w->ndim == 3 && w->dims[1] >= 0 ? w->dims[1] / r->G : -1);
    if (x->ndim >= 0) {
        if (x->ndim != 3) return op_fail(c, "X must be 3-D");
        r->S = x->dims[r->layout ? 1 : 0];
        r->B = x->dims[r->layout ? 0 : 1];
        r->I = x->dims[2];
    } else r->S = r->B = r->I = -1;
    if (w->ndim >= 0 && (w->ndim != 3 || (w->dims[0] >= 0 && w->dims[0] != r->ndir) ||
                         (r->H > 0 && w->dims[1] >= 0 && w->dims[1] != r->G * r->H) ||
                         (r->I >= 0 && w->dims[2] >= 0 && w->dims[2] != r->I)))
        return op_fail(c, "W must be [%d, %d*hidden, input]", r->ndir, r->G);
    /* activations: defaults, or the list (per direction) */
    int nact = r->kind == K_RNN ? 1 : r->kind == K_GRU ? 2 : 3;
    if (ir_attr(c->n, "activations")) return op_fail(c, "the 'activations' attribute (custom activations) is not supported");
    static const int defaults[3][3] = {{A_TANH}, {A_SIGMOID, A_TANH}, {A_SIGMOID, A_TANH, A_TANH}};
    for (int d = 0; d < r->ndir; d++)
        for (int k = 0; k < nact; k++) r->act[d][k].fn = defaults[r->kind][k];
    return 0;
}

int infer_rnn(IrOpCtx *c)
{
    RnnCfg r;
    if (rnn_cfg(c, &r)) return -1;
    for (int o = 0; o < c->nout; o++) {
        IrTensor *y = c->out[o];
        if (!y) continue;
        y->dtype = IR_F32;
        if (o == 0) {
            y->ndim = 4;
            int64_t d4[4] = {r.S, r.ndir, r.B, r.H}, d4l[4] = {r.B, r.S, r.ndir, r.H};
            memcpy(y->dims, r.layout ? d4l : d4, sizeof d4);
        } else {
            y->ndim = 3;
            int64_t d3[3] = {r.ndir, r.B, r.H}, d3l[3] = {r.B, r.ndir, r.H};
            memcpy(y->dims, r.layout ? d3l : d3, sizeof d3);
        }
        if (o > (r.kind == K_LSTM ? 2 : 1)) return op_fail(c, "too many outputs");
    }
    return 0;
}

static float clipv(const RnnCfg *r, float v)
{
    if (r->clip > 0) { if (v > r->clip) return r->clip; if (v < -r->clip) return -r->clip; }
    return v;
}

int eval_rnn(IrOpCtx *c)
{
    RnnCfg r;
    if (rnn_cfg(c, &r)) return -1;
    const IrTensor *X = c->in[0], *W = c->in[1], *R = c->in[2];
    const IrTensor *Bt = c->nin > 3 ? c->in[3] : NULL, *SL = c->nin > 4 ? c->in[4] : NULL, *H0 = c->nin > 5 ? c->in[5] : NULL;
    const IrTensor *C0 = r.kind == K_LSTM && c->nin > 6 ? c->in[6] : NULL, *P = r.kind == K_LSTM && c->nin > 7 ? c->in[7] : NULL;
    int64_t S = r.S, B = r.B, I = r.I, H = r.H, G = r.G;
    const float *x = X->data, *w = W->data, *rr = R->data;
    float *Y = c->out[0] ? c->out[0]->data : NULL;
    float *Yh = c->nout > 1 && c->out[1] ? c->out[1]->data : NULL;
    float *Yc = c->nout > 2 && c->out[2] ? c->out[2]->data : NULL;
    float *h = calloc((size_t)(B * H) + 1, sizeof *h), *cs = calloc((size_t)(B * H) + 1, sizeof *cs);
    float *gates = calloc((size_t)(G * H) + 1, sizeof *gates), *hnew = calloc((size_t)(B * H) + 1, sizeof *hnew);
    float *rh = calloc((size_t)H + 1, sizeof *rh);
    if (!h || !cs || !gates || !hnew || !rh) { free(h); free(cs); free(gates); free(hnew); free(rh); return op_fail(c, "out of memory"); }
    for (int d = 0; d < r.ndir; d++) {
        int reverse = (r.ndir == 2 && d == 1) || !strcmp(ir_attr_str(c->n, "direction", "forward"), "reverse");
        const float *wd = w + d * G * H * I, *rd = rr + d * G * H * H;
        const float *wb = Bt ? (const float *)Bt->data + d * 2 * G * H : NULL, *rb = wb ? wb + G * H : NULL;
        const float *pd = P ? (const float *)P->data + d * 3 * H : NULL;
        for (int64_t i = 0; i < B * H; i++) {
            h[i] = H0 ? ((const float *)H0->data)[r.layout ? (i / H) * r.ndir * H + d * H + i % H : d * B * H + i] : 0;
            cs[i] = C0 ? ((const float *)C0->data)[r.layout ? (i / H) * r.ndir * H + d * H + i % H : d * B * H + i] : 0;
        }
        for (int64_t b = 0; b < B; b++) {
            int64_t len = SL ? ir_get_i(SL, b) : S;
            if (len < 0 || len > S) { free(h); free(cs); free(gates); free(hnew); free(rh); return op_fail(c, "sequence length %lld out of range", (long long)len); }
            float *hb = h + b * H, *cb = cs + b * H;
            for (int64_t step = 0; step < len; step++) {
                int64_t t = reverse ? len - 1 - step : step;
                const float *xt = x + (r.layout ? (b * S + t) * I : (t * B + b) * I);
                /* gates = x W^T + Wb (+ h R^T + Rb except GRU's h gate) */
                for (int64_t g = 0; g < G * H; g++) {
                    float s = wb ? wb[g] : 0;
                    const float *wr = wd + g * I;
                    for (int64_t k = 0; k < I; k++) s += xt[k] * wr[k];
                    if (!(r.kind == K_GRU && g >= 2 * H)) {
                        const float *rrw = rd + g * H;
                        s += rb ? rb[g] : 0;
                        for (int64_t k = 0; k < H; k++) s += hb[k] * rrw[k];
                    }
                    gates[g] = s;
                }
                const Act *f = &r.act[d][0], *gact = &r.act[d][1], *hact = &r.act[d][2];
                float *out = hnew + b * H;
                if (r.kind == K_RNN) {
                    for (int64_t k = 0; k < H; k++) out[k] = act_apply(f, clipv(&r, gates[k]));
                } else if (r.kind == K_GRU) {
                    float *z = gates, *rg = gates + H, *hh = gates + 2 * H;
                    for (int64_t k = 0; k < H; k++) { z[k] = act_apply(f, clipv(&r, z[k])); rg[k] = act_apply(f, clipv(&r, rg[k])); }
                    for (int64_t k = 0; k < H; k++) {
                        const float *rrw = rd + (2 * H + k) * H;
                        float s = 0;
                        if (r.lbr) {
                            for (int64_t q = 0; q < H; q++) s += hb[q] * rrw[q];
                            s = rg[k] * (s + (rb ? rb[2 * H + k] : 0));
                        } else {
                            for (int64_t q = 0; q < H; q++) rh[q] = rg[q] * hb[q];
                            for (int64_t q = 0; q < H; q++) s += rh[q] * rrw[q];
                            s += rb ? rb[2 * H + k] : 0;
                        }
                        float cand = act_apply(gact, clipv(&r, hh[k] + s));
                        out[k] = (1 - z[k]) * cand + z[k] * hb[k];
                    }
                } else {
                    float *ig = gates, *og = gates + H, *fg = gates + 2 * H, *cg = gates + 3 * H;
                    for (int64_t k = 0; k < H; k++) {
                        float iv = act_apply(f, clipv(&r, ig[k] + (pd ? pd[k] * cb[k] : 0)));
                        float fv = act_apply(f, clipv(&r, fg[k] + (pd ? pd[2 * H + k] * cb[k] : 0)));
                        float cv = act_apply(gact, clipv(&r, cg[k]));
                        float cn = fv * cb[k] + iv * cv;
                        float ov = act_apply(f, clipv(&r, og[k] + (pd ? pd[H + k] * cn : 0)));
                        cb[k] = cn;
                        out[k] = ov * act_apply(hact, cn);
                    }
                }
                memcpy(hb, out, sizeof(float) * (size_t)H);
                if (Y) {
                    float *yt = Y + (r.layout ? ((b * S + t) * r.ndir + d) * H : ((t * r.ndir + d) * B + b) * H);
                    memcpy(yt, hb, sizeof(float) * (size_t)H);
                }
            }
        }
        for (int64_t b = 0; b < B; b++) {
            int64_t at = r.layout ? (b * r.ndir + d) * H : (d * B + b) * H;
            if (Yh) memcpy(Yh + at, h + b * H, sizeof(float) * (size_t)H);
            if (Yc) memcpy(Yc + at, cs + b * H, sizeof(float) * (size_t)H);
        }
    }
    free(h); free(cs); free(gates); free(hnew); free(rh);
    return 0;
}
