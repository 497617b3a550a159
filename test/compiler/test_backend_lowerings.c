/* test_backend_lowerings.c - the interpolating Resize (lower/resize.c),
 * every Pad mode (lower/pad.c) and Gather with run-time indices
 * (lower/gather.c, dma.gather) on the chip: graphs built in code,
 * compiled for configs/tiny.ini and configs/a1.ini, simulated and compared
 * with the reference interpreter (fp32, relative 1e-5; exact for data
 * movement), plus the structural checks of bk_graph_run.h, the fault of an
 * out-of-range index, and the clear errors for what is not lowered. */
#include <stdio.h>
#include <stdlib.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"

/* Resize of x[dims] by constant scales (sizes when `sizes` is given). */
static void resize_graph(IrGraph *g, int r, const int64_t *xd, const char *mode, const char *ctm, const float *scales,
                         const int64_t *sizes, const float *roi)
{
    AtlErr e;
    int64_t nr = r, n2 = 2 * r;
    new_graph(g, "x", r, xd);
    ir_add_const(g, "roi", IR_F32, 1, roi ? &n2 : (int64_t[]){0}, roi, &e);
    if (sizes) {
        ir_add_const(g, "scales", IR_F32, 1, (int64_t[]){0}, NULL, &e);
        ir_add_const(g, "sizes", IR_I64, 1, &nr, sizes, &e);
    } else ir_add_const(g, "scales", IR_F32, 1, &nr, scales, &e);
    int n = ir_add_op(g, "Resize", "rs", sizes ? "x,roi,scales,sizes" : "x,roi,scales", "r", &e);
    ir_set_attr_str(g, n, "mode", mode, &e);
    if (ctm) ir_set_attr_str(g, n, "coordinate_transformation_mode", ctm, &e);
    ir_add_op(g, "Relu", "relu", "r", "y", &e);
    ir_add_output(g, "y", &e);
}

static void resize_run(const char *what, int r, const int64_t *xd, const char *mode, const char *ctm, const float *scales,
                       const int64_t *sizes)
{
    IrGraph g;
    resize_graph(&g, r, xd, mode, ctm, scales, sizes, NULL);
    run_graph(&g, what, 1e-5);
    ir_free(&g);
}

TEST(resize_linear)
{
    int64_t xd[4] = {2, 3, 5, 7};
    const float up2[4] = {1, 1, 2, 2}, down[4] = {1, 1, 0.6f, 0.45f}, odd[4] = {1, 1, 1.7f, 2.3f};
    resize_run("linear 2x half_pixel", 4, xd, "linear", NULL, up2, NULL);
    resize_run("linear down 0.6x0.45", 4, xd, "linear", NULL, down, NULL);
    resize_run("linear 1.7x2.3 asym", 4, xd, "linear", "asymmetric", odd, NULL);
    resize_run("linear align_corners", 4, xd, "linear", "align_corners", odd, NULL);
    resize_run("linear pytorch_half", 4, xd, "linear", "pytorch_half_pixel", down, NULL);
    int64_t sz[4] = {2, 3, 9, 4};
    resize_run("linear sizes 9x4", 4, xd, "linear", NULL, NULL, sz);
    int64_t x1[1] = {11}, s1[1] = {25};
    resize_run("linear 1-D sizes", 1, x1, "linear", NULL, NULL, s1);
    int64_t x3[3] = {4, 6, 5};
    const float h3[3] = {1, 2.5f, 1};
    resize_run("linear rank 3, H only", 3, x3, "linear", NULL, h3, NULL);
}

TEST(resize_cubic)
{
    int64_t xd[4] = {1, 2, 6, 5};
    const float up[4] = {1, 1, 2, 1.6f}, down[4] = {1, 1, 0.5f, 0.7f};
    resize_run("cubic up half_pixel", 4, xd, "cubic", NULL, up, NULL);
    resize_run("cubic down align", 4, xd, "cubic", "align_corners", down, NULL);
    resize_run("cubic up asymmetric", 4, xd, "cubic", "asymmetric", up, NULL);
    IrGraph g;
    AtlErr e;
    resize_graph(&g, 4, xd, "cubic", NULL, down, NULL, NULL);
    int n = 0;
    for (; n < g.nn && strcmp(g.nodes[n].op, "Resize"); n++) {}
    ir_set_attr_int(&g, n, "exclude_outside", 1, &e);
    ir_set_attr_float(&g, n, "cubic_coeff_a", -0.5f, &e);
    run_graph(&g, "cubic exclude_outside", 1e-5);
    ir_free(&g);
}

