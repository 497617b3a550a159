/* test_backend_arg.c - the index-producing and index-consuming ops on the
 * chip: Hardmax (v.rargmax + a one-hot by v.eq against an iota; axes,
 * the opset < 13 2-D coercion, ties, NaN) and Trilu (a select by a
 * constant mask; upper / lower, k of either sign, inf in zeroed places),
 * compiled for configs/tiny.ini and configs/a1.ini, run on the simulator
 * and compared with the reference interpreter; the rejections name the
 * node. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"

/* x [dims] -> (pre op, when given) -> Hardmax(axis) -> y, at `opset`. */
static void hardmax_graph(IrGraph *g, int ndim, const int64_t *dims, int axis, int opset, const char *pre)
{
    AtlErr e;
    new_graph(g, "x", ndim, dims);
    g->opset = opset;
    if (pre) ir_add_op(g, pre, "pre", "x", "p", &e);
    int n = ir_add_op(g, "Hardmax", "hardmax", pre ? "p" : "x", "y", &e);
    ir_set_attr_int(g, n, "axis", axis, &e);
    ir_add_output(g, "y", &e);
}

TEST(hardmax_axes)
{
    static const struct { int axis, opset; } cases[] = {{-1, 13}, {0, 13}, {1, 13}, {2, 13}, {1, 11}, {0, 11}, {2, 11}};
    int64_t d[3] = {5, 7, 6};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        IrGraph g;
        char what[64];
        hardmax_graph(&g, 3, d, cases[i].axis, cases[i].opset, NULL);
        snprintf(what, sizeof what, "hardmax axis %d op%d", cases[i].axis, cases[i].opset);
        run_graph(&g, what, 0);
        ir_free(&g);
    }
}

TEST(hardmax_many_rows)
{
    /* more rows than one slot holds on the tiny chip: several tiles a core */
    IrGraph g;
    int64_t d[2] = {3000, 96};
    hardmax_graph(&g, 2, d, 1, 13, NULL);
    run_graph(&g, "hardmax 3000 rows", 0);
    ir_free(&g);
}

TEST(hardmax_ties_and_nan)
{
    /* Relu: rows of negatives tie at 0 (the first index wins); Sqrt of
     * negatives: NaN is the maximum (the first NaN) */
    int64_t d[2] = {16, 3};
    IrGraph g;
    hardmax_graph(&g, 2, d, 1, 13, "Relu");
    run_graph(&g, "hardmax ties", 0);
    ir_free(&g);
    hardmax_graph(&g, 2, d, 1, 13, "Sqrt");
    run_graph(&g, "hardmax nan", 0);
    ir_free(&g);
}

/* x [dims] -> (Reciprocal(Relu(x)) when inf) -> Trilu(upper, k) -> y */
static void trilu_graph(IrGraph *g, int ndim, const int64_t *dims, int upper, int64_t k, int with_k, int inf)
{
    AtlErr e;
    new_graph(g, "x", ndim, dims);
    if (inf) {
        ir_add_op(g, "Relu", "relu", "x", "r", &e);
        ir_add_op(g, "Reciprocal", "recip", "r", "p", &e);
    }
    if (with_k) cst_i64(g, "k", 1, &k);
    char ins[16];
    snprintf(ins, sizeof ins, "%s%s", inf ? "p" : "x", with_k ? ",k" : "");
    int n = ir_add_op(g, "Trilu", "trilu", ins, "y", &e);
    ir_set_attr_int(g, n, "upper", upper, &e);
    ir_add_output(g, "y", &e);
}

TEST(trilu_float)
{
    static const struct { int upper; int64_t k; int with_k; } cases[] = {
        {1, 0, 0}, {0, 0, 0}, {1, 2, 1}, {0, 2, 1}, {1, -1, 1}, {0, -2, 1}, {1, 9, 1}, {0, -9, 1}};
    int64_t d[3] = {3, 4, 6};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        IrGraph g;
        char what[64];
        trilu_graph(&g, 3, d, cases[i].upper, cases[i].k, cases[i].with_k, 0);
        snprintf(what, sizeof what, "%s k=%lld", cases[i].upper ? "triu" : "tril", (long long)cases[i].k);
        run_graph(&g, what, 0);
        ir_free(&g);
    }
}

TEST(trilu_inf_and_big)
{
    IrGraph g;
    int64_t d[3] = {2, 8, 8};
    trilu_graph(&g, 3, d, 1, 1, 1, 1);   /* 1/0 = inf in zeroed places: 0, not NaN */
    run_graph(&g, "triu of inf", 0);
    ir_free(&g);
    int64_t big[2] = {700, 600};         /* a matrix larger than a slot of the tiny chip: row runs */
    trilu_graph(&g, 2, big, 0, -3, 1, 0);
    run_graph(&g, "tril 700x600", 0);
    ir_free(&g);
}

int main(void)
{
    RUN(hardmax_axes);
    RUN(hardmax_many_rows);
    RUN(hardmax_ties_and_nan);
    RUN(trilu_float);
    RUN(trilu_inf_and_big);
    return test_summary("test_backend_arg");
}
