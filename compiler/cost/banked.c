/* banked.c - the cost model's DRAM with `[dram] model = banked`: what a
 * DMA's DRAM end costs the command bus, data bus, ranks and banks of each
 * channel of the [dram_device] (the simulator serves it request by
 * request: sim/dram_dma.c, sim/dram_ctrl.c; docs/timing.md).
 *
 * Requests. The end's element stream is cut as the simulator cuts it:
 * walked in address order (the DMA engine's order, tim_dram_walk), each
 * contiguous run of addresses covers a run of accesses of access_bytes (a
 * run starting in the access the previous one ended in does not request
 * it again), and each access is one request, decoded by the address
 * mapping (isa/timing.h, tim_dram_fields) into channel, rank, bank group,
 * bank and row. An NCHW store whose instruction walks the channel planes
 * innermost costs the lines of each plane it covers.
 * Rows of different regions differ: regions are placed at bases aligned
 * below the row field (tim_dram_region_align), so an offset decodes to the
 * bank it has and to a row of its own region.
 *
 * Siblings. The cores of a segment run the same tiles at shifted
 * addresses, and a channel admits the requests of its sources in turn, so
 * its controller sees the round-robin merge of the request streams of the
 * DMAs the cores issue about together. The caller names them with when
 * each starts (cost.c); one that starts later joins the merge that many
 * rounds late (a round: a request of each, a data bus access each). The
 * merge is priced once, and each sibling gets an equal share. Sixteen cores
 * storing adjacent pixels of the same channel planes hit the same row one
 * after another; alone, each would open a row per request; a few rounds
 * apart, they open rows of the same banks by turns.
 *
 * Rows. The controller (FR-FCFS) serves the queued requests of an open row
 * first and opens a row once for all queued requests to it. The merged
 * stream of a channel is taken in windows of what its queue holds
 * (queue_depth requests): in a window, each distinct row of a bank other
 * than the one open at its start costs an activation (and a precharge when
 * a row was open), and the bank's last row opened stays open into the next
 * window; but a bank that requests of the other direction in flight use
 * (the caller says which) has their row open at each window's start, and
 * writes then come in windows of a drain (write_high down to write_low of
 * the queue): the controller turns to reads between drains.
 *
 * Work, in DRAM cycles converted to core cycles, stretched by
 * refi / (refi - rfc) for refresh; each resource is a server of the
 * replay's processor sharing (share.c):
 *   the command bus   one command a cycle: 1 per request, activation, precharge
 *   the row commands  act_cycles per activation, 1 per precharge
 *   the data bus(es)  per request max(bl, ccd_s) when a request of another
 *                     bank group of its bus is within queue_depth of it in
 *                     the stream (the controller alternates bank groups),
 *                     else max(bl, ccd_l); ranks with their own bus serve
 *                     in parallel where requests of several are that close
 *   each rank         max(rrd_s, faw / 4) per activation but its first
 *   each bank         rc per activation but its first
 * A request is done rcd + cl + bl (read) or rcd + cwl + bl (write) after
 * its service, and was admitted a DRAM cycle before: the latency of the
 * DMA's DRAM part (bk_banked_latency; a first activation is in its rcd).
 *
 * Not modelled (docs/timing.md, "The cost model with model = banked"):
 * data bus turnarounds (the simulator's DMA-driven queues rarely alternate
 * reads and writes: a DRAM-to-DRAM copy runs at the data bus's rate);
 * the controller's preference for row hits and for a stream of writes
 * starving a source whose requests conflict, or reads (processor sharing
 * is fair); the jitter of the request-by-request service, which spreads
 * siblings the replay starts together; refresh closing rows; reads
 * answered from the write queue.
 * Owns: its scratch and memo (bk_banked_free). */
#include <stdlib.h>
#include <string.h>
#include "compiler/cost/banked.h"
#include "compiler/cost/memo.h"
#include "isa/timing.h"

/* Most requests of a merge priced: a longer one is priced on its first
 * ones (each sibling's first share of them) and stretched to all its
 * elements: a DMA's requests follow its strides, which repeat. Pricing
 * every request, ResNet-50's compile for the DDR4 preset took 57 s, 24 s
 * so; the bundled models' estimates move by under 1%. */
#define BK_BANKED_PRICED 1024

/* A request: its access index, its region in the bits above. */
#define REGION_SHIFT 48
/* The row a bank has open when the other direction's requests took it. */
#define OTHER_ROW INT32_MIN

