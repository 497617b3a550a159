/* test_backend_arg.c - the index-producing and index-consuming ops on the
 * chip: Hardmax (v.rargmax + a one-hot by v.eq against an iota; axes,
 * the opset < 13 2-D coercion, ties, NaN), Trilu (a select by a constant
 * mask; upper / lower, k of either sign, inf in zeroed places, int64, a
 * run-time k rejected), ArgMax / ArgMin (axes, keepdims,
 * select_last_index, ties, NaN), NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (reductions, weight, ignore_index, -inf
 * log-probabilities, log_prob, many tiles, long rows), TopK, GatherElements,
 * GatherND, OneHot; out-of-range gather indices fault naming the entry.
 * Graphs are compiled for configs/tiny.ini and configs/a1.ini, run on the
 * simulator and compared with the reference interpreter: the float-input
 * ones through bk_graph_run.h, the others with chosen input values written
 * in the dtypes the .abm lists (run_values: integers exact, floats within
 * a tolerance; also with bf16 float storage). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "test/compiler/bk_chip_run.h"
#include "compiler/ops/ops.h"

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

/* x [dims] -> TopK(k, axis, largest) -> values (indices unused) */
static void topk_graph(IrGraph *g, int ndim, const int64_t *dims, int64_t k, int axis, int largest, int with_indices)
{
    AtlErr e;
    new_graph(g, "x", ndim, dims);
    cst_i64(g, "k", 1, &k);
    int n = ir_add_op(g, "TopK", "topk", "x,k", "v,i", &e);
    ir_set_attr_int(g, n, "axis", axis, &e);
    ir_set_attr_int(g, n, "largest", largest, &e);
    ir_add_output(g, "v", &e);
    if (with_indices) ir_add_output(g, "i", &e);
}

TEST(topk_values)
{
    int64_t d[3] = {4, 9, 5};
    for (int largest = 0; largest < 2; largest++)
        for (int axis = 0; axis < 3; axis++) {
            IrGraph g;
            char what[64];
            topk_graph(&g, 3, d, 3, axis, largest, 0);
            snprintf(what, sizeof what, "topk3 ax%d %s", axis, largest ? "largest" : "smallest");
            run_graph(&g, what, 0);
            ir_free(&g);
        }
}

/* ---- graphs with integer tensors and chosen input values ---- */

/* Input values: vals[k] holds the numel of graph input k (as doubles:
 * floats, NaN and inf included, or integers). */
typedef ChipInputs Inputs;

/* Compiles g0 for chipfile in storage dtype `dtype`, runs it with the given
 * inputs and compares every output with the interpreter's (bk_chip_run.h). */
static int run_values(const IrGraph *g0, const char *chipfile, int dtype, const Inputs *iv, double tol, const char *fault,
                      char *msg, size_t cap)
{
    return bk_run_on_chip(g0, chipfile, dtype, iv, 0, 0, tol, fault, msg, cap);
}

/* run_values in f32 on both chips, then with bf16 float storage on the
 * tiny one (floats within bf16_tol: the chip sees the inputs rounded to
 * bf16, the interpreter does not); every output must match. */
static void run_both_tol(IrGraph *g, const char *what, const Inputs *iv, double tol, double bf16_tol)
{
    static const struct { int chip, dtype; } runs[] = {{0, ISA_F32}, {1, ISA_F32}, {0, ISA_BF16}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        char msg[1024] = "";
        const char *chip = chips[runs[r].chip];
        int dt = runs[r].dtype;
        int rc = run_values(g, chip, dt, iv, dt == ISA_F32 ? tol : bf16_tol, NULL, msg, sizeof msg);
        printf("  %-34s %-18s %-4s %s%s\n", what, chip, isa_dtype_name(dt), rc ? "ERROR: " : "match", msg);
        CHECKF(rc == 0, "%s on %s %s: %s", what, chip, isa_dtype_name(dt), msg);
    }
}

static void run_both(IrGraph *g, const char *what, const Inputs *iv, double tol)
{
    run_both_tol(g, what, iv, tol, tol);
}

/* Values in {-1, 0, 1, 2} (many ties) with a NaN every `nan_every`-th (0: none). */
static void tie_values(double *v, int64_t n, int nan_every)
{
    for (int64_t i = 0; i < n; i++) {
        v[i] = (double)((int)((frand() + 1.0f) * 2.0f) - 1);
        if (nan_every && i % nan_every == nan_every - 1) v[i] = NAN;
    }
}

