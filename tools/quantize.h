/* quantize.h - post-training int8 quantisation of a float model into a
 * QDQ model (`atoll quantize`, `atoll compile --dtype int8 --calib`;
 * docs/quantization.md).
 *
 * The plan (qdq_plan.c) picks the node units ops/qdq.h fuses: Conv, Gemm
 * and MatMul with constant weights (+ a fused Relu / Clip, + a constant
 * bias Add after a MatMul), Add of two activations, GlobalAveragePool, and
 * the data-movement ops (MaxPool, Concat, Reshape, ...) and standalone
 * Relu / Clip whose input is already int8. Everything else stays float.
 * The builder (qdq_plan.c) writes the QDQ graph: per quantised tensor T a
 * QuantizeLinear / DequantizeLinear pair (the producer writes T_f, the
 * DequantizeLinear writes T, so every consumer and a graph output keep
 * their name; a graph input gets T_q and T_dq), weights symmetric int8
 * per output channel ([-127, 127], scale max|w| / 127) behind a
 * DequantizeLinear, Conv / Gemm biases int32 with scale s_x s_w.
 * The driver (quantize.c) calibrates on the reference interpreter,
 * measures the QDQ model against the float one (cosine over every output
 * of every sample) and, with fallback auto, keeps the most sensitive
 * layers float until the target cosine is reached. */
#ifndef ATOLL_TOOLS_QUANTIZE_H
#define ATOLL_TOOLS_QUANTIZE_H
#include <stdio.h>
#include "compiler/ir/ir.h"
#include "tools/calib.h"
#include "compiler/onnx/onnx.h"
#include "compiler/ops/infer.h"

enum { QZ_FALLBACK_NONE, QZ_FALLBACK_AUTO };

typedef struct QzOptions {
    int method;                  /* CALIB_* */
    double percentile;           /* for CALIB_PERCENTILE (99.99) */
    int fallback;                /* QZ_FALLBACK_* */
    double target_cos;           /* fallback auto: stop once reached (0.99) */
    const char *const *keep_float; /* node names never quantised */
    int nkeep;
    FILE *progress;              /* progress lines (stderr), NULL quiet */
    int skip_eval;               /* fallback none: leave out the cosine (cos = NaN), one interpreter run less per sample */
} QzOptions;
void qz_options_default(QzOptions *o);

/* What one quantised tensor got. */
typedef struct QzTensor {
    int t;                       /* tensor index in the float graph */
    int same_as;                 /* -1 calibrated, else the tensor whose parameters it shares */
    double min, max, lo, hi;     /* observed and chosen range */
    float scale;
    int zp;
} QzTensor;

/* One quantisable layer (a matrix, Add or pooling unit) and its sensitivity. */
typedef struct QzLayer {
    int node;                    /* in the float graph */
    double cos_alone;            /* cosine with only this layer quantised (fallback auto) */
    int kept_float;
} QzLayer;

typedef struct QzResult {
    IrGraph qdq;                 /* the QDQ graph */
    QzTensor *tensors;
    int ntensors;
    QzLayer *layers;
    int nlayers;
    double cos;                  /* QDQ vs float on the calibration data */
    int nsamples;
} QzResult;
void qz_result_free(QzResult *r);

/* The plan: which nodes of the float graph g (canonicalised, shapes known)
 * are unit cores (unit[n] = QDQ_* kind, 0 none), which tensors are
 * quantised (qt[t] = 1) and whose parameters they share (same[t], -1 own);
 * keep[n] = 1 keeps node n float. Arrays are caller-allocated (g->nn,
 * g->nt). */
void qz_plan(const IrGraph *g, const int *keep, int *unit, int *qt, int *same);
/* Builds the QDQ graph of plan (unit, qt) with tensor parameters params
 * (indexed by tensor: scale, zp) from g into out (ir_init'ed here). */
int qz_build(const IrGraph *g, const int *unit, const int *qt, const float *scale, const int *zp, IrGraph *out,
             AtlErr *e);

/* Calibrates g on d, builds the QDQ graph, runs the fallback search. */
int qz_quantize(const IrGraph *g, const CalibData *d, const QzOptions *o, QzResult *r, AtlErr *e);
/* Gives q's inputs and outputs the shapes the ONNX file `model` declares
 * (a dynamic batch stays dynamic in the written QDQ model). */
int qz_restore_declared(const char *model, const OnnxLoadOpts *lo, IrGraph *q, AtlErr *e);
/* The whole of `atoll compile --dtype int8`'s first step: model (batch 1
 * where dynamic, shapes applied) canonicalised, calibrated on data (or,
 * when data is NULL, on the files calib), quantised; the QDQ model with
 * its declared shapes serialised into *buf (pb_free it) and written to
 * qdq_out when given; *cos (may be NULL) its cosine to the float model. */
int qz_quantize_model(const char *model, OnnxLoadOpts *lo, const IrInputShape *shapes, int nshapes,
                      const char *const *calib, int ncalib, const CalibData *data, const QzOptions *o, const char *qdq_out,
                      PbBuf *buf, double *cos, AtlErr *e);
/* The readable range table (one row per quantised tensor, then the layers). */
void qz_write_table(const IrGraph *g, const QzResult *r, const QzOptions *o, FILE *f);
#endif
