/* synth_weights.h - deterministic stand-in values for initializers whose
 * external-data file is missing (`atoll compile --synthetic-weights`).
 *
 * Full-size models (models/full/) ship their graph without the weight file;
 * timing studies only need tensors of the right dtype and shape, but values
 * that look like a real initialisation keep every intermediate finite (no
 * negative BatchNormalization variance, no overflow in fp16). Values depend
 * only on the tensor's name (seed) and shape, never on load order.
 *
 * The importer calls synth_missing_tensor() for each tensor whose external
 * file does not exist (a generic fill from the shape) and, once the graph is
 * built, synth_refine() refills those tensors according to how they are used
 * (Conv/Gemm/MatMul fan-in, BatchNormalization/LayerNormalization roles).
 */
#ifndef ATOLL_COMPILER_SYNTH_WEIGHTS_H
#define ATOLL_COMPILER_SYNTH_WEIGHTS_H
#include <stdint.h>
#include "compiler/ir/ir.h"

/* Names of the tensors synthesised so far (owned; free with synth_list_free). */
typedef struct SynthList {
    char **names;
    int n, cap;
    int64_t bytes;       /* total bytes synthesised */
    int64_t max_bytes;   /* refuse to synthesise more than this in all (0: no limit) */
} SynthList;

/* Allocates t's data for its (known) shape, fills it from t's name and
 * shape, and records the name in l. Fails for integer dtypes other than
 * int8/uint8 (shape-like tensors define the computation; inventing them
 * would change the graph), naming the tensor and `file`, and when the total
 * would pass l->max_bytes (checked before anything is allocated). */
int synth_missing_tensor(SynthList *l, IrTensor *t, const char *file, AtlErr *e);

/* Refills every listed tensor of g that is a constant, choosing the scale
 * from its first consumer (see onnx/synth_weights.c). Tensors not found in g
 * (e.g. inside node attributes) keep their generic fill. */
int synth_refine(IrGraph *g, const SynthList *l, AtlErr *e);

/* Fills t (data allocated) with values uniform in [lo, hi], from a generator
 * seeded by `name`. Integer dtypes are rounded and clamped to their range. */
void synth_fill_uniform(IrTensor *t, const char *name, double lo, double hi);

void synth_list_free(SynthList *l);
#endif
