/* qmatrix.c - int8 matrix layers on the matrix unit's i8 `conv`: Int8Conv
 * and Int8MatMul (ops/int8.c, the QDQ units of a quantised model), and
 * QLinearConv / ConvInteger with constant weights whose zero point is 0
 * (the others: lower/qconv.c).
 *
 * Reads: x int8 / uint8 (chip i8 / i16) NCHW, 1-D as 2-D with H = 1, any
 *   groups (depthwise included); a matmul's A [..., M, K] as the image of
 *   M rows, one column and K channels, so the same tiles run both; weights
 *   a constant, stored once as the i8 image [kh][kw][C/groups][OC] (uint8
 *   weights minus 128, exact since their zero point is 128).
 * Numerics: the matrix unit sums x' w exactly in i32 (x' = x, or x - 128
 *   for uint8 by v.affine in i16 and v.cast, exact), the `conv` pads with
 *   x's shifted zero point z', so sum (x' - z') w = sum x' w - z' sum w
 *   and the constant part z' sum w[c] is folded into the per-channel bias
 *   at compile time: bias'[c] = bias[c] - z' sum w[c] (exact int32). The
 *   epilogue adds bias' (i32 v.add) and requantises:
 *   - Int8Conv / Int8MatMul: v.requant with `even` (num_requant_round,
 *     ties to even, the operator's definition), per channel (mult, shift),
 *     zero point and clamp (the fused activation); a uint8 output is
 *     requantised 128 lower into i8, then v.cast to i16 and +128;
 *   - QLinearConv: v.cast f32, times the f32 multiplier, QuantizeLinear's
 *     tail (lower/qcommon.c), as the reference does;
 *   - ConvInteger: the i32 sums are the output.
 *   Every i32 term is bounded at compile time (K x 128 x 128 twice plus
 *   the bias below 2^31), else the node is refused by name.
 * Tiles: (channel chunk, image, output rows, output columns, k chunk), k
 *   innermost, as lower/conv.c: a tile loads its input rows and columns
 *   with the halo (clipped; the rest is the instruction's padding) NCHW ->
 *   HWC, its weights [kh][kw][k chunk][oc chunk] and, on the last k chunk,
 *   the chunk's bias and requantisation parameters (weight loads, skipped
 *   while the slot holds them). groups == 1 layers chunk output channels
 *   and may split K (input channels): the k chunks of an output tile run
 *   in order on one core, accumulating into one of two resident i32
 *   buffers (chosen by the output tile's parity: the two-buffer argument
 *   of lower/conv.c holds unchanged), the last one runs the epilogue and
 *   has the stores. Grouped layers chunk groups. Candidate shapes: every
 *   (channel chunk, rows) halving with K and width whole, then the first
 *   SPLIT_PAIRS (k chunks, column chunks) pairs that fit, each with its
 *   two largest row counts per channel chunk; the group search prices
 *   them (fewest tiles first, at least MIN_COSTED, then within
 *   TILE_BUDGET tiles). No weight multicast. groups == 1 convs take tiles
 *   of several images (pointwise ones as one tall image, windowed ones of
 *   an int8 x stacked with rows of its zero point between the images) and strided
 *   1x1 ones load only the rows and columns they read, as lower/conv.c
 *   says (BkLow.nb, bk_image_stack, BkLow.compact; whole-image candidates
 *   of N, N/2, ... images with the fewest k chunks that fit). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/lower/quant.h"
#include "isa/timing.h"

enum { SPLIT_PAIRS = 3, MIN_COSTED = 2, TILE_BUDGET = 1 << 16, MAX_TILES = 1 << 24, WS_MIN = 4096 };
/* slot registers besides l_in / l_w / l_b / l_acc / l_out */
enum { R_X8, R_RQ, R_F, R_WIDE, R_NREGS };

static int imin(int a, int b) { return a < b ? a : b; }


/* The channel range of a tile: input c0..c0+cn, output oc0..oc0+ocn, groups gn. */
typedef struct Chans { int c0, cn, oc0, ocn, gn; } Chans;

static Chans tile_chans(const BkLow *l, const BkTilePos *p)
{
    Chans h;
    int cpg = l->C / l->groups, opg = l->OC / l->groups;
    if (l->groups == 1) {
        h.oc0 = p->gci * l->gchunk; h.ocn = imin(l->gchunk, l->OC - h.oc0);
        h.c0 = p->kci * l->kchunk; h.cn = imin(l->kchunk, l->C - h.c0);
        h.gn = 1;
    } else {
        int g0 = p->gci * l->gchunk;
        h.gn = imin(l->gchunk, l->groups - g0);
        h.c0 = g0 * cpg; h.cn = h.gn * cpg;
        h.oc0 = g0 * opg; h.ocn = h.gn * opg;
    }
    return h;
}

static void load_vec(BkCode *k, int dt, uint64_t dst, uint64_t src, int n)
{
    uint32_t sh[4] = {1, 1, 1, (uint32_t)n};
    int64_t cs[4];
    bk_compact(sh, cs);
    AtlInsn in = bk_dma(dt, ISA_SPACE_LMEM, dst, ISA_SPACE_DRAM, src, sh, cs, cs);
    bk_code_ld(k, &in, 1);
}

/* The epilogue of an output tile: bias, requantisation; returns the LMEM
 * of the result in the output's storage dtype. */
