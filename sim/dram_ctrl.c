/* dram_ctrl.c - one channel's controller of the banked DRAM model, in the
 * manner of Ramulator2's generic controller with its FR-FCFS scheduler:
 *
 *   - requests wait in a read queue and a write queue (queue_depth each);
 *     a request whose row activate has issued moves to the activated list,
 *     which goes first;
 *   - each request's next command follows from its bank: the read or write
 *     if its row is open, an activate if the bank is closed, a precharge if
 *     another row is open (not while an activated request still needs that
 *     row);
 *   - among the requests whose command the timing constraints allow
 *     earliest, the oldest issues (first ready, then first come); one
 *     command per cycle;
 *   - writes wait until the write queue passes write_high percent (or no
 *     read waits), then drain until it falls under write_low;
 *   - every refi cycles each rank is refreshed: its banks are precharged
 *     and a REF issued; while a refresh waits only activated requests go on.
 *
 * Between two steps nothing changes, so instead of ticking every cycle the
 * channel computes when its next command can issue (the least ready time)
 * and jumps there. */
#include <string.h>
#include "sim/dram_int.h"

static inline uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Earliest cycle cmd may issue for the node path rank/bank group/bank. */
static inline uint64_t ready_at(const DramChan *c, int cmd, int rank, int bgf, int bank)
{
    uint64_t t = max64(c->ch.ready[cmd], c->rank[rank].ready[cmd]);
    if (cmd == DC_PREA || cmd == DC_REF) return t;
    return max64(t, max64(c->bg[bgf].ready[cmd], c->bank[bank].ready[cmd]));
}

/* The command a request needs next. */
static inline int next_cmd(const DramChan *c, const DramReq *r)
{
    int32_t open = c->open_row[r->bank];
    if (open == (int32_t)r->row) return r->write ? DC_WR : DC_RD;
    return open < 0 ? DC_ACT : DC_PRE;
}

/* An activated request needs bank b's open row: no precharge of b before. */
static int bank_held(const DramChan *c, int bank)
{
    for (int i = 0; i < c->na; i++)
        if (c->aq[i].bank == bank) return 1;
    return 0;
}

static int rank_held(const DramChan *c, int rank)
{
    for (int i = 0; i < c->na; i++)
        if (c->aq[i].rank == rank) return 1;
    return 0;
}

static int rank_open(const AtlDram *d, const DramChan *c, int rank)
{
    int per = d->bgs * d->banks;
    for (int b = rank * per; b < (rank + 1) * per; b++)
        if (c->open_row[b] >= 0) return 1;
    return 0;
}

static inline int group_cmd(const DramChan *c, const DramGroup *g, int write)
{
    int32_t open = c->open_row[g->bank];
    if (open == (int32_t)g->row) return write ? DC_WR : DC_RD;
    return open < 0 ? DC_ACT : DC_PRE;
}

/* The group of the read (write) queue whose oldest request's next command
 * can issue first (ties: the oldest); -1 if none can. Groups are kept in
 * the order of their oldest requests, so the scan stops at the first group
 * that arrived no earlier than the best time found (it and the younger
 * ones cannot go sooner and lose ties), or when a group goes at the least
 * time the channel and ranks allow. */
