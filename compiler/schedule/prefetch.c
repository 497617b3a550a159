/* prefetch.c - weight prefetch across a segment's barrier (docs/backend.md,
 * "Weight prefetch across the barrier").
 *
 * A layer whose weights are staged in cluster SRAM (BkLayer.wsram) starts
 * with the lowest core of each cluster that uses a chunk copying the
 * chunk's first key DRAM -> SRAM, and no tile of it loads before that
 * landed. Those first copies depend on nothing any layer writes, so the
 * segment before can issue them: each such core gets, in the previous
 * segment's table, an MCAST action (pf = BK_PF_COPY) of the next
 * segment's tile whose key it would stage first, at a position of its DMA
 * queue (BK_PF_*: after one of its last loads, or before its barrier).
 * The copy completes before that core's DMA engine joins the barrier (one
 * transfer at a time, in order), so the next segment's tiles see it; there
 * the staging action keeps only its flag (pf = BK_PF_FLAG), or goes when no
 * other core of the cluster waits for it. The copy signals nothing, so
 * every segment's semaphores still balance.
 * SRAM: the prefetched blocks must not touch what the current segment
 * reads or writes in SRAM while they land: above BkCtx.sram_stage (below
 * it are the bands' activations, which staging never touches) that is its
 * own staged weight slots (wsram) or its staged input (in_sram, taken
 * whole even where bands move it into the band). The next layer's slots
 * go at the bottom of the room (where they are planned), at its top, or
 * just above one of the current segment's ranges, the first that leaves
 * the copied blocks disjoint from what the current segment uses in every
 * cluster; before that, every staged layer keeps only the slots its tiles
 * need (bk_prefetch_compact) so that two neighbours fit side by side.
 * Multicast weights (BkLayer.mcast, no input staging): the next layer's
 * prologue writes its whole weights from DRAM into every core's resident
 * LMEM before any matrix unit of the cluster starts (ResNet-50's layer1
 * 3x3 convolutions on a1: 11 K of 48 K cycles, every cluster reading the
 * same 147 KB at once). The lowest core of each cluster that will issue
 * it copies those bytes, laid out as in LMEM, DRAM -> SRAM in the segment
 * before (BK_PF_MC, the prologue's own DMAs re-aimed), and the prologue
 * then multicasts them SRAM -> LMEM (BK_PF_IN_MC; BkSegment.pf_base).
 * Who decides: the cost model (cost/prefetch.c), per boundary. */
#include <stdlib.h>
#include <string.h>
#include "compiler/schedule/schedule.h"
#include "compiler/lower/lower.h"
#include "isa/regs.h"

/* The chunk of the layer's weight key `key` (keys are chunk-major, run keys a chunk). */
static int key_chunk(const BkLayer *ly, int key) { return key / (ly->tile_run > 0 ? ly->tile_run : 1); }

int bk_prefetch_tile(const BkCtx *c, const BkSegment *sg, int core)
{
    const BkLayer *ly = sg->layer;
    if (ly->direct || core < sg->cores.first || core >= sg->cores.first + sg->cores.count) return -1;
    int cpc = c->chip->cores_per_cluster, first = -1;
    for (int t = 0; t < ly->ntiles && first < 0; t++)
        if (sg->tile_core[t] == core) first = t;
    if (first < 0 || ly->tile_wkey[first] < 0) return -1;
    if (!ly->wsram) return first;   /* its first tile's weight loads */
    if (!ly->stage) return -1;
    int chunk = key_chunk(ly, ly->tile_wkey[first]);
    /* the lowest core of the cluster whose tiles use the chunk stages it */
    for (int t = 0; t < ly->ntiles; t++)
        if (sg->tile_core[t] / cpc == core / cpc && sg->tile_core[t] < core && ly->tile_wkey[t] >= 0 &&
            key_chunk(ly, ly->tile_wkey[t]) == chunk)
            return -1;
    return first;
}

