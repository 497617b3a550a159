/* int8.c - the int8 operators a QDQ model's node units run as
 * (ops/qdq_fuse.c makes them; docs/quantization.md "Semantics").
 *
 * They are not ONNX operators: they exist so that the reference
 * interpreter and the chip compute one integer function, bit for bit.
 * Their attributes carry everything the float QDQ unit's constants said,
 * already in integers or f32:
 *
 *   Int8Conv(X, W, B, RQ)     X int8/uint8 NCHW, W int8 (M, C/group, k...),
 *                             B int32 [M], RQ int32 [M, 2] (mult, shift);
 *                             Conv's attributes, x_zero_point
 *   Int8MatMul(A, W, B, RQ)   A int8/uint8 [..., M, K], W int8 [K, N],
 *                             B int32 [N], RQ int32 [N, 2]; a_zero_point
 *     acc = B[c] + sum (x - x_zero_point) w       exact in int32
 *     y   = clamp(y_zero_point + round_half_even(acc * mult / 2^(31+shift)),
 *                 y_min, y_max)                    (num_requant_round)
 *   Int8Add(A [, B])          numpy broadcast; a_scale, b_scale are the f32
 *                             ratios s_a / s_y, s_b / s_y
 *     f   = f32(f32(a - a_zero_point) * a_scale) [+ f32(f32(b - b_zero_point) * b_scale)]
 *     y   = clamp(y_zero_point + round_half_even(f), y_min, y_max)
 *   Int8GlobalAveragePool(X)  scale = f32(s_x / (H W s_y))
 *     y   = clamp(y_zero_point + round_half_even(f32(f32(sum (x - x_zero_point)) * scale)),
 *                 y_min, y_max)
 *
 * y_min / y_max hold the output type's range narrowed by a fused Relu or
 * Clip; `to` is the output type (2 uint8, 3 int8). Every f32 step is one
 * IEEE single rounding, as the chip's vector unit does it (v.cast, v.affine
 * with beta 0, v.add, v.round); the integer sums are those of the matrix
 * unit (i8 x i8 -> i32). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "compiler/ops/ops.h"
#include "isa/isa.h"
#include "isa/numerics.h"

static int need_q8(IrOpCtx *c, int i)
{
    if (!c->in[i] || (c->in[i]->dtype != IR_I8 && c->in[i]->dtype != IR_U8))
        return op_fail(c, "input %d must be int8 or uint8, is %s", i, c->in[i] ? ir_dtype_name(c->in[i]->dtype) : "absent");
    return 0;
}

/* The output type and clamp from the attributes, checked against each other. */
static int out_range(IrOpCtx *c, int *to, int32_t *lo, int32_t *hi)
{
    *to = (int)ir_attr_int(c->n, "to", IR_I8);
    if (*to != IR_I8 && *to != IR_U8) return op_fail(c, "attribute 'to' must be 2 (uint8) or 3 (int8), is %d", *to);
    int32_t tlo = *to == IR_U8 ? 0 : -128, thi = *to == IR_U8 ? 255 : 127;
    *lo = (int32_t)ir_attr_int(c->n, "y_min", tlo);
    *hi = (int32_t)ir_attr_int(c->n, "y_max", thi);
    if (*lo < tlo || *hi > thi || *lo > *hi) return op_fail(c, "clamp [%d, %d] is not inside the output type's range", *lo, *hi);
    return 0;
}

/* B int32 [n] and RQ int32 [n, 2] of a matrix operator with n output channels. */
static int check_bias_rq(IrOpCtx *c, int64_t n)
{
    const IrTensor *b = c->in[2], *rq = c->in[3];
    if (!b || b->dtype != IR_I32 || ir_numel(b) != n) return op_fail(c, "bias must be int32 with %lld values", (long long)n);
    if (!rq || rq->dtype != IR_I32 || ir_numel(rq) != 2 * n)
        return op_fail(c, "requantisation parameters must be int32 [%lld, 2]", (long long)n);
    return 0;
}

/* acc[i] + bias of channel ch(i), requantised into y. */
static int requant_out(IrOpCtx *c, const int32_t *acc, int64_t n, int64_t nch, int64_t inner)
{
    IrTensor *y = c->out[0];
    const int32_t *B = c->in[2]->data, *RQ = c->in[3]->data;
    int to;
    int32_t lo, hi, zy = (int32_t)ir_attr_int(c->n, "y_zero_point", 0);
    if (out_range(c, &to, &lo, &hi)) return -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = (i / inner) % nch;
        int64_t a = (int64_t)acc[i] + B[ch];
        if (a < INT32_MIN || a > INT32_MAX) return op_fail(c, "accumulator %lld at element %lld leaves int32", (long long)a, (long long)i);
        int32_t v;
        if (num_requant_round((int32_t)a, RQ[2 * ch], RQ[2 * ch + 1], zy, lo, hi, 1, &v))
            return op_fail(c, "channel %lld: shift %d outside -30..31", (long long)ch, RQ[2 * ch + 1]);
        ir_set_i(y, i, v);
    }
    return 0;
}

int infer_int8conv(IrOpCtx *c)
{
    if (need_q8(c, 0)) return -1;
    if (!c->in[1] || c->in[1]->dtype != IR_I8) return op_fail(c, "weights must be int8");
    int to;
    int32_t lo, hi;
    if (out_range(c, &to, &lo, &hi) || op_conv_shape(c, c->in[0], c->in[1], NULL, to)) return -1;
    return c->in[1]->ndim > 0 && c->in[1]->dims[0] >= 0 ? check_bias_rq(c, c->in[1]->dims[0]) : 0;
}

