/* sweep_csv.c - reading, checking and writing sweep result tables (see
 * sweep_csv.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/sweep_csv.h"
#include "tools/sweep_run.h"
#include "util/csv.h"
#include "util/file.h"
#include "util/strbuf.h"

void sweep_table_free(SweepTable *t)
{
    for (int64_t i = 0; i < t->n; i++) free(t->rows[i].text);
    free(t->rows);
    free(t->header);
    memset(t, 0, sizeof *t);
}

static int by_id(const void *a, const void *b)
{
    const SweepRow *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int sweep_table_finish(SweepTable *t, AtlErr *e)
{
    if (t->n > 1) qsort(t->rows, (size_t)t->n, sizeof *t->rows, by_id);
    int64_t k = 0;
    for (int64_t i = 0; i < t->n; i++) {
        if (k && t->rows[k - 1].id == t->rows[i].id) {
            const SweepRow *a = &t->rows[k - 1], *b = &t->rows[i];
            if (strcmp(a->text, b->text))
                return atl_fail(e, "%s:%d: point %" PRId64 " differs from its row in %s:%d", b->file, b->line, b->id, a->file, a->line);
            free(t->rows[i].text);
            continue;
        }
        t->rows[k++] = t->rows[i];
    }
    t->n = k;
    return 0;
}

int sweep_table_add(SweepTable *t, int64_t id, const char *text, const char *file, int line, AtlErr *e)
{
    if (t->n == t->cap) {
        int64_t cap = t->cap ? t->cap * 2 : 256;
        SweepRow *r = realloc(t->rows, (size_t)cap * sizeof *r);
        if (!r) return atl_fail(e, "out of memory");
        t->rows = r;
        t->cap = cap;
    }
    size_t n = strlen(text) + 1;
    char *copy = malloc(n);
    if (!copy) return atl_fail(e, "out of memory");
    memcpy(copy, text, n);
    t->rows[t->n] = (SweepRow){id, copy, file, line, t->n};
    t->n++;
    return 0;
}

static char *record_text(const AtlCsvRecord *r)
{
    StrBuf b = {0};
    for (int i = 0; i < r->nfields; i++) {
        if (i) sbuf_put(&b, ",", 1);
        csv_put_field(&b, r->fields[i]);
    }
    sbuf_put(&b, "\n", 1);
    return sbuf_take(&b);
}

/* The row is the spec's point `id` with the point's values. */
static int check_row(const SweepSpec *s, const AtlCsvRecord *r, int64_t id, const char *path, AtlErr *e)
{
    if (id >= s->npoints) return atl_fail(e, "%s:%d: point %" PRId64 " is not in the sweep (it has %" PRId64 " points)", path, r->line, id, s->npoints);
    SweepPoint p;
    sweep_point(s, id, &p);
    char batch[16];
    snprintf(batch, sizeof batch, "%d", s->batches[p.batch]);
    for (int i = 0; i < s->nkeys + 3; i++) {
        const char *want = i < s->nkeys ? s->keys[i].values[p.value[i]]
                         : i == s->nkeys ? s->model_names[p.model]
                         : i == s->nkeys + 1 ? sweep_dtype_name(s->dtypes[p.dtype]) : batch;
        if (strcmp(r->fields[1 + i], want))
            return atl_fail(e, "%s:%d: point %" PRId64 " has %s in column %d where the sweep has %s: the file is from another sweep "
                            "(remove it or write elsewhere)", path, r->line, id, r->fields[1 + i], 2 + i, want);
    }
    return 0;
}

int sweep_table_read(const char *path, const SweepSpec *spec, SweepTable *t, AtlErr *e)
{
    memset(t, 0, sizeof *t);
    AtlCsv c;
    if (csv_read_file(path, &c, e)) return -1;
    int rc = 0;
    if (!c.nrecords) { csv_free(&c); return atl_fail(e, "%s: empty (no header line)", path); }
    t->header = record_text(&c.records[0]);
    if (!t->header) rc = atl_fail(e, "out of memory");
    if (!rc && spec) {
        StrBuf h = {0};
        sweep_csv_header(spec, &h);
        char *want = sbuf_take(&h);
        if (!want) rc = atl_fail(e, "out of memory");
        else if (strcmp(want, t->header))
            rc = atl_fail(e, "%s:1: the header is not this sweep's (its keys or columns differ): the file is from another sweep "
                          "or another version of atoll (remove it or write elsewhere)", path);
        free(want);
    }
    int nfields = c.records[0].nfields;
    if (!rc && (nfields < 2 || strcmp(c.records[0].fields[0], "point")))
        rc = atl_fail(e, "%s:1: not a sweep CSV (the first column is not 'point')", path);
    for (int i = 1; i < c.nrecords && !rc; i++) {
        const AtlCsvRecord *r = &c.records[i];
        if (r->nfields != nfields) { rc = atl_fail(e, "%s:%d: %d fields, the header has %d", path, r->line, r->nfields, nfields); break; }
        char *end;
        long long id = strtoll(r->fields[0], &end, 10);
        if (end == r->fields[0] || *end || id < 0) { rc = atl_fail(e, "%s:%d: point '%s' is not a point number", path, r->line, r->fields[0]); break; }
        if (spec && check_row(spec, r, id, path, e)) { rc = -1; break; }
        char *row = record_text(r);
        if (!row) { rc = atl_fail(e, "out of memory"); break; }
        rc = sweep_table_add(t, id, row, path, r->line, e);
        free(row);
    }
    csv_free(&c);
    if (!rc) rc = sweep_table_finish(t, e);
    if (rc) sweep_table_free(t);
    return rc;
}

int sweep_table_write(SweepTable *t, const char *path, AtlErr *e)
{
    if (sweep_table_finish(t, e)) return -1;
    StrBuf b = {0};
    sbuf_printf(&b, "%s", t->header);
    for (int64_t i = 0; i < t->n; i++) sbuf_printf(&b, "%s", t->rows[i].text);
    char *text = sbuf_take(&b);
    if (!text) return atl_fail(e, "out of memory");
    int rc = atl_write_file_atomic(path, text, strlen(text), e);
    free(text);
    return rc;
}
