/* test_backend_mm.c - Gemm/MatMul tiling in the backend: K split (the k
 * chunks of an output tile accumulate into one of two group-resident f32
 * accumulators) and weight multicast of a constant B. Small graphs built in
 * code are compiled, run on the simulator in full mode (race detector on:
 * it stops a run where an accumulator is overwritten while still in use)
 * and compared with the reference interpreter; every program gets the
 * structural checks of bk_check.h. Chips: configs/tiny.ini, a copy of it
 * with 16 KiB of LMEM, configs/a1.ini and a copy of a1 with less LMEM.
 * The program itself shows what the planner chose: the number of k chunks
 * is 1 + (mm with acc=1) / (mm with acc=0), multicast is a DMA into LMEM
 * with a core mask. Plus the error for an empty product (K = 0). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "test/compiler/chip_variant.h"
#include "test/test.h"
#include "test/compiler/bk_check.h"

static uint32_t rng = 7;

static int cst(IrGraph *g, const char *name, int ndim, const int64_t *dims, float scale)
{
    return e2e_rand_const(g, name, ndim, dims, scale, &rng);
}


/* What the planner chose, read off the program: mm instructions starting
 * an accumulation (acc=0) and adding to one (acc=1), and multicast DMAs. */
typedef struct MmSeen { int first, accumulate, mcast; } MmSeen;

static MmSeen seen(const AtlProgram *p)
{
    MmSeen s = {0, 0, 0};
    for (int i = 0; i < p->ncores * ISA_NUM_ENGINES; i++)
        for (int k = 0; k < p->streams[i].count; k++) {
            const AtlInsn *in = &p->streams[i].insns[k];
            if (in->op == ISA_OP_MM) { if (in->acc) s.accumulate++; else s.first++; }
            if (in->op == ISA_OP_DMA_COPY && in->dst_space == ISA_SPACE_LMEM && in->mask) s.mcast++;
        }
    return s;
}

/* Runs g on chip and returns the k chunks per output tile (0 if it did not
 * run); *mc gets the number of multicast DMAs. */
static int run_chunks(IrGraph *g, const char *chip, int dtype, const char *what, double tol, int *mc)
{
    AtlProgram p;
    bkc_run_checked(g, chip, dtype, what, tol, &p);
    if (!p.ncores) return 0;
    MmSeen s = seen(&p);
    prog_free(&p);
    if (mc) *mc = s.mcast;
    printf("    %d output tiles, %d k chunks each, %d multicast DMAs\n", s.first,
           s.first ? 1 + s.accumulate / s.first : 0, s.mcast);
    CHECKF(s.first > 0 && s.accumulate % s.first == 0, "%s: %d accumulating mm for %d output tiles", what, s.accumulate, s.first);
    return s.first ? 1 + s.accumulate / s.first : 0;
}

/* Y = Relu(X Bt^T * alpha + C * beta) of [M][K] x [N][K]^T. */
static void gemm_graph(IrGraph *g, int64_t M, int64_t N, int64_t K)
{
    AtlErr e;
    int64_t xd[2] = {M, K}, bd[2] = {N, K}, cd[1] = {N};
    bkc_new_graph(g, "x", 2, xd);
    cst(g, "B", 2, bd, 0.5f);
    cst(g, "C", 1, cd, 0.5f);
    int n = ir_add_op(g, "Gemm", "gemm", "x,B,C", "m", &e);
    ir_set_attr_int(g, n, "transB", 1, &e);
    ir_set_attr_float(g, n, "alpha", 0.5f, &e);
    ir_set_attr_float(g, n, "beta", 2.0f, &e);
    ir_add_op(g, "Relu", "relu", "m", "y", &e);
    ir_add_output(g, "y", &e);
}

/* K = 1000: an 8x8 output tile (filling tiny's 8x8 matrix unit) with K
 * whole does not fit tiny's 32 KiB slots, with K in two chunks it does;
 * 16 KiB of LMEM needs many chunks (9x13: odd tile edges). */
