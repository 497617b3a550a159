/* flow.c - the cost model's DMA pricing: the work one DMA puts on each
 * server of the processor-sharing model (cost/cost.c replays the flows).
 *
 * Servers, numbered: the DRAM channels, then per cluster the NoC link in,
 * then per cluster the NoC link out, then per core its DMA port into LMEM,
 * then per cluster its SRAM ports (one server serving `sram.ports` flows
 * at full speed, share.c), then (a chip with `[noc] cluster_links`) every
 * directed cluster link (tim_noc_route's numbering).
 * A DMA is cut into bursts of dma.burst_bytes along its element stream
 * (row-major over its shape); a burst puts on
 *   - each DRAM channel its bytes fall in (interleaved every
 *     dram.interleave bytes, the tag bits of the address dropped):
 *     occupancy of those bytes at one channel's bandwidth;
 *   - the NoC link of the core's cluster in its direction (both for a
 *     DRAM-to-DRAM copy): occupancy of the burst;
 *   - the DMA port of each LMEM end's core (every destination of a
 *     multicast): occupancy at the port's bandwidth, no faster than the
 *     banks the burst covers (from its first address modulo bank_width);
 *   - the SRAM ports of the core's cluster for an SRAM end: occupancy of
 *     the burst at one port's bandwidth (both ends of an SRAM-to-SRAM
 *     copy are one server: the larger counts, as for LMEM); for a peer end
 *     (another cluster's SRAM) that cluster's SRAM ports, and every
 *     cluster link on the route between the two clusters at the links'
 *     bandwidth (not the DRAM links: NoC below);
 * and the work of the DMA on a server is the sum over its bursts. The
 * instruction completes latency + issue cycles after its flow.
 * With `[dram] model = banked` the DRAM ends are requests to banks and
 * rows instead, priced by banked.c on servers of their own (numbered after
 * the ports), with the DMAs the other cores issue about together (the
 * caller's BkFlowPeers); latency is then the NoC's and the DRAM's own.
 *
 * Two ways to compute the same numbers:
 *   - the reference (plan_reference): the definition above, burst by burst,
 *     every element address by division;
 *   - the walk (plan_walk): each end's element stream visited as rows (the
 *     merged contiguous inner dims, or the strided innermost dim) with an
 *     odometer over the outer dims, split at bursts and interleave
 *     boundaries by arithmetic; occupancies read from tables of the few
 *     burst sizes; an LMEM end in closed form when the port is slower than
 *     the fewest banks a burst can cover (the start address cannot matter).
 *     It changes no arithmetic: integer sums of the same per-burst terms.
 *     It needs whole elements per burst, at most 64 channels, and strided
 *     DRAM elements that never straddle an interleave boundary; other DMAs
 *     take the reference.
 * On top, a memo per end: an end's work depends only on its dtype, space,
 * shape, strides and its address modulo the period that matters there
 * (LMEM: bank_width; DRAM, tag bits dropped: the interleave, because moving
 * every address by k interleaves moves every byte k channels on, so the
 * work per channel is the reduced address's rotated by k) as long as its
 * strides are not negative (so no address wraps; else the full address).
 * The key holds exactly those fields, so a hit returns what the walk
 * would; the rotation and the server numbers (the core's cluster link,
 * ports) are applied after the lookup, so one tile load on every core is
 * priced once.
 * test/compiler/test_bk_flow.c compares the walk and the memo with the
 * reference on random DMAs.
 * Owns: its tables and memo, and the cost model's workspace kept with it
 * (bk_flow_workspace; freed by bk_flow_free with the function given), and
 * on a pricer shared by a pool the memo of whole segments' prices
 * (bk_flow_segments, cost.c). */
#include <stdlib.h>
#include <string.h>
#include "compiler/cost/cost.h"
#include "compiler/cost/banked.h"
#include "compiler/cost/memo.h"
#include "isa/config.h"
#include "isa/timing.h"

/* tim_occupancy(bytes, bw) for bytes <= n, filled on first use. */
typedef struct OccTable {
    double bw;
    uint64_t *v;   /* UINT64_MAX = not computed yet */
    uint64_t n;
} OccTable;

/* Words of the memo key of one end: every input its work depends on
 * (its reduced base, shape, strides, dtype and space). */
enum { END_KEY_WORDS = 6 };

