/* test_backend_misc_int.c - the last integer ops lowered on the chip:
 * BitShift on uint8 / uint16 / uint32 (chip i16 / i32 / i32; compiler/
 * legalize/rewrite_int.c and the BitShift rows of lower/elem_prog.c), LEFT and
 * RIGHT, with run-time and constant shift amounts, edge values (shifts by
 * 0 and by width-1, bits shifted out, x = 0 / 1 / all ones); Pow of
 * integer bases (every integer dtype, negative exponents, bases 0 / 1 / -1
 * with 31-bit exponents, int32 limits, constant operands, float
 * exponents); MaxPool of integers; MaxPool's Indices (legalize/rewrite_pool_idx.c:
 * pads, strides, ceil_mode, auto_pad, storage_order 0 / 1, ties);
 * QuantizeLinear / DequantizeLinear with run-time scale and zero point —
 * compiled
 * for configs/tiny.ini and configs/a1.ini, run on the simulator and
 * compared with the reference interpreter EXACTLY (floats within 1e-6);
 * plus rejections (a constant shift the chip's tables do not hold,
 * Indices of an integer MaxPool). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_int_run.h"

static const struct { int dt, width; } ushifts[] = {{IR_U8, 8}, {IR_U16, 16}, {IR_U32, 32}};
static const char *const dirs[] = {"LEFT", "RIGHT"};

static void shift_node(IrGraph *g, const char *ins, const char *dir)
{
    AtlErr e;
    int n = ir_add_op(g, "BitShift", "shift", ins, "y", &e);
    ir_set_attr_str(g, n, "direction", dir, &e);
    ir_add_output(g, "y", &e);
}

/* x and s both graph inputs (s gathered from the 2^s table on the chip) */
TEST(bitshift_runtime_amounts)
{
    for (size_t k = 0; k < sizeof ushifts / sizeof *ushifts; k++)
        for (int d = 0; d < 2; d++) {
            IrGraph g;
            AtlErr e;
            int64_t xd[2] = {3, 8}, sd[1] = {8};
            new_int_graph(&g, "x", ushifts[k].dt, 2, xd);
            g.opset = 11;
            ir_add_input(&g, "s", ushifts[k].dt, 1, sd, &e);
            shift_node(&g, "x,s", dirs[d]);
            char what[64];
            snprintf(what, sizeof what, "BitShift %s %s runtime", dirs[d], ir_dtype_name(ushifts[k].dt));
            /* values and shifts in [0, min(W, 16) - 1]: uint8 and uint16
             * LEFT shift bits out (wrap); uint32 results stay below 2^31 */
            int64_t hi = (ushifts[k].width < 16 ? ushifts[k].width : 16) - 1;
            run_exact(&g, what, 0, hi);
            ir_free(&g);
        }
}

/* edge values of x (0, 1, the top bit, all ones) against run-time shifts */
TEST(bitshift_edge_values_runtime_shift)
{
    for (size_t k = 0; k < 2; k++)
        for (int d = 0; d < 2; d++) {
            IrGraph g;
            int64_t sd[2] = {4, 1}, xd[1] = {6}, W = ushifts[k].width, top = (int64_t)1 << (W - 1);
            new_int_graph(&g, "s", ushifts[k].dt, 2, sd);
            g.opset = 11;
            const_of(&g, "x", ushifts[k].dt, 1, xd, (int64_t[]){0, 1, top, 2 * top - 1, 2 * top - 2, top - 1});
            shift_node(&g, "x,s", dirs[d]);
            char what[64];
            snprintf(what, sizeof what, "BitShift %s %s edges", dirs[d], ir_dtype_name(ushifts[k].dt));
            run_exact(&g, what, 0, W - 1);
            ir_free(&g);
        }
}

