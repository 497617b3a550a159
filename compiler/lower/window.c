/* window.c - what the window lowerings (convolution and pooling, one layer
 * at a time in conv.c, several chained in a layer group in chain.c) share:
 * the DMA of a box of an NCHW tensor in DRAM to or from an HWC block in
 * LMEM, and the conv / pool instruction over an HWC block of input rows.
 * Also the tiling both window lowerings with a matrix unit share (conv.c
 * for float, qmatrix.c for int8): where a tile index lies in the tile
 * grid, which shapes read some input, the chunk counts the split search
 * tries, its pair order and the split's text.
 * Why HWC in LMEM: the matrix unit's conv reads an HWC image, and the
 * vector unit's pools and epilogues work on its rows; DRAM stays NCHW
 * (docs/backend.md, "DRAM layout"). */
#include <stdio.h>
#include <string.h>
#include "compiler/lower/lower.h"

AtlInsn bk_nchw_boxes(int dt, int load, uint64_t base, int C, int H, int W, const BkImgBox *b, uint64_t lmem)
{
    uint32_t sh[4];
    int64_t ds[4], ss[4];
    int64_t plane = (int64_t)H * W, image = (int64_t)C * plane;   /* (stride 0 along a dim of one, as before) */
    uint64_t at = base + (((uint64_t)((int64_t)b->n * C + b->c0) * (uint64_t)H + (uint64_t)b->r0) * (uint64_t)W + (uint64_t)b->w0) *
                             (uint64_t)isa_dtype_size(dt);
    if (load) {
        /* walked (image, row, channel, column): consecutive bursts come
         * from different channel planes, spread over the DRAM channels */
        sh[0] = (uint32_t)b->nn; sh[1] = (uint32_t)b->rn; sh[2] = (uint32_t)b->cn; sh[3] = (uint32_t)b->wn;
        ss[0] = b->nn > 1 ? image : 0; ss[1] = (int64_t)W * b->rs; ss[2] = plane; ss[3] = b->ws;
        ds[0] = b->nn > 1 ? b->ls ? b->ls : (int64_t)b->rn * b->wn * b->cn : 0; ds[1] = (int64_t)b->wn * b->cn; ds[2] = 1; ds[3] = b->cn;
        return bk_dma(dt, ISA_SPACE_LMEM, lmem, ISA_SPACE_DRAM, at, sh, ds, ss);
    }
    sh[0] = (uint32_t)b->nn; sh[1] = (uint32_t)b->rn; sh[2] = (uint32_t)b->wn; sh[3] = (uint32_t)b->cn;
    bk_compact(sh, ss);
    if (b->nn > 1 && b->ls) ss[0] = b->ls;
    ds[0] = b->nn > 1 ? image : 0; ds[1] = (int64_t)W * b->rs; ds[2] = b->ws; ds[3] = plane;
    return bk_dma(dt, ISA_SPACE_DRAM, at, ISA_SPACE_LMEM, lmem, sh, ds, ss);
}

AtlInsn bk_nchw_box(int dt, int load, uint64_t base, int C, int H, int W, int n, int c0, int cn, int r0, int rn, int w0,
                    int wn, uint64_t lmem)
{
    BkImgBox b = {n, 1, c0, cn, r0, rn, 1, w0, wn, 1, 0};
    return bk_nchw_boxes(dt, load, base, C, H, W, &b, lmem);
}

AtlInsn bk_window_insn(const BkLow *l, int op, int dt, uint64_t src, int cin, BkSpan ys, BkSpan xs)
{
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = (uint8_t)op;
    in.dtype = (uint8_t)dt;
    in.src = src;
    in.cin = (uint32_t)cin; in.ih = (uint32_t)ys.n; in.iw = (uint32_t)xs.n;
    in.kh = (uint8_t)l->kh; in.kw = (uint8_t)l->kw; in.sh = (uint8_t)l->sh; in.sw = (uint8_t)l->sw;
    in.pad_top = (uint8_t)ys.pa; in.pad_bottom = (uint8_t)ys.pb;
    in.pad_left = (uint8_t)xs.pa; in.pad_right = (uint8_t)xs.pb;
    if (op == ISA_OP_CONV) { in.dh = (uint8_t)l->dh; in.dw = (uint8_t)l->dw; }
    else in.count_pad = (uint8_t)l->count_pad;
    return in;
}

