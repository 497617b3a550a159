/* chip_convert.c - graph-dtype values <-> chip dtypes (see chip_convert.h). */
#include "tools/chip_convert.h"
#include "compiler/ops/ops.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Range of the integer IR dtypes a chip tensor may have; 0 for others. */
static int int_range(int dtype, int64_t *lo, int64_t *hi)
{
    static const struct { int dt; int64_t lo, hi; } r[] = {
        {IR_I8, INT8_MIN, INT8_MAX}, {IR_I16, INT16_MIN, INT16_MAX}, {IR_I32, INT32_MIN, INT32_MAX},
        {IR_U8, 0, UINT8_MAX}, {IR_BOOL, 0, 1},
    };
    for (size_t i = 0; i < sizeof r / sizeof *r; i++)
        if (r[i].dt == dtype) { *lo = r[i].lo; *hi = r[i].hi; return 1; }
    return 0;
}

static int convert_values(const IrTensor *in, IrTensor *out, AtlErr *e)
{
    int64_t lo, hi, n = ir_numel(in);
    int to_int = int_range(out->dtype, &lo, &hi), from_float = op_dtype_is_float(in->dtype);
    for (int64_t i = 0; i < n; i++) {
        if (!to_int) {
            /* a finite value beyond the float dtype's range would become inf */
            double f = ir_get_f(in, i);
            ir_set_f(out, i, f);
            if (isfinite(f) && !isfinite(ir_get_f(out, i)))
                return atl_fail(e, "input '%s' element %lld = %g does not fit the chip's %s (not supported: outside its range)",
                                in->name, (long long)i, f, ir_dtype_name(out->dtype));
            continue;
        }
        double f = from_float ? ir_get_f(in, i) : 0;
        int64_t v = from_float ? (int64_t)f : ir_get_i(in, i);
        int ok = from_float ? f == f && f >= (double)lo && f <= (double)hi && (double)v == f
                            : v >= lo && v <= hi && !(in->dtype == IR_U64 && v < 0);
        if (!ok) {
            if (from_float) return atl_fail(e, "input '%s' element %lld = %g does not fit the chip's %s", in->name, (long long)i, f, ir_dtype_name(out->dtype));
            return atl_fail(e, "input '%s' element %lld = %lld does not fit the chip's %s (not supported: the chip has no "
                            "64-bit integers)",
                            in->name, (long long)i, in->dtype == IR_U64 ? (long long)(uint64_t)v : (long long)v,
                            ir_dtype_name(out->dtype));
        }
        ir_set_i(out, i, v);
    }
    return 0;
}

int chip_convert_input(const IrTensor *in, int dtype, IrTensor *out, AtlErr *e)
{
    *out = *in;
    out->dtype = dtype;
    out->name = ir_strdup(in->name);
    out->data = NULL;
    if (!out->name || ir_alloc_data(out, e)) { free(out->name); out->name = NULL; return atl_fail(e, "out of memory"); }
    if (convert_values(in, out, e)) { ir_tensor_free_contents(out); return -1; }
    return 0;
}

int chip_convert_output(IrTensor *t, int dtype, AtlErr *e)
{
    if (t->dtype == dtype) return 0;
    IrTensor r = *t;
    r.dtype = dtype;
    r.data = NULL;
    if (ir_alloc_data(&r, e)) return -1;
    int64_t n = ir_numel(t);
    int is_int = !op_dtype_is_float(dtype) && !op_dtype_is_float(t->dtype);
    for (int64_t i = 0; i < n; i++) {
        if (is_int) ir_set_i(&r, i, ir_get_i(t, i));
        else ir_set_f(&r, i, ir_get_f(t, i));
    }
    free(t->data);
    t->data = r.data;
    t->dtype = dtype;
    return 0;
}
