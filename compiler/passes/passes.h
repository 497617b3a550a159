/* passes.h - canonicalisation passes over the graph IR, one file each
 * (compiler/pass_*.c; each file's header says what it reads, what it
 * guarantees and why). All of them keep the graph's results unchanged; the
 * tests check interpreter outputs before == after. They expect nodes in
 * topological order and shapes inferred (ir_infer_shapes), and leave dead
 * nodes marked (ir_compact / ir_toposort remove them). */
#ifndef ATOLL_COMPILER_PASSES_H
#define ATOLL_COMPILER_PASSES_H
#include "compiler/ir/ir.h"

int pass_fold_constants(IrGraph *g, AtlErr *e);    /* passes/fold.c */
int pass_remove_identity(IrGraph *g, AtlErr *e);   /* passes/identity.c */
int pass_fold_batchnorm(IrGraph *g, AtlErr *e);    /* passes/bnfold.c */
int pass_mark_views(IrGraph *g, AtlErr *e);        /* passes/views.c */
int pass_fuse_activations(IrGraph *g, AtlErr *e);  /* passes/fuse.c */
int pass_remove_dead(IrGraph *g, AtlErr *e);       /* passes/dead.c */
int pass_fold_pad(IrGraph *g, AtlErr *e);          /* passes/padfold.c */

/* The canonical pipeline: toposort, shape inference, QDQ node units into
 * int8 operators (ops/qdq.h), constant folding,
 * Identity/Dropout removal, BatchNorm folding, zero Pads into the convs
 * they feed, folding again, dead-node removal, view marks, activation fusion marks, re-inference, verify.
 * (passes/pipeline.c) */
int pass_run_all(IrGraph *g, AtlErr *e);
#endif
