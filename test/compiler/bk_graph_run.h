/* bk_graph_run.h - the short names the backend op tests
 * (test_backend_ops.c, test_backend_lowerings.c) build their graphs with:
 * one shared pseudo-random generator state per test binary, constants,
 * and run_graph (compile for configs/tiny.ini and configs/a1.ini in f32,
 * run, compare with the interpreter, check the program structurally),
 * expect_not_lowered (the compile error names the node and reason), all
 * on top of test/compiler/bk_check.h. Header only: one test binary each. */
#ifndef ATOLL_TEST_BK_GRAPH_RUN_H
#define ATOLL_TEST_BK_GRAPH_RUN_H
#include "test/compiler/bk_check.h"

static const char *const chips[] = {"configs/tiny.ini", "configs/a1.ini"};

static uint32_t rng = 1;

static inline float frand(void) { return e2e_frand(&rng); }

static inline int cst(IrGraph *g, const char *name, int ndim, const int64_t *dims, float scale)
{
    return e2e_rand_const(g, name, ndim, dims, scale, &rng);
}

static inline int cst_i64(IrGraph *g, const char *name, int n, const int64_t *v)
{
    AtlErr e;
    int64_t d = n;
    return ir_add_const(g, name, IR_I64, 1, &d, v, &e);
}

static inline int cst_scalar(IrGraph *g, const char *name, float v)
{
    AtlErr e;
    return ir_add_const(g, name, IR_F32, 0, NULL, &v, &e);
}

static inline void new_graph(IrGraph *g, const char *in, int ndim, const int64_t *dims)
{
    bkc_new_graph(g, in, ndim, dims);
}

/* g must fail to compile for configs/tiny.ini in dtype with a message
 * containing both strings (the node's name, the reason). */
static inline void expect_not_lowered_in(IrGraph *g, int dtype, const char *has1, const char *has2)
{
    double err;
    char msg[1024] = "";
    CHECK(e2e_graph(g, "configs/tiny.ini", dtype, &err, NULL, msg, sizeof msg) != 0);
    CHECK_STR_CONTAINS(msg, has1);
    CHECK_STR_CONTAINS(msg, has2);
}

static inline void expect_not_lowered(IrGraph *g, const char *has1, const char *has2)
{
    expect_not_lowered_in(g, ISA_F32, has1, has2);
}

static inline void run_graph(IrGraph *g, const char *what, double tol)
{
    for (int c = 0; c < 2; c++) bkc_run_checked(g, chips[c], ISA_F32, what, tol, NULL);
}
#endif