/* A distinct (bank, row) of a channel's window; chained per bank. */
typedef struct Slot { int32_t row; int bank, next; } Slot;

/* Per channel: the merged stream's state. */
typedef struct Chan {
    int32_t *open;               /* per bank: open row, -1 closed */
    int32_t *opened;             /* per bank: last row this window opened, -1 none */
    int *head;                   /* per bank: its first slot in this window, -1 none */
    Slot *slot;                  /* the window's distinct rows (queue_depth) */
    int nslot, inwin;
    uint16_t *bg;                /* the bank group (rank x bgs + bg) of each request */
    size_t nbg, capbg;
    uint64_t *work, *count;      /* per server: DRAM cycles, requests or activations */
} Chan;

struct BkBanked {
    const AtlChip *ch;
    int lo[TIM_DRAM_FIELDS], bits[TIM_DRAM_FIELDS], tx;
    int nch, bgs, banks, ranks, nbank, buses, queue, drain;
    uint64_t period;             /* bases congruent modulo it price alike (bytes) */
    double core_per_dram;        /* core cycles per DRAM cycle, refresh included */
    uint64_t act;                /* rank cycles per activation */
    /* servers of a channel: command bus, row commands, data bus, ranks, banks */
    int per_chan, sv_rank, sv_bank;
    Chan *chan;
    /* the merge being priced */
    uint64_t other, used;
    int window;
    uint64_t *req[BK_BANKED_MAXPART];
    size_t nreq[BK_BANKED_MAXPART], capreq[BK_BANKED_MAXPART];
    size_t lag[BK_BANKED_MAXPART];       /* rounds of the merge each joins late */
    double part_of[BK_BANKED_MAXPART];  /* the share of each one's elements its priced requests cover */
    uint8_t *sel;                /* scratch of the data bus pass */
    uint16_t *busof;
    size_t capsel;
    BkBankedUse *out;
    int oom;
    BkMemo *memo;                /* merges already priced: banks, then (server, work, bursts) each use */
    uint64_t *val;               /* scratch of a memo value */
};

enum { SV_CMD, SV_ROWCMD, SV_BUS, SV_RANK0 };

static int log2_of(uint64_t x)
{
    int b = 0;
    while ((1ull << b) < x) b++;
    return b;
}

static uint64_t ceil_core(double x)
{
    x -= 1e-9;
    uint64_t c = x > 0 ? (uint64_t)x : 0;
    return (double)c < x ? c + 1 : c;
}

int bk_banked_servers(const BkBanked *b) { return b->nch * b->per_chan; }

void bk_banked_free(BkBanked *b)
{
    if (!b) return;
    for (int c = 0; b->chan && c < b->nch; c++) {
        Chan *h = &b->chan[c];
        free(h->open); free(h->opened); free(h->head); free(h->slot); free(h->bg); free(h->work); free(h->count);
    }
    free(b->chan);
    for (int i = 0; i < BK_BANKED_MAXPART; i++) free(b->req[i]);
    free(b->sel); free(b->busof); free(b->out);
    bk_memo_free(b->memo);
    free(b->val);
    free(b);
}

