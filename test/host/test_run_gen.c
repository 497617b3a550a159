/* test_run_gen.c - files for the `atoll run` CLI tests (test/cli/run.sh).
 *
 *   test_run_gen --write DIR      writes x.npy and in.npz (the input of the
 *                                 sample model, see test_host --write),
 *                                 x_f32.npy (wrong dtype), x_batch2.npy (no
 *                                 such variant), expect.npy (the reference)
 *   test_run_gen --compare OUT EXPECT.npy
 *                                 OUT (.npy, or .npz member "y") must equal
 *                                 EXPECT byte for byte; exit 0 or 1
 *   test_run_gen --close OUT.npy EXPECT.npy TOL
 *                                 float32 arrays of the same shape within
 *                                 absolute tolerance TOL; exit 0 or 1
 *   test_run_gen --extract IN.npz MEMBER OUT.npy
 *                                 copies one member of an .npz to an .npy
 *   test_run_gen --cast IN.npy float64|float32 OUT.npy
 *                                 a float array in another width (atl_convert)
 *   test_run_gen --scale IN.npy FACTOR OUT.npy
 *                                 a float64 array times FACTOR
 *   test_run_gen --repeat IN.npy N OUT.npy
 *                                 IN N times along dimension 0
 *   test_run_gen --vary IN.npy N OUT.npy
 *                                 N images from IN's first (float32), image k
 *                                 times 1 + k/8 plus k/16, so no two agree
 *   test_run_gen --noise DIMS OUT.npy
 *                                 a float32 array of shape DIMS (e.g.
 *                                 1x3x224x224), values in [-1, 1) from a
 *                                 fixed generator
 *   test_run_gen --take IN.npy K OUT.npy
 *                                 image K of IN alone (dimension 0 of size 1)
 *   test_run_gen                  self-test: writes the files to a temporary
 *                                 directory and reads them back
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/file.h"
#include "util/npy.h"
#include "atoll.h"
#include "test/host/model_build.h"
#include "test/test.h"

static int write_array(const char *dir, const char *name, AtlNpyDtype dt, int64_t rows, const void *data, size_t bytes, int npz, AtlErr *e)
{
    char path[4096];
    AtlNdArray a = { .name = (char *)"x", .dtype = dt, .ndim = 2, .shape = { rows, 64 }, .data = (void *)data };
    if (atl_ndarray_numel(&a) * (int64_t)atl_npy_dtype_size(dt) != (int64_t)bytes) return atl_fail(e, "%s: size mismatch", name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return npz ? atl_npz_write(path, &a, 1, e) : atl_npy_write(path, &a, e);
}

static int write_all(const char *dir, AtlErr *e)
{
    int8_t x[64], y[64], x2[128];
    float xf[64];
    for (int i = 0; i < 64; i++) { x[i] = (int8_t)(2 * i - 60); xf[i] = (float)x[i]; }
    memset(x2, 0, sizeof x2);
    mb_bias_init();
    mb_reference(x, y);
    return write_array(dir, "x.npy", ATL_NPY_I8, 1, x, 64, 0, e) || write_array(dir, "in.npz", ATL_NPY_I8, 1, x, 64, 1, e) ||
           write_array(dir, "x_f32.npy", ATL_NPY_F32, 1, xf, sizeof xf, 0, e) ||
           write_array(dir, "x_batch2.npy", ATL_NPY_I8, 2, x2, sizeof x2, 0, e) ||
           write_array(dir, "expect.npy", ATL_NPY_I8, 1, y, 64, 0, e) ? -1 : 0;
}

/* 0 when the arrays are equal in dtype, shape and bytes; else prints why. */
static int compare(const char *out, const char *expect)
{
    AtlErr e;
    AtlNdArray want, *got = NULL, *list = NULL;
    int n = 0, rc = 1;
    if (atl_npy_read(expect, &want, &e)) { printf("%s\n", e.msg); return 1; }
    AtlNdArray single;
    if (strstr(out, ".npz")) {
        if (atl_npz_read(out, &list, &n, &e)) { printf("%s\n", e.msg); atl_ndarray_free(&want); return 1; }
        for (int i = 0; i < n; i++)
            if (list[i].name && !strcmp(list[i].name, "y")) got = &list[i];
        if (!got) printf("%s has no member 'y'\n", out);
    } else if (atl_npy_read(out, &single, &e) == 0) {
        got = &single;
    } else {
        printf("%s\n", e.msg);
    }
    if (got) {
        size_t bytes = (size_t)atl_ndarray_numel(&want) * atl_npy_dtype_size(want.dtype);
        if (got->dtype != want.dtype || got->ndim != want.ndim || memcmp(got->shape, want.shape, sizeof want.shape) ||
            memcmp(got->data, want.data, bytes))
            printf("%s differs from %s\n", out, expect);
        else
            rc = 0;
        if (got == &single) atl_ndarray_free(&single);
    }
    atl_ndarray_list_free(list, n);
    atl_ndarray_free(&want);
    return rc;
}

