/* test_backend_cmp.c - the elementwise ops lowered by table programs of the
 * rounding, comparison, select, bitwise, integer division and
 * transcendental vector instructions (compiler/lower/elem_prog.c): rounding,
 * Sign, trigonometric and hyperbolic functions, Erf, Mod, Pow with a
 * run-time (also integer) exponent, comparisons, Not/And/Or/Xor, IsNaN,
 * IsInf, Where, float -> integer / bool Cast and CastLike, integer Div and
 * Mod. Graphs built in code, compiled for configs/tiny.ini and
 * configs/a1.ini (f32 storage; f16 and bf16 for a few), simulated and
 * compared with the reference interpreter: on random inputs (run_graph,
 * broadcast shapes) and on chosen edge values (NaN, +-inf, -0, rounding
 * ties, negative Mod / Div operands, integer extremes, Pow's special
 * cases), where NaN must meet NaN, an infinity the same infinity, and
 * integer and bool outputs must be equal. Inputs are written, outputs read
 * in the dtypes the .abm lists. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "compiler/ops/ops.h"
#include "test/compiler/bk_graph_run.h"

/* Values of one graph input (repeated to its size; integers truncated). */
typedef struct InVals { const double *v; int n; } InVals;

static int find_tensor(const AbmModel *m, const char *name)
{
    for (uint32_t j = 0; j < m->view.n_tensors; j++) if (!strcmp(abm_tensor(&m->view, j).name, name)) return (int)j;
    return -1;
}

/* Writes input t into the simulator in the dtype the model lists for it. */
static int put_input(AtlSim *s, const AbmRegionBases *b, const AbmModel *m, const IrTensor *t, AtlErr *e)
{
    int j = find_tensor(m, t->name);
    if (j < 0) return atl_fail(e, "input '%s' not in the model", t->name);
    AbmTensor ti = abm_tensor(&m->view, (uint32_t)j);
    int dt = e2e_isa_of_abm(ti.dtype), es = isa_dtype_size(dt);
    uint8_t *d = sim_dram(s, b->base[ABM_REGION_IO] + ti.offset, (uint64_t)ir_numel(t) * es);
    if (!d) return atl_fail(e, "input '%s' outside DRAM", t->name);
    for (int64_t i = 0; i < ir_numel(t); i++) {
        if (num_is_float(dt)) num_store_f64(d + i * es, dt, ir_get_f(t, i));
        else num_store_int(d + i * es, dt, ir_get_i(t, i));
    }
    return 0;
}

/* Compares output k (ref) with the chip's copy; returns the mismatches:
 * floats NaN with NaN, an infinity with the same one, else
 * |chip - ref| / (1 + |ref|) <= tol; integers and bools exactly. */
static int compare_output(const AtlSim *s, const AbmRegionBases *b, const AbmModel *m, const IrTensor *ref,
                          const char *name, double tol, const char *what)
{
    int j = find_tensor(m, name), bad = 0;
    CHECKF(j >= 0, "%s: output '%s' not in the model", what, name);
    if (j < 0) return 1;
    AbmTensor to = abm_tensor(&m->view, (uint32_t)j);
    int dt = e2e_isa_of_abm(to.dtype), es = isa_dtype_size(dt);
    int64_t n = ir_numel(ref);
    const uint8_t *d = sim_dram((AtlSim *)s, b->base[ABM_REGION_IO] + to.offset, (uint64_t)n * es);
    CHECKF(d != NULL, "%s: output '%s' outside DRAM", what, name);
    if (!d) return 1;
    for (int64_t i = 0; i < n; i++) {
        double r = ir_get_f(ref, i), a = num_load_f64(d + i * es, dt);
        int same = isnan(r) ? isnan(a) : isinf(r) ? a == r : fabs(a - r) / (1 + fabs(r)) <= tol;
        if (!num_is_float(dt)) same = num_load_int(d + i * es, dt) == ir_get_i(ref, i);
        if (!same && bad++ < 4) printf("    %s: '%s' element %lld: chip %.9g, interpreter %.9g\n", what, name, (long long)i, a, r);
    }
    return bad;
}

/* Compiles g for chipfile with float storage dtype fdt (integers and bools
 * in their chip dtypes), runs it with graph input k set from iv[k] and
 * compares every output with the interpreter (compare_output). */
