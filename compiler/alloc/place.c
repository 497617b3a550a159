/* place.c - DRAM placement of every tensor.
 *
 * Reads: the graph, the storage roots set by bk_match_patterns (fused
 *   activation outputs) and the view marks of passes/views.c.
 * Does:
 *   - views (Reshape/Flatten/Squeeze/Unsqueeze) share their input's storage:
 *     a tensor's root is found by following view inputs and fusion aliases;
 *     a view whose output and input would both be graph inputs/outputs
 *     keeps its own storage instead (the compiler lowers it as a copy);
 *   - a root that is (or has a view that is) a graph input or output lives
 *     in the io region, packed in graph order, 64-byte aligned (staged:
 *     where BkCtx.io_fixed says; a pipeline's stage boundary in SRAM,
 *     where BkCtx.io_sram says);
 *   - other roots live in the activations region, packed by liveness with
 *     compiler/alloc/memplan.h (interval [producer step, last consumer step] of
 *     the root and all its aliases; steps are node indices);
 *   - every tensor takes ir_numel x its storage dtype's size (bk_tensor_es:
 *     float tensors in the storage dtype, integers and bools as chip
 *     integers);
 *   - constants are placed in the weights region lazily, when a lowering
 *     first asks for them (bk_const_addr), so weights that a lowering
 *     re-lays out (conv, matmul) are stored once, in the layout used.
 * Guarantees: every non-constant tensor a lowered node reads or writes has
 *   a region and offset; no two activation roots alive at the same step
 *   overlap. Fails when a fused result would make a graph output share
 *   storage with a graph input or another output (would need a copy).
 * Why row-major ONNX order in DRAM: see docs/backend.md (views stay free and
 *   the io tensors keep ONNX's layout with no conversion pass). */
#include <stdlib.h>
#include <string.h>
#include "compiler/alloc/alloc.h"
#include "compiler/alloc/memplan.h"

static int root_of(const BkCtx *c, int t)
{
    for (int k = 0; k < c->g->nt && c->pl[t].root != t; k++) t = c->pl[t].root;
    return t;
}

int bk_tensor_root(const BkCtx *c, int tensor) { return root_of(c, tensor); }

/* The tagged address of a placed root (an SRAM tag when it lives in SRAM). */
static uint64_t place_addr(const BkPlace *p)
{
    return bk_addr(p->in_sram ? BK_SRAM_TAG_REGION : p->region, p->offset);
}

uint64_t bk_tensor_addr(const BkCtx *c, int tensor)
{
    return place_addr(&c->pl[root_of(c, tensor)]);
}

int bk_tensor_in_dram(BkCtx *c, int tensor, uint64_t *tagged, AtlErr *e)
{
    if (c->g->t[tensor].data) return bk_const_addr(c, tensor, tagged, e);
    int r = root_of(c, tensor);
    if (!c->pl[r].placed) return atl_fail(e, "tensor '%s' has no DRAM placement", c->g->t[tensor].name);
    *tagged = place_addr(&c->pl[r]);
    return 0;
}

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static int is_io(const IrTensor *x) { return !x->data && (x->is_input || x->is_output); }

/* Views share their input's storage (in graph order, so a chain of views
 * ends at one root), except a view that would join two graph inputs or
 * outputs in one storage: it keeps its own root and is lowered as a copy
 * (lower/move.c). io_of[r] (scratch, nt entries): the graph
 * input/output in root r's storage, -1 none. */
static void share_views(BkCtx *c, int *io_of)
{
    const IrGraph *g = c->g;
    for (int t = 0; t < g->nt; t++)
        if (is_io(&g->t[t]) && io_of[root_of(c, t)] < 0) io_of[root_of(c, t)] = t;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead || n->nout < 1 || n->out[0] < 0 || !g->t[n->out[0]].is_view) continue;
        if (n->in[0] < 0 || g->t[n->in[0]].data) continue;
        int rin = root_of(c, n->in[0]), rout = root_of(c, n->out[0]);
        if (io_of[rin] >= 0 && io_of[rout] >= 0) continue;
        c->pl[n->out[0]].root = n->in[0];
        if (io_of[rin] < 0) io_of[rin] = io_of[rout];
    }
}

/* Placement split: a conv whose residual tail reads a tensor x that dies
 * there (last[x] is its step) and writes a same-sized result y may write
 * y over x in place (MemBuffer.overwrite): each output tile loads the box
 * of x it then stores to, on the same core, before the store; no other
 * tile reads that box. Not when the conv itself reads x (its windows reach
 * other tiles' boxes); a chain refuses an output that shares bytes with
 * its inputs (lower/chain.c). */