/* 0 when two float32 .npy files have the same shape and values within tol. */
static int close_enough(const char *out, const char *expect, double tol)
{
    AtlErr e;
    AtlNdArray a, b;
    if (atl_npy_read(out, &a, &e)) { printf("%s\n", e.msg); return 1; }
    if (atl_npy_read(expect, &b, &e)) { printf("%s\n", e.msg); atl_ndarray_free(&a); return 1; }
    int rc = 1;
    if (a.dtype != ATL_NPY_F32 || b.dtype != ATL_NPY_F32 || a.ndim != b.ndim || memcmp(a.shape, b.shape, sizeof a.shape)) {
        printf("%s and %s differ in dtype or shape\n", out, expect);
    } else {
        const float *x = a.data, *y = b.data;
        int64_t n = atl_ndarray_numel(&a), worst = 0;
        double max = 0;
        for (int64_t i = 0; i < n; i++) {
            double d = fabs((double)x[i] - (double)y[i]);
            if (!(d <= max)) { max = d; worst = i; }
        }
        if (max <= tol) rc = 0;
        else printf("%s: element %lld is %g, expected %g (difference %g > %g)\n", out, (long long)worst,
                    (double)x[worst], (double)y[worst], max, tol);
    }
    atl_ndarray_free(&a);
    atl_ndarray_free(&b);
    return rc;
}

/* --noise: an input of any shape for the full-size models (no reference). */
static int noise(const char *dims, const char *out)
{
    AtlErr e;
    AtlNdArray a;
    memset(&a, 0, sizeof a);
    a.dtype = ATL_NPY_F32;
    for (const char *p = dims; *p && a.ndim < ATL_MAX_DIMS; a.ndim++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1) { printf("--noise '%s': dimensions are positive numbers joined by 'x'\n", dims); return 1; }
        a.shape[a.ndim] = v;
        p = *end == 'x' ? end + 1 : end;
    }
    if (atl_ndarray_alloc(&a, &e)) { printf("%s\n", e.msg); return 1; }
    uint32_t s = 12345;
    for (int64_t i = 0; i < atl_ndarray_numel(&a); i++) {
        s = s * 1103515245u + 12345u;
        ((float *)a.data)[i] = (float)((s >> 8) % 2000) / 1000.0f - 1.0f;
    }
    int rc = atl_npy_write(out, &a, &e) ? 1 : 0;
    if (rc) printf("%s\n", e.msg);
    free(a.data);
    return rc;
}

static int extract(const char *npz, const char *member, const char *out)
{
    AtlErr e;
    AtlNdArray *list;
    int n, rc = 1;
    if (atl_npz_read(npz, &list, &n, &e)) { printf("%s\n", e.msg); return 1; }
    for (int i = 0; i < n && rc; i++)
        if (list[i].name && !strcmp(list[i].name, member)) {
            rc = atl_npy_write(out, &list[i], &e) ? 1 : 0;
            if (rc) printf("%s\n", e.msg);
        }
    if (rc) printf("%s has no member '%s'\n", npz, member);
    atl_ndarray_list_free(list, n);
    return rc;
}

