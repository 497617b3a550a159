/* err.c - formatting helpers for AtlErr (see err.h). */
#include "util/err.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int atl_fail(AtlErr *e, const char *fmt, ...)
{
    if (!e) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int atl_err_prefix(AtlErr *e, const char *fmt, ...)
{
    if (!e) return -1;
    char head[ATL_ERRLEN], old[ATL_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    snprintf(e->msg, sizeof e->msg, "%s: %s", head, old);
    return -1;
}

int atl_msg(char *msg, size_t cap, int status, const char *fmt, ...)
{
    if (msg && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, cap, fmt, ap);
        va_end(ap);
    }
    return status;
}
