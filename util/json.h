/* json.h - a small JSON reader (RFC 8259) for the tools that read what
 * Atoll writes (`atoll report` reads the stats JSON). It builds a tree of
 * JsonValue; objects keep their keys in file order. Numbers are doubles.
 * Strings are UTF-8 with escapes decoded (\uXXXX, surrogate pairs joined).
 * Nesting deeper than JSON_MAX_DEPTH is refused rather than recursed into.
 * Errors read "NAME:LINE:COL: message". Ownership: json_parse allocates
 * the tree; json_free frees it. */
#ifndef ATOLL_UTIL_JSON_H
#define ATOLL_UTIL_JSON_H
#include <stddef.h>
#include "util/err.h"

#define JSON_MAX_DEPTH 64

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } JsonKind;

typedef struct JsonValue {
    JsonKind kind;
    double number;             /* JSON_NUMBER; JSON_BOOL: 0 or 1 */
    char *string;              /* JSON_STRING */
    int count;                 /* JSON_ARRAY / JSON_OBJECT: members */
    struct JsonValue *items;   /* the members */
    char **keys;               /* JSON_OBJECT: key of each member */
} JsonValue;

/* Parses len bytes; *out is malloc'd (json_free). */
int json_parse(const char *name, const char *text, size_t len, JsonValue **out, AtlErr *e);
void json_free(JsonValue *v);
/* Member `key` of an object (first of that name), NULL if v is no object or
 * has none. */
const JsonValue *json_get(const JsonValue *v, const char *key);
/* v as a number, or dflt when v is NULL or not a number. */
double json_number(const JsonValue *v, double dflt);
/* v as a string, or dflt when v is NULL or not a string. */
const char *json_string(const JsonValue *v, const char *dflt);
#endif