BkBanked *bk_banked_new(const AtlChip *ch)
{
    BkBanked *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->ch = ch;
    b->nch = ch->dram_channels;
    b->ranks = ch->dram_ranks;
    b->bgs = ch->dram_bankgroups;
    b->banks = ch->dram_banks;
    b->nbank = b->ranks * b->bgs * b->banks;
    b->buses = ch->dram_rank_bus == CFG_RANK_BUS_OWN ? b->ranks : 1;
    b->queue = ch->dram_queue_depth;
    int drain = ch->dram_queue_depth * (ch->dram_write_high - ch->dram_write_low) / 100;
    b->drain = drain > 1 ? drain : 1;
    b->tx = log2_of((uint64_t)ch->dram_access_bytes);
    int all = tim_dram_fields(ch, b->lo, b->bits);
    /* with the row field on top, moving every address by a multiple of the
     * bytes below it moves every row by the same number (rows only
     * compare); else only the whole mapped space repeats */
    int row_top = b->lo[TIM_DRAM_ROW] + b->bits[TIM_DRAM_ROW] == all;
    b->period = 1ull << (b->tx + (row_top ? b->lo[TIM_DRAM_ROW] : all));
    double refresh = ch->dram_refi > ch->dram_rfc ? (double)ch->dram_refi / (double)(ch->dram_refi - ch->dram_rfc) : 1.0;
    b->core_per_dram = (double)ch->dram_tck_ps * ch->freq_mhz / 1e6 * refresh;
    b->act = (uint64_t)ch->dram_rrd_s;
    if (((uint64_t)ch->dram_faw + 3) / 4 > b->act) b->act = ((uint64_t)ch->dram_faw + 3) / 4;
    b->sv_rank = SV_RANK0;
    b->sv_bank = b->sv_rank + b->ranks;
    b->per_chan = b->sv_bank + b->nbank;
    b->chan = calloc((size_t)b->nch, sizeof *b->chan);
    b->out = calloc((size_t)bk_banked_servers(b), sizeof *b->out);
    b->val = calloc(1 + 3 * (size_t)bk_banked_servers(b), sizeof *b->val);
    b->memo = bk_memo_new();
    int ok = b->chan && b->out && b->val && b->memo;
    for (int c = 0; ok && c < b->nch; c++) {
        Chan *h = &b->chan[c];
        h->open = malloc((size_t)b->nbank * sizeof *h->open);
        h->opened = malloc((size_t)b->nbank * sizeof *h->opened);
        h->head = malloc((size_t)b->nbank * sizeof *h->head);
        h->slot = malloc((size_t)b->queue * sizeof *h->slot);
        h->work = calloc((size_t)b->per_chan, sizeof *h->work);
        h->count = calloc((size_t)b->per_chan, sizeof *h->count);
        ok = h->open && h->opened && h->head && h->slot && h->work && h->count;
    }
    if (!ok) { bk_banked_free(b); return NULL; }
    return b;
}

/* ---- requests ---- */

static int push_req(BkBanked *b, int part, uint64_t x)
{
    if (b->nreq[part] == b->capreq[part]) {
        size_t nc = b->capreq[part] ? 2 * b->capreq[part] : 1024;
        uint64_t *r = realloc(b->req[part], nc * sizeof *r);
        if (!r) return -1;
        b->req[part] = r;
        b->capreq[part] = nc;
    }
    b->req[part][b->nreq[part]++] = x;
    return 0;
}

/* The requests of one DRAM end (end 0 dst, 1 src), in the order the
 * simulator cuts them: the dims in the DMA engine's order (tim_dram_walk),
 * the element stream as runs of its contiguous inner dims, visited by an
 * odometer over the outer dims; into req[part], until
 * a run brings them to `limit` (part_of[part]: the share of the elements
 * those runs cover). */
static int requests(BkBanked *b, int part, const AtlInsn *in, int end, size_t limit)
{
    int es = isa_dtype_size(in->dtype);
    uint64_t tagged = end ? in->src : in->dst, region = (tagged >> 32) << REGION_SHIFT;
    int64_t base = (int64_t)(tagged & 0xffffffffu);
    uint32_t shape[4];
    int32_t st[4];
    tim_dram_walk(in->shape, end ? in->src_stride : in->dst_stride, shape, st);
    uint64_t run = 1;
    int64_t expect = es;
    int outer = 3;
    for (; outer >= 0; outer--) {
        if (st[outer] != expect && shape[outer] > 1) break;
        run *= shape[outer];
        expect = (int64_t)shape[outer] * st[outer];
    }
    outer++;   /* dims [0, outer) are walked, [outer, 4) are one run */
    uint32_t i[4] = {0, 0, 0, 0};
    int64_t off = 0;
    uint64_t last = 0, len = run * (uint64_t)es;
    int have = 0;
    uint64_t total = (uint64_t)shape[0] * shape[1] * shape[2] * shape[3], done = 0;
    b->nreq[part] = 0;
    for (;;) {
        uint64_t a = (uint64_t)(base + off), first = a >> b->tx, end_ = (a + len - 1) >> b->tx;
        int cont = have && (first == last + 1 || first == last);
        for (uint64_t x = cont ? last + 1 : first; x <= end_; x++) {
            if (push_req(b, part, region | x)) return -1;
            if (b->nreq[part] >= limit && x < end_) {   /* stop inside a long run */
                double covered = (double)done + (double)(((x + 1) << b->tx) - a) / es;
                b->part_of[part] = covered / (double)total;
                return 0;
            }
        }
        done += run;
        if (b->nreq[part] >= limit && done < total) { b->part_of[part] = (double)done / (double)total; return 0; }
        last = cont && last > end_ ? last : end_;
        have = 1;
        int d = outer - 1;
        for (; d >= 0; d--) {
            if (++i[d] < shape[d]) { off += st[d]; break; }
            off -= (int64_t)(shape[d] - 1) * st[d];
            i[d] = 0;
        }
        if (d < 0) { b->part_of[part] = 1; return 0; }
    }
}

