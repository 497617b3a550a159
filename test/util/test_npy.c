/* test_npy.c - .npy/.npz: reading files written by NumPy (test/data, made by
 * test/data/gen_npy.py), byte-identical .npy encoding, round trips of every
 * dtype through .npy and deflated .npz, and the error cases. */
#include "test/test.h"
#include "util/npy.h"
#include "util/file.h"
#include <stdlib.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/stat.h>

static char tmpdir[256];
static const char *tmp(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

TEST(reads_numpy_float32)
{
    AtlNdArray a;
    AtlErr e = {{0}};
    REQUIRE(atl_npy_read("test/data/np_f32.npy", &a, &e) == 0);
    CHECK_EQ_INT(a.dtype, ATL_NPY_F32);
    CHECK_EQ_INT(a.ndim, 2);
    CHECK_EQ_INT(a.shape[0], 2);
    CHECK_EQ_INT(a.shape[1], 3);
    CHECK_NEAR(((float *)a.data)[5], 2.5, 0);
    atl_ndarray_free(&a);
}

TEST(reads_numpy_other_dtypes)
{
    AtlNdArray a;
    AtlErr e = {{0}};
    REQUIRE(atl_npy_read("test/data/np_f16.npy", &a, &e) == 0);
    CHECK_EQ_INT(a.dtype, ATL_NPY_F16);
    CHECK_EQ_INT(((uint16_t *)a.data)[0], 0x3c00); /* 1.0 */
    CHECK_EQ_INT(((uint16_t *)a.data)[2], 0x7bff); /* 65504 */
    atl_ndarray_free(&a);
    REQUIRE(atl_npy_read("test/data/np_i64.npy", &a, &e) == 0);
    CHECK_EQ_INT(a.dtype, ATL_NPY_I64);
    CHECK_EQ_INT(((int64_t *)a.data)[0], -1);
    CHECK_EQ_INT(((int64_t *)a.data)[1], (int64_t)1 << 40);
    atl_ndarray_free(&a);
    REQUIRE(atl_npy_read("test/data/np_bool.npy", &a, &e) == 0);
    CHECK_EQ_INT(a.dtype, ATL_NPY_BOOL);
    CHECK_EQ_INT(((uint8_t *)a.data)[1], 0);
    CHECK_EQ_INT(((uint8_t *)a.data)[2], 1);
    atl_ndarray_free(&a);
    REQUIRE(atl_npy_read("test/data/np_scalar.npy", &a, &e) == 0);
    CHECK_EQ_INT(a.ndim, 0);
    CHECK_EQ_INT(((int32_t *)a.data)[0], 3);
    atl_ndarray_free(&a);
}

TEST(encoding_matches_numpy_bytes)
{
    unsigned char *want;
    size_t wn;
    AtlErr e = {{0}};
    REQUIRE(atl_read_file("test/data/np_f32.npy", &want, &wn, &e) == 0);
    AtlNdArray a;
    REQUIRE(atl_npy_parse(want, wn, "f32", &a, &e) == 0);
    uint8_t *got;
    size_t gn;
    REQUIRE(atl_npy_encode(&a, &got, &gn, &e) == 0);
    CHECK_EQ_INT(gn, wn);
    CHECK(gn == wn && memcmp(got, want, gn) == 0);
    free(got);
    free(want);
    atl_ndarray_free(&a);
}

TEST(reads_numpy_npz_stored_and_deflated)
{
    AtlNdArray *l;
    int n;
    AtlErr e = {{0}};
    REQUIRE(atl_npz_read("test/data/np_stored.npz", &l, &n, &e) == 0);
    REQUIRE(n == 2);
    CHECK(!strcmp(l[0].name, "a"));
    CHECK_EQ_INT(l[0].dtype, ATL_NPY_U8);
    CHECK_EQ_INT(((uint8_t *)l[0].data)[3], 3);
    CHECK(!strcmp(l[1].name, "b"));
    CHECK_EQ_INT(((int8_t *)l[1].data)[2], -3);
    atl_ndarray_list_free(l, n);
    REQUIRE(atl_npz_read("test/data/np_deflated.npz", &l, &n, &e) == 0);
    REQUIRE(n == 2);
    CHECK(!strcmp(l[0].name, "x"));
    CHECK_EQ_INT(l[0].shape[0], 10);
    CHECK_NEAR(((float *)l[0].data)[99], 1.0, 0);
    CHECK_EQ_INT(((int32_t *)l[1].data)[4], 4);
    atl_ndarray_list_free(l, n);
}

TEST(round_trip_every_dtype)
{
    AtlErr e = {{0}};
    AtlNdArray arrs[ATL_NPY_NDTYPES];
    char names[ATL_NPY_NDTYPES][16];
    for (int d = 0; d < ATL_NPY_NDTYPES; d++) {
        memset(&arrs[d], 0, sizeof arrs[d]);
        snprintf(names[d], sizeof names[d], "t%d", d);
        arrs[d].name = names[d];
        arrs[d].dtype = (AtlNpyDtype)d;
        arrs[d].ndim = 3;
        arrs[d].shape[0] = 2; arrs[d].shape[1] = 3; arrs[d].shape[2] = 5;
        REQUIRE(atl_ndarray_alloc(&arrs[d], &e) == 0);
        size_t nb = 30 * atl_npy_dtype_size((AtlNpyDtype)d);
        for (size_t i = 0; i < nb; i++) ((uint8_t *)arrs[d].data)[i] = (uint8_t)(i * 7 + (size_t)d);
        if (d == ATL_NPY_BOOL) for (size_t i = 0; i < nb; i++) ((uint8_t *)arrs[d].data)[i] &= 1;
        AtlNdArray back;
        REQUIRE(atl_npy_write(tmp("one.npy"), &arrs[d], &e) == 0);
        REQUIRE(atl_npy_read(tmp("one.npy"), &back, &e) == 0);
        CHECK_EQ_INT(back.dtype, d);
        CHECK_EQ_INT(back.ndim, 3);
        CHECK_EQ_INT(back.shape[2], 5);
        CHECK(memcmp(back.data, arrs[d].data, nb) == 0);
        atl_ndarray_free(&back);
    }
    REQUIRE(atl_npz_write(tmp("all.npz"), arrs, ATL_NPY_NDTYPES, &e) == 0);
    AtlNdArray *l;
    int n;
    REQUIRE(atl_npz_read(tmp("all.npz"), &l, &n, &e) == 0);
    CHECK_EQ_INT(n, ATL_NPY_NDTYPES);
    for (int d = 0; d < n && d < ATL_NPY_NDTYPES; d++) {
        CHECK(!strcmp(l[d].name, names[d]));
        CHECK(memcmp(l[d].data, arrs[d].data, 30 * atl_npy_dtype_size((AtlNpyDtype)d)) == 0);
    }
    atl_ndarray_list_free(l, n);
    for (int d = 0; d < ATL_NPY_NDTYPES; d++) free(arrs[d].data);
}

TEST(errors)
{
    AtlNdArray a;
    AtlErr e = {{0}};
    CHECK(atl_npy_read("test/data/np_fortran.npy", &a, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "Fortran");
    /* float64 reads (numpy's default float), complex does not */
    REQUIRE(atl_npy_read("test/data/np_f64.npy", &a, &e) == 0);
    CHECK_EQ_INT(a.dtype, ATL_NPY_F64);
    CHECK(a.ndim == 1 && a.shape[0] == 2 && ((double *)a.data)[1] == 1.0);
    atl_ndarray_free(&a);
    const char *dict = "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }";
    uint8_t hdr[10 + 118 + 8];
    memcpy(hdr, "\x93NUMPY\x01\x00\x76\x00", 10);
    memset(hdr + 10, ' ', 118);
    memcpy(hdr + 10, dict, strlen(dict));
    hdr[10 + 117] = '\n';
    memset(hdr + 128, 0, 8);
    CHECK(atl_npy_parse(hdr, sizeof hdr, "c8", &a, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "'<c8' is not supported");
    CHECK(atl_npy_parse((const uint8_t *)"hello world", 11, "junk", &a, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "bad magic");
    /* truncated data */
    unsigned char *buf;
    size_t n;
    REQUIRE(atl_read_file("test/data/np_f32.npy", &buf, &n, &e) == 0);
    CHECK(atl_npy_parse(buf, n - 1, "cut", &a, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "truncated");
    CHECK(atl_npy_parse(buf, 40, "cut", &a, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "header length");
    free(buf);
    /* corrupt npz: flip a byte of deflated data -> CRC or inflate error */
    REQUIRE(atl_read_file("test/data/np_deflated.npz", &buf, &n, &e) == 0);
    buf[60] ^= 0x55;
    REQUIRE(atl_write_file_atomic(tmp("bad.npz"), buf, n, &e) == 0);
    AtlNdArray *l;
    int cnt;
    CHECK(atl_npz_read(tmp("bad.npz"), &l, &cnt, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "bad.npz");
    REQUIRE(atl_write_file_atomic(tmp("short.npz"), buf, 100, &e) == 0);
    CHECK(atl_npz_read(tmp("short.npz"), &l, &cnt, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "end-of-central-directory");
    free(buf);
    /* duplicate names */
    AtlNdArray two[2] = {{.name = "x", .dtype = ATL_NPY_U8, .ndim = 1, .shape = {1}}, {.name = "x", .dtype = ATL_NPY_U8, .ndim = 1, .shape = {1}}};
    uint8_t v = 1;
    two[0].data = two[1].data = &v;
    CHECK(atl_npz_write(tmp("dup.npz"), two, 2, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "used twice");
    CHECK(access(tmp("dup.npz"), F_OK) != 0);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/atoll_npy_%d", (int)getpid());
    mkdir(tmpdir, 0700);
    RUN(reads_numpy_float32);
    RUN(reads_numpy_other_dtypes);
    RUN(encoding_matches_numpy_bytes);
    RUN(reads_numpy_npz_stored_and_deflated);
    RUN(round_trip_every_dtype);
    RUN(errors);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) {}
    return test_summary("test_npy");
}
