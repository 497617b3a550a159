/* quantize.c - the quantisation driver (see quantize.h): calibration on
 * the reference interpreter, parameters per tensor, the QDQ graph, its
 * cosine against the float model, and the fallback search. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tools/quantize.h"
#include "compiler/interp/interp.h"
#include "compiler/ops/qdq.h"
#include "compiler/onnx/onnx.h"
#include "compiler/passes/passes.h"
#include "tools/model_io.h"
#include "util/file.h"

void qz_options_default(QzOptions *o)
{
    memset(o, 0, sizeof *o);
    o->method = CALIB_MINMAX;
    o->percentile = 99.99;
    o->fallback = QZ_FALLBACK_NONE;
    o->target_cos = 0.99;
}

void qz_result_free(QzResult *r)
{
    ir_free(&r->qdq);
    free(r->tensors);
    free(r->layers);
    memset(r, 0, sizeof *r);
}

/* Everything a run of the driver shares. */
typedef struct Qz {
    const IrGraph *g;
    const CalibData *d;
    const QzOptions *o;
    int *track;            /* per tensor: index into st, -1 untracked */
    CalibStat *st;
    int nst;
    int hist;              /* second pass: histograms */
    IrTensor *ref;         /* float outputs, sample-major */
    float *scale;          /* per tensor */
    int *zp;
    int *unit, *qt, *same, *keep;
} Qz;

static int observe(void *ctx, int t, const IrTensor *v, AtlErr *e)
{
    Qz *z = ctx;
    if (t >= z->g->nt || z->track[t] < 0) return 0;
    CalibStat *s = &z->st[z->track[t]];
    if (!z->hist) { calib_stat_range(s, v); return 0; }
    return calib_stat_hist(s, v, e);
}

/* One pass of the float graph over every sample (the first keeps the outputs). */
static int calib_pass(Qz *z, AtlErr *e)
{
    const CalibData *d = z->d;
    for (int s = 0; s < d->nsamples; s++) {
        const IrTensor *in = &d->in[s * d->nin];
        for (int i = 0; i < d->nin; i++) {   /* graph inputs are no node's output: observe them here */
            int t = z->g->inputs[i];
            if (observe(z, t, &in[i], e)) return -1;
        }
        IrTensor *outs = NULL;
        if (interp_run_observed(z->g, in, d->nin, &outs, observe, z, e)) return atl_err_prefix(e, "calibration sample %d", s);
        if (!z->hist) memcpy(&z->ref[s * z->g->nout], outs, (size_t)z->g->nout * sizeof *outs);
        else interp_free_outputs(outs, z->g->nout);
        if (!z->hist) free(outs);
        if (z->o->progress && (s + 1 == d->nsamples || (s + 1) % 16 == 0))
            fprintf(z->o->progress, "calibration %s: %d/%d samples\n", z->hist ? "histograms" : "ranges", s + 1, d->nsamples);
    }
    return 0;
}

/* Builds the QDQ graph of the plan for z->keep into out. */
static int build_plan(Qz *z, IrGraph *out, AtlErr *e)
{
    const IrGraph *g = z->g;
    qz_plan(g, z->keep, z->unit, z->qt, z->same);
    float *sc = malloc((size_t)g->nt * sizeof *sc);
    int *zp = malloc((size_t)g->nt * sizeof *zp);
    if (!sc || !zp) { free(sc); free(zp); return atl_fail(e, "out of memory"); }
    for (int t = 0; t < g->nt; t++) {
        int src = z->same[t] >= 0 ? z->same[t] : t;
        sc[t] = z->scale[src];
        zp[t] = z->zp[src];
        if (z->qt[t] && z->track[src] < 0) { free(sc); free(zp); return atl_fail(e, "internal: tensor '%s' was not calibrated", g->t[t].name); }
    }
    int rc = qz_build(g, z->unit, z->qt, sc, zp, out, e);
    free(sc);
    free(zp);
    return rc;
}