/* constant shift amounts 0, 1, W/2 and W-1 (uint32: results below 2^31) */
TEST(bitshift_constant_amounts)
{
    for (size_t k = 0; k < sizeof ushifts / sizeof *ushifts; k++)
        for (int d = 0; d < 2; d++) {
            IrGraph g;
            int64_t xd[2] = {5, 4}, sd[1] = {4}, W = ushifts[k].width;
            int u32left = W == 32 && d == 0;
            new_int_graph(&g, "x", ushifts[k].dt, 2, xd);
            g.opset = 11;
            int64_t s[4] = {0, 1, W / 2, u32left ? 16 : W == 32 ? 30 : W - 1};
            const_of(&g, "s", ushifts[k].dt, 1, sd, s);
            shift_node(&g, "x,s", dirs[d]);
            char what[64];
            snprintf(what, sizeof what, "BitShift %s %s const", dirs[d], ir_dtype_name(ushifts[k].dt));
            int64_t hi = u32left ? 32767 : W == 32 ? 2147483647 : ((int64_t)1 << W) - 1;
            run_exact(&g, what, 0, hi);
            ir_free(&g);
        }
}

TEST(bitshift_rejections)
{
    IrGraph g;
    int64_t xd[1] = {3};
    new_int_graph(&g, "x", IR_U8, 1, xd);
    g.opset = 11;
    const_of(&g, "s", IR_U8, 1, xd, (int64_t[]){1, 8, 2});
    shift_node(&g, "x,s", "LEFT");
    expect_rejected(&g, "shift 8 of 's' is outside 0..7", "BitShift");
    ir_free(&g);
}

/* base and exponent both graph inputs, with negative exponents (0, 1 and
 * -1 bases then give 0, 1 and +-1), in each integer dtype; ranges whose
 * powers fit the dtype (the chip saturates where ONNX wraps) */
TEST(pow_int_runtime)
{
    static const struct { int dt; int64_t lo, hi; } cases[] = {
        {IR_I32, -6, 11}, {IR_I64, -6, 11}, {IR_I16, -4, 6}, {IR_U8, 0, 4}, {IR_I8, -3, 3}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        IrGraph g;
        AtlErr e;
        int64_t xd[2] = {4, 16}, yd[2] = {4, 16};
        new_int_graph(&g, "x", cases[k].dt, 2, xd);
        ir_add_input(&g, "y", cases[k].dt, 2, yd, &e);
        ir_add_op(&g, "Pow", "ipow", "x,y", "z", &e);
        ir_add_output(&g, "z", &e);
        char what[64];
        snprintf(what, sizeof what, "Pow %s runtime", ir_dtype_name(cases[k].dt));
        run_exact(&g, what, cases[k].lo, cases[k].hi);
        ir_free(&g);
    }
}

/* edge bases against the largest exponents (31 bits: 2^31 - 1 odd and
 * 2^31 - 2 even, also negated), exact int32 limits ((-2)^31, 2^30,
 * 46340^2) and 0^0 = 1; base and exponent made run-time by adding the
 * input x (all zeros), so that nothing is constant-folded */
TEST(pow_int_edges)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[1] = {10};
    new_int_graph(&g, "x", IR_I32, 1, xd);
    const_of(&g, "b", IR_I32, 1, xd, (int64_t[]){0, 1, -1, 0, 1, -1, -2, 2, 46340, -1});
    const_of(&g, "y", IR_I32, 1, xd,
             (int64_t[]){2147483647, 2147483646, 2147483647, 0, -2147483647, -2147483646, 31, 30, 2, -2147483647});
    ir_add_op(&g, "Add", "brt", "x,b", "br", &e);
    ir_add_op(&g, "Add", "yrt", "x,y", "yr", &e);
    ir_add_op(&g, "Pow", "pedge", "br,yr", "z", &e);
    ir_add_output(&g, "z", &e);
    run_exact(&g, "Pow int32 edges", 0, 0);
    ir_free(&g);
}

/* a constant base by a run-time exponent, a run-time base by a constant
 * scalar exponent */
TEST(pow_int_constant_operands)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[2] = {3, 5}, bd[1] = {5};
    new_int_graph(&g, "x", IR_I32, 2, xd);
    const_of(&g, "b", IR_I32, 1, bd, (int64_t[]){0, 1, -1, 3, -7});
    const_of(&g, "three", IR_I32, 0, NULL, (int64_t[]){3});
    ir_add_op(&g, "Pow", "pbase", "b,x", "w", &e);
    ir_add_op(&g, "Pow", "pcube", "x,three", "q", &e);
    ir_add_output(&g, "w", &e);
    ir_add_output(&g, "q", &e);
    run_exact(&g, "Pow int32 constant operand", -5, 9);
    ir_free(&g);
}

/* an integer base by float exponents (integer-valued: the chip truncates
 * the exponent, the interpreter the float power) */