static void run_values_in(IrGraph *g0, const char *chipfile, int fdt, const InVals *iv, const char *what, double tol)
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
    IrTensor *outs = NULL, in[4];
    memset(in, 0, sizeof in);
    int nin = 0, bad = 0;
    int ok = !cfg_load(chipfile, &chip, &e) && !ir_toposort(&g, &e) && !ir_infer_shapes(&g, &e) && !pass_run_all(&g, &e);
    REQUIRE(g.nin <= 4);
    for (; ok && nin < g.nin; nin++) {
        const IrTensor *gi = &g.t[g.inputs[nin]];
        in[nin].name = ir_strdup(gi->name);
        in[nin].dtype = gi->dtype;
        in[nin].ndim = gi->ndim;
        memcpy(in[nin].dims, gi->dims, sizeof in[nin].dims);
        in[nin].producer = -1;
        ok = !ir_alloc_data(&in[nin], &e);
        for (int64_t i = 0; ok && i < ir_numel(&in[nin]); i++) {
            double v = iv[nin].v[i % iv[nin].n];
            if (op_dtype_is_float(gi->dtype)) ir_set_f(&in[nin], i, v);
            else ir_set_i(&in[nin], i, (int64_t)v);
        }
    }
    AbmRegionBases b;
    ok = ok && !interp_run(&g, in, nin, &outs, &e) && !e2e_build(&g, &chip, fdt, NULL, NULL, &buf, &len, &m, &p, &b, &s, &e);
    for (int k = 0; ok && k < nin; k++) ok = !put_input(s, &b, &m, &in[k], &e);
    ok = ok && !sim_run(s, &e);
    CHECKF(ok, "%s on %s: %s", what, chipfile, e.msg);
    for (int k = 0; ok && k < g.nout; k++) bad += compare_output(s, &b, &m, &outs[k], g.t[g.outputs[k]].name, tol, what);
    printf("  %-24s %-18s %s%s\n", what, chipfile, ok && !bad ? "ok" : "MISMATCH ", ok ? "" : e.msg);
    CHECKF(bad == 0, "%s on %s: %d elements differ", what, chipfile, bad);
    if (ok) bkc_check_program(&p, chipfile, what);
    if (outs) interp_free_outputs(outs, g.nout);
    for (int k = 0; k < nin; k++) ir_tensor_free_contents(&in[k]);
    sim_free(s);
    prog_free(&p);
    abm_model_free(&m);
    free(buf);
    ir_free(&g);
}

static void run_values_both(IrGraph *g, const InVals *iv, const char *what, double tol)
{
    for (int c = 0; c < 2; c++) run_values_in(g, chips[c], ISA_F32, iv, what, tol);
}

/* The edge values every unary op sees: NaN, infinities, signed zeros,
 * rounding ties (0.5 .. 3.5 and negatives), a denormal, large values,
 * and points inside every domain (Acosh >= 1, |x| < 1 for Atanh). */
static const double edge_vals[] = {
    NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 3.5f, 0.49999997f, 1.0f, -1.0f,
    1.0001f, 7.25f, -7.25f, 1e-40f, 100.0f, -100.0f, 3e38, 0.25f, -0.75f, 12.5f, 1e6f, 0.99f, -0.3f};
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
        run_values_both(&g, (InVals[]){{edge_vals, NEDGE}}, ops[i], 1e-6);
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
    run_values_both(&g, (InVals[]){{edge_vals, NEDGE}}, "Mod fmod=1", 1e-6);
    ir_free(&g);
}