static uint64_t epilogue(const BkLow *l, uint64_t acc, uint64_t slot, const Chans *h, int rn, int wn, BkCode *k)
{
    uint32_t osh[4] = {1, (uint32_t)rn, (uint32_t)wn, (uint32_t)h->ocn};
    int64_t ocs[4], chan[4] = {0, 0, 0, 1};
    bk_compact(osh, ocs);
    AtlInsn in;
    if (l->b) {
        in = bk_vbin(ISA_OP_V_ADD, ISA_I32, acc, acc, slot + l->l_b, osh, ocs, ocs, chan);
        bk_code_cp(k, &in);
    }
    if (l->q_mode == BK_RQ_NONE) return acc;
    if (l->q_mode == BK_RQ_FLOAT) {
        bk_q_requant(k, l, acc, slot + l->l_reg[R_F], slot + l->l_reg[R_RQ], chan, slot + l->l_out, osh, ocs);
        return slot + l->l_out;
    }
    int wide = l->dt != ISA_I8, shift = wide ? 128 : 0;   /* uint8 (chip i16): 128 lower, then widened */
    bk_q_requant_int(k, l, acc, slot + l->l_reg[R_RQ], slot + l->l_out, osh, shift);
    if (!wide) return slot + l->l_out;
    in = bk_q_cast(ISA_I8, l->dt, slot + l->l_reg[R_WIDE], slot + l->l_out, osh, ocs, ocs);
    bk_code_cp(k, &in);
    in = bk_vun(ISA_OP_V_AFFINE, l->dt, slot + l->l_reg[R_WIDE], slot + l->l_reg[R_WIDE], osh, ocs, ocs, 1.0f, 128.0f);
    bk_code_cp(k, &in);
    return slot + l->l_reg[R_WIDE];
}

/* Weights staged in SRAM (BkLayer.wsram): the SRAM address of a tile's
 * k chunk in its output-channel chunk's slot ([kh*kw][C][ocn] a chunk). */
static uint64_t wsram_block(const BkLayer *ly, const Chans *h)
{
    const BkLow *l = &ly->lw;
    return ly->wsram_base + (uint64_t)(h->oc0 / l->gchunk % ly->wsram_slots) * ly->wsram_chunk + (uint64_t)h->c0 * h->ocn;
}

/* BkLayer.stage: tile's weight block, DRAM [kh][kw][C][OC] -> its slot in
 * the cluster's SRAM (BK_STAGE_COPY), then (BK_STAGE_FLAG) a 64-byte copy
 * of it into the resident l_flag, multicast by the emitter, whose signal
 * tells the chunk's other cores that it landed (one DMA queue). */
static int qm_stage_weights(BkCtx *c, const BkLayer *ly, int tile, int mode, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    (void)c;
    (void)e;
    BkTilePos p = bk_tile_pos(l, tile);
    Chans h = tile_chans(l, &p);
    uint64_t dst = wsram_block(ly, &h);
    uint32_t sh[4] = {1, (uint32_t)(l->kh * l->kw), (uint32_t)h.cn, (uint32_t)h.ocn};
    int64_t ss[4] = {0, (int64_t)l->C * l->OC, l->OC, 1}, ds[4] = {0, (int64_t)l->C * h.ocn, h.ocn, 1};
    AtlInsn in = bk_dma(ISA_I8, ISA_SPACE_SRAM, dst, ISA_SPACE_DRAM, l->w + (uint64_t)h.c0 * l->OC + (uint64_t)h.oc0, sh, ds, ss);
    if (mode & BK_STAGE_COPY) bk_code_st(k, &in);
    if (mode & BK_STAGE_FLAG) {
        uint32_t fs[4] = {1, 1, 1, 64};
        int64_t fst[4];
        bk_compact(fs, fst);
        in = bk_dma(ISA_I8, ISA_SPACE_LMEM, ly->l_flag, ISA_SPACE_SRAM, dst, fs, fst, fst);
        bk_code_st(k, &in);
    }
    return 0;
}

