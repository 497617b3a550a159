/* dram_map.c - the banked DRAM model's construction from the chip config:
 * the address mapping (which address bits select channel, rank, bank
 * group, bank, row and column, named as Ramulator2 names its linear
 * mappers) and the table of JEDEC timing constraints between commands at
 * each level of the hierarchy (the rules Ramulator2 writes for DDR4, with
 * the data bus per rank for HBM pseudo channels). */
#include <stdlib.h>
#include <string.h>
#include "sim/dram_int.h"
#include "isa/timing.h"

/* The fields, as isa/timing.h numbers them (the mapping is defined there). */
enum { F_CH = TIM_DRAM_CH, F_RANK = TIM_DRAM_RANK, F_BG = TIM_DRAM_BG, F_BANK = TIM_DRAM_BANK, F_ROW = TIM_DRAM_ROW,
       F_COL = TIM_DRAM_COL, F_NUM = TIM_DRAM_FIELDS };

static int log2_of(uint64_t x)
{
    int b = 0;
    while ((1ull << b) < x) b++;
    return b;
}

void dram_decode(const AtlDram *d, uint64_t addr, DramLoc *loc) { dram_locate(d, addr >> d->tx_shift, loc); }

void dram_channel_field(const AtlDram *d, int *lo, int *bits)
{
    *lo = d->field_lo[F_CH];
    *bits = d->field_bits[F_CH];
}

int dram_num_channels(const AtlDram *d) { return d->nch; }
uint32_t dram_access_bytes(const AtlDram *d) { return 1u << d->tx_shift; }
double dram_tck_ps(const AtlDram *d) { return d->tck_ps; }

double dram_peak_bytes_per_cycle(const AtlDram *d)
{
    return (double)(1u << d->tx_shift) / d->bl * (d->own_bus ? d->ranks : 1);
}

#define B(cmd) (1u << (cmd))
#define RDS (B(DC_RD) | B(DC_RDA))
#define WRS (B(DC_WR) | B(DC_WRA))

/* Adds "`next` no sooner than lat after" to a list; a list holds one
 * entry per next command (the largest latency: they only ever raise the
 * same ready time). The tFAW window is kept by the activate history
 * (dram_ctrl.c), not in the lists. */
static void add_cons(DramConsList *l, int next, int lat, int window)
{
    /* nothing waits for RDA or WRA: a read or write is scheduled as RD or
     * WR (every rule naming one names the other) and becomes RDA or WRA
     * only as it issues, so their ready times are never read */
    if (window || next == DC_RDA || next == DC_WRA) return;
    for (int i = 0; i < l->n; i++)
        if (l->c[i].next == next) {
            if (lat > l->c[i].lat) l->c[i].lat = lat;
            return;
        }
    if (l->n < DRAM_MAX_CONS) l->c[l->n++] = (DramCons){(uint8_t)next, lat};
}

