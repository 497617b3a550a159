/* test_compare.c - the comparison library on interpreter outputs: the
 * convbn model (test/data) run with and without the canonicalisation passes
 * agrees within fp32 tolerance; the same result rounded to fp16 passes the
 * fp16 (cosine) thresholds but not fp32's; a perturbed element, a NaN, a
 * shape mismatch and explicit thresholds behave as documented; the report
 * names the first diverging tensor. */
#include "test/test.h"
#include "tools/compare.h"
#include "compiler/onnx/onnx.h"
#include "compiler/ops/infer.h"
#include "compiler/interp/interp.h"
#include "compiler/passes/passes.h"
#include "util/npy.h"
#include <stdlib.h>

static AtlErr e;

/* Runs convbn.onnx on convbn_x.npy; *out is a copy of output 0. */
static int run_convbn(int passes, IrTensor *out)
{
    IrGraph g;
    AtlNdArray x;
    IrTensor in = {0}, *res = NULL;
    int rc = -1;
    if (atl_npy_read("test/data/convbn_x.npy", &x, &e)) return -1;
    if (onnx_load_file("test/data/convbn.onnx", &g, &e) || ir_toposort(&g, &e)) goto out;
    IrInputShape s;
    if (ir_parse_input_shape("x=2x3x8x8", &s, &e) || ir_apply_input_shapes(&g, &s, 1, &e)) goto out;
    if (ir_infer_shapes(&g, &e) || (passes && pass_run_all(&g, &e))) goto out;
    in.name = "x";
    in.dtype = IR_F32;
    in.ndim = x.ndim;
    for (int k = 0; k < x.ndim; k++) in.dims[k] = x.shape[k];
    in.data = x.data;
    if (interp_run(&g, &in, 1, &res, &e)) goto out;
    *out = res[0];
    out->name = ir_strdup(res[0].name);
    out->data = malloc(ir_nbytes(&res[0]));
    memcpy(out->data, res[0].data, ir_nbytes(&res[0]));
    interp_free_outputs(res, g.nout);
    rc = 0;
out:
    ir_free(&g);
    atl_ndarray_free(&x);
    return rc;
}

static IrTensor copy_as(const IrTensor *t, int dtype)
{
    IrTensor c = *t;
    c.dtype = dtype;
    c.name = ir_strdup(t->name);
    c.data = NULL;
    ir_alloc_data(&c, &e);
    for (int64_t i = 0; i < ir_numel(t); i++) ir_set_f(&c, i, ir_get_f(t, i));
    return c;
}

static IrTensor ref, nopass;

TEST(passes_agree_within_fp32_tolerance)
{
    CmpStats s;
    CmpThresholds th;
    REQUIRE(cmp_tensors(&ref, &nopass, &s, &e) == 0);
    CHECK_EQ_INT(s.n, 10);
    CHECK(s.cosine > 0.999999);
    CHECK(s.max_abs < 1e-3 * s.ref_absmax);
    cmp_thresholds_for(IR_F32, NULL, &th);
    CHECK(th.check_tol && th.rtol == 1e-4 && th.min_cos < 0);
    CHECK(cmp_verdict(&ref, &nopass, &th, &s) == 1);
    CHECK_EQ_INT(s.over_tol, 0);
    /* identical tensors: exact */
    REQUIRE(cmp_tensors(&ref, &ref, &s, &e) == 0);
    CHECK(s.max_abs == 0 && s.max_rel == 0 && fabs(s.cosine - 1) < 1e-12);
}

TEST(fp16_result_passes_fp16_thresholds_only)
{
    IrTensor h = copy_as(&ref, IR_F16);
    CmpStats s;
    CmpThresholds t16, t32;
    REQUIRE(cmp_tensors(&ref, &h, &s, &e) == 0);
    CHECK(s.max_abs > 0);              /* rounding to 11 bits changed something */
    CHECK(s.max_rel < 1e-3);           /* but only at fp16 precision */
    cmp_thresholds_for(IR_F16, NULL, &t16);
    CHECK(!t16.check_tol && t16.min_cos == 0.999);
    CHECK(cmp_verdict(&ref, &h, &t16, &s) == 1);
    cmp_thresholds_for(IR_F32, NULL, &t32);
    CHECK(cmp_verdict(&ref, &h, &t32, &s) == 0);
    CHECK(s.over_tol > 0);
    /* bf16 keeps 8 bits: still above cosine 0.999 */
    IrTensor b = copy_as(&ref, IR_BF16);
    REQUIRE(cmp_tensors(&ref, &b, &s, &e) == 0);
    CHECK(s.cosine >= 0.999 && s.cosine < 1);
    CHECK(cmp_verdict(&ref, &b, &t16, &s) == 1);
    ir_tensor_free_contents(&h);
    ir_tensor_free_contents(&b);
}

