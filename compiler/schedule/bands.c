/* bands.c - row and channel bands: activations split by cells (channel,
 * row) over the clusters' SRAMs on a chip whose clusters share only DRAM
 * (--sram-activations bands; docs/backend.md, "Row and channel bands in
 * every cluster").
 * Reads: the banded tensors of the placement (BkPlace.band, BkCtx.band),
 *   a segment's tiles on cores, the code the schedule walk generates.
 * Does: distributes a window layer's tiles over the clusters by output
 *   rows (row bands) or a conv's by output-channel chunks (channel bands);
 *   records which cluster writes each output cell, whatever the tiling;
 *   rewrites each tile's DMAs on banded tensors in rectangles of channels
 *   x rows: cells of an input the own cluster wrote are read from its
 *   SRAM, the others from DRAM; the output's cells go to the own SRAM
 *   and, where another cluster reads them, to DRAM as well; a staged
 *   input's gather of the other clusters' cells goes in pieces by K chunk
 *   where the layer splits K, each with its own flag; a staged input
 *   banded in windows of rows gathers the halo rows the cluster's tiles
 *   read into its window once (halo staging), and the tiles read the
 *   window from the own SRAM.
 * Guarantees: a load from SRAM reads only cells its own cluster's cores
 *   wrote there in the tensor's producing segment (closed by a chip
 *   barrier); once the schedule is final (bk_band_finalize) every cell a
 *   load reads from DRAM was stored there. The rewrite runs where the
 *   schedule walk generates a tile's code, so the cost model and the
 *   emitter see the same instructions.
 * Why: on a1 the clusters reach each other only through DRAM; the early
 *   layers of a CNN have small weights and big activations, so splitting
 *   their rows over the clusters keeps the activations in SRAM and moves
 *   only the halo rows through DRAM; the late layers have big weights and
 *   small activations, so splitting their output channels reads every
 *   weight byte once on the chip and moves each activation byte through
 *   DRAM once (written by its cluster, read by the others: an all-gather). */
#include <stdlib.h>
#include <string.h>
#include "compiler/schedule/schedule.h"
#include "compiler/alloc/alloc.h"
#include "compiler/lower/lower.h"

/* per row mask bit of a cell without an owner */
#define NO_OWNER (1u << 31)

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* A window layer whose tiles bk_tile_pos places (lower/conv.c; not the
 * integer ConvInteger's own tiling, lower/qconv.c, which has no column or
 * channel chunks). A layer of N > 1 images has its cells owned per image
 * (channel plane n x OC + ch), a tile of several images (BkLow.nb > 1)
 * owning its cells in each of them. */
static int window(const BkLayer *ly)
{
    const BkLow *l = &ly->lw;
    return !ly->chain && (l->kind == BK_K_CONV || l->kind == BK_K_POOL) && l->N >= 1 && l->OH > 0 && l->rows > 0 &&
           l->nkc > 0 && l->nwc > 0 && l->nrc > 0;
}

/* 1 when ly is a layer group whose tiles each store one slice of rows
 * of its last member's output, for one image (bk_chain_tile_rows); then
 * *oc, *oh (when not NULL): that output's channels and rows. */
static int chain_rows(const BkLayer *ly, int *oc, int *oh)
{
    int r0, r1, c;
    if (!ly->chain || !ly->ntiles || (ly->tile_run > 1) || bk_chain_tile_rows(ly, ly->ntiles - 1, &r0, &r1, &c)) return 0;
    if (oc) *oc = c;
    if (oh) *oh = r1;
    return 1;
}

static void tile_rows(const BkLow *l, BkTilePos p, int *r0, int *r1)
{
    *r0 = p.rci * l->rows;
    *r1 = imin(*r0 + l->rows, l->OH);
}

/* The output channels [c0, c1) of group chunk gci (as conv_gen cuts them:
 * a groups == 1 conv chunks channels, others groups). */
static void tile_chans(const BkLow *l, int gci, int *c0, int *c1)
{
    if (l->groups == 1 && l->kind == BK_K_CONV) {
        *c0 = gci * l->gchunk;
        *c1 = imin(*c0 + l->gchunk, l->OC);
        return;
    }
    int opg = l->OC / l->groups, g0 = gci * l->gchunk;
    *c0 = g0 * opg;
    *c1 = imin(g0 + l->gchunk, l->groups) * opg;
}

/* run[ch]: the end of the run of channels from ch whose owners (C
 * planes of H cells) equal ch's in every row. */
static void chan_runs(const int8_t *owner, int C, int H, int *run)
{
    for (int ch = C - 1; ch >= 0; ch--)
        run[ch] = ch + 1 < C && !memcmp(owner + (size_t)ch * H, owner + (size_t)(ch + 1) * H, (size_t)H) ? run[ch + 1] : ch + 1;
}

/* Row bands of a K-split conv (runs of run > 1 tiles: an output tile's
 * k chunks): 1 when every core's consecutive runs, as the caller gives
 * runs to cores (cl[u], cnt: per cluster in contiguous balanced blocks of
 * cpc cores), alternate the parity of their output tile's index. The two
 * K-split accumulators are chosen by that parity (lower/conv.c): a core
 * whose next output tile used the same buffer could overwrite it before
 * the store of the one before read it. Runs of channel ranges stay
 * consecutive on a core; row bands take every row chunk's runs of each
 * output-channel chunk to one cluster, so a core holding one run (or runs
 * of alternating parity) is safe, others keep the spread. */
static int kruns_alternate(const BkLow *l, int units, int run, int K, int cpc, const int *cl, const int *cnt)
{
    int *seen = calloc((size_t)K, sizeof *seen), *last = malloc((size_t)K * (size_t)cpc * sizeof *last), ok = seen && last;
    for (int i = 0; ok && i < K * cpc; i++) last[i] = -1;
    for (int u = 0; ok && u < units; u++) {
        int k = cl[u], core = k * cpc + (int)((int64_t)seen[k]++ * cpc / cnt[k]);
        int out = bk_tile_pos(l, u * run).out;
        ok = last[core] < 0 || (last[core] & 1) != (out & 1);
        last[core] = out;
    }
    free(seen);
    free(last);
    return ok;
}

/* The cluster of each run u (cl[u], counts per cluster in cnt), or 0
 * when the layer's tiles keep the spread of bk_sched_distribute. */
static int band_clusters(const BkSegment *sg, int units, int run, int *cl, int *cnt)
{
    const BkLayer *ly = sg->layer;
    const BkLow *l = &ly->lw;
    int K = ly->band_clusters;
    if (sg->cores.first != 0 || sg->cores.count != ly->band_cores) return 0;
    if (ly->bands == BK_BANDS_ROWS) {
        /* run u to the cluster whose share of the rows holds its middle row */
        for (int u = 0; u < units; u++) {
            int r0, r1;
            tile_rows(l, bk_tile_pos(l, u * run), &r0, &r1);
            int k = (int)((int64_t)(r0 + r1) * K / (2 * (int64_t)l->OH));
            cl[u] = k < K ? k : K - 1;
            cnt[cl[u]]++;
        }
        return run == 1 || kruns_alternate(l, units, run, K, ly->band_cores / K, cl, cnt);
    }
    if (ly->bands == BK_BANDS_CHANNELS && l->kind == BK_K_CONV && l->ngc >= K) {
        /* output-channel chunk g to cluster g x K / chunks (runs are chunk-major) */
        for (int u = 0; u < units; u++) {
            cl[u] = (int)((int64_t)bk_tile_pos(l, u * run).gci * K / l->ngc);
            cnt[cl[u]]++;
        }
        return 1;
    }
    return 0;
}

