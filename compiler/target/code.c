/* code.c - small builders shared by the lowering passes: the per-tile
 * instruction lists (BkCode), instruction constructors with the ISA's
 * conventions (DMA strides in bytes, vector strides in elements, outermost
 * first), activation epilogues, and weight placement through the abm
 * writer (which deduplicates identical blobs).
 * Reads: nothing global. Guarantees: instructions are complete except for
 * the sync fields (wait/signal), which only the emitter sets, and `layer`,
 * which the emitter stamps. */
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <stdio.h>
#include "compiler/target/layer.h"
#include "isa/numerics.h"
#include "isa/regs.h"

/* An operand tagged BK_SRAM_TAG_REGION (a tensor placement split keeps in
 * the cluster's SRAM) becomes an SRAM operand at its offset. */
static void sram_operand(uint8_t *space, uint64_t *addr)
{
    if (*space == ISA_SPACE_DRAM && *addr >> ATL_RELOC_SHIFT == (uint64_t)BK_SRAM_TAG_REGION + 1) {
        *space = ISA_SPACE_SRAM;
        *addr &= ((uint64_t)1 << ATL_RELOC_SHIFT) - 1;
    }
}

static int push(AtlInsn **v, int *n, int *cap, const AtlInsn *in, int *oom)
{
    AtlInsn tmp;
    if (*n == *cap) {
        tmp = *in;   /* in may be in *v */
        in = &tmp;
        int nc = *cap ? *cap * 2 : 32;
        AtlInsn *p = realloc(*v, (size_t)nc * sizeof *p);
        if (!p) { *oom = 1; return -1; }
        *v = p;
        *cap = nc;
    }
    /* copied once, into its place (the code of every tile priced passes here) */
    AtlInsn *x = &(*v)[(*n)++];
    *x = *in;
    if (isa_ops[x->op].engine == ISA_ENGINE_DMA) {
        sram_operand(&x->dst_space, &x->dst);
        if (x->op != ISA_OP_DMA_FILL) sram_operand(&x->src_space, &x->src);
        if (isa_ops[x->op].format == ISA_FMT_DMA_GATHER) sram_operand(&x->src2_space, &x->src2);
    }
    return 0;
}

int bk_code_ld(BkCode *c, const AtlInsn *in, int weight)
{
    int cap = c->capld;
    if (push(&c->ld, &c->nld, &c->capld, in, &c->oom)) return -1;
    if (c->capld != cap) {
        uint8_t *p = realloc(c->ld_w, (size_t)c->capld);
        if (!p) { c->oom = 1; return -1; }
        c->ld_w = p;
    }
    c->ld_w[c->nld - 1] = (uint8_t)weight;
    return 0;
}
int bk_code_cp(BkCode *c, const AtlInsn *in) { return push(&c->cp, &c->ncp, &c->capcp, in, &c->oom); }
int bk_code_st(BkCode *c, const AtlInsn *in) { return push(&c->st, &c->nst, &c->capst, in, &c->oom); }
void bk_code_reset(BkCode *c) { c->nld = c->ncp = c->nst = 0; c->oom = 0; }
void bk_code_free(BkCode *c)
{
    free(c->ld); free(c->cp); free(c->st); free(c->ld_w);
    free(c->spare); free(c->spare_w);
    memset(c, 0, sizeof *c);
}

int bk_code_spare(BkCode *c, int n, int flags, AtlInsn **v, uint8_t **vw, int *capv, int *capvw)
{
    if (c->capspare < n) {
        AtlInsn *p = realloc(c->spare, (size_t)n * sizeof *p);
        if (!p) return -1;
        c->spare = p;
        c->capspare = n;
    }
    if (flags && c->capspare_w < n) {
        uint8_t *p = realloc(c->spare_w, (size_t)n);
        if (!p) return -1;
        c->spare_w = p;
        c->capspare_w = n;
    }
    *v = c->spare;
    *vw = c->spare_w;
    *capv = c->capspare;
    *capvw = c->capspare_w;
    c->spare = NULL;
    c->spare_w = NULL;
    c->capspare = c->capspare_w = 0;
    return 0;
}

