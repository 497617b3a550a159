/* sim_int.h - the simulator's internal state, shared by the sim/ sources files
 * (event queue, engines, memory model, exec functions, race detector,
 * faults, report, trace). Not part of the public API (sim/sim.h). */
#ifndef ATOLL_SIM_INT_H
#define ATOLL_SIM_INT_H
#include <stdint.h>
#include <stddef.h>
#include "sim/sim.h"
#include "util/strbuf.h"
#include "isa/operands.h"

/* ---- growable string buffer (util/strbuf.h) ---- */
typedef StrBuf SimBuf;

/* ---- event queue (evq.c): binary heap keyed by (time, seq) ---- */
enum { EV_ISSUE, EV_COMPLETE, EV_DMA_CHECK, EV_BARRIER };
typedef struct SimEvent {
    uint64_t time, seq;
    uint32_t kind, arg;     /* arg: engine id (core*3+engine) or barrier slot */
} SimEvent;
typedef struct SimEvq {
    SimEvent *h;
    size_t n, cap;
    uint64_t seq;
} SimEvq;
int evq_push(SimEvq *q, uint64_t time, uint32_t kind, uint32_t arg);
int evq_pop(SimEvq *q, SimEvent *out);      /* 0 if empty */
/* Replaces the smallest event by a new one (a pop and a push in one sift). */
void evq_replace_top(SimEvq *q, uint64_t time, uint32_t kind, uint32_t arg);
/* The second-smallest event (smaller child of the root), or NULL. */
static inline const SimEvent *evq_second(const SimEvq *q)
{
    if (q->n < 2) return NULL;
    if (q->n == 2) return &q->h[1];
    const SimEvent *a = &q->h[1], *b = &q->h[2];
    return (b->time < a->time || (b->time == a->time && b->seq < a->seq)) ? b : a;
}
static inline const SimEvent *evq_top(const SimEvq *q) { return q->n ? &q->h[0] : NULL; }
void evq_reset(SimEvq *q);                  /* empty, sequence numbers from 0 */
void evq_free(SimEvq *q);

/* ---- predecoded instruction (check.c) ----
 * Everything a timing-only run needs of an instruction, so that the run
 * loop reads one record per instruction and not the AtlInsn as well (the
 * engines' streams interleave: every byte per instruction is a cache line
 * fetched from memory). */
#define SIM_MAX_RANGES 3    /* operands in memory: at most src, src2 (a gather's index table) and dst */
typedef struct SimRange {
    uint32_t lo, hi;        /* byte range [lo, hi) in its space: every space's size is an int (AtlChip), and
                             * check.c keeps hi within it, so 32 bits hold every DRAM and SRAM address too */
    uint32_t cores;         /* LMEM: cluster-local core mask the range is in (the own core's bit for its own
                             * LMEM); 0 in SRAM and DRAM (the chip's) */
    uint8_t write;
    uint8_t space;          /* ISA_SPACE_LMEM, SRAM or DRAM (a peer operand's range is in SRAM) */
    uint8_t cluster;        /* SRAM: the cluster whose SRAM it is in (the issuing core's, or a peer operand's) */
} SimRange;
/* SimPre.far: what an instruction does in the shared spaces (race.c): a
 * bit per space and direction, SIM_FAR_BIT(space, write) */
#define SIM_FAR_BIT(space, write) (uint8_t)(1u << (((space) == ISA_SPACE_DRAM) * 2 + !!(write)))
enum { SIM_FAR_WRITES = 0xa };  /* the write bits of both spaces */
typedef struct SimPre {
    uint64_t cycles;        /* compute cycles (mat/vec), 0 otherwise */
    uint64_t bytes;         /* DMA: bytes moved; mat/vec: LMEM bytes touched */
    uint64_t macs, elems;
    uint64_t lmem_rd, lmem_wr;
    union {
        struct {            /* mat/vec */
            uint64_t lmem_occ;      /* cycles the touched banks are busy */
            uint64_t banks[4];      /* LMEM banks touched (bit per bank) */
        };
        struct {            /* DMA */
            uint64_t dma_solo;      /* busy cycles on its slowest server if alone (mem_dma_plan) */
            uint64_t dma_latency;   /* path latency + issue cycles (both after delivery) */
            uint32_t use_at;        /* its servers and work there, SimEngine.plan[use_at..+nuse) */
            uint32_t nuse;
            uint32_t nshared;       /* the first nshared of them are shared with other engines (mem_dma_mark_exclusive) */
        };
    };
    uint32_t cores;         /* cluster-local cores of all its ranges */
    /* copied from the AtlInsn */
    uint32_t mask;
    uint16_t layer;         /* the layer it counts for (isa_tag_layer) */
    uint8_t member;         /* 1 + its layer group member (isa_tag_member; sim_load gives untagged
                             * instructions of a group theirs), 0 none */
    uint8_t op, fmt, wait, signal, dtype, dst_space, src_space;
    uint8_t nr;
    uint8_t far;            /* SIM_FAR_BIT of each of its ranges in cluster SRAM or DRAM (only DMA instructions have them) */
    uint8_t peer, hops;     /* a dma.copy with a peer end: that end's cluster and the cluster links between */
    SimRange r[SIM_MAX_RANGES];
} SimPre;
static inline int sim_pre_is_dma(const SimPre *pre)
{
    return pre->fmt == ISA_FMT_DMA_COPY || pre->fmt == ISA_FMT_DMA_FILL || pre->fmt == ISA_FMT_DMA_GATHER;
}
/* Host work units of an instruction's arithmetic (AtlSimOptions.max_work):
 * bytes a transfer moves, MACs and elements a compute instruction does. */