/* SRAM byte range [lo, hi) of chunk g's staging slot in layer ly. */
static void slot_range(const BkLayer *ly, int g, uint64_t *lo, uint64_t *hi)
{
    *lo = ly->wsram_base + (uint64_t)(g % ly->wsram_slots) * ly->wsram_chunk;
    *hi = *lo + ly->wsram_chunk;
}

/* 1 when [lo, hi) touches what segment sg reads or writes above
 * sram_stage in cluster cl: its staged input, its staged weight slots
 * (or a layer group's staged streamed weights), a K split's own partials
 * (lower/kbands.c). */
static int touches(const BkCtx *c, const BkSegment *sg, int cl, uint64_t lo, uint64_t hi)
{
    const BkLayer *ly = sg->layer;
    int cpc = c->chip->cores_per_cluster;
    if (ly->in_sram) {
        const BkLow *l = &ly->lw;
        uint64_t n = (uint64_t)l->N * l->C * l->H * l->W * (uint64_t)(l->es ? l->es : c->es);
        if (lo < c->sram_stage + (n > 64 ? n : 64) && c->sram_stage < hi) return 1;
    }
    /* its tiles load weights its prologue staged (a layer group's streamed weights) */
    if (lo < ly->wsram_hi && ly->wsram_lo < hi) return 1;
    /* its prologue reads the multicast weights the segment before fetched */
    if (sg->pf_in == BK_PF_IN_MC && lo < sg->pf_base + sg->pf_span && sg->pf_base < hi) return 1;
    /* a K split's sum reads its own band of a part there (lower/kbands.c) */
    if (ly->lw.kb_phase == 2 && ly->lw.kb_sram) {
        const BkLow *l = &ly->lw;
        uint64_t a = l->kb_sram - 1, n = (uint64_t)(l->OC / l->kb_parts) * l->OH * l->OW * 4;
        if (lo < a + n && a < hi) return 1;
    }
    if (!ly->wsram) return 0;
    for (int u = 0; u < ly->ntiles; u++) {
        uint64_t a, b;
        if (sg->tile_core[u] / cpc != cl) continue;
        slot_range(ly, bk_tile_pos(&ly->lw, u).gci, &a, &b);
        if (a < hi && lo < b) return 1;
    }
    return 0;
}

/* 1 when, in every cluster, the slots segment nx's stagers copy into (its
 * layer at its current wsram_base) miss what sg uses there. */
static int disjoint(const BkCtx *c, const BkSegment *sg, const BkSegment *nx)
{
    const BkLayer *nl = nx->layer;
    for (int core = nx->cores.first; core < nx->cores.first + nx->cores.count; core++) {
        int t = bk_prefetch_tile(c, nx, core);
        if (t < 0) continue;
        uint64_t lo, hi;
        slot_range(nl, bk_tile_pos(&nl->lw, t).gci, &lo, &hi);
        if (touches(c, sg, core / c->chip->cores_per_cluster, lo, hi)) return 0;
    }
    return 1;
}

/* The fewest staging slots for ly's tiles on these cores (BkLayer.cores_ok:
 * no two chunks of a cluster in one slot), so that its blocks take less
 * of the room and a neighbour's fit beside them; addresses only, the cost
 * is the same. */
static void compact_slots(const BkCtx *c, BkLayer *ly, const int *tile_core)
{
    int full = ly->wsram_slots;
    for (int n = 1; n < full; n++) {
        ly->wsram_slots = n;
        if (!ly->cores_ok || ly->cores_ok(c, ly, tile_core)) return;
    }
    ly->wsram_slots = full;
}

void bk_prefetch_compact(const BkCtx *c, BkSchedule *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->seg[i].layer->wsram && s->seg[i].layer->wsram_slots > 1 && !s->seg[i].pf_in && !s->seg[i].pf_next)
            compact_slots(c, s->seg[i].layer, s->seg[i].tile_core);
}

