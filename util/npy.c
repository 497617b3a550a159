/* npy.c - .npy / .npz reading and writing (see npy.h). The .npy header is a
 * Python dict literal; we write exactly what NumPy writes and parse the
 * three keys we need tolerantly. The zip side handles stored and deflated
 * members, zip64 size fields in the central directory, and verifies CRC-32. */
#include "util/npy.h"
#include "util/file.h"
#include "util/limits.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const struct { const char *name; const char *descr; size_t size; } npy_types[ATL_NPY_NDTYPES] = {
    {"float32", "<f4", 4}, {"float16", "<f2", 2}, {"int8", "|i1", 1}, {"uint8", "|u1", 1},
    {"int32", "<i4", 4}, {"int64", "<i8", 8}, {"bool", "|b1", 1},
    {"float64", "<f8", 8}, {"int16", "<i2", 2}, {"uint16", "<u2", 2}, {"uint32", "<u4", 4}, {"uint64", "<u8", 8},
};

size_t atl_npy_dtype_size(AtlNpyDtype dt) { return (unsigned)dt < ATL_NPY_NDTYPES ? npy_types[dt].size : 0; }
const char *atl_npy_dtype_name(AtlNpyDtype dt) { return (unsigned)dt < ATL_NPY_NDTYPES ? npy_types[dt].name : "invalid"; }

int64_t atl_ndarray_numel(const AtlNdArray *a)
{
    int64_t n = 1;
    for (int i = 0; i < a->ndim; i++) n *= a->shape[i];
    return n;
}

int atl_ndarray_alloc(AtlNdArray *a, AtlErr *e)
{
    if (a->ndim < 0 || a->ndim > ATL_NPY_MAXDIM) return atl_fail(e, "array rank %d is out of range (0..8)", a->ndim);
    int64_t n = 1;
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] < 0 || (a->shape[i] && n > ((int64_t)1 << 40) / a->shape[i]))
            return atl_fail(e, "array shape dimension %d (%lld) is out of range", i, (long long)a->shape[i]);
        n *= a->shape[i];
    }
    size_t es = atl_npy_dtype_size(a->dtype);
    if (!es) return atl_fail(e, "invalid array dtype %d", (int)a->dtype);
    if ((uint64_t)n * es > ((uint64_t)1 << 36)) return atl_fail(e, "array of %lld elements is too large", (long long)n);
    a->data = calloc((size_t)(n ? n : 1), es);
    if (!a->data) return atl_fail(e, "out of memory for an array of %lld elements", (long long)n);
    return 0;
}

void atl_ndarray_free(AtlNdArray *a)
{
    if (!a) return;
    free(a->name);
    free(a->data);
    a->name = NULL;
    a->data = NULL;
}

void atl_ndarray_list_free(AtlNdArray *list, int n)
{
    if (!list) return;
    for (int i = 0; i < n; i++) atl_ndarray_free(&list[i]);
    free(list);
}

/* ---- .npy ---- */

/* Finds 'key' in the header dict and returns a pointer after its colon. */
static const char *dict_value(const char *h, const char *key)
{
    char pat[40];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p) {
        snprintf(pat, sizeof pat, "\"%s\"", key);
        p = strstr(h, pat);
    }
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

