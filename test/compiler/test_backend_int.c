/* test_backend_int.c - the backend's integer datapath: graphs whose tensors
 * are int32 / int64 / uint8 / int8 / bool (stored on the chip as i32, i32,
 * i16, i8, i8; compiler/bk_dtype.c) through every data-movement op
 * (Transpose, Concat, Split, Slice, Gather with constant and run-time
 * indices, also indices computed on the chip, Pad with an integer value,
 * Expand, views copied to outputs, a constant output), the integer
 * elementwise ops with broadcast, integer reductions, Cast and CastLike, compiled
 * for configs/tiny.ini and configs/a1.ini, run on the simulator and
 * compared with the reference interpreter EXACTLY (floats within 1e-6).
 * Every graph input is written in the dtype the .abm lists for it, every
 * output read back in its listed dtype. Plus the rejections: a float ->
 * int Cast, an integer op the chip cannot do, mixed dtypes, uint64. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_check.h"
#include "compiler/ops.h"

static const char *const chips[] = {"configs/tiny.ini", "configs/a1.ini"};

static int find_tensor(const AbmModel *m, const char *name)
{
    for (uint32_t j = 0; j < m->view.n_tensors; j++) if (!strcmp(abm_tensor(&m->view, j).name, name)) return (int)j;
    return -1;
}

/* Deterministic input values of t's dtype: integers in [lo, hi], bools 0/1,
 * floats in [-1, 1). */
static void fill_input(IrTensor *t, int64_t lo, int64_t hi, uint32_t *seed)
{
    for (int64_t i = 0; i < ir_numel(t); i++) {
        float r = e2e_frand(seed);
        if (op_dtype_is_float(t->dtype)) ir_set_f(t, i, r);
        else {
            int64_t span = hi - lo + 1, v = lo + (int64_t)((r + 1.0f) * 0.5f * (float)span);
            ir_set_i(t, i, v > hi ? hi : v);
        }
    }
}