static int qmatrix_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    BkTilePos p = bk_tile_pos(l, t);
    Chans h = tile_chans(l, &p);
    int r0 = p.rci * l->rows, rn = imin(l->rows, l->OH - r0);
    int w0 = p.wci * l->cols, wn = imin(l->cols, l->OW - w0);
    BkSpan ys = bk_window_span(r0, rn, l->sh, l->pt, l->dh, l->kh, l->H);
    BkSpan xs = bk_window_span(w0, wn, l->sw, l->pl, l->dw, l->kw, l->W);
    int rs = 1, ws = 1;
    if (l->compact) {
        /* 1x1, no padding: output (r, w) reads input (r sh, w sw) only */
        ys.n = rn; rs = l->sh;
        xs.n = wn; ws = l->sw;
    }
    if (ys.n <= 0 || xs.n <= 0 || ys.pa > 63 || ys.pb > 63 || xs.pa > 63 || xs.pb > 63)
        return bk_fail(c, ly->node, e, "output rows %d..%d, columns %d..%d read no input (padding too large)", r0,
                       r0 + rn - 1, w0, w0 + wn - 1);
    int last_k = p.kci == l->nkc - 1;
    BkStack sk = bk_image_stack(l);
    int stacked = l->nb > 1 && (sk.ib != ys.n || sk.top || sk.pb), orows = l->nb > 1 ? sk.ob : rn;
    uint32_t sh[4];
    int64_t ds[4], ss[4];
    /* input block -> HWC [rows][cols][cn] (p.nn images: nn x rows rows) */
    AtlInsn in;
    if (l->q_mm) {   /* A as [rows][K] */
        sh[0] = 1; sh[1] = 1; sh[2] = (uint32_t)ys.n; sh[3] = (uint32_t)h.cn;
        ss[0] = 0; ss[1] = 0; ss[2] = l->C; ss[3] = 1;
        ds[0] = 0; ds[1] = 0; ds[2] = h.cn; ds[3] = 1;
        in = bk_dma(l->xdt, ISA_SPACE_LMEM, slot + l->l_in, ISA_SPACE_DRAM,
                    l->x + ((uint64_t)ys.a * l->C + (uint64_t)h.c0) * l->xes, sh, ds, ss);
    } else {
        /* windowed convs: image i's rows at row i ib + top (bk_image_stack) */
        int64_t top = stacked ? (int64_t)sk.top * xs.n * h.cn * l->xes : 0;
        BkImgBox box = {p.n, p.nn, h.c0, h.cn, ys.a, ys.n, rs, xs.a, xs.n, ws, stacked ? (int64_t)sk.ib * xs.n * h.cn : 0};
        in = bk_nchw_boxes(l->xdt, 1, l->x, l->C, l->H, l->W, &box, slot + l->l_in + (uint64_t)top);
    }
    if (l->vdw) bk_dw_input(c, l, k, &in, slot + l->l_dwx, ys, xs, h.cn);   /* padded with x's zero point */
    else bk_code_ld(k, &in, 0);
    /* the rows around them hold x's zero point (stacking needs an int8 x) */
    if (stacked) bk_stack_zeros(k, l->xdt, l->q_xz, slot + l->l_in, p.nn, &sk, ys.n, xs.n, h.cn);
    uint32_t bsh[4] = {1, (uint32_t)(p.nn * (l->nb > 1 ? sk.ib : ys.n)), (uint32_t)xs.n, (uint32_t)h.cn};
    int64_t bcs[4];
    bk_compact(bsh, bcs);
    uint64_t x8 = l->vdw ? 0 : bk_q_to_i8(k, l->xdt, slot + l->l_in, slot + l->l_reg[R_X8], bsh, bcs, bcs);
    /* weights [kh][kw][cpg][OC] -> [kh][kw][cn or cpg][ocn] */
    int cw = l->groups == 1 ? h.cn : l->C / l->groups;
    sh[0] = 1; sh[1] = (uint32_t)(l->kh * l->kw); sh[2] = (uint32_t)cw; sh[3] = (uint32_t)h.ocn;
    ss[0] = 0; ss[1] = (int64_t)(l->C / l->groups) * l->OC; ss[2] = l->OC; ss[3] = 1;
    bk_compact(sh, ds);
    uint64_t wsrc = l->w + (uint64_t)(l->groups == 1 ? h.c0 : 0) * l->OC + (uint64_t)h.oc0;
    in = bk_dma(ISA_I8, ISA_SPACE_LMEM, slot + (l->vdw ? l->l_dww : l->l_w), ISA_SPACE_DRAM, wsrc, sh, ds, ss);
    if (ly->wsram) {
        /* staged in the cluster's SRAM as [kh*kw][C][ocn]: this k chunk's [kh*kw][cn][ocn] */
        sh[0] = 1; sh[1] = (uint32_t)(l->kh * l->kw); sh[2] = (uint32_t)h.cn; sh[3] = (uint32_t)h.ocn;
        ss[0] = 0; ss[1] = (int64_t)l->C * h.ocn; ss[2] = h.ocn; ss[3] = 1;
        bk_compact(sh, ds);
        in = bk_dma(ISA_I8, ISA_SPACE_LMEM, slot + l->l_w, ISA_SPACE_SRAM, wsram_block(ly, &h), sh, ds, ss);
    }
    bk_code_ld(k, &in, 1);
    if (last_k) {
        if (l->b) load_vec(k, ISA_I32, slot + l->l_b, l->b + (uint64_t)h.oc0 * 4, h.ocn);
        if (l->q_mode == BK_RQ_INT) load_vec(k, ISA_I32, slot + l->l_reg[R_RQ], l->q_mults + (uint64_t)h.oc0 * 8, 2 * h.ocn);
        if (l->q_mode == BK_RQ_FLOAT) load_vec(k, ISA_F32, slot + l->l_reg[R_RQ], l->q_mults + (uint64_t)h.oc0 * 4, h.ocn);
    }
    uint64_t acc = l->nkc > 1 ? l->l_accres + (uint64_t)(p.out & 1) * l->acc_bytes : slot + l->l_acc;
    AtlInsn op;
    memset(&op, 0, sizeof op);
    op.op = ISA_OP_CONV;
    op.dtype = ISA_I8;
    op.dst = acc;
    op.src = x8;
    op.src2 = slot + l->l_w;
    op.cin = (uint32_t)h.cn; op.ih = bsh[1]; op.iw = (uint32_t)xs.n; op.cout = (uint32_t)h.ocn;
    op.kh = (uint8_t)l->kh; op.kw = (uint8_t)l->kw;
    op.sh = (uint8_t)(l->compact ? 1 : l->sh); op.sw = (uint8_t)(l->compact ? 1 : l->sw);
    op.dh = (uint8_t)l->dh; op.dw = (uint8_t)l->dw;
    op.pad_top = (uint8_t)(stacked ? 0 : ys.pa); op.pad_bottom = (uint8_t)(stacked ? sk.pb : ys.pb);
    op.pad_left = (uint8_t)xs.pa; op.pad_right = (uint8_t)xs.pb;
    op.groups = (uint16_t)h.gn;
    op.ival = l->q_xz;
    op.acc = (uint8_t)(p.kci > 0);
    if (l->vdw) bk_dw_taps(c, l, k, slot, acc, ys, xs, rn, wn, h.cn);   /* i32 v.mul / v.add, lower/dwvec.c */
    else bk_code_cp(k, &op);
    if (!last_k) return 0;
    uint64_t res = epilogue(l, acc, slot, &h, p.nn * orows, wn, k);   /* (stacked: the garbage rows too) */
    /* HWC -> NCHW (a matmul's Y [rows][N]) */
    if (l->q_mm) {
        sh[0] = 1; sh[1] = (uint32_t)rn; sh[2] = (uint32_t)wn; sh[3] = (uint32_t)h.ocn;
        bk_compact(sh, ss);
        ds[0] = 0; ds[1] = (int64_t)l->OC; ds[2] = 0; ds[3] = 1;
        in = bk_dma(l->dt, ISA_SPACE_DRAM, l->y + ((uint64_t)r0 * l->OC + (uint64_t)h.oc0) * l->es, ISA_SPACE_LMEM, res,
                    sh, ds, ss);
    } else {
        BkImgBox ob = {p.n, p.nn, h.oc0, h.ocn, r0, rn, 1, w0, wn, 1, l->nb > 1 ? (int64_t)orows * wn * h.ocn : 0};
        in = bk_nchw_boxes(l->dt, 0, l->y, l->OC, l->OH, l->OW, &ob, res);
    }
    bk_code_st(k, &in);
    return 0;
}