struct BkFlowPlanner {
    const AtlChip *ch;
    int nchan, ncores, nsv;
    int noc_in, noc_out, port, sram, link;
    BkBanked *bk;                   /* [dram] model = banked: its pricing (NULL: flow) */
    int bk_first;                   /* its servers from here */
    uint64_t burst;                 /* burst bytes as the bursts are cut */
    int il_shift;                   /* log2 of the interleave, -1 if not a power of two */
    int nch_pow2;                   /* channels is a power of two */
    /* scratch of one plan */
    uint64_t *work, *bursts;        /* per server */
    int *touched, nt;
    uint64_t *ework[2], *eburst[2]; /* per server, the work and bursts of one end (dst, src) */
    int *etouched[2], ent[2];
    uint64_t *chan_bytes;           /* per channel, one burst */
    BkFlowUse *out;                 /* the last plan's uses */
    int nout;
    /* occupancy tables: DRAM channel, DMA port, NoC link, banks (per bank count) */
    OccTable occ_chan, occ_port, occ_noc, occ_sram, occ_link, *occ_bank;
    uint64_t *end_scratch;          /* one end's work and bursts (2 x max(channels, 1)) */
    BkMemo *memo;                   /* the work of ends already priced (memo.h) */
    uint64_t hits, misses;
    void *ws;                       /* the cost model's workspace (bk_flow_workspace) */
    void (*ws_free)(void *);
    int keep_segs;                  /* segments' prices kept (bk_flow_keep_segments) */
    BkMemo *segs;                   /* they (bk_flow_segments), made on first use */
};

void bk_flow_keep_segments(BkFlowPlanner *p) { p->keep_segs = 1; }

BkMemo *bk_flow_segments(BkFlowPlanner *p)
{
    if (p->keep_segs && !p->segs) p->segs = bk_memo_new();
    return p->segs;
}

void **bk_flow_workspace(BkFlowPlanner *p, void (*free_fn)(void *))
{
    p->ws_free = free_fn;
    return &p->ws;
}

static uint64_t occ(OccTable *t, uint64_t bytes)
{
    if (bytes > t->n || !t->v) return tim_occupancy(bytes, t->bw);
    if (t->v[bytes] == UINT64_MAX) t->v[bytes] = tim_occupancy(bytes, t->bw);
    return t->v[bytes];
}

static int occ_init(OccTable *t, double bw, uint64_t n)
{
    t->bw = bw;
    t->n = n;
    t->v = malloc((size_t)(n + 1) * sizeof *t->v);
    if (!t->v) return -1;
    for (uint64_t i = 0; i <= n; i++) t->v[i] = UINT64_MAX;
    return 0;
}

/* Tables only for bursts up to this size (larger ones call tim_occupancy). */
#define OCC_TABLE_MAX 4096

BkFlowPlanner *bk_flow_new(const AtlChip *ch, AtlErr *e)
{
    BkFlowPlanner *p = calloc(1, sizeof *p);
    if (!p) { atl_fail(e, "out of memory in the cost model"); return NULL; }
    p->ch = ch;
    p->nchan = ch->dram_channels;
    p->ncores = cfg_total_cores(ch);
    p->noc_in = p->nchan;
    p->noc_out = p->noc_in + ch->clusters;
    p->port = p->noc_out + ch->clusters;
    p->sram = p->port + p->ncores;
    p->link = p->sram + ch->clusters;
    p->nsv = p->link + (ch->noc_cluster_links ? ch->clusters * TIM_NOC_DIRS : 0);
    if (ch->dram_model == CFG_DRAM_BANKED) {
        p->bk = bk_banked_new(ch);
        if (!p->bk) { free(p); atl_fail(e, "out of memory in the cost model"); return NULL; }
        p->bk_first = p->nsv;
        p->nsv += bk_banked_servers(p->bk);
    }
    p->burst = (uint64_t)ch->dma_burst_bytes;
    p->il_shift = -1;
    for (int b = 0; b < 63; b++) if ((uint64_t)ch->dram_interleave == 1ull << b) p->il_shift = b;
    p->nch_pow2 = p->nchan > 0 && (p->nchan & (p->nchan - 1)) == 0;
    p->work = calloc((size_t)p->nsv, sizeof *p->work);
    p->bursts = calloc((size_t)p->nsv, sizeof *p->bursts);
    p->touched = calloc((size_t)p->nsv, sizeof *p->touched);
    for (int end = 0; end < 2; end++) {
        p->ework[end] = calloc((size_t)p->nsv, sizeof *p->ework[end]);
        p->eburst[end] = calloc((size_t)p->nsv, sizeof *p->eburst[end]);
        p->etouched[end] = calloc((size_t)p->nsv, sizeof *p->etouched[end]);
    }
    p->chan_bytes = calloc((size_t)p->nchan, sizeof *p->chan_bytes);
    p->out = calloc((size_t)p->nsv, sizeof *p->out);
    p->end_scratch = calloc(2 * ((size_t)p->nchan + 1), sizeof *p->end_scratch);
    p->occ_bank = calloc((size_t)ch->lmem_banks + 1, sizeof *p->occ_bank);
    p->memo = bk_memo_new();
    int bad = !p->end_scratch || !p->work || !p->bursts || !p->touched || !p->chan_bytes || !p->out || !p->occ_bank || !p->memo;
    for (int end = 0; end < 2; end++) bad |= !p->ework[end] || !p->eburst[end] || !p->etouched[end];
    uint64_t tn = p->burst <= OCC_TABLE_MAX ? p->burst : 0;
    if (!bad && tn) {
        bad |= occ_init(&p->occ_chan, tim_dram_channel_bytes_per_cycle(ch), tn);
        bad |= occ_init(&p->occ_port, (double)ch->dma_lmem_bytes_per_cycle, tn);
        bad |= occ_init(&p->occ_noc, (double)ch->noc_bytes_per_cycle, tn);
        bad |= occ_init(&p->occ_sram, (double)ch->sram_bytes_per_cycle, tn);
        bad |= occ_init(&p->occ_link, (double)ch->noc_link_bytes_per_cycle, tn);
        for (int nb = 1; nb <= ch->lmem_banks && !bad; nb++)
            bad |= occ_init(&p->occ_bank[nb], (double)nb * ch->lmem_bank_bytes_per_cycle, tn);
    } else if (!bad) {
        p->occ_chan.bw = tim_dram_channel_bytes_per_cycle(ch);
        p->occ_port.bw = (double)ch->dma_lmem_bytes_per_cycle;
        p->occ_noc.bw = (double)ch->noc_bytes_per_cycle;
        p->occ_sram.bw = (double)ch->sram_bytes_per_cycle;
        p->occ_link.bw = (double)ch->noc_link_bytes_per_cycle;
        for (int nb = 1; nb <= ch->lmem_banks; nb++) p->occ_bank[nb].bw = (double)nb * ch->lmem_bank_bytes_per_cycle;
    }
    if (bad) {
        bk_flow_free(p);
        atl_fail(e, "out of memory in the cost model");
        return NULL;
    }
    return p;
}

