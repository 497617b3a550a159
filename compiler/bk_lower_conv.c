/* bk_lower_conv.c - Conv and MaxPool/AveragePool on the matrix / vector unit.
 *
 * Reads: a Conv (any kernel, stride, pad, dilation, groups incl. depthwise,
 *   optional bias, fused activation) or pool node, NCHW tensors in DRAM.
 * Tiles: (group chunk, image n, output rows); chunk-major so one core's
 *   consecutive tiles share weights (weight key = group chunk). A tile loads
 *   the input rows it needs (with the halo, clipped to the image; the part
 *   outside becomes the instruction's padding) transposed NCHW -> HWC by a
 *   strided DMA, the weights [kh][kw][c/groups][oc chunk] and the f32 bias,
 *   runs one `conv` into an f32 HWC accumulator, adds the bias and applies
 *   the activation on the vector unit, casts to the storage dtype if it is
 *   not f32, and stores HWC -> NCHW.
 * Tile shape: every (group chunk, rows) candidate, halving from the whole
 *   layer, that fits one LMEM slot; the cost model picks the cheapest (this
 *   is how the parallel split over cores by channels, rows or batch is
 *   chosen: tiles are spread over all cores).
 * Guarantees: the output equals the ONNX op's (f32 accumulation order of
 *   the matrix unit: kh, kw, c). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/bk_int.h"
#include "isa/timing.h"

static int imin(int a, int b) { return a < b ? a : b; }

/* Input rows needed by output rows [r0, r0+rn): first row ia, count ih, and
 * the padding above/below the loaded rows. */
static void rows_needed(const BkLow *l, int r0, int rn, int *ia, int *ih, int *ptp, int *pbp)
{
    int top = r0 * l->sh - l->pt;
    int bot = (r0 + rn - 1) * l->sh - l->pt + l->dh * (l->kh - 1);
    int a = top < 0 ? 0 : top, b = bot > l->H - 1 ? l->H - 1 : bot;
    *ia = a;
    *ih = b - a + 1;
    *ptp = a - top;
    *pbp = bot - b;
}

static int max_in_rows(const BkLow *l, int rows)
{
    int need = (rows - 1) * l->sh + l->dh * (l->kh - 1) + 1;
    return need < l->H ? need : l->H;
}

static void tile_pos(const BkLow *l, int t, int *gci, int *n, int *rci)
{
    *gci = t / (l->N * l->nrc);
    int r = t % (l->N * l->nrc);
    *n = r / l->nrc;
    *rci = r % l->nrc;
}

