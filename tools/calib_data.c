/* calib_data.c - reading and checking calibration data (see calib.h). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tools/calib.h"
#include "tools/model_io.h"
#include "util/npy.h"

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

void calib_data_free(CalibData *d)
{
    for (int i = 0; i < d->nsamples * d->nin; i++) ir_tensor_free_contents(&d->in[i]);
    free(d->in);
    memset(d, 0, sizeof *d);
}

/* Checks array a (file `path`) against graph input i; returns the samples it holds. */
static int64_t check_array(const IrGraph *g, int i, const AtlNdArray *a, const char *path, AtlErr *e)
{
    const IrTensor *t = &g->t[g->inputs[i]];
    IrTensor probe;
    if (model_tensor_from_array(a, t->name, &probe, e)) return atl_err_prefix(e, "%s", path);
    int dt = probe.dtype;
    int64_t bad_at = -1;
    for (int64_t k = 0; dt != t->dtype ? 0 : (dt == IR_F32 || dt == IR_F16) && k < ir_numel(&probe); k++)
        if (!isfinite(ir_get_f(&probe, k))) { bad_at = k; break; }
    double bad_v = bad_at >= 0 ? ir_get_f(&probe, bad_at) : 0;
    ir_tensor_free_contents(&probe);
    char want[128], got[128];
    if (dt != t->dtype)
        return atl_fail(e, "%s: tensor '%s' is %s, the model's input '%s' is %s", path, t->name, ir_dtype_name(dt), t->name,
                        ir_dtype_name(t->dtype));
    int bad = a->ndim != t->ndim || a->ndim < 1;
    for (int k = 1; !bad && k < t->ndim; k++) bad = a->shape[k] != t->dims[k];
    int64_t b = t->ndim > 0 ? t->dims[0] : 1;
    if (!bad && (b < 1 || a->shape[0] < 1 || a->shape[0] % b)) bad = 1;
    if (bad) {
        IrTensor s = {0};
        s.ndim = a->ndim;
        for (int k = 0; k < a->ndim; k++) s.dims[k] = a->shape[k];
        return atl_fail(e, "%s: tensor '%s' has shape %s, the model's input is %s (a multiple of its first dimension "
                        "for more samples)", path, t->name, ir_shape_str(&s, got, sizeof got), ir_shape_str(t, want, sizeof want));
    }
    if (bad_at >= 0)
        return atl_fail(e, "%s: tensor '%s' element %lld is %s", path, t->name, (long long)bad_at, isnan(bad_v) ? "NaN" : "infinite");
    return a->shape[0] / b;
}

/* Appends `count` samples of the arrays l (one per graph input, in input order). */
static int add_samples(const IrGraph *g, AtlNdArray *const *l, int64_t count, int max, CalibData *d, AtlErr *e)
{
    for (int64_t s = 0; s < count && (max <= 0 || d->nsamples < max); s++) {
        IrTensor *p = realloc(d->in, (size_t)(d->nsamples + 1) * (size_t)d->nin * sizeof *p);
        if (!p) return atl_fail(e, "out of memory");
        d->in = p;
        for (int i = 0; i < d->nin; i++) {
            const IrTensor *t = &g->t[g->inputs[i]];
            IrTensor *x = &d->in[d->nsamples * d->nin + i];
            memset(x, 0, sizeof *x);
            x->producer = -1;
            x->dtype = t->dtype;
            x->ndim = t->ndim;
            memcpy(x->dims, t->dims, sizeof x->dims);
            x->name = ir_strdup(t->name);
            if (!x->name || ir_alloc_data(x, e)) {
                for (int j = 0; j <= i; j++) ir_tensor_free_contents(&d->in[d->nsamples * d->nin + j]);
                return x->name ? -1 : atl_fail(e, "out of memory");
            }
            size_t nb = ir_nbytes(x);
            memcpy(x->data, (const char *)l[i]->data + (size_t)s * nb, nb);
        }
        d->nsamples++;
    }
    return 0;
}

