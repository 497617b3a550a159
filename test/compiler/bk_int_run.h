/* bk_int_run.h - running graphs with integer tensors on the chip for the
 * backend tests (test_backend_int.c, test_backend_quant.c): inputs of
 * each graph input's dtype (integers in [lo, hi], bools 0/1, floats in
 * [-1, 1)) written in the dtype the .abm lists for it, the simulator run,
 * every output read back in its listed dtype and compared with the
 * reference interpreter EXACTLY (floats within 1e-6), on configs/tiny.ini
 * and configs/a1.ini (run_exact), or a run that must fault
 * (run_int_or_fault); graph builders (new_int_graph, const_of)
 * and expect_rejected (the compile error names the node and the reason).
 * The run itself is bk_chip_run.h's bk_run_on_chip.
 * Header only: one test binary each. */
#ifndef ATOLL_TEST_BK_INT_RUN_H
#define ATOLL_TEST_BK_INT_RUN_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_chip_run.h"
#include "compiler/ops/ops.h"

static const char *const chips[] = {"configs/tiny.ini", "configs/a1.ini"};

/* Runs the graph on chipfile; 0 when every output matches, else -1 with
 * msg. With `fault` set the interpreter is not run and the run must fail
 * with a message holding it (printed). */
static int run_int_or_fault(const IrGraph *g0, const char *chipfile, int64_t lo, int64_t hi, const char *fault,
                            char *msg, size_t cap)
{
    return bk_run_on_chip(g0, chipfile, ISA_F32, NULL, lo, hi, 1e-6, fault, msg, cap);
}

static int run_int(const IrGraph *g0, const char *chipfile, int64_t lo, int64_t hi, char *msg, size_t cap)
{
    return run_int_or_fault(g0, chipfile, lo, hi, NULL, msg, cap);
}

/* Runs g on both chips with inputs in [lo, hi]; every output exact. */
static void run_exact(IrGraph *g, const char *what, int64_t lo, int64_t hi)
{
    for (int c = 0; c < 2; c++) {
        char msg[1024] = "";
        int rc = run_int(g, chips[c], lo, hi, msg, sizeof msg);
        printf("  %-30s %-18s %s%s\n", what, chips[c], rc ? "ERROR: " : "exact", msg);
        CHECKF(rc == 0, "%s on %s: %s", what, chips[c], msg);
    }
}

static void new_int_graph(IrGraph *g, const char *in, int dtype, int ndim, const int64_t *dims)
{
    AtlErr e;
    ir_init(g);
    g->opset = 14;
    ir_add_input(g, in, dtype, ndim, dims, &e);
}

static int const_of(IrGraph *g, const char *name, int dtype, int ndim, const int64_t *dims, const int64_t *v)
{
    AtlErr e;
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= dims[d];
    IrTensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.ndim = ndim;
    if (ndim) memcpy(t.dims, dims, (size_t)ndim * sizeof *dims);
    if (ir_alloc_data(&t, &e)) return -1;
    for (int64_t i = 0; i < n; i++) ir_set_i(&t, i, v[i]);
    int k = ir_add_const(g, name, dtype, ndim, dims, t.data, &e);
    free(t.data);
    return k;
}

/* Compiles g (after inference and the passes; `retype`, when >= 0, then
 * gets dtype `to`, a graph inference would refuse) for tiny and requires
 * a failure whose message has both strings. */
static void expect_rejected_as(IrGraph *g, const char *retype, int to, const char *has1, const char *has2)
{
    AtlErr e = {{0}};
    AtlChip chip;
    REQUIRE(cfg_load("configs/tiny.ini", &chip, &e) == 0);
    int rc = ir_toposort(g, &e) || ir_infer_shapes(g, &e) || pass_run_all(g, &e);
    CHECKF(rc == 0, "graph does not pass inference: %s", e.msg);
    if (rc) return;
    if (retype) g->t[ir_find(g, retype)].dtype = to;
    AbmWriter *w = abm_writer_new(cfg_fingerprint(&chip));
    REQUIRE(w);
    BkOptions o;
    bk_options_default(&o);
    CHECK(bk_compile(g, &chip, &o, w, NULL, &e) != 0);
    abm_writer_free(w);
    CHECK_STR_CONTAINS(e.msg, has1);
    CHECK_STR_CONTAINS(e.msg, has2);
}

static void expect_rejected(IrGraph *g, const char *has1, const char *has2) { expect_rejected_as(g, NULL, 0, has1, has2); }
#endif