static int chunk_width(const BkLow *l);
static uint64_t weight_chunk_bytes(const BkCtx *c, const BkLow *l);
static uint64_t bias_chunk_bytes(const BkCtx *c, const BkLow *l);
static int conv_gen(BkCtx *c, const BkGroup *g, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkLow *l = &g->lw;
    int gci, n, rci;
    tile_pos(l, t, &gci, &n, &rci);
    int cpg = l->C / l->groups, opg = l->OC / l->groups;
    int g0 = gci * l->gchunk, gn = imin(l->gchunk, l->groups - g0);
    int c0 = g0 * cpg, cn = gn * cpg, oc0 = g0 * opg, ocn = gn * opg;
    if (l->groups == 1 && l->kind == BK_K_CONV) {
        /* one group: chunk the output channels, every tile reads all inputs */
        oc0 = gci * l->gchunk;
        ocn = imin(l->gchunk, l->OC - oc0);
        gn = 1; c0 = 0; cn = l->C;
    }
    int r0 = rci * l->rows, rn = imin(l->rows, l->OH - r0);
    int ia, ih, ptp, pbp;
    rows_needed(l, r0, rn, &ia, &ih, &ptp, &pbp);
    if (ih <= 0 || ptp > 63 || pbp > 63)
        return bk_fail(c, g->node, e, "output rows %d..%d read no input row (padding too large)", r0, r0 + rn - 1);
    int es = c->es, dt = c->dt, is_pool = l->kind == BK_K_POOL;
    uint32_t sh[4];
    int64_t ds[4], ss[4];
    /* input rows, NCHW -> HWC; walked row-major over (row, channel, x) so
     * consecutive bursts come from different channel planes, which spreads
     * them over the DRAM channels instead of streaming one plane */
    sh[0] = 1; sh[1] = (uint32_t)ih; sh[2] = (uint32_t)cn; sh[3] = (uint32_t)l->W;
    ss[0] = 0; ss[1] = l->W; ss[2] = (int64_t)l->H * l->W; ss[3] = 1;
    ds[0] = 0; ds[1] = (int64_t)l->W * cn; ds[2] = 1; ds[3] = cn;
    uint64_t src = l->x + ((uint64_t)((int64_t)n * l->C + c0) * l->H + (uint64_t)ia) * l->W * es;
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_in, ISA_SPACE_DRAM, src, sh, ds, ss);
    bk_code_ld(k, &in, 0);
    AtlInsn op;
    memset(&op, 0, sizeof op);
    op.dtype = (uint8_t)dt;
    op.src = slot + l->l_in;
    op.cin = (uint32_t)cn; op.ih = (uint32_t)ih; op.iw = (uint32_t)l->W;
    op.kh = (uint8_t)l->kh; op.kw = (uint8_t)l->kw; op.sh = (uint8_t)l->sh; op.sw = (uint8_t)l->sw;
    op.pad_top = (uint8_t)ptp; op.pad_bottom = (uint8_t)pbp;
    op.pad_left = (uint8_t)l->pl; op.pad_right = (uint8_t)l->pr;
    uint64_t res;            /* LMEM of the HWC result in the storage dtype */
    uint32_t ochan;
    if (!is_pool) {
        uint64_t wsrc = slot + l->l_w, bsrc = slot + l->l_b;
        if (g->mcast) {
            /* resident, chunk-major [chunk][kh*kw*cpg][chunk width] (multicast prologue) */
            wsrc = l->l_wres + (uint64_t)gci * weight_chunk_bytes(c, l);
            bsrc = l->l_bres + (uint64_t)gci * bias_chunk_bytes(c, l);
        } else {
        /* weights [kh][kw][cpg][OC] -> [kh][kw][cpg][ocn] */
        sh[0] = 1; sh[1] = 1; sh[2] = (uint32_t)(l->kh * l->kw * cpg); sh[3] = (uint32_t)ocn;
        ss[0] = 0; ss[1] = 0; ss[2] = l->OC; ss[3] = 1;
        bk_compact(sh, ds);
        in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_w, ISA_SPACE_DRAM, l->w + (uint64_t)oc0 * es, sh, ds, ss);
        bk_code_ld(k, &in, 1);
        }
        if (l->b && !g->mcast) {
            sh[2] = 1;
            ss[2] = 0;
            bk_compact(sh, ds);
            in = bk_dma(ISA_F32, ISA_SPACE_LMEM, slot + l->l_b, ISA_SPACE_DRAM, l->b + (uint64_t)oc0 * 4, sh, ds, ss);
            bk_code_ld(k, &in, 1);
        }
        op.op = ISA_OP_CONV;
        op.dst = slot + l->l_acc;
        op.src2 = wsrc;
        op.cout = (uint32_t)ocn;
        op.dh = (uint8_t)l->dh; op.dw = (uint8_t)l->dw;
        op.groups = (uint16_t)gn;
        bk_code_cp(k, &op);
        uint32_t osh[4] = {1, (uint32_t)rn, (uint32_t)l->OW, (uint32_t)ocn};
        int64_t oc[4], bs[4] = {0, 0, 0, 1};
        bk_compact(osh, oc);
        if (l->b) {
            in = bk_vbin(ISA_OP_V_ADD, ISA_F32, slot + l->l_acc, slot + l->l_acc, bsrc, osh, oc, oc, bs);
            bk_code_cp(k, &in);
        }
        uint32_t cnt = (uint32_t)rn * l->OW * ocn;
        if (l->act[0] && bk_act_code(k, l->act, l->act_alpha, l->act_beta, ISA_F32, slot + l->l_acc,
                                     slot + l->l_tmp, cnt, 0))
            return bk_fail(c, g->node, e, "activation %s cannot be fused", l->act);
        res = slot + l->l_acc;
        if (dt != ISA_F32) {
            memset(&in, 0, sizeof in);
            in.op = ISA_OP_V_CAST;
            in.dtype = ISA_F32;
            in.otype = (uint8_t)dt;
            in.dst = slot + l->l_out;
            in.src = slot + l->l_acc;
            for (int d = 0; d < 4; d++) { in.shape[d] = osh[d]; in.dst_stride[d] = (int32_t)oc[d]; in.src_stride[d] = (int32_t)oc[d]; }
            bk_code_cp(k, &in);
            res = slot + l->l_out;
        }
        ochan = (uint32_t)ocn;
    } else {
        op.op = (uint8_t)l->pool_op;
        op.dst = slot + l->l_out;
        op.count_pad = (uint8_t)l->count_pad;
        bk_code_cp(k, &op);
        res = slot + l->l_out;
        ochan = (uint32_t)cn;
        oc0 = c0;
    }
    /* HWC -> NCHW */
    sh[0] = 1; sh[1] = (uint32_t)rn; sh[2] = (uint32_t)l->OW; sh[3] = ochan;
    bk_compact(sh, ss);
    ds[0] = 0; ds[1] = l->OW; ds[2] = 1; ds[3] = (int64_t)l->OH * l->OW;
    uint64_t dst = l->y + ((uint64_t)((int64_t)n * l->OC + oc0) * l->OH + (uint64_t)r0) * l->OW * es;
    in = bk_dma(dt, ISA_SPACE_DRAM, dst, ISA_SPACE_LMEM, res, sh, ds, ss);
    bk_code_st(k, &in);
    return 0;
}


