/* test_graph.c - graph IR (topological sort, cycles, verifier, consumers,
 * printer), shape inference with --input-shape, interpreter results on
 * hand-computed cases, and the canonicalisation passes: each pass must leave
 * the interpreter's outputs unchanged and do its job. */
#include "test/test.h"
#include "compiler/ir/ir.h"
#include "compiler/ops/infer.h"
#include "compiler/interp/interp.h"
#include "compiler/ops/ops.h"
#include "compiler/passes/passes.h"
#include <stdlib.h>
#include <math.h>

static AtlErr e;

static void fill(float *p, int n, unsigned seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 8) % 2000) / 1000.0f - 1.0f;
    }
}

static int run1(IrGraph *g, const IrTensor *in, int nin, IrTensor **out)
{
    if (interp_run(g, in, nin, out, &e)) { printf("  interp: %s\n", e.msg); return -1; }
    return 0;
}

static double maxdiff(const IrTensor *a, const IrTensor *b)
{
    if (ir_numel(a) != ir_numel(b)) return 1e30;
    double m = 0;
    for (int64_t i = 0; i < ir_numel(a); i++) {
        double d = ir_get_f(a, i) - ir_get_f(b, i);
        if (d < 0) d = -d;
        if (d > m) m = d;
    }
    return m;
}

