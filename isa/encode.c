/* encode.c - AtlInsn <-> 64-byte binary form, as laid out in isa.h:
 * a little-endian 512-bit string, header op:8 wait:8 signal:8 layer:16 in
 * bits 0..39, then the op's format fields in table order from bit 40. A
 * DIMS/STRIDES field is 4 elements of `bits` each, outermost first; an ADDR
 * field is its offset (`bits`) followed by a 2-bit space code. Everything
 * above the last field is zero padding.
 *
 * Both directions are single loops over isa_formats/isa_fields; there is no
 * per-opcode code here.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "isa/isa.h"
#include "isa/field_access.h"
#include "isa/layout.h"

static void field_label(char *out, size_t cap, const AtlFieldInfo *f, int idx)
{
    if (isa_field_elems(f) > 1) snprintf(out, cap, "%s[%d]", f->name, idx);
    else snprintf(out, cap, "%s", f->name);
}

/* Checks that element value v (as read by isa_field_get) fits `bits` of
 * the field's kind; returns the bits to store, or -1 with a message. */
static int check_fit(const AtlFieldInfo *f, int idx, int bits, uint64_t v, const char *mn,
                     uint64_t *out, AtlErr *e)
{
    char label[48];
#define LABEL() (field_label(label, sizeof label, f, idx), label)
    switch (f->kind) {
    case ISA_K_INT:
    case ISA_K_STRIDES: {
        int64_t s = (int64_t)v;
        if (s < isa_smin(bits) || s > isa_smax(bits))
            return atl_fail(e, "%s: field %s: value %" PRId64 " does not fit in %d signed bits (%" PRId64 "..%" PRId64 ")",
                            mn, LABEL(), s, bits, isa_smin(bits), isa_smax(bits));
        *out = v & isa_umax(bits);
        return 0;
    }
    case ISA_K_DTYPE:
        if (v >= ISA_NUM_DTYPES)
            return atl_fail(e, "%s: field %s: bad dtype code %" PRIu64, mn, LABEL(), v);
        break;
    case ISA_K_FLAG:
        if (v > 1) return atl_fail(e, "%s: field %s: flag must be 0 or 1, not %" PRIu64, mn, LABEL(), v);
        break;
    default:
        break;
    }
    if (v > isa_umax(bits))
        return atl_fail(e, "%s: field %s: value %" PRIu64 " (0x%" PRIx64 ") does not fit in %d bits (max 0x%" PRIx64 ")",
                        mn, LABEL(), v, v, bits, isa_umax(bits));
#undef LABEL
    *out = v;
    return 0;
}

int isa_encode(const AtlInsn *in, uint8_t out[ISA_INSN_BYTES], AtlErr *e)
{
    memset(out, 0, ISA_INSN_BYTES);
    if (in->op >= ISA_NUM_OPS) return atl_fail(e, "cannot encode unknown opcode %u", in->op);
    const AtlOpInfo *op = &isa_ops[in->op];
    const char *mn = op->mnemonic;
    if (in->wait > ISA_MAX_SEMAPHORES)
        return atl_fail(e, "%s: field wait: semaphore %d out of range 0..%d", mn, in->wait - 1, ISA_MAX_SEMAPHORES - 1);
    if (in->signal > ISA_MAX_SEMAPHORES)
        return atl_fail(e, "%s: field signal: semaphore %d out of range 0..%d", mn, in->signal - 1, ISA_MAX_SEMAPHORES - 1);
    isa_bits_put(out, 0, 8, in->op);
    isa_bits_put(out, 8, 8, in->wait);
    isa_bits_put(out, 16, 8, in->signal);
    isa_bits_put(out, 24, 16, in->layer);
    int pos = ISA_HEADER_BITS;
    const AtlFormatInfo *fmt = &isa_formats[op->format];
    for (int i = 0; i < fmt->nfields; i++) {
        const AtlFieldInfo *f = &isa_fields[fmt->fields[i].field];
        int bits = fmt->fields[i].bits;
        for (int j = 0; j < isa_field_elems(f); j++) {
            uint64_t v = 0;
            if (check_fit(f, j, bits, isa_field_get(in, f, j), mn, &v, e)) return -1;
            isa_bits_put(out, pos, bits, v);
            pos += bits;
        }
        if (f->kind == ISA_K_ADDR) {
            uint8_t sp = *isa_field_space((AtlInsn *)in, f);
            if (sp >= ISA_NUM_SPACES) return atl_fail(e, "%s: field %s: bad space code %u", mn, f->name, sp);
            isa_bits_put(out, pos, ISA_SPACE_BITS, sp);
            pos += ISA_SPACE_BITS;
        }
    }
    return 0;
}

int isa_decode(const uint8_t in[ISA_INSN_BYTES], AtlInsn *out, AtlErr *e)
{
    memset(out, 0, sizeof *out);
    unsigned opc = (unsigned)isa_bits_get(in, 0, 8);
    if (opc >= ISA_NUM_OPS) return atl_fail(e, "unknown opcode 0x%02x", opc);
    const AtlOpInfo *op = &isa_ops[opc];
    const char *mn = op->mnemonic;
    out->op = (uint8_t)opc;
    out->wait = (uint8_t)isa_bits_get(in, 8, 8);
    out->signal = (uint8_t)isa_bits_get(in, 16, 8);
    out->layer = (uint16_t)isa_bits_get(in, 24, 16);
    if (out->wait > ISA_MAX_SEMAPHORES)
        return atl_fail(e, "%s: field wait: semaphore code %u out of range 0..%d", mn, out->wait, ISA_MAX_SEMAPHORES);
    if (out->signal > ISA_MAX_SEMAPHORES)
        return atl_fail(e, "%s: field signal: semaphore code %u out of range 0..%d", mn, out->signal, ISA_MAX_SEMAPHORES);
    int pos = ISA_HEADER_BITS;
    const AtlFormatInfo *fmt = &isa_formats[op->format];
    for (int i = 0; i < fmt->nfields; i++) {
        const AtlFieldInfo *f = &isa_fields[fmt->fields[i].field];
        int bits = fmt->fields[i].bits;
        for (int j = 0; j < isa_field_elems(f); j++) {
            uint64_t v = isa_bits_get(in, pos, bits);
            pos += bits;
            if (isa_field_signed(f) && bits < 64 && (v >> (bits - 1)) & 1) v |= ~isa_umax(bits);
            if (f->kind == ISA_K_DTYPE && v >= ISA_NUM_DTYPES)
                return atl_fail(e, "%s: field %s: bad dtype code %" PRIu64, mn, f->name, v);
            isa_field_set(out, f, j, v);
        }
        if (f->kind == ISA_K_ADDR) {
            unsigned sp = (unsigned)isa_bits_get(in, pos, ISA_SPACE_BITS);
            pos += ISA_SPACE_BITS;
            if (sp >= ISA_NUM_SPACES) return atl_fail(e, "%s: field %s: bad space code %u", mn, f->name, sp);
            *isa_field_space(out, f) = (uint8_t)sp;
        }
    }
    for (int b = pos; b < ISA_INSN_BYTES * 8; b++)
        if ((in[b >> 3] >> (b & 7)) & 1)
            return atl_fail(e, "%s: non-zero padding at bit %d (format %s uses bits 0..%d)", mn, b, fmt->name, pos - 1);
    return 0;
}