/* Cosine of the QDQ graph's outputs against the float ones over all samples. */
static int eval_cos(Qz *z, const IrGraph *qdq, double *cos, AtlErr *e)
{
    IrGraph f;
    if (ir_clone(qdq, &f, e)) return -1;
    int rc = -1;
    if (qdq_fuse(&f, NULL, e) || ir_toposort(&f, e)) goto done;
    double ab = 0, aa = 0, bb = 0;
    for (int s = 0; s < z->d->nsamples; s++) {
        IrTensor *outs = NULL;
        if (interp_run(&f, &z->d->in[s * z->d->nin], z->d->nin, &outs, e)) { atl_err_prefix(e, "QDQ model, sample %d", s); goto done; }
        for (int k = 0; k < f.nout; k++) {
            const IrTensor *r = &z->ref[s * f.nout + k];
            for (int64_t i = 0; i < ir_numel(r); i++) {
                double a = ir_get_f(r, i), b = ir_get_f(&outs[k], i);
                ab += a * b; aa += a * a; bb += b * b;
            }
        }
        interp_free_outputs(outs, f.nout);
    }
    *cos = aa == 0 && bb == 0 ? 1 : aa == 0 || bb == 0 ? 0 : ab / sqrt(aa * bb);
    rc = 0;
done:
    ir_free(&f);
    return rc;
}

static int plan_cos(Qz *z, double *cos, IrGraph *keep_graph, AtlErr *e)
{
    IrGraph q;
    if (build_plan(z, &q, e)) return -1;
    int rc = eval_cos(z, &q, cos, e);
    if (!rc && keep_graph) *keep_graph = q;
    else ir_free(&q);
    return rc;
}

static int is_layer(int kind) { return kind == QDQ_MATRIX || kind == QDQ_ADD || kind == QDQ_POOL; }

static int by_sensitivity(const void *a, const void *b)
{
    const QzLayer *x = a, *y = b;
    return x->cos_alone < y->cos_alone ? -1 : x->cos_alone > y->cos_alone ? 1 : x->node - y->node;
}

/* fallback auto: each layer's cosine alone, then the least accurate kept
 * float one by one until the target is reached. */
static int fallback(Qz *z, QzResult *r, AtlErr *e)
{
    const IrGraph *g = z->g;
    FILE *pf = z->o->progress;
    int *base = malloc((size_t)g->nn * sizeof *base);
    if (!base) return atl_fail(e, "out of memory");
    memcpy(base, z->keep, (size_t)g->nn * sizeof *base);
    for (int l = 0; l < r->nlayers; l++) {
        memcpy(z->keep, base, (size_t)g->nn * sizeof *base);
        for (int m = 0; m < r->nlayers; m++) z->keep[r->layers[m].node] = m != l || base[r->layers[m].node];
        if (plan_cos(z, &r->layers[l].cos_alone, NULL, e)) { free(base); return -1; }
        if (pf) fprintf(pf, "sensitivity %d/%d: %s (%s) alone in int8: cosine %.6f\n", l + 1, r->nlayers,
                        g->nodes[r->layers[l].node].name, g->nodes[r->layers[l].node].op, r->layers[l].cos_alone);
    }
    QzLayer *order = malloc((size_t)r->nlayers * sizeof *order);
    if (!order) { free(base); return atl_fail(e, "out of memory"); }
    memcpy(order, r->layers, (size_t)r->nlayers * sizeof *order);
    qsort(order, (size_t)r->nlayers, sizeof *order, by_sensitivity);
    memcpy(z->keep, base, (size_t)g->nn * sizeof *base);
    double cos = r->cos;
    for (int k = 0; k < r->nlayers && cos < z->o->target_cos; k++) {
        z->keep[order[k].node] = 1;
        for (int l = 0; l < r->nlayers; l++) if (r->layers[l].node == order[k].node) r->layers[l].kept_float = 1;
        if (plan_cos(z, &cos, NULL, e)) { free(order); free(base); return -1; }
        if (pf) fprintf(pf, "fallback: %s (%s) kept float: cosine %.6f\n", g->nodes[order[k].node].name,
                        g->nodes[order[k].node].op, cos);
    }
    free(order);
    free(base);
    r->cos = cos;
    return 0;
}

