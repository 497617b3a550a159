/* sim.h - the public interface of the Atoll chip simulator.
 *
 * An AtlSim holds the whole simulated chip (memories, engines, semaphores,
 * barriers, shared-resource servers) for one AtlChip. Load a program, run
 * it, then read the stats, the report, the trace and DRAM. A run that hits
 * a fault (illegal instruction, out-of-bounds or misaligned access,
 * deadlock, data race, missing end, max cycles) returns -1 with the fault
 * described in sim_fault() and in the AtlErr. See docs/simulator.md.
 *
 * Ownership: sim_create allocates, sim_free releases everything. The
 * program passed to sim_load must outlive the run (streams are referenced,
 * not copied). Strings returned by sim_report_text/sim_stats_json/
 * sim_trace_json are malloc'd; the caller frees them.
 */
#ifndef ATOLL_SIM_SIM_H
#define ATOLL_SIM_SIM_H
#include <stdint.h>
#include <stddef.h>
#include "isa/isa.h"
#include "isa/config.h"
#include "isa/program.h"
#include "util/err.h"

typedef enum {
    SIM_MODE_FULL,       /* timing and arithmetic */
    SIM_MODE_TIMING,     /* timing only: no arithmetic, memories untouched */
    SIM_MODE_FUNCTIONAL  /* arithmetic only: zero-latency instructions in program order */
} AtlSimMode;

typedef struct AtlSimOptions {
    AtlSimMode mode;
    uint64_t max_cycles;   /* stop with a fault when simulated time passes this; 0 = 1e12 */
    uint64_t max_work;     /* stop with a fault before the host work of a run (elements moved,
                            * computed or planned) would pass this; 0 = atl_limit(ATL_LIMIT_SIM_WORK) */
    int trace;             /* record a Chrome trace (sim_trace_json) */
} AtlSimOptions;

#define SIM_FAULTS(X) \
    X(NONE,       "none") \
    X(ILLEGAL,    "illegal instruction") \
    X(OOB,        "out-of-bounds access") \
    X(MISALIGNED, "misaligned access") \
    X(DEADLOCK,   "deadlock") \
    X(RACE,       "data race") \
    X(NO_END,     "missing end") \
    X(MAX_CYCLES, "max cycles exceeded") \
    X(DATA,       "invalid operand data") \
    X(WORK,       "host work limit exceeded")
typedef enum {
#define X(id, name) SIM_FAULT_##id,
    SIM_FAULTS(X)
#undef X
    SIM_NUM_FAULTS
} AtlSimFaultKind;

typedef struct AtlSimFault {
    AtlSimFaultKind kind;
    int core, engine, index;   /* -1 when not tied to one instruction */
    uint64_t time;
    char disasm[256];
    char msg[768];             /* full one-paragraph description */
} AtlSimFault;

typedef struct AtlEngineStats {
    uint64_t insns;
    uint64_t busy;                        /* cycles executing instructions */
    uint64_t stall_sem, stall_bar, stall_res;
} AtlEngineStats;

typedef struct AtlLayerStats {
    int used;
    uint64_t first, last;                 /* first start, last completion */
    uint64_t insns, macs, dma_bytes;
    uint64_t dram_bytes;                  /* DMA bytes read from or written to DRAM */
    uint64_t busy[ISA_NUM_ENGINES];
    uint64_t stall_sync;
    const char *bound;                    /* "compute", "dma" or "sync" */
    /* core-cycles the layer held: each engine's time from its previous
     * instruction's completion to the completion of this layer's is the
     * layer's (waits included); summed over cores per engine kind, `held`
     * the largest kind's sum. Segments closed by barriers give every kind
     * the same sum, and each core's run is split among its layers, so the
     * layers' `held` add up to the run's core-cycles whatever overlaps. */
    uint64_t held_by[ISA_NUM_ENGINES], held;
    /* a layer's span (last - first); a layer group member's share of its
     * group's span, in proportion to the busy cycles of its instructions
     * (all engine kinds): the members' add up to the group's */
    uint64_t cycles;
} AtlLayerStats;

/* Byte counters by memory level and direction. */
typedef struct AtlSimBytes {
    uint64_t dram_rd, dram_wr, sram_rd, sram_wr, lmem_rd, lmem_wr, noc;
    uint64_t peer;          /* bytes copied between clusters over the cluster links (a peer DMA end) */
    uint64_t peer_link;     /* those bytes times the links each crossed */
} AtlSimBytes;

/* The banked DRAM model's counters (model = banked; zero with flow). */
typedef struct AtlSimDram {
    int banked;
    uint64_t reads, writes;               /* requests of access_bytes served */
    uint64_t row_hits, row_misses, row_conflicts;
    uint64_t acts, pres, refs;            /* commands */
    double read_latency;                  /* average, DRAM cycles from queueing to data */
} AtlSimDram;

typedef struct AtlSimEnergy {             /* picojoules */
    double mac, vec, lmem, sram, noc, dram, stat, total;
} AtlSimEnergy;

/* Busy cycles of each engine kind over time, summed over cores, in
 * SIM_TIMELINE_BUCKETS buckets of bucket_cycles each; the width starts at
 * 64 cycles and doubles (neighbouring buckets merged) whenever the run
 * outgrows the buckets, so any run ends with at most that many. An
 * instruction's busy span is split over the buckets it overlaps. */
