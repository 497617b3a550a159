/* test_file.c - atomic writes and whole-file reads. */
#include <stdlib.h>
#include <unistd.h>
#include "test/test.h"
#include "util/file.h"

TEST(write_then_read_round_trips)
{
    char path[] = "/tmp/atoll_test_fileXXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    AtlErr e;
    CHECK(atl_write_file_atomic(path, "hello", 5, &e) == 0);
    unsigned char *d; size_t n;
    REQUIRE(atl_read_file(path, &d, &n, &e) == 0);
    CHECK_EQ_INT(n, 5);
    CHECK(memcmp(d, "hello", 5) == 0 && d[5] == 0);
    free(d);
    remove(path);
}

TEST(missing_file_names_the_path)
{
    AtlErr e;
    unsigned char *d; size_t n;
    CHECK(atl_read_file("/nonexistent/x.bin", &d, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "/nonexistent/x.bin");
}

TEST(abort_leaves_no_file)
{
    AtlOutFile o;
    AtlErr e;
    const char *p = "/tmp/atoll_test_abort.out";
    remove(p);
    REQUIRE(atl_out_open(&o, p, &e) == 0);
    fputs("partial", o.fp);
    atl_out_abort(&o);
    CHECK(access(p, F_OK) != 0);
    CHECK(access(o.tmp, F_OK) != 0);
}

int main(void)
{
    RUN(write_then_read_round_trips);
    RUN(missing_file_names_the_path);
    RUN(abort_leaves_no_file);
    return test_summary("test_file");
}
