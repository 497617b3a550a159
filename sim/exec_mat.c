/* exec_mat.c - data effect of the matrix unit: mm and conv (implicit GEMM).
 * int8 x int8 -> int32 is the simulator's hot path: each output row is
 * accumulated in an aligned int32 scratch row with an axpy inner loop over
 * contiguous n (B rows, or conv weights whose innermost index is oc), which
 * the compiler vectorises. Floats: products and sums in fp32, each output
 * accumulated in increasing k order, starting from the old C when acc=1,
 * else from +0. A conv's k order is (channel block of NUM_CONV_CBLOCK, kh,
 * kw, channel within the block), so a conv cut into input-channel chunks
 * that are whole blocks sums exactly as the uncut conv does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_int.h"
#include "isa/numerics.h"
#include "isa/timing.h"

#if defined(__GNUC__) && !defined(__clang__)
#define HOT __attribute__((optimize("O3", "tree-vectorize")))
#else
#define HOT
#endif

int sim_scratch(AtlSim *s, size_t bytes)
{
    if (bytes <= s->scratch_cap) return 0;
    size_t cap = s->scratch_cap ? s->scratch_cap : 65536;
    while (cap < bytes) cap *= 2;
    void *p = realloc(s->scratch, cap);
    if (!p) { snprintf(s->exec_msg, sizeof s->exec_msg, "out of host memory for %zu bytes of scratch", bytes); return -1; }
    s->scratch = p;
    s->scratch_cap = cap;
    return 0;
}

/* acc[0..n) += a * b[0..n); 32-bit two's-complement wrap (unsigned math: no UB) */
HOT static void axpy_i8(uint32_t *restrict acc, int32_t a, const int8_t *restrict b, int n)
{
    for (int j = 0; j < n; j++) acc[j] += (uint32_t)(a * (int32_t)b[j]);
}

/* acc[0..n) += a0*b0 + a1*b1 + a2*b2 + a3*b3 (four k steps at once) */
HOT static void axpy4_i8(uint32_t *restrict acc, int32_t a0, int32_t a1, int32_t a2, int32_t a3,
                         const int8_t *restrict b0, const int8_t *restrict b1,
                         const int8_t *restrict b2, const int8_t *restrict b3, int n)
{
    for (int j = 0; j < n; j++)
        acc[j] += (uint32_t)(a0 * (int32_t)b0[j] + a1 * (int32_t)b1[j] + a2 * (int32_t)b2[j] + a3 * (int32_t)b3[j]);
}

HOT static void axpy_f32(float *restrict acc, float a, const float *restrict b, int n)
{
    for (int j = 0; j < n; j++) acc[j] += a * b[j];
}

static float load_f(const uint8_t *p, int dt)
{
    uint16_t h;
    float f;
    switch (dt) {
    case ISA_F16: memcpy(&h, p, 2); return num_f16_to_f32(h);
    case ISA_BF16: memcpy(&h, p, 2); return num_bf16_to_f32(h);
    default: memcpy(&f, p, 4); return f;
    }
}

/* Converts n elements of a float dtype to f32. */
static void to_f32(float *dst, const uint8_t *src, int dt, size_t n)
{
    int es = isa_dtype_size(dt);
    if (dt == ISA_F32) { memcpy(dst, src, n * 4); return; }
    for (size_t i = 0; i < n; i++) dst[i] = load_f(src + i * (size_t)es, dt);
}

int sim_exec_fmt_MM(AtlSim *s, int core, const AtlInsn *in)
{
    uint8_t *L = s->core[core].lmem;
    int m = (int)in->m, k = (int)in->k, n = (int)in->n;
    uint8_t *C = L + in->dst;
    if (in->dtype == ISA_I8) {
        const int8_t *A = (const int8_t *)(L + in->src), *B = (const int8_t *)(L + in->src2);
        if (sim_scratch(s, (size_t)n * 4)) return -1;
        uint32_t *acc = (uint32_t *)s->scratch;
        for (int i = 0; i < m; i++) {
            uint8_t *crow = C + (size_t)i * in->ldc * 4;
            if (in->acc) memcpy(acc, crow, (size_t)n * 4); else memset(acc, 0, (size_t)n * 4);
            const int8_t *arow = A + (size_t)i * in->lda;
            int kk = 0;
            for (; kk + 4 <= k; kk += 4) {
                const int8_t *b = B + (size_t)kk * in->ldb;
                axpy4_i8(acc, arow[kk], arow[kk + 1], arow[kk + 2], arow[kk + 3],
                         b, b + in->ldb, b + 2 * (size_t)in->ldb, b + 3 * (size_t)in->ldb, n);
            }
            for (; kk < k; kk++) axpy_i8(acc, arow[kk], B + (size_t)kk * in->ldb, n);
            memcpy(crow, acc, (size_t)n * 4);
        }
        return 0;
    }
    int es = isa_dtype_size(in->dtype);
    size_t bsz = (size_t)k * n;
    if (sim_scratch(s, (bsz + (size_t)k + (size_t)n) * 4)) return -1;
    float *Bf = (float *)s->scratch, *arow = Bf + bsz, *acc = arow + k;
    for (int kk = 0; kk < k; kk++) to_f32(Bf + (size_t)kk * n, L + in->src2 + (size_t)kk * in->ldb * es, in->dtype, (size_t)n);
    for (int i = 0; i < m; i++) {
        uint8_t *crow = C + (size_t)i * in->ldc * 4;
        if (in->acc) memcpy(acc, crow, (size_t)n * 4); else memset(acc, 0, (size_t)n * 4);
        to_f32(arow, L + in->src + (size_t)i * in->lda * es, in->dtype, (size_t)k);
        for (int kk = 0; kk < k; kk++) axpy_f32(acc, arow[kk], Bf + (size_t)kk * n, n);
        memcpy(crow, acc, (size_t)n * 4);
    }
    return 0;
}

