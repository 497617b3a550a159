/* test_backend_misc.c - the last float ops given chip lowerings by graph
 * rewrites: Einsum (legalize/rewrite_einsum.c), Det (legalize/rewrite_det.c),
 * MeanVarianceNormalization,
 * training-mode BatchNormalization and Reduce* over non-adjacent axes
 * (legalize/rewrite_ops.c), and Slice with starts/ends as attributes (opset 9,
 * lower/move.c). Graphs built in code, compiled
 * for configs/tiny.ini and configs/a1.ini, simulated and compared with
 * the reference interpreter, plus the structural checks of bk_graph_run.h;
 * unsupported forms must fail naming the node and the reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"

/* ---- Einsum ---- */

/* Einsum of x alone, or of x and a second operand: a constant of shape bd
 * (bconst) or Sigmoid(x) (x's shape) when bd is NULL. */
static void einsum_run(const char *eq, int xr, const int64_t *xd, int two, int br, const int64_t *bd)
{
    IrGraph g;
    AtlErr e;
    new_graph(&g, "x", xr, xd);
    if (two && bd) cst(&g, "b", br, bd, 1.0f);
    if (two && !bd) ir_add_op(&g, "Sigmoid", "sig", "x", "b", &e);
    int n = ir_add_op(&g, "Einsum", "ein", two ? "x,b" : "x", "y", &e);
    ir_set_attr_str(&g, n, "equation", eq, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, eq, 1e-5);
    ir_free(&g);
}

TEST(einsum_one_input)
{
    int64_t m[2] = {5, 7}, sq[2] = {6, 6}, b3[3] = {3, 4, 4}, r4[4] = {2, 3, 4, 5};
    einsum_run("ij->ji", 2, m, 0, 0, NULL);
    einsum_run("ij->i", 2, m, 0, 0, NULL);
    einsum_run("ij->j", 2, m, 0, 0, NULL);
    einsum_run("ij", 2, m, 0, 0, NULL);   /* implicit output: ij */
    einsum_run("ji", 2, m, 0, 0, NULL);   /* implicit output: ij, a transpose */
    einsum_run("ii->i", 2, sq, 0, 0, NULL);
    einsum_run("ii", 2, sq, 0, 0, NULL);  /* the trace */
    einsum_run("bii->bi", 3, b3, 0, 0, NULL);
    einsum_run("...ii->...i", 3, b3, 0, 0, NULL);
    einsum_run("abcd->db", 4, r4, 0, 0, NULL);
    einsum_run("abcd->ca", 4, r4, 0, 0, NULL);
}

TEST(einsum_two_inputs)
{
    int64_t v[1] = {9}, a[2] = {4, 6}, b[2] = {6, 5}, ba[3] = {3, 4, 6}, bb[3] = {3, 6, 5};
    einsum_run("i,i", 1, v, 1, 0, NULL);
    einsum_run("i,i->i", 1, v, 1, 0, NULL);
    einsum_run("ij,jk->ik", 2, a, 1, 2, b);
    einsum_run("ij,jk", 2, a, 1, 2, b);
    einsum_run("ij,jk->ki", 2, a, 1, 2, b);
    einsum_run("bij,bjk->bik", 3, ba, 1, 3, bb);
    einsum_run("bij,bjk->kib", 3, ba, 1, 3, bb);
    einsum_run("ij,ij->ij", 2, a, 1, 0, NULL);
    einsum_run("ij,ij->", 2, a, 1, 0, NULL);
    einsum_run("ij,kj->ik", 2, a, 1, 0, NULL);
    int64_t o1[1] = {4}, o2[1] = {7}, sq[2] = {6, 6};
    einsum_run("i,j->ij", 1, o1, 1, 1, o2);
    einsum_run("ij,k->k", 2, a, 1, 1, o2);  /* i, j summed on one side */
    einsum_run("ii,ij->ij", 2, sq, 1, 2, b);
    einsum_run("bij,bjk->ik", 3, ba, 1, 3, bb); /* b contracted too */
}

