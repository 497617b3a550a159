/* lower.h - one op -> one lowered layer (target/layer.h).
 *
 * bk_lower_node looks the node's op up in the op table (optable.c: the
 * one place that says which lowering runs an op and on which dtypes) and
 * calls that lowering, which fills the layer: tiles, LMEM slot layout, the
 * tile generator and, where the tile shape is open, the candidate shapes
 * (BkLayer.shapes) the group search prices. A lowering never decides which
 * core runs a tile, never orders tiles and never calls the cost model.
 * slice.c answers slice inference: which box of an input an output box
 * needs (halos included). Each lowering's file header says what it reads
 * and guarantees. */
#ifndef ATOLL_COMPILER_LOWER_LOWER_H
#define ATOLL_COMPILER_LOWER_LOWER_H
#include <stdint.h>
#include "compiler/alloc/alloc.h"
#include "compiler/target/layer.h"

/* optable.c: lowers node `node` into ly (0, or -1 naming the node). */
int bk_lower_node(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* 1 when the op table has a lowering for op (tools list what the chip runs). */
int bk_op_lowered(const char *op);
/* 0 when node's tensor dtypes are ones its lowering handles (floats;
 * integers for the ops the table marks), else -1 naming the node. */
int bk_check_dtypes(const BkCtx *c, int node, AtlErr *e);
/* chain.c: a layer group of 2..BK_CHAIN_MAX window layers (their own
 * lowerings, in execution order; float, or int8: Int8Conv, i8 pools and
 * Int8Add) lowered as one layer ly whose
 * intermediates stay in LMEM, with its candidate slice heights; 0, 1 when
 * the members do not form such a chain (ly then unusable), -1 on error. */
#define BK_CHAIN_MAX 12
typedef struct BkChain BkChain;
int bk_lower_chain(BkCtx *c, const BkLayer *const *members, int nm, BkLayer *ly, AtlErr *e);
/* 1 when layer ly may be a member of a chain (a window layer, or an
 * Int8Add): group formation searches backwards over such layers only. */
int bk_chain_can_join(const BkCtx *c, const BkLayer *ly);
/* The IR nodes of a chain layer's members, in order (at most max); their count. */
int bk_chain_nodes(const BkLayer *ly, int *nodes, int max);
/* The rows [*r0, *r1) of the last member's output (of *oc channels) that
 * tile t of a chain layer stores; -1 when its tiles are not one slice of
 * one image each (several images, streamed weights) or its last member is
 * not a float window layer (an int8 or elementwise last member: with it
 * owning its output, test_int8_group's identity_bottleneck read a wrong
 * SRAM copy on a1, not understood yet). */
int bk_chain_tile_rows(const BkLayer *ly, int t, int *r0, int *r1, int *oc);
/* The output channels [*c0, *c1) tile t of a group stores when it has
 * channel slices across cores; otherwise leaves them (all channels). */
void bk_chain_tile_chans(const BkLayer *ly, int t, int *c0, int *c1);
/* Marks the tensors a chain layer keeps in LMEM (every member's output but
 * the last's) as BkPlace.internal. */
void bk_chain_mark_internal(BkCtx *c, const BkLayer *ly);
/* 1 when a chain layer (its shape applied) streams some member's weights. */
int bk_chain_streams(const BkLayer *ly);
/* 1 when the group runs its hidden channels in C slices (chain.c). */
int bk_chain_cslices(const BkLayer *ly);
/* A chain layer whose streamed weights are staged in SRAM (split " wsram"):
 * the pieces its prologue copies them in, one per step's chunk, each
 * flagged, unless the cost model priced the copy whole lower
 * (BkLayer.gather_whole); else 1. bk_chain_tile_piece: the piece tile t's
 * chunk lies in. */
int bk_chain_stage_pieces(const BkLayer *ly);
int bk_chain_tile_piece(const BkLayer *ly, int t);
/* Bytes of LMEM a chain layer uses on each core: resident weights and both slots. */
uint64_t bk_chain_lmem(const BkLayer *ly);
/* A chain layer's row buffers (their count), and where buffer b lies:
 * the offset in the slot (streaming: in LMEM, below the slots), NULL when
 * there is no such buffer. Tests move buffers with it to corrupt a plan;
 * buffers are numbered as the members meet them (member 0's input, its
 * output, then each member's new input, residual and output). */
int bk_chain_buffers(const BkLayer *ly);
uint64_t *bk_chain_buffer_off(BkLayer *ly, int b);
/* Pairs of a chain layer's row buffers that share LMEM bytes (packed by
 * lifetime: never live at the same step of a slice). */
int bk_chain_shared_pairs(const BkLayer *ly);
/* Proves a chain layer's LMEM plan sound (its slice height applied): every
 * row buffer and the slot scratch (f32 accumulator, residual, activation
 * temp) aligned, inside the slot, holding the most rows any slice puts in
 * it, and overlapping no other region live at the same step of a slice
 * (row buffers from the loads or their writer to their last reader or the
 * store; scratch always); the resident weights and biases aligned,
 * disjoint and below the slots; both slots inside LMEM; every member reads
 * only rows its slice holds. 0, or -1 naming the first member's node and
 * what is wrong (e.g. the two overlapping buffers). Called for every
 * slice height the compiler applies (apply_rows). */
int bk_chain_check(const BkCtx *c, const BkLayer *ly, AtlErr *e);

/* chain_ops.c: group members other than window layers. bk_member_op:
 * BK_MOP_CONCAT (a 4-D Concat along C of 2..BK_MOP_MAXIN inputs),
 * BK_MOP_RESIZE (a nearest Resize upsampling H and W by integers,
 * bk_resize_up), BK_MOP_ELEM (a float Add/Sub/Mul/Max/Min of two
 * non-constant tensors of the output's shape, the second possibly per
 * channel: bk_member_per_channel), BK_MOP_LRESIZE (an interpolating
 * Resize lowered by resize.c, bk_resize_member_ok), else BK_MOP_NONE. */
enum { BK_MOP_NONE, BK_MOP_CONCAT, BK_MOP_RESIZE, BK_MOP_ELEM, BK_MOP_LRESIZE };
#define BK_MOP_MAXIN 4
int bk_member_op(const BkCtx *c, const BkLayer *ly);
/* 1 when tensor t is a run-time [N, C, 1, 1] operand of the 4-D output y
 * (read with stride 0 over its pixels). */
int bk_member_per_channel(const IrGraph *g, int t, const IrTensor *y);
/* A Concat member: px pixels of cn channels at src into channels
 * [c0, c0+cn) of the ctot-channel pixels at dst (one v.mov). */
void bk_member_concat_code(BkCode *k, int dt, uint64_t dst, int ctot, int c0, uint64_t src, int cn, uint32_t px);
/* A Resize member: output rows [lo, lo+n) (W x fw columns of C) at dst
 * from input rows from qlo (W columns) at src, factors fh x fw. */
void bk_member_resize_code(BkCode *k, int dt, uint64_t dst, int lo, int n, uint64_t src, int qlo, int fh, int fw, int W,
                           int C);
/* move.c: a nearest Resize/Upsample whose every axis k maps output o to
 * input o / f[k] (f[k] >= 1 integers): 0 and f, else -1. */
int bk_resize_up(const BkCtx *c, int node, int *f);
/* attn.c: an attention group: MatMul (scores = Q x K^T, its alpha),
 * Softmax over the scores' rows and MatMul (x V), three consecutive
 * layers whose scores and probabilities nothing else reads, lowered as
 * one layer (BK_K_ATTN) whose tiles keep them in LMEM; its candidate
 * query-row slices. 0; 1 when the layers are no such group (ly then
 * unusable); -1 on error. */
#define BK_ATTN_MAX 12          /* members: up to six copies or Q's scale before (Transposes, Gathers
                                 * of one index, a Mul / Div by a constant), MatMul, up to two
                                 * elementwise, Softmax, MatMul, a Transpose of the output */