void bk_code_unspare(BkCode *c, AtlInsn *v, uint8_t *vw, int capv, int capvw)
{
    c->spare = v;
    c->spare_w = vw;
    c->capspare = capv;
    c->capspare_w = capvw;
}

void bk_code_swap(BkCode *c, AtlInsn **list, int *n, int *cap, uint8_t **w, AtlInsn *v, uint8_t *vw, int nv, int capv,
                  int capvw)
{
    c->spare = *list;
    c->capspare = *cap;
    if (w) {
        c->spare_w = *w;
        c->capspare_w = *cap;
        *w = vw;
    } else {
        c->spare_w = vw;
        c->capspare_w = capvw;
    }
    *list = v;
    *n = nv;
    *cap = capv;
}

/* The copies of list v[0..*n) (weight flags w, NULL for none) with every
 * SRAM write followed by its copies into the other clusters' SRAM, built
 * in code's spare buffers. */
static int replicate_list(BkCode *code, AtlInsn **v, int *n, int *cap, uint8_t **w, int clusters, int own, int *oom)
{
    int extra = 0;
    for (int i = 0; i < *n; i++)
        if (isa_ops[(*v)[i].op].engine == ISA_ENGINE_DMA && (*v)[i].dst_space == ISA_SPACE_SRAM) extra += clusters - 1;
    if (!extra) return 0;
    int m = *n + extra;
    /* into the spare buffers (the flags: as many as the list's capacity) */
    AtlInsn *out;
    uint8_t *wo;
    int capo, capw;
    if (bk_code_spare(code, m, 0, &out, &wo, &capo, &capw)) { *oom = 1; return -1; }
    if (w && capw < capo) {
        uint8_t *p = realloc(wo, (size_t)capo);
        if (!p) { bk_code_unspare(code, out, wo, capo, capw); *oom = 1; return -1; }
        wo = p;
        capw = capo;
    }
    uint8_t *fo = w ? wo : NULL;   /* the flags written */
    int k = 0;
    for (int i = 0; i < *n; i++) {
        const AtlInsn *in = &(*v)[i];
        uint8_t flag = w ? (*w)[i] : 0;
        if (fo) fo[k] = flag;
        out[k++] = *in;
        if (isa_ops[in->op].engine != ISA_ENGINE_DMA || in->dst_space != ISA_SPACE_SRAM) continue;
        /* the copy: the same source, or what the DMA wrote in the own SRAM */
        AtlInsn cp = *in;
        int from_own = in->op != ISA_OP_DMA_COPY || in->src_space == ISA_SPACE_DRAM;
        if (from_own) {
            memset(&cp, 0, sizeof cp);
            cp.op = ISA_OP_DMA_COPY;
            cp.dtype = in->dtype;
            memcpy(cp.shape, in->shape, sizeof cp.shape);
            /* a scatter may write any of its `limit` rows along d1 */
            if (in->op == ISA_OP_DMA_SCATTER) cp.shape[1] = in->limit;
            memcpy(cp.dst_stride, in->dst_stride, sizeof cp.dst_stride);
            memcpy(cp.src_stride, in->dst_stride, sizeof cp.src_stride);
            cp.src_space = ISA_SPACE_SRAM;
            cp.src = in->dst;
        }
        cp.wait = cp.signal = 0;
        cp.mask = 0;
        cp.dst_space = ISA_SPACE_PEER;
        for (int c = 0; c < clusters; c++) {
            if (c == own) continue;
            cp.dst = isa_peer_addr(c, in->dst);
            if (fo) fo[k] = flag;
            out[k++] = cp;
        }
    }
    bk_code_swap(code, v, n, cap, w, out, wo, m, capo, capw);
    return 0;
}

