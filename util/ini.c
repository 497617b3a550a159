/* ini.c - the INI line syntax (see ini.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/ini.h"

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    return s;
}

/* Cuts a trailing comment: `#` or `;` after white space, outside quotes. */
static void strip_comment(char *s)
{
    int quoted = 0;
    for (char *p = s; *p; p++) {
        if (*p == '"') quoted = !quoted;
        else if (!quoted && (*p == '#' || *p == ';') && (p == s || isspace((unsigned char)p[-1]))) { *p = 0; return; }
    }
}

int ini_parse(const char *name, const char *text, IniLineFn fn, void *ctx, AtlErr *e)
{
    size_t tlen = strlen(text);
    char *buf = malloc(tlen + 1);
    if (!buf) return atl_fail(e, "%s: out of memory", name);
    memcpy(buf, text, tlen + 1);
    char section[64] = "";
    int lineno = 0, rc = 0;
    char *start = buf;
    if (!strncmp(start, "\xef\xbb\xbf", 3)) start += 3;   /* a UTF-8 byte order mark (Windows editors write one) */
    for (char *s = start; s && rc == 0;) {
        /* lines end in LF, CR LF or a lone CR (old Mac editors) */
        char *nl = s + strcspn(s, "\r\n"), *next = NULL;
        if (*nl) next = nl + (nl[0] == '\r' && nl[1] == '\n' ? 2 : 1);
        *nl = 0;
        lineno++;
        char *line = trim(s);
        s = next;
        if (!*line || *line == '#' || *line == ';') continue;
        strip_comment(line);
        line = trim(line);
        if (*line == '[') {
            char *close = strchr(line, ']');
            if (!close || trim(close + 1)[0]) { rc = atl_fail(e, "%s:%d: malformed section header '%s'", name, lineno, line); break; }
            *close = 0;
            char *sec = trim(line + 1);
            if (strlen(sec) >= sizeof section) { rc = atl_fail(e, "%s:%d: section name too long", name, lineno); break; }
            snprintf(section, sizeof section, "%s", sec);
            rc = fn(ctx, section, NULL, NULL, lineno, e);
            continue;
        }
        char *eq = strchr(line, '=');
        if (!eq) { rc = atl_fail(e, "%s:%d: expected 'key = value' or '[section]', got '%s'", name, lineno, line); break; }
        *eq = 0;
        char *key = trim(line), *val = trim(eq + 1);
        if (!section[0]) { rc = atl_fail(e, "%s:%d: key '%s' outside any section", name, lineno, key); break; }
        rc = fn(ctx, section, key, val, lineno, e);
    }
    free(buf);
    return rc ? -1 : 0;
}
