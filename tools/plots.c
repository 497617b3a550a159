/* plots.c - Pareto front, roofline, per-layer bounds and engine timeline
 * (see plots.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/plots.h"
#include "tools/svg.h"

static const struct { const char *bound, *color; } bound_colors[] = {
    {"compute", "#1f77b4"}, {"dma", "#ff7f0e"}, {"sync", "#7f7f7f"},
};
#define NBOUNDS (int)(sizeof bound_colors / sizeof bound_colors[0])

const char *plot_bound_color(const char *bound)
{
    for (int i = 0; i < NBOUNDS; i++) if (bound && !strcmp(bound, bound_colors[i].bound)) return bound_colors[i].color;
    return "#bbbbbb";
}

static void bound_legend(SvgChart *c, int bottom)
{
    const char *names[NBOUNDS], *colors[NBOUNDS];
    for (int i = 0; i < NBOUNDS; i++) { names[i] = bound_colors[i].bound; colors[i] = bound_colors[i].color; }
    svg_legend(c, names, colors, NBOUNDS, bottom);
}

/* ---- Pareto ---- */

typedef struct CostItem { double x, y; int index; } CostItem;

static int by_cost(const void *a, const void *b)
{
    const CostItem *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    if (p->y != q->y) return p->y > q->y ? -1 : 1;
    return p->index - q->index;
}

/* Indices sorted by cost, then throughput (best first); malloc'd. */
static int *cost_order(const PlotPoint *p, int n)
{
    CostItem *items = malloc((size_t)(n ? n : 1) * sizeof *items);
    int *o = malloc((size_t)(n ? n : 1) * sizeof *o);
    if (!items || !o) { free(items); free(o); return NULL; }
    for (int i = 0; i < n; i++) items[i] = (CostItem){p[i].x, p[i].y, i};
    qsort(items, (size_t)n, sizeof *items, by_cost);
    for (int i = 0; i < n; i++) o[i] = items[i].index;
    free(items);
    return o;
}

int plot_pareto_front(const PlotPoint *p, int n, int *front)
{
    int *o = cost_order(p, n), count = 0;
    for (int i = 0; i < n; i++) front[i] = 0;
    if (!o) return 0;
    double best = -INFINITY;
    for (int k = 0; k < n; k++) {
        const PlotPoint *q = &p[o[k]];
        if (q->y > best) { front[o[k]] = 1; best = q->y; count++; }
    }
    free(o);
    return count;
}

void plot_pareto(StrBuf *b, const char *id, const char *title, const char *xlabel, const char *ylabel, const PlotPoint *p, int n)
{
    SvgChart c;
    svg_begin(&c, b, id, 640, 420, title);
    c.x.label = xlabel;
    c.y.label = ylabel;
    for (int i = 0; i < n; i++) { svg_axis_include(&c.x, p[i].x); svg_axis_include(&c.y, p[i].y); }
    svg_axis_pad(&c.x);
    svg_axis_pad(&c.y);
    svg_axes(&c);
    int *front = calloc((size_t)(n ? n : 1), sizeof *front);
    int *o = cost_order(p, n);
    double *fx = malloc((size_t)(2 * n + 1) * sizeof *fx), *fy = malloc((size_t)(2 * n + 1) * sizeof *fy);
    if (front && o && fx && fy) {
        plot_pareto_front(p, n, front);
        for (int i = 0; i < n; i++)
            if (!front[i]) svg_point(&c, p[i].x, p[i].y, 3.5, "#c8c8c8", p[i].label);
        int m = 0;
        for (int k = 0; k < n; k++) {     /* the staircase through the front, in cost order */
            const PlotPoint *q = &p[o[k]];
            if (!front[o[k]]) continue;
            if (m) { fx[m] = q->x; fy[m] = fy[m - 1]; m++; }
            fx[m] = q->x;
            fy[m] = q->y;
            m++;
        }
        svg_line(&c, fx, fy, m, "#d62728", 1.5, 0, "Pareto front");
        for (int i = 0; i < n; i++)
            if (front[i]) svg_point(&c, p[i].x, p[i].y, 5, "#d62728", p[i].label);
        const char *names[] = {"Pareto front", "dominated"}, *colors[] = {"#d62728", "#c8c8c8"};
        svg_legend(&c, names, colors, 2, 1);
    }
    free(front);
    free(o);
    free(fx);
    free(fy);
    svg_end(&c);
}

/* ---- roofline ---- */

