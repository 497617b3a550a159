/* array.c - the public API's arrays (include/atoll.h): .npy/.npz files
 * read and written as AtlArray (util/npy.h underneath), element types
 * converted between widths, and a host buffer made from a tensor's info.
 *
 * Conversions are the ones a user can rely on: float into float of any
 * width (one rounding to nearest, ties to even, isa/numerics.h), integer or
 * bool into any integer type when every value fits (else an error naming
 * the element). Nothing converts between floats and integers: that changes
 * values, and the caller should say so.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "atoll.h"
#include "isa/numerics.h"
#include "util/npy.h"

static const struct { const char *name; size_t size; int kind; int npy; } types[ATL_NUM_DTYPES] = {
    /* kind: 0 float, 1 signed, 2 unsigned, 3 bool; npy: util/npy.h's code, -1 none */
    [ATL_INT8] = {"int8", 1, 1, ATL_NPY_I8},        [ATL_UINT8] = {"uint8", 1, 2, ATL_NPY_U8},
    [ATL_INT16] = {"int16", 2, 1, ATL_NPY_I16},     [ATL_INT32] = {"int32", 4, 1, ATL_NPY_I32},
    [ATL_FP16] = {"float16", 2, 0, ATL_NPY_F16},    [ATL_BF16] = {"bfloat16", 2, 0, -1},
    [ATL_FP32] = {"float32", 4, 0, ATL_NPY_F32},    [ATL_FP64] = {"float64", 8, 0, ATL_NPY_F64},
    [ATL_INT64] = {"int64", 8, 1, ATL_NPY_I64},     [ATL_BOOL] = {"bool", 1, 3, ATL_NPY_BOOL},
    [ATL_UINT16] = {"uint16", 2, 2, ATL_NPY_U16},   [ATL_UINT32] = {"uint32", 4, 2, ATL_NPY_U32},
    [ATL_UINT64] = {"uint64", 8, 2, ATL_NPY_U64},
};

static int known(int dt) { return dt >= 0 && dt < ATL_NUM_DTYPES; }

const char *atl_dtype_name(int dtype) { return known(dtype) ? types[dtype].name : "?"; }
size_t atl_dtype_size(int dtype) { return known(dtype) ? types[dtype].size : 0; }

/* A status with its message in the caller's buffer (util/err.h). */
#define say(msg, cap, s, ...) ((AtlStatus)atl_msg(msg, cap, s, __VA_ARGS__))

static double get_float(const void *p, int dt, size_t i)
{
    switch (dt) {
    case ATL_FP16: return num_f16_to_f32(((const uint16_t *)p)[i]);
    case ATL_BF16: return num_bf16_to_f32(((const uint16_t *)p)[i]);
    case ATL_FP32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}

static void put_float(void *p, int dt, size_t i, double v)
{
    switch (dt) {
    case ATL_FP16: ((uint16_t *)p)[i] = num_f64_to_f16(v); return;
    case ATL_BF16: ((uint16_t *)p)[i] = num_f64_to_bf16(v); return;
    case ATL_FP32: ((float *)p)[i] = num_f64_to_f32(v); return;
    default: ((double *)p)[i] = v;
    }
}

/* Integer element i as (negative, magnitude bits): signed values as int64,
 * unsigned as uint64, bool as 0/1. */
static void get_int(const void *p, int dt, size_t i, int64_t *s, uint64_t *u, int *neg)
{
    int64_t v = 0;
    uint64_t w = 0;
    switch (dt) {
    case ATL_INT8: v = ((const int8_t *)p)[i]; break;
    case ATL_INT16: v = ((const int16_t *)p)[i]; break;
    case ATL_INT32: v = ((const int32_t *)p)[i]; break;
    case ATL_INT64: v = ((const int64_t *)p)[i]; break;
    case ATL_UINT8: w = ((const uint8_t *)p)[i]; break;
    case ATL_BOOL: w = ((const uint8_t *)p)[i] != 0; break;
    case ATL_UINT16: w = ((const uint16_t *)p)[i]; break;
    case ATL_UINT32: w = ((const uint32_t *)p)[i]; break;
    default: w = ((const uint64_t *)p)[i];
    }
    if (types[dt].kind == 1) { *neg = v < 0; *s = v; *u = v < 0 ? 0 : (uint64_t)v; }
    else { *neg = 0; *u = w; *s = w > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)w; }
}

/* Stores a value known to fit. */
static void put_int(void *p, int dt, size_t i, int64_t s, uint64_t u)
{
    switch (dt) {
    case ATL_INT8: ((int8_t *)p)[i] = (int8_t)s; return;
    case ATL_INT16: ((int16_t *)p)[i] = (int16_t)s; return;
    case ATL_INT32: ((int32_t *)p)[i] = (int32_t)s; return;
    case ATL_INT64: ((int64_t *)p)[i] = s; return;
    case ATL_UINT8: ((uint8_t *)p)[i] = (uint8_t)u; return;
    case ATL_BOOL: ((uint8_t *)p)[i] = u != 0; return;
    case ATL_UINT16: ((uint16_t *)p)[i] = (uint16_t)u; return;
    case ATL_UINT32: ((uint32_t *)p)[i] = (uint32_t)u; return;
    default: ((uint64_t *)p)[i] = u;
    }
}