int bk_code_replicate_sram(BkCode *c, int clusters, int own)
{
    if (clusters < 2) return 0;
    if (replicate_list(c, &c->ld, &c->nld, &c->capld, &c->ld_w, clusters, own, &c->oom) ||
        replicate_list(c, &c->cp, &c->ncp, &c->capcp, NULL, clusters, own, &c->oom) ||
        replicate_list(c, &c->st, &c->nst, &c->capst, NULL, clusters, own, &c->oom))
        return -1;
    return 0;
}

void bk_compact(const uint32_t sh[4], int64_t st[4])
{
    int64_t s = 1;
    for (int d = 3; d >= 0; d--) { st[d] = s; s *= sh[d]; }
}

AtlInsn bk_dma(int dt, int dsp, uint64_t dst, int ssp, uint64_t src, const uint32_t sh[4],
               const int64_t ds[4], const int64_t ss[4])
{
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_DMA_COPY;
    in.dtype = (uint8_t)dt;
    in.dst_space = (uint8_t)dsp;
    in.src_space = (uint8_t)ssp;
    in.dst = dst;
    in.src = src;
    int es = isa_dtype_size(dt);
    for (int d = 0; d < 4; d++) {
        in.shape[d] = sh[d];
        in.dst_stride[d] = (int32_t)(ds[d] * es);
        in.src_stride[d] = (int32_t)(ss[d] * es);
    }
    return in;
}

AtlInsn bk_vun(int op, int dt, uint64_t dst, uint64_t src, const uint32_t sh[4],
               const int64_t ds[4], const int64_t ss[4], float alpha, float beta)
{
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = (uint8_t)op;
    in.dtype = (uint8_t)dt;
    in.dst = dst;
    in.src = src;
    for (int d = 0; d < 4; d++) {
        in.shape[d] = sh[d];
        in.dst_stride[d] = (int32_t)ds[d];
        in.src_stride[d] = (int32_t)ss[d];
    }
    in.alpha = alpha;
    in.beta = beta;
    return in;
}

AtlInsn bk_vbin(int op, int dt, uint64_t dst, uint64_t a, uint64_t b, const uint32_t sh[4],
                const int64_t ds[4], const int64_t sa[4], const int64_t sb[4])
{
    AtlInsn in = bk_vun(op, dt, dst, a, sh, ds, sa, 0, 0);
    in.src2 = b;
    for (int d = 0; d < 4; d++) in.src2_stride[d] = (int32_t)sb[d];
    return in;
}

/* Splits n contiguous elements into a 4-D shape with every dim < 65536:
 * n = a*b*c*d exactly when possible, else the caller loops. Returns the
 * elements covered (a multiple of the innermost run). */
static uint32_t flat_shape(uint32_t n, uint32_t sh[4])
{
    uint32_t inner = n < 32768 ? n : 32768;
    uint32_t outer = n / inner;
    if (outer > 32768) outer = 32768;
    sh[0] = 1; sh[1] = 1; sh[2] = outer; sh[3] = inner;
    return outer * inner;
}

