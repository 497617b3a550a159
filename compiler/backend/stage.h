/* stage.h - what the backend's drivers share inside compiler/backend/: one
 * compiled graph before emission (a whole model, or one stage of a staged
 * or pipelined schedule) and the steps compile.c builds it with, so that
 * pipeline.c compiles its stages as compile.c compiles a split graph.
 * Internal to the backend folder (backend.h is the API). */
#ifndef ATOLL_COMPILER_BACKEND_STAGE_H
#define ATOLL_COMPILER_BACKEND_STAGE_H
#include "compiler/backend/backend.h"
#include "compiler/backend/staged.h"
#include "compiler/emit/emit.h"

/* Placement split's parameters (NULL: placement chip): the batch, its
 * instances and the clusters that run them at once (each its own copy of
 * the DRAM activation region, each seeing 1/clusters of the DRAM
 * bandwidth). Placement pipeline adds where the stage graph's io tensors
 * live in the running cluster's SRAM (io_sram, by tensor: offset + 1; 0
 * none, NULL no such tensor) and the SRAM its activations may take
 * (sram_cap; 0: all of it). */
typedef struct BkSplit {
    int batch, instances, clusters;
    const uint64_t *io_sram;
    uint64_t sram_cap;
} BkSplit;

/* One compiled graph before emission. Owns its context's arrays, layers
 * and schedule; c.chip may point at `shared`, so a BkStage does not move
 * once built. */
typedef struct BkStage {
    BkCtx c;
    AtlChip shared;   /* placement split: the chip as each cluster's cost model sees it */
    BkLayer *layers, *chains;
    int nlayers, nunits;
    BkSchedule sched;
    double phase[BK_NPHASES];
    int flow_borrowed;   /* c.flow is another stage's (free leaves it) */
    /* a staged split stage's boundaries in its cluster's SRAM (compile.c,
     * sram_boundary): the instance's code has boundary k at SRAM
     * [sram_at[k], + sram_inst[k]); an instance moves it by sram_inst[k]
     * for each instance its cluster ran before it (BkEmit.smove). Set by
     * the driver after the build. */
    uint64_t sram_at[2], sram_inst[2];
    int nsram;
} BkStage;

/* compile.c's steps, handed to pipeline.c by compile.c (which calls
 * pipeline.c; pipeline.c calling compile.c back by name would make the two
 * depend on each other in a circle, test/cli/layering.sh): build builds
 * st from g (context, placement with io where io_fixed says if not NULL,
 * lowering, schedule with layer ids from layer_base, the cost of the first
 * instance's segments); free frees it; fill_summary fills sum's rows
 * (rows of them) from a built and emitted stage; check_options checks the
 * options against the chip; estimate gives the cost model's cycles of g
 * compiled with sp (NULL: chip), and each unit's cost into uc when not
 * NULL. */
typedef struct BkStageOps {
    int (*build)(BkStage *st, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkSplit *sp, AbmWriter *w,
                 const uint64_t *io_fixed, uint64_t io_fixed_bytes, int layer_base, AtlErr *e);
    void (*free)(BkStage *st);
    int (*fill_summary)(const BkStage *st, int rows, const BkEmit *x, int batch, BkSummary *sum, AtlErr *e);
    int (*check_options)(const AtlChip *chip, const BkOptions *opt, AtlErr *e);
    int (*estimate)(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkSplit *sp, uint64_t *cycles,
                    BkStageCosts *uc, AtlErr *e);
} BkStageOps;

/* The stages of a staged or pipelined variant, built and emitted: st[0..n)
 * in stage order, stage i with m[i] images per instance (placement chip:
 * the whole batch) reading bound[i] (i > 0) from the stage before; the
 * variant's io tensors (inputs, outputs, whole batch) at io_fixed (by
 * tensor: offset + 1) in an io region of io_bytes, an activation region
 * of act_bytes (every stage's, every cluster's copy). */
typedef struct BkStages {
    BkStage *st;
    int n, batch;
    const int *m, *bound;
    const uint64_t *io_fixed;
    uint64_t io_bytes, act_bytes;
} BkStages;

/* variant.c: the io layout of a schedule in stages: g's inputs, outputs,
 * then the tensors bound[0..nbound) (the stage boundaries a staged
 * schedule passes through DRAM), whole batch each, 64-byte aligned, into
 * io_fixed (by tensor: offset + 1; zeroed by the caller); returns the io
 * region's bytes. */
uint64_t bk_stages_io(const IrGraph *g, const BkOptions *opt, const int *bound, int nbound, uint64_t *io_fixed);
/* variant.c: the streams in emit (every stage's, finished) into a new
 * variant of g in the writer the stages were built with (*variant its
 * index), and, when sum is not NULL, its layer rows (each stage's first
 * instance), the per-stage figures every schedule in stages has, the
 * weights, activations, io and instruction figures; the caller adds its
 * cycles and the cores or clusters of each stage. */
int bk_stages_variant(const BkStageOps *ops, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkStages *s,
                      BkEmit *emit, uint32_t *variant, BkSummary *sum, AtlErr *e);

/* pipeline.c: placement pipeline (docs/backend.md, "Pipelines over
 * clusters"). bk_pipeline_plan searches the stages (cuts of g), the
 * clusters of each and prices the pipeline at micro-batch m: 0 with
 * *plan, 1 with why[] when g cannot be pipelined on chip, -1 on an error.
 * bk_compile_pipeline compiles g by plan into w. */
typedef struct BkPipePlan {
    int n, m;                          /* stages, images per instance (all stages) */
    int start[BK_MAX_STAGES + 1];      /* stage s runs nodes start[s] .. start[s+1]-1 */
    int first[BK_MAX_STAGES];          /* its clusters: first[s] .. first[s]+clusters[s]-1 */
    int clusters[BK_MAX_STAGES];
    int slots[BK_MAX_STAGES];          /* buffers of its input boundary in each of its clusters' SRAM (1 or 2; stage 0: 0) */
    int reversed[BK_MAX_STAGES];       /* its clusters taken last first (instance j on first + clusters - 1 - j mod clusters) */
    uint64_t stage_est[BK_MAX_STAGES]; /* the cost model's cycles of one instance of it */
    uint64_t est;                      /* the pipeline's: fill plus the slowest stage's steady state */
} BkPipePlan;
int bk_pipeline_plan(const BkStageOps *ops, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, int m, BkPipePlan *plan,
                     char *why, size_t cap, AtlErr *e);
int bk_compile_pipeline(const BkStageOps *ops, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, const BkPipePlan *plan,
                        AbmWriter *w, BkSummary *sum, AtlErr *e);
/* bk_compile's placement pipeline: when forced (--placement pipeline) the
 * plan at --micro-batch (default 1) is compiled or refused (-1, the
 * message says why); with auto it is compiled (0) when the cost model
 * prices it below both chip_est and split_est (UINT64_MAX: not priced;
 * chip is priced here then), else 1 and why[] gets the pipeline's price
 * (or why there is none) appended. */
int bk_pipeline_choose(const BkStageOps *ops, const IrGraph *g, const AtlChip *chip, const BkOptions *opt, int forced,
                       uint64_t chip_est, uint64_t split_est, AbmWriter *w, BkSummary *sum, char *why, size_t cap, AtlErr *e);
#endif
