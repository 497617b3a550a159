/* bench_onnx.c - ONNX import speed on a ResNet-50-sized model, generated
 * here (no download): the ResNet-50 v1.5 topology (53 Conv + BatchNorm,
 * 16 bottleneck blocks, Gemm 2048->1000, ~25.6 M parameters, ~102 MB of
 * float32 weights) is built in the IR, written as a real ONNX protobuf to a
 * temporary file, and then timed: decode, toposort + verify + shape
 * inference, the canonicalisation passes, and one batch-1 224x224 inference
 * on the reference interpreter. Target: import + shape inference < 1 s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <math.h>
#include "compiler/onnx/onnx.h"
#include "compiler/ops/infer.h"
#include "compiler/interp/interp.h"
#include "compiler/passes/passes.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct Gen { IrGraph *g; AtlErr *e; unsigned seed; int n; int64_t params; } Gen;

static float rnd(Gen *s)
{
    s->seed = s->seed * 1664525u + 1013904223u;
    return (float)((s->seed >> 9) & 0xffff) / 32768.0f - 1.0f;
}

/* conv + BN (+ Relu); returns the output tensor name in out */
static int conv_bn(Gen *s, const char *in, int cin, int cout, int k, int stride, int relu, char *out)
{
    char w[64], b[5][64], c[64], node[64], bn[64];
    int id = s->n++;
    snprintf(w, sizeof w, "conv%d.w", id);
    int64_t wd[4] = {cout, cin, k, k};
    if (ir_add_const(s->g, w, IR_F32, 4, wd, NULL, s->e) < 0) return -1;
    float *W = s->g->t[ir_find(s->g, w)].data;
    float sc = sqrtf(2.0f / (float)(cin * k * k));
    for (int64_t i = 0; i < (int64_t)cout * cin * k * k; i++) W[i] = rnd(s) * sc;
    s->params += (int64_t)cout * cin * k * k;
    const char *names[4] = {"scale", "bias", "mean", "var"};
    int64_t cd[1] = {cout};
    for (int j = 0; j < 4; j++) {
        snprintf(b[j], sizeof b[j], "bn%d.%s", id, names[j]);
        if (ir_add_const(s->g, b[j], IR_F32, 1, cd, NULL, s->e) < 0) return -1;
        float *p = s->g->t[ir_find(s->g, b[j])].data;
        for (int i = 0; i < cout; i++) p[i] = j == 0 ? 1.0f + 0.1f * rnd(s) : j == 3 ? 1.0f + 0.1f * rnd(s) * rnd(s) : 0.1f * rnd(s);
        s->params += cout;
    }
    snprintf(c, sizeof c, "conv%d.out", id);
    snprintf(node, sizeof node, "conv%d", id);
    char ins[200];
    snprintf(ins, sizeof ins, "%s,%s", in, w);
    int n = ir_add_op(s->g, "Conv", node, ins, c, s->e);
    int64_t st[2] = {stride, stride}, ks[2] = {k, k}, p = k / 2, pads[4] = {p, p, p, p};
    if (n < 0 || ir_set_attr_ints(s->g, n, "strides", st, 2, s->e) || ir_set_attr_ints(s->g, n, "kernel_shape", ks, 2, s->e) ||
        ir_set_attr_ints(s->g, n, "pads", pads, 4, s->e)) return -1;
    snprintf(bn, sizeof bn, "bn%d.out", id);
    snprintf(node, sizeof node, "bn%d", id);
    snprintf(ins, sizeof ins, "%s,%s,%s,%s,%s", c, b[0], b[1], b[2], b[3]);
    if (ir_add_op(s->g, "BatchNormalization", node, ins, bn, s->e) < 0) return -1;
    if (!relu) { strcpy(out, bn); return 0; }
    snprintf(out, 64, "relu%d.out", id);
    snprintf(node, sizeof node, "relu%d", id);
    return ir_add_op(s->g, "Relu", node, bn, out, s->e) < 0 ? -1 : 0;
}