static void pair_in_place(const BkCtx *c, MemBuffer *bufs, const int *bufi, const int *first, const int *last)
{
    const IrGraph *g = c->g;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead || c->skip[i] || c->tail[i] < 0 || n->nout < 1 || n->out[0] < 0) continue;
        const IrNode *a = &g->nodes[c->tail[i]];
        int q = a->in[0] == n->out[0] ? a->in[1] : a->in[0];
        int rx = root_of(c, q), ry = root_of(c, n->out[0]), conv_reads_x = 0;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] >= 0 && !g->t[n->in[k]].data && root_of(c, n->in[k]) == rx) conv_reads_x = 1;
        if (conv_reads_x || rx == ry || bufi[rx] < 0 || bufi[ry] < 0 || last[rx] != i || first[ry] != i) continue;
        if (bufs[bufi[rx]].size != bufs[bufi[ry]].size) continue;
        bufs[bufi[ry]].overwrite = bufi[rx] + 1;
    }
}

/* Placement split, a pointwise convolution marked BK_OVERLAY_ATTR (by
 * the staged driver, compile.c: a rebuild kept only where the stage then
 * prices lower): its output y may take the bytes of its input x where x
 * dies there (MemBuffer.overwrite; y no larger). One image, 1x1, stride
 * 1, no padding, one group, the same H and W (bk_overlay_shape_ok): y's
 * element (c, h, w) then lies over x's (c, h, w), which only the output
 * tiles of that pixel read; lower/conv.c cuts such a convolution into no
 * output-channel chunks (BkPlace.over_in), so the one tile storing over
 * a pixel's x has loaded all of it (K chunks: on one core, in order). */
int bk_overlay_shape_ok(const IrGraph *g, int node)
{
    const IrNode *n = &g->nodes[node];
    if (n->dead || strcmp(n->op, "Conv") || n->nin < 2 || n->nout != 1 || n->in[0] < 0 || n->out[0] < 0) return 0;
    const IrTensor *x = &g->t[n->in[0]], *y = &g->t[n->out[0]], *w = n->in[1] >= 0 ? &g->t[n->in[1]] : NULL;
    if (x->data || !w || !w->data || x->ndim != 4 || y->ndim != 4 || w->ndim != 4) return 0;
    if (x->dims[0] != 1 || y->dims[0] != 1 || x->dims[2] != y->dims[2] || x->dims[3] != y->dims[3]) return 0;
    if (w->dims[2] != 1 || w->dims[3] != 1 || ir_attr_int(n, "group", 1) != 1 || y->dims[1] > x->dims[1]) return 0;
    const IrAttr *a = ir_attr(n, "strides");
    for (int k = 0; a && k < a->n; k++) if (a->ints[k] != 1) return 0;
    a = ir_attr(n, "pads");
    for (int k = 0; a && k < a->n; k++) if (a->ints[k] != 0) return 0;
    const char *ap = ir_attr_str(n, "auto_pad", "NOTSET");
    return !strcmp(ap, "NOTSET") || !strcmp(ap, "VALID");
}

static void pair_overlay(const BkCtx *c, MemBuffer *bufs, const int *bufi, const int *first, const int *last)
{
    const IrGraph *g = c->g;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (c->skip[i] || c->tail[i] >= 0 || !ir_attr_int(n, BK_OVERLAY_ATTR, 0) || !bk_overlay_shape_ok(g, i)) continue;
        int rx = root_of(c, n->in[0]), ry = root_of(c, n->out[0]);
        if (rx == ry || bufi[rx] < 0 || bufi[ry] < 0 || last[rx] != i || first[ry] != i) continue;
        if (bufs[bufi[ry]].overwrite || bufs[bufi[ry]].size > bufs[bufi[rx]].size) continue;
        bufs[bufi[ry]].overwrite = bufi[rx] + 1;
    }
}

/* After placement: BkPlace.over_in on each marked convolution's output
 * whose bytes overlap its input's (the pair taken, in SRAM or DRAM). */