int bk_lower_attn(BkCtx *c, const BkLayer *const *members, int nm, BkLayer *ly, AtlErr *e);
/* The IR nodes of an attention layer (at most max); their count (0: not one). */
int bk_attn_nodes(const BkLayer *ly, int *nodes, int max);
/* Marks an attention layer's scores and probabilities as BkPlace.internal. */
void bk_attn_mark_internal(BkCtx *c, const BkLayer *ly);

/* cast.c: Cast, CastLike: a copy between equal storage dtypes, else one v.cast. */
int bk_lower_cast(BkCtx *c, int node, BkLayer *ly, AtlErr *e);

/* slice.c: slice inference. A box of a tensor: per dim (the tensor's
 * rank), the first index and the extent. */
typedef struct BkBox { int rank; int64_t lo[IR_MAXDIM], n[IR_MAXDIM]; } BkBox;
/* The box of input `in` of the layer's node that output box `out` (of
 * output 0) needs: for convolutions and pools the rows and columns of
 * the window with the halo (kernel, stride, dilation, padding), clipped
 * to the input, all input channels of the output's groups; for
 * elementwise ops the same box, a broadcast dim reduced to its one index;
 * for every other layer the whole input. 0, or -1 naming the node. */
int bk_slice_need(const BkCtx *c, const BkLayer *ly, int in, const BkBox *out, BkBox *need, AtlErr *e);
/* One axis of a window (kernel k, stride s, dilation d, padding pad
 * before) over an input of `size`: outputs [o0, o0+on) read inputs
 * [a, a+n), and the window hangs pa before and pb after them (padding). */
