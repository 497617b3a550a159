/* sweep_spec.c - the sweep file parser and point enumeration (see
 * sweep_spec.h; the format is documented in docs/codesign.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/sweep_spec.h"
#include "isa/isa.h"
#include "util/file.h"
#include "util/ini.h"

/* The [sweep] keys, each at most once. */
enum { SK_CHIP, SK_MODELS, SK_DTYPES, SK_BATCHES, SK_MODE, SK_COMPILE, SK_COUNT };
static const char *const sweep_keys[SK_COUNT] = {"chip", "models", "dtypes", "batches", "mode", "compile"};

#define MAX_ZIPS SWEEP_MAX_KEYS

/* What the INI pass collects before anything is interpreted. */
typedef struct SpecRaw {
    const char *name;
    SweepSpec *s;
    int sections;              /* headers seen */
    char *val[SK_COUNT];
    int line[SK_COUNT];
    int nzips;
    char *zip[MAX_ZIPS];
    int zip_line[MAX_ZIPS];
    char *vary_text[SWEEP_MAX_KEYS];
} SpecRaw;

static const struct { const char *name; int dtype; } dtype_names[] = {
    {"fp32", ISA_F32}, {"f32", ISA_F32}, {"fp16", ISA_F16}, {"f16", ISA_F16}, {"bf16", ISA_BF16},
};

const char *sweep_dtype_name(int dtype)
{
    return dtype == ISA_F16 ? "fp16" : dtype == ISA_BF16 ? "bf16" : "fp32";
}

static char *dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static int spec_line(void *ctx, const char *section, const char *key, const char *val, int line, AtlErr *e)
{
    SpecRaw *r = ctx;
    SweepSpec *s = r->s;
    if (!key) {
        if (r->sections++ == 0 && strcmp(section, "sweep"))
            return atl_fail(e, "%s:%d: a sweep file starts with [sweep], not [%s]", r->name, line, section);
        if (strcmp(section, "sweep") && strcmp(section, "vary"))
            return atl_fail(e, "%s:%d: unknown section [%s] (a sweep file has [sweep] and [vary])", r->name, line, section);
        if (r->sections > 1 && !strcmp(section, "sweep"))
            return atl_fail(e, "%s:%d: [sweep] appears twice", r->name, line);
        return 0;
    }
    if (!strcmp(section, "sweep")) {
        if (!strcmp(key, "zip")) {
            if (r->nzips == MAX_ZIPS) return atl_fail(e, "%s:%d: too many zip lines", r->name, line);
            r->zip_line[r->nzips] = line;
            if (!(r->zip[r->nzips++] = dup(val))) return atl_fail(e, "%s: out of memory", r->name);
            return 0;
        }
        for (int k = 0; k < SK_COUNT; k++) {
            if (strcmp(key, sweep_keys[k])) continue;
            if (r->val[k]) return atl_fail(e, "%s:%d: [sweep] %s given twice (first on line %d)", r->name, line, key, r->line[k]);
            if (!*val) return atl_fail(e, "%s:%d: [sweep] %s: empty value", r->name, line, key);
            r->line[k] = line;
            return (r->val[k] = dup(val)) ? 0 : atl_fail(e, "%s: out of memory", r->name);
        }
        return atl_fail(e, "%s:%d: unknown key '%s' in [sweep] (chip, models, dtypes, batches, mode, zip, compile)", r->name,
                        line, key);
    }
    /* [vary] section.key = values */
    char sec[64];
    const char *dot = strchr(key, '.');
    if (!dot || dot == key || (size_t)(dot - key) >= sizeof sec)
        return atl_fail(e, "%s:%d: [vary] '%s': name a config key as section.key (e.g. matrix.rows)", r->name, line, key);
    memcpy(sec, key, (size_t)(dot - key));
    sec[dot - key] = 0;
    int ki = cfg_key_index(sec, dot + 1);
    if (ki < 0) return atl_fail(e, "%s:%d: [vary] unknown config key '%s' (docs/config.md lists them)", r->name, line, key);
    for (int i = 0; i < s->nkeys; i++)
        if (s->keys[i].cfg == ki) return atl_fail(e, "%s:%d: [vary] %s given twice (first on line %d)", r->name, line, key, s->keys[i].line);
    if (s->nkeys == SWEEP_MAX_KEYS) return atl_fail(e, "%s:%d: [vary] more than %d keys", r->name, line, SWEEP_MAX_KEYS);
    SweepKey *k = &s->keys[s->nkeys];
    memset(k, 0, sizeof *k);
    k->cfg = ki;
    k->line = line;
    k->axis = -1;
    snprintf(k->name, sizeof k->name, "%s", key);
    if (!(r->vary_text[s->nkeys++] = dup(val))) return atl_fail(e, "%s: out of memory", r->name);
    return 0;
}

