/* window.c - what the window lowerings (convolution and pooling, one layer
 * at a time in conv.c, several chained in a layer group in chain.c) share:
 * the DMA of a box of an NCHW tensor in DRAM to or from an HWC block in
 * LMEM, and the conv / pool instruction over an HWC block of input rows.
 * Why HWC in LMEM: the matrix unit's conv reads an HWC image, and the
 * vector unit's pools and epilogues work on its rows; DRAM stays NCHW
 * (docs/backend.md, "DRAM layout"). */
#include <string.h>
#include "compiler/lower/lower.h"

AtlInsn bk_nchw_box(int dt, int load, uint64_t base, int C, int H, int W, int n, int c0, int cn, int r0, int rn, int w0,
                    int wn, uint64_t lmem)
{
    uint32_t sh[4];
    int64_t ds[4], ss[4];
    uint64_t at = base + (((uint64_t)((int64_t)n * C + c0) * (uint64_t)H + (uint64_t)r0) * (uint64_t)W + (uint64_t)w0) *
                             (uint64_t)isa_dtype_size(dt);
    if (load) {
        /* walked (row, channel, column): consecutive bursts come from
         * different channel planes, spread over the DRAM channels */
        sh[0] = 1; sh[1] = (uint32_t)rn; sh[2] = (uint32_t)cn; sh[3] = (uint32_t)wn;
        ss[0] = 0; ss[1] = W; ss[2] = (int64_t)H * W; ss[3] = 1;
        ds[0] = 0; ds[1] = (int64_t)wn * cn; ds[2] = 1; ds[3] = cn;
        return bk_dma(dt, ISA_SPACE_LMEM, lmem, ISA_SPACE_DRAM, at, sh, ds, ss);
    }
    sh[0] = 1; sh[1] = (uint32_t)rn; sh[2] = (uint32_t)wn; sh[3] = (uint32_t)cn;
    bk_compact(sh, ss);
    ds[0] = 0; ds[1] = W; ds[2] = 1; ds[3] = (int64_t)H * W;
    return bk_dma(dt, ISA_SPACE_DRAM, at, ISA_SPACE_LMEM, lmem, sh, ds, ss);
}

AtlInsn bk_window_insn(const BkLow *l, int op, int dt, uint64_t src, int cin, BkSpan ys, BkSpan xs)
{
    AtlInsn in;
    memset(&in, 0, sizeof in);
    in.op = (uint8_t)op;
    in.dtype = (uint8_t)dt;
    in.src = src;
    in.cin = (uint32_t)cin; in.ih = (uint32_t)ys.n; in.iw = (uint32_t)xs.n;
    in.kh = (uint8_t)l->kh; in.kw = (uint8_t)l->kw; in.sh = (uint8_t)l->sh; in.sw = (uint8_t)l->sw;
    in.pad_top = (uint8_t)ys.pa; in.pad_bottom = (uint8_t)ys.pb;
    in.pad_left = (uint8_t)xs.pa; in.pad_right = (uint8_t)xs.pb;
    if (op == ISA_OP_CONV) { in.dh = (uint8_t)l->dh; in.dw = (uint8_t)l->dw; }
    else in.count_pad = (uint8_t)l->count_pad;
    return in;
}
