/* conv.c - Conv and MaxPool/AveragePool on the matrix / vector unit.
 *
 * Reads: a Conv (any kernel, stride, pad, dilation, groups incl. depthwise,
 *   optional constant bias, fused activation) or pool node (MaxPool also of
 *   int8 / uint8: v.maxpool in the chip integer, BkLow.dt), NCHW tensors in
 *   DRAM; constant weights become a [kh][kw][cpg][OC] image, run-time ones
 *   (an activation or graph input, OIHW) are gathered into that tile layout
 *   by the tile's weight DMA itself (4-D strides; no multicast mode);
 *   1-D ones (NCW, rank 3) run as 2-D with H = 1 (same bytes in DRAM);
 *   3-D ones never get here: legalize/rewrite_3d.c splits them into 2-D.
 * Tiles: (group chunk, image n, output rows, output columns, k chunk), in
 *   that order (k innermost). The group chunk is a chunk of output channels
 *   for a groups == 1 conv, of groups otherwise (pools: of channels). Tiles
 *   are chunk-major so one core's consecutive tiles share weights (weight
 *   key = group chunk x k chunks + k chunk). A tile loads the input rows and
 *   columns its output block needs (with the halo, clipped to the image; the
 *   part outside becomes the instruction's top/bottom/left/right padding)
 *   transposed NCHW -> HWC by one strided DMA, the weights
 *   [kh][kw][its input channels][oc chunk] and the f32 bias, runs one
 *   `conv` into an f32 HWC accumulator, adds the bias and applies the
 *   activation on the vector unit, casts to the storage dtype if it is not
 *   f32, and stores its block HWC -> NCHW.
 * K splitting (groups == 1 convs whose weights or input rows do not fit a
 *   slot): the input channels are cut into nkc chunks; the nkc tiles of one
 *   output tile are consecutive on one core (BkLayer.tile_run). They
 *   accumulate into an f32 accumulator that lives outside the slots, in a
 *   resident region below them (BkLayer.slot_off, like multicast weights),
 *   as TWO buffers used by output tiles of even / odd index. Chunk 0 runs
 *   `conv` with acc=0, later chunks with acc=1; only the last chunk runs the
 *   epilogue (bias, activation, cast into the slot) and has stores (in f32
 *   the store reads the accumulator itself); the others have none.
 *   Why two buffers suffice with the emitter unchanged (emit/emit.c): a
 *   core's consecutive output tiles alternate the parity of their index
 *   (consecutive indices, or row bands where schedule/bands.c checks it,
 *   kruns_alternate); let output tile j's chunks be the core's local tiles
 *   i .. i+K-1 (K = nkc >= 2), so the core's output tile after next
 *   (written j+2 below) starts at local tile i+2K, and it is the next one
 *   to use buffer j % 2. The DMA queue of a core is in order, one
 *   transfer at a time: L0, L1, S0, L2, S1, ..., i.e. the loads of local
 *   tile m come after the stores of tile m-2. Tile j's store is S(i+K-1)
 *   and i+K-1 <= i+2K-2, so the loads L(i+2K) of tile j+2's first chunk
 *   come after it, and that store waited (COMPUTED) for the whole last
 *   compute of tile j (its instructions are chained through the hand-over
 *   semaphores, so its last one completes last). Chunk 0 of tile j+2 waits
 *   for its loads, so it writes the buffer only after every read and write
 *   of tile j (conv, epilogue, store) is complete. Tile j+1 uses the other
 *   buffer, so its first conv may overlap tile j's epilogue. Chunks without
 *   stores get the emitter's `nop` waiting for COMPUTED, so the queue order
 *   holds for them too. test_backend_tiling.c runs K-split convs with
 *   several output tiles per core in the simulator's full mode, whose race
 *   detector flags any overlap (a single buffer is flagged there).
 * W tiling: a tile covers `cols` output columns; it loads the input columns
 *   they need, like rows.
 * Tiles of several images (groups == 1 convs; when grouping): a tile may
 *   cover nb images (BkLow.nb; image chunks of nb, the last one possibly
 *   fewer). Pointwise convs (1x1, no padding): the HWC blocks of its images
 *   one after another in LMEM are one HWC image of nb x rows rows, so one
 *   DMA loads them (bk_nchw_boxes), one `conv` of h = nb x rows streams nb
 *   times the rows of A through each weight fold, the epilogue covers them
 *   all and the store (and a residual's load) moves nb images. A strided
 *   1x1 conv loads only the rows and columns it reads (DMA strides sh
 *   rows, sw elements) and runs at stride 1 on that block (BkLow.compact;
 *   not with row bands), which makes it pointwise too. Any other conv
 *   (with bands too: their DMA rewrite cuts a tile of several images
 *   image by image) takes whole images stacked (bk_image_stack):
 *   image i's rows at row i ib + top of the input block, the rows above
 *   and below them zeroed by two dma.fill (bk_stack_zeros), one `conv` with
 *   no top padding over nb x ib rows whose accumulator rows [i ob, i ob +
 *   OH) are image i's (the rows between are garbage: the epilogue runs
 *   over them, the store and the residual's load step images by ob rows).
 *   Each output element sums its k in the same order, and a zero row adds
 *   the same +0 x w the instruction's padding adds, so the results are
 *   those of one image a tile, bit for bit.
 * Tile shape: first every (group chunk, rows) candidate, halving from the
 *   whole layer, that fits one LMEM slot without K or W splits, in both
 *   weight modes, are offered as candidates; the group search
 *   (group/search.c) prices them on the layer's core set and keeps the
 *   cheapest (this is how the parallel split over cores by channels, rows
 *   or batch is chosen). Then (k chunks, column chunks) pairs, in order of
 *   their product (fewer k chunks on ties): the first SPLIT_PAIRS pairs
 *   that fit at all add each group chunk with its two largest fitting row
 *   counts; strided windows (stride > 1, not compact) then the next
 *   DEEP_K_PAIRS K splits of whole rows that fit, weight-bound convs
 *   (reading the weights from DRAM takes longer than the MACs) the next
 *   WEIGHT_K_PAIRS (search_splits). The
 *   split shapes are offered even when unsplit ones fit (except with
 *   --group none, which keeps the per-layer schedule of before
 *   grouping): a
 *   layer whose weights fill a slot otherwise takes narrow output-channel
 *   chunks that each re-read the whole input (ResNet-50's layer4 convs:
 *   chunks of 8 channels, GEMMs of 7 x 8, 1.27 M cycles for a 3x3 conv
 *   whose weights take 0.15 M to read; with a K split 0.24 M). Candidates are ordered fewest
 *   tiles first and priced at least MIN_COSTED, then while the tiles priced
 *   stay under TILE_BUDGET: the cost model generates and replays every tile
 *   and dominates compile time, and small-LMEM chips make tiles many.
 *   Shapes of more than MAX_TILES tiles are not candidates. Convs that
 *   may take several images a tile add, per group chunk and weight mode,
 *   whole-image tiles of N,
 *   N/2, ... (> 1) images, each with the fewest k chunks that fit
 *   (bk_image_counts; BkOptions.tile_images forces one count).
 * Weights in SRAM (BkLayer.wsram, split `wsram`; docs/backend.md "Weights
 *   in cluster SRAM"): a variant of every shape whose chunks have several
 *   tiles: the chunk's lowest core in a cluster copies each weight key
 *   into the cluster's SRAM before its first load of it (stage_weights,
 *   placed by the schedule), its other cores wait for the flag; tiles
 *   load their weights from SRAM, so a cluster reads them from DRAM once.
 * Depthwise on the vector unit (BkLow.vdw, split `vec`; lower/dwvec.c):
 *   every shape of a depthwise float conv whose weights are loaded per tile
 *   is also offered with its taps as v.mul / v.add instead of `conv`
 *   (the matrix unit pays a fill and drain per channel); the search keeps
 *   the cheaper.
 * Guarantees: the output equals the ONNX op's (f32 accumulation order of
 *   the matrix unit: channel blocks of NUM_CONV_CBLOCK, then kh, kw, then c
 *   within a block; k chunks of several taps are whole blocks, so a K split
 *   inside a core gives the uncut conv's bits. Two exceptions round
 *   otherwise: a layer that fits only in chunks of fewer than a block's
 *   channels (kchunk_sizes' fallback), and the K split across clusters of
 *   lower/kbands.c (placement chip with bands), whose parts are summed
 *   apart and then added). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "compiler/lower/lower.h"
#include "isa/numerics.h"
#include "isa/timing.h"

enum { SPLIT_PAIRS = 7, SPLIT_PAIRS_NONE = 3, DEEP_K_PAIRS = 3, WEIGHT_K_PAIRS = 6, MIN_COSTED = 2, TILE_BUDGET = 1 << 16, MAX_TILES = 1 << 24 };

static int imin(int a, int b) { return a < b ? a : b; }

static int is_kconv(const BkLow *l) { return l->groups == 1 && l->kind == BK_K_CONV; }

/* The input-channel chunk sizes a K split may take (bk_chunk_sizes of C,
 * largest first). With several taps, each is rounded up to whole blocks
 * of NUM_CONV_CBLOCK channels (isa/numerics.h): the chunks then sum in the
 * uncut conv's order, so a layer gives the same bits however a schedule
 * cuts it (staged and uniform schedules, micro-batch 1 or 8). any_size
 * keeps the sizes as they are: the fallback of a layer that fits in no
 * chunk of whole blocks (a few channels of a large kernel on a small
 * LMEM), whose sums then round as its chunks say. */
