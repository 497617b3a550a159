/* ini.h - the INI syntax shared by chip configs (isa/config.c) and sweep
 * files (tools/sweep_spec.c): `[section]` headers and `key = value` lines;
 * a line whose first non-blank character is `#` or `;` is a comment, and
 * so is the rest of a line from a `#` or `;` that follows white space
 * (outside double quotes). Keys and values are trimmed.
 *
 * ini_parse walks the text and calls `line` once per header (key NULL,
 * value NULL) and once per key (section is the current one). Syntax errors
 * ("NAME:LINE: malformed section header '...'", "expected 'key = value' or
 * '[section]', got '...'", "key '...' outside any section") stop it; so
 * does a callback returning non-zero (its message in e). */
#ifndef ATOLL_UTIL_INI_H
#define ATOLL_UTIL_INI_H
#include "util/err.h"

typedef int (*IniLineFn)(void *ctx, const char *section, const char *key, const char *value, int line, AtlErr *e);

int ini_parse(const char *name, const char *text, IniLineFn line, void *ctx, AtlErr *e);
#endif
