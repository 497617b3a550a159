/* disasm.c - one-line text of an instruction for fault reports and the
 * trace, generated from the format tables of isa.h (mnemonic, then each
 * field of the op's format as name=value, then the sync header). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "sim/sim_int.h"

static int put(char *buf, size_t cap, size_t *len, const char *fmt, ...) ATL_PRINTF(4, 5);
static int put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = *len < cap ? vsnprintf(buf + *len, cap - *len, fmt, ap) : 0;
    va_end(ap);
    if (n > 0) *len += (size_t)n;
    if (*len >= cap) *len = cap ? cap - 1 : 0;
    return n;
}

int sim_disasm(const AtlInsn *in, char *buf, size_t cap)
{
    size_t len = 0;
    if (!cap) return 0;
    buf[0] = 0;
    if (in->op >= ISA_NUM_OPS) { put(buf, cap, &len, ".illegal op=%d", in->op); return (int)len; }
    const AtlFormatInfo *f = &isa_formats[isa_ops[in->op].format];
    put(buf, cap, &len, "%s", isa_ops[in->op].mnemonic);
    const char *base = (const char *)in;
    for (int i = 0; i < f->nfields; i++) {
        const AtlFieldInfo *fi = &isa_fields[f->fields[i].field];
        const char *p = base + fi->offset;
        put(buf, cap, &len, " %s=", fi->name);
        switch (fi->kind) {
        case ISA_K_DTYPE: put(buf, cap, &len, "%s", isa_dtype_name(*(const uint8_t *)p)); break;
        case ISA_K_ADDR: {
            uint8_t sp = f->fields[i].field == ISA_F_DST ? in->dst_space : in->src_space;
            put(buf, cap, &len, "%s:0x%llx", isa_space_name(sp), (unsigned long long)*(const uint64_t *)p);
            break;
        }
        case ISA_K_LMEM: put(buf, cap, &len, "0x%llx", (unsigned long long)*(const uint64_t *)p); break;
        case ISA_K_DIMS: {
            const uint32_t *d = (const uint32_t *)p;
            put(buf, cap, &len, "%u,%u,%u,%u", d[0], d[1], d[2], d[3]);
            break;
        }
        case ISA_K_STRIDES: {
            const int32_t *d = (const int32_t *)p;
            put(buf, cap, &len, "%d,%d,%d,%d", d[0], d[1], d[2], d[3]);
            break;
        }
        case ISA_K_F32: put(buf, cap, &len, "%.9g", (double)*(const float *)p); break;
        case ISA_K_INT:
            put(buf, cap, &len, "%d", *(const int32_t *)p);
            break;
        default: {
            unsigned long long v = 0;
            if (fi->size == 1) v = *(const uint8_t *)p;
            else if (fi->size == 2) v = *(const uint16_t *)p;
            else if (fi->size == 4) v = *(const uint32_t *)p;
            else v = *(const uint64_t *)p;
            put(buf, cap, &len, "%llu", v);
        }
        }
    }
    if (in->wait) put(buf, cap, &len, " wait=%d", in->wait - 1);
    if (in->signal) put(buf, cap, &len, " signal=%d", in->signal - 1);
    if (in->layer) put(buf, cap, &len, " layer=%d", in->layer);
    return (int)len;
}
