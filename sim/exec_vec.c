/* exec_vec.c - data effect of the vector unit: elementwise binary/unary ops
 * with strides and broadcast (v.sel a conditional bit copy; integer v.div /
 * v.mod fault on a zero divisor before writing), pooling, reductions and
 * arg-reductions, requantisation and casts.
 * All arithmetic goes through isa/numerics (floats in fp32 rounded to the
 * dtype on store; integers exact then saturated). */
#include <stdio.h>
#include <string.h>
#include "sim/sim_int.h"
#include "isa/numerics.h"
#include "isa/timing.h"

static float ld_f(const uint8_t *p, int dt)
{
    uint16_t h;
    float f;
    switch (dt) {
    case ISA_F16: memcpy(&h, p, 2); return num_f16_to_f32(h);
    case ISA_BF16: memcpy(&h, p, 2); return num_bf16_to_f32(h);
    default: memcpy(&f, p, 4); return f;
    }
}

static void st_f(uint8_t *p, int dt, float v)
{
    uint16_t h;
    switch (dt) {
    case ISA_F16: h = num_f32_to_f16(v); memcpy(p, &h, 2); return;
    case ISA_BF16: h = num_f32_to_bf16(v); memcpy(p, &h, 2); return;
    default: memcpy(p, &v, 4); return;
    }
}

/* Iterates a 4-D index space; offsets in elements for three operands. */
#define FOR4(sh, body) \
    for (uint32_t i0 = 0; i0 < (sh)[0]; i0++) \
        for (uint32_t i1 = 0; i1 < (sh)[1]; i1++) \
            for (uint32_t i2 = 0; i2 < (sh)[2]; i2++) \
                for (uint32_t i3 = 0; i3 < (sh)[3]; i3++) { body }
#define OFF(st) ((int64_t)i0 * (st)[0] + (int64_t)i1 * (st)[1] + (int64_t)i2 * (st)[2] + (int64_t)i3 * (st)[3])

/* v.sel: a bit copy of src2's element where src's is non-zero; dst keeps
 * its old element elsewhere. */
static void exec_sel(const AtlInsn *in, uint8_t *D, const uint8_t *A, const uint8_t *B, int dt, int es)
{
    FOR4(in->shape, {
        if (num_is_nonzero(A + OFF(in->src_stride) * es, dt))
            memmove(D + OFF(in->dst_stride) * es, B + OFF(in->src2_stride) * es, (size_t)es);
    })
}

/* Integer v.div / v.mod: every divisor is checked before anything is
 * written, so a fault leaves dst untouched. */
static int check_divisors(AtlSim *s, const AtlInsn *in, const uint8_t *B, int dt, int es)
{
    uint64_t flat = 0;
    if (!num_int_divisor_faults(in->op, 0)) return 0;  /* not a division: nothing to check */
    FOR4(in->shape, {
        if (num_int_divisor_faults(in->op, num_load_int(B + OFF(in->src2_stride) * es, dt))) {
            snprintf(s->exec_msg, sizeof s->exec_msg, "%s: zero divisor at element [%u,%u,%u,%u] (#%llu) of src2",
                     isa_ops[in->op].mnemonic, i0, i1, i2, i3, (unsigned long long)flat);
            return -1;
        }
        flat++;
    })
    return 0;
}

int sim_exec_fmt_VBIN(AtlSim *s, int core, const AtlInsn *in)
{
    uint8_t *L = s->core[core].lmem, *D = L + in->dst;
    const uint8_t *A = L + in->src, *B = L + in->src2;
    int dt = in->dtype, es = isa_dtype_size(dt), op = in->op;
    if (op == ISA_OP_V_SEL) {
        exec_sel(in, D, A, B, dt, es);
    } else if (num_is_float(dt)) {
        FOR4(in->shape, {
            float r = num_f32_binop(op, ld_f(A + OFF(in->src_stride) * es, dt), ld_f(B + OFF(in->src2_stride) * es, dt));
            st_f(D + OFF(in->dst_stride) * es, dt, r);
        })
    } else if (check_divisors(s, in, B, dt, es)) {
        return -1;
    } else if (dt == ISA_I8) {
        FOR4(in->shape, {
            int64_t r = num_int_binop(op, ((const int8_t *)A)[OFF(in->src_stride)], ((const int8_t *)B)[OFF(in->src2_stride)], dt);
            ((int8_t *)D)[OFF(in->dst_stride)] = (int8_t)r;
        })
    } else {
        FOR4(in->shape, {
            int64_t r = num_int_binop(op, num_load_int(A + OFF(in->src_stride) * es, dt), num_load_int(B + OFF(in->src2_stride) * es, dt), dt);
            num_store_int(D + OFF(in->dst_stride) * es, dt, r);
        })
    }
    return 0;
}

