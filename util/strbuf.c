/* strbuf.c - a growable string buffer (util/strbuf.h) for the simulator's
 * report, stats JSON and trace writers and the tools' CSV, SVG and HTML
 * writers. Out-of-memory is sticky (oom flag) so writers need no checks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/strbuf.h"

static int sbuf_grow(StrBuf *b, size_t need)
{
    if (b->oom) return -1;
    if (b->len + need + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + need + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) { b->oom = 1; return -1; }
    b->p = p;
    b->cap = cap;
    return 0;
}

void sbuf_put(StrBuf *b, const char *s, size_t n)
{
    if (sbuf_grow(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void sbuf_printf(StrBuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) { sbuf_put(b, tmp, (size_t)n); return; }
    if (sbuf_grow(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sbuf_json_str(StrBuf *b, const char *s)
{
    sbuf_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { char t[2] = {'\\', (char)c}; sbuf_put(b, t, 2); }
        else if (c < 0x20) sbuf_printf(b, "\\u%04x", c);
        else sbuf_put(b, (const char *)&c, 1);
    }
    sbuf_put(b, "\"", 1);
}

char *sbuf_take(StrBuf *b)
{
    if (b->oom) { sbuf_free(b); return NULL; }
    if (!b->p) sbuf_put(b, "", 0);
    if (b->oom) { sbuf_free(b); return NULL; }
    char *p = b->p;
    memset(b, 0, sizeof *b);
    return p;
}

void sbuf_free(StrBuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}