TEST(pow_runtime_exponent_special_cases)
{
    /* C pow's cases: x < 0 with even / odd / non-integer y, x = 0 with
     * y > 0, y < 0, y = 0, NaN and inf bases, y = -0 */
    static const double x[] = {2.0f, 0.5f, -2.0f, -3.0f, -0.5f, 0.0f, 1.0f, -1.0f, NAN, INFINITY, 1e-3f, -1e3f, 10.0f};
    static const float y[] = {2.0f, 3.0f, -1.0f, -2.0f, 0.5f, 0.0f, -0.0f, 2.5f, -3.0f, 1.0f, 7.0f, -0.5f, 20.0f};
    IrGraph g;
    binary_graph(&g, "Pow", (int64_t)(sizeof x / sizeof *x), y, (int)(sizeof y / sizeof *y));
    run_values_both(&g, (InVals[]){{x, (int)(sizeof x / sizeof *x)}}, "Pow x^y", 1e-5);
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

/* x (graph input of dtype xdt, [rows, 1]) OP y (constant of ydt, [1, ny]). */
static void pair_graph(IrGraph *g, const char *op, int xdt, int64_t rows, int ydt, const double *y, int ny)
{
    AtlErr e;
    ir_init(g);
    g->opset = 14;
    ir_add_input(g, "x", xdt, 2, (int64_t[]){rows, 1}, &e);
    IrTensor t;
    memset(&t, 0, sizeof t);
    t.dtype = ydt;
    t.ndim = 2;
    t.dims[0] = 1;
    t.dims[1] = ny;
    REQUIRE(ir_alloc_data(&t, &e) == 0);
    for (int i = 0; i < ny; i++) {
        if (op_dtype_is_float(ydt)) ir_set_f(&t, i, y[i]);
        else ir_set_i(&t, i, (int64_t)y[i]);
    }
    ir_add_const(g, "y", ydt, 2, t.dims, t.data, &e);
    free(t.data);
    int fmod1 = !strcmp(op, "Mod_fmod");
    int n = ir_add_op(g, fmod1 ? "Mod" : op, "op", "x,y", "z", &e);
    if (fmod1) ir_set_attr_int(g, n, "fmod", 1, &e);
    ir_add_output(g, "z", &e);
}

static const char *const cmp_ops[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};

TEST(comparisons_float_edges)
{
    static const double y[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 0.5, 2.5, 1e-40};
    for (size_t i = 0; i < sizeof cmp_ops / sizeof *cmp_ops; i++) {
        IrGraph g;
        pair_graph(&g, cmp_ops[i], IR_F32, NEDGE, IR_F32, y, (int)(sizeof y / sizeof *y));
        run_values_both(&g, (InVals[]){{edge_vals, NEDGE}}, cmp_ops[i], 0);
        ir_free(&g);
    }
}

TEST(comparisons_integers_and_bools)
{
    static const double xv[] = {-7, -1, 0, 1, 2, 3, 100, -100, 2147483647.0, -2147483648.0, 5, -3};
    static const double yv[] = {-1, 0, 3, -100, 2147483647.0};
    static const int dts[] = {IR_I32, IR_I64, IR_I8, IR_U8, IR_I16};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
        for (size_t i = 0; i < sizeof cmp_ops / sizeof *cmp_ops; i++) {
            int small = dts[d] == IR_I8 || dts[d] == IR_U8 || dts[d] == IR_I16;
            static const double sx[] = {-7, -1, 0, 1, 2, 3, 100, 5, 127, -3}, sy[] = {-1, 0, 3, 100, 2};
            static const double ux[] = {0, 1, 2, 3, 100, 255, 7}, uy[] = {0, 3, 255, 100};
            int u = dts[d] == IR_U8;
            IrGraph g;
            char what[64];
            snprintf(what, sizeof what, "%s %s", cmp_ops[i], ir_dtype_name(dts[d]));
            pair_graph(&g, cmp_ops[i], dts[d], 12, dts[d], u ? uy : small ? sy : yv, u ? 4 : 5);
            run_values_both(&g, (InVals[]){{u ? ux : small ? sx : xv, u ? 7 : small ? 10 : 12}}, what, 0);
            ir_free(&g);
        }
    /* Equal on bools, broadcast both ways */
    AtlErr e;
    IrGraph g;
    ir_init(&g);
    g.opset = 14;
    ir_add_input(&g, "a", IR_BOOL, 2, (int64_t[]){6, 1}, &e);
    ir_add_input(&g, "b", IR_BOOL, 1, (int64_t[]){5}, &e);
    ir_add_op(&g, "Equal", "eq", "a,b", "z", &e);
    ir_add_output(&g, "z", &e);
    static const double a[] = {0, 1, 1, 0, 1, 0}, b[] = {1, 0, 0, 1, 1};
    run_values_both(&g, (InVals[]){{a, 6}, {b, 5}}, "Equal bool", 0);
    ir_free(&g);
}

TEST(logical_ops_broadcast)
{
    static const char *const ops[] = {"And", "Or", "Xor"};
    static const double a[] = {0, 1, 1, 0, 1, 0, 0}, b[] = {1, 0, 1, 1, 0};
    for (size_t i = 0; i < 4; i++) {
        AtlErr e;
        IrGraph g;
        ir_init(&g);
        g.opset = 14;
        ir_add_input(&g, "a", IR_BOOL, 3, (int64_t[]){2, 7, 1}, &e);
        ir_add_input(&g, "b", IR_BOOL, 2, (int64_t[]){1, 5}, &e);
        if (i < 3) ir_add_op(&g, ops[i], "op", "a,b", "z", &e);
        else ir_add_op(&g, "Not", "op", "a", "z", &e);
        ir_add_output(&g, "z", &e);
        if (i == 3) ir_add_output(&g, "b", &e);
        run_values_both(&g, (InVals[]){{a, 7}, {b, 5}}, i < 3 ? ops[i] : "Not", 0);
        ir_free(&g);
    }
}

TEST(isnan_isinf_variants)
{
    static const char *const what[] = {"IsNaN", "IsInf", "IsInf positive", "IsInf negative", "IsInf neither"};
    for (int v = 0; v < 5; v++) {
        AtlErr e;
        IrGraph g;
        new_graph(&g, "x", 2, (int64_t[]){3, NEDGE});
        int n = ir_add_op(&g, v ? "IsInf" : "IsNaN", "op", "x", "z", &e);
        if (v >= 2) {
            ir_set_attr_int(&g, n, "detect_positive", v == 2, &e);
            ir_set_attr_int(&g, n, "detect_negative", v == 3, &e);
        }
        ir_add_output(&g, "z", &e);
        run_values_both(&g, (InVals[]){{edge_vals, NEDGE}}, what[v], 0);
        ir_free(&g);
    }
}

TEST(where_any_dtype_broadcast)
{
    /* bool condition [4, 1, 6], x [5, 1], y [1, 6]: all three broadcast */
    static const double c[] = {1, 0, 0, 1, 1, 0, 1, 0, 0}, xv[] = {1.5, NAN, -0.0, INFINITY, -7}, yv[] = {-1, 2, 3e9, 4, 0, -2};
    static const int dts[] = {IR_F32, IR_I32, IR_I64, IR_BOOL, IR_I8};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
        AtlErr e;
        IrGraph g;
        ir_init(&g);
        g.opset = 16;
        ir_add_input(&g, "c", IR_BOOL, 3, (int64_t[]){4, 1, 6}, &e);
        ir_add_input(&g, "x", dts[d], 2, (int64_t[]){5, 1}, &e);
        ir_add_input(&g, "y", dts[d], 2, (int64_t[]){1, 6}, &e);
        ir_add_op(&g, "Where", "where", "c,x,y", "z", &e);
        ir_add_output(&g, "z", &e);
        int fl = dts[d] == IR_F32;
        static const double xi[] = {1, 0, -5, 100, 7}, yi[] = {-1, 2, 1, 4, 0, -2};
        char what[64];
        snprintf(what, sizeof what, "Where %s", ir_dtype_name(dts[d]));
        run_values_both(&g, (InVals[]){{c, 9}, {fl ? xv : xi, 5}, {fl ? yv : yi, 6}}, what, 0);
        ir_free(&g);
    }
}