int sim_exec_fmt_VUN(AtlSim *s, int core, const AtlInsn *in)
{
    uint8_t *L = s->core[core].lmem, *D = L + in->dst;
    const uint8_t *A = L + in->src;
    int dt = in->dtype, es = isa_dtype_size(dt), op = in->op;
    if (op == ISA_OP_V_MOV) {
        FOR4(in->shape, { memmove(D + OFF(in->dst_stride) * es, A + OFF(in->src_stride) * es, (size_t)es); })
    } else if (num_is_float(dt)) {
        FOR4(in->shape, {
            st_f(D + OFF(in->dst_stride) * es, dt, num_f32_unop(op, ld_f(A + OFF(in->src_stride) * es, dt), in->alpha, in->beta));
        })
    } else {
        FOR4(in->shape, {
            int64_t r = num_int_unop(op, num_load_int(A + OFF(in->src_stride) * es, dt), in->alpha, in->beta, dt);
            num_store_int(D + OFF(in->dst_stride) * es, dt, r);
        })
    }
    return 0;
}

int sim_exec_fmt_VPOOL(AtlSim *s, int core, const AtlInsn *in)
{
    uint8_t *L = s->core[core].lmem, *D = L + in->dst;
    const uint8_t *X = L + in->src;
    int dt = in->dtype, es = isa_dtype_size(dt), isf = num_is_float(dt), mx = in->op == ISA_OP_V_MAXPOOL;
    int oh = (int)tim_conv_out(in->ih, in->kh, in->sh, 1, in->pad_top, in->pad_bottom);
    int ow = (int)tim_conv_out(in->iw, in->kw, in->sw, 1, in->pad_left, in->pad_right);
    int C = (int)in->cin, H = (int)in->ih, W = (int)in->iw;
    for (int oy = 0; oy < oh; oy++)
        for (int ox = 0; ox < ow; ox++)
            for (int c = 0; c < C; c++) {
                float fs = 0.0f;
                int64_t is = 0;
                int cnt = 0;
                for (int ky = 0; ky < in->kh; ky++) {
                    int iy = oy * in->sh - in->pad_top + ky;
                    if (iy < 0 || iy >= H) continue;
                    for (int kx = 0; kx < in->kw; kx++) {
                        int ix = ox * in->sw - in->pad_left + kx;
                        if (ix < 0 || ix >= W) continue;
                        const uint8_t *p = X + (((size_t)iy * W + ix) * C + c) * es;
                        if (isf) {
                            float v = ld_f(p, dt);
                            fs = !cnt ? (mx ? v : v) : (mx ? num_f32_binop(ISA_OP_V_MAX, fs, v) : fs + v);
                        } else {
                            int64_t v = num_load_int(p, dt);
                            is = !cnt ? v : (mx ? (v > is ? v : is) : is + v);
                        }
                        cnt++;
                    }
                }
                int div = in->count_pad ? in->kh * in->kw : cnt;
                uint8_t *o = D + (((size_t)oy * ow + ox) * C + c) * es;
                if (isf) st_f(o, dt, mx ? fs : fs / (float)div);
                else num_store_int(o, dt, mx ? is : (int64_t)num_round_half_even((double)is / div));
            }
    return 0;
}

/* The binary op one step of a reduction applies: sum, max or min. */
static int reduce_step_op(int op)
{
    return op == ISA_OP_V_RMAX ? ISA_OP_V_MAX : op == ISA_OP_V_RMIN ? ISA_OP_V_MIN : ISA_OP_V_ADD;
}

