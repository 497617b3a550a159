/* backend.h - the compiler backend's public API: graph IR (after
 * compiler/passes/passes.h) -> per-core instruction streams, DRAM placement
 * and a batch variant of a net in an .abm writer.
 *
 * Entry point: bk_compile. It reads a canonicalised, shape-inferred graph
 * and a chip, and adds one net with one batch variant (batch = the graph's
 * batch) to an AbmWriter: tensors (inputs/outputs in the io region,
 * constants in the weights region, intermediates in the activations
 * region), streams (one per core and engine, DRAM operands tagged by
 * region as in docs/firmware.md), the weights, the memory plan and
 * metadata. It also fills a BkSummary with per-layer cost-model estimates.
 *
 * The backend has three phases around one data structure, the schedule
 * (compiler/schedule/schedule.h), in folders ranked lowest first (a folder
 * never includes or calls a higher one; test/cli/layering.sh):
 *   target/    the context, the lowered-layer type, instruction builders
 *   legalize/  rewrites of ops the chip runs as other ops; fusion patterns
 *   alloc/     DRAM placement, weights, LMEM slots and resident region
 *   lower/     one op -> one lowered layer: tiles, LMEM layout, a tile
 *              generator (loads / computes / stores kept apart), slice
 *              inference, candidate tile shapes; the op table
 *   schedule/  segments (a layer group on a core set, closed by a barrier
 *              of that set) and each core's time-step table
 *   cost/      replays the tables with isa/timing.h
 *   group/     the tile-shape search judged by the cost model
 *   emit/      the tables -> streams; the .abm records
 *   backend/   the driver (compile.c) and this API
 * docs/backend.md describes the flow with a diagram.
 *
 * DRAM layout of activations: row-major in ONNX's own dimension order
 * (NCHW for images). Convolution and pooling tiles are transposed to HWC by
 * the strided DMA that loads them into LMEM (and back when stored); see
 * docs/backend.md for why.
 */
#ifndef ATOLL_COMPILER_BACKEND_H
#define ATOLL_COMPILER_BACKEND_H
#include <stdint.h>
#include "compiler/ir/ir.h"
#include "isa/config.h"
#include "isa/abm.h"
#include "isa/program.h"
#include "util/err.h"

enum { BK_GROUP_AUTO = 0, BK_GROUP_NONE = 1 };
/* A layer group's weights (docs/backend.md, "Streamed weights"): AUTO
 * resident when they fit, else streamed in chunks, the cost model
 * choosing; RESIDENT never streamed; STREAM every chain that can streams
 * and the group search takes such chains before layers alone (studies,
 * tests). */
enum { BK_GW_AUTO = 0, BK_GW_RESIDENT = 1, BK_GW_STREAM = 2 };
enum { BK_CS_AUTO = 0, BK_CS_NEVER = 1, BK_CS_ONLY = 2 };
enum { BK_SRAM_AUTO = 0, BK_SRAM_NEVER = 1, BK_SRAM_ALWAYS = 2 };
/* Weight prefetch across segment barriers (docs/backend.md, "Weight
 * prefetch across the barrier"): AUTO, where the cost model prices it
 * lower; NEVER, each layer stages its own weights; SPREAD (tests and
 * studies), as AUTO but every boundary whose next layer's multicast
 * weights can be fetched fetches them in pieces spread over the loads of
 * every core of the cluster (BK_PF_SPREAD), whatever they cost. */
enum { BK_PREFETCH_AUTO = 0, BK_PREFETCH_NEVER = 1, BK_PREFETCH_SPREAD = 2 };
/* K split across clusters of channel-reducing 1x1 convolutions with
 * bands (docs/backend.md, "K split across clusters"): AUTO (default)
 * where the cost model prices it lower, NEVER, ALWAYS where it may (tests). */