/* Splits a list at commas (and blanks when `blanks`); calls fn on every
 * non-empty item. */
static int for_each_item(const char *list, int blanks, int (*fn)(void *, const char *, AtlErr *), void *ctx, AtlErr *e)
{
    char item[1024];
    const char *p = list;
    while (*p) {
        while (*p == ',' || *p == ' ' || *p == '\t') p++;
        if (!*p) break;
        size_t n = 0;
        while (p[n] && p[n] != ',' && !(blanks && (p[n] == ' ' || p[n] == '\t'))) n++;
        size_t m = n;
        while (m && (p[m - 1] == ' ' || p[m - 1] == '\t')) m--;
        if (m >= sizeof item) return atl_fail(e, "list item too long");
        memcpy(item, p, m);
        item[m] = 0;
        if (fn(ctx, item, e)) return -1;
        p += n;
    }
    return 0;
}

/* The directory part of path ("" for none), with a trailing slash. */
static void dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) + 1 : 0;
    if (n >= cap) n = 0;
    memcpy(dir, path, n);
    dir[n] = 0;
}

static int resolve(const char *spec_path, const char *rel, char *out, size_t cap)
{
    char dir[512];
    dir_of(spec_path, dir, sizeof dir);
    int n = rel[0] == '/' ? snprintf(out, cap, "%s", rel) : snprintf(out, cap, "%s%s", dir, rel);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

typedef struct ListCtx { SpecRaw *r; int line; } ListCtx;

static int add_model(void *ctx, const char *item, AtlErr *e)
{
    ListCtx *c = ctx;
    SweepSpec *s = c->r->s;
    const char *name = c->r->name;
    char path[1024];
    if (s->nmodels == SWEEP_MAX_LIST) return atl_fail(e, "%s:%d: more than %d models", name, c->line, SWEEP_MAX_LIST);
    if (resolve(name, item, path, sizeof path)) return atl_fail(e, "%s:%d: model path too long", name, c->line);
    FILE *f = fopen(path, "rb");
    if (!f) return atl_fail(e, "%s:%d: model %s: cannot open %s: %s", name, c->line, item, path, strerror(errno));
    fclose(f);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char short_name[256];
    snprintf(short_name, sizeof short_name, "%s", base);
    size_t n = strlen(short_name);
    if (n > 5 && !strcmp(short_name + n - 5, ".onnx")) short_name[n - 5] = 0;
    for (int i = 0; i < s->nmodels; i++)
        if (!strcmp(s->model_names[i], short_name))
            return atl_fail(e, "%s:%d: two models are called '%s' (the CSV names models by file name)", name, c->line, short_name);
    s->model_paths[s->nmodels] = dup(path);
    s->model_names[s->nmodels] = dup(short_name);
    if (!s->model_paths[s->nmodels] || !s->model_names[s->nmodels]) return atl_fail(e, "%s: out of memory", name);
    s->nmodels++;
    return 0;
}

static int add_dtype(void *ctx, const char *item, AtlErr *e)
{
    ListCtx *c = ctx;
    SweepSpec *s = c->r->s;
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++) {
        if (strcmp(item, dtype_names[i].name)) continue;
        for (int k = 0; k < s->ndtypes; k++)
            if (s->dtypes[k] == dtype_names[i].dtype) return atl_fail(e, "%s:%d: dtype %s given twice", c->r->name, c->line, item);
        if (s->ndtypes == SWEEP_MAX_LIST) return atl_fail(e, "%s:%d: too many dtypes", c->r->name, c->line);
        s->dtypes[s->ndtypes++] = dtype_names[i].dtype;
        return 0;
    }
    return atl_fail(e, "%s:%d: [sweep] dtypes: '%s' is not fp32, fp16 or bf16", c->r->name, c->line, item);
}