static inline uint32_t field(const BkBanked *b, uint64_t a, int f)
{
    return (uint32_t)((a >> b->lo[f]) & ((1ull << b->bits[f]) - 1));
}

/* ---- the merge, in windows ---- */

/* Closes channel h's window: each distinct row of a bank but the one open
 * at its start is an activation; the last of them stays open, or the
 * other direction's when it uses the bank. */
static void close_window(BkBanked *b, Chan *h)
{
    const AtlChip *ch = b->ch;
    int per_rank = b->bgs * b->banks;
    for (int i = 0; i < h->nslot; i++) {
        const Slot *s = &h->slot[i];
        if (s->row == h->open[s->bank]) continue;
        uint64_t pre = h->open[s->bank] != -1 || h->opened[s->bank] >= 0;
        h->work[SV_CMD] += 1 + pre;
        h->work[SV_ROWCMD] += (uint64_t)ch->dram_act_cycles + pre;
        h->work[b->sv_rank + s->bank / per_rank] += b->act;
        h->work[b->sv_bank + s->bank] += (uint64_t)ch->dram_rc;
        h->count[SV_ROWCMD]++;
        h->count[b->sv_rank + s->bank / per_rank]++;
        h->count[b->sv_bank + s->bank]++;
        h->opened[s->bank] = s->row;
    }
    for (int i = 0; i < h->nslot; i++) {
        int bank = h->slot[i].bank;
        h->head[bank] = -1;
        if (b->other >> (bank & 63) & 1) h->open[bank] = OTHER_ROW;
        else if (h->opened[bank] >= 0) h->open[bank] = h->opened[bank];
        h->opened[bank] = -1;
    }
    h->nslot = h->inwin = 0;
}

static void merge_request(BkBanked *b, uint64_t req)
{
    uint64_t a = req & ((1ull << REGION_SHIFT) - 1);
    Chan *h = &b->chan[field(b, a, TIM_DRAM_CH)];
    int bg = (int)(field(b, a, TIM_DRAM_RANK) * (uint32_t)b->bgs + field(b, a, TIM_DRAM_BG));
    int bank = bg * b->banks + (int)field(b, a, TIM_DRAM_BANK);
    int32_t row = (int32_t)(field(b, a, TIM_DRAM_ROW) | (uint32_t)(req >> REGION_SHIFT) << 24);   /* regions' rows differ */
    h->work[SV_CMD]++;
    b->used |= 1ull << (bank & 63);
    if (h->nbg == h->capbg) {
        size_t nc = h->capbg ? 2 * h->capbg : 4096;
        uint16_t *g = realloc(h->bg, nc * sizeof *g);
        if (!g) { b->oom = 1; return; }
        h->bg = g;
        h->capbg = nc;
    }
    h->bg[h->nbg++] = (uint16_t)bg;
    int i = h->head[bank];
    while (i >= 0 && h->slot[i].row != row) i = h->slot[i].next;
    if (i < 0) {
        h->slot[h->nslot] = (Slot){row, bank, h->head[bank]};
        h->head[bank] = h->nslot++;
    }
    if (++h->inwin == b->window) close_window(b, h);
}

/* The runs of equal values of id[] over the entries with sel (all when
 * sel is NULL): a request within span of a request of another run costs
 * fast, else slow. Adds to *cost, *total. */
static void runs(const uint16_t *id, const uint8_t *sel, size_t n, size_t span, uint64_t fast, uint64_t slow, uint64_t *cost,
                 uint64_t *total)
{
    size_t len = 0;
    int cur = -1, before = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && sel && !sel[i]) continue;
        int v = i < n ? id[i] : -1;
        if (v == cur) { len++; continue; }
        if (len) {   /* a run ends; another comes after it when i < n */
            size_t lo = before ? (len < span ? len : span) : 0, hi = i < n ? (len < span ? len : span) : 0;
            size_t near = lo + hi > len ? len : lo + hi;
            *cost += near * fast + (len - near) * slow;
            *total += len;
            before = 1;
        }
        cur = v;
        len = 1;
    }
}

