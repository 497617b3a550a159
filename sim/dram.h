/* dram.h - the banked DRAM model (`[dram] model = banked`): per channel, an
 * FR-FCFS controller with read and write queues in front of ranks, bank
 * groups and banks with open-row buffers, under the JEDEC timing
 * constraints of [dram_device] and all-bank refresh. Time is counted in
 * DRAM clock cycles (tck_ps). docs/timing.md describes the model, what it
 * leaves out, and its check against Ramulator2.
 *
 * A channel is driven from outside, one step at a time: dram_push puts a
 * request (one access of access_bytes) in a queue, dram_next says when the
 * channel does its next thing, dram_step does it and reports a request it
 * completed. Nothing happens between steps, so a driver can jump from one
 * to the next: the simulator (sim/dram_dma.c) merges the channels' steps
 * with its own events (with the inline accessors of sim/dram_int.h, on
 * its per-request path); dram_replay (sim/dram_replay.c) serves a request
 * trace as Ramulator2's trace front end does.
 *
 * Ownership: dram_new allocates, dram_free releases. */
#ifndef ATOLL_SIM_DRAM_H
#define ATOLL_SIM_DRAM_H
#include <stdint.h>
#include <stddef.h>
#include "isa/config.h"
#include "util/err.h"

#define DRAM_NEVER UINT64_MAX

/* Where an address lives: every field an index at its level. */
typedef struct DramLoc {
    uint32_t ch, rank, bg, bank, row, col;
} DramLoc;

/* A request the channel finished: a read whose data has arrived, or a write
 * whose data has been written. */
typedef struct DramDone {
    uint32_t tag;
    int write;
    uint64_t arrive;        /* DRAM cycle it entered the queue */
    uint64_t issue;         /* its read or write command */
    uint64_t data_end;      /* last data beat: issue + cl + bl (read), issue + cwl + bl (write) */
} DramDone;

/* Per-channel counters (dram_stats sums the channels). */
typedef struct DramStats {
    uint64_t reads, writes;                     /* requests completed */
    uint64_t forwarded;                         /* reads answered from the write queue */
    uint64_t row_hits, row_misses, row_conflicts; /* by the bank's state at the request's first command */
    uint64_t acts, pres, refs;                  /* commands (PRE counts all-bank precharges too) */
    uint64_t read_latency;                      /* sum over reads of data_end + 1 - arrive */
    uint64_t w2r, r2w;                          /* data bus turnarounds: a read after a write, and back */
    uint64_t last;                              /* the latest data_end of a read and issue of a write */
} DramStats;

typedef struct AtlDram AtlDram;

/* Builds the channels of chip c (its [dram] and [dram_device] keys; the
 * `model` key is not looked at). NULL with e set if out of memory. */
AtlDram *dram_new(const AtlChip *c, AtlErr *e);
void dram_free(AtlDram *d);
/* Empties every queue, closes every bank, zeroes the counters; time 0. */
void dram_reset(AtlDram *d);
int dram_num_channels(const AtlDram *d);
/* Bytes of one access; the DRAM clock period in picoseconds. */
uint32_t dram_access_bytes(const AtlDram *d);
double dram_tck_ps(const AtlDram *d);

/* The mapping of [dram] mapping: an address's fields (bits above the
 * mapping's reach are ignored, so larger memories wrap). */
void dram_decode(const AtlDram *d, uint64_t addr, DramLoc *loc);
/* The lowest bit of the access index (address / access_bytes) that the
 * channel field takes, and its width in bits. */
void dram_channel_field(const AtlDram *d, int *lo, int *bits);

/* 1 if channel ch can take another read (write) request now. */
int dram_has_room(const AtlDram *d, int ch, int write);
/* Puts a request into loc's channel at DRAM cycle t (no earlier than the
 * last one pushed there); the caller has checked dram_has_room. `line` is
 * the access index (address / access_bytes), compared to forward a read
 * from a queued write of the same line: then nothing is queued, *done is
 * the read (data at t + 1) and 1 is returned; else 0. */
int dram_push(AtlDram *d, const DramLoc *loc, uint64_t line, int write, uint64_t t, uint32_t tag, DramDone *done);
/* DRAM cycle of channel ch's next step, DRAM_NEVER if it has nothing to
 * do (refreshes of an idle channel are caught up when work arrives). */
uint64_t dram_next(AtlDram *d, int ch);
/* Takes that step (a command, or a refresh falling due). Returns 1 and
 * fills *done if a request completed, else 0. */
int dram_step(AtlDram *d, int ch, DramDone *done);
/* Requests queued on channel ch (read, write and activated ones). */
int dram_queued(const AtlDram *d, int ch);

/* Self-check (for tests): with on, every scheduling pick of a queue is
 * made again by the plain rule (look at every group, no shortcut) and the
 * queues' request groups are checked for order and membership; a
 * disagreement counts as a failure. Off by default (it costs a scan). */
void dram_check_picks(AtlDram *d, int on);
void dram_check_result(const AtlDram *d, uint64_t *checks, uint64_t *fails);

/* Counters summed over the channels. */
void dram_stats(const AtlDram *d, DramStats *out);
/* Peak bandwidth of one channel in bytes per DRAM cycle (access_bytes / bl,
 * times the ranks when each has its own data bus). */
double dram_peak_bytes_per_cycle(const AtlDram *d);

/* ---- trace replay (dram_replay.c) ---- */
typedef struct DramTraceReq {
    uint64_t addr;
    int write;
} DramTraceReq;

typedef struct DramReplay {
    uint64_t cycles;        /* every read returned and every write issued (Ramulator2's "drained") */
    double ns;              /* cycles x tck */
    double gbps;            /* bytes / ns */
    uint64_t bytes;
    DramStats st;
} DramReplay;

/* Serves n requests in order, as Ramulator2's load/store trace front end
 * does: one request offered per DRAM cycle, a refused one (its queue full)
 * offered again the next cycle. d is reset first. */
void dram_replay(AtlDram *d, const DramTraceReq *reqs, size_t n, DramReplay *out);
/* Reads a trace in Ramulator2's load/store format ("LD 0x1f40" / "ST 8000"
 * per line, hexadecimal with 0x or decimal). *reqs is malloc'd (caller
 * frees); errors name the file and line. */
int dram_trace_load(const char *path, DramTraceReq **reqs, size_t *n, AtlErr *e);
/* The same from `size` bytes of text in memory; `path` names it in messages. */
int dram_trace_parse(const char *path, const char *text, size_t size, DramTraceReq **reqs, size_t *n, AtlErr *e);
#endif