/* Runs the graph on chipfile; 0 when every output matches, else -1 with msg. */
static int run_int(const IrGraph *g0, const char *chipfile, int64_t lo, int64_t hi, char *msg, size_t cap)
{
    IrGraph g;
    PbBuf pb = {0};
    AtlErr e = {{0}};
    AtlChip chip;
    IrTensor ins[8];
    IrTensor *outs = NULL;
    int nin = 0, rc = -1;
    uint8_t *buf = NULL;
    size_t len = 0;
    AbmModel m;
    AtlProgram p;
    AtlSim *s = NULL;
    BkRegionBases b;
    memset(&m, 0, sizeof m);
    memset(&p, 0, sizeof p);
    memset(ins, 0, sizeof ins);
    ir_init(&g);
    if (onnx_save_buffer(g0, &pb, &e) || onnx_load_buffer(pb.p, pb.n, "int", &g, &e)) goto done;
    if (cfg_load(chipfile, &chip, &e) || ir_toposort(&g, &e) || ir_infer_shapes(&g, &e) || pass_run_all(&g, &e)) goto done;
    uint32_t seed = 777;
    for (; nin < g.nin && nin < 8; nin++) {
        const IrTensor *gi = &g.t[g.inputs[nin]];
        IrTensor *t = &ins[nin];
        t->name = ir_strdup(gi->name);
        t->dtype = gi->dtype;
        t->ndim = gi->ndim;
        memcpy(t->dims, gi->dims, sizeof t->dims);
        t->producer = -1;
        if (ir_alloc_data(t, &e)) goto done;
        fill_input(t, lo, hi, &seed);
    }
    if (interp_run(&g, ins, nin, &outs, &e)) goto done;
    if (e2e_build(&g, &chip, ISA_F32, NULL, NULL, &buf, &len, &m, &p, &b, &s, &e)) goto done;
    for (int k = 0; k < nin; k++) {
        int j = find_tensor(&m, ins[k].name);
        if (j < 0) { atl_fail(&e, "input '%s' not in the model", ins[k].name); goto done; }
        AbmTensor ti = abm_tensor(&m.view, (uint32_t)j);
        int dt = e2e_isa_of_abm(ti.dtype), es = isa_dtype_size(dt);
        uint8_t *d = sim_dram(s, b.base[ABM_REGION_IO] + ti.offset, (uint64_t)ir_numel(&ins[k]) * es);
        if (!d) { atl_fail(&e, "input outside DRAM"); goto done; }
        for (int64_t i = 0; i < ir_numel(&ins[k]); i++) {
            if (op_dtype_is_float(ins[k].dtype)) num_store_f64(d + i * es, dt, ir_get_f(&ins[k], i));
            else num_store_int(d + i * es, dt, ir_get_i(&ins[k], i));
        }
    }
    if (sim_run(s, &e)) goto done;
    for (int k = 0; k < g.nout; k++) {
        const char *name = g.t[g.outputs[k]].name;
        int j = find_tensor(&m, name);
        if (j < 0) { atl_fail(&e, "output '%s' not in the model", name); goto done; }
        AbmTensor to = abm_tensor(&m.view, (uint32_t)j);
        int dt = e2e_isa_of_abm(to.dtype), es = isa_dtype_size(dt);
        int64_t n = ir_numel(&outs[k]);
        const uint8_t *d = sim_dram(s, b.base[ABM_REGION_IO] + to.offset, (uint64_t)n * es);
        if (!d) { atl_fail(&e, "output outside DRAM"); goto done; }
        if (op_dtype_is_float(outs[k].dtype) != num_is_float(dt)) {
            atl_fail(&e, "output '%s' is %s, the chip holds %s", name, ir_dtype_name(outs[k].dtype), isa_dtype_name(dt));
            goto done;
        }
        for (int64_t i = 0; i < n; i++) {
            if (num_is_float(dt)) {
                /* read back in the graph's float dtype, as the host tools do */
                double want = ir_get_f(&outs[k], i), got = num_load_f64(d + i * es, dt);
                if (outs[k].dtype == IR_F16) got = num_f16_to_f32(num_f64_to_f16(got));
                if (!(fabs(got - want) <= 1e-6 * (1 + fabs(want)))) {
                    atl_fail(&e, "output '%s' element %lld: chip %g, interpreter %g", name, (long long)i, got, want);
                    goto done;
                }
            } else if (num_load_int(d + i * es, dt) != ir_get_i(&outs[k], i)) {
                atl_fail(&e, "output '%s' element %lld: chip %lld, interpreter %lld", name, (long long)i,
                         (long long)num_load_int(d + i * es, dt), (long long)ir_get_i(&outs[k], i));
                goto done;
            }
        }
    }
    bkc_check_program(&p, chipfile, "int graph");
    rc = 0;
done:
    if (rc) snprintf(msg, cap, "%s", e.msg);
    pb_free(&pb);
    if (outs) interp_free_outputs(outs, g.nout);
    for (int k = 0; k < nin; k++) ir_tensor_free_contents(&ins[k]);
    sim_free(s);
    prog_free(&p);
    abm_model_free(&m);
    free(buf);
    ir_free(&g);
    return rc;
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

static const int int_dtypes[] = {IR_I32, IR_I64, IR_U8, IR_BOOL, IR_I8};

TEST(int_transpose_concat_split)
{
    for (size_t k = 0; k < sizeof int_dtypes / sizeof *int_dtypes; k++) {
        IrGraph g;
        AtlErr e;
        int64_t xd[3] = {2, 3, 5}, perm[3] = {2, 0, 1}, split[2] = {1, 2};
        new_int_graph(&g, "x", int_dtypes[k], 3, xd);
        ir_add_input(&g, "z", int_dtypes[k], 3, xd, &e);
        int n = ir_add_op(&g, "Transpose", "tr", "x", "t", &e);
        ir_set_attr_ints(&g, n, "perm", perm, 3, &e);
        n = ir_add_op(&g, "Concat", "cat", "x,z", "c", &e);
        ir_set_attr_int(&g, n, "axis", 1, &e);
        int64_t sd[1] = {2};
        const_of(&g, "sp", IR_I64, 1, sd, split);
        n = ir_add_op(&g, "Split", "split", "z,sp", "s0,s1", &e);
        ir_set_attr_int(&g, n, "axis", 1, &e);
        ir_add_output(&g, "t", &e);
        ir_add_output(&g, "c", &e);
        ir_add_output(&g, "s0", &e);
        ir_add_output(&g, "s1", &e);
        char what[64];
        snprintf(what, sizeof what, "transpose/concat/split %s", ir_dtype_name(int_dtypes[k]));
        run_exact(&g, what, int_dtypes[k] == IR_BOOL ? 0 : -100, int_dtypes[k] == IR_BOOL ? 1 : 100);
        ir_free(&g);
    }
}

TEST(int_slice_pad_expand_views)
{
    for (size_t k = 0; k < sizeof int_dtypes / sizeof *int_dtypes; k++) {
        IrGraph g;
        AtlErr e;
        int dt = int_dtypes[k];
        int64_t xd[2] = {4, 6}, one[1] = {2}, four[1] = {4};
        new_int_graph(&g, "x", dt, 2, xd);
        const_of(&g, "st", IR_I64, 1, one, (int64_t[]){1, 5});
        const_of(&g, "en", IR_I64, 1, one, (int64_t[]){4, 0});
        const_of(&g, "ax", IR_I64, 1, one, (int64_t[]){0, 1});
        const_of(&g, "stp", IR_I64, 1, one, (int64_t[]){2, -2});
        ir_add_op(&g, "Slice", "slice", "x,st,en,ax,stp", "sl", &e);
        const_of(&g, "pads", IR_I64, 1, four, (int64_t[]){1, 0, 0, 2});
        const_of(&g, "pv", dt, 0, NULL, (int64_t[]){1});
        ir_add_op(&g, "Pad", "pad", "x,pads,pv", "pa", &e);
        const_of(&g, "eshape", IR_I64, 1, (int64_t[]){3}, (int64_t[]){3, 4, 6});
        ir_add_op(&g, "Expand", "expand", "x,eshape", "ex", &e);
        const_of(&g, "rs", IR_I64, 1, (int64_t[]){2}, (int64_t[]){6, 4});
        ir_add_op(&g, "Reshape", "reshape", "x,rs", "rv", &e);
        ir_add_op(&g, "Identity", "ident", "x", "id", &e);
        ir_add_output(&g, "sl", &e);
        ir_add_output(&g, "pa", &e);
        ir_add_output(&g, "ex", &e);
        ir_add_output(&g, "rv", &e);
        ir_add_output(&g, "id", &e);
        char what[64];
        snprintf(what, sizeof what, "slice/pad/expand/views %s", ir_dtype_name(dt));
        run_exact(&g, what, dt == IR_BOOL ? 0 : -100, dt == IR_BOOL ? 1 : 100);
        ir_free(&g);
    }
}

TEST(int_gather_const_and_runtime_indices)
{
    for (size_t k = 0; k < sizeof int_dtypes / sizeof *int_dtypes; k++) {
        IrGraph g;
        AtlErr e;
        int dt = int_dtypes[k];
        int64_t xd[2] = {5, 4}, id[1] = {3};
        new_int_graph(&g, "x", dt, 2, xd);
        const_of(&g, "ci", IR_I64, 1, id, (int64_t[]){4, -5, 2});
        int n = ir_add_op(&g, "Gather", "gconst", "x,ci", "gc", &e);
        ir_set_attr_int(&g, n, "axis", 0, &e);
        /* run-time indices, computed on the chip: idx + 1 in [0, 4] */
        ir_add_input(&g, "idx", IR_I64, 1, (int64_t[]){6}, &e);
        const_of(&g, "one", IR_I64, 0, NULL, (int64_t[]){1});
        ir_add_op(&g, "Add", "inc", "idx,one", "idx1", &e);
        n = ir_add_op(&g, "Gather", "grt", "x,idx1", "gr", &e);
        ir_set_attr_int(&g, n, "axis", 0, &e);
        ir_add_output(&g, "gc", &e);
        ir_add_output(&g, "gr", &e);
        char what[64];
        snprintf(what, sizeof what, "gather %s", ir_dtype_name(dt));
        /* x and idx share the value range: [-1, 1] for bool-free dtypes keeps idx + 1 in [0, 2] */
        run_exact(&g, what, dt == IR_BOOL ? 0 : -1, 1);
        ir_free(&g);
    }
}

TEST(int_elementwise_broadcast)
{
    static const char *const bin[] = {"Add", "Sub", "Mul", "Max", "Min"};
    static const int dts[] = {IR_I32, IR_I64, IR_U8, IR_I8};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
        for (size_t k = 0; k < sizeof bin / sizeof *bin; k++) {
            /* uint8 Sub wraps in ONNX (0 - 1 = 255) and is -1 in the chip's
             * i16: the documented divergence (docs/backend.md) */
            if (dts[d] == IR_U8 && !strcmp(bin[k], "Sub")) continue;
            IrGraph g;
            AtlErr e;
            int64_t ad[3] = {2, 3, 7}, bd[2] = {1, 7};
            new_int_graph(&g, "a", dts[d], 3, ad);
            ir_add_input(&g, "b", dts[d], 2, bd, &e);
            ir_add_op(&g, bin[k], "op", "a,b", "y", &e);
            ir_add_output(&g, "y", &e);
            char what[64];
            snprintf(what, sizeof what, "%s %s bcast", bin[k], ir_dtype_name(dts[d]));
            /* products of values in [-11, 11] fit every dtype (no saturation) */
            run_exact(&g, what, dts[d] == IR_U8 ? 0 : -11, 11);
            ir_free(&g);
        }
}

TEST(int_unary_clip_reduce)
{
    static const int dts[] = {IR_I32, IR_I64, IR_I8};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
        IrGraph g;
        AtlErr e;
        int64_t xd[3] = {3, 4, 5}, ax[1] = {1};
        new_int_graph(&g, "x", dts[d], 3, xd);
        ir_add_op(&g, "Neg", "neg", "x", "ng", &e);
        ir_add_op(&g, "Abs", "abs", "x", "ab", &e);
        ir_add_op(&g, "Relu", "relu", "x", "re", &e);
        const_of(&g, "lo", dts[d], 0, NULL, (int64_t[]){-7});
        const_of(&g, "hi", dts[d], 0, NULL, (int64_t[]){9});
        ir_add_op(&g, "Clip", "clip", "x,lo,hi", "cl", &e);
        const_of(&g, "axes", IR_I64, 1, ax, (int64_t[]){1});
        static const char *const red[] = {"ReduceSum", "ReduceMax", "ReduceMin"};
        for (int r = 0; r < 3; r++) {
            char out[16];
            snprintf(out, sizeof out, "r%d", r);
            int n = ir_add_op(&g, red[r], red[r], r == 0 ? "x,axes" : "x", out, &e);
            if (r) ir_set_attr_ints(&g, n, "axes", (int64_t[]){1}, 1, &e);
            ir_add_output(&g, out, &e);
        }
        ir_add_output(&g, "ng", &e);
        ir_add_output(&g, "ab", &e);
        ir_add_output(&g, "re", &e);
        ir_add_output(&g, "cl", &e);
        char what[64];
        snprintf(what, sizeof what, "unary/clip/reduce %s", ir_dtype_name(dts[d]));
        run_exact(&g, what, -20, 20);
        ir_free(&g);
    }
}

