/* calib.h - calibration for `atoll quantize`: the calibration data, the
 * statistics the reference interpreter's runs leave per tensor, and the
 * methods that turn them into an int8 range (docs/quantization.md).
 *
 * Data (calib_data.c): an .npy (the model's only input), an .npz (arrays
 * named like the inputs; others are ignored) or a folder of them, in
 * name order. An array of shape [n, ...] for an input of [b, ...] holds
 * n / b samples. Every array is checked before use: dtype, shape, NaN and
 * infinities, each error naming the file, the tensor and the element.
 *
 * Statistics and methods (calib_stats.c): per tracked tensor min, max and
 * two 2048-bin histograms (signed values over [min, max], |x| over [0,
 * max |x|]) filled in a second pass when a method needs them:
 *   minmax      [min, max]
 *   percentile  the p-th and (100 - p)-th percentiles (p = 99.99 default)
 *   kl          TensorRT's entropy calibration: the |x| threshold T of
 *               least KL(P || Q) over candidate bins i = 128..2048, P the
 *               first i bins with the rest folded into the last, Q the
 *               first i bins merged into 128 levels (i / 128 bins each,
 *               the last level takes the remainder) and each level spread
 *               evenly over the bins where P is not 0; T = (i + 0.5) bin
 *               widths; range [-T, T] clipped to [min, max] (so [0, T]
 *               after a Relu)
 *   mse         the [min, max] shrunk by k/128 (k = 1..128) whose int8
 *               quantisation has the least squared error over the
 *               histogram
 * Scale and zero point of a range (calib_params): r_lo = min(lo, 0),
 * r_hi = max(hi, 0), scale = (r_hi - r_lo) / 255, zero point
 * round_half_even(-128 - r_lo / scale) (int8, asymmetric; 0 is exact). */
#ifndef ATOLL_TOOLS_CALIB_H
#define ATOLL_TOOLS_CALIB_H
#include "compiler/ir/ir.h"
#include "util/err.h"

/* The samples: sample s's value of graph input i is in[s * nin + i]
 * (named like the input, owned). */
typedef struct CalibData {
    int nsamples, nin;
    IrTensor *in;
} CalibData;

/* Reads paths (files or folders) for graph g's inputs (shapes known).
 * max_samples > 0 stops after that many. */
int calib_data_read(const IrGraph *g, const char *const *paths, int npaths, int max_samples, CalibData *d, AtlErr *e);
void calib_data_free(CalibData *d);
/* One deterministic pseudo-random sample of every input of g (values in
 * [-2, 2), a linear congruential generator from seed): for timing studies
 * of models without data (the demo's and the benchmark's ResNet-50). */
int calib_data_random(const IrGraph *g, uint32_t seed, CalibData *d, AtlErr *e);

enum { CALIB_MINMAX, CALIB_PERCENTILE, CALIB_KL, CALIB_MSE, CALIB_NMETHODS };
const char *calib_method_name(int m);
int calib_method_parse(const char *s);   /* -1 if unknown */
int calib_method_needs_hist(int m);

#define CALIB_BINS 2048

/* The statistics of one tensor. */
typedef struct CalibStat {
    double min, max;
    int64_t count;
    double *hist, *ahist;   /* CALIB_BINS each, NULL until the second pass */
} CalibStat;

/* The first pass: min and max of v's elements into s. */
void calib_stat_range(CalibStat *s, const IrTensor *v);
/* The second pass (after calib_stat_range over every sample): allocates
 * the histograms on first use and adds v's elements. -1 out of memory. */
int calib_stat_hist(CalibStat *s, const IrTensor *v, AtlErr *e);
void calib_stat_free(CalibStat *s);

/* The range of a method (p: the percentile). */
void calib_range(const CalibStat *s, int method, double p, double *lo, double *hi);
/* int8 scale and zero point of [lo, hi] (see the file comment). */
void calib_params(double lo, double hi, float *scale, int *zp);
#endif