/* The multicast prologue: DRAM [R][OC] -> resident [chunk][R][width], then
 * the f32 bias [OC]. The emitter sets the mask and the signal. */
static int conv_prologue(BkCtx *c, const BkGroup *g, BkCode *k, AtlErr *e)
{
    const BkLow *l = &g->lw;
    (void)e;
    uint32_t R = (uint32_t)(l->kh * l->kw * (l->C / l->groups)), w = (uint32_t)chunk_width(l);
    uint32_t full = (uint32_t)l->OC / w, rest = (uint32_t)l->OC % w;
    int es = c->es;
    uint32_t sh[4];
    int64_t ds[4], ss[4];
    AtlInsn in;
    if (full) {
        sh[0] = 1; sh[1] = full; sh[2] = R; sh[3] = w;
        ss[0] = 0; ss[1] = w; ss[2] = l->OC; ss[3] = 1;
        bk_compact(sh, ds);
        ds[1] = (int64_t)(weight_chunk_bytes(c, l) / (uint64_t)es);
        in = bk_dma(c->dt, ISA_SPACE_LMEM, l->l_wres, ISA_SPACE_DRAM, l->w, sh, ds, ss);
        bk_code_st(k, &in);
    }
    if (rest) {
        sh[0] = 1; sh[1] = 1; sh[2] = R; sh[3] = rest;
        ss[0] = 0; ss[1] = 0; ss[2] = l->OC; ss[3] = 1;
        bk_compact(sh, ds);
        in = bk_dma(c->dt, ISA_SPACE_LMEM, l->l_wres + (uint64_t)full * weight_chunk_bytes(c, l), ISA_SPACE_DRAM,
                    l->w + (uint64_t)full * w * es, sh, ds, ss);
        bk_code_st(k, &in);
    }
    /* f32 bias, one aligned block per chunk (vector operands are aligned) */
    uint64_t bstride = bias_chunk_bytes(c, l) / 4;
    if (l->b && full) {
        sh[0] = 1; sh[1] = full; sh[2] = 1; sh[3] = w;
        ss[0] = 0; ss[1] = w; ss[2] = 0; ss[3] = 1;
        ds[0] = 0; ds[1] = (int64_t)bstride; ds[2] = 0; ds[3] = 1;
        in = bk_dma(ISA_F32, ISA_SPACE_LMEM, l->l_bres, ISA_SPACE_DRAM, l->b, sh, ds, ss);
        bk_code_st(k, &in);
    }
    if (l->b && rest) {
        sh[0] = 1; sh[1] = 1; sh[2] = 1; sh[3] = rest;
        bk_compact(sh, ds);
        in = bk_dma(ISA_F32, ISA_SPACE_LMEM, l->l_bres + (uint64_t)full * bstride * 4, ISA_SPACE_DRAM,
                    l->b + (uint64_t)full * w * 4, sh, ds, ds);
        bk_code_st(k, &in);
    }
    return 0;
}