/* --cast, --scale, --repeat, --vary, --take: derived inputs for test/cli/everyday.sh. */
static int transform(const char *op, const char *in, const char *arg, const char *out)
{
    AtlErr e;
    AtlNdArray a, b;
    if (atl_npy_read(in, &a, &e)) { printf("%s\n", e.msg); return 1; }
    b = a;
    b.name = NULL;
    b.data = NULL;
    int64_t n = atl_ndarray_numel(&a);
    int rc = 1;
    if (!strcmp(op, "--cast")) {
        b.dtype = !strcmp(arg, "float64") ? ATL_NPY_F64 : ATL_NPY_F32;
        int from = a.dtype == ATL_NPY_F64 ? ATL_FP64 : ATL_FP32, to = b.dtype == ATL_NPY_F64 ? ATL_FP64 : ATL_FP32;
        rc = a.dtype != ATL_NPY_F32 && a.dtype != ATL_NPY_F64;
        if (!rc && !atl_ndarray_alloc(&b, &e)) rc = atl_convert(a.data, from, b.data, to, (size_t)n, NULL, 0) != ATL_OK;
    } else if (!strcmp(op, "--scale") && a.dtype == ATL_NPY_F64 && !atl_ndarray_alloc(&b, &e)) {
        for (int64_t i = 0; i < n; i++) ((double *)b.data)[i] = ((const double *)a.data)[i] * atof(arg);
        rc = 0;
    } else if (!strcmp(op, "--vary") && a.ndim >= 1 && a.dtype == ATL_NPY_F32 && atoi(arg) >= 1) {
        /* arg images, image k the first one times 1 + k/8 plus k/16: all different */
        b.shape[0] = atoi(arg);
        int64_t per = n / a.shape[0];
        if (!atl_ndarray_alloc(&b, &e)) {
            for (int64_t k = 0; k < b.shape[0]; k++)
                for (int64_t i = 0; i < per; i++)
                    ((float *)b.data)[k * per + i] = ((const float *)a.data)[i] * (1.0f + (float)k / 8) + (float)k / 16;
            rc = 0;
        }
    } else if (!strcmp(op, "--take") && a.ndim >= 1 && atoi(arg) >= 0 && atoi(arg) < a.shape[0]) {
        /* image arg alone (dimension 0 kept, of size 1) */
        b.shape[0] = 1;
        size_t bytes = (size_t)(n / a.shape[0]) * atl_npy_dtype_size(a.dtype);
        if (!atl_ndarray_alloc(&b, &e)) {
            memcpy(b.data, (const char *)a.data + (size_t)atoi(arg) * bytes, bytes);
            rc = 0;
        }
    } else if (!strcmp(op, "--repeat") && a.ndim >= 1 && atoi(arg) >= 1) {
        b.shape[0] = a.shape[0] * atoi(arg);
        size_t bytes = (size_t)n * atl_npy_dtype_size(a.dtype);
        if (!atl_ndarray_alloc(&b, &e)) {
            for (int k = 0; k < atoi(arg); k++) memcpy((char *)b.data + (size_t)k * bytes, a.data, bytes);
            rc = 0;
        }
    }
    if (!rc && atl_npy_write(out, &b, &e)) { printf("%s\n", e.msg); rc = 1; }
    else if (rc) printf("%s %s %s: not possible for this array\n", op, in, arg);
    atl_ndarray_free(&a);
    free(b.data);
    return rc;
}

static char tmpdir[64];