TEST(resize_crop_and_large)
{
    int64_t xd[4] = {1, 2, 6, 8};
    const float roi[8] = {0, 0, 0.2f, -0.1f, 1, 1, 0.9f, 1.2f};
    int64_t sz[4] = {1, 2, 7, 9};
    IrGraph g;
    AtlErr e;
    resize_graph(&g, 4, xd, "linear", "tf_crop_and_resize", NULL, sz, roi);
    ir_set_attr_float(&g, 0, "extrapolation_value", 3.5f, &e);
    run_graph(&g, "tf_crop_and_resize", 1e-5);
    ir_free(&g);
    /* planes bigger than an LMEM slot of tiny.ini: row and column chunks */
    int64_t big[4] = {1, 1, 200, 300};
    const float sc[4] = {1, 1, 1.5f, 1.5f};
    resize_run("linear 200x300 -> 300x450", 4, big, "linear", NULL, sc, NULL);
}

/* f16/bf16 storage: the band is cast to f32, interpolated, cast back */
TEST(resize_half_dtypes)
{
    int64_t xd[4] = {2, 3, 6, 5};
    const float sc[4] = {1, 1, 1.5f, 2.2f};
    const int dts[2] = {ISA_F16, ISA_BF16};
    const double tol[2] = {2e-3, 1.6e-2};   /* one rounding of the input, one of the result */
    for (int i = 0; i < 2; i++)
        for (int c = 0; c < 2; c++) {
            IrGraph g;
            resize_graph(&g, 4, xd, i ? "cubic" : "linear", NULL, sc, NULL, NULL);
            double err;
            char msg[1024] = "";
            int rc = e2e_graph(&g, chips[c], dts[i], &err, NULL, msg, sizeof msg);
            printf("  resize %-15s %-18s max err %.3g %s\n", isa_dtype_name(dts[i]), chips[c], rc ? -1 : err, msg);
            CHECKF(rc == 0 && err <= tol[i], "%s on %s: %s err %g", isa_dtype_name(dts[i]), chips[c], msg, err);
            ir_free(&g);
        }
}

TEST(resize_not_lowered_names_node)
{
    int64_t xd[4] = {1, 3, 4, 4};
    const float sc[4] = {1, 2, 1, 1};
    IrGraph g;
    resize_graph(&g, 4, xd, "linear", NULL, sc, NULL, NULL);
    expect_not_lowered(&g, "node 'rs' (Resize)", "axis 1 is resized");
    ir_free(&g);
}

static void pad_run(const char *what, const char *mode, int r, const int64_t *xd, const int64_t *pads)
{
    IrGraph g;
    AtlErr e;
    new_graph(&g, "x", r, xd);
    cst_i64(&g, "pads", 2 * r, pads);
    cst_scalar(&g, "pv", -2.5f);
    int n = ir_add_op(&g, "Pad", "pad", "x,pads,pv", "p", &e);
    ir_set_attr_str(&g, n, "mode", mode, &e);
    ir_add_op(&g, "Relu", "relu", "p", "y", &e);
    ir_add_output(&g, "y", &e);
    run_graph(&g, what, 0);
    ir_free(&g);
}

TEST(pad_modes)
{
    int64_t xd[4] = {2, 3, 5, 4};
    int64_t p1[8] = {0, 1, 2, 3, 1, 0, 4, 2}, neg[8] = {0, 0, -1, 2, 0, 1, 1, -2}, big[8] = {0, 0, 4, 3, 0, 0, 4, 3};
    pad_run("pad constant", "constant", 4, xd, p1);
    pad_run("pad edge", "edge", 4, xd, p1);
    pad_run("pad reflect", "reflect", 4, xd, p1);
    pad_run("pad edge, negative", "edge", 4, xd, neg);
    pad_run("pad reflect, negative", "reflect", 4, xd, neg);
    pad_run("pad constant, negative", "constant", 4, xd, neg);
    pad_run("pad edge wider than dim", "edge", 4, xd, big);
    int64_t x2[2] = {3, 70}, p2[4] = {2, 69, 1, 69};
    pad_run("pad reflect 2-D", "reflect", 2, x2, p2);
    int64_t x6[6] = {2, 1, 2, 3, 2, 3}, p6[12] = {1, 0, 1, 1, 0, 2, 0, 1, 1, 0, 1, 1};
    pad_run("pad edge rank 6", "edge", 6, x6, p6);
}

