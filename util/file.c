/* file.c - whole-file reads of regular files under a size limit, and
 * temp-then-rename writes that follow symbolic links and write devices and
 * FIFOs directly (see file.h).
 *
 * The one piece of process-wide state is the registry of temporary files
 * still open, which a signal handler must be able to reach: a fixed table
 * of slots, each claimed by one AtlOutFile between open and commit/abort. */
#include "util/file.h"
#include "util/limits.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- reading ---- */

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

int atl_open_regular(const char *path, FILE **fp, uint64_t *size, AtlErr *e)
{
    *fp = NULL;
    *size = 0;
    if (!path[0]) { atl_fail(e, "empty file name"); errno = ENOENT; return -1; }
    /* non-blocking: opening a FIFO must not wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        atl_fail(e, "%s: cannot open: %s", path, strerror(err));
        errno = err;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        atl_fail(e, "%s: cannot stat: %s", path, strerror(err));
        errno = err;
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        atl_fail(e, "%s: is %s; give a regular file", path, kind_of(st.st_mode));
        errno = EINVAL;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int err = errno;
        close(fd);
        atl_fail(e, "%s: cannot open: %s", path, strerror(err));
        errno = err;
        return -1;
    }
    *fp = f;
    *size = (uint64_t)st.st_size;
    return 0;
}

int atl_read_file_max(const char *path, uint64_t max, const char *what, unsigned char **data, size_t *size, AtlErr *e)
{
    *data = NULL;
    *size = 0;
    FILE *fp;
    uint64_t len;
    if (atl_open_regular(path, &fp, &len, e)) return -1;
    if (len > max || len >= SIZE_MAX) {
        fclose(fp);
        return atl_fail(e, "%s: is %llu bytes, more than the limit of %llu bytes%s%s", path, (unsigned long long)len,
                        (unsigned long long)max, what ? " for " : "", what ? what : "");
    }
    unsigned char *buf = malloc((size_t)len + 1);
    if (!buf) { fclose(fp); return atl_fail(e, "%s: out of memory for %llu bytes", path, (unsigned long long)len); }
    size_t n = len ? fread(buf, 1, (size_t)len, fp) : 0;
    int err = ferror(fp) ? errno : 0;
    fclose(fp);
    if (err || n != len) {
        free(buf);
        return atl_fail(e, "%s: read error: %s", path, err ? strerror(err) : "the file got shorter while it was read");
    }
    buf[n] = 0;
    *data = buf;
    *size = n;
    return 0;
}

int atl_read_file(const char *path, unsigned char **data, size_t *size, AtlErr *e)
{
    return atl_read_file_max(path, atl_limit(ATL_LIMIT_FILE_BYTES), "a file read whole (raise with ATOLL_MAX_FILE_BYTES)",
                             data, size, e);
}

/* ---- the registry of temporary files, for the signal handler ---- */

enum { TMP_SLOTS = 16 };
static volatile sig_atomic_t tmp_used[TMP_SLOTS];
static char tmp_names[TMP_SLOTS][sizeof ((AtlOutFile *)0)->tmp];

static int tmp_claim(const char *name)
{
    for (int i = 0; i < TMP_SLOTS; i++)
        if (!tmp_used[i]) {
            memcpy(tmp_names[i], name, strlen(name) + 1);
            tmp_used[i] = 1;
            return i;
        }
    return -1; /* more outputs open at once than slots: no cleanup for this one */
}

static void tmp_release(int slot)
{
    if (slot >= 0 && slot < TMP_SLOTS) tmp_used[slot] = 0;
}

static void on_signal(int sig)
{
    for (int i = 0; i < TMP_SLOTS; i++)
        if (tmp_used[i]) unlink(tmp_names[i]);   /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

void atl_out_cleanup_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue; /* keep nohup's ignore */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* ---- writing ---- */

/* The file a write to `path` replaces: path itself, or the final target
 * of a chain of symbolic links (relative links resolve against the
 * directory of the link). */
static int resolve_target(const char *path, char *out, size_t cap, AtlErr *e)
{
    if (strlen(path) >= cap) return atl_fail(e, "%s: path too long", path);
    strcpy(out, path);
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(out, &st) != 0 || !S_ISLNK(st.st_mode)) return 0;
        if (hops == 40) return atl_fail(e, "%s: too many levels of symbolic links", path);
        char link[4096];
        ssize_t n = readlink(out, link, sizeof link - 1);
        if (n < 0) return atl_fail(e, "%s: cannot read symbolic link %s: %s", path, out, strerror(errno));
        link[n] = 0;
        size_t dir = 0;
        if (link[0] != '/') {
            const char *slash = strrchr(out, '/');
            dir = slash ? (size_t)(slash - out) + 1 : 0;
        }
        if (dir + (size_t)n >= cap) return atl_fail(e, "%s: symbolic link target too long", path);
        memcpy(out + dir, link, (size_t)n + 1);
    }
}

