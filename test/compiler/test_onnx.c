/* test_onnx.c - the ONNX decoder: round trips through the writer, typed and
 * raw tensor data, external data, and malformed input of every kind (each
 * error names the byte offset and field; no input crashes). */
#include "test/test.h"
#include "compiler/onnx/onnx.h"
#include "compiler/ops/infer.h"
#include "compiler/ops/ops.h"
#include "util/file.h"
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

static int build_model(IrGraph *g)
{
    AtlErr e;
    ir_init(g);
    g->opset = 13;
    int64_t xd[4] = {1, 2, 4, 4}, wd[4] = {3, 2, 1, 1}, bd[1] = {3};
    float w[6] = {1, 2, 3, 4, 5, 6}, b[3] = {0.5f, -1, 2};
    if (ir_add_input(g, "x", IR_F32, 4, xd, &e) < 0) return -1;
    if (ir_add_const(g, "w", IR_F32, 4, wd, w, &e) < 0 || ir_add_const(g, "b", IR_F32, 1, bd, b, &e) < 0) return -1;
    int n = ir_add_op(g, "Conv", "conv", "x,w,b", "c", &e);
    int64_t pads[4] = {0, 0, 0, 0};
    if (n < 0 || ir_set_attr_ints(g, n, "pads", pads, 4, &e) || ir_set_attr_int(g, n, "group", 1, &e)) return -1;
    n = ir_add_op(g, "LeakyRelu", "lrelu", "c", "y", &e);
    if (n < 0 || ir_set_attr_float(g, n, "alpha", 0.25f, &e) || ir_set_attr_str(g, n, "note", "hi", &e)) return -1;
    return ir_add_output(g, "y", &e) < 0 ? -1 : 0;
}

TEST(round_trip)
{
    IrGraph g, h;
    AtlErr e = {{0}};
    REQUIRE(build_model(&g) == 0);
    PbBuf b;
    REQUIRE(onnx_save_buffer(&g, &b, &e) == 0);
    REQUIRE(onnx_load_buffer(b.p, b.n, "rt.onnx", &h, &e) == 0);
    CHECK_EQ_INT(h.opset, 13);
    CHECK_EQ_INT(h.nn, 2);
    CHECK_EQ_INT(h.nin, 1);
    CHECK_EQ_INT(h.nout, 1);
    CHECK(!strcmp(h.nodes[0].op, "Conv"));
    CHECK(!strcmp(h.nodes[1].name, "lrelu"));
    CHECK_NEAR(ir_attr_float(&h.nodes[1], "alpha", 0), 0.25, 0);
    CHECK(!strcmp(ir_attr_str(&h.nodes[1], "note", ""), "hi"));
    const IrAttr *p = ir_attr(&h.nodes[0], "pads");
    REQUIRE(p && p->type == IR_ATTR_INTS);
    CHECK_EQ_INT(p->n, 4);
    int w = ir_find(&h, "w");
    REQUIRE(w >= 0 && h.t[w].data);
    CHECK_EQ_INT(h.t[w].ndim, 4);
    CHECK_NEAR(((float *)h.t[w].data)[5], 6, 0);
    int x = h.inputs[0];
    CHECK_EQ_INT(h.t[x].dims[2], 4);
    pb_free(&b);
    ir_free(&g);
    ir_free(&h);
}

/* every prefix of a valid model either loads or fails with a byte offset */
TEST(every_truncation_is_handled)
{
    IrGraph g, h;
    AtlErr e = {{0}};
    REQUIRE(build_model(&g) == 0);
    PbBuf b;
    REQUIRE(onnx_save_buffer(&g, &b, &e) == 0);
    int failures = 0;
    for (size_t n = 0; n < b.n; n++) {
        if (onnx_load_buffer(b.p, n, "cut.onnx", &h, &e)) {
            failures++;
            CHECKF(strstr(e.msg, "byte ") || strstr(e.msg, "no graph"), "prefix %zu: %s", n, e.msg);
        }
        ir_free(&h);
    }
    CHECK(failures > (int)b.n / 2);
    /* and every single-byte corruption is handled without a crash */
    for (size_t i = 0; i < b.n; i++) {
        uint8_t old = b.p[i];
        b.p[i] = (uint8_t)(old ^ 0xa5);
        if (onnx_load_buffer(b.p, b.n, "flip.onnx", &h, &e)) CHECK(e.msg[0] != 0);
        ir_free(&h);
        b.p[i] = old;
    }
    pb_free(&b);
    ir_free(&g);
}

