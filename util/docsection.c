/* docsection.c - replace or append a generated section of a markdown file
 * (see docsection.h). */
#include "util/docsection.h"
#include "util/file.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *cat(const char *a, size_t na, const char *b, size_t nb, const char *c, size_t nc)
{
    char *p = malloc(na + nb + nc + 1);
    if (!p) return NULL;
    memcpy(p, a, na);
    memcpy(p + na, b, nb);
    memcpy(p + na + nb, c, nc);
    p[na + nb + nc] = 0;
    return p;
}

int doc_section_replace(const char *doc, const char *name, const char *heading, const char *body, char **out, AtlErr *e)
{
    *out = NULL;
    if (!doc) doc = "";
    size_t ln = strlen(name) + 40;
    char *begin = malloc(ln), *end = malloc(ln);
    if (!begin || !end) { free(begin); free(end); return atl_fail(e, "out of memory"); }
    snprintf(begin, ln, "<!-- BEGIN generated:%s -->\n", name);
    snprintf(end, ln, "<!-- END generated:%s -->", name);
    const char *b = strstr(doc, begin), *x = b ? strstr(b, end) : NULL;
    int rc = 0;
    size_t nbody = strlen(body);
    int nl = nbody && body[nbody - 1] != '\n';
    if (b && !x) rc = atl_fail(e, "section '%s': BEGIN marker without END", name);
    else if (b && strstr(x + 1, begin)) rc = atl_fail(e, "section '%s' appears twice", name);
    else if (b) {
        size_t head = (size_t)(b - doc) + strlen(begin);
        char *mid = cat(body, nbody, "\n", (size_t)nl, "", 0);
        *out = mid ? cat(doc, head, mid, strlen(mid), x, strlen(x)) : NULL;
        free(mid);
        if (!*out) rc = atl_fail(e, "out of memory");
    } else {
        size_t nd = strlen(doc);
        const char *sep = nd && doc[nd - 1] != '\n' ? "\n\n" : nd ? "\n" : "";
        size_t need = strlen(sep) + (heading ? strlen(heading) + 2 : 0) + strlen(begin) + nbody + 1 + strlen(end) + 2;
        char *tail = malloc(need);
        if (!tail) rc = atl_fail(e, "out of memory");
        else {
            snprintf(tail, need, "%s%s%s%s%s%s%s\n", sep, heading ? heading : "", heading ? "\n\n" : "", begin, body,
                     nl ? "\n" : "", end);
            *out = cat(doc, nd, tail, strlen(tail), "", 0);
            free(tail);
            if (!*out) rc = atl_fail(e, "out of memory");
        }
    }
    free(begin);
    free(end);
    return rc;
}

int doc_section_write_file(const char *path, const char *title, const char *name, const char *heading,
                           const char *body, AtlErr *e)
{
    unsigned char *old = NULL;
    size_t n = 0;
    struct stat st;
    char *doc;
    if (stat(path, &st) == 0) {
        if (atl_read_file(path, &old, &n, e)) return -1;
        doc = malloc(n + 1);
        if (doc) { memcpy(doc, old, n); doc[n] = 0; }
        free(old);
    } else {
        const char *t = title ? title : "";
        doc = malloc(strlen(t) + 2);
        if (doc) snprintf(doc, strlen(t) + 2, "%s%s", t, *t ? "\n" : "");
    }
    if (!doc) return atl_fail(e, "%s: out of memory", path);
    char *out;
    int rc = doc_section_replace(doc, name, heading, body, &out, e);
    free(doc);
    if (rc) return atl_err_prefix(e, "%s", path);
    rc = atl_write_file_atomic(path, out, strlen(out), e);
    free(out);
    return rc;
}
