/* svg.c - the SVG chart writer (see svg.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tools/svg.h"

void xml_put_text(StrBuf *b, const char *t)
{
    for (; *t; t++) {
        switch (*t) {
        case '&': sbuf_printf(b, "&amp;"); break;
        case '<': sbuf_printf(b, "&lt;"); break;
        case '>': sbuf_printf(b, "&gt;"); break;
        case '"': sbuf_printf(b, "&quot;"); break;
        case '\'': sbuf_printf(b, "&#39;"); break;
        default:
            if ((unsigned char)*t >= 0x20 || *t == '\n' || *t == '\t') sbuf_put(b, t, 1);
        }
    }
}

void svg_format_number(double v, char *buf, size_t cap)
{
    static const struct { double scale; const char *suffix; } units[] = {
        {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"},
    };
    double a = fabs(v);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (a >= units[i].scale) { snprintf(buf, cap, "%.3g%s", v / units[i].scale, units[i].suffix); return; }
    snprintf(buf, cap, "%.3g", v);
}

void svg_begin(SvgChart *c, StrBuf *b, const char *id, double width, double height, const char *title)
{
    memset(c, 0, sizeof *c);
    c->b = b;
    c->width = width;
    c->height = height;
    c->left = 78;
    c->right = width - 20;
    c->top = 34;
    c->bottom = height - 48;
    c->x.lo = c->y.lo = INFINITY;
    c->x.hi = c->y.hi = -INFINITY;
    sbuf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" class=\"plot\" width=\"%.0f\" height=\"%.0f\" "
                   "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
                id, width, height, width, height);
    sbuf_printf(b, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width, height);
    svg_text(c, width / 2, 20, "middle", 14, title);
}

void svg_axis_include(SvgAxis *a, double v)
{
    if (!isfinite(v) || (a->log && v <= 0)) return;
    if (v < a->lo) a->lo = v;
    if (v > a->hi) a->hi = v;
}

void svg_axis_pad(SvgAxis *a)
{
    if (!isfinite(a->lo) || !isfinite(a->hi)) { a->lo = a->log ? 1 : 0; a->hi = a->log ? 10 : 1; }
    if (a->log) {
        a->lo = pow(10, floor(log10(a->lo)));
        a->hi = pow(10, ceil(log10(a->hi)));
        if (a->hi <= a->lo) a->hi = a->lo * 10;
        return;
    }
    double span = a->hi - a->lo;
    if (span <= 0) span = fabs(a->hi) > 0 ? fabs(a->hi) : 1;
    a->lo -= span * 0.05;
    a->hi += span * 0.05;
}

static double frac(const SvgAxis *a, double v)
{
    if (a->log) {
        if (v <= 0) v = a->lo;
        return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
    }
    return a->hi > a->lo ? (v - a->lo) / (a->hi - a->lo) : 0.5;
}

double svg_px(const SvgChart *c, double x) { return c->left + frac(&c->x, x) * (c->right - c->left); }
double svg_py(const SvgChart *c, double y) { return c->bottom - frac(&c->y, y) * (c->bottom - c->top); }

/* Tick values of an axis: decades (log) or 1/2/5 x 10^k steps. */
static int ticks(const SvgAxis *a, double *t, int max)
{
    int n = 0;
    if (a->log) {
        for (double v = a->lo; v <= a->hi * 1.0001 && n < max; v *= 10) t[n++] = v;
        return n;
    }
    double raw = (a->hi - a->lo) / 6, mag = pow(10, floor(log10(raw))), step = mag;
    if (raw / mag > 5) step = 10 * mag;
    else if (raw / mag > 2) step = 5 * mag;
    else if (raw / mag > 1) step = 2 * mag;
    for (double v = ceil(a->lo / step) * step; v <= a->hi + step * 1e-9 && n < max; v += step) t[n++] = fabs(v) < step * 1e-9 ? 0 : v;
    return n;
}