static void expect_err(const uint8_t *buf, size_t n, const char *a, const char *b)
{
    IrGraph h;
    AtlErr e = {{0}};
    CHECK(onnx_load_buffer(buf, n, "bad.onnx", &h, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, a);
    if (b) CHECK_STR_CONTAINS(e.msg, b);
    ir_free(&h);
}

TEST(malformed_wire_format)
{
    expect_err((const uint8_t *)"\x08\xff", 2, "byte 1", "truncated varint");
    expect_err((const uint8_t *)"\x3a\x10\x01", 3, "length 16 runs past the end", "byte 0");
    expect_err((const uint8_t *)"\x38\x01", 2, "graph (field 7)", "wrong wire type varint, expected length-delimited");
    expect_err((const uint8_t *)"\x0b\x00", 2, "group wire type", NULL);
    expect_err((const uint8_t *)"\x0e\x00", 2, "invalid wire type", NULL);
    expect_err((const uint8_t *)"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12, "varint longer than 10 bytes", NULL);
    expect_err((const uint8_t *)"\x08\x01", 2, "no graph", NULL);
    expect_err((const uint8_t *)"\x15\x01\x02", 3, "truncated fixed32", NULL);
}

/* wraps a TensorProto body as the only initializer of a graph */
static void model_with_initializer(PbBuf *m, PbBuf *tensor)
{
    PbBuf g = {0};
    pb_put_bytes(&g, 5, tensor->p, tensor->n);
    memset(m, 0, sizeof *m);
    pb_put_bytes(m, 7, g.p, g.n);
    pb_free(&g);
}

TEST(tensor_data_forms)
{
    IrGraph h;
    AtlErr e = {{0}};
    PbBuf t = {0}, m, packed = {0};
    /* float_data unpacked, int32 dims */
    pb_put_uint(&t, 1, 2);
    pb_put_uint(&t, 2, IR_F32);
    pb_put_str(&t, 8, "f");
    pb_put_float(&t, 4, 1.5f);
    pb_put_float(&t, 4, -2.0f);
    model_with_initializer(&m, &t);
    REQUIRE(onnx_load_buffer(m.p, m.n, "t.onnx", &h, &e) == 0);
    int k = ir_find(&h, "f");
    REQUIRE(k >= 0);
    CHECK_NEAR(((float *)h.t[k].data)[1], -2.0, 0);
    ir_free(&h); pb_free(&m); pb_free(&t);
    /* int64_data packed, with negative values */
    pb_put_uint(&t, 1, 3);
    pb_put_uint(&t, 2, IR_I64);
    pb_put_str(&t, 8, "i");
    pb_put_varint(&packed, (uint64_t)-5);
    pb_put_varint(&packed, 7);
    pb_put_varint(&packed, (uint64_t)1 << 40);
    pb_put_bytes(&t, 7, packed.p, packed.n);
    model_with_initializer(&m, &t);
    REQUIRE(onnx_load_buffer(m.p, m.n, "t.onnx", &h, &e) == 0);
    k = ir_find(&h, "i");
    CHECK_EQ_INT(((int64_t *)h.t[k].data)[0], -5);
    CHECK_EQ_INT(((int64_t *)h.t[k].data)[2], (int64_t)1 << 40);
    ir_free(&h); pb_free(&m); pb_free(&t); pb_free(&packed);
    /* bool in int32_data */
    pb_put_uint(&t, 1, 2);
    pb_put_uint(&t, 2, IR_BOOL);
    pb_put_str(&t, 8, "b");
    pb_put_uint(&t, 5, 1);
    pb_put_uint(&t, 5, 0);
    model_with_initializer(&m, &t);
    REQUIRE(onnx_load_buffer(m.p, m.n, "t.onnx", &h, &e) == 0);
    k = ir_find(&h, "b");
    CHECK_EQ_INT(((uint8_t *)h.t[k].data)[0], 1);
    CHECK_EQ_INT(((uint8_t *)h.t[k].data)[1], 0);
    ir_free(&h); pb_free(&m); pb_free(&t);
}

TEST(tensor_errors)
{
    PbBuf t = {0}, m;
    /* value count does not match dims */
    pb_put_uint(&t, 1, 3);
    pb_put_uint(&t, 2, IR_F32);
    pb_put_str(&t, 8, "short");
    pb_put_float(&t, 4, 1.0f);
    model_with_initializer(&m, &t);
    expect_err(m.p, m.n, "tensor 'short' has 1 values, dims need 3", "TensorProto");
    pb_free(&m); pb_free(&t);
    /* raw_data size mismatch */
    pb_put_uint(&t, 1, 2);
    pb_put_uint(&t, 2, IR_F32);
    pb_put_str(&t, 8, "raw");
    pb_put_bytes(&t, 9, "abc", 3);
    model_with_initializer(&m, &t);
    expect_err(m.p, m.n, "raw_data has 3 bytes, dims need 8", "raw_data (field 9)");
    pb_free(&m); pb_free(&t);
    /* absurd sizes */
    pb_put_uint(&t, 1, (uint64_t)1 << 40);
    pb_put_uint(&t, 1, (uint64_t)1 << 40);
    pb_put_uint(&t, 2, IR_F32);
    model_with_initializer(&m, &t);
    expect_err(m.p, m.n, "too many elements", NULL);
    pb_free(&m); pb_free(&t);
    /* negative dim */
    pb_put_uint(&t, 1, (uint64_t)-3);
    pb_put_uint(&t, 2, IR_F32);
    model_with_initializer(&m, &t);
    expect_err(m.p, m.n, "negative dimension", NULL);
    pb_free(&m); pb_free(&t);
    /* unsupported dtype */
    pb_put_uint(&t, 2, IR_STRING);
    pb_put_str(&t, 8, "s");
    model_with_initializer(&m, &t);
    expect_err(m.p, m.n, "data type 8 is not supported", NULL);
    pb_free(&m); pb_free(&t);
    /* more than 8 dims */
    for (int i = 0; i < 9; i++) pb_put_uint(&t, 1, 1);
    pb_put_uint(&t, 2, IR_F32);
    model_with_initializer(&m, &t);
    expect_err(m.p, m.n, "more than 8 dimensions", NULL);
    pb_free(&m); pb_free(&t);
}

static void put_ext(PbBuf *t, const char *k, const char *v)
{
    PbBuf s = {0};
    pb_put_str(&s, 1, k);
    pb_put_str(&s, 2, v);
    pb_put_bytes(t, 13, s.p, s.n);
    pb_free(&s);
}

TEST(external_data)
{
    char dir[128], path[256], bin[256];
    snprintf(dir, sizeof dir, "/tmp/atoll_onnx_%d", (int)getpid());
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/m.onnx", dir);
    snprintf(bin, sizeof bin, "%s/w.bin", dir);
    float w[4] = {9, 8, 7, 6};
    unsigned char file[20] = {0};
    memcpy(file + 4, w, 16);
    AtlErr e = {{0}};
    REQUIRE(atl_write_file_atomic(bin, file, 20, &e) == 0);
    PbBuf t = {0}, m;
    pb_put_uint(&t, 1, 4);
    pb_put_uint(&t, 2, IR_F32);
    pb_put_str(&t, 8, "w");
    put_ext(&t, "location", "w.bin");
    put_ext(&t, "offset", "4");
    pb_put_uint(&t, 14, 1);
    model_with_initializer(&m, &t);
    REQUIRE(atl_write_file_atomic(path, m.p, m.n, &e) == 0);
    IrGraph h;
    REQUIRE(onnx_load_file(path, &h, &e) == 0);
    int k = ir_find(&h, "w");
    REQUIRE(k >= 0 && h.t[k].data);
    CHECK_NEAR(((float *)h.t[k].data)[3], 6, 0);
    ir_free(&h);
    /* without a file path there is no base directory */
    CHECK(onnx_load_buffer(m.p, m.n, NULL, &h, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "external data needs a model file path");
    ir_free(&h);
    pb_free(&m); pb_free(&t);
    /* escaping the model directory, missing file, short file */
    const char *locs[3] = {"../etc/passwd", "missing.bin", "w.bin"};
    const char *want[3] = {"without '..'", "cannot open", "fewer than"};
    for (int i = 0; i < 3; i++) {
        pb_put_uint(&t, 1, i == 2 ? 100 : 4);
        pb_put_uint(&t, 2, IR_F32);
        pb_put_str(&t, 8, "w");
        put_ext(&t, "location", locs[i]);
        model_with_initializer(&m, &t);
        REQUIRE(atl_write_file_atomic(path, m.p, m.n, &e) == 0);
        CHECK(onnx_load_file(path, &h, &e) == -1);
        CHECK_STR_CONTAINS(e.msg, want[i]);
        ir_free(&h);
        pb_free(&m); pb_free(&t);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {}
}

/* A chain of 60 nodes: Relu, then 30 ops Atoll lacks (Fancy0..Fancy29)
 * used twice each under long names, so that the list passes 1 KB. */
static int build_unsupported(IrGraph *g)
{
    AtlErr e;
    ir_init(g);
    g->opset = 13;
    int64_t xd[2] = {1, 4};
    if (ir_add_input(g, "x", IR_F32, 2, xd, &e) < 0 || ir_add_op(g, "Relu", "relu", "x", "t0", &e) < 0) return -1;
    for (int i = 0; i < 60; i++) {
        char op[32], name[96], in[16], out[16];
        snprintf(op, sizeof op, "Fancy%d", i % 30);
        snprintf(name, sizeof name, "/encoder/layers.%d/self_attn/fancy_projection_%d", i, i);
        snprintf(in, sizeof in, "t%d", i);
        snprintf(out, sizeof out, "t%d", i + 1);
        if (ir_add_op(g, op, name, in, out, &e) < 0) return -1;
    }
    return ir_add_output(g, "t60", &e) < 0 ? -1 : 0;
}

TEST(unsupported_ops_listed_in_full)
{
    IrGraph g;
    AtlErr e = {{0}};
    REQUIRE(build_unsupported(&g) == 0);
    REQUIRE(ir_toposort(&g, &e) == 0);
    CHECK(ir_infer_shapes(&g, &e) == -1);
    /* the message counts them and lists whole lines, never cut mid-word */
    CHECK_STR_CONTAINS(e.msg, "60 nodes use 30 ops that Atoll does not support:");
    CHECK_STR_CONTAINS(e.msg, "  op 'Fancy0' (opset 13) is not supported (not in the op table): 2 nodes: "
                              "'/encoder/layers.0/self_attn/fancy_projection_0', '/encoder/layers.30/self_attn/fancy_projection_30'");
    CHECK_STR_CONTAINS(e.msg, "more ops");
    CHECK(!strstr(e.msg, "Relu"));
    const char *last = strrchr(e.msg, '\n');
    CHECK(last && !strncmp(last, "\n  ... and ", 11));
    int nops = 0, nnodes = 0;
    char *rep = ir_unsupported_report(&g, &nops, &nnodes);
    REQUIRE(rep);
    CHECK_EQ_INT(nops, 30);
    CHECK_EQ_INT(nnodes, 60);
    CHECK(strlen(rep) > ATL_ERRLEN);
    CHECK_STR_CONTAINS(rep, "  op 'Fancy29' (opset 13) is not supported (not in the op table): 2 nodes: "
                            "'/encoder/layers.29/self_attn/fancy_projection_29', '/encoder/layers.59/self_attn/fancy_projection_59'\n");
    int lines = 0;
    for (const char *p = rep; (p = strchr(p, '\n')); p++) lines++;
    CHECK_EQ_INT(lines, 30);
    free(rep);
    ir_free(&g);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write-unsupported")) { /* for test/cli/onnx.sh */
        IrGraph g;
        AtlErr e;
        int rc = build_unsupported(&g) || onnx_save_file(&g, argv[2], &e);
        ir_free(&g);
        return rc;
    }
    RUN(round_trip);
    RUN(every_truncation_is_handled);
    RUN(malformed_wire_format);
    RUN(tensor_data_forms);
    RUN(tensor_errors);
    RUN(external_data);
    RUN(unsupported_ops_listed_in_full);
    return test_summary("test_onnx");
}
