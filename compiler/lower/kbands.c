/* kbands.c - a K split across clusters for a channel-reducing 1x1
 * convolution with bands (docs/backend.md, "K split across clusters").
 *
 * Reads: a float Conv lowered by lower/conv.c (1x1, stride 1, no padding,
 *   group 1, no residual tail, run-time-constant weights) whose input is
 *   a banded tensor (its channels kept by the clusters that wrote them,
 *   alloc/place.c) on a chip of K clusters: of one image, or of several
 *   on a channel shard whose ranges are the K ranges (BkBand.shard).
 * Does: lowers the node again as two layers, run as two segments:
 *   phase 1, the convolution's own tiles (lower/conv.c, BkLow.kb_parts =
 *   K) with its input channels cut into K ranges (each maybe cut again
 *   into 2, 4 or 8, the conv's K split inside a core): cluster q (bk_band_
 *   distribute) multiplies range q of the input, the cells it keeps in its
 *   SRAM when the producer's channel bands match, by the matching rows of
 *   the weights for every output channel, and stores the f32 partial sum
 *   (no bias, no activation) into part q of a scratch [K][OC][OH][OW] at
 *   the end of the activation region (BkCtx.kb_base; [K][N][OC][OH][OW]
 *   with N images), but for the
 *   channels of its own band (the output channels phase 2 gives it),
 *   which it keeps in its SRAM above the bands (BkLow.kb_sram, where input
 *   staging would go; neither phase stages); phase 2 (this
 *   file's generator) loads a tile's box of the K parts (a block of output
 *   channels and rows, the whole width; its own cluster's part from its
 *   SRAM, its chunks being a band's on channel bands), adds them in part order on the
 *   vector unit, adds the bias, applies the fused activation (bk_matrix_
 *   epilogue: ReLU after the sum), casts to the storage dtype and stores
 *   into the output, whose tiles the search gives to the clusters like
 *   any convolution's (channel bands: the cluster's band stays in its
 *   SRAM). Each layer offers its candidate shapes; the group search
 *   prices them.
 * Guarantees: the output equals the convolution's up to the order of the
 *   f32 additions (each part sums its range in the matrix unit's order,
 *   then the parts are added in order); the partials are f32 whatever
 *   the storage dtype.
 * Why: a channel-reducing 1x1 convolution on channel bands gathers its
 *   whole input through DRAM (each cluster reads the (K-1)/K it does not
 *   hold, and the producer writes all of it); split by K, each cluster
 *   reads only its own input and the partials of its output band, a
 *   K-th of the input's channels' worth (issue 11). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/lower/lower.h"

static int imin(int a, int b) { return a < b ? a : b; }

/* Phase 2's LMEM: the K parts' boxes (stride kb_stride), the bias, a
 * HardSwish scratch, the cast result. */
static uint64_t part_stride(const BkCtx *c, const BkLow *l)
{
    return bk_align_up(c, (uint64_t)l->rows * l->OW * l->gchunk * 4);
}

static int plan_sum(const BkCtx *c, BkLayer *ly)
{
    BkLow *l = &ly->lw;
    uint64_t used = 0, box = (uint64_t)l->rows * l->OW * l->gchunk;
    l->l_in = bk_slot_alloc(c, &used, part_stride(c, l) * (uint64_t)l->kb_parts);
    l->l_b = l->b ? bk_slot_alloc(c, &used, (uint64_t)l->gchunk * 4) : 0;
    l->l_tmp = !strcmp(l->act, "HardSwish") || !strcmp(l->t_act, "HardSwish") ? bk_slot_alloc(c, &used, box * 4) : 0;
    l->l_out = c->dt != ISA_F32 ? bk_slot_alloc(c, &used, box * (uint64_t)c->es) : 0;
    l->l_res = l->t_x ? bk_slot_alloc(c, &used, box * (uint64_t)c->es) : 0;
    l->l_resf = l->t_x && c->dt != ISA_F32 ? bk_slot_alloc(c, &used, box * 4) : 0;
    return used <= ly->slot_size && l->rows * l->OW <= 65535 ? 0 : -1;
}

static void set_sum_shape(BkLow *l, int gc, int r)
{
    l->gchunk = gc; l->rows = r; l->cols = l->OW; l->kchunk = l->C; l->nb = 1;   /* a tile per image */
    l->ngc = (l->OC + gc - 1) / gc;
    l->nrc = (l->OH + r - 1) / r;
    l->nwc = l->nkc = 1;
}