void dram_build_constraints(AtlDram *d, const AtlChip *c)
{
    int bl = c->dram_bl, cl = c->dram_cl, cwl = c->dram_cwl, wr = c->dram_wr, rp = c->dram_rp, rtp = c->dram_rtp;
    /* the data bus is the channel's, or each rank's own (HBM pseudo channels) */
    int bus = d->own_bus ? DL_RANK : DL_CHANNEL;
    enum { ALWAYS, SHARED_BUS, WIDE_ACT };
    const struct {
        int level;
        unsigned prev, next;
        int lat, window, sibling, when;
    } rows[] = {
        /* data bus occupancy */
        {bus, RDS, RDS, bl, 0, 0, ALWAYS},
        {bus, WRS, WRS, bl, 0, 0, ALWAYS},
        /* an activate holding the command bus for act_cycles */
        {DL_CHANNEL, B(DC_ACT), B(DC_ACT) | B(DC_PRE) | B(DC_PREA) | B(DC_REF), c->dram_act_cycles, 0, 0, WIDE_ACT},
        /* rank: column to column, read/write turnarounds */
        {DL_RANK, RDS, RDS, c->dram_ccd_s, 0, 0, ALWAYS},
        {DL_RANK, WRS, WRS, c->dram_ccd_s, 0, 0, ALWAYS},
        {DL_RANK, RDS, WRS, cl + bl + 2 - cwl, 0, 0, ALWAYS},
        {DL_RANK, WRS, RDS, cwl + bl + c->dram_wtr_s, 0, 0, ALWAYS},
        /* the other ranks on a shared bus: a rank switch */
        {DL_RANK, RDS, RDS | WRS, bl + c->dram_cs, 0, 1, SHARED_BUS},
        {DL_RANK, WRS, RDS, cl + bl + c->dram_cs - cwl, 0, 1, SHARED_BUS},
        /* rank: precharge-all, activates, refresh */
        {DL_RANK, B(DC_RD), B(DC_PREA), rtp, 0, 0, ALWAYS},
        {DL_RANK, B(DC_WR), B(DC_PREA), cwl + bl + wr, 0, 0, ALWAYS},
        {DL_RANK, B(DC_ACT), B(DC_ACT), c->dram_rrd_s, 0, 0, ALWAYS},
        {DL_RANK, B(DC_ACT), B(DC_ACT), c->dram_faw, 4, 0, ALWAYS},
        {DL_RANK, B(DC_ACT), B(DC_PREA), c->dram_ras, 0, 0, ALWAYS},
        {DL_RANK, B(DC_PREA), B(DC_ACT), rp, 0, 0, ALWAYS},
        {DL_RANK, B(DC_ACT), B(DC_REF), c->dram_rc, 0, 0, ALWAYS},
        {DL_RANK, B(DC_PRE) | B(DC_PREA), B(DC_REF), rp, 0, 0, ALWAYS},
        {DL_RANK, B(DC_RDA), B(DC_REF), rp + rtp, 0, 0, ALWAYS},
        {DL_RANK, B(DC_WRA), B(DC_REF), cwl + bl + wr + rp, 0, 0, ALWAYS},
        {DL_RANK, B(DC_REF), B(DC_ACT) | B(DC_PREA) | B(DC_REF), c->dram_rfc, 0, 0, ALWAYS},
        /* bank group */
        {DL_BANKGROUP, RDS, RDS, c->dram_ccd_l, 0, 0, ALWAYS},
        {DL_BANKGROUP, WRS, WRS, c->dram_ccd_l, 0, 0, ALWAYS},
        {DL_BANKGROUP, WRS, RDS, cwl + bl + c->dram_wtr_l, 0, 0, ALWAYS},
        {DL_BANKGROUP, B(DC_ACT), B(DC_ACT), c->dram_rrd_l, 0, 0, ALWAYS},
        /* bank */
        {DL_BANK, B(DC_ACT), B(DC_ACT), c->dram_rc, 0, 0, ALWAYS},
        {DL_BANK, B(DC_ACT), RDS | WRS, c->dram_rcd, 0, 0, ALWAYS},
        {DL_BANK, B(DC_ACT), B(DC_PRE), c->dram_ras, 0, 0, ALWAYS},
        {DL_BANK, B(DC_PRE), B(DC_ACT), rp, 0, 0, ALWAYS},
        {DL_BANK, B(DC_RD), B(DC_PRE), rtp, 0, 0, ALWAYS},
        {DL_BANK, B(DC_WR), B(DC_PRE), cwl + bl + wr, 0, 0, ALWAYS},
        {DL_BANK, B(DC_RDA), B(DC_ACT), rtp + rp, 0, 0, ALWAYS},
        {DL_BANK, B(DC_WRA), B(DC_ACT), cwl + bl + wr + rp, 0, 0, ALWAYS},
    };
    memset(d->cons, 0, sizeof d->cons);
    memset(d->sib, 0, sizeof d->sib);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (rows[i].when == SHARED_BUS && (d->own_bus || d->ranks < 2)) continue;
        if (rows[i].when == WIDE_ACT && c->dram_act_cycles < 2) continue;
        if (rows[i].lat <= 0) continue;
        for (int p = 0; p < DC_NUM; p++) {
            if (!(rows[i].prev >> p & 1)) continue;
            for (int n = 0; n < DC_NUM; n++) {
                if (!(rows[i].next >> n & 1)) continue;
                DramConsList *l = rows[i].sibling ? &d->sib[p] : &d->cons[rows[i].level][p];
                add_cons(l, n, rows[i].lat, rows[i].window);
            }
        }
    }
    for (int cmd = 0; cmd < DC_NUM; cmd++) {
        DramPathList *p = &d->path[cmd];
        p->n = 0;
        for (int lv = 0; lv < DL_NUM; lv++)
            for (int i = 0; i < d->cons[lv][cmd].n; i++)
                p->c[p->n++] = (DramPathCons){(uint8_t)lv, d->cons[lv][cmd].c[i].next, d->cons[lv][cmd].c[i].lat};
    }
    d->faw = c->dram_faw;
}

