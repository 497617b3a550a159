/* scatter.c - what the Scatter lowerings share (ScatterElements and
 * Scatter in lower/gather_el.c, ScatterND in lower/gather_nd.c, which
 * compute the row indices exactly as their gather mirrors do and end each
 * tile with a dma.scatter instead of a dma.gather).
 *
 * y = data with some rows replaced: the copy data -> y must land before any
 * row is scattered, and rows must be written in the order of the updates
 * (the interpreter's: a repeated index keeps the last). So every tile runs
 * on one core, in order: the copy is the first load of the first tile (the
 * pipeline's LOADED semaphore orders it before that tile's computes, whose
 * COMPUTED semaphore orders them before its scatter), and the scatters sit
 * on that core's DMA queue in tile order. The DMA engine cannot accumulate,
 * so only reduction "none" is lowered. */
#include <string.h>
#include "compiler/lower/lower.h"

int bk_scatter_check(const BkCtx *c, int node, int dt, AtlErr *e)
{
    const IrNode *nd = &c->g->nodes[node];
    const char *red = ir_attr_str(nd, "reduction", "none");
    if (strcmp(red, "none"))
        return bk_fail(c, node, e, "reduction '%s' is not lowered: the DMA engine cannot accumulate (only \"none\")", red);
    return bk_need_dt(c, node, nd->in[2], dt, e);
}

int bk_scatter_tiles(BkCtx *c, BkLayer *ly, int ntiles, AtlErr *e)
{
    return bk_set_tiles(ly, ntiles, ntiles, e);   /* one run: all on the first core, in order */
}

void bk_scatter_copy_loads(BkCode *k, int dt, uint64_t y, uint64_t x, uint64_t n)
{
    const uint64_t W = 65535;   /* one 16-bit DMA dim */
    uint64_t es = (uint64_t)isa_dtype_size(dt), done = 0;
    while (done < n) {
        uint64_t rows = (n - done) / W, w = rows ? W : n - done;
        if (rows > W) rows = W;
        if (!rows) rows = 1;
        uint32_t sh[4] = {1, 1, (uint32_t)rows, (uint32_t)w};
        int64_t st[4];
        bk_compact(sh, st);
        AtlInsn in = bk_dma(dt, ISA_SPACE_DRAM, y + done * es, ISA_SPACE_DRAM, x + done * es, sh, st, st);
        bk_code_ld(k, &in, 0);
        done += rows * w;
    }
}