void bk_flow_free(BkFlowPlanner *p)
{
    if (!p) return;
    bk_banked_free(p->bk);
    free(p->end_scratch); free(p->work); free(p->bursts); free(p->touched); free(p->chan_bytes); free(p->out);
    for (int end = 0; end < 2; end++) { free(p->ework[end]); free(p->eburst[end]); free(p->etouched[end]); }
    free(p->occ_chan.v); free(p->occ_port.v); free(p->occ_noc.v); free(p->occ_sram.v); free(p->occ_link.v);
    for (int nb = 0; p->occ_bank && nb <= p->ch->lmem_banks; nb++) free(p->occ_bank[nb].v);
    free(p->occ_bank);
    bk_memo_free(p->memo);
    bk_memo_free(p->segs);
    if (p->ws_free) p->ws_free(p->ws);
    free(p);
}

int bk_flow_servers(const BkFlowPlanner *p) { return p->nsv; }
int bk_flow_server_ports(const BkFlowPlanner *p, int sv)
{
    return sv >= p->sram && sv < p->sram + p->ch->clusters ? p->ch->sram_ports : 1;
}
void bk_flow_stats(const BkFlowPlanner *p, uint64_t *hits, uint64_t *misses) { *hits = p->hits; *misses = p->misses; }

/* Work w of `bursts` bursts on server s (the NoC links). */
static void add_work(BkFlowPlanner *p, int s, uint64_t w, uint64_t bursts)
{
    if (!w) return;
    if (!p->work[s]) p->touched[p->nt++] = s;
    p->work[s] += w;
    p->bursts[s] += bursts;
}

/* Work w of `bursts` bursts of end `end` (0 dst, 1 src) on server s. */
static void add_end_work(BkFlowPlanner *p, int end, int s, uint64_t w, uint64_t bursts)
{
    if (!w) return;
    if (!p->ework[end][s]) p->etouched[end][p->ent[end]++] = s;
    p->ework[end][s] += w;
    p->eburst[end][s] += bursts;
}

/* The ends' work into the plan: a server both ends use (one DRAM channel
 * for a DRAM-to-DRAM copy, one core's DMA port for LMEM to LMEM) carries
 * the larger of the two, as the simulator merges a transfer's uses of one
 * server (sim/mem.c, use_add). */
static void merge_ends(BkFlowPlanner *p)
{
    for (int end = 0; end < 2; end++) {
        for (int j = 0; j < p->ent[end]; j++) {
            int s = p->etouched[end][j];
            uint64_t w = p->ework[end][s], b = p->eburst[end][s];
            p->ework[end][s] = p->eburst[end][s] = 0;
            if (w <= p->work[s]) continue;
            if (!p->work[s]) p->touched[p->nt++] = s;
            p->work[s] = w;
            p->bursts[s] = b;
        }
        p->ent[end] = 0;
    }
}

/* Moves the scratch work into the output uses (servers with work) and
 * clears the scratch. */
static void collect(BkFlowPlanner *p)
{
    p->nout = 0;
    for (int j = 0; j < p->nt; j++) {
        int s = p->touched[j];
        if (p->work[s]) p->out[p->nout++] = (BkFlowUse){s, p->work[s], p->bursts[s]};
        p->work[s] = p->bursts[s] = 0;
    }
    p->nt = 0;
}