int atl_npy_parse(const uint8_t *buf, size_t n, const char *what, AtlNdArray *a, AtlErr *e)
{
    memset(a, 0, sizeof *a);
    if (n < 10 || memcmp(buf, "\x93NUMPY", 6))
        return atl_fail(e, "%s: not a .npy file (bad magic)", what);
    int major = buf[6];
    size_t hl, off;
    if (major == 1) { hl = (size_t)buf[8] | (size_t)buf[9] << 8; off = 10; }
    else if (major == 2 || major == 3) {
        if (n < 12) return atl_fail(e, "%s: truncated .npy header", what);
        hl = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        off = 12;
    } else return atl_fail(e, "%s: unsupported .npy format version %d", what, major);
    if (hl > n - off) return atl_fail(e, "%s: .npy header length %zu runs past the end of the file (%zu bytes)", what, hl, n);
    char *h = malloc(hl + 1);
    if (!h) return atl_fail(e, "%s: out of memory", what);
    memcpy(h, buf + off, hl);
    h[hl] = 0;
    int rc = -1;
    const char *v = dict_value(h, "descr");
    if (!v || (*v != '\'' && *v != '"')) { atl_fail(e, "%s: .npy header has no 'descr'", what); goto out; }
    char descr[32];
    size_t k = 0;
    char q = *v++;
    while (*v && *v != q && k < sizeof descr - 1) descr[k++] = *v++;
    descr[k] = 0;
    if (*v != q) { atl_fail(e, "%s: .npy header 'descr' is not a simple dtype string", what); goto out; }
    int dt = -1;
    for (int i = 0; i < ATL_NPY_NDTYPES; i++) {
        const char *d = npy_types[i].descr;
        if (!strcmp(descr, d) || (descr[0] && strchr("<|=", descr[0]) && !strcmp(descr + 1, d + 1))) dt = i;
    }
    if (dt < 0) {
        atl_fail(e, "%s: dtype '%s' is not supported (float16/32/64, int8/16/32/64, uint8/16/32/64, bool; little-endian)", what, descr);
        goto out;
    }
    v = dict_value(h, "fortran_order");
    if (!v) { atl_fail(e, "%s: .npy header has no 'fortran_order'", what); goto out; }
    if (!strncmp(v, "True", 4)) { atl_fail(e, "%s: Fortran-order arrays are not supported; save with C order (np.ascontiguousarray)", what); goto out; }
    if (strncmp(v, "False", 5)) { atl_fail(e, "%s: bad 'fortran_order' value", what); goto out; }
    v = dict_value(h, "shape");
    if (!v || *v != '(') { atl_fail(e, "%s: .npy header has no 'shape' tuple", what); goto out; }
    v++;
    a->dtype = (AtlNpyDtype)dt;
    for (;;) {
        while (*v == ' ' || *v == ',') v++;
        if (*v == ')') break;
        if (*v < '0' || *v > '9') { atl_fail(e, "%s: bad 'shape' in .npy header", what); goto out; }
        if (a->ndim == ATL_NPY_MAXDIM) { atl_fail(e, "%s: more than %d dimensions", what, ATL_NPY_MAXDIM); goto out; }
        char *end;
        long long d = strtoll(v, &end, 10);
        if (d < 0 || d > ((long long)1 << 40)) { atl_fail(e, "%s: shape dimension out of range", what); goto out; }
        a->shape[a->ndim++] = d;
        v = end;
        while (*v == 'L') v++;
    }
    /* the data the shape needs must be there before anything is allocated */
    uint64_t numel = 1;
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] && numel > ((uint64_t)1 << 40) / (uint64_t)a->shape[i]) {
            atl_fail(e, "%s: shape has more than 2^40 elements", what);
            goto out;
        }
        numel *= (uint64_t)a->shape[i];
    }
    uint64_t bytes = numel * atl_npy_dtype_size(a->dtype);
    if ((uint64_t)(n - off - hl) < bytes) {
        atl_fail(e, "%s: data is truncated: %zu bytes after the header, the shape needs %llu", what, n - off - hl,
                 (unsigned long long)bytes);
        goto out;
    }
    if (atl_ndarray_alloc(a, e)) { atl_err_prefix(e, "%s", what); goto out; }
    memcpy(a->data, buf + off + hl, (size_t)bytes);
    rc = 0;
out:
    free(h);
    return rc;
}

int atl_npy_read(const char *path, AtlNdArray *a, AtlErr *e)
{
    unsigned char *buf;
    size_t n;
    memset(a, 0, sizeof *a);
    if (atl_read_file(path, &buf, &n, e)) return -1;
    int rc = atl_npy_parse(buf, n, path, a, e);
    free(buf);
    return rc;
}