static void flag_overlay(BkCtx *c)
{
    const IrGraph *g = c->g;
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (c->skip[i] || !ir_attr_int(n, BK_OVERLAY_ATTR, 0) || !bk_overlay_shape_ok(g, i)) continue;
        int rx = root_of(c, n->in[0]), ry = root_of(c, n->out[0]);
        const BkPlace *px = &c->pl[rx];
        BkPlace *py = &c->pl[ry];
        if (!px->placed || !py->placed || px->in_sram != py->in_sram || px->region != py->region) continue;
        uint64_t zx = (uint64_t)ir_numel(&g->t[rx]) * (uint64_t)bk_tensor_es(c, rx);
        uint64_t zy = (uint64_t)ir_numel(&g->t[ry]) * (uint64_t)bk_tensor_es(c, ry);
        if (px->offset < py->offset + zy && py->offset < px->offset + zx) py->over_in = 1;
    }
}

/* Placement split: which activation buffers live in the cluster's SRAM.
 * Two choices, the one leaving fewer bytes in DRAM kept:
 *   - the buffers the liveness packing of all of them put wholly below the
 *     SRAM size, at that offset;
 *   - largest first, each buffer added when the set still packs into the
 *     SRAM (memplan again, the set's own offsets).
 * sram[i] = 1 for buffer i in SRAM, whose offset is then its SRAM offset;
 * the others keep no offset (packed again into DRAM by the caller). */
static int choose_sram(const BkCtx *c, MemBuffer *bufs, int nb, int *sram, AtlErr *e)
{
    uint64_t left_a = 0, left_b = 0;
    for (int i = 0; i < nb; i++) {
        sram[i] = bufs[i].offset + bufs[i].size <= c->sram_cap;
        if (!sram[i]) left_a += bufs[i].size;
    }
    int *order = malloc((size_t)nb * sizeof *order), *pick = calloc((size_t)nb, sizeof *pick);
    MemBuffer *set = calloc((size_t)nb, sizeof *set);
    uint64_t *at = calloc((size_t)nb, sizeof *at);
    int rc = -1;
    if (!order || !pick || !set || !at) { atl_fail(e, "out of memory in placement"); goto done; }
    for (int i = 0; i < nb; i++) order[i] = i;
    for (int i = 1; i < nb; i++)   /* largest first (insertion sort: tens to hundreds of buffers) */
        for (int k = i; k > 0 && bufs[order[k]].size > bufs[order[k - 1]].size; k--) {
            int t = order[k]; order[k] = order[k - 1]; order[k - 1] = t;
        }
    int n = 0;
    for (int k = 0; k < nb; k++) {
        int i = order[k];
        if (bufs[i].size > c->sram_cap) { left_b += bufs[i].size; continue; }
        int idx[1024], m = 0;
        for (int q = 0; q < nb && m < 1024; q++)
            if (pick[q] || q == i) idx[m++] = q;
        if (m == 1024) { left_b += bufs[i].size; continue; }
        memplan_subset(bufs, idx, m, set);
        MemPlanResult r;
        memset(&r, 0, sizeof r);
        if (memplan_assign(set, m, &r, e)) goto done;
        if (r.footprint <= c->sram_cap) {
            pick[i] = 1;
            n++;
            for (int q = 0; q < m; q++) at[idx[q]] = set[q].offset;
        } else
            left_b += bufs[i].size;
    }
    if (left_b < left_a)
        for (int i = 0; i < nb; i++) {
            sram[i] = pick[i];
            if (pick[i]) bufs[i].offset = at[i];
        }
    rc = 0;
done:
    free(order); free(pick); free(set); free(at);
    return rc;
}

/* Placement split: the buffers choose_sram picks live in SRAM; the others
 * are packed again, alone, into the DRAM activation region (res describes
 * it afterwards). */
static int to_sram(BkCtx *c, MemBuffer *bufs, int *bufi, int nb, MemPlanResult *res, AtlErr *e)
{
    int *left = malloc((size_t)nb * sizeof *left), nl = 0;
    MemBuffer *rest = calloc((size_t)nb, sizeof *rest);
    int *sram = calloc((size_t)nb, sizeof *sram);
    int rc = -1;
    if (!left || !rest || !sram) { atl_fail(e, "out of memory in placement"); goto done; }
    if (choose_sram(c, bufs, nb, sram, e)) goto done;
    c->act_sram = 0;
    for (int i = 0; i < nb; i++) {
        if (sram[i]) {
            if (bufs[i].offset + bufs[i].size > c->act_sram) c->act_sram = bufs[i].offset + bufs[i].size;
        } else
            left[nl++] = i;
    }
    memplan_subset(bufs, left, nl, rest);
    memset(res, 0, sizeof *res);
    if (nl && memplan_assign(rest, nl, res, e)) { atl_err_prefix(e, "activation placement"); goto done; }
    for (int k = 0; k < nl; k++) bufs[left[k]].offset = rest[k].offset;
    for (int t = 0; t < c->g->nt; t++)
        if (bufi[t] >= 0 && sram[bufi[t]]) {
            c->pl[t].placed = 1;
            c->pl[t].in_sram = 1;
            c->pl[t].region = ABM_REGION_ACTIVATIONS;
            c->pl[t].offset = bufs[bufi[t]].offset;
            bufi[t] = -1;
        }
    rc = 0;
done:
    free(left); free(rest); free(sram);
    return rc;
}

