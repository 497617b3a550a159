/* dram_int.h - the banked DRAM model's state, shared by its sources
 * (dram_map.c: address mapping and construction; dram_ctrl.c: the
 * controller), and the accessors the DMA driver (dram_dma.c) calls for
 * every request, inline. Not used outside sim/dram_*.c. */
#ifndef ATOLL_SIM_DRAM_INT_H
#define ATOLL_SIM_DRAM_INT_H
#include "sim/dram.h"
#include "isa/timing.h"

/* Commands, and the levels their timing constraints live at. */
enum { DC_ACT, DC_PRE, DC_PREA, DC_RD, DC_WR, DC_RDA, DC_WRA, DC_REF, DC_NUM };
enum { DL_CHANNEL, DL_RANK, DL_BANKGROUP, DL_BANK, DL_NUM };

/* "A command `next` at this node may not issue before `lat` cycles after
 * the command owning the list", one entry per next command (the tFAW
 * window is kept by the activate history). Sibling constraints apply to
 * the other ranks. */
typedef struct DramCons {
    uint8_t next;
    int32_t lat;
} DramCons;
#define DRAM_MAX_CONS DC_NUM  /* one per next command: never full */
typedef struct DramConsList {
    int n;
    DramCons c[DRAM_MAX_CONS];
} DramConsList;

/* The constraints of one command at the levels of its own path (channel,
 * rank, bank group, bank) in one list, for the commands of one bank
 * (ACT, PRE, RD, WR, RDA, WRA): what update_timing applies on every
 * command. */
typedef struct DramPathCons {
    uint8_t level, next;
    int32_t lat;
} DramPathCons;
#define DRAM_MAX_PATH_CONS (DL_NUM * DC_NUM)
typedef struct DramPathList {
    int n;
    DramPathCons c[DRAM_MAX_PATH_CONS];
} DramPathList;

/* Earliest cycle each command may issue at one node (a channel, rank, bank
 * group or bank). */
typedef struct DramNode {
    uint64_t ready[DC_NUM];
} DramNode;

typedef struct DramReq {
    uint64_t arrive, line;
    uint32_t row, tag;
    uint16_t bank;          /* flat bank index in the channel: (rank * bankgroups + bg) * banks + bank */
    uint16_t bgf;           /* flat bank group index: rank * bankgroups + bg */
    uint8_t rank, write, counted;
} DramReq;

/* The requests of a queue to one row of one bank: they need the same
 * command at the same time, so the scheduler looks at the oldest only. */
typedef struct DramGroup {
    uint64_t arrive;        /* of its oldest request */
    uint32_t row, count;
    uint16_t bank, bgf;
    int16_t head, tail;     /* its requests' slots, oldest first (linked by DramChan.link) */
    uint8_t rank;
} DramGroup;

/* Queued writes are counted by a hash of their line (a channel's lines
 * share their channel bits, so the low bits alone would spread them over
 * few buckets), in 2^(64 - shift) buckets: at least four per write queue
 * entry, 64 at least (a small table stays in the cache). */
static inline uint32_t wline_bucket(uint64_t line, int shift) { return (uint32_t)((line * 0x9e3779b97f4a7c15ull) >> shift); }

/* The step dram_next found, kept until the channel changes. */
enum { DS_NONE, DS_TRIGGER, DS_ACTIVE, DS_QUEUE, DS_REFRESH };

typedef struct DramChan {
    DramReq *rq, *wq;       /* read and write queue: slots, in no order (their groups order them) */
    int16_t *link[2];       /* per slot of each: the next request of its group, -1 none */
    int16_t *free_slot[2];  /* the free slots of each, a stack */
    int nfree[2];
    DramReq *aq;            /* activated requests, in the order their activates issued */
    int nr, nw, na;
    DramGroup *grp[2];      /* the read and the write queue's requests by bank and row, oldest first */
    int ngrp[2];
    uint16_t *wlines;       /* queued writes by wline_bucket(line): a read looks for one to forward from only if counted */
    int write_mode;
    int32_t *open_row;      /* per flat bank; -1 closed */
    DramNode ch, *rank, *bg, *bank;
    uint64_t *act_hist;     /* per rank: the last 4 activates (ring, for tFAW) */
    uint8_t *act_head;
    uint64_t last_issue;    /* the last command's cycle (commands issue one per cycle) */
    int issued;             /* a command has issued (last_issue valid) */
    uint64_t next_ref;      /* when the next refresh falls due */
    uint64_t ref_due;       /* when the pending one fell due */
    int ref_rank;           /* the rank whose refresh is pending next; ranks when none */
    int last_dir;           /* data bus direction of the last access: 0 none, 1 read, 2 write */
    int dirty;              /* the cached step below is stale */
    int step_kind, step_idx, step_cmd;
    int step_grp;           /* DS_QUEUE: its group's place when chosen (a hint: admissions only append) */
    uint64_t step_t;
    DramStats st;
} DramChan;