static int fits(int dt, int64_t s, uint64_t u, int neg)
{
    static const uint64_t umax[ATL_NUM_DTYPES] = {
        [ATL_UINT8] = UINT8_MAX, [ATL_BOOL] = 1, [ATL_UINT16] = UINT16_MAX, [ATL_UINT32] = UINT32_MAX, [ATL_UINT64] = UINT64_MAX,
    };
    static const int64_t smin[ATL_NUM_DTYPES] = {[ATL_INT8] = INT8_MIN, [ATL_INT16] = INT16_MIN, [ATL_INT32] = INT32_MIN, [ATL_INT64] = INT64_MIN};
    static const int64_t smax[ATL_NUM_DTYPES] = {[ATL_INT8] = INT8_MAX, [ATL_INT16] = INT16_MAX, [ATL_INT32] = INT32_MAX, [ATL_INT64] = INT64_MAX};
    if (types[dt].kind == 1) return neg ? s >= smin[dt] : u <= (uint64_t)smax[dt];
    return !neg && u <= umax[dt];
}

AtlStatus atl_convert(const void *src, int src_dtype, void *dst, int dst_dtype, size_t count, char *msg, size_t cap)
{
    if (!known(src_dtype) || !known(dst_dtype) || (count && (!src || !dst)))
        return say(msg, cap, ATL_ERR_INVALID, "atl_convert: bad arguments (dtypes %d -> %d)", src_dtype, dst_dtype);
    int sf = types[src_dtype].kind == 0, df = types[dst_dtype].kind == 0;
    if (sf != df)
        return say(msg, cap, ATL_ERR_INVALID, "%s cannot be converted to %s without changing values (float and integer)",
                   types[src_dtype].name, types[dst_dtype].name);
    if (src_dtype == dst_dtype) { if (count) memmove(dst, src, count * types[dst_dtype].size); return ATL_OK; }
    /* dst may be src: widening walks from the end, narrowing from the start */
    int backwards = types[dst_dtype].size > types[src_dtype].size;
    for (size_t k = 0; k < count; k++) {
        size_t i = backwards ? count - 1 - k : k;
        if (sf) { put_float(dst, dst_dtype, i, get_float(src, src_dtype, i)); continue; }
        int64_t s;
        uint64_t u;
        int neg;
        get_int(src, src_dtype, i, &s, &u, &neg);
        if (!fits(dst_dtype, s, u, neg)) {
            char v[32];
            if (neg) snprintf(v, sizeof v, "%lld", (long long)s);
            else snprintf(v, sizeof v, "%llu", (unsigned long long)u);
            return say(msg, cap, ATL_ERR_INVALID, "element %zu = %s does not fit %s", i, v, types[dst_dtype].name);
        }
        put_int(dst, dst_dtype, i, s, u);
    }
    return ATL_OK;
}

void atl_buffer_init(AtlBuffer *b, const AtlTensorInfo *t, void *data)
{
    memset(b, 0, sizeof *b);
    if (!t) return;
    b->name = t->name;
    b->data = data;
    b->size = (size_t)t->bytes;
    b->ndim = t->ndim;
    for (int i = 0; i < t->ndim && i < ATL_MAX_DIMS; i++) b->dims[i] = t->dims[i];
}

/* ---- files ---- */

static int atl_of_npy(int npy)
{
    for (int d = 0; d < ATL_NUM_DTYPES; d++) if (types[d].npy == npy) return d;
    return -1;
}

/* Moves an internal array into a public one (name and data change hands). */
static AtlStatus from_nd(AtlNdArray *x, AtlArray *a, char *msg, size_t cap)
{
    memset(a, 0, sizeof *a);
    int dt = atl_of_npy((int)x->dtype);
    if (dt < 0) return say(msg, cap, ATL_ERR_INVALID, "array dtype %s has no Atoll element type", atl_npy_dtype_name(x->dtype));
    a->name = x->name;
    a->dtype = dt;
    a->ndim = x->ndim;
    for (int k = 0; k < x->ndim; k++) a->dims[k] = (uint64_t)x->shape[k];
    a->data = x->data;
    a->size = (size_t)atl_ndarray_numel(x) * types[dt].size;
    x->name = NULL;
    x->data = NULL;
    return ATL_OK;
}

