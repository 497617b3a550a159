/* test_synth.c - synthetic weights for a missing external-data file:
 * test/data/synth.onnx (Conv, BatchNormalization, Gemm transB, MatMul, all
 * weights in synth.bin, made by gen_synth.py) is copied without its data
 * file into a temporary directory. Without the option the import fails
 * naming tensor and file; with it every weight is filled deterministically
 * at the scale its consumer implies, the graph runs on the interpreter to a
 * finite result, and a short (present) data file is still an error. */
#include "test/test.h"
#include "compiler/onnx/onnx.h"
#include "compiler/ops/infer.h"
#include "compiler/interp/interp.h"
#include "compiler/onnx/synth_weights.h"
#include "util/file.h"
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

static AtlErr e;
static char dir[128], model[256], data[256];

static void setup(void)
{
    unsigned char *buf;
    size_t n;
    snprintf(dir, sizeof dir, "/tmp/atoll_synth_%d", (int)getpid());
    mkdir(dir, 0700);
    snprintf(model, sizeof model, "%s/synth.onnx", dir);
    snprintf(data, sizeof data, "%s/synth.bin", dir);
    if (atl_read_file("test/data/synth.onnx", &buf, &n, &e) == 0) {
        atl_write_file_atomic(model, buf, n, &e);
        free(buf);
    }
    unlink(data);
}

static const IrTensor *find(const IrGraph *g, const char *name)
{
    int k = ir_find(g, name);
    return k >= 0 && g->t[k].data ? &g->t[k] : NULL;
}

/* min and max over a float tensor */
static void range(const IrTensor *t, double *lo, double *hi)
{
    *lo = 1e30; *hi = -1e30;
    for (int64_t i = 0; i < ir_numel(t); i++) {
        double v = ir_get_f(t, i);
        if (v < *lo) *lo = v;
        if (v > *hi) *hi = v;
    }
}

TEST(with_data_file_reads_real_values)
{
    IrGraph g;
    OnnxLoadOpts o = {1, 0, 0, 0};
    /* the data file next to the original: real values, nothing synthesised */
    REQUIRE(onnx_load_file_opts("test/data/synth.onnx", &o, &g, &e) == 0);
    CHECK_EQ_INT(o.nsynthetic, 0);
    const IrTensor *w = find(&g, "conv.w");
    REQUIRE(w);
    double lo, hi;
    range(w, &lo, &hi);
    CHECK(hi > 1.0); /* standard normal values, far outside +-1/sqrt(27) */
    ir_free(&g);
}

