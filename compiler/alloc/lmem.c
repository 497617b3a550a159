/* lmem.c - the LMEM layout of a layer on every core: two slots and the
 * resident region below them.
 *
 * LMEM of every core is split into two equal slots (double buffering): the
 * tile being computed uses one while the next tile loads into the other.
 * A layer may first keep data in LMEM for the whole layer instead of per
 * tile: multicast weights (written once per cluster by the prologue the
 * schedule places) or accumulators that several consecutive tiles of a
 * core add into (K split). That data lives in [0, slot_off) of every
 * core; the two slots share the rest (BkLayer.slot_off, slot_size).
 * Guarantees:
 *   - without a resident region a slot is lmem/2 rounded down to a whole
 *     bank row (banks x bank_width; BkCtx.slot), so slot 1 starts on bank
 *     0 like slot 0 and both see the same bank pattern (the cost of a tile
 *     does not depend on its slot);
 *   - with one, slot_off is the reserved size rounded up to a bank row and
 *     each slot is half of what is left, rounded down to a bank row;
 *     reserving 0 bytes gives the default geometry;
 *   - every buffer in a slot starts on max(lmem alignment, bank_width)
 *     (bk_slot_alloc), so operands start at the beginning of a bank row.
 * Shared by every lowering (slot buffers) and by those that reserve a
 * resident region (lower/mm.c, lower/conv.c, lower/loss.c: the sums of a
 * reduced loss). */
#include "compiler/alloc/alloc.h"

uint64_t bk_align_up(const BkCtx *c, uint64_t bytes)
{
    return (bytes + c->align - 1) / c->align * c->align;
}

uint64_t bk_slot_alloc(const BkCtx *c, uint64_t *used, uint64_t bytes)
{
    uint64_t off = bk_align_up(c, *used);
    *used = off + bk_align_up(c, bytes);
    return off;
}

int bk_reserve_resident(const BkCtx *c, BkLayer *ly, uint64_t bytes)
{
    if (!bytes) { ly->slot_off = 0; ly->slot_size = c->slot; return 0; }
    uint64_t row = (uint64_t)c->chip->lmem_banks * c->chip->lmem_bank_width, lm = (uint64_t)c->chip->lmem_bytes;
    uint64_t off = (bytes + row - 1) / row * row;
    if (off >= lm) return -1;
    uint64_t sz = (lm - off) / 2 / row * row;
    if (!sz) return -1;
    ly->slot_off = off;
    ly->slot_size = sz;
    return 0;
}