static int sum_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    BkTilePos p = bk_tile_pos(l, t);
    int oc0 = p.gci * l->gchunk, ocn = imin(l->gchunk, l->OC - oc0);
    int r0 = p.rci * l->rows, rn = imin(l->rows, l->OH - r0);
    uint64_t plane = (uint64_t)l->N * l->OC * l->OH * l->OW * 4, stride = part_stride(c, l), acc = slot + l->l_in;
    BkImgBox box = {p.n, 1, oc0, ocn, r0, rn, 1, 0, l->OW, 1, 0};
    /* the tile's channels lie in one cluster's band (its output-channel
     * chunk's, bk_band_distribute): that cluster's part from its SRAM */
    int own = p.gci * l->kb_parts / l->ngc, lo, hi;
    bk_kbands_own_band(l, own, &lo, &hi);
    for (int q = 0; q < l->kb_parts; q++) {
        BkImgBox sb = box;
        sb.c0 = oc0 - lo;
        AtlInsn in = q == own && l->kb_sram
                         ? bk_nchw_boxes(ISA_F32, 1, bk_kbands_sram(l), hi - lo, l->OH, l->OW, &sb, acc + (uint64_t)q * stride)
                         : bk_nchw_boxes(ISA_F32, 1, l->kb_part + (uint64_t)q * plane, l->OC, l->OH, l->OW, &box,
                                         acc + (uint64_t)q * stride);
        bk_code_ld(k, &in, 0);
    }
    uint32_t osh[4] = {1, (uint32_t)rn, (uint32_t)l->OW, (uint32_t)ocn}, bsh[4] = {1, 1, 1, (uint32_t)ocn};
    int64_t os[4], bs[4] = {0, 0, 0, 1}, bd[4];
    bk_compact(osh, os);
    if (l->b) {
        bk_compact(bsh, bd);
        AtlInsn in = bk_dma(ISA_F32, ISA_SPACE_LMEM, slot + l->l_b, ISA_SPACE_DRAM, l->b + (uint64_t)oc0 * 4, bsh, bd, bd);
        bk_code_ld(k, &in, 0);
    }
    for (int q = 1; q < l->kb_parts; q++) {
        AtlInsn in = bk_vbin(ISA_OP_V_ADD, ISA_F32, acc, acc, acc + (uint64_t)q * stride, osh, os, os, os);
        bk_code_cp(k, &in);
    }
    if (l->b) {
        AtlInsn in = bk_vbin(ISA_OP_V_ADD, ISA_F32, acc, acc, slot + l->l_b, osh, os, os, bs);
        bk_code_cp(k, &in);
    }
    /* a residual tail: the same box of its tensor, in f32 for the add */
    uint64_t res, resid = 0;
    if (l->t_x) {
        AtlInsn in = bk_nchw_boxes(l->dt, 1, l->t_x, l->OC, l->OH, l->OW, &box, slot + l->l_res);
        bk_code_ld(k, &in, 0);
        resid = slot + l->l_res;
        if (l->dt != ISA_F32) {
            in = bk_vun(ISA_OP_V_CAST, l->dt, slot + l->l_resf, resid, osh, os, os, 0, 0);
            in.otype = ISA_F32;
            bk_code_cp(k, &in);
            resid = slot + l->l_resf;
        }
    }
    if (bk_matrix_epilogue(k, l, l->dt, acc, slot + l->l_tmp, slot + l->l_out, resid, osh, os, &res))
        return bk_fail(c, ly->node, e, "activation %s cannot be fused", l->act[0] ? l->act : l->t_act);
    AtlInsn st = bk_nchw_boxes(l->dt, 0, l->y, l->OC, l->OH, l->OW, &box, res);
    bk_code_st(k, &st);
    return 0;
}

typedef struct SumShape { int gc, r; } SumShape;

static int apply_sum(BkCtx *c, BkLayer *ly, const void *shape, AtlErr *e)
{
    const SumShape *s = shape;
    BkLow *l = &ly->lw;
    set_sum_shape(l, s->gc, s->r);
    if (plan_sum(c, ly)) return bk_fail(c, ly->node, e, "internal: a candidate tile shape does not fit");
    if (bk_set_tiles(ly, l->ngc * l->nrc * l->N, 1, e)) return -1;
    snprintf(ly->split, sizeof ly->split, "C%d H%d kbands sum", l->ngc, l->nrc);
    return 0;
}