static inline uint64_t sim_exec_work(const SimPre *pre)
{
    return sim_pre_is_dma(pre) ? pre->bytes : pre->macs + pre->elems;
}

/* ---- LMEM banks (mem.c): reserved by matrix/vector instructions ---- */
typedef struct SimServer {
    uint64_t free;          /* next-free time */
} SimServer;

/* ---- DMA flows (mem.c): processor sharing on the shared DMA resources ----
 * A server (DRAM channel, a cluster's NoC link per direction, a cluster's
 * SRAM ports, a core's LMEM DMA port) shares its time equally among the
 * transfers on it (up to `ports` at full speed). Its virtual time v is the
 * busy time each of them has received; a transfer with w busy cycles of
 * work there, joining at virtual time v0, is done there when v reaches
 * v0 + w (its virtual finish). */
struct SimUse;
typedef struct SimPsJob {
    double f, v0, q, iq;    /* virtual finish, virtual start, busy cycles of one burst, 1 / q */
    double wl, last, none;  /* for its lag: work - 1e-9, lag in its last burst, no lag up to (mem.c ps_lag) */
    struct SimUse *use;     /* the transfer's work there: its instruction's own plan entry, so it names
                             * the transfer (a delivered transfer may stay on as a ghost: its uses are gone) */
} SimPsJob;
typedef struct SimPs {
    double v, tv;           /* virtual time v at real time tv */
    int ports, n, cap;
    uint64_t joins;         /* flows that joined so far (a projection is stale when this moved) */
    SimPsJob *job;          /* the n transfers on it, by virtual finish (ties: arrival order), in mem */
    SimPsJob *mem;          /* room for cap jobs; job moves up as the first ones leave */
} SimPs;
/* A transfer's work on one server (busy cycles if it were alone). */
typedef struct SimUse {
    int32_t ps;             /* index in AtlSim.ps */
    uint8_t gone;           /* its work there is done, at time fin */
    uint8_t excl;           /* no other engine's transfers ever use the server: it is never shared */
    uint64_t work;          /* busy cycles */
    double q, iq;           /* busy cycles of one burst (work / bursts), 1 / q */
    union {                 /* (48 bytes in all: a transfer's plan is read from memory as it starts) */
        uint64_t bursts;    /* while planning: bursts that touch the server */
        double fin;         /* while running: done there at (gone), or projected to be done at */
    };
    uint64_t joins;         /* the server's joins when fin was projected */
} SimUse;

enum { ST_READY, ST_BUSY, ST_WAIT_SEM, ST_WAIT_BAR, ST_DONE, ST_FAULT };