TEST(pad_reflect_too_wide_is_refused)
{
    /* the interpreter decides: reflect pads must be smaller than the axis */
    IrGraph g;
    AtlErr e = {{0}};
    int64_t xd[2] = {3, 4}, pads[4] = {0, 4, 0, 0};
    new_graph(&g, "x", 2, xd);
    cst_i64(&g, "pads", 4, pads);
    int n = ir_add_op(&g, "Pad", "pad", "x,pads", "y", &e);
    ir_set_attr_str(&g, n, "mode", "reflect", &e);
    ir_add_output(&g, "y", &e);
    double err;
    char msg[1024] = "";
    CHECK(e2e_graph(&g, "configs/tiny.ini", ISA_F32, &err, NULL, msg, sizeof msg) != 0);
    CHECK_STR_CONTAINS(msg, "reflect pad");
    ir_free(&g);
}


/* Runs g (inputs: x float, idx int64) with the given indices on the
 * simulator and the interpreter; returns the simulator's max error, or -1
 * with the run's error in msg. */
static double run_indices(IrGraph *g, const char *chipfile, const int64_t *idx, int64_t ni, char *msg, size_t cap)
{
    AtlErr e = {{0}};
    AtlChip chip;
    AbmModel m;
    AtlProgram p;
    IrTensor in[2], *outs = NULL;
    AtlSim *s = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    double err = -1;
    memset(&m, 0, sizeof m);
    memset(&p, 0, sizeof p);
    memset(in, 0, sizeof in);
    if (cfg_load(chipfile, &chip, &e) || ir_toposort(g, &e) || ir_infer_shapes(g, &e) || pass_run_all(g, &e)) goto done;
    int nin = g->nin, ii = nin - 1;   /* idx is the last input; x the first when it is no constant */
    for (int i = 0; i < nin; i++) {
        const IrTensor *gi = &g->t[g->inputs[i]];
        in[i].name = ir_strdup(gi->name);
        in[i].dtype = gi->dtype;
        in[i].ndim = gi->ndim;
        memcpy(in[i].dims, gi->dims, sizeof in[i].dims);
        in[i].producer = -1;
        if (ir_alloc_data(&in[i], &e)) goto done;
        for (int64_t k = 0; k < ir_numel(&in[i]); k++) ir_set_f(&in[i], k, i == ii ? (double)idx[k] : frand());
    }
    if (ir_numel(&in[ii]) != ni) { atl_fail(&e, "test: %lld indices given", (long long)ni); goto done; }
    int irc = interp_run(g, in, nin, &outs, &e);
    AbmRegionBases b;
    if (e2e_build(g, &chip, ISA_F32, NULL, NULL, &buf, &len, &m, &p, &b, &s, &e)) goto done;
    AbmVariant st = abm_variant(&m.view, 0);
    uint64_t yoff = 0;
    for (uint32_t t = st.tensor_first; t < st.tensor_first + st.tensor_count; t++) {
        AbmTensor at = abm_tensor(&m.view, t);
        uint8_t *d = sim_dram(s, b.base[ABM_REGION_IO] + at.offset, at.size);
        if (!d) { atl_fail(&e, "test: tensor '%s' outside DRAM", at.name); goto done; }
        if (!strcmp(at.name, "x") && nin == 2)
            for (int64_t k = 0; k < ir_numel(&in[0]); k++) { float v = (float)ir_get_f(&in[0], k); memcpy(d + 4 * k, &v, 4); }
        else if (!strcmp(at.name, "idx")) {
            CHECK_EQ_INT(at.dtype, ABM_DTYPE_INT32);
            for (int64_t k = 0; k < ni; k++) { int32_t v = (int32_t)idx[k]; memcpy(d + 4 * k, &v, 4); }
        } else if (!strcmp(at.name, "y")) yoff = at.offset;
    }
    if (sim_run(s, &e)) goto done;
    if (irc) { atl_fail(&e, "test: the interpreter failed"); goto done; }
    int64_t no = ir_numel(&outs[0]);
    const float *y = (const float *)sim_dram(s, b.base[ABM_REGION_IO] + yoff, (uint64_t)no * 4);
    err = 0;
    for (int64_t k = 0; k < no; k++) {
        double d = fabs(y[k] - ir_get_f(&outs[0], k));
        if (!(d <= err)) err = d;
    }
done:
    if (err < 0) snprintf(msg, cap, "%s", e.msg);
    if (outs) interp_free_outputs(outs, g->nout);
    for (int i = 0; i < 2; i++) ir_tensor_free_contents(&in[i]);
    sim_free(s);
    prog_free(&p);
    abm_model_free(&m);
    free(buf);
    return err;
}