/* Output channels of one chunk (the last one may be narrower). */
static int chunk_width(const BkLow *l)
{
    return l->groups == 1 && l->kind == BK_K_CONV ? l->gchunk : l->gchunk * (l->OC / l->groups);
}

/* Bytes between the resident weight blocks of consecutive chunks. */
static uint64_t weight_chunk_bytes(const BkCtx *c, const BkLow *l)
{
    uint64_t b = (uint64_t)l->kh * l->kw * (l->C / l->groups) * (uint64_t)chunk_width(l) * c->es;
    return (b + c->align - 1) / c->align * c->align;
}

/* Bytes between the resident f32 bias blocks of consecutive chunks. */
static uint64_t bias_chunk_bytes(const BkCtx *c, const BkLow *l)
{
    uint64_t b = (uint64_t)chunk_width(l) * 4;
    return (b + c->align - 1) / c->align * c->align;
}

/* Mode 0: weights loaded per tile into the slot. Mode 1: the whole layer's
 * weights (chunk-major) and f32 bias resident below the slots, multicast
 * once per cluster. Sets the slot geometry; -1 if mode 1 leaves no room. */
static int set_mode(const BkCtx *c, BkGroup *g, int m)
{
    BkLow *l = &g->lw;
    uint64_t row = (uint64_t)c->chip->lmem_banks * c->chip->lmem_bank_width;
    g->mcast = m;
    g->prologue = NULL;
    if (!m) { g->slot_off = 0; g->slot_size = c->slot; return 0; }
    int units = l->groups == 1 ? l->OC : l->groups;
    uint64_t nch = (uint64_t)(units + l->gchunk - 1) / l->gchunk;
    uint64_t wbytes = nch * weight_chunk_bytes(c, l);
    l->l_wres = 0;
    l->l_bres = (wbytes + c->align - 1) / c->align * c->align;
    uint64_t total = l->l_bres + (l->b ? nch * bias_chunk_bytes(c, l) : 0);
    uint64_t off = (total + row - 1) / row * row;
    if (off >= (uint64_t)c->chip->lmem_bytes) return -1;
    uint64_t sz = ((uint64_t)c->chip->lmem_bytes - off) / 2 / row * row;
    if (sz == 0) return -1;
    g->slot_off = off;
    g->slot_size = sz;
    g->prologue = conv_prologue;
    return 0;
}

