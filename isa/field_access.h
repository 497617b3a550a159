/* field_access.h - generic reads and writes of AtlInsn members described by
 * isa_fields (offset + size), shared by the encoder, assembler and
 * disassembler so that none of them needs a per-field or per-opcode switch.
 * Private to isa/ (not part of the shared contract).
 */
#ifndef ATOLL_ISA_FIELD_ACCESS_H
#define ATOLL_ISA_FIELD_ACCESS_H
#include <stdint.h>
#include <string.h>
#include "isa/isa.h"
#include "isa/layout.h"

/* Number of elements a field holds: 4 for DIMS/STRIDES, 1 otherwise. */
static inline int isa_field_elems(const AtlFieldInfo *f)
{
    return isa_kind_elems(f->kind);
}

/* Signed kinds are sign-extended when read. */
static inline int isa_field_signed(const AtlFieldInfo *f)
{
    return f->kind == ISA_K_INT || f->kind == ISA_K_STRIDES;
}

/* Raw element `idx` of the member, zero- or sign-extended to 64 bits
 * (F32 gives the float's bit pattern). */
static inline uint64_t isa_field_get(const AtlInsn *in, const AtlFieldInfo *f, int idx)
{
    size_t esz = f->size / (size_t)isa_field_elems(f);
    const unsigned char *p = (const unsigned char *)in + f->offset + esz * (size_t)idx;
    uint64_t v = 0;
    if (esz == 1) { uint8_t x; memcpy(&x, p, 1); v = x; if (isa_field_signed(f)) v = (uint64_t)(int64_t)(int8_t)x; }
    else if (esz == 2) { uint16_t x; memcpy(&x, p, 2); v = x; if (isa_field_signed(f)) v = (uint64_t)(int64_t)(int16_t)x; }
    else if (esz == 4) { uint32_t x; memcpy(&x, p, 4); v = x; if (isa_field_signed(f)) v = (uint64_t)(int64_t)(int32_t)x; }
    else { memcpy(&v, p, 8); }
    return v;
}

/* Stores the low bytes of v into element `idx` of the member. */
static inline void isa_field_set(AtlInsn *in, const AtlFieldInfo *f, int idx, uint64_t v)
{
    size_t esz = f->size / (size_t)isa_field_elems(f);
    unsigned char *p = (unsigned char *)in + f->offset + esz * (size_t)idx;
    if (esz == 1) { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); }
    else if (esz == 2) { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); }
    else if (esz == 4) { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); }
    else memcpy(p, &v, 8);
}

/* The member that holds the space of an ADDR field (dst -> dst_space,
 * src -> src_space, idx (src2) -> src2_space). */
static inline uint8_t *isa_field_space(AtlInsn *in, const AtlFieldInfo *f)
{
    return f->offset == offsetof(AtlInsn, dst) ? &in->dst_space
         : f->offset == offsetof(AtlInsn, src2) ? &in->src2_space : &in->src_space;
}

/* Largest member value a field of `bits` can hold (unsigned) and the
 * signed range; bits <= 64. */
static inline uint64_t isa_umax(int bits) { return bits >= 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1); }
static inline int64_t isa_smin(int bits) { return bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)); }
static inline int64_t isa_smax(int bits) { return bits >= 64 ? INT64_MAX : (((int64_t)1 << (bits - 1)) - 1); }
#endif