TEST(k_split_gemm_bias_relu_transb)
{
    char lm16[64];
    REQUIRE(chip_variant("configs/tiny.ini", "lmem", "bytes", "16K", lm16, sizeof lm16) == 0);
    IrGraph g;
    gemm_graph(&g, 8, 8, 1000);
    CHECK_EQ_INT(run_chunks(&g, "configs/tiny.ini", ISA_F32, "gemm 8x8 K=1000 relu", 1e-5, NULL), 2);
    ir_free(&g);
    gemm_graph(&g, 9, 13, 1000);
    int k16 = run_chunks(&g, lm16, ISA_F32, "gemm K=1000 relu", 1e-5, NULL);
    CHECKF(k16 >= 3, "16 KiB LMEM: %d k chunks, expected >= 3", k16);
    /* the cast to the storage dtype reads the resident accumulator */
    int k16h = run_chunks(&g, lm16, ISA_F16, "gemm K=1000 relu", 2e-2, NULL);
    CHECKF(k16h >= 3, "16 KiB LMEM f16: %d k chunks, expected >= 3", k16h);
    ir_free(&g);
    unlink(lm16);
}

/* Batched MatMul of two activations (B = A transposed, read through DMA
 * strides) with a fused HardSwish (scratch buffer in the slot), K = 1500. */
TEST(k_split_batched_activation_b)
{
    char lm16[64];
    REQUIRE(chip_variant("configs/tiny.ini", "lmem", "bytes", "16K", lm16, sizeof lm16) == 0);
    IrGraph g;
    AtlErr e;
    int64_t xd[3] = {2, 7, 1500}, perm[3] = {0, 2, 1};
    bkc_new_graph(&g, "x", 3, xd);
    int t = ir_add_op(&g, "Transpose", "tr", "x", "xt", &e);      /* [2,1500,7] */
    ir_set_attr_ints(&g, t, "perm", perm, 3, &e);
    ir_add_op(&g, "MatMul", "mm", "x,xt", "m", &e);               /* [2,7,7] */
    ir_add_op(&g, "HardSwish", "hs", "m", "y", &e);
    ir_add_output(&g, "y", &e);
    int kt = run_chunks(&g, "configs/tiny.ini", ISA_F32, "batched x act K=1500", 1e-5, NULL);
    CHECKF(kt >= 3, "tiny: %d k chunks, expected >= 3", kt);
    int k16 = run_chunks(&g, lm16, ISA_F32, "batched x act K=1500", 1e-5, NULL);
    CHECKF(k16 > kt, "16 KiB LMEM: %d k chunks, expected more than tiny's %d", k16, kt);
    ir_free(&g);
    unlink(lm16);
}

/* A constant B that every core needs (tiles split M over 16 cores) is
 * multicast once per cluster on a1 instead of loaded by every tile. */
TEST(multicast_constant_b_a1)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[2] = {512, 96}, bd[2] = {96, 160}, biasd[1] = {160};
    bkc_new_graph(&g, "x", 2, xd);
    cst(&g, "B", 2, bd, 0.5f);
    cst(&g, "bias", 1, biasd, 0.5f);
    ir_add_op(&g, "MatMul", "mm", "x,B", "m", &e);
    ir_add_op(&g, "Add", "add", "m,bias", "y", &e);
    ir_add_output(&g, "y", &e);
    int mc = 0;
    CHECK_EQ_INT(run_chunks(&g, "configs/a1.ini", ISA_F32, "matmul multicast B", 1e-5, &mc), 1);
    CHECKF(mc > 0, "a1: B of a 512-row MatMul was not multicast");
    ir_free(&g);
}

/* Multicast B and K split together (a1 with 64 KiB of LMEM): the
 * resident region holds B, block-major with a last, shorter k chunk
 * (999 = 7 x 125 + 124: two multicast pieces per cluster), then the two
 * accumulators; 600 rows spread the output tiles over all 16 cores. */