/* A view of a public array as an internal one (nothing copied). */
static AtlStatus to_nd(const AtlArray *a, AtlNdArray *x, char *msg, size_t cap)
{
    memset(x, 0, sizeof *x);
    if (!known(a->dtype) || types[a->dtype].npy < 0)
        return say(msg, cap, ATL_ERR_INVALID, "array '%s': %s cannot be stored in .npy (convert it first, e.g. to float32)",
                   a->name ? a->name : "", atl_dtype_name(a->dtype));
    if (a->ndim < 0 || a->ndim > ATL_ARRAY_MAX_DIMS) return say(msg, cap, ATL_ERR_INVALID, "array rank %d out of range", a->ndim);
    uint64_t n = 1;
    for (int k = 0; k < a->ndim; k++) n *= a->dims[k];
    if (n * types[a->dtype].size != a->size)
        return say(msg, cap, ATL_ERR_SIZE, "array '%s': %zu bytes for %llu elements of %s", a->name ? a->name : "", a->size,
                   (unsigned long long)n, atl_dtype_name(a->dtype));
    x->name = a->name;
    x->dtype = (AtlNpyDtype)types[a->dtype].npy;
    x->ndim = a->ndim;
    for (int k = 0; k < a->ndim; k++) x->shape[k] = (int64_t)a->dims[k];
    x->data = a->data;
    return ATL_OK;
}

AtlStatus atl_npy_load(const char *path, AtlArray *a, char *msg, size_t cap)
{
    if (!path || !a) return say(msg, cap, ATL_ERR_INVALID, "atl_npy_load: no path or array");
    AtlNdArray x;
    AtlErr e;
    if (atl_npy_read(path, &x, &e)) { memset(a, 0, sizeof *a); return say(msg, cap, ATL_ERR_IO, "%s", e.msg); }
    AtlStatus s = from_nd(&x, a, msg, cap);
    atl_ndarray_free(&x);
    return s;
}

/* The public filter behind the internal reader's selection callback. */
typedef struct FilterCall {
    AtlArrayFilter filter;
    void *ctx;
} FilterCall;

static int call_filter(void *ctx, const char *key, uint64_t *max_bytes, AtlErr *e)
{
    const FilterCall *f = ctx;
    e->msg[0] = 0;
    int r = f->filter(f->ctx, key, max_bytes, e->msg, sizeof e->msg);
    if (r < 0 && !e->msg[0]) atl_fail(e, "member '%s' refused", key);
    return r;
}

AtlStatus atl_npz_load_only(const char *path, AtlArrayFilter filter, void *ctx, AtlArray **arrays, uint32_t *count,
                            char *msg, size_t cap)
{
    if (!path || !arrays || !count) return say(msg, cap, ATL_ERR_INVALID, "atl_npz_load: no path or list");
    *arrays = NULL;
    *count = 0;
    AtlNdArray *l;
    int n;
    AtlErr e;
    FilterCall fc = {filter, ctx};
    if (atl_npz_read_select(path, filter ? call_filter : NULL, &fc, &l, &n, &e)) return say(msg, cap, ATL_ERR_IO, "%s", e.msg);
    AtlArray *out = calloc((size_t)n + 1, sizeof *out);
    AtlStatus s = out ? ATL_OK : say(msg, cap, ATL_ERR_HOST_MEMORY, "out of memory");
    int k = 0;
    for (; k < n && !s; k++) s = from_nd(&l[k], &out[k], msg, cap);
    atl_ndarray_list_free(l, n);
    if (s) { atl_arrays_free(out, (uint32_t)k); return s; }
    *arrays = out;
    *count = (uint32_t)n;
    return ATL_OK;
}

AtlStatus atl_npz_load(const char *path, AtlArray **arrays, uint32_t *count, char *msg, size_t cap)
{
    return atl_npz_load_only(path, NULL, NULL, arrays, count, msg, cap);
}

AtlStatus atl_npy_save(const char *path, const AtlArray *a, char *msg, size_t cap)
{
    if (!path || !a) return say(msg, cap, ATL_ERR_INVALID, "atl_npy_save: no path or array");
    AtlNdArray x;
    AtlErr e;
    AtlStatus s = to_nd(a, &x, msg, cap);
    if (!s && atl_npy_write(path, &x, &e)) s = say(msg, cap, ATL_ERR_IO, "%s", e.msg);
    return s;
}

AtlStatus atl_npz_save(const char *path, const AtlArray *arrays, uint32_t count, char *msg, size_t cap)
{
    if (!path || (count && !arrays)) return say(msg, cap, ATL_ERR_INVALID, "atl_npz_save: no path or arrays");
    AtlNdArray *x = calloc((size_t)count + 1, sizeof *x);
    if (!x) return say(msg, cap, ATL_ERR_HOST_MEMORY, "out of memory");
    AtlStatus s = ATL_OK;
    for (uint32_t i = 0; i < count && !s; i++) s = to_nd(&arrays[i], &x[i], msg, cap);
    AtlErr e;
    if (!s && atl_npz_write(path, x, (int)count, &e)) s = say(msg, cap, ATL_ERR_IO, "%s", e.msg);
    free(x);
    return s;
}

void atl_array_free(AtlArray *a)
{
    if (!a) return;
    free(a->name);
    free(a->data);
    memset(a, 0, sizeof *a);
}

void atl_arrays_free(AtlArray *arrays, uint32_t count)
{
    for (uint32_t i = 0; arrays && i < count; i++) atl_array_free(&arrays[i]);
    free(arrays);
}
