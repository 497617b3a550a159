/* export.c - protobuf writing helpers and IR -> ONNX ModelProto
 * serialisation (see onnx/onnx.h). Used to build test models, fuzz seeds and the
 * synthetic benchmark model without any external tool. Nested messages are
 * built in their own buffer and then appended length-prefixed. */
#include "compiler/onnx/onnx.h"
#include "util/file.h"
#include <stdlib.h>
#include <string.h>

static void pb_reserve(PbBuf *b, size_t n)
{
    if (b->oom || b->n + n <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) { b->oom = 1; return; }
    b->p = p;
    b->cap = cap;
}

static void pb_raw(PbBuf *b, const void *p, size_t n)
{
    pb_reserve(b, n);
    if (b->oom) return;
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}

void pb_put_varint(PbBuf *b, uint64_t v)
{
    uint8_t tmp[10];
    int k = 0;
    do {
        tmp[k] = (uint8_t)(v & 127);
        v >>= 7;
        if (v) tmp[k] |= 128;
        k++;
    } while (v);
    pb_raw(b, tmp, (size_t)k);
}

void pb_put_tag(PbBuf *b, int field, int wiretype) { pb_put_varint(b, (uint64_t)field << 3 | (uint64_t)wiretype); }
void pb_put_uint(PbBuf *b, int field, uint64_t v) { pb_put_tag(b, field, 0); pb_put_varint(b, v); }

void pb_put_bytes(PbBuf *b, int field, const void *p, size_t n)
{
    pb_put_tag(b, field, 2);
    pb_put_varint(b, n);
    pb_raw(b, p, n);
}

void pb_put_str(PbBuf *b, int field, const char *s) { pb_put_bytes(b, field, s, strlen(s)); }

void pb_put_float(PbBuf *b, int field, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint8_t le[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    pb_put_tag(b, field, 5);
    pb_raw(b, le, 4);
}

void pb_free(PbBuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static void put_msg(PbBuf *b, int field, PbBuf *m)
{
    if (m->oom) b->oom = 1;
    pb_put_bytes(b, field, m->p, m->n);
    pb_free(m);
}

static void put_tensor(PbBuf *b, int field, const IrTensor *t, const char *name)
{
    PbBuf m = {0};
    for (int k = 0; k < t->ndim; k++) pb_put_uint(&m, 1, (uint64_t)t->dims[k]);
    pb_put_uint(&m, 2, (uint64_t)t->dtype);
    if (name) pb_put_str(&m, 8, name);
    pb_put_bytes(&m, 9, t->data, ir_nbytes(t));
    put_msg(b, field, &m);
}

static void put_value_info(PbBuf *b, int field, const IrTensor *t)
{
    PbBuf vi = {0}, tp = {0}, tt = {0}, sh = {0};
    pb_put_str(&vi, 1, t->name);
    if (t->dtype) pb_put_uint(&tt, 1, (uint64_t)t->dtype);
    if (t->ndim >= 0) {
        for (int k = 0; k < t->ndim; k++) {
            PbBuf d = {0};
            if (t->dims[k] >= 0) pb_put_uint(&d, 1, (uint64_t)t->dims[k]);
            else pb_put_str(&d, 2, "?");
            put_msg(&sh, 1, &d);
        }
        put_msg(&tt, 2, &sh);
    }
    put_msg(&tp, 1, &tt);
    put_msg(&vi, 2, &tp);
    put_msg(b, field, &vi);
}

static void put_attr(PbBuf *b, const IrAttr *a)
{
    PbBuf m = {0};
    pb_put_str(&m, 1, a->name);
    pb_put_uint(&m, 20, (uint64_t)a->type);
    switch (a->type) {
    case IR_ATTR_FLOAT: pb_put_float(&m, 2, a->f); break;
    case IR_ATTR_INT: pb_put_uint(&m, 3, (uint64_t)a->i); break;
    case IR_ATTR_STRING: pb_put_str(&m, 4, a->s ? a->s : ""); break;
    case IR_ATTR_TENSOR: if (a->t) put_tensor(&m, 5, a->t, NULL); break;
    case IR_ATTR_FLOATS: for (int i = 0; i < a->n; i++) pb_put_float(&m, 7, a->floats[i]); break;
    case IR_ATTR_INTS: {
        PbBuf packed = {0};
        for (int i = 0; i < a->n; i++) pb_put_varint(&packed, (uint64_t)a->ints[i]);
        put_msg(&m, 8, &packed);
        break;
    }
    default: break;
    }
    put_msg(b, 5, &m);
}

int onnx_save_buffer(const IrGraph *g, PbBuf *out, AtlErr *e)
{
    PbBuf model = {0}, graph = {0}, opset = {0};
    memset(out, 0, sizeof *out);
    pb_put_uint(&model, 1, 8);
    pb_put_str(&model, 2, "atoll");
    for (int i = 0; i < g->nn; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead) continue;
        PbBuf nb = {0};
        for (int j = 0; j < n->nin; j++) pb_put_str(&nb, 1, n->in[j] >= 0 ? g->t[n->in[j]].name : "");
        for (int j = 0; j < n->nout; j++) pb_put_str(&nb, 2, n->out[j] >= 0 ? g->t[n->out[j]].name : "");
        pb_put_str(&nb, 3, n->name);
        pb_put_str(&nb, 4, n->op);
        for (int a = 0; a < n->nattrs; a++) put_attr(&nb, &n->attrs[a]);
        if (n->domain && n->domain[0]) pb_put_str(&nb, 7, n->domain);
        put_msg(&graph, 1, &nb);
    }
    pb_put_str(&graph, 2, g->name ? g->name : "graph");
    /* initializers: the constants a live node or the graph's outputs read */
    char *used = calloc((size_t)g->nt + 1, 1);
    if (!used) { pb_free(&model); pb_free(&graph); return atl_fail(e, "out of memory serialising the model"); }
    for (int i = 0; i < g->nn; i++)
        for (int j = 0; !g->nodes[i].dead && j < g->nodes[i].nin; j++)
            if (g->nodes[i].in[j] >= 0) used[g->nodes[i].in[j]] = 1;
    for (int i = 0; i < g->nout; i++) used[g->outputs[i]] = 1;
    for (int t = 0; t < g->nt; t++)
        if (g->t[t].data && used[t]) put_tensor(&graph, 5, &g->t[t], g->t[t].name);
    free(used);
    for (int i = 0; i < g->nin; i++) put_value_info(&graph, 11, &g->t[g->inputs[i]]);
    for (int i = 0; i < g->nout; i++) put_value_info(&graph, 12, &g->t[g->outputs[i]]);
    put_msg(&model, 7, &graph);
    pb_put_str(&opset, 1, "");
    pb_put_uint(&opset, 2, (uint64_t)g->opset);
    put_msg(&model, 8, &opset);
    if (model.oom) { pb_free(&model); return atl_fail(e, "out of memory serialising the model"); }
    *out = model;
    return 0;
}

int onnx_save_file(const IrGraph *g, const char *path, AtlErr *e)
{
    PbBuf b;
    if (onnx_save_buffer(g, &b, e)) return -1;
    int rc = atl_write_file_atomic(path, b.p, b.n, e);
    pb_free(&b);
    return rc;
}