TEST(argmax_argmin)
{
    int64_t d[3] = {4, 5, 6};
    double x[120];
    for (int nan = 0; nan < 2; nan++) {
        tie_values(x, 120, nan ? 7 : 0);
        Inputs iv = {1, {x}};
        for (int op = 0; op < 2; op++)
            for (int axis = -1; axis < 3; axis++)
                for (int keep = 0; keep < 2; keep++)
                    for (int last = 0; last < 2; last++) {
                        IrGraph g;
                        AtlErr e;
                        char what[80];
                        new_graph(&g, "x", 3, d);
                        int n = ir_add_op(&g, op ? "ArgMin" : "ArgMax", "arg", "x", "y", &e);
                        ir_set_attr_int(&g, n, "axis", axis, &e);
                        ir_set_attr_int(&g, n, "keepdims", keep, &e);
                        ir_set_attr_int(&g, n, "select_last_index", last, &e);
                        ir_add_output(&g, "y", &e);
                        snprintf(what, sizeof what, "%s ax%d keep%d last%d%s", op ? "argmin" : "argmax", axis, keep, last,
                                 nan ? " nan" : "");
                        run_both(&g, what, &iv, 0);
                        ir_free(&g);
                    }
    }
}

/* x [dims] (float input) and labels (int64 input, x's dims without dim 1)
 * -> op (reduction, optional constant weight [C], optional ignore_index)
 * -> loss (and log_prob for SoftmaxCrossEntropyLoss when asked). */
static void loss_graph(IrGraph *g, const char *op, int ndim, const int64_t *dims, const char *red, int weighted,
                       const int64_t *ii, int log_prob)
{
    AtlErr e;
    int64_t ld[IR_MAXDIM], wd[1] = {dims[1]};
    ld[0] = dims[0];
    for (int d = 2; d < ndim; d++) ld[d - 1] = dims[d];
    new_graph(g, "x", ndim, dims);
    ir_add_input(g, "labels", IR_I64, ndim - 1, ld, &e);
    if (weighted) cst(g, "w", 1, wd, 1.0f);
    int n = ir_add_op(g, op, "loss", weighted ? "x,labels,w" : "x,labels", log_prob ? "y,lp" : "y", &e);
    ir_set_attr_str(g, n, "reduction", red, &e);
    if (ii) ir_set_attr_int(g, n, "ignore_index", *ii, &e);
    ir_add_output(g, "y", &e);
    if (log_prob) ir_add_output(g, "lp", &e);
}

/* Labels in [0, C) with every fifth one `ii` (when given); x random, or
 * for NLL log-probability-like (negative) with -inf at some classes no
 * label picks (a multiply by a 0 mask would give NaN there). */
static void loss_values(double *x, double *lab, int64_t N, int64_t C, int64_t D, const int64_t *ii, int nll)
{
    for (int64_t i = 0; i < N * D; i++) {
        lab[i] = (double)((int64_t)((frand() + 1.0f) * 0.5f * (float)C) % C);
        if (ii && i % 5 == 4) lab[i] = (double)*ii;
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t d = 0; d < D; d++) {
                double v = frand() * 3.0;
                if (nll) v = -fabs(v);
                if (nll && c != (int64_t)lab[n * D + d] && (n + c + d) % 3 == 0) v = -INFINITY;
                x[(n * C + c) * D + d] = v;
            }
}

