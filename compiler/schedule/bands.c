/* bands.c - row bands: activations split by rows over the clusters' SRAMs
 * on a chip whose clusters share only DRAM (--sram-activations bands;
 * docs/backend.md, "Row bands in every cluster").
 * Reads: the banded tensors of the placement (BkPlace.band, BkCtx.band),
 *   a segment's tiles on cores, the code the schedule walk generates.
 * Does: distributes a window layer's tiles over the clusters by output
 *   rows; rewrites each tile's DMAs on banded tensors row by row: rows of
 *   an input the own cluster wrote are read from its SRAM, the others from
 *   DRAM; the output's rows go to the own SRAM and, where another cluster
 *   reads them, to DRAM as well.
 * Guarantees: a load from SRAM reads only rows its own cluster's cores
 *   wrote there in the tensor's producing segment (closed by a chip
 *   barrier); once the schedule is final (bk_band_finalize) every row a
 *   load reads from DRAM was stored there. The rewrite runs where the
 *   schedule walk generates a tile's code, so the cost model and the
 *   emitter see the same instructions.
 * Why: on a1 the clusters reach each other only through DRAM; the early
 *   layers of a CNN have small weights and big activations, so splitting
 *   their rows over the clusters keeps the activations in SRAM and moves
 *   only the halo rows through DRAM. */
#include <stdlib.h>
#include <string.h>
#include "compiler/schedule/schedule.h"
#include "compiler/alloc/alloc.h"
#include "compiler/lower/lower.h"

/* Rows of another cluster within this distance make a row go to DRAM
 * while the consumers are not known yet (a 7x7 window's halo). */
#define BAND_NEAR 3

/* A window layer whose tiles bk_tile_pos places (lower/conv.c; not the
 * integer ConvInteger's own tiling, lower/qconv.c, which has no column or
 * channel chunks). */
static int window(const BkLayer *ly)
{
    const BkLow *l = &ly->lw;
    return !ly->chain && (l->kind == BK_K_CONV || l->kind == BK_K_POOL) && l->N == 1 && l->OH > 0 && l->rows > 0 &&
           l->nkc > 0 && l->nwc > 0 && l->nrc > 0;
}

static void tile_rows(const BkLow *l, int t, int *r0, int *r1)
{
    BkTilePos p = bk_tile_pos(l, t);
    *r0 = p.rci * l->rows;
    *r1 = *r0 + l->rows < l->OH ? *r0 + l->rows : l->OH;
}

int bk_band_distribute(BkSegment *sg, AtlErr *e)
{
    const BkLayer *ly = sg->layer;
    free(sg->row_owner);
    sg->row_owner = NULL;
    sg->nrows = 0;
    if (!ly->band_cores || ly->band_clusters < 1 || !window(ly) || !ly->ntiles) return 0;
    const BkLow *l = &ly->lw;
    int K = ly->band_clusters, cpc = ly->band_cores / K, run = ly->tile_run > 0 ? ly->tile_run : 1;
    int units = ly->ntiles / run;
    int *cl = malloc((size_t)units * sizeof *cl), *cnt = calloc((size_t)K, sizeof *cnt), *seen = calloc((size_t)K, sizeof *seen);
    uint8_t *used = calloc((size_t)ly->band_cores, 1);
    sg->row_owner = malloc((size_t)l->OH);
    int rc = -1;
    if (!cl || !cnt || !seen || !used || !sg->row_owner) { atl_fail(e, "out of memory distributing row bands"); goto done; }
    /* not with K split: its two accumulators alternate with the output
     * tile's index, so a core's output tiles must be consecutive */
    if (ly->bands && run == 1 && sg->cores.first == 0 && sg->cores.count == ly->band_cores) {
        /* run u to the cluster whose share of the rows holds its middle row */
        for (int u = 0; u < units; u++) {
            int r0, r1;
            tile_rows(l, u * run, &r0, &r1);
            int k = (int)((int64_t)(r0 + r1) * K / (2 * (int64_t)l->OH));
            cl[u] = k < K ? k : K - 1;
            cnt[cl[u]]++;
        }
        sg->cores_used = 0;
        for (int u = 0; u < units; u++) {
            int k = cl[u], core = k * cpc + (int)((int64_t)seen[k]++ * cpc / cnt[k]);
            for (int t = u * run; t < (u + 1) * run; t++) sg->tile_core[t] = core;
            if (!used[core]) { used[core] = 1; sg->cores_used++; }
        }
    }
    sg->nrows = l->OH;
    memset(sg->row_owner, -1, (size_t)l->OH);
    for (int t = 0; t < ly->ntiles; t++) {
        int r0, r1, k = sg->tile_core[t] / cpc;
        tile_rows(l, t, &r0, &r1);
        for (int r = r0; r < r1; r++)
            sg->row_owner[r] = (int8_t)(sg->row_owner[r] == -1 || sg->row_owner[r] == k ? k : -2);
    }
    /* a row outside its writer's SRAM window (bk_band_window) has no owner */
    for (int r = 0; r < l->OH; r++) {
        int k = sg->row_owner[r], base = k >= 0 && ly->band_rows ? bk_band_window(l->OH, K, k, ly->band_rows) : 0;
        if (k < 0 || (ly->band_rows && (r < base || r >= base + ly->band_rows))) sg->row_owner[r] = -2;
    }
    rc = 0;
done:
    free(cl); free(cnt); free(seen); free(used);
    return rc;
}