/* Segment nx loads its weights per tile from constant DRAM (the weights
 * region): every core's first tile's weight loads (generated into k) read
 * only there, and some core has some. 1 yes, 0 no, -1 error. */
static int lmem_fetchable(BkCtx *c, const BkSegment *nx, BkCode *k, AtlErr *e)
{
    const BkLayer *nl = nx->layer;
    if (nl->wsram || nl->mcast || nl->direct || !nl->gen) return 0;
    int some = 0;
    for (int core = nx->cores.first; core < nx->cores.first + nx->cores.count; core++) {
        int t = bk_prefetch_tile(c, nx, core);
        if (t < 0) continue;
        bk_code_reset(k);
        if (nl->gen(c, nl, t, nl->slot_off /* slot 0 (bk_slot_base) */, k, e)) return -1;
        if (k->oom) return atl_fail(e, "out of memory generating code");
        for (int j = 0; j < k->nld; j++) {
            const AtlInsn *in = &k->ld[j];
            if (!k->ld_w[j]) continue;
            if (in->op != ISA_OP_DMA_COPY || in->src_space != ISA_SPACE_DRAM || in->dst_space != ISA_SPACE_LMEM ||
                in->src >> ATL_RELOC_SHIFT != (uint64_t)ABM_REGION_WEIGHTS + 1)
                return 0;
            some = 1;
        }
    }
    return some;
}

/* Bytes from a DMA's destination address to the end of what it writes. */
static uint64_t dst_extent(const AtlInsn *in)
{
    int64_t last = 0;
    for (int d = 0; d < 4; d++) last += (int64_t)(in->shape[d] ? in->shape[d] - 1 : 0) * in->dst_stride[d];
    return (uint64_t)last + (uint64_t)isa_dtype_size(in->dtype);   /* strides in bytes */
}

/* 1 when core issues segment sg's prologue in its cluster (the lowest
 * core there that runs a tile, as the schedule's table gives it the MCAST). */
static int mc_issuer(const BkCtx *c, const BkSegment *sg, int core)
{
    int cpc = c->chip->cores_per_cluster, low = -1;
    for (int t = 0; t < sg->layer->ntiles; t++) {
        int k = sg->tile_core[t];
        if (k / cpc == core / cpc && (low < 0 || k < low)) low = k;
    }
    return low == core;
}

/* Segment nx's prologue multicasts resident weights and does nothing else:
 * every DMA copies constant weights DRAM -> LMEM (its code into k). 1 yes,
 * *span the bytes from its lowest LMEM destination to its highest end; 0
 * no; -1 error. */
static int mc_fetchable(BkCtx *c, const BkSegment *nx, BkCode *k, uint64_t *span, AtlErr *e)
{
    const BkLayer *nl = nx->layer;
    if (!nl->mcast || nl->in_sram || nl->wsram || nl->direct || !nl->prologue) return 0;
    bk_code_reset(k);
    if (nl->prologue(c, nl, k, e)) return -1;
    if (k->oom) return atl_fail(e, "out of memory generating code");
    if (k->nst < 1 || k->nld || k->ncp) return 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    int cut = 0;   /* some DMA can be cut in a part per core (bk_prefetch_mc_part: none empty) */
    for (int j = 0; j < k->nst; j++) {
        const AtlInsn *in = &k->st[j];
        for (int d = 0; d < 4; d++) cut |= in->shape[d] >= (uint32_t)c->chip->cores_per_cluster;
        if (in->op != ISA_OP_DMA_COPY || in->src_space != ISA_SPACE_DRAM || in->dst_space != ISA_SPACE_LMEM ||
            in->src >> ATL_RELOC_SHIFT != (uint64_t)ABM_REGION_WEIGHTS + 1)
            return 0;
        for (int d = 0; d < 4; d++)
            if (in->dst_stride[d] < 0) return 0;
        if (in->dst < lo) lo = in->dst;
        if (in->dst + dst_extent(in) > hi) hi = in->dst + dst_extent(in);
    }
    *span = (hi - lo + 63) / 64 * 64;
    return cut;
}

