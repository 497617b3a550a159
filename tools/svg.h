/* svg.h - a small SVG chart writer for Atoll's plots (tools/plots.h): a
 * plot area with linear or log axes, ticks and labels, then points, lines,
 * rectangles and text in data or pixel coordinates, and a legend. Output
 * is plain SVG 1.1 text appended to a StrBuf, with no script and no
 * external reference, so it can stand alone or sit inline in HTML.
 * Every element that stands for data carries a <title> (a tooltip in a
 * browser). Text is XML-escaped.
 */
#ifndef ATOLL_TOOLS_SVG_H
#define ATOLL_TOOLS_SVG_H
#include "util/strbuf.h"

typedef struct SvgAxis {
    double lo, hi;             /* data range shown */
    int log;                   /* 1: log10 scale (lo > 0) */
    const char *label;
} SvgAxis;

typedef struct SvgChart {
    StrBuf *b;
    double width, height;      /* pixels */
    double left, right, top, bottom;   /* the plot area, pixels */
    SvgAxis x, y;
} SvgChart;

/* Appends text with &, <, >, " and ' escaped. */
void xml_put_text(StrBuf *b, const char *text);

/* Opens <svg id="id"> with a title line; the plot area leaves margins for
 * the axes. Set c->x and c->y before svg_axes. */
void svg_begin(SvgChart *c, StrBuf *b, const char *id, double width, double height, const char *title);
/* Widens [lo, hi] to include v (skipping v <= 0 on log axes). */
void svg_axis_include(SvgAxis *a, double v);
/* Pads the range (log: to whole decades) so points do not sit on the frame. */
void svg_axis_pad(SvgAxis *a);
/* Frame, grid, ticks with numbers, axis labels. */
void svg_axes(SvgChart *c);
double svg_px(const SvgChart *c, double x);
double svg_py(const SvgChart *c, double y);
/* Data-coordinate shapes; title may be NULL. */
void svg_point(SvgChart *c, double x, double y, double r, const char *color, const char *title);
void svg_line(SvgChart *c, const double *xs, const double *ys, int n, const char *color, double width, int dashed,
              const char *title);
void svg_bar(SvgChart *c, double x0, double x1, double y0, double y1, const char *color, const char *title);
/* Pixel-coordinate text; anchor "start", "middle" or "end". */
void svg_text(SvgChart *c, double px, double py, const char *anchor, double size, const char *text);
/* A legend in the top-right (bottom = 0) or bottom-right corner of the
 * plot area. */
void svg_legend(SvgChart *c, const char *const *names, const char *const *colors, int n, int bottom);
void svg_end(SvgChart *c);
/* A number for a tick or table: 3 significant digits with k/M/G/T. */
void svg_format_number(double v, char *buf, size_t cap);
#endif
