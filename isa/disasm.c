/* disasm.c - one instruction as one line of assembler text, in exactly the
 * syntax isa_asm_line / prog_assemble read back (docs/asm.md):
 *   MNEMONIC field=value ... [wait=S] [signal=S] [layer=L]
 * Fields come in format order; a loop over the op's format, no per-opcode
 * code. Floats print as the shortest %g that reads back to the same bits,
 * or as bits:0xXXXXXXXX when no decimal form does (NaN payloads).
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "isa/isa.h"
#include "isa/field_access.h"

typedef struct {
    char *buf;
    size_t cap, len; /* len counts what would have been written */
} Out;

static void out_printf(Out *o, const char *fmt, ...) ATL_PRINTF(2, 3);
static void out_printf(Out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) o->len += (size_t)n;
}

static void print_f32(Out *o, uint32_t bits)
{
    float f;
    memcpy(&f, &bits, 4);
    if (isinf(f)) { out_printf(o, "%s", f < 0 ? "-inf" : "inf"); return; }
    if (!isnan(f)) {
        char tmp[48];
        for (int prec = 6; prec <= 9; prec++) {
            snprintf(tmp, sizeof tmp, "%.*g", prec, (double)f);
            float back = strtof(tmp, NULL);
            uint32_t bb;
            memcpy(&bb, &back, 4);
            if (bb == bits) { out_printf(o, "%s", tmp); return; }
        }
    }
    out_printf(o, "bits:0x%08" PRIx32, bits);
}

int isa_disasm(const AtlInsn *in, char *buf, size_t cap)
{
    Out o = {buf, cap, 0};
    if (cap) buf[0] = 0;
    if (in->op >= ISA_NUM_OPS) {
        out_printf(&o, ".invalid op=%u", in->op);
    } else {
        const AtlOpInfo *op = &isa_ops[in->op];
        const AtlFormatInfo *fmt = &isa_formats[op->format];
        out_printf(&o, "%s", op->mnemonic);
        for (int i = 0; i < fmt->nfields; i++) {
            const AtlFieldInfo *f = &isa_fields[fmt->fields[i].field];
            out_printf(&o, " %s=", f->name);
            uint64_t v = isa_field_get(in, f, 0);
            switch (f->kind) {
            case ISA_K_UINT:
            case ISA_K_FLAG:
                out_printf(&o, "%" PRIu64, v);
                break;
            case ISA_K_INT:
                out_printf(&o, "%" PRId64, (int64_t)v);
                break;
            case ISA_K_DTYPE:
                out_printf(&o, "%s", isa_dtype_name((int)v));
                break;
            case ISA_K_ADDR: {
                int sp = *isa_field_space((AtlInsn *)in, f);
                if (isa_space_is_peer(sp))   /* NAME@CLUSTER:OFFSET */
                    out_printf(&o, "%s@%d:0x%" PRIx64, isa_space_name(sp), isa_peer_cluster(v), isa_peer_offset(v));
                else
                    out_printf(&o, "%s:0x%" PRIx64, isa_space_name(sp), v);
                break;
            }
            case ISA_K_LMEM:
                out_printf(&o, "0x%" PRIx64, v);
                break;
            case ISA_K_DIMS:
            case ISA_K_STRIDES:
                for (int j = 0; j < 4; j++) {
                    uint64_t x = isa_field_get(in, f, j);
                    if (f->kind == ISA_K_DIMS) out_printf(&o, "%s%" PRIu64, j ? "," : "", x);
                    else out_printf(&o, "%s%" PRId64, j ? "," : "", (int64_t)x);
                }
                break;
            case ISA_K_F32:
                print_f32(&o, (uint32_t)v);
                break;
            }
        }
    }
    if (in->wait) out_printf(&o, " wait=%d", in->wait - 1);
    if (in->signal) out_printf(&o, " signal=%d", in->signal - 1);
    if (in->layer) out_printf(&o, " layer=%u", in->layer);
    if (cap && o.len >= cap) buf[cap - 1] = 0;
    return (int)(o.len < cap ? o.len : (cap ? cap - 1 : 0));
}