void svg_axes(SvgChart *c)
{
    StrBuf *b = c->b;
    double t[64];
    char num[32];
    int n = ticks(&c->x, t, 64);
    for (int i = 0; i < n; i++) {
        double px = svg_px(c, t[i]);
        sbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n", px, c->top, px, c->bottom);
        svg_format_number(t[i], num, sizeof num);
        svg_text(c, px, c->bottom + 16, "middle", 11, num);
    }
    n = ticks(&c->y, t, 64);
    for (int i = 0; i < n; i++) {
        double py = svg_py(c, t[i]);
        sbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n", c->left, py, c->right, py);
        svg_format_number(t[i], num, sizeof num);
        svg_text(c, c->left - 6, py + 4, "end", 11, num);
    }
    sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n", c->left, c->top,
                c->right - c->left, c->bottom - c->top);
    if (c->x.label) svg_text(c, (c->left + c->right) / 2, c->height - 10, "middle", 12, c->x.label);
    if (c->y.label) {
        sbuf_printf(b, "<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 14 %.1f)\">",
                    (c->top + c->bottom) / 2, (c->top + c->bottom) / 2);
        xml_put_text(b, c->y.label);
        sbuf_printf(b, "</text>\n");
    }
}

static void put_title(StrBuf *b, const char *title)
{
    if (!title) return;
    sbuf_printf(b, "<title>");
    xml_put_text(b, title);
    sbuf_printf(b, "</title>");
}

void svg_point(SvgChart *c, double x, double y, double r, const char *color, const char *title)
{
    sbuf_printf(c->b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" fill-opacity=\"0.85\" stroke=\"#222\" stroke-width=\"0.5\">",
                svg_px(c, x), svg_py(c, y), r, color);
    put_title(c->b, title);
    sbuf_printf(c->b, "</circle>\n");
}

void svg_line(SvgChart *c, const double *xs, const double *ys, int n, const char *color, double width, int dashed, const char *title)
{
    if (n < 2) return;
    sbuf_printf(c->b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s points=\"", color, width,
                dashed ? " stroke-dasharray=\"6 4\"" : "");
    for (int i = 0; i < n; i++) sbuf_printf(c->b, "%s%.1f,%.1f", i ? " " : "", svg_px(c, xs[i]), svg_py(c, ys[i]));
    sbuf_printf(c->b, "\">");
    put_title(c->b, title);
    sbuf_printf(c->b, "</polyline>\n");
}

void svg_bar(SvgChart *c, double x0, double x1, double y0, double y1, const char *color, const char *title)
{
    double px0 = svg_px(c, x0), px1 = svg_px(c, x1), py0 = svg_py(c, y0), py1 = svg_py(c, y1);
    double x = px0 < px1 ? px0 : px1, y = py0 < py1 ? py0 : py1;
    sbuf_printf(c->b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">", x, y, fabs(px1 - px0), fabs(py1 - py0), color);
    put_title(c->b, title);
    sbuf_printf(c->b, "</rect>\n");
}

void svg_text(SvgChart *c, double px, double py, const char *anchor, double size, const char *text)
{
    sbuf_printf(c->b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%.0f\">", px, py, anchor, size);
    xml_put_text(c->b, text);
    sbuf_printf(c->b, "</text>\n");
}

void svg_legend(SvgChart *c, const char *const *names, const char *const *colors, int n, int bottom)
{
    double w = 0;
    for (int i = 0; i < n; i++) if (strlen(names[i]) * 6.5 + 24 > w) w = strlen(names[i]) * 6.5 + 24;
    double x = c->right - w - 8, y = bottom ? c->bottom - 8 - (18.0 * n + 6) : c->top + 8;
    sbuf_printf(c->b, "<g class=\"legend\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"white\" "
                      "fill-opacity=\"0.9\" stroke=\"#999\"/>\n", x, y, w, 18.0 * n + 6);
    for (int i = 0; i < n; i++) {
        sbuf_printf(c->b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>\n", x + 6, y + 7 + 18.0 * i, colors[i]);
        svg_text(c, x + 22, y + 16 + 18.0 * i, "start", 11, names[i]);
    }
    sbuf_printf(c->b, "</g>\n");
}

void svg_end(SvgChart *c)
{
    sbuf_printf(c->b, "</svg>\n");
}