/* A copy, a gather and a scatter read a source; a fill reads nothing. A
 * gather is priced as the copy of rows 0..shape[1]-1 and a scatter as the
 * copy into rows 0..shape[1]-1 (docs/timing.md): the rows really touched
 * are data, the bytes are the same. */
static int reads_source(const AtlInsn *in)
{
    return in->op != ISA_OP_DMA_FILL;
}

/* Where a DMA's data comes from: a fill reads nothing (its own space). */
static int src_space_of(const AtlInsn *in)
{
    return reads_source(in) ? in->src_space : in->dst_space;
}

static void noc_work(BkFlowPlanner *p, const AtlInsn *in, int cl, uint64_t wn, uint64_t nb)
{
    int src_space = src_space_of(in), copy = reads_source(in);
    if (in->dst_space == ISA_SPACE_DRAM && src_space != ISA_SPACE_DRAM) add_work(p, p->noc_out + cl, wn, nb);
    else if (src_space == ISA_SPACE_DRAM && in->dst_space != ISA_SPACE_DRAM) add_work(p, p->noc_in + cl, wn, nb);
    else if (src_space == ISA_SPACE_DRAM && copy) { add_work(p, p->noc_in + cl, wn, nb); add_work(p, p->noc_out + cl, wn, nb); }
}

/* A peer end (another cluster's SRAM) of `nbursts` bursts whose SRAM
 * work is w: that cluster's SRAM ports, and every cluster link between it
 * and the issuing cluster cl (towards it for the destination, back for
 * the source), each for link_work. */
static void peer_end(BkFlowPlanner *p, const AtlInsn *in, int end, int cl, uint64_t w, uint64_t link_work, uint64_t nbursts)
{
    int peer = isa_peer_cluster(end ? in->src : in->dst), links[TIM_NOC_MAX_HOPS];
    add_end_work(p, end, p->sram + peer, w, nbursts);
    int n = end ? tim_noc_route(p->ch, peer, cl, links) : tim_noc_route(p->ch, cl, peer, links);
    for (int k = 0; k < n && k < TIM_NOC_MAX_HOPS; k++) add_work(p, p->link + links[k], link_work, nbursts);
}

/* Cluster links a transfer crosses: a peer end's route (0 for none). */
static int peer_hops(const BkFlowPlanner *p, int core, const AtlInsn *in)
{
    int cl = core / p->ch->cores_per_cluster;
    if (in->dst_space == ISA_SPACE_PEER) return tim_noc_route(p->ch, cl, isa_peer_cluster(in->dst), NULL);
    if (reads_source(in) && in->src_space == ISA_SPACE_PEER) return tim_noc_route(p->ch, isa_peer_cluster(in->src), cl, NULL);
    return 0;
}

/* ---- the reference: burst by burst, addresses by division ---- */

/* Elements of the innermost dims that are contiguous in memory. */
static uint64_t dense_run(const AtlInsn *in, const int32_t st[4], int es)
{
    uint64_t run = 1;
    int64_t expect = es;
    for (int d = 3; d >= 0; d--) {
        if (in->shape[d] == 1) continue;
        if (st[d] != expect) break;
        run *= in->shape[d];
        expect *= in->shape[d];
    }
    return run;
}

static uint64_t elem_addr(const AtlInsn *in, uint64_t base, const int32_t st[4], uint64_t idx)
{
    int64_t off = 0;
    for (int d = 3; d >= 0; d--) {
        uint64_t i = idx % in->shape[d];
        idx /= in->shape[d];
        off += (int64_t)i * st[d];
    }
    return base + (uint64_t)off;
}

/* With the banked model: the work of the DMA's DRAM ends on the banks,
 * rows and buses (banked.c), priced with its lock-step siblings. Both ends
 * of a DRAM-to-DRAM copy are requests to the same channel: their work adds. */
static int banked_ends(BkFlowPlanner *p, const AtlInsn *in, const AtlInsn *const *part, const uint64_t *start, int npart,
                       uint64_t rbanks, uint64_t wbanks, uint64_t used[2])
{
    for (int end = 0; end < 1 + reads_source(in); end++) {
        if ((end ? in->src_space : in->dst_space) != ISA_SPACE_DRAM) continue;
        const BkBankedUse *u;
        int n;
        if (bk_banked_end(p->bk, part, start, npart, end, end ? wbanks : rbanks, &u, &n, &used[end])) return -1;
        for (int j = 0; j < n; j++) add_work(p, p->bk_first + u[j].server, u[j].work, u[j].bursts);
    }
    return 0;
}