typedef struct BkSpan { int a, n, pa, pb; } BkSpan;
BkSpan bk_window_span(int o0, int on, int s, int pad, int d, int k, int size);
/* The most inputs `on` consecutive outputs read along that axis. */
int bk_window_extent(int on, int s, int d, int k, int size);

/* window.c: the DMA of rows [r0, r0+rn) x columns [w0, w0+wn) x channels
 * [c0, c0+cn) of image n of an NCHW tensor (C, H, W; tagged DRAM base) to
 * (load) or from the HWC block [rn][wn][cn] at LMEM lmem. */
AtlInsn bk_nchw_box(int dt, int load, uint64_t base, int C, int H, int W, int n, int c0, int cn, int r0, int rn, int w0,
                    int wn, uint64_t lmem);
/* The same for images n .. n+nn-1, every rs-th row from r0 (rn of them)
 * and every ws-th column from w0 (wn): the HWC blocks [rn][wn][cn] of the
 * images one after another in LMEM, i.e. one HWC block of nn*rn rows;
 * ls > 0: image i's block starts ls elements after image i-1's (the
 * stacked blocks of a windowed conv, bk_image_stack). */
typedef struct BkImgBox { int n, nn, c0, cn, r0, rn, rs, w0, wn, ws; int64_t ls; } BkImgBox;
AtlInsn bk_nchw_boxes(int dt, int load, uint64_t base, int C, int H, int W, const BkImgBox *b, uint64_t lmem);
/* The conv (op ISA_OP_CONV) or pool instruction of window layer l over the
 * HWC input block at src of cin channels whose rows and columns are the
 * spans ys, xs (their padding included); dst, weights, cout, groups and
 * acc are the caller's. */
AtlInsn bk_window_insn(const BkLow *l, int op, int dt, uint64_t src, int cin, BkSpan ys, BkSpan xs);
/* The tile grid of a window layer with the matrix unit (conv.c, qmatrix.c):
 * tile t's group (output-channel) chunk, first image n and image count nn
 * (BkLow.nb images a tile, the last chunk possibly fewer), row chunk,
 * column chunk and k chunk, k innermost; `out` the output tile (t / nkc).
 * bk_image_chunks: the count of image chunks, ceil(N / nb). */
typedef struct BkTilePos { int gci, n, nn, rci, wci, kci, out; } BkTilePos;
BkTilePos bk_tile_pos(const BkLow *l, int t);
/* 1 when some tile shape of conv ly may read its input from a copy in
 * the cluster's SRAM (input staging: when grouping, the input fits above
 * BkCtx.sram_stage; lower/conv.c offers it where chunks re-read it). */
int bk_conv_input_may_stage(const BkCtx *c, const BkLayer *ly);
/* BkLayer.cores_ok of a conv whose weight chunks are staged in SRAM
 * (BkLayer.wsram; lower/conv.c, lower/qmatrix.c): 1 when every cluster's
 * chunks take distinct slots (chunk g in slot g mod wsram_slots). */
int bk_wsram_cores_ok(const BkCtx *c, const BkLayer *ly, const int *tile_core);
int bk_image_chunks(const BkLow *l);
/* 1 when every row chunk and column chunk of l's shape reads some input
 * and its padding fits the instruction's fields (a chunk of columns all in
 * the padding reads nothing). */
