/* err.h - the one error convention used across Atoll.
 *
 * A function that can fail takes an `AtlErr *` (may be NULL), returns 0 on
 * success and -1 on failure, and on failure writes a complete, human-readable
 * message into it ("file:line: what is wrong"). Callers add context with
 * atl_err_prefix(). No global error state.
 */
#ifndef ATOLL_UTIL_ERR_H
#define ATOLL_UTIL_ERR_H
#include <stddef.h>

#define ATL_ERRLEN 1024

typedef struct AtlErr {
    char msg[ATL_ERRLEN];
} AtlErr;

#if defined(__GNUC__)
#define ATL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ATL_PRINTF(a, b)
#endif

/* Formats the message into e (if non-NULL) and returns -1. */
int atl_fail(AtlErr *e, const char *fmt, ...) ATL_PRINTF(2, 3);
/* Puts "prefix: " in front of the current message. Returns -1. */
int atl_err_prefix(AtlErr *e, const char *fmt, ...) ATL_PRINTF(2, 3);
/* For APIs whose caller passes a plain buffer (include/atoll.h): formats
 * into msg (cap bytes; nothing when msg is NULL) and returns status. */
int atl_msg(char *msg, size_t cap, int status, const char *fmt, ...) ATL_PRINTF(4, 5);
#endif