/* Channel units a chunk counts: output channels (groups == 1) or groups. */
static int units(const BkLow *l) { return l->groups == 1 ? l->OC : l->groups; }

static void set_shape(BkLow *l, int gc, int r, int w, int kc, int nb)
{
    l->gchunk = gc; l->rows = r; l->cols = w; l->kchunk = l->groups == 1 ? kc : l->C; l->nb = nb > 1 ? nb : 1;
    l->ngc = (units(l) + gc - 1) / gc;
    l->nrc = (l->OH + r - 1) / r;
    l->nwc = (l->OW + w - 1) / w;
    l->nkc = l->groups == 1 ? (l->C + kc - 1) / kc : 1;
}

/* The slot (and resident) layout of the shape in l, its weights staged
 * in SRAM when ws (as lower/conv.c: where an input's staging would go, as
 * many chunks' slots as fit, at most all; the flag's word resident); 0 if
 * it fits. */
static int plan(const BkCtx *c, BkLayer *ly, int ws)
{
    BkLow *l = &ly->lw;
    int cpg = l->C / l->groups;
    int cn = l->groups == 1 ? l->kchunk : l->gchunk * cpg;
    int ocn = l->groups == 1 ? l->gchunk : l->gchunk * (l->OC / l->groups);
    BkStack sk = bk_image_stack(l);
    uint64_t nb = l->nb > 1 ? (uint64_t)l->nb : 1, outn = (uint64_t)(nb > 1 ? sk.ob : l->rows) * l->cols * nb, res = 0;
    ly->mcast = 0;
    ly->prologue = NULL;
    ly->wsram = ws;
    ly->stage = ws ? qm_stage_weights : NULL;
    ly->cores_ok = ws ? bk_wsram_cores_ok : NULL;
    l->acc_bytes = 0;
    if (l->nkc > 1) {
        l->acc_bytes = bk_align_up(c, outn * ocn * 4);
        l->l_accres = 0;
        res = 2 * l->acc_bytes;
    }
    if (ws) {
        ly->wsram_floor = ly->wsram_base = c->sram_stage;
        ly->wsram_chunk = ((uint64_t)l->kh * l->kw * l->C * (uint64_t)l->gchunk + 63) / 64 * 64;
        uint64_t room = c->sram_stage < (uint64_t)c->chip->sram_bytes ? (uint64_t)c->chip->sram_bytes - c->sram_stage : 0;
        uint64_t slots = room / ly->wsram_chunk;
        if (slots < 1) return -1;
        ly->wsram_slots = slots < (uint64_t)l->ngc ? (int)slots : l->ngc;
        ly->l_flag = ly->l_iflag = bk_align_up(c, res);
        res = ly->l_flag + 64;
    }
    if (bk_reserve_resident(c, ly, res)) return -1;
    uint64_t ih = l->compact ? (uint64_t)l->rows : nb > 1 ? (uint64_t)sk.ib : (uint64_t)bk_window_extent(l->rows, l->sh, l->dh, l->kh, l->H);
    uint64_t iw = l->compact ? (uint64_t)l->cols : (uint64_t)bk_window_extent(l->cols, l->sw, l->dw, l->kw, l->W);
    uint64_t used = 0, blk = nb * ih * iw * (uint64_t)cn;
    if (l->vdw && !bk_dw_vector_ok(c, l)) return -1;
    l->l_dwx = l->l_dww = l->l_tmp = 0;
    if (l->vdw) {
        /* the vector depthwise (lower/dwvec.c): the padded i8 block and the
         * i8 weights as loaded, both cast to i32 for the taps, the products */
        l->l_in = bk_slot_alloc(c, &used, bk_dw_in_bytes(c, l));
        l->l_dwx = bk_slot_alloc(c, &used, bk_dw_in_bytes(c, l) / 4);
        l->l_dww = bk_slot_alloc(c, &used, (uint64_t)l->kh * l->kw * ocn);
        l->l_w = bk_slot_alloc(c, &used, bk_dw_w_bytes(c, l));
        l->l_tmp = bk_slot_alloc(c, &used, outn * ocn * 4);
        l->l_reg[R_X8] = 0;
    } else {
        l->l_in = bk_slot_alloc(c, &used, blk * (uint64_t)l->xes);
        l->l_reg[R_X8] = l->xdt != ISA_I8 ? bk_slot_alloc(c, &used, blk) : 0;
        l->l_w = bk_slot_alloc(c, &used, (uint64_t)l->kh * l->kw * (l->groups == 1 ? cn : cpg) * ocn);
    }
    l->l_b = l->b ? bk_slot_alloc(c, &used, (uint64_t)ocn * 4) : 0;
    l->l_reg[R_RQ] = l->q_mode == BK_RQ_INT ? bk_slot_alloc(c, &used, (uint64_t)ocn * 8)
                   : l->q_mode == BK_RQ_FLOAT ? bk_slot_alloc(c, &used, (uint64_t)ocn * 4) : 0;
    l->l_acc = l->nkc == 1 ? bk_slot_alloc(c, &used, outn * ocn * 4) : 0;
    l->l_reg[R_F] = l->q_mode == BK_RQ_FLOAT ? bk_slot_alloc(c, &used, outn * ocn * 4) : 0;
    l->l_out = l->q_mode != BK_RQ_NONE ? bk_slot_alloc(c, &used, outn * ocn * (l->q_mode == BK_RQ_INT ? 1 : (uint64_t)l->es)) : 0;
    l->l_reg[R_WIDE] = l->q_mode == BK_RQ_INT && l->dt != ISA_I8 ? bk_slot_alloc(c, &used, outn * ocn * (uint64_t)l->es) : 0;
    if (nb * ih > 65535 || iw > 65535 || (uint64_t)cn > 65535 || (uint64_t)ocn > 65535) return -1;
    /* the DMAs step images by C H W elements in an int32 of bytes */
    if (nb > 1 && 4 * (uint64_t)(l->C > l->OC ? l->C : l->OC) * l->H * l->W > INT32_MAX) return -1;
    return used <= ly->slot_size ? 0 : -1;
}