AtlDram *dram_new(const AtlChip *c, AtlErr *e)
{
    AtlDram *d = calloc(1, sizeof *d);
    if (!d) { atl_fail(e, "dram: out of memory"); return NULL; }
    d->nch = c->dram_channels;
    d->ranks = c->dram_ranks;
    d->bgs = c->dram_bankgroups;
    d->banks = c->dram_banks;
    d->rows = c->dram_rows;
    d->cols = c->dram_row_bytes / c->dram_access_bytes;
    d->tx_shift = log2_of((uint64_t)c->dram_access_bytes);
    d->queue = c->dram_queue_depth;
    d->write_high = c->dram_write_high;
    d->write_low = c->dram_write_low;
    d->closed_page = c->dram_page_policy == CFG_PAGE_CLOSED;
    d->own_bus = c->dram_rank_bus == CFG_RANK_BUS_OWN;
    d->cl = c->dram_cl; d->cwl = c->dram_cwl; d->bl = c->dram_bl;
    d->refi = c->dram_refi; d->rfc = c->dram_rfc;
    d->tck_ps = c->dram_tck_ps;
    tim_dram_fields(c, d->field_lo, d->field_bits);
    for (int f = 0; f < F_NUM; f++) d->field_mask[f] = (1ull << d->field_bits[f]) - 1;
    dram_build_constraints(d, c);
    int wbits = log2_of((uint64_t)d->queue * 4);
    if (wbits < 6) wbits = 6;
    d->wline_shift = 64 - wbits;
    d->chan = calloc((size_t)d->nch, sizeof *d->chan);
    int nbg = d->ranks * d->bgs, nbank = nbg * d->banks, ok = d->chan != NULL;
    for (int i = 0; ok && i < d->nch; i++) {
        DramChan *ch = &d->chan[i];
        ch->rq = calloc((size_t)d->queue, sizeof *ch->rq);
        ch->wq = calloc((size_t)d->queue, sizeof *ch->wq);
        ch->aq = calloc((size_t)d->queue, sizeof *ch->aq);
        ch->grp[0] = calloc((size_t)d->queue, sizeof *ch->grp[0]);
        ch->grp[1] = calloc((size_t)d->queue, sizeof *ch->grp[1]);
        for (int k = 0; k < 2; k++) {
            ch->link[k] = calloc((size_t)d->queue, sizeof *ch->link[k]);
            ch->free_slot[k] = calloc((size_t)d->queue, sizeof *ch->free_slot[k]);
            ok = ok && ch->link[k] && ch->free_slot[k];
        }
        ch->wlines = calloc((size_t)1 << wbits, sizeof *ch->wlines);
        ch->open_row = calloc((size_t)nbank, sizeof *ch->open_row);
        ch->rank = calloc((size_t)d->ranks, sizeof *ch->rank);
        ch->bg = calloc((size_t)nbg, sizeof *ch->bg);
        ch->bank = calloc((size_t)nbank, sizeof *ch->bank);
        ch->act_hist = calloc((size_t)d->ranks * 4, sizeof *ch->act_hist);
        ch->act_head = calloc((size_t)d->ranks, sizeof *ch->act_head);
        ok = ok && ch->rq && ch->wq && ch->aq && ch->grp[0] && ch->grp[1] && ch->open_row && ch->rank && ch->bg && ch->bank && ch->act_hist && ch->act_head && ch->wlines;
    }
    if (!ok) { dram_free(d); atl_fail(e, "dram: out of memory"); return NULL; }
    dram_reset(d);
    return d;
}

