/* report_sweep.c - `atoll report SWEEP.csv`: the points of a sweep per
 * workload (model, dtype, batch): the best configuration by images/s, by
 * images/s per mm^2 and per watt, Pareto fronts of images/s against area
 * and against energy per image, every point in a table and the failed
 * points with their reasons. The varied keys are the columns between
 * `point` and `model` (tools/sweep_run.c writes them so). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/report.h"
#include "tools/plots.h"
#include "util/csv.h"
#include "util/file.h"

#define MAX_TABLE_ROWS 2000

typedef struct SweepCols {
    int nkeys;                 /* columns 1..nkeys */
    int model, dtype, batch, status, cycles, ips, ips_mm2, ips_w, area, energy, mac_util, error;
} SweepCols;

static int col(const AtlCsvRecord *h, const char *name)
{
    for (int i = 0; i < h->nfields; i++) if (!strcmp(h->fields[i], name)) return i;
    return -1;
}

static int find_cols(const AtlCsvRecord *h, SweepCols *c, const char *path, AtlErr *e)
{
    static const char *const need[] = {"model", "dtype", "batch", "status", "cycles", "images_per_s", "images_per_s_per_mm2",
                                       "images_per_s_per_w", "area_mm2", "energy_total_pj", "mac_util", "error"};
    int *dst[] = {&c->model, &c->dtype, &c->batch, &c->status, &c->cycles, &c->ips, &c->ips_mm2, &c->ips_w, &c->area, &c->energy,
                  &c->mac_util, &c->error};
    if (!h->nfields || strcmp(h->fields[0], "point")) return atl_fail(e, "%s:1: not a sweep CSV (the first column is not 'point')", path);
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if ((*dst[i] = col(h, need[i])) < 0) return atl_fail(e, "%s:1: not a sweep CSV (no column '%s')", path, need[i]);
    c->nkeys = c->model - 1;
    return 0;
}

/* "point 12: matrix.rows=32 dram.gbps=64" */
static void point_label(const AtlCsvRecord *h, const AtlCsvRecord *r, const SweepCols *c, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "point %s:", r->fields[0]);
    for (int k = 1; k <= c->nkeys && n < cap; k++) n += (size_t)snprintf(buf + n, cap - n, " %s=%s", h->fields[k], r->fields[k]);
}

static int same_workload(const AtlCsvRecord *a, const AtlCsvRecord *b, const SweepCols *c)
{
    return !strcmp(a->fields[c->model], b->fields[c->model]) && !strcmp(a->fields[c->dtype], b->fields[c->dtype]) &&
           !strcmp(a->fields[c->batch], b->fields[c->batch]);
}

static int is_ok(const AtlCsvRecord *r, const SweepCols *c) { return !strcmp(r->fields[c->status], "ok"); }

/* The best row of the workload by column k (largest), -1 if none. */
static int best_by(const AtlCsv *t, int w, const SweepCols *c, int k)
{
    int best = -1;
    for (int i = 1; i < t->nrecords; i++) {
        const AtlCsvRecord *r = &t->records[i];
        if (!is_ok(r, c) || !same_workload(r, &t->records[w], c) || !r->fields[k][0]) continue;
        if (best < 0 || atof(r->fields[k]) > atof(t->records[best].fields[k])) best = i;
    }
    return best;
}

static int workload(Report *rep, const AtlCsv *t, int w, int index, const SweepCols *c, AtlErr *e)
{
    const AtlCsvRecord *h = &t->records[0], *wr = &t->records[w];
    char title[256], id[64], label[512];
    snprintf(title, sizeof title, "%s, %s, batch %s", wr->fields[c->model], wr->fields[c->dtype], wr->fields[c->batch]);
    report_heading(rep, 2, title);
    static const char *const head[] = {"best by", "value", "configuration"};
    snprintf(id, sizeof id, "best-%d", index);
    report_table_begin(rep, id, head, 3);
    static const struct { const char *what; int off; } best[] = {
        {"images/s", 0}, {"images/s per mm2", 1}, {"images/s per W (images/J)", 2},
    };
    for (int b = 0; b < 3; b++) {
        int k = b == 0 ? c->ips : b == 1 ? c->ips_mm2 : c->ips_w;
        int i = best_by(t, w, c, k);
        if (i < 0) continue;
        point_label(h, &t->records[i], c, label, sizeof label);
        report_row_begin(rep);
        report_cell(rep, best[b].what, 0);
        report_cell(rep, t->records[i].fields[k], 1);
        report_cell(rep, label, 0);
        report_row_end(rep);
    }
    report_table_end(rep);
    /* the Pareto fronts of this workload */
    PlotPoint *pa = calloc((size_t)t->nrecords, sizeof *pa), *pe = calloc((size_t)t->nrecords, sizeof *pe);
    char **labels = calloc((size_t)t->nrecords, sizeof *labels);
    int na = 0, ne = 0, rc = 0;
    if (!pa || !pe || !labels) rc = atl_fail(e, "out of memory");
    for (int i = 1; i < t->nrecords && !rc; i++) {
        const AtlCsvRecord *r = &t->records[i];
        if (!is_ok(r, c) || !same_workload(r, wr, c)) continue;
        labels[i] = malloc(600);
        if (!labels[i]) { rc = atl_fail(e, "out of memory"); break; }
        point_label(h, r, c, label, sizeof label);
        snprintf(labels[i], 600, "%s: %s images/s", label, r->fields[c->ips]);
        double ips = atof(r->fields[c->ips]), batch = atof(r->fields[c->batch]);
        if (r->fields[c->area][0]) pa[na++] = (PlotPoint){atof(r->fields[c->area]), ips, labels[i]};
        if (r->fields[c->energy][0] && batch > 0) pe[ne++] = (PlotPoint){atof(r->fields[c->energy]) * 1e-6 / batch, ips, labels[i]};
    }
    StrBuf svg = {0};
    char name[64];
    if (!rc && na) {
        snprintf(name, sizeof name, "pareto-area-%d", index);
        plot_pareto(&svg, name, title, "chip area (mm2)", "images/s", pa, na);
        rc = report_plot(rep, name, "Throughput against chip area (the [area] model): red points are the Pareto front, the "
                         "configurations no other beats on both.", &svg, e);
    }
    if (!rc && ne) {
        snprintf(name, sizeof name, "pareto-energy-%d", index);
        plot_pareto(&svg, name, title, "energy per image (uJ)", "images/s", pe, ne);
        rc = report_plot(rep, name, "Throughput against energy per image: red points are the Pareto front.", &svg, e);
    }
    if (!rc && !na && !ne) report_para(rep, "No point of this workload ran.");
    sbuf_free(&svg);
    for (int i = 0; labels && i < t->nrecords; i++) free(labels[i]);
    free(labels);
    free(pa);
    free(pe);
    return rc;
}

