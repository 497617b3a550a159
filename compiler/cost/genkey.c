/* genkey.c - a segment's memo key from what generates its code (genkey.h).
 *
 * A segment's queues are the schedule's tables (schedule/schedule.c: the
 * segment's cores, its tiles' cores, the layer's tiles, weight keys, slots
 * and prologue) filled with the code of the layer's generator, staging and
 * prologue (BkLayer.gen, .stage, .prologue) for each tile. For a conv,
 * pool or matmul layer alone, those read the layer (its lowered state
 * BkLow, its scalar fields, its weight keys), the context's scalar
 * settings (dtype, SRAM staging offset, copies, split, ...) and the chip;
 * the graph and the per-tensor tables only while the layer is lowered and
 * its shape applied, which leaves the result in the layer. The key hashes
 * all of those whole, pointers aside (what they point to is hashed when
 * it can matter, or the segment gets no key): a superset of what the code
 * is made of, so the same key means the same code, and the same price.
 * Left out (no key): bands (per-tensor band state, cells of other
 * layers), layer groups (a chain's plan is a block of its own), a
 * prefetch across the barrier (pf_next: the next segment's state), a
 * K split, a per-kind table (BkLow.aux), DMA-only layers, and staged
 * pipelines (io_sram). */
#include <string.h>
#include "compiler/cost/genkey.h"
#include "compiler/cost/lanes.h"

/* the lowerings whose generators read only the layer and the context's
 * scalars (lower/conv.c, qconv.c, qmatrix.c, mm.c) */
static int keyed_kind(int kind)
{
    return kind == BK_K_CONV || kind == BK_K_POOL || kind == BK_K_MM;
}

/* zeroes the bytes of s after its text */
static void clear_tail(char *s, size_t size)
{
    size_t n = strnlen(s, size);
    memset(s + n, 0, size - n);
}

int bk_gen_key(const BkCtx *c, const BkSegment *sg, uint64_t key[BK_GEN_KEY])
{
    const BkLayer *ly = sg->layer;
    if (!ly || c->bands || c->band || c->io_sram || ly->chain || ly->direct || ly->lw.aux || ly->copies ||
        ly->lw.kb_parts || !keyed_kind(ly->lw.kind) || sg->pf_next || sg->cell_owner || sg->row_mask ||
        sg->chan_run || (ly->ntiles && !sg->tile_core))
        return 0;
    Lanes h = lanes_start();
    lanes_bytes(&h, c->chip, sizeof *c->chip);
    /* the context's settings: its pointers (the graph, the per-tensor and
     * per-node tables, the writer, the pricer) left out */
    BkCtx x = *c;
    x.g = NULL;
    x.chip = NULL;
    x.w = NULL;
    x.pl = NULL;
    x.skip = x.gelu_src = x.act_on = x.tail = NULL;
    x.io_fixed = NULL;
    x.flow = NULL;
    /* the region sizes placement found (the emitter's: the code has the
     * layer's addresses), the SRAM placement found (its result is in the
     * layer and sram_stage), the K split's scratch (no K split here) and
     * the tile search's own state */
    x.weight_bytes = x.act_bytes = x.act_sum = x.io_bytes = x.io_fixed_bytes = 0;
    x.sram_cap = x.act_sram = x.kb_base = x.kb_bytes = 0;
    x.pf_layer = x.band_look = 0;
    x.pf_room = 0;
    lanes_bytes(&h, &x, sizeof x);
    /* the layer: every scalar, the generators' addresses; its candidate
     * shapes and the look options' copies are the search's, not the code's */
    BkLayer y = *ly;
    y.tile_wkey = NULL;
    memset(&y.shapes, 0, sizeof y.shapes);
    /* its ids (the emitter's tag; the node names the errors) and the band
     * way's options (group/look.c) */
    y.layer_id = y.node = y.tensor = 0;
    memset(y.look, 0, sizeof y.look);
    y.nlook = y.look_cur = y.look_pf_layer = 0;
    y.look_pf_room = 0;
    /* strings as their text: a shape applied before may leave bytes past
     * the NUL (split is the summary's only: no generator reads it) */
    memset(y.split, 0, sizeof y.split);
    clear_tail(y.lw.act, sizeof y.lw.act);
    clear_tail(y.lw.t_act, sizeof y.lw.t_act);
    lanes_bytes(&h, &y, sizeof y);
    if (ly->ntiles) {
        if (ly->tile_wkey) lanes_bytes(&h, ly->tile_wkey, (size_t)ly->ntiles * sizeof *ly->tile_wkey);
        lanes_bytes(&h, sg->tile_core, (size_t)ly->ntiles * sizeof *sg->tile_core);
    }
    /* the segment: its cores and what the one before fetched (its barrier
     * is the emitter's, and the prefetch's choice; its instance and
     * activation copy the emitter's) */
    BkSegment s;
    memset(&s, 0, sizeof s);
    s.cores = sg->cores;
    s.cores_used = sg->cores_used;
    s.pf_pos = sg->pf_pos;
    s.pf_in = sg->pf_in;
    s.pf_base = sg->pf_base;
    s.pf_span = sg->pf_span;
    lanes_bytes(&h, &s, sizeof s);
    lanes_end(&h, key);
    key[2] = (uint64_t)ly->ntiles;
    key[3] = (uint64_t)(uint32_t)sg->cores.first | (uint64_t)(uint32_t)sg->cores.count << 32;
    key[4] = 0x67656e6b6579ull;   /* "genkey" */
    return 1;
}