TEST(pow_int_base_float_exponent)
{
    static const int dts[] = {IR_I32, IR_I64};
    for (size_t k = 0; k < 2; k++) {
        IrGraph g;
        AtlErr e;
        int64_t xd[2] = {3, 6}, yd[1] = {6};
        new_int_graph(&g, "x", dts[k], 2, xd);
        float yv[6] = {0.0f, 1.0f, 2.0f, 3.0f, -1.0f, 5.0f};
        ir_add_const(&g, "y", IR_F32, 1, yd, yv, &e);
        ir_add_op(&g, "Pow", "fpow", "x,y", "z", &e);
        ir_add_output(&g, "z", &e);
        char what[64];
        snprintf(what, sizeof what, "Pow %s ^ float", ir_dtype_name(dts[k]));
        run_exact(&g, what, -7, 7);
        ir_free(&g);
    }
}

/* MaxPool on uint8 / int8 (ONNX's integer pools; v.maxpool on the chip integer), with
 * padding (the pad never wins), strides, ceil_mode, 1-D */
TEST(maxpool_integer)
{
    static const int dts[] = {IR_U8, IR_I8};
    for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
        IrGraph g;
        AtlErr e;
        int64_t xd[4] = {2, 3, 7, 6}, x1[3] = {1, 2, 9};
        new_int_graph(&g, "x", dts[k], 4, xd);
        ir_add_input(&g, "v", dts[k], 3, x1, &e);
        int n = ir_add_op(&g, "MaxPool", "mp", "x", "y", &e);
        ir_set_attr_ints(&g, n, "kernel_shape", (int64_t[]){3, 2}, 2, &e);
        ir_set_attr_ints(&g, n, "strides", (int64_t[]){2, 2}, 2, &e);
        ir_set_attr_ints(&g, n, "pads", (int64_t[]){1, 1, 1, 0}, 4, &e);
        ir_set_attr_int(&g, n, "ceil_mode", 1, &e);
        n = ir_add_op(&g, "MaxPool", "mp1", "v", "w", &e);
        ir_set_attr_ints(&g, n, "kernel_shape", (int64_t[]){3}, 1, &e);
        ir_set_attr_ints(&g, n, "pads", (int64_t[]){2, 1}, 2, &e);
        ir_add_output(&g, "y", &e);
        ir_add_output(&g, "w", &e);
        char what[64];
        snprintf(what, sizeof what, "MaxPool %s", ir_dtype_name(dts[k]));
        run_exact(&g, what, dts[k] == IR_U8 ? 0 : -128, dts[k] == IR_U8 ? 255 : 127);
        ir_free(&g);
    }
}

/* a MaxPool with Indices on x (run-time) = in + c: in is the graph input
 * (all 0 when ties are wanted, so x = c with its repeated values) */
static void pool_indices_case(const char *what, const int64_t *k, const int64_t *st, const int64_t *pads, const char *auto_pad,
                              int ceil, int order, int ties)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {2, 2, 5, 7};
    float c[2 * 2 * 5 * 7];
    for (int i = 0; i < 2 * 2 * 5 * 7; i++) c[i] = ties ? (float)((i * 7) % 4) : 0.0f;
    new_int_graph(&g, "in", IR_F32, 4, xd);
    g.opset = 12;
    ir_add_const(&g, "c", IR_F32, 4, xd, c, &e);
    ir_add_op(&g, "Add", "mk", "in,c", "x", &e);
    int n = ir_add_op(&g, "MaxPool", "mpi", "x", "y,idx", &e);
    ir_set_attr_ints(&g, n, "kernel_shape", k, 2, &e);
    if (st) ir_set_attr_ints(&g, n, "strides", st, 2, &e);
    if (pads) ir_set_attr_ints(&g, n, "pads", pads, 4, &e);
    if (auto_pad) ir_set_attr_str(&g, n, "auto_pad", auto_pad, &e);
    if (ceil) ir_set_attr_int(&g, n, "ceil_mode", 1, &e);
    if (order) ir_set_attr_int(&g, n, "storage_order", 1, &e);
    ir_add_output(&g, "y", &e);
    ir_add_output(&g, "idx", &e);
    run_exact(&g, what, 0, ties ? 0 : 1);
    ir_free(&g);
}