void bk_prefetch_mc_code(BkCode *k, uint64_t base, int copy)
{
    uint64_t lo = UINT64_MAX;
    for (int j = 0; j < k->nst; j++)
        if (k->st[j].dst_space == ISA_SPACE_LMEM && k->st[j].dst < lo) lo = k->st[j].dst;
    for (int j = 0; j < k->nst; j++) {
        AtlInsn *in = &k->st[j];
        if (in->dst_space != ISA_SPACE_LMEM || in->src_space != ISA_SPACE_DRAM) continue;
        uint64_t at = base + (in->dst - lo);
        if (copy) {
            in->dst_space = ISA_SPACE_SRAM;
            in->dst = at;
        } else {
            in->src_space = ISA_SPACE_SRAM;
            in->src = at;
            memcpy(in->src_stride, in->dst_stride, sizeof in->src_stride);
        }
    }
}

/* Appends to out[*n] part `part` of `parts` of DMA in: cut along its
 * outermost dimension longer than 1, each part a range of it, so that
 * the parts' byte ranges are disjoint (the race detector checks bounding
 * ranges); one shorter than parts is taken apart index by index and each
 * piece cut the same way; nothing longer than 1: whole to the last part. */
static void cut_part(AtlInsn in, int part, int parts, AtlInsn *out, int *n, int cap)
{
    int d = 0;
    while (d < 4 && in.shape[d] <= 1) d++;
    if (d == 4) {
        if (part == parts - 1 && *n < cap) out[(*n)++] = in;
        return;
    }
    if (in.shape[d] < (uint32_t)parts) {
        uint32_t len = in.shape[d];
        in.shape[d] = 1;
        for (uint32_t i = 0; i < len; i++) {
            AtlInsn one = in;
            one.src += (uint64_t)((int64_t)i * in.src_stride[d]);
            one.dst += (uint64_t)((int64_t)i * in.dst_stride[d]);
            cut_part(one, part, parts, out, n, cap);
        }
        return;
    }
    uint32_t a = (uint32_t)((uint64_t)in.shape[d] * (uint64_t)part / (uint64_t)parts);
    uint32_t b = (uint32_t)((uint64_t)in.shape[d] * (uint64_t)(part + 1) / (uint64_t)parts);
    in.shape[d] = b - a;
    in.src += (uint64_t)((int64_t)a * in.src_stride[d]);
    in.dst += (uint64_t)((int64_t)a * in.dst_stride[d]);
    if (*n < cap) out[(*n)++] = in;
}

int bk_prefetch_mc_part(BkCode *k, int part, int parts)
{
    int cap = 0, n = 0;
    for (int j = 0; j < k->nst; j++) {
        uint64_t pieces = 1;
        for (int d = 0; d < 4; d++) pieces *= k->st[j].shape[d] < (uint32_t)parts && k->st[j].shape[d] ? k->st[j].shape[d] : 1;
        cap += (int)(pieces < 4096 ? pieces : 4096);
    }
    AtlInsn *out = malloc((size_t)(cap ? cap : 1) * sizeof *out);
    if (!out) return -1;
    for (int j = 0; j < k->nst; j++) cut_part(k->st[j], part, parts, out, &n, cap);
    k->nst = 0;
    for (int j = 0; j < n; j++) bk_code_st(k, &out[j]);
    free(out);
    return k->oom ? -1 : 0;
}

/* Segment i fetches segment i+1's multicast weights into SRAM: the first
 * place (the bottom of the room, its top, or just above one of segment
 * i's ranges) that misses what segment i uses in every cluster. 0 done,
 * 1 not possible, -1 error. */
