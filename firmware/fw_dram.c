/* fw_dram.c - the firmware's map of device DRAM: which blocks belong to
 * the host (model images, staging buffers) and which to loaded models
 * (weights, activations, io, relocated streams, profile buffers).
 *
 * A sorted table of allocated blocks; allocation is first fit over the gaps
 * between them, above FW_DRAM_RESERVED so that address 0 never names a
 * block. Small and predictable rather than clever: a model takes five
 * blocks and a run takes none.
 */
#include "firmware/fw.h"

int fw_dram_alloc(FwDram *d, uint64_t size, uint64_t align, uint32_t owner, uint64_t *addr)
{
    if (size == 0 || d->n >= FW_MAX_DRAM_BLOCKS) return -1;
    if (align < 64) align = 64;
    uint64_t lo = FW_DRAM_RESERVED;
    for (int i = 0; i <= d->n; i++) {
        uint64_t hi = i < d->n ? d->blk[i].addr : d->size;
        uint64_t a = (lo + align - 1) / align * align;
        if (a >= lo && a <= hi && size <= hi - a) {
            for (int j = d->n; j > i; j--) d->blk[j] = d->blk[j - 1];
            d->blk[i] = (FwDramBlock){ a, size, owner };
            d->n++;
            *addr = a;
            return 0;
        }
        if (i < d->n) lo = d->blk[i].addr + d->blk[i].size;
    }
    return -1;
}

static void remove_at(FwDram *d, int i)
{
    for (int j = i; j + 1 < d->n; j++) d->blk[j] = d->blk[j + 1];
    d->n--;
}

int fw_dram_free(FwDram *d, uint64_t addr, uint32_t owner)
{
    for (int i = 0; i < d->n; i++)
        if (d->blk[i].addr == addr && d->blk[i].owner == owner) { remove_at(d, i); return 0; }
    return -1;
}

void fw_dram_free_owner(FwDram *d, uint32_t owner)
{
    for (int i = d->n - 1; i >= 0; i--)
        if (d->blk[i].owner == owner) remove_at(d, i);
}