int qz_quantize(const IrGraph *g, const CalibData *d, const QzOptions *o, QzResult *r, AtlErr *e)
{
    memset(r, 0, sizeof *r);
    ir_init(&r->qdq);
    Qz z;
    memset(&z, 0, sizeof z);
    z.g = g; z.d = d; z.o = o;
    int rc = -1, nt = g->nt, nn = g->nn;
    z.track = malloc((size_t)nt * sizeof *z.track);
    z.scale = calloc((size_t)nt, sizeof *z.scale);
    z.zp = calloc((size_t)nt, sizeof *z.zp);
    z.qt = calloc((size_t)nt, sizeof *z.qt);
    z.same = calloc((size_t)nt, sizeof *z.same);
    z.unit = calloc((size_t)nn + 1, sizeof *z.unit);
    z.keep = calloc((size_t)nn + 1, sizeof *z.keep);
    z.ref = calloc((size_t)d->nsamples * (size_t)g->nout + 1, sizeof *z.ref);
    if (!z.track || !z.scale || !z.zp || !z.qt || !z.same || !z.unit || !z.keep || !z.ref) { atl_fail(e, "out of memory"); goto done; }
    for (int k = 0; k < o->nkeep; k++) {
        int found = 0;
        for (int i = 0; i < nn; i++) if (!g->nodes[i].dead && !strcmp(g->nodes[i].name, o->keep_float[k])) { z.keep[i] = 1; found = 1; }
        if (!found) { atl_fail(e, "--keep-float %s: no such node", o->keep_float[k]); goto done; }
    }
    /* the tensors any plan quantises are those of the full plan */
    qz_plan(g, z.keep, z.unit, z.qt, z.same);
    for (int t = 0; t < nt; t++) z.track[t] = z.qt[t] ? z.nst++ : -1;
    z.st = calloc((size_t)z.nst + 1, sizeof *z.st);
    if (!z.st) { atl_fail(e, "out of memory"); goto done; }
    if (o->progress) fprintf(o->progress, "calibrating %d tensors on %d samples (%s)\n", z.nst, d->nsamples, calib_method_name(o->method));
    if (calib_pass(&z, e)) goto done;
    if (calib_method_needs_hist(o->method)) {
        z.hist = 1;
        if (calib_pass(&z, e)) goto done;
    }
    r->tensors = calloc((size_t)z.nst + 1, sizeof *r->tensors);
    if (!r->tensors) { atl_fail(e, "out of memory"); goto done; }
    for (int t = 0; t < nt; t++) {
        if (z.track[t] < 0) continue;
        QzTensor *q = &r->tensors[r->ntensors++];
        const CalibStat *s = &z.st[z.track[t]];
        q->t = t;
        q->same_as = z.same[t];
        q->min = s->min;
        q->max = s->max;
        /* a graph output keeps its whole range: clipping it changes the model's answer itself */
        calib_range(s, g->t[t].is_output ? CALIB_MINMAX : o->method, o->percentile, &q->lo, &q->hi);
        calib_params(q->lo, q->hi, &z.scale[t], &z.zp[t]);
    }
    for (int i = 0; i < r->ntensors; i++) {   /* shared parameters (data movement) */
        QzTensor *q = &r->tensors[i];
        int src = q->same_as >= 0 ? q->same_as : q->t;
        q->scale = z.scale[src];
        q->zp = z.zp[src];
    }
    r->layers = calloc((size_t)nn + 1, sizeof *r->layers);
    if (!r->layers) { atl_fail(e, "out of memory"); goto done; }
    for (int i = 0; i < nn; i++)
        if (is_layer(z.unit[i])) { r->layers[r->nlayers].node = i; r->layers[r->nlayers++].cos_alone = NAN; }
    r->nsamples = d->nsamples;
    if (o->skip_eval && o->fallback == QZ_FALLBACK_NONE) {   /* no cosine: the QDQ graph only */
        r->cos = NAN;
        if (build_plan(&z, &r->qdq, e)) goto done;
        rc = 0;
        goto done;
    }
    if (plan_cos(&z, &r->cos, NULL, e)) goto done;
    if (o->progress) fprintf(o->progress, "int8 model: %d layers in int8, cosine %.6f to the float model\n", r->nlayers, r->cos);
    if (o->fallback == QZ_FALLBACK_AUTO && r->cos < o->target_cos && fallback(&z, r, e)) goto done;
    if (plan_cos(&z, &r->cos, &r->qdq, e)) goto done;
    rc = 0;
done:
    for (int i = 0; i < z.nst && z.st; i++) calib_stat_free(&z.st[i]);
    if (z.ref) for (int i = 0; i < d->nsamples * g->nout; i++) ir_tensor_free_contents(&z.ref[i]);
    free(z.st); free(z.track); free(z.scale); free(z.zp); free(z.qt); free(z.same); free(z.unit); free(z.keep); free(z.ref);
    if (rc) qz_result_free(r);
    return rc;
}