/* group chunk, rows, columns, k chunk, images a tile (0: one), a
 * depthwise conv on the vector unit (v, BkLow.vdw), the weights staged in
 * the cluster's SRAM (ws, BkLayer.wsram) */
typedef struct Shape { int gc, r, w, kc, nb, v, ws; } Shape;

static int fits(const BkCtx *c, BkLayer *ly, Shape s)
{
    set_shape(&ly->lw, s.gc, s.r, s.w, s.kc, s.nb);
    ly->lw.vdw = s.v;
    return plan(c, ly, s.ws) == 0 && bk_window_spans_ok(&ly->lw);
}

/* 1 when shape s of a groups == 1 Int8Conv may stage its weight chunks in
 * its cluster's SRAM, as lower/conv.c offers: a chunk has several tiles
 * and the chunks are fewer than the layer's cores (so some chunk's tiles
 * run on several cores of a cluster, each reading it), grouping on and
 * SRAM free for the layer (not --sram-weights never, not in a split or
 * SRAM-copies plan). */
static int may_stage_weights(const BkCtx *c, BkLayer *ly, Shape s)
{
    BkLow *l = &ly->lw;
    if (!c->grouping || c->wsram_never || s.v || l->groups != 1 || l->q_mm || c->chip->cores_per_cluster < 2) return 0;
    set_shape(l, s.gc, s.r, s.w, s.kc, s.nb);
    /* chunks of at least WS_MIN bytes: a smaller one saves little, and
     * the estimate of one staged on row bands and prefetched ran 4% under
     * the simulation (mobilenetv2_035 int8, features.2's 1x1, 1.5 KB) */
    return (uint64_t)l->kh * l->kw * l->C * (uint64_t)l->gchunk >= WS_MIN && l->ngc < c->ncores &&
           (int64_t)bk_image_chunks(l) * l->nrc * l->nwc * l->nkc > 1;
}

static int add_one(const BkCtx *c, BkLayer *ly, Shape s, AtlErr *e)
{
    if (!fits(c, ly, s)) return 0;
    const BkLow *l = &ly->lw;
    int64_t tiles = (int64_t)l->ngc * bk_image_chunks(l) * l->nrc * l->nwc * l->nkc;
    if (tiles > MAX_TILES) return 0;
    return bk_push_shape(ly, &s, sizeof s, tiles, e) ? -1 : 1;
}

/* Offers s; a depthwise conv's s also on the vector unit first (of equal
 * tile counts, priced before the matrix unit's), where bk_dw_vector_ok
 * allows (lower/dwvec.c): the matrix unit runs it one channel a fold. */
static int add_shape(const BkCtx *c, BkLayer *ly, Shape s, AtlErr *e)
{
    if (!s.v && ly->lw.groups > 1 && ly->lw.groups == ly->lw.C && ly->lw.groups == ly->lw.OC) {
        Shape sv = s;
        sv.v = 1;
        if (add_one(c, ly, sv, e) < 0) return -1;
    }
    /* its weights staged in SRAM too (--sram-weights always: only so) */
    int ws = may_stage_weights(c, ly, s), rc = ws && c->wsram_always ? 0 : add_one(c, ly, s, e);
    if (rc < 0 || !ws) return rc;
    s.ws = 1;
    int rw = add_one(c, ly, s, e);
    return rw < 0 ? -1 : rc || rw;
}

static int apply_shape(BkCtx *c, BkLayer *ly, const void *shape, AtlErr *e)
{
    BkLow *l = &ly->lw;
    if (!fits(c, ly, *(const Shape *)shape)) return bk_fail(c, ly->node, e, "internal: a candidate tile shape does not fit");
    int per_chunk = bk_image_chunks(l) * l->nrc * l->nwc * l->nkc;
    if (bk_set_tiles(ly, l->ngc * per_chunk, l->nkc, e)) return -1;
    for (int t = 0; t < ly->ntiles; t++) ly->tile_wkey[t] = t / per_chunk * l->nkc + t % l->nkc;
    int n = bk_window_split(l, ly->split, sizeof ly->split);
    if (l->vdw && n >= 0) n += snprintf(ly->split + n, sizeof ly->split - (size_t)n, " vec");
    if (ly->wsram && n >= 0 && (size_t)n < sizeof ly->split) snprintf(ly->split + n, sizeof ly->split - (size_t)n, " wsram");
    return 0;
}