int bk_band_window(int H, int K, int k, int rows)
{
    int share = K > 1 ? (H + K - 1) / K : H;
    int b = (int)((int64_t)k * H / (K > 1 ? K : 1)) - (rows - share) / 2;
    if (b > H - rows) b = H - rows;
    return b > 0 ? b : 0;
}

/* Bands: the window sizes placement tries, as margins each side of a
 * cluster's share of the rows in quarters of the share, -1 the whole
 * tensor (no row loses its SRAM copy to a chunk across a share's edge);
 * small_whole: small tensors whole (band_small: the late layers', which
 * channel bands keep every row of).
 * Of those leaving the fewest bytes in DRAM, the first, unless a larger
 * window after it leaves as few with its banded tensors in at most half
 * the band SRAM: it leaves more SRAM for input staging (ResNet-50 bf16 on
 * a1 with row bands alone: 2.32 M cycles with half-share margins, 2.29 M
 * with quarter-share ones; resnet20_cifar: 131,036 cycles whole, 131,906
 * with quarter-share). */
static const struct { int quarters, small_whole, shard; } band_opts[] = {{1, 1, 0}, {1, 0, 0}, {2, 1, 0}, {2, 0, 0}, {-1, 0, 0}, {-1, 0, 1}};
#define BAND_MARGINS (int)(sizeof band_opts / sizeof band_opts[0])

/* A small tensor (H rows, `bytes` bytes), kept whole by small_whole: at
 * most a third of the band SRAM, at most 4 rows a cluster (the late
 * layers'; the early layers' row bands keep their windows). */
static int band_small(const BkCtx *c, int H, uint64_t bytes)
{
    return bytes <= c->sram_cap / 3 && H <= 4 * c->bands;
}

/* The rows of each cluster's window of an H-row tensor of `bytes` bytes. */
static int band_rows(const BkCtx *c, int H, uint64_t bytes, int option)
{
    int K = c->bands, share = K > 1 ? (H + K - 1) / K : H, q = band_opts[option].quarters;
    if (band_opts[option].small_whole && band_small(c, H, bytes)) q = -1;
    int rows = q < 0 ? H : share + 2 * ((share * q + 3) / 4);
    return rows < H ? rows : H;
}

/* Row bands: x is an image tensor (NCHW). One of fewer
 * rows than clusters (the last layers of a small CNN: mobilenetv2_035's
 * 3 x 3 at 96 x 96) is banded too: its window is every row (band_rows), so
 * each cluster can keep it whole, and channel bands keep the cells a
 * cluster writes in its SRAM instead of sending the whole tensor through
 * DRAM to be read back by every cluster. A tensor of the graph's N > 1
 * images (the batch of its first input) is banded per image
 * (docs/backend.md, "Bands of several images"): its N x C channel planes
 * are the band's planes, each image's rows banded the same way. */
static int band_image(const BkCtx *c, const IrTensor *x)
{
    const IrGraph *g = c->g;
    int64_t batch = g->nin > 0 && g->t[g->inputs[0]].ndim > 0 ? g->t[g->inputs[0]].dims[0] : 1;
    return x->ndim == 4 && (x->dims[0] == 1 || x->dims[0] == batch) && x->dims[2] >= 1 && x->dims[3] >= 1;
}

/* The channel planes of a banded image tensor: N x C. */
static uint64_t band_planes(const IrTensor *x) { return (uint64_t)x->dims[0] * (uint64_t)x->dims[1]; }

