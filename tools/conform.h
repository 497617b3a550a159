/* conform.h - runs ONNX's own backend test suite (model.onnx plus
 * test_data_set_N/{input,output}_M.pb directories) through the importer,
 * static shape inference and the reference interpreter, and classifies each
 * test as passed, failed or unsupported (with the reason). */
#ifndef ATOLL_COMPILER_CONFORM_H
#define ATOLL_COMPILER_CONFORM_H
#include <stdio.h>
#include "util/err.h"
#include "compiler/ir/ir.h"

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

/* Another execution engine checked against the same test data (the chip
 * path: tools/chip_conform.c). `run` gets the graph after pass_run_all
 * (shapes inferred) and one data set's inputs (named as the graph inputs)
 * and returns g->nout outputs in a malloc'd array of tensors with owned
 * contents (freed with interp_free_outputs). It returns 0, or
 * CONF_RUN_REFUSED when it refuses the graph for a limit it documents (the
 * test counts as unsupported, the reason is e's message), or -1 on any
 * other failure (the test fails, whatever the message says). */
#define CONF_RUN_REFUSED 1
typedef struct ConfRunner {
    int (*run)(void *ctx, const IrGraph *g, const IrTensor *inputs, int ninputs, IrTensor **outputs, AtlErr *e);
    void *ctx;
    const char *title;      /* markdown heading, e.g. "ONNX conformance on the chip" */
    const char *how;        /* one paragraph: what runs and how outputs are compared */
    const char *make_target;/* e.g. "conformance-chip" */
    const char *command;    /* the command line, for the markdown header */
    const char *label;      /* prefix of its failure reasons, e.g. "on the chip" */
    /* optional: markdown written after the per-op table (e.g. the limits
     * the runner refuses for, with their counts) */
    void (*notes)(void *ctx, const ConfResult *r, FILE *fp);
} ConfRunner;

/* As conf_run, but each test that passes on the interpreter is then run on
 * runner->run and its outputs compared with the expected ones (same rule);
 * the result is the runner's. runner NULL is conf_run. */
int conf_run_with(const char *datadir, const char *filter, const ConfRunner *runner, ConfResult *r, AtlErr *e);
/* As conf_run_with, calling progress(ctx, case, done) after each test (the
 * tools' progress line; progress may be NULL). */
int conf_run_progress(const char *datadir, const char *filter, const ConfRunner *runner,
                      void (*progress)(void *ctx, const ConfCase *c, int done), void *ctx, ConfResult *r, AtlErr *e);
/* conf_write_markdown with the runner's title, description and command. */
int conf_write_markdown_with(const ConfResult *r, const ConfRunner *runner, const char *datadir, const char *path, AtlErr *e);
/* Per-op table (op | passed | failed | unsupported) and totals. */
void conf_print_table(const ConfResult *r, FILE *fp);
/* The markdown report: table per op, totals, and every non-passing test
 * with its reason. Written atomically. */
int conf_write_markdown(const ConfResult *r, const char *datadir, const char *path, AtlErr *e);
#endif