static int add_batch(void *ctx, const char *item, AtlErr *e)
{
    ListCtx *c = ctx;
    SweepSpec *s = c->r->s;
    char *end;
    long b = strtol(item, &end, 10);
    if (end == item || *end || b < 1 || b > 65535)
        return atl_fail(e, "%s:%d: [sweep] batches: '%s' is not a batch size 1..65535", c->r->name, c->line, item);
    for (int k = 0; k < s->nbatches; k++)
        if (s->batches[k] == b) return atl_fail(e, "%s:%d: batch size %ld given twice", c->r->name, c->line, b);
    if (s->nbatches == SWEEP_MAX_LIST) return atl_fail(e, "%s:%d: too many batch sizes", c->r->name, c->line);
    s->batches[s->nbatches++] = (int)b;
    return 0;
}

/* ---- [vary] values ---- */

typedef struct ValueCtx { SpecRaw *r; SweepKey *k; } ValueCtx;

/* Checks `text` as a value of the key on the base chip (parse and range)
 * and appends it in the config's own spelling. */
static int add_value(void *ctx, const char *text, AtlErr *e)
{
    ValueCtx *c = ctx;
    SweepKey *k = c->k;
    AtlChip scratch = c->r->s->base;
    AtlErr why;
    if (cfg_set_value(&scratch, k->cfg, text, &why))
        return atl_fail(e, "%s:%d: [vary] %s = %s: %s", c->r->name, k->line, k->name, text, why.msg);
    if (k->nvalues == SWEEP_MAX_VALUES) return atl_fail(e, "%s:%d: [vary] %s: more than %d values", c->r->name, k->line, k->name, SWEEP_MAX_VALUES);
    char v[CFG_TEXT_MAX + 32];
    cfg_format_value(&scratch, &cfg_keys[k->cfg], v, sizeof v);
    if (k->nvalues % 16 == 0) {
        char **p = realloc(k->values, (size_t)(k->nvalues + 16) * sizeof *p);
        if (!p) return atl_fail(e, "out of memory");
        k->values = p;
    }
    if (!(k->values[k->nvalues] = dup(v))) return atl_fail(e, "out of memory");
    k->nvalues++;
    return 0;
}

/* The value of a numeric key after cfg_set_value. */
static double key_number(const AtlChip *c, const AtlCfgKey *k)
{
    if (k->type == CFG_INT) { int v; memcpy(&v, (const char *)c + k->offset, sizeof v); return v; }
    double d;
    memcpy(&d, (const char *)c + k->offset, sizeof d);
    return d;
}

/* A range endpoint: parsed and range-checked as a value of the key. */
static int endpoint(ValueCtx *c, const char *text, double *out, AtlErr *e)
{
    AtlChip scratch = c->r->s->base;
    AtlErr why;
    if (cfg_set_value(&scratch, c->k->cfg, text, &why))
        return atl_fail(e, "%s:%d: [vary] %s: range end '%s': %s", c->r->name, c->k->line, c->k->name, text, why.msg);
    *out = key_number(&scratch, &cfg_keys[c->k->cfg]);
    return 0;
}