TEST(nll_and_sce_losses)
{
    static const char *const ops[] = {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"};
    static const char *const reds[] = {"none", "sum", "mean"};
    static const int64_t iis[] = {2, -1};
    int64_t d4[4] = {3, 5, 2, 2}, d2[2] = {6, 4};
    double x[60], lab[12];
    for (int op = 0; op < 2; op++)
        for (int r = 0; r < 3; r++)
            for (int w = 0; w < 2; w++)
                for (int ii = -1; ii < 2; ii++) {
                    const int64_t *pii = ii < 0 ? NULL : &iis[ii];
                    int rank4 = (r + w + ii) % 2 == 0;
                    const int64_t *dims = rank4 ? d4 : d2;
                    int64_t N = dims[0], C = dims[1], D = rank4 ? 4 : 1;
                    loss_values(x, lab, N, C, D, pii, op == 0);
                    IrGraph g;
                    char what[96];
                    loss_graph(&g, ops[op], rank4 ? 4 : 2, dims, reds[r], w, pii, op == 1 && w);
                    snprintf(what, sizeof what, "%s %s%s ii=%s", op ? "sce" : "nll", reds[r], w ? " w" : "",
                             ii < 0 ? "-" : ii ? "-1" : "2");
                    Inputs iv = {2, {x, lab}};
                    run_both_tol(&g, what, &iv, 1e-5, 3e-2);
                    ir_free(&g);
                }
}

TEST(loss_all_ignored_mean_is_nan)
{
    /* sum of weights 0: mean = 0/0 = NaN, as the interpreter */
    int64_t d[2] = {4, 3}, ii = 1;
    double x[12], lab[4] = {1, 1, 1, 1};
    for (int i = 0; i < 12; i++) x[i] = -frand() - 1.0;
    IrGraph g;
    loss_graph(&g, "NegativeLogLikelihoodLoss", 2, d, "mean", 1, &ii, 0);
    Inputs iv = {2, {x, lab}};
    run_both_tol(&g, "nll mean all ignored", &iv, 1e-6, 3e-2);
    ir_free(&g);
}

/* g (any inputs) must fail to compile for configs/tiny.ini with a message
 * containing both strings: the interpreter is not run. */
static void expect_compile_error(IrGraph *g, const char *has1, const char *has2)
{
    AtlErr e = {{0}};
    AtlChip chip;
    uint8_t *buf = NULL;
    size_t len = 0;
    AbmModel m;
    AtlProgram p;
    AtlSim *s = NULL;
    AbmRegionBases b;
    memset(&m, 0, sizeof m);
    memset(&p, 0, sizeof p);
    REQUIRE(cfg_load("configs/tiny.ini", &chip, &e) == 0);
    REQUIRE(ir_toposort(g, &e) == 0 && ir_infer_shapes(g, &e) == 0 && pass_run_all(g, &e) == 0);
    CHECK(e2e_build(g, &chip, ISA_F32, NULL, NULL, &buf, &len, &m, &p, &b, &s, &e) != 0);
    CHECK_STR_CONTAINS(e.msg, has1);
    CHECK_STR_CONTAINS(e.msg, has2);
    sim_free(s);
    prog_free(&p);
    abm_model_free(&m);
    free(buf);
}

TEST(loss_many_tiles)
{
    /* more rows than a slot holds (sum / mean accumulate over the tiles of
     * one core), and rows longer than a slot (d chunks) */
    static const struct { int64_t d[3]; const char *red; } cases[] = {
        {{3000, 6, 1}, "sum"}, {{3000, 6, 1}, "mean"}, {{2, 5, 9000}, "none"}, {{2, 5, 9000}, "mean"}};
    static double x[2 * 5 * 9000 > 3000 * 6 ? 2 * 5 * 9000 : 3000 * 6], lab[18000];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int64_t *d = cases[i].d;
        int64_t ii = 3;
        loss_values(x, lab, d[0], d[1], d[2], &ii, 1);
        IrGraph g;
        char what[64];
        loss_graph(&g, "NegativeLogLikelihoodLoss", d[2] > 1 ? 3 : 2, d, cases[i].red, 1, &ii, 0);
        Inputs iv = {2, {x, lab}};
        snprintf(what, sizeof what, "nll %s %lldx%lldx%lld", cases[i].red, (long long)d[0], (long long)d[1], (long long)d[2]);
        run_both_tol(&g, what, &iv, 1e-4, 3e-2);
        ir_free(&g);
    }
}

TEST(trilu_int_and_runtime_k)
{
    int64_t d[3] = {2, 5, 7};
    double x[70];
    for (int i = 0; i < 70; i++) x[i] = (double)(i * 37 % 101) - 50;
    for (int upper = 0; upper < 2; upper++) {
        IrGraph g;
        AtlErr e;
        int64_t k = upper ? 1 : -2;
        ir_init(&g);
        g.opset = 14;
        ir_add_input(&g, "x", IR_I64, 3, d, &e);
        cst_i64(&g, "k", 1, &k);
        int n = ir_add_op(&g, "Trilu", "trilu", "x,k", "y", &e);
        ir_set_attr_int(&g, n, "upper", upper, &e);
        ir_add_output(&g, "y", &e);
        Inputs iv = {1, {x}};
        run_both(&g, upper ? "triu int64 k=1" : "tril int64 k=-2", &iv, 0);
        ir_free(&g);
    }
    IrGraph g;
    AtlErr e;
    int64_t one = 1;
    new_graph(&g, "x", 2, d + 1);
    ir_add_input(&g, "k", IR_I64, 1, &one, &e);
    ir_add_op(&g, "Trilu", "trilu", "x,k", "y", &e);
    ir_add_output(&g, "y", &e);
    expect_compile_error(&g, "'trilu'", "must be a constant");
    ir_free(&g);
}

