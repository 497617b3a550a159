/* kbands_part.c - where a K split across clusters keeps its partial
 * sums (lower/kbands.c; docs/backend.md, "K split across clusters"):
 * the stores of phase 1 (lower/conv.c) and the band each cluster keeps in
 * its SRAM, which phase 2 (lower/kbands.c) reads there.
 * Reads: a layer's BkLow (kb_parts, kb_part, kb_sram, N, OC, OH, OW).
 * Does: cuts a tile's store of part q into channel ranges: those of q's
 *   own band (the output channels phase 2 gives cluster q) into the
 *   cluster's SRAM when kb_sram is set, the others into the DRAM scratch.
 * Guarantees: every channel of the box stored once, from the HWC block
 *   whose pixels hold the box's channels.
 * Why a file of its own: both phases use it, and the phase-2 lowering
 *   lowers the node again through the op table (a circle otherwise:
 *   conv.c -> kbands.c -> optable.c -> conv.c). */
#include "compiler/lower/lower.h"

/* The own band's channels [lo, hi) of part q, kept in SRAM (none
 * without kb_sram) */
void bk_kbands_own_band(const BkLow *l, int q, int *lo, int *hi)
{
    int B = l->OC / l->kb_parts;
    *lo = l->kb_sram ? q * B : 0;
    *hi = l->kb_sram ? *lo + B : 0;
}

/* The SRAM-tagged address of the own band's copy of a part */
uint64_t bk_kbands_sram(const BkLow *l)
{
    return bk_addr(BK_SRAM_TAG_REGION, l->kb_sram - 1);
}

void bk_kbands_store(BkCode *k, const BkLow *l, int q, const BkImgBox *b, uint64_t acc)
{
    int lo, hi, c0 = b->c0, c1 = b->c0 + b->cn;
    bk_kbands_own_band(l, q, &lo, &hi);
    int s0 = lo > c0 ? lo : c0, s1 = hi < c1 ? hi : c1;
    if (s1 <= s0) s0 = s1 = c1;   /* nothing of the own band: all to DRAM */
    uint64_t part = l->kb_part + (uint64_t)q * l->N * l->OC * l->OH * l->OW * 4;
    /* channels [c0, s0) and [s1, c1) to the partials in DRAM, [s0, s1) to SRAM */
    int from[3] = {c0, s0, s1}, to[3] = {s0, s1, c1};
    for (int i = 0; i < 3; i++) {
        if (to[i] <= from[i]) continue;
        BkImgBox pb = *b;
        pb.c0 = i == 1 ? from[i] - lo : from[i];
        pb.cn = to[i] - from[i];
        uint64_t src = acc + (uint64_t)(from[i] - c0) * 4;
        AtlInsn in = i == 1 ? bk_nchw_boxes(ISA_F32, 0, bk_kbands_sram(l), hi - lo, l->OH, l->OW, &pb, src)
                            : bk_nchw_boxes(ISA_F32, 0, part, l->OC, l->OH, l->OW, &pb, src);
        /* the block's pixels hold b->cn channels, not pb.cn (its images
         * lie b->ls apart, in elements of the block, when stacked) */
        for (int d = b->nn > 1 && !b->ls ? 0 : 1; d < 3; d++) in.src_stride[d] = in.src_stride[d] / pb.cn * b->cn;
        bk_code_st(k, &in);
    }
}
