/* strbuf.h - a growable string buffer. Out-of-memory is sticky: every
 * append after a failed allocation is a no-op and sbuf_take returns NULL,
 * so writers check once at the end. Ownership: the buffer owns its text
 * until sbuf_take hands it to the caller (who frees it); sbuf_free drops it.
 * A zero-initialised StrBuf is empty and ready. */
#ifndef ATOLL_UTIL_STRBUF_H
#define ATOLL_UTIL_STRBUF_H
#include <stddef.h>
#include "util/err.h"

typedef struct StrBuf {
    char *p;
    size_t len, cap;
    int oom;
} StrBuf;
void sbuf_put(StrBuf *b, const char *s, size_t n);
void sbuf_printf(StrBuf *b, const char *fmt, ...) ATL_PRINTF(2, 3);
void sbuf_json_str(StrBuf *b, const char *s);   /* quoted, escaped */
char *sbuf_take(StrBuf *b);                     /* NULL on oom; resets b */
void sbuf_free(StrBuf *b);
#endif