enum { BK_KBANDS_AUTO = 0, BK_KBANDS_NEVER = 1, BK_KBANDS_ALWAYS = 2 };
/* BkOptions.band_look (docs/backend.md, "The band way over the chain") */
enum { BK_LOOK_AUTO = 0, BK_LOOK_NEVER = 1, BK_LOOK_ALWAYS = 2 };
/* Activations with placement chip (docs/backend.md, "Activations in
 * cluster SRAM"): AUTO, those that fit live in cluster SRAM when every
 * cluster can hold a copy (one cluster, or clusters joined by NoC links),
 * with layer groups on; on a chip whose clusters share only DRAM, bands
 * when the cost model prices them below the DRAM plan (an image of batch
 * 1); NEVER, all in DRAM (the plan before); BANDS, on a chip of several
 * clusters, each cluster's SRAM holds the output cells its cores computed
 * and layers may split their rows or their output channels over the
 * clusters ("Row and channel bands in every cluster"); ROWS, the same
 * with rows only (the plan before channel bands). */
enum { BK_SRAM_ACTS_AUTO = 0, BK_SRAM_ACTS_NEVER = 1, BK_SRAM_ACTS_BANDS = 2, BK_SRAM_ACTS_ROWS = 3 };
/* Where the images of a batch run (docs/backend.md, "Placement over
 * clusters"): CHIP, every layer of the whole batch on every core; SPLIT,
 * the batch cut into instances of micro_batch images, each instance run
 * whole on one cluster (its activations in that cluster's SRAM where they
 * fit), the clusters working on different instances at once; AUTO, split
 * where the graph allows it and the cost model finds it faster. */
/* PIPELINE (chips with cluster links): the network cut into stages, each
 * on its own clusters, instances of micro_batch images streaming through
 * them, each stage's output handed to the next stage's cluster over the
 * NoC (docs/backend.md, "Pipelines over clusters"). */
enum { BK_PLACE_AUTO = 0, BK_PLACE_CHIP = 1, BK_PLACE_SPLIT = 2, BK_PLACE_PIPELINE = 3 };
/* With placement split: STAGED (default) lets the cost model cut the
 * network into stages with their own micro-batch (growing stage by
 * stage); UNIFORM keeps one micro-batch for the whole network. */
enum { BK_SCHED_STAGED = 0, BK_SCHED_UNIFORM = 1 };

/* BkOptions.sram_pair */
enum { BK_PAIR_AUTO = 0, BK_PAIR_ALWAYS = 1, BK_PAIR_NEVER = 2 };
/* BkOptions.bytes_slack's default, percent */
enum { BK_BYTES_SLACK = 10 };

