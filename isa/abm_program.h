/* abm_program.h - a compiled model's streams as a simulator program, without
 * firmware: what the firmware's LOAD does, done on the host (tests, tools and
 * benchmarks run compiled models on the simulator directly with it). It
 * belongs with the container: it reads nothing but a decoded .abm and the
 * chip description. */
#ifndef ATOLL_ISA_ABM_PROGRAM_H
#define ATOLL_ISA_ABM_PROGRAM_H
#include <stdint.h>
#include "isa/abm.h"
#include "isa/config.h"
#include "isa/program.h"
#include "util/err.h"

/* DRAM base of each region (weights, activations, io); 64-byte aligned. */
typedef struct AbmRegionBases { uint64_t base[ABM_REGION_COUNT]; } AbmRegionBases;

/* Builds a program for the simulator from variant `variant` of a decoded model:
 * streams decoded, DRAM operands relocated to bases (as the firmware does),
 * the weight image as a data segment. Fills p (prog_free). *bases_out gets
 * the bases used: weights at 0, activations and io after it, each aligned
 * to dram.interleave x dram.channels (at least 4 KiB), the alignment the
 * compiler's cost model assumes. */
int abm_variant_program(const AbmModel *m, uint32_t variant, const AtlChip *chip, AtlProgram *p,
                      AbmRegionBases *bases_out, AtlErr *e);
#endif