TEST(cast_float_to_integer_truncates_and_to_bool)
{
    /* finite values only for integers (NaN / inf have no integer), ties and
     * negatives truncate toward zero; bool: NaN and inf are true, -0 false */
    static const double xi[] = {-2.5, 2.5, -0.5, 0.5, 2.7, -2.7, 0.0, -0.0, 99.99, -99.99, 126.9, 1e-40, 3.5, -1.0};
    static const int to[] = {IR_I32, IR_I64, IR_I8, IR_I16, IR_U8, IR_BOOL};
    for (size_t k = 0; k < sizeof to / sizeof *to; k++)
        for (int like = 0; like < 2; like++) {
            AtlErr e;
            IrGraph g;
            new_graph(&g, "x", 2, (int64_t[]){2, 14});
            g.opset = 15;   /* CastLike */
            if (like) {
                int64_t zero = 0;
                IrTensor t;
                memset(&t, 0, sizeof t);
                t.dtype = to[k];
                t.ndim = 1;
                t.dims[0] = 1;
                REQUIRE(ir_alloc_data(&t, &e) == 0);
                ir_set_i(&t, 0, zero);
                ir_add_const(&g, "like", to[k], 1, t.dims, t.data, &e);
                free(t.data);
                ir_add_op(&g, "CastLike", "cast", "x,like", "z", &e);
            } else {
                int n = ir_add_op(&g, "Cast", "cast", "x", "z", &e);
                ir_set_attr_int(&g, n, "to", to[k], &e);
            }
            ir_add_output(&g, "z", &e);
            int b = to[k] == IR_BOOL, u = to[k] == IR_U8;
            static const double ub[] = {0.5, 2.5, 2.7, 0.0, -0.0, 99.99, 255.5, 1e-40, 3.5, 200.1};
            char what[64];
            snprintf(what, sizeof what, "%s f32 -> %s", like ? "CastLike" : "Cast", ir_dtype_name(to[k]));
            run_values_both(&g, (InVals[]){b ? (InVals){edge_vals, NEDGE} : u ? (InVals){ub, 10} : (InVals){xi, 14}}, what, 0);
            ir_free(&g);
        }
}

