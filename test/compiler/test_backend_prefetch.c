/* test_backend_prefetch.c - the weight prefetch across a segment's barrier
 * (schedule/prefetch.c, cost/prefetch.c; docs/backend.md, "Weight prefetch
 * across the barrier"): a layer whose weights are staged in cluster SRAM
 * gets the copies of its first weight keys issued by the layer before, in
 * that layer's segment, so they overlap its compute.
 *
 * Checked on configs/a1.ini with two 3x3 convolutions in a row, each its
 * own layer (group_max = 1): 64 -> 64 -> 64 channels on 28x28 both staging
 * their weights in SRAM (sram_weights = always; activations in DRAM), and
 * 256 -> 256 -> 256 on 9x9 loading them per tile from DRAM (never; on 7x7
 * the deeper K splits of weight-bound convs, lower/conv.c, leave first
 * tiles too small for the cost model to prefetch them). In the simulator's full
 * mode (arithmetic, timing, race detector over LMEM, SRAM and DRAM) the
 * output is the interpreter's, with prefetch and without; with prefetch
 * some of the second layer's copies from DRAM (the staging copies into
 * SRAM; the first tiles' weight loads into LMEM) sit in a core's DMA
 * stream before its first barrier, the same bytes in all as without, and
 * the second segment copies less; with BkOptions.prefetch = never every
 * copy stays in its own segment; the cost model's estimate stays within
 * 2% of the simulated cycles (timing-only run) and is lower with
 * prefetch. A bad mode is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_two_layer.h"

static const char *const A1 = "configs/a1.ini";

/* x [1, C, H, H] -> (Conv 3x3 pad 1 -> Relu) twice, M channels each -> y */
static void two_convs(IrGraph *g, int C, int H, int M)
{
    AtlErr e;
    int64_t xd[4] = {1, C, H, H}, w1[4] = {M, C, 3, 3}, w2[4] = {M, M, 3, 3}, bd[1] = {M}, pads[4] = {1, 1, 1, 1};
    new_graph(g, "x", 4, xd);
    cst(g, "w1", 4, w1, 0.05f);
    cst(g, "b1", 1, bd, 0.2f);
    cst(g, "w2", 4, w2, 0.05f);
    cst(g, "b2", 1, bd, 0.2f);
    int n = ir_add_op(g, "Conv", "conv1", "x,w1,b1", "c1", &e);
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "relu1", "c1", "r1", &e);
    n = ir_add_op(g, "Conv", "conv2", "r1,w2,b2", "c2", &e);
    ir_set_attr_ints(g, n, "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "relu2", "c2", "y", &e);
    ir_add_output(g, "y", &e);
}

/* Copies of the program from DRAM into `space` (SRAM: the staging
 * copies; LMEM: the tiles' loads): bytes and count per segment (0: before
 * a core's first barrier, 1: after it). */
typedef struct Copies { uint64_t bytes[2]; int n[2]; } Copies;

static int from_dram_into(const AtlInsn *in, int space)
{
    return in->dst_space == space && in->src_space == ISA_SPACE_DRAM;
}

static Copies dram_copies(const AtlProgram *p, int space)
{
    Copies c;
    dma_copies_by_segment(p, from_dram_into, space, 2, c.bytes, c.n);
    return c;
}

/* One case: two convolutions C -> M -> M on H x H, weights staged in SRAM
 * (ws = BK_SRAM_ALWAYS) or loaded per tile (BK_SRAM_NEVER); activations
 * as BkOptions.sram_acts says (acts). */
typedef struct Case { int C, H, M, ws, acts; } Case;

/* What a case checks of its full-mode run: its program p, its summary,
 * its error against the interpreter; ctx is the caller's. */
typedef void (*CaseCheck)(Case k, int pf, const AtlProgram *p, const BkSummary *sum, double err, void *ctx);

/* Compiles case k (prefetch mode pf, each conv its own layer) and runs it
 * in full mode against the interpreter, checking it with check; then
 * timing-only, the estimate (within 2% of the simulation) and the
 * simulated cycles into *est, *sim. 0 when both ran. */
static int case_run(Case k, int pf, CaseCheck check, void *ctx, uint64_t *est, uint64_t *sim)
{
    IrGraph g;
    two_convs(&g, k.C, k.H, k.M);
    BkOptions o;
    bk_options_default(&o);
    o.sram_weights = k.ws;
    o.sram_acts = k.acts;
    o.group_max = 1;
    o.prefetch = pf;
    AtlProgram p;
    BkSummary sum;
    double err;
    int rc = full_run(&g, A1, &o, &p, &sum, &err);
    if (rc == 0) check(k, pf, &p, &sum, err, ctx);
    prog_free(&p);
    bk_summary_free(&sum);
    int rc2 = estimate_within_2pct(&g, A1, &o, est, sim);
    ir_free(&g);
    return rc || rc2 ? -1 : 0;
}

