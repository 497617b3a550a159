/* sink.h - shortcut convolutions run late in a split stage (sink.c;
 * docs/backend.md, "Shortcuts run late"). Internal to compiler/backend/. */
#ifndef ATOLL_COMPILER_BACKEND_SINK_H
#define ATOLL_COMPILER_BACKEND_SINK_H
#include "compiler/target/target.h"

/* In g (the graph c was built from: the same node indices), the
 * shortcut convolutions that may run late: each convolution D whose
 * output only a residual tail reads (c->tail), D before P - 1 where P is
 * the convolution that tail is absorbed into; in int8, each Int8Conv D
 * whose output only an Int8Add reads, P the Int8Conv making the Add's
 * other input. Their nodes D into d[] and
 * P into p[] (at most max, in node order, the ranges d..p apart);
 * returns how many. */
int bk_sink_find(const IrGraph *g, const BkCtx *c, int *d, int *p, int max);
/* As bk_sink_find, D also just before P (already moved late). */
int bk_shortcut_find(const IrGraph *g, const BkCtx *c, int *d, int *p, int max);
/* Moves node d of g to just before node p (d < p; the nodes between move
 * up one) and updates the producers. */
void bk_sink_move(IrGraph *g, int d, int p);
/* Shortcut convolution d of g (one bk_sink_find gave, c built from g)
 * whose input x an earlier pointwise convolution f reads last but for d
 * (bk_overlay_shape_ok, no residual tail, x no graph input or output):
 * moves d to just before f (the nodes between move down one) and marks
 * BK_OVERLAY_ATTR on f, whose output may then take x's bytes; 1 when so
 * rewritten, 0 when d has no such f (g untouched), -1 on error. */
int bk_hoist_apply(IrGraph *g, const BkCtx *c, int d, AtlErr *e);
/* bk_hoist_apply's f for d, -1 when none. */
int bk_hoist_at(const IrGraph *g, const BkCtx *c, int d);
/* 1 when node k of g is a strided pointwise convolution (float or int8:
 * 1x1, no padding, one group, a stride above 1) of an activation. */
int bk_subsample_ok(const IrGraph *g, int k);
/* The strided pointwise convolutions of g (1x1, no padding, one group,
 * a stride above 1) whose input x an earlier node reads and no later
 * one: their nodes into d[] (at most max, in node order); how many. */
int bk_subsample_find(const IrGraph *g, const BkCtx *c, int *d, int max);
/* Convolution d of g (one bk_subsample_find gave) reads instead
 * x/subsample, a Slice of x's rows and columns at its strides placed
 * just before x's first reader, at stride 1; shapes inferred again. */
int bk_subsample_apply(IrGraph *g, int d, AtlErr *e);
/* Marks BK_OVERLAY_ATTR (alloc/alloc.h) on each pointwise convolution
 * of g whose output may take its input's bytes (bk_overlay_shape_ok, no
 * residual tail, neither tensor a graph input or output, its input read
 * by no later node; c built from g); returns how many, -1 on error. */
int bk_overlay_mark(IrGraph *g, const BkCtx *c, AtlErr *e);

#endif
