/* backend.h - the compiler backend: graph IR (after compiler/passes.h) ->
 * per-core instruction streams, DRAM placement and an .abm stage.
 *
 * Entry point: bk_compile. It reads a canonicalised, shape-inferred graph
 * and a chip, and adds one net with one stage (batch = the graph's batch)
 * to an AbmWriter: tensors (inputs/outputs in the io region, constants in
 * the weights region, intermediates in the activations region), streams
 * (one per core and engine, DRAM operands tagged by region as in
 * docs/firmware.md), the weights, the memory plan and metadata. It also
 * fills a BkSummary with per-layer cost-model estimates.
 *
 * Pipeline (one file per job, see each file's header):
 *   bk_place.c   DRAM placement: constants -> weights (deduplicated by the
 *                abm writer), activations by liveness (compiler/memplan.h,
 *                views share storage), graph inputs/outputs -> io region.
 *   bk_rewrite_convt.c ConvTranspose -> spread input (Reshape/Pad) + Conv,
 *                on a private copy of the graph (ir_clone.c) before the rest.
 *   bk_dtype.c   the storage dtype of each tensor on the chip (floats in
 *                the --dtype, integers and bools as i8/i16/i32) and which
 *                ops are lowered on integers (docs/backend.md, Data types).
 *   bk_lower_*.c lowering of each op to a group schedule (bk_int.h): the
 *                tiles of its output, the LMEM buffers of one tile and a
 *                generator of each tile's loads, computes and stores.
 *   bk_elem_prog.c the table of elementwise register programs built from
 *                the rounding / compare / select / trig vector ops.
 *   bk_tile.c    the LMEM tile planner (slot layout, alignment, banks) and
 *                the choice of tile shape by the cost model.
 *   bk_resident.c the group-resident LMEM region below the slots (multicast
 *                weights, K-split and loss accumulators).
 *   bk_cost.c    the cost model (isa/timing.h formulas per instruction,
 *                3-stage pipeline time-step table per core).
 *   bk_flow.c    the cost model's DMA pricing: work per DRAM channel, NoC
 *                link and DMA port of one DMA (fast walk, exact memo).
 *   bk_emit.c    the pipeline emitter: tiles -> per-core DMA/MAT/VEC streams
 *                with double-buffered LMEM and semaphores; layer barriers.
 *   bk_compile.c the driver and the .abm output.
 *   bk_load.c    .abm stage -> AtlProgram with relocated DRAM addresses, to
 *                run a compiled model on the simulator without firmware.
 * docs/backend.md describes lowering, tiling, the group schedule, address
 * assignment, the sync scheme and codegen.
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

typedef struct BkOptions {
    int dtype;              /* storage/compute dtype: ISA_F32 (default), ISA_F16, ISA_BF16 */
    const char *net_name;   /* NULL: the graph's name (or "net") */
    const char *options_text; /* recorded in the .abm metadata (NULL: "") */
    const uint8_t *source_hash; /* ABM_HASH_BYTES of the source model, NULL: zeros */
    int keep_activations;   /* 1: no reuse of activation memory, so every
                               activation listed in the .abm still holds its
                               value after the run (per-tensor comparison) */
} BkOptions;

/* One row per lowered layer (group), in execution order. */
typedef struct BkLayerInfo {
    char name[128];         /* the IR node's name */
    char op[32];            /* the IR node's op */
    int layer_id;           /* the `layer` tag of its instructions (sim per-layer stats) */
    int tiles;              /* tiles of its group schedule */
    int cores;              /* cores that got at least one tile */
    char split[32];         /* how the output was sliced, e.g. "N1 C2 H4" */
    uint64_t macs;          /* useful multiply-accumulates */
    uint64_t est_cycles;    /* cost model: first load to last store, plus the barrier */
    uint64_t est_compute;   /* max over cores of the busiest compute engine */
    uint64_t est_dma;       /* max over cores of DMA busy cycles */
    int is_matrix;          /* 1 for conv / matmul layers */
} BkLayerInfo;

/* Backend phases timed in BkSummary.phase_s (wall seconds, summed over
 * calls into the same phase). */
typedef enum {
    BK_PHASE_ADDRESS,       /* pattern matching + DRAM placement (bk_place.c) */
    BK_PHASE_LOWER,         /* lowering + tile-shape search, priced by the cost model */
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
} BkSummary;

void bk_options_default(BkOptions *o);
void bk_summary_free(BkSummary *s);

/* Compiles g (canonicalised by pass_run_all, shapes known) for chip into a
 * new stage of w: of the net named opt->net_name (or the graph's name),
 * created if w does not have it yet, so compiling the same model at several
 * batch sizes into one writer gives one net with a stage per batch size
 * (weights shared by deduplication). sum may be NULL. Errors name the node
 * and its op. Every activation tensor (not fused away) is listed in the
 * stage with role activation, so tools can read it after a run; with
 * memory reuse (the default) a tensor's bytes may have been overwritten by
 * a later one, use keep_activations for comparisons. */
int bk_compile(const IrGraph *g, const AtlChip *chip, const BkOptions *opt,
               AbmWriter *w, BkSummary *sum, AtlErr *e);

#endif