int sim_exec_fmt_CONV(AtlSim *s, int core, const AtlInsn *in)
{
    uint8_t *L = s->core[core].lmem;
    int oh = (int)tim_conv_out(in->ih, in->kh, in->sh, in->dh, in->pad_top, in->pad_bottom);
    int ow = (int)tim_conv_out(in->iw, in->kw, in->sw, in->dw, in->pad_left, in->pad_right);
    int C = (int)in->cin, OC = (int)in->cout, G = in->groups, cg = C / G, ocg = OC / G;
    int H = (int)in->ih, W = (int)in->iw;
    int es = isa_dtype_size(in->dtype), isf = in->dtype != ISA_I8;
    uint8_t *Y = L + in->dst;
    const uint8_t *X = L + in->src, *Wt = L + in->src2;
    size_t wn = (size_t)in->kh * in->kw * cg * OC;
    int taps = in->kh * in->kw;
    /* tap_x: per output pixel, each tap's input offset (SIZE_MAX: padding) */
    size_t need = (size_t)taps * sizeof(size_t) + (size_t)OC * 4 + (isf ? (wn + (size_t)H * W * C) * 4 : 0);
    if (sim_scratch(s, need)) return -1;
    size_t *tap_x = (size_t *)s->scratch;
    uint32_t *acc = (uint32_t *)(void *)(tap_x + taps);
    float *accf = (float *)(void *)(tap_x + taps), *wf = accf + OC, *xf = wf + wn;
    if (isf) {
        /* float weights block-major, in the order the sums read them: row
         * (cb * taps + t * bw + c - cb) of OC for block cb of bw channels */
        for (int cb = 0; cb < cg; cb += NUM_CONV_CBLOCK) {
            int bw = cg - cb < NUM_CONV_CBLOCK ? cg - cb : NUM_CONV_CBLOCK;
            for (int t = 0; t < taps; t++)
                to_f32(wf + ((size_t)cb * taps + (size_t)t * bw) * OC, Wt + ((size_t)t * cg + cb) * OC * es, in->dtype,
                       (size_t)bw * OC);
        }
        to_f32(xf, X, in->dtype, (size_t)H * W * C);
    }
    float padf = (float)in->ival;
    for (int oy = 0; oy < oh; oy++)
        for (int ox = 0; ox < ow; ox++) {
            uint8_t *yrow = Y + ((size_t)oy * ow + ox) * OC * 4;
            if (in->acc) memcpy(acc, yrow, (size_t)OC * 4); else memset(acc, 0, (size_t)OC * 4);
            for (int ky = 0, t = 0; ky < in->kh; ky++)
                for (int kx = 0; kx < in->kw; kx++, t++) {
                    int iy = oy * in->sh - in->pad_top + ky * in->dh, ix = ox * in->sw - in->pad_left + kx * in->dw;
                    tap_x[t] = iy >= 0 && iy < H && ix >= 0 && ix < W ? ((size_t)iy * W + ix) * C : SIZE_MAX;
                }
            for (int g = 0; g < G; g++)
                for (int cb = 0; cb < cg; cb += NUM_CONV_CBLOCK) {
                    int bw = cg - cb < NUM_CONV_CBLOCK ? cg - cb : NUM_CONV_CBLOCK;
                    for (int t = 0; t < taps; t++) {
                        int inside = tap_x[t] != SIZE_MAX;
                        size_t xoff = tap_x[t] + (size_t)g * cg + cb;
                        if (isf) {
                            const float *wrow = wf + ((size_t)cb * taps + (size_t)t * bw) * OC + (size_t)g * ocg;
                            for (int c = 0; c < bw; c++)
                                axpy_f32(accf + (size_t)g * ocg, inside ? xf[xoff + c] : padf, wrow + (size_t)c * OC, ocg);
                        } else {
                            const int8_t *wrow = (const int8_t *)Wt + ((size_t)t * cg + cb) * OC + (size_t)g * ocg;
                            for (int c = 0; c < bw; c++)
                                axpy_i8(acc + (size_t)g * ocg, inside ? ((const int8_t *)X)[xoff + c] : in->ival,
                                        wrow + (size_t)c * OC, ocg);
                        }
                    }
                }
            memcpy(yrow, acc, (size_t)OC * 4);
        }
    return 0;
}
