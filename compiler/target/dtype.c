/* dtype.c - the backend's data types: the one mapping from a tensor's IR
 * dtype to its storage dtype on the chip (bk_tensor_dt) and the
 * conversion of values into it; the node failure message.
 *
 * Floats (f32, f16, bf16, f64) are stored and computed in the backend's
 * storage dtype (--dtype, BkCtx.dt). Integers and bools are chip integers:
 * i8 and bool (0/1) -> i8; i16 and u8 -> i16; i32, i64, u16, u32 -> i32.
 * The chip has no 64-bit integers: an int64 value must fit int32 (the host
 * tools check graph inputs, bk_const_image checks constants); u64 has no
 * storage. Integer vector arithmetic saturates where ONNX wraps (see
 * docs/backend.md, "Data types"). Which ops are lowered on which dtypes is
 * the op table's (lower/optable.c). */
#include <stdarg.h>
#include <stdio.h>
#include "compiler/target/target.h"
#include "isa/numerics.h"
#include "isa/regs.h"

/* IR dtype -> chip storage dtype; FLOAT_DT: the backend's float storage
 * dtype (BkCtx.dt). Unlisted dtypes have no storage on the chip. */
enum { FLOAT_DT = -2 };
static const struct { int ir, isa; } storage_dtypes[] = {
    {IR_F32, FLOAT_DT}, {IR_F16, FLOAT_DT}, {IR_BF16, FLOAT_DT}, {IR_F64, FLOAT_DT},
    {IR_I8, ISA_I8}, {IR_BOOL, ISA_I8}, {IR_I16, ISA_I16}, {IR_U8, ISA_I16},
    {IR_I32, ISA_I32}, {IR_I64, ISA_I32}, {IR_U16, ISA_I32}, {IR_U32, ISA_I32},
};

int bk_tensor_dt(const BkCtx *c, int t)
{
    int ir = c->g->t[t].dtype;
    for (size_t i = 0; i < sizeof storage_dtypes / sizeof *storage_dtypes; i++)
        if (storage_dtypes[i].ir == ir) return storage_dtypes[i].isa == FLOAT_DT ? c->dt : storage_dtypes[i].isa;
    return -1;
}

int bk_tensor_es(const BkCtx *c, int t)
{
    int dt = bk_tensor_dt(c, t);
    return dt < 0 ? 0 : isa_dtype_size(dt);
}

int bk_is_int_dt(int isa_dt) { return isa_dt == ISA_I8 || isa_dt == ISA_I16 || isa_dt == ISA_I32; }

uint32_t bk_abm_dtype(int isa_dt)
{
    static const uint32_t abm[ISA_NUM_DTYPES] = {
        [ISA_I8] = ABM_DTYPE_INT8, [ISA_I16] = ABM_DTYPE_INT16, [ISA_I32] = ABM_DTYPE_INT32,
        [ISA_F16] = ABM_DTYPE_FP16, [ISA_BF16] = ABM_DTYPE_BF16, [ISA_F32] = ABM_DTYPE_FP32};
    return abm[isa_dt];
}

int bk_isa_dtype(int irdt)
{
    switch (irdt) {
    case IR_F32: return ISA_F32;
    case IR_F16: return ISA_F16;
    case IR_BF16: return ISA_BF16;
    case IR_I8: return ISA_I8;
    case IR_I16: return ISA_I16;
    case IR_I32: return ISA_I32;
    default: return -1;
    }
}

void bk_store_elem(int dt, void *dst, size_t i, double v)
{
    if (dt == ISA_F16) ((uint16_t *)dst)[i] = num_f64_to_f16(v);
    else if (dt == ISA_BF16) ((uint16_t *)dst)[i] = num_f64_to_bf16(v);
    else if (dt == ISA_F32) ((float *)dst)[i] = num_f64_to_f32(v);
    else num_store_f64((uint8_t *)dst + i * (size_t)isa_dtype_size(dt), dt, v);
}

uint64_t bk_addr(int region, uint64_t off) { return ATL_RELOC_ADDR(region, off); }

int bk_fail(const BkCtx *c, int node, AtlErr *e, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const IrNode *n = &c->g->nodes[node];
    return atl_fail(e, "node '%s' (%s): %s", n->name ? n->name : "?", n->op, msg);
}