TEST(multicast_with_k_split)
{
    char small[64];
    REQUIRE(chip_variant("configs/a1.ini", "lmem", "bytes", "64K", small, sizeof small) == 0);
    IrGraph g;
    gemm_graph(&g, 600, 13, 999);
    int mc = 0, k = run_chunks(&g, small, ISA_F32, "gemm 600x13 K=999", 1e-5, &mc);
    CHECKF(k >= 2, "a1 64 KiB: %d k chunks, expected a split", k);
    CHECKF(mc > 4, "a1 64 KiB: %d multicast DMAs, expected more than one per cluster", mc);
    ir_free(&g);
    unlink(small);
}

/* Whole transformer models on a chip with 16 KiB of LMEM (their matmuls
 * need K split there) against the PyTorch reference outputs and the
 * interpreter: fp32 within |a - t| <= 1e-5 + 1e-4 |t|. */
TEST(models_on_16k_lmem)
{
    static const char *const models[] = {"encoder_block", "vit_tiny"};
    char lm16[64];
    REQUIRE(chip_variant("configs/tiny.ini", "lmem", "bytes", "16K", lm16, sizeof lm16) == 0);
    for (int i = 0; i < 2; i++) {
        E2eResult r;
        int rc = e2e_run(models[i], lm16, ISA_F32, &r);
        int split = 0;
        for (int k = 0; rc == 0 && k < r.sum.nlayers; k++) split += strstr(r.sum.layers[k].split, " K") != NULL;
        printf("  %-16s 16 KiB LMEM f32 max_abs %.3g vs-interp %.3g cycles %llu, %d layers split K%s%s\n", models[i],
               r.max_abs, r.interp_max_abs, (unsigned long long)r.cycles, split, rc ? " ERROR: " : "", rc ? r.err : "");
        CHECKF(rc == 0, "%s on 16 KiB LMEM: %s", models[i], r.err);
        if (rc == 0) {
            CHECKF(r.tol_violations == 0, "%s: %lld elements outside rtol 1e-4 (max abs %g)", models[i],
                   (long long)r.tol_violations, r.max_abs);
            CHECKF(r.interp_max_abs <= 1e-4, "%s: %g from the interpreter", models[i], r.interp_max_abs);
            CHECKF(split > 0, "%s: no layer split K on 16 KiB of LMEM", models[i]);
        }
        e2e_free(&r);
    }
    unlink(lm16);
}

/* K = 0: a clear error naming the node and the empty tensor, not a
 * division by zero (refused before lowering: compiler/bk_limits.c). */
TEST(empty_product_names_node)
{
    IrGraph g;
    AtlErr e;
    int64_t xd[2] = {3, 0}, bd[2] = {0, 4};
    bkc_new_graph(&g, "x", 2, xd);
    cst(&g, "B", 2, bd, 0.5f);
    ir_add_op(&g, "MatMul", "empty_mm", "x,B", "y", &e);
    ir_add_output(&g, "y", &e);
    AtlChip chip;
    REQUIRE(cfg_load("configs/tiny.ini", &chip, &e) == 0);
    REQUIRE(ir_toposort(&g, &e) == 0 && ir_infer_shapes(&g, &e) == 0 && pass_run_all(&g, &e) == 0);
    AbmWriter *w = abm_writer_new(cfg_fingerprint(&chip));
    BkOptions o;
    bk_options_default(&o);
    CHECK(bk_compile(&g, &chip, &o, w, NULL, &e) != 0);
    CHECK_STR_CONTAINS(e.msg, "empty_mm");
    CHECK_STR_CONTAINS(e.msg, "tensor 'x' (shape 3x0) is empty");
    abm_writer_free(w);
    ir_free(&g);
}

int main(void)
{
    RUN(k_split_gemm_bias_relu_transb);
    RUN(k_split_batched_activation_b);
    RUN(multicast_constant_b_a1);
    RUN(multicast_with_k_split);
    RUN(models_on_16k_lmem);
    RUN(empty_product_names_node);
    return test_summary("test_backend_mm");
}
