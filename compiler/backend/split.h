/* split.h - placement split's instance graph (split.c). */
#ifndef ATOLL_COMPILER_BACKEND_SPLIT_H
#define ATOLL_COMPILER_BACKEND_SPLIT_H
#include <stddef.h>
#include "compiler/ir/ir.h"
#include "util/err.h"

/* The graph g (batch B in dimension 0 of every input) at batch m, in
 * *inst (the caller frees it with ir_free), when g is separable along
 * the batch (split.c says what that requires; at m = B there is one
 * instance, nothing to keep apart, and only the io shapes are checked):
 * returns 0. Returns 1
 * with why[] saying why not (*inst then holds nothing), -1 on an error
 * (out of memory). */
int bk_split_graph(const IrGraph *g, int m, IrGraph *inst, char *why, size_t cap, AtlErr *e);
#endif
