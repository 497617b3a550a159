/* emit.h - the schedule -> instruction streams and .abm records.
 *   emit.c  walks every core's time-step table and appends instructions
 *           with their sync fields to the core's DMA / MAT / VEC streams
 *   abm.c   the net's records in the .abm writer: the batch variant, its
 *           io and activation tensors, the encoded streams, memory plan
 *           and metadata */
#ifndef ATOLL_COMPILER_EMIT_EMIT_H
#define ATOLL_COMPILER_EMIT_EMIT_H
#include "compiler/schedule/schedule.h"
#include "isa/program.h"

/* The emitter's state: the per-core streams being built (DRAM operands
 * region-tagged) and the scratch of table walks. bk_emit_free frees it. */
/* What the instructions of one segment move and occupy, measured as they
 * are emitted (isa/operands.h): bytes its DMAs read from and write to
 * DRAM (a multicast counted once), and the highest LMEM byte any of its
 * instructions touches on any core. */
typedef struct BkEmitUse {
    uint64_t dram_rd, dram_wr, lmem_peak;
} BkEmitUse;

/* Placement pipeline: an SRAM range of the instance's code that the
 * emitter moves for the instance being emitted: an SRAM operand in
 * [lo, hi) moves by `add` bytes, and into cluster `cluster`'s SRAM (a
 * peer@C: operand) when cluster >= 0. */
typedef struct BkEmitSramMove {
    uint64_t lo, hi, add;
    int cluster;
} BkEmitSramMove;

typedef struct BkEmit {
    BkCtx *c;
    AtlProgram prog;
    BkTable table;
    BkWalk walk;
    BkEmitUse use;    /* of the last segment bk_emit_segment emitted */
    const BkSegment *sg;          /* the segment being emitted */
    uint64_t *io_off, *io_size;   /* placement split: io roots in the instance's code (malloc'd) */
    int nio;
    BkEmitSramMove smove[2];      /* placement pipeline: the stage's input and output boundaries */
    int nsmove;                   /* how many apply (the caller sets them per instance) */
} BkEmit;

int bk_emit_init(BkEmit *x, BkCtx *c, AtlErr *e);
/* Staged: the segments emitted next are those of stage context c (its
 * layers, placement and io ranges); the streams go on. */
int bk_emit_use_ctx(BkEmit *x, BkCtx *c, AtlErr *e);
void bk_emit_free(BkEmit *x);
/* Appends the instructions of every core of segment sg. */
int bk_emit_segment(BkEmit *x, const BkSegment *sg, AtlErr *e);
/* A barrier alone: every engine of every core of b's set joins it (a
 * staged schedule's chip barrier between stages); its instructions carry
 * layer id `layer`. */
int bk_emit_barrier(BkEmit *x, const BkBarrier *b, int layer, AtlErr *e);
/* Ends every stream. */
int bk_emit_finish(BkEmit *x, AtlErr *e);

/* abm.c: adds the compiled net to the writer: a new batch variant of the
 * net named `name` (created if the writer does not have it yet) with
 * `batch` and the chip's core count, the graph's io tensors and every
 * activation that exists in DRAM, the streams, the memory plan, and the
 * metadata once per file (the compile options as text and the source
 * model's hash, ABM_HASH_BYTES; NULL: "" and zeros). *variant gets its
 * index. */
int bk_emit_abm(BkEmit *x, const char *name, int batch, const char *options_text, const uint8_t *source_hash,
                uint32_t *variant, AtlErr *e);
#endif