int bk_window_spans_ok(const BkLow *l);
/* Chunk sizes giving 1, 2, 3, 4, 6, 8, 12, 16, ... chunks of n (distinct
 * sizes, down to 1) into out; returns the count. */
int bk_chunk_sizes(int n, int *out, int cap);
/* A (k chunks, column chunks) pair of the split search, and its order:
 * ascending chunk product, fewer k chunks on ties (qsort). */
typedef struct BkSplitPair { int kc, w, prod, nk; } BkSplitPair;
int bk_split_pair_cmp(const void *a, const void *b);
/* Tiles of several images (conv.c, qmatrix.c), when grouping (--group
 * none keeps the tiles of before); pointwise convs: 1x1, no padding,
 * groups == 1:
 * bk_compact_ok: a strided one may load only the rows and columns it
 *   reads and run at stride 1 (BkLow.compact; with bands too: their DMA
 *   rewrite walks every sh-th row);
 * bk_multi_image_ok: its tiles may cover several images (BkLow.nb; stride
 *   1 or compact), the HWC blocks of nb images making one of nb x rows rows;
 *   with `stacked` (conv.c) also any other groups == 1 conv (not with row
 *   bands), whole images stacked as bk_image_stack says;
 * bk_image_counts: the image counts > 1 to offer (N, N/2, ... rounded up;
 *   only min(BkOptions.tile_images, N) when that is set) into out
 *   (BK_IMAGE_COUNTS at most); their number;
 * bk_keep_images: with BkOptions.tile_images, drops the candidates (whose
 *   int nb lies nb_at bytes into each) of other image counts, when some
 *   of that count fit. */
#define BK_IMAGE_COUNTS 8
int bk_compact_ok(const BkCtx *c, const BkLow *l);
int bk_multi_image_ok(const BkCtx *c, const BkLow *l, int stacked);
int bk_image_counts(const BkCtx *c, const BkLow *l, int stacked, int *out);
void bk_keep_images(const BkCtx *c, const BkLow *l, int stacked, BkShapes *q, size_t nb_at);
/* A whole-image tile of several images: image i's input rows (its rows
 * span, padding included) lie in LMEM rows [i ib, (i+1) ib) of one tall
 * HWC block, `top` physical zero rows above them and zero rows below up
 * to ib (a multiple of the row stride); the conv over that block with no
 * top padding and bottom padding `pb` (so it writes every row of the
 * accumulator) gives image i's output rows at [i ob, i ob + OH), ob =
 * ib / sh; the rows between are garbage, never stored. Stride 1 with
 * no more bottom than top padding: no zero rows below, ib = top + H (the
 * next image's top rows are this one's bottom padding; the last image's
 * is the conv's, pb = the kernel's extent - 1). A pointwise or compact
 * conv: ib = ob = OH, top = pb = 0, the blocks of before. */
typedef struct BkStack { int ib, ob, top, pb; } BkStack;
BkStack bk_image_stack(const BkLow *l);
/* The rows around the images of a stacked input block at lmem (nn images
 * of n loaded rows, cols columns, cn channels of dtype dt): per image
 * sk->top rows above them and the rest of sk->ib below, set to value (the
 * padding's: 0, or an int8 conv's zero point) by two dma.fill queued as
 * loads of the tile. */
void bk_stack_zeros(BkCode *k, int dt, int32_t value, uint64_t lmem, int nn, const BkStack *sk, int n, int cols, int cn);

/* dwvec.c: a depthwise float conv's tile on the vector unit (BkLow.vdw).
 * bk_dw_vector_ok: 1 when l's shape may take it (grouping on, not
 * BkCtx.dw_matrix; groups == C == OC, f32, bf16 or f16, constant weights, one image and
 * k chunk a tile); bk_dw_pix: the pixel (or tap) stride in f32 elements of
 * n channels, a multiple of the LMEM alignment; bk_dw_in_bytes /
 * bk_dw_w_bytes: a slot's padded input block and weights at l's tile
 * shape; bk_dw_input: queues `in` (bk_nchw_boxes' load of the window's
 * input rows ys and columns xs, cn channels) into the padded block at lin
 * and the dma.fill of its padding; bk_dw_weight_strides: a weight load of
 * shape (1, 1, taps, ocn) given the tap stride; bk_dw_taps: in bf16 /
 * f16 first the v.cast of the block at l_dwx and the weights at l_dww to
 * f32 at l_in and l_w, then the v.mul / v.add of every tap into the f32
 * HWC accumulator acc [rn][wn][cn] (l_tmp as large) of the tile at slot. */