static int set_mc(BkCtx *c, BkSegment *sg, BkSegment *nx, int pos, AtlErr *e)
{
    /* SRAM above sram_stage must be free: not where activations take it
     * (in every cluster's SRAM, or an instance's with placement split) */
    if (c->sram_copies || c->split) return 1;
    BkCode k;
    memset(&k, 0, sizeof k);
    uint64_t span = 0;
    int ok = mc_fetchable(c, nx, &k, &span, e);
    bk_code_free(&k);
    if (ok <= 0) return ok < 0 ? -1 : 1;
    uint64_t top = c->chip->sram_bytes;
    if (top < c->sram_stage + span) return 1;
    uint64_t cand[4 + 64];
    int nc = 0;
    const BkLayer *ly = sg->layer;
    cand[nc++] = c->sram_stage;
    cand[nc++] = (top - span) / 64 * 64;
    if (ly->in_sram) {
        const BkLow *l = &ly->lw;
        cand[nc++] = c->sram_stage + ((uint64_t)l->N * l->C * l->H * l->W * (uint64_t)(l->es ? l->es : c->es) + 63) / 64 * 64;
    }
    if (sg->pf_in == BK_PF_IN_MC) cand[nc++] = (sg->pf_base + sg->pf_span + 63) / 64 * 64;
    for (int k2 = 0; ly->wsram && k2 < ly->wsram_slots && nc < (int)(sizeof cand / sizeof cand[0]); k2++)
        cand[nc++] = (ly->wsram_base + (uint64_t)(k2 + 1) * ly->wsram_chunk + 63) / 64 * 64;
    int cpc = c->chip->cores_per_cluster;
    for (int j = 0; j < nc; j++) {
        if (cand[j] < c->sram_stage || cand[j] + span > top) continue;
        int clash = 0;
        for (int core = nx->cores.first; core < nx->cores.first + nx->cores.count && !clash; core++)
            clash = mc_issuer(c, nx, core) && touches(c, sg, core / cpc, cand[j], cand[j] + span);
        if (clash) continue;
        sg->pf_next = nx;
        sg->pf_pos = pos;
        nx->pf_in = BK_PF_IN_MC;
        nx->pf_base = cand[j];
        nx->pf_span = span;
        return 0;
    }
    return 1;
}

int bk_prefetch_mc_assume(BkCtx *c, BkSegment *sg, AtlErr *e)
{
    sg->pf_in = 0;
    if (c->prefetch_never || c->sram_copies || c->split) return 0;
    BkCode k;
    memset(&k, 0, sizeof k);
    uint64_t span = 0;
    int ok = mc_fetchable(c, sg, &k, &span, e);
    bk_code_free(&k);
    if (ok <= 0 || (uint64_t)c->chip->sram_bytes < c->sram_stage + span) return ok < 0 ? -1 : 0;
    sg->pf_in = BK_PF_IN_MC;
    sg->pf_base = c->sram_stage;
    sg->pf_span = span;
    return 1;
}