static void plan_reference(BkFlowPlanner *p, int core, const AtlInsn *in)
{
    const AtlChip *ch = p->ch;
    int es = isa_dtype_size(in->dtype), cpc = ch->cores_per_cluster, cl = core / cpc;
    uint64_t bb = (uint64_t)ch->dma_burst_bytes;
    if (bb >= (uint64_t)es) bb -= bb % (uint64_t)es;
    uint64_t total = isa_shape_bytes(in);
    int copy = reads_source(in);
    double chbw = tim_dram_channel_bytes_per_cycle(ch);
    uint64_t dr[2] = {dense_run(in, in->dst_stride, es), copy ? dense_run(in, in->src_stride, es) : 1};
    p->nt = 0;
    for (uint64_t off = 0; off < total; off += bb) {
        uint64_t bytes = total - off < bb ? total - off : bb, idx = off / (uint64_t)es, nel = bytes / (uint64_t)es;
        for (int end = 0; end < 1 + copy; end++) {
            int space = end ? in->src_space : in->dst_space;
            const int32_t *st = end ? in->src_stride : in->dst_stride;
            uint64_t base = end ? in->src : in->dst;
            if (space == ISA_SPACE_DRAM && !p->bk) {
                base &= 0xffffffffu;
                int tl[64], ntl = 0;
                uint64_t i = idx, left = nel;
                while (left) {
                    uint64_t run = dr[end] - i % dr[end];
                    if (run > left) run = left;
                    uint64_t a = elem_addr(in, base, st, i), len = run * (uint64_t)es;
                    while (len) {
                        uint64_t il = (uint64_t)ch->dram_interleave;
                        uint64_t c = (a / il) % (uint64_t)p->nchan, take = il - a % il;
                        if (take > len) take = len;
                        if (!p->chan_bytes[c] && ntl < 64) tl[ntl++] = (int)c;
                        p->chan_bytes[c] += take;
                        a += take;
                        len -= take;
                    }
                    left -= run;
                    i += run;
                }
                for (int j = 0; j < ntl; j++) {
                    add_end_work(p, end, tl[j], tim_occupancy(p->chan_bytes[tl[j]], chbw), 1);
                    p->chan_bytes[tl[j]] = 0;
                }
            } else if (space == ISA_SPACE_SRAM) {
                add_end_work(p, end, p->sram + cl, tim_occupancy(bytes, (double)ch->sram_bytes_per_cycle), 1);
            } else if (space == ISA_SPACE_PEER) {
                peer_end(p, in, end, cl, tim_occupancy(bytes, (double)ch->sram_bytes_per_cycle),
                         tim_occupancy(bytes, (double)ch->noc_link_bytes_per_cycle), 1);
            } else if (space == ISA_SPACE_LMEM) {
                uint64_t a = elem_addr(in, base, st, idx), w = (uint64_t)ch->lmem_bank_width;
                uint64_t rows = (a % w + bytes + w - 1) / w;
                uint64_t nb = rows < (uint64_t)ch->lmem_banks ? rows : (uint64_t)ch->lmem_banks;
                uint64_t op = tim_occupancy(bytes, (double)ch->dma_lmem_bytes_per_cycle);
                uint64_t ob = tim_occupancy(bytes, (double)nb * ch->lmem_bank_bytes_per_cycle);
                uint32_t m = end ? 1u << (core % cpc) : in->mask ? in->mask : 1u << (core % cpc);
                for (int j = 0; j < cpc; j++)
                    if (m >> j & 1) add_end_work(p, end, p->port + cl * cpc + j, op > ob ? op : ob, 1);
            }
        }
        noc_work(p, in, cl, tim_occupancy(bytes, (double)ch->noc_bytes_per_cycle), 1);
    }
    merge_ends(p);
}

/* ---- the walk: rows by odometer, table occupancies ---- */

/* The element stream of one end as rows: `run` elements `step` bytes
 * apart (step = element size for the merged contiguous inner dims, else
 * the innermost dim's stride), row starts stepping through the outer dims
 * 0..outer-1 row-major. */
typedef struct Walk {
    const AtlInsn *in;
    const int32_t *st;
    uint64_t base, run, left, addr;
    int64_t step, off;             /* off: of the current row start */
    int outer;
    uint32_t i[4];
    int started;
} Walk;

static void walk_init(Walk *w, const AtlInsn *in, const int32_t st[4], uint64_t base, int es)
{
    memset(w, 0, sizeof *w);
    w->in = in;
    w->st = st;
    w->base = base;
    w->run = 1;
    w->step = es;
    int64_t expect = es;
    int d = 3;
    for (; d >= 0; d--) {
        if (in->shape[d] == 1) continue;
        if (st[d] != expect) break;
        w->run *= in->shape[d];
        expect *= in->shape[d];
    }
    if (d >= 0 && w->run == 1) { /* a strided innermost dim is a row of its own */
        w->run = in->shape[d];
        w->step = st[d];
        d--;
    }
    w->outer = d + 1;
}

/* Starts the next row. */
static void walk_next(Walk *w)
{
    if (w->started) {
        for (int d = w->outer - 1; d >= 0; d--) {
            if (++w->i[d] < w->in->shape[d]) { w->off += w->st[d]; break; }
            w->off -= (int64_t)(w->in->shape[d] - 1) * w->st[d];
            w->i[d] = 0;
        }
    }
    w->started = 1;
    w->addr = w->base + (uint64_t)w->off;
    w->left = w->run;
}

