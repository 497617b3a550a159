/* resident.c - the group-resident LMEM region below the two slots.
 *
 * A group may keep data in LMEM for the whole layer instead of per tile:
 * multicast weights (written once per cluster by the emitter's prologue) or
 * accumulators that several consecutive tiles of a core add into (K split).
 * That data lives in [0, slot_off) of every core; the two pipeline slots
 * share the rest (BkGroup.slot_off, slot_size).
 * Guarantees: slot_off is the reserved size rounded up to a bank row
 *   (banks x bank_width), so both slots still start on bank 0 and see the
 *   same bank pattern (bk_tile.c); each slot is half of what is left,
 *   rounded down to a bank row. Reserving 0 bytes gives the default
 *   geometry (slot_off 0, slot_size = BkCtx.slot).
 * Shared by the lowerings that reserve such a region (bk_lower_mm.c,
 * bk_lower_conv.c, bk_lower_loss.c: the sums of a reduced loss). */
#include "compiler/target/target.h"

uint64_t bk_align_up(const BkCtx *c, uint64_t bytes)
{
    return (bytes + c->align - 1) / c->align * c->align;
}

int bk_reserve_resident(const BkCtx *c, BkGroup *g, uint64_t bytes)
{
    if (!bytes) { g->slot_off = 0; g->slot_size = c->slot; return 0; }
    uint64_t row = (uint64_t)c->chip->lmem_banks * c->chip->lmem_bank_width, lm = (uint64_t)c->chip->lmem_bytes;
    uint64_t off = (bytes + row - 1) / row * row;
    if (off >= lm) return -1;
    uint64_t sz = (lm - off) / 2 / row * row;
    if (!sz) return -1;
    g->slot_off = off;
    g->slot_size = sz;
    return 0;
}
