/* conform.c - the ONNX backend-test runner (see tools/conform.h).
 *
 * Per test: import model.onnx; if any node's op/opset is not in the op table
 * or an input is not a numeric tensor, the test is "unsupported" with that
 * reason. Otherwise run static shape inference (its errors are failures),
 * then for each test_data_set_N: decode input_M.pb (M-th graph input), run
 * the interpreter, and compare every output with output_M.pb: same dtype and
 * shape, values within |a-b| <= 1e-5 + 1e-3*|b| for floats (NaN matches
 * NaN), exact for integers and bools. The statically inferred shape must
 * agree with the computed one wherever it is known. A second copy of the
 * model goes through pass_run_all and must match the expected outputs too,
 * which checks that every canonicalisation pass preserves results. Errors of
 * the importer, shape inference and interpreter whose message says "not
 * supported" (an attribute value, a dtype) count as unsupported; a runner
 * (ConfRunner) says itself which of its failures are refusals. */
#include "tools/conform.h"
#include "compiler/onnx/onnx.h"
#include "compiler/ops/infer.h"
#include "compiler/interp/interp.h"
#include "compiler/ops/ops.h"
#include "compiler/passes/passes.h"
#include "util/file.h"
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/stat.h>

const char *const conf_suites[] = {"node", "pytorch-operator", "pytorch-converted", "simple", NULL};
const char conf_excluded_note[] =
    "The `real` suite is left out: the package ships only download pointers (data.json) for those "
    "models, no model files.";

#define RTOL 1e-3
#define ATOL 1e-5

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted directory entries starting with prefix; caller frees each and the array. */
static char **list_dir(const char *dir, const char *prefix, int *n)
{
    DIR *d = opendir(dir);
    *n = 0;
    if (!d) return NULL;
    char **v = NULL;
    int cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, prefix, strlen(prefix))) continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            char **p = realloc(v, (size_t)cap * sizeof *p);
            if (!p) break;
            v = p;
        }
        v[(*n)++] = ir_strdup(de->d_name);
    }
    closedir(d);
    if (v) qsort(v, (size_t)*n, sizeof *v, cmp_names);
    return v;
}

