/* memplan.h - global address assignment for activation buffers.
 *
 * Reads: a list of buffers, each with a size, an alignment and the interval
 * of schedule steps [first, last] during which it must hold its data, plus
 * optional aliasing (a view that shares its parent's storage at an offset),
 * plus optional in-place pairs (a buffer that may take exactly the offset of
 * one whose last step is its first: a layer that writes each element over
 * the one of that input it has just read, see `overwrite`).
 * Guarantees: every non-alias buffer gets an offset such that no two buffers
 * whose intervals overlap share a byte (except an in-place pair at the same
 * offset; a pair never overlaps otherwise), every offset is aligned, and the
 * footprint (max offset + size) is the smallest of the packers tried.
 * Why several packers: no single greedy order wins on every graph (tpu-mlir
 * tries three and keeps the smallest); trying them costs milliseconds.
 *
 * Ownership: the caller owns the buffer array; memplan_assign writes
 * `offset` in place and fills the result summary.
 */
#ifndef ATOLL_COMPILER_MEMPLAN_H
#define ATOLL_COMPILER_MEMPLAN_H
#include <stdint.h>
#include "util/err.h"

typedef struct MemBuffer {
    uint64_t size;
    uint64_t align;     /* power of two; 0 or 1 = unaligned */
    int first, last;    /* live steps, inclusive; first <= last */
    int alias_of;       /* -1, or index of the buffer whose storage this one shares */
    uint64_t alias_offset;
    int overwrite;      /* 0, or 1 + index of a root buffer this root may
                         * overwrite in place: both at the same offset, or
                         * apart (the packer takes the shared offset when it
                         * is free of every other live buffer) */
    uint64_t offset;    /* output */
} MemBuffer;

typedef enum {
    MEMPLAN_FIRST_FIT,      /* in order of first use, lowest free gap that fits */
    MEMPLAN_LARGEST_FIRST,  /* by size descending, lowest gap that fits */
    MEMPLAN_AREA_FIRST,     /* by lifetime x size descending, lowest gap that fits */
    MEMPLAN_NO_REUSE,       /* every buffer its own range: the upper bound */
    MEMPLAN_NUM_STRATEGIES
} MemStrategy;

typedef struct MemPlanResult {
    uint64_t footprint;                          /* bytes of the winning plan */
    uint64_t sum_of_buffers;                     /* what no reuse at all would need */
    uint64_t by_strategy[MEMPLAN_NUM_STRATEGIES];/* footprint each packer reached */
    MemStrategy winner;
} MemPlanResult;

const char *memplan_strategy_name(MemStrategy s);

/* Assigns offsets to all buffers (aliases get parent offset + alias_offset).
 * Fails on bad input (alias cycle, alias out of parent bounds, bad interval,
 * alignment not a power of two), naming the buffer index. */
int memplan_assign(MemBuffer *bufs, int n, MemPlanResult *res, AtlErr *e);

/* out[k] = all[idx[k]] for k < m, their `overwrite` renumbered into the
 * subset (0 when the partner is not in it): packing part of a plan. */
void memplan_subset(const MemBuffer *all, const int *idx, int m, MemBuffer *out);

/* Checks a plan: no overlap in time and space between live buffers (an
 * in-place pair only at the same offset), all aligned. Used by tests and by the compiler's verifier. */
int memplan_verify(const MemBuffer *bufs, int n, AtlErr *e);
#endif
