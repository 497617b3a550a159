/* test_zoo.c - the reference interpreter against PyTorch: every bundled model
 * in models/ is imported, canonicalised and run on the inputs of its
 * .ref.npz, and its outputs must match the ones PyTorch computed when the
 * model was exported (data nobody here wrote). The digits CNN is also run
 * on its whole held-out test set, and its accuracy and per-image predictions
 * must equal PyTorch's (models/digits_cnn.json). */
#include <stdlib.h>
#include "test/test.h"
#include "compiler/onnx/onnx.h"
#include "compiler/ops/infer.h"
#include "compiler/interp/interp.h"
#include "compiler/passes/passes.h"
#include "util/npy.h"
#include "util/file.h"

static AtlErr e;

static const AtlNdArray *find_array(const AtlNdArray *list, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(list[i].name, name)) return &list[i];
    return NULL;
}

static void as_tensor(const AtlNdArray *a, IrTensor *t)
{
    memset(t, 0, sizeof *t);
    t->name = a->name;
    t->dtype = IR_F32;
    t->ndim = a->ndim;
    for (int k = 0; k < a->ndim; k++) t->dims[k] = a->shape[k];
    t->data = a->data;
}

/* Loads, fixes the batch to the input's, infers shapes and runs the passes. */
static int prepare(const char *model, const AtlNdArray *input, IrGraph *g)
{
    if (onnx_load_file(model, g, &e) || ir_toposort(g, &e)) return -1;
    char spec[128];
    int n = snprintf(spec, sizeof spec, "%s=", g->t[g->inputs[0]].name);
    for (int k = 0; k < input->ndim; k++) n += snprintf(spec + n, sizeof spec - n, k ? "x%lld" : "%lld", (long long)input->shape[k]);
    IrInputShape s;
    if (ir_parse_input_shape(spec, &s, &e) || ir_apply_input_shapes(g, &s, 1, &e)) return -1;
    return ir_infer_shapes(g, &e) || pass_run_all(g, &e);
}

/* Max |a-b| / max(1, max|b|) over all elements. */
static double rel_error(const float *a, const float *b, int64_t n)
{
    double worst = 0, scale = 1;
    for (int64_t i = 0; i < n; i++) if (fabs(b[i]) > scale) scale = fabs(b[i]);
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= worst)) worst = d; /* NaN propagates as failure */
    }
    return worst / scale;
}

static void check_model(const char *stem, double tol)
{
    char model[256], ref[256];
    snprintf(model, sizeof model, "models/%s.onnx", stem);
    snprintf(ref, sizeof ref, "models/%s.ref.npz", stem);
    AtlNdArray *arrays = NULL;
    int na = 0;
    IrGraph g;
    ir_init(&g);
    if (atl_npz_read(ref, &arrays, &na, &e)) { CHECKF(0, "%s", e.msg); return; }
    const AtlNdArray *in = find_array(arrays, na, "input");
    const AtlNdArray *want = find_array(arrays, na, "output");
    if (!in || !want) { CHECKF(0, "%s lacks input/output arrays", ref); goto done; }
    if (prepare(model, in, &g)) { CHECKF(0, "%s: %s", stem, e.msg); goto done; }
    IrTensor x, *out = NULL;
    as_tensor(in, &x);
    if (interp_run(&g, &x, 1, &out, &e)) { CHECKF(0, "%s: %s", stem, e.msg); goto done; }
    CHECK_EQ_INT(ir_numel(&out[0]), atl_ndarray_numel(want));
    if (ir_numel(&out[0]) == atl_ndarray_numel(want)) {
        double err = rel_error(out[0].data, want->data, atl_ndarray_numel(want));
        printf("  %-18s max error %.3g (relative to max |output|)\n", stem, err);
        CHECKF(err <= tol, "%s: error %.3g > %.3g", stem, err, tol);
    }
    interp_free_outputs(out, g.nout);
done:
    ir_free(&g);
    atl_ndarray_list_free(arrays, na);
}

TEST(digits_cnn_matches_pytorch) { check_model("digits_cnn", 1e-5); }
TEST(lenet5_matches_pytorch) { check_model("lenet5", 1e-5); }
TEST(resnet20_matches_pytorch) { check_model("resnet20_cifar", 1e-5); }
TEST(mobilenetv2_matches_pytorch) { check_model("mobilenetv2_035", 1e-5); }
TEST(encoder_block_matches_pytorch) { check_model("encoder_block", 1e-5); }
TEST(vit_tiny_matches_pytorch) { check_model("vit_tiny", 1e-5); }

/* Pulls "key": number out of the small JSON file the generator wrote. */
static double json_number(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    return p ? strtod(p + strlen(pat), NULL) : -1;
}

TEST(digits_test_set_accuracy_equals_pytorch)
{
    AtlNdArray *arrays = NULL;
    int na = 0;
    unsigned char *json = NULL;
    size_t jn;
    IrGraph g;
    ir_init(&g);
    REQUIRE(atl_npz_read("models/digits_cnn.test.npz", &arrays, &na, &e) == 0);
    const AtlNdArray *in = find_array(arrays, na, "input"), *labels = find_array(arrays, na, "labels");
    const AtlNdArray *torch_out = find_array(arrays, na, "output");
    if (!in || !labels || !torch_out || labels->dtype != ATL_NPY_I64 ||
        atl_read_file("models/digits_cnn.json", &json, &jn, &e)) {
        CHECKF(0, "digits test data incomplete");
        goto done;
    }
    if (prepare("models/digits_cnn.onnx", in, &g)) { CHECKF(0, "%s", e.msg); goto done; }
    IrTensor x, *out = NULL;
    as_tensor(in, &x);
    if (interp_run(&g, &x, 1, &out, &e)) { CHECKF(0, "%s", e.msg); goto done; }
    int64_t n = in->shape[0], correct = 0, same_as_torch = 0;
    const float *y = out[0].data, *ty = torch_out->data;
    const int64_t *lab = labels->data;
    for (int64_t i = 0; i < n; i++) {
        int best = 0, tbest = 0;
        for (int c = 1; c < 10; c++) {
            if (y[i * 10 + c] > y[i * 10 + best]) best = c;
            if (ty[i * 10 + c] > ty[i * 10 + tbest]) tbest = c;
        }
        correct += best == lab[i];
        same_as_torch += best == tbest;
    }
    double acc = (double)correct / (double)n;
    printf("  digits: %lld/%lld correct, accuracy %.6f (PyTorch %.6f)\n", (long long)correct, (long long)n, acc,
           json_number((char *)json, "accuracy"));
    CHECK_EQ_INT(correct, (int64_t)json_number((char *)json, "correct"));
    CHECK_EQ_INT(same_as_torch, n);
    CHECK_EQ_INT(n, (int64_t)json_number((char *)json, "num_test_images"));
    interp_free_outputs(out, g.nout);
done:
    free(json);
    ir_free(&g);
    atl_ndarray_list_free(arrays, na);
}

int main(void)
{
    RUN(digits_cnn_matches_pytorch);
    RUN(lenet5_matches_pytorch);
    RUN(resnet20_matches_pytorch);
    RUN(mobilenetv2_matches_pytorch);
    RUN(encoder_block_matches_pytorch);
    RUN(vit_tiny_matches_pytorch);
    RUN(digits_test_set_accuracy_equals_pytorch);
    return test_summary("test_zoo");
}