/* Advances n elements (inside the stream). */
static void walk_skip(Walk *w, uint64_t n)
{
    while (n) {
        if (!w->left) walk_next(w);
        uint64_t take = n < w->left ? n : w->left;
        w->addr += take * (uint64_t)w->step;
        w->left -= take;
        n -= take;
    }
}

/* DRAM channel of byte address a. */
static inline uint64_t chan_of(const BkFlowPlanner *p, uint64_t a)
{
    uint64_t chunk = p->il_shift >= 0 ? a >> p->il_shift : a / (uint64_t)p->ch->dram_interleave;
    return p->nch_pow2 ? chunk & (uint64_t)(p->nchan - 1) : chunk % (uint64_t)p->nchan;
}

/* Adds the DRAM channel bytes of `take` elements of the current row. */
static void dram_piece(BkFlowPlanner *p, Walk *w, uint64_t take, int es, int *tl, int *ntl)
{
    uint64_t il = (uint64_t)p->ch->dram_interleave, a = w->addr;
    if (w->step == es) {  /* contiguous bytes: split at interleave boundaries */
        uint64_t len = take * (uint64_t)es;
        while (len) {
            uint64_t c = chan_of(p, a), piece = il - (a & (il - 1));
            if (p->il_shift < 0) piece = il - a % il;
            if (piece > len) piece = len;
            if (!p->chan_bytes[c]) tl[(*ntl)++] = (int)c;
            p->chan_bytes[c] += piece;
            a += piece;
            len -= piece;
        }
    } else if ((uint64_t)w->step >= il) {  /* whole elements (walk_end_ok), each alone in its chunk */
        uint64_t s = (uint64_t)w->step;
        for (; take; take--, a += s) {
            uint64_t c = chan_of(p, a);
            if (!p->chan_bytes[c]) tl[(*ntl)++] = (int)c;
            p->chan_bytes[c] += (uint64_t)es;
        }
    } else {  /* whole elements step bytes apart: count those in each interleave chunk */
        uint64_t s = (uint64_t)w->step;
        while (take) {
            uint64_t c = chan_of(p, a), in_chunk = il - (p->il_shift >= 0 ? a & (il - 1) : a % il);
            /* all the elements left in this chunk, or as many as fit */
            uint64_t cnt = (take - 1) * s < in_chunk ? take : (in_chunk + s - 1) / s;
            if (cnt > take) cnt = take;
            if (!p->chan_bytes[c]) tl[(*ntl)++] = (int)c;
            p->chan_bytes[c] += cnt * (uint64_t)es;
            a += cnt * s;
            take -= cnt;
        }
    }
    w->addr = a;
}

/* Work and bursts per DRAM channel (cw[nchan], cb[nchan]) of one DRAM end. */
static void walk_dram(BkFlowPlanner *p, const AtlInsn *in, const int32_t st[4], uint64_t base, int es,
                      uint64_t nel, uint64_t bel, uint64_t *cw, uint64_t *cb)
{
    Walk w;
    walk_init(&w, in, st, base & 0xffffffffu, es);
    int tl[64];
    for (uint64_t done = 0; done < nel;) {
        uint64_t need = nel - done < bel ? nel - done : bel;
        done += need;
        int ntl = 0;
        while (need) {
            if (!w.left) walk_next(&w);
            uint64_t take = need < w.left ? need : w.left;
            dram_piece(p, &w, take, es, tl, &ntl);
            w.left -= take;
            need -= take;
        }
        for (int j = 0; j < ntl; j++) {
            cw[tl[j]] += occ(&p->occ_chan, p->chan_bytes[tl[j]]);
            cb[tl[j]]++;
            p->chan_bytes[tl[j]] = 0;
        }
    }
}

/* Port work of one LMEM end: the sum over bursts of max(port, banks). */
static uint64_t walk_lmem(BkFlowPlanner *p, const AtlInsn *in, const int32_t st[4], uint64_t base, int es,
                          uint64_t nel, uint64_t bel)
{
    const AtlChip *ch = p->ch;
    uint64_t bw = (uint64_t)ch->lmem_bank_width, banks = (uint64_t)ch->lmem_banks;
    uint64_t bb = bel * (uint64_t)es, full = nel / bel, rest = (nel % bel) * (uint64_t)es;
    /* A burst covers at least ceil(bytes / bank_width) banks (more when it
     * starts inside a row); when the port is no faster even then, the
     * burst's start address does not matter. */
    uint64_t nbf = (bb + bw - 1) / bw, nbr = (rest + bw - 1) / bw;
    if (nbf > banks) nbf = banks;
    if (nbr > banks) nbr = banks;
    uint64_t opf = occ(&p->occ_port, bb), opr = rest ? occ(&p->occ_port, rest) : 0;
    if (nbf >= 1 && occ(&p->occ_bank[nbf], bb) <= opf && (!rest || (nbr >= 1 && occ(&p->occ_bank[nbr], rest) <= opr)))
        return full * opf + opr;
    Walk w;
    walk_init(&w, in, st, base, es);
    uint64_t sum = 0;
    for (uint64_t done = 0; done < nel;) {
        uint64_t n = nel - done < bel ? nel - done : bel, bytes = n * (uint64_t)es;
        if (!w.left) walk_next(&w);
        uint64_t rows = (w.addr % bw + bytes + bw - 1) / bw;
        uint64_t nb = rows < banks ? rows : banks;
        uint64_t op = occ(&p->occ_port, bytes), ob = occ(&p->occ_bank[nb], bytes);
        sum += op > ob ? op : ob;
        walk_skip(&w, n);
        done += n;
    }
    return sum;
}