/* "FROM..TO", "FROM..TO +STEP" or "FROM..TO xFACTOR" (also "*FACTOR"). */
static int add_range(ValueCtx *c, const char *text, AtlErr *e)
{
    const AtlCfgKey *k = &cfg_keys[c->k->cfg];
    const char *name = c->r->name;
    int line = c->k->line;
    if (k->type == CFG_TEXT) return atl_fail(e, "%s:%d: [vary] %s is text: list its values, a range needs numbers", name, line, c->k->name);
    char buf[256], *step_txt = NULL;
    snprintf(buf, sizeof buf, "%s", text);
    char *dots = strstr(buf, "..");
    *dots = 0;
    char *from_txt = buf, *to_txt = dots + 2;
    char *sp = to_txt + strspn(to_txt, " \t");
    to_txt = sp;
    sp += strcspn(sp, " \t+x*");
    char op = 0;
    if (*sp) {
        char *q = sp + strspn(sp, " \t");
        if (*q == '+' || *q == 'x' || *q == '*') { op = *q; step_txt = q + 1; }
        else if (*q) return atl_fail(e, "%s:%d: [vary] %s: '%s' is not FROM..TO [+STEP | xFACTOR]", name, line, c->k->name, text);
        *sp = 0;
    }
    while (*from_txt == ' ') from_txt++;
    size_t n = strlen(from_txt);
    while (n && from_txt[n - 1] == ' ') from_txt[--n] = 0;
    double from, to, step = 1;
    if (endpoint(c, from_txt, &from, e) || endpoint(c, to_txt, &to, e)) return -1;
    if (step_txt) {
        while (*step_txt == ' ') step_txt++;
        char *end;
        step = strtod(step_txt, &end);
        double mult = 1;
        if (cfg_key_is_bytes(k) && (*end == 'K' || *end == 'M' || *end == 'G')) {
            mult = *end == 'K' ? 1024.0 : *end == 'M' ? 1048576.0 : 1073741824.0;
            end++;
            if (!strcmp(end, "iB")) end += 2;
        }
        step *= mult;
        if (end == step_txt || *end || !isfinite(step))
            return atl_fail(e, "%s:%d: [vary] %s: step '%s' is not a number", name, line, c->k->name, step_txt);
    } else if (k->type == CFG_REAL) {
        return atl_fail(e, "%s:%d: [vary] %s: a range of reals needs +STEP or xFACTOR", name, line, c->k->name);
    }
    if (from > to) return atl_fail(e, "%s:%d: [vary] %s: empty range %s..%s (the first value exceeds the last)", name, line, c->k->name, from_txt, to_txt);
    if (op == 'x' || op == '*') {
        if (!(step > 1)) return atl_fail(e, "%s:%d: [vary] %s: factor %g must exceed 1", name, line, c->k->name, step);
        if (from <= 0) return atl_fail(e, "%s:%d: [vary] %s: a geometric range starts above 0", name, line, c->k->name);
    } else if (!(step > 0)) {
        return atl_fail(e, "%s:%d: [vary] %s: step %g must be positive", name, line, c->k->name, step);
    }
    double tol = 1e-9 * (fabs(to) > 1 ? fabs(to) : 1);
    for (int i = 0; i <= SWEEP_MAX_VALUES; i++) {
        double v = op == 'x' || op == '*' ? from * pow(step, i) : from + step * i;
        if (v > to + tol) break;
        char t[64];
        if (k->type == CFG_INT) {
            if (v != floor(v)) return atl_fail(e, "%s:%d: [vary] %s: the range reaches %g, not an integer", name, line, c->k->name, v);
            snprintf(t, sizeof t, "%.0f", v);
        } else {
            snprintf(t, sizeof t, "%.15g", v);
        }
        if (add_value(c, t, e)) return -1;
    }
    return 0;
}

static int add_list_or_range(void *ctx, const char *item, AtlErr *e)
{
    return strstr(item, "..") ? add_range(ctx, item, e) : add_value(ctx, item, e);
}

/* ---- axes ---- */

typedef struct ZipCtx { SpecRaw *r; int line, axis, first; } ZipCtx;

static int zip_key(void *ctx, const char *item, AtlErr *e)
{
    ZipCtx *z = ctx;
    SweepSpec *s = z->r->s;
    for (int i = 0; i < s->nkeys; i++) {
        SweepKey *k = &s->keys[i];
        if (strcmp(k->name, item)) continue;
        if (k->axis >= 0) return atl_fail(e, "%s:%d: [sweep] zip: %s is already zipped", z->r->name, z->line, item);
        if (z->first >= 0 && s->keys[z->first].nvalues != k->nvalues)
            return atl_fail(e, "%s:%d: [sweep] zip: %s has %d values but %s has %d (zipped keys step together)", z->r->name, z->line,
                            item, k->nvalues, s->keys[z->first].name, s->keys[z->first].nvalues);
        if (z->first < 0) z->first = i;
        k->axis = z->axis;
        return 0;
    }
    return atl_fail(e, "%s:%d: [sweep] zip: %s is not a key of [vary]", z->r->name, z->line, item);
}

