/* test_backend_cmp.c - the elementwise ops lowered by table programs of the
 * rounding, comparison, select and transcendental vector instructions
 * (compiler/bk_elem_prog.c): rounding, Sign, trigonometric and hyperbolic
 * functions, Erf, Mod, Pow with a run-time exponent. Graphs built in code,
 * compiled for configs/tiny.ini and configs/a1.ini, simulated and compared
 * with the reference interpreter: on random inputs (run_graph, broadcast
 * shapes) and on chosen edge values (NaN, +-inf, -0, rounding ties,
 * negative Mod operands, Pow's special cases), where NaN must meet NaN and
 * an infinity the same infinity. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"

/* Compiles g (graph input 0 gets vals, repeated to its size) for chipfile
 * in f32, runs it and compares every output with the interpreter: equal
 * NaN-ness, equal infinities, else |chip - ref| / (1 + |ref|) <= tol. */
static void run_values(IrGraph *g0, const char *chipfile, const float *vals, int nv, const char *what, double tol)
{
    IrGraph g;
    PbBuf pb = {0};
    AtlErr e = {{0}};
    REQUIRE(onnx_save_buffer(g0, &pb, &e) == 0);
    REQUIRE(onnx_load_buffer(pb.p, pb.n, what, &g, &e) == 0);
    pb_free(&pb);
    AtlChip chip;
    uint8_t *buf = NULL;
    size_t len = 0;
    AbmModel m;
    memset(&m, 0, sizeof m);
    AtlProgram p;
    memset(&p, 0, sizeof p);
    AtlSim *s = NULL;
    IrTensor *outs = NULL, in;
    memset(&in, 0, sizeof in);
    int bad = 0, ok = !cfg_load(chipfile, &chip, &e) && !ir_toposort(&g, &e) && !ir_infer_shapes(&g, &e) && !pass_run_all(&g, &e);
    if (ok) {
        const IrTensor *gi = &g.t[g.inputs[0]];
        in.name = ir_strdup(gi->name);
        in.dtype = IR_F32;
        in.ndim = gi->ndim;
        memcpy(in.dims, gi->dims, sizeof in.dims);
        in.producer = -1;
        ok = !ir_alloc_data(&in, &e);
    }
    int64_t n = ok ? ir_numel(&in) : 0;
    for (int64_t i = 0; i < n; i++) ((float *)in.data)[i] = vals[i % nv];
    BkRegionBases b;
    ok = ok && !interp_run(&g, &in, 1, &outs, &e) &&
         !e2e_build(&g, &chip, ISA_F32, NULL, NULL, &buf, &len, &m, &p, &b, &s, &e) &&
         !e2e_put_input(s, &b, abm_tensor(&m.view, 0), ISA_F32, (const float *)in.data, n, &e) && !sim_run(s, &e);
    CHECKF(ok, "%s on %s: %s", what, chipfile, e.msg);
    for (int k = 0; ok && k < g.nout; k++) {
        const char *name = g.t[g.outputs[k]].name;
        uint32_t j = 0;
        while (j < m.view.n_tensors && strcmp(abm_tensor(&m.view, j).name, name)) j++;
        REQUIRE(j < m.view.n_tensors);
        AbmTensor to = abm_tensor(&m.view, j);
        int64_t no = ir_numel(&outs[k]);
        const uint8_t *dout = sim_dram(s, b.base[ABM_REGION_IO] + to.offset, (uint64_t)no * 4);
        REQUIRE(dout != NULL);
        for (int64_t i = 0; i < no; i++) {
            double r = ir_get_f(&outs[k], i), a = e2e_load_elem(dout, ISA_F32, (size_t)i);
            int same = isnan(r) ? isnan(a) : isinf(r) ? a == r : fabs(a - r) / (1 + fabs(r)) <= tol;
            if (!same && bad++ < 4)
                printf("    %s on %s: element %lld: chip %.9g, interpreter %.9g\n", what, chipfile, (long long)i, a, r);
        }
    }
    printf("  %-22s %-18s %s\n", what, chipfile, ok && !bad ? "ok" : "MISMATCH");
    CHECKF(bad == 0, "%s on %s: %d elements differ", what, chipfile, bad);
    if (outs) interp_free_outputs(outs, g.nout);
    ir_tensor_free_contents(&in);
    sim_free(s);
    prog_free(&p);
    abm_model_free(&m);
    free(buf);
    ir_free(&g);
}

static void run_values_both(IrGraph *g, const float *vals, int nv, const char *what, double tol)
{
    for (int c = 0; c < 2; c++) run_values(g, chips[c], vals, nv, what, tol);
}

/* The edge values every unary op sees: NaN, infinities, signed zeros,
 * rounding ties (0.5 .. 3.5 and negatives), a denormal, large values,
 * and points inside every domain (Acosh >= 1, |x| < 1 for Atanh). */
static const float edge_vals[] = {
    NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 3.5f, 0.49999997f, 1.0f, -1.0f,
    1.0001f, 7.25f, -7.25f, 1e-40f, 100.0f, -100.0f, 3e38f, 0.25f, -0.75f, 12.5f, 1e6f, 0.99f, -0.3f};
