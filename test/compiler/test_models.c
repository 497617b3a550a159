/* test_models.c - end to end against NumPy: test/data/convbn.onnx (Conv,
 * BatchNorm, Relu, a Shape/Gather/Unsqueeze/Concat/Reshape flatten, Identity,
 * Gemm; dynamic batch) is imported, run on the interpreter before and after
 * the canonicalisation passes, and compared with convbn_y.npy, which
 * test/data/gen_models.py computed with NumPy alone. Also checks external
 * data and the .npz input path of the array conversion. */
#include "test/test.h"
#include "compiler/onnx/onnx.h"
#include "compiler/ops/infer.h"
#include "compiler/interp/interp.h"
#include "compiler/passes/passes.h"
#include "util/npy.h"
#include <stdlib.h>

static AtlErr e;

static int to_tensor(const AtlNdArray *a, const char *name, IrTensor *t)
{
    memset(t, 0, sizeof *t);
    if (a->dtype != ATL_NPY_F32) return -1;
    t->name = (char *)name;
    t->dtype = IR_F32;
    t->ndim = a->ndim;
    for (int k = 0; k < a->ndim; k++) t->dims[k] = a->shape[k];
    t->data = a->data;
    return 0;
}

static double run_and_compare(int passes, int fix_batch)
{
    IrGraph g;
    AtlNdArray x, y;
    IrTensor in, *out = NULL;
    double worst = 1e30;
    if (onnx_load_file("test/data/convbn.onnx", &g, &e) || ir_toposort(&g, &e)) { printf("  %s\n", e.msg); ir_free(&g); return worst; }
    if (fix_batch) {
        IrInputShape s;
        if (ir_parse_input_shape("x=2x3x8x8", &s, &e) || ir_apply_input_shapes(&g, &s, 1, &e)) { ir_free(&g); return worst; }
    }
    if (ir_infer_shapes(&g, &e) || (passes && pass_run_all(&g, &e))) { printf("  %s\n", e.msg); ir_free(&g); return worst; }
    if (atl_npy_read("test/data/convbn_x.npy", &x, &e) || atl_npy_read("test/data/convbn_y.npy", &y, &e)) { ir_free(&g); return worst; }
    to_tensor(&x, "x", &in);
    if (interp_run(&g, &in, 1, &out, &e) == 0) {
        worst = 0;
        if (out[0].ndim != 2 || out[0].dims[0] != 2 || out[0].dims[1] != 5) worst = 1e30;
        else
            for (int i = 0; i < 10; i++) {
                double d = fabs(((float *)out[0].data)[i] - ((float *)y.data)[i]);
                if (d > worst) worst = d;
            }
        interp_free_outputs(out, g.nout);
    } else printf("  %s\n", e.msg);
    atl_ndarray_free(&x);
    atl_ndarray_free(&y);
    ir_free(&g);
    return worst;
}

TEST(convbn_matches_numpy)
{
    CHECK(run_and_compare(0, 0) < 1e-4);
    CHECK(run_and_compare(1, 0) < 1e-4);
    CHECK(run_and_compare(1, 1) < 1e-4);
}

TEST(passes_make_shapes_static)
{
    IrGraph g;
    IrInputShape s;
    REQUIRE(onnx_load_file("test/data/convbn.onnx", &g, &e) == 0);
    REQUIRE(ir_parse_input_shape("x=2x3x8x8", &s, &e) == 0 && ir_apply_input_shapes(&g, &s, 1, &e) == 0);
    REQUIRE(pass_run_all(&g, &e) == 0);
    int ops = 0;
    for (int i = 0; i < g.nn; i++) {
        ops++;
        CHECKF(strcmp(g.nodes[i].op, "Shape") && strcmp(g.nodes[i].op, "BatchNormalization") && strcmp(g.nodes[i].op, "Identity"),
               "node %s (%s) should be gone", g.nodes[i].name, g.nodes[i].op);
    }
    CHECK_EQ_INT(ops, 4); /* Conv, Relu, Reshape, Gemm */
    for (int t = 0; t < g.nt; t++)
        if (g.t[t].producer >= 0) CHECKF(ir_shape_known(&g.t[t]), "tensor %s has unknown shape", g.t[t].name);
    ir_free(&g);
}

TEST(external_data_model)
{
    IrGraph g;
    REQUIRE(onnx_load_file("test/data/extdata.onnx", &g, &e) == 0);
    int w = ir_find(&g, "w");
    REQUIRE(w >= 0 && g.t[w].data);
    CHECK_NEAR(((float *)g.t[w].data)[5], 5.0, 0);
    ir_free(&g);
}

TEST(npz_input_by_name)
{
    AtlNdArray *l;
    int n;
    REQUIRE(atl_npz_read("test/data/convbn_in.npz", &l, &n, &e) == 0);
    REQUIRE(n == 1);
    CHECK(!strcmp(l[0].name, "x"));
    CHECK_EQ_INT(l[0].shape[0], 2);
    atl_ndarray_list_free(l, n);
}

int main(void)
{
    RUN(convbn_matches_numpy);
    RUN(passes_make_shapes_static);
    RUN(external_data_model);
    RUN(npz_input_by_name);
    return test_summary("test_models");
}