TEST(einsum_not_lowered)
{
    IrGraph g;
    AtlErr e;
    int64_t d[2] = {3, 3}, one[2] = {1, 3};
    new_graph(&g, "x", 2, d);
    ir_add_op(&g, "Relu", "r", "x", "a", &e);
    ir_add_op(&g, "Sigmoid", "s", "x", "b", &e);
    int n = ir_add_op(&g, "Einsum", "ein3", "x,a,b", "y", &e);
    ir_set_attr_str(&g, n, "equation", "ij,jk,kl->il", &e);
    ir_add_output(&g, "y", &e);
    expect_not_lowered(&g, "ein3", "ij,jk,kl->il");
    ir_free(&g);
    new_graph(&g, "x", 2, d);
    cst(&g, "b", 2, one, 1.0f);
    n = ir_add_op(&g, "Einsum", "einb", "x,b", "y", &e);
    ir_set_attr_str(&g, n, "equation", "ij,ij->ij", &e);
    ir_add_output(&g, "y", &e);
    expect_not_lowered(&g, "einb", "broadcasts");
    ir_free(&g);
}

/* ---- MeanVarianceNormalization ---- */

static void mvn_run(const char *what, int r, const int64_t *xd, int na, const int64_t *axes)
{
    IrGraph g;
    AtlErr e;
    new_graph(&g, "x", r, xd);
    int n = ir_add_op(&g, "MeanVarianceNormalization", "mvn", "x", "y", &e);
    if (axes) ir_set_attr_ints(&g, n, "axes", axes, na, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 2e-5);
    ir_free(&g);
}

TEST(mean_variance_normalization)
{
    int64_t x4[4] = {2, 3, 4, 5}, x3[3] = {4, 3, 6}, a1[1] = {1}, a2[2] = {0, 2}, a3[2] = {-1, -2}, a4[3] = {1, 2, 3};
    mvn_run("mvn default axes", 4, x4, 0, NULL);
    mvn_run("mvn axes [1]", 4, x4, 1, a1);
    mvn_run("mvn axes [0,2] rank 3", 3, x3, 2, a2);
    mvn_run("mvn axes [-1,-2]", 4, x4, 2, a3);
    mvn_run("mvn axes [1,2,3]", 4, x4, 3, a4);
}

/* ---- BatchNormalization, training_mode=1 ---- */

static void bn_training_run(const char *what, int r, const int64_t *xd, int nout)
{
    IrGraph g;
    AtlErr e;
    int64_t C = xd[1];
    new_graph(&g, "x", r, xd);
    cst(&g, "s", 1, &C, 1.0f);
    cst(&g, "b", 1, &C, 1.0f);
    cst(&g, "m", 1, &C, 1.0f);
    cst(&g, "v", 1, &C, 1.0f);
    static const char *const outs[3] = {"y", "y,rm", "y,rm,rv"};
    int n = ir_add_op(&g, "BatchNormalization", "bnt", "x,s,b,m,v", outs[nout - 1], &e);
    ir_set_attr_int(&g, n, "training_mode", 1, &e);
    ir_set_attr_float(&g, n, "momentum", 0.7f, &e);
    ir_set_attr_float(&g, n, "epsilon", 1e-3f, &e);
    ir_add_output(&g, "y", &e);
    if (nout > 1) ir_add_output(&g, "rm", &e);
    if (nout > 2) ir_add_output(&g, "rv", &e);
    run_graph(&g, what, 2e-5);
    ir_free(&g);
}

TEST(batchnorm_training)
{
    int64_t x4[4] = {2, 3, 4, 5}, x2[2] = {6, 4}, x3[3] = {3, 5, 7};
    bn_training_run("bn train rank 4", 4, x4, 3);
    bn_training_run("bn train rank 2", 2, x2, 3);
    bn_training_run("bn train rank 3 y, mean", 3, x3, 2);
    bn_training_run("bn train y only", 4, x4, 1);
}

/* ---- Reduce* over non-adjacent axes ---- */

static void reduce_gap_run(const char *op, int r, const int64_t *xd, int na, const int64_t *axes, int keep)
{
    IrGraph g;
    AtlErr e;
    char what[64];
    snprintf(what, sizeof what, "%s axes %lld,%lld keep %d", op, (long long)axes[0], (long long)axes[1], keep);
    new_graph(&g, "x", r, xd);
    int n;
    if (!strcmp(op, "ReduceSum")) { /* opset 13+: axes as an input */
        cst_i64(&g, "axes", na, axes);
        n = ir_add_op(&g, op, "red", "x,axes", "y", &e);
    } else {
        n = ir_add_op(&g, op, "red", "x", "y", &e);
        ir_set_attr_ints(&g, n, "axes", axes, na, &e);
    }
    ir_set_attr_int(&g, n, "keepdims", keep, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 2e-5);
    ir_free(&g);
}