static int build_resnet50(IrGraph *g, AtlErr *e, int64_t *params)
{
    Gen s = {g, e, 12345u, 0, 0};
    ir_init(g);
    g->opset = 13;
    g->name = ir_strdup("resnet50_synthetic");
    int64_t xd[4] = {-1, 3, 224, 224};
    if (ir_add_input(g, "data", IR_F32, 4, xd, e) < 0) return -1;
    char cur[64], t1[64], t2[64], t3[64], sc[64], name[64], ins[160];
    if (conv_bn(&s, "data", 3, 64, 7, 2, 1, cur)) return -1;
    int n = ir_add_op(g, "MaxPool", "pool1", cur, "pool1.out", e);
    int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, p1[4] = {1, 1, 1, 1};
    if (n < 0 || ir_set_attr_ints(g, n, "kernel_shape", k3, 2, e) || ir_set_attr_ints(g, n, "strides", s2, 2, e) ||
        ir_set_attr_ints(g, n, "pads", p1, 4, e)) return -1;
    strcpy(cur, "pool1.out");
    int blocks[4] = {3, 4, 6, 3}, width[4] = {64, 128, 256, 512}, cin = 64;
    for (int st = 0; st < 4; st++)
        for (int b = 0; b < blocks[st]; b++) {
            int w = width[st], stride = (b == 0 && st > 0) ? 2 : 1;
            if (conv_bn(&s, cur, cin, w, 1, 1, 1, t1) || conv_bn(&s, t1, w, w, 3, stride, 1, t2) ||
                conv_bn(&s, t2, w, 4 * w, 1, 1, 0, t3)) return -1;
            if (b == 0) { if (conv_bn(&s, cur, cin, 4 * w, 1, stride, 0, sc)) return -1; }
            else strcpy(sc, cur);
            snprintf(name, sizeof name, "add%d_%d", st, b);
            snprintf(ins, sizeof ins, "%s,%s", t3, sc);
            char sum[64], rl[64];
            snprintf(sum, sizeof sum, "%s.out", name);
            if (ir_add_op(g, "Add", name, ins, sum, e) < 0) return -1;
            snprintf(rl, sizeof rl, "%s.relu", name);
            if (ir_add_op(g, "Relu", rl, sum, rl, e) < 0) return -1;
            strcpy(cur, rl);
            cin = 4 * w;
        }
    if (ir_add_op(g, "GlobalAveragePool", "gap", cur, "gap.out", e) < 0) return -1;
    if (ir_add_op(g, "Flatten", "flatten", "gap.out", "flat", e) < 0) return -1;
    int64_t fw[2] = {1000, 2048}, fb[1] = {1000};
    if (ir_add_const(g, "fc.w", IR_F32, 2, fw, NULL, e) < 0 || ir_add_const(g, "fc.b", IR_F32, 1, fb, NULL, e) < 0) return -1;
    float *W = g->t[ir_find(g, "fc.w")].data;
    for (int i = 0; i < 2048000; i++) W[i] = rnd(&s) * 0.03f;
    s.params += 2049000;
    n = ir_add_op(g, "Gemm", "fc", "flat,fc.w,fc.b", "logits", e);
    if (n < 0 || ir_set_attr_int(g, n, "transB", 1, e)) return -1;
    if (ir_add_op(g, "Softmax", "prob", "logits", "prob", e) < 0) return -1;
    *params = s.params;
    return ir_add_output(g, "prob", e) < 0 ? -1 : 0;
}

int main(void)
{
    AtlErr e = {{0}};
    IrGraph g, h;
    int64_t params;
    char path[256];
    snprintf(path, sizeof path, "/tmp/atoll_bench_resnet50_%d.onnx", (int)getpid());
    double t0 = now();
    if (build_resnet50(&g, &e, &params) || onnx_save_file(&g, path, &e)) { fprintf(stderr, "bench_onnx: %s\n", e.msg); return 1; }
    double t_gen = now() - t0;
    FILE *fp = fopen(path, "rb");
    long size = 0;
    if (fp) { fseek(fp, 0, SEEK_END); size = ftell(fp); fclose(fp); }
    int nodes_before = g.nn;
    ir_free(&g);

    double best_load = 1e9, best_infer = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        t0 = now();
        if (onnx_load_file(path, &h, &e)) { fprintf(stderr, "bench_onnx: %s\n", e.msg); unlink(path); return 1; }
        double t1 = now();
        IrInputShape shp;
        if (ir_toposort(&h, &e) || ir_verify(&h, &e) || ir_parse_input_shape("data=1x3x224x224", &shp, &e) ||
            ir_apply_input_shapes(&h, &shp, 1, &e) || ir_infer_shapes(&h, &e)) {
            fprintf(stderr, "bench_onnx: %s\n", e.msg); unlink(path); return 1;
        }
        double t2 = now();
        if (t1 - t0 < best_load) best_load = t1 - t0;
        if (t2 - t1 < best_infer) best_infer = t2 - t1;
        if (rep < 2) ir_free(&h);
    }
    t0 = now();
    if (pass_run_all(&h, &e)) { fprintf(stderr, "bench_onnx: %s\n", e.msg); unlink(path); return 1; }
    double t_pass = now() - t0;
    int convs = 0;
    for (int i = 0; i < h.nn; i++) convs += !strcmp(h.nodes[i].op, "Conv");

    IrTensor in = {.name = "data", .dtype = IR_F32, .ndim = 4, .dims = {1, 3, 224, 224}};
    in.data = malloc(sizeof(float) * 3 * 224 * 224);
    for (int i = 0; i < 3 * 224 * 224; i++) ((float *)in.data)[i] = (float)((i * 7919) % 255) / 255.0f;
    IrTensor *out = NULL;
    t0 = now();
    int rc = interp_run(&h, &in, 1, &out, &e);
    double t_run = now() - t0;
    if (rc) { fprintf(stderr, "bench_onnx: %s\n", e.msg); unlink(path); return 1; }
    printf("bench_onnx: synthetic ResNet-50 (%lld parameters, %.1f MB file, %d nodes -> %d after passes, %d Conv)\n",
           (long long)params, size / 1e6, nodes_before, h.nn, convs);
    printf("  %-42s %10s\n", "step", "time");
    printf("  %-42s %8.3f s\n", "generate + write model (not timed target)", t_gen);
    printf("  %-42s %8.3f s\n", "decode ONNX (best of 3)", best_load);
    printf("  %-42s %8.4f s\n", "toposort + verify + shape inference", best_infer);
    printf("  %-42s %8.3f s  %s\n", "import + shape inference", best_load + best_infer,
           best_load + best_infer < 1.0 ? "(target < 1 s: met)" : "(target < 1 s: MISSED)");
    printf("  %-42s %8.3f s\n", "canonicalisation passes (BN fold etc.)", t_pass);
    printf("  %-42s %8.3f s  (%.1f GFLOP/s)\n", "interpret batch 1, 224x224", t_run, 2 * 4.1e9 / t_run / 1e9);
    interp_free_outputs(out, h.nout);
    free(in.data);
    ir_free(&h);
    unlink(path);
    return 0;
}
