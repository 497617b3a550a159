/* qcommon.c - the instructions the quantised-op lowerings share:
 * integer matmul corrections, requantisation, the quantising tail,
 * operand conversion to i8, reductions, zero points (declared in
 * lower/quant.h). Used by quant.c (Quantize/DequantizeLinear,
 * MatMulInteger, QLinearMatMul), qconv.c (ConvInteger, QLinearConv) and
 * dynquant.c (DynamicQuantizeLinear); kept apart so that none of those
 * depends on another. */
#include <stdlib.h>
#include <string.h>
#include "compiler/lower/quant.h"


AtlInsn bk_q_cast(int from, int to, uint64_t dst, uint64_t src, const uint32_t sh[4], const int64_t ds[4],
                  const int64_t ss[4])
{
    AtlInsn in = bk_vun(ISA_OP_V_CAST, from, dst, src, sh, ds, ss, 0.0f, 0.0f);
    in.otype = (uint8_t)to;
    return in;
}

void bk_q_sub_outer(BkCode *k, uint64_t acc, uint64_t tmp, uint64_t a, const int64_t as[4], uint64_t b,
                    const int64_t bs[4], const uint32_t sh[4], const int64_t cs[4])
{
    AtlInsn in = bk_vbin(ISA_OP_V_MUL, ISA_I32, tmp, a, b, sh, cs, as, bs);
    bk_code_cp(k, &in);
    in = bk_vbin(ISA_OP_V_SUB, ISA_I32, acc, acc, tmp, sh, cs, cs, cs);
    bk_code_cp(k, &in);
}

void bk_q_requant(BkCode *k, const BkLow *l, uint64_t acc, uint64_t f, uint64_t mult, const int64_t ms[4], uint64_t y,
                  const uint32_t sh[4], const int64_t cs[4])
{
    AtlInsn in = bk_q_cast(ISA_I32, ISA_F32, f, acc, sh, cs, cs);
    bk_code_cp(k, &in);
    if (mult) in = bk_vbin(ISA_OP_V_MUL, ISA_F32, f, f, mult, sh, cs, cs, ms);
    else in = bk_vun(ISA_OP_V_AFFINE, ISA_F32, f, f, sh, cs, cs, l->q_mult, 0.0f);
    bk_code_cp(k, &in);
    bk_q_tail(k, f, 0, NULL, l->q_zp, l->q_lo, l->q_hi, l->dt, y, sh, cs);
}

void bk_q_requant_int(BkCode *k, const BkLow *l, uint64_t acc, uint64_t rq, uint64_t y, const uint32_t sh[4], int shift)
{
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_V_REQUANT;
    in.dst = y;
    in.src = acc;
    in.src2 = rq;
    memcpy(in.shape, sh, sizeof in.shape);
    in.per_channel = 1;
    in.round_even = 1;
    in.ival = (int32_t)l->q_zp - shift;
    in.lo = l->q_lo - shift;
    in.hi = l->q_hi - shift;
    bk_code_cp(k, &in);
}

void bk_q_tail(BkCode *k, uint64_t f, uint64_t z, const int64_t zs[4], float zp, int lo, int hi, int ydt,
                       uint64_t y, const uint32_t sh[4], const int64_t cs[4])
{
    AtlInsn in = bk_vun(ISA_OP_V_ROUND, ISA_F32, f, f, sh, cs, cs, 0, 0);
    bk_code_cp(k, &in);
    if (z) {
        in = bk_vbin(ISA_OP_V_ADD, ISA_F32, f, f, z, sh, cs, cs, zs);
        bk_code_cp(k, &in);
    } else if (zp != 0) {
        in = bk_vun(ISA_OP_V_AFFINE, ISA_F32, f, f, sh, cs, cs, 1.0f, zp);
        bk_code_cp(k, &in);
    }
    in = bk_vun(ISA_OP_V_CLIP, ISA_F32, f, f, sh, cs, cs, (float)lo, (float)hi);
    bk_code_cp(k, &in);
    in = bk_q_cast(ISA_F32, ydt, y, f, sh, cs, cs);
    bk_code_cp(k, &in);
}

void bk_q_range(int irdt, int *lo, int *hi)
{
    *lo = irdt == IR_U8 ? 0 : -128;
    *hi = irdt == IR_U8 ? 255 : 127;
}

int bk_q_const_one(const IrGraph *g, int t, double *v)
{
    if (t < 0 || !g->t[t].data || ir_numel(&g->t[t]) != 1) return -1;
    *v = ir_get_f(&g->t[t], 0);
    return 0;
}


int bk_q_split_dim(int64_t n, uint32_t *a, uint32_t *b)
{
    for (int64_t f = 1; f <= 65535; f++)
        if (n % f == 0 && n / f <= 65535) {
            *a = (uint32_t)f;
            *b = (uint32_t)(n / f);
            return 0;
        }
    return -1;
}


uint64_t bk_q_to_i8(BkCode *k, int dt, uint64_t raw, uint64_t a8, const uint32_t sh[4], const int64_t cs[4],
                    const int64_t ds[4])
{
    if (dt == ISA_I8) return raw;
    AtlInsn in = bk_vun(ISA_OP_V_AFFINE, dt, raw, raw, sh, cs, cs, 1.0f, -128.0f);
    bk_code_cp(k, &in);
    in = bk_q_cast(dt, ISA_I8, a8, raw, sh, ds, cs);
    bk_code_cp(k, &in);
    return a8;
}

void bk_q_reduce(BkCode *k, int op, int dt, int ot, uint64_t dst, uint64_t src, const uint32_t sh[4], int axis)
{
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = (uint8_t)op;
    in.dtype = (uint8_t)dt;
    in.otype = (uint8_t)ot;
    in.axis = (uint8_t)axis;
    memcpy(in.shape, sh, sizeof in.shape);
    in.dst = dst;
    in.src = src;
    bk_code_cp(k, &in);
}

void bk_q_load_vec(BkCode *k, int dt, uint64_t dst, uint64_t src, int n)
{
    uint32_t sh[4] = {1, 1, 1, (uint32_t)n};
    int64_t cs[4];
    bk_compact(sh, cs);
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, dst, ISA_SPACE_DRAM, src, sh, cs, cs);
    bk_code_ld(k, &in, 0);
}


int32_t *bk_q_zero_points(BkCtx *c, int node, int t, int64_t n, int shift, int *any, AtlErr *e)
{
    const IrGraph *g = c->g;
    int64_t cnt = t >= 0 ? ir_numel(&g->t[t]) : 1;
    if (t >= 0 && !g->t[t].data) { bk_fail(c, node, e, "zero point '%s' must be a constant (the chip compiles it in)", g->t[t].name); return NULL; }
    if (cnt != 1 && cnt != n) { bk_fail(c, node, e, "zero point '%s' has %lld values for %lld rows/columns", g->t[t].name, (long long)cnt, (long long)n); return NULL; }
    int32_t *v = malloc((size_t)n * sizeof *v);
    if (!v) { bk_fail(c, node, e, "out of memory"); return NULL; }
    *any = 0;
    for (int64_t i = 0; i < n; i++) {
        v[i] = (int32_t)(t >= 0 ? ir_get_i(&g->t[t], cnt == 1 ? 0 : i) : 0) - shift;
        *any |= v[i] != 0;
    }
    return v;
}

