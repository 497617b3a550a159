/* csv.c - CSV writer and reader (see csv.h). */
#include <stdlib.h>
#include <string.h>
#include "util/csv.h"
#include "util/file.h"

void csv_put_field(StrBuf *b, const char *f)
{
    size_t n = strlen(f);
    int quote = n && (f[0] == ' ' || f[n - 1] == ' ');
    for (size_t i = 0; i < n && !quote; i++) quote = f[i] == ',' || f[i] == '"' || f[i] == '\n' || f[i] == '\r';
    if (!quote) { sbuf_put(b, f, n); return; }
    sbuf_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        if (f[i] == '"') sbuf_put(b, "\"", 1);
        sbuf_put(b, f + i, 1);
    }
    sbuf_put(b, "\"", 1);
}

void csv_free(AtlCsv *c)
{
    for (int r = 0; r < c->nrecords; r++) {
        for (int f = 0; f < c->records[r].nfields; f++) free(c->records[r].fields[f]);
        free(c->records[r].fields);
    }
    free(c->records);
    memset(c, 0, sizeof *c);
}

/* The record being read: its fields so far and the field being built. */
typedef struct CsvState {
    AtlCsvRecord rec;
    int cap;
    StrBuf field;
} CsvState;

static int end_field(CsvState *s)
{
    char *f = sbuf_take(&s->field);
    if (!f) return -1;
    if (s->rec.nfields == s->cap) {
        int cap = s->cap ? s->cap * 2 : 8;
        char **p = realloc(s->rec.fields, (size_t)cap * sizeof *p);
        if (!p) { free(f); return -1; }
        s->rec.fields = p;
        s->cap = cap;
    }
    s->rec.fields[s->rec.nfields++] = f;
    return 0;
}

static int end_record(CsvState *s, AtlCsv *out, int *cap)
{
    if (end_field(s)) return -1;
    if (s->rec.nfields == 1 && !s->rec.fields[0][0]) {   /* a blank line */
        free(s->rec.fields[0]);
        s->rec.nfields = 0;
        return 0;
    }
    if (out->nrecords == *cap) {
        int c = *cap ? *cap * 2 : 64;
        AtlCsvRecord *p = realloc(out->records, (size_t)c * sizeof *p);
        if (!p) return -1;
        out->records = p;
        *cap = c;
    }
    out->records[out->nrecords++] = s->rec;
    memset(&s->rec, 0, sizeof s->rec);
    s->cap = 0;
    return 0;
}

int csv_parse(const char *name, const char *text, size_t len, AtlCsv *out, AtlErr *e)
{
    memset(out, 0, sizeof *out);
    CsvState s;
    memset(&s, 0, sizeof s);
    int cap = 0, line = 1, rc = 0;
    size_t i = 0;
    s.rec.line = 1;
    while (i < len && !rc) {
        char c = text[i];
        if (c == 0) { rc = atl_fail(e, "%s:%d: NUL byte in CSV text", name, line); break; }
        if (c == '"' && s.field.len == 0) {        /* a quoted field */
            int start = line;
            for (i++;; i++) {
                if (i >= len) { rc = atl_fail(e, "%s:%d: quoted field never closes", name, start); break; }
                if (text[i] == 0) { rc = atl_fail(e, "%s:%d: NUL byte in CSV text", name, line); break; }
                if (text[i] == '"') {
                    if (i + 1 < len && text[i + 1] == '"') { sbuf_put(&s.field, "\"", 1); i++; continue; }
                    i++;
                    break;
                }
                if (text[i] == '\n') line++;
                sbuf_put(&s.field, text + i, 1);
            }
            if (rc) break;
            if (i < len && text[i] != ',' && text[i] != '\n' && !(text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')) {
                rc = atl_fail(e, "%s:%d: text after a closing quote", name, line);
                break;
            }
            if (!s.field.p) sbuf_put(&s.field, "", 0);   /* "" is an empty field */
            continue;
        }
        if (c == ',') {
            if (end_field(&s)) rc = atl_fail(e, "%s: out of memory", name);
            i++;
        } else if (c == '\n' || (c == '\r' && i + 1 < len && text[i + 1] == '\n')) {
            if (end_record(&s, out, &cap)) rc = atl_fail(e, "%s: out of memory", name);
            i += c == '\r' ? 2 : 1;
            s.rec.line = ++line;
        } else {
            sbuf_put(&s.field, &c, 1);
            i++;
        }
    }
    if (!rc && (s.field.len || s.rec.nfields) && end_record(&s, out, &cap)) rc = atl_fail(e, "%s: out of memory", name);
    if (!rc && s.field.oom) rc = atl_fail(e, "%s: out of memory", name);
    sbuf_free(&s.field);
    for (int f = 0; f < s.rec.nfields; f++) free(s.rec.fields[f]);
    free(s.rec.fields);
    if (rc) csv_free(out);
    return rc;
}

int csv_read_file(const char *path, AtlCsv *out, AtlErr *e)
{
    unsigned char *text;
    size_t len;
    memset(out, 0, sizeof *out);
    if (atl_read_file(path, &text, &len, e)) return -1;
    int rc = csv_parse(path, (const char *)text, len, out, e);
    free(text);
    return rc;
}
