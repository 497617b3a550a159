/* chip_exec.h - what `atoll compare`, `atoll demo` and the chip conformance
 * runner share: compile a canonicalised graph to an .abm image in memory,
 * run a variant of it on the simulated chip, and read any of its DRAM tensors
 * back as IR tensors (by their IR names, which the backend keeps in the
 * .abm tensor table).
 *
 * Two ways to run:
 *   - HostExec: through the host API (include/atoll.h), i.e. device,
 *     firmware LOAD/RUN and simulator exactly as an application runs a
 *     model; only inputs and outputs are visible;
 *   - ChipExec: the backend's variant loader (abm_variant_program: streams
 *     relocated to region bases as the firmware would do) on a simulator
 *     created here, so every tensor's device address is known (also the
 *     intermediates in the activations region) and the simulator's modes
 *     (timing only) are available.
 */
#ifndef ATOLL_TOOLS_CHIP_EXEC_H
#define ATOLL_TOOLS_CHIP_EXEC_H
#include "compiler/ir/ir.h"
#include "compiler/ops/infer.h"
#include "compiler/backend/backend.h"
#include "isa/abm_program.h"
#include "isa/abm.h"
#include "isa/config.h"
#include "sim/sim.h"
#include "atoll.h"

/* Compiles g (after pass_run_all) for chip; *abm is malloc'd (caller frees).
 * zlevel is the zlib level of the image (-1: the writer's default; 0 stores
 * weights raw, fastest for images that never leave memory). sum may be NULL. */
int chip_compile_graph(const IrGraph *g, const AtlChip *chip, const BkOptions *opt, int zlevel, uint8_t **abm,
                       size_t *len, BkSummary *sum, AtlErr *e);

typedef struct ChipExec {
    const AtlChip *chip;
    AbmModel model;
    AtlProgram prog;
    AbmRegionBases bases;
    AtlSim *sim;
    AtlSimOptions opt;
    uint32_t variant;
    int ran;
} ChipExec;

/* Decodes the image (copied) and prepares variant 0 of net 0 on a new
 * simulator in `mode` (with a Chrome trace when trace is set). */
int chip_exec_open(ChipExec *x, const AtlChip *chip, const uint8_t *abm, size_t len, AtlSimMode mode, int trace, AtlErr *e);
/* Loads the program (weights included), writes the inputs (matched by name
 * to the variant's input tensors; dtype and byte size must agree) and runs. */
int chip_exec_run(ChipExec *x, const IrTensor *inputs, int ninputs, AtlErr *e);
/* Runs with zero inputs of g's input shapes (timing does not depend on the
 * values), float inputs in float_dt (ISA_F32 / F16 / BF16). */
int chip_exec_run_zeros(ChipExec *x, const IrGraph *g, int float_dt, AtlErr *e);
/* The same, stopping the simulation once simulated time passes max_cycles
 * (memory then holds what was written up to that time). Reaching the limit
 * is not an error; any other fault is. */
int chip_exec_run_until(ChipExec *x, const IrTensor *inputs, int ninputs, uint64_t max_cycles, AtlErr *e);
/* Index of the variant tensor called name, -1 if the .abm has none. */
int chip_exec_find(const ChipExec *x, const char *name);
/* Reads variant tensor `name` after a run into t (allocated; free with
 * ir_tensor_free_contents). */
int chip_exec_read(ChipExec *x, const char *name, IrTensor *t, AtlErr *e);
/* IR dtype of an .abm dtype (0 if none). */
int chip_ir_dtype(uint32_t abm_dtype);
void chip_exec_close(ChipExec *x);

typedef struct HostExec {
    AtlDevice *dev;
    AtlModel *model;
    uint32_t variant;          /* of the last run */
} HostExec;

/* Opens a device for chip with options o (NULL: the defaults; a Chrome
 * trace, timing only) and loads the image through the firmware. */
int host_exec_open(HostExec *h, const AtlChip *chip, const uint8_t *abm, size_t len, const AtlOpenOptions *o, AtlErr *e);
/* Runs the first net on inputs (by name, with their shapes). */
int host_exec_run(HostExec *h, const IrTensor *inputs, int ninputs, AtlErr *e);
/* Copies output `name` of the last run into t (allocated, IR dtype of the
 * compiled tensor; free with ir_tensor_free_contents). */
int host_exec_output(HostExec *h, const char *name, IrTensor *t, AtlErr *e);
/* Adds to shapes (up to max entries, *n in/out) the input shapes of the
 * compiled model's first variant for inputs not already there, so that a
 * model with dynamic dimensions is fixed the way it was compiled. */
int host_exec_input_shapes(const HostExec *h, IrInputShape *shapes, int *n, int max, AtlErr *e);
/* The compiled model's dtype (IR numbering) of input `name`, 0 if none. */
int host_exec_input_dtype(const HostExec *h, const char *name);
void host_exec_close(HostExec *h);
#endif
