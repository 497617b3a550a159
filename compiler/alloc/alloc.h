/* alloc.h - where things live: tensors and weights in DRAM, a layer's
 * buffers in LMEM.
 *   place.c   DRAM placement of every tensor: io region, activations by
 *             liveness (alloc/memplan.c), views sharing their root's storage
 *   limits.c  sizes checked against the chip before any lowering
 *   weights.c constants in the weights region (deduplicated blobs)
 *   lmem.c    a layer's two slots, its resident region, slot buffers
 *   alloc/memplan.c the liveness packer (alloc/memplan.h) */
#ifndef ATOLL_COMPILER_ALLOC_ALLOC_H
#define ATOLL_COMPILER_ALLOC_ALLOC_H
#include <stddef.h>
#include <stdint.h>
#include "compiler/target/layer.h"

/* place.c */
int bk_place(BkCtx *c, AtlErr *e);
uint64_t bk_tensor_addr(const BkCtx *c, int tensor); /* tagged, for placed non-constants */
int bk_tensor_root(const BkCtx *c, int tensor);      /* the tensor whose storage it shares (views, fusions) */
/* Placement split: a pointwise convolution whose node has this attribute
 * (1) may write its output over its input where that dies there and the
 * stage's SRAM is short (docs/backend.md, "Outputs over dying inputs");
 * bk_overlay_shape_ok: its shape allows it (one image, 1x1, stride 1, no
 * padding, one group, no more output channels than input ones). */
#define BK_OVERLAY_ATTR "atoll_overlay_input"
int bk_overlay_shape_ok(const IrGraph *g, int node);
/* Bands: the rows either side of a row that the consumers of root tensor
 * t (and of the tensors sharing its storage) may read, BK_BAND_NEAR when
 * not all are known (BkBand.near; alloc/place.c) */
int bk_band_reach(const BkCtx *c, int t);
/* Row bands: the first of the `rows` rows of an H-row tensor that cluster
 * k of K keeps in its SRAM (its share of the rows in the middle, the rest
 * a margin each side for output-row chunks that cross a share's edge;
 * rows is the tensor's BkBand.rows, chosen by placement). */
int bk_band_window(int H, int K, int k, int rows);
int bk_tensor_in_dram(BkCtx *c, int tensor, uint64_t *tagged, AtlErr *e); /* constants too */

/* limits.c: after placement, before lowering: no empty tensor but
 * constants, dimensions below 2^32, each tensor and the io + activation
 * regions within the chip's DRAM; the error names the tensor (and node). */
int bk_check_limits(const BkCtx *c, AtlErr *e);

/* weights.c */
/* Adds a weight blob (data already in its final dtype and layout). */
int bk_weight(BkCtx *c, const void *data, size_t bytes, uint64_t *tagged, AtlErr *e);
/* The same for a malloc'd image the writer takes over (bk_weight_take
 * frees or keeps it; the caller must not touch it again). */
int bk_weight_take(BkCtx *c, void *data, size_t bytes, uint64_t *tagged, AtlErr *e);
/* A constant tensor in its storage dtype (bk_tensor_dt; integers as chip
 * integers, failing on a value outside their range), row-major (placed on
 * first use). */
int bk_const_addr(BkCtx *c, int tensor, uint64_t *tagged, AtlErr *e);
/* Stores constant `tensor` in the weights region in its storage dtype and
 * returns its tagged address, without making that its placement. */
int bk_const_image(BkCtx *c, int tensor, uint64_t *tagged, AtlErr *e);

/* lmem.c */
/* Rounds bytes up to the LMEM operand alignment. */
uint64_t bk_align_up(const BkCtx *c, uint64_t bytes);
/* Slot allocator: returns the offset of a new buffer of `bytes`, aligned to
 * the LMEM alignment and bank width; *used is the running size. */
uint64_t bk_slot_alloc(const BkCtx *c, uint64_t *used, uint64_t bytes);
/* Reserves `bytes` of resident LMEM below the slots and sets
 * ly->slot_off/slot_size (0 bytes: the default slots); -1 if no slot room
 * is left. */
int bk_reserve_resident(const BkCtx *c, BkLayer *ly, uint64_t bytes);
#endif
