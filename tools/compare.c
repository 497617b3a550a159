/* compare.c - tensor comparison statistics, dtype-dependent thresholds and
 * the comparison report (see tools/compare.h). Values are read through doubles
 * (ir_get_f), so a chip tensor in fp16 compares directly against an fp32
 * reference. */
#include "tools/compare.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int cmp_tensors(const IrTensor *ref, const IrTensor *got, CmpStats *s, AtlErr *e)
{
    memset(s, 0, sizeof *s);
    const char *name = ref->name ? ref->name : "?";
    if (!ref->data || !got->data) return atl_fail(e, "tensor '%s': %s has no data", name, ref->data ? "the result" : "the reference");
    int64_t n = ir_numel(ref), m = ir_numel(got);
    int same = n == m && n >= 0;
    if (same && ref->ndim == got->ndim)
        for (int k = 0; k < ref->ndim; k++) if (ref->dims[k] != got->dims[k]) same = 0;
    if (!same) {
        char a[96], b[96];
        return atl_fail(e, "tensor '%s': shapes differ: reference %s, result %s", name,
                        ir_shape_str(ref, a, sizeof a), ir_shape_str(got, b, sizeof b));
    }
    double dot = 0, rr = 0, gg = 0, absmax = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = ir_get_f(ref, i);
        if (isfinite(r) && fabs(r) > absmax) absmax = fabs(r);
    }
    double rel_floor = 1e-3 * absmax;
    s->n = n;
    s->ref_absmax = absmax;
    for (int64_t i = 0; i < n; i++) {
        double r = ir_get_f(ref, i), g = ir_get_f(got, i);
        if (!isfinite(r) || !isfinite(g)) {
            int both_nan = isnan(r) && isnan(g);
            if (!both_nan && r != g) s->nonfinite_mismatch++;
            continue;
        }
        double d = fabs(g - r);
        if (d > s->max_abs) { s->max_abs = d; s->worst = i; }
        if (fabs(r) >= rel_floor && r != 0 && d / fabs(r) > s->max_rel) s->max_rel = d / fabs(r);
        dot += r * g;
        rr += r * r;
        gg += g * g;
    }
    if (rr == 0 && gg == 0) s->cosine = 1;
    else if (rr == 0 || gg == 0) s->cosine = 0;
    else s->cosine = dot / (sqrt(rr) * sqrt(gg));
    return 0;
}

/* Defaults by dtype (ONNX numbering); other dtypes are integers. */
static const struct { int dtype; int check_tol; double rtol, atol_of_max, min_cos; } defaults[] = {
    {IR_F32, 1, 1e-4, 1e-4, -1},
    {IR_F64, 1, 1e-4, 1e-4, -1},
    {IR_F16, 0, 0, 0, 0.999},
    {IR_BF16, 0, 0, 0, 0.999},
};

void cmp_thresholds_for(int dtype, const CmpThresholds *user, CmpThresholds *out)
{
    memset(out, 0, sizeof *out);
    out->check_tol = 1; out->rtol = 0; out->atol = 1; out->min_cos = -1; /* integers: one step */
    for (size_t k = 0; k < sizeof defaults / sizeof defaults[0]; k++)
        if (defaults[k].dtype == dtype) {
            out->check_tol = defaults[k].check_tol;
            out->rtol = defaults[k].rtol;
            out->atol = defaults[k].atol_of_max;
            out->atol_of_max = defaults[k].atol_of_max > 0;
            out->min_cos = defaults[k].min_cos;
        }
    if (!user) return;
    if (user->set_rtol || user->set_atol) {
        if (!out->check_tol) { out->rtol = 0; out->atol = 0; out->atol_of_max = 0; }
        out->check_tol = 1;
    }
    if (user->set_rtol) { out->rtol = user->rtol; out->set_rtol = 1; }
    if (user->set_atol) { out->atol = user->atol; out->atol_of_max = 0; out->set_atol = 1; }
    if (user->set_cos) { out->min_cos = user->min_cos; out->set_cos = 1; }
}

int cmp_verdict(const IrTensor *ref, const IrTensor *got, const CmpThresholds *th, CmpStats *s)
{
    int pass = s->nonfinite_mismatch == 0;
    s->over_tol = 0;
    if (th->check_tol) {
        double atol = th->atol_of_max ? th->atol * s->ref_absmax : th->atol;
        for (int64_t i = 0; i < s->n; i++) {
            double r = ir_get_f(ref, i), g = ir_get_f(got, i);
            if (!isfinite(r) || !isfinite(g)) continue;
            if (fabs(g - r) > atol + th->rtol * fabs(r)) s->over_tol++;
        }
        if (s->over_tol) pass = 0;
    }
    if (th->min_cos >= 0 && !(s->cosine >= th->min_cos)) pass = 0;
    return pass;
}

