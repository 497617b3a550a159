/* model_io.h - what `atoll interp`, `compile` and `compare` share: loading
 * a model with input shapes applied, and converting between .npy arrays
 * and IR tensors (any float width for a float input, any integer width for
 * an integer input where every value fits, with a note). */
#ifndef ATOLL_TOOLS_MODEL_IO_H
#define ATOLL_TOOLS_MODEL_IO_H
#include "compiler/ir/ir.h"
#include "compiler/ops/infer.h"
#include "compiler/onnx/onnx.h"
#include "util/npy.h"

/* Imports path (o may be NULL): decoded, sorted, verified; shapes not yet
 * inferred. */
int model_import(const char *path, OnnxLoadOpts *o, IrGraph *g, AtlErr *e);
/* Applies the input shapes (a dimension the model fixed may change) and
 * infers every shape. When ops are unsupported and their list is longer
 * than a message holds, prints the whole list on stderr as "atoll CMD: ". */
int model_fix_shapes(const char *cmd, IrGraph *g, const IrInputShape *shapes, int nshapes, const char *path, AtlErr *e);
/* model_import + model_fix_shapes. */
int model_load_opts(const char *cmd, const char *path, const IrInputShape *shapes, int nshapes, OnnxLoadOpts *o, IrGraph *g,
                    AtlErr *e);
/* model_load_opts with a batch: every input not in shapes gets dimension
 * 0 = batch (its other dimensions as declared); batch 0 sets only open
 * batch dimensions, to 1 (as `atoll compile` does). At most
 * MODEL_MAX_SHAPES shapes in all. */
#define MODEL_MAX_SHAPES 64
int model_load_batch(const char *cmd, const char *path, const IrInputShape *shapes, int nshapes, int batch, OnnxLoadOpts *o,
                     IrGraph *g, AtlErr *e);
/* Loads a serialised model in memory (`name` in messages), sorts,
 * verifies, applies the shapes and infers shapes. */
int model_load_buffer(const uint8_t *buf, size_t len, const char *name, const IrInputShape *shapes, int nshapes, IrGraph *g,
                      AtlErr *e);
/* Array -> tensor (data copied; name copied). */
int model_tensor_from_array(const AtlNdArray *a, const char *name, IrTensor *t, AtlErr *e);
/* Tensor -> array (data copied). Fails for dtypes .npy files cannot hold. */
int model_array_from_tensor(const IrTensor *t, AtlNdArray *a, AtlErr *e);
/* Converts t in place to dtype: float to float (rounded to nearest even),
 * integer or bool to integer where every value fits (else an error naming
 * `what` and the element). 0 converted (or already dtype), -1 error. */
int model_convert_tensor(IrTensor *t, int dtype, const char *what, AtlErr *e);
/* Reads --input specifications: X.npy (the only graph input), NAME=X.npy,
 * or IN.npz (arrays by name). Arrays named like graph inputs of another
 * dtype are converted where that is lossless for the model (one note per
 * input on stderr, "atoll CMD: note: ..."); arrays of an .npz that are not
 * inputs are skipped without being inflated, and an input's array is read
 * only when its declared size fits the input's shape. *out is a malloc'd list
 * of *n tensors (free with model_free_inputs). */
int model_read_inputs(const char *cmd, const IrGraph *g, const char *const *specs, int nspecs, IrTensor **out, int *n, AtlErr *e);
/* The same for the graph's outputs (expected values: `compare --expect`):
 * an .npz's arrays named like outputs, an .npy for the only output or
 * NAME=X.npy. Free with model_free_inputs. */
int model_read_outputs(const char *cmd, const IrGraph *g, const char *const *specs, int nspecs, IrTensor **out, int *n,
                       AtlErr *e);
void model_free_inputs(IrTensor *list, int n);
#endif