/* The data bus work of channel h's merged stream (see the file comment). */
static int data_bus(BkBanked *b, Chan *h)
{
    const AtlChip *ch = b->ch;
    size_t n = h->nbg, span = (size_t)b->queue - 1;
    uint64_t fast = (uint64_t)(ch->dram_bl > ch->dram_ccd_s ? ch->dram_bl : ch->dram_ccd_s);
    uint64_t slow = (uint64_t)(ch->dram_bl > ch->dram_ccd_l ? ch->dram_bl : ch->dram_ccd_l);
    uint64_t cost = 0, total = 0;
    if (b->buses == 1) runs(h->bg, NULL, n, span, fast, slow, &cost, &total);
    else {
        if (n > b->capsel) {
            uint8_t *s = realloc(b->sel, n);
            if (s) b->sel = s;
            uint16_t *u = s ? realloc(b->busof, n * sizeof *u) : NULL;
            if (!u) return -1;
            b->busof = u;
            b->capsel = n;
        }
        for (size_t i = 0; i < n; i++) b->busof[i] = (uint16_t)(h->bg[i] / b->bgs);
        for (int g = 0; g < b->buses; g++) {
            for (size_t i = 0; i < n; i++) b->sel[i] = b->busof[i] == g;
            runs(h->bg, b->sel, n, span, fast, slow, &cost, &total);
        }
        /* a request with one of another bus within span shares the time of
         * all the buses; alone, it has its own */
        uint64_t alone = 0, all = 0;
        runs(b->busof, NULL, n, span, 1, (uint64_t)b->buses, &alone, &all);
        if (all) cost = (cost * alone + all * (uint64_t)b->buses - 1) / (all * (uint64_t)b->buses);
    }
    h->work[SV_BUS] += cost;
    h->count[SV_BUS] += total;
    return 0;
}

/* Prices the merge of req[0..npart) into out, stretched to all their
 * elements when only a part was priced; the number of uses, -1 on OOM. */
static int price_merge(BkBanked *b, int npart)
{
    size_t longest = 0;
    double all = 0, priced = 0;
    for (int p = 0; p < npart; p++) { all += (double)b->nreq[p] / b->part_of[p]; priced += (double)b->nreq[p]; }
    double stretch = priced > 0 ? all / priced : 1;
    b->oom = 0;
    for (int c = 0; c < b->nch; c++) {
        Chan *h = &b->chan[c];
        for (int k = 0; k < b->nbank; k++) { h->open[k] = h->opened[k] = -1; h->head[k] = -1; }
        h->nslot = h->inwin = 0;
        h->nbg = 0;
        memset(h->work, 0, (size_t)b->per_chan * sizeof *h->work);
        memset(h->count, 0, (size_t)b->per_chan * sizeof *h->count);
    }
    for (int p = 0; p < npart; p++) if (b->nreq[p] + b->lag[p] > longest) longest = b->nreq[p] + b->lag[p];
    for (size_t i = 0; i < longest && !b->oom; i++)
        for (int p = 0; p < npart; p++)
            if (i >= b->lag[p] && i - b->lag[p] < b->nreq[p]) merge_request(b, b->req[p][i - b->lag[p]]);
    if (b->oom) return -1;
    int n = 0;
    for (int c = 0; c < b->nch; c++) {
        Chan *h = &b->chan[c];
        if (h->nslot) close_window(b, h);
        if (data_bus(b, h)) return -1;
        h->count[SV_CMD] = h->nbg;
        for (int s = 0; s < b->per_chan; s++) {
            /* a rank's and a bank's first activation is in the latency (rcd) */
            if (s >= b->sv_rank && h->count[s]) h->work[s] -= s < b->sv_bank ? b->act : (uint64_t)b->ch->dram_rc;
            if (!h->work[s]) continue;
            uint64_t k = h->count[s];
            b->out[n++] = (BkBankedUse){c * b->per_chan + s, ceil_core((double)h->work[s] * stretch * b->core_per_dram / npart),
                                        (uint64_t)((double)k * stretch / npart + 0.999)};
        }
    }
    return n;
}

/* ---- the merges, memoised ---- */

static uint64_t end_addr(const AtlInsn *in, int end) { return end ? in->src : in->dst; }

/* The key of a merge: what its price depends on. The end's shape, strides
 * and dtype, the other direction's banks, the lowest participant's region
 * and its offset modulo the period, every base relative to it, and how
 * late each joins (b->lag). */
