/* dtype.c - the backend's data types: the one mapping from a tensor's
 * IR dtype to its storage dtype on the chip (bk_tensor_dt), and the check
 * that a node's tensors are ones its lowering handles (bk_check_dtypes).
 *
 * Floats (f32, f16, bf16, f64) are stored and computed in the backend's
 * storage dtype (--dtype, BkCtx.dt). Integers and bools are chip integers:
 * i8 and bool (0/1) -> i8; i16 and u8 -> i16; i32, i64, u16, u32 -> i32.
 * The chip has no 64-bit integers: an int64 value must fit int32 (the host
 * tools check graph inputs, bk_const_image checks constants); u64 has no
 * storage. Integer vector arithmetic saturates where ONNX wraps (see
 * docs/backend.md, "Data types").
 * Integer tensors are lowered for data movement (DMA moves bytes of any
 * dtype), the elementwise ops the vector unit does exactly on integers
 * (Add Sub Mul Max Min Neg Abs Relu Clip Identity, Div Mod, BitShift, Pow), MaxPool (v.maxpool), ReduceSum/
 * Max/Min (v.rsum/v.rmax on integers) and Cast; every data input of such a
 * node must have the output's storage dtype, except for the ops whose
 * inputs differ by definition (comparisons, IsNaN, IsInf: bool results;
 * Where: a bool condition; Pow: an exponent of another dtype than the base).
 * Cast: the same storage dtype is a copy; otherwise one v.cast (round half
 * even, saturate) on the vector unit (integer -> bool: min(|x|, 1) first;
 * float -> integer: v.trunc first, as ONNX truncates toward zero; float ->
 * bool: x != 0 with NaN true, by v.eq; compiler/bk_elem_prog.c).
 * CastLike is a Cast to its second input's dtype (which it does not read).
 * Not checked here: the quantised ops (bk_lower_quant.c) and the index
 * ops (bk_compile.c's index_ops: ArgMax, losses, gathers, OneHot, TopK,
 * Trilu), whose lowerings check their mixed dtypes themselves
 * (bk_need_dt). */
#include <string.h>
#include "compiler/target/target.h"

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

/* Ops lowered on integer tensors; data_in = how many leading inputs carry
 * data of the output's dtype (the rest set shapes, or are Gather indices),
 * -1 all of them. */
static const struct { const char *op; int data_in; } int_ops[] = {
    {"Transpose", 1}, {"Concat", -1}, {"Slice", 1}, {"Split", 1}, {"Gather", 1}, {"Pad", 1}, {"Expand", 1},
    {"Reshape", 1}, {"Flatten", 1}, {"Squeeze", 1}, {"Unsqueeze", 1}, {"Identity", 1}, {"Dropout", 1},
    {"Resize", 1}, {"Upsample", 1},
    {"Add", -1}, {"Sub", -1}, {"Mul", -1}, {"Max", -1}, {"Min", -1}, {"Neg", 1}, {"Abs", 1}, {"Relu", 1}, {"Clip", -1},
    {"ReduceSum", 1}, {"ReduceMax", 1}, {"ReduceMin", 1},
    /* bk_elem_prog.c: bool results of any inputs, bools, integer Div / Mod,
     * Where's data of any dtype, a float Pow's integer exponent */
    {"Equal", 0}, {"Less", 0}, {"Greater", 0}, {"LessOrEqual", 0}, {"GreaterOrEqual", 0}, {"IsNaN", 0}, {"IsInf", 0},
    {"Not", -1}, {"And", -1}, {"Or", -1}, {"Xor", -1}, {"Div", -1}, {"Mod", -1}, {"Where", 0}, {"Pow", 1},
    {"BitShift", -1}, {"MaxPool", 1},
};

static int int_op_index(const char *op)
{
    for (size_t i = 0; i < sizeof int_ops / sizeof *int_ops; i++) if (!strcmp(int_ops[i].op, op)) return (int)i;
    return -1;
}

int bk_check_dtypes(const BkCtx *c, int node, AtlErr *e)
{
    const IrGraph *g = c->g;
    const IrNode *n = &g->nodes[node];
    if (c->gelu_src[node] >= 0) return 0;   /* a float pattern */
    for (int k = 0; k < n->nout; k++) {
        int t = n->out[k];
        if (t >= 0 && bk_tensor_dt(c, t) < 0)
            return bk_fail(c, node, e, "output '%s' has dtype %s, which the chip cannot hold", g->t[t].name, ir_dtype_name(g->t[t].dtype));
    }
    if (!strcmp(n->op, "Cast") || !strcmp(n->op, "CastLike")) return 0;   /* checked by bk_lower_cast */
    int yt = -1;                             /* the first output present (RNN's are optional) */
    for (int k = 0; k < n->nout && yt < 0; k++) yt = n->out[k];
    if (yt < 0) return 0;
    int ydt = bk_tensor_dt(c, yt);
    int k0 = int_op_index(n->op), lim = k0 >= 0 && int_ops[k0].data_in >= 0 ? int_ops[k0].data_in : n->nin;
    if (lim > n->nin) lim = n->nin;
    if (!bk_is_int_dt(ydt)) {
        /* a float layer reads its data inputs as floats */
        for (int k = 0; k < lim; k++) {
            int t = n->in[k];
            if (t >= 0 && !g->t[t].data && bk_is_int_dt(bk_tensor_dt(c, t)))
                return bk_fail(c, node, e, "input '%s' is %s and output '%s' is %s: mixed dtypes are not lowered",
                               g->t[t].name, ir_dtype_name(g->t[t].dtype), g->t[yt].name, ir_dtype_name(g->t[yt].dtype));
        }
        return 0;
    }
    if (k0 < 0)
        return bk_fail(c, node, e, "output '%s' is %s: this op is not lowered on integer or bool tensors", g->t[yt].name,
                       ir_dtype_name(g->t[yt].dtype));
    for (int k = 0; k < lim; k++) {
        int t = n->in[k];
        if (t >= 0 && bk_tensor_dt(c, t) != ydt)
            return bk_fail(c, node, e, "input '%s' is %s (chip %s) and output '%s' is %s (chip %s): mixed dtypes are not lowered",
                           g->t[t].name, ir_dtype_name(g->t[t].dtype), isa_dtype_name(bk_tensor_dt(c, t) < 0 ? ydt : bk_tensor_dt(c, t)),
                           g->t[yt].name, ir_dtype_name(g->t[yt].dtype), isa_dtype_name(ydt));
    }
    return 0;
}

int bk_lower_cast(BkCtx *c, int node, BkGroup *g, AtlErr *e)
{
    const IrGraph *gr = c->g;
    const IrNode *n = &gr->nodes[node];
    const IrTensor *x = &gr->t[n->in[0]], *y = &gr->t[n->out[0]];
    int xdt = bk_tensor_dt(c, n->in[0]), ydt = bk_tensor_dt(c, n->out[0]);
    if (xdt < 0) return bk_fail(c, node, e, "input '%s' has dtype %s, which the chip cannot hold", x->name, ir_dtype_name(x->dtype));
    int to_bool = y->dtype == IR_BOOL && x->dtype != IR_BOOL;   /* int8 -> bool is not a copy */
    if (xdt == ydt && !to_bool) return bk_lower_move(c, node, g, e);   /* the same chip values: a copy */
    /* one v.cast step (integer to bool: min(|x|, 1) first; float to integer:
     * v.trunc first; float to bool: x != 0, bk_elem_prog.c) */
    return bk_lower_elem(c, node, g, e);
}