int bk_prefetch_set(BkCtx *c, BkSchedule *s, int i, int pos, AtlErr *e)
{
    if (i < 0 || i + 1 >= s->n || pos < BK_PF_NONE || pos >= BK_PF_POSITIONS)
        return atl_fail(e, "internal: prefetch at segment %d of %d, position %d", i, s->n, pos);
    BkSegment *sg = &s->seg[i], *nx = &s->seg[i + 1];
    BkLayer *nl = nx->layer;
    if (pos == BK_PF_NONE) {
        if (sg->pf_next && nx->pf_in == BK_PF_IN_SRAM) nl->wsram_base = nl->wsram_floor;
        sg->pf_next = NULL;
        sg->pf_pos = BK_PF_NONE;
        nx->pf_in = 0;
        return 0;
    }
    if (pos == BK_PF_SPREAD && !(nl->mcast && !nl->wsram)) return 1;   /* parts: multicast weights only */
    if (sg->pf_next) {   /* already set: only the position moves (into LMEM: only before the barrier) */
        if (nx->pf_in == BK_PF_IN_LMEM && pos != BK_PF_BARRIER) return 1;
        sg->pf_pos = pos;
        return 0;
    }
    if (c->split || c->sram_copies > 1 || nl->direct || nx->pf_next ||
        sg->cores.first != nx->cores.first || sg->cores.count != nx->cores.count ||
        sg->bar.set.first != nx->bar.set.first || sg->bar.set.count != nx->bar.set.count ||
        sg->bar.scope != ISA_SCOPE_CHIP || nx->bar.scope != ISA_SCOPE_CHIP)
        return 1;
    if (nl->mcast && !nl->wsram) return set_mc(c, sg, nx, pos, e);
    if (!nl->wsram) {
        /* into LMEM: only where this segment's engines are done with it,
         * just before the barrier (its last store waited for its last compute) */
        if (pos != BK_PF_BARRIER) return 1;
        BkCode k;
        memset(&k, 0, sizeof k);
        int ok = lmem_fetchable(c, nx, &k, e);
        bk_code_free(&k);
        if (ok <= 0) return ok < 0 ? -1 : 1;
        sg->pf_next = nx;
        sg->pf_pos = pos;
        nx->pf_in = BK_PF_IN_LMEM;
        return 0;
    }
    int any = 0;
    for (int core = nx->cores.first; core < nx->cores.first + nx->cores.count && !any; core++)
        any = bk_prefetch_tile(c, nx, core) >= 0;
    if (!nl->stage || !any) return 1;
    /* where the next layer's slots may start: the planned place (the
     * bottom of the room), the top, or just above one of the ranges the
     * current segment uses */
    uint64_t span = (uint64_t)nl->wsram_slots * nl->wsram_chunk, top = c->chip->sram_bytes, floor = nl->wsram_floor;
    if (top < floor + span) return 1;
    uint64_t cand[2 + 64];
    int nc = 0;
    cand[nc++] = floor;
    cand[nc++] = (top - span) / 64 * 64;
    const BkLayer *ly = sg->layer;
    if (ly->in_sram) {
        const BkLow *l = &ly->lw;
        cand[nc++] = c->sram_stage + ((uint64_t)l->N * l->C * l->H * l->W * (uint64_t)(l->es ? l->es : c->es) + 63) / 64 * 64;
    }
    for (int k = 0; ly->wsram && k < ly->wsram_slots && nc < (int)(sizeof cand / sizeof cand[0]); k++)
        cand[nc++] = (ly->wsram_base + (uint64_t)(k + 1) * ly->wsram_chunk + 63) / 64 * 64;
    for (int k = 0; k < nc; k++) {
        if (cand[k] < floor || cand[k] + span > top) continue;
        nl->wsram_base = cand[k];
        if (disjoint(c, sg, nx)) {
            sg->pf_next = nx;
            sg->pf_pos = pos;
            nx->pf_in = BK_PF_IN_SRAM;
            return 0;
        }
    }
    nl->wsram_base = floor;
    return 1;
}

/* Index in t just after its load number `want` (0-based; loads and
 * copies), or of its barrier (the last action) when want < 0 or it has
 * fewer loads. */
static int after_load(const BkTable *t, int want)
{
    int seen = 0;
    for (int j = 0; want >= 0 && j < t->n; j++)
        if ((t->a[j].kind == BK_ACT_LOAD || t->a[j].kind == BK_ACT_COPY) && seen++ == want) return j + 1;
    return t->n - 1;
}

/* Inserts a prefetch MCAST (no wait, no signal) at index at of t. */
static int insert_pf(BkTable *t, int at, int tile, int pf, int part, int parts, AtlErr *e)
{
    if (bk_table_reserve(t, e)) return -1;
    for (int j = t->n; j > at; j--) t->a[j] = t->a[j - 1];
    t->n++;
    BkAction *a = &t->a[at];
    *a = (BkAction){0};
    a->kind = BK_ACT_MCAST;
    a->tile = tile;
    a->piece = -1;
    a->wait = a->signal = -1;
    a->pf = (uint8_t)pf;
    a->part = (uint8_t)part;
    a->parts = (uint8_t)parts;
    return 0;
}