typedef struct BkOptions {
    int dtype;              /* storage/compute dtype: ISA_F32 (default), ISA_F16, ISA_BF16 */
    const char *net_name;   /* NULL: the graph's name (or "net") */
    const char *options_text; /* recorded in the .abm metadata (NULL: "") */
    const uint8_t *source_hash; /* ABM_HASH_BYTES of the source model, NULL: zeros */
    int group;              /* BK_GROUP_AUTO (default): layer groups where the cost model
                               finds them cheaper (a residual Add in its convolution's
                               epilogue, ...); BK_GROUP_NONE: every layer on its own */
    int group_weights;      /* BK_GW_AUTO (default), BK_GW_RESIDENT, BK_GW_STREAM */
    int group_cslice;       /* C slices of inverted residual blocks (lower/chain.c):
                               BK_CS_AUTO (default) where the cost model prefers them,
                               BK_CS_NEVER, BK_CS_ONLY (studies, tests: every block that
                               can takes them, before layers alone) */
    int group_max;          /* at most this many layers in a group (0: as many as the
                               group kind allows; 1: layers stay apart, but fusions such
                               as a residual Add in its convolution's epilogue are made) */
    int keep_activations;   /* 1 (implies group none): no reuse of activation memory, so every
                               activation listed in the .abm still holds its
                               value after the run (per-tensor comparison) */
    int sram_input;         /* convolution inputs copied to cluster SRAM (docs/backend.md):
                               BK_SRAM_AUTO (default) where the cost model finds it cheaper;
                               BK_SRAM_NEVER; BK_SRAM_ALWAYS for every layer that may (tests,
                               studies); only with grouping on */
    int sram_weights;       /* conv weight chunks staged in cluster SRAM, read once per cluster
                               (docs/backend.md, "Weights in cluster SRAM"): BK_SRAM_AUTO
                               (default), BK_SRAM_NEVER, BK_SRAM_ALWAYS (tests); as sram_input */
    int sram_pair;          /* convolutions may stage both their input and their weights in
                               cluster SRAM (docs/backend.md, "Input and weights both in cluster
                               SRAM"): BK_PAIR_AUTO (default) offered on chips with the
                               semaphore it needs, the frugal rebuild of a small plan built
                               without it and the plan choice weighing bytes (bytes_slack);
                               BK_PAIR_ALWAYS (--sram-pair) offered in every build;
                               BK_PAIR_NEVER one or the other only; both sram_input and
                               sram_weights BK_SRAM_ALWAYS force the pair */
    int bytes_slack;        /* whole-plan choices between the plans built for the same
                               activation placement (docs/backend.md, "Plans weighed by their
                               bytes"): the fastest whose estimated DRAM bytes are within this
                               many percent of the fewest or 1.5x the compulsory bytes; 0:
                               BK_BYTES_SLACK (10); < 0: the fastest */
    int sram_acts;          /* BK_SRAM_ACTS_AUTO (default), _NEVER or _BANDS */
    int stage_copy;         /* a staged split stage after the first reads its boundary
                               through a copy in cluster SRAM (docs/backend.md, "Staged
                               schedules"): BK_SRAM_AUTO (default) where the cost model finds
                               it cheaper, BK_SRAM_NEVER, BK_SRAM_ALWAYS (tests) */
    int stage_sram;         /* a staged boundary between two split stages on the same
                               clusters kept in each cluster's SRAM, where the producer
                               writes it and the consumer reads it (docs/backend.md,
                               "Boundaries in SRAM"): BK_SRAM_AUTO (default) where the cost
                               model finds it cheaper, BK_SRAM_NEVER, BK_SRAM_ALWAYS where
                               it fits (tests) */
    int band_price[2];      /* with bands, the tile search's price of a weight copy beyond one
                               on the chip and of a re-layout byte, in multiples of their DRAM
                               time (0: 1, and a small plan is also built at a higher price and
                               the cheaper kept: docs/backend.md, "A higher price of a
                               byte"); for tests and studies */
    int prefetch;           /* BK_PREFETCH_AUTO (default), NEVER or SPREAD */
    int kbands;             /* BK_KBANDS_AUTO (default), _NEVER or _ALWAYS */
    int dw_matrix;          /* 1: depthwise convs (float, int8, group members) only on the
                               matrix unit (0, default: each tile shape and group plan also
                               on the vector unit, lower/dwvec.c; the cost model picks) */
    int band_look;          /* with bands, a layer's band way judged with its consumer's price:
                               BK_LOOK_AUTO (default) on graphs of more than 40 layers,
                               BK_LOOK_NEVER, BK_LOOK_ALWAYS (tests) */
    int band_near;          /* bands: 0 (default) the tile search guesses which output
                               cells go to DRAM from how far the consumers' windows reach
                               (BkBand.near); N > 0: every tensor's reach is N rows, the
                               guess of before at BK_BAND_NEAR (tests) */
    int no_shards;          /* bands: 1 keeps every image tensor's planes whole in each
                               cluster's window (no channel shards, BkBand.shard); 0
                               (default) placement may shard a large tensor of several
                               images by channels */
    int no_chain_pack;      /* groups: 1 gives every row buffer of a chain its own bytes;
                               0 (default) buffers never live at once may share bytes
                               where that lets taller slices fit (lower/chain.c) */
    int no_reorder;         /* staged: 1 keeps a split stage's graph as it is; 0 (default)
                               strided pointwise convolutions may read a subsampled copy and
                               shortcut convolutions run late where the cost model prices the
                               stage lower (docs/backend.md, "Shortcuts run late";
                               --no-reorder) */
    int no_overlay;         /* staged: 1 never lets a pointwise convolution write its output
                               over its dying input (to compare; no CLI flag, --no-reorder
                               also stops it); 0 (default): where the cost model prices the
                               stage lower (docs/backend.md, "Outputs over dying inputs") */
    int no_chip_reprice;    /* staged search: 1 prices a chip stage with the whole graph's
                               DRAM plan only (to compare; no CLI flag); 0 (default): the chosen chip stage,
                               from one cut earlier on, is priced again as it will be built
                               (bands, shards) and the plan searched again */
    int placement;          /* BK_PLACE_AUTO (default), BK_PLACE_CHIP, BK_PLACE_SPLIT */
    int micro_batch;        /* images per instance with placement split (0: chosen by the
                               cost model; given: one micro-batch, no stages) */
    int schedule;           /* BK_SCHED_STAGED (default) or BK_SCHED_UNIFORM */
    int no_halo_stage;      /* 1: a row-banded conv never stages its halo rows (docs/backend.md,
                               "Halo staging of row bands"; --no-halo-staging, tests); 0
                               (default): offered where the input may be staged */
    int tile_images;        /* 0 (default): the cost model chooses how many images a
                               pointwise conv's tile covers; n > 0: exactly min(n, N)
                               where such a tile fits (tests, studies; lower/conv.c) */
    const char *stage_plan; /* NULL: the cost model's; else the stages themselves (implies
                               placement split): "M0,TENSOR1:M1,...", stage 0 in instances
                               of M0 images, stage i from the cut where TENSOR_i is the only
                               tensor crossing, in instances of M_i (growing) */
    struct BkFlowPool *pricers; /* set by bk_compile (NULL from callers): the DMA pricers its
                               builds share (cost/pool.c) */
} BkOptions;

