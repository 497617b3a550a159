/* model_io.h - what `atoll interp` and `atoll compile` share: loading a model
 * with --input-shape options applied, and converting between .npy arrays
 * and IR tensors. */
#ifndef ATOLL_TOOLS_MODEL_IO_H
#define ATOLL_TOOLS_MODEL_IO_H
#include "compiler/ir/ir.h"
#include "compiler/ops/infer.h"
#include "compiler/onnx/onnx.h"
#include "util/npy.h"

/* Loads path, sorts, verifies, applies the shapes and infers shapes. */
int model_load(const char *path, const IrInputShape *shapes, int nshapes, IrGraph *g, AtlErr *e);
/* The same with import options (--synthetic-weights); o may be NULL. */
int model_load_opts(const char *path, const IrInputShape *shapes, int nshapes, OnnxLoadOpts *o, IrGraph *g, AtlErr *e);
/* The same from a serialised model in memory (`name` in messages). */
int model_load_buffer(const uint8_t *buf, size_t len, const char *name, const IrInputShape *shapes, int nshapes, IrGraph *g,
                      AtlErr *e);
/* Array -> tensor (data copied; name copied). */
int model_tensor_from_array(const AtlNdArray *a, const char *name, IrTensor *t, AtlErr *e);
/* Tensor -> array (data copied). Fails for dtypes .npy files cannot hold. */
int model_array_from_tensor(const IrTensor *t, AtlNdArray *a, AtlErr *e);
/* Reads --input specifications: X.npy (the only graph input), NAME=X.npy,
 * or IN.npz (arrays by name). *out is a malloc'd list of *n tensors (free
 * with model_free_inputs). */
int model_read_inputs(const IrGraph *g, const char *const *specs, int nspecs, IrTensor **out, int *n, AtlErr *e);
void model_free_inputs(IrTensor *list, int n);
/* Adds NAME=batch x (declared dims 1..) to shapes (up to max entries, *n
 * in/out) for every graph input of the ONNX file not already there; with
 * only_unknown, just for inputs whose batch dimension is dynamic. The
 * model is read with opts' synthetic weights and their cap. Errors name
 * the model file. */
int model_batch_shapes(const char *model, int batch, int only_unknown, const OnnxLoadOpts *opts, IrInputShape *shapes,
                       int *n, int max, AtlErr *e);
#endif