static int pick_group(DramChan *c, int ranks, int write, uint64_t floor, uint64_t *t_out, int *cmd_out)
{
    const DramGroup *g = c->grp[write];
    int n = c->ngrp[write], best = -1, bcmd = 0;
    uint64_t bt = DRAM_NEVER;
    /* per rank, the channel's and rank's ready time of the column command,
     * the activate and the precharge (a group's next command is one of them) */
    const int cmds[3] = {write ? DC_WR : DC_RD, DC_ACT, DC_PRE};
    uint64_t comm[16][3], lb = DRAM_NEVER;
    for (int r = 0; r < ranks; r++)
        for (int k = 0; k < 3; k++) {
            comm[r][k] = max64(max64(c->ch.ready[cmds[k]], c->rank[r].ready[cmds[k]]), floor);
            if (comm[r][k] < lb) lb = comm[r][k];
        }
    for (int i = 0; i < n; i++) { /* oldest first */
        const DramGroup *gi = &g[i];
        if (gi->arrive >= bt) break;
        int32_t open = c->open_row[gi->bank];
        int k = open == (int32_t)gi->row ? 0 : open < 0 ? 1 : 2, cmd = cmds[k];
        uint64_t t = comm[gi->rank][k];
        if (t >= bt) continue;
        t = max64(max64(t, c->bg[gi->bgf].ready[cmd]), max64(c->bank[gi->bank].ready[cmd], gi->arrive));
        if (t >= bt) continue;
        if (k == 2 && c->na && bank_held(c, gi->bank)) continue;
        bt = t;
        best = i;
        bcmd = cmd;
        if (t == lb) break; /* nobody goes sooner, and the rest are younger */
    }
    *t_out = bt;
    *cmd_out = bcmd;
    return best;
}

/* The same choice as pick_group by the plain rule, every group looked at:
 * the reference dram_check_picks compares it with (dram_ctrl.c's tests). */
static int pick_group_plain(DramChan *c, int write, uint64_t floor, uint64_t *t_out, int *cmd_out)
{
    const DramGroup *g = c->grp[write];
    int best = -1, bcmd = 0;
    uint64_t bt = DRAM_NEVER;
    for (int i = 0; i < c->ngrp[write]; i++) {
        int cmd = group_cmd(c, &g[i], write);
        if (cmd == DC_PRE && bank_held(c, g[i].bank)) continue;
        uint64_t t = max64(max64(ready_at(c, cmd, g[i].rank, g[i].bgf, g[i].bank), g[i].arrive), floor);
        if (t < bt) { bt = t; best = i; bcmd = cmd; }
    }
    *t_out = bt;
    *cmd_out = bcmd;
    return best;
}

/* 1 if queue `write`'s groups are in the order of their oldest requests,
 * each group's head the oldest of its linked requests, all of its bank and
 * row, and the groups hold every queued request once. */
static int groups_sound(const DramChan *c, int write)
{
    const DramGroup *g = c->grp[write];
    const DramReq *q = write ? c->wq : c->rq;
    int total = 0;
    for (int i = 0; i < c->ngrp[write]; i++) {
        if (i && g[i - 1].arrive > g[i].arrive) return 0;
        if (q[g[i].head].arrive != g[i].arrive) return 0;
        uint32_t n = 0;
        int last = -1;
        for (int k = g[i].head; k >= 0; k = c->link[write][k], n++) {
            if (q[k].bank != g[i].bank || q[k].row != g[i].row || (n && q[k].arrive < q[last].arrive)) return 0;
            last = k;
        }
        if (n != g[i].count || last != g[i].tail) return 0;
        total += (int)n;
    }
    return total == (write ? c->nw : c->nr);
}

/* The activated request whose next command can issue first (ties: the oldest); -1 if none. */
static int pick_active(DramChan *c, uint64_t floor, uint64_t *t_out, int *cmd_out)
{
    int best = -1, bcmd = 0;
    uint64_t bt = DRAM_NEVER, barr = 0;
    for (int i = 0; i < c->na; i++) {
        const DramReq *r = &c->aq[i];
        int cmd = next_cmd(c, r);
        uint64_t t = max64(max64(ready_at(c, cmd, r->rank, r->bgf, r->bank), r->arrive), floor);
        if (t < bt || (t == bt && r->arrive < barr)) { bt = t; barr = r->arrive; best = i; bcmd = cmd; }
    }
    *t_out = bt;
    *cmd_out = bcmd;
    return best;
}

/* Adds the request in slot `slot` of its queue to its group; returns 1 if
 * it started a group (it is the oldest of its row). */
static int group_add(DramChan *c, const DramReq *r, int slot)
{
    int w = r->write;
    DramGroup *g = c->grp[w];
    int n = c->ngrp[w];
    c->link[w][slot] = -1;
    for (int i = 0; i < n; i++)
        if (g[i].bank == r->bank && g[i].row == r->row) {
            c->link[w][g[i].tail] = (int16_t)slot;
            g[i].tail = (int16_t)slot;
            g[i].count++;
            return 0;
        }
    g[n] = (DramGroup){r->arrive, r->row, 1, r->bank, r->bgf, (int16_t)slot, (int16_t)slot, r->rank};
    c->ngrp[w]++;
    return 1;
}

