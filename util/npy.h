/* npy.h - NumPy .npy and .npz tensor files, read and write.
 *
 * One array is an AtlNdArray {name, dtype, ndim, shape[8], data}: C order,
 * little-endian, data holds numel * atl_npy_dtype_size(dtype) bytes. Supported
 * dtypes: float32, float16, float64, int8, uint8, int16, uint16, int32,
 * uint32, int64, uint64, bool. Fortran-order
 * arrays, big-endian data and other dtypes are rejected with a message naming
 * the file and the dtype. An .npz is a zip of NAME.npy members; it is written
 * deflated (zlib, CRC-32 checked) and read whether members are stored or
 * deflated. All writes are atomic (util/file.h).
 */
#ifndef ATOLL_UTIL_NPY_H
#define ATOLL_UTIL_NPY_H
#include <stdint.h>
#include <stddef.h>
#include "util/err.h"

#define ATL_NPY_MAXDIM 8

typedef enum {
    ATL_NPY_F32, ATL_NPY_F16, ATL_NPY_I8, ATL_NPY_U8, ATL_NPY_I32, ATL_NPY_I64, ATL_NPY_BOOL,
    ATL_NPY_F64, ATL_NPY_I16, ATL_NPY_U16, ATL_NPY_U32, ATL_NPY_U64, ATL_NPY_NDTYPES
} AtlNpyDtype;

typedef struct AtlNdArray {
    char *name;                       /* npz member name without ".npy"; may be NULL for .npy */
    AtlNpyDtype dtype;
    int ndim;
    int64_t shape[ATL_NPY_MAXDIM];
    void *data;                       /* owned */
} AtlNdArray;

size_t atl_npy_dtype_size(AtlNpyDtype dt);
const char *atl_npy_dtype_name(AtlNpyDtype dt);   /* "float32", ... */
int64_t atl_ndarray_numel(const AtlNdArray *a);
/* Allocates zeroed data for a's dtype and shape. */
int atl_ndarray_alloc(AtlNdArray *a, AtlErr *e);
void atl_ndarray_free(AtlNdArray *a);             /* frees name and data */
void atl_ndarray_list_free(AtlNdArray *list, int n); /* and the array itself */

/* .npy from memory / file. `what` names the source in messages. */
int atl_npy_parse(const uint8_t *buf, size_t n, const char *what, AtlNdArray *a, AtlErr *e);
int atl_npy_read(const char *path, AtlNdArray *a, AtlErr *e);
/* Serialises to a malloc'd buffer (caller frees). */
int atl_npy_encode(const AtlNdArray *a, uint8_t **out, size_t *n, AtlErr *e);
int atl_npy_write(const char *path, const AtlNdArray *a, AtlErr *e);

/* .npz: *list is a malloc'd array of *n arrays (free with
 * atl_ndarray_list_free). Reading refuses a member name given twice, two
 * members sharing their data, a deflated size no deflate stream reaches,
 * and more than atl_limit(ATL_LIMIT_INFLATE_BYTES) inflated in all. */
int atl_npz_read(const char *path, AtlNdArray **list, int *n, AtlErr *e);
/* Which members to read when the caller knows what it expects: for each
 * member (by key, the name without ".npy") select returns 1 to read it,
 * with *max_bytes its largest acceptable .npy size (0: no expectation, the
 * inflate limit applies), 0 to skip it without inflating, or -1 with e set
 * to refuse the file. */
typedef int (*AtlNpzSelect)(void *ctx, const char *key, uint64_t *max_bytes, AtlErr *e);
int atl_npz_read_select(const char *path, AtlNpzSelect select, void *ctx, AtlNdArray **list, int *n, AtlErr *e);
/* Largest .npy file (header and data) holding data_bytes of array data. */
uint64_t atl_npy_max_file_bytes(uint64_t data_bytes);
/* Names must be unique and non-empty. A member is stored as NAME.npy with
 * '/', '\' and control characters of NAME replaced by '_' (an output named
 * "../../x" must not become a path when the archive is unpacked); two names
 * that become the same member are refused. */
int atl_npz_write(const char *path, const AtlNdArray *list, int n, AtlErr *e);
/* The member name (without ".npy") atl_npz_write stores `name` under. */
void atl_npz_member_name(const char *name, char *out, size_t cap);
#endif