/* x is an input, or a constant table (an embedding) when r < 0 (rank -r) */
static void gather_graph(IrGraph *g, int r, const int64_t *xd, int axis, int ir, const int64_t *id)
{
    AtlErr e;
    if (r > 0) new_graph(g, "x", r, xd);
    else {
        ir_init(g);
        g->opset = 14;
        cst(g, "x", -r, xd, 1.0f);
    }
    ir_add_input(g, "idx", IR_I64, ir, id, &e);
    int n = ir_add_op(g, "Gather", "ga", "x,idx", "y", &e);
    ir_set_attr_int(g, n, "axis", axis, &e);
    ir_add_output(g, "y", &e);
}

static void gather_run(const char *what, int r, const int64_t *xd, int axis, int ir, const int64_t *id, const int64_t *idx)
{
    int64_t ni = 1;
    for (int k = 0; k < ir; k++) ni *= id[k];
    for (int c = 0; c < 2; c++) {
        IrGraph g;
        gather_graph(&g, r, xd, axis, ir, id);
        char msg[1024] = "";
        double err = run_indices(&g, chips[c], idx, ni, msg, sizeof msg);
        printf("  %-22s %-18s max err %.3g %s\n", what, chips[c], err, msg);
        CHECKF(err == 0, "%s on %s: %s", what, chips[c], msg);
        ir_free(&g);
    }
}

TEST(gather_runtime_indices)
{
    int64_t xd[3] = {7, 4, 3}, i1[1] = {5}, v1[5] = {6, 0, -1, 3, -7};
    gather_run("gather axis 0", 3, xd, 0, 1, i1, v1);
    int64_t i2[2] = {2, 3}, v2[6] = {3, -4, 0, 1, -1, 2};
    gather_run("gather axis 1, 2-D idx", 3, xd, 1, 2, i2, v2);
    int64_t x4[4] = {2, 3, 40, 6}, v3[5] = {39, -40, 0, 17, -2};
    gather_run("gather axis 2 of 4-D", 4, x4, 2, 1, i1, v3);
    int64_t emb[2] = {50, 16}, v4[6] = {49, 0, 7, 7, -50, 12};
    gather_run("embedding (constant)", -2, emb, 0, 2, i2, v4);
}

TEST(gather_out_of_range_faults)
{
    int64_t xd[2] = {6, 5}, id[1] = {3};
    const int64_t bad[2][3] = {{1, 6, 0}, {0, 2, -7}};
    const char *needle[2] = {"index 6 (entry 1 of idx) is outside [-6, 6)", "index -7 (entry 2 of idx)"};
    for (int k = 0; k < 2; k++) {
        IrGraph g;
        gather_graph(&g, 2, xd, 0, 1, id);
        char msg[1024] = "";
        CHECK(run_indices(&g, "configs/tiny.ini", bad[k], 3, msg, sizeof msg) < 0);
        CHECK_STR_CONTAINS(msg, needle[k]);
        CHECK_STR_CONTAINS(msg, "dma.gather");
        printf("  fault: %.160s\n", msg);
        ir_free(&g);
    }
}

int main(void)
{
    RUN(resize_linear);
    RUN(resize_cubic);
    RUN(resize_crop_and_large);
    RUN(resize_half_dtypes);
    RUN(resize_not_lowered_names_node);
    RUN(pad_modes);
    RUN(pad_reflect_too_wide_is_refused);
    RUN(gather_runtime_indices);
    RUN(gather_out_of_range_faults);
    return test_summary("test_backend_lowerings");
}