static int kchunk_sizes(const BkLow *l, int any_size, int *ks, int cap)
{
    int n = bk_chunk_sizes(l->C, ks, cap), kept = 0;
    for (int i = 0; i < n; i++) {
        int k = ks[i];
        if (l->kh * l->kw > 1 && !any_size) k = (k + NUM_CONV_CBLOCK - 1) / NUM_CONV_CBLOCK * NUM_CONV_CBLOCK;
        if (k > l->C) k = l->C;
        if (kept && ks[kept - 1] == k) continue;
        ks[kept++] = k;
    }
    return kept;
}


static int chunk_width(const BkLow *l);
static uint64_t weight_chunk_bytes(const BkCtx *c, const BkLow *l);
static uint64_t bias_chunk_bytes(const BkCtx *c, const BkLow *l);
static int conv_gen(BkCtx *c, const BkLayer *ly, int t, uint64_t slot, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    BkTilePos p = bk_tile_pos(l, t);
    int cpg = l->C / l->groups, opg = l->OC / l->groups;
    int g0 = p.gci * l->gchunk, gn = imin(l->gchunk, l->groups - g0);
    int c0 = g0 * cpg, cn = gn * cpg, oc0 = g0 * opg, ocn = gn * opg;
    if (is_kconv(l)) {
        /* one group: chunk the output channels; a tile reads its k chunk */
        oc0 = p.gci * l->gchunk;
        ocn = imin(l->gchunk, l->OC - oc0);
        gn = 1;
        c0 = p.kci * l->kchunk;
        cn = imin(l->kchunk, l->C - c0);
    }
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
        return bk_fail(c, ly->node, e, "output rows %d..%d, columns %d..%d read no input (padding too large)",
                       r0, r0 + rn - 1, w0, w0 + wn - 1);
    int es = l->es, dt = l->dt, is_pool = l->kind == BK_K_POOL;
    int last_k = p.kci == l->nkc - 1;
    uint32_t sh[4];
    int64_t ds[4], ss[4];
    /* input block of p.nn images, NCHW -> HWC (from the cluster's SRAM
     * copy when in_sram): for a 1x1 conv one HWC block of nn * rows rows,
     * otherwise image i's rows at row i * ib + top (bk_image_stack) */
    BkStack sk = bk_image_stack(l);
    int64_t row = (int64_t)xs.n * cn;
    int stacked = l->nb > 1 && (sk.ib != ys.n || sk.top || sk.pb);
    BkImgBox box = {p.n, p.nn, c0, cn, ys.a, ys.n, rs, xs.a, xs.n, ws, stacked ? sk.ib * row : 0};
    AtlInsn in = bk_nchw_boxes(dt, 1, l->x, l->C, l->H, l->W, &box, slot + l->l_in + (stacked ? (uint64_t)(sk.top * row * es) : 0));
    if (ly->in_sram) {
        in.src_space = ISA_SPACE_SRAM;
        in.src = in.src - l->x + c->sram_stage;
    }
    if (l->vdw) bk_dw_input(c, l, k, &in, slot + (l->l_dwx ? l->l_dwx : l->l_in), ys, xs, cn);
    else bk_code_ld(k, &in, 0);
    if (stacked) bk_stack_zeros(k, dt, 0, slot + l->l_in, p.nn, &sk, ys.n, xs.n, cn);
    AtlInsn op = bk_window_insn(l, is_pool ? l->pool_op : ISA_OP_CONV, dt, slot + l->l_in, cn, ys, xs);
    op.ih = (uint32_t)(p.nn * (l->nb > 1 ? sk.ib : ys.n));
    if (stacked) { op.pad_top = 0; op.pad_bottom = (uint8_t)sk.pb; }
    if (l->compact) op.sh = op.sw = 1;
    uint64_t res;            /* LMEM of the HWC result in the storage dtype */
    uint32_t ochan;
    if (!is_pool) {
        uint64_t wsrc = slot + l->l_w, bsrc = slot + l->l_b;
        if (ly->mcast) {
            /* resident, chunk-major [chunk][kh*kw*cpg][chunk width] (multicast prologue) */
            wsrc = l->l_wres + (uint64_t)p.gci * weight_chunk_bytes(c, l);
            bsrc = l->l_bres + (uint64_t)p.gci * bias_chunk_bytes(c, l);
        } else if (ly->wsram) {
            /* staged in the cluster's SRAM as [kh*kw][C][ocn]: this k chunk's [kh*kw][cn][ocn] */
            uint64_t src = ly->wsram_base + (uint64_t)(p.gci % ly->wsram_slots) * ly->wsram_chunk +
                           (uint64_t)c0 * ocn * es;
            sh[0] = 1; sh[1] = (uint32_t)(l->kh * l->kw); sh[2] = (uint32_t)cn; sh[3] = (uint32_t)ocn;
            ss[0] = 0; ss[1] = (int64_t)l->C * ocn; ss[2] = ocn; ss[3] = 1;
            bk_compact(sh, ds);
            in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_w, ISA_SPACE_SRAM, src, sh, ds, ss);
            bk_code_ld(k, &in, 1);
        } else if (l->w_oihw) {
            /* run-time weights OIHW [OC][C/groups][kh][kw] -> [kh][kw][cn][ocn] (strided gather) */
            int64_t ksz = (int64_t)l->kh * l->kw, cstride = l->nkc == 1 ? cpg : l->C;
            sh[0] = (uint32_t)l->kh; sh[1] = (uint32_t)l->kw; sh[2] = (uint32_t)(l->nkc == 1 ? cpg : cn); sh[3] = (uint32_t)ocn;
            ss[0] = l->kw; ss[1] = 1; ss[2] = ksz; ss[3] = cstride * ksz;
            bk_compact(sh, ds);
            uint64_t first = ((uint64_t)oc0 * (uint64_t)cstride + (uint64_t)(l->nkc == 1 ? 0 : c0)) * (uint64_t)ksz;
            in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_w, ISA_SPACE_DRAM, l->w + first * es, sh, ds, ss);
            bk_code_ld(k, &in, 1);
        } else if (l->nkc == 1) {
            /* weights [kh][kw][cpg][OC] -> [kh][kw][cpg][ocn] */
            sh[0] = 1; sh[1] = 1; sh[2] = (uint32_t)(l->kh * l->kw * cpg); sh[3] = (uint32_t)ocn;
            ss[0] = 0; ss[1] = 0; ss[2] = l->OC; ss[3] = 1;
            bk_compact(sh, ds);
            in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_w, ISA_SPACE_DRAM, l->w + (uint64_t)oc0 * es, sh, ds, ss);
            if (l->vdw && l->l_dww) in.dst = slot + l->l_dww;   /* compact, cast by bk_dw_taps */
            else if (l->vdw) bk_dw_weight_strides(c, &in, ocn);
            bk_code_ld(k, &in, 1);
        } else {
            /* weights [kh][kw][C][OC] -> [kh][kw][cn][ocn] of this k chunk */
            sh[0] = 1; sh[1] = (uint32_t)(l->kh * l->kw); sh[2] = (uint32_t)cn; sh[3] = (uint32_t)ocn;
            ss[0] = 0; ss[1] = (int64_t)l->C * l->OC; ss[2] = l->OC; ss[3] = 1;
            bk_compact(sh, ds);
            in = bk_dma(dt, ISA_SPACE_LMEM, slot + l->l_w, ISA_SPACE_DRAM,
                        l->w + ((uint64_t)c0 * l->OC + (uint64_t)oc0) * es, sh, ds, ss);
            bk_code_ld(k, &in, 1);
        }
        if (l->b && !ly->mcast && last_k) {
            sh[0] = 1; sh[1] = 1; sh[2] = 1; sh[3] = (uint32_t)ocn;
            bk_compact(sh, ds);
            in = bk_dma(ISA_F32, ISA_SPACE_LMEM, slot + l->l_b, ISA_SPACE_DRAM, l->b + (uint64_t)oc0 * 4, sh, ds, ds);
            bk_code_ld(k, &in, 1);
        }
        /* K split: the accumulator of output tile `out` is resident buffer out % 2 */
        uint64_t acc = l->nkc > 1 ? l->l_accres + (uint64_t)(p.out & 1) * l->acc_bytes : slot + l->l_acc;
        op.dst = acc;
        op.src2 = wsrc;
        op.cout = (uint32_t)ocn;
        op.groups = (uint16_t)gn;
        op.acc = (uint8_t)(p.kci > 0);
        if (l->kb_parts) {
            /* K split across clusters, phase 1: a cluster's chunks of K
             * accumulate from its first; its last stores the f32 partial
             * sum (no bias, no activation) into the cluster's part */
            int sub = l->nkc / l->kb_parts;
            op.acc = (uint8_t)(p.kci % sub > 0);
            bk_code_cp(k, &op);
            if (p.kci % sub != sub - 1) return 0;
            BkImgBox pb = {p.n, p.nn, oc0, ocn, r0, rn, 1, w0, wn, 1, l->nb > 1 ? (int64_t)sk.ob * wn * ocn : 0};
            bk_kbands_store(k, l, p.kci / sub, &pb, acc);
            return 0;
        }
        if (l->vdw) bk_dw_taps(c, l, k, slot, acc, ys, xs, rn, wn, cn);
        else bk_code_cp(k, &op);
        if (!last_k) return 0;
        /* every accumulator row (stacked: the garbage rows between images too) */
        int orows = l->nb > 1 ? sk.ob : rn;
        uint32_t osh[4] = {1, (uint32_t)(p.nn * orows), (uint32_t)wn, (uint32_t)ocn};
        int64_t oc[4], bs[4] = {0, 0, 0, 1};
        bk_compact(osh, oc);
        if (l->b) {
            in = bk_vbin(ISA_OP_V_ADD, ISA_F32, acc, acc, bsrc, osh, oc, oc, bs);
            bk_code_cp(k, &in);
        }
        uint64_t resid = 0;
        if (l->t_x) {
            /* the residual's block, NCHW -> HWC like the store in reverse,
             * in f32 for the epilogue's add */
            BkImgBox rb = {p.n, p.nn, oc0, ocn, r0, rn, 1, w0, wn, 1, (int64_t)orows * wn * ocn};
            in = bk_nchw_boxes(dt, 1, l->t_x, l->OC, l->OH, l->OW, &rb, slot + l->l_res);
            bk_code_ld(k, &in, 0);
            resid = slot + l->l_res;
            if (dt != ISA_F32) {
                in = bk_vun(ISA_OP_V_CAST, dt, slot + l->l_resf, resid, osh, oc, oc, 0, 0);
                in.otype = ISA_F32;
                bk_code_cp(k, &in);
                resid = slot + l->l_resf;
            }
        }
        if (bk_matrix_epilogue(k, l, dt, acc, slot + l->l_tmp, slot + l->l_out, resid, osh, oc, &res))
            return bk_fail(c, ly->node, e, "activation %s cannot be fused", l->act[0] ? l->act : l->t_act);
        ochan = (uint32_t)ocn;
    } else {
        op.dst = slot + l->l_out;
        bk_code_cp(k, &op);
        res = slot + l->l_out;
        ochan = (uint32_t)cn;
        oc0 = c0;
    }
    /* HWC block -> NCHW (p.nn images) */
    BkImgBox ob = {p.n, p.nn, oc0, (int)ochan, r0, rn, 1, w0, wn, 1, l->nb > 1 ? (int64_t)sk.ob * wn * ochan : 0};
    in = bk_nchw_boxes(dt, 0, l->y, l->OC, l->OH, l->OW, &ob, res);
    bk_code_st(k, &in);
    return 0;
}