TEST(topk_with_indices_ties)
{
    int64_t d[3] = {4, 9, 5};
    double x[180];
    tie_values(x, 180, 0);
    Inputs iv = {1, {x}};
    for (int largest = 0; largest < 2; largest++)
        for (int axis = -1; axis < 2; axis++) {
            IrGraph g;
            char what[64];
            topk_graph(&g, 3, d, 4, axis, largest, 1);
            snprintf(what, sizeof what, "topk4+idx ax%d %s ties", axis, largest ? "largest" : "smallest");
            run_both(&g, what, &iv, 0);
            ir_free(&g);
        }
}

TEST(topk_infinities)
{
    /* rows full of -inf (+inf for the smallest), the marker the rounds
     * write over picked values: later rounds must not repeat a pick */
    int64_t d[2] = {6, 7};
    double x[42];
    for (int largest = 0; largest < 2; largest++) {
        tie_values(x, 42, 0);
        for (int i = 0; i < 42; i++)
            if (i % 3 != 0 || i < 14) x[i] = largest ? -INFINITY : INFINITY;
        IrGraph g;
        topk_graph(&g, 2, d, 5, 1, largest, 1);
        Inputs iv = {1, {x}};
        run_both(&g, largest ? "topk5 largest of -inf rows" : "topk5 smallest of +inf rows", &iv, 0);
        ir_free(&g);
    }
}

/* Random integers in [lo, hi]. */
static void int_values(double *v, int64_t n, int64_t lo, int64_t hi)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t q = lo + (int64_t)((frand() + 1.0f) * 0.5f * (float)(hi - lo + 1));
        v[i] = (double)(q > hi ? hi : q);
    }
}

TEST(gather_elements)
{
    int64_t xd[3] = {3, 4, 5};
    double x[60], idx[60];
    for (int i = 0; i < 60; i++) x[i] = frand();
    for (int axis = 0; axis < 3; axis++) {
        int64_t id[3] = {3, 4, 5};
        id[axis] = 2 + axis;   /* fewer or more entries than the axis holds */
        int64_t n = id[0] * id[1] * id[2];
        int_values(idx, n, -xd[axis], xd[axis] - 1);
        for (int constant = 0; constant < 2; constant++) {
            IrGraph g;
            AtlErr e;
            char what[64];
            new_graph(&g, "x", 3, xd);
            if (constant) {
                int64_t v[60];
                for (int64_t i = 0; i < n; i++) v[i] = (int64_t)idx[i];
                ir_add_const(&g, "idx", IR_I64, 3, id, v, &e);
            } else ir_add_input(&g, "idx", IR_I64, 3, id, &e);
            int nn = ir_add_op(&g, "GatherElements", "ge", "x,idx", "y", &e);
            ir_set_attr_int(&g, nn, "axis", axis, &e);
            ir_add_output(&g, "y", &e);
            Inputs iv = {constant ? 1 : 2, {x, idx}};
            snprintf(what, sizeof what, "gather_elements ax%d %s", axis, constant ? "const" : "input");
            run_both_tol(&g, what, &iv, 0, 1e-2);
            ir_free(&g);
        }
    }
}

TEST(gather_nd)
{
    static const struct { int64_t id[2]; int bd; } cases[] = {{{5, 2}, 0}, {{3, 3}, 0}, {{2, 1}, 1}, {{2, 2}, 1}};
    int64_t xd[3] = {2, 3, 4};
    double x[24], idx[16];
    for (int i = 0; i < 24; i++) x[i] = frand();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        IrGraph g;
        AtlErr e;
        char what[64];
        int64_t kk = cases[c].id[1], n = cases[c].id[0] * kk;
        int bd = cases[c].bd;
        for (int64_t i = 0; i < n; i++) int_values(&idx[i], 1, -xd[bd + i % kk], xd[bd + i % kk] - 1);
        new_graph(&g, "x", 3, xd);
        ir_add_input(&g, "idx", IR_I64, 2, cases[c].id, &e);
        int nn = ir_add_op(&g, "GatherND", "gnd", "x,idx", "y", &e);
        ir_set_attr_int(&g, nn, "batch_dims", bd, &e);
        ir_add_output(&g, "y", &e);
        Inputs iv = {2, {x, idx}};
        snprintf(what, sizeof what, "gather_nd %lldx%lld b%d", (long long)cases[c].id[0], (long long)kk, bd);
        run_both_tol(&g, what, &iv, 0, 1e-2);
        ir_free(&g);
    }
}

