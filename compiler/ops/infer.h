/* infer.h - static shape inference over the whole graph, and the
 * `--input-shape name=1x3x224x224` fixing of dynamic input dimensions. */
#ifndef ATOLL_COMPILER_INFER_H
#define ATOLL_COMPILER_INFER_H
#include "compiler/ir/ir.h"

typedef struct IrInputShape {
    char name[256];
    int ndim;
    int64_t dims[IR_MAXDIM];
    int is_batch;              /* dims[0] is the batch (--batch, an instance of a split): constants the
                                  export fixed at its batch follow it (ops/batch_follow.c) */
} IrInputShape;

/* Parses "name=1x3x224x224" (a scalar is "name="). */
int ir_parse_input_shape(const char *spec, IrInputShape *s, AtlErr *e);
/* Sets the named graph inputs' shapes; a rank mismatch or an unknown name
 * is an error. A dimension the model fixed may be given another value (most
 * exports fix batch 1): then every shape the model declares for the
 * tensors computed from the inputs (value_info, outputs) was for the old
 * shapes and is forgotten (dtypes kept), so ir_infer_shapes derives them
 * afresh, and g->reshaped says what changed. */
int ir_apply_input_shapes(IrGraph *g, const IrInputShape *s, int n, AtlErr *e);
/* After a batch change given as one (IrInputShape.is_batch), a constant
 * the export fixed at its batch is made to follow the new one before its
 * node is inferred (ops/batch_follow.c): a Reshape target holding the
 * exported batch in front, a constant concatenated with batched tensors
 * along another axis whose images are all alike. Each such node gets a
 * new constant (the old one may have other readers); g->batch_followed
 * counts them. Returns -1 only when out of memory. */
int ir_batch_follow(IrGraph *g, int node, AtlErr *e);
/* 1 when tensor t is computed from a graph input, 0 when only from
 * constants, -1 when out of memory (ops/batch_follow.c). */
int ir_from_inputs(const IrGraph *g, int t, AtlErr *e);
/* Infers dtype and shape of every node output, in node order (call
 * ir_toposort first). Known dimensions that contradict the model's
 * value_info are errors naming the node. Checks op support first. After
 * an input shape was changed (g->reshaped), a failure says that the graph
 * depends on the exported shape at the node named, and a Reshape to a
 * constant shape that still holds the exported batch (e.g. [1,-1], which
 * would fold the batch into one row) is refused. */
int ir_infer_shapes(IrGraph *g, AtlErr *e);

/* After a failure on a graph whose input shapes were changed
 * (g->reshaped), appends to e's message that the node it names depends on
 * the exported shapes; returns -1. */
int ir_reshape_hint(const IrGraph *g, AtlErr *e);

/* Scratch for running one node's infer or eval function at a time: in[]
 * points at the node's input tensors, out[] at fresh copies in tmp[] (name
 * set, shape unknown) or NULL for absent outputs. Sized for the graph's
 * widest node by ir_node_io_alloc; freed by ir_node_io_free. */
typedef struct IrNodeIo {
    IrTensor **in, **out;
    IrTensor *tmp;
} IrNodeIo;
int ir_node_io_alloc(const IrGraph *g, IrNodeIo *io, AtlErr *e);
void ir_node_io_bind(const IrGraph *g, const IrNode *n, IrNodeIo *io);
void ir_node_io_free(IrNodeIo *io);
#endif