static void all_points(Report *rep, const AtlCsv *t, const SweepCols *c)
{
    const AtlCsvRecord *h = &t->records[0];
    const char *head[64];
    int cols[64], n = 0;
    cols[n] = 0;
    head[n++] = "point";
    for (int k = 1; k <= c->nkeys && n < 50; k++) { cols[n] = k; head[n++] = h->fields[k]; }
    int rest[] = {c->model, c->dtype, c->batch, c->status, c->cycles, c->ips, c->mac_util, c->area, c->ips_mm2, c->ips_w};
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) { cols[n] = rest[i]; head[n++] = h->fields[rest[i]]; }
    report_heading(rep, 2, "All points");
    report_table_begin(rep, "points", head, n);
    int shown = 0;
    for (int i = 1; i < t->nrecords && shown < MAX_TABLE_ROWS; i++, shown++) {
        report_row_begin(rep);
        for (int k = 0; k < n; k++) {
            const char *v = t->records[i].fields[cols[k]];
            int numeric = cols[k] != c->model && cols[k] != c->dtype && cols[k] != c->status;
            report_cell(rep, v, numeric);
        }
        report_row_end(rep);
    }
    report_table_end(rep);
    if (t->nrecords - 1 > shown) {
        char note[96];
        snprintf(note, sizeof note, "The first %d of %d points; the CSV has them all.", shown, t->nrecords - 1);
        report_para(rep, note);
    }
}

static void failures(Report *rep, const AtlCsv *t, const SweepCols *c, int nfailed)
{
    if (!nfailed) return;
    report_heading(rep, 2, "Failed points");
    static const char *const head[] = {"point", "model", "dtype", "batch", "reason"};
    report_table_begin(rep, "failed", head, 5);
    for (int i = 1; i < t->nrecords; i++) {
        const AtlCsvRecord *r = &t->records[i];
        if (is_ok(r, c)) continue;
        report_row_begin(rep);
        report_cell(rep, r->fields[0], 1);
        report_cell(rep, r->fields[c->model], 0);
        report_cell(rep, r->fields[c->dtype], 0);
        report_cell(rep, r->fields[c->batch], 1);
        report_cell(rep, r->fields[c->error], 0);
        report_row_end(rep);
    }
    report_table_end(rep);
}

int report_sweep(Report *rep, const char *path, AtlErr *e)
{
    AtlCsv t;
    if (csv_read_file(path, &t, e)) return -1;
    int rc = 0;
    SweepCols c;
    if (!t.nrecords) rc = atl_fail(e, "%s: empty", path);
    if (!rc) rc = find_cols(&t.records[0], &c, path, e);
    for (int i = 1; i < t.nrecords && !rc; i++)
        if (t.records[i].nfields != t.records[0].nfields)
            rc = atl_fail(e, "%s:%d: %d fields, the header has %d", path, t.records[i].line, t.records[i].nfields, t.records[0].nfields);
    if (rc) { csv_free(&t); return -1; }
    int nfailed = 0, nworkloads = 0;
    for (int i = 1; i < t.nrecords; i++) nfailed += !is_ok(&t.records[i], &c);
    report_heading(rep, 2, "Summary");
    report_table_begin(rep, "summary", NULL, 0);
    char v[512];
    snprintf(v, sizeof v, "%d (%d ran, %d failed)", t.nrecords - 1, t.nrecords - 1 - nfailed, nfailed);
    report_kv(rep, "points", v);
    size_t n = 0;
    v[0] = 0;
    for (int k = 1; k <= c.nkeys; k++) n += (size_t)snprintf(v + n, n < sizeof v ? sizeof v - n : 0, "%s%s", k > 1 ? ", " : "", t.records[0].fields[k]);
    report_kv(rep, "varied keys", c.nkeys ? v : "none");
    report_table_end(rep);
    for (int i = 1; i < t.nrecords && !rc; i++) {
        int seen = 0;
        for (int k = 1; k < i && !seen; k++) seen = same_workload(&t.records[k], &t.records[i], &c);
        if (!seen) rc = workload(rep, &t, i, nworkloads++, &c, e);
    }
    if (!rc) {
        all_points(rep, &t, &c);
        failures(rep, &t, &c, nfailed);
    }
    csv_free(&t);
    return rc;
}
