/* bench_run.h - compile a model and run it timing-only, for the benchmarks
 * (header only: each benchmark is one translation unit).
 *
 * The placement and layer-group benchmarks measure many compiles of the
 * same few models: load the ONNX file (or an int8 QDQ model held in
 * memory) at a shape and batch, run the passes, compile with a set of
 * options, run the .abm on the simulator timing-only with zero inputs
 * (timing does not depend on values; docs/simulator.md) and read the
 * summary and the statistics. BenchRun holds everything that sequence
 * owns until bench_run_free, so a caller reads what it needs and frees
 * once, on success or failure alike. */
#ifndef ATOLL_BENCH_RUN_H
#define ATOLL_BENCH_RUN_H
#include <stdlib.h>
#include <string.h>
#include "bench/bench_clock.h"
#include "compiler/backend/backend.h"
#include "compiler/passes/passes.h"
#include "tools/chip_exec.h"
#include "tools/model_io.h"

/* What to load: a model file at `shape` ("input=1x3x224x224", or NULL for
 * the model's own) and `batch` (0: the model's, 1 where it is open), its
 * missing external weights invented when `synthetic`; or, when qdq is set,
 * that in-memory QDQ model (named path) at `shape`. */
typedef struct BenchLoad {
    const char *path, *shape;
    int batch, synthetic;
    const PbBuf *qdq;
} BenchLoad;

/* One compile and timing-only run; every member is owned here. */
typedef struct BenchRun {
    IrGraph g;
    uint8_t *abm;
    size_t len;
    BkSummary sum;
    ChipExec x;
    const AtlSimStats *st;   /* the run's statistics (inside x), once it ran */
    double compile_cpu;      /* thread CPU seconds: import, passes, backend */
} BenchRun;

/* Frees what r holds (safe after a failed bench_run). */
static inline void bench_run_free(BenchRun *r)
{
    chip_exec_close(&r->x);
    free(r->abm);
    bk_summary_free(&r->sum);
    ir_free(&r->g);
    memset(r, 0, sizeof *r);
}

/* Loads ld into g (initialised here; the caller frees it) and runs the
 * passes: the canonical graph the compiler takes. 0, or -1 with e set. */
static inline int bench_load_graph(IrGraph *g, const char *cmd, const BenchLoad *ld, AtlErr *e)
{
    IrInputShape s;
    OnnxLoadOpts lo = {ld->synthetic, 0, 0, 0};
    int nshapes = ld->shape != NULL;
    ir_init(g);
    if (ld->shape && ir_parse_input_shape(ld->shape, &s, e)) return -1;
    int rc = ld->qdq ? model_load_buffer(ld->qdq->p, ld->qdq->n, ld->path, &s, nshapes, g, e)
                     : model_load_batch(cmd, ld->path, &s, nshapes, ld->batch, &lo, g, e);
    return rc || pass_run_all(g, e) ? -1 : 0;
}

/* Loads ld, compiles it for chip with o and runs it timing-only with zero
 * inputs whose float dtype is run_dt. 0, or -1 with e set (r still needs
 * bench_run_free). `cmd` names the benchmark in messages. */
static inline int bench_run(BenchRun *r, const char *cmd, const AtlChip *chip, const BenchLoad *ld, const BkOptions *o,
                            int run_dt, AtlErr *e)
{
    memset(r, 0, sizeof *r);
    double c0 = bench_thread_cpu_seconds();
    if (bench_load_graph(&r->g, cmd, ld, e) || chip_compile_graph(&r->g, chip, o, 0, &r->abm, &r->len, &r->sum, e)) return -1;
    r->compile_cpu = bench_thread_cpu_seconds() - c0;
    if (chip_exec_open(&r->x, chip, r->abm, r->len, SIM_MODE_TIMING, 0, e) || chip_exec_run_zeros(&r->x, &r->g, run_dt, e))
        return -1;
    r->st = sim_stats(r->x.sim);
    return 0;
}
#endif