TEST(int_cast)
{
    /* int -> float, bool -> float and int, int -> int (narrowing and the
     * same chip dtype), float -> float16, int -> bool (x != 0) */
    static const struct { int from, to; } casts[] = {
        {IR_I32, IR_F32}, {IR_I64, IR_F32}, {IR_BOOL, IR_F32}, {IR_BOOL, IR_I32}, {IR_I64, IR_I32},
        {IR_I32, IR_I8}, {IR_U8, IR_I32}, {IR_I8, IR_I64}, {IR_F32, IR_F16},
        {IR_I32, IR_BOOL}, {IR_I64, IR_BOOL}, {IR_I8, IR_BOOL}, {IR_U8, IR_BOOL},
    };
    for (size_t k = 0; k < sizeof casts / sizeof *casts; k++) {
        IrGraph g;
        AtlErr e;
        int64_t xd[2] = {3, 5};
        new_int_graph(&g, "x", casts[k].from, 2, xd);
        int n = ir_add_op(&g, "Cast", "cast", "x", "y", &e);
        ir_set_attr_int(&g, n, "to", casts[k].to, &e);
        ir_add_output(&g, "y", &e);
        char what[64];
        snprintf(what, sizeof what, "Cast %s -> %s", ir_dtype_name(casts[k].from), ir_dtype_name(casts[k].to));
        run_exact(&g, what, casts[k].from == IR_BOOL ? 0 : -100, casts[k].from == IR_BOOL ? 1 : 100);
        ir_free(&g);
    }
}

