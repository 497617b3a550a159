/* test_backend_scatter.c - ScatterElements, Scatter (opset 10) and
 * ScatterND on the chip (a copy of data, then dma.scatter of the updates
 * at row indices computed on the chip): every axis, negative indices,
 * int64 and int32 indices, run-time and constant, float and integer data,
 * repeated indices (the last update wins, as in the interpreter), enough
 * updates for several tiles; an out-of-range run-time index faults naming
 * dma.scatter and its entry; reductions are rejected naming the node.
 * ReverseSequence (a dma.gather of rows whose source row is computed on
 * the chip): time_axis 0 and 1, rank 2 to 4, run-time and constant
 * lengths, f32 and i32 data; a length outside [0, T] faults in the gather.
 * Compiled for configs/tiny.ini and configs/a1.ini, run on the simulator,
 * compared EXACTLY with the reference interpreter (bk_int_run.h). */
#include "test/compiler/bk_int_run.h"

/* data [dims] (dtype dt) -> op(data, idx, upd) -> y; idx (idt) of idims,
 * a constant of values iv when given, else an input; upd of udims.
 * Returns the node. */
static int scatter_graph(IrGraph *g, const char *op, int opset, int dt, int nd, const int64_t *dims, int idt, int ni,
                          const int64_t *idims, const int64_t *iv, int nu, const int64_t *udims)
{
    AtlErr e;
    new_int_graph(g, "data", dt, nd, dims);
    g->opset = opset;
    if (iv) const_of(g, "idx", idt, ni, idims, iv);
    else ir_add_input(g, "idx", idt, ni, idims, &e);
    ir_add_input(g, "upd", dt, nu, udims, &e);
    int n = ir_add_op(g, op, "sc", "data,idx,upd", "y", &e);
    ir_add_output(g, "y", &e);
    return n;
}

static void set_axis(IrGraph *g, int node, int axis)
{
    AtlErr e;
    ir_set_attr_int(g, node, "axis", axis, &e);
}

/* Pseudo-random index values in [lo, hi]. */
static void index_values(int64_t *v, int64_t n, int64_t lo, int64_t hi)
{
    uint32_t seed = 99;
    for (int64_t i = 0; i < n; i++) {
        int64_t q = lo + (int64_t)((e2e_frand(&seed) + 1.0f) * 0.5f * (float)(hi - lo + 1));
        v[i] = q > hi ? hi : q;
    }
}

TEST(scatter_elements_every_axis)
{
    int64_t dims[3] = {4, 5, 6};
    static const int dts[2] = {IR_I32, IR_F32};
    for (int axis = -1; axis < 3; axis++)
        for (int k = 0; k < 4; k++) {   /* bit 0: constant indices; bit 1: f32 data, int32 indices */
            int64_t idims[3] = {3, 4, 5}, iv[6 * 4 * 5];
            idims[(axis + 3) % 3] = 6;   /* more entries than the axis holds: repeated indices */
            int64_t n = idims[0] * idims[1] * idims[2];
            index_values(iv, n, -4, 3);
            IrGraph g;
            char what[64];
            int n0 = scatter_graph(&g, "ScatterElements", 14, dts[k >> 1], 3, dims, k >> 1 ? IR_I32 : IR_I64, 3, idims,
                          k & 1 ? iv : NULL, 3, idims);
            set_axis(&g, n0, axis);
            snprintf(what, sizeof what, "scatter_el ax%d %s %s", axis, k & 1 ? "const" : "input", k >> 1 ? "f32/i32" : "i32/i64");
            run_exact(&g, what, -4, 3);   /* axis extents >= 4: every index in range */
            ir_free(&g);
        }
}

TEST(scatter_opset10_and_many_tiles)
{
    int64_t dims[2] = {5, 4}, idims[2] = {2, 4};
    IrGraph g;
    set_axis(&g, scatter_graph(&g, "Scatter", 10, IR_F32, 2, dims, IR_I64, 2, idims, NULL, 2, idims), 0);
    run_exact(&g, "scatter opset 10 axis 0", -4, 3);
    ir_free(&g);
    /* 90000 updates: more than one 65535-element tile, all in order */
    int64_t big[2] = {300, 300};
    set_axis(&g, scatter_graph(&g, "ScatterElements", 14, IR_I32, 2, big, IR_I64, 2, big, NULL, 2, big), 1);
    run_exact(&g, "scatter_el 300x300 ax1", -300, 299);
    ir_free(&g);
}

TEST(scatter_nd)
{
    static const struct { int ni; int64_t id[2]; int nu; int64_t ud[3]; } cases[] = {
        {2, {3, 1}, 3, {3, 5, 6}},   /* whole [5][6] slices */
        {2, {3, 2}, 2, {3, 6}},      /* rows */
        {2, {7, 3}, 1, {7}},         /* single elements, repeated */
        {1, {2}, 1, {6}},            /* one tuple of 2: one row */
    };
    int64_t dims[3] = {4, 5, 6};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int constant = 0; constant < 2; constant++) {
            int64_t iv[21], n = cases[c].id[0] * (cases[c].ni > 1 ? cases[c].id[1] : 1);
            index_values(iv, n, -4, 3);
            IrGraph g;
            char what[64];
            scatter_graph(&g, "ScatterND", 16, c % 2 ? IR_I32 : IR_F32, 3, dims, IR_I64, cases[c].ni, cases[c].id,
                          constant ? iv : NULL, cases[c].nu, cases[c].ud);
            snprintf(what, sizeof what, "scatter_nd case %zu %s", c, constant ? "const" : "input");
            run_exact(&g, what, -4, 3);
            ir_free(&g);
        }
}