typedef struct SimEngine {
    /* hot: what the run loop touches per instruction */
    SimPre *pre;
    int pc, state, count;
    int bad_index;          /* first invalid instruction (count if none) */
    int blocked_sem;
    int next_waiter;        /* barrier waiter list link (engine id or -1) */
    uint64_t t_block, t_start;
    uint64_t t_done;        /* completion of its previous instruction (per-layer `held`) */
    /* DMA transfer in flight (mem.c) */
    SimUse *use;            /* servers it occupies, nuse of them (in plan; scratch while planning) */
    int nuse, nshared;      /* the first nshared are servers other engines use too */
    double dma_last0;       /* max of its start and its done times on the unshared servers */
    SimUse *plan;           /* every DMA instruction's servers and work (SimPre.use_at) */
    uint64_t dma_start;     /* when it joined its servers (when it started) */
    uint64_t dma_solo;      /* busy cycles on its slowest server if it were alone */
    uint64_t dma_latency;
    AtlEngineStats st;
    /* cold: the program, planning scratch, faults */
    const AtlInsn *insns;
    const int *lines;
    AtlSimFaultKind bad_kind;
    SimUse *scratch;        /* room for AtlSim.maxuse */
    size_t nplan, capplan;
    uint64_t dma_dense[2];  /* planning scratch: contiguous-element run length of dst, src (elements) */
    int dma_es, dma_esh;    /* element size and its log2 */
    int dma_flat[2];        /* whole dst / src operand contiguous */
    uint64_t dma_bb;        /* burst bytes, whole elements */
    char bad_msg[512];
} SimEngine;

/* An engine's in-flight instruction with LMEM ranges (race.c). */
typedef struct SimInflight {
    const SimPre *pre;      /* its ranges */
    int eid;
} SimInflight;

/* The ranges in-flight instructions write in one shared space, a
 * cluster's SRAM or the DRAM (race.c; the ranges they read there are found
 * in the busy DMA engines' records). Only DMA engines touch these spaces,
 * one instruction in flight each with at most SIM_MAX_RANGES ranges, so
 * 3 per DMA engine that can reach the space is room for all. Unordered: a
 * range leaves in O(1), the last one taking its place (AtlSim.race_pos
 * says where each is). */
typedef struct SimFarRange {
    uint32_t lo, hi;
    int32_t eid;            /* the DMA engine whose instruction it is */
    uint8_t k;              /* its operand (isa_operands) and range (SimPre.r) index */
} SimFarRange;
typedef struct SimRaceSet {
    SimFarRange *w;         /* in AtlSim.race_mem */
    int n;
} SimRaceSet;
/* The operands (with their windows) of a DMA engine's in-flight
 * instruction, computed when its ranges are first compared by geometry. */
typedef struct SimGeo {
    int pc;                 /* the instruction they are of, -1 none */
    int n;
    IsaOperand op[ISA_MAX_OPERANDS];
} SimGeo;

/* Recent signals of one semaphore, for trace flow arrows. */
#define SIM_SIGQ 8
typedef struct SimSigRec { int eid, index; uint64_t start, time; } SimSigRec; /* signalling insn's span */

typedef struct SimCore {
    uint8_t *lmem;
    int32_t sem[ISA_MAX_SEMAPHORES];
    SimServer *banks;
    uint64_t banks_free;    /* no bank is reserved beyond this time */
    int ninfl, capinfl;
    uint8_t sigq_head[ISA_MAX_SEMAPHORES], sigq_n[ISA_MAX_SEMAPHORES];
    /* the in-flight instructions (of the cluster's engines, one each at most)
     * that touch this LMEM, in the order they began (race.c); in place: the
     * count and the first ones share a cache line */
    SimInflight infl[ISA_NUM_ENGINES * CFG_MAX_CORES_PER_CLUSTER];
    SimSigRec sigq[ISA_MAX_SEMAPHORES][SIM_SIGQ]; /* last: only traces use it (4 KiB) */
} SimCore;

/* ---- DMA plan memo (dma_memo.c): burst work by transfer geometry ---- */
typedef struct SimDmaKey {
    uint64_t bytes;
    uint64_t phase[2];      /* dst / src base modulo its space's period (DRAM channels, LMEM banks; SRAM 0) */
    uint32_t shape[4];
    int32_t stride[2][4];   /* dst, src (0 for a fill's missing src) */
    uint8_t op, dtype, space[2];
} SimDmaKey;
typedef struct SimDmaChan { int ch; uint64_t work, bursts; } SimDmaChan;
typedef struct SimDmaMemo {
    SimDmaKey key;
    uint64_t w[3];          /* burst_work's w: dst, src (SRAM/LMEM ends), NoC */
    int nchan[2];           /* DRAM channels with work per end, in the walk's order */
    SimDmaChan chan[];      /* nchan[0] for dst, then nchan[1] for src */
} SimDmaMemo;
typedef struct SimDmaTable {
    SimDmaMemo **slot;      /* open addressing, power-of-two size */
    size_t nslots, count;
} SimDmaTable;

typedef struct SimBarrier {
    int arrived, waiters;   /* waiters: head of engine list, -1 none */
} SimBarrier;

typedef struct SimDdma SimDdma;

