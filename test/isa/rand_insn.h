/* rand_insn.h - random valid instructions for round-trip tests: every field
 * of the op's format gets a random value within its encoded width (and a
 * valid dtype/space code), the header random semaphores and layer. */
#ifndef ATOLL_TEST_RAND_INSN_H
#define ATOLL_TEST_RAND_INSN_H
#include <stdint.h>
#include <string.h>
#include "isa/isa.h"
#include "isa/field_access.h"

static uint64_t rnd_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A value of `bits` bits, biased towards the extremes half of the time. */
static uint64_t rnd_bits(uint64_t *s, int bits)
{
    uint64_t r = rnd_next(s), m = isa_umax(bits);
    switch (r & 7) {
    case 0: return 0;
    case 1: return m;
    case 2: return m >> 1;          /* largest positive signed */
    case 3: return (m >> 1) + 1;    /* most negative signed */
    default: return rnd_next(s) & m;
    }
}

static void rand_insn(uint64_t *s, int op, AtlInsn *in)
{
    memset(in, 0, sizeof *in);
    in->op = (uint8_t)op;
    in->wait = (uint8_t)(rnd_next(s) % (ISA_MAX_SEMAPHORES + 1));
    in->signal = (uint8_t)(rnd_next(s) % (ISA_MAX_SEMAPHORES + 1));
    in->layer = (uint16_t)rnd_next(s);
    const AtlFormatInfo *fmt = &isa_formats[isa_ops[op].format];
    for (int i = 0; i < fmt->nfields; i++) {
        const AtlFieldInfo *f = &isa_fields[fmt->fields[i].field];
        int bits = fmt->fields[i].bits;
        for (int j = 0; j < isa_field_elems(f); j++) {
            uint64_t v = rnd_bits(s, bits);
            if (f->kind == ISA_K_DTYPE) v = rnd_next(s) % ISA_NUM_DTYPES;
            if (isa_field_signed(f) && bits < 64 && ((v >> (bits - 1)) & 1)) v |= ~isa_umax(bits);
            isa_field_set(in, f, j, v);
        }
        if (f->kind == ISA_K_ADDR) *isa_field_space(in, f) = (uint8_t)(rnd_next(s) % ISA_NUM_SPACES);
    }
}
#endif