int atl_out_open(AtlOutFile *o, const char *path, AtlErr *e)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    if (!path || !path[0]) return atl_fail(e, "output file name is empty");
    if (strlen(path) >= sizeof o->path) return atl_fail(e, "%s: path too long", path);
    strcpy(o->path, path);
    if (resolve_target(path, o->target, sizeof o->target, e)) return -1;
    struct stat st;
    if (stat(o->target, &st) == 0) {
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {   /* a stream: no temporary, no rename */
            o->fp = fopen(o->target, "wb");
            if (!o->fp) return atl_fail(e, "%s: cannot open for writing: %s", path, strerror(errno));
            return 0;
        }
        if (!S_ISREG(st.st_mode))
            return atl_fail(e, "%s: is %s; give a regular file, a character device or a FIFO", path, kind_of(st.st_mode));
    }
    int k = snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->target, (long)getpid());
    if (k < 0 || (size_t)k >= sizeof o->tmp) { o->tmp[0] = 0; return atl_fail(e, "%s: path too long", path); }
    o->slot = tmp_claim(o->tmp);
    o->fp = fopen(o->tmp, "wb");
    if (!o->fp) {
        int err = errno;
        tmp_release(o->slot);
        o->slot = -1;
        atl_fail(e, "%s: cannot create %s: %s", path, o->tmp, strerror(err));
        o->tmp[0] = 0;
        return -1;
    }
    return 0;
}

int atl_out_commit(AtlOutFile *o, AtlErr *e)
{
    int err = 0, bad = 0;
    if (o->fp) {
        errno = 0;
        if (fflush(o->fp) != 0) { bad = 1; err = errno; }
        if (ferror(o->fp)) bad = 1;
        if (fclose(o->fp) != 0) { bad = 1; if (!err) err = errno; }
    } else {
        bad = 1;
    }
    o->fp = NULL;
    if (bad) {
        if (o->tmp[0]) remove(o->tmp);
        tmp_release(o->slot);
        o->slot = -1;
        return atl_fail(e, "%s: write error: %s", o->path, err ? strerror(err) : "the data could not be written");
    }
    if (o->tmp[0] && rename(o->tmp, o->target) != 0) {
        err = errno;
        remove(o->tmp);
        tmp_release(o->slot);
        o->slot = -1;
        return atl_fail(e, "%s: cannot rename %s into place: %s", o->path, o->tmp, strerror(err));
    }
    tmp_release(o->slot);
    o->slot = -1;
    return 0;
}

void atl_out_abort(AtlOutFile *o)
{
    if (o->fp) fclose(o->fp);
    o->fp = NULL;
    if (o->tmp[0]) remove(o->tmp);
    tmp_release(o->slot);
    o->slot = -1;
}

int atl_write_file_atomic(const char *path, const void *data, size_t size, AtlErr *e)
{
    AtlOutFile o;
    if (atl_out_open(&o, path, e)) return -1;
    if (size && fwrite(data, 1, size, o.fp) != size) {
        int err = errno;
        atl_out_abort(&o);
        return atl_fail(e, "%s: write error: %s", path, err ? strerror(err) : "short write");
    }
    return atl_out_commit(&o, e);
}

/* ---- identity of paths ---- */

/* Canonical "dir/name" of a path whose file may not exist yet. */
static int canonical(const char *p, char *out, size_t cap)
{
    char dir[4096];
    const char *slash = strrchr(p, '/');
    const char *name = slash ? slash + 1 : p;
    size_t dl = slash ? (size_t)(slash - p) : 0;
    if (dl >= sizeof dir) return -1;
    if (slash) { memcpy(dir, p, dl ? dl : 1); dir[dl ? dl : 1] = 0; }
    else strcpy(dir, ".");
    char *real = realpath(dir, NULL);
    if (!real) return -1;
    int k = snprintf(out, cap, "%s/%s", real, name);
    free(real);
    return k < 0 || (size_t)k >= cap ? -1 : 0;
}

int atl_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    int ha = stat(a, &sa) == 0, hb = stat(b, &sb) == 0;
    if (ha && hb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ha || hb) return 0;
    char ca[8300], cb[8300];
    if (canonical(a, ca, sizeof ca) || canonical(b, cb, sizeof cb)) return !strcmp(a, b);
    return !strcmp(ca, cb);
}

int atl_is_stream_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}
