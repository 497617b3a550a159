/* bk_int_run.h - running graphs with integer tensors on the chip for the
 * backend tests (test_backend_int.c, test_backend_quant.c): inputs of
 * each graph input's dtype (integers in [lo, hi], bools 0/1, floats in
 * [-1, 1)) written in the dtype the .abm lists for it, the simulator run,
 * every output read back in its listed dtype and compared with the
 * reference interpreter EXACTLY (floats within 1e-6), on configs/tiny.ini
 * and configs/a1.ini (run_exact), or a run that must fault
 * (run_int_or_fault); graph builders (new_int_graph, const_of)
 * and expect_rejected (the compile error names the node and the reason).
 * Header only: one test binary each. */
#ifndef ATOLL_TEST_BK_INT_RUN_H
#define ATOLL_TEST_BK_INT_RUN_H
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

/* Runs the graph on chipfile; 0 when every output matches, else -1 with
 * msg. With `fault` set the interpreter is not run and the run must fail
 * with a message holding it (printed). */
static int run_int_or_fault(const IrGraph *g0, const char *chipfile, int64_t lo, int64_t hi, const char *fault,
                            char *msg, size_t cap)
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
    if (!fault && interp_run(&g, ins, nin, &outs, &e)) goto done;
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
    if (fault) {
        if (!sim_run(s, &e)) atl_fail(&e, "the run did not fail");
        else if (strstr(e.msg, fault)) { printf("    (%s)\n", e.msg); rc = 0; }
        goto done;
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
