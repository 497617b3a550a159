/* report_stats.c - `atoll report STATS.json`: one run's summary, the
 * per-layer table (names, ops, estimates beside the simulated cycles, the
 * bound) and the roofline, per-layer bound and engine timeline plots. Layer
 * names and estimates come from the JSON's layer_info (written by
 * `atoll sweep --stats-dir`) or from an `atoll compile --csv` file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/report.h"
#include "tools/plots.h"
#include "tools/svg.h"
#include "util/csv.h"
#include "util/file.h"
#include "util/json.h"

/* What the compiler says about a layer. */
typedef struct LayerInfo {
    int layer;
    char name[160], op[48];
    double est_cycles;
    int known;
} LayerInfo;

static void num(char *buf, size_t cap, double v) { snprintf(buf, cap, "%.0f", v); }

/* layer_info of a JSON written by atoll sweep --stats-dir. */
static void info_from_json(const JsonValue *arr, LayerInfo *info, int n)
{
    for (int i = 0; arr && arr->kind == JSON_ARRAY && i < arr->count; i++) {
        const JsonValue *x = &arr->items[i];
        int id = (int)json_number(json_get(x, "layer"), -1);
        if (id < 0 || id >= n) continue;
        snprintf(info[id].name, sizeof info[id].name, "%s", json_string(json_get(x, "name"), ""));
        snprintf(info[id].op, sizeof info[id].op, "%s", json_string(json_get(x, "op"), ""));
        info[id].est_cycles = json_number(json_get(x, "est_cycles"), 0);
        info[id].known = 1;
    }
}

/* The rows of the first batch size of an `atoll compile --csv` file. */
static int info_from_csv(const char *path, LayerInfo *info, int n, AtlErr *e)
{
    AtlCsv c;
    if (csv_read_file(path, &c, e)) return -1;
    int rc = 0;
    if (!c.nrecords || c.records[0].nfields < 9 || strcmp(c.records[0].fields[0], "batch") || strcmp(c.records[0].fields[2], "name")) {
        csv_free(&c);
        return atl_fail(e, "%s:1: not an `atoll compile --csv` table (batch,layer,name,op,...)", path);
    }
    const char *batch = c.nrecords > 1 ? c.records[1].fields[0] : "";
    for (int i = 1; i < c.nrecords; i++) {
        const AtlCsvRecord *r = &c.records[i];
        if (r->nfields != c.records[0].nfields) { rc = atl_fail(e, "%s:%d: %d fields, the header has %d", path, r->line, r->nfields, c.records[0].nfields); break; }
        if (strcmp(r->fields[0], batch)) continue;
        int id = atoi(r->fields[1]);
        if (id < 0 || id >= n) continue;
        snprintf(info[id].name, sizeof info[id].name, "%s", r->fields[2]);
        snprintf(info[id].op, sizeof info[id].op, "%s", r->fields[3]);
        info[id].est_cycles = atof(r->fields[8]);
        info[id].known = 1;
    }
    csv_free(&c);
    return rc;
}