/* The banded root the segment's layer writes row by row (its owners in
 * sg->row_owner), -1 none: a window layer whose output is banded and
 * which does not read it. */
static int owned_output(const BkCtx *c, const BkSegment *sg)
{
    const BkLayer *ly = sg->layer;
    if (!sg->row_owner || ly->node < 0) return -1;
    const IrNode *n = &c->g->nodes[ly->node];
    if (n->nout < 1 || n->out[0] < 0) return -1;
    int r = bk_tensor_root(c, n->out[0]);
    if (!c->pl[r].band || c->band[r].H != sg->nrows) return -1;
    for (int i = 0; i < n->nin; i++)
        if (n->in[i] >= 0 && bk_tensor_root(c, n->in[i]) == r) return -1;
    return r;
}

/* Cluster k keeps row r of b in its SRAM: it wrote it (owner[r]) and the
 * row lies in its window (bk_band_window); a row outside it goes to DRAM
 * as one without an owner. */
static int keeps(const BkCtx *c, const BkBand *b, const int8_t *owner, int r, int k)
{
    int base = bk_band_window(b->H, c->bands, k, b->rows);
    return owner[r] == k && r >= base && r < base + b->rows;
}

void bk_band_publish(BkCtx *c, const BkSegment *sg)
{
    int t = owned_output(c, sg);
    if (t < 0) return;
    BkBand *b = &c->band[t];
    for (int r = 0; r < sg->nrows; r++)
        b->owner[r] = (int8_t)(sg->row_owner[r] >= 0 && keeps(c, b, sg->row_owner, r, sg->row_owner[r]) ? sg->row_owner[r] : -2);
}

/* A banded tensor the tile's DMAs may touch: its state and, for the
 * layer's own output, the owners of this segment's rows. */
typedef struct BandUse {
    BkBand *b;
    uint64_t sram;
    const int8_t *owner;   /* the output's; NULL for an input */
} BandUse;

#define BAND_USES 32

static void add_use(BkCtx *c, BandUse *v, int *n, int t, const int8_t *owner)
{
    if (t < 0 || c->g->t[t].data || *n == BAND_USES) return;
    int r = bk_tensor_root(c, t);
    if (!c->pl[r].band) return;
    for (int i = 0; i < *n; i++)
        if (v[i].b == &c->band[r]) {
            if (owner) v[i].owner = owner;
            return;
        }
    v[(*n)++] = (BandUse){&c->band[r], c->pl[r].band_off, owner};
}

/* The banded tensors of the segment's layer (its members', for a chain;
 * a residual tail's and a Gelu's inputs included). */
static int uses(BkCtx *c, const BkSegment *sg, BandUse *v)
{
    const BkLayer *ly = sg->layer;
    int nodes[BK_CHAIN_MAX], nn = 0, n = 0;
    if (ly->chain) nn = bk_chain_nodes(ly, nodes, BK_CHAIN_MAX);
    else if (ly->node >= 0) nodes[nn++] = ly->node;
    int own = owned_output(c, sg);
    for (int i = 0; i < nn; i++) {
        const IrNode *nd = &c->g->nodes[nodes[i]];
        for (int k = 0; k < nd->nin; k++) add_use(c, v, &n, nd->in[k], NULL);
        if (c->gelu_src[nodes[i]] >= 0) add_use(c, v, &n, c->gelu_src[nodes[i]], NULL);
        if (c->tail[nodes[i]] >= 0) {
            const IrNode *tl = &c->g->nodes[c->tail[nodes[i]]];
            for (int k = 0; k < tl->nin; k++) add_use(c, v, &n, tl->in[k], NULL);
        }
        for (int k = 0; k < nd->nout; k++)
            add_use(c, v, &n, nd->out[k], own >= 0 && nd->out[k] >= 0 && bk_tensor_root(c, nd->out[k]) == own ? sg->row_owner : NULL);
    }
    return n;
}

