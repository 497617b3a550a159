/* file.h - whole-file reads and atomic writes.
 *
 * Every output file Atoll produces is written through atl_write_file_atomic or
 * an AtlOutFile: data goes to "NAME.tmp.PID" and is renamed over NAME only
 * when complete, so a failure never leaves a partial output behind.
 */
#ifndef ATOLL_UTIL_FILE_H
#define ATOLL_UTIL_FILE_H
#include <stdio.h>
#include <stddef.h>
#include "util/err.h"

/* Reads a whole file. On success *data is malloc'd (caller frees) and
 * NUL-terminated one byte past *size. */
int atl_read_file(const char *path, unsigned char **data, size_t *size, AtlErr *e);
int atl_write_file_atomic(const char *path, const void *data, size_t size, AtlErr *e);

/* Streamed atomic output: open, write through ->fp, then commit or abort. */
typedef struct AtlOutFile {
    FILE *fp;
    char path[4096];
    char tmp[4200];
} AtlOutFile;
int atl_out_open(AtlOutFile *o, const char *path, AtlErr *e);
int atl_out_commit(AtlOutFile *o, AtlErr *e); /* closes, renames; removes tmp on error */
void atl_out_abort(AtlOutFile *o);           /* closes and removes tmp */
#endif
