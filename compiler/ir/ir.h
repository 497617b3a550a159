/* ir.h - the compiler's graph IR: tensors, nodes, attributes, graph.
 *
 * A graph owns an array of tensors and an array of nodes; nodes refer to
 * tensors by index (never by pointer, since the arrays grow). A tensor has a
 * dtype (ONNX numbering), a shape (-1 for an unknown dimension, ndim -1 for
 * an unknown rank) and, when it is a constant, its data in native C layout,
 * row-major. Every tensor has at most one producer node (`producer`, -1 for
 * graph inputs and constants). Consumers are computed on demand
 * (ir_consumers). Passes mark nodes dead rather than deleting them;
 * ir_compact removes dead nodes.
 */
#ifndef ATOLL_COMPILER_IR_H
#define ATOLL_COMPILER_IR_H
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "util/err.h"

#define IR_MAXDIM 8

/* ONNX TensorProto.DataType numbering. */
enum {
    IR_UNDEF = 0, IR_F32 = 1, IR_U8 = 2, IR_I8 = 3, IR_U16 = 4, IR_I16 = 5,
    IR_I32 = 6, IR_I64 = 7, IR_STRING = 8, IR_BOOL = 9, IR_F16 = 10,
    IR_F64 = 11, IR_U32 = 12, IR_U64 = 13, IR_C64 = 14, IR_C128 = 15,
    IR_BF16 = 16, IR_NDTYPES = 17
};

/* ONNX AttributeProto.AttributeType numbering. */
enum {
    IR_ATTR_FLOAT = 1, IR_ATTR_INT = 2, IR_ATTR_STRING = 3, IR_ATTR_TENSOR = 4,
    IR_ATTR_GRAPH = 5, IR_ATTR_FLOATS = 6, IR_ATTR_INTS = 7, IR_ATTR_STRINGS = 8
};

typedef struct IrTensor {
    char *name;
    int dtype;
    int ndim;                  /* -1: rank unknown */
    int64_t dims[IR_MAXDIM];   /* -1: dimension unknown */
    void *data;                /* constant contents (owned) or NULL */
    int producer;              /* node index, -1 if none */
    int is_input, is_output;   /* graph input / output */
    int is_view;               /* set by pass_views: aliases its op's input */
} IrTensor;

typedef struct IrAttr {
    char *name;
    int type;                  /* IR_ATTR_* */
    float f;
    int64_t i;
    char *s;                   /* NUL-terminated copy */
    int n;                     /* element count of floats/ints */
    float *floats;
    int64_t *ints;
    IrTensor *t;               /* TENSOR attribute (owned, name may be NULL) */
} IrAttr;

typedef struct IrNode {
    char *name, *op, *domain;
    IrAttr *attrs;
    int nattrs;
    int *in, nin;              /* tensor indices, -1 for an omitted optional input */
    int *out, nout;
    int dead;                  /* removed by a pass; ir_compact drops it */
    char act[16];              /* fused activation following this node ("" none) */
    float act_alpha, act_beta; /* its parameters (Clip min/max, LeakyRelu alpha) */
} IrNode;

typedef struct IrGraph {
    IrTensor *t;
    int nt, capt;
    IrNode *nodes;
    int nn, capn;
    int *inputs, nin;          /* graph inputs that are not constants */
    int *outputs, nout;
    int opset;                 /* default-domain opset */
    char *name;
    int *hash;                 /* name -> tensor index, open addressing */
    size_t hcap;
    /* set by ir_apply_input_shapes when a dimension the model fixed was
     * given another value (a fixed-batch export run at another batch):
     * what changed, for the messages of ir_infer_shapes */
    char reshaped[256];        /* e.g. "input 'x' [1,3,224,224] -> [8,3,224,224]"; "" none */
    int64_t batch_from, batch_to; /* the exported and the given dimension 0, when that changed */
    int batch_follow;          /* that change was a batch (--batch): constants follow it (ops/infer.h) */
    int batch_followed;        /* how many nodes' constants were made to follow it */
    char batch_followed_first[128]; /* the first such node's name */
} IrGraph;