static void summary(Report *r, const JsonValue *j)
{
    char v[160], a[32], b[32];
    const JsonValue *cf = json_get(j, "chip_figures"), *en = json_get(j, "energy_pj"), *by = json_get(j, "bytes");
    const JsonValue *area = json_get(j, "area_mm2"), *pt = json_get(j, "point");
    report_heading(r, 2, "Summary");
    report_table_begin(r, "summary", NULL, 0);
    snprintf(v, sizeof v, "%s", json_string(json_get(j, "chip"), "?"));
    report_kv(r, "chip", v);
    if (cf) {
        snprintf(v, sizeof v, "%.0f cores, %.0fx%.0f arrays, %.0f MHz", json_number(json_get(cf, "cores"), 0),
                 json_number(json_get(cf, "mm_rows"), 0), json_number(json_get(cf, "mm_cols"), 0), json_number(json_get(cf, "freq_mhz"), 0));
        report_kv(r, "structure", v);
    }
    if (pt) {
        snprintf(v, sizeof v, "%s, %s, batch %.0f (sweep point %.0f)", json_string(json_get(pt, "model"), "?"),
                 json_string(json_get(pt, "dtype"), "?"), json_number(json_get(pt, "batch"), 0), json_number(json_get(pt, "id"), 0));
        report_kv(r, "workload", v);
    }
    report_kv(r, "simulation mode", json_string(json_get(j, "mode"), "?"));
    double cycles = json_number(json_get(j, "cycles"), 0), secs = json_number(json_get(j, "seconds"), 0);
    snprintf(v, sizeof v, "%.0f (%.6g ms)", cycles, secs * 1e3);
    report_kv(r, "cycles", v);
    if (pt && secs > 0) {
        snprintf(v, sizeof v, "%.6g", json_number(json_get(pt, "batch"), 1) / secs);
        report_kv(r, "images/s", v);
    }
    svg_format_number(json_number(json_get(j, "macs"), 0), a, sizeof a);
    snprintf(v, sizeof v, "%s, %.2f%% of the matrix units' peak", a, 100 * json_number(json_get(j, "mm_utilisation"), 0));
    report_kv(r, "MACs", v);
    svg_format_number(json_number(json_get(by, "dram_rd"), 0), a, sizeof a);
    svg_format_number(json_number(json_get(by, "dram_wr"), 0), b, sizeof b);
    snprintf(v, sizeof v, "%s read, %s written", a, b);
    report_kv(r, "DRAM bytes", v);
    snprintf(v, sizeof v, "%.6g uJ (MAC %.3g, vector %.3g, LMEM %.3g, SRAM %.3g, NoC %.3g, DRAM %.3g, static %.3g)",
             json_number(json_get(en, "total"), 0) * 1e-6, json_number(json_get(en, "mac"), 0) * 1e-6, json_number(json_get(en, "vector"), 0) * 1e-6,
             json_number(json_get(en, "lmem"), 0) * 1e-6, json_number(json_get(en, "sram"), 0) * 1e-6, json_number(json_get(en, "noc"), 0) * 1e-6,
             json_number(json_get(en, "dram"), 0) * 1e-6, json_number(json_get(en, "static"), 0) * 1e-6);
    report_kv(r, "energy", v);
    if (area && area->kind == JSON_OBJECT) {
        snprintf(v, sizeof v, "%.4g mm2 at %s", json_number(json_get(area, "total"), 0), json_string(json_get(area, "node"), "?"));
        report_kv(r, "area", v);
    }
    const JsonValue *fault = json_get(j, "fault");
    if (fault && fault->kind == JSON_OBJECT) report_kv(r, "fault", json_string(json_get(fault, "message"), "?"));
    report_table_end(r);
}

/* One row of the layers table: layer l of the stats JSON (id: its id, or
 * "G.M" for member M of group G; in: the compiler's row, NULL if none;
 * cyc: its span, a member's share of its group's). */
static void layer_row(Report *r, const JsonValue *l, const char *id, const char *name, const LayerInfo *in, double cyc)
{
    char v[64];
    report_row_begin(r);
    report_cell(r, id, 1);
    report_cell(r, in ? in->name : name, 0);
    report_cell(r, in ? in->op : "", 0);
    const char *bound = json_string(json_get(l, "bound"), "");
    sbuf_printf(&r->html, "<td class=\"bound-%s\">", bound);
    xml_put_text(&r->html, bound);
    sbuf_printf(&r->html, "</td>");
    if (in) num(v, sizeof v, in->est_cycles); else v[0] = 0;
    report_cell(r, v, 1);
    num(v, sizeof v, cyc);
    report_cell(r, v, 1);
    if (in && in->est_cycles > 0) snprintf(v, sizeof v, "%.2f", cyc / in->est_cycles); else v[0] = 0;
    report_cell(r, v, 1);
    static const char *const keys[] = {"macs", "dma_bytes", "busy_dma", "busy_mat", "busy_vec", "sync", "held"};
    for (int k = 0; k < 7; k++) {
        num(v, sizeof v, json_number(json_get(l, keys[k]), 0));
        report_cell(r, v, 1);
    }
    report_row_end(r);
}