/* LMEM layout for the tile shape in l; 0 if it fits the slot. */
static int layout(const BkCtx *c, const BkGroup *g, BkLow *l)
{
    uint64_t used = 0;
    int cpg = l->C / l->groups, opg = l->OC / l->groups;
    int cn = l->gchunk * cpg, ocn = l->gchunk * opg;
    if (l->groups == 1 && l->kind == BK_K_CONV) { cn = l->C; ocn = l->gchunk; }
    uint64_t ih = (uint64_t)max_in_rows(l, l->rows);
    uint64_t outn = (uint64_t)l->rows * l->OW;
    l->l_in = bk_slot_alloc(c, &used, ih * l->W * cn * c->es);
    if (l->kind == BK_K_CONV) {
        l->l_w = g->mcast ? 0 : bk_slot_alloc(c, &used, (uint64_t)l->kh * l->kw * cpg * ocn * c->es);
        l->l_b = l->b && !g->mcast ? bk_slot_alloc(c, &used, (uint64_t)ocn * 4) : 0;
        l->l_acc = bk_slot_alloc(c, &used, outn * ocn * 4);
        l->l_tmp = !strcmp(l->act, "HardSwish") ? bk_slot_alloc(c, &used, outn * ocn * 4) : 0;
        l->l_out = c->dt != ISA_F32 ? bk_slot_alloc(c, &used, outn * ocn * c->es) : 0;
    } else {
        l->l_out = bk_slot_alloc(c, &used, outn * cn * c->es);
    }
    if (ih > 65535 || (uint64_t)l->W > 65535 || (uint64_t)cn > 65535) return -1;
    return used <= g->slot_size ? 0 : -1;
}

static int choose_tiles(BkCtx *c, BkGroup *g, AtlErr *e)
{
    BkLow *l = &g->lw;
    int best_gc = -1, best_r = -1;
    uint64_t best = UINT64_MAX;
    int units = l->groups == 1 && l->kind == BK_K_CONV ? l->OC : l->groups;
    int best_m = 0;
    int modes = l->kind == BK_K_CONV && c->chip->cores_per_cluster > 1 ? 2 : 1;
    for (int m = 0; m < modes; m++)
    for (int gc = units;; gc = (gc + 1) / 2) {
        for (int r = l->OH;; r = (r + 1) / 2) {
            l->gchunk = gc;
            l->rows = r;
            if (set_mode(c, g, m) == 0 && layout(c, g, l) == 0) {
                l->ngc = (units + gc - 1) / gc;
                l->nrc = (l->OH + r - 1) / r;
                if (bk_assign_tiles(c, g, l->ngc * l->N * l->nrc, e)) return -1;
                for (int t = 0; t < g->ntiles; t++) g->tile_wkey[t] = l->kind == BK_K_CONV ? t / (l->N * l->nrc) : -1;
                if (bk_cost_group(c, g, e)) return -1;
                if (g->est_cycles < best) { best = g->est_cycles; best_gc = gc; best_r = r; best_m = m; }
            }
            if (r == 1) break;
        }
        if (gc == 1) break;
    }
    if (best_gc < 0)
        return bk_fail(c, g->node, e, "even one output row of one channel group does not fit half of LMEM "
                       "(%d bytes): input width %d, %d channels", (int)g->slot_size, l->W, l->C / l->groups);
    l->gchunk = best_gc;
    l->rows = best_r;
    set_mode(c, g, best_m);
    layout(c, g, l);
    l->ngc = (units + best_gc - 1) / best_gc;
    l->nrc = (l->OH + best_r - 1) / best_r;
    if (bk_assign_tiles(c, g, l->ngc * l->N * l->nrc, e)) return -1;
    for (int t = 0; t < g->ntiles; t++) g->tile_wkey[t] = l->kind == BK_K_CONV ? t / (l->N * l->nrc) : -1;
    snprintf(g->split, sizeof g->split, "N%d C%d H%d%s", l->N, l->ngc, l->nrc, g->mcast ? " mc" : "");
    return bk_cost_group(c, g, e);
}

