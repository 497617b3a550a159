/* chip_convert.h - graph-dtype values to the chip's dtypes and back, for
 * the host tools that feed a compiled graph (atoll compare, the chip
 * conformance runner). The backend stores integers as chip integers (int64
 * as int32, uint8 as int16, bool as int8 0/1) and f64 in the float storage
 * dtype (docs/backend.md, "Data types"): inputs are converted to the
 * compiled model's dtype, outputs back to the graph's. */
#ifndef ATOLL_TOOLS_CHIP_CONVERT_H
#define ATOLL_TOOLS_CHIP_CONVERT_H
#include "compiler/ir/ir.h"

/* out = in converted to IR dtype `dtype` (data allocated, name copied).
 * A value that does not fit (an integer outside an integer dtype, e.g. an
 * int64 beyond int32; a finite float beyond a float dtype's range, e.g. an
 * f64 1e200 for f32) fails, naming the input and the element; the message
 * says "not supported" (the conformance runner counts such a test as
 * unsupported, not failed). */
int chip_convert_input(const IrTensor *in, int dtype, IrTensor *out, AtlErr *e);
/* Converts t in place to IR dtype `dtype` (no-op when equal): integers
 * exactly, floats rounded. */
int chip_convert_output(IrTensor *t, int dtype, AtlErr *e);
#endif