/* Zip groups become axes numbered after the keys' order in [vary]. */
static int build_axes(SpecRaw *r, int zip_all, AtlErr *e)
{
    SweepSpec *s = r->s;
    int group[SWEEP_MAX_KEYS];
    for (int i = 0; i < s->nkeys; i++) group[i] = -1;
    if (zip_all) {
        for (int i = 0; i < s->nkeys; i++) {
            if (s->keys[i].nvalues != s->keys[0].nvalues)
                return atl_fail(e, "%s:%d: [vary] %s has %d values but %s has %d (mode = zip steps every key together)", r->name,
                                s->keys[i].line, s->keys[i].name, s->keys[i].nvalues, s->keys[0].name, s->keys[0].nvalues);
            group[i] = 0;
        }
    } else {
        for (int z = 0; z < r->nzips; z++) {
            ZipCtx c = {r, r->zip_line[z], 1000 + z, -1};
            if (for_each_item(r->zip[z], 1, zip_key, &c, e)) return -1;
            if (c.first < 0) return atl_fail(e, "%s:%d: [sweep] zip names no key", r->name, r->zip_line[z]);
        }
        for (int i = 0; i < s->nkeys; i++) group[i] = s->keys[i].axis >= 0 ? s->keys[i].axis : 2000 + i;
    }
    s->naxes = 0;
    s->nchips = 1;
    for (int i = 0; i < s->nkeys; i++) {
        int axis = -1;
        for (int j = 0; j < i; j++) if (group[j] == group[i]) axis = s->keys[j].axis;
        if (axis < 0) {
            axis = s->naxes++;
            s->axis_len[axis] = s->keys[i].nvalues;
            if (s->nchips > SWEEP_MAX_POINTS / s->keys[i].nvalues) return atl_fail(e, "%s: more than %d points", r->name, SWEEP_MAX_POINTS);
            s->nchips *= s->keys[i].nvalues;
        }
        s->keys[i].axis = axis;
    }
    return 0;
}

static int interpret(SpecRaw *r, AtlErr *e)
{
    SweepSpec *s = r->s;
    const char *name = r->name;
    if (!r->sections) return atl_fail(e, "%s: not a sweep file (no [sweep] section)", name);
    if (!r->val[SK_CHIP]) return atl_fail(e, "%s: [sweep] needs chip = CHIP.ini", name);
    if (!r->val[SK_MODELS]) return atl_fail(e, "%s: [sweep] needs models = MODEL.onnx, ...", name);
    if (resolve(name, r->val[SK_CHIP], s->chip_path, sizeof s->chip_path))
        return atl_fail(e, "%s:%d: chip path too long", name, r->line[SK_CHIP]);
    AtlErr why;
    if (cfg_load(s->chip_path, &s->base, &why)) return atl_fail(e, "%s:%d: chip: %s", name, r->line[SK_CHIP], why.msg);
    ListCtx lc = {r, r->line[SK_MODELS]};
    if (for_each_item(r->val[SK_MODELS], 0, add_model, &lc, e)) return -1;
    if (!s->nmodels) return atl_fail(e, "%s:%d: [sweep] models names no model", name, lc.line);
    lc.line = r->line[SK_DTYPES];
    if (r->val[SK_DTYPES] ? for_each_item(r->val[SK_DTYPES], 0, add_dtype, &lc, e) : add_dtype(&lc, "fp32", e)) return -1;
    lc.line = r->line[SK_BATCHES];
    if (r->val[SK_BATCHES] ? for_each_item(r->val[SK_BATCHES], 0, add_batch, &lc, e) : add_batch(&lc, "1", e)) return -1;
    if (!s->ndtypes || !s->nbatches) return atl_fail(e, "%s: [sweep] dtypes and batches must name at least one", name);
    int zip_all = 0;
    if (r->val[SK_MODE]) {
        if (!strcmp(r->val[SK_MODE], "zip")) zip_all = 1;
        else if (strcmp(r->val[SK_MODE], "grid"))
            return atl_fail(e, "%s:%d: [sweep] mode: '%s' is not grid or zip", name, r->line[SK_MODE], r->val[SK_MODE]);
        if (zip_all && r->nzips) return atl_fail(e, "%s:%d: [sweep] zip lines need mode = grid", name, r->zip_line[0]);
    }
    if (r->val[SK_COMPILE]) {
        if (!strcmp(r->val[SK_COMPILE], "per-point")) s->per_point_compile = 1;
        else if (strcmp(r->val[SK_COMPILE], "shared"))
            return atl_fail(e, "%s:%d: [sweep] compile: '%s' is not shared or per-point", name, r->line[SK_COMPILE], r->val[SK_COMPILE]);
    }
    for (int i = 0; i < s->nkeys; i++) {
        ValueCtx vc = {r, &s->keys[i]};
        if (for_each_item(r->vary_text[i], 0, add_list_or_range, &vc, e)) return -1;
        if (!s->keys[i].nvalues) return atl_fail(e, "%s:%d: [vary] %s has no value", name, s->keys[i].line, s->keys[i].name);
    }
    if (build_axes(r, zip_all, e)) return -1;
    int64_t per_chip = (int64_t)s->nmodels * s->ndtypes * s->nbatches;
    if (s->nchips > SWEEP_MAX_POINTS / per_chip) return atl_fail(e, "%s: more than %d points", name, SWEEP_MAX_POINTS);
    s->npoints = s->nchips * per_chip;
    return 0;
}