int eval_int8conv(IrOpCtx *c)
{
    int32_t *acc = op_conv_int(c, c->in[0], (int32_t)ir_attr_int(c->n, "x_zero_point", 0), c->in[1], NULL);
    if (!acc) return -1;
    const IrTensor *y = c->out[0];
    int64_t M = y->dims[1], inner = ir_numel(y) / (y->dims[0] * M);
    int rc = requant_out(c, acc, ir_numel(y), M, inner);
    free(acc);
    return rc;
}

int infer_int8matmul(IrOpCtx *c)
{
    if (need_q8(c, 0)) return -1;
    const IrTensor *w = c->in[1];
    if (!w || w->dtype != IR_I8 || w->ndim != 2) return op_fail(c, "weights must be int8 [K, N]");
    int to;
    int32_t lo, hi;
    if (out_range(c, &to, &lo, &hi) || op_matmul_shape(c, c->in[0], w, c->out[0])) return -1;
    c->out[0]->dtype = to;
    return check_bias_rq(c, w->dims[1]);
}

int eval_int8matmul(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    int64_t n = ir_numel(y);
    int32_t *acc = calloc((size_t)n + 1, sizeof *acc), az = (int32_t)ir_attr_int(c->n, "a_zero_point", 0);
    if (!acc) return op_fail(c, "out of memory");
    IrTensor zt;
    memset(&zt, 0, sizeof zt);
    zt.dtype = IR_I32;
    zt.ndim = 0;
    zt.data = &az;
    int rc = op_matmul_int(c, c->in[0], &zt, c->in[1], acc);
    if (!rc) rc = requant_out(c, acc, n, c->in[1]->dims[1], 1);
    free(acc);
    return rc;
}

int infer_int8add(IrOpCtx *c)
{
    for (int i = 0; i < c->nin; i++) if (need_q8(c, i)) return -1;
    int to;
    int32_t lo, hi;
    if (out_range(c, &to, &lo, &hi) || op_broadcast_shape(c, c->in, c->nin, c->out[0])) return -1;
    c->out[0]->dtype = to;
    return 0;
}

/* Element offset in t (broadcast against y) of y's flat index i. */
static int64_t bcast_index(const IrTensor *t, const IrTensor *y, int64_t i)
{
    int64_t off = 0, stride = 1;
    for (int k = y->ndim - 1, j = t->ndim - 1; k >= 0; k--, j--) {
        int64_t idx = i % y->dims[k];
        i /= y->dims[k];
        if (j < 0) continue;
        if (t->dims[j] != 1) off += idx * stride;
        stride *= t->dims[j];
    }
    return off;
}

int eval_int8add(IrOpCtx *c)
{
    IrTensor *y = c->out[0];
    int to;
    int32_t lo, hi, zy = (int32_t)ir_attr_int(c->n, "y_zero_point", 0);
    if (out_range(c, &to, &lo, &hi)) return -1;
    static const char *const scale_attr[2] = {"a_scale", "b_scale"}, *const zp_attr[2] = {"a_zero_point", "b_zero_point"};
    float sc[2];
    int32_t zp[2];
    for (int k = 0; k < c->nin; k++) {
        sc[k] = ir_attr_float(c->n, scale_attr[k], 1.0f);
        zp[k] = (int32_t)ir_attr_int(c->n, zp_attr[k], 0);
    }
    int64_t n = ir_numel(y);
    for (int64_t i = 0; i < n; i++) {
        float f = 0;
        for (int k = 0; k < c->nin; k++) {
            float d = (float)(ir_get_i(c->in[k], bcast_index(c->in[k], y, i)) - zp[k]);   /* exact */
            float p = num_f32_binop(ISA_OP_V_MUL, d, sc[k]);
            f = k ? num_f32_binop(ISA_OP_V_ADD, f, p) : p;
        }
        ir_set_i(y, i, num_sat((int64_t)num_round_half_even((double)f) + zy, lo, hi));
    }
    return 0;
}

int infer_int8gap(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    if (need_q8(c, 0)) return -1;
    if (x->ndim >= 0 && x->ndim < 3) return op_fail(c, "input must have rank 3 or more");
    int to;
    int32_t lo, hi;
    if (out_range(c, &to, &lo, &hi)) return -1;
    op_same_shape(c->out[0], x);
    for (int k = 2; k < x->ndim; k++) c->out[0]->dims[k] = 1;
    c->out[0]->dtype = to;
    return 0;
}

int eval_int8gap(IrOpCtx *c)
{
    const IrTensor *x = c->in[0];
    IrTensor *y = c->out[0];
    int to;
    int32_t lo, hi, zy = (int32_t)ir_attr_int(c->n, "y_zero_point", 0), zx = (int32_t)ir_attr_int(c->n, "x_zero_point", 0);
    if (out_range(c, &to, &lo, &hi)) return -1;
    float sc = ir_attr_float(c->n, "scale", 1.0f);
    int64_t rows = x->dims[0] * x->dims[1], len = ir_numel(x) / (rows ? rows : 1);
    if (len >= (1 << 16)) return op_fail(c, "%lld elements per channel: the sum must stay exact in f32 (at most 65535)", (long long)len);
    for (int64_t r = 0; r < rows; r++) {
        int64_t s = 0;
        for (int64_t j = 0; j < len; j++) s += ir_get_i(x, r * len + j) - zx;
        float f = num_f32_binop(ISA_OP_V_MUL, (float)s, sc);
        ir_set_i(y, r, num_sat((int64_t)num_round_half_even((double)f) + zy, lo, hi));
    }
    return 0;
}