int bk_act_code(BkCode *c, const char *act, float alpha, float beta, int dt, uint64_t p,
                uint64_t tmp, uint32_t n, int layer)
{
    (void)layer;
    if (!act || !act[0]) return 0;
    uint32_t done = 0;
    while (done < n) {
        uint32_t sh[4];
        uint32_t k = flat_shape(n - done, sh);
        int64_t st[4];
        bk_compact(sh, st);
        int es = isa_dtype_size(dt);
        uint64_t q = p + (uint64_t)done * es, t = tmp + (uint64_t)done * es;
        AtlInsn in;
        if (!strcmp(act, "Relu")) in = bk_vun(ISA_OP_V_RELU, dt, q, q, sh, st, st, 0, 0);
        else if (!strcmp(act, "LeakyRelu")) in = bk_vun(ISA_OP_V_LRELU, dt, q, q, sh, st, st, alpha, 0);
        else if (!strcmp(act, "Clip")) in = bk_vun(ISA_OP_V_CLIP, dt, q, q, sh, st, st, alpha, beta);
        else if (!strcmp(act, "Sigmoid")) in = bk_vun(ISA_OP_V_SIGMOID, dt, q, q, sh, st, st, 0, 0);
        else if (!strcmp(act, "Tanh")) in = bk_vun(ISA_OP_V_TANH, dt, q, q, sh, st, st, 0, 0);
        else if (!strcmp(act, "HardSigmoid")) {
            in = bk_vun(ISA_OP_V_AFFINE, dt, q, q, sh, st, st, alpha, beta);
            if (bk_code_cp(c, &in)) return -1;
            in = bk_vun(ISA_OP_V_CLIP, dt, q, q, sh, st, st, 0.0f, 1.0f);
        } else if (!strcmp(act, "HardSwish")) {
            /* x * clip(x/6 + 1/2, 0, 1): the gate goes to tmp */
            in = bk_vun(ISA_OP_V_AFFINE, dt, t, q, sh, st, st, 1.0f / 6.0f, 0.5f);
            if (bk_code_cp(c, &in)) return -1;
            in = bk_vun(ISA_OP_V_CLIP, dt, t, t, sh, st, st, 0.0f, 1.0f);
            if (bk_code_cp(c, &in)) return -1;
            in = bk_vbin(ISA_OP_V_MUL, dt, q, q, t, sh, st, st, st);
        } else return -1;
        if (bk_code_cp(c, &in)) return -1;
        done += k;
    }
    return 0;
}

int bk_flat_copy(BkCode *c, int dt, uint64_t dst, uint64_t src, uint64_t n)
{
    const uint64_t row = 16384;   /* rows of 16384 elements, then the rest */
    uint64_t full = n / row, rest = n % row, es = (uint64_t)isa_dtype_size(dt);
    if (full > 65535) return -1;
    int64_t st[4];
    if (full) {
        uint32_t sh[4] = {1, 1, (uint32_t)full, (uint32_t)row};
        bk_compact(sh, st);
        AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, dst, ISA_SPACE_DRAM, src, sh, st, st);
        if (bk_code_st(c, &in)) return -1;
    }
    if (rest) {
        uint32_t sh[4] = {1, 1, 1, (uint32_t)rest};
        bk_compact(sh, st);
        AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, dst + full * row * es, ISA_SPACE_DRAM, src + full * row * es, sh, st, st);
        if (bk_code_st(c, &in)) return -1;
    }
    return 0;
}

int bk_matrix_epilogue(BkCode *c, const BkLow *l, int dt, uint64_t acc, uint64_t tmp, uint64_t out, uint64_t resid,
                       const uint32_t osh[4], const int64_t ost[4], uint64_t *res)
{
    uint32_t n = osh[0] * osh[1] * osh[2] * osh[3];
    if (l->act[0] && bk_act_code(c, l->act, l->act_alpha, l->act_beta, ISA_F32, acc, tmp, n, 0)) return -1;
    if (resid) {
        AtlInsn add = bk_vbin(ISA_OP_V_ADD, ISA_F32, acc, acc, resid, osh, ost, ost, ost);
        if (bk_code_cp(c, &add)) return -1;
        if (l->t_act[0] && bk_act_code(c, l->t_act, l->t_alpha, l->t_beta, ISA_F32, acc, tmp, n, 0)) return -1;
    }
    *res = acc;
    if (dt == ISA_F32) return 0;
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_V_CAST;
    in.dtype = ISA_F32;
    in.otype = (uint8_t)dt;
    in.dst = out;
    in.src = acc;
    for (int d = 0; d < 4; d++) { in.shape[d] = osh[d]; in.dst_stride[d] = (int32_t)ost[d]; in.src_stride[d] = (int32_t)ost[d]; }
    bk_code_cp(c, &in);
    *res = out;
    return 0;
}