TEST(integer_div_and_mod_signs)
{
    /* negative operands: Div truncates, Mod takes the divisor's sign, Mod
     * fmod=1 the dividend's (no zero divisor: the chip faults on it) */
    static const double xv[] = {7, -7, 6, -6, 0, 1, -1, 100, -100, 2147483647.0, -2147483647.0, 13};
    static const double yv[] = {3, -3, 2, -2, 1, -1, 7, 100};
    static const char *const ops[] = {"Div", "Mod", "Mod_fmod"};
    static const int dts[] = {IR_I32, IR_I64, IR_I16};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
        for (int i = 0; i < 3; i++) {
            IrGraph g;
            char what[64];
            snprintf(what, sizeof what, "%s %s", ops[i], ir_dtype_name(dts[d]));
            pair_graph(&g, ops[i], dts[d], 12, dts[d], yv, 8);
            run_values_both(&g, (InVals[]){{xv, dts[d] == IR_I16 ? 9 : 12}}, what, 0);
            ir_free(&g);
        }
}

TEST(pow_integer_exponent)
{
    /* a float base with an int64 exponent tensor (converted on the chip) */
    static const double x[] = {2.0, -2.0, 0.5, -3.0, 0.0, 1.5, -1.0, 10.0};
    static const double y[] = {0, 1, 2, 3, -1, -2, 5};
    IrGraph g;
    pair_graph(&g, "Pow", IR_F32, 8, IR_I64, y, 7);
    run_values_both(&g, (InVals[]){{x, 8}}, "Pow f32 ^ int64", 1e-5);
    ir_free(&g);
}

TEST(half_storage_compare_where_cast)
{
    /* f16 and bf16 storage: the comparisons run in the half dtype, Where
     * converts its bool condition into it, IsInf and the truncating Cast
     * see half values (inputs chosen exact in both) */
    static const double xv[] = {1.5, -2.5, 0.0, -0.0, INFINITY, -INFINITY, NAN, 3.0, -0.75, 96.0};
    static const double c[] = {1, 0, 0, 1, 1, 0, 1};
    static const int fdts[] = {ISA_F16, ISA_BF16};
    for (int f = 0; f < 2; f++) {
        AtlErr e;
        IrGraph g;
        ir_init(&g);
        g.opset = 16;
        ir_add_input(&g, "x", IR_F32, 2, (int64_t[]){7, 10}, &e);
        ir_add_input(&g, "c", IR_BOOL, 2, (int64_t[]){7, 1}, &e);
        ir_add_op(&g, "Neg", "neg", "x", "nx", &e);
        ir_add_op(&g, "Less", "less", "x,nx", "lt", &e);
        ir_add_op(&g, "IsInf", "isinf", "x", "inf", &e);
        ir_add_op(&g, "Where", "where", "c,x,nx", "w", &e);
        ir_add_op(&g, "Floor", "floor", "x", "fx", &e);
        ir_add_op(&g, "Equal", "eq", "fx,x", "isint", &e);
        ir_add_output(&g, "lt", &e);
        ir_add_output(&g, "inf", &e);
        ir_add_output(&g, "w", &e);
        ir_add_output(&g, "isint", &e);
        for (int k = 0; k < 2; k++)
            run_values_in(&g, chips[k], fdts[f], (InVals[]){{xv, 10}, {c, 7}}, f ? "half ops bf16" : "half ops f16", 0);
        ir_free(&g);
    }
}

int main(void)
{
    RUN(unary_ops_on_edge_values);
    RUN(unary_ops_random_many_tiles);
    RUN(mod_fmod_signs_and_specials);
    RUN(pow_runtime_exponent_special_cases);
    RUN(pow_and_mod_broadcast_random);
    RUN(comparisons_float_edges);
    RUN(comparisons_integers_and_bools);
    RUN(logical_ops_broadcast);
    RUN(isnan_isinf_variants);
    RUN(where_any_dtype_broadcast);
    RUN(cast_float_to_integer_truncates_and_to_bool);
    RUN(integer_div_and_mod_signs);
    RUN(pow_integer_exponent);
    RUN(half_storage_compare_where_cast);
    return test_summary("backend_cmp");
}