TEST(maxpool_indices)
{
    const int64_t k22[2] = {2, 2}, k33[2] = {3, 3}, k23[2] = {2, 3}, s22[2] = {2, 2}, s12[2] = {1, 2};
    const int64_t p1111[4] = {1, 1, 1, 1}, p0110[4] = {0, 1, 1, 0};
    pool_indices_case("Indices 2x2 s2", k22, s22, NULL, NULL, 0, 0, 0);
    pool_indices_case("Indices 3x3 pads", k33, NULL, p1111, NULL, 0, 0, 0);
    pool_indices_case("Indices 3x3 pads col-major", k33, NULL, p1111, NULL, 0, 1, 0);
    pool_indices_case("Indices 2x3 s12 ceil", k23, s12, p0110, NULL, 1, 0, 0);
    pool_indices_case("Indices 3x3 s2 SAME_UPPER", k33, s22, NULL, "SAME_UPPER", 0, 1, 0);
    pool_indices_case("Indices ties 3x3 pads", k33, NULL, p1111, NULL, 0, 0, 1);
    pool_indices_case("Indices ties col-major s2", k23, s22, p0110, NULL, 1, 1, 1);
}

TEST(maxpool_indices_rejections)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[4] = {1, 1, 4, 4};
    new_int_graph(&g, "x", IR_U8, 4, xd);
    g.opset = 12;
    int n = ir_add_op(&g, "MaxPool", "mpu", "x", "y,idx", &e);
    ir_set_attr_ints(&g, n, "kernel_shape", (int64_t[]){2, 2}, 2, &e);
    ir_add_output(&g, "y", &e);
    ir_add_output(&g, "idx", &e);
    expect_rejected(&g, "mpu", "float tensors only");
    ir_free(&g);
}

/* QuantizeLinear / DequantizeLinear with run-time scale and zero point
 * (graph inputs made positive on the chip: scale = |s| + 1/64), per tensor
 * and per axis, int8 and uint8 */
TEST(quant_runtime_parameters)
{
    static const int qdts[] = {IR_U8, IR_I8};
    for (size_t k = 0; k < 2; k++)
        for (int per_axis = 0; per_axis < 2; per_axis++) {
            IrGraph g;
            AtlErr e;
            int64_t xd[3] = {2, 3, 10}, cd[1] = {3};
            new_int_graph(&g, "x", IR_F32, 3, xd);
            ir_add_input(&g, "s", IR_F32, per_axis, cd, &e);
            ir_add_input(&g, "zp", qdts[k], per_axis, cd, &e);
            float eps = 1.0f / 64;
            ir_add_const(&g, "eps", IR_F32, 0, NULL, &eps, &e);
            ir_add_op(&g, "Abs", "sa", "s", "s_abs", &e);
            ir_add_op(&g, "Add", "sp", "s_abs,eps", "scale", &e);
            int n = ir_add_op(&g, "QuantizeLinear", "q", "x,scale,zp", "q_out", &e);
            if (per_axis) ir_set_attr_int(&g, n, "axis", 1, &e);
            n = ir_add_op(&g, "DequantizeLinear", "dq", "q_out,scale,zp", "dq_out", &e);
            if (per_axis) ir_set_attr_int(&g, n, "axis", 1, &e);
            ir_add_output(&g, "q_out", &e);
            ir_add_output(&g, "dq_out", &e);
            char what[64];
            snprintf(what, sizeof what, "Q/DQ %s run-time %s", ir_dtype_name(qdts[k]), per_axis ? "axis" : "tensor");
            run_exact(&g, what, qdts[k] == IR_U8 ? 0 : -128, qdts[k] == IR_U8 ? 255 : 127);
            ir_free(&g);
        }
}

int main(void)
{
    RUN(bitshift_runtime_amounts);
    RUN(bitshift_edge_values_runtime_shift);
    RUN(bitshift_constant_amounts);
    RUN(bitshift_rejections);
    RUN(pow_int_runtime);
    RUN(pow_int_edges);
    RUN(pow_int_constant_operands);
    RUN(pow_int_base_float_exponent);
    RUN(maxpool_integer);
    RUN(maxpool_indices);
    RUN(maxpool_indices_rejections);
    RUN(quant_runtime_parameters);
    return test_summary("test_backend_misc_int");
}