TEST(onehot)
{
    int64_t id[2] = {3, 4}, two = 2;
    double idx[12], fvals[2] = {-2.5, 7.0}, ivals[2] = {-2, 7};
    for (int kind = 0; kind < 4; kind++)   /* indices int64 / float x values float / int64 */
        for (int axis = -1; axis < 2; axis++) {
            int fl = kind & 1, iv64 = kind >> 1;
            IrGraph g;
            AtlErr e;
            char what[64];
            int64_t depth = 5;
            int_values(idx, 12, -6, 5);   /* -6 and 5 are outside [-5, 5): all off */
            if (fl) for (int i = 0; i < 12; i++) idx[i] += idx[i] < 0 ? -0.5 : 0.5;   /* truncated toward zero */
            ir_init(&g);
            g.opset = 14;
            ir_add_input(&g, "idx", fl ? IR_F32 : IR_I64, 2, id, &e);
            cst_i64(&g, "depth", 1, &depth);
            ir_add_input(&g, "vals", iv64 ? IR_I64 : IR_F32, 1, &two, &e);
            int nn = ir_add_op(&g, "OneHot", "oh", "idx,depth,vals", "y", &e);
            ir_set_attr_int(&g, nn, "axis", axis, &e);
            ir_add_output(&g, "y", &e);
            Inputs iv = {2, {idx, iv64 ? ivals : fvals}};
            snprintf(what, sizeof what, "onehot %s idx, %s values, ax%d", fl ? "f32" : "i64", iv64 ? "i64" : "f32", axis);
            run_both(&g, what, &iv, 0);
            ir_free(&g);
        }
}

TEST(gather_index_out_of_range_faults)
{
    /* GatherElements 4 and GatherND -4 on an axis of 3 (the interpreter
     * rejects them too): the dma.gather faults naming its entry */
    int64_t xd[2] = {2, 3}, id[2] = {2, 3}, nd[2] = {1, 2};
    double x[6] = {1, 2, 3, 4, 5, 6}, ge[6] = {0, 1, 2, 4, 0, 1}, gn[2] = {1, -4};
    for (int op = 0; op < 2; op++) {
        IrGraph g;
        AtlErr e;
        new_graph(&g, "x", 2, xd);
        ir_add_input(&g, "idx", IR_I64, 2, op ? nd : id, &e);
        int n = ir_add_op(&g, op ? "GatherND" : "GatherElements", "g", "x,idx", "y", &e);
        if (!op) ir_set_attr_int(&g, n, "axis", 1, &e);
        ir_add_output(&g, "y", &e);
        Inputs iv = {2, {x, op ? gn : ge}};
        char msg[1024] = "";
        int rc = run_values(&g, "configs/tiny.ini", ISA_F32, &iv, 0, "dma.gather", msg, sizeof msg);
        printf("  %-34s %s%s\n", op ? "gather_nd index -4 of 3" : "gather_elements index 4 of 3", rc ? "ERROR: " : "faults", msg);
        CHECKF(rc == 0, "%s", msg);
        ir_free(&g);
    }
}

int main(void)
{
    RUN(hardmax_axes);
    RUN(hardmax_many_rows);
    RUN(hardmax_ties_and_nan);
    RUN(trilu_float);
    RUN(trilu_inf_and_big);
    RUN(topk_values);
    RUN(argmax_argmin);
    RUN(nll_and_sce_losses);
    RUN(loss_all_ignored_mean_is_nan);
    RUN(loss_many_tiles);
    RUN(trilu_int_and_runtime_k);
    RUN(topk_with_indices_ties);
    RUN(topk_infinities);
    RUN(gather_elements);
    RUN(gather_nd);
    RUN(onehot);
    RUN(gather_index_out_of_range_faults);
    return test_summary("test_backend_arg");
}