TEST(toposort_and_cycles)
{
    IrGraph g;
    ir_init(&g);
    int64_t d[1] = {2};
    REQUIRE(ir_add_input(&g, "x", IR_F32, 1, d, &e) >= 0);
    /* added out of order: c needs b needs a */
    REQUIRE(ir_add_op(&g, "Relu", "c", "b", "y", &e) >= 0);
    REQUIRE(ir_add_op(&g, "Neg", "b", "a", "b", &e) >= 0);
    REQUIRE(ir_add_op(&g, "Abs", "a", "x", "a", &e) >= 0);
    REQUIRE(ir_add_output(&g, "y", &e) >= 0);
    CHECK(ir_verify(&g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "node 'c' (Relu): input 0 'b'");
    REQUIRE(ir_toposort(&g, &e) == 0);
    CHECK(!strcmp(g.nodes[0].name, "a") && !strcmp(g.nodes[2].name, "c"));
    CHECK(ir_verify(&g, &e) == 0);
    CHECK_EQ_INT(g.t[ir_find(&g, "b")].producer, 1);
    IrUses u;
    REQUIRE(ir_consumers(&g, &u, &e) == 0);
    int a = ir_find(&g, "a");
    CHECK_EQ_INT(u.start[a + 1] - u.start[a], 1);
    CHECK_EQ_INT(u.list[u.start[a]], 1);
    ir_uses_free(&u);
    /* a cycle: x2 -> p -> q -> p */
    REQUIRE(ir_add_op(&g, "Add", "p", "y,q", "p", &e) >= 0);
    REQUIRE(ir_add_op(&g, "Relu", "q", "p", "q", &e) >= 0);
    CHECK(ir_toposort(&g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "is on a cycle");
    ir_free(&g);
    /* two producers of one tensor */
    ir_init(&g);
    REQUIRE(ir_add_input(&g, "x", IR_F32, 1, d, &e) >= 0);
    REQUIRE(ir_add_op(&g, "Relu", "r1", "x", "t", &e) >= 0);
    REQUIRE(ir_add_op(&g, "Relu", "r2", "x", "t", &e) >= 0);
    CHECK(ir_toposort(&g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "produced by both node 'r1' and node 'r2'");
    ir_free(&g);
}

TEST(printer)
{
    IrGraph g;
    ir_init(&g);
    int64_t d[2] = {-1, 4};
    REQUIRE(ir_add_input(&g, "x", IR_F32, 2, d, &e) >= 0);
    int n = ir_add_op(&g, "Softmax", "sm", "x", "y", &e);
    REQUIRE(n >= 0 && ir_set_attr_int(&g, n, "axis", 1, &e) == 0);
    REQUIRE(ir_add_output(&g, "y", &e) >= 0);
    REQUIRE(ir_infer_shapes(&g, &e) == 0);
    char buf[2048] = {0};
    FILE *fp = fmemopen(buf, sizeof buf - 1, "w");
    REQUIRE(fp);
    ir_print(&g, fp);
    fclose(fp);
    CHECK_STR_CONTAINS(buf, "sm = Softmax(%x:float32[?x4]) -> %y:float32[?x4] axis=1");
    ir_free(&g);
}

TEST(input_shape_fixing)
{
    IrGraph g;
    ir_init(&g);
    int64_t d[2] = {-1, 4};
    REQUIRE(ir_add_input(&g, "x", IR_F32, 2, d, &e) >= 0);
    int64_t wd[2] = {4, 3};
    float w[12];
    fill(w, 12, 1);
    REQUIRE(ir_add_const(&g, "w", IR_F32, 2, wd, w, &e) >= 0);
    REQUIRE(ir_add_op(&g, "MatMul", "mm", "x,w", "y", &e) >= 0);
    REQUIRE(ir_add_output(&g, "y", &e) >= 0);
    REQUIRE(ir_infer_shapes(&g, &e) == 0);
    int y = ir_find(&g, "y");
    CHECK_EQ_INT(g.t[y].dims[0], -1);
    CHECK_EQ_INT(g.t[y].dims[1], 3);
    IrInputShape s;
    REQUIRE(ir_parse_input_shape("x=5x4", &s, &e) == 0);
    REQUIRE(ir_apply_input_shapes(&g, &s, 1, &e) == 0);
    REQUIRE(ir_infer_shapes(&g, &e) == 0);
    CHECK_EQ_INT(g.t[y].dims[0], 5);
    CHECK(ir_parse_input_shape("x=5x", &s, &e) == -1);
    CHECK(ir_parse_input_shape("x=0x3", &s, &e) == -1);
    /* a dimension the model fixed may change; where the graph depends on
     * it, inference names the node and says why */
    REQUIRE(ir_parse_input_shape("x=5x3", &s, &e) == 0);
    CHECK(ir_apply_input_shapes(&g, &s, 1, &e) == 0);
    CHECK_STR_CONTAINS(g.reshaped, "input 'x' [5x4] -> [5x3]");
    CHECK(ir_infer_shapes(&g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "node 'mm' (MatMul)");
    CHECK_STR_CONTAINS(e.msg, "the graph itself depends on the exported shape at this node");
    REQUIRE(ir_parse_input_shape("x=5", &s, &e) == 0);
    CHECK(ir_apply_input_shapes(&g, &s, 1, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "has rank 2");
    ir_free(&g);
}

/* x[1,8] -> Reshape to the constant [1,-1] (a flatten traced at batch 1) -> y. */
static void flatten_graph(IrGraph *g)
{
    int64_t d[2] = {1, 8}, sd[1] = {2}, keep[2] = {1, -1};
    ir_init(g);
    g->opset = 13;
    REQUIRE(ir_add_input(g, "x", IR_F32, 2, d, &e) >= 0);
    REQUIRE(ir_add_const(g, "keep", IR_I64, 1, sd, keep, &e) >= 0);
    REQUIRE(ir_add_op(g, "Reshape", "/flatten/Reshape", "x,keep", "y", &e) >= 0);
    REQUIRE(ir_add_output(g, "y", &e) >= 0);
}

/* A fixed-batch export at another batch: declared shapes of computed
 * tensors are forgotten and inferred afresh; a Reshape to a constant shape
 * that holds the exported batch is refused, naming it. */
TEST(batch_override)
{
    IrGraph g;
    ir_init(&g);
    g.opset = 13;
    int64_t d[2] = {1, 8}, sd[1] = {2}, flat[2] = {-1, 8};
    REQUIRE(ir_add_input(&g, "x", IR_F32, 2, d, &e) >= 0);
    REQUIRE(ir_add_op(&g, "Relu", "relu", "x", "r", &e) >= 0);
    REQUIRE(ir_add_const(&g, "flat", IR_I64, 1, sd, flat, &e) >= 0);
    REQUIRE(ir_add_op(&g, "Reshape", "ok_reshape", "r,flat", "y", &e) >= 0);
    REQUIRE(ir_add_output(&g, "y", &e) >= 0);
    REQUIRE(ir_infer_shapes(&g, &e) == 0);
    int y = ir_find(&g, "y");
    CHECK_EQ_INT(g.t[y].dims[0], 1);     /* as exported: now the declared shape */
    IrInputShape s;
    REQUIRE(ir_parse_input_shape("x=4x8", &s, &e) == 0);
    REQUIRE(ir_apply_input_shapes(&g, &s, 1, &e) == 0);
    CHECK_EQ_INT(g.batch_from, 1);
    CHECK_EQ_INT(g.batch_to, 4);
    int ok = ir_infer_shapes(&g, &e) == 0;
    CHECKF(ok, "%s", e.msg);
    CHECK_EQ_INT(g.t[y].dims[0], 4);
    ir_free(&g);
    flatten_graph(&g);
    REQUIRE(ir_apply_input_shapes(&g, &s, 1, &e) == 0);
    CHECK(ir_infer_shapes(&g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "node '/flatten/Reshape' (Reshape): its target shape [1,-1] is a constant that holds the "
                              "exported batch 1, so at batch 4");
    CHECK_STR_CONTAINS(e.msg, "give the batch with --batch 4");
    /* the same graph given the batch as one: the target follows it */
    ir_free(&g);
    flatten_graph(&g);
    s.is_batch = 1;
    REQUIRE(ir_apply_input_shapes(&g, &s, 1, &e) == 0);
    ok = ir_infer_shapes(&g, &e) == 0;
    CHECKF(ok, "%s", e.msg);
    y = ir_find(&g, "y");
    CHECK(g.t[y].dims[0] == 4 && g.t[y].dims[1] == 8);
    ir_free(&g);
}

/* An export traced at batch 1 (x[1,8] -> Reshape to the constant [1,-1,4]
 * -> Concat after a class token [1,1,4] -> y; the same token Expanded to
 * the constant shape [1,1,4] -> Concat -> z) given a batch with --batch
 * (IrInputShape.is_batch): the constants follow it, the old ones keep
 * their other readers, and each image of the batch gives what it gives
 * alone. An exported batch of 2 whose token differs per image does not
 * follow. */
static void token_graph(IrGraph *g, int64_t batch, const float *tok, int ntok)
{
    int64_t d[2] = {batch, 8}, sd[1] = {3}, td[3] = {ntok, 1, 4}, tgt[3] = {batch, -1, 4};
    ir_init(g);
    g->opset = 13;
    REQUIRE(ir_add_input(g, "x", IR_F32, 2, d, &e) >= 0);
    REQUIRE(ir_add_const(g, "tgt", IR_I64, 1, sd, tgt, &e) >= 0);
    REQUIRE(ir_add_op(g, "Reshape", "heads", "x,tgt", "r", &e) >= 0);
    REQUIRE(ir_add_const(g, "tok", IR_F32, 3, td, tok, &e) >= 0);
    REQUIRE(ir_add_op(g, "Concat", "cat", "tok,r", "y", &e) >= 0 && ir_set_attr_int(g, g->nn - 1, "axis", 1, &e) == 0);
    REQUIRE(ir_add_const(g, "eshape", IR_I64, 1, sd, (int64_t[3]){ntok, 1, 4}, &e) >= 0);
    REQUIRE(ir_add_op(g, "Expand", "expand", "tok,eshape", "et", &e) >= 0);
    REQUIRE(ir_add_op(g, "Concat", "cat2", "et,r", "z", &e) >= 0 && ir_set_attr_int(g, g->nn - 1, "axis", 1, &e) == 0);
    REQUIRE(ir_add_output(g, "y", &e) >= 0 && ir_add_output(g, "z", &e) >= 0);
    REQUIRE(ir_toposort(g, &e) == 0 && ir_infer_shapes(g, &e) == 0);
}

TEST(batch_follow)
{
    float tok[8], xs[24];
    fill(tok, 8, 5);
    fill(xs, 24, 6);
    IrGraph g;
    token_graph(&g, 1, tok, 1);
    IrInputShape s;
    REQUIRE(ir_parse_input_shape("x=3x8", &s, &e) == 0);
    s.is_batch = 1;
    REQUIRE(ir_apply_input_shapes(&g, &s, 1, &e) == 0);
    int ok = ir_infer_shapes(&g, &e) == 0;
    CHECKF(ok, "%s", e.msg);
    int y = ir_find(&g, "y"), z = ir_find(&g, "z"), tgt = ir_find(&g, "tgt");
    CHECK(g.t[y].ndim == 3 && g.t[y].dims[0] == 3 && g.t[y].dims[1] == 3 && g.t[y].dims[2] == 4);
    CHECK(g.t[z].ndim == 3 && g.t[z].dims[0] == 3 && g.t[z].dims[1] == 3);
    CHECK_EQ_INT(g.batch_followed, 3);                 /* the Reshape and both Concats */
    CHECK_STR_CONTAINS(g.batch_followed_first, "heads");
    CHECK_EQ_INT(ir_get_i(&g.t[tgt], 0), 1);           /* the old target is as exported */
    /* each image of the batch as alone */
    IrTensor in = {.name = "x", .dtype = IR_F32, .ndim = 2, .dims = {3, 8}, .data = xs};
    IrTensor *out3 = NULL;
    REQUIRE(ok && run1(&g, &in, 1, &out3) == 0);
    for (int k = 0; k < 3; k++) {
        IrGraph one;
        token_graph(&one, 1, tok, 1);
        IrTensor i1 = {.name = "x", .dtype = IR_F32, .ndim = 2, .dims = {1, 8}, .data = xs + 8 * k};
        IrTensor *out1 = NULL;
        REQUIRE(run1(&one, &i1, 1, &out1) == 0);
        for (int o = 0; o < 2; o++) {
            IrTensor img = out3[o];
            img.dims[0] = 1;
            img.data = (float *)out3[o].data + 12 * k;
            CHECKF(maxdiff(&img, &out1[o]) == 0, "image %d output %d", k, o);
        }
        interp_free_outputs(out1, one.nout);
        ir_free(&one);
    }
    interp_free_outputs(out3, g.nout);
    ir_free(&g);
    /* a channel scale gamma[4] reshaped to [1,-1,1] (the constant's own
     * dimension 0 is 4 = the new batch) does not follow: it is no image */
    {
        IrGraph c;
        int64_t xd[3] = {1, 4, 2}, four = 4, three = 3, tg[3] = {1, -1, 1};
        float gamma[4] = {1, 2, 3, 4};
        ir_init(&c);
        c.opset = 13;
        REQUIRE(ir_add_input(&c, "x", IR_F32, 3, xd, &e) >= 0 && ir_add_const(&c, "gamma", IR_F32, 1, &four, gamma, &e) >= 0);
        REQUIRE(ir_add_const(&c, "tg", IR_I64, 1, &three, tg, &e) >= 0 && ir_add_op(&c, "Reshape", "chan", "gamma,tg", "sc", &e) >= 0);
        REQUIRE(ir_add_op(&c, "Mul", "scale", "x,sc", "y", &e) >= 0 && ir_add_output(&c, "y", &e) >= 0);
        REQUIRE(ir_toposort(&c, &e) == 0 && ir_infer_shapes(&c, &e) == 0);
        REQUIRE(ir_parse_input_shape("x=4x4x2", &s, &e) == 0);
        s.is_batch = 1;
        REQUIRE(ir_apply_input_shapes(&c, &s, 1, &e) == 0);
        ok = ir_infer_shapes(&c, &e) == 0;
        CHECKF(ok, "%s", e.msg);
        int sc = ir_find(&c, "sc");
        CHECK(c.t[sc].dims[0] == 1 && c.t[sc].dims[1] == 4 && c.batch_followed == 0);
        ir_free(&c);
    }
    /* exported at batch 2 with a token per image: it cannot follow */
    token_graph(&g, 2, tok, 2);
    REQUIRE(ir_parse_input_shape("x=4x8", &s, &e) == 0);
    s.is_batch = 1;
    REQUIRE(ir_apply_input_shapes(&g, &s, 1, &e) == 0);
    CHECK(ir_infer_shapes(&g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "node 'cat' (Concat)");
    ir_free(&g);
}

TEST(unsupported_op_message)
{
    IrGraph g;
    ir_init(&g);
    g.opset = 13;
    int64_t d[1] = {2};
    REQUIRE(ir_add_input(&g, "x", IR_F32, 1, d, &e) >= 0);
    REQUIRE(ir_add_op(&g, "FancyOp", "hm7", "x", "y", &e) >= 0);
    CHECK(ir_infer_shapes(&g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "node 'hm7': op 'FancyOp' (opset 13) is not supported (not in the op table)");
    CHECK(!strstr(e.msg, "Where"));   /* not the whole list of supported ops */
    ir_free(&g);
    ir_init(&g);
    g.opset = 12;
    REQUIRE(ir_add_input(&g, "x", IR_F32, 1, d, &e) >= 0);
    REQUIRE(ir_add_op(&g, "HardSwish", "hs", "x", "y", &e) >= 0);
    CHECK(ir_infer_shapes(&g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "'HardSwish' is not supported at opset 12 (supported for opsets 14-18)");
    ir_free(&g);
}

/* an int attribute written as a huge float (a fuzzer found -9.5e27 as
 * Flatten's axis) saturates, so shape inference rejects it by name rather
 * than converting out of range */
TEST(float_attr_where_int_belongs)
{
    IrGraph g;
    ir_init(&g);
    g.opset = 13;
    int64_t d[2] = {2, 3};
    REQUIRE(ir_add_input(&g, "x", IR_F32, 2, d, &e) >= 0);
    int n = ir_add_op(&g, "Flatten", "fl", "x", "y", &e);
    REQUIRE(n >= 0);
    IrAttr *a = ir_node_add_attr(&g, n, "axis", IR_ATTR_FLOAT, &e);
    REQUIRE(a != NULL);
    a->f = -9.5e27f;
    CHECK(ir_attr_int(&g.nodes[n], "axis", 7) == INT64_MIN);
    a->f = 3e30f;
    CHECK(ir_attr_int(&g.nodes[n], "axis", 7) == INT64_MAX);
    a->f = NAN;
    CHECK(ir_attr_int(&g.nodes[n], "axis", 7) == 7);
    a->f = -2.0f;
    CHECK(ir_attr_int(&g.nodes[n], "axis", 7) == -2);
    a->f = 1e20f;
    CHECK(ir_infer_shapes(&g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "fl");
    ir_free(&g);
}

/* conv 1x1x3x3 input, 1 filter 2x2, stride 1, pad 0: hand computed */
TEST(interp_conv_by_hand)
{
    IrGraph g;
    ir_init(&g);
    int64_t xd[4] = {1, 1, 3, 3}, wd[4] = {1, 1, 2, 2};
    float w[4] = {1, 2, 3, 4};
    REQUIRE(ir_add_input(&g, "x", IR_F32, 4, xd, &e) >= 0);
    REQUIRE(ir_add_const(&g, "w", IR_F32, 4, wd, w, &e) >= 0);
    REQUIRE(ir_add_op(&g, "Conv", "c", "x,w", "y", &e) >= 0);
    REQUIRE(ir_add_output(&g, "y", &e) >= 0);
    float xv[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    IrTensor in = {.name = "x", .dtype = IR_F32, .ndim = 4, .dims = {1, 1, 3, 3}, .data = xv};
    IrTensor *out;
    REQUIRE(run1(&g, &in, 1, &out) == 0);
    CHECK_EQ_INT(out[0].dims[2], 2);
    float *y = out[0].data;
    CHECK_NEAR(y[0], 1 * 1 + 2 * 2 + 4 * 3 + 5 * 4, 0);
    CHECK_NEAR(y[3], 5 * 1 + 6 * 2 + 8 * 3 + 9 * 4, 0);
    interp_free_outputs(out, 1);
    /* missing and mismatched inputs */
    CHECK(interp_run(&g, &in, 0, &out, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "graph input 'x' was not given");
    in.dims[3] = 4;
    CHECK(interp_run(&g, &in, 1, &out, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "given shape 1x1x3x4, the model expects 1x1x3x3");
    ir_free(&g);
}

/* Conv -> BatchNormalization -> Relu, and Gemm -> BatchNormalization */
static void build_conv_bn(IrGraph *g, int gemm)
{
    ir_init(g);
    g->opset = 13;
    int C = 4;
    int64_t xd[4] = {2, 3, 6, 5}, wd[4] = {C, 3, 3, 3}, cd[1] = {C}, gxd[2] = {3, 7}, gwd[2] = {C, 7};
    float w[4 * 3 * 3 * 3], b[4], sc[4], bi[4], mu[4], va[4];
    fill(w, 108, 3); fill(b, 4, 4); fill(sc, 4, 5); fill(bi, 4, 6); fill(mu, 4, 7); fill(va, 4, 8);
    for (int i = 0; i < 4; i++) va[i] = va[i] * va[i] + 0.3f;
    if (!gemm) {
        ir_add_input(g, "x", IR_F32, 4, xd, &e);
        ir_add_const(g, "w", IR_F32, 4, wd, w, &e);
    } else {
        ir_add_input(g, "x", IR_F32, 2, gxd, &e);
        ir_add_const(g, "w", IR_F32, 2, gwd, w, &e);
    }
    ir_add_const(g, "b", IR_F32, 1, cd, b, &e);
    ir_add_const(g, "sc", IR_F32, 1, cd, sc, &e);
    ir_add_const(g, "bi", IR_F32, 1, cd, bi, &e);
    ir_add_const(g, "mu", IR_F32, 1, cd, mu, &e);
    ir_add_const(g, "va", IR_F32, 1, cd, va, &e);
    int n = ir_add_op(g, gemm ? "Gemm" : "Conv", "lin", "x,w,b", "c", &e);
    if (gemm) ir_set_attr_int(g, n, "transB", 1, &e);
    else { int64_t p[4] = {1, 0, 1, 2}; ir_set_attr_ints(g, n, "pads", p, 4, &e); }
    ir_add_op(g, "BatchNormalization", "bn", "c,sc,bi,mu,va", "d", &e);
    ir_add_op(g, "Relu", "relu", "d", "y", &e);
    ir_add_output(g, "y", &e);
}

static void check_same(IrGraph *g, IrTensor *in, int nin, int (*pass)(IrGraph *, AtlErr *))
{
    IrTensor *before, *after;
    REQUIRE(ir_toposort(g, &e) == 0 && ir_infer_shapes(g, &e) == 0);
    REQUIRE(run1(g, in, nin, &before) == 0);
    REQUIRE(pass(g, &e) == 0);
    REQUIRE(ir_toposort(g, &e) == 0);
    CHECKF(ir_verify(g, &e) == 0, "%s", e.msg);
    REQUIRE(run1(g, in, nin, &after) == 0);
    for (int i = 0; i < g->nout; i++) CHECKF(maxdiff(&before[i], &after[i]) < 1e-5, "output %d differs by %g", i, maxdiff(&before[i], &after[i]));
    interp_free_outputs(before, g->nout);
    interp_free_outputs(after, g->nout);
}

static int count_op(const IrGraph *g, const char *op)
{
    int n = 0;
    for (int i = 0; i < g->nn; i++) if (!g->nodes[i].dead && !strcmp(g->nodes[i].op, op)) n++;
    return n;
}

TEST(pass_bnfold_conv_and_gemm)
{
    for (int gemm = 0; gemm < 2; gemm++) {
        IrGraph g;
        build_conv_bn(&g, gemm);
        float xv[2 * 3 * 6 * 5];
        fill(xv, 180, 11);
        IrTensor in = {.name = "x", .dtype = IR_F32, .ndim = gemm ? 2 : 4, .dims = {2, 3, 6, 5}, .data = xv};
        if (gemm) { in.dims[0] = 3; in.dims[1] = 7; }
        check_same(&g, &in, 1, pass_fold_batchnorm);
        CHECK_EQ_INT(count_op(&g, "BatchNormalization"), 0);
        check_same(&g, &in, 1, pass_fuse_activations);
        CHECK(!strcmp(g.nodes[0].act, "Relu"));
        ir_free(&g);
    }
}

/* PyTorch-style flatten: Shape -> Gather(0) -> Unsqueeze -> Concat(-1) -> Reshape */
TEST(pass_fold_shape_chain)
{
    IrGraph g;
    ir_init(&g);
    g.opset = 11;
    int64_t xd[4] = {-1, 2, 3, 4}, sd[0] = {}, one[1] = {1};
    int64_t zero = 0, m1 = -1;
    ir_add_input(&g, "x", IR_F32, 4, xd, &e);
    ir_add_const(&g, "zero", IR_I64, 0, sd, &zero, &e);
    ir_add_const(&g, "m1", IR_I64, 1, one, &m1, &e);
    ir_add_op(&g, "Shape", "shape", "x", "s", &e);
    ir_add_op(&g, "Gather", "gather", "s,zero", "n", &e);
    int u = ir_add_op(&g, "Unsqueeze", "unsq", "n", "n1", &e);
    ir_set_attr_ints(&g, u, "axes", &zero, 1, &e);
    int c = ir_add_op(&g, "Concat", "cat", "n1,m1", "shp", &e);
    ir_set_attr_int(&g, c, "axis", 0, &e);
    ir_add_op(&g, "Reshape", "reshape", "x,shp", "r", &e);
    ir_add_op(&g, "Dropout", "drop", "r", "r2", &e);
    ir_add_op(&g, "Identity", "id", "r2", "y", &e);
    ir_add_output(&g, "y", &e);
    REQUIRE(ir_infer_shapes(&g, &e) == 0);
    CHECK_EQ_INT(g.t[ir_find(&g, "r")].ndim, 2);
    CHECK_EQ_INT(g.t[ir_find(&g, "r")].dims[1], -1); /* not known before the batch is */
    IrInputShape s;
    REQUIRE(ir_parse_input_shape("x=3x2x3x4", &s, &e) == 0);
    REQUIRE(ir_apply_input_shapes(&g, &s, 1, &e) == 0);
    float xv[72];
    fill(xv, 72, 5);
    IrTensor in = {.name = "x", .dtype = IR_F32, .ndim = 4, .dims = {3, 2, 3, 4}, .data = xv};
    check_same(&g, &in, 1, pass_fold_constants);
    CHECK_EQ_INT(count_op(&g, "Shape") + count_op(&g, "Gather") + count_op(&g, "Concat"), 0);
    int r = ir_find(&g, "r");
    CHECK_EQ_INT(g.t[r].dims[0], 3);
    CHECK_EQ_INT(g.t[r].dims[1], 24);
    check_same(&g, &in, 1, pass_remove_identity);
    CHECK_EQ_INT(count_op(&g, "Identity") + count_op(&g, "Dropout"), 0);
    CHECK_EQ_INT(g.t[ir_find(&g, "y")].producer, 0); /* Reshape now writes the graph output */
    check_same(&g, &in, 1, pass_mark_views);
    CHECK(g.t[ir_find(&g, "y")].is_view);
    ir_free(&g);
}

/* Size and EyeLike, like Shape, fold once their input's shape is known */
TEST(pass_fold_size_eyelike)
{
    IrGraph g;
    ir_init(&g);
    g.opset = 13;
    int64_t xd[3] = {2, 3, 5}, md[2] = {3, 4};
    ir_add_input(&g, "x", IR_F32, 3, xd, &e);
    ir_add_input(&g, "m", IR_I32, 2, md, &e);
    ir_add_op(&g, "Size", "size", "x", "n", &e);
    int ey = ir_add_op(&g, "EyeLike", "eye", "m", "i", &e);
    ir_set_attr_int(&g, ey, "k", 1, &e);
    ir_add_output(&g, "n", &e);
    ir_add_output(&g, "i", &e);
    REQUIRE(ir_infer_shapes(&g, &e) == 0);
    REQUIRE(pass_fold_constants(&g, &e) == 0);
    CHECK_EQ_INT(count_op(&g, "Size") + count_op(&g, "EyeLike"), 0);
    const IrTensor *n = &g.t[ir_find(&g, "n")], *i = &g.t[ir_find(&g, "i")];
    REQUIRE(n->data != NULL && i->data != NULL);
    CHECK_EQ_INT(((const int64_t *)n->data)[0], 30);
    CHECK_EQ_INT(i->dtype, IR_I32);
    static const int32_t want[12] = {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    for (int k = 0; k < 12; k++) CHECK_EQ_INT(((const int32_t *)i->data)[k], want[k]);
    ir_free(&g);
}

TEST(pass_pipeline_dead_code)
{
    IrGraph g;
    build_conv_bn(&g, 0);
    ir_add_op(&g, "Sigmoid", "unused", "c", "dangling", &e);
    float xv[180];
    fill(xv, 180, 9);
    IrTensor in = {.name = "x", .dtype = IR_F32, .ndim = 4, .dims = {2, 3, 6, 5}, .data = xv};
    check_same(&g, &in, 1, pass_run_all);
    CHECK_EQ_INT(count_op(&g, "Sigmoid"), 0);
    ir_free(&g);
}

/* Pads (passes/padfold.c): x -> Pad (zeros: H 1 + 1, W 2 + 0) -> 3x3 conv
 * "c0" (pads 0) -> a; a -> Pad of nothing (reflect) -> Relu -> y0 (kept:
 * no conv reads it); x -> Pad of value 1 -> 3x3 conv "c1" -> y1 (kept: not
 * zeros); x -> Pad of 3 rows -> 3x3 conv "c2" -> y2 (kept: 3 > the
 * kernel's 2); x -> the first Pad's pads -> VALID conv "c3" -> y3 (folded,
 * NOTSET); x -> Pad of 64 rows -> 3x1 conv of dilation 33 "c4" -> y4
 * (kept: 64 is within the dilated extent 66 but over the instruction's
 * 6-bit pad field). The first and fourth Pads go, c0's and c3's pads
 * become [1, 2, 1, 0]; the outputs are the interpreter's before the
 * pass. */
TEST(pass_fold_pad_into_conv)
{
    IrGraph g;
    ir_init(&g);
    g.opset = 13;
    int64_t xd[4] = {1, 3, 7, 6}, wd[4] = {4, 3, 3, 3}, eight = 8;
    int64_t p0[8] = {0, 0, 1, 2, 0, 0, 1, 0}, pz[8] = {0}, p2[8] = {0, 0, 3, 0, 0, 0, 0, 0};
    int64_t p4[8] = {0, 0, 64, 0, 0, 0, 0, 0}, w4d[4] = {4, 3, 3, 1}, dil4[2] = {33, 1};
    float w[108], one = 1;
    fill(w, 108, 21);
    ir_add_input(&g, "x", IR_F32, 4, xd, &e);
    ir_add_const(&g, "w", IR_F32, 4, wd, w, &e);
    ir_add_const(&g, "p0", IR_I64, 1, &eight, p0, &e);
    ir_add_const(&g, "pz", IR_I64, 1, &eight, pz, &e);
    ir_add_const(&g, "p2", IR_I64, 1, &eight, p2, &e);
    ir_add_const(&g, "one", IR_F32, 0, NULL, &one, &e);
    ir_add_op(&g, "Pad", "pad0", "x,p0", "xp", &e);
    static const int64_t no_pads[4] = {0, 0, 0, 0};   /* as exporters write them: the fold replaces them */
    ir_set_attr_ints(&g, ir_add_op(&g, "Conv", "c0", "xp,w", "a", &e), "pads", no_pads, 4, &e);
    int n = ir_add_op(&g, "Pad", "padz", "a,pz", "az", &e);
    ir_set_attr_str(&g, n, "mode", "reflect", &e);
    ir_add_op(&g, "Relu", "relu", "az", "y0", &e);
    ir_add_op(&g, "Pad", "pad1", "x,p0,one", "x1", &e);
    ir_add_op(&g, "Conv", "c1", "x1,w", "y1", &e);
    ir_add_op(&g, "Pad", "pad2", "x,p2", "x2", &e);
    ir_add_op(&g, "Conv", "c2", "x2,w", "y2", &e);
    ir_add_op(&g, "Pad", "pad3", "x,p0", "x3", &e);
    ir_set_attr_str(&g, ir_add_op(&g, "Conv", "c3", "x3,w", "y3", &e), "auto_pad", "VALID", &e);
    ir_add_const(&g, "w4", IR_F32, 4, w4d, w, &e);
    ir_add_const(&g, "p4", IR_I64, 1, &eight, p4, &e);
    ir_add_op(&g, "Pad", "pad4", "x,p4", "x4", &e);
    ir_set_attr_ints(&g, ir_add_op(&g, "Conv", "c4", "x4,w4", "y4", &e), "dilations", dil4, 2, &e);
    ir_add_output(&g, "y0", &e);
    ir_add_output(&g, "y1", &e);
    ir_add_output(&g, "y2", &e);
    ir_add_output(&g, "y3", &e);
    ir_add_output(&g, "y4", &e);
    float xv[126];
    fill(xv, 126, 22);
    IrTensor in = {.name = "x", .dtype = IR_F32, .ndim = 4, .dims = {1, 3, 7, 6}, .data = xv};
    check_same(&g, &in, 1, pass_run_all);
    CHECK_EQ_INT(count_op(&g, "Pad"), 4);
    int folded = 0;
    for (int i = 0; i < g.nn; i++) {
        const IrNode *c = &g.nodes[i];
        if (c->dead || strcmp(c->op, "Conv")) continue;
        if (!strcmp(c->name, "c4")) CHECK(strcmp(g.t[c->in[0]].name, "x"));
        if (strcmp(c->name, "c0") && strcmp(c->name, "c3")) continue;
        const IrAttr *a = ir_attr(c, "pads");
        static const int64_t want[4] = {1, 2, 1, 0};
        REQUIRE(a && a->n == 4);
        for (int k = 0; k < 4; k++) CHECK_EQ_INT((int)a->ints[k], (int)want[k]);
        CHECK(!strcmp(g.t[c->in[0]].name, "x"));
        CHECK(!strcmp(ir_attr_str(c, "auto_pad", "NOTSET"), "NOTSET"));
        folded++;
    }
    CHECK_EQ_INT(folded, 2);
    ir_free(&g);
}

/* Resize at opset 18: axes + keep_aspect_ratio_policy, hand computed */
TEST(resize_opset18_axes_policy)
{
    IrGraph g;
    ir_init(&g);
    g.opset = 18;
    int64_t xd[4] = {1, 1, 2, 2}, two[1] = {2}, sizes[2] = {4, 6}, axes[2] = {2, 3};
    ir_add_input(&g, "x", IR_F32, 4, xd, &e);
    ir_add_const(&g, "sizes", IR_I64, 1, two, sizes, &e);
    int n = ir_add_op(&g, "Resize", "rs", "x,,,sizes", "y", &e);
    REQUIRE(n >= 0);
    ir_set_attr_ints(&g, n, "axes", axes, 2, &e);
    ir_set_attr_str(&g, n, "keep_aspect_ratio_policy", "not_larger", &e);
    ir_set_attr_str(&g, n, "coordinate_transformation_mode", "asymmetric", &e);
    ir_set_attr_str(&g, n, "nearest_mode", "floor", &e);
    ir_add_output(&g, "y", &e);
    REQUIRE(ir_infer_shapes(&g, &e) == 0);
    int y = ir_find(&g, "y");
    CHECK_EQ_INT(g.t[y].dims[2], 4);
    CHECK_EQ_INT(g.t[y].dims[3], 4);
    float xv[4] = {1, 2, 3, 4};
    IrTensor in = {.name = "x", .dtype = IR_F32, .ndim = 4, .dims = {1, 1, 2, 2}, .data = xv};
    IrTensor *out;
    REQUIRE(run1(&g, &in, 1, &out) == 0);
    const float want[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
    for (int i = 0; i < 16; i++) CHECK_NEAR(((float *)out[0].data)[i], want[i], 0);
    interp_free_outputs(out, 1);
    ir_set_attr_int(&g, n, "antialias", 1, &e);
    CHECK(ir_infer_shapes(&g, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "node 'rs' (Resize): antialias=1 is not supported");
    ir_free(&g);
}

/* the supported-op list in error messages names exactly the table's ops */
TEST(op_names_match_table)
{
    int n;
    const IrOpDef *t = ir_op_table(&n);
    const char *names = ir_op_names();
    int words = 0;
    for (const char *p = names; *p; p++) if (*p != ' ' && (p == names || p[-1] == ' ')) words++;
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        char pat[80];
        snprintf(pat, sizeof pat, " %s ", t[i].name);
        char padded[4096];
        snprintf(padded, sizeof padded, " %s ", names);
        CHECKF(strstr(padded, pat) != NULL, "%s missing from ir_op_names()", t[i].name);
        int first = 1;
        for (int j = 0; j < i; j++) if (!strcmp(t[j].name, t[i].name)) first = 0;
        distinct += first;
    }
    CHECK_EQ_INT(words, distinct);
}

int main(void)
{
    RUN(op_names_match_table);
    RUN(resize_opset18_axes_policy);
    RUN(toposort_and_cycles);
    RUN(printer);
    RUN(input_shape_fixing);
    RUN(unsupported_op_message);
    RUN(batch_override);
    RUN(batch_follow);
    RUN(float_attr_where_int_belongs);
    RUN(interp_conv_by_hand);
    RUN(pass_bnfold_conv_and_gemm);
    RUN(pass_fold_shape_chain);
    RUN(pass_fold_size_eyelike);
    RUN(pass_pipeline_dead_code);
    RUN(pass_fold_pad_into_conv);
    return test_summary("test_graph");
}