static int geometry(BkCtx *c, int node, BkLow *l, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]], *y = &gr->t[nd->out[0]];
    if (x->ndim != 4 || y->ndim != 4)
        return bk_fail(c, node, e, "only 2-D convolution/pooling (4-D NCHW tensors) is lowered; input has rank %d", x->ndim);
    l->N = (int)x->dims[0]; l->C = (int)x->dims[1]; l->H = (int)x->dims[2]; l->W = (int)x->dims[3];
    l->OC = (int)y->dims[1]; l->OH = (int)y->dims[2]; l->OW = (int)y->dims[3];
    const IrAttr *ks = ir_attr(nd, "kernel_shape");
    if (ks && ks->n == 2) { l->kh = (int)ks->ints[0]; l->kw = (int)ks->ints[1]; }
    else if (!strcmp(nd->op, "Conv")) {
        const IrTensor *w = &gr->t[nd->in[1]];
        l->kh = (int)w->dims[2]; l->kw = (int)w->dims[3];
    } else return bk_fail(c, node, e, "no kernel_shape");
    const IrAttr *st = ir_attr(nd, "strides"), *dl = ir_attr(nd, "dilations"), *pd = ir_attr(nd, "pads");
    l->sh = st && st->n == 2 ? (int)st->ints[0] : 1; l->sw = st && st->n == 2 ? (int)st->ints[1] : 1;
    l->dh = dl && dl->n == 2 ? (int)dl->ints[0] : 1; l->dw = dl && dl->n == 2 ? (int)dl->ints[1] : 1;
    l->pt = l->pl = l->pb = l->pr = 0;
    const char *ap = ir_attr_str(nd, "auto_pad", "NOTSET");
    if (pd && pd->n == 4) { l->pt = (int)pd->ints[0]; l->pl = (int)pd->ints[1]; l->pb = (int)pd->ints[2]; l->pr = (int)pd->ints[3]; }
    else if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
        int th = (l->OH - 1) * l->sh + l->dh * (l->kh - 1) + 1 - l->H, tw = (l->OW - 1) * l->sw + l->dw * (l->kw - 1) + 1 - l->W;
        if (th < 0) th = 0;
        if (tw < 0) tw = 0;
        int up = !strcmp(ap, "SAME_UPPER");
        l->pt = up ? th / 2 : th - th / 2; l->pb = th - l->pt;
        l->pl = up ? tw / 2 : tw - tw / 2; l->pr = tw - l->pl;
    }
    /* extra bottom/right padding that ceil_mode (pools) implies */
    int needh = (l->OH - 1) * l->sh + l->dh * (l->kh - 1) + 1 - l->H - l->pt;
    int needw = (l->OW - 1) * l->sw + l->dw * (l->kw - 1) + 1 - l->W - l->pl;
    if (needw > l->pr) l->pr = needw;
    (void)needh;
    if (l->sh > 15 || l->sw > 15 || l->dh > 15 || l->dw > 15 || l->kh > 255 || l->kw > 255 || l->pl > 63 || l->pr > 63)
        return bk_fail(c, node, e, "kernel %dx%d, stride %dx%d, dilation %dx%d or padding exceeds the instruction's fields",
                       l->kh, l->kw, l->sh, l->sw, l->dh, l->dw);
    if (l->N <= 0 || l->C <= 0 || l->OH <= 0 || l->OW <= 0) return bk_fail(c, node, e, "empty tensor");
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    return 0;
}