int atl_npy_encode(const AtlNdArray *a, uint8_t **out, size_t *n, AtlErr *e)
{
    if ((unsigned)a->dtype >= ATL_NPY_NDTYPES) return atl_fail(e, "invalid dtype %d", (int)a->dtype);
    if (a->ndim < 0 || a->ndim > ATL_NPY_MAXDIM) return atl_fail(e, "rank %d is out of range", a->ndim);
    char h[512];
    int k = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_types[a->dtype].descr);
    for (int i = 0; i < a->ndim; i++) k += snprintf(h + k, sizeof h - (size_t)k, "%lld,%s", (long long)a->shape[i], i + 1 < a->ndim ? " " : "");
    if (a->ndim > 1) k--; /* numpy writes (2, 3) but (5,) */
    k += snprintf(h + k, sizeof h - (size_t)k, "), }");
    size_t total = 10 + (size_t)k + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hl = (size_t)k + pad + 1;
    size_t bytes = (size_t)atl_ndarray_numel(a) * atl_npy_dtype_size(a->dtype);
    uint8_t *b = malloc(10 + hl + bytes);
    if (!b) return atl_fail(e, "out of memory encoding .npy");
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (uint8_t)(hl & 255);
    b[9] = (uint8_t)(hl >> 8);
    memcpy(b + 10, h, (size_t)k);
    memset(b + 10 + k, ' ', pad);
    b[10 + hl - 1] = '\n';
    if (bytes) memcpy(b + 10 + hl, a->data, bytes);
    *out = b;
    *n = 10 + hl + bytes;
    return 0;
}

int atl_npy_write(const char *path, const AtlNdArray *a, AtlErr *e)
{
    uint8_t *b;
    size_t n;
    if (atl_npy_encode(a, &b, &n, e)) return atl_err_prefix(e, "%s", path);
    int rc = atl_write_file_atomic(path, b, n, e);
    free(b);
    return rc;
}

/* ---- .npz (zip) ---- */

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void wr32(uint8_t *p, uint32_t v) { wr16(p, v & 0xffff); wr16(p + 2, v >> 16); }

static int inflate_raw(const uint8_t *src, size_t sn, uint8_t *dst, size_t dn)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK) return -1;
    z.next_in = (Bytef *)(uintptr_t)src;
    z.avail_in = (uInt)sn;
    z.next_out = dst;
    z.avail_out = (uInt)dn;
    int r = inflate(&z, Z_FINISH);
    size_t got = dn - z.avail_out;
    inflateEnd(&z);
    return (r == Z_STREAM_END && got == dn) ? 0 : -1;
}

/* Member names are keys: the name without ".npy". */
static void member_key(const char *name, char *key, size_t cap)
{
    snprintf(key, cap, "%s", name);
    size_t L = strlen(key);
    if (L > 4 && !strcmp(key + L - 4, ".npy")) key[L - 4] = 0;
}

/* The .npy bytes (header and data) an array of `data_bytes` may take: NumPy
 * headers are under 64 KiB unless the shape is absurd. */
uint64_t atl_npy_max_file_bytes(uint64_t data_bytes) { return data_bytes + 65536 + 12; }