/* Multicast weights (BK_PF_IN_MC): in each cluster where segment nx runs
 * tiles, the core that will issue nx's prologue copies them whole at the
 * position, or (BK_PF_SPREAD) every core of sg's set in the cluster
 * copies a part, in BK_PF_SPREAD_PARTS pieces spread over its loads
 * (piece s after load s x loads / BK_PF_SPREAD_PARTS), so that no DMA
 * queue holds its stores or loads behind the whole copy. */
static int mc_actions(const BkCtx *c, const BkSegment *sg, int core, BkTable *t, AtlErr *e)
{
    const BkSegment *nx = sg->pf_next;
    int cpc = c->chip->cores_per_cluster, cl = core / cpc, any = 0;
    for (int k = cl * cpc; k < (cl + 1) * cpc && !any; k++) any = mc_issuer(c, nx, k);
    if (!any || (sg->pf_pos != BK_PF_SPREAD && !mc_issuer(c, nx, core))) return 0;
    int lo = cl * cpc > sg->cores.first ? cl * cpc : sg->cores.first;
    int hi = (cl + 1) * cpc < sg->cores.first + sg->cores.count ? (cl + 1) * cpc : sg->cores.first + sg->cores.count;
    int spread = sg->pf_pos == BK_PF_SPREAD ? BK_PF_SPREAD_PARTS : 1, nl = 0, whole = spread == 1;
    int back = sg->pf_pos == BK_PF_LOAD1 ? 1 : sg->pf_pos == BK_PF_LOAD2 ? 2 : sg->pf_pos == BK_PF_LOAD4 ? 4 : 0;
    for (int j = 0; j < t->n; j++) nl += t->a[j].kind == BK_ACT_LOAD || t->a[j].kind == BK_ACT_COPY;
    /* the last part first: the earlier positions stay where they are */
    for (int s = spread - 1; s >= 0; s--) {
        int want = spread > 1 ? s * nl / spread : back && nl ? (nl - back > 0 ? nl - back : 0) : -1;
        if (insert_pf(t, after_load(t, nl ? want : -1), -1, BK_PF_MC, whole ? 0 : (core - lo) * spread + s,
                      whole ? 0 : (hi - lo) * spread, e))
            return -1;
    }
    return 0;
}

int bk_prefetch_actions(const BkCtx *c, const BkSegment *sg, int core, BkTable *t, AtlErr *e)
{
    if (!sg->pf_next || core < sg->cores.first || core >= sg->cores.first + sg->cores.count) return 0;
    if (t->n < 1 || t->a[t->n - 1].kind != BK_ACT_BARRIER) return 0;
    if (sg->pf_next->pf_in == BK_PF_IN_MC) return mc_actions(c, sg, core, t, e);
    int tile = bk_prefetch_tile(c, sg->pf_next, core);
    if (tile < 0) return 0;
    /* where: after load number nl - back (at least the first), or before the barrier */
    int nl = 0, back = sg->pf_pos == BK_PF_LOAD1 ? 1 : sg->pf_pos == BK_PF_LOAD2 ? 2 : sg->pf_pos == BK_PF_LOAD4 ? 4 : 0;
    for (int j = 0; j < t->n; j++) nl += t->a[j].kind == BK_ACT_LOAD || t->a[j].kind == BK_ACT_COPY;
    int at = back && nl ? after_load(t, nl - back > 0 ? nl - back : 0) : t->n - 1;
    return insert_pf(t, at, tile, sg->pf_next->pf_in == BK_PF_IN_LMEM ? BK_PF_LMEM : BK_PF_COPY, 0, 0, e);
}