/* The staging case's checks: the interpreter's answers, two layers,
 * weights staged in SRAM (" wsram") as the case says; its copies from
 * DRAM (into SRAM when staged, else into LMEM) into *(Copies *)ctx. */
static void staging_check(Case k, int pf, const AtlProgram *p, const BkSummary *sum, double err, void *ctx)
{
    Copies *cp = ctx;
    printf("  prefetch %s: err %.3g, layers %d\n", pf == BK_PREFETCH_NEVER ? "never" : "auto", err, sum->nlayers);
    CHECKF(err <= 2e-5, "error %g", err);
    CHECKF(sum->nlayers == 2, "%d layers, want 2", sum->nlayers);
    for (int i = 0; i < sum->nlayers; i++) {
        printf("    layer %d: split %s\n", i, sum->layers[i].split);
        CHECKF(!strstr(sum->layers[i].split, " wsram") == (k.ws == BK_SRAM_NEVER), "layer %d: split %s", i,
               sum->layers[i].split);
    }
    *cp = dram_copies(p, k.ws == BK_SRAM_NEVER ? ISA_SPACE_LMEM : ISA_SPACE_SRAM);
    printf("    copies from DRAM: %d (%llu bytes) before the first barrier, %d (%llu bytes) after\n", cp->n[0],
           (unsigned long long)cp->bytes[0], cp->n[1], (unsigned long long)cp->bytes[1]);
}

/* Runs the case (prefetch mode pf) with staging_check, its copies from
 * DRAM into *cp. */
static int run_case(Case k, int pf, Copies *cp, uint64_t *est, uint64_t *sim)
{
    return case_run(k, pf, staging_check, cp, est, sim);
}

/* Runs case k with prefetch and without: both the interpreter's, the
 * same bytes copied from DRAM in all, some of the second layer's moved
 * before the first barrier only with prefetch, and fewer cycles. */
static void moved_before_the_barrier(Case k)
{
    Copies pf, never;
    uint64_t est_pf = 0, sim_pf = 0, est_nv = 0, sim_nv = 0;
    if (run_case(k, BK_PREFETCH_AUTO, &pf, &est_pf, &sim_pf) || run_case(k, BK_PREFETCH_NEVER, &never, &est_nv, &sim_nv)) return;
    /* never: each layer's copies in its own segment (the two layers are
     * alike: C = M), every weight byte copied by some core */
    const uint64_t weights = (uint64_t)k.M * k.C * 9 * 4;
    CHECKF(never.bytes[0] == never.bytes[1] && never.bytes[1] >= weights,
           "never: %llu bytes copied before the barrier, %llu after (weights: %llu a layer)", (unsigned long long)never.bytes[0],
           (unsigned long long)never.bytes[1], (unsigned long long)weights);
    /* auto: the same bytes in all, some of the second layer's moved before the barrier */
    CHECK(pf.bytes[0] + pf.bytes[1] == never.bytes[0] + never.bytes[1]);
    CHECKF(pf.bytes[0] > never.bytes[0] && pf.n[0] > never.n[0], "prefetch: %llu bytes (%d copies) before the barrier",
           (unsigned long long)pf.bytes[0], pf.n[0]);
    CHECK(pf.bytes[1] < never.bytes[1]);
    CHECKF(est_pf < est_nv && sim_pf < sim_nv, "prefetch: estimate %llu / simulated %llu, never %llu / %llu",
           (unsigned long long)est_pf, (unsigned long long)sim_pf, (unsigned long long)est_nv, (unsigned long long)sim_nv);
}

/* activations in DRAM: with bands the plan without prefetch gives the
 * first layer a K split in row bands and multicasts the second's weights
 * (nothing staged to move) */
TEST(the_second_layers_first_staging_copies_come_before_the_first_barrier)
{
    moved_before_the_barrier((Case){64, 28, 64, BK_SRAM_ALWAYS, BK_SRAM_ACTS_NEVER});
}

/* weights per tile from DRAM: every core's first tile's weight loads of
 * the second layer move into the first segment, before its barrier */
TEST(the_second_layers_first_tile_weights_load_before_the_first_barrier)
{
    moved_before_the_barrier((Case){256, 9, 256, BK_SRAM_NEVER, BK_SRAM_ACTS_AUTO});
}

/* Multicast DMAs (a mask) into LMEM per segment (0: before a core's first
 * barrier, 1: after it) read from `src` space: bytes. */
static int mcast_into_lmem_from(const AtlInsn *in, int src)
{
    return in->mask && in->dst_space == ISA_SPACE_LMEM && in->src_space == src;
}

static void mcast_bytes(const AtlProgram *p, int src, uint64_t out[2])
{
    dma_copies_by_segment(p, mcast_into_lmem_from, src, 2, out, NULL);
}