void dram_free(AtlDram *d)
{
    if (!d) return;
    for (int i = 0; d->chan && i < d->nch; i++) {
        DramChan *ch = &d->chan[i];
        free(ch->rq); free(ch->wq); free(ch->aq); free(ch->grp[0]); free(ch->grp[1]); free(ch->open_row); free(ch->wlines);
        for (int k = 0; k < 2; k++) { free(ch->link[k]); free(ch->free_slot[k]); }
        free(ch->rank); free(ch->bg); free(ch->bank); free(ch->act_hist); free(ch->act_head);
    }
    free(d->chan);
    free(d);
}

void dram_reset(AtlDram *d)
{
    int nbg = d->ranks * d->bgs, nbank = nbg * d->banks;
    for (int i = 0; i < d->nch; i++) {
        DramChan *ch = &d->chan[i];
        ch->nr = ch->nw = ch->na = 0;
        ch->ngrp[0] = ch->ngrp[1] = 0;
        for (int k = 0; k < 2; k++) { /* every slot free, the lowest on top */
            ch->nfree[k] = d->queue;
            for (int q = 0; q < d->queue; q++) ch->free_slot[k][q] = (int16_t)(d->queue - 1 - q);
        }
        memset(ch->wlines, 0, ((size_t)1 << (64 - d->wline_shift)) * sizeof *ch->wlines);
        ch->write_mode = 0;
        for (int b = 0; b < nbank; b++) ch->open_row[b] = -1;
        memset(&ch->ch, 0, sizeof ch->ch);
        memset(ch->rank, 0, (size_t)d->ranks * sizeof *ch->rank);
        memset(ch->bg, 0, (size_t)nbg * sizeof *ch->bg);
        memset(ch->bank, 0, (size_t)nbank * sizeof *ch->bank);
        for (int r = 0; r < d->ranks * 4; r++) ch->act_hist[r] = DRAM_NEVER; /* no activate yet */
        memset(ch->act_head, 0, (size_t)d->ranks);
        ch->last_issue = 0;
        ch->issued = 0;
        ch->next_ref = d->refi > 0 ? (uint64_t)d->refi : DRAM_NEVER;
        ch->ref_due = 0;
        ch->ref_rank = d->ranks;
        ch->last_dir = 0;
        ch->dirty = 1;
        memset(&ch->st, 0, sizeof ch->st);
    }
}

int dram_queued(const AtlDram *d, int ch) { return d->chan[ch].nr + d->chan[ch].nw + d->chan[ch].na; }

void dram_stats(const AtlDram *d, DramStats *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < d->nch; i++) {
        const DramStats *s = &d->chan[i].st;
        out->reads += s->reads; out->writes += s->writes; out->forwarded += s->forwarded;
        out->row_hits += s->row_hits; out->row_misses += s->row_misses; out->row_conflicts += s->row_conflicts;
        out->acts += s->acts; out->pres += s->pres; out->refs += s->refs;
        out->read_latency += s->read_latency; out->w2r += s->w2r; out->r2w += s->r2w;
        if (s->last > out->last) out->last = s->last;
    }
}
