/* report.h - what `atoll report` builds its HTML from: one self-contained
 * page (inline CSS and SVG; no script, no link, nothing fetched), made of
 * headings, tables and the plots of tools/plots.h. report_stats.c renders
 * a stats JSON (one run), report_sweep.c a sweep CSV (many points). With
 * svg_dir set, every plot is also written there as NAME.svg.
 */
#ifndef ATOLL_TOOLS_REPORT_H
#define ATOLL_TOOLS_REPORT_H
#include "util/err.h"
#include "util/strbuf.h"

typedef struct Report {
    StrBuf html;
    const char *svg_dir;       /* NULL: plots only inline */
    int nplots;
} Report;

void report_begin(Report *r, const char *title, const char *source);
/* Closes the page; returns the text (malloc'd) or NULL on out of memory. */
char *report_end(Report *r);
/* Puts an SVG plot (its text in svg, consumed) into the page under a
 * caption, and into svg_dir/NAME.svg when set. */
int report_plot(Report *r, const char *name, const char *caption, StrBuf *svg, AtlErr *e);
void report_heading(Report *r, int level, const char *text);
void report_para(Report *r, const char *text);
/* <table id=id> with a header row; then rows of cells; numeric cells are
 * right-aligned. */
void report_table_begin(Report *r, const char *id, const char *const *headers, int n);
void report_row_begin(Report *r);
void report_cell(Report *r, const char *text, int numeric);
void report_row_end(Report *r);
void report_table_end(Report *r);
/* A two-column key/value row of a summary table. */
void report_kv(Report *r, const char *key, const char *value);

/* Renders a stats JSON (and the per-layer names and estimates of
 * estimate_csv, from `atoll compile --csv`, when given). */
int report_stats(Report *r, const char *path, const char *estimate_csv, AtlErr *e);
/* Renders a sweep CSV. */
int report_sweep(Report *r, const char *path, AtlErr *e);
#endif
