/* test_file.c - atomic writes and whole-file reads; issue 15: only
 * regular files are read, never blocking on a FIFO and within a size
 * limit; outputs follow symbolic links, write FIFOs directly, say why a
 * write failed, and leave no temporary file behind a SIGTERM. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/sysmacros.h>
#endif
#include <unistd.h>
#include "test/test.h"
#include "util/file.h"

static char dir[64];
static const char *in_dir(const char *name)
{
    static char p[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

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

TEST(reads_regular_files_only)
{
    AtlErr e = {{0}};
    unsigned char *d = NULL;
    size_t n;
    CHECK(atl_read_file(dir, &d, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "is a directory; give a regular file");
    CHECK(atl_read_file("/dev/zero", &d, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "/dev/zero: is a character device");
    REQUIRE(mkfifo(in_dir("fifo"), 0600) == 0);
    alarm(20);   /* a read that blocks on the FIFO fails the test instead of hanging it */
    CHECK(atl_read_file(in_dir("fifo"), &d, &n, &e) == -1);
    alarm(0);
    CHECK_STR_CONTAINS(e.msg, "is a FIFO");
    FILE *fp;
    uint64_t size;
    errno = 0;
    CHECK(atl_open_regular(in_dir("absent"), &fp, &size, &e) == -1 && errno == ENOENT);
    CHECK_STR_CONTAINS(e.msg, "cannot open: No such file or directory");
}

TEST(read_limit)
{
    AtlErr e = {{0}};
    unsigned char *d = NULL;
    size_t n;
    REQUIRE(atl_write_file_atomic(in_dir("ten"), "0123456789", 10, &e) == 0);
    CHECK(atl_read_file_max(in_dir("ten"), 9, "tests", &d, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "is 10 bytes, more than the limit of 9 bytes for tests");
    setenv("ATOLL_MAX_FILE_BYTES", "8", 1);
    CHECK(atl_read_file(in_dir("ten"), &d, &n, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "raise with ATOLL_MAX_FILE_BYTES");
    unsetenv("ATOLL_MAX_FILE_BYTES");
    REQUIRE(atl_read_file(in_dir("ten"), &d, &n, &e) == 0);
    CHECK_EQ_INT(n, 10);
    free(d);
}

TEST(output_follows_symlink)
{
    AtlErr e = {{0}};
    REQUIRE(symlink("real.out", in_dir("link.out")) == 0);
    REQUIRE(atl_write_file_atomic(in_dir("link.out"), "abc", 3, &e) == 0);
    struct stat st;
    CHECK(lstat(in_dir("link.out"), &st) == 0 && S_ISLNK(st.st_mode));
    unsigned char *d;
    size_t n;
    REQUIRE(atl_read_file(in_dir("real.out"), &d, &n, &e) == 0);
    CHECK(n == 3 && !memcmp(d, "abc", 3));
    free(d);
}

TEST(output_fifo_written_directly)
{
    AtlErr e = {{0}};
    REQUIRE(mkfifo(in_dir("out.fifo"), 0600) == 0);
    int rd = open(in_dir("out.fifo"), O_RDONLY | O_NONBLOCK);   /* a reader, so the writer's open does not wait */
    REQUIRE(rd >= 0);
    CHECK(atl_is_stream_file(in_dir("out.fifo")));
    REQUIRE(atl_write_file_atomic(in_dir("out.fifo"), "piped", 5, &e) == 0);
    char got[8] = {0};
    CHECK(read(rd, got, sizeof got) == 5 && !memcmp(got, "piped", 5));
    close(rd);
    struct stat st;
    CHECK(stat(in_dir("out.fifo"), &st) == 0 && S_ISFIFO(st.st_mode));
}

TEST(output_errors_say_why)
{
    AtlErr e = {{0}};
    /* a private /dev/full where we may make one (root): a regression that
     * renames over a device then replaces only the test's own node */
    const char *full = "/dev/full";
#ifdef __linux__
    if (mknod(in_dir("full"), S_IFCHR | 0666, makedev(1, 7)) == 0) full = in_dir("full");
#endif
    CHECK(atl_write_file_atomic(full, "x", 1, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "full: write error: No space left on device");
    struct stat st;
    CHECK(stat(full, &st) == 0 && S_ISCHR(st.st_mode));
    CHECK(atl_write_file_atomic(dir, "x", 1, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "is a directory");
    CHECK(atl_write_file_atomic("", "x", 1, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "output file name is empty");
    CHECK(atl_write_file_atomic(in_dir("nodir/x"), "x", 1, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "No such file or directory");
}

/* A SIGTERM during a write removes the temporary file (with the handlers
 * the front end installs), and the process still dies of the signal. */
TEST(signal_removes_temporary)
{
    const char *target = in_dir("interrupted.out");
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        AtlOutFile o;
        AtlErr e;
        atl_out_cleanup_on_signals();
        if (atl_out_open(&o, target, &e)) _exit(3);
        fputs("partial", o.fp);
        fflush(o.fp);
        raise(SIGTERM);
        _exit(4);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    char tmpname[256];
    snprintf(tmpname, sizeof tmpname, "%s.tmp.%ld", target, (long)pid);
    CHECK(access(tmpname, F_OK) != 0);
    CHECK(access(target, F_OK) != 0);
}

TEST(same_file)
{
    AtlErr e = {{0}};
    REQUIRE(atl_write_file_atomic(in_dir("s1"), "1", 1, &e) == 0);
    CHECK(atl_same_file(in_dir("s1"), in_dir("s1")));
    char other[160];
    snprintf(other, sizeof other, "%s/../%s/s1", dir, strrchr(dir, '/') + 1);
    CHECK(atl_same_file(in_dir("s1"), other));
    CHECK(!atl_same_file(in_dir("s1"), in_dir("s2")));
    CHECK(atl_same_file(in_dir("new"), in_dir("./new")));
    CHECK(!atl_same_file(in_dir("new"), in_dir("new2")));
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/atoll_test_file_%d", (int)getpid());
    mkdir(dir, 0700);
    RUN(reads_regular_files_only);
    RUN(read_limit);
    RUN(output_follows_symlink);
    RUN(output_fifo_written_directly);
    RUN(output_errors_say_why);
    RUN(signal_removes_temporary);
    RUN(same_file);
    RUN(write_then_read_round_trips);
    RUN(missing_file_names_the_path);
    RUN(abort_leaves_no_file);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {}
    return test_summary("test_file");
}