void bk_band_free(BkSegment *sg)
{
    free(sg->cell_owner);
    free(sg->row_mask);
    free(sg->chan_run);
    sg->cell_owner = NULL;
    sg->row_mask = NULL;
    sg->chan_run = NULL;
    sg->nrows = sg->nch = 0;
}

/* K split across clusters, phase 1 (BkLow.kb_parts): run u (one output
 * tile's K chunks of one cluster's range) to cluster u mod K, then over
 * that cluster's cores in contiguous balanced blocks. Its output is the
 * partials' scratch, not a banded tensor: no cell owners. */
static int kb_distribute(BkSegment *sg, AtlErr *e)
{
    const BkLayer *ly = sg->layer;
    int K = ly->lw.kb_parts, cpc = ly->band_cores / K, run = ly->tile_run > 0 ? ly->tile_run : 1;
    int units = ly->ntiles / run, per = units / K;
    if (units % K || sg->cores.first != 0 || sg->cores.count != ly->band_cores)
        return atl_fail(e, "internal: a K split across %d clusters on other cores", K);
    uint8_t *used = calloc((size_t)ly->band_cores, 1);
    if (!used) return atl_fail(e, "out of memory distributing bands");
    sg->cores_used = 0;
    for (int u = 0; u < units; u++) {
        int k = u % K, core = k * cpc + (int)((int64_t)(u / K) * cpc / per);
        for (int t = u * run; t < (u + 1) * run; t++) sg->tile_core[t] = core;
        if (!used[core]) { used[core] = 1; sg->cores_used++; }
    }
    free(used);
    return 0;
}

int bk_band_distribute(BkSegment *sg, AtlErr *e)
{
    const BkLayer *ly = sg->layer;
    bk_band_free(sg);
    if (ly->lw.kb_phase == 1 && ly->band_cores) return kb_distribute(sg, e);
    int chain = chain_rows(ly, NULL, NULL);
    if (!ly->band_cores || ly->band_clusters < 1 || ly->band_clusters > 31 || !(window(ly) || chain) || !ly->ntiles)
        return 0;
    const BkLow *l = &ly->lw;
    int K = ly->band_clusters, cpc = ly->band_cores / K, run = ly->tile_run > 0 ? ly->tile_run : 1;
    int units = ly->ntiles / run, H = l->OH, OC = l->OC, NI = chain ? 1 : l->N;   /* NI: images */
    if (chain) chain_rows(ly, &OC, &H);
    int *cl = malloc((size_t)units * sizeof *cl), *cnt = calloc((size_t)K, sizeof *cnt), *seen = calloc((size_t)K, sizeof *seen);
    uint8_t *used = calloc((size_t)ly->band_cores, 1);
    sg->cell_owner = malloc((size_t)NI * (size_t)OC * (size_t)H);
    sg->row_mask = calloc((size_t)H, sizeof *sg->row_mask);
    sg->chan_run = malloc((size_t)NI * (size_t)OC * sizeof *sg->chan_run);
    int rc = -1;
    if (!cl || !cnt || !seen || !used || !sg->cell_owner || !sg->row_mask || !sg->chan_run) {
        atl_fail(e, "out of memory distributing bands");
        goto done;
    }
    if (!chain && band_clusters(sg, units, run, cl, cnt)) {
        sg->cores_used = 0;
        for (int u = 0; u < units; u++) {
            int k = cl[u], core = k * cpc + (int)((int64_t)seen[k]++ * cpc / cnt[k]);
            for (int t = u * run; t < (u + 1) * run; t++) sg->tile_core[t] = core;
            if (!used[core]) { used[core] = 1; sg->cores_used++; }
        }
    }
    sg->nrows = H;
    sg->nch = NI * OC;
    /* the owners are worked out on columns (H cells): one per output-channel
     * chunk of a window layer and image (its tiles cover each of its
     * channels alike, and chunks do not overlap), then copied to the
     * chunk's channels of that image; a chain's tiles, one column per
     * channel */
    int ncol = chain ? OC : 1;
    int *span = malloc(6 * (size_t)(units ? units : 1) * sizeof *span);   /* per run: rows [r0, r1), columns [c0, c1), images [n0, n1) */
    if (!span) {
        atl_fail(e, "out of memory distributing bands");
        goto done;
    }
    for (int u = 0; u < units; u++) {   /* a run's tiles share one output tile's cells */
        int *x = span + 6 * (size_t)u;
        x[2] = 0;
        x[3] = OC;
        x[4] = 0;
        x[5] = 1;
        if (chain) {
            bk_chain_tile_rows(ly, u * run, &x[0], &x[1], &x[3]);
            bk_chain_tile_chans(ly, u * run, &x[2], &x[3]);
        } else {
            BkTilePos p = bk_tile_pos(l, u * run);
            tile_rows(l, p, &x[0], &x[1]);
            x[2] = p.gci;
            x[3] = p.gci + 1;
            x[4] = imin(p.n, NI - 1);
            x[5] = imin(p.n + imax(p.nn, 1), NI);
            ncol = imax(ncol, p.gci + 1);
        }
    }
    /* an image's columns: its chunks' and the column of no tile */
    int stride = chain ? ncol : ncol + 1;
    int8_t *col = chain ? sg->cell_owner : malloc((size_t)NI * (size_t)stride * (size_t)H);
    if (!col) {
        free(span);
        atl_fail(e, "out of memory distributing bands");
        goto done;
    }
    memset(col, -1, (size_t)NI * (size_t)stride * (size_t)H);
    for (int u = 0; u < units; u++) {
        const int *x = span + 6 * (size_t)u;
        int r0 = x[0], r1 = x[1], k = sg->tile_core[u * run] / cpc;
        for (int n = x[4]; n < x[5]; n++)
            for (int ch = x[2]; ch < x[3]; ch++) {
                int8_t *o = col + ((size_t)n * stride + ch) * H;
                for (int r = r0; r < r1; r++) {   /* selects, not branches (a hot loop of the tile search) */
                    int v = o[r];
                    o[r] = (int8_t)(((v == -1) | (v == k)) ? k : -2);
                }
            }
    }
    free(span);
    /* a cell outside its writer's SRAM window (bk_band_window) has no owner */
    /* rows [lo[k], hi[k]) of cluster k's window (all rows without windows);
     * entry 32 + k for k < 0: none */
    int lo[34], hi[34];
    for (int k = 0; k < 34; k++) { lo[k] = 0; hi[k] = k < 32 ? H : 0; }
    for (int k = 0; k < K && k < 32 && ly->band_rows; k++) {
        lo[k] = bk_band_window(H, K, k, ly->band_rows);
        hi[k] = lo[k] + ly->band_rows;
    }
    /* which columns some channel takes (the last: the channels of no chunk) */
    int uncovered = 0;
    uint8_t *taken = chain ? NULL : calloc((size_t)ncol + 1, 1);
    if (!chain) {
        if (!taken) {
            free(col);
            atl_fail(e, "out of memory distributing bands");
            goto done;
        }
        int covered = 0;
        for (int g = 0; g < ncol; g++) {
            int c0, c1;
            tile_chans(l, g, &c0, &c1);
            c1 = imin(c1, OC);
            if (c1 > c0) { taken[g] = 1; covered += c1 - c0; }
        }
        uncovered = covered < OC;
        taken[ncol] = (uint8_t)uncovered;
    }
    for (int q = 0; q < NI * stride; q++) {
        if (!chain && !taken[q % stride]) continue;
        int8_t *o = col + (size_t)q * H;
        for (int r = 0; r < H; r++) {   /* selects, not branches */
            int k = o[r], x = k < 0 ? 32 + (k & 1) : k, in = (r >= lo[x]) & (r < hi[x]);
            o[r] = (int8_t)(in ? k : -2);
            sg->row_mask[r] |= in ? 1u << (k & 31) : NO_OWNER;
        }
    }
    /* rows only: a row whose cells several clusters wrote (in any image)
     * has no owner */
    for (int r = 0; r < H && !ly->band_chans; r++)
        if (sg->row_mask[r] & (sg->row_mask[r] - 1)) {
            for (int q = 0; q < NI * stride; q++) col[(size_t)q * H + r] = -2;
            sg->row_mask[r] = NO_OWNER;
        }
    if (!chain) {
        for (int n = 0; n < NI; n++) {
            int8_t *own = sg->cell_owner + (size_t)n * OC * H;
            const int8_t *ic = col + (size_t)n * stride * H;
            if (uncovered)
                for (int ch = 0; ch < OC; ch++) memcpy(own + (size_t)ch * H, ic + (size_t)ncol * H, (size_t)H);
            for (int g = 0; g < ncol; g++) {
                int c0, c1;
                tile_chans(l, g, &c0, &c1);
                for (int ch = c0; ch < imin(c1, OC); ch++) memcpy(own + (size_t)ch * H, ic + (size_t)g * H, (size_t)H);
            }
        }
        free(col);
        free(taken);
    }
    chan_runs(sg->cell_owner, NI * OC, H, sg->chan_run);
    rc = 0;
done:
    free(cl); free(cnt); free(seen); free(used);
    return rc;
}

