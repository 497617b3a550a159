/* bk_chip_run.h - the one runner of the backend tests whose graphs have
 * integer or chosen inputs (bk_int_run.h, test_backend_arg.c): compile a
 * graph for a chip in a float storage dtype, write each input in the dtype
 * the .abm lists for it (given values, or deterministic ones in [lo, hi]
 * for integers, 0/1 for bools, [-1, 1) for floats), run the simulator,
 * read every output back in its listed dtype and compare it with the
 * reference interpreter: integers exactly, floats within a relative
 * tolerance (NaN matches NaN, an infinity the same infinity; an f16 graph
 * output is rounded to f16 first, as the host tools read it). Or, with
 * `fault` set, a run that must stop with a message holding it.
 * Header only: one test binary each. */
#ifndef ATOLL_TEST_BK_CHIP_RUN_H
#define ATOLL_TEST_BK_CHIP_RUN_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_check.h"
#include "compiler/ops/ops.h"

#define BK_RUN_MAXIN 8

/* Chosen input values, one array per graph input in graph order. */
typedef struct ChipInputs { int n; const double *vals[BK_RUN_MAXIN]; } ChipInputs;

static int find_tensor(const AbmModel *m, const char *name)
{
    for (uint32_t j = 0; j < m->view.n_tensors; j++) if (!strcmp(abm_tensor(&m->view, j).name, name)) return (int)j;
    return -1;
}

/* 1 when the chip's float value matches the interpreter's within tol
 * relative (NaN matches NaN, an inf the same inf). */
static int value_matches(double got, double want, double tol)
{
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got)) return got == want;
    return fabs(got - want) <= tol * (1 + fabs(want));
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

/* Runs g0 on chipfile in storage dtype `dtype` with inputs iv (NULL:
 * fill_input in [lo, hi]); 0 when every output matches (or, with `fault`,
 * when the run fails with it), else -1 with msg. */
static int bk_run_on_chip(const IrGraph *g0, const char *chipfile, int dtype, const ChipInputs *iv, int64_t lo,
                          int64_t hi, double tol, const char *fault, char *msg, size_t cap)
{
    IrGraph g;
    PbBuf pb = {0};
    AtlErr e = {{0}};
    AtlChip chip;
    IrTensor ins[BK_RUN_MAXIN];
    IrTensor *outs = NULL;
    int nin = 0, rc = -1;
    uint8_t *buf = NULL;
    size_t len = 0;
    AbmModel m;
    AtlProgram p;
    AtlSim *s = NULL;
    AbmRegionBases b;
    memset(&m, 0, sizeof m);
    memset(&p, 0, sizeof p);
    memset(ins, 0, sizeof ins);
    ir_init(&g);
    if (onnx_save_buffer(g0, &pb, &e) || onnx_load_buffer(pb.p, pb.n, "run", &g, &e)) goto done;
    if (cfg_load(chipfile, &chip, &e) || ir_toposort(&g, &e) || ir_infer_shapes(&g, &e) || pass_run_all(&g, &e)) goto done;
    if (g.nin > BK_RUN_MAXIN) { atl_fail(&e, "the graph has %d inputs (at most %d)", g.nin, BK_RUN_MAXIN); goto done; }
    if (iv && g.nin != iv->n) { atl_fail(&e, "the graph has %d inputs, the test gives %d", g.nin, iv->n); goto done; }
    uint32_t seed = 777;
    for (; nin < g.nin; nin++) {
        const IrTensor *gi = &g.t[g.inputs[nin]];
        IrTensor *t = &ins[nin];
        t->name = ir_strdup(gi->name);
        t->dtype = gi->dtype;
        t->ndim = gi->ndim;
        memcpy(t->dims, gi->dims, sizeof t->dims);
        t->producer = -1;
        if (ir_alloc_data(t, &e)) goto done;
        if (!iv) fill_input(t, lo, hi, &seed);
        else
            for (int64_t i = 0; i < ir_numel(t); i++) {
                if (op_dtype_is_float(t->dtype)) ir_set_f(t, i, iv->vals[nin][i]);
                else ir_set_i(t, i, (int64_t)iv->vals[nin][i]);
            }
    }
    if (!fault && interp_run(&g, ins, nin, &outs, &e)) goto done;
    if (e2e_build(&g, &chip, dtype, NULL, NULL, &buf, &len, &m, &p, &b, &s, &e)) goto done;
    for (int k = 0; k < nin; k++) {
        int j = find_tensor(&m, ins[k].name);
        if (j < 0) { atl_fail(&e, "input '%s' not in the model", ins[k].name); goto done; }
        AbmTensor ti = abm_tensor(&m.view, (uint32_t)j);
        int dt = e2e_isa_of_abm(ti.dtype), es = isa_dtype_size(dt);
        uint8_t *d = sim_dram(s, b.base[ABM_REGION_IO] + ti.offset, (uint64_t)ir_numel(&ins[k]) * es);
        if (!d) { atl_fail(&e, "input outside DRAM"); goto done; }
        for (int64_t i = 0; i < ir_numel(&ins[k]); i++) {
            if (num_is_float(dt)) num_store_f64(d + i * es, dt, ir_get_f(&ins[k], i));
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
                double want = ir_get_f(&outs[k], i), got = num_load_f64(d + i * es, dt);
                if (outs[k].dtype == IR_F16) got = num_f16_to_f32(num_f64_to_f16(got));
                if (!value_matches(got, want, tol)) {
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
    bkc_check_program(&p, chipfile, "chip run");
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
#endif