struct AtlSim {
    AtlChip chip;
    AtlSimOptions opt;
    int ncores, cpc;
    SimCore *core;
    SimEngine *eng;             /* ncores * ISA_NUM_ENGINES */
    uint8_t *dram;
    uint8_t **sram;             /* per cluster */
    SimServer *servers;         /* every core's LMEM banks, contiguous */
    SimPs *ps;                  /* DMA servers: channels, NoC in, NoC out, SRAM (per cluster), LMEM port (per core),
                                 * cluster links (TIM_NOC_DIRS per cluster, [noc] cluster_links = 1 only) */
    int ps_noc_in, ps_noc_out, ps_sram, ps_port, ps_link, nps; /* first index of each kind in ps, count */
    SimUse *uses;               /* every engine's SimEngine.use, maxuse each */
    int maxuse;
    SimBarrier *bar;            /* (clusters + 1) * 256: cluster slots then chip */
    SimRaceSet *race_far;       /* in-flight writes to shared spaces: each cluster's SRAM, then the DRAM (race.c) */
    SimFarRange *race_mem;      /* room for all of them (3 per DMA engine per space it reaches) */
    int *race_pos;              /* per core * SIM_MAX_RANGES + range: where its DMA's in-flight write is in its set */
    SimGeo *race_geo;           /* per core: its DMA engine's */
    SimEvq q;
    int live_top;               /* the event being handled is still the heap's root */
    uint64_t now, max_cycles;
    uint64_t work_left;         /* host work the run may still do (AtlSimOptions.max_work, counted down) */
    int loaded, running, done_engines;
    AtlSimFault fault;
    AtlSimStats stats;
    const AtlProgram *prog;
    char exec_msg[256];         /* detail of a data fault raised by an exec function */
    int il_shift, bank_shift;   /* log2 of DRAM interleave / LMEM bank width, -1 if not a power of 2 */
    uint64_t *chan_bytes;       /* per DRAM channel, scratch for one burst (all zero between bursts) */
    int *chan_touched;
    uint64_t *chan_work[2];     /* per DRAM channel, work of the transfer's dst / src end (zero between transfers) */
    uint64_t *chan_bursts[2];   /* per DRAM channel, bursts of that end touching it */
    int *chan_list[2], nchan[2];/* channels with work, per end */
    SimDmaTable dma_memo;       /* planned burst work by geometry (dma_memo.c) */
    uint8_t *scratch;           /* per-run scratch for exec (packed operands) */
    size_t scratch_cap;
    SimDdma *dd;                /* the banked DRAM model serving DMA (dram_dma.c); NULL with model = flow */
    SimBuf trace;
    uint64_t *trace_span;       /* tracing: [cluster][layer] first start, last end (UINT64_MAX, 0: none) */
    uint64_t flow_seq;          /* ids of trace flow arrows */
    int trace_first;
};

/* A small function of the per-instruction path, inlined where it is called
 * (it runs once or more per simulated instruction: a call costs as much). */
#define SIM_HOT __attribute__((always_inline)) inline

static inline int sim_eid(int core, int engine) { return core * ISA_NUM_ENGINES + engine; }

/* dma_memo.c: the key of a transfer (bytes: SimPre.bytes); find returns
 * NULL when unknown; add records the walk's result (w and the per-end
 * channel lists in s->chan_*), restore puts a result back there. */
void dma_memo_key(const AtlSim *s, const AtlInsn *in, uint64_t bytes, SimDmaKey *k);
const SimDmaMemo *dma_memo_find(const AtlSim *s, const SimDmaKey *k);
int dma_memo_add(AtlSim *s, const SimDmaKey *k, const uint64_t w[3]);
void dma_memo_restore(AtlSim *s, const SimDmaMemo *m, uint64_t w[3]);
void dma_memo_free(SimDmaTable *t);
/* check.c */
int sim_check_insn(const AtlSim *s, int core, int engine, const AtlInsn *in,
                   SimPre *pre, AtlSimFaultKind *kind, char *msg, size_t cap);
/* fault.c */
void sim_raise(AtlSim *s, AtlSimFaultKind kind, int core, int engine, int index,
               const char *fmt, ...) ATL_PRINTF(6, 7);
void sim_raise_deadlock(AtlSim *s);
/* race.c: race_init allocates the shared-space sets (-1: out of memory),
 * race_reset empties every set, race_begin checks and records an
 * instruction's ranges as it starts (-1: a race, raised), race_end drops
 * them at its completion. */