static CmpRow *new_row(CmpReport *r, const char *name, int is_output, AtlErr *e)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        CmpRow *p = realloc(r->rows, (size_t)cap * sizeof *p);
        if (!p) { atl_fail(e, "out of memory"); return NULL; }
        r->rows = p;
        r->cap = cap;
    }
    CmpRow *row = &r->rows[r->n];
    memset(row, 0, sizeof *row);
    row->name = ir_strdup(name ? name : "");
    if (!row->name) { atl_fail(e, "out of memory"); return NULL; }
    row->is_output = is_output;
    r->n++;
    return row;
}

int cmp_report_add(CmpReport *r, const char *name, int is_output, int chip_dtype,
                   const IrTensor *ref, const IrTensor *got, const CmpThresholds *user, AtlErr *e)
{
    CmpStats st;
    if (cmp_tensors(ref, got, &st, e)) return -1;
    CmpRow *row = new_row(r, name, is_output, e);
    if (!row) return -1;
    row->dtype = chip_dtype;
    ir_shape_str(ref, row->shape, sizeof row->shape);
    cmp_thresholds_for(chip_dtype, user, &row->th);
    row->pass = cmp_verdict(ref, got, &row->th, &st);
    row->st = st;
    if (st.nonfinite_mismatch) snprintf(row->note, sizeof row->note, "%lld NaN/inf mismatches", (long long)st.nonfinite_mismatch);
    else if (st.over_tol) snprintf(row->note, sizeof row->note, "%lld of %lld outside tolerance", (long long)st.over_tol, (long long)st.n);
    else if (!row->pass) snprintf(row->note, sizeof row->note, "cosine below %g", row->th.min_cos);
    return 0;
}

int cmp_report_skip(CmpReport *r, const char *name, int is_output, const char *why, AtlErr *e)
{
    CmpRow *row = new_row(r, name, is_output, e);
    if (!row) return -1;
    row->skipped = 1;
    row->pass = 1;
    snprintf(row->note, sizeof row->note, "%s", why ? why : "not compared");
    return 0;
}

int cmp_report_first_failure(const CmpReport *r)
{
    for (int i = 0; i < r->n; i++) if (!r->rows[i].skipped && !r->rows[i].pass) return i;
    return -1;
}

int cmp_report_failed_outputs(const CmpReport *r)
{
    int n = 0;
    for (int i = 0; i < r->n; i++) if (r->rows[i].is_output && !r->rows[i].skipped && !r->rows[i].pass) n++;
    return n;
}

void cmp_report_print(const CmpReport *r, FILE *fp)
{
    int w = 6;
    for (int i = 0; i < r->n; i++) { int l = (int)strlen(r->rows[i].name); if (l > w) w = l; }
    if (w > 48) w = 48;
    fprintf(fp, "%-*s  %-6s  %-7s  %-16s  %10s  %11s  %11s  %-4s  %s\n", w, "tensor", "kind", "dtype", "shape",
            "cosine", "max abs", "max rel", "ok", "note");
    for (int i = 0; i < r->n; i++) {
        const CmpRow *row = &r->rows[i];
        const char *kind = row->is_output ? "output" : "inter";
        if (row->skipped) {
            fprintf(fp, "%-*.*s  %-6s  %-7s  %-16s  %10s  %11s  %11s  %-4s  %s\n", w, w, row->name, kind, "-", "-",
                    "-", "-", "-", "skip", row->note);
            continue;
        }
        fprintf(fp, "%-*.*s  %-6s  %-7s  %-16s  %10.7f  %11.4e  %11.4e  %-4s  %s\n", w, w, row->name, kind,
                ir_dtype_name(row->dtype), row->shape, row->st.cosine, row->st.max_abs, row->st.max_rel,
                row->pass ? "yes" : "NO", row->note);
    }
    int first = cmp_report_first_failure(r), failed = cmp_report_failed_outputs(r), nout = 0, skipped = 0;
    for (int i = 0; i < r->n; i++) { nout += r->rows[i].is_output; skipped += r->rows[i].skipped; }
    if (first < 0) fprintf(fp, "all %d compared tensors within tolerance (%d outputs)%s\n", r->n - skipped, nout,
                           skipped ? "; some not compared (skip)" : "");
    else fprintf(fp, "first diverging tensor: '%s' (%s); %d of %d outputs fail\n", r->rows[first].name,
                 r->rows[first].is_output ? "output" : "intermediate", failed, nout);
}

void cmp_report_free(CmpReport *r)
{
    if (!r) return;
    for (int i = 0; i < r->n; i++) free(r->rows[i].name);
    free(r->rows);
    memset(r, 0, sizeof *r);
}