int bk_image_chunks(const BkLow *l) { return l->nb > 1 ? (l->N + l->nb - 1) / l->nb : l->N; }

BkTilePos bk_tile_pos(const BkLow *l, int t)
{
    BkTilePos p;
    int nic = bk_image_chunks(l), nb = l->nb > 1 ? l->nb : 1;
    p.kci = t % l->nkc;
    p.out = t / l->nkc;
    p.wci = p.out % l->nwc;
    int r = p.out / l->nwc;
    p.rci = r % l->nrc;
    r /= l->nrc;
    p.n = r % nic * nb;
    p.nn = l->N - p.n < nb ? l->N - p.n : nb;
    p.gci = r / nic;
    return p;
}

static int imin(int a, int b) { return a < b ? a : b; }

int bk_window_spans_ok(const BkLow *l)
{
    for (int i = 0; i < l->nrc; i++) {
        BkSpan s = bk_window_span(i * l->rows, imin(l->rows, l->OH - i * l->rows), l->sh, l->pt, l->dh, l->kh, l->H);
        if (s.n <= 0 || s.pa > 63 || s.pb > 63) return 0;
    }
    for (int i = 0; i < l->nwc; i++) {
        BkSpan s = bk_window_span(i * l->cols, imin(l->cols, l->OW - i * l->cols), l->sw, l->pl, l->dw, l->kw, l->W);
        if (s.n <= 0 || s.pa > 63 || s.pb > 63) return 0;
    }
    return 1;
}

int bk_chunk_sizes(int n, int *out, int cap)
{
    int cnt = 0, last = 0;
    for (int k = 1; cnt < cap;) {
        int sz = (n + k - 1) / k;
        if (sz != last) { out[cnt++] = sz; last = sz; }
        if (sz == 1) break;
        k = k < 2 ? 2 : (k & (k - 1)) == 0 ? k + k / 2 : k / 3 * 4;
    }
    return cnt;
}

int bk_split_pair_cmp(const void *a, const void *b)
{
    const BkSplitPair *x = a, *y = b;
    if (x->prod != y->prod) return x->prod < y->prod ? -1 : 1;
    return x->nk < y->nk ? -1 : x->nk > y->nk;
}

/* 1x1, no padding, one group. */
static int pointwise(const BkLow *l)
{
    return l->groups == 1 && l->kh == 1 && l->kw == 1 && !l->pt && !l->pb && !l->pl && !l->pr;
}

int bk_compact_ok(const BkCtx *c, const BkLow *l)
{
    return c->grouping && pointwise(l) && (l->sh > 1 || l->sw > 1);
}

BkStack bk_image_stack(const BkLow *l)
{
    BkStack st = {l->OH, l->OH, 0, 0};
    if (pointwise(l) && ((l->sh == 1 && l->sw == 1) || l->compact)) return st;
    BkSpan ys = bk_window_span(0, l->OH, l->sh, l->pt, l->dh, l->kh, l->H);
    int ext = ys.pa + ys.n + ys.pb, kext = l->dh * (l->kh - 1) + 1;
    if (l->sh == 1 && ys.pb <= ys.pa && kext > 1) {
        /* stride 1: image i's bottom padding is image i+1's top zero rows
         * (the last image's, the conv's bottom padding), so a tile of nb
         * images computes nb (pa + H) rows, not nb (pa + H + pb) */
        st.ib = st.ob = ys.pa + ys.n;
        st.top = ys.pa;
        st.pb = kext - 1;
        return st;
    }
    st.ib = (ext + l->sh - 1) / l->sh * l->sh;
    st.ob = st.ib / l->sh;
    st.top = ys.pa;
    st.pb = kext > l->sh ? kext - l->sh : 0;
    return st;
}