static void layer_table(Report *r, const JsonValue *layers, const LayerInfo *info, int n)
{
    static const char *const head[] = {"layer", "name", "op", "bound", "estimated cycles", "simulated cycles", "sim / est",
                                       "MACs", "DMA bytes", "DMA busy", "matrix busy", "vector busy", "sync", "held"};
    report_heading(r, 2, "Layers");
    report_table_begin(r, "layers", head, (int)(sizeof head / sizeof head[0]));
    for (int i = 0; i < layers->count; i++) {
        const JsonValue *l = &layers->items[i];
        int id = (int)json_number(json_get(l, "layer"), -1);
        const LayerInfo *in = id >= 0 && id < n && info[id].known ? &info[id] : NULL;
        char v[32], name[48];
        snprintf(v, sizeof v, "%d", id);
        layer_row(r, l, v, "", in, json_number(json_get(l, "last"), 0) - json_number(json_get(l, "first"), 0));
        /* a layer group's members under it, their cycles their shares of its span */
        const JsonValue *ms = json_get(l, "members");
        for (int k = 0; ms && ms->kind == JSON_ARRAY && k < ms->count; k++) {
            const JsonValue *m = &ms->items[k];
            int mi = (int)json_number(json_get(m, "member"), -1);
            snprintf(v, sizeof v, "%d.%d", id, mi);
            snprintf(name, sizeof name, "member %d of layer %d", mi, id);
            layer_row(r, m, v, name, NULL, json_number(json_get(m, "cycles"), 0));
        }
    }
    report_table_end(r);
}

/* "12 conv1 (Conv+Relu)" for tooltips. */
static char *layer_label(const LayerInfo *in, int id)
{
    char *s = malloc(220);
    if (!s) return NULL;
    if (in && in->known) snprintf(s, 220, "layer %d %s (%s)", id, in->name, in->op);
    else snprintf(s, 220, "layer %d", id);
    return s;
}

