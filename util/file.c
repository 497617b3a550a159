/* file.c - whole-file reads and temp-then-rename writes (see file.h). */
#include "util/file.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

int atl_read_file(const char *path, unsigned char **data, size_t *size, AtlErr *e)
{
    *data = NULL;
    *size = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return atl_fail(e, "%s: cannot open: %s", path, strerror(errno));
    /* a regular file's size is known: one allocation, no copies (a pipe
     * or a file that grows meanwhile still works, by doubling) */
    struct stat sb;
    size_t cap = 1 << 16, n = 0;
    if (!fstat(fileno(fp), &sb) && S_ISREG(sb.st_mode) && sb.st_size > 0 && (uint64_t)sb.st_size < ((uint64_t)1 << 40))
        cap = (size_t)sb.st_size + 1; /* +1: reading on finds the end without a doubling */
    unsigned char *buf = malloc(cap + 1);
    if (!buf) { fclose(fp); return atl_fail(e, "%s: out of memory", path); }
    for (;;) {
        if (n == cap) {
            unsigned char *nb = cap > ((size_t)1 << 40) ? NULL : realloc(buf, cap * 2 + 1);
            if (!nb) { free(buf); fclose(fp); return atl_fail(e, "%s: out of memory", path); }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, fp);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad) { free(buf); return atl_fail(e, "%s: read error", path); }
    buf[n] = 0;
    *data = buf;
    *size = n;
    return 0;
}

int atl_out_open(AtlOutFile *o, const char *path, AtlErr *e)
{
    memset(o, 0, sizeof *o);
    if (strlen(path) >= sizeof o->path) return atl_fail(e, "%s: path too long", path);
    strcpy(o->path, path);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", path, (long)getpid());
    o->fp = fopen(o->tmp, "wb");
    if (!o->fp) return atl_fail(e, "%s: cannot create: %s", o->tmp, strerror(errno));
    return 0;
}

int atl_out_commit(AtlOutFile *o, AtlErr *e)
{
    int bad = ferror(o->fp);
    if (fclose(o->fp) != 0) bad = 1;
    o->fp = NULL;
    if (bad) { remove(o->tmp); return atl_fail(e, "%s: write error", o->path); }
    if (rename(o->tmp, o->path) != 0) {
        int err = errno;
        remove(o->tmp);
        return atl_fail(e, "%s: cannot rename into place: %s", o->path, strerror(err));
    }
    return 0;
}

void atl_out_abort(AtlOutFile *o)
{
    if (o->fp) fclose(o->fp);
    o->fp = NULL;
    if (o->tmp[0]) remove(o->tmp);
}

int atl_write_file_atomic(const char *path, const void *data, size_t size, AtlErr *e)
{
    AtlOutFile o;
    if (atl_out_open(&o, path, e)) return -1;
    if (size && fwrite(data, 1, size, o.fp) != size) {
        atl_out_abort(&o);
        return atl_fail(e, "%s: write error", path);
    }
    return atl_out_commit(&o, e);
}