/* The banded root the segment's layer writes cell by cell (its owners in
 * sg->cell_owner), -1 none: a window layer whose output is banded and
 * which does not read it. */
static int owned_output(const BkCtx *c, const BkSegment *sg)
{
    const BkLayer *ly = sg->layer;
    if (!sg->cell_owner || ly->node < 0) return -1;
    const IrNode *n = &c->g->nodes[ly->node];
    if (n->nout < 1 || n->out[0] < 0) return -1;
    int r = bk_tensor_root(c, n->out[0]);
    if (!c->pl[r].band || c->band[r].H != sg->nrows || c->band[r].C != sg->nch) return -1;
    for (int i = 0; i < n->nin; i++)
        if (n->in[i] >= 0 && bk_tensor_root(c, n->in[i]) == r) return -1;
    return r;
}

/* Cluster k keeps cell (ch, r) of b in its SRAM: it wrote it (owner) and
 * the row lies in its window (bk_band_window); a cell outside it goes to
 * DRAM as one without an owner. */
static int keeps(const BkCtx *c, const BkBand *b, const int8_t *owner, int ch, int r, int k)
{
    int base = bk_band_window(b->H, c->bands, k, b->rows);
    return owner[(size_t)ch * b->H + r] == k && r >= base && r < base + b->rows && bk_band_plane(b, k, ch) >= 0;
}

void bk_band_publish(BkCtx *c, const BkSegment *sg)
{
    int t = owned_output(c, sg);
    if (t < 0) return;
    BkBand *b = &c->band[t];
    for (int ch = 0; ch < b->C; ch++)
        for (int r = 0; r < b->H; r++) {
            size_t i = (size_t)ch * b->H + r;
            int k = sg->cell_owner[i];
            b->owner[i] = (int8_t)(k >= 0 && keeps(c, b, sg->cell_owner, ch, r, k) ? k : -2);
        }
    chan_runs(b->owner, b->C, b->H, b->run);
}

/* A banded tensor the tile's DMAs may touch: its state and, for the
 * layer's own output, this segment's owners of its cells. */
typedef struct BandUse {
    BkBand *b;
    uint64_t sram;
    const int8_t *owner;   /* the output's (the segment's); NULL for an input */
    const uint32_t *mask;  /* the output's clusters per row */
    const int *run;        /* the output's runs of channels (BkSegment.chan_run) */
    int halo;              /* a halo-staged input (staged_window): its loads read the whole
                            * window from the own SRAM */
} BandUse;

#define BAND_USES 32

static void add_use(BkCtx *c, BandUse *v, int *n, int t, const BkSegment *out)
{
    if (t < 0 || c->g->t[t].data || *n == BAND_USES) return;
    int r = bk_tensor_root(c, t);
    if (!c->pl[r].band) return;
    const int8_t *owner = out ? out->cell_owner : NULL;
    const uint32_t *mask = out ? out->row_mask : NULL;
    const int *run = out ? out->chan_run : NULL;
    for (int i = 0; i < *n; i++)
        if (v[i].b == &c->band[r]) {
            if (owner) { v[i].owner = owner; v[i].mask = mask; v[i].run = run; }
            return;
        }
    v[(*n)++] = (BandUse){&c->band[r], c->pl[r].band_off, owner, mask, run, 0};
}

