/* plots.h - the four plots of a co-design study, as SVG (tools/svg.h):
 *
 *   Pareto front     throughput against a cost (area or energy) of the
 *                    points of a sweep; the points no other point beats on
 *                    both (higher throughput at no more cost) are the
 *                    front, drawn in colour and joined by a step line;
 *   roofline         every layer at (arithmetic intensity, achieved ops/s)
 *                    on log-log axes under the chip's roofs: the peak ops/s
 *                    of each matrix dtype and the DRAM bandwidth slope;
 *   layer bounds     the simulated cycles of every layer as a bar coloured
 *                    by what bound it (compute, DMA, sync);
 *   engine timeline  the utilisation of the DMA, matrix and vector engines
 *                    (busy / (bucket x cores)) over the run.
 */
#ifndef ATOLL_TOOLS_PLOTS_H
#define ATOLL_TOOLS_PLOTS_H
#include "util/strbuf.h"

typedef struct PlotPoint {
    double x, y;               /* cost, throughput */
    const char *label;         /* tooltip */
} PlotPoint;

/* Marks front[i] = 1 for the Pareto-optimal points (minimal x, maximal y);
 * returns how many. */
int plot_pareto_front(const PlotPoint *p, int n, int *front);
void plot_pareto(StrBuf *b, const char *id, const char *title, const char *xlabel, const char *ylabel, const PlotPoint *p,
                 int n);

typedef struct PlotLayer {
    const char *label;         /* "12 conv1 (Conv+Relu)" */
    const char *bound;         /* "compute", "dma", "sync" */
    double macs, dma_bytes, cycles;
} PlotLayer;

typedef struct PlotRoof {
    const char *name;          /* "f32" */
    double ops_per_s;
} PlotRoof;

void plot_roofline(StrBuf *b, const char *id, const char *title, const PlotLayer *l, int n, double freq_hz,
                   const PlotRoof *roofs, int nroofs, double dram_bytes_per_s);
void plot_layer_bounds(StrBuf *b, const char *id, const char *title, const PlotLayer *l, int n);
/* busy[engine][bucket]: busy cycles summed over cores (dma, mat, vec). */
void plot_engine_timeline(StrBuf *b, const char *id, const char *title, double bucket_cycles, const double *const busy[3],
                          int nbuckets, int cores);
/* The colour of a bound ("compute", "dma", "sync"; grey otherwise). */
const char *plot_bound_color(const char *bound);
#endif