int race_init(AtlSim *s);
void race_reset(AtlSim *s);
int race_begin(AtlSim *s, int core, int engine, int index, const SimPre *pre);
void race_end(AtlSim *s, int core, int engine, const SimPre *pre);
/* mem.c: LMEM bank reservation for a mat/vec instruction; returns start */
uint64_t mem_lmem_reserve(AtlSim *s, int core, int engine, uint64_t t, const SimPre *pre);
/* mem.c: fills pre->banks and pre->lmem_occ from the ranges (check time) */
void mem_pre_banks(const AtlSim *s, SimPre *pre);
/* mem.c: DMA flows. plan computes (at load) the transfer's work on every
 * server on its path into pre (-1: out of memory; 2: its bursts are not
 * alike and walking them would pass s->work_left, not planned); join puts it on them at
 * time t and returns its projected delivery time; due is that time again
 * (later arrivals can only have delayed it); leave takes it off at time t. */
int mem_dma_plan(AtlSim *s, int core, int engine, const AtlInsn *in, SimPre *pre);
uint64_t mem_dma_join(AtlSim *s, int eid, const SimPre *pre, uint64_t t);
uint64_t mem_dma_due(AtlSim *s, int eid);
void mem_dma_leave(AtlSim *s, int eid, uint64_t t);
void mem_reset(AtlSim *s);
/* mem.c: after every plan of a load, marks the uses of servers only one engine uses (-1: out of memory) */
int mem_dma_mark_exclusive(AtlSim *s);
/* mem.c: byte address of linear element idx of a strided operand; the
 * number of consecutive elements (from a multiple of it) that are contiguous */
uint64_t mem_elem_addr(uint64_t base, const uint32_t shape[4], const int32_t st[4], uint64_t idx);
uint64_t mem_dense_run(const uint32_t shape[4], const int32_t st[4], int es);
/* dram_dma.c: DMA served by the banked DRAM model. create/free/reset the
 * state; start registers core's transfer's DRAM requests at core cycle t
 * (1 if it has some, 0 if it touches no DRAM, -1 out of memory); before
 * says whether a DRAM step comes before core cycle t's events (t =
 * UINT64_MAX: whether any is left); advance takes the steps before t in
 * order, and returns 1 with *core set as soon as one finishes a transfer
 * whose completion check waits for it (0 when none is left before t);
 * check returns 1 if core's transfer's DRAM part is still running
 * (and marks it as waited for), else 0 with *done_at the core cycle its
 * data was done (0 if it has no DRAM part). */
int ddma_create(AtlSim *s, AtlErr *e);
void ddma_free(AtlSim *s);
void ddma_reset(AtlSim *s);
int ddma_start(AtlSim *s, int core, const AtlInsn *in, uint64_t t);
int ddma_before(AtlSim *s, uint64_t t);
int ddma_advance(AtlSim *s, uint64_t t, int *core);
int ddma_check(AtlSim *s, int core, uint64_t *done_at);
uint64_t ddma_done_at(const AtlSim *s, int core);
uint64_t ddma_dram_cycle(const AtlSim *s, uint64_t t);
struct DramStats;
void ddma_stats(const AtlSim *s, struct DramStats *out);
/* memory pointers by space for exec */
uint8_t *mem_space_ptr(AtlSim *s, int core, int space, int lcore);
/* The byte at address addr of a DMA end in space (a peer address names its cluster's SRAM). */
uint8_t *mem_end_ptr(AtlSim *s, int core, int space, uint64_t addr, int lcore);
/* exec_*.c: one handler per instruction format; the per-opcode dispatch
 * table (exec_table.c) is generated from ISA_OPS. A handler returns -1 with
 * s->exec_msg set on a data fault. */
typedef int (*SimExecFn)(AtlSim *s, int core, const AtlInsn *in);
#define FMT(id, fields) int sim_exec_fmt_##id(AtlSim *s, int core, const AtlInsn *in);
#define FLD(f, b)
ISA_FORMATS(FMT, FLD)
#undef FMT
#undef FLD
extern const SimExecFn sim_exec_table[ISA_NUM_OPS];
int sim_scratch(AtlSim *s, size_t bytes);
/* trace.c */
void trace_insn(AtlSim *s, int core, int engine, int index, const AtlInsn *in,
                uint64_t start, uint64_t end);
void trace_flow(AtlSim *s, const SimSigRec *from, int core, int engine, int index, uint64_t t);
void trace_begin(AtlSim *s);
/* report.c */
void stats_finish(AtlSim *s);
#endif
