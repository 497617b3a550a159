/* test_backend_misc.c - the last float ops given chip lowerings by graph
 * rewrites: Einsum (bk_rewrite_einsum.c). Graphs built in code, compiled
 * for configs/tiny.ini and configs/a1.ini, simulated and compared with
 * the reference interpreter, plus the structural checks of bk_graph_run.h;
 * unsupported forms must fail naming the node and the reason. */
#include <stdio.h>
#include <stdlib.h>
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

int main(void)
{
    RUN(einsum_one_input);
    RUN(einsum_two_inputs);
    RUN(einsum_not_lowered);
    return test_summary("test_backend_misc");
}