static int choose_tiles(BkCtx *c, BkLayer *ly, AtlErr *e)
{
    BkLow *l = &ly->lw;
    int u = units(l);
    for (int gc = u;; gc = (gc + 1) / 2) {
        for (int r = l->OH;; r = (r + 1) / 2) {
            Shape s = {gc, r, l->OW, l->C, 0, 0, 0};
            if (add_shape(c, ly, s, e) < 0) return -1;
            if (r == 1) break;
        }
        if (gc == 1) break;
    }
    int ks[64], ws[64], nk = l->groups == 1 ? bk_chunk_sizes(l->C, ks, 64) : 1, nw = bk_chunk_sizes(l->OW, ws, 64);
    if (l->groups != 1) ks[0] = l->C;
    BkSplitPair pairs[64 * 64];
    int np = 0;
    for (int i = 0; i < nk; i++)
        for (int j = 0; j < nw; j++) {
            if (!i && !j) continue;
            int kn = (l->C + ks[i] - 1) / ks[i], wn = (l->OW + ws[j] - 1) / ws[j];
            pairs[np++] = (BkSplitPair){ks[i], ws[j], (l->groups == 1 ? kn : 1) * wn, l->groups == 1 ? kn : 1};
        }
    qsort(pairs, (size_t)np, sizeof *pairs, bk_split_pair_cmp);
    for (int i = 0, found = 0; i < np && found < SPLIT_PAIRS; i++) {
        Shape smallest = {1, 1, pairs[i].w, pairs[i].kc, 0, 0, 0};
        if (!fits(c, ly, smallest)) continue;
        found++;
        for (int gc = u;; gc = (gc + 1) / 2) {
            int taken = 0;
            for (int r = l->OH; taken < 2; r = (r + 1) / 2) {
                Shape s = {gc, r, pairs[i].w, pairs[i].kc, 0, 0, 0};
                int rc = add_shape(c, ly, s, e);
                if (rc < 0) return -1;
                taken += rc;
                if (r == 1) break;
            }
            if (gc == 1) break;
        }
    }
    /* several whole images a tile (convs; windowed ones stacked), each with the
     * fewest k chunks that fit (as lower/conv.c) */
    /* (windowed: only with an int8 x, the case tested; a uint8 x, loaded
     * as i16, would need its fills 128 higher) */
    int stack = !l->q_mm && l->xdt == ISA_I8;
    int nbs[BK_IMAGE_COUNTS], nn = bk_image_counts(c, l, stack, nbs);
    for (int gc = u; nn; gc = (gc + 1) / 2) {
        for (int j = 0; j < nn; j++)
            for (int i = 0; i < nk; i++) {
                Shape s = {gc, l->OH, l->OW, ks[i], nbs[j], 0, 0};
                int rc = add_shape(c, ly, s, e);
                if (rc < 0) return -1;
                if (rc) break;
            }
        if (gc == 1) break;
    }
    bk_keep_images(c, l, stack, &ly->shapes, offsetof(Shape, nb));
    if (!ly->shapes.n)
        return bk_fail(c, ly->node, e, "even one output element of one channel with one input channel does not fit half "
                       "of LMEM (%llu bytes): kernel %dx%d, input width %d", (unsigned long long)c->slot, l->kh, l->kw, l->W);
    BkShapes *q = &ly->shapes;
    Shape *v = q->v;
    for (int i = 1; i < q->n; i++)   /* fewest tiles first, stable */
        for (int j = i; j > 0 && q->tiles[j - 1] > q->tiles[j]; j--) {
            Shape ts = v[j]; v[j] = v[j - 1]; v[j - 1] = ts;
            int64_t tt = q->tiles[j]; q->tiles[j] = q->tiles[j - 1]; q->tiles[j - 1] = tt;
        }
    q->min_priced = MIN_COSTED;
    q->tile_budget = TILE_BUDGET;
    q->apply = apply_shape;
    return 0;
}

/* ---- the node's operands ---- */

/* What differs between the four ops: the inputs and attributes. */
typedef struct QmNode {
    int x, w, bias, rq;          /* tensor indices (-1 absent) */
    int mode;
    int32_t xz, yz, lo, hi;      /* x's zero point (unshifted), output zero point and clamp */
    int wz_t;                    /* ConvInteger / QLinearConv: w's zero-point tensor (-1 none) */
} QmNode;

static int read_node(const BkCtx *c, int node, QmNode *q, AtlErr *e)
{
    const IrGraph *g = c->g;
    const IrNode *nd = &g->nodes[node];
    memset(q, 0, sizeof *q);
    q->x = nd->in[0];
    q->bias = q->rq = q->wz_t = -1;
    int y = g->t[nd->out[0]].dtype;
    if (!strcmp(nd->op, "Int8Conv") || !strcmp(nd->op, "Int8MatMul")) {
        q->w = nd->in[1]; q->bias = nd->in[2]; q->rq = nd->in[3];
        q->mode = BK_RQ_INT;
        q->xz = (int32_t)ir_attr_int(nd, !strcmp(nd->op, "Int8Conv") ? "x_zero_point" : "a_zero_point", 0);
        q->yz = (int32_t)ir_attr_int(nd, "y_zero_point", 0);
        q->lo = (int32_t)ir_attr_int(nd, "y_min", y == IR_U8 ? 0 : -128);
        q->hi = (int32_t)ir_attr_int(nd, "y_max", y == IR_U8 ? 255 : 127);
        return 0;
    }
    int ql = !strcmp(nd->op, "QLinearConv");
    q->w = nd->in[ql ? 3 : 1];
    q->mode = ql ? BK_RQ_FLOAT : BK_RQ_NONE;
    int ixz = 2, iwz = ql ? 5 : 3;
    double v = 0;
    if (nd->nin > ixz && nd->in[ixz] >= 0 && bk_q_const_one(g, nd->in[ixz], &v))
        return bk_fail(c, node, e, "x's zero point must be a constant of one value");
    q->xz = (int32_t)v;
    q->wz_t = nd->nin > iwz ? nd->in[iwz] : -1;
    if (ql && nd->nin > 8) q->bias = nd->in[8];
    return 0;
}