TEST(out_of_range_index_faults)
{
    int64_t dims[2] = {3, 4}, idims[2] = {2, 4}, tdims[2] = {2, 2}, udims[1] = {2};
    for (int nd = 0; nd < 2; nd++) {
        IrGraph g;
        char msg[1024] = "";
        if (nd) scatter_graph(&g, "ScatterND", 16, IR_I32, 2, dims, IR_I64, 2, tdims, NULL, 1, udims);
        else scatter_graph(&g, "ScatterElements", 14, IR_I32, 2, dims, IR_I64, 2, idims, NULL, 2, idims);
        /* indices in [20, 30]: all outside the axes of 3 and 4 */
        int rc = run_int_or_fault(&g, "configs/tiny.ini", 20, 30, "dma.scatter: index", msg, sizeof msg);
        CHECKF(rc == 0, "%s", msg);
        ir_free(&g);
    }
}

TEST(reductions_rejected)
{
    static const char *const reds[] = {"add", "mul"};
    int64_t dims[2] = {3, 4}, idims[2] = {2, 4};
    for (int r = 0; r < 2; r++)
        for (int nd = 0; nd < 2; nd++) {
            IrGraph g;
            AtlErr e;
            int64_t tdims[2] = {2, 1}, udims[2] = {2, 4};
            int n0 = nd ? scatter_graph(&g, "ScatterND", 16, IR_F32, 2, dims, IR_I64, 2, tdims, NULL, 2, udims)
                        : scatter_graph(&g, "ScatterElements", 16, IR_F32, 2, dims, IR_I64, 2, idims, NULL, 2, idims);
            ir_set_attr_str(&g, n0, "reduction", reds[r], &e);
            expect_rejected(&g, "'sc'", "the DMA engine cannot accumulate");
            ir_free(&g);
        }
}

/* x [dims] (dtype dt) -> ReverseSequence(time_axis ta) with lens [B]
 * (constant lv when given) -> y. */
static void revseq_graph(IrGraph *g, int dt, int nd, const int64_t *dims, int ta, const int64_t *lv)
{
    AtlErr e;
    int64_t B = dims[1 - ta];
    new_int_graph(g, "x", dt, nd, dims);
    g->opset = 10;
    if (lv) const_of(g, "lens", IR_I64, 1, &B, lv);
    else ir_add_input(g, "lens", IR_I64, 1, &B, &e);
    int n = ir_add_op(g, "ReverseSequence", "rs", "x,lens", "y", &e);
    ir_set_attr_int(g, n, "time_axis", ta, &e);
    ir_set_attr_int(g, n, "batch_axis", 1 - ta, &e);
    ir_add_output(g, "y", &e);
}

TEST(reverse_sequence)
{
    static const struct { int nd; int64_t dims[4]; } shapes[] = {{2, {5, 5}}, {3, {5, 7, 3}}, {4, {7, 5, 2, 3}}, {3, {40, 60, 2}}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
        for (int ta = 0; ta < 2; ta++)
            for (int k = 0; k < 3; k++) {   /* 0: run-time lens, f32; 1: constant lens; 2: run-time lens, i32 data */
                int64_t T = shapes[c].dims[ta], B = shapes[c].dims[1 - ta], lv[60];
                if (T < 5) continue;
                index_values(lv, B, 0, T);
                IrGraph g;
                char what[64];
                revseq_graph(&g, k == 2 ? IR_I32 : IR_F32, shapes[c].nd, shapes[c].dims, ta, k == 1 ? lv : NULL);
                snprintf(what, sizeof what, "revseq shape %zu time_axis %d %s", c, ta, k == 1 ? "const" : k ? "input i32" : "input");
                run_exact(&g, what, 0, 5);   /* lengths 0..5 <= T */
                ir_free(&g);
            }
}

TEST(reverse_sequence_bad_length_faults)
{
    int64_t dims[3] = {5, 4, 2};
    for (int neg = 0; neg < 2; neg++) {
        IrGraph g;
        char msg[1024] = "";
        revseq_graph(&g, IR_I32, 3, dims, 0, NULL);
        int rc = run_int_or_fault(&g, "configs/tiny.ini", neg ? -3 : 6, neg ? -1 : 9, "dma.gather: index", msg, sizeof msg);
        CHECKF(rc == 0, "lengths %s: %s", neg ? "negative" : "beyond T", msg);
        ir_free(&g);
    }
}

int main(void)
{
    RUN(scatter_elements_every_axis);
    RUN(scatter_opset10_and_many_tiles);
    RUN(scatter_nd);
    RUN(out_of_range_index_faults);
    RUN(reductions_rejected);
    RUN(reverse_sequence);
    RUN(reverse_sequence_bad_length_faults);
    return test_summary("test_backend_scatter");
}