/* Input staging: the whole input tensor, DRAM -> the cluster's SRAM at 0
 * (contiguous NCHW, in rows of SRAM_ROW elements and the rest), then,
 * unless the weights' multicast follows, a 64-byte multicast flag whose
 * signal tells every core of the cluster that the copy has landed (the
 * DMA queue runs one transfer at a time, so the flag starts after it). */
#define SRAM_ROW 4096

/* Staged input pieces: at most this many (a wait and a signal each). */
enum { STAGE_PIECES_MAX = 64 };

static int conv_prologue(BkCtx *c, const BkLayer *ly, BkCode *k, AtlErr *e);

int bk_conv_stage_pieces(const BkCtx *c, const BkLayer *ly)
{
    const BkLow *l = &ly->lw;
    if (c->bands || !ly->in_sram || ly->prologue != conv_prologue || ly->mcast || ly->gather_whole || !is_kconv(l) || l->N < 2 || l->nkc < 2 ||
        l->nkc > STAGE_PIECES_MAX || (uint64_t)l->H * l->W > 65535)
        return 1;
    return l->nkc;
}

/* The staged input in pieces (bk_conv_stage_pieces): piece j the
 * channels of K chunk j of every image, each but the last followed by a
 * 64-byte flag into the layer's LMEM flag word that signals the input's
 * semaphore (bk_walk_code sets which: lower/ does not know the
 * schedule's semaphores; the last piece's flag is the prologue's own). */
static void copy_input_pieces(BkCtx *c, const BkLayer *ly, int np, BkCode *k)
{
    const BkLow *l = &ly->lw;
    uint64_t plane = (uint64_t)l->H * l->W;
    for (int j = 0; j < np; j++) {
        int c0 = j * l->kchunk, cn = l->C - c0 < l->kchunk ? l->C - c0 : l->kchunk;
        if (cn <= 0) break;
        uint32_t sh[4] = {1, (uint32_t)l->N, (uint32_t)cn, (uint32_t)plane};
        int64_t st[4] = {0, (int64_t)l->C * (int64_t)plane, (int64_t)plane, 1};
        uint64_t off = (uint64_t)c0 * plane * (uint64_t)l->es;
        AtlInsn in = bk_dma(l->dt, ISA_SPACE_SRAM, c->sram_stage + off, ISA_SPACE_DRAM, l->x + off, sh, st, st);
        bk_code_st(k, &in);
        if (j == np - 1) break;
        uint32_t fs[4] = {1, 1, 1, 64 / (uint32_t)isa_dtype_size(c->dt)};
        int64_t fst[4];
        bk_compact(fs, fst);
        AtlInsn f = bk_dma(c->dt, ISA_SPACE_LMEM, ly->l_iflag, ISA_SPACE_SRAM, c->sram_stage + off, fs, fst, fst);
        f.signal = 1;   /* a piece's flag: the walk (schedule.c) sets the input's semaphore */
        bk_code_st(k, &f);
    }
}

static void copy_input_to_sram(BkCtx *c, const BkLayer *ly, BkCode *k)
{
    const BkLow *l = &ly->lw;
    int np = bk_conv_stage_pieces(c, ly);
    if (np > 1) {
        copy_input_pieces(c, ly, np, k);
        return;
    }
    uint64_t n = (uint64_t)l->N * l->C * l->H * l->W, rows = n / SRAM_ROW, rest = n % SRAM_ROW;
    uint32_t sh[4] = {1, 1, (uint32_t)rows, SRAM_ROW};
    int64_t st[4];
    bk_compact(sh, st);
    AtlInsn in;
    if (rows) {
        in = bk_dma(l->dt, ISA_SPACE_SRAM, c->sram_stage, ISA_SPACE_DRAM, l->x, sh, st, st);
        bk_code_st(k, &in);
    }
    if (rest) {
        uint32_t rs[4] = {1, 1, 1, (uint32_t)rest};
        bk_compact(rs, st);
        uint64_t off = rows * SRAM_ROW * (uint64_t)l->es;
        in = bk_dma(l->dt, ISA_SPACE_SRAM, c->sram_stage + off, ISA_SPACE_DRAM, l->x + off, rs, st, st);
        bk_code_st(k, &in);
    }
}