/* Takes the request in slot `slot` (the oldest of its group) out of its
 * queue; its group moves to the place of its next oldest request. `hint`
 * is where its group was when the step was chosen (looked at first). */
static void queue_remove(const AtlDram *d, DramChan *c, int write, int slot, int hint)
{
    DramReq *q = write ? c->wq : c->rq;
    if (write) { c->nw--; c->wlines[wline_bucket(q[slot].line, d->wline_shift)]--; }
    else c->nr--;
    c->free_slot[write][c->nfree[write]++] = (int16_t)slot;
    DramGroup *g = c->grp[write];
    int ng = c->ngrp[write];
    int from = hint >= 0 && hint < ng && g[hint].head == slot ? hint : 0;
    for (int k = from; k < ng; k++) {
        if (g[k].head != slot) continue;
        DramGroup moved = g[k];
        if (!--moved.count) {
            memmove(g + k, g + k + 1, (size_t)(ng - k - 1) * sizeof *g);
            c->ngrp[write]--;
            return;
        }
        moved.head = c->link[write][slot];
        moved.arrive = q[moved.head].arrive;
        /* after the younger groups that arrived no later (the array stays in
         * arrival order); a few places at most, so shifted by hand */
        int at = ng - 1;
        while (at > k && g[at].arrive > moved.arrive) at--;
        for (int j = k; j < at; j++) g[j] = g[j + 1];
        g[at] = moved;
        return;
    }
}

/* Works out the channel's next step into c->step_* (dram_int.h). */
void dram_decide(AtlDram *d, DramChan *c)
{
    c->dirty = 0;
    c->step_kind = DS_NONE;
    c->step_t = DRAM_NEVER;
    int pending_ref = c->ref_rank < d->ranks;
    if (!c->nr && !c->nw && !c->na && !pending_ref) return; /* idle: refreshes are caught up on the next push */
    uint64_t floor = c->issued ? c->last_issue + 1 : 0;
    uint64_t ta = DRAM_NEVER, tb = DRAM_NEVER;
    int ca = 0, cb = 0, ib = -1, kb = DS_NONE;
    int ia = c->na ? pick_active(c, floor, &ta, &ca) : -1;
    if (pending_ref) {
        int r = c->ref_rank;
        cb = rank_open(d, c, r) ? DC_PREA : DC_REF;
        if (cb != DC_PREA || !rank_held(c, r)) {
            tb = max64(max64(ready_at(c, cb, r, 0, 0), c->ref_due), floor);
            kb = DS_REFRESH;
        }
    } else {
        update_write_mode(d, c);
        int g = pick_group(c, d->ranks, c->write_mode, floor, &tb, &cb);
        if (d->check) {
            uint64_t rt;
            int rc, rg = pick_group_plain(c, c->write_mode, floor, &rt, &rc);
            d->checks++;
            if (rg != g || (g >= 0 && (rt != tb || rc != cb)) || !groups_sound(c, 0) || !groups_sound(c, 1)) d->check_fails++;
        }
        if (g >= 0) {
            ib = c->grp[c->write_mode][g].head;
            kb = DS_QUEUE;
            c->step_grp = g;
        }
    }
    if (ia >= 0 && ta <= tb) { c->step_kind = DS_ACTIVE; c->step_t = ta; c->step_idx = ia; c->step_cmd = ca; }
    else if (kb != DS_NONE) { c->step_kind = kb; c->step_t = tb; c->step_idx = ib; c->step_cmd = cb; }
    if (!pending_ref && c->next_ref <= c->step_t) { c->step_kind = DS_TRIGGER; c->step_t = c->next_ref; }
}

uint64_t dram_next(AtlDram *d, int ch)
{
    DramChan *c = &d->chan[ch];
    if (c->dirty) dram_decide(d, c);
    return c->step_t;
}