/* Channel shards (band option shard; docs/backend.md, "Channel shards"):
 * the channels of each image each cluster keeps of an image tensor of
 * several images, `bytes` bytes whole, that takes a shard (C / clusters),
 * 0 none: a tensor of more than a third of the band SRAM whole whose
 * channels the clusters divide (layer4's 2048-channel tensors of a
 * staged ResNet-50's chip stage at 8 images, 3.2 MB in fp32), so that a
 * channel-banded layer keeps its own output channels in its SRAM and a
 * consumer whose clusters read the same channels (a residual Add in its
 * convolution's epilogue, a K split across clusters) finds them there. */
static int band_shard(const BkCtx *c, const IrTensor *x, uint64_t bytes, int option)
{
    int K = c->bands;
    if (!band_opts[option].shard || !c->band_chans || K < 2 || x->dims[0] < 2 || x->dims[1] % K || bytes <= c->sram_cap / 3)
        return 0;
    return (int)(x->dims[1] / K);
}

/* 1 when some image tensor of several images could take a shard. */
static int any_shard(const BkCtx *c, const MemBuffer *bufs, const int *bufi, int option)
{
    for (int t = 0; t < c->g->nt; t++)
        if (bufi[t] >= 0 && band_image(c, &c->g->t[t]) && band_shard(c, &c->g->t[t], bufs[bufi[t]].size, option)) return 1;
    return 0;
}

/* Row bands, one window option: v[i] (a copy of bufs) sized as the
 * candidate image tensors' windows (the others over the SRAM), the
 * candidates packed again at those sizes, choose_sram's pick in sram[];
 * *left the full bytes of the image tensors left in DRAM only. */
static int band_option(BkCtx *c, const MemBuffer *bufs, const int *bufi, int nb, int option, MemBuffer *v,
                       MemBuffer *w, int *wi, int *sram, uint64_t *left, AtlErr *e)
{
    memcpy(v, bufs, (size_t)nb * sizeof *v);
    for (int t = 0; t < c->g->nt; t++) {
        const IrTensor *x = &c->g->t[t];
        if (bufi[t] < 0) continue;
        if (!band_image(c, x))
            v[bufi[t]].size = c->sram_cap + 1;
        else if (band_shard(c, x, bufs[bufi[t]].size, option))
            v[bufi[t]].size = (uint64_t)x->dims[0] * (uint64_t)band_shard(c, x, bufs[bufi[t]].size, option) *
                              (uint64_t)x->dims[2] * (uint64_t)x->dims[3] * (uint64_t)bk_tensor_es(c, t);
        else
            v[bufi[t]].size = band_planes(x) * (uint64_t)band_rows(c, (int)x->dims[2], bufs[bufi[t]].size, option) *
                              (uint64_t)x->dims[3] * (uint64_t)bk_tensor_es(c, t);
    }
    /* choose_sram's first choice keeps the offsets it is given */
    int m = 0;
    for (int i = 0; i < nb; i++)
        if (v[i].size <= c->sram_cap) wi[m++] = i;
    memplan_subset(v, wi, m, w);
    MemPlanResult pr;
    memset(&pr, 0, sizeof pr);
    if (m && memplan_assign(w, m, &pr, e)) { atl_err_prefix(e, "row band placement"); return -1; }
    for (int q = 0; q < m; q++) v[wi[q]].offset = w[q].offset;
    if (choose_sram(c, v, nb, sram, e)) return -1;
    /* a small tensor windowed counts half: channel bands move the cells
     * outside its windows through DRAM */
    *left = 0;
    for (int t = 0; t < c->g->nt; t++) {
        if (bufi[t] < 0 || !band_image(c, &c->g->t[t])) continue;
        uint64_t whole = bufs[bufi[t]].size;
        if (!sram[bufi[t]]) *left += whole;
        else if (band_shard(c, &c->g->t[t], whole, option))   /* kept: as a whole tensor on channel bands */
            ;
        else if (c->band_chans && band_small(c, (int)c->g->t[t].dims[2], whole) && band_rows(c, (int)c->g->t[t].dims[2], whole, option) < c->g->t[t].dims[2])
            *left += whole / 2;
    }
    return 0;
}

/* The rows either side of an output row that node n's tiles read of its
 * input slot i (tensor u of a banded root), at most BK_BAND_NEAR (its
 * default when not known): a Conv's or pool's first input half its
 * dilated window's height; a residual Add run in its convolution's
 * epilogue (BkCtx.tail) reads the rows the convolution writes, and an
 * activation absorbed in place (its output shares the storage) none, 0. */