static int make_key(const BkBanked *b, const AtlInsn *const *part, int npart, int end, uint64_t other, uint64_t *k,
                    uint64_t *lowest)
{
    const AtlInsn *in = part[0];
    const int32_t *st = end ? in->src_stride : in->dst_stride;
    uint64_t low = UINT64_MAX;
    for (int p = 0; p < npart; p++) if (end_addr(part[p], end) < low) low = end_addr(part[p], end);
    int n = 0;
    k[n++] = (uint64_t)in->dtype | (uint64_t)end << 8 | (uint64_t)npart << 16 | (low >> 32) << 32;
    for (int d = 0; d < 4; d++) k[n++] = (uint64_t)in->shape[d] << 32 | (uint32_t)st[d];
    k[n++] = other;
    k[n++] = (low & 0xffffffffu) % b->period;
    for (int p = 0; p < npart; p++) k[n++] = (end_addr(part[p], end) - low) ^ (uint64_t)b->lag[p] << 40;
    *lowest = low;
    return n;
}

/* Prices the merge of part[] (their lags in b->lag) missing from the memo
 * into b->val: the banks, then (server, work, bursts) per use; its length. */
static int price(BkBanked *b, const AtlInsn *const *part, int npart, int end, uint64_t other, uint64_t low, size_t limit)
{
    /* priced at reduced bases: every sibling moved by one multiple of the period */
    uint64_t shift = (low & 0xffffffffu) - (low & 0xffffffffu) % b->period;
    for (int p = 0; p < npart; p++) {
        AtlInsn in = *part[p];
        if (end) in.src -= shift;
        else in.dst -= shift;
        if (requests(b, p, &in, end, limit)) return -1;
    }
    b->other = other;
    b->used = 0;
    b->window = other && !end ? b->drain : b->queue;
    int n = price_merge(b, npart);
    if (n < 0) return -1;
    b->val[0] = b->used;
    for (int i = 0; i < n; i++) {
        b->val[1 + 3 * i] = (uint64_t)b->out[i].server;
        b->val[2 + 3 * i] = b->out[i].work;
        b->val[3 + 3 * i] = b->out[i].bursts;
    }
    return 1 + 3 * n;
}

int bk_banked_end(BkBanked *b, const AtlInsn *const *part, const uint64_t *start, int npart, int end, uint64_t other,
                  const BkBankedUse **use, int *nuse, uint64_t *banks)
{
    uint64_t key[7 + BK_BANKED_MAXPART], low;
    /* a sibling starting later joins the round-robin merge that many
     * rounds late (a round: npart requests, a data bus access each); one
     * that late at least follows the priced part of the others */
    const AtlChip *ch = b->ch;
    size_t limit = (BK_BANKED_PRICED + (size_t)npart - 1) / (size_t)npart;
    double round = (double)npart * (double)(ch->dram_bl > ch->dram_ccd_s ? ch->dram_bl : ch->dram_ccd_s) * b->core_per_dram;
    uint64_t first = UINT64_MAX;
    for (int p = 0; p < npart; p++) if (start && start[p] < first) first = start[p];
    for (int p = 0; p < npart; p++) {
        double late = start ? (double)(start[p] - first) / round : 0;
        b->lag[p] = late < (double)limit ? (size_t)late : limit;
    }
    int nk = make_key(b, part, npart, end, other, key, &low), nv;
    const uint64_t *v = bk_memo_find(b->memo, key, nk, &nv);
    if (!v) {
        nv = price(b, part, npart, end, other, low, limit);
        if (nv < 0 || !(v = bk_memo_store(b->memo, key, nk, b->val, nv))) return -1;
    }
    *banks = v[0];
    *nuse = (nv - 1) / 3;
    for (int i = 0; i < *nuse; i++) b->out[i] = (BkBankedUse){(int)v[1 + 3 * i], v[2 + 3 * i], v[3 + 3 * i]};
    *use = b->out;
    return 0;
}

uint64_t bk_banked_latency(const BkBanked *b, int write)
{
    const AtlChip *ch = b->ch;
    uint64_t d = 1 + (uint64_t)ch->dram_rcd + (uint64_t)(write ? ch->dram_cwl : ch->dram_cl) + (uint64_t)ch->dram_bl;
    return ceil_core((double)d * ch->dram_tck_ps * ch->freq_mhz / 1e6);
}