void dram_check_picks(AtlDram *d, int on)
{
    d->check = on;
    d->checks = d->check_fails = 0;
}

void dram_check_result(const AtlDram *d, uint64_t *checks, uint64_t *fails)
{
    *checks = d->checks;
    *fails = d->check_fails;
}

int dram_has_room(const AtlDram *d, int ch, int write)
{
    const DramChan *c = &d->chan[ch];
    return (write ? c->nw : c->nr) < d->queue;
}


/* A channel with nothing queued has done the refreshes that fell due while
 * it was idle: all but the last are counted and leave the banks closed,
 * the last is made pending (it may still hold the rank at t). */
static void catch_up_refresh(AtlDram *d, DramChan *c, uint64_t t)
{
    if (c->next_ref > t || c->ref_rank < d->ranks) return;
    uint64_t n = (t - c->next_ref) / (uint64_t)d->refi; /* due before the last one */
    if (n) {
        c->st.refs += n * (uint64_t)d->ranks;
        c->st.pres += n * (uint64_t)d->ranks; /* the first may have found banks open: counted as if */
        int nbank = d->ranks * d->bgs * d->banks;
        for (int b = 0; b < nbank; b++) c->open_row[b] = -1;
        c->next_ref += n * (uint64_t)d->refi;
        /* the rank is free again after the last skipped refresh */
        for (int r = 0; r < d->ranks; r++) {
            uint64_t free_at = c->next_ref - (uint64_t)d->refi + (uint64_t)d->rfc;
            if (c->rank[r].ready[DC_ACT] < free_at) c->rank[r].ready[DC_ACT] = free_at;
            if (c->rank[r].ready[DC_REF] < free_at) c->rank[r].ready[DC_REF] = free_at;
            if (c->rank[r].ready[DC_PREA] < free_at) c->rank[r].ready[DC_PREA] = free_at;
        }
    }
    c->ref_due = c->next_ref;
    c->ref_rank = 0;
    c->next_ref += (uint64_t)d->refi;
}

/* The request just queued at the end of its queue changes the next step
 * only if it can go strictly sooner (it is the youngest: it loses ties),
 * or if it turns the write mode: then the step is worked out again. */
static void consider_new(AtlDram *d, DramChan *c, int write, int slot, int started)
{
    if (c->ref_rank < d->ranks) return; /* a refresh waits: only activated requests may go */
    int mode = c->write_mode;
    update_write_mode(d, c);
    int flipped = mode != c->write_mode;
    c->write_mode = mode;
    if (flipped) { c->dirty = 1; return; }
    if (write != mode || !started) return; /* the other queue waits; or an older request of its row goes first */
    const DramReq *r = write ? &c->wq[slot] : &c->rq[slot];
    int cmd = next_cmd(c, r);
    if (cmd == DC_PRE && c->na && bank_held(c, r->bank)) return;
    uint64_t floor = c->issued ? c->last_issue + 1 : 0;
    uint64_t t = max64(max64(ready_at(c, cmd, r->rank, r->bgf, r->bank), r->arrive), floor);
    if (t >= c->step_t) return;
    c->step_kind = DS_QUEUE;
    c->step_t = t;
    c->step_idx = slot;
    c->step_cmd = cmd;
    c->step_grp = c->ngrp[write] - 1; /* it started the youngest group */
}