int atl_npz_read_select(const char *path, AtlNpzSelect select, void *ctx, AtlNdArray **list, int *n, AtlErr *e)
{
    unsigned char *buf;
    size_t len;
    *list = NULL;
    *n = 0;
    if (atl_read_file(path, &buf, &len, e)) return -1;
    int rc = -1, cnt = 0;
    AtlNdArray *arr = NULL;
    uint64_t *starts = NULL;           /* local header offset of each member read, to refuse overlaps */
    uint64_t budget = atl_limit(ATL_LIMIT_INFLATE_BYTES);   /* for members without an expected size */
    /* end of central directory: scan back for its signature */
    size_t eocd = (size_t)-1;
    for (size_t i = len >= 22 ? len - 22 : 0; len >= 22; i--) {
        if (rd32(buf + i) == 0x06054b50) { eocd = i; break; }
        if (i == 0 || len - i > 65557) break;
    }
    if (eocd == (size_t)-1) { atl_fail(e, "%s: not a zip/.npz file (no end-of-central-directory record)", path); goto out; }
    uint32_t entries = rd16(buf + eocd + 10);
    uint64_t cd = rd32(buf + eocd + 16);
    if (cd > len) { atl_fail(e, "%s: central directory offset %llu is past the end of the file", path, (unsigned long long)cd); goto out; }
    arr = calloc((size_t)entries + 1, sizeof *arr);
    starts = calloc((size_t)entries + 1, sizeof *starts);
    if (!arr || !starts) { atl_fail(e, "%s: out of memory", path); goto out; }
    size_t p = (size_t)cd;
    for (uint32_t i = 0; i < entries; i++) {
        if (p + 46 > len || rd32(buf + p) != 0x02014b50) { atl_fail(e, "%s: byte %zu: bad central directory entry %u", path, p, i); goto out; }
        uint32_t method = rd16(buf + p + 10), crc = rd32(buf + p + 16);
        uint64_t csize = rd32(buf + p + 20), usize = rd32(buf + p + 24);
        uint32_t nl = rd16(buf + p + 28), xl = rd16(buf + p + 30), cl = rd16(buf + p + 32);
        uint64_t lho = rd32(buf + p + 42);
        if (p + 46 + nl + xl + cl > len) { atl_fail(e, "%s: byte %zu: central directory entry %u is truncated", path, p, i); goto out; }
        /* zip64 extra field: sizes/offset that are 0xffffffff live there */
        for (size_t x = p + 46 + nl; x + 4 <= p + 46 + nl + xl;) {
            uint32_t id = rd16(buf + x), sz = rd16(buf + x + 2);
            if (x + 4 + sz > p + 46 + nl + xl) break;
            if (id == 1) {
                size_t q = x + 4, qe = x + 4 + sz;
                if (usize == 0xffffffffu && q + 8 <= qe) { usize = rd64(buf + q); q += 8; }
                if (csize == 0xffffffffu && q + 8 <= qe) { csize = rd64(buf + q); q += 8; }
                if (lho == 0xffffffffu && q + 8 <= qe) { lho = rd64(buf + q); }
            }
            x += 4 + sz;
        }
        char name[512], key[512];
        size_t cn = nl < sizeof name - 1 ? nl : sizeof name - 1;
        memcpy(name, buf + p + 46, cn);
        name[cn] = 0;
        p += 46 + nl + xl + cl;
        member_key(name, key, sizeof key);
        for (int k = 0; k < cnt; k++)
            if (!strcmp(arr[k].name, key)) { atl_fail(e, "%s: member '%s' appears twice", path, name); goto out; }
        /* what the caller wants of it: its size checked before anything is inflated */
        uint64_t max = 0;
        int want = 1;
        if (select) {
            want = select(ctx, key, &max, e);
            if (want < 0) { atl_err_prefix(e, "%s", path); goto out; }
            if (!want) continue;   /* not needed: never inflated */
        }
        if (max && usize > max) {
            atl_fail(e, "%s: member '%s' declares %llu bytes, more than the %llu its array can take", path, name,
                     (unsigned long long)usize, (unsigned long long)max);
            goto out;
        }
        if (!max && usize > budget) {
            atl_fail(e, "%s: member '%s' declares %llu bytes; with the members before it that is more than the limit of "
                     "%llu bytes inflated from one .npz (raise with ATOLL_MAX_INFLATE_BYTES)", path, name,
                     (unsigned long long)usize, (unsigned long long)atl_limit(ATL_LIMIT_INFLATE_BYTES));
            goto out;
        }
        if (!max) budget -= usize;
        if (lho + 30 > len || rd32(buf + lho) != 0x04034b50) { atl_fail(e, "%s: member '%s': bad local header at byte %llu", path, name, (unsigned long long)lho); goto out; }
        for (int k = 0; k < cnt; k++)
            if (starts[k] == lho) { atl_fail(e, "%s: member '%s' shares its data with member '%s'", path, name, arr[k].name); goto out; }
        uint64_t data = lho + 30 + rd16(buf + lho + 26) + rd16(buf + lho + 28);
        if (data > len || csize > len - data) { atl_fail(e, "%s: member '%s': %llu bytes of data run past the end of the file", path, name, (unsigned long long)csize); goto out; }
        if (method == 8 && csize && usize / csize > 1032) {  /* deflate expands at most 1032:1 */
            atl_fail(e, "%s: member '%s': %llu deflated bytes cannot inflate to the %llu it declares", path, name,
                     (unsigned long long)csize, (unsigned long long)usize);
            goto out;
        }
        uint8_t *raw = malloc((size_t)usize + 1);
        if (!raw) { atl_fail(e, "%s: out of memory", path); goto out; }
        if (method == 0) {
            if (csize != usize) { free(raw); atl_fail(e, "%s: member '%s': stored sizes differ", path, name); goto out; }
            memcpy(raw, buf + data, (size_t)usize);
        } else if (method == 8) {
            if (inflate_raw(buf + data, (size_t)csize, raw, (size_t)usize)) { free(raw); atl_fail(e, "%s: member '%s': corrupt deflate data", path, name); goto out; }
        } else {
            free(raw);
            atl_fail(e, "%s: member '%s': compression method %u is not supported (stored or deflate only)", path, name, method);
            goto out;
        }
        if ((uint32_t)crc32(0L, raw, (uInt)usize) != crc) { free(raw); atl_fail(e, "%s: member '%s': CRC-32 mismatch", path, name); goto out; }
        char what[1100];
        snprintf(what, sizeof what, "%s:%s", path, name);
        int r = atl_npy_parse(raw, (size_t)usize, what, &arr[cnt], e);
        free(raw);
        if (r) goto out;
        arr[cnt].name = malloc(strlen(key) + 1);
        if (!arr[cnt].name) { cnt++; atl_fail(e, "%s: out of memory", path); goto out; }
        strcpy(arr[cnt].name, key);
        starts[cnt] = lho;
        cnt++;
    }
    *list = arr;
    *n = cnt;
    arr = NULL;
    rc = 0;
out:
    if (arr) atl_ndarray_list_free(arr, cnt);
    free(starts);
    free(buf);
    return rc;
}

