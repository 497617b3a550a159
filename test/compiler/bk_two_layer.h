/* bk_two_layer.h - what the two-layer backend tests on configs/a1.ini
 * (test_backend_krows.c, test_backend_band_near.c, test_backend_band_reads.c,
 * test_backend_prefetch.c) share: the 1x1 convolution pair graph, the
 * full-mode run against the interpreter, the bytes of DMA copies per
 * segment (those every core reads from DRAM in a segment), and the timing-only check that the cost model's
 * estimate is within 2% of the simulated cycles. Written once here so the
 * tests differ only in what they check. Header only: one test binary each. */
#ifndef ATOLL_TEST_BK_TWO_LAYER_H
#define ATOLL_TEST_BK_TWO_LAYER_H
#include <math.h>
#include "test/compiler/bk_graph_run.h"
#include "test/compiler/bk_timing_run.h"

/* x [1, C, H, H] -> Conv 1x1 (mid) -> Relu -> Conv 1x1 (M, stride s; node
 * name2) -> y, the convs named conv1 and name2. */
static inline void conv1x1_pair_graph(IrGraph *g, int C, int H, int mid, int M, int s, const char *name2)
{
    AtlErr e;
    int64_t xd[4] = {1, C, H, H}, w1[4] = {mid, C, 1, 1}, w2[4] = {M, mid, 1, 1}, b1[1] = {mid}, b2[1] = {M}, st[2] = {s, s};
    new_graph(g, "x", 4, xd);
    cst(g, "w1", 4, w1, 0.05f);
    cst(g, "b1", 1, b1, 0.2f);
    cst(g, "w2", 4, w2, 0.05f);
    cst(g, "b2", 1, b2, 0.2f);
    ir_add_op(g, "Conv", "conv1", "x,w1,b1", "c1", &e);
    ir_add_op(g, "Relu", "relu1", "c1", "r1", &e);
    int n = ir_add_op(g, "Conv", name2, "r1,w2,b2", "y", &e);
    if (s != 1) ir_set_attr_ints(g, n, "strides", st, 2, &e);
    ir_add_output(g, "y", &e);
}

/* Compiles g for chip with options o and runs it in the simulator's full
 * mode against the interpreter: its program into *p, its summary into *sum
 * (both zeroed here; the caller frees them), the error into *err. Checks
 * that it ran; 0 when it did. */
static inline int full_run(IrGraph *g, const char *chip, const BkOptions *o, AtlProgram *p, BkSummary *sum, double *err)
{
    char msg[1024] = "";
    memset(p, 0, sizeof *p);
    memset(sum, 0, sizeof *sum);
    *err = -1;
    int rc = e2e_graph_run(g, chip, o, err, p, sum, msg, sizeof msg);
    CHECKF(rc == 0, "%s", msg);
    return rc;
}

/* The options of the band tests: bands forced (--sram-activations bands),
 * prefetch off (each layer's copies in its own segment), each conv its
 * own layer. */
static inline void bands_options(BkOptions *o)
{
    bk_options_default(o);
    o->sram_acts = BK_SRAM_ACTS_BANDS;
    o->prefetch = BK_PREFETCH_NEVER;
    o->group_max = 1;
}

/* full_run of a two-layer graph that also checks the error is within
 * 2e-5 and that it compiled to two layers. */
static inline int two_layer_full_run(IrGraph *g, const char *chip, const BkOptions *o, AtlProgram *p, BkSummary *sum)
{
    double err;
    int rc = full_run(g, chip, o, p, sum, &err);
    if (rc == 0) {
        printf("  err %.3g, layers %d\n", err, sum->nlayers);
        CHECKF(err <= 2e-5, "error %g", err);
        CHECKF(sum->nlayers == 2, "%d layers, want 2", sum->nlayers);
    }
    return rc;
}

/* Which DMA copies dma_copies_by_segment counts (arg: the caller's). */
typedef int (*DmaWant)(const AtlInsn *in, int arg);

/* Over the DMA streams of every core, per segment (0: before a core's
 * first barrier, 1: after it, ... nseg - 1: from its (nseg-1)th barrier
 * on), the bytes into bytes[] and the count into n[] (NULL: not wanted)
 * of the copies want accepts; both zeroed here. */
static inline void dma_copies_by_segment(const AtlProgram *p, DmaWant want, int arg, int nseg, uint64_t *bytes, int *n)
{
    for (int s = 0; s < nseg; s++) {
        bytes[s] = 0;
        if (n) n[s] = 0;
    }
    for (int core = 0; core < p->ncores; core++) {
        const AtlStream *dma = &p->streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
        int seg = 0;
        for (int i = 0; i < dma->count; i++) {
            const AtlInsn *in = &dma->insns[i];
            if (in->op == ISA_OP_BARRIER && seg < nseg - 1) seg++;
            if (in->op != ISA_OP_DMA_COPY || !want(in, arg)) continue;
            bytes[seg] += isa_shape_bytes(in);
            if (n) n[seg]++;
        }
    }
}

static inline int dma_reads_from(const AtlInsn *in, int space)
{
    return in->src_space == space;
}

/* Bytes the DMAs of every core read from DRAM in segment seg (0: before a
 * core's first barrier, 1: between its first and second, ...). */
static inline uint64_t dram_reads_in_segment(const AtlProgram *p, int seg)
{
    uint64_t bytes[8];
    if (seg < 0 || seg > 6) return 0;
    dma_copies_by_segment(p, dma_reads_from, ISA_SPACE_DRAM, seg + 2, bytes, NULL);
    return bytes[seg];
}

/* Compiles g for chip with options o and runs it timing-only; checks that
 * it ran and that the estimate is within 2% of the simulated cycles. The
 * estimate and the simulated cycles into *est, *sim (untouched when it did
 * not run); 0 when it ran. */
static inline int estimate_within_2pct(const IrGraph *g, const char *chip_ini, const BkOptions *o, uint64_t *est,
                                       uint64_t *sim)
{
    AtlChip chip;
    AtlErr e = {{0}};
    BkTimingRun r;
    memset(&r, 0, sizeof r);
    int rc = cfg_load(chip_ini, &chip, &e) || bk_timing_run_opts(g, &chip, o, &r, &e) ? -1 : 0;
    CHECKF(rc == 0, "%s", e.msg);
    if (rc == 0) {
        uint64_t es = r.sum.est_cycles, si = sim_stats(r.sim)->cycles;
        printf("  estimate %llu, simulated %llu cycles\n", (unsigned long long)es, (unsigned long long)si);
        CHECKF(fabs((double)es - (double)si) <= 0.02 * (double)si, "estimate %llu, simulated %llu: beyond 2%%",
               (unsigned long long)es, (unsigned long long)si);
        *est = es;
        *sim = si;
    }
    bk_timing_run_free(&r);
    return rc;
}

#endif