/* One row per lowered layer, in execution order. */
typedef struct BkLayerInfo {
    char name[128];         /* the IR node's name */
    char op[32];            /* the IR node's op */
    int layer_id;           /* the `layer` tag of its instructions (sim per-layer stats) */
    int tiles;              /* tiles its output was cut into */
    int cores;              /* cores that got at least one tile */
    char split[32];         /* how the output was sliced, e.g. "N1 C2 H4" */
    uint64_t macs;          /* useful multiply-accumulates */
    uint64_t run_macs;      /* those its matrix-unit instructions execute: more than macs in a
                               layer group, whose slices recompute the rows their halos need;
                               0 for a depthwise conv on the vector unit (lower/dwvec.c) */
    uint64_t mat_cycles;    /* matrix-unit cycles its useful MACs need at the peak of their dtype
                               on one core: macs x rate / (rows x cols) (0 without MACs) */
    uint64_t est_cycles;    /* cost model: first load to last store, plus the barrier */
    uint64_t est_compute;   /* max over cores of the busiest compute engine */
    uint64_t est_dma;       /* max over cores of DMA busy cycles */
    uint64_t est_rd, est_wr; /* cost model: bytes its DMAs read from / write to DRAM */
    int is_matrix;          /* 1 for conv / matmul layers */
    int core_first, core_count; /* the core set it runs on (chip-wide ids) */
    uint64_t dram_rd, dram_wr;  /* bytes its instructions read from / write to DRAM */
    uint64_t lmem_peak;     /* highest LMEM byte any of its instructions touches, on any core */
    int nmembers;           /* layers it runs: more than 1 for a layer group */
    char *members;          /* each member's node name and op, one per line (malloc'd; bk_summary_free) */
} BkLayerInfo;

/* Backend phases timed in BkSummary.phase_s (wall seconds, summed over
 * calls into the same phase). */
typedef enum {
    BK_PHASE_ADDRESS,       /* pattern matching + DRAM placement (alloc/place.c) */
    BK_PHASE_LOWER,         /* lowering + tile-shape search, priced by the cost model */
    BK_PHASE_GROUP,         /* layer group formation (group/form.c), priced by the cost model */
    BK_PHASE_COST,          /* pricing the schedule's segments for the summary */
    BK_PHASE_EMIT,          /* stream emission, encoding, .abm records */
    BK_NPHASES
} BkPhase;
extern const char *const bk_phase_names[BK_NPHASES];