static int consumer_near(const BkCtx *c, int n, int i)
{
    const IrNode *nd = &c->g->nodes[n];
    if (c->skip[n]) {
        /* absorbed: an activation run in place (its output shares the
         * storage, its readers are counted with it) or a residual tail */
        if (nd->nout >= 1 && nd->out[0] >= 0 && root_of(c, nd->out[0]) == root_of(c, nd->in[i])) return 0;
        for (int p = 0; p < c->g->nn; p++)
            if (c->tail[p] == n) return 0;
        return BK_BAND_NEAR;
    }
    int win = !strcmp(nd->op, "Conv") || !strcmp(nd->op, "MaxPool") || !strcmp(nd->op, "AveragePool");
    const IrAttr *ks = ir_attr(nd, "kernel_shape"), *dl = ir_attr(nd, "dilations");
    /* a Conv's kernel height: its attribute, else its weights' */
    const IrTensor *w = nd->nin > 1 && nd->in[1] >= 0 ? &c->g->t[nd->in[1]] : NULL;
    int64_t kh = ks && ks->n == 2 ? ks->ints[0] : !ks && nd->op[0] == 'C' && w && w->ndim == 4 ? w->dims[2] : -1;
    if (!win || i != 0 || kh < 1 || (dl && dl->n != 2)) return BK_BAND_NEAR;
    int64_t reach = ((kh - 1) * (dl ? dl->ints[0] : 1) + 1) / 2;
    return reach >= 0 && reach < BK_BAND_NEAR ? (int)reach : BK_BAND_NEAR;
}

/* BkBand.near of banded root t (bk_band_reach): the most any consumer
 * of t or of a tensor sharing its storage reads around a row
 * (consumer_near); BK_BAND_NEAR for a graph output. Only the tile search's guess of which cells go to DRAM
 * depends on it (the final schedule knows them): a 1x1 convolution's
 * row-banded producer was priced as if its rows near a share's edge were
 * all written to DRAM for a 7x7 window. */
int bk_band_reach(const BkCtx *c, int t)
{
    const IrGraph *g = c->g;
    int near = 0;
    for (int u = 0; u < g->nt && near < BK_BAND_NEAR; u++) {
        if (root_of(c, u) != t) continue;
        for (int k = 0; k < g->nout; k++)
            if (g->outputs[k] == u) return BK_BAND_NEAR;
        for (int n = 0; n < g->nn && near < BK_BAND_NEAR; n++) {
            if (g->nodes[n].dead) continue;
            for (int i = 0; i < g->nodes[n].nin; i++)
                if (g->nodes[n].in[i] == u) {
                    int r = consumer_near(c, n, i);
                    if (r > near) near = r;
                }
        }
    }
    return near;
}

/* Bands: which activation roots also live in every cluster's SRAM
 * (choose_sram over the image tensors of one image), each as a window
 * of rows per channel plane (bk_band_window; of the sizes band_rows tries, the one leaving the
 * fewest bytes in DRAM, see band_opts), at which SRAM offset;
 * their DRAM placement stays. Allocates their band state. */
