/* layout.h - where each field of an instruction sits in its 64-byte record.
 *
 * The one statement of the packing rule in isa.h's header comment: fields
 * follow the 40-bit header in format order; a DIMS/STRIDES field is four
 * elements of `bits` each (d0 first), an ADDR field is its offset followed
 * by a 2-bit space code. The encoder, the firmware's relocator, the doc
 * generator and the table test all use these helpers. Header-only and
 * freestanding (no libc beyond what isa.h pulls in), so the firmware can
 * include it.
 */
#ifndef ATOLL_ISA_LAYOUT_H
#define ATOLL_ISA_LAYOUT_H
#include <stdint.h>
#include "isa/isa.h"

#define ISA_SPACE_BITS 2

/* Elements of a field: 4 for DIMS/STRIDES, 1 otherwise. */
static inline int isa_kind_elems(AtlFieldKind k)
{
    return (k == ISA_K_DIMS || k == ISA_K_STRIDES) ? 4 : 1;
}

/* Bits one format field occupies, space code included. */
static inline int isa_field_width(const AtlFormatField *ff)
{
    AtlFieldKind k = isa_fields[ff->field].kind;
    return ff->bits * isa_kind_elems(k) + (k == ISA_K_ADDR ? ISA_SPACE_BITS : 0);
}

/* Start bit of each field of format f into pos[] (may be NULL); returns the
 * first bit after the last field. */
static inline int isa_format_layout(const AtlFormatInfo *f, int pos[ISA_MAX_FORMAT_FIELDS])
{
    int p = ISA_HEADER_BITS;
    for (int i = 0; i < f->nfields; i++) {
        if (pos) pos[i] = p;
        p += isa_field_width(&f->fields[i]);
    }
    return p;
}

/* n (<= 64) bits at bit position pos of a little-endian bit string. */
static inline uint64_t isa_bits_get(const uint8_t *buf, int pos, int n)
{
    uint64_t v = 0;
    for (int done = 0; done < n;) {
        int byte = (pos + done) >> 3, off = (pos + done) & 7;
        int take = 8 - off < n - done ? 8 - off : n - done;
        v |= (uint64_t)((buf[byte] >> off) & ((1u << take) - 1)) << done;
        done += take;
    }
    return v;
}

/* Overwrites n bits at pos with the low n bits of v. */
static inline void isa_bits_put(uint8_t *buf, int pos, int n, uint64_t v)
{
    for (int done = 0; done < n;) {
        int byte = (pos + done) >> 3, off = (pos + done) & 7;
        int take = 8 - off < n - done ? 8 - off : n - done;
        uint8_t mask = (uint8_t)(((1u << take) - 1) << off);
        buf[byte] = (uint8_t)((buf[byte] & ~mask) | ((uint8_t)((v >> done) << off) & mask));
        done += take;
    }
}

/* Sign-extends the low `bits` bits of v. */
static inline int64_t isa_sext(uint64_t v, int bits)
{
    if (bits >= 64) return (int64_t)v;
    uint64_t sign = (uint64_t)1 << (bits - 1);
    v &= (sign << 1) - 1;
    return (int64_t)((v ^ sign) - sign);
}
#endif