#define NEDGE ((int)(sizeof edge_vals / sizeof *edge_vals))

static void unary_graph(IrGraph *g, const char *op, const int64_t *dims)
{
    AtlErr e;
    new_graph(g, "x", 3, dims);
    ir_add_op(g, op, "op", "x", "y", &e);
    ir_add_output(g, "y", &e);
}

TEST(unary_ops_on_edge_values)
{
    static const char *const ops[] = {"Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
                                      "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erf"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        IrGraph g;
        unary_graph(&g, ops[i], (int64_t[]){2, 3, 50});
        run_values_both(&g, edge_vals, NEDGE, ops[i], 1e-6);
        ir_free(&g);
    }
}

TEST(unary_ops_random_many_tiles)
{
    /* one larger tensor: several tiles per core on a1 */
    static const char *const ops[] = {"Round", "Sin", "Erf"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        IrGraph g;
        unary_graph(&g, ops[i], (int64_t[]){4, 64, 130});
        run_graph(&g, ops[i], 1e-6);
        ir_free(&g);
    }
}

/* x (graph input, [rows, 1]) OP y (constant [1, ycols]): every pair. */
static void binary_graph(IrGraph *g, const char *op, int64_t rows, const float *y, int ny)
{
    AtlErr e;
    new_graph(g, "x", 2, (int64_t[]){rows, 1});
    ir_add_const(g, "y", IR_F32, 2, (int64_t[]){1, ny}, y, &e);
    int n = ir_add_op(g, op, "op", "x,y", "z", &e);
    if (!strcmp(op, "Mod")) ir_set_attr_int(g, n, "fmod", 1, &e);
    ir_add_output(g, "z", &e);
}

TEST(mod_fmod_signs_and_specials)
{
    static const float y[] = {2.0f, -2.0f, 0.75f, -0.5f, 3.0f, INFINITY, 0.0f, 1e-3f};
    IrGraph g;
    binary_graph(&g, "Mod", NEDGE, y, (int)(sizeof y / sizeof *y));
    run_values_both(&g, edge_vals, NEDGE, "Mod fmod=1", 1e-6);
    ir_free(&g);
}

TEST(pow_runtime_exponent_special_cases)
{
    /* C pow's cases: x < 0 with even / odd / non-integer y, x = 0 with
     * y > 0, y < 0, y = 0, NaN and inf bases, y = -0 */
    static const float x[] = {2.0f, 0.5f, -2.0f, -3.0f, -0.5f, 0.0f, 1.0f, -1.0f, NAN, INFINITY, 1e-3f, -1e3f, 10.0f};
    static const float y[] = {2.0f, 3.0f, -1.0f, -2.0f, 0.5f, 0.0f, -0.0f, 2.5f, -3.0f, 1.0f, 7.0f, -0.5f, 20.0f};
    IrGraph g;
    binary_graph(&g, "Pow", (int64_t)(sizeof x / sizeof *x), y, (int)(sizeof y / sizeof *y));
    run_values_both(&g, x, (int)(sizeof x / sizeof *x), "Pow x^y", 1e-5);
    ir_free(&g);
}

TEST(pow_and_mod_broadcast_random)
{
    /* x [3, 40, 7] (random in [-1, 1)) with a run-time exponent 2 - x of
     * the same shape and a constant [40, 1] one; Mod by a [7] constant */
    AtlErr e;
    IrGraph g;
    int64_t d[3] = {3, 40, 7};
    new_graph(&g, "x", 3, d);
    float two = 2.0f, yv[40], mv[7];
    for (int i = 0; i < 40; i++) yv[i] = (float)(i % 5) - 2.0f;
    for (int i = 0; i < 7; i++) mv[i] = i % 2 ? -0.3f - 0.1f * (float)i : 0.25f + 0.2f * (float)i;
    ir_add_const(&g, "two", IR_F32, 0, NULL, &two, &e);
    ir_add_const(&g, "yc", IR_F32, 2, (int64_t[]){40, 1}, yv, &e);
    ir_add_const(&g, "m", IR_F32, 1, (int64_t[]){7}, mv, &e);
    ir_add_op(&g, "Abs", "abs", "x", "ax", &e);
    ir_add_op(&g, "Sub", "sub", "two,x", "ex", &e);
    ir_add_op(&g, "Pow", "pow_rt", "ax,ex", "p1", &e);
    ir_add_op(&g, "Pow", "pow_c", "x,yc", "p2", &e);
    int n = ir_add_op(&g, "Mod", "mod", "x,m", "p3", &e);
    ir_set_attr_int(&g, n, "fmod", 1, &e);
    ir_add_output(&g, "p1", &e);
    ir_add_output(&g, "p2", &e);
    ir_add_output(&g, "p3", &e);
    run_graph(&g, "pow/mod broadcast", 1e-5);
    ir_free(&g);
}

int main(void)
{
    RUN(unary_ops_on_edge_values);
    RUN(unary_ops_random_many_tiles);
    RUN(mod_fmod_signs_and_specials);
    RUN(pow_runtime_exponent_special_cases);
    RUN(pow_and_mod_broadcast_random);
    return test_summary("backend_cmp");
}
