/* operands.h - the bytes each operand of an instruction touches, defined
 * once: the simulator checks them against their memories and feeds the
 * LMEM ones to its race detector and bank model (sim/check.c); the
 * compiler measures the LMEM a layer occupies from them (its --groups
 * report). Only geometry: the fields are assumed valid (the simulator
 * checks zero sizes, windows larger than their input and the like before
 * asking). */
#ifndef ATOLL_ISA_OPERANDS_H
#define ATOLL_ISA_OPERANDS_H
#include <stdint.h>
#include "isa/isa.h"

#define ISA_MAX_OPERANDS 3   /* src, src2 (or a gather's index table), dst */

typedef struct IsaOperand {
    const char *what;        /* "src (A)", "dst", "idx", ... for messages */
    int space;               /* ISA_SPACE_* */
    int64_t lo, hi;          /* byte range [lo, hi) */
    uint64_t base;           /* the operand's address field */
    int aligned;             /* 1: must start on lmem.alignment (matrix and vector operands) */
    int write;
    int end;                 /* DMA ends: 0 dst, 1 src, 2 index table; -1 compute operands */
} IsaOperand;

/* The operands of in, in order src, src2, dst for compute instructions
 * and dst, src, idx for DMA ones; returns how many (0 for sync and
 * control instructions). */
int isa_operands(const AtlInsn *in, IsaOperand ops[ISA_MAX_OPERANDS]);
#endif
