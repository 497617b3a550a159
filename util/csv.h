/* csv.h - CSV text as RFC 4180 writes it: fields separated by commas,
 * records by newlines; a field holding a comma, quote, CR or LF, or
 * starting or ending with a space, is quoted, with quotes doubled.
 *
 * The reader takes the whole text and returns every record with the line
 * it starts on, so that callers can name "FILE:LINE" in messages. Records
 * end at LF or CRLF; a final record without a newline counts; blank lines
 * are skipped. Ownership: csv_parse allocates the table, csv_free frees it.
 */
#ifndef ATOLL_UTIL_CSV_H
#define ATOLL_UTIL_CSV_H
#include <stddef.h>
#include "util/err.h"
#include "util/strbuf.h"

/* Appends one field (quoted when it must be). */
void csv_put_field(StrBuf *b, const char *field);

typedef struct AtlCsvRecord {
    int line;                  /* 1-based line the record starts on */
    int nfields;
    char **fields;             /* each NUL-terminated, unquoted */
} AtlCsvRecord;

typedef struct AtlCsv {
    int nrecords;
    AtlCsvRecord *records;
} AtlCsv;

/* Parses len bytes of text. Errors ("NAME:LINE: ...") for a quote that
 * never closes, text after a closing quote, or a NUL byte. */
int csv_parse(const char *name, const char *text, size_t len, AtlCsv *out, AtlErr *e);
/* Reads and parses a file (errors name it). */
int csv_read_file(const char *path, AtlCsv *out, AtlErr *e);
void csv_free(AtlCsv *c);
#endif