static int to_bands(BkCtx *c, const MemBuffer *bufs, const int *bufi, int nb, AtlErr *e)
{
    MemBuffer *v = malloc((size_t)nb * sizeof *v), *w = malloc((size_t)nb * sizeof *w);
    int *sram = calloc((size_t)nb, sizeof *sram), *wi = malloc((size_t)nb * sizeof *wi), rc = -1, pick = 0;
    uint64_t best = UINT64_MAX, left[BAND_MARGINS], foot[BAND_MARGINS];
    if (!v || !w || !sram || !wi) { atl_fail(e, "out of memory in placement"); goto done; }
    for (int o = 0; o < BAND_MARGINS; o++) {
        left[o] = foot[o] = UINT64_MAX;
        if (band_opts[o].small_whole && !c->band_chans) continue;   /* rows only: the windows of before */
        if (band_opts[o].shard && (c->no_shards || !any_shard(c, bufs, bufi, o))) continue;
        if (band_option(c, bufs, bufi, nb, o, v, w, wi, sram, &left[o], e)) goto done;
        foot[o] = 0;
        for (int i = 0; i < nb; i++)
            if (sram[i] && v[i].offset + v[i].size > foot[o]) foot[o] = v[i].offset + v[i].size;
        if (left[o] < best) { best = left[o]; pick = o; }
    }
    for (int o = pick + 1; o < BAND_MARGINS; o++)   /* a larger window of equals in half the SRAM (not a shard) */
        if (left[o] == best && foot[o] <= c->sram_cap / 2 && !band_opts[o].shard) pick = o;
    if (band_option(c, bufs, bufi, nb, pick, v, w, wi, sram, &left[pick], e)) goto done;
    c->act_sram = 0;
    for (int t = 0; t < c->g->nt; t++) {
        if (bufi[t] < 0 || !sram[bufi[t]]) continue;
        const MemBuffer *b = &v[bufi[t]];
        BkBand *bd = &c->band[t];
        bd->H = (int)c->g->t[t].dims[2];
        bd->near = c->band_near > 0 ? c->band_near : bk_band_reach(c, t);
        bd->rows = band_rows(c, bd->H, bufs[bufi[t]].size, pick);
        bd->rowb = (uint64_t)c->g->t[t].dims[3] * (uint64_t)bk_tensor_es(c, t);
        bd->dram = bk_addr(ABM_REGION_ACTIVATIONS, bufs[bufi[t]].offset);
        bd->size = bufs[bufi[t]].size;
        bd->C = (int)band_planes(&c->g->t[t]);
        bd->images = (int)c->g->t[t].dims[0];
        bd->shard = band_shard(c, &c->g->t[t], bufs[bufi[t]].size, pick);
        bd->owner = malloc((size_t)bd->C * (size_t)bd->H);
        bd->need = calloc((size_t)bd->C * (size_t)bd->H, 1);
        bd->run = malloc((size_t)bd->C * sizeof *bd->run);
        if (!bd->owner || !bd->need || !bd->run) { atl_fail(e, "out of memory in placement"); goto done; }
        memset(bd->owner, -2, (size_t)bd->C * (size_t)bd->H);
        for (int ch = 0; ch < bd->C; ch++) bd->run[ch] = bd->C;
        c->pl[t].band = 1;
        c->pl[t].band_off = b->offset;
        if (b->offset + b->size > c->act_sram) c->act_sram = b->offset + b->size;
    }
    rc = 0;
done:
    free(v); free(w); free(sram); free(wi);
    return rc;
}