int bk_dw_vector_ok(const BkCtx *c, const BkLow *l);
/* bk_dw_chain_ok: 1 when l (an f32 depthwise conv, "same" padding, C x 4
 * bytes a multiple of the alignment) may run on the vector unit as a
 * chain member; bk_dw_chain_taps: its taps over a packed buffer (src: the
 * first input row of span ys, xs.n columns a row, C channels a pixel)
 * into on x ow outputs at acc (products at tmp, the same layout), each
 * tap clipped to the outputs reading inside the buffer; -1 when the
 * centre tap does not cover them all. */
int bk_dw_chain_ok(const BkCtx *c, const BkLow *l);
/* chain.c: the MACs of a group's depthwise members on the vector unit
 * (halos included; BkLayer.run_macs counts them too), 0 for a layer. */
uint64_t bk_chain_vec_macs(const BkLayer *ly);
int bk_dw_chain_taps(const BkLow *l, BkCode *k, uint64_t src, BkSpan ys, BkSpan xs, uint64_t w, uint64_t acc,
                     uint64_t tmp, int on, int ow);
/* The same on a band of C of l's channels (the buffers hold C channels a
 * pixel; w: the band's first weight in l's [kh][kw][l->C] image). */
int bk_dw_chain_taps_band(const BkLow *l, BkCode *k, uint64_t src, BkSpan ys, BkSpan xs, uint64_t w, int C,
                          uint64_t acc, uint64_t tmp, int on, int ow);
int bk_dw_pix(const BkCtx *c, int n);
uint64_t bk_dw_in_bytes(const BkCtx *c, const BkLow *l);
uint64_t bk_dw_w_bytes(const BkCtx *c, const BkLow *l);
void bk_dw_input(const BkCtx *c, const BkLow *l, BkCode *k, AtlInsn *in, uint64_t lin, BkSpan ys, BkSpan xs, int cn);
void bk_dw_weight_strides(const BkCtx *c, AtlInsn *in, int ocn);
void bk_dw_taps(const BkCtx *c, const BkLow *l, BkCode *k, uint64_t slot, uint64_t acc, BkSpan ys, BkSpan xs, int rn,
                int wn, int cn);
/* The split's text, "N1 C4 H8" (N: image chunks; "Nb4 ..." when a tile
 * covers 4 images) and " W3", " K2" when split so; its length. */
int bk_window_split(const BkLow *l, char *out, size_t cap);

/* elem_prog.c: the table of elementwise register programs built from
 * the rounding, comparison, select, bitwise and transcendental vector ops.
 * bk_elem_program appends node nd's program to l (inputs are registers
 * 0..nin-1 with their dtypes in l->reg_dt, scratch from nin on), sets the
 * dtype of every register it writes, its output register and scratch
 * count: 1 done, 0 no table row for nd, -1 the program is too long.
 * bk_step_dtypes sets reg_dt of the dst of steps from..nsteps-1: a v.cast
 * gives cast_dt, v.sel its moved operand's dtype, other steps their a's. */
int bk_elem_has_program(const IrGraph *g, const IrNode *nd);
int bk_elem_program(const IrGraph *g, const IrNode *nd, BkLow *l, int nin, int *out, int *nscratch);
void bk_step_dtypes(BkLow *l, int from, int cast_dt);

