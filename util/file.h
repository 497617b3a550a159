/* file.h - whole-file reads and atomic writes.
 *
 * Reads: only regular files are read (a directory, FIFO or device is
 * refused with a message saying so, and a FIFO is never left blocking the
 * open), and never more than a size limit (util/limits.h).
 *
 * Writes: every output file Atoll produces is written through
 * atl_write_file_atomic or an AtlOutFile. A regular file (or a new one)
 * is written to "NAME.tmp.PID" in the same directory and renamed over NAME
 * only when complete, so a failure never leaves a partial output behind. A
 * symbolic link is followed: its target is replaced, the link stays. A
 * character device or FIFO (/dev/null, /dev/stdout, a pipe) is written
 * directly; a directory or block device is refused. Temporary files still
 * open when the process gets SIGINT, SIGTERM or SIGHUP are removed if the
 * program called atl_out_cleanup_on_signals() (the atoll front end does;
 * the library never installs signal handlers by itself).
 */
#ifndef ATOLL_UTIL_FILE_H
#define ATOLL_UTIL_FILE_H
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include "util/err.h"

/* Reads a whole regular file of at most atl_limit(ATL_LIMIT_FILE_BYTES)
 * bytes. On success *data is malloc'd (caller frees) and NUL-terminated one
 * byte past *size. */
int atl_read_file(const char *path, unsigned char **data, size_t *size, AtlErr *e);
/* The same with an explicit limit; `what` names the kind of file and the
 * way to raise the limit in the message (may be NULL). */
int atl_read_file_max(const char *path, uint64_t max, const char *what, unsigned char **data, size_t *size, AtlErr *e);
/* Opens a regular file for reading (never blocks on a FIFO). *size gets its
 * size. On failure errno is that of the failing call (ENOENT: no such
 * file) and e names the path and the reason. */
int atl_open_regular(const char *path, FILE **fp, uint64_t *size, AtlErr *e);

int atl_write_file_atomic(const char *path, const void *data, size_t size, AtlErr *e);

/* Streamed atomic output: open, write through ->fp, then commit or abort. */
typedef struct AtlOutFile {
    FILE *fp;
    char path[4096];        /* as given (messages) */
    char target[4096];      /* what is replaced: path, or a symlink's final target */
    char tmp[4200];         /* "" when writing directly (device, FIFO) */
    int slot;               /* signal-cleanup registry slot, -1 none */
} AtlOutFile;
int atl_out_open(AtlOutFile *o, const char *path, AtlErr *e);
int atl_out_commit(AtlOutFile *o, AtlErr *e); /* closes, renames; removes tmp on error */
void atl_out_abort(AtlOutFile *o);           /* closes and removes tmp */

/* Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the
 * temporary files of outputs still open, then die of the signal as before. */
void atl_out_cleanup_on_signals(void);

/* 1 if paths a and b name the same file: the same inode when both exist,
 * else the same canonical directory and name. 0 otherwise. */
int atl_same_file(const char *a, const char *b);
/* 1 if path exists and is a character device or FIFO (written directly). */
int atl_is_stream_file(const char *path);
#endif