/* 1 when tensor t's storage is one of the n roots in inner. */
static int is_inner(const BkCtx *c, int t, const int *inner, int n)
{
    if (t < 0) return 0;
    int r = bk_tensor_root(c, t);
    for (int i = 0; i < n; i++) if (inner[i] == r) return 1;
    return 0;
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
    /* a group's tensors between its members stay in LMEM: not uses (their
     * DRAM bytes, placed before groups exist, may be the group output's,
     * whose DMAs would then be cut by their band; MobileNetV2's
     * features.2 as a group computed wrong rows) */
    int inner[BK_CHAIN_MAX], ni = nn - 1;
    for (int i = 0; i < ni; i++) inner[i] = bk_tensor_root(c, c->g->nodes[nodes[i]].out[0]);
    for (int i = 0; i < nn; i++) {
        const IrNode *nd = &c->g->nodes[nodes[i]];
        for (int k = 0; k < nd->nin; k++)
            if (!is_inner(c, nd->in[k], inner, ni)) add_use(c, v, &n, nd->in[k], NULL);
        if (c->gelu_src[nodes[i]] >= 0) add_use(c, v, &n, c->gelu_src[nodes[i]], NULL);
        if (c->tail[nodes[i]] >= 0) {
            const IrNode *tl = &c->g->nodes[c->tail[nodes[i]]];
            for (int k = 0; k < tl->nin; k++)
                if (!is_inner(c, tl->in[k], inner, ni)) add_use(c, v, &n, tl->in[k], NULL);
        }
        for (int k = 0; k < nd->nout && i == nn - 1; k++)
            add_use(c, v, &n, nd->out[k], own >= 0 && nd->out[k] >= 0 && bk_tensor_root(c, nd->out[k]) == own ? sg : NULL);
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

/* The cells of b a DRAM walk touches: the walk dimension stepping rows
 * (rd, -1: one row) from row h0 by rstep, nr rows (a strided 1x1 conv's
 * compact load steps sh rows); the one stepping channels (cd, -1: one
 * channel) from channel c0 by cstep, nc channels. */
typedef struct Walk {
    int rd, h0, nr, cd, c0, cstep, nc, rstep;
} Walk;

/* The row of walk position a. */
static inline int walk_row(const Walk *w, int a) { return w->h0 + a * w->rstep; }

/* The walk of a DMA's DRAM side (addr, shape sh, byte strides st,
 * elements of es bytes) over b; -1 when it is not whole row pieces of
 * channels stepped by one dimension. */
static int dma_cells(const BkBand *b, uint64_t addr, const uint32_t sh[4], const int32_t st[4], int es, Walk *w)
{
    uint64_t off = addr - b->dram, plane = b->rowb * (uint64_t)b->H;
    int64_t xe = (int64_t)(off % b->rowb) + es;
    *w = (Walk){-1, 0, 1, -1, 0, 1, 1, 1};
    for (int d = 0; d < 4; d++) {
        int64_t s = st[d];
        if (sh[d] <= 1) continue;
        if (s == (int64_t)b->rowb && w->rd < 0) { w->rd = d; w->nr = (int)sh[d]; }
        else if (s > 0 && (uint64_t)s % plane == 0 && w->cd < 0) { w->cd = d; w->nc = (int)sh[d]; w->cstep = (int)((uint64_t)s / plane); }
        else if (s > 0 && (uint64_t)s % b->rowb == 0 && (uint64_t)s < plane && w->rd < 0) {   /* every rstep-th row */
            w->rd = d;
            w->nr = (int)sh[d];
            w->rstep = (int)((uint64_t)s / b->rowb);
        }
        else if (s >= 0 && (uint64_t)s < b->rowb) xe += s * (int64_t)(sh[d] - 1);
        else return -1;
    }
    w->h0 = (int)(off % plane / b->rowb);
    w->c0 = (int)(off / plane);
    return xe <= (int64_t)b->rowb && walk_row(w, w->nr - 1) < b->H && w->c0 + (int64_t)(w->nc - 1) * w->cstep < b->C ? 0 : -1;
}

/* The rebuilt list (a tile's loads, computes or stores): in the tile
 * code's spare buffers (bk_code_spare), the flags w at least as many as
 * the instructions' capacity. */
typedef struct Out {
    AtlInsn *v;
    uint8_t *w;
    int n, cap, capw;
} Out;

static int put(Out *o, const AtlInsn *in, uint8_t flag, AtlErr *e)
{
    if (o->n == o->cap) {
        int nc = o->cap ? 2 * o->cap : 32;
        AtlInsn *p = realloc(o->v, (size_t)nc * sizeof *p);
        if (!p) return atl_fail(e, "out of memory rewriting bands");
        o->v = p;
        o->cap = nc;
    }
    if (o->capw < o->cap) {
        uint8_t *q = realloc(o->w, (size_t)o->cap);
        if (!q) return atl_fail(e, "out of memory rewriting bands");
        o->w = q;
        o->capw = o->cap;
    }
    o->w[o->n] = flag;
    o->v[o->n++] = *in;
    return 0;
}

/* The rectangle of channels [i0, i0+ni) x rows [a, a+na) (walk positions)
 * of the DMA `in` whose DRAM side (dst when store) moves to the SRAM of
 * cluster k (of K) when sram: into its compact window (bk_band_window),
 * so the row's address and the channel planes' stride are remapped from
 * H rows a plane to the window's. */
static int put_cells(Out *o, const AtlInsn *in, uint8_t flag, int store, const BandUse *u, const Walk *w, int i0,
                     int ni, int a, int na, int sram, int K, int k, AtlErr *e)
{
    AtlInsn p = *in;
    if (w->cd >= 0) {
        p.shape[w->cd] = (uint32_t)ni;
        p.src += (uint64_t)((int64_t)i0 * p.src_stride[w->cd]);
        p.dst += (uint64_t)((int64_t)i0 * p.dst_stride[w->cd]);
    }
    if (w->rd >= 0) {
        p.shape[w->rd] = (uint32_t)na;
        p.src += (uint64_t)((int64_t)a * p.src_stride[w->rd]);
        p.dst += (uint64_t)((int64_t)a * p.dst_stride[w->rd]);
    }
    if (sram) {
        const BkBand *b = u->b;
        uint64_t *addr = store ? &p.dst : &p.src, plane = b->rowb * (uint64_t)b->H, off = *addr - b->dram;
        uint64_t wplane = b->rowb * (uint64_t)b->rows;
        int base = bk_band_window(b->H, K, k, b->rows), r = (int)(off % plane / b->rowb);
        int p0 = (int)(off / plane), wp = bk_band_plane(b, k, p0), n = w->cd >= 0 ? ni : 1;
        /* the window's step between the walk's planes: a shard's planes
         * of one image are consecutive, of the next image shard planes on */
        int wstep = n > 1 ? bk_band_plane(b, k, p0 + w->cstep) - wp : 0;
        if (r < base || r + (na - 1) * w->rstep + 1 > base + b->rows)
            return atl_fail(e, "internal: row %d of a banded tensor is outside cluster %d's window", r, k);
        for (int i = 0; i < n && b->shard; i++) {
            int pi = bk_band_plane(b, k, p0 + i * w->cstep);   /* each plane in the window, evenly stepped */
            if (pi < 0 || pi != wp + i * wstep)
                return atl_fail(e, "internal: plane %d of a banded tensor is outside cluster %d's window", p0 + i * w->cstep, k);
        }
        *addr = u->sram + (uint64_t)wp * wplane + (uint64_t)(r - base) * b->rowb + off % b->rowb;
        int32_t *st = store ? p.dst_stride : p.src_stride;
        int ci = b->C / (b->images > 0 ? b->images : 1);
        for (int d = 0; d < 4; d++)
            if (d != w->rd && p.shape[d] > 1 && st[d] > 0 && (uint64_t)st[d] % plane == 0) {
                uint64_t q = (uint64_t)st[d] / plane;
                /* planes of the shard: the walk's step; an image's step, shard planes */
                uint64_t wq = !b->shard ? q : d == w->cd ? (uint64_t)wstep : q % (uint64_t)ci ? q : q / (uint64_t)ci * (uint64_t)b->shard;
                st[d] = (int32_t)(wq * wplane);
            }
        if (store) p.dst_space = ISA_SPACE_SRAM;
        else p.src_space = ISA_SPACE_SRAM;
    }
    return put(o, &p, flag, e);
}

/* What cut puts: a load's every rectangle (the kept ones from SRAM, the
 * others from DRAM, their cells marked needed); a store's kept ones into
 * SRAM, or those going to DRAM (to_dram) there; a gather's not kept ones
 * as they are (their cells marked needed). */
enum { CUT_LOAD, CUT_STORE_SRAM, CUT_STORE_DRAM, CUT_GATHER };

/* The cells of u as cluster k sees them in one cut: its owners and the
 * rows of its window [wb, we). */
typedef struct Cells {
    const BkCtx *c;
    const BandUse *u;
    const int8_t *own;
    const int *run;           /* BkBand.run of own */
    int k, wb, we, H, dram;   /* dram: the value is to_dram, else kept */
    int halo;                 /* a load of a halo-staged input: every cell of the window is
                               * in the own SRAM (the staging gathered the others' there) */
} Cells;

/* kept_at of a cell of channel plane ch in row r (index i) */
static inline int kept_at(const Cells *x, size_t i, int ch, int r)
{
    return (x->halo || x->own[i] == x->k) && r >= x->wb && r < x->we && (!x->u->b->shard || bk_band_plane(x->u->b, x->k, ch) >= 0);
}

/* The first plane after ch where a channel shard's window of cluster k
 * starts or ends (C: none, no shard). */
static int shard_edge(const BkBand *b, int k, int ch)
{
    if (!b->shard) return b->C;
    int ci = b->C / (b->images > 0 ? b->images : 1), n = ch / ci, c = ch % ci, lo = k * b->shard, hi = lo + b->shard;
    return c < lo ? n * ci + lo : c < hi ? n * ci + hi : (n + 1) * ci + lo;
}

/* Kept in the own SRAM or (x->dram) stored to DRAM: a cell not kept,
 * one another cluster reads (before the schedule is final: a row within
 * BkBand.near, its consumers' reach, holds another cluster's cell or
 * one without an owner). */
static inline int value(const Cells *x, int ch, int r)
{
    size_t i = (size_t)ch * x->H + r;
    int kp = kept_at(x, i, ch, r);
    if (!x->dram) return kp;
    if (!kp) return 1;
    const BkBand *b = x->u->b;
    if (x->c->band_final) return b->need[i] || b->need_all;
    for (int q = r - b->near; q <= r + b->near; q++)
        if (q >= 0 && q < x->H && (x->u->mask[q] & ~(1u << x->k))) return 1;
    return 0;
}

/* Channels ch0 and ch1 give the same values on the walk's rows (equal
 * owners, and needs where the value reads them, say so at once). */
static int same_rows(const Cells *x, const Walk *w, int ch0, int ch1)
{
    /* the rows from the walk's first to its last (a superset when it steps rows) */
    size_t i0 = (size_t)ch0 * x->H + w->h0, i1 = (size_t)ch1 * x->H + w->h0, n = (size_t)(walk_row(w, w->nr - 1) - w->h0 + 1);
    if (x->halo) return 1;   /* the window's every cell is kept, whatever its owner */
    if (x->u->b->shard && (bk_band_plane(x->u->b, x->k, ch0) < 0) != (bk_band_plane(x->u->b, x->k, ch1) < 0)) return 0;
    int owners_same = ch1 < x->run[ch0];
    if (owners_same && (!x->dram || !x->c->band_final)) return 1;
    if ((owners_same || !memcmp(x->own + i0, x->own + i1, n)) &&
        (!x->dram || !x->c->band_final || !memcmp(x->u->b->need + i0, x->u->b->need + i1, n)))
        return 1;
    for (int a = 0; a < w->nr; a++)
        if (value(x, ch0, walk_row(w, a)) != value(x, ch1, walk_row(w, a))) return 0;
    return 1;
}

/* Marks n cells needed: a few rows of one channel at a time, too short
 * for a call to memset (which cost a tenth of the pricing of a banded
 * layer's loads). */
static inline void mark_needed(uint8_t *p, int n)
{
    const uint64_t ones = 0x0101010101010101ull;
    for (; n >= 8; n -= 8, p += 8) memcpy(p, &ones, 8);
    if (n >= 4) { memcpy(p, &ones, 4); memcpy(p + n - 4, &ones, 4); return; }
    if (n >= 2) { memcpy(p, &ones, 2); memcpy(p + n - 2, &ones, 2); return; }
    if (n) *p = 1;
}

/* Marks the cells of m needed in b. */
static void mark_rect(BkBand *b, const BkBandMark *m)
{
    for (int i = 0; i < m->nch; i++) {
        uint8_t *nd = b->need + (size_t)(m->ch + i * m->cstep) * b->H;
        if (m->rstep == 1) mark_needed(nd + m->r0, m->nr);
        else
            for (int q = 0; q < m->nr; q++) nd[m->r0 + q * m->rstep] = 1;
    }
}

/* Marks before the schedule is final wait in b->pend until need is read
 * (bk_band_relayout, bk_band_finalize: apply_marks first): the tile
 * search drops most plans it prices by the bound, and their marks, a
 * twentieth of ResNet-50's compile, were never read. At most PEND_MAX
 * wait (then they are applied), and with no memory for more a mark is
 * applied at once. Marks only set bytes to 1, so their order is free. */
enum { PEND_MAX = 4096 };

static void apply_marks(BkBand *b)
{
    for (int i = 0; i < b->npend; i++) mark_rect(b, &b->pend[i]);
    b->npend = 0;
}

static void defer_mark(BkBand *b, const BkBandMark *m)
{
    if (b->npend == PEND_MAX) apply_marks(b);
    if (b->npend == b->cappend) {
        int nc = b->cappend ? 2 * b->cappend : 64;
        BkBandMark *p = realloc(b->pend, (size_t)nc * sizeof *p);
        if (!p) { mark_rect(b, m); return; }
        b->pend = p;
        b->cappend = nc;
    }
    b->pend[b->npend++] = *m;
}

/* Cuts the walk w of `in` into rectangles of cells of one value (to_dram
 * for CUT_STORE_DRAM, else kept): consecutive channels whose rows give
 * the same values, and in them runs of rows of one value; puts them as
 * `mode` says. */
static int cut(BkCtx *c, Out *o, const AtlInsn *in, uint8_t flag, const BandUse *u, const Walk *w, int mode, int k,
               AtlErr *e)
{
    int store = mode == CUT_STORE_SRAM || mode == CUT_STORE_DRAM;
    const BkBand *bd = u->b;
    Cells x = {c, u, u->owner ? u->owner : bd->owner, u->owner ? u->run : bd->run, k, 0, 0, bd->H, mode == CUT_STORE_DRAM,
               u->halo && mode == CUT_LOAD};
    x.wb = bk_band_window(bd->H, c->bands, k, bd->rows);
    x.we = x.wb + bd->rows;
    for (int i0 = 0; i0 < w->nc;) {
        int ch0 = w->c0 + i0 * w->cstep, i1 = i0 + 1;
        if (!x.dram || !c->band_final) {   /* skip the channels of ch0's run of equal owners (in or out of a shard) */
            int re = imin(x.run[ch0], shard_edge(bd, k, ch0)), end = (re - w->c0 + w->cstep - 1) / w->cstep;
            if (end > i1) i1 = end < w->nc ? end : w->nc;
        }
        while (i1 < w->nc && same_rows(&x, w, ch0, w->c0 + i1 * w->cstep)) i1++;
        for (int a = 0; a < w->nr;) {
            int v = value(&x, ch0, walk_row(w, a)), b = a + 1;
            while (b < w->nr && value(&x, ch0, walk_row(w, b)) == v) b++;
            int mark = !v && (mode == CUT_LOAD || mode == CUT_GATHER);
            int want = mode == CUT_LOAD || (mode == CUT_GATHER ? !v : v);
            int sram = mode == CUT_LOAD ? v : mode == CUT_STORE_SRAM;
            if (mark) {
                BkBandMark m = {w->c0 + i0 * w->cstep, w->cstep, i1 - i0, walk_row(w, a), w->rstep, b - a};
                if (c->band_final) mark_rect(u->b, &m);
                else defer_mark(u->b, &m);
            }
            if (want && put_cells(o, in, flag, store, u, w, i0, i1 - i0, a, b - a, sram, c->bands, k, e)) return -1;
            a = b;
        }
        i0 = i1;
    }
    return 0;
}

/* The bytes of the segment's banded inputs that its loads read from DRAM
 * although a cluster keeps them in its SRAM (bk_band_code marks them
 * needed): their writer must store them to DRAM as well, a re-layout the
 * consumer causes. reset: clears the marks of those inputs first (before
 * pricing one plan) and returns 0. */
uint64_t bk_band_relayout(BkCtx *c, const BkSegment *sg, int reset)
{
    BandUse v[BAND_USES];
    int nv = uses(c, sg, v);
    uint64_t bytes = 0;
    for (int i = 0; i < nv; i++) {
        BkBand *b = v[i].b;
        size_t cells = (size_t)b->C * (size_t)b->H;
        if (v[i].owner) continue;   /* the segment's own output */
        if (reset) {
            memset(b->need, 0, cells);
            b->need_all = 0;
            b->npend = 0;
            continue;
        }
        apply_marks(b);
        for (size_t j = 0; j < cells; j++) bytes += (b->need_all | b->need[j]) && b->owner[j] >= 0 ? b->rowb : 0;
    }
    return bytes;
}

/* The weight bytes a window layer's clusters load beyond one copy on the
 * chip: each cluster loads every (output-channel chunk, K chunk) of
 * weights its tiles use once (multicast to its cores), so a chunk used in
 * n clusters costs n - 1 extra copies. 0 for a pool or a chain. */
uint64_t bk_band_weight_rereads(const BkSegment *sg)
{
    const BkLayer *ly = sg->layer;
    const BkLow *l = &ly->lw;
    if (!window(ly) || l->kind != BK_K_CONV || !ly->band_cores || ly->band_clusters < 2 || ly->band_clusters > 31 ||
        l->kb_phase == 2)   /* the partials' sum has no weights */
        return 0;
    int cpc = ly->band_cores / ly->band_clusters, nk = l->nkc > 0 ? l->nkc : 1;
    uint32_t *used = calloc((size_t)l->ngc * (size_t)nk, sizeof *used);
    if (!used) return 0;
    /* bk_tile_pos's chunks, by one division each (tile t is chunk-major:
     * t / (nkc x nwc x nrc x image chunks) its output-channel chunk) */
    int per_g = l->nkc * l->nwc * l->nrc * bk_image_chunks(l);
    for (int t = 0; t < ly->ntiles; t++) {
        int gci = t / per_g, kci = t % l->nkc;
        int k = sg->tile_core[t] / cpc;
        if (k >= 0 && k < 31 && gci < l->ngc && kci < nk) used[(size_t)gci * nk + kci] |= 1u << k;
    }
    int cpg = l->C / (l->groups > 0 ? l->groups : 1);
    uint64_t extra = 0;
    for (int g = 0; g < l->ngc; g++) {
        int c0, c1;
        tile_chans(l, g, &c0, &c1);
        for (int q = 0; q < nk; q++) {
            uint32_t m = used[(size_t)g * nk + q];
            int copies = 0;
            for (; m; m &= m - 1) copies++;
            int kc = l->groups == 1 && nk > 1 ? imin(l->kchunk, l->C - q * l->kchunk) : cpg;
            if (copies > 1) extra += (uint64_t)(copies - 1) * (uint64_t)(c1 - c0) * (uint64_t)kc * (uint64_t)(l->kh * l->kw) * (uint64_t)l->es;
        }
    }
    free(used);
    return extra;
}

/* Halo staging (docs/backend.md, "Halo staging of row bands"): a
 * staged conv whose input is banded in windows of rows (row bands) of
 * one image, its tiles reading whole rows of channels (not a compact
 * strided 1x1 conv), gathers into its cluster's window the cells of the
 * rows its tiles read that other clusters wrote (the halo), once a
 * cluster; its tiles then read every row of the window from the own
 * SRAM (only rows outside the window from DRAM). Without it every core
 * reads the halo from DRAM for each of its output-channel chunks. Only
 * in the row-bands way (BkLayer.bands): in the others a cluster's tiles
 * read most rows, and their staging keeps its flat copy, which the tile
 * search drops early by its bound. */
static int halo_ok(const BkCtx *c, const BkSegment *sg, const BkBand *b)
{
    const BkLow *l = &sg->layer->lw;
    return !c->halo_never && sg->layer->bands == BK_BANDS_ROWS && !sg->layer->wsram && b->rows < b->H && b->images < 2 && l->N == 1 && window(sg->layer) && l->kind == BK_K_CONV && l->dt != ISA_I8 && !l->compact &&
           !l->vdw && l->kb_parts == 0 && l->kb_phase == 0;
}

/* The input rows [*lo, *hi) the tiles of cluster k read (none: lo >= hi). */
static void halo_rows(const BkCtx *c, const BkSegment *sg, int k, int *lo, int *hi)
{
    const BkLow *l = &sg->layer->lw;
    int cpc = c->chip->cores_per_cluster;
    *lo = l->H;
    *hi = 0;
    for (int t = 0; t < sg->layer->ntiles; t++) {
        if (sg->tile_core[t] / cpc != k) continue;
        BkTilePos p = bk_tile_pos(l, t);
        int r0, r1;
        tile_rows(l, p, &r0, &r1);
        BkSpan ys = bk_window_span(r0, r1 - r0, l->sh, l->pt, l->dh, l->kh, l->H);
        if (ys.n <= 0) continue;
        *lo = imin(*lo, ys.a);
        *hi = imax(*hi, ys.a + ys.n);
    }
}

/* Input staging ("Inputs in cluster SRAM") of a layer whose input is
 * banded whole (a window of every row): its copy is already in the
 * cluster's SRAM but for the cells other clusters wrote, so the staging
 * gathers those from DRAM into the band (the same layout) and the tiles
 * read the band instead of the staging area. The staged input's use, or
 * NULL. */
static const BandUse *staged(const BkCtx *c, const BkSegment *sg, const BandUse *v, int nv)
{
    const BkLayer *ly = sg->layer;
    if (!ly->in_sram) return NULL;
    for (int i = 0; i < nv; i++)
        if (!v[i].owner && v[i].b->dram == ly->lw.x && (halo_ok(c, sg, v[i].b) || (c->band_chans && v[i].b->rows == v[i].b->H)) && !v[i].b->shard &&
            v[i].b->size == (uint64_t)ly->lw.N * ly->lw.C * ly->lw.H * ly->lw.W * (uint64_t)ly->lw.es)
            return &v[i];
    return NULL;
}

/* Pieces of a staged input's gather (docs/backend.md, "The gather in
 * pieces"): a K-split convolution's tile reads one K chunk of the input's
 * channels, so the gather is cut by K chunk, each piece followed by a
 * flag signalling WEIGHTS, and a tile waits only for the pieces up to its
 * own chunk (bk_sched_table); 1 (one flag at the end) otherwise. An
 * input of several images gathers each piece image by image. */
static int pieces_of(const BkCtx *c, const BkSegment *sg, const BandUse *st)
{
    const BkLayer *ly = sg->layer;
    const BkLow *l = &ly->lw;
    int cut = st && st->b->rows == st->b->H && !ly->mcast && !ly->gather_whole && l->kind == BK_K_CONV && l->groups == 1 &&
              l->nkc > 1 && l->kchunk > 0 && c->bands;
    return cut ? l->nkc : 1;
}

int bk_band_gather_pieces(const BkCtx *c, const BkSegment *sg)
{
    if (!c->bands || !sg->layer->in_sram || !c->band_chans) return 1;
    BandUse v[BAND_USES];
    int nv = uses((BkCtx *)c, sg, v);
    return pieces_of(c, sg, staged(c, sg, v, nv));
}

/* Halo staging's gather (halo_ok): the cells other clusters wrote of
 * the rows cluster k's tiles read within its window, DRAM -> the window
 * in the own SRAM, every channel in one DMA cut by owners (their cells
 * marked needed). The staging's flag follows in the list. */
static int gather_halo(BkCtx *c, const BkSegment *sg, Out *o, const AtlInsn *in, uint8_t flag, const BandUse *u, int k,
                       AtlErr *e)
{
    const BkBand *b = u->b;
    int lo, hi, wb = bk_band_window(b->H, c->bands, k, b->rows);
    halo_rows(c, sg, k, &lo, &hi);
    lo = imax(lo, wb);
    hi = imin(hi, wb + b->rows);
    if (lo >= hi) return 0;
    uint64_t plane = b->rowb * (uint64_t)b->H, wplane = b->rowb * (uint64_t)b->rows;
    uint32_t es = (uint32_t)isa_dtype_size(in->dtype);
    AtlInsn g = *in;
    g.src_space = ISA_SPACE_DRAM;
    g.src = b->dram + (uint64_t)lo * b->rowb;
    g.dst_space = ISA_SPACE_SRAM;
    g.dst = u->sram + (uint64_t)(lo - wb) * b->rowb;
    uint32_t sh[4] = {1, (uint32_t)b->C, (uint32_t)(hi - lo), (uint32_t)(b->rowb / es)};
    int32_t ss[4] = {0, (int32_t)plane, (int32_t)b->rowb, (int32_t)es}, ds[4] = {0, (int32_t)wplane, (int32_t)b->rowb, (int32_t)es};
    memcpy(g.shape, sh, sizeof sh);
    memcpy(g.src_stride, ss, sizeof ss);
    memcpy(g.dst_stride, ds, sizeof ds);
    Walk w = {2, lo, hi - lo, 1, 0, 1, b->C, 1};
    BandUse gu = *u;
    gu.halo = 0;
    return cut(c, o, &g, flag, &gu, &w, CUT_GATHER, k, e);
}

/* The DMA of the staging (`in`, its first) gathering the cells of u other
 * clusters wrote, DRAM -> u's band in the own SRAM, in the segment's
 * pieces (pieces_of): the channels of each K chunk, then a 64-byte flag
 * into the layer's LMEM flag word signalling WEIGHTS, but for the last
 * piece, whose flag is the staging's own (it follows in the list). */
static int gather(BkCtx *c, const BkSegment *sg, Out *o, const AtlInsn *in, uint8_t flag, const BandUse *u, int k,
                  AtlErr *e)
{
    const BkBand *b = u->b;
    const BkLow *l = &sg->layer->lw;
    if (b->rows < b->H) return gather_halo(c, sg, o, in, flag, u, k, e);
    /* in pieces: the piece's channels of each image (planes n C + c) */
    int np = pieces_of(c, sg, u), ni = np > 1 && l->N > 1 ? l->N : 1, C = b->C / ni, span = np > 1 ? l->kchunk : C;
    uint64_t plane = b->rowb * (uint64_t)b->H;
    uint32_t es = (uint32_t)isa_dtype_size(in->dtype);
    /* the tiles of a compact strided 1x1 conv read only its cells
     * (docs/backend.md, "Convs: tiles of several images, strided 1x1
     * compacted"): the gather moves no others */
    int compact = l->kind == BK_K_CONV && l->compact && b->H == l->H && b->rowb == (uint64_t)l->W * es && l->OH > 0 &&
                  l->OW > 0;
    for (int q = 0; q < np * ni; q++) {   /* piece j of image n */
        int j = q / ni, n = q % ni, c0 = n * C + j * span, nc = imin(span, C - j * span);
        if (nc <= 0) return atl_fail(e, "internal: gather piece %d of %d holds no channel", j, np);
        AtlInsn g = *in;
        g.src_space = ISA_SPACE_DRAM;
        g.src = b->dram + (uint64_t)c0 * plane;
        g.dst_space = ISA_SPACE_SRAM;
        g.dst = u->sram + (uint64_t)c0 * plane;
        uint32_t sh[4] = {1, (uint32_t)nc, (uint32_t)b->H, (uint32_t)(b->rowb / es)};
        int32_t st[4] = {0, (int32_t)plane, (int32_t)b->rowb, (int32_t)es};
        Walk w = {2, 0, b->H, 1, c0, 1, nc, 1};
        if (compact) {   /* a strided 1x1 conv reads every sh-th row, every sw-th column */
            sh[2] = (uint32_t)l->OH;
            sh[3] = (uint32_t)l->OW;
            st[2] = (int32_t)(b->rowb * (uint64_t)l->sh);
            st[3] = (int32_t)(es * (uint32_t)l->sw);
            w.nr = l->OH;
            w.rstep = l->sh;
        }
        memcpy(g.shape, sh, sizeof sh);
        memcpy(g.src_stride, st, sizeof st);
        memcpy(g.dst_stride, st, sizeof st);
        if (cut(c, o, &g, flag, u, &w, CUT_GATHER, k, e)) return -1;
        if (j == np - 1 || n < ni - 1) continue;
        uint32_t fs[4] = {1, 1, 1, 64 / (uint32_t)isa_dtype_size(c->dt)};
        int64_t fst[4];
        bk_compact(fs, fst);
        AtlInsn f = bk_dma(c->dt, ISA_SPACE_LMEM, sg->layer->l_iflag, ISA_SPACE_SRAM, u->sram, fs, fst, fst);
        f.signal = (uint8_t)(bk_sched_input_sem(sg->layer) + 1);   /* kept by the walk's MCAST (emit.c, cost.c) */
        if (put(o, &f, flag, e)) return -1;
    }
    return 0;
}

/* A DMA of a tile of several images walks two dimensions of whole
 * channel planes of b (images and channels) on its DRAM side (dst when
 * store), which one walk of cells cannot follow: the dimension of the
 * larger stride (the images), to be cut into one DMA per step; -1 when
 * the DMA has fewer such dimensions (or more), or b holds one image. */
static int image_dim(const BkBand *b, const AtlInsn *in, int store)
{
    if (b->images < 2) return -1;
    const int32_t *st = store ? in->dst_stride : in->src_stride;
    uint64_t plane = b->rowb * (uint64_t)b->H;
    int d1 = -1, d2 = -1;
    for (int d = 0; d < 4; d++) {
        if (in->shape[d] <= 1 || st[d] <= 0 || (uint64_t)st[d] % plane) continue;
        if (d1 < 0) d1 = d;
        else if (d2 < 0) d2 = d;
        else return -1;
    }
    if (d2 < 0) return -1;
    return st[d1] > st[d2] ? d1 : d2;
}

static int rewrite(BkCtx *c, const BkSegment *sg, const BandUse *v, int nv, const BandUse *st, int *gathered,
                   const AtlInsn *in, uint8_t flag, int k, Out *o, AtlErr *e);

/* `in` cut along dimension d into one DMA per step, each rewritten. */
static int rewrite_steps(BkCtx *c, const BkSegment *sg, const BandUse *v, int nv, const BandUse *st, int *gathered,
                         const AtlInsn *in, uint8_t flag, int k, Out *o, int d, AtlErr *e)
{
    for (uint32_t i = 0; i < in->shape[d]; i++) {
        AtlInsn p = *in;
        p.shape[d] = 1;
        p.src += (uint64_t)((int64_t)i * in->src_stride[d]);
        p.dst += (uint64_t)((int64_t)i * in->dst_stride[d]);
        if (rewrite(c, sg, v, nv, st, gathered, &p, flag, k, o, e)) return -1;
    }
    return 0;
}

/* One DMA of a tile's code on cluster k into o (st: the staged input,
 * NULL none; *gathered once its gather is put). A DMA of several images
 * (image_dim) goes image by image. */
static int rewrite(BkCtx *c, const BkSegment *sg, const BandUse *v, int nv, const BandUse *st, int *gathered,
                   const AtlInsn *in, uint8_t flag, int k, Out *o, AtlErr *e)
{
    if (isa_ops[in->op].engine != ISA_ENGINE_DMA) return put(o, in, flag, e);
    if (st) {
        uint64_t lo = c->sram_stage, hi = c->sram_stage + st->b->size;
        if (in->dst_space == ISA_SPACE_SRAM && in->dst >= lo && in->dst < hi) {   /* the staging copy */
            if (*gathered) return 0;
            *gathered = 1;
            return gather(c, sg, o, in, flag, st, k, e);
        }
        if (in->src_space == ISA_SPACE_SRAM && in->src >= lo && in->src < hi) {   /* reads of the staged copy */
            AtlInsn p = *in;
            if (st->b->rows == st->b->H || (in->src == lo && in->dst_space == ISA_SPACE_LMEM && in->dst == sg->layer->l_iflag)) {
                p.src = st->sram + (in->src - lo);   /* the band whole, or the staging's flag */
                return put(o, &p, flag, e);
            }
            /* halo staging: the window from the own SRAM, other rows from DRAM */
            Walk w;
            p.src_space = ISA_SPACE_DRAM;
            p.src = st->b->dram + (in->src - lo);
            if (in->op != ISA_OP_DMA_COPY || dma_cells(st->b, p.src, p.shape, p.src_stride, isa_dtype_size(in->dtype), &w)) {
                st->b->need_all = 1;
                return put(o, &p, flag, e);
            }
            return cut(c, o, &p, flag, st, &w, CUT_LOAD, k, e);
        }
    }
    const BandUse *src = in->op == ISA_OP_DMA_FILL ? NULL : find_use(v, nv, in->src_space, in->src);
    const BandUse *dst = find_use(v, nv, in->dst_space, in->dst);
    if (dst && !dst->owner) dst = NULL;   /* a tensor no cluster owns stays in DRAM */
    if (!src && !dst) return put(o, in, flag, e);
    Walk w;
    int es = isa_dtype_size(in->dtype);
    if (in->op == ISA_OP_DMA_COPY && !(src && dst)) {
        const BandUse *u = dst ? dst : src;
        int d = image_dim(u->b, in, dst != NULL);
        if (d >= 0) return rewrite_steps(c, sg, v, nv, st, gathered, in, flag, k, o, d, e);
    }
    if (dst) {
        if (src || in->op != ISA_OP_DMA_COPY || dma_cells(dst->b, in->dst, in->shape, in->dst_stride, es, &w))
            return atl_fail(e, "internal: a store into a banded tensor is not whole rows of channels");
        /* the own SRAM's cells, then DRAM's */
        return cut(c, o, in, flag, dst, &w, CUT_STORE_SRAM, k, e) || cut(c, o, in, flag, dst, &w, CUT_STORE_DRAM, k, e) ? -1 : 0;
    }
    if (in->op != ISA_OP_DMA_COPY || dma_cells(src->b, in->src, in->shape, in->src_stride, es, &w)) {
        src->b->need_all = 1;   /* read whole from DRAM */
        return put(o, in, flag, e);
    }
    return cut(c, o, in, flag, src, &w, CUT_LOAD, k, e);
}

/* 1 when rewrite() changes `in`: a DMA with an end on a banded tensor,
 * or on the staged copy st (its copy gathers, its reads move to the band). */
static int touches(const BkCtx *c, const BandUse *v, int nv, const BandUse *st, const AtlInsn *in)
{
    if (isa_ops[in->op].engine != ISA_ENGINE_DMA) return 0;
    if (st) {
        uint64_t lo = c->sram_stage, hi = c->sram_stage + st->b->size;
        if ((in->dst_space == ISA_SPACE_SRAM && in->dst >= lo && in->dst < hi) ||
            (in->src_space == ISA_SPACE_SRAM && in->src >= lo && in->src < hi))
            return 1;
    }
    const BandUse *dst = find_use(v, nv, in->dst_space, in->dst);
    return (dst && dst->owner) || (in->op != ISA_OP_DMA_FILL && find_use(v, nv, in->src_space, in->src));
}

/* Rewrites one list of code in place (weights flags w, NULL for none),
 * built in its spare buffers; a list none of whose DMAs touches a banded
 * tensor or the staged copy stays as it is. */
static int rewrite_list(BkCtx *c, const BkSegment *sg, const BandUse *v, int nv, const BandUse *st, int *gathered,
                        BkCode *code, AtlInsn **list, int *n, int *cap, uint8_t **w, int k, AtlErr *e)
{
    int i = 0;
    while (i < *n && !touches(c, v, nv, st, &(*list)[i])) i++;
    if (i == *n) return 0;
    Out o = {0};
    if (bk_code_spare(code, 0, 0, &o.v, &o.w, &o.cap, &o.capw)) return atl_fail(e, "out of memory rewriting bands");
    for (int i = 0; i < *n; i++)
        if (rewrite(c, sg, v, nv, st, gathered, &(*list)[i], w ? (*w)[i] : 0, k, &o, e)) {
            bk_code_unspare(code, o.v, o.w, o.cap, o.capw);
            return -1;
        }
    if (w && o.capw < o.cap) {   /* the list's flags: as many as its capacity */
        uint8_t *q = realloc(o.w, (size_t)o.cap);
        if (!q) {
            bk_code_unspare(code, o.v, o.w, o.cap, o.capw);
            return atl_fail(e, "out of memory rewriting bands");
        }
        o.w = q;
        o.capw = o.cap;
    }
    bk_code_swap(code, list, n, cap, w, o.v, o.w, o.n, o.cap, o.capw);
    return 0;
}

void bk_band_apply_marks(BkCtx *c)
{
    for (int t = 0; t < c->g->nt; t++)
        if (c->pl[t].band) apply_marks(&c->band[t]);
}

int bk_band_code(BkCtx *c, const BkSegment *sg, BkCode *k, int cluster, AtlErr *e)
{
    BandUse v[BAND_USES];
    int nv = uses(c, sg, v), gathered = 0;
    if (!nv) return 0;
    const BandUse *st = staged(c, sg, v, nv);
    BandUse hs;
    if (st && st->b->rows < st->b->H) {   /* halo staging: its loads see the whole window kept */
        hs = *st;
        hs.halo = 1;
        st = &hs;
    }
    if (rewrite_list(c, sg, v, nv, st, &gathered, k, &k->ld, &k->nld, &k->capld, &k->ld_w, cluster, e) ||
        rewrite_list(c, sg, v, nv, st, &gathered, k, &k->cp, &k->ncp, &k->capcp, NULL, cluster, e) ||
        rewrite_list(c, sg, v, nv, st, &gathered, k, &k->st, &k->nst, &k->capst, NULL, cluster, e))
        return -1;
    return 0;
}
