/* disasm.c - one-line text of an instruction for fault reports and the
 * trace: the assembler's own syntax, from isa_disasm (isa/disasm.c), so a
 * reported instruction can be pasted back into a program. */
#include "sim/sim_int.h"

int sim_disasm(const AtlInsn *in, char *buf, size_t cap)
{
    return isa_disasm(in, buf, cap);
}
