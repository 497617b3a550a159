/* sweep_csv.h - a sweep's results as a table of CSV rows keyed by point
 * id: read from a file (to resume a sweep or merge shards), checked
 * against the sweep that should have produced it, and written back in
 * point order. Rows are kept as the writer's canonical text (each record
 * re-serialised), so a table read and written again has the same bytes.
 *
 * Ownership: a SweepTable owns its header and rows; sweep_table_free.
 */
#ifndef ATOLL_TOOLS_SWEEP_CSV_H
#define ATOLL_TOOLS_SWEEP_CSV_H
#include <stdint.h>
#include "tools/sweep_spec.h"
#include "util/err.h"

typedef struct SweepRow {
    int64_t id;
    char *text;                /* one CSV record with its newline */
    const char *file;          /* where it came from (for messages) */
    int line;
    int64_t seq;               /* order of adding */
} SweepRow;

typedef struct SweepTable {
    char *header;              /* the header line with its newline */
    int64_t n, cap;
    SweepRow *rows;
} SweepTable;

/* Reads a sweep CSV. With spec, the header must be the spec's and every
 * row one of its points with the point's values (else "FILE:LINE: ...").
 * Without, rows only need a point id and the header's number of fields. */
int sweep_table_read(const char *path, const SweepSpec *spec, SweepTable *t, AtlErr *e);
/* Appends a row (text copied). */
int sweep_table_add(SweepTable *t, int64_t id, const char *text, const char *file, int line, AtlErr *e);
/* Sorts by point id and drops repeated rows; two rows of one point with
 * different text are an error naming both places. */
int sweep_table_finish(SweepTable *t, AtlErr *e);
/* Writes header and rows (finished first) atomically to path. */
int sweep_table_write(SweepTable *t, const char *path, AtlErr *e);
void sweep_table_free(SweepTable *t);
#endif