int bk_place(BkCtx *c, AtlErr *e)
{
    const IrGraph *g = c->g;
    int nt = g->nt, rc = -1;
    int *first = malloc((size_t)nt * sizeof *first), *last = malloc((size_t)nt * sizeof *last);
    int *io = malloc((size_t)nt * sizeof *io), *bufi = malloc((size_t)nt * sizeof *bufi);
    MemBuffer *bufs = calloc((size_t)nt + 1, sizeof *bufs);
    if (!first || !last || !io || !bufi || !bufs) { atl_fail(e, "out of memory in placement"); goto done; }
    for (int t = 0; t < nt; t++) { first[t] = -1; last[t] = -1; io[t] = -1; bufi[t] = -1; }
    share_views(c, io);
    for (int t = 0; t < nt; t++) io[t] = -1;
    /* io roots: one graph input/output each */
    for (int t = 0; t < nt; t++) {
        const IrTensor *x = &g->t[t];
        if (x->data || !(x->is_input || x->is_output)) continue;
        int r = root_of(c, t);
        if (io[r] >= 0 && io[r] != t) {
            atl_fail(e, "graph %s '%s' shares storage with graph %s '%s' (a view or fused result); "
                     "an explicit copy is needed, which is not emitted for fused results",
                     x->is_output ? "output" : "input", x->name,
                     g->t[io[r]].is_input ? "input" : "output", g->t[io[r]].name);
            goto done;
        }
        io[r] = t;
    }
    /* liveness of roots: producer step .. last consumer step */
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead || c->skip[i]) continue;   /* absorbed nodes read and write nothing */
        for (int k = 0; k < n->nout; k++) {
            int t = n->out[k];
            if (t < 0 || g->t[t].data) continue;
            int r = root_of(c, t);
            if (first[r] < 0 || i < first[r]) first[r] = i;
            if (i > last[r]) last[r] = i;
        }
        int gelu = c->gelu_src[i];          /* a Gelu layer reads only x */
        const IrNode *tail = c->tail[i] >= 0 ? &g->nodes[c->tail[i]] : NULL;
        int nr = gelu >= 0 ? 1 : n->nin, na = tail ? tail->nin : 0;   /* a tail's residual is read here */
        for (int k = 0; k < nr + na; k++) {
            int t = k >= nr ? tail->in[k - nr] : gelu >= 0 ? gelu : n->in[k];
            if (t < 0 || g->t[t].data) continue;
            int r = root_of(c, t);
            if (first[r] < 0) first[r] = 0;
            if (i > last[r]) last[r] = i;
        }
    }
    /* io region: inputs then outputs, in graph order */
    uint64_t iooff = 0;
    for (int pass = 0; pass < 2; pass++) {
        int cnt = pass ? g->nout : g->nin;
        for (int k = 0; k < cnt; k++) {
            int t = pass ? g->outputs[k] : g->inputs[k];
            int r = root_of(c, t);
            if (c->pl[r].placed) continue;
            int64_t ne = ir_numel(&g->t[t]);
            if (ne < 0) { atl_fail(e, "graph %s '%s' has an unknown shape", pass ? "output" : "input", g->t[t].name); goto done; }
            if (c->io_sram && c->io_sram[t]) {   /* pipeline: a stage boundary, in SRAM */
                c->pl[r].placed = 1;
                c->pl[r].in_sram = 1;
                c->pl[r].region = ABM_REGION_IO;
                c->pl[r].offset = c->io_sram[t] - 1;
                continue;
            }
            if (c->io_fixed) {   /* staged: the variant's io layout */
                if (!c->io_fixed[t]) { atl_fail(e, "internal: stage io tensor '%s' has no place", g->t[t].name); goto done; }
                c->pl[r].placed = 1;
                c->pl[r].region = ABM_REGION_IO;
                c->pl[r].offset = c->io_fixed[t] - 1;
                continue;
            }
            iooff = round_up(iooff, 64);
            c->pl[r].placed = 1;
            c->pl[r].region = ABM_REGION_IO;
            c->pl[r].offset = iooff;
            /* with placement split: room for every instance's images */
            iooff += (uint64_t)ne * (uint64_t)bk_tensor_es(c, t) * (uint64_t)(c->io_scale > 1 ? c->io_scale : 1);
        }
    }
    c->io_bytes = c->io_fixed ? c->io_fixed_bytes : round_up(iooff, 64);
    /* activations: memplan over the remaining roots */
    int nb = 0;
    for (int t = 0; t < nt; t++) {
        if (g->t[t].data || root_of(c, t) != t || c->pl[t].placed || first[t] < 0) continue;
        int64_t ne = ir_numel(&g->t[t]);
        if (ne < 0) { atl_fail(e, "tensor '%s' has an unknown shape", g->t[t].name); goto done; }
        bufs[nb].size = (uint64_t)(ne ? ne : 1) * (uint64_t)bk_tensor_es(c, t);
        bufs[nb].align = 64;
        bufs[nb].first = first[t];
        bufs[nb].last = last[t] < first[t] ? first[t] : last[t];
        bufs[nb].alias_of = -1;
        bufi[t] = nb++;
    }
    MemPlanResult res;
    memset(&res, 0, sizeof res);
    if (c->keep_activations) {
        /* every buffer its own range, so all values survive the run */
        for (int i = 0; i < nb; i++) {
            bufs[i].offset = res.footprint;
            res.footprint = round_up(res.footprint + bufs[i].size, 64);
        }
        res.sum_of_buffers = res.footprint;
    } else if (nb && memplan_assign(bufs, nb, &res, e)) { atl_err_prefix(e, "activation placement"); goto done; }
    /* only where the SRAM is short: an in-place result keeps a chain that
     * ends at its conv from forming (lower/chain.c) */
    if (c->split && nb && !c->keep_activations && res.footprint > c->sram_cap) {
        pair_in_place(c, bufs, bufi, first, last);
        pair_overlay(c, bufs, bufi, first, last);
        if (memplan_assign(bufs, nb, &res, e)) { atl_err_prefix(e, "activation placement"); goto done; }
    }
    uint64_t all_sum = res.sum_of_buffers;
    if (c->bands && nb && to_bands(c, bufs, bufi, nb, e)) goto done;
    if (c->sram_cap && !c->bands && nb && to_sram(c, bufs, bufi, nb, &res, e)) goto done;
    res.sum_of_buffers = all_sum;
    for (int t = 0; t < nt; t++) {
        if (bufi[t] < 0) continue;
        c->pl[t].placed = 1;
        c->pl[t].region = ABM_REGION_ACTIVATIONS;
        c->pl[t].offset = bufs[bufi[t]].offset;
    }
    c->act_bytes = round_up(res.footprint, 64);
    c->act_sum = res.sum_of_buffers;
    if (c->split) flag_overlay(c);
    rc = 0;
done:
    free(first); free(last); free(io); free(bufi); free(bufs);
    return rc;
}
