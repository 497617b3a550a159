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

/* issue 15: a header claiming 2^30 elements over 8 bytes of data says
 * "truncated", before allocating 4 GiB */
TEST(truncated_before_allocating)
{
    AtlNdArray a;
    AtlErr e = {{0}};
    CHECK(atl_npy_read("test/data/harden/truncated_2p30.npy", &a, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "data is truncated: 8 bytes after the header, the shape needs 4294967296");
    CHECK(a.data == NULL);
}

/* issue 15: 200 central directory entries over one member, a member named
 * twice, and more inflated than the limit are refused */
TEST(npz_bombs_refused)
{
    AtlNdArray *l = NULL;
    int n = 0;
    AtlErr e = {{0}};
    CHECK(atl_npz_read("test/data/harden/npz_bomb_entries.npz", &l, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "member 'dup000.npy' shares its data with member 'x'");
    /* the same member name twice */
    AtlNdArray one = {.name = "x", .dtype = ATL_NPY_U8, .ndim = 1, .shape = {4}};
    uint8_t v[4] = {1, 2, 3, 4};
    one.data = v;
    unsigned char *buf;
    size_t len;
    REQUIRE(atl_npz_write(tmp("one.npz"), &one, 1, &e) == 0);
    REQUIRE(atl_read_file(tmp("one.npz"), &buf, &len, &e) == 0);
    /* one local record + central entry + end: repeat the central entry with the same name */
    size_t cd = (size_t)buf[len - 6] | (size_t)buf[len - 5] << 8, cdn = len - 22 - cd;
    unsigned char *two = malloc(len + cdn);
    REQUIRE(two);
    memcpy(two, buf, cd + cdn);
    memcpy(two + cd + cdn, buf + cd, cdn);
    memcpy(two + cd + 2 * cdn, buf + len - 22, 22);
    two[cd + 2 * cdn + 8] = two[cd + 2 * cdn + 10] = 2;   /* entries */
    two[cd + 2 * cdn + 12] = (unsigned char)(2 * cdn);     /* directory size */
    REQUIRE(atl_write_file_atomic(tmp("twice.npz"), two, len + cdn, &e) == 0);
    CHECK(atl_npz_read(tmp("twice.npz"), &l, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "member 'x.npy' appears twice");
    free(two);
    free(buf);
    /* the inflate limit where nothing is expected */
    setenv("ATOLL_MAX_INFLATE_BYTES", "100", 1);
    CHECK(atl_npz_read(tmp("one.npz"), &l, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "more than the limit of 100 bytes inflated from one .npz (raise with ATOLL_MAX_INFLATE_BYTES)");
    unsetenv("ATOLL_MAX_INFLATE_BYTES");
    REQUIRE(atl_npz_read(tmp("one.npz"), &l, &n, &e) == 0);
    atl_ndarray_list_free(l, n);
}

/* selection: members skipped are never inflated, a size beyond what the
 * caller expects is refused, and the caller may refuse a name */
static int pick(void *ctx, const char *key, uint64_t *max, AtlErr *e)
{
    (void)ctx;
    if (!strcmp(key, "a")) { *max = atl_npy_max_file_bytes(4); return 1; }
    if (!strcmp(key, "b")) return 0;
    return atl_fail(e, "no input '%s'", key);
}

TEST(npz_select)
{
    AtlNdArray *l = NULL;
    int n = 0;
    AtlErr e = {{0}};
    /* np_stored.npz: a uint8[4], b int8[2,2] */
    REQUIRE(atl_npz_read_select("test/data/np_stored.npz", pick, NULL, &l, &n, &e) == 0);
    CHECK_EQ_INT(n, 1);
    CHECK(n == 1 && !strcmp(l[0].name, "a"));
    atl_ndarray_list_free(l, n);
    CHECK(atl_npz_read_select("test/data/np_deflated.npz", pick, NULL, &l, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "np_deflated.npz: no input 'x'");
}

static int want_x_small(void *ctx, const char *key, uint64_t *max, AtlErr *e)
{
    (void)ctx; (void)e;
    *max = atl_npy_max_file_bytes(16);
    return !strcmp(key, "x");
}

TEST(npz_expected_size_checked_before_inflating)
{
    AtlNdArray *l = NULL;
    int n = 0;
    AtlErr e = {{0}};
    CHECK(atl_npz_read_select("test/data/harden/npz_bomb_64m.npz", want_x_small, NULL, &l, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "member 'x.npy' declares 67108992 bytes, more than the 65564 its array can take");
}

/* issue 15: an output named like a path is stored under a plain member name */
TEST(npz_member_names_sanitised)
{
    char out[64];
    atl_npz_member_name("../../../tmp/x", out, sizeof out);
    CHECK(!strcmp(out, ".._.._.._tmp_x"));
    atl_npz_member_name("a\\b\nc:0", out, sizeof out);
    CHECK(!strcmp(out, "a_b_c:0"));
    AtlNdArray two[2] = {{.name = "a/b", .dtype = ATL_NPY_U8, .ndim = 1, .shape = {1}}, {.name = "a_b", .dtype = ATL_NPY_U8, .ndim = 1, .shape = {1}}};
    uint8_t v = 1;
    two[0].data = two[1].data = &v;
    AtlErr e = {{0}};
    CHECK(atl_npz_write(tmp("clash.npz"), two, 2, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "arrays 'a/b' and 'a_b' would both be stored as member 'a_b.npy'");
    REQUIRE(atl_npz_write(tmp("path.npz"), two, 1, &e) == 0);
    AtlNdArray *l = NULL;
    int n = 0;
    REQUIRE(atl_npz_read(tmp("path.npz"), &l, &n, &e) == 0);
    CHECK(n == 1 && !strcmp(l[0].name, "a_b"));
    atl_ndarray_list_free(l, n);
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
    RUN(truncated_before_allocating);
    RUN(npz_bombs_refused);
    RUN(npz_select);
    RUN(npz_expected_size_checked_before_inflating);
    RUN(npz_member_names_sanitised);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) {}
    return test_summary("test_npy");
}