static int plots(Report *r, const JsonValue *j, const JsonValue *layers, const LayerInfo *info, int n, AtlErr *e)
{
    int nl = layers->count, rc = 0;
    PlotLayer *pl = calloc((size_t)nl + 1, sizeof *pl);
    char **labels = calloc((size_t)nl + 1, sizeof *labels);
    if (!pl || !labels) { free(pl); free(labels); return atl_fail(e, "out of memory"); }
    for (int i = 0; i < nl; i++) {
        const JsonValue *l = &layers->items[i];
        int id = (int)json_number(json_get(l, "layer"), -1);
        labels[i] = layer_label(id >= 0 && id < n ? &info[id] : NULL, id);
        pl[i].label = labels[i] ? labels[i] : "layer";
        pl[i].bound = json_string(json_get(l, "bound"), "");
        pl[i].macs = json_number(json_get(l, "macs"), 0);
        pl[i].dma_bytes = json_number(json_get(l, "dma_bytes"), 0);
        pl[i].cycles = json_number(json_get(l, "last"), 0) - json_number(json_get(l, "first"), 0);
    }
    report_heading(r, 2, "Plots");
    const JsonValue *cf = json_get(j, "chip_figures");
    StrBuf svg = {0};
    if (cf) {
        const JsonValue *peaks = json_get(cf, "peak_ops_per_s");
        PlotRoof roofs[8];
        int nr = 0;
        for (int k = 0; peaks && peaks->kind == JSON_OBJECT && k < peaks->count && nr < 8; k++) {
            double v = json_number(&peaks->items[k], 0);
            int dup = 0;
            for (int q = 0; q < nr; q++) dup |= roofs[q].ops_per_s == v;   /* f16 and bf16 share a roof */
            if (!dup && v > 0) roofs[nr++] = (PlotRoof){peaks->keys[k], v};
        }
        plot_roofline(&svg, "roofline", "Roofline: every layer against the chip's roofs", pl, nl,
                      json_number(json_get(cf, "freq_mhz"), 1000) * 1e6, roofs, nr, json_number(json_get(cf, "dram_bytes_per_s"), 0));
        rc = report_plot(r, "roofline", "Each point is a layer with MACs: 2 x MACs per byte its DMA moved, against 2 x MACs per "
                         "second of its simulated span. The solid and dashed lines are the roofs: DRAM bandwidth x intensity up to the "
                         "peak ops/s of each matrix dtype. Colour: what bound the layer.", &svg, e);
    } else {
        report_para(r, "No roofline: the stats JSON has no chip_figures (written by an older atoll).");
    }
    if (!rc) {
        plot_layer_bounds(&svg, "layer-bounds", "Simulated cycles per layer, by bound", pl, nl);
        rc = report_plot(r, "layer-bounds", "One bar per layer in execution order: its simulated span (first instruction to last "
                         "completion), coloured by its bound: compute (a compute engine was busiest), DMA, or sync (no engine was busy "
                         "for most of the span).", &svg, e);
    }
    const JsonValue *tl = json_get(j, "timeline");
    if (!rc && tl) {
        const JsonValue *s[3] = {json_get(tl, "dma"), json_get(tl, "mat"), json_get(tl, "vec")};
        int nb = s[0] && s[0]->kind == JSON_ARRAY ? s[0]->count : 0;
        double *busy[3] = {NULL, NULL, NULL};
        for (int g = 0; g < 3; g++) {
            busy[g] = calloc((size_t)nb + 1, sizeof *busy[g]);
            for (int i = 0; busy[g] && i < nb; i++)
                busy[g][i] = s[g] && s[g]->kind == JSON_ARRAY && i < s[g]->count ? json_number(&s[g]->items[i], 0) : 0;
        }
        if (busy[0] && busy[1] && busy[2]) {
            const double *const bb[3] = {busy[0], busy[1], busy[2]};
            plot_engine_timeline(&svg, "engine-timeline", "Engine utilisation over time", json_number(json_get(tl, "bucket_cycles"), 64), bb, nb,
                                 (int)json_number(json_get(cf, "cores"), 1));
            rc = report_plot(r, "engine-timeline", "Busy cycles of each engine kind summed over the cores, per time bucket, as a "
                             "share of bucket x cores.", &svg, e);
        } else {
            rc = atl_fail(e, "out of memory");
        }
        for (int g = 0; g < 3; g++) free(busy[g]);
    }
    sbuf_free(&svg);
    for (int i = 0; i < nl; i++) free(labels[i]);
    free(labels);
    free(pl);
    return rc;
}

int report_stats(Report *r, const char *path, const char *estimate_csv, AtlErr *e)
{
    unsigned char *text;
    size_t len;
    if (atl_read_file(path, &text, &len, e)) return -1;
    JsonValue *j;
    int rc = json_parse(path, (const char *)text, len, &j, e);
    free(text);
    if (rc) return -1;
    const JsonValue *layers = json_get(j, "layers");
    if (!json_get(j, "cycles") || !layers || layers->kind != JSON_ARRAY) {
        json_free(j);
        return atl_fail(e, "%s: not an Atoll stats JSON (no \"cycles\" or \"layers\"; see docs/simulator.md)", path);
    }
    int n = 0;
    for (int i = 0; i < layers->count; i++) {
        int id = (int)json_number(json_get(&layers->items[i], "layer"), -1);
        if (id >= n && id < 1000000) n = id + 1;
    }
    LayerInfo *info = calloc((size_t)n + 1, sizeof *info);
    if (!info) { json_free(j); return atl_fail(e, "out of memory"); }
    info_from_json(json_get(j, "layer_info"), info, n);
    if (estimate_csv) rc = info_from_csv(estimate_csv, info, n, e);
    if (!rc) {
        summary(r, j);
        layer_table(r, layers, info, n);
        rc = plots(r, j, layers, info, n, e);
    }
    free(info);
    json_free(j);
    return rc;
}