void qz_write_table(const IrGraph *g, const QzResult *r, const QzOptions *o, FILE *f)
{
    fprintf(f, "# int8 ranges: %s calibration on %d samples", calib_method_name(o->method), r->nsamples);
    if (o->method == CALIB_PERCENTILE) fprintf(f, " (percentile %g)", o->percentile);
    fprintf(f, "; cosine to the float model %.6f\n", r->cos);
    fprintf(f, "%-48s %14s %14s %14s %14s %14s %5s  %s\n", "tensor", "min", "max", "range_lo", "range_hi", "scale", "zp", "note");
    for (int i = 0; i < r->ntensors; i++) {
        const QzTensor *q = &r->tensors[i];
        char note[600] = "";
        if (q->same_as >= 0) snprintf(note, sizeof note, "parameters of %s", g->t[q->same_as].name);
        fprintf(f, "%-48s %14.6g %14.6g %14.6g %14.6g %14.6g %5d  %s\n", g->t[q->t].name, q->min, q->max, q->lo, q->hi,
                (double)q->scale, q->zp, note);
    }
    fprintf(f, "\n%-48s %-12s %14s  %s\n", "layer", "op", "cos_alone", "precision");
    for (int i = 0; i < r->nlayers; i++) {
        const QzLayer *l = &r->layers[i];
        fprintf(f, "%-48s %-12s %14.6f  %s\n", g->nodes[l->node].name, g->nodes[l->node].op, l->cos_alone,
                l->kept_float ? "float (fallback)" : "int8");
    }
}

int qz_restore_declared(const char *model, const OnnxLoadOpts *lo, IrGraph *q, AtlErr *e)
{
    IrGraph raw;
    OnnxLoadOpts o = {lo ? lo->synthetic_weights : 0, 0, 0, lo ? lo->synthetic_max_bytes : 0};
    if (onnx_load_file_opts(model, &o, &raw, e)) { ir_free(&raw); return -1; }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < (pass ? raw.nout : raw.nin); i++) {
            const IrTensor *d = &raw.t[pass ? raw.outputs[i] : raw.inputs[i]];
            int t = ir_find(q, d->name);
            if (t < 0) continue;
            q->t[t].ndim = d->ndim;
            memcpy(q->t[t].dims, d->dims, sizeof q->t[t].dims);
        }
    ir_free(&raw);
    return 0;
}

int qz_quantize_model(const char *model, OnnxLoadOpts *lo, const IrInputShape *shapes, int nshapes,
                      const char *const *calib, int ncalib, const CalibData *data, const QzOptions *o, const char *qdq_out,
                      PbBuf *buf, double *cos, AtlErr *e)
{
    int rc = -1;
    IrGraph g;
    CalibData d;
    QzResult r;
    memset(&d, 0, sizeof d);
    memset(&r, 0, sizeof r);
    memset(buf, 0, sizeof *buf);
    ir_init(&g);
    ir_init(&r.qdq);
    if (model_load_batch("quantize", model, shapes, nshapes, 0, lo, &g, e) || pass_run_all(&g, e)) goto done;
    if (!data && calib_data_read(&g, calib, ncalib, 0, &d, e)) goto done;
    if (qz_quantize(&g, data ? data : &d, o, &r, e)) goto done;
    if (qz_restore_declared(model, lo, &r.qdq, e) || onnx_save_buffer(&r.qdq, buf, e)) goto done;
    if (qdq_out && atl_write_file_atomic(qdq_out, buf->p, buf->n, e)) goto done;
    if (cos) *cos = r.cos;
    rc = 0;
done:
    if (rc) pb_free(buf);
    qz_result_free(&r);
    calib_data_free(&d);
    ir_free(&g);
    return rc;
}