static const BandUse *find_use(const BandUse *v, int n, uint8_t space, uint64_t addr)
{
    if (space != ISA_SPACE_DRAM) return NULL;
    for (int i = 0; i < n; i++)
        if (addr >= v[i].b->dram && addr < v[i].b->dram + v[i].b->size) return &v[i];
    return NULL;
}

/* The rows of b a DRAM walk (addr, shape sh, byte strides st, elements of
 * es bytes) touches: the walk dimension stepping rows (*dim, -1: one row),
 * the first row and the count; -1 when the walk is not whole row pieces. */
static int dma_rows(const BkBand *b, uint64_t addr, const uint32_t sh[4], const int32_t st[4], int es, int *dim,
                    int *h0, int *nr)
{
    uint64_t off = addr - b->dram, plane = b->rowb * (uint64_t)b->H;
    int64_t xe = (int64_t)(off % b->rowb) + es;
    *dim = -1;
    *nr = 1;
    for (int d = 0; d < 4; d++) {
        int64_t s = st[d];
        if (sh[d] <= 1) continue;
        if (s == (int64_t)b->rowb && *dim < 0) { *dim = d; *nr = (int)sh[d]; }
        else if (s > 0 && (uint64_t)s % plane == 0) continue;
        else if (s >= 0 && (uint64_t)s < b->rowb) xe += s * (int64_t)(sh[d] - 1);
        else return -1;
    }
    *h0 = (int)(off % plane / b->rowb);
    return xe <= (int64_t)b->rowb && *h0 + *nr <= b->H ? 0 : -1;
}

/* The rebuilt list (a tile's loads, computes or stores). */
typedef struct Out {
    AtlInsn *v;
    uint8_t *w;
    int n, cap;
} Out;

static int put(Out *o, const AtlInsn *in, uint8_t flag, AtlErr *e)
{
    if (o->n == o->cap) {
        int nc = o->cap ? 2 * o->cap : 32;
        AtlInsn *p = realloc(o->v, (size_t)nc * sizeof *p);
        if (!p) return atl_fail(e, "out of memory rewriting row bands");
        o->v = p;
        uint8_t *q = realloc(o->w, (size_t)nc);
        if (!q) return atl_fail(e, "out of memory rewriting row bands");
        o->w = q;
        o->cap = nc;
    }
    o->w[o->n] = flag;
    o->v[o->n++] = *in;
    return 0;
}

/* Rows [a, a+cnt) of the DMA `in` (row walk dim from row h0) whose DRAM
 * side (dst when store) moves to the SRAM of cluster k (of K) when sram:
 * into its compact window (bk_band_window), so the row's address and the
 * channel planes' stride are remapped from H rows a plane to the window's. */
static int put_rows(Out *o, const AtlInsn *in, uint8_t flag, int store, const BandUse *u, int dim, int h0, int a,
                    int cnt, int sram, int K, int k, AtlErr *e)
{
    AtlInsn p = *in;
    if (dim >= 0) {
        p.shape[dim] = (uint32_t)cnt;
        p.src += (uint64_t)((int64_t)(a - h0) * p.src_stride[dim]);
        p.dst += (uint64_t)((int64_t)(a - h0) * p.dst_stride[dim]);
    }
    if (sram) {
        const BkBand *b = u->b;
        uint64_t *addr = store ? &p.dst : &p.src, plane = b->rowb * (uint64_t)b->H, off = *addr - b->dram;
        uint64_t wplane = b->rowb * (uint64_t)b->rows;
        int base = bk_band_window(b->H, K, k, b->rows), r = (int)(off % plane / b->rowb);
        if (r < base || r + cnt > base + b->rows)
            return atl_fail(e, "internal: row %d of a row-banded tensor is outside cluster %d's window", r, k);
        *addr = u->sram + off / plane * wplane + (uint64_t)(r - base) * b->rowb + off % b->rowb;
        int32_t *st = store ? p.dst_stride : p.src_stride;
        for (int d = 0; d < 4; d++)
            if (d != dim && p.shape[d] > 1 && st[d] > 0 && (uint64_t)st[d] % plane == 0)
                st[d] = (int32_t)((uint64_t)st[d] / plane * wplane);
        if (store) p.dst_space = ISA_SPACE_SRAM;
        else p.src_space = ISA_SPACE_SRAM;
    }
    return put(o, &p, flag, e);
}

/* Row r of the output goes to DRAM (from cluster k). */
static int store_dram(const BkCtx *c, const BandUse *u, int r, int k)
{
    if (!keeps(c, u->b, u->owner, r, k)) return 1;
    if (c->band_final) return u->b->need[r] || u->b->need_all;
    for (int q = r - BAND_NEAR; q <= r + BAND_NEAR; q++)
        if (q >= 0 && q < u->b->H && u->owner[q] != k) return 1;
    return 0;
}