/* The walk needs whole elements per burst and at most 64 channels (the
 * reference's per-burst channel list); a DRAM end whose rows are strided
 * needs elements that never straddle an interleave boundary. */
static int walk_end_ok(const BkFlowPlanner *p, const AtlInsn *in, int space, const int32_t st[4], uint64_t base)
{
    if (space != ISA_SPACE_DRAM) return 1;
    int es = isa_dtype_size(in->dtype);
    Walk w;
    walk_init(&w, in, st, base, es);
    if (w.step == es) return 1;
    return w.step > es && w.step % es == 0 && (base & 0xffffffffu) % (uint64_t)es == 0 &&
           p->ch->dram_interleave % es == 0;
}

static int walk_applies(const BkFlowPlanner *p, const AtlInsn *in)
{
    int64_t es = isa_dtype_size(in->dtype);
    if (!(es > 0 && (es & (es - 1)) == 0 && p->burst >= (uint64_t)es && p->burst % (uint64_t)es == 0 && p->nchan <= 64))
        return 0;
    int32_t bits = 0;
    for (int d = 0; d < 4; d++) bits |= in->dst_stride[d] | in->src_stride[d];
    if (bits & (int32_t)(es - 1)) return 0; /* strides of whole elements */
    if (!walk_end_ok(p, in, in->dst_space, in->dst_stride, in->dst)) return 0;
    return !reads_source(in) || walk_end_ok(p, in, in->src_space, in->src_stride, in->src);
}

/* ---- the memo of one end's work ---- */

static int strides_nonneg(const int32_t st[4])
{
    for (int d = 0; d < 4; d++) if (st[d] < 0) return 0;
    return 1;
}

/* An address reduced to what the work depends on (see the file comment);
 * *rot: the DRAM channels to rotate the reduced address's work by. */
static uint64_t key_addr(const BkFlowPlanner *p, int space, uint64_t a, const int32_t st[4], int *rot)
{
    *rot = 0;
    if (space == ISA_SPACE_DRAM) {
        a &= 0xffffffffu;
        if (!strides_nonneg(st)) return a;
        uint64_t il = (uint64_t)p->ch->dram_interleave;
        *rot = (int)(a / il % (uint64_t)p->nchan);
        return a % il;
    }
    return strides_nonneg(st) ? a % (uint64_t)p->ch->lmem_bank_width : a;
}

/* The work of one end: DRAM per channel (nchan values, then the bursts
 * that touch each channel; channel c's are at [(c - *rot) mod nchan]) or
 * the LMEM port sum (one value), from the memo when `memo`. NULL on OOM. */
static const uint64_t *end_work(BkFlowPlanner *p, const AtlInsn *in, int space, const int32_t st[4], uint64_t base,
                                int memo, int *rot)
{
    int es = isa_dtype_size(in->dtype), n = space == ISA_SPACE_DRAM ? 2 * p->nchan : 1;
    uint64_t bel = p->burst / (uint64_t)es, nel = isa_shape_bytes(in) / (uint64_t)es;
    uint64_t k[END_KEY_WORDS];
    *rot = 0;
    if (memo) {
        base = key_addr(p, space, base, st, rot);  /* priced at the reduced address, then rotated */
        k[0] = base;
        k[1] = (uint64_t)in->shape[0] << 32 | in->shape[1];
        k[2] = (uint64_t)in->shape[2] << 32 | in->shape[3];
        k[3] = (uint64_t)(uint32_t)st[0] << 32 | (uint32_t)st[1];
        k[4] = (uint64_t)(uint32_t)st[2] << 32 | (uint32_t)st[3];
        k[5] = (uint64_t)in->dtype | (uint64_t)space << 8;
        int nv;
        const uint64_t *f = bk_memo_find(p->memo, k, END_KEY_WORDS, &nv);
        if (f) { p->hits++; return f; }
        p->misses++;
    }
    memset(p->end_scratch, 0, (size_t)n * sizeof *p->end_scratch);
    if (space == ISA_SPACE_DRAM) walk_dram(p, in, st, base, es, nel, bel, p->end_scratch, p->end_scratch + p->nchan);
    else p->end_scratch[0] = walk_lmem(p, in, st, base, es, nel, bel);
    return memo ? bk_memo_store(p->memo, k, END_KEY_WORDS, p->end_scratch, n) : p->end_scratch;
}