/* Marks in used[] the output-channel chunks the tiles on cluster cl use
 * (tile_core: chip-wide cores). */
static void wsram_used(const BkCtx *c, const BkLayer *ly, const int *tile_core, int cl, uint8_t *used)
{
    int cpc = c->chip->cores_per_cluster;
    memset(used, 0, (size_t)ly->lw.ngc);
    for (int t = 0; t < ly->ntiles; t++)
        if (tile_core[t] / cpc == cl) used[bk_tile_pos(&ly->lw, t).gci] = 1;
}

/* BkLayer.cores_ok of weights staged in SRAM: every cluster's chunks in
 * distinct slots (chunk g in slot g mod wsram_slots). */
int bk_wsram_cores_ok(const BkCtx *c, const BkLayer *ly, const int *tile_core)
{
    if (ly->wsram_slots >= ly->lw.ngc) return 1;
    uint8_t *used = malloc((size_t)ly->lw.ngc), *slot = malloc((size_t)ly->wsram_slots);
    int ok = used && slot;
    for (int cl = 0; ok && cl < c->chip->clusters; cl++) {
        wsram_used(c, ly, tile_core, cl, used);
        memset(slot, 0, (size_t)ly->wsram_slots);
        for (int g = 0; ok && g < ly->lw.ngc; g++)
            if (used[g]) ok = !slot[g % ly->wsram_slots]++;
    }
    free(used);
    free(slot);
    return ok;
}

/* The flag: a 64-byte DMA from SRAM `src` into the resident l_flag,
 * multicast by the emitter, whose signal tells the cluster's cores that
 * the copies before it (one DMA queue, one transfer at a time) landed. */
static void push_flag(const BkCtx *c, uint64_t flag, uint64_t src, BkCode *k)
{
    uint32_t fs[4] = {1, 1, 1, 64 / (uint32_t)isa_dtype_size(c->dt)};
    int64_t st[4];
    bk_compact(fs, st);
    AtlInsn in = bk_dma(c->dt, ISA_SPACE_LMEM, flag, ISA_SPACE_SRAM, src, fs, st, st);
    bk_code_st(k, &in);
}

/* BkLayer.stage: tile's weight block (its chunk, its k chunk), DRAM
 * [kh][kw][C][OC] -> the cluster's SRAM [kh*kw][C][ocn] of its chunk's
 * slot (BK_STAGE_COPY), then the flag (BK_STAGE_FLAG: the chunk's other
 * cores wait for it). */
static int stage_weights(BkCtx *c, const BkLayer *ly, int tile, int mode, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    (void)e;
    BkTilePos p = bk_tile_pos(l, tile);
    int es = c->es, oc0 = p.gci * l->gchunk, ocn = imin(l->gchunk, l->OC - oc0);
    int c0 = p.kci * l->kchunk, cn = imin(l->kchunk, l->C - c0);
    uint64_t dst = ly->wsram_base + (uint64_t)(p.gci % ly->wsram_slots) * ly->wsram_chunk + (uint64_t)c0 * ocn * es;
    uint32_t sh[4] = {1, (uint32_t)(l->kh * l->kw), (uint32_t)cn, (uint32_t)ocn};
    int64_t ss[4] = {0, (int64_t)l->C * l->OC, l->OC, 1}, ds[4] = {0, (int64_t)l->C * ocn, ocn, 1};
    AtlInsn in = bk_dma(c->dt, ISA_SPACE_SRAM, dst, ISA_SPACE_DRAM, l->w + ((uint64_t)c0 * l->OC + (uint64_t)oc0) * es, sh, ds, ss);
    if (mode & BK_STAGE_COPY) bk_code_st(k, &in);
    if (mode & BK_STAGE_FLAG) push_flag(c, ly->l_flag, dst, k);
    return 0;
}

/* The prologue: the input copied to SRAM (copy_input_to_sram), then the multicast of the
 * resident weights, DRAM [R][OC] -> resident [chunk][R][width], and the
 * f32 bias [OC]. The emitter sets the mask of the LMEM multicasts and the
 * signal of the last. */