TEST(missing_file_is_an_error_naming_tensor_and_file)
{
    IrGraph g;
    CHECK(onnx_load_file(model, &g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "'conv.w'");
    CHECK_STR_CONTAINS(e.msg, "synth.bin");
    CHECK_STR_CONTAINS(e.msg, "--synthetic-weights");
    ir_free(&g);
    OnnxLoadOpts off = {0, 0, 0, 0};
    CHECK(onnx_load_file_opts(model, &off, &g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "no such file");
    ir_free(&g);
}

TEST(synthetic_values_follow_the_consumer)
{
    IrGraph g;
    OnnxLoadOpts o = {1, 0, 0, 0};
    REQUIRE(onnx_load_file_opts(model, &o, &g, &e) == 0);
    CHECK_EQ_INT(o.nsynthetic, 9);
    CHECK_EQ_INT(o.synthetic_bytes, 4 * (216 + 8 * 5 + 2048 + 16 + 64));
    static const struct { const char *name; double lo, hi; } want[] = {
        {"conv.w", -1 / 5.196152, 1 / 5.196152},  /* fan_in 3*3*3 */
        {"conv.b", -1 / 5.196152, 1 / 5.196152},  /* bias: the weight's fan_in */
        {"bn.scale", 0.8, 1.2}, {"bn.bias", -0.1, 0.1}, {"bn.mean", -0.1, 0.1},
        {"bn.var", 0.5, 1.5},
        {"fc.w", -0.08838834764831845, 0.08838834764831845}, /* 1/sqrt(128): [16,128] with transB (a constant: clang wants no calls here) */
        {"fc.b", -0.08838834764831845, 0.08838834764831845},
        {"proj.w", -0.25, 0.25},                  /* MatMul [16,4]: K = 16 */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const IrTensor *t = find(&g, want[i].name);
        CHECKF(t != NULL, "%s has no data", want[i].name);
        if (!t) continue;
        double lo, hi, span = want[i].hi - want[i].lo;
        range(t, &lo, &hi);
        CHECKF(lo >= want[i].lo - 1e-6 && hi <= want[i].hi + 1e-6, "%s: [%g, %g] outside [%g, %g]",
               want[i].name, lo, hi, want[i].lo, want[i].hi);
        /* spread over the range, not a constant */
        CHECKF(hi - lo > 0.5 * span, "%s: values span only [%g, %g]", want[i].name, lo, hi);
    }
    ir_free(&g);
}

TEST(deterministic_and_name_seeded)
{
    IrGraph a, b;
    OnnxLoadOpts o = {1, 0, 0, 0};
    REQUIRE(onnx_load_file_opts(model, &o, &a, &e) == 0);
    REQUIRE(onnx_load_file_opts(model, &o, &b, &e) == 0);
    const IrTensor *wa = find(&a, "conv.w"), *wb = find(&b, "conv.w");
    REQUIRE(wa && wb);
    CHECK(memcmp(wa->data, wb->data, ir_nbytes(wa)) == 0);
    /* two tensors of the same shape and rule but different names differ */
    const IrTensor *m = find(&a, "bn.mean"), *bi = find(&a, "bn.bias");
    REQUIRE(m && bi);
    CHECK(memcmp(m->data, bi->data, ir_nbytes(m)) != 0);
    ir_free(&a);
    ir_free(&b);
    /* the fill itself: same name, same values; other name, other values */
    int64_t dims[1] = {64};
    IrTensor t1 = {0}, t2 = {0};
    t1.dtype = t2.dtype = IR_F16;
    t1.ndim = t2.ndim = 1;
    t1.dims[0] = t2.dims[0] = dims[0];
    REQUIRE(ir_alloc_data(&t1, &e) == 0 && ir_alloc_data(&t2, &e) == 0);
    synth_fill_uniform(&t1, "x", -2, 2);
    synth_fill_uniform(&t2, "x", -2, 2);
    CHECK(memcmp(t1.data, t2.data, ir_nbytes(&t1)) == 0);
    synth_fill_uniform(&t2, "y", -2, 2);
    CHECK(memcmp(t1.data, t2.data, ir_nbytes(&t1)) != 0);
    double lo, hi;
    range(&t1, &lo, &hi);
    CHECK(lo >= -2 && hi <= 2 && hi - lo > 2);
    ir_tensor_free_contents(&t1);
    ir_tensor_free_contents(&t2);
}

TEST(synthetic_model_runs_to_finite_output)
{
    IrGraph g;
    OnnxLoadOpts o = {1, 0, 0, 0};
    REQUIRE(onnx_load_file_opts(model, &o, &g, &e) == 0);
    REQUIRE(ir_toposort(&g, &e) == 0 && ir_infer_shapes(&g, &e) == 0);
    float x[192];
    for (int i = 0; i < 192; i++) x[i] = (float)((i * 37) % 19 - 9) / 9.0f;
    IrTensor in = {0};
    in.name = "x";
    in.dtype = IR_F32;
    in.ndim = 4;
    in.dims[0] = 1; in.dims[1] = 3; in.dims[2] = 8; in.dims[3] = 8;
    in.data = x;
    IrTensor *out = NULL;
    REQUIRE(interp_run(&g, &in, 1, &out, &e) == 0);
    int finite = 1, nonzero = 0;
    for (int i = 0; i < 4; i++) {
        float v = ((float *)out[0].data)[i];
        if (!isfinite(v)) finite = 0;
        if (v != 0) nonzero = 1;
    }
    CHECK(finite && nonzero);
    interp_free_outputs(out, g.nout);
    ir_free(&g);
}

TEST(short_file_and_integer_tensors_are_still_errors)
{
    IrGraph g;
    OnnxLoadOpts o = {1, 0, 0, 0};
    unsigned char few[100] = {0};
    REQUIRE(atl_write_file_atomic(data, few, sizeof few, &e) == 0);
    CHECK(onnx_load_file_opts(model, &o, &g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "fewer than");
    ir_free(&g);
    unlink(data);
    /* an int64 tensor cannot be invented */
    SynthList l = {0};
    IrTensor t = {0};
    t.name = "shape";
    t.dtype = IR_I64;
    t.ndim = 1;
    t.dims[0] = 4;
    CHECK(synth_missing_tensor(&l, &t, "w.bin", &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "'shape' (int64)");
    CHECK_STR_CONTAINS(e.msg, "w.bin");
    CHECK(t.data == NULL && l.n == 0);
    /* int8 weights are: the full int8 range */
    t.dtype = IR_I8;
    t.dims[0] = 256;
    REQUIRE(synth_missing_tensor(&l, &t, "w.bin", &e) == 0);
    CHECK_EQ_INT(l.n, 1);
    CHECK_EQ_INT(l.bytes, 256);
    double lo, hi;
    range(&t, &lo, &hi);
    CHECK(lo >= -127 && hi <= 127 && hi - lo > 127);
    free(t.data);
    synth_list_free(&l);
}

int main(void)
{
    setup();
    RUN(with_data_file_reads_real_values);
    RUN(missing_file_is_an_error_naming_tensor_and_file);
    RUN(synthetic_values_follow_the_consumer);
    RUN(deterministic_and_name_seeded);
    RUN(synthetic_model_runs_to_finite_output);
    RUN(short_file_and_integer_tensors_are_still_errors);
    unlink(model);
    rmdir(dir);
    return test_summary("test_synth");
}