/* One DMA of a tile's code on cluster k into o. */
static int rewrite(BkCtx *c, const BandUse *v, int nv, const AtlInsn *in, uint8_t flag, int k, Out *o, AtlErr *e)
{
    if (isa_ops[in->op].engine != ISA_ENGINE_DMA) return put(o, in, flag, e);
    const BandUse *src = in->op == ISA_OP_DMA_FILL ? NULL : find_use(v, nv, in->src_space, in->src);
    const BandUse *dst = find_use(v, nv, in->dst_space, in->dst);
    if (dst && !dst->owner) dst = NULL;   /* a tensor no cluster owns stays in DRAM */
    if (!src && !dst) return put(o, in, flag, e);
    int dim, h0, nr;
    int es = isa_dtype_size(in->dtype);
    if (dst) {
        if (src || in->op != ISA_OP_DMA_COPY || dma_rows(dst->b, in->dst, in->shape, in->dst_stride, es, &dim, &h0, &nr))
            return atl_fail(e, "internal: a store into a row-banded tensor is not whole rows");
        for (int pass = 0; pass < 2; pass++)   /* the own SRAM's rows, then DRAM's */
            for (int a = 0; a < nr;) {
                int r = h0 + a, want = pass ? store_dram(c, dst, r, k) : keeps(c, dst->b, dst->owner, r, k), b = a + 1;
                while (b < nr && (pass ? store_dram(c, dst, h0 + b, k) : keeps(c, dst->b, dst->owner, h0 + b, k)) == want) b++;
                if (want && put_rows(o, in, flag, 1, dst, dim, h0, h0 + a, b - a, !pass, c->bands, k, e)) return -1;
                a = b;
            }
        return 0;
    }
    if (in->op != ISA_OP_DMA_COPY || dma_rows(src->b, in->src, in->shape, in->src_stride, es, &dim, &h0, &nr)) {
        src->b->need_all = 1;   /* read whole from DRAM */
        return put(o, in, flag, e);
    }
    const int8_t *own = src->b->owner;
    for (int a = 0; a < nr;) {
        int mine = keeps(c, src->b, own, h0 + a, k), b = a + 1;
        while (b < nr && keeps(c, src->b, own, h0 + b, k) == mine) b++;
        if (!mine)
            for (int r = h0 + a; r < h0 + b; r++) src->b->need[r] = 1;
        if (put_rows(o, in, flag, 0, src, dim, h0, h0 + a, b - a, mine, c->bands, k, e)) return -1;
        a = b;
    }
    return 0;
}

/* 1 when rewrite() changes `in`: a DMA with an end on a banded tensor. */
static int touches(const BandUse *v, int nv, const AtlInsn *in)
{
    if (isa_ops[in->op].engine != ISA_ENGINE_DMA) return 0;
    const BandUse *dst = find_use(v, nv, in->dst_space, in->dst);
    return (dst && dst->owner) || (in->op != ISA_OP_DMA_FILL && find_use(v, nv, in->src_space, in->src));
}

/* Rewrites one list of k in place (weights flags w, NULL for none); a
 * list none of whose DMAs touches a banded tensor stays as it is. */
static int rewrite_list(BkCtx *c, const BandUse *v, int nv, AtlInsn **list, int *n, int *cap, uint8_t **w, int k,
                        AtlErr *e)
{
    int i = 0;
    while (i < *n && !touches(v, nv, &(*list)[i])) i++;
    if (i == *n) return 0;
    Out o = {0};
    for (int i = 0; i < *n; i++)
        if (rewrite(c, v, nv, &(*list)[i], w ? (*w)[i] : 0, k, &o, e)) {
            free(o.v);
            free(o.w);
            return -1;
        }
    free(*list);
    *list = o.v;
    *n = o.n;
    *cap = o.cap;
    if (w) { free(*w); *w = o.w; }
    else free(o.w);
    return 0;
}

int bk_band_code(BkCtx *c, const BkSegment *sg, BkCode *k, int cluster, AtlErr *e)
{
    BandUse v[BAND_USES];
    int nv = uses(c, sg, v);
    if (!nv) return 0;
    if (rewrite_list(c, v, nv, &k->ld, &k->nld, &k->capld, &k->ld_w, cluster, e) ||
        rewrite_list(c, v, nv, &k->cp, &k->ncp, &k->capcp, NULL, cluster, e) ||
        rewrite_list(c, v, nv, &k->st, &k->nst, &k->capst, NULL, cluster, e))
        return -1;
    return 0;
}