int sweep_spec_load(const char *path, SweepSpec *s, AtlErr *e)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    unsigned char *text;
    size_t len;
    if (atl_read_file(path, &text, &len, e)) return -1;
    if (memchr(text, 0, len)) { free(text); return atl_fail(e, "%s: not a text file (contains NUL bytes)", path); }
    SpecRaw r;
    memset(&r, 0, sizeof r);
    r.name = path;
    r.s = s;
    int rc = ini_parse(path, (const char *)text, spec_line, &r, e);
    free(text);
    if (!rc) rc = interpret(&r, e);
    for (int k = 0; k < SK_COUNT; k++) free(r.val[k]);
    for (int z = 0; z < r.nzips; z++) free(r.zip[z]);
    for (int i = 0; i < SWEEP_MAX_KEYS; i++) free(r.vary_text[i]);
    if (rc) sweep_spec_free(s);
    return rc;
}

void sweep_spec_free(SweepSpec *s)
{
    for (int i = 0; i < s->nmodels; i++) { free(s->model_paths[i]); free(s->model_names[i]); }
    for (int i = 0; i < s->nkeys; i++) {
        for (int v = 0; v < s->keys[i].nvalues; v++) free(s->keys[i].values[v]);
        free(s->keys[i].values);
    }
    memset(s, 0, sizeof *s);
}

void sweep_point(const SweepSpec *s, int64_t id, SweepPoint *p)
{
    memset(p, 0, sizeof *p);
    p->id = id;
    p->batch = (int)(id % s->nbatches);
    id /= s->nbatches;
    p->dtype = (int)(id % s->ndtypes);
    id /= s->ndtypes;
    p->model = (int)(id % s->nmodels);
    p->chip = id / s->nmodels;
    int64_t c = p->chip;
    int axis_index[SWEEP_MAX_KEYS];
    for (int a = s->naxes - 1; a >= 0; a--) {
        axis_index[a] = (int)(c % s->axis_len[a]);
        c /= s->axis_len[a];
    }
    for (int i = 0; i < s->nkeys; i++) p->value[i] = axis_index[s->keys[i].axis];
}

int sweep_point_chip(const SweepSpec *s, const SweepPoint *p, int compile_only, AtlChip *c, AtlErr *e)
{
    *c = s->base;
    for (int i = 0; i < s->nkeys; i++) {
        const SweepKey *k = &s->keys[i];
        if (compile_only && strcmp(cfg_keys[k->cfg].scope, "FP")) continue;
        if (cfg_set_value(c, k->cfg, k->values[p->value[i]], e)) return -1;
    }
    return cfg_validate(c, compile_only ? "compile chip" : "chip", e);
}