void bk_stack_zeros(BkCode *k, int dt, int32_t value, uint64_t lmem, int nn, const BkStack *sk, int n, int cols, int cn)
{
    int64_t row = (int64_t)cols * cn;
    int runs[2][2] = {{0, sk->top}, {sk->top + n, sk->ib - sk->top - n}};
    for (int i = 0; i < 2; i++) {
        if (runs[i][1] <= 0) continue;
        /* rows of one contiguous run each, or (cols, cn) when longer than a shape field */
        uint32_t sh[4] = {(uint32_t)nn, (uint32_t)runs[i][1], 1, (uint32_t)row};
        int64_t ds[4] = {(int64_t)sk->ib * row, row, 0, 1}, zero[4] = {0, 0, 0, 0};
        if (row > 65535) { sh[2] = (uint32_t)cols; sh[3] = (uint32_t)cn; ds[2] = cn; }
        AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, lmem + (uint64_t)(runs[i][0] * row * isa_dtype_size(dt)), 0, 0, sh, ds, zero);
        in.op = ISA_OP_DMA_FILL;
        in.ival = value;
        bk_code_ld(k, &in, 0);
    }
}

int bk_multi_image_ok(const BkCtx *c, const BkLow *l, int stacked)
{
    if (!c->grouping || l->N < 2 || l->groups != 1) return 0;
    if (pointwise(l) && ((l->sh == 1 && l->sw == 1) || l->compact)) return 1;
    return stacked && !pointwise(l) && bk_image_stack(l).pb <= 63;
}

int bk_image_counts(const BkCtx *c, const BkLow *l, int stacked, int *out)
{
    int n = 0;
    if (!bk_multi_image_ok(c, l, stacked)) return 0;
    if (c->tile_images > 0) {
        int nb = c->tile_images < l->N ? c->tile_images : l->N;
        if (nb > 1) out[n++] = nb;
        return n;
    }
    for (int nb = l->N; nb > 1 && n < BK_IMAGE_COUNTS; nb = nb == 2 ? 1 : (nb + 1) / 2) out[n++] = nb;
    return n;
}

void bk_keep_images(const BkCtx *c, const BkLow *l, int stacked, BkShapes *q, size_t nb_at)
{
    int only = c->tile_images > 0 && bk_multi_image_ok(c, l, stacked) ? (c->tile_images < l->N ? c->tile_images : l->N) : 0;
    int n = 0, nb;
    char *v = q->v;
    for (int i = 0; i < q->n; i++) {
        memcpy(&nb, v + (size_t)i * q->size + nb_at, sizeof nb);
        n += only > 1 && nb == only;
    }
    if (!n) return;
    n = 0;
    for (int i = 0; i < q->n; i++) {
        memcpy(&nb, v + (size_t)i * q->size + nb_at, sizeof nb);
        if (nb != only) continue;
        memmove(v + (size_t)n * q->size, v + (size_t)i * q->size, q->size);
        q->tiles[n++] = q->tiles[i];
    }
    q->n = n;
}

int bk_window_split(const BkLow *l, char *out, size_t cap)
{
    int n = l->nb > 1 ? snprintf(out, cap, "Nb%d C%d H%d", l->nb, l->ngc, l->nrc)
                      : snprintf(out, cap, "N%d C%d H%d", l->N, l->ngc, l->nrc);
    if (l->nwc > 1) n += snprintf(out + n, cap - (size_t)n, " W%d", l->nwc);
    if (l->nkc > 1) n += snprintf(out + n, cap - (size_t)n, " K%d", l->nkc);
    return n;
}
