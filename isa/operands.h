/* operands.h - the bytes each operand of an instruction touches, defined
 * once: the simulator checks them against their memories and feeds the
 * ranges to its race detector (sim/race.c) and the LMEM ones to its bank
 * model (sim/check.c); the
 * compiler measures the LMEM a layer occupies from them (its --groups
 * report). Only geometry: the fields are assumed valid (the simulator
 * checks zero sizes, windows larger than their input and the like before
 * asking). */
#ifndef ATOLL_ISA_OPERANDS_H
#define ATOLL_ISA_OPERANDS_H
#include <stdint.h>
#include "isa/isa.h"

#define ISA_MAX_OPERANDS 3   /* src, src2 (or a gather's index table), dst */

/* Every byte x of an operand has (x - r) mod p in [0, w) (isa_operand_windows). */
typedef struct IsaWindow {
    uint64_t p;
    int64_t r, w;
} IsaWindow;

typedef struct IsaOperand {
    const char *what;        /* "src (A)", "dst", "idx", ... for messages */
    int space;               /* ISA_SPACE_* */
    int cluster;             /* a peer operand's cluster (its SRAM); -1 for the other spaces */
    int64_t lo, hi;          /* byte range [lo, hi) */
    uint64_t base;           /* the operand's address field (a peer operand's: its byte offset) */
    int aligned;             /* 1: must start on lmem.alignment (matrix and vector operands) */
    int write;
    int end;                 /* DMA ends: 0 dst, 1 src, 2 index table; -1 compute operands */
    /* the bytes themselves: base + sum_d i_d * stride[d] + [0, esize), i_d < shape[d]
     * (a dense operand is one element of hi - lo bytes) */
    uint32_t shape[4];
    int64_t stride[4];       /* bytes */
    int64_t esize;
    int nwin;                /* -1 until isa_operand_windows fills win */
    IsaWindow win[5];
} IsaOperand;

/* The operands of in, in order src, src2, dst for compute instructions
 * and dst, src, idx for DMA ones; returns how many (0 for sync and
 * control instructions). */
int isa_operands(const AtlInsn *in, IsaOperand ops[ISA_MAX_OPERANDS]);

/* 1 when a and b (in the same space) provably share no byte: their byte
 * ranges are disjoint, or some period P has every byte of a in one window
 * of residues mod P and every byte of b in another, disjoint one (a tile
 * of rows or channels beside another tile of the same tensor); 0 when they
 * may share a byte. Cheap (no walk over elements); sound, not complete:
 * 0 for some operands that interleave finer than any such window. */
int isa_operands_disjoint(const IsaOperand *a, const IsaOperand *b);

/* Computes o's windows once, for callers that compare one operand with
 * many (isa_operands_disjoint computes them on the fly otherwise). */
void isa_operand_windows(IsaOperand *o);
#endif
