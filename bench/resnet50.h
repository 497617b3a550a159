/* resnet50.h - what the benchmarks timing a full-size model share: ResNet-50
 * (models/full/resnet50.onnx, weights synthesised as `atoll compile
 * --synthetic-weights` does, a dynamic batch set to 1) imported,
 * canonicalised and compiled for a chip into an in-memory .abm, with the
 * wall seconds of each phase. Header only (each benchmark is one file). */
#ifndef ATOLL_BENCH_RESNET50_H
#define ATOLL_BENCH_RESNET50_H
#include <stdlib.h>
#include <string.h>
#include "compiler/onnx/onnx.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"
#include "compiler/backend/backend.h"
#include "isa/abm.h"
#include "util/clock.h"

#define RESNET50 "models/full/resnet50.onnx"

/* Phases timed: import (decode + shape inference), passes, the backend's
 * phases, write (.abm serialisation). */
enum { R50_IMPORT, R50_PASSES, R50_BACKEND, R50_WRITE = R50_BACKEND + BK_NPHASES, R50_NPHASES };

/* Compiles ResNet-50 for chip at zlib level zlevel (-1: the writer's
 * default); *buf is malloc'd (caller frees); t[] gets the phase times (may
 * be NULL), *layers the backend's layer count (may be NULL). */
static inline int r50_compile(const AtlChip *chip, int zlevel, uint8_t **buf, size_t *len, double *t, int *layers, AtlErr *e)
{
    IrGraph g;
    OnnxLoadOpts lo = {1, 0, 0, 0};
    AbmWriter *w = NULL;
    BkSummary sum;
    double tt[R50_NPHASES] = {0};
    memset(&sum, 0, sizeof sum);
    *buf = NULL;
    *len = 0;
    int rc = -1;
    double t0 = atl_clock_s();
    if (onnx_load_file_opts(RESNET50, &lo, &g, e)) return -1;
    if (ir_toposort(&g, e) || ir_verify(&g, e)) goto out;
    for (int i = 0; i < g.nin; i++) {  /* a dynamic batch is 1, as atoll compile does */
        IrTensor *x = &g.t[g.inputs[i]];
        if (x->ndim > 0 && x->dims[0] < 0) x->dims[0] = 1;
    }
    if (ir_infer_shapes(&g, e)) goto out;
    tt[R50_IMPORT] = atl_clock_s() - t0;
    t0 = atl_clock_s();
    if (pass_run_all(&g, e)) goto out;
    tt[R50_PASSES] = atl_clock_s() - t0;
    w = abm_writer_new(cfg_fingerprint(chip));
    if (!w) { atl_fail(e, "out of memory"); goto out; }
    if (zlevel >= 0) abm_writer_set_level(w, zlevel);
    BkOptions opt;
    bk_options_default(&opt);
    if (bk_compile(&g, chip, &opt, w, &sum, e)) goto out;
    for (int i = 0; i < BK_NPHASES; i++) tt[R50_BACKEND + i] = sum.phase_s[i];
    if (layers) *layers = sum.nlayers;
    t0 = atl_clock_s();
    if (abm_serialize(w, buf, len, e)) goto out;
    tt[R50_WRITE] = atl_clock_s() - t0;
    if (t) memcpy(t, tt, sizeof tt);
    rc = 0;
out:
    abm_writer_free(w);
    bk_summary_free(&sum);
    ir_free(&g);
    return rc;
}
#endif
