/* interp.h - the reference interpreter: executes the graph IR directly with
 * the op table's kernels. It is the golden model the rest of the compiler is
 * checked against. */
#ifndef ATOLL_COMPILER_INTERP_H
#define ATOLL_COMPILER_INTERP_H
#include "compiler/ir/ir.h"

/* Runs g (nodes in topological order) on `inputs`, matched to the graph
 * inputs by name; every graph input must be given, with a dtype and shape
 * compatible with the model's declaration. On success *outputs is a malloc'd
 * array of g->nout tensors (named as the graph outputs); free it with
 * interp_free_outputs. Intermediate tensors are freed as soon as their last
 * consumer has run. QDQ node units (DequantizeLinear -> op -> QuantizeLinear)
 * run as the int8 operators of ops/qdq.h: their float intermediates are
 * never computed (docs/quantization.md). */
int interp_run(const IrGraph *g, const IrTensor *inputs, int ninputs, IrTensor **outputs, AtlErr *e);
void interp_free_outputs(IrTensor *outputs, int n);

/* Called with every node output right after it is computed (tensor index
 * in g, its value, valid only during the call); a non-zero return stops
 * the run with the observer's error. Used to compare intermediates. */
typedef int (*InterpObserver)(void *ctx, int tensor, const IrTensor *value, AtlErr *e);
int interp_run_observed(const IrGraph *g, const IrTensor *inputs, int ninputs, IrTensor **outputs,
                        InterpObserver observe, void *ctx, AtlErr *e);
#endif