static int read_file(const IrGraph *g, const char *path, int max, CalibData *d, AtlErr *e)
{
    AtlNdArray *list = NULL, one;
    int n = 0, rc = -1;
    memset(&one, 0, sizeof one);
    if (ends_with(path, ".npz")) {
        if (atl_npz_read(path, &list, &n, e)) return -1;
    } else {
        if (g->nin != 1) return atl_fail(e, "%s: the model has %d inputs; give an .npz with one array per input", path, g->nin);
        if (atl_npy_read(path, &one, e)) return -1;
    }
    AtlNdArray *by_input[64] = {0};
    int64_t count = -1;
    if (g->nin > 64) { atl_fail(e, "%s: more than 64 model inputs", path); goto done; }
    for (int i = 0; i < g->nin; i++) {
        const char *name = g->t[g->inputs[i]].name;
        if (!list) by_input[i] = &one;
        for (int k = 0; k < n && !by_input[i]; k++)
            if (list[k].name && !strcmp(list[k].name, name)) by_input[i] = &list[k];
        if (!by_input[i]) { atl_fail(e, "%s: no array named '%s' (the model's input)", path, name); goto done; }
        int64_t c = check_array(g, i, by_input[i], path, e);
        if (c < 0) goto done;
        if (count >= 0 && c != count) {
            atl_fail(e, "%s: tensor '%s' holds %lld samples, the others %lld", path, name, (long long)c, (long long)count);
            goto done;
        }
        count = c;
    }
    rc = add_samples(g, by_input, count, max, d, e);
done:
    if (list) atl_ndarray_list_free(list, n);
    atl_ndarray_free(&one);
    return rc;
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int read_folder(const IrGraph *g, const char *dir, int max, CalibData *d, AtlErr *e)
{
    DIR *dp = opendir(dir);
    if (!dp) return atl_fail(e, "%s: cannot open the calibration folder", dir);
    char **names = NULL;
    int n = 0, rc = -1;
    struct dirent *de;
    while ((de = readdir(dp))) {
        if (!ends_with(de->d_name, ".npy") && !ends_with(de->d_name, ".npz")) continue;
        char **p = realloc(names, (size_t)(n + 1) * sizeof *p);
        if (!p || !(p[n] = ir_strdup(de->d_name))) { free(p ? p : names); names = NULL; closedir(dp); return atl_fail(e, "out of memory"); }
        names = p;
        n++;
    }
    closedir(dp);
    if (!n) { atl_fail(e, "%s: the calibration folder holds no .npy or .npz file", dir); goto done; }
    qsort(names, (size_t)n, sizeof *names, name_cmp);
    for (int i = 0; i < n && (max <= 0 || d->nsamples < max); i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (read_file(g, path, max, d, e)) goto done;
    }
    rc = 0;
done:
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

int calib_data_read(const IrGraph *g, const char *const *paths, int npaths, int max_samples, CalibData *d, AtlErr *e)
{
    memset(d, 0, sizeof *d);
    d->nin = g->nin;
    for (int i = 0; i < g->nin; i++)
        if (!ir_shape_known(&g->t[g->inputs[i]]))
            return atl_fail(e, "input '%s' has no fixed shape (give --input-shape)", g->t[g->inputs[i]].name);
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st)) { calib_data_free(d); return atl_fail(e, "%s: no such file or folder", paths[i]); }
        int rc = S_ISDIR(st.st_mode) ? read_folder(g, paths[i], max_samples, d, e) : read_file(g, paths[i], max_samples, d, e);
        if (rc) { calib_data_free(d); return -1; }
    }
    if (!d->nsamples) return atl_fail(e, "the calibration data holds no sample");
    return 0;
}

int calib_data_random(const IrGraph *g, uint32_t seed, CalibData *d, AtlErr *e)
{
    memset(d, 0, sizeof *d);
    d->in = calloc((size_t)g->nin + 1, sizeof *d->in);
    if (!d->in) return atl_fail(e, "out of memory");
    d->nin = g->nin;
    d->nsamples = 1;
    uint32_t s = seed;
    for (int i = 0; i < g->nin; i++) {
        IrTensor *t = &d->in[i];
        *t = g->t[g->inputs[i]];
        t->data = NULL;
        t->name = ir_strdup(t->name);
        if (!t->name || ir_alloc_data(t, e)) { calib_data_free(d); return atl_fail(e, "out of memory for a calibration sample"); }
        for (int64_t k = 0; k < ir_numel(t); k++) {
            s = s * 1664525u + 1013904223u;
            ir_set_f(t, k, (double)(s >> 8) / (double)(1 << 22) - 2.0);
        }
    }
    return 0;
}