int bk_kbands_ok(const BkCtx *c, const BkLayer *ly)
{
    const BkLow *l = &ly->lw;
    if (c->kbands_never || c->bands < 2 || !c->band_chans || c->split || ly->node < 0 || ly->chain) return 0;
    const IrNode *nd = &c->g->nodes[ly->node];
    if (strcmp(nd->op, "Conv") || l->kind != BK_K_CONV || l->groups != 1 || l->w_oihw || l->N < 1)
        return 0;
    if (l->C % c->bands || l->OC % c->bands) return 0;
    int r = bk_tensor_root(c, nd->in[0]);
    if (r < 0 || !c->pl[r].band) return 0;
    /* several images: on a channel shard whose ranges are the K ranges
     * (each cluster's range of every image in its SRAM), any window */
    if (l->N > 1) return c->band[r].shard == l->C / c->bands;
    return l->kh == 1 && l->kw == 1 && l->sh == 1 && l->sw == 1 && !l->pt && !l->pl && !l->pb && !l->pr && l->C > l->OC;
}

int bk_lower_kbands(BkCtx *c, const BkLayer *conv, BkLayer *p1, BkLayer *p2, uint64_t part, AtlErr *e)
{
    /* phase 1: the node lowered again, its own shapes replaced by the K-split ones */
    BkLayer keep = *p1;
    if (bk_lower_node(c, conv->node, p1, e)) return -1;
    free(p1->shapes.v);
    free(p1->shapes.tiles);
    memset(&p1->shapes, 0, sizeof p1->shapes);
    BkLow *l = &p1->lw;
    l->kb_parts = c->bands;
    l->kb_phase = 1;
    l->kb_part = part;
    /* each cluster's own band of its part in its SRAM, above the bands,
     * where a layer's input staging would go (neither phase stages) */
    uint64_t own = (uint64_t)l->N * (l->OC / c->bands) * l->OH * l->OW * 4;
    l->kb_sram = c->sram_stage + own <= (uint64_t)c->chip->sram_bytes ? c->sram_stage + 1 : 0;
    uint64_t bias = l->b, tx = l->t_x;
    char act[16], tact[16];
    memcpy(act, l->act, sizeof act);
    memcpy(tact, l->t_act, sizeof tact);
    l->b = 0;
    l->act[0] = 0;
    l->t_x = 0;   /* the residual tail: phase 2's, after the sum */
    l->t_act[0] = 0;
    int rc = bk_conv_kbands_shapes(c, p1, e);
    if (rc) return rc;
    /* phase 2: the sum, its tiles by output channels and rows */
    memset(p2, 0, sizeof *p2);
    p2->node = conv->node;
    p2->tensor = -1;
    p2->slot_size = keep.slot_size;
    p2->band_cores = keep.band_cores;
    p2->band_clusters = keep.band_clusters;
    p2->band_chans = keep.band_chans;
    p2->band_rows = keep.band_rows;
    BkLow *s = &p2->lw;
    s->kind = BK_K_CONV;
    s->dt = l->dt;
    s->es = l->es;
    s->N = l->N;
    s->C = s->OC = l->OC;
    s->H = s->OH = l->OH;
    s->W = s->OW = l->OW;
    s->kh = s->kw = s->sh = s->sw = s->dh = s->dw = 1;
    s->groups = 1;
    s->x = part;
    s->y = l->y;
    s->b = bias;
    memcpy(s->act, act, sizeof act);
    s->act_alpha = l->act_alpha;
    s->act_beta = l->act_beta;
    s->t_x = tx;
    memcpy(s->t_act, tact, sizeof tact);
    s->t_alpha = l->t_alpha;
    s->t_beta = l->t_beta;
    s->kb_parts = c->bands;
    s->kb_phase = 2;
    s->kb_part = part;
    s->kb_sram = l->kb_sram;
    p2->gen = sum_gen;
    /* output chunks of a cluster's band down to an eighth of it, rows down to a quarter */
    for (int gc = l->OC / c->bands; gc >= 1 && gc >= l->OC / (8 * c->bands); gc /= 2)
        for (int r = l->OH; r >= (l->OH + 3) / 4 && (l->OC / c->bands) % gc == 0; r = (r + 1) / 2) {
            SumShape sh = {gc, r};
            set_sum_shape(s, gc, r);
            if (plan_sum(c, p2) == 0 && bk_push_shape(p2, &sh, sizeof sh, (int64_t)s->ngc * s->nrc * s->N, e)) return -1;
            if (r == 1) break;
        }
    if (!p2->shapes.n) return 1;
    p2->shapes.min_priced = 2;
    p2->shapes.tile_budget = 1 << 16;
    p2->shapes.apply = apply_sum;
    return 0;
}