int sim_exec_fmt_VRED(AtlSim *s, int core, const AtlInsn *in)
{
    uint8_t *L = s->core[core].lmem, *D = L + in->dst;
    const uint8_t *X = L + in->src;
    int dt = in->dtype, ot = in->otype, es = isa_dtype_size(dt), os = isa_dtype_size(ot);
    int isf = num_is_float(dt), step = reduce_step_op(in->op);
    uint64_t outer = 1, inner = 1, len = in->shape[in->axis];
    for (int d = 0; d < in->axis; d++) outer *= in->shape[d];
    for (int d = in->axis + 1; d < 4; d++) inner *= in->shape[d];
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < inner; i++) {
            float fs = 0.0f;
            int64_t is = 0;
            for (uint64_t r = 0; r < len; r++) {
                const uint8_t *p = X + ((o * len + r) * inner + i) * (uint64_t)es;
                if (isf) {
                    float v = ld_f(p, dt);
                    fs = !r ? v : num_f32_binop(step, fs, v);
                } else {
                    /* exact in 64 bits: at most 2^64 / 2^31 elements never overflow here */
                    int64_t v = num_load_int(p, dt);
                    is = !r ? v : step == ISA_OP_V_ADD ? is + v : step == ISA_OP_V_MAX ? (v > is ? v : is) : (v < is ? v : is);
                }
            }
            uint8_t *q = D + (o * inner + i) * (uint64_t)os;
            if (isf) st_f(q, ot, fs);
            else num_store_int(q, ot, is);
        }
    return 0;
}

/* v.rargmax / v.rargmin: i32 index of the extreme along `axis`; the
 * comparison (ties, NaN) is num_arg_replaces. */
int sim_exec_fmt_VARG(AtlSim *s, int core, const AtlInsn *in)
{
    uint8_t *L = s->core[core].lmem, *D = L + in->dst;
    const uint8_t *X = L + in->src;
    int dt = in->dtype, es = isa_dtype_size(dt);
    uint64_t outer = 1, inner = 1, len = in->shape[in->axis];
    for (int d = 0; d < in->axis; d++) outer *= in->shape[d];
    for (int d = in->axis + 1; d < 4; d++) inner *= in->shape[d];
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < inner; i++) {
            double best = 0.0;
            int32_t at = 0;
            for (uint64_t r = 0; r < len; r++) {
                double v = num_load_f64(X + ((o * len + r) * inner + i) * (uint64_t)es, dt);
                if (!r || num_arg_replaces(in->op, v, best, in->last)) { best = v; at = (int32_t)r; }
            }
            memcpy(D + (o * inner + i) * 4, &at, 4);
        }
    return 0;
}

int sim_exec_fmt_VREQ(AtlSim *s, int core, const AtlInsn *in)
{
    uint8_t *L = s->core[core].lmem;
    int8_t *D = (int8_t *)(L + in->dst);
    const uint8_t *X = L + in->src, *P = L + in->src2;
    uint64_t n = (uint64_t)in->shape[0] * in->shape[1] * in->shape[2] * in->shape[3];
    for (uint64_t i = 0; i < n; i++) {
        int32_t x, mult, shift;
        uint64_t pi = in->per_channel ? i % in->shape[3] : 0;
        memcpy(&x, X + i * 4, 4);
        memcpy(&mult, P + pi * 8, 4);
        memcpy(&shift, P + pi * 8 + 4, 4);
        int32_t v;
        if (num_requant_round(x, mult, shift, in->ival, in->lo, in->hi, in->round_even, &v)) {
            snprintf(s->exec_msg, sizeof s->exec_msg,
                     "requant parameter %llu has shift %d: 31 + shift must be in 1..62",
                     (unsigned long long)pi, shift);
            return -1;
        }
        D[i] = (int8_t)num_sat(v, INT8_MIN, INT8_MAX);
    }
    return 0;
}

int sim_exec_fmt_VCAST(AtlSim *s, int core, const AtlInsn *in)
{
    uint8_t *L = s->core[core].lmem, *D = L + in->dst;
    const uint8_t *A = L + in->src;
    int dt = in->dtype, ot = in->otype, es = isa_dtype_size(dt), os = isa_dtype_size(ot);
    if (num_is_float(dt)) {
        FOR4(in->shape, { num_store_f64(D + OFF(in->dst_stride) * os, ot, num_load_f64(A + OFF(in->src_stride) * es, dt)); })
    } else {
        FOR4(in->shape, { num_store_int(D + OFF(in->dst_stride) * os, ot, num_load_int(A + OFF(in->src_stride) * es, dt)); })
    }
    return 0;
}