struct AtlDram {
    int nch, ranks, bgs, banks, rows;
    int cols;                       /* accesses per row */
    int tx_shift;                   /* log2(access_bytes) */
    int field_lo[6], field_bits[6]; /* ch, rank, bg, bank, row, col: lowest bit in the access index, width */
    uint64_t field_mask[6];         /* (1 << field_bits) - 1 */
    int queue, write_high, write_low;
    int wline_shift;                /* wline_bucket's: 64 - log2(buckets) */
    int closed_page, own_bus;
    int cl, cwl, bl, refi, rfc;
    double tck_ps;
    DramConsList cons[DL_NUM][DC_NUM], sib[DC_NUM];
    DramPathList path[DC_NUM];      /* cons[level][cmd] of the four levels, flattened */
    int faw;
    int check;                      /* dram_check_picks: every pick also made by the plain rule */
    uint64_t checks, check_fails;
    DramChan *chan;
};

/* dram_map.c: the fields of a decoded address, the constraint tables */
void dram_build_constraints(AtlDram *d, const AtlChip *c);
/* dram_ctrl.c: works out channel c's next step into c->step_* */
void dram_decide(AtlDram *d, DramChan *c);

/* ---- inline: the per-request path ---- */

/* dram_decode of access index `line` (address / access_bytes). */
static inline void dram_locate(const AtlDram *d, uint64_t line, DramLoc *loc)
{
#define FIELD(f) (uint32_t)((line >> d->field_lo[f]) & d->field_mask[f])
    loc->ch = FIELD(TIM_DRAM_CH); loc->rank = FIELD(TIM_DRAM_RANK); loc->bg = FIELD(TIM_DRAM_BG);
    loc->bank = FIELD(TIM_DRAM_BANK); loc->row = FIELD(TIM_DRAM_ROW); loc->col = FIELD(TIM_DRAM_COL);
#undef FIELD
}

/* The write-queue hysteresis: writes drain from over write_high percent
 * (or when no read waits) to under write_low (while a read waits). */
static inline void update_write_mode(const AtlDram *d, DramChan *c)
{
    if (!c->write_mode) {
        if (c->nw * 100 > d->write_high * d->queue || c->nr == 0) c->write_mode = 1;
    } else if (c->nw * 100 < d->write_low * d->queue && c->nr != 0) {
        c->write_mode = 0;
    }
}

/* Whether channel ch's read (room[0]) and write queue (room[1]) can take
 * another request. */
static inline void dram_room(const AtlDram *d, int ch, int room[2])
{
    const DramChan *c = &d->chan[ch];
    room[0] = c->nr < d->queue;
    room[1] = c->nw < d->queue;
}

/* dram_next, with dram_room. */
static inline uint64_t dram_poll(AtlDram *d, int ch, int room[2])
{
    DramChan *c = &d->chan[ch];
    dram_room(d, ch, room);
    if (c->dirty) dram_decide(d, c);
    return c->step_t;
}

/* 0 if a read of `line` pushed to channel ch now would certainly not be
 * answered from its write queue (no queued write shares its hash). */
static inline int dram_may_forward(const AtlDram *d, int ch, uint64_t line)
{
    return d->chan[ch].wlines[wline_bucket(line, d->wline_shift)] != 0;
}

/* Turns channel ch between reads and writes as working out its next step
 * would (dram_decide: unless a refresh waits or the channel is idle),
 * without working it out: for a request pushed before that, so that the
 * turn sees the queues as they were. */
static inline void dram_settle(AtlDram *d, int ch)
{
    DramChan *c = &d->chan[ch];
    if (c->dirty && c->ref_rank >= d->ranks && (c->nr || c->nw || c->na)) update_write_mode(d, c);
}

/* The earliest DRAM cycle of channel ch's next command (one a cycle). */
static inline uint64_t dram_floor(const AtlDram *d, int ch)
{
    const DramChan *c = &d->chan[ch];
    return c->issued ? c->last_issue + 1 : 0;
}
#endif
