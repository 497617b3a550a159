/* test_backend_weightbound.c - tile shapes of weight-bound layers
 * (lower/conv.c weight_bound and search_splits, lower/mm.c weight_bound
 * and choose).
 *
 * A layer whose weights take the DRAM longer to deliver than the whole
 * chip's matrix units take for its multiply-adds (few output pixels or
 * rows, many weights: ResNet-50's layer4 at 7x7, its classifier at batch
 * 1) is DRAM-bound, and each core's last tile computes after the DRAM has
 * delivered everything. Its tile search therefore also offers deeper K
 * splits (smaller tiles, a shorter tail; for the conv also k chunks of
 * whole DRAM interleave periods). Checked on configs/a1.ini in the
 * simulator's full mode (arithmetic, timing and the race detector)
 * against the interpreter:
 *   - ResNet-50's layer4 conv2 (3x3, 512 -> 512 on 7x7, 9.4 MB of f32
 *     weights) takes at least 8 k chunks (without the deeper splits the
 *     search offers at most 4 k chunks of whole rows: K4, 170 K cycles
 *     on a1 against 158 K with K32 inside ResNet-50);
 *   - its classifier (Gemm 2048 -> 1000 at batch 1, 8.2 MB) at least 4
 *     (the one depth offered before: K2), and it keeps A (8 KB) resident
 *     (" ar": loaded once a cluster by the multicast prologue; per tile,
 *     all 16 cores read the same k chunk of A from one DRAM channel at
 *     once), also with transA (3 rows, A [K][M] in DRAM), and at batch 8
 *     (64 KB of A, an eighth of LMEM: the chip stage of a staged
 *     ResNet-50 at batch 8, whose fc read A a k chunk per tile before,
 *     157 K cycles estimated on a1 against 135 K with A resident).
 * All give the interpreter's results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"

static const char *const A1 = "configs/a1.ini";

/* x [M, K] (transA: [K, M]) -> Gemm with B [N][K] (transB) and bias ->
 * y [M, N]. */
static void fc_graph(IrGraph *g, int64_t M, int64_t K, int64_t N, int trans_a)
{
    AtlErr e;
    int64_t xd[2] = {trans_a ? K : M, trans_a ? M : K}, bd[2] = {N, K}, cd[1] = {N};
    new_graph(g, "x", 2, xd);
    cst(g, "B", 2, bd, 0.03f);
    cst(g, "C", 1, cd, 0.5f);
    int n = ir_add_op(g, "Gemm", "fc", "x,B,C", "y", &e);
    ir_set_attr_int(g, n, "transB", 1, &e);
    if (trans_a) ir_set_attr_int(g, n, "transA", 1, &e);
    ir_add_output(g, "y", &e);
}

/* Compiles and runs g's one layer on a1 (split containing `want`); its K
 * chunks (the split's "K<n>", 1 without) into *kchunks. */
static int run_layer(IrGraph *g, double tol, const char *want, int *kchunks)
{
    BkOptions o;
    bk_options_default(&o);
    BkSummary sum;
    AtlProgram p;
    int rc = run_one_layer(g, A1, &o, tol, want, &p, &sum);
    if (rc == 0) {
        const char *k = strstr(sum.layers[0].split, " K");
        *kchunks = k ? atoi(k + 2) : 1;
        printf("  %s: %llu cycles estimated, %d k chunks\n", sum.layers[0].split,
               (unsigned long long)sum.layers[0].est_cycles, *kchunks);
    }
    prog_free(&p);
    bk_summary_free(&sum);
    ir_free(g);
    return rc;
}

TEST(layer4_conv2_takes_deeper_k_splits)
{
    IrGraph g;
    int k = 0;
    /* x [1, 512, 7, 7] -> Conv 3x3 pad 1, 512 outputs -> Relu -> y */
    conv_relu_graph_ws(&g, 512, 7, 7, 512, 3, 0.02f);
    REQUIRE(run_layer(&g, 1e-4, "N1", &k) == 0);
    CHECKF(k >= 8, "the weight-bound conv keeps %d k chunks (the deeper K splits are not offered)", k);
}

/* The classifier's Gemm, x [rows, 2048] (transA: [2048, rows]) -> 1000
 * outputs, on a1 keeping A resident; its k chunks into *k. */
static int classifier(int64_t rows, int trans_a, int *k)
{
    IrGraph g;
    fc_graph(&g, rows, 2048, 1000, trans_a);
    return run_layer(&g, 1e-4, " ar", k);
}

TEST(classifier_takes_deeper_k_splits_and_a_resident)
{
    int k = 0;
    REQUIRE(classifier(1, 0, &k) == 0);
    CHECKF(k >= 4, "the weight-bound Gemm keeps %d k chunks (the deeper depths are not offered)", k);
}

/* A resident read through transA's strides: 3 rows of A, [K][M] in DRAM */
TEST(a_resident_transposed)
{
    int k = 0;
    REQUIRE(classifier(3, 1, &k) == 0);
}

/* a batch of 8 rows: A takes an eighth of LMEM and stays resident */
TEST(a_resident_at_batch_8)
{
    int k = 0;
    REQUIRE(classifier(8, 0, &k) == 0);
}

int main(void)
{
    RUN(layer4_conv2_takes_deeper_k_splits);
    RUN(classifier_takes_deeper_k_splits_and_a_resident);
    RUN(a_resident_transposed);
    RUN(a_resident_at_batch_8);
    return test_summary("test_backend_weightbound");
}
