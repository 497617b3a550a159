/* driver.h - what `atoll compile` does, as a library function: an ONNX file
 * to variants of an .abm for a chip. The compiler's top folder: it uses the
 * front end and the backend (test/cli/layering.sh ranks it above both).
 *
 * The model is imported once (synthetic weights when asked), then for each
 * batch size: its input shapes are fixed (given shapes, the batch in
 * dimension 0 of every input, 1 where the model leaves it open; a
 * dimension the model fixed may be changed, compiler/infer.h), shapes are
 * inferred, the canonicalisation passes run, and the backend adds a variant
 * to the writer. With layer_info the backend's per-layer rows (name, op,
 * split, the cost model's estimate) go into the .abm's optional layers
 * section, for `atoll run --profile`. Used by tools/cmd_compile.c and by
 * the public atl_compile (include/atoll.h).
 */
#ifndef ATOLL_COMPILER_DRIVER_DRIVER_H
#define ATOLL_COMPILER_DRIVER_DRIVER_H
#include "compiler/backend/backend.h"
#include "compiler/ops/infer.h"

#define DRV_MAX_BATCHES 16

typedef struct DrvRequest {
    const AtlChip *chip;
    int dtype;                     /* ISA_F32, ISA_F16, ISA_BF16 */
    int batches[DRV_MAX_BATCHES];  /* one variant each; nbatch 0: the model's batch (1 where open) */
    int nbatch;
    const IrInputShape *shapes;    /* given input shapes (take precedence over batches) */
    int nshapes;
    const char *net_name;          /* NULL: the graph's */
    int keep_activations, synthetic_weights, layer_info;
    int group, group_max;          /* BkOptions.group (BK_GROUP_AUTO / NONE), group_max */
    int group_weights;             /* BkOptions.group_weights (BK_GW_*) */
    int group_cslice;              /* BkOptions.group_cslice (BK_CS_*) */
    int placement, micro_batch;    /* BkOptions.placement (BK_PLACE_*), micro_batch */
    int schedule;                  /* BkOptions.schedule (BK_SCHED_*) */
    int sram_acts;                 /* BkOptions.sram_acts (BK_SRAM_ACTS_*) */
    int sram_weights;              /* BkOptions.sram_weights (BK_SRAM_AUTO / NEVER / ALWAYS) */
    int stage_sram;                /* BkOptions.stage_sram (BK_SRAM_AUTO / NEVER / ALWAYS) */
    int sram_pair;                 /* BkOptions.sram_pair (BK_PAIR_*) */
    int no_halo_stage;             /* BkOptions.no_halo_stage */
    int no_shards;                 /* BkOptions.no_shards */
    int no_chain_pack;             /* BkOptions.no_chain_pack */
    int no_reorder;                /* BkOptions.no_reorder */
    int bytes_slack;               /* BkOptions.bytes_slack */
    int prefetch;                  /* BkOptions.prefetch (BK_PREFETCH_AUTO / NEVER) */
    int kbands;                    /* BkOptions.kbands (BK_KBANDS_AUTO / NEVER / ALWAYS) */
    int dw_matrix;                 /* BkOptions.dw_matrix */
    const char *stage_plan;        /* BkOptions.stage_plan */
    uint64_t synthetic_max_bytes;  /* invented weights stop at this many bytes (0: no limit) */
    const uint8_t *model_buf;      /* when set, the model is imported from these model_len bytes (a
                                    * serialised ONNX model, e.g. the QDQ model quantisation made of
                                    * the file at path); the .abm still records path's hash */
    size_t model_len;
    int model_synthetic;           /* model_buf was made from synthetic weights (recorded so) */
    int synthetic_raw;             /* when any weight is synthetic, the writer stores everything raw
                                    * (zlib level 0): deflating invented numbers costs ResNet-50's
                                    * compile 3 CPU-s to save 8% of a file nobody ships */
    const char *dtype_text;        /* recorded in the .abm options instead of "--dtype <dtype>" (NULL) */
    /* called between phases (progress lines); may be NULL */
    void (*progress)(void *ctx, const char *what);
    void *progress_ctx;
} DrvRequest;

enum { DRV_PH_IMPORT, DRV_PH_PASSES, DRV_PH_BACKEND, DRV_NPHASES = DRV_PH_BACKEND + BK_NPHASES };

typedef struct DrvResult {
    BkSummary *variants;             /* one summary per variant compiled (malloc'd) */
    int nvariants;
    double phase_s[DRV_NPHASES];   /* wall seconds: import, passes, the backend's phases */
    int nsynthetic;                /* initializers given synthetic values */
    int64_t synthetic_bytes;
    char chose_batch[256];         /* inputs whose open dimension 0 was set to 1 ("" none) */
    char batch_followed[256];      /* nodes whose constants held the exported batch and follow
                                      --batch (ops/batch_follow.c): "N nodes ... (first ...)", "" none */
    char *unsupported;             /* the full list when ops are not supported (malloc'd), else NULL */
} DrvResult;

/* Compiles the model at path into variants of w. On failure e names the
 * model, node or option; res->unsupported may hold the full list of
 * unsupported ops (longer than a message holds). Free res with
 * drv_result_free either way. */
int drv_compile(const char *path, const DrvRequest *rq, AbmWriter *w, DrvResult *res, AtlErr *e);
void drv_result_free(DrvResult *res);
/* Adds NAME=batch x (declared dims 1..) to shapes (*n of max) for every
 * input of g not given there; with batch 0 only for inputs whose dimension
 * 0 is open, set to 1 and named in chose (cap bytes, may be NULL). */
int drv_batch_shapes(const IrGraph *g, int batch, IrInputShape *shapes, int *n, int max, char *chose, size_t cap, AtlErr *e);
/* Names of the phases of DrvResult.phase_s. */
const char *drv_phase_name(int phase);
#endif