/* CastLike takes the dtype of its second input (an int64 graph input here,
 * never read by the chip) */
TEST(int_castlike)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[2] = {2, 9};
    new_int_graph(&g, "x", IR_I8, 2, xd);
    ir_add_input(&g, "like", IR_I64, 1, (int64_t[]){1}, &e);
    ir_add_op(&g, "CastLike", "castlike", "x,like", "y", &e);
    ir_add_output(&g, "y", &e);
    g.opset = 15;
    run_exact(&g, "CastLike int8 -> int64", -100, 100);
    ir_free(&g);
}

TEST(int_constant_output)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[1] = {4};
    new_int_graph(&g, "x", IR_I64, 1, xd);
    const_of(&g, "k", IR_I64, 1, xd, (int64_t[]){-3, 70000, 0, 2147483647});
    ir_add_op(&g, "Identity", "id", "x", "y", &e);
    ir_add_op(&g, "Identity", "kid", "k", "kc", &e);
    ir_add_output(&g, "y", &e);
    ir_add_output(&g, "kc", &e);
    run_exact(&g, "int64 constant output", -5, 5);
    ir_free(&g);
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

TEST(int_rejections)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[2] = {3, 5};
    /* float -> int Cast truncates; v.cast rounds */
    new_int_graph(&g, "x", IR_F32, 2, xd);
    int n = ir_add_op(&g, "Cast", "tocast", "x", "y", &e);
    ir_set_attr_int(&g, n, "to", IR_I32, &e);
    ir_add_output(&g, "y", &e);
    expect_rejected(&g, "tocast", "truncates toward zero");
    ir_free(&g);
    /* float -> bool needs a compare (NaN is true) */
    new_int_graph(&g, "x", IR_F32, 2, xd);
    n = ir_add_op(&g, "Cast", "tobool", "x", "y", &e);
    ir_set_attr_int(&g, n, "to", IR_BOOL, &e);
    ir_add_output(&g, "y", &e);
    expect_rejected(&g, "tobool", "comparison instruction");
    ir_free(&g);
    /* an op the chip does not do on integers */
    new_int_graph(&g, "x", IR_I32, 2, xd);
    ir_add_op(&g, "Sigmoid", "sig", "x", "y", &e);
    ir_add_output(&g, "y", &e);
    expect_rejected(&g, "sig", "not lowered on integer or bool tensors");
    ir_free(&g);
    /* mixed chip dtypes in one node */
    new_int_graph(&g, "x", IR_I32, 2, xd);
    ir_add_input(&g, "z", IR_I32, 2, xd, &e);
    ir_add_op(&g, "Add", "mixed", "x,z", "y", &e);
    ir_add_output(&g, "y", &e);
    expect_rejected_as(&g, "z", IR_I8, "mixed", "mixed dtypes");
    ir_free(&g);
    /* no 64-bit unsigned storage */
    new_int_graph(&g, "x", IR_U64, 2, xd);
    ir_add_op(&g, "Identity", "id", "x", "y", &e);
    ir_add_output(&g, "y", &e);
    expect_rejected(&g, "'x'", "64-bit");
    ir_free(&g);
    /* an int64 constant beyond int32 */
    new_int_graph(&g, "x", IR_I64, 1, (int64_t[]){2});
    const_of(&g, "big", IR_I64, 1, (int64_t[]){2}, (int64_t[]){1, (int64_t)1 << 40});
    ir_add_op(&g, "Add", "addbig", "x,big", "y", &e);
    ir_add_output(&g, "y", &e);
    expect_rejected(&g, "'big' element 1 = 1099511627776", "i32");
    ir_free(&g);
}

int main(void)
{
    RUN(int_transpose_concat_split);
    RUN(int_slice_pad_expand_views);
    RUN(int_gather_const_and_runtime_indices);
    RUN(int_elementwise_broadcast);
    RUN(int_unary_clip_reduce);
    RUN(int_cast);
    RUN(int_castlike);
    RUN(int_constant_output);
    RUN(int_rejections);
    return test_summary("test_backend_int");
}