static int conv_prologue(BkCtx *c, const BkLayer *ly, BkCode *k, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    (void)e;
    if (ly->in_sram) copy_input_to_sram(c, ly, k);
    if (!ly->mcast) {
        push_flag(c, ly->l_iflag, c->sram_stage, k);
        return 0;
    }
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

/* SRAM bytes a staged input takes above BkCtx.sram_stage (whole 64-byte
 * rows, so that staged weights above it start aligned). */
static uint64_t staged_input_bytes(const BkLow *l)
{
    return ((uint64_t)l->N * l->C * l->H * l->W * (uint64_t)l->es + 63) / 64 * 64;
}

/* Output channels of one chunk (the last one may be narrower). */
static int chunk_width(const BkLow *l)
{
    return l->groups == 1 && l->kind == BK_K_CONV ? l->gchunk : l->gchunk * (l->OC / l->groups);
}

/* Bytes between the resident weight blocks of consecutive chunks. */
static uint64_t weight_chunk_bytes(const BkCtx *c, const BkLow *l)
{
    return bk_align_up(c, (uint64_t)l->kh * l->kw * (l->C / l->groups) * (uint64_t)chunk_width(l) * c->es);
}

/* Bytes between the resident f32 bias blocks of consecutive chunks. */
static uint64_t bias_chunk_bytes(const BkCtx *c, const BkLow *l)
{
    return bk_align_up(c, (uint64_t)chunk_width(l) * 4);
}

/* Output channels (groups == 1 conv) or groups per tile can be chunked. */
static int group_units(const BkLow *l) { return is_kconv(l) ? l->OC : l->groups; }

/* LMEM plan of the tile shape in l for weight mode m (0: weights loaded per
 * tile into the slot; 1: the whole layer's weights, chunk-major, and f32
 * bias resident below the slots, multicast once per cluster). The resident
 * region also holds the two K-split accumulators when nkc > 1. Sets the
 * slot geometry and the buffers inside a slot; 0 if everything fits. */
static int plan(const BkCtx *c, BkLayer *g, int m, int st, int ws)
{
    BkLow *l = &g->lw;
    int cpg = l->C / l->groups, conv = l->kind == BK_K_CONV;
    int cn = l->gchunk * cpg, ocn = chunk_width(l);
    if (is_kconv(l)) cn = l->kchunk;
    BkStack sk = bk_image_stack(l);
    uint64_t nb = l->nb > 1 ? (uint64_t)l->nb : 1, outn = (uint64_t)(nb > 1 ? sk.ob : l->rows) * l->cols * nb;
    uint64_t res = 0;
    g->mcast = m;
    g->in_sram = st;
    g->wsram = ws;
    g->prologue = m || st ? conv_prologue : NULL;
    g->stage = ws ? stage_weights : NULL;
    g->cores_ok = ws ? bk_wsram_cores_ok : NULL;
    if (l->vdw && (m || ws || !bk_dw_vector_ok(c, l))) return -1;
    if (ws) {
        /* where an input's staging would go, or above it when the input
         * is staged too; as many chunks as fit, at most all */
        g->wsram_floor = c->sram_stage + (st ? staged_input_bytes(l) : 0);
        g->wsram_base = g->wsram_floor;
        g->wsram_chunk = ((uint64_t)l->kh * l->kw * l->C * (uint64_t)l->gchunk * c->es + 63) / 64 * 64;
        uint64_t room = g->wsram_base < (uint64_t)c->chip->sram_bytes ? (uint64_t)c->chip->sram_bytes - g->wsram_base : 0;
        uint64_t slots = room / g->wsram_chunk;
        if (slots < 1) return -1;
        g->wsram_slots = slots < (uint64_t)l->ngc ? (int)slots : l->ngc;
    }
    if (m) {
        uint64_t nch = (uint64_t)(group_units(l) + l->gchunk - 1) / l->gchunk;
        l->l_wres = 0;
        l->l_bres = bk_align_up(c, nch * weight_chunk_bytes(c, l));
        res = l->l_bres + (l->b ? nch * bias_chunk_bytes(c, l) : 0);
    }
    if ((st || ws) && !m) {
        /* both: the input's flags a word of their own (other cores write
         * the weights' flags, unordered with them) */
        g->l_flag = bk_align_up(c, res);
        g->l_iflag = g->l_flag + (st && ws ? 64 : 0);
        res = g->l_iflag + 64;
    }
    l->acc_bytes = 0;
    if (conv && l->nkc > 1) {
        l->acc_bytes = bk_align_up(c, outn * ocn * 4);
        l->l_accres = bk_align_up(c, res);
        res = l->l_accres + 2 * l->acc_bytes;
    }
    if (bk_reserve_resident(c, g, res)) return -1;
    uint64_t used = 0;
    uint64_t ih = l->compact ? (uint64_t)l->rows : nb > 1 ? (uint64_t)sk.ib : (uint64_t)bk_window_extent(l->rows, l->sh, l->dh, l->kh, l->H);
    uint64_t iw = l->compact ? (uint64_t)l->cols : (uint64_t)bk_window_extent(l->cols, l->sw, l->dw, l->kw, l->W);
    l->l_in = bk_slot_alloc(c, &used, l->vdw ? bk_dw_in_bytes(c, l) : nb * ih * iw * cn * l->es);
    /* a 16-bit vector depthwise: its input and weights as loaded, before the cast to f32 */
    l->l_dwx = l->vdw && l->es != 4 ? bk_slot_alloc(c, &used, bk_dw_in_bytes(c, l) / 4 * (uint64_t)l->es) : 0;
    l->l_dww = l->vdw && l->es != 4 ? bk_slot_alloc(c, &used, (uint64_t)l->kh * l->kw * ocn * l->es) : 0;
    if (conv) {
        l->l_w = m ? 0 : bk_slot_alloc(c, &used, l->vdw ? bk_dw_w_bytes(c, l) : (uint64_t)l->kh * l->kw * (is_kconv(l) ? cn : cpg) * ocn * c->es);
        l->l_b = l->b && !m ? bk_slot_alloc(c, &used, (uint64_t)ocn * 4) : 0;
        l->l_acc = l->nkc == 1 ? bk_slot_alloc(c, &used, outn * ocn * 4) : 0;
        /* the vector depthwise's products (the epilogue's temp after them) */
        l->l_tmp = l->vdw || !strcmp(l->act, "HardSwish") || !strcmp(l->t_act, "HardSwish") ? bk_slot_alloc(c, &used, outn * ocn * 4) : 0;
        l->l_out = c->dt != ISA_F32 ? bk_slot_alloc(c, &used, outn * ocn * c->es) : 0;
        l->l_res = l->t_x ? bk_slot_alloc(c, &used, outn * ocn * c->es) : 0;
        l->l_resf = l->t_x && c->dt != ISA_F32 ? bk_slot_alloc(c, &used, outn * ocn * 4) : 0;
    } else {
        l->l_out = bk_slot_alloc(c, &used, outn * cn * l->es);
    }
    if (nb * ih > 65535 || iw > 65535 || (uint64_t)cn > 65535) return -1;
    /* the DMAs step images by C H W elements in an int32 of bytes */
    if (nb > 1 && (uint64_t)l->es * (uint64_t)(l->C > l->OC ? l->C : l->OC) * l->H * l->W > INT32_MAX) return -1;
    return used <= g->slot_size ? 0 : -1;
}

/* Sets the tile shape (nb images a tile) and the derived chunk counts. */
static void set_shape(BkLow *l, int gc, int r, int w, int kc, int nb)
{
    l->gchunk = gc; l->rows = r; l->cols = w; l->kchunk = kc; l->nb = nb > 1 ? nb : 1;
    l->ngc = (group_units(l) + gc - 1) / gc;
    l->nrc = (l->OH + r - 1) / r;
    l->nwc = (l->OW + w - 1) / w;
    l->nkc = is_kconv(l) ? (l->C + kc - 1) / kc : 1;
}

/* Tiles to cores (k chunks of one output tile stay together) and weight keys. */
static int assign(BkCtx *c, BkLayer *ly, AtlErr *e)
{
    BkLow *l = &ly->lw;
    int per_chunk = bk_image_chunks(l) * l->nrc * l->nwc * l->nkc;
    /* a K split across clusters: a run is one cluster's chunks of an output tile */
    if (bk_set_tiles(ly, l->ngc * per_chunk, l->kb_parts ? l->nkc / l->kb_parts : l->nkc, e)) return -1;
    for (int t = 0; t < ly->ntiles; t++)
        ly->tile_wkey[t] = l->kind == BK_K_CONV ? t / per_chunk * l->nkc + t % l->nkc : -1;
    return 0;
}

/* A candidate: group chunk, rows, columns, k chunk, weights multicast
 * (m), input read from the cluster's SRAM copy (st), images a tile (nb,
 * 0: one), weights staged in the cluster's SRAM (ws), a depthwise conv on
 * the vector unit (v, BkLow.vdw). */
typedef struct Shape { int gc, r, w, kc, m, st, nb, ws, v; } Shape;


static int fits(const BkCtx *c, BkLayer *ly, Shape s)
{
    set_shape(&ly->lw, s.gc, s.r, s.w, s.kc, s.nb);
    ly->lw.vdw = s.v;
    return plan(c, ly, s.m, s.st, s.ws) == 0 && bk_window_spans_ok(&ly->lw);
}

/* Offers s as a candidate if it fits (in LMEM, and in at most MAX_TILES
 * tiles); 1 if it did, 0 if not, -1 out of memory. */
static int add_one(const BkCtx *c, BkLayer *ly, Shape s, AtlErr *e)
{
    if (!fits(c, ly, s)) return 0;
    const BkLow *l = &ly->lw;
    /* an output over its input (BkPlace.over_in): no output-channel chunks */
    if (l->ngc > 1 && ly->node >= 0 && c->pl[bk_tensor_root(c, c->g->nodes[ly->node].out[0])].over_in) return 0;
    int64_t tiles = (int64_t)l->ngc * bk_image_chunks(l) * l->nrc * l->nwc * l->nkc;
    if (tiles > MAX_TILES) return 0;
    return bk_push_shape(ly, &s, sizeof s, tiles, e) ? -1 : 1;
}

/* 1 when the layer's input may be read from an SRAM copy: a convolution cut into
 * several output-channel chunks (each chunk's tiles read the whole input
 * again; the halo rows that row chunks share are too few to pay for the
 * copy), whose input fits the cluster's SRAM, when grouping (--group none
 * keeps the per-layer schedule of before). */
static int may_use_sram(const BkCtx *c, const BkLayer *ly)
{
    return bk_conv_input_may_stage(c, ly) && ly->lw.ngc > 1;
}

int bk_conv_input_may_stage(const BkCtx *c, const BkLayer *ly)
{
    const BkLow *l = &ly->lw;
    uint64_t bytes = (uint64_t)l->N * l->C * l->H * l->W * (uint64_t)l->es;
    return c->grouping && !c->sram_never && l->kind == BK_K_CONV && c->sram_stage + bytes <= (uint64_t)c->chip->sram_bytes;
}

/* 1 when a conv's weight chunks may be staged in its cluster's SRAM
 * (weights per tile, not multicast): a chunk has several tiles and the
 * chunks are fewer than the layer's cores (so the schedule gives some
 * chunk's tiles to several cores, each reading the chunk), when grouping
 * and SRAM is free for the layer. */
static int may_stage_weights(const BkCtx *c, const BkLayer *ly, const Shape *s)
{
    const BkLow *l = &ly->lw;
    return c->grouping && !c->wsram_never && !s->m && is_kconv(l) && !l->w_oihw && c->chip->cores_per_cluster > 1 &&
           l->ngc < c->ncores && (int64_t)bk_image_chunks(l) * l->nrc * l->nwc * l->nkc > 1;
}

/* Offers s, s with its input in SRAM, s with its weights staged in SRAM
 * and s with both (the weights' slots above the staged input), where
 * those may pay: an input every output-channel chunk's tiles read again
 * (a gather, on bands) and weight chunks several cores read each come
 * from DRAM once a cluster (issue 11). BkOptions.sram_input /
 * sram_weights = always keep only the shapes that stage it, without the
 * pair (weights win when both may); both = always: only the pair where
 * both may. */
static int add_shape(const BkCtx *c, BkLayer *ly, Shape s, AtlErr *e)
{
    if (!s.v && !s.m && ly->lw.groups > 1 && ly->lw.groups == ly->lw.C) {
        /* a depthwise conv: the same tiles on the vector unit first (of
         * equal tile counts, priced before the matrix unit's), where
         * bk_dw_vector_ok allows (lower/dwvec.c) */
        Shape sv = s;
        sv.v = 1;
        if (fits(c, ly, sv) && add_one(c, ly, sv, e) < 0) return -1;
    }
    if (!fits(c, ly, s)) return 0;
    int sram = may_use_sram(c, ly), ws = may_stage_weights(c, ly, &s);
    int pair = sram && ws, only_pair = pair && c->sram_always && c->wsram_always;
    int only_ws = ws && c->wsram_always && !only_pair, only_st = sram && c->sram_always && !only_ws && !only_pair;
    if (!only_st && !only_ws && !only_pair) {
        int rc = add_one(c, ly, s, e);
        if (rc <= 0) return rc;
    }
    if (sram && !only_ws && !only_pair) {
        s.st = 1;
        if (add_one(c, ly, s, e) < 0) return -1;
    }
    if (ws && !only_st && !only_pair) {
        s.st = 0;
        s.ws = 1;
        if (add_one(c, ly, s, e) < 0) return -1;
    }
    if (only_pair || (pair && c->sram_pair && !c->sram_always && !c->wsram_always)) {
        s.st = s.ws = 1;
        if (add_one(c, ly, s, e) < 0) return -1;
    }
    return 1;
}

/* Offers, for group chunk gc and weight mode m, tiles of whole images
 * (all rows and columns) with nb = N, N/2, ... (rounded up) > 1 images
 * (bk_image_counts), each with the fewest k chunks
 * that fit (K whole with multicast weights), where bk_multi_image_ok allows:
 * a conv's weights are streamed through the array once per nb
 * images, so deeper K splits pay for the larger block. 0, or -1 out of
 * memory. */
static int add_image_shapes(const BkCtx *c, BkLayer *ly, int gc, int m, AtlErr *e)
{
    const BkLow *l = &ly->lw;
    if (!is_kconv(l)) return 0;
    int nbs[BK_IMAGE_COUNTS], nn = bk_image_counts(c, l, 1, nbs);
    int ks[64], nk = nn ? m ? 1 : kchunk_sizes(l, 0, ks, 64) : 0;
    if (m) ks[0] = l->C;
    for (int j = 0; j < nn; j++)
        for (int i = 0; i < nk; i++) {
            Shape s = {gc, l->OH, l->OW, ks[i], m, 0, nbs[j], 0, 0};
            int rc = add_shape(c, ly, s, e);
            if (rc < 0) return -1;
            if (rc) break;
        }
    /* one whole image a tile, K split, on bands with at least two images
     * per core: each core may then run its images' tiles of every chunk
     * it holds, reading the input once */
    int cpc = c->chip->cores_per_cluster;
    for (int i = 0; !m && ly->band_cores && cpc > 1 && l->N >= 2 * cpc && i < nk; i++) {
        Shape s = {gc, l->OH, l->OW, ks[i], 0, 0, 0, 0, 0};
        int rc = add_shape(c, ly, s, e);
        if (rc < 0) return -1;
        if (rc) break;
    }
    return 0;
}

/* Orders the candidates fewest tiles first (stable: equal counts keep
 * search order) and sets the pricing budget: at least MIN_COSTED, then as
 * long as the tiles priced stay under TILE_BUDGET (pricing is linear in
 * tiles; more, smaller tiles only win by spreading a small layer over
 * more cores, where tiles are few). */
static void order_shapes(BkShapes *q)
{
    Shape *v = q->v;
    for (int i = 1; i < q->n; i++)
        for (int j = i; j > 0 && q->tiles[j - 1] > q->tiles[j]; j--) {
            Shape ts = v[j]; v[j] = v[j - 1]; v[j - 1] = ts;
            int64_t tt = q->tiles[j]; q->tiles[j] = q->tiles[j - 1]; q->tiles[j - 1] = tt;
        }
    q->min_priced = MIN_COSTED;
    q->tile_budget = TILE_BUDGET;
}



/* Offers pair p's shapes: each group chunk with its two largest fitting
 * row counts (in both weight modes where the k chunk is whole). 1 if the
 * pair fits at all, 0 if not, -1 out of memory. */
static int offer_pair(BkCtx *c, BkLayer *ly, const BkSplitPair *p, AtlErr *e)
{
    BkLow *l = &ly->lw;
    Shape smallest = {1, 1, p->w, p->kc, 0, 0, 0, 0, 0};
    if (!fits(c, ly, smallest)) return 0;
    int units = group_units(l);
    int modes = l->kind == BK_K_CONV && !l->w_oihw && c->chip->cores_per_cluster > 1 && p->nk == 1 ? 2 : 1;
    for (int m = 0; m < modes; m++)
        for (int gc = units;; gc = (gc + 1) / 2) {
            int taken = 0;
            for (int r = l->OH; taken < 2; r = (r + 1) / 2) {
                Shape s = {gc, r, p->w, p->kc, m, 0, 0, 0, 0};
                int rc = add_shape(c, ly, s, e);
                if (rc < 0) return -1;
                taken += rc;
                if (r == 1) break;
            }
            if (gc == 1) break;
        }
    return 1;
}

/* 1 for a conv whose input tile is a strided window (stride > 1, not
 * loaded compact): its input rows and columns are sh x sw times its
 * output's, so the split search also offers deeper K splits of whole
 * rows (DEEP_K_PAIRS): smaller k chunks leave room for more output
 * rows a tile, i.e. longer matrix folds (see search_splits). */
static int strided_window(const BkLow *l)
{
    return is_kconv(l) && !l->compact && (l->sh > 1 || l->sw > 1);
}

/* 1 for a conv whose weights take DRAM more than twice as long to read
 * (each element once) as the whole chip's matrix units take for its MACs
 * (each element used once per output pixel): few output pixels, many
 * weights (ResNet-50's layer4 and MobileNetV2's last stage at 7 x 7).
 * Such a layer is DRAM-bound, and a core's last tile computes after the
 * DRAM has delivered everything: the split search also offers deeper K
 * splits (DEEP_K_PAIRS), whose smaller tiles shorten that tail. */
static int weight_bound(const BkCtx *c, const BkLow *l)
{
    int rate = tim_mm_rate(c->chip, l->dt);
    double bpc = tim_dram_bytes_per_cycle(c->chip), es = l->es ? l->es : c->es;
    if (!is_kconv(l) || rate <= 0 || bpc <= 0) return 0;
    if (c->chip->dram_model != CFG_DRAM_FLOW) return 0;   /* the banked model: the cost model prices deeper splits up to 18% above the simulator */
    double macs = (double)c->chip->mm_rows * c->chip->mm_cols / rate * cfg_total_cores(c->chip);
    return es / bpc > 2.0 * (double)l->N * l->OH * l->OW / macs;
}

/* The split search (see the file comment): pairs other than (whole K,
 * whole width) by ascending chunk product; the first SPLIT_PAIRS that fit
 * at all add their group chunks x the two largest fitting row counts.
 * Strided convs (strided_window, when grouping) then add the next
 * DEEP_K_PAIRS pairs of whole width that fit (deeper K splits of whole
 * rows), weight-bound ones (weight_bound) the next WEIGHT_K_PAIRS.
 * Strided ones: at stride 2 a 3x3 conv's input tile is four times
 * its output's, so the first pairs (products up to 4, W splits first on
 * ties) fit only tiles of two output rows (m = 28 rows a fold for
 * ResNet-50's layer3.0 conv2, whose stride-1 twins run m = 98 with the
 * same k chunk). Stride-1 ones whose weights are read from DRAM a tile at
 * a time (ResNet-50's layer4: DRAM-bound): a tile's load overlaps the
 * compute of the one before, but the last tile's compute follows every
 * load with the DRAM idle, so smaller k chunks shorten that tail; and a
 * k chunk of a whole number of DRAM interleave periods spreads the 16
 * cores' loads (the same rows at once) evenly over the channels
 * (layer4.1 conv2: K32 instead of K4, 158 K cycles instead of 170 K). */
static int search_splits(BkCtx *c, BkLayer *ly, int any_size, AtlErr *e)
{
    BkLow *l = &ly->lw;
    int ks[64], ws[64];
    int nk = 1;
    ks[0] = l->C;
    if (is_kconv(l)) nk = kchunk_sizes(l, any_size, ks, 64);
    int nw = bk_chunk_sizes(l->OW, ws, 64);
    BkSplitPair *pairs = malloc((size_t)nk * nw * sizeof *pairs);
    if (!pairs) return bk_fail(c, ly->node, e, "out of memory in the tile search");
    int np = 0;
    for (int i = 0; i < nk; i++)
        for (int j = 0; j < nw; j++) {
            if (i == 0 && j == 0) continue;
            int kn = is_kconv(l) ? (l->C + ks[i] - 1) / ks[i] : 1, wn = (l->OW + ws[j] - 1) / ws[j];
            BkSplitPair p = {ks[i], ws[j], kn * wn, kn};
            pairs[np++] = p;
        }
    qsort(pairs, (size_t)np, sizeof *pairs, bk_split_pair_cmp);
    int found = 0, i = 0, rc = 0;
    int most = c->grouping ? SPLIT_PAIRS : SPLIT_PAIRS_NONE;   /* --group none: the search of before */
    for (; i < np && found < most && rc >= 0; i++)
        found += rc = offer_pair(c, ly, &pairs[i], e);
    int deeper = !c->grouping ? 0 : weight_bound(c, l) ? WEIGHT_K_PAIRS : strided_window(l) ? DEEP_K_PAIRS : 0;
    for (; i < np && deeper > 0 && rc >= 0; i++)
        if (pairs[i].w == l->OW) deeper -= rc = offer_pair(c, ly, &pairs[i], e);
    free(pairs);
    return rc < 0 ? -1 : 0;
}

/* The plan of shape `shape` (a Shape): slot layout, tiles, split. */
static int apply_shape(BkCtx *c, BkLayer *ly, const void *shape, AtlErr *e)
{
    const Shape *b = shape;
    BkLow *l = &ly->lw;
    if (!fits(c, ly, *b)) return bk_fail(c, ly->node, e, "internal: a candidate tile shape does not fit");
    if (assign(c, ly, e)) return -1;
    int n = bk_window_split(l, ly->split, sizeof ly->split);
    if (ly->mcast) n += snprintf(ly->split + n, sizeof ly->split - (size_t)n, " mc");
    if (ly->in_sram) n += snprintf(ly->split + n, sizeof ly->split - (size_t)n, " sram");
    if (ly->wsram) n += snprintf(ly->split + n, sizeof ly->split - (size_t)n, " wsram");
    if (l->vdw) n += snprintf(ly->split + n, sizeof ly->split - (size_t)n, " vec");
    if (l->kb_parts) snprintf(ly->split + n, sizeof ly->split - (size_t)n, " kbands");
    return 0;
}

int bk_conv_kbands_shapes(BkCtx *c, BkLayer *ly, AtlErr *e)
{
    BkLow *l = &ly->lw;
    /* K chunks: a cluster's range whole, halved, quartered and in
     * eighths (its own K split: smaller tiles a core, so the compute of
     * its last tile, which follows every weight load with the DRAM idle
     * in a DRAM-bound layer, is shorter; ResNet-50's layer4.x conv1 takes
     * eighths); output chunks down to an eighth, rows down to a quarter */
    /* several images: tiles of 2, 4 or 8 stacked images (each tile reads
     * its weights once; tiles of one image, which read them once per
     * image, were never taken on ResNet-50 at batch 8 and cost compile
     * time) */
    for (int nb = l->N > 1 ? 2 : 1; nb <= 8 && nb <= l->N; nb *= 2)
        for (int sub = 1; sub <= 8 && l->C % (l->kb_parts * sub) == 0; sub *= 2)
            for (int gc = l->OC; gc >= l->OC / 8 && gc >= 1; gc = gc / 2) {
                for (int r = l->OH; r >= (l->OH + 3) / 4; r = (r + 1) / 2) {
                    Shape s = {gc, r, l->OW, l->C / (l->kb_parts * sub), 0, 0, nb > 1 ? nb : 0, 0, 0};
                    if (add_one(c, ly, s, e) < 0) return -1;
                    if (r == 1 || nb > 1) break;   /* stacked images: whole rows */
                }
                if (gc == 1) break;
            }
    if (!ly->shapes.n) return 1;
    order_shapes(&ly->shapes);
    ly->shapes.apply = apply_shape;
    return 0;
}

/* The candidate shapes (see the file comment); the group search prices
 * them. */
static int choose_tiles(BkCtx *c, BkLayer *ly, AtlErr *e)
{
    BkLow *l = &ly->lw;
    int units = group_units(l);
    int modes = l->kind == BK_K_CONV && !l->w_oihw && c->chip->cores_per_cluster > 1 ? 2 : 1;
    /* whole K and width: every halving of (group chunk, rows) */
    for (int m = 0; m < modes; m++)
        for (int gc = units;; gc = (gc + 1) / 2) {
            for (int r = l->OH;; r = (r + 1) / 2) {
                Shape s = {gc, r, l->OW, l->C, m, 0, 0, 0, 0};
                if (add_shape(c, ly, s, e) < 0) return -1;
                if (r == 1) break;
            }
            if (gc == 1) break;
        }
    /* several whole images a tile (pointwise convs) */
    for (int m = 0; m < modes; m++)
        for (int gc = units;; gc = (gc + 1) / 2) {
            if (add_image_shapes(c, ly, gc, m, e)) return -1;
            if (gc == 1) break;
        }
    /* split shapes too: otherwise a layer whose weights fill a slot takes
     * narrow output-channel chunks that each re-read the input (with
     * --group none only when nothing else fits, as before grouping) */
    if ((c->grouping || !ly->shapes.n) && search_splits(c, ly, 0, e)) return -1;
    /* chunks of fewer channels than a block, where nothing else fits */
    if (!ly->shapes.n && is_kconv(l) && l->kh * l->kw > 1 && search_splits(c, ly, 1, e)) return -1;
    if (!ly->shapes.n) {
        set_shape(l, 1, 1, 1, 1, 1);
        if (plan(c, ly, 0, 0, 0) == 0 && !bk_window_spans_ok(l))
            return bk_fail(c, ly->node, e, "some output rows or columns read no input (padding too large for "
                           "kernel %dx%d, dilation %dx%d)", l->kh, l->kw, l->dh, l->dw);
    }
    if (!ly->shapes.n)
        return bk_fail(c, ly->node, e, "even one output element of one channel group with one input channel does "
                       "not fit half of LMEM (%d bytes): kernel %dx%d, input width %d", (int)c->slot, l->kh, l->kw, l->W);
    if (is_kconv(l)) bk_keep_images(c, l, 1, &ly->shapes, offsetof(Shape, nb));
    order_shapes(&ly->shapes);
    ly->shapes.apply = apply_shape;
    return 0;
}

/* Largest value field f holds in format fmt (from the ISA table). */
static uint64_t field_max(int fmt, AtlFieldId f)
{
    const AtlFormatInfo *fi = &isa_formats[fmt];
    for (int i = 0; i < fi->nfields; i++)
        if (fi->fields[i].field == f) return ((uint64_t)1 << fi->fields[i].bits) - 1;
    return 0;
}

/* Attribute `name` with one value per spatial dim (ns: 1 or 2) as an
 * (H, W) pair; a 1-D op is a 2-D one with H = 1, so its H value is h1.
 * Absent or of another length: dflt. */
static void spatial_pair(const IrNode *nd, const char *name, int ns, int dflt, int h1, int *h, int *w)
{
    const IrAttr *a = ir_attr(nd, name);
    int ok = a && a->n == ns;
    *h = ns == 1 ? h1 : ok ? (int)a->ints[0] : dflt;
    *w = ok ? (int)a->ints[ns - 1] : dflt;
}

static int geometry(BkCtx *c, int node, BkLow *l, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    const IrTensor *x = &gr->t[nd->in[0]], *y = &gr->t[nd->out[0]];
    if ((x->ndim != 4 && x->ndim != 3) || y->ndim != x->ndim)
        return bk_fail(c, node, e, "only 1-D and 2-D convolution/pooling (3-D NCW or 4-D NCHW tensors) is lowered; "
                       "input has rank %d", x->ndim);
    int ns = x->ndim - 2;   /* spatial dims; 1-D (NCW) runs as NCHW with H = 1 */
    l->N = (int)x->dims[0]; l->C = (int)x->dims[1];
    l->H = ns == 2 ? (int)x->dims[2] : 1; l->W = (int)x->dims[x->ndim - 1];
    l->OC = (int)y->dims[1];
    l->OH = ns == 2 ? (int)y->dims[2] : 1; l->OW = (int)y->dims[y->ndim - 1];
    const IrAttr *ks = ir_attr(nd, "kernel_shape");
    if (ks && ks->n == ns) spatial_pair(nd, "kernel_shape", ns, 1, 1, &l->kh, &l->kw);
    else if (!strcmp(nd->op, "Conv")) {
        const IrTensor *w = &gr->t[nd->in[1]];
        if (w->ndim != x->ndim) return bk_fail(c, node, e, "weights '%s' have rank %d, input rank %d", w->name, w->ndim, x->ndim);
        l->kh = ns == 2 ? (int)w->dims[2] : 1; l->kw = (int)w->dims[w->ndim - 1];
    } else return bk_fail(c, node, e, "no kernel_shape");
    spatial_pair(nd, "strides", ns, 1, 1, &l->sh, &l->sw);
    spatial_pair(nd, "dilations", ns, 1, 1, &l->dh, &l->dw);
    const IrAttr *pd = ir_attr(nd, "pads");
    l->pt = l->pl = l->pb = l->pr = 0;
    const char *ap = ir_attr_str(nd, "auto_pad", "NOTSET");
    if (pd && pd->n == 4 && ns == 2) { l->pt = (int)pd->ints[0]; l->pl = (int)pd->ints[1]; l->pb = (int)pd->ints[2]; l->pr = (int)pd->ints[3]; }
    else if (pd && pd->n == 2 && ns == 1) { l->pl = (int)pd->ints[0]; l->pr = (int)pd->ints[1]; }
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
    int fmt = isa_ops[ISA_OP_CONV].format;
    const int vals[] = {l->kh, l->kw, l->sh, l->sw, l->dh, l->dw, l->pl, l->pr};
    const AtlFieldId ids[] = {ISA_F_KH, ISA_F_KW, ISA_F_SH, ISA_F_SW, ISA_F_DH, ISA_F_DW, ISA_F_PL, ISA_F_PR};
    for (int i = 0; i < (int)(sizeof vals / sizeof vals[0]); i++)
        if ((uint64_t)vals[i] > field_max(fmt, ids[i]))
            return bk_fail(c, node, e, "kernel %dx%d, stride %dx%d, dilation %dx%d, left/right padding %d/%d: "
                           "%s = %d exceeds the conv instruction's field (max %llu)", l->kh, l->kw, l->sh, l->sw,
                           l->dh, l->dw, l->pl, l->pr, isa_fields[ids[i]].name, vals[i],
                           (unsigned long long)field_max(fmt, ids[i]));
    if (l->N <= 0 || l->C <= 0 || l->OH <= 0 || l->OW <= 0) return bk_fail(c, node, e, "empty tensor");
    if (bk_tensor_in_dram(c, nd->in[0], &l->x, e) || bk_tensor_in_dram(c, nd->out[0], &l->y, e)) return -1;
    return 0;
}

/* Constant weights OIHW -> the [kh][kw][cpg][OC] image in the weights
 * region (storage dtype); l->w its tagged address. */
static int conv_weight_image(BkCtx *c, int node, BkLow *l, const IrTensor *w, AtlErr *e)
{
    int cpg = l->C / l->groups;
    size_t nw = (size_t)l->kh * l->kw * cpg * l->OC;
    uint8_t *wb = malloc(nw * (size_t)c->es);
    if (!wb) return bk_fail(c, node, e, "out of memory");
    /* fp32 into fp32 (ResNet-50's 100 MB) copies finite values as they
     * are, which is what the conversion gives them */
    int f32 = w->dtype == IR_F32 && c->dt == ISA_F32;
    const float *wf = f32 ? (const float *)w->data : NULL;
    for (int o = 0; o < l->OC; o++)
        for (int ci = 0; ci < cpg; ci++)
            for (int y = 0; y < l->kh; y++)
                for (int x = 0; x < l->kw; x++) {
                    int64_t src = (((int64_t)o * cpg + ci) * l->kh + y) * l->kw + x;
                    size_t dst = (((size_t)y * l->kw + x) * cpg + ci) * l->OC + o;
                    if (f32 && isfinite(wf[src])) ((float *)wb)[dst] = wf[src];
                    else bk_store_elem(c->dt, wb, dst, ir_get_f(w, src));
                }
    return bk_weight_take(c, wb, nw * c->es, &l->w, e);
}

int bk_lower_conv(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *nd = &gr->nodes[node];
    BkLow *l = &ly->lw;
    l->kind = BK_K_CONV;
    l->dt = c->dt;
    l->es = c->es;
    if (geometry(c, node, l, e)) return -1;
    l->groups = (int)ir_attr_int(nd, "group", 1);
    const IrTensor *w = &gr->t[nd->in[1]];
    if (l->groups < 1 || l->C % l->groups || l->OC % l->groups)
        return bk_fail(c, node, e, "group=%d does not divide %d input / %d output channels", l->groups, l->C, l->OC);
    l->w_oihw = !w->data;
    if (l->w_oihw && ir_numel(w) != (int64_t)l->OC * (l->C / l->groups) * l->kh * l->kw)
        return bk_fail(c, node, e, "run-time weights '%s' do not have %d x %d x %d x %d values", w->name, l->OC,
                       l->C / l->groups, l->kh, l->kw);
    if (l->w_oihw && bk_tensor_in_dram(c, nd->in[1], &l->w, e)) return -1;
    /* a strided 1x1 conv reads every sh-th row and sw-th column: tiles load
     * only those (not with row bands, whose DMA rewrite takes whole rows;
     * --group none keeps the loads of before) */
    l->compact = is_kconv(l) && bk_compact_ok(c, l);
    if (!l->w_oihw && conv_weight_image(c, node, l, w, e)) return -1;
    int rc;
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
    int tn = c->tail[node];
    if (tn >= 0) {
        /* the residual Add absorbed by legalize/pattern.c: its other operand, its activation */
        const IrNode *an = &gr->nodes[tn];
        int q = an->in[0] == nd->out[0] ? an->in[1] : an->in[0];
        if (bk_tensor_in_dram(c, q, &l->t_x, e)) return -1;
        if (c->act_on[tn]) {
            snprintf(l->t_act, sizeof l->t_act, "%s", an->act);
            l->t_alpha = an->act_alpha;
            l->t_beta = an->act_beta;
        }
    }
    ly->gen = conv_gen;
    ly->is_matrix = 1;
    AtlInsn probe;
    memset(&probe, 0, sizeof probe);
    probe.cin = (uint32_t)l->C; probe.ih = (uint32_t)l->H; probe.iw = (uint32_t)l->W; probe.cout = (uint32_t)l->OC;
    probe.kh = (uint8_t)l->kh; probe.kw = (uint8_t)l->kw; probe.sh = (uint8_t)l->sh; probe.sw = (uint8_t)l->sw;
    probe.dh = (uint8_t)l->dh; probe.dw = (uint8_t)l->dw; probe.pad_top = (uint8_t)l->pt; probe.pad_bottom = (uint8_t)l->pb;
    probe.pad_left = (uint8_t)l->pl; probe.pad_right = (uint8_t)l->pr; probe.groups = (uint16_t)l->groups;
    ly->macs = tim_conv_macs(&probe) * (uint64_t)l->N;
    return choose_tiles(c, ly, e);
}

int bk_lower_pool(BkCtx *c, int node, BkLayer *ly, AtlErr *e)
{
    const IrNode *nd = &c->g->nodes[node];
    BkLow *l = &ly->lw;
    l->kind = BK_K_POOL;
    l->dt = bk_tensor_dt(c, nd->out[0]);   /* MaxPool of integers: v.maxpool on the chip integer */
    l->es = isa_dtype_size(l->dt);
    if (geometry(c, node, l, e)) return -1;
    if (l->dh != 1 || l->dw != 1) return bk_fail(c, node, e, "dilated pooling is not lowered");
    l->groups = l->C;          /* channel chunks ride on the group machinery */
    l->OC = l->C;
    l->pool_op = !strcmp(nd->op, "MaxPool") ? ISA_OP_V_MAXPOOL : ISA_OP_V_AVGPOOL;
    l->count_pad = (int)ir_attr_int(nd, "count_include_pad", 0);
    if (l->pt >= l->kh || l->pl >= l->kw || l->pb >= l->kh || l->pr >= l->kw)
        return bk_fail(c, node, e, "padding must be smaller than the window");
    if (nd->nout > 1 && nd->out[1] >= 0) return bk_fail(c, node, e, "the Indices output of MaxPool is not lowered");
    ly->gen = conv_gen;
    return choose_tiles(c, ly, e);
}
