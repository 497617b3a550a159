/* exec_table.c - the simulator's dispatch: an array indexed by opcode,
 * generated from ISA_OPS, mapping each op to the exec handler of its format
 * (sim_exec_fmt_<FORMAT>). Adding an op to isa.h adds it here. */
#include "sim/sim_int.h"

const SimExecFn sim_exec_table[ISA_NUM_OPS] = {
#define X(id, mn, eng, fmt, doc) [ISA_OP_##id] = sim_exec_fmt_##fmt,
    ISA_OPS(X)
#undef X
};

/* Sync-only formats: their effect (semaphores, barriers, end) is applied by
 * the engine loop; there is no data to compute. */
int sim_exec_fmt_NONE(AtlSim *s, int core, const AtlInsn *in) { (void)s; (void)core; (void)in; return 0; }
int sim_exec_fmt_BARRIER(AtlSim *s, int core, const AtlInsn *in) { (void)s; (void)core; (void)in; return 0; }