int dram_push(AtlDram *d, const DramLoc *loc, uint64_t line, int write, uint64_t t, uint32_t tag, DramDone *done)
{
    DramChan *c = &d->chan[loc->ch];
    if (!write && c->wlines[wline_bucket(line, d->wline_shift)])
        for (int g = 0; g < c->ngrp[1]; g++)
            for (int i = c->grp[1][g].head; i >= 0; i = c->link[1][i])
            if (c->wq[i].line == line) { /* forwarded from the write queue */
                *done = (DramDone){tag, 0, t, t, t + 1};
                c->st.reads++;
                c->st.forwarded++;
                c->st.read_latency += 2;
                if (t + 1 > c->st.last) c->st.last = t + 1;
                return 1;
            }
    if (!c->nr && !c->nw && !c->na) catch_up_refresh(d, c, t);
    DramReq r;
    r.arrive = t;
    r.line = line;
    r.row = loc->row;
    r.tag = tag;
    r.rank = (uint8_t)loc->rank;
    r.bgf = (uint16_t)(loc->rank * (uint32_t)d->bgs + loc->bg);
    r.bank = (uint16_t)(r.bgf * (uint32_t)d->banks + loc->bank);
    r.write = (uint8_t)write;
    r.counted = 0;
    int was_idle = !c->nr && !c->nw && !c->na;
    int slot = c->free_slot[write][--c->nfree[write]];
    if (write) { c->wq[slot] = r; c->nw++; c->wlines[wline_bucket(line, d->wline_shift)]++; }
    else { c->rq[slot] = r; c->nr++; }
    int started = group_add(c, &r, slot);
    if (!c->dirty && !was_idle) consider_new(d, c, write, slot, started);
    else c->dirty = 1;
    return 0;
}

/* Applies the constraints of `cmd` issued at t to one node. */
static inline void apply(DramNode *n, const DramConsList *l, uint64_t t)
{
    for (int i = 0; i < l->n; i++) { /* (tFAW is not in the lists: by the activate history) */
        const DramCons *k = &l->c[i];
        n->ready[k->next] = max64(n->ready[k->next], t + (uint64_t)k->lat);
    }
}

static void update_timing(AtlDram *d, DramChan *c, int cmd, int rank, int bgf, int bank, uint64_t t)
{
    if (cmd != DC_PREA && cmd != DC_REF) { /* a bank's command: its path's constraints in one list */
        uint64_t *node[DL_NUM] = {c->ch.ready, c->rank[rank].ready, c->bg[bgf].ready, c->bank[bank].ready};
        const DramPathList *p = &d->path[cmd];
        for (int i = 0; i < p->n; i++) {
            uint64_t *r = node[p->c[i].level] + p->c[i].next, v = t + (uint64_t)p->c[i].lat;
            if (*r < v) *r = v;
        }
    } else {
        apply(&c->ch, &d->cons[DL_CHANNEL][cmd], t);
        apply(&c->rank[rank], &d->cons[DL_RANK][cmd], t);
    }
    if (d->sib[cmd].n)
        for (int r = 0; r < d->ranks; r++)
            if (r != rank) apply(&c->rank[r], &d->sib[cmd], t);
    if (cmd == DC_ACT) { /* tFAW: the 4th activate back in this rank */
        uint64_t *h = &c->act_hist[rank * 4];
        uint8_t *head = &c->act_head[rank];
        h[*head] = t;
        *head = (uint8_t)((*head + 1) & 3);
        uint64_t oldest = h[*head]; /* the slot written 4 activates ago */
        if (oldest != DRAM_NEVER) {
            uint64_t at = oldest + (uint64_t)d->faw;
            if (c->rank[rank].ready[DC_ACT] < at) c->rank[rank].ready[DC_ACT] = at;
        }
    }
    int per = d->bgs * d->banks;
    if (cmd == DC_PREA || cmd == DC_REF) { /* rank-wide: every bank group and bank of it */
        if (d->cons[DL_BANKGROUP][cmd].n)
            for (int g = rank * d->bgs; g < (rank + 1) * d->bgs; g++) apply(&c->bg[g], &d->cons[DL_BANKGROUP][cmd], t);
        if (d->cons[DL_BANK][cmd].n)
            for (int b = rank * per; b < (rank + 1) * per; b++) apply(&c->bank[b], &d->cons[DL_BANK][cmd], t);
    }
}

static void remove_at(DramReq *q, int *n, int i)
{
    memmove(q + i, q + i + 1, (size_t)(*n - i - 1) * sizeof *q);
    (*n)--;
}