#define SIM_TIMELINE_BUCKETS 256
typedef struct AtlSimTimeline {
    uint64_t bucket_cycles;               /* 0 until the first instruction */
    uint64_t busy[ISA_NUM_ENGINES][SIM_TIMELINE_BUCKETS];
} AtlSimTimeline;

typedef struct AtlSimStats {
    uint64_t cycles;                      /* completion time of the last instruction */
    double seconds;
    uint64_t insns, events;
    int ncores;
    AtlEngineStats *engine;               /* [core * ISA_NUM_ENGINES + engine] */
    AtlEngineStats total[ISA_NUM_ENGINES];
    uint64_t macs, macs_by_dtype[ISA_NUM_DTYPES];
    double mm_util;                       /* macs / (cycles * R * C * cores) */
    uint64_t vec_elems;
    AtlSimBytes bytes;
    AtlSimDram dram;
    AtlSimEnergy energy;
    AtlLayerStats *layers;                /* [layer id], nlayers entries */
    int nlayers;
    /* the members of layer groups (isa_member_tag): [layer id *
     * ISA_MAX_MEMBERS + member]; NULL when no instruction has a member tag */
    AtlLayerStats *members;
    AtlSimTimeline timeline;
} AtlSimStats;

typedef struct AtlSim AtlSim;

void sim_options_default(AtlSimOptions *o);
/* Builds the chip state. Returns NULL (with e set) on a bad config or no memory. */
AtlSim *sim_create(const AtlChip *chip, const AtlSimOptions *opt, AtlErr *e);
void sim_free(AtlSim *s);
/* Resets state, checks every instruction (bad ones fault when reached),
 * preloads the program's DRAM segments. Fails if the program has more cores
 * than the chip or a segment does not fit DRAM. Cores beyond the program's
 * and empty streams count as ended; a non-empty stream must end with `end`. */
int sim_load(AtlSim *s, const AtlProgram *p, AtlErr *e);
/* Runs to completion. 0 = every engine reached `end`; -1 = fault (or load
 * not done), message in e and sim_fault(). */
int sim_run(AtlSim *s, AtlErr *e);

const AtlSimFault *sim_fault(const AtlSim *s);
const AtlSimStats *sim_stats(const AtlSim *s);
const char *sim_fault_name(AtlSimFaultKind k);

/* Direct memory access for loaders and tests. Return NULL if [addr,
 * addr+size) is outside the space. */
uint8_t *sim_dram(AtlSim *s, uint64_t addr, uint64_t size);
uint8_t *sim_sram(AtlSim *s, int cluster, uint64_t addr, uint64_t size);
uint8_t *sim_lmem(AtlSim *s, int core, uint64_t addr, uint64_t size);

/* Compares every `.expect` region of p with DRAM. Returns the number of
 * mismatching regions (0 = all pass) and appends one line per region to
 * *report (malloc'd; caller frees; may be NULL). */
int sim_check_expect(AtlSim *s, const AtlProgram *p, char **report);

/* Human-readable report, stats JSON (schema in docs/simulator.md), Chrome
 * trace JSON (only when opt.trace was set; else an empty trace). NULL on
 * out-of-memory. Deterministic: identical runs give identical bytes. */
char *sim_report_text(const AtlSim *s);
char *sim_stats_json(const AtlSim *s);
char *sim_trace_json(const AtlSim *s);
/* A named range of layer ids (a stage of a staged schedule) for the trace. */
typedef struct AtlSimLayerRange {
    uint32_t first, count;     /* layer ids first .. first + count - 1 */
    const char *name;          /* the slices' name ("stage 1 (mb 2)") */
} AtlSimLayerRange;
/* sim_trace_json plus, for each cluster that ran layers of a range, one
 * slice from their first start to their last completion on that cluster:
 * a process "cluster K: stages" (pid = cores + K) with a thread per range,
 * so stages running at once on different clusters show side by side. */
char *sim_trace_json_ranges(const AtlSim *s, const AtlSimLayerRange *r, int n);
/* Per-layer table as CSV (header line first; one row per layer id used). */
char *sim_layers_csv(const AtlSim *s);
/* Member `member` (0..ISA_MAX_MEMBERS-1) of layer group `layer` after a
 * run: its figures (cycles: its share of the group's span), NULL when no
 * instruction counted for it. */
const AtlLayerStats *sim_member_stats(const AtlSimStats *st, int layer, int member);

/* Host memory needed to simulate a chip (sim/host_cost.c): `upfront` is
 * what sim_create commits before any program runs (per-core state and the
 * simulated memories under 256 KiB); `lazy` the simulated memories of 256 KiB
 * or more, which take host memory only where a run touches them. */
typedef struct AtlSimHostCost {
    uint64_t upfront, lazy;
} AtlSimHostCost;
void sim_host_cost(const AtlChip *chip, AtlSimHostCost *c);
/* Host bytes per instruction of a loaded program (its predecoded form, the
 * instruction, about one DMA plan entry). */
size_t sim_insn_host_bytes(void);

/* One-line text of an instruction (the disassembler's syntax). */
int sim_disasm(const AtlInsn *in, char *buf, size_t cap);
#endif