TEST(reduce_non_adjacent_axes)
{
    int64_t x4[4] = {2, 3, 4, 5}, x5[5] = {2, 3, 2, 4, 3};
    int64_t a02[2] = {0, 2}, a13[2] = {1, 3}, a03[2] = {0, -1}, a024[3] = {0, 2, 4}, a31[2] = {3, 1};
    static const char *const ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceLogSumExp"};
    for (int i = 0; i < 6; i++) {
        reduce_gap_run(ops[i], 4, x4, 2, a02, i & 1);
        reduce_gap_run(ops[i], 4, x4, 2, a13, !(i & 1));
    }
    reduce_gap_run("ReduceSum", 4, x4, 2, a03, 0);
    reduce_gap_run("ReduceMean", 5, x5, 3, a024, 1);
    reduce_gap_run("ReduceMax", 5, x5, 3, a024, 0);
    reduce_gap_run("ReduceSumSquare", 4, x4, 2, a31, 1);
}

/* ---- Slice with starts/ends/axes as attributes (opset < 10) ---- */

static void slice_attr_run(const char *what, int r, const int64_t *xd, int n, const int64_t *starts, const int64_t *ends,
                           const int64_t *axes)
{
    IrGraph g;
    AtlErr e;
    new_graph(&g, "x", r, xd);
    g.opset = 9;
    int k = ir_add_op(&g, "Slice", "sl", "x", "y", &e);
    ir_set_attr_ints(&g, k, "starts", starts, n, &e);
    ir_set_attr_ints(&g, k, "ends", ends, n, &e);
    if (axes) ir_set_attr_ints(&g, k, "axes", axes, n, &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 0);
    ir_free(&g);
}

TEST(slice_attributes)
{
    int64_t x3[3] = {4, 6, 5}, s1[2] = {1, 2}, e1[2] = {3, 5}, a1[2] = {0, 2};
    int64_t s2[3] = {0, -4, 1}, e2[3] = {(int64_t)1 << 40, -1, 4}, s3[1] = {2}, e3[1] = {100}, a3[1] = {-2};
    slice_attr_run("slice attrs axes 0,2", 3, x3, 2, s1, e1, a1);
    slice_attr_run("slice attrs no axes", 3, x3, 3, s2, e2, NULL);
    slice_attr_run("slice attrs axis -2", 3, x3, 1, s3, e3, a3);
}

/* ---- Det ---- */

static void det_run(const char *what, int r, const int64_t *xd)
{
    IrGraph g;
    AtlErr e;
    new_graph(&g, "x", r, xd);
    ir_add_op(&g, "Det", "det", "x", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 1e-5);
    ir_free(&g);
}

TEST(det)
{
    int64_t m1[2] = {1, 1}, m2[2] = {2, 2}, m3[2] = {3, 3}, b2[3] = {5, 2, 2}, b3[4] = {2, 3, 3, 3}, b1[3] = {4, 1, 1};
    det_run("det 1x1", 2, m1);
    det_run("det 2x2", 2, m2);
    det_run("det 3x3", 2, m3);
    det_run("det batch 1x1", 3, b1);
    det_run("det batch 2x2", 3, b2);
    det_run("det batch 2x3 3x3", 4, b3);
    IrGraph g;
    AtlErr e;
    int64_t m4[3] = {2, 4, 4};
    new_graph(&g, "x", 3, m4);
    ir_add_op(&g, "Det", "det4", "x", "y", &e);
    ir_add_output(&g, "y", &e);
    expect_not_lowered(&g, "det4", "4 x 4");
    ir_free(&g);
}

int main(void)
{
    RUN(einsum_one_input);
    RUN(einsum_two_inputs);
    RUN(einsum_not_lowered);
    RUN(mean_variance_normalization);
    RUN(batchnorm_training);
    RUN(reduce_non_adjacent_axes);
    RUN(slice_attributes);
    RUN(det);
    return test_summary("test_backend_misc");
}