void plot_roofline(StrBuf *b, const char *id, const char *title, const PlotLayer *l, int n, double freq_hz, const PlotRoof *roofs,
                   int nroofs, double dram_bytes_per_s)
{
    SvgChart c;
    svg_begin(&c, b, id, 720, 460, title);
    c.x.log = c.y.log = 1;
    c.x.label = "arithmetic intensity (ops per byte moved by DMA)";
    c.y.label = "achieved ops/s";
    for (int i = 0; i < n; i++) {
        if (l[i].macs <= 0 || l[i].dma_bytes <= 0 || l[i].cycles <= 0) continue;
        double ai = 2 * l[i].macs / l[i].dma_bytes, ops = 2 * l[i].macs * freq_hz / l[i].cycles;
        svg_axis_include(&c.x, ai);
        svg_axis_include(&c.y, ops);
    }
    double top = 0;
    for (int r = 0; r < nroofs; r++) if (roofs[r].ops_per_s > top) top = roofs[r].ops_per_s;
    svg_axis_include(&c.y, top);
    if (dram_bytes_per_s > 0 && top > 0) svg_axis_include(&c.x, top / dram_bytes_per_s);   /* the ridge */
    svg_axis_pad(&c.x);
    svg_axis_pad(&c.y);
    c.y.hi *= 2;
    svg_axes(&c);
    for (int r = 0; r < nroofs; r++) {
        double peak = roofs[r].ops_per_s, ridge = dram_bytes_per_s > 0 ? peak / dram_bytes_per_s : c.x.lo;
        double lo_x = c.x.lo, lo_y = dram_bytes_per_s * lo_x;
        if (lo_y < c.y.lo) { lo_y = c.y.lo; lo_x = lo_y / dram_bytes_per_s; }
        double xs[3] = {lo_x, ridge, c.x.hi}, ys[3] = {lo_y, peak, peak};
        char tip[160], pk[32];
        svg_format_number(peak, pk, sizeof pk);
        snprintf(tip, sizeof tip, "%s roof: %s ops/s; ridge at %.3g ops/byte", roofs[r].name, pk, ridge);
        if (dram_bytes_per_s > 0 && ridge > c.x.lo) svg_line(&c, xs, ys, 3, "#333", 1.5, r > 0, tip);
        else svg_line(&c, xs + 1, ys + 1, 2, "#333", 1.5, r > 0, tip);
        char lab[64];
        snprintf(lab, sizeof lab, "%s peak %s ops/s", roofs[r].name, pk);
        svg_text(&c, c.right - 4, svg_py(&c, peak) - 4, "end", 11, lab);
    }
    for (int i = 0; i < n; i++) {
        if (l[i].macs <= 0 || l[i].dma_bytes <= 0 || l[i].cycles <= 0) continue;
        double ai = 2 * l[i].macs / l[i].dma_bytes, ops = 2 * l[i].macs * freq_hz / l[i].cycles;
        char tip[400], o[32];
        svg_format_number(ops, o, sizeof o);
        snprintf(tip, sizeof tip, "%s: %.3g ops/byte, %s ops/s, %s-bound", l[i].label, ai, o, l[i].bound ? l[i].bound : "?");
        svg_point(&c, ai, ops, 4, plot_bound_color(l[i].bound), tip);
    }
    bound_legend(&c, 1);
    svg_end(&c);
}

/* ---- per-layer bounds ---- */

void plot_layer_bounds(StrBuf *b, const char *id, const char *title, const PlotLayer *l, int n)
{
    SvgChart c;
    double width = 200 + 9.0 * n;
    svg_begin(&c, b, id, width < 640 ? 640 : width > 1400 ? 1400 : width, 400, title);
    c.x.label = "layer (execution order)";
    c.y.label = "simulated cycles";
    c.x.lo = 0;
    c.x.hi = n > 0 ? n : 1;
    c.y.lo = 0;
    c.y.hi = 1;
    for (int i = 0; i < n; i++) if (l[i].cycles > c.y.hi) c.y.hi = l[i].cycles;
    c.y.hi *= 1.08;
    svg_axes(&c);
    for (int i = 0; i < n; i++) {
        char tip[400];
        snprintf(tip, sizeof tip, "%s: %.0f cycles, %s-bound", l[i].label, l[i].cycles, l[i].bound ? l[i].bound : "?");
        svg_bar(&c, i + 0.1, i + 0.9, 0, l[i].cycles, plot_bound_color(l[i].bound), tip);
    }
    bound_legend(&c, 0);
    svg_end(&c);
}

/* ---- engine timeline ---- */

void plot_engine_timeline(StrBuf *b, const char *id, const char *title, double bucket_cycles, const double *const busy[3], int nbuckets,
                          int cores)
{
    static const char *const names[3] = {"DMA", "matrix", "vector"}, *const colors[3] = {"#ff7f0e", "#1f77b4", "#2ca02c"};
    SvgChart c;
    svg_begin(&c, b, id, 720, 360, title);
    c.x.label = "simulated cycles";
    c.y.label = "engine utilisation (% of cores busy)";
    c.x.lo = 0;
    c.x.hi = bucket_cycles * (nbuckets > 0 ? nbuckets : 1);
    c.y.lo = 0;
    c.y.hi = 105;
    svg_axes(&c);
    double *xs = malloc((size_t)(2 * nbuckets + 1) * sizeof *xs), *ys = malloc((size_t)(2 * nbuckets + 1) * sizeof *ys);
    for (int g = 0; g < 3 && xs && ys; g++) {
        int m = 0;
        double sum = 0;
        for (int i = 0; i < nbuckets; i++) {    /* a step per bucket */
            double u = 100 * busy[g][i] / (bucket_cycles * (cores > 0 ? cores : 1));
            sum += busy[g][i];
            xs[m] = bucket_cycles * i; ys[m++] = u;
            xs[m] = bucket_cycles * (i + 1); ys[m++] = u;
        }
        char tip[128];
        snprintf(tip, sizeof tip, "%s: %.1f%% busy over the run", names[g],
                 nbuckets ? 100 * sum / (bucket_cycles * nbuckets * (cores > 0 ? cores : 1)) : 0.0);
        svg_line(&c, xs, ys, m, colors[g], 1.5, 0, tip);
    }
    free(xs);
    free(ys);
    svg_legend(&c, names, colors, 3, 0);
    svg_end(&c);
}