/* Dtype helpers. */
size_t ir_dtype_size(int dtype);          /* 0 for unsupported/string */
const char *ir_dtype_name(int dtype);
int64_t ir_numel(const IrTensor *t);      /* -1 if any dim unknown */
int ir_shape_known(const IrTensor *t);
size_t ir_nbytes(const IrTensor *t);
/* Element access through double/int64 (any numeric dtype). */
double ir_get_f(const IrTensor *t, int64_t i);
int64_t ir_get_i(const IrTensor *t, int64_t i);
void ir_set_f(IrTensor *t, int64_t i, double v);
void ir_set_i(IrTensor *t, int64_t i, int64_t v);
float ir_half_to_float(uint16_t h);
uint16_t ir_float_to_half(float f);
/* Formats a shape as "1x3x224x224" (or "?" for unknown) into buf. */
const char *ir_shape_str(const IrTensor *t, char *buf, size_t n);

/* Graph construction. All strings are copied. */
void ir_init(IrGraph *g);
void ir_free(IrGraph *g);
int ir_find(const IrGraph *g, const char *name);               /* -1 if absent */
int ir_tensor(IrGraph *g, const char *name, AtlErr *e);         /* find or add */
int ir_add_node(IrGraph *g, const char *op, const char *name, AtlErr *e); /* node index */
int ir_node_add_input(IrGraph *g, int node, int tensor, AtlErr *e);
int ir_node_add_output(IrGraph *g, int node, int tensor, AtlErr *e);
IrAttr *ir_node_add_attr(IrGraph *g, int node, const char *name, int type, AtlErr *e); /* a name set again is replaced */
void ir_tensor_free_contents(IrTensor *t);
void ir_attr_free(IrAttr *a);
/* Allocates zeroed data for t's (fully known) shape. */
int ir_alloc_data(IrTensor *t, AtlErr *e);
char *ir_strdup(const char *s);

/* Attribute lookup. */
const IrAttr *ir_attr(const IrNode *n, const char *name);
int64_t ir_attr_int(const IrNode *n, const char *name, int64_t dflt);
float ir_attr_float(const IrNode *n, const char *name, float dflt);
const char *ir_attr_str(const IrNode *n, const char *name, const char *dflt);

/* Structure. */
/* Recomputes producers, sorts nodes topologically (dead nodes dropped).
 * Fails naming a node on a cycle or a tensor produced twice. */
int ir_toposort(IrGraph *g, AtlErr *e);
/* Consumers in CSR form: uses of tensor t are list[start[t] .. start[t+1]). */
typedef struct IrUses { int *start, *list; } IrUses;
int ir_consumers(const IrGraph *g, IrUses *u, AtlErr *e);
void ir_uses_free(IrUses *u);
/* How many times live nodes read tensor t, or -1 as soon as one use fails
 * accept(node, input index). */
int ir_uses_where(const IrGraph *g, int t, int (*accept)(const IrNode *n, int k));
/* Checks that the graph has outputs, every input is defined before use,
 * each tensor has one producer, outputs are defined, node order is
 * topological. */
int ir_verify(const IrGraph *g, AtlErr *e);
void ir_print(const IrGraph *g, FILE *fp);
void ir_compact(IrGraph *g);
/* A deep copy of src into dst (ir_init'ed here; same tensor and node
 * indices); on failure dst is left empty. (ir/clone.c) */
int ir_clone(const IrGraph *src, IrGraph *dst, AtlErr *e);

/* Building graphs in code (tests, benchmark, passes); see ir/build.c.
 * Each returns a tensor or node index, or -1 with e set. */
int ir_add_input(IrGraph *g, const char *name, int dtype, int ndim, const int64_t *dims, AtlErr *e);
int ir_add_output(IrGraph *g, const char *name, AtlErr *e);
/* A constant; data (numel * dtype size bytes) is copied, NULL gives zeros. */
int ir_add_const(IrGraph *g, const char *name, int dtype, int ndim, const int64_t *dims, const void *data, AtlErr *e);
/* A node with comma-separated input and output names ("" entries are
 * omitted optional inputs). */
int ir_add_op(IrGraph *g, const char *op, const char *name, const char *ins, const char *outs, AtlErr *e);
int ir_set_attr_int(IrGraph *g, int node, const char *name, int64_t v, AtlErr *e);
int ir_set_attr_float(IrGraph *g, int node, const char *name, float v, AtlErr *e);
int ir_set_attr_ints(IrGraph *g, int node, const char *name, const int64_t *v, int n, AtlErr *e);
int ir_set_attr_str(IrGraph *g, int node, const char *name, const char *v, AtlErr *e);
#endif