TEST(files_round_trip)
{
    AtlErr e;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/atoll_run_gen.XXXXXX");
    REQUIRE(mkdtemp(tmpdir) != NULL);
    CHECKF(write_all(tmpdir, &e) == 0, "%s", e.msg);
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/expect.npy", tmpdir);
    CHECK(compare(a, a) == 0);
    snprintf(b, sizeof b, "%s/x.npy", tmpdir);
    CHECK(compare(b, a) != 0);            /* the comparison can fail */
    snprintf(b, sizeof b, "%s/x_f32.npy", tmpdir);
    CHECK(close_enough(b, b, 0) == 0);
    CHECK(close_enough(a, b, 1) != 0);    /* int8 vs float32 */
    snprintf(a, sizeof a, "%s/in.npz", tmpdir);
    snprintf(b, sizeof b, "%s/x_again.npy", tmpdir);
    CHECK(extract(a, "x", b) == 0);
    snprintf(a, sizeof a, "%s/x.npy", tmpdir);
    CHECK(compare(b, a) == 0);
    CHECK(unlink(b) == 0);
    snprintf(a, sizeof a, "%s/in.npz", tmpdir);
    CHECK(extract(a, "nope", b) != 0);
    AtlNdArray in;
    snprintf(b, sizeof b, "%s/x_batch2.npy", tmpdir);
    CHECKF(atl_npy_read(b, &in, &e) == 0, "%s", e.msg);
    CHECK(in.dtype == ATL_NPY_I8 && in.ndim == 2 && in.shape[0] == 2 && in.shape[1] == 64);
    atl_ndarray_free(&in);
    /* derived arrays */
    char c[128];
    snprintf(a, sizeof a, "%s/x_f32.npy", tmpdir);
    snprintf(b, sizeof b, "%s/x_f64.npy", tmpdir);
    snprintf(c, sizeof c, "%s/x_f64s.npy", tmpdir);
    CHECK(transform("--cast", a, "float64", b) == 0);
    CHECK(transform("--scale", b, "2", c) == 0);
    AtlNdArray d64, f32;
    CHECKF(atl_npy_read(c, &d64, &e) == 0 && atl_npy_read(a, &f32, &e) == 0, "%s", e.msg);
    int same = d64.dtype == ATL_NPY_F64 && atl_ndarray_numel(&d64) == atl_ndarray_numel(&f32);
    for (int64_t i = 0; same && i < atl_ndarray_numel(&f32); i++)
        same = ((double *)d64.data)[i] == 2 * (double)((float *)f32.data)[i];
    CHECK(same);
    atl_ndarray_free(&d64);
    atl_ndarray_free(&f32);
    CHECK(transform("--cast", b, "float32", c) == 0);
    CHECK(close_enough(c, a, 0) == 0);
    CHECK(transform("--repeat", a, "3", c) == 0);
    CHECKF(atl_npy_read(c, &d64, &e) == 0 && atl_npy_read(a, &f32, &e) == 0, "%s", e.msg);
    CHECK(d64.shape[0] == 3 * f32.shape[0] && d64.dtype == ATL_NPY_F32);
    CHECK(!memcmp((char *)d64.data + 2 * atl_ndarray_numel(&f32) * 4, f32.data, (size_t)atl_ndarray_numel(&f32) * 4));
    atl_ndarray_free(&d64);
    atl_ndarray_free(&f32);
    CHECK(transform("--vary", a, "3", c) == 0);
    CHECKF(atl_npy_read(c, &d64, &e) == 0 && atl_npy_read(a, &f32, &e) == 0, "%s", e.msg);
    int64_t per = atl_ndarray_numel(&f32) / f32.shape[0];
    CHECK(d64.shape[0] == 3 && ((float *)d64.data)[2 * per] == ((float *)f32.data)[0] * 1.25f + 0.125f);
    atl_ndarray_free(&f32);
    CHECK(transform("--take", c, "2", b) == 0);     /* image 2 of the three alone */
    CHECKF(atl_npy_read(b, &f32, &e) == 0, "%s", e.msg);
    CHECK(f32.shape[0] == 1 && atl_ndarray_numel(&f32) == per && !memcmp(f32.data, (float *)d64.data + 2 * per, (size_t)per * 4));
    CHECK(transform("--take", c, "3", b) != 0);     /* there is no image 3 */
    CHECK(noise("2x3x5", b) == 0 && noise("2xx3", c) != 0 && noise("0", c) != 0);
    AtlNdArray nz;
    CHECKF(atl_npy_read(b, &nz, &e) == 0, "%s", e.msg);
    int in_range = nz.ndim == 3 && nz.shape[0] == 2 && nz.shape[2] == 5 && nz.dtype == ATL_NPY_F32, varied = 0;
    for (int64_t i = 0; in_range && i < 30; i++) {
        float v = ((float *)nz.data)[i];
        in_range = v >= -1 && v < 1;
        varied |= v != ((float *)nz.data)[0];
    }
    CHECK(in_range && varied);
    atl_ndarray_free(&nz);
    atl_ndarray_free(&d64);
    atl_ndarray_free(&f32);
    CHECK(transform("--scale", a, "2", c) != 0);    /* float32: refused */
    unlink(b);
    unlink(c);
    const char *names[] = { "x.npy", "in.npz", "x_f32.npy", "x_batch2.npy", "expect.npy" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(b, sizeof b, "%s/%s", tmpdir, names[i]);
        CHECKF(unlink(b) == 0, "%s was not written", b);
    }
    rmdir(tmpdir);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write")) {
        AtlErr e;
        if (write_all(argv[2], &e)) { fprintf(stderr, "test_run_gen: %s\n", e.msg); return 1; }
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "--compare")) return compare(argv[2], argv[3]);
    if (argc == 5 && !strcmp(argv[1], "--extract")) return extract(argv[2], argv[3], argv[4]);
    if (argc == 4 && !strcmp(argv[1], "--noise")) return noise(argv[2], argv[3]);
    if (argc == 5 && !strcmp(argv[1], "--close")) return close_enough(argv[2], argv[3], atof(argv[4]));
    if (argc == 5 && (!strcmp(argv[1], "--cast") || !strcmp(argv[1], "--scale") || !strcmp(argv[1], "--repeat") || !strcmp(argv[1], "--take") ||
                      !strcmp(argv[1], "--vary")))
        return transform(argv[1], argv[2], argv[3], argv[4]);
    RUN(files_round_trip);
    return test_summary("test_run_gen");
}
