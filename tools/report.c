/* report.c - the page, table and plot helpers of `atoll report` (see
 * report.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/report.h"
#include "tools/svg.h"
#include "util/file.h"

static const char style[] =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1500px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}h3{font-size:15px}"
    "table{border-collapse:collapse;margin:8px 0;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:3px 7px;text-align:left}th{background:#f0f0f0}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "figure{margin:12px 0}figcaption{font-size:13px;color:#555;max-width:720px}"
    ".bound-compute{color:#1f77b4}.bound-dma{color:#ff7f0e}.bound-sync{color:#7f7f7f}"
    ".failed{color:#b00}";

void report_begin(Report *r, const char *title, const char *source)
{
    memset(r, 0, sizeof *r);
    StrBuf *b = &r->html;
    sbuf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
    xml_put_text(b, title);
    sbuf_printf(b, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1 id=\"title\">", style);
    xml_put_text(b, title);
    sbuf_printf(b, "</h1>\n<p>Written by <code>atoll report</code> from <code>");
    xml_put_text(b, source);
    sbuf_printf(b, "</code>.</p>\n");
}

char *report_end(Report *r)
{
    sbuf_printf(&r->html, "</body>\n</html>\n");
    return sbuf_take(&r->html);
}

int report_plot(Report *r, const char *name, const char *caption, StrBuf *svg, AtlErr *e)
{
    char *text = sbuf_take(svg);
    if (!text) return atl_fail(e, "out of memory");
    sbuf_printf(&r->html, "<figure>\n");
    sbuf_put(&r->html, text, strlen(text));
    sbuf_printf(&r->html, "<figcaption>");
    xml_put_text(&r->html, caption);
    sbuf_printf(&r->html, "</figcaption>\n</figure>\n");
    r->nplots++;
    int rc = 0;
    if (r->svg_dir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.svg", r->svg_dir, name);
        StrBuf f = {0};
        sbuf_printf(&f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n%s", text);
        char *file = sbuf_take(&f);
        rc = file ? atl_write_file_atomic(path, file, strlen(file), e) : atl_fail(e, "out of memory");
        free(file);
    }
    free(text);
    return rc;
}

void report_heading(Report *r, int level, const char *text)
{
    sbuf_printf(&r->html, "<h%d>", level);
    xml_put_text(&r->html, text);
    sbuf_printf(&r->html, "</h%d>\n", level);
}

void report_para(Report *r, const char *text)
{
    sbuf_printf(&r->html, "<p>");
    xml_put_text(&r->html, text);
    sbuf_printf(&r->html, "</p>\n");
}

void report_table_begin(Report *r, const char *id, const char *const *headers, int n)
{
    sbuf_printf(&r->html, "<table id=\"%s\">\n", id);
    if (!n) return;
    sbuf_printf(&r->html, "<tr>");
    for (int i = 0; i < n; i++) {
        sbuf_printf(&r->html, "<th>");
        xml_put_text(&r->html, headers[i]);
        sbuf_printf(&r->html, "</th>");
    }
    sbuf_printf(&r->html, "</tr>\n");
}

void report_row_begin(Report *r) { sbuf_printf(&r->html, "<tr>"); }

void report_cell(Report *r, const char *text, int numeric)
{
    sbuf_printf(&r->html, numeric ? "<td class=\"num\">" : "<td>");
    xml_put_text(&r->html, text);
    sbuf_printf(&r->html, "</td>");
}

void report_row_end(Report *r) { sbuf_printf(&r->html, "</tr>\n"); }
void report_table_end(Report *r) { sbuf_printf(&r->html, "</table>\n"); }

void report_kv(Report *r, const char *key, const char *value)
{
    report_row_begin(r);
    sbuf_printf(&r->html, "<th>");
    xml_put_text(&r->html, key);
    sbuf_printf(&r->html, "</th>");
    report_cell(r, value, 1);
    report_row_end(r);
}