int bk_qmatrix_takes(const BkCtx *c, int node)
{
    const IrGraph *g = c->g;
    const IrNode *nd = &g->nodes[node];
    if (!strcmp(nd->op, "Int8Conv") || !strcmp(nd->op, "Int8MatMul")) return 1;
    int ql = !strcmp(nd->op, "QLinearConv");
    int wi = ql ? 3 : 1, iwz = ql ? 5 : 3;
    const IrTensor *w = &g->t[nd->in[wi]];
    if (!w->data || (w->dtype != IR_I8 && w->dtype != IR_U8)) return 0;
    if (ql && nd->nin > 8 && nd->in[8] >= 0 && !g->t[nd->in[8]].data) return 0;
    int shift = w->dtype == IR_U8 ? 128 : 0;
    int t = nd->nin > iwz ? nd->in[iwz] : -1;
    if (t < 0) return shift == 0;
    if (!g->t[t].data) return 0;
    for (int64_t i = 0; i < ir_numel(&g->t[t]); i++) if (ir_get_i(&g->t[t], i) != shift) return 0;
    return 1;
}

/* Geometry from the node: a conv's attributes, or a matmul as rows. */
static int geometry(BkCtx *c, int node, BkLow *l, const IrTensor *x, const IrTensor *w, const IrTensor *y, AtlErr *e)
{
    const IrNode *nd = &c->g->nodes[node];
    l->pt = l->pl = l->pb = l->pr = 0;
    l->sh = l->sw = l->dh = l->dw = 1;
    l->groups = 1;
    if (!strcmp(nd->op, "Int8MatMul")) {
        l->q_mm = 1;
        int64_t rows = ir_numel(x) / x->dims[x->ndim - 1];
        if (rows > 65535 * 1024) return bk_fail(c, node, e, "%lld rows are too many", (long long)rows);
        l->N = 1; l->C = (int)x->dims[x->ndim - 1]; l->H = (int)rows; l->W = 1;
        l->OC = (int)w->dims[1]; l->OH = (int)rows; l->OW = 1; l->kh = l->kw = 1;
        return 0;
    }
    if ((x->ndim != 4 && x->ndim != 3) || y->ndim != x->ndim || w->ndim != x->ndim)
        return bk_fail(c, node, e, "only 1-D and 2-D integer convolutions are lowered (input rank %d)", x->ndim);
    int ns = x->ndim - 2;
    const char *ap = ir_attr_str(nd, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) return bk_fail(c, node, e, "auto_pad %s is not lowered for integer convolutions", ap);
    l->N = (int)x->dims[0]; l->C = (int)x->dims[1];
    l->H = ns == 2 ? (int)x->dims[2] : 1; l->W = (int)x->dims[x->ndim - 1];
    l->OC = (int)y->dims[1];
    l->OH = ns == 2 ? (int)y->dims[2] : 1; l->OW = (int)y->dims[y->ndim - 1];
    l->kh = ns == 2 ? (int)w->dims[2] : 1; l->kw = (int)w->dims[w->ndim - 1];
    l->groups = (int)ir_attr_int(nd, "group", 1);
    const IrAttr *st = ir_attr(nd, "strides"), *di = ir_attr(nd, "dilations"), *pd = ir_attr(nd, "pads");
    if (st && st->n == ns) { l->sh = ns == 2 ? (int)st->ints[0] : 1; l->sw = (int)st->ints[ns - 1]; }
    if (di && di->n == ns) { l->dh = ns == 2 ? (int)di->ints[0] : 1; l->dw = (int)di->ints[ns - 1]; }
    if (pd && pd->n == 2 * ns) {
        if (ns == 2) { l->pt = (int)pd->ints[0]; l->pl = (int)pd->ints[1]; l->pb = (int)pd->ints[2]; l->pr = (int)pd->ints[3]; }
        else { l->pl = (int)pd->ints[0]; l->pr = (int)pd->ints[1]; }
    }
    if (l->groups < 1 || l->C % l->groups || l->OC % l->groups || w->dims[1] * l->groups != l->C)
        return bk_fail(c, node, e, "group=%d does not divide %d input / %d output channels", l->groups, l->C, l->OC);
    if (l->kh > 255 || l->kw > 255 || l->sh > 63 || l->sw > 63 || l->dh > 63 || l->dw > 63 || l->pl > 63 || l->pr > 63 ||
        l->pt < 0 || l->pb < 0 || l->groups > 65535)
        return bk_fail(c, node, e, "kernel %dx%d, stride %dx%d, dilation %dx%d, pads %d/%d/%d/%d exceed the conv instruction",
                       l->kh, l->kw, l->sh, l->sw, l->dh, l->dw, l->pt, l->pl, l->pb, l->pr);
    if ((l->W + l->pl + l->pr - l->dw * (l->kw - 1) - 1) / l->sw + 1 != l->OW ||
        (l->H + l->pt + l->pb - l->dh * (l->kh - 1) - 1) / l->sh + 1 != l->OH || w->dims[0] != l->OC)
        return bk_fail(c, node, e, "output %dx%d does not follow from the input and attributes", l->OH, l->OW);
    return 0;
}