static int plan_walk(BkFlowPlanner *p, int core, const AtlInsn *in, int memo)
{
    const AtlChip *ch = p->ch;
    int cpc = ch->cores_per_cluster, cl = core / cpc;
    int copy = reads_source(in);
    uint64_t bb = p->burst, total = isa_shape_bytes(in), full = total / bb, rest = total % bb, nbursts = full + (rest != 0);
    p->nt = 0;
    for (int end = 0; end < 1 + copy; end++) {
        int space = end ? in->src_space : in->dst_space;
        const int32_t *st = end ? in->src_stride : in->dst_stride;
        uint64_t base = end ? in->src : in->dst;
        if (space == ISA_SPACE_SRAM || space == ISA_SPACE_PEER) {   /* every burst alike: no walk, no memo */
            uint64_t w = full * occ(&p->occ_sram, bb) + (rest ? occ(&p->occ_sram, rest) : 0);
            if (space == ISA_SPACE_SRAM) add_end_work(p, end, p->sram + cl, w, nbursts);
            else peer_end(p, in, end, cl, w, full * occ(&p->occ_link, bb) + (rest ? occ(&p->occ_link, rest) : 0), nbursts);
            continue;
        }
        if ((space != ISA_SPACE_DRAM || p->bk) && space != ISA_SPACE_LMEM) continue;
        int rot;
        const uint64_t *v = end_work(p, in, space, st, base, memo, &rot);
        if (!v) return -1;
        if (space == ISA_SPACE_DRAM) {
            for (int c = 0; c < p->nchan; c++) add_end_work(p, end, (c + rot) % p->nchan, v[c], v[p->nchan + c]);
        } else {
            uint32_t m = end ? 1u << (core % cpc) : in->mask ? in->mask : 1u << (core % cpc);
            for (int j = 0; j < cpc; j++)
                if (m >> j & 1) add_end_work(p, end, p->port + cl * cpc + j, v[0], nbursts);
        }
    }
    merge_ends(p);
    noc_work(p, in, cl, full * occ(&p->occ_noc, bb) + (rest ? occ(&p->occ_noc, rest) : 0), nbursts);
    return 0;
}


/* Latency + issue after the flow. The banked model times DRAM accesses
 * itself: a DRAM end then adds the NoC's latency and the tail of its last
 * request (bk_banked_latency), as the simulator completes such a DMA. */
static uint64_t plan_latency(const BkFlowPlanner *p, int core, const AtlInsn *in)
{
    const AtlChip *ch = p->ch;
    int src = src_space_of(in), hops = peer_hops(p, core, in);
    uint64_t lat = tim_dma_route_latency(ch, in->dst_space, src, hops);
    int wr = in->dst_space == ISA_SPACE_DRAM, rd = reads_source(in) && src == ISA_SPACE_DRAM;
    if (p->bk && (wr || rd)) {
        uint64_t a = wr ? (uint64_t)ch->noc_latency : tim_dma_route_latency(ch, in->dst_space, in->dst_space, hops);
        uint64_t b = src == ISA_SPACE_DRAM ? (uint64_t)ch->noc_latency : tim_dma_route_latency(ch, src, src, hops);
        uint64_t tw = wr ? bk_banked_latency(p->bk, 1) : 0, tr = rd ? bk_banked_latency(p->bk, 0) : 0;
        lat = (a > b ? a : b) + (tw > tr ? tw : tr);
    }
    lat += (uint64_t)ch->dma_issue_cycles;
    if (isa_ops[in->op].format == ISA_FMT_DMA_GATHER) lat += tim_gather_index_cycles(ch, in->src2_space, in->shape[1]);
    return lat;
}

int bk_flow_plan(BkFlowPlanner *p, int core, const AtlInsn *in, const BkFlowPeers *peers, int how, BkFlowPlan *out, AtlErr *e)
{
    if (how == BK_FLOW_REFERENCE || !walk_applies(p, in)) plan_reference(p, core, in);
    else if (plan_walk(p, core, in, how == BK_FLOW_MEMO)) return atl_fail(e, "out of memory in the cost model");
    uint64_t used[2] = {0, 0};   /* banks of the writes, of the reads */
    if (p->bk) {
        const AtlInsn *alone = in, *const *part = &alone;
        const uint64_t *start = NULL;
        int npart = 1;
        if (peers && peers->npart > 0) { part = peers->part; start = peers->start; npart = peers->npart; }
        if (banked_ends(p, in, part, start, npart, peers ? peers->rbanks : 0, peers ? peers->wbanks : 0, used))
            return atl_fail(e, "out of memory in the cost model");
    }
    collect(p);
    *out = (BkFlowPlan){p->out, p->nout, plan_latency(p, core, in), used[1], used[0]};
    return 0;
}