/* Cores whose DMA stream copies DRAM -> SRAM before their first barrier. */
static int sram_copiers(const AtlProgram *p)
{
    int n = 0;
    for (int core = 0; core < p->ncores; core++) {
        const AtlStream *dma = &p->streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
        int any = 0;
        for (int i = 0; i < dma->count && dma->insns[i].op != ISA_OP_BARRIER; i++)
            any |= dma->insns[i].op == ISA_OP_DMA_COPY && dma->insns[i].dst_space == ISA_SPACE_SRAM &&
                   dma->insns[i].src_space == ISA_SPACE_DRAM;
        n += any;
    }
    return n;
}

/* multicast weights (" mc"): the layer before copies them DRAM -> SRAM in
 * each cluster, and the second layer's cores multicast them from there,
 * each core a part (docs/backend.md, "Weight prefetch across the
 * barrier"). Mode pf (BK_PREFETCH_*) of two 3x3 convolutions 64 -> 64 on
 * 28x28 in full mode against the interpreter (race detector on): the
 * second layer multicasts its weights from DRAM (never) or from SRAM,
 * where every cluster copied them before the barrier (auto; spread: every
 * core of the cluster a part). These are the checks of its full-mode
 * run (case_run). */
static void mc_check(Case k, int pf, const AtlProgram *p, const BkSummary *sum, double err, void *ctx)
{
    (void)ctx;
    const uint64_t weights = (uint64_t)k.M * k.M * 9 * 4;
    CHECKF(err <= 2e-5, "error %g", err);
    CHECKF(sum->nlayers == 2 && strstr(sum->layers[1].split, " mc"), "second layer: %s", sum->nlayers == 2 ? sum->layers[1].split : "?");
    Copies sr = dram_copies(p, ISA_SPACE_SRAM);
    uint64_t from_dram[2], from_sram[2];
    mcast_bytes(p, ISA_SPACE_DRAM, from_dram);
    mcast_bytes(p, ISA_SPACE_SRAM, from_sram);
    int who = sram_copiers(p);
    printf("  prefetch %d: split %s; DRAM -> SRAM %llu bytes before the barrier by %d cores; multicast after it: %llu "
           "bytes from DRAM, %llu from SRAM\n",
           pf, sum->layers[1].split, (unsigned long long)sr.bytes[0], who, (unsigned long long)from_dram[1],
           (unsigned long long)from_sram[1]);
    if (pf != BK_PREFETCH_NEVER) {
        /* every cluster copies the weights once, then reads them from SRAM */
        CHECK(sr.bytes[0] >= 4 * weights && from_dram[1] == 0 && from_sram[1] >= weights);
        CHECK(strstr(sum->layers[1].split, " pf") != NULL);
        /* auto: the core issuing the multicast in each cluster; spread: every core */
        CHECKF(who == (pf == BK_PREFETCH_SPREAD ? p->ncores : 4), "%d cores copy", who);
    } else {
        CHECK(sr.bytes[0] == 0 && from_sram[1] == 0 && from_dram[1] >= weights);
    }
}

/* The multicast case in mode pf: mc_check, then timing-only, the
 * estimate within 2% of the simulated cycles into est, sim. */
static void mc_case(int pf, uint64_t *est, uint64_t *sim)
{
    case_run((Case){64, 28, 64, BK_SRAM_NEVER, BK_SRAM_ACTS_AUTO}, pf, mc_check, NULL, est, sim);
}

TEST(the_second_layers_multicast_weights_come_from_sram_fetched_before_the_barrier)
{
    uint64_t est[2] = {0, 0}, sim[2] = {0, 0};
    mc_case(BK_PREFETCH_NEVER, &est[0], &sim[0]);
    mc_case(BK_PREFETCH_AUTO, &est[1], &sim[1]);
    CHECK(est[1] < est[0] && sim[1] < sim[0]);
}

/* the copy in pieces spread over every core's loads (forced) */
TEST(multicast_weights_fetched_in_spread_pieces_match_the_interpreter)
{
    uint64_t est = 0, sim = 0;
    mc_case(BK_PREFETCH_SPREAD, &est, &sim);
}

TEST(a_bad_prefetch_mode_is_refused)
{
    IrGraph g;
    two_convs(&g, 8, 8, 8);
    BkOptions o;
    bk_options_default(&o);
    o.prefetch = 7;
    CHECK(e2e_refused(&g, A1, &o, "prefetch mode 7"));
    ir_free(&g);
}

int main(void)
{
    RUN(the_second_layers_first_staging_copies_come_before_the_first_barrier);
    RUN(the_second_layers_first_tile_weights_load_before_the_first_barrier);
    RUN(the_second_layers_multicast_weights_come_from_sram_fetched_before_the_barrier);
    RUN(multicast_weights_fetched_in_spread_pieces_match_the_interpreter);
    RUN(a_bad_prefetch_mode_is_refused);
    return test_summary("test_backend_prefetch");
}
