/* conform.h - runs ONNX's own backend test suite (model.onnx plus
 * test_data_set_N/{input,output}_M.pb directories) through the importer,
 * static shape inference and the reference interpreter, and classifies each
 * test as passed, failed or unsupported (with the reason). */
#ifndef ATOLL_COMPILER_CONFORM_H
#define ATOLL_COMPILER_CONFORM_H
#include <stdio.h>
#include "util/err.h"

enum { CONF_PASS = 0, CONF_FAIL = 1, CONF_UNSUPPORTED = 2 };

typedef struct ConfCase {
    char suite[32];      /* node, pytorch-operator, ... */
    char name[128];      /* test directory name */
    char op[64];         /* the op the test is counted under */
    int status;          /* CONF_* */
    char reason[400];    /* why it failed or is unsupported */
} ConfCase;

typedef struct ConfResult {
    ConfCase *cases;
    int n, cap;
    int passed, failed, unsupported;
} ConfResult;

/* The suites run, in order, and the ones deliberately left out. */
extern const char *const conf_suites[];
extern const char conf_excluded_note[];

/* Runs every test directory of the suites under `datadir`
 * (e.g. /usr/share/libonnx-testdata/data). Fails only when datadir or a
 * suite directory cannot be read; per-test problems are results. With
 * `filter` non-NULL only tests whose name contains it run. */
int conf_run(const char *datadir, const char *filter, ConfResult *r, AtlErr *e);
void conf_free(ConfResult *r);
/* Per-op table (op | passed | failed | unsupported) and totals. */
void conf_print_table(const ConfResult *r, FILE *fp);
/* The markdown report: table per op, totals, and every non-passing test
 * with its reason. Written atomically. */
int conf_write_markdown(const ConfResult *r, const char *datadir, const char *path, AtlErr *e);
#endif