TEST(perturbation_nan_and_shape)
{
    IrTensor p = copy_as(&ref, IR_F32);
    CmpStats s;
    CmpThresholds th;
    cmp_thresholds_for(IR_F32, NULL, &th);
    double v = ir_get_f(&p, 7);
    ir_set_f(&p, 7, v + 0.01 * (fabs(v) + 1));
    REQUIRE(cmp_tensors(&ref, &p, &s, &e) == 0);
    CHECK_EQ_INT(s.worst, 7);
    CHECK_NEAR(s.max_abs, 0.01 * (fabs(v) + 1), 1e-5 * (fabs(v) + 1));
    CHECK(cmp_verdict(&ref, &p, &th, &s) == 0);
    CHECK_EQ_INT(s.over_tol, 1);
    /* the user's looser rtol admits it */
    CmpThresholds user = {0};
    user.rtol = 0.5; user.set_rtol = 1;
    user.atol = 0.02; user.set_atol = 1;
    cmp_thresholds_for(IR_F32, &user, &th);
    CHECK(cmp_verdict(&ref, &p, &th, &s) == 1);
    /* a required cosine of 1 is not met */
    user.min_cos = 1.0; user.set_cos = 1;
    cmp_thresholds_for(IR_F32, &user, &th);
    CHECK(cmp_verdict(&ref, &p, &th, &s) == 0);
    /* NaN in the result only */
    ir_set_f(&p, 7, NAN);
    REQUIRE(cmp_tensors(&ref, &p, &s, &e) == 0);
    CHECK_EQ_INT(s.nonfinite_mismatch, 1);
    cmp_thresholds_for(IR_F32, NULL, &th);
    CHECK(cmp_verdict(&ref, &p, &th, &s) == 0);
    /* NaN in both is agreement */
    IrTensor q = copy_as(&p, IR_F32);
    REQUIRE(cmp_tensors(&p, &q, &s, &e) == 0);
    CHECK_EQ_INT(s.nonfinite_mismatch, 0);
    CHECK(cmp_verdict(&p, &q, &th, &s) == 1);
    /* shape mismatch names the tensor and both shapes */
    q.dims[0] = 5; q.dims[1] = 2;
    CHECK(cmp_tensors(&ref, &q, &s, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "'y': shapes differ: reference 2x5, result 5x2");
    ir_tensor_free_contents(&p);
    ir_tensor_free_contents(&q);
}

TEST(integer_and_zero_tensors)
{
    int64_t dims[1] = {4};
    IrTensor a = {0}, b = {0};
    a.dtype = b.dtype = IR_I8; a.ndim = b.ndim = 1; a.dims[0] = b.dims[0] = dims[0];
    a.name = "q";
    REQUIRE(ir_alloc_data(&a, &e) == 0 && ir_alloc_data(&b, &e) == 0);
    CmpStats s;
    CmpThresholds th;
    cmp_thresholds_for(IR_I8, NULL, &th);
    REQUIRE(cmp_tensors(&a, &b, &s, &e) == 0);
    CHECK(s.cosine == 1);              /* both all zero */
    ir_set_i(&b, 2, 1);
    REQUIRE(cmp_tensors(&a, &b, &s, &e) == 0);
    CHECK(s.cosine == 0);              /* one all zero */
    CHECK(cmp_verdict(&a, &b, &th, &s) == 1); /* one step allowed */
    ir_set_i(&b, 2, 2);
    REQUIRE(cmp_tensors(&a, &b, &s, &e) == 0);
    CHECK(cmp_verdict(&a, &b, &th, &s) == 0);
    a.name = NULL;
    ir_tensor_free_contents(&a);
    ir_tensor_free_contents(&b);
}

TEST(report_names_first_divergence)
{
    CmpReport r = {0};
    IrTensor p = copy_as(&ref, IR_F32);
    ir_set_f(&p, 0, ir_get_f(&p, 0) + 1);
    REQUIRE(cmp_report_add(&r, "conv_out", 0, IR_F32, &ref, &nopass, NULL, &e) == 0);
    REQUIRE(cmp_report_skip(&r, "relu_out", 0, "storage reused", &e) == 0);
    REQUIRE(cmp_report_add(&r, "mid", 0, IR_F32, &ref, &p, NULL, &e) == 0);
    REQUIRE(cmp_report_add(&r, "y", 1, IR_F32, &ref, &p, NULL, &e) == 0);
    CHECK_EQ_INT(cmp_report_first_failure(&r), 2);
    CHECK_EQ_INT(cmp_report_failed_outputs(&r), 1);
    CHECK(cmp_report_add(&r, "bad", 1, IR_F32, &ref, &(IrTensor){0}, NULL, &e) == -1);
    CHECK_EQ_INT(r.n, 4);
    FILE *fp = tmpfile();
    REQUIRE(fp);
    cmp_report_print(&r, fp);
    char buf[4096] = {0};
    rewind(fp);
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    CHECK(n > 0);
    CHECK_STR_CONTAINS(buf, "first diverging tensor: 'mid' (intermediate); 1 of 1 outputs fail");
    CHECK_STR_CONTAINS(buf, "1 of 10 outside tolerance");
    CHECK_STR_CONTAINS(buf, "storage reused");
    CHECK_STR_CONTAINS(buf, "cosine");
    cmp_report_free(&r);
    /* all passing */
    REQUIRE(cmp_report_add(&r, "y", 1, IR_F32, &ref, &nopass, NULL, &e) == 0);
    CHECK_EQ_INT(cmp_report_first_failure(&r), -1);
    CHECK_EQ_INT(cmp_report_failed_outputs(&r), 0);
    cmp_report_free(&r);
    ir_tensor_free_contents(&p);
}

/* interp_run_observed sees every node output once, in order; a failing
 * observer stops the run with its message */
static int count_outputs(void *ctx, int tensor, const IrTensor *v, AtlErr *err)
{
    int *n = ctx;
    if (!v->data || tensor < 0) return atl_fail(err, "no value");
    if (++*n == 3 && n[1]) return atl_fail(err, "observer stop at '%s'", v->name);
    return 0;
}

TEST(observer_sees_every_node_output)
{
    IrGraph g;
    REQUIRE(onnx_load_file("test/data/convbn.onnx", &g, &e) == 0 && ir_toposort(&g, &e) == 0);
    IrInputShape sh;
    REQUIRE(ir_parse_input_shape("x=2x3x8x8", &sh, &e) == 0 && ir_apply_input_shapes(&g, &sh, 1, &e) == 0);
    REQUIRE(ir_infer_shapes(&g, &e) == 0);
    float x[2 * 3 * 8 * 8] = {0};
    IrTensor in = {0}, *out = NULL;
    in.name = "x"; in.dtype = IR_F32; in.ndim = 4;
    in.dims[0] = 2; in.dims[1] = 3; in.dims[2] = 8; in.dims[3] = 8;
    in.data = x;
    int seen[2] = {0, 0}, want = 0;
    for (int i = 0; i < g.nn; i++) want += g.nodes[i].nout;
    REQUIRE(interp_run_observed(&g, &in, 1, &out, count_outputs, seen, &e) == 0);
    CHECK_EQ_INT(seen[0], want);
    interp_free_outputs(out, g.nout);
    out = NULL;
    seen[0] = 0; seen[1] = 1;
    CHECK(interp_run_observed(&g, &in, 1, &out, count_outputs, seen, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "observer stop at");
    CHECK(out == NULL);
    ir_free(&g);
}

int main(void)
{
    if (run_convbn(1, &ref) || run_convbn(0, &nopass)) {
        printf("  FAIL setup: %s\n", e.msg);
        printf("test_compare: 0 passed, 1 failed\n");
        return 1;
    }
    RUN(passes_agree_within_fp32_tolerance);
    RUN(fp16_result_passes_fp16_thresholds_only);
    RUN(perturbation_nan_and_shape);
    RUN(integer_and_zero_tensors);
    RUN(report_names_first_divergence);
    RUN(observer_sees_every_node_output);
    ir_tensor_free_contents(&ref);
    ir_tensor_free_contents(&nopass);
    return test_summary("test_compare");
}