/* The weight image, bias' and requantisation vector (see the file comment). */
static int constants(BkCtx *c, int node, BkLow *l, const QmNode *q, AtlErr *e)
{
    const IrGraph *g = c->g;
    const IrNode *nd = &g->nodes[node];
    const IrTensor *w = &g->t[q->w];
    int OC = l->OC, cpg = l->C / l->groups, kk = l->kh * l->kw;
    int64_t K = (int64_t)kk * cpg;
    int wshift = w->dtype == IR_U8 ? 128 : 0;
    size_t nw = (size_t)K * (size_t)OC;
    int8_t *img = malloc(nw);
    int64_t *bias = calloc((size_t)OC, sizeof *bias);
    int32_t *b32 = malloc((size_t)OC * sizeof *b32), *rq = malloc((size_t)OC * 2 * sizeof *rq);
    float *mult = malloc((size_t)OC * sizeof *mult);
    int rc = -1, any_bias = 0;
    if (!img || !bias || !b32 || !rq || !mult) { bk_fail(c, node, e, "out of memory"); goto done; }
    for (int o = 0; o < OC; o++) {
        int64_t wsum = 0;
        for (int ci = 0; ci < cpg; ci++)
            for (int k = 0; k < kk; k++) {
                int v = l->q_mm ? (int)ir_get_i(w, (int64_t)ci * OC + o) - wshift
                                : (int)ir_get_i(w, ((int64_t)o * cpg + ci) * kk + k) - wshift;
                img[((size_t)k * cpg + ci) * OC + o] = (int8_t)v;
                wsum += v;
            }
        if (q->bias >= 0) bias[o] = ir_get_i(&g->t[q->bias], ir_numel(&g->t[q->bias]) == 1 ? 0 : o);
        bias[o] -= (int64_t)l->q_xz * wsum;
        if (bias[o] < INT32_MIN || bias[o] > INT32_MAX ||
            (double)K * 128 * 128 * 2 + (double)(bias[o] < 0 ? -bias[o] : bias[o]) >= 2147483648.0) {
            bk_fail(c, node, e, "channel %d: sums of %lld products with bias %lld could leave int32", o, (long long)K,
                    (long long)bias[o]);
            goto done;
        }
        b32[o] = (int32_t)bias[o];
        any_bias |= b32[o] != 0;
    }
    if (bk_weight(c, img, nw, &l->w, e)) goto done;
    l->b = 0;
    if (any_bias && bk_weight(c, b32, (size_t)OC * 4, &l->b, e)) goto done;
    if (q->mode == BK_RQ_INT) {
        const IrTensor *r = &g->t[q->rq];
        if (!r->data || ir_numel(r) != 2 * OC) { bk_fail(c, node, e, "requantisation parameters must be a constant [%d, 2]", OC); goto done; }
        for (int i = 0; i < 2 * OC; i++) rq[i] = (int32_t)ir_get_i(r, i);
        for (int o = 0; o < OC; o++)
            if (rq[2 * o + 1] < -30 || rq[2 * o + 1] > 31) { bk_fail(c, node, e, "channel %d: shift %d outside -30..31", o, rq[2 * o + 1]); goto done; }
        if (bk_weight(c, rq, (size_t)OC * 8, &l->q_mults, e)) goto done;
    } else if (q->mode == BK_RQ_FLOAT) {
        const IrTensor *ws = &g->t[nd->in[4]];
        double sx, sy, zy;
        if (bk_q_const_one(g, nd->in[1], &sx) || bk_q_const_one(g, nd->in[6], &sy) || bk_q_const_one(g, nd->in[7], &zy) ||
            !ws->data || (ir_numel(ws) != 1 && ir_numel(ws) != OC)) {
            bk_fail(c, node, e, "x/y scales and the y zero point must be constants of one value, w_scale one or one per output channel");
            goto done;
        }
        for (int o = 0; o < OC; o++) mult[o] = (float)(sx * ir_get_f(ws, ir_numel(ws) == 1 ? 0 : o) / sy);
        l->q_zp = (float)zy;
        if (bk_weight(c, mult, (size_t)OC * 4, &l->q_mults, e)) goto done;
    }
    rc = 0;
done:
    free(img); free(bias); free(b32); free(rq); free(mult);
    return rc;
}

int bk_lower_qmatrix(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
    QmNode q;
    l->kind = BK_K_CONV;
    if (read_node(c, node, &q, e)) return -1;
    const IrTensor *x = &gr->t[q.x], *w = &gr->t[q.w], *y = &gr->t[nd->out[0]];
    if (x->dtype != IR_I8 && x->dtype != IR_U8)
        return bk_fail(c, node, e, "x is %s; int8 and uint8 are lowered", ir_dtype_name(x->dtype));
    if (!w->data || (w->dtype != IR_I8 && w->dtype != IR_U8))
        return bk_fail(c, node, e, "weights must be an int8 or uint8 constant");
    if (q.mode == BK_RQ_INT && (q.bias < 0 || !gr->t[q.bias].data || q.rq < 0))
        return bk_fail(c, node, e, "bias and requantisation parameters must be constants");
    if (geometry(c, node, l, x, w, y, e)) return -1;
    l->compact = !l->q_mm && bk_compact_ok(c, l);   /* a strided 1x1 conv loads only what it reads */
    l->q_mode = q.mode;
    l->q_xz = q.xz - (x->dtype == IR_U8 ? 128 : 0);
    l->xdt = bk_tensor_dt(c, q.x);
    l->xes = bk_tensor_es(c, q.x);
    l->dt = bk_tensor_dt(c, nd->out[0]);
    l->es = bk_tensor_es(c, nd->out[0]);
    if (q.mode == BK_RQ_INT) { l->q_zp = (float)q.yz; l->q_lo = q.lo; l->q_hi = q.hi; }
    else if (q.mode == BK_RQ_FLOAT) bk_q_range(y->dtype, &l->q_lo, &l->q_hi);
    if (q.mode == BK_RQ_INT && (q.lo > q.hi || q.lo < (y->dtype == IR_U8 ? 0 : -128) || q.hi > (y->dtype == IR_U8 ? 255 : 127)))
        return bk_fail(c, node, e, "clamp [%d, %d] is outside the output type", q.lo, q.hi);
    if (constants(c, node, l, &q, e)) return -1;
    if (bk_tensor_in_dram(c, q.x, &l->x, e) || bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    ly->gen = qmatrix_gen;
    ly->is_matrix = 1;
    ly->macs = (uint64_t)l->N * l->OH * l->OW * l->OC * l->kh * l->kw * (uint64_t)(l->C / l->groups);
    return choose_tiles(c, ly, e);
}
