/* calib_stats.c - per-tensor statistics and the calibration methods
 * (see calib.h for each method's definition). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tools/calib.h"
#include "isa/numerics.h"

static const char *const method_names[CALIB_NMETHODS] = {"minmax", "percentile", "kl", "mse"};

const char *calib_method_name(int m) { return m >= 0 && m < CALIB_NMETHODS ? method_names[m] : "?"; }

int calib_method_parse(const char *s)
{
    for (int m = 0; m < CALIB_NMETHODS; m++) if (!strcmp(s, method_names[m])) return m;
    return -1;
}

int calib_method_needs_hist(int m) { return m != CALIB_MINMAX; }

void calib_stat_free(CalibStat *s)
{
    free(s->hist);
    free(s->ahist);
    memset(s, 0, sizeof *s);
}

void calib_stat_range(CalibStat *s, const IrTensor *v)
{
    int64_t n = ir_numel(v);
    if (!s->count) { s->min = INFINITY; s->max = -INFINITY; }
    for (int64_t i = 0; i < n; i++) {
        double x = v->dtype == IR_F32 ? ((const float *)v->data)[i] : ir_get_f(v, i);
        if (x < s->min) s->min = x;
        if (x > s->max) s->max = x;
    }
    s->count += n;
}

static int bin_of(double x, double lo, double width)
{
    if (!(width > 0)) return 0;
    double b = (x - lo) / width;
    return b < 0 ? 0 : b >= CALIB_BINS ? CALIB_BINS - 1 : (int)b;
}

int calib_stat_hist(CalibStat *s, const IrTensor *v, AtlErr *e)
{
    if (!s->hist) {
        s->hist = calloc(CALIB_BINS, sizeof *s->hist);
        s->ahist = calloc(CALIB_BINS, sizeof *s->ahist);
        if (!s->hist || !s->ahist) return atl_fail(e, "out of memory for the calibration histograms");
    }
    double w = (s->max - s->min) / CALIB_BINS, amax = fmax(fabs(s->min), fabs(s->max)), aw = amax / CALIB_BINS;
    int64_t n = ir_numel(v);
    for (int64_t i = 0; i < n; i++) {
        double x = v->dtype == IR_F32 ? ((const float *)v->data)[i] : ir_get_f(v, i);
        s->hist[bin_of(x, s->min, w)] += 1;
        s->ahist[bin_of(fabs(x), 0, aw)] += 1;
    }
    return 0;
}

/* The p-th percentile of the signed histogram (an upper bin edge for
 * hi, a lower one for lo). */
static double percentile_edge(const CalibStat *s, double frac, int upper)
{
    double total = 0, cum = 0, w = (s->max - s->min) / CALIB_BINS;
    for (int b = 0; b < CALIB_BINS; b++) total += s->hist[b];
    double target = frac * total;
    for (int b = 0; b < CALIB_BINS; b++) {
        cum += s->hist[b];
        if (upper ? cum >= target : cum > target) return upper ? s->min + (b + 1) * w : s->min + b * w;
    }
    return s->max;
}

/* TensorRT's entropy calibration on the |x| histogram: the threshold of
 * least KL(P || Q). */
static double kl_threshold(const CalibStat *s)
{
    enum { LEVELS = 128 };
    const double *h = s->ahist;
    double aw = fmax(fabs(s->min), fabs(s->max)) / CALIB_BINS;
    double *p = malloc(CALIB_BINS * sizeof *p), *q = malloc(CALIB_BINS * sizeof *q), tail[CALIB_BINS + 1];
    if (!p || !q) { free(p); free(q); return fmax(fabs(s->min), fabs(s->max)); }
    tail[CALIB_BINS] = 0;
    for (int b = CALIB_BINS - 1; b >= 0; b--) tail[b] = tail[b + 1] + h[b];
    double best = INFINITY;
    int best_i = CALIB_BINS;
    for (int i = LEVELS; i <= CALIB_BINS; i++) {
        double psum = 0, qsum = 0;
        for (int b = 0; b < i; b++) p[b] = h[b];
        p[i - 1] += tail[i];
        /* Q: the first i bins merged into LEVELS levels (the last takes the
         * remainder), each level spread over the bins where P is not 0 */
        int per = i / LEVELS;
        for (int j = 0; j < LEVELS; j++) {
            int a = j * per, z = j == LEVELS - 1 ? i : a + per;
            double sum = 0;
            int nz = 0;
            for (int b = a; b < z; b++) { sum += h[b]; nz += p[b] != 0; }
            for (int b = a; b < z; b++) q[b] = p[b] != 0 && nz ? sum / nz : 0;
        }
        for (int b = 0; b < i; b++) { psum += p[b]; qsum += q[b]; }
        if (!(psum > 0) || !(qsum > 0)) continue;
        double kl = 0;
        for (int b = 0; b < i; b++) {
            if (p[b] <= 0) continue;
            double pp = p[b] / psum, qq = q[b] > 0 ? q[b] / qsum : 1e-12;
            kl += pp * log(pp / qq);
        }
        if (kl < best) { best = kl; best_i = i; }
    }
    free(p);
    free(q);
    return (best_i + 0.5) * aw;
}

/* Squared error of quantising the signed histogram with range [lo, hi]. */
static double hist_mse(const CalibStat *s, double lo, double hi)
{
    float scale;
    int zp;
    calib_params(lo, hi, &scale, &zp);
    double w = (s->max - s->min) / CALIB_BINS, err = 0;
    for (int b = 0; b < CALIB_BINS; b++) {
        if (!s->hist[b]) continue;
        double v = s->min + (b + 0.5) * w, q = num_round_half_even(v / scale) + zp;
        q = q < -128 ? -128 : q > 127 ? 127 : q;
        double d = v - (q - zp) * scale;
        err += s->hist[b] * d * d;
    }
    return err;
}

void calib_range(const CalibStat *s, int method, double p, double *lo, double *hi)
{
    *lo = s->count ? s->min : 0;
    *hi = s->count ? s->max : 0;
    if (method == CALIB_MINMAX || !s->hist || !(s->max > s->min)) return;
    if (method == CALIB_PERCENTILE) {
        double f = p / 100;
        *hi = fmin(s->max, percentile_edge(s, f, 1));
        *lo = fmax(s->min, percentile_edge(s, 1 - f, 0));
    } else if (method == CALIB_KL) {
        double t = kl_threshold(s);
        *hi = fmin(s->max, t);
        *lo = fmax(s->min, -t);
    } else if (method == CALIB_MSE) {
        double best = INFINITY;
        for (int k = 128; k >= 1; k--) {
            double l = s->min * k / 128, h = s->max * k / 128, err = hist_mse(s, l, h);
            if (err < best) { best = err; *lo = l; *hi = h; }
        }
    }
}

void calib_params(double lo, double hi, float *scale, int *zp)
{
    double rlo = fmin(lo, 0), rhi = fmax(hi, 0);
    if (!(rhi - rlo > 1e-30)) { *scale = 1.0f; *zp = 0; return; }
    *scale = (float)((rhi - rlo) / 255);
    double z = num_round_half_even(-128 - rlo / *scale);
    *zp = (int)(z < -128 ? -128 : z > 127 ? 127 : z);
}
