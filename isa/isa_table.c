/* isa_table.c - the instruction tables of isa.h turned into arrays that the
 * encoder, assembler, disassembler, simulator and doc generator iterate over. */
#include <string.h>
#include "isa/isa.h"

const AtlFieldInfo isa_fields[ISA_NUM_FIELDS] = {
#define F(id, name, kind, member, doc) \
    [ISA_F_##id] = {name, kind, offsetof(AtlInsn, member), sizeof(((AtlInsn *)0)->member), doc},
    ISA_FIELDS(F)
#undef F
};

const AtlFormatInfo isa_formats[ISA_NUM_FORMATS] = {
#define FLD(f, b) {ISA_F_##f, b},
#define FMT(id, fields) \
    [ISA_FMT_##id] = {#id, sizeof((AtlFormatField[]){{0, 0}, fields}) / sizeof(AtlFormatField) - 1, {fields}},
    ISA_FORMATS(FMT, FLD)
#undef FMT
#undef FLD
};

const AtlOpInfo isa_ops[ISA_NUM_OPS] = {
#define X(id, mn, eng, fmt, doc) [ISA_OP_##id] = {mn, eng, ISA_FMT_##fmt, doc},
    ISA_OPS(X)
#undef X
};

static const struct { const char *name; int size; } dtype_table[ISA_NUM_DTYPES] = {
#define X(id, name, size) [ISA_##id] = {name, size},
    ISA_DTYPES(X)
#undef X
};

static const struct { const char *name; int peer; const char *doc; } space_table[ISA_NUM_SPACES] = {
#define X(id, name, peer, doc) [ISA_SPACE_##id] = {name, peer, doc},
    ISA_SPACES(X)
#undef X
};

static const char *const engine_names[ISA_NUM_ENGINES + 1] = {
#define X(id, name) [ISA_ENGINE_##id] = name,
    ISA_ENGINES(X)
#undef X
    [ISA_ENGINE_ANY] = "any",
};

const char *isa_dtype_name(int d) { return d >= 0 && d < ISA_NUM_DTYPES ? dtype_table[d].name : "?"; }
int isa_dtype_size(int d) { return d >= 0 && d < ISA_NUM_DTYPES ? dtype_table[d].size : 0; }
const char *isa_space_name(int s) { return s >= 0 && s < ISA_NUM_SPACES ? space_table[s].name : "?"; }
int isa_space_is_peer(int s) { return s >= 0 && s < ISA_NUM_SPACES && space_table[s].peer; }
const char *isa_space_doc(int s) { return s >= 0 && s < ISA_NUM_SPACES ? space_table[s].doc : "?"; }
const char *isa_engine_name(int e) { return e >= 0 && e <= ISA_ENGINE_ANY ? engine_names[e] : "?"; }

int isa_dtype_from_name(const char *s)
{
    for (int i = 0; i < ISA_NUM_DTYPES; i++)
        if (!strcmp(s, dtype_table[i].name)) return i;
    return -1;
}

uint64_t isa_shape_bytes(const AtlInsn *in)
{
    uint64_t n = (uint64_t)isa_dtype_size(in->dtype);
    for (int d = 0; d < 4; d++) n *= in->shape[d];
    return n;
}

int isa_op_from_mnemonic(const char *s)
{
    for (int i = 0; i < ISA_NUM_OPS; i++)
        if (!strcmp(s, isa_ops[i].mnemonic)) return i;
    return -1;
}