int bk_lower_conv(BkCtx *c, int node, BkGroup *g, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &g->lw;
    l->kind = BK_K_CONV;
    if (geometry(c, node, l, e)) return -1;
    l->groups = (int)ir_attr_int(nd, "group", 1);
    const IrTensor *w = &gr->t[nd->in[1]];
    if (!w->data) return bk_fail(c, node, e, "weights '%s' are not a constant", w->name);
    if (l->groups < 1 || l->C % l->groups || l->OC % l->groups)
        return bk_fail(c, node, e, "group=%d does not divide %d input / %d output channels", l->groups, l->C, l->OC);
    int cpg = l->C / l->groups;
    /* weights OIHW -> [kh][kw][cpg][OC] */
    size_t nw = (size_t)l->kh * l->kw * cpg * l->OC;
    uint8_t *wb = malloc(nw * (size_t)c->es);
    if (!wb) return bk_fail(c, node, e, "out of memory");
    for (int o = 0; o < l->OC; o++)
        for (int ci = 0; ci < cpg; ci++)
            for (int y = 0; y < l->kh; y++)
                for (int x = 0; x < l->kw; x++) {
                    int64_t src = (((int64_t)o * cpg + ci) * l->kh + y) * l->kw + x;
                    size_t dst = (((size_t)y * l->kw + x) * cpg + ci) * l->OC + o;
                    bk_store_elem(c->dt, wb, dst, ir_get_f(w, src));
                }
    int rc = bk_weight(c, wb, nw * c->es, &l->w, e);
    free(wb);
    if (rc) return -1;
    l->b = 0;
    if (nd->nin > 2 && nd->in[2] >= 0) {
        const IrTensor *b = &gr->t[nd->in[2]];
        if (!b->data) return bk_fail(c, node, e, "bias '%s' is not a constant", b->name);
        float *bb = malloc((size_t)l->OC * sizeof *bb);
        if (!bb) return bk_fail(c, node, e, "out of memory");
        for (int o = 0; o < l->OC; o++) bb[o] = (float)ir_get_f(b, o);
        rc = bk_weight(c, bb, (size_t)l->OC * 4, &l->b, e);
        free(bb);
        if (rc) return -1;
    }
    if (c->act_on[node]) {
        snprintf(l->act, sizeof l->act, "%s", nd->act);
        l->act_alpha = nd->act_alpha;
        l->act_beta = nd->act_beta;
    }
    g->gen = conv_gen;
    g->is_matrix = 1;
    AtlInsn probe;
    memset(&probe, 0, sizeof probe);
    probe.cin = (uint32_t)l->C; probe.ih = (uint32_t)l->H; probe.iw = (uint32_t)l->W; probe.cout = (uint32_t)l->OC;
    probe.kh = (uint8_t)l->kh; probe.kw = (uint8_t)l->kw; probe.sh = (uint8_t)l->sh; probe.sw = (uint8_t)l->sw;
    probe.dh = (uint8_t)l->dh; probe.dw = (uint8_t)l->dw; probe.pad_top = (uint8_t)l->pt; probe.pad_bottom = (uint8_t)l->pb;
    probe.pad_left = (uint8_t)l->pl; probe.pad_right = (uint8_t)l->pr; probe.groups = (uint16_t)l->groups;
    g->macs = tim_conv_macs(&probe) * (uint64_t)l->N;
    return choose_tiles(c, g, e);
}

int bk_lower_pool(BkCtx *c, int node, BkGroup *g, AtlErr *e)
{
    const IrNode *nd = &c->g->nodes[node];
    BkLow *l = &g->lw;
    l->kind = BK_K_POOL;
    if (geometry(c, node, l, e)) return -1;
    if (l->dh != 1 || l->dw != 1) return bk_fail(c, node, e, "dilated pooling is not lowered");
    l->groups = l->C;          /* channel chunks ride on the group machinery */
    l->OC = l->C;
    l->pool_op = !strcmp(nd->op, "MaxPool") ? ISA_OP_V_MAXPOOL : ISA_OP_V_AVGPOOL;
    l->count_pad = (int)ir_attr_int(nd, "count_include_pad", 0);
    if (l->pt >= l->kh || l->pl >= l->kw || l->pb >= l->kh || l->pr >= l->kw)
        return bk_fail(c, node, e, "padding must be smaller than the window");
    if (nd->nout > 1 && nd->out[1] >= 0) return bk_fail(c, node, e, "the Indices output of MaxPool is not lowered");
    g->gen = conv_gen;
    return choose_tiles(c, g, e);
}
