/* sweep_run.h - running sweep points and their CSV rows.
 *
 * A SweepRunner runs points one after the other: it builds the point's
 * chip, compiles the model for the point's compile chip (sweep_spec.h) with
 * synthetic weights where the ONNX file has none (timing needs no values),
 * and runs it on the simulator in timing-only mode. It keeps the last
 * compiled model and the loaded graphs, so consecutive points that share a
 * compile key (model, dtype, batch and compile chip fingerprint) compile
 * once. A point that fails (its chip breaks a config rule, the compiler
 * refuses the model, the simulator faults) gets its reason in the result;
 * nothing stops the runner.
 *
 * The CSV row of a point depends on nothing but the spec and the point, so
 * the same point gives the same bytes on every machine, in any order.
 */
#ifndef ATOLL_TOOLS_SWEEP_RUN_H
#define ATOLL_TOOLS_SWEEP_RUN_H
#include <stdint.h>
#include "tools/sweep_spec.h"
#include "util/strbuf.h"

/* Compile key of a point: points with equal keys share a compile. *fp gets
 * the compile chip's fingerprint (0 when the compile chip is invalid, and
 * then the key is unique to the point). */
void sweep_compile_key(const SweepSpec *s, const SweepPoint *p, char *key, size_t cap, uint64_t *fp);

/* The CSV header line (with its newline) and the number of columns. */
void sweep_csv_header(const SweepSpec *s, StrBuf *b);
int sweep_csv_columns(const SweepSpec *s);
/* Index of the first result column (after point, keys, model, dtype, batch). */
int sweep_csv_first_result(const SweepSpec *s);

typedef struct SweepRunner SweepRunner;

/* stats_dir: NULL, or a directory that gets point-ID.json per point (the
 * simulator's stats JSON with the point's values and the compiler's
 * per-layer names, ops and estimates). */
SweepRunner *sweep_runner_new(const SweepSpec *s, const char *stats_dir);
void sweep_runner_free(SweepRunner *r);
/* Runs point id and appends its CSV row (one line, with newline) to row. */
void sweep_runner_point(SweepRunner *r, int64_t id, StrBuf *row);
/* The row of a point that could not run at all (reason: one line). */
void sweep_failed_row(const SweepSpec *s, int64_t id, const char *reason, StrBuf *row);
#endif