typedef struct BkSummary {
    double phase_s[BK_NPHASES];
    int nlayers;
    BkLayerInfo *layers;    /* malloc'd; bk_summary_free */
    uint64_t est_cycles;    /* sum over layers */
    uint64_t weight_bytes;  /* weights region (after dedup) */
    uint64_t act_peak;      /* activations region (liveness packed) */
    uint64_t act_sum;       /* sum of all activation tensors (no reuse) */
    uint64_t io_bytes;      /* io region */
    uint64_t insns;         /* instructions over all streams */
    int batch;
    int cores;
    /* placement over clusters: split = 1 when the batch was cut into
       `instances` instances of `micro_batch` images, run on `clusters`
       clusters at once (layers[] then describes one instance on the first
       cluster's cores, est_cycles the busiest cluster); act_sram: activation
       bytes each cluster keeps in its SRAM instead of DRAM (placement chip:
       sram_copies > 0 clusters each hold a copy of these) */
    int split, instances, micro_batch, clusters;
    uint64_t act_sram;
    int sram_copies;
    int sram_bands;         /* row bands over this many clusters (--sram-activations bands, or
                               auto's choice), 0 none */
    char sram_why[160];     /* --sram-activations auto on a chip whose clusters share only
                               DRAM: the cost model's two prices ("" when not tried) */
    int act_dram_tensors;   /* intermediate tensors that live in DRAM (not in LMEM
                               inside a group, not in SRAM) */
    /* staged: nstages > 1 stages; stage i runs in instances of stage_m[i]
       images, its rows start at layers[stage_row[i]], its boundary tensor
       (the one it reads, i > 0) is named stage_in[i] */
    int nstages;
    int stage_m[8], stage_row[8];
    int stage_chip[8];      /* 1: the stage runs as placement chip (one instance of the
                               whole batch, stage_m[i], on every core) */
    char stage_in[8][64];
    int stage_in_sram[8];   /* 1: stage i reads its boundary from its clusters' SRAM, where
                               the stage before left it (not from DRAM) */
    uint64_t stage_sram[8]; /* activation bytes a cluster keeps in SRAM in that stage */
    int stage_dram_tensors[8];  /* its intermediate tensors in DRAM (per instance) */
    int stage_cores[8];     /* cores that run the stage */
    uint64_t stage_est[8];  /* the cost model's cycles of the stage (busiest cluster; placement
                               pipeline: of one instance) */
    uint64_t stage_macs[8], stage_mat_cycles[8]; /* useful MACs and their matrix-unit cycles
                               (BkLayerInfo.mat_cycles), whole batch */
    char placement_why[160]; /* with placement auto: why it chose as it did */
    /* placement pipeline (pipeline = 1, split = 1 too): stage i runs on
       clusters stage_first_cluster[i] .. + stage_clusters[i] - 1, reads its
       input boundary from stage_slots[i] buffers in their SRAM, and costs
       stage_est[i] cycles per instance; est_cycles is the pipeline's */
    int pipeline;
    int stage_first_cluster[8], stage_clusters[8], stage_slots[8];
} BkSummary;

void bk_options_default(BkOptions *o);
void bk_summary_free(BkSummary *s);

/* Compiles g (canonicalised by pass_run_all, shapes known) for chip into a
 * new variant of w: of the net named opt->net_name (or the graph's name),
 * created if w does not have it yet, so compiling the same model at several
 * batch sizes into one writer gives one net with a variant per batch size
 * (weights shared by deduplication). sum may be NULL. Errors name the node
 * and its op. Every activation tensor (not fused away) is listed in the
 * variant with role activation, so tools can read it after a run; with
 * memory reuse (the default) a tensor's bytes may have been overwritten by
 * a later one, use keep_activations for comparisons. */
int bk_compile(const IrGraph *g, const AtlChip *chip, const BkOptions *opt,
               AbmWriter *w, BkSummary *sum, AtlErr *e);

#endif