static void free_list(char **v, int n)
{
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

static int unsupported_msg(const char *m)
{
    return strstr(m, "not supported") != NULL;
}

static void set_result(ConfCase *c, int status, const char *reason)
{
    c->status = status;
    snprintf(c->reason, sizeof c->reason, "%s", reason ? reason : "");
}

static int compare(const IrTensor *got, const IrTensor *want, char *why, size_t n)
{
    char a[128], b[128];
    if (got->dtype != want->dtype) {
        snprintf(why, n, "output '%s': type %s, expected %s", want->name, ir_dtype_name(got->dtype), ir_dtype_name(want->dtype));
        return -1;
    }
    int same = got->ndim == want->ndim;
    for (int k = 0; same && k < got->ndim; k++) same = got->dims[k] == want->dims[k];
    if (!same) {
        snprintf(why, n, "output '%s': shape %s, expected %s", want->name, ir_shape_str(got, a, sizeof a), ir_shape_str(want, b, sizeof b));
        return -1;
    }
    int64_t cnt = ir_numel(got);
    int isf = op_dtype_is_float(want->dtype);
    for (int64_t i = 0; i < cnt; i++) {
        if (isf) {
            double x = ir_get_f(got, i), y = ir_get_f(want, i);
            if (isnan(x) && isnan(y)) continue;
            if (isinf(y) && x == y) continue;
            if (!(fabs(x - y) <= ATOL + RTOL * fabs(y))) {
                snprintf(why, n, "output '%s' element %lld: %.9g, expected %.9g", want->name, (long long)i, x, y);
                return -1;
            }
        } else if (ir_get_i(got, i) != ir_get_i(want, i)) {
            snprintf(why, n, "output '%s' element %lld: %lld, expected %lld", want->name, (long long)i,
                     (long long)ir_get_i(got, i), (long long)ir_get_i(want, i));
            return -1;
        }
    }
    return 0;
}

/* The op a test is counted under: the first unsupported op, else the op of
 * the last node (the op under test in the node suite and in PyTorch
 * exports). */
static void pick_op(const IrGraph *g, ConfCase *c)
{
    snprintf(c->op, sizeof c->op, "%s", g->nn ? g->nodes[g->nn - 1].op : "(empty)");
    for (int i = 0; i < g->nn; i++)
        if (!ir_op_find(g->nodes[i].op, g->opset) || (g->nodes[i].domain[0] && strcmp(g->nodes[i].domain, "ai.onnx"))) {
            snprintf(c->op, sizeof c->op, "%s", g->nodes[i].op);
            return;
        }
}

static void run_case(const char *dir, const ConfRunner *runner, ConfCase *c)
{
    char path[4096], why[512];
    IrGraph g;
    AtlErr e = {{0}};
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    struct stat st;
    if (stat(path, &st)) { snprintf(c->op, sizeof c->op, "(none)"); set_result(c, CONF_UNSUPPORTED, "no model.onnx"); return; }
    if (onnx_load_file(path, &g, &e)) {
        snprintf(c->op, sizeof c->op, "(import)");
        set_result(c, unsupported_msg(e.msg) ? CONF_UNSUPPORTED : CONF_FAIL, e.msg);
        ir_free(&g);
        return;
    }
    pick_op(&g, c);
    if (ir_toposort(&g, &e) || ir_verify(&g, &e)) { set_result(c, CONF_FAIL, e.msg); ir_free(&g); return; }
    if (ir_check_supported(&g, &e)) { set_result(c, CONF_UNSUPPORTED, e.msg); ir_free(&g); return; }
    for (int i = 0; i < g.nin + g.nout; i++) {
        int t = i < g.nin ? g.inputs[i] : g.outputs[i - g.nin];
        if (g.t[t].dtype == IR_BF16) {
            snprintf(why, sizeof why, "'%s' is bfloat16, which the 1.12 test data stores as uint16 (not comparable)", g.t[t].name);
            set_result(c, CONF_UNSUPPORTED, why);
            ir_free(&g);
            return;
        }
    }
    for (int i = 0; i < g.nout; i++)
        if (!ir_dtype_size(g.t[g.outputs[i]].dtype)) {
            snprintf(why, sizeof why, "graph output '%s' is not a numeric tensor", g.t[g.outputs[i]].name);
            set_result(c, CONF_UNSUPPORTED, why);
            ir_free(&g);
            return;
        }
    if (ir_infer_shapes(&g, &e)) {
        char m[ATL_ERRLEN + 40];
        snprintf(m, sizeof m, "shape inference: %s", e.msg);
        set_result(c, unsupported_msg(e.msg) ? CONF_UNSUPPORTED : CONF_FAIL, m);
        ir_free(&g);
        return;
    }
    /* a second copy goes through every canonicalisation pass; it must give
     * the same results */
    IrGraph g2;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (onnx_load_file(path, &g2, &e) || pass_run_all(&g2, &e)) {
        char m[ATL_ERRLEN + 40];
        snprintf(m, sizeof m, "passes: %s", e.msg);
        set_result(c, CONF_FAIL, m);
        ir_free(&g2);
        ir_free(&g);
        return;
    }
    int nsets;
    char **sets = list_dir(dir, "test_data_set_", &nsets);
    set_result(c, CONF_PASS, "");
    if (!nsets) set_result(c, CONF_FAIL, "no test_data_set_N directories");
    for (int s = 0; s < nsets && c->status == CONF_PASS; s++) {
        IrTensor *ins = calloc((size_t)g.nin + 1, sizeof *ins), *outs = NULL;
        IrTensor *want = calloc((size_t)g.nout + 1, sizeof *want);
        if (!ins || !want) { set_result(c, CONF_FAIL, "out of memory"); free(ins); free(want); break; }
        for (int i = 0; i < g.nin && c->status == CONF_PASS; i++) {
            snprintf(path, sizeof path, "%s/%s/input_%d.pb", dir, sets[s], i);
            if (onnx_load_tensor_file(path, &ins[i], &e)) {
                set_result(c, unsupported_msg(e.msg) ? CONF_UNSUPPORTED : CONF_FAIL, e.msg);
                break;
            }
            free(ins[i].name);
            ins[i].name = ir_strdup(g.t[g.inputs[i]].name);
        }
        for (int i = 0; i < g.nout && c->status == CONF_PASS; i++) {
            snprintf(path, sizeof path, "%s/%s/output_%d.pb", dir, sets[s], i);
            if (onnx_load_tensor_file(path, &want[i], &e)) {
                set_result(c, unsupported_msg(e.msg) ? CONF_UNSUPPORTED : CONF_FAIL, e.msg);
                break;
            }
            free(want[i].name);
            want[i].name = ir_strdup(g.t[g.outputs[i]].name);
        }
        if (c->status == CONF_PASS) {
            if (interp_run(&g, ins, g.nin, &outs, &e)) {
                set_result(c, unsupported_msg(e.msg) ? CONF_UNSUPPORTED : CONF_FAIL, e.msg);
            } else {
                for (int i = 0; i < g.nout && c->status == CONF_PASS; i++) {
                    if (compare(&outs[i], &want[i], why, sizeof why)) { set_result(c, CONF_FAIL, why); break; }
                    const IrTensor *st = &g.t[g.outputs[i]];
                    int bad = st->ndim >= 0 && st->ndim != outs[i].ndim;
                    for (int k = 0; !bad && st->ndim >= 0 && k < st->ndim; k++)
                        if (st->dims[k] >= 0 && st->dims[k] != outs[i].dims[k]) bad = 1;
                    if (bad) {
                        char a[128], b[128];
                        snprintf(why, sizeof why, "output '%s': static shape inference gave %s, the run gave %s", st->name,
                                 ir_shape_str(st, a, sizeof a), ir_shape_str(&outs[i], b, sizeof b));
                        set_result(c, CONF_FAIL, why);
                    }
                }
                interp_free_outputs(outs, g.nout);
                outs = NULL;
                const char *stage = runner ? (runner->label ? runner->label : "on the runner") : "after passes";
                int rc = c->status != CONF_PASS ? 0
                       : runner ? runner->run(runner->ctx, &g2, ins, g.nin, &outs, &e)
                       : interp_run(&g2, ins, g.nin, &outs, &e);
                if (c->status == CONF_PASS && rc) {
                    char m[ATL_ERRLEN + 40];
                    snprintf(m, sizeof m, "%s: %s", stage, e.msg);
                    set_result(c, runner && rc == CONF_RUN_REFUSED ? CONF_UNSUPPORTED : CONF_FAIL, m);
                } else if (c->status == CONF_PASS) {
                    for (int i = 0; i < g.nout && c->status == CONF_PASS; i++)
                        if (compare(&outs[i], &want[i], why, sizeof why)) {
                            char m[600];
                            snprintf(m, sizeof m, "%s: %s", stage, why);
                            set_result(c, CONF_FAIL, m);
                        }
                    interp_free_outputs(outs, g.nout);
                }
            }
        }
        for (int i = 0; i < g.nin; i++) ir_tensor_free_contents(&ins[i]);
        for (int i = 0; i < g.nout; i++) ir_tensor_free_contents(&want[i]);
        free(ins);
        free(want);
    }
    free_list(sets, nsets);
    ir_free(&g2);
    ir_free(&g);
}

int conf_run(const char *datadir, const char *filter, ConfResult *r, AtlErr *e)
{
    return conf_run_with(datadir, filter, NULL, r, e);
}

int conf_run_with(const char *datadir, const char *filter, const ConfRunner *runner, ConfResult *r, AtlErr *e)
{
    return conf_run_progress(datadir, filter, runner, NULL, NULL, r, e);
}

int conf_run_progress(const char *datadir, const char *filter, const ConfRunner *runner,
                      void (*progress)(void *ctx, const ConfCase *c, int done), void *ctx, ConfResult *r, AtlErr *e)
{
    memset(r, 0, sizeof *r);
    struct stat st;
    if (stat(datadir, &st) || !S_ISDIR(st.st_mode))
        return atl_fail(e, "ONNX test data directory '%s' does not exist (install the libonnx-testdata package)", datadir);
    for (int s = 0; conf_suites[s]; s++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", datadir, conf_suites[s]);
        int n;
        char **tests = list_dir(dir, "test_", &n);
        if (!tests) { conf_free(r); return atl_fail(e, "cannot read ONNX test suite directory '%s'", dir); }
        for (int i = 0; i < n; i++) {
            if (filter && !strstr(tests[i], filter)) continue;
            if (r->n == r->cap) {
                int cap = r->cap ? r->cap * 2 : 256;
                ConfCase *p = realloc(r->cases, (size_t)cap * sizeof *p);
                if (!p) { free_list(tests, n); conf_free(r); return atl_fail(e, "out of memory"); }
                r->cases = p;
                r->cap = cap;
            }
            ConfCase *c = &r->cases[r->n++];
            memset(c, 0, sizeof *c);
            snprintf(c->suite, sizeof c->suite, "%s", conf_suites[s]);
            snprintf(c->name, sizeof c->name, "%s", tests[i]);
            char tdir[4300];
            snprintf(tdir, sizeof tdir, "%s/%s", dir, tests[i]);
            run_case(tdir, runner, c);
            if (c->status == CONF_PASS) r->passed++;
            else if (c->status == CONF_FAIL) r->failed++;
            else r->unsupported++;
            if (progress) progress(ctx, c, r->n);
        }
        free_list(tests, n);
    }
    return 0;
}

void conf_free(ConfResult *r)
{
    free(r->cases);
    memset(r, 0, sizeof *r);
}

typedef struct OpRow { const char *op; int pass, fail, unsup; } OpRow;

static int cmp_rows(const void *a, const void *b)
{
    return strcmp(((const OpRow *)a)->op, ((const OpRow *)b)->op);
}

static OpRow *op_rows(const ConfResult *r, int *n)
{
    OpRow *rows = calloc((size_t)r->n + 1, sizeof *rows);
    *n = 0;
    if (!rows) return NULL;
    for (int i = 0; i < r->n; i++) {
        const ConfCase *c = &r->cases[i];
        int k;
        for (k = 0; k < *n; k++) if (!strcmp(rows[k].op, c->op)) break;
        if (k == *n) { rows[k].op = c->op; (*n)++; }
        if (c->status == CONF_PASS) rows[k].pass++;
        else if (c->status == CONF_FAIL) rows[k].fail++;
        else rows[k].unsup++;
    }
    qsort(rows, (size_t)*n, sizeof *rows, cmp_rows);
    return rows;
}

void conf_print_table(const ConfResult *r, FILE *fp)
{
    int n;
    OpRow *rows = op_rows(r, &n);
    fprintf(fp, "%-28s %7s %7s %12s\n", "op", "passed", "failed", "unsupported");
    for (int i = 0; rows && i < n; i++)
        fprintf(fp, "%-28s %7d %7d %12d\n", rows[i].op, rows[i].pass, rows[i].fail, rows[i].unsup);
    fprintf(fp, "%-28s %7d %7d %12d\n", "TOTAL", r->passed, r->failed, r->unsupported);
    free(rows);
}

int conf_write_markdown(const ConfResult *r, const char *datadir, const char *path, AtlErr *e)
{
    return conf_write_markdown_with(r, NULL, datadir, path, e);
}

int conf_write_markdown_with(const ConfResult *r, const ConfRunner *runner, const char *datadir, const char *path, AtlErr *e)
{
    AtlOutFile o;
    if (atl_out_open(&o, path, e)) return -1;
    FILE *fp = o.fp;
    int n;
    OpRow *rows = op_rows(r, &n);
    if (runner)
        fprintf(fp, "# %s\n\nGenerated by `make %s` (`%s`); do not edit.\n\n%s A test is counted under "
                    "its first unsupported op, otherwise under the op of its last node. %s\n\n",
                runner->title, runner->make_target, runner->command, runner->how, conf_excluded_note);
    else
        fprintf(fp, "# ONNX conformance\n\n"
                "Generated by `make conformance` (`atoll conformance %s --markdown %s`); do not edit.\n\n"
                "Every test directory of the ONNX backend test suites (libonnx-testdata 1.12) is imported, "
                "shape-inferred and run on the reference interpreter; outputs must match within "
                "|a-b| <= 1e-5 + 1e-3*|b| (floats) or exactly (integers, bools). A test is counted under "
                "its first unsupported op, otherwise under the op of its last node. %s\n\n",
            datadir, path, conf_excluded_note);
    fprintf(fp, "**Totals: %d passed, %d failed, %d unsupported (of %d).**\n\n", r->passed, r->failed, r->unsupported, r->n);
    fprintf(fp, "| op | supported | passed | failed | unsupported |\n|---|---|---:|---:|---:|\n");
    for (int i = 0; rows && i < n; i++)
        fprintf(fp, "| %s | %s | %d | %d | %d |\n", rows[i].op, ir_op_known(rows[i].op) ? "yes" : "no", rows[i].pass,
                rows[i].fail, rows[i].unsup);
    free(rows);
    if (runner && runner->notes) runner->notes(runner->ctx, r, fp);
    fprintf(fp, "\n## Tests not passing\n\n| suite | test | status | reason |\n|---|---|---|---|\n");
    for (int i = 0; i < r->n; i++) {
        const ConfCase *c = &r->cases[i];
        if (c->status == CONF_PASS) continue;
        char reason[sizeof c->reason];
        snprintf(reason, sizeof reason, "%s", c->reason);
        for (char *p = reason; *p; p++) if (*p == '|' || *p == '\n') *p = ' ';
        /* the supported-op list is long; keep the table readable */
        char *list = strstr(reason, "; supported: ");
        if (list) strcpy(list, " (not in the op table)");
        fprintf(fp, "| %s | %s | %s | %s |\n", c->suite, c->name, c->status == CONF_FAIL ? "FAIL" : "unsupported", reason);
    }
    return atl_out_commit(&o, e);
}