int atl_npz_read(const char *path, AtlNdArray **list, int *n, AtlErr *e)
{
    return atl_npz_read_select(path, NULL, NULL, list, n, e);
}

void atl_npz_member_name(const char *name, char *out, size_t cap)
{
    size_t k = 0;
    for (; name[k] && k + 1 < cap; k++) {
        unsigned char c = (unsigned char)name[k];
        out[k] = c == '/' || c == '\\' || c < 0x20 || c == 0x7f ? '_' : (char)c;
    }
    out[k] = 0;
}

int atl_npz_write(const char *path, const AtlNdArray *list, int n, AtlErr *e)
{
    AtlOutFile o;
    for (int i = 0; i < n; i++) {
        if (!list[i].name || !list[i].name[0]) return atl_fail(e, "%s: array %d has no name", path, i);
        if (strlen(list[i].name) > 400) return atl_fail(e, "%s: array name '%.40s...' is too long", path, list[i].name);
        char a[420], b[420];
        atl_npz_member_name(list[i].name, a, sizeof a);
        for (int j = 0; j < i; j++) {
            if (!strcmp(list[i].name, list[j].name)) return atl_fail(e, "%s: array name '%s' is used twice", path, list[i].name);
            atl_npz_member_name(list[j].name, b, sizeof b);
            if (!strcmp(a, b))
                return atl_fail(e, "%s: arrays '%s' and '%s' would both be stored as member '%s.npy'", path, list[j].name,
                                list[i].name, a);
        }
    }
    uint8_t *cdir = malloc((size_t)n * 512 + 1);
    if (!cdir) return atl_fail(e, "out of memory");
    if (atl_out_open(&o, path, e)) { free(cdir); return -1; }
    size_t cdn = 0;
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        uint8_t *raw = NULL, *comp = NULL;
        size_t rn;
        if (atl_npy_encode(&list[i], &raw, &rn, e)) goto fail;
        uLong bound = compressBound((uLong)rn);
        comp = malloc(bound + 16);
        z_stream z;
        memset(&z, 0, sizeof z);
        if (!comp || deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) { free(raw); free(comp); atl_fail(e, "%s: deflate init failed", path); goto fail; }
        z.next_in = raw; z.avail_in = (uInt)rn; z.next_out = comp; z.avail_out = (uInt)(bound + 16);
        int zr = deflate(&z, Z_FINISH);
        size_t cn = (bound + 16) - z.avail_out;
        deflateEnd(&z);
        uint32_t crc = (uint32_t)crc32(0L, raw, (uInt)rn);
        free(raw);
        if (zr != Z_STREAM_END) { free(comp); atl_fail(e, "%s: deflate failed", path); goto fail; }
        if (rn >= 0xffffffffu || off >= 0xffffffffu) { free(comp); atl_fail(e, "%s: member '%s' is too large for a non-zip64 archive", path, list[i].name); goto fail; }
        char name[420];
        atl_npz_member_name(list[i].name, name, sizeof name - 4);
        strcat(name, ".npy");
        size_t nl = strlen(name);
        uint8_t lh[30] = {0};
        wr32(lh, 0x04034b50); wr16(lh + 4, 20); wr16(lh + 8, 8);
        wr16(lh + 10, 0); wr16(lh + 12, 0x21); /* 1980-01-01 00:00 */
        wr32(lh + 14, crc); wr32(lh + 18, (uint32_t)cn); wr32(lh + 22, (uint32_t)rn); wr16(lh + 26, (uint32_t)nl);
        errno = 0;
        int wok = fwrite(lh, 1, 30, o.fp) == 30 && fwrite(name, 1, nl, o.fp) == nl && fwrite(comp, 1, cn, o.fp) == cn;
        int err = errno;
        free(comp);
        if (!wok) { atl_fail(e, "%s: write error: %s", path, err ? strerror(err) : "short write"); goto fail; }
        uint8_t *c = cdir + cdn;
        memset(c, 0, 46);
        wr32(c, 0x02014b50); wr16(c + 4, 20); wr16(c + 6, 20); wr16(c + 10, 8);
        wr16(c + 14, 0x21); wr32(c + 16, crc); wr32(c + 20, (uint32_t)cn); wr32(c + 24, (uint32_t)rn);
        wr16(c + 28, (uint32_t)nl); wr32(c + 42, (uint32_t)off);
        memcpy(c + 46, name, nl);
        cdn += 46 + nl;
        off += 30 + nl + cn;
    }
    uint8_t end[22] = {0};
    wr32(end, 0x06054b50); wr16(end + 8, (uint32_t)n); wr16(end + 10, (uint32_t)n);
    wr32(end + 12, (uint32_t)cdn); wr32(end + 16, (uint32_t)off);
    errno = 0;
    if (fwrite(cdir, 1, cdn, o.fp) != cdn || fwrite(end, 1, 22, o.fp) != 22) {
        atl_fail(e, "%s: write error: %s", path, errno ? strerror(errno) : "short write");
        goto fail;
    }
    free(cdir);
    return atl_out_commit(&o, e);
fail:
    free(cdir);
    atl_out_abort(&o);
    return -1;
}
