/* chip_exec.h - what `atoll compare`, `atoll demo` and the chip conformance
 * runner share: compile a canonicalised graph to an .abm image in memory,
 * run a stage of it on the simulated chip, and read any of its DRAM tensors
 * back as IR tensors (by their IR names, which the backend keeps in the
 * .abm tensor table).
 *
 * The run uses the backend's stage loader (bk_stage_program: streams
 * relocated to region bases as the firmware would do) on a simulator
 * created here, so every tensor's device address is known, including
 * intermediates in the activations region.
 */
#ifndef ATOLL_TOOLS_CHIP_EXEC_H
#define ATOLL_TOOLS_CHIP_EXEC_H
#include "compiler/ir.h"
#include "compiler/backend.h"
#include "isa/abm.h"
#include "isa/config.h"
#include "sim/sim.h"

/* Compiles g (after pass_run_all) for chip; *abm is malloc'd (caller frees).
 * zlevel is the zlib level of the image (-1: the writer's default; 0 stores
 * weights raw, fastest for images that never leave memory). sum may be NULL. */
int chip_compile_graph(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, int zlevel, uint8_t **abm,
                       size_t *len, BkSummary *sum, AtlErr *e);

typedef struct ChipExec {
    const AtlChip *chip;
    AbmModel model;
    AtlProgram prog;
    BkRegionBases bases;
    AtlSim *sim;
    uint32_t stage;
    int ran;
} ChipExec;

/* Decodes the image (copied) and prepares stage 0 of net 0 on a new
 * simulator in `mode` (with a Chrome trace when trace is set). */
int chip_exec_open(ChipExec *x, const AtlChip *chip, const uint8_t *abm, size_t len, AtlSimMode mode, int trace, AtlErr *e);
/* Loads the program (weights included), writes the inputs (matched by name
 * to the stage's input tensors; dtype and byte size must agree) and runs. */
int chip_exec_run(ChipExec *x, const IrTensor *inputs, int ninputs, AtlErr *e);
/* Index of the stage tensor called name, -1 if the .abm has none. */
int chip_exec_find(const ChipExec *x, const char *name);
/* Reads stage tensor `name` after a run into t (allocated; free with
 * ir_tensor_free_contents). */
int chip_exec_read(ChipExec *x, const char *name, IrTensor *t, AtlErr *e);
/* IR dtype of an .abm dtype (0 if none). */
int chip_ir_dtype(uint32_t abm_dtype);
void chip_exec_close(ChipExec *x);
#endif