/* The lowerings (one file each): fill ly for node `node`; 0, or -1 naming the node. */
int bk_lower_conv(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* conv.c: the candidate shapes of a K split across clusters' phase 1
 * (ly lowered by bk_lower_conv, its shapes dropped, BkLow.kb_parts set);
 * 1 when none fits. */
int bk_conv_kbands_shapes(BkCtx *c, BkLayer *ly, AtlErr *e);
/* conv.c: the pieces a convolution's staged input is copied in without
 * bands (docs/backend.md, "Input staging in pieces"): its K chunks, each
 * flagged, when it stages its input (in_sram), has several images and
 * several K chunks, its weights are not multicast and the cost model has
 * not priced the copy whole lower (BkLayer.gather_whole); else 1. */
int bk_conv_stage_pieces(const BkCtx *c, const BkLayer *ly);
/* kbands.c (docs/backend.md, "K split across clusters"): bk_kbands_ok, 1
 * when the lowered conv layer ly may split K across the clusters;
 * bk_lower_kbands lowers its node again as phase 1 (p1, set up as the
 * driver sets a layer up before lowering) and phase 2 (p2), the partials
 * at tagged DRAM `part` ([clusters][OC][OH][OW] f32), each with candidate
 * shapes; 0, 1 when no shape fits, -1 on error. */
int bk_kbands_ok(const BkCtx *c, const BkLayer *ly);
int bk_lower_kbands(BkCtx *c, const BkLayer *conv, BkLayer *p1, BkLayer *p2, uint64_t part, AtlErr *e);
/* kbands_part.c: phase 1's stores of part q of the HWC f32 block at LMEM acc (box b of
 * the output, b->cn channels a pixel): the channels of q's own band into
 * the cluster's SRAM when BkLow.kb_sram, the others into the partials. */
void bk_kbands_store(BkCode *k, const BkLow *l, int q, const BkImgBox *b, uint64_t acc);
/* kbands_part.c: the channels [*lo, *hi) of part q kept in SRAM (none
 * without kb_sram), and their SRAM-tagged address. */
void bk_kbands_own_band(const BkLow *l, int q, int *lo, int *hi);
uint64_t bk_kbands_sram(const BkLow *l);
int bk_lower_pool(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
int bk_lower_mm(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* mm.c: the batch counts of matmul operands A, B and result Y
 * (products of their dims before the last two) in bt[0..2]; -1 naming the
 * node unless A's and B's are each 1 or Y's. */
int bk_mm_batches(const BkCtx *c, int node, const IrTensor *a, const IrTensor *b, const IrTensor *y, int64_t bt[3],
                  AtlErr *e);
int bk_lower_elem(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
int bk_lower_reduce(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
int bk_lower_softmax(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* vec.c: the register program BkLow.steps of a reduction / softmax over
 * a block of shape sh (reduced along dim 2), its registers BK_R_* at the
 * LMEM addresses addr (absolute); appended to k's compute list. */
void bk_red_steps(const BkLow *l, int dt, const uint64_t addr[BK_R_NREGS], const uint32_t sh[4], BkCode *k);
int bk_lower_layernorm(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
int bk_lower_move(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* move.c: Identity as a DMA copy (bk_lower_move), or with a fused
 * activation as a vector move (bk_lower_elem). */
int bk_lower_identity(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* pad.c: the copies and fills of a Pad node (x at xa, y at ya). */
/* gather.c: Gather with run-time indices (dma.gather). */
int bk_lower_gather(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* arg.c: ArgMax, ArgMin, Hardmax (v.rargmax / v.rargmin). */
int bk_lower_arg(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* Row tiling of a [1][outer][od2][od3] layer (lw.od set): runs of outer
 * rows, each per_row bytes of LMEM besides `fixed`, spread over the cores
 * (chunk[1] rows a tile); assigns the tiles. bk_row_range: tile t's first
 * row and *on = its row count. */
int bk_row_tiles(BkCtx *c, int node, BkLayer *ly, int64_t outer, uint64_t per_row, uint64_t fixed, AtlErr *e);
uint32_t bk_row_range(const BkLow *l, int t, uint32_t *on);
/* loss.c: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss. */
int bk_lower_loss(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* gather_el.c: GatherElements (flat indices on chip, dma.gather);
 * ScatterElements and Scatter (the same indices, dma.scatter). */
int bk_lower_gather_elements(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* gather_nd.c: GatherND (row indices on chip, dma.gather);
 * ScatterND (the same rows, dma.scatter). */
int bk_lower_gather_nd(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* The DMA `op` (dma.gather / dma.scatter) of n rows of l->Nn elements (dt,
 * es; split as l->mt x l->nt), DRAM to DRAM, indexed by the i32 table at
 * LMEM idx, l->K rows along the indexed end. bk_row_slices: sets Nn, mt, nt
 * for rows of `slice` elements, or -1 naming the node. */
AtlInsn bk_row_index_dma(const BkLow *l, int op, uint64_t dst, uint64_t src, uint64_t idx, uint32_t n);
int bk_row_slices(BkCtx *c, int node, BkLow *l, int64_t slice, AtlErr *e);
/* revseq.c: ReverseSequence (source rows on chip, dma.gather). */
int bk_lower_revseq(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* scatter.c: shared by ScatterElements / Scatter (gather_el.c)
 * and ScatterND (gather_nd.c). bk_scatter_check: reduction "none"
 * and updates (input 2) in chip dtype dt, else -1 naming the node.
 * bk_scatter_tiles: all tiles on one core, in order. bk_scatter_copy_loads:
 * the flat DRAM copy of n elements x -> y as loads (first tile only). */
int bk_scatter_check(const BkCtx *c, int node, int dt, AtlErr *e);
int bk_scatter_tiles(BkCtx *c, BkLayer *ly, int ntiles, AtlErr *e);
void bk_scatter_copy_loads(BkCode *k, int dt, uint64_t y, uint64_t x, uint64_t n);
/* onehot.c: OneHot (v.eq against constant tables, v.sel). */
int bk_lower_onehot(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* topk.c: TopK by k rounds of v.rargmax / v.rargmin. */
int bk_lower_topk(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* trilu.c: Trilu as a select by a constant mask. */
int bk_lower_trilu(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* 0 when tensor t's storage dtype is `want`, else -1 naming node, t and
 * both dtypes (the checks of the lowerings that mix dtypes). */
int bk_need_dt(const BkCtx *c, int node, int t, int want, AtlErr *e);
/* An i32 weight 0..n-1, with INT32_MIN at index `hole` (-1: none). */
int bk_iota_weight(BkCtx *c, int64_t n, int64_t hole, uint64_t *tagged, AtlErr *e);
/* resize.c: interpolating Resize on the matrix unit. */
int bk_lower_resize(BkCtx *c, int node, BkLayer *ly, AtlErr *e);
/* 1 when ly is bk_lower_resize's lowering. */
int bk_resize_interp(const BkLayer *ly);
/* The input rows (cols 0: axis H) or columns (cols 1: W) that outputs
 * [o0, o0+n) of such a layer read: from the first to the last with a
 * non-zero weight (linear: floor and ceil of the mapped coordinates,
 * clamped); the same ones along an axis it does not resize. */
BkSpan bk_resize_span(const BkLow *l, int cols, int o0, int n);
/* 1 when such a layer may be a layer group member: it resizes H or W and
 * every output has weights (no tf_crop_and_resize extrapolation). */
int bk_resize_member_ok(const BkLayer *ly);
/* The member's prologue: R_w [OW][W] f32 into resident LMEM at dst. */
void bk_resize_member_wmatrix(BkCode *k, const BkLow *l, uint64_t dst);
/* The member's output rows [o0, o0+n) (OW x C f32, HWC) at y from its
 * input rows from xlo (W x C) at x: R_h's block of those rows loaded into
 * rh, T = R_h x X (one mm over the rows, into t, or into y when W is not
 * resized), then one mm per row Y = R_w x T (R_w resident at rw): the
 * layer's own sums, each output's taps in the same order. */
void bk_resize_member_code(BkCode *k, const BkLow *l, int C, uint64_t y, int o0, int n, uint64_t x, int xlo,
                           uint64_t rw, uint64_t rh, uint64_t t);
/* vec.c: the 4-D box tiling of vector layers (BkLow od, chunk,
 * nch): tile t's origin and extents; chunks that fit `cap` bytes at
 * bytes_per_elem per box element, one tile per core when possible. */
void bk_box_of(const BkLow *l, int t, uint32_t o[4], uint32_t ext[4]);
int bk_fit_box(BkCtx *c, BkLow *l, uint64_t cap, uint64_t bytes_per_elem);
int bk_pad_copies(BkCtx *c, int node, BkLayer *ly, int *cap, uint64_t xa, uint64_t ya, AtlErr *e);
/* layout.c: the copies of Tile, DepthToSpace, SpaceToDepth. */
int bk_layout_copies(BkCtx *c, int node, BkLayer *ly, int *cap, uint64_t xa, uint64_t ya, AtlErr *e);
/* A graph output that constant folding made a constant: a copy from its
 * weights-region image into its io slot (nothing else writes it). */
int bk_lower_const_output(BkCtx *c, int tensor, BkLayer *ly, AtlErr *e);
#endif