/* Closed page: the access closes its row unless another queued request wants it. */
static int row_wanted(const DramChan *c, const DramReq *r)
{
    for (int i = 0; i < c->na; i++)
        if (&c->aq[i] != r && c->aq[i].bank == r->bank && c->aq[i].row == r->row) return 1;
    for (int w = 0; w < 2; w++)
        for (int g = 0; g < c->ngrp[w]; g++) {
            const DramGroup *gr = &c->grp[w][g];
            if (gr->bank != r->bank || gr->row != r->row) continue;
            const DramReq *head = w ? &c->wq[gr->head] : &c->rq[gr->head];
            if (gr->count > 1 || head != r) return 1;
        }
    return 0;
}

static void count_first(DramChan *c, DramReq *r, int cmd)
{
    if (r->counted) return;
    r->counted = 1;
    if (cmd == DC_RD || cmd == DC_WR) c->st.row_hits++;
    else if (cmd == DC_PRE) c->st.row_conflicts++;
    else c->st.row_misses++;
}

int dram_step(AtlDram *d, int ch, DramDone *done)
{
    DramChan *c = &d->chan[ch];
    if (c->dirty) dram_decide(d, c);
    uint64_t t = c->step_t;
    int kind = c->step_kind;
    c->dirty = 1;
    if (kind == DS_NONE) return 0;
    if (kind == DS_TRIGGER) { /* every rank's refresh falls due */
        c->ref_due = c->next_ref;
        c->ref_rank = 0;
        c->next_ref += (uint64_t)d->refi;
        return 0;
    }
    int cmd = c->step_cmd;
    c->last_issue = t;
    c->issued = 1;
    if (kind == DS_REFRESH) {
        int r = c->ref_rank, per = d->bgs * d->banks;
        update_timing(d, c, cmd, r, 0, 0, t);
        for (int b = r * per; b < (r + 1) * per; b++) c->open_row[b] = -1;
        if (cmd == DC_PREA) c->st.pres++;
        else { c->st.refs++; c->ref_rank++; }
        return 0;
    }
    DramReq *q = kind == DS_ACTIVE ? c->aq : c->write_mode ? c->wq : c->rq;
    int *n = kind == DS_ACTIVE ? &c->na : c->write_mode ? &c->nw : &c->nr;
    DramReq *r = &q[c->step_idx];
    count_first(c, r, cmd);
    if ((cmd == DC_RD || cmd == DC_WR) && d->closed_page && !row_wanted(c, r)) cmd = cmd == DC_RD ? DC_RDA : DC_WRA;
    update_timing(d, c, cmd, r->rank, r->bgf, r->bank, t);
    switch (cmd) {
    case DC_ACT:
        c->st.acts++;
        c->open_row[r->bank] = (int32_t)r->row;
        if (kind != DS_ACTIVE && c->na < d->queue) { /* it waits among the activated now */
            c->aq[c->na++] = *r;
            queue_remove(d, c, r->write, c->step_idx, c->step_grp);
        }
        return 0;
    case DC_PRE:
        c->st.pres++;
        c->open_row[r->bank] = -1;
        return 0;
    default: break;
    }
    /* a read or write: the request is done */
    int write = cmd == DC_WR || cmd == DC_WRA;
    if (cmd == DC_RDA || cmd == DC_WRA) { c->open_row[r->bank] = -1; c->st.pres++; }
    int dir = write ? 2 : 1;
    if (c->last_dir && c->last_dir != dir) {
        if (write) c->st.r2w++;
        else c->st.w2r++;
    }
    c->last_dir = dir;
    done->tag = r->tag;
    done->write = write;
    done->arrive = r->arrive;
    done->issue = t;
    done->data_end = t + (uint64_t)(write ? d->cwl : d->cl) + (uint64_t)d->bl;
    if (write) {
        c->st.writes++;
        if (t > c->st.last) c->st.last = t;
    } else {
        c->st.reads++;
        c->st.read_latency += done->data_end + 1 - r->arrive;
        if (done->data_end > c->st.last) c->st.last = done->data_end;
    }
    if (kind == DS_ACTIVE) remove_at(q, n, c->step_idx);
    else queue_remove(d, c, write, c->step_idx, c->step_grp);
    return 1;
}
