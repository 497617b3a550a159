/* bk_check.h - structural checks of a compiled program and the "compile a
 * graph built in code, run it, compare with the interpreter, check the
 * program" step shared by the backend op tests (test_backend_ops.c,
 * test_backend_mm.c), and their graph builders (pseudo-random constants
 * from a caller-owned generator state). Header only (one test binary
 * each).
 * Checks of a program:
 *   - tile planner: every matrix/vector operand and every LMEM end of a DMA
 *     lies inside LMEM, matrix/vector operands are aligned to the chip's
 *     LMEM alignment;
 *   - pipeline emitter: per core, every semaphore is signalled exactly as
 *     often as it is waited on (no leftover counts, no wait without a
 *     signal; a multicast DMA signals every core of its mask), every engine
 *     stream has the same number of barriers and ends with `end`. */
#ifndef ATOLL_TEST_BK_CHECK_H
#define ATOLL_TEST_BK_CHECK_H
#include <stdio.h>
#include "test/test.h"
#include "test/compiler/bk_e2e.h"

/* An empty opset-14 graph with one f32 input. */
static inline void bkc_new_graph(IrGraph *g, const char *in, int ndim, const int64_t *dims)
{
    AtlErr e;
    ir_init(g);
    g->opset = 14;
    ir_add_input(g, in, IR_F32, ndim, dims, &e);
}

/* The options of the layer-group tests (test_backend_group.c,
 * test_chain_ost.c): the defaults in dtype with `group`, groups on the
 * whole chip (placement split: test/cli/placement.sh) and the activations
 * in DRAM, where a chain saves their traffic (in SRAM, the default on
 * tiny and edge16k, the layers alone are often as fast). */
static inline BkOptions bkc_group_options(int dtype, int group)
{
    BkOptions o;
    bk_options_default(&o);
    o.dtype = dtype;
    o.group = group;
    o.placement = BK_PLACE_CHIP;
    o.sram_acts = BK_SRAM_ACTS_NEVER;
    return o;
}

static inline void bkc_check_program(const AtlProgram *p, const char *chipfile, const char *what)
{
    AtlChip chip;
    AtlErr e;
    REQUIRE(cfg_load(chipfile, &chip, &e) == 0);
    /* signals of a multicast DMA land on every core of its mask */
    int (*sig)[ISA_MAX_SEMAPHORES] = calloc((size_t)p->ncores, sizeof *sig);
    REQUIRE(sig);
    for (int core = 0; core < p->ncores; core++)
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) {
            const AtlStream *s = &p->streams[core * ISA_NUM_ENGINES + eng];
            for (int i = 0; i < s->count; i++) {
                const AtlInsn *in = &s->insns[i];
                if (!in->signal) continue;
                if ((in->op == ISA_OP_DMA_COPY || in->op == ISA_OP_DMA_FILL) && in->dst_space == ISA_SPACE_LMEM && in->mask) {
                    int base = core / chip.cores_per_cluster * chip.cores_per_cluster;
                    for (int k = 0; k < chip.cores_per_cluster; k++)
                        if (in->mask >> k & 1) sig[base + k][in->signal - 1]++;
                } else sig[core][in->signal - 1]++;
            }
        }
    for (int core = 0; core < p->ncores; core++) {
        int wai[ISA_MAX_SEMAPHORES] = {0}, bars[ISA_NUM_ENGINES] = {0};
        for (int eng = 0; eng < ISA_NUM_ENGINES; eng++) {
            const AtlStream *s = &p->streams[core * ISA_NUM_ENGINES + eng];
            CHECKF(s->count > 0 && s->insns[s->count - 1].op == ISA_OP_END, "%s: core %d engine %d does not end with end", what, core, eng);
            for (int i = 0; i < s->count; i++) {
                const AtlInsn *in = &s->insns[i];
                if (in->wait) wai[in->wait - 1]++;
                if (in->op == ISA_OP_BARRIER) bars[eng]++;
                int f = isa_ops[in->op].format;
                if (f == ISA_FMT_MM || f == ISA_FMT_CONV || f == ISA_FMT_VBIN || f == ISA_FMT_VUN || f == ISA_FMT_VPOOL ||
                    f == ISA_FMT_VRED || f == ISA_FMT_VCAST || f == ISA_FMT_VARG) {
                    CHECKF(in->dst % (uint64_t)chip.lmem_alignment == 0 && in->src % (uint64_t)chip.lmem_alignment == 0,
                           "%s: core %d: misaligned operand of %s", what, core, isa_ops[in->op].mnemonic);
                    CHECKF(in->dst < (uint64_t)chip.lmem_bytes && in->src < (uint64_t)chip.lmem_bytes,
                           "%s: core %d: operand outside LMEM", what, core);
                }
                if (in->op == ISA_OP_DMA_COPY && in->dst_space == ISA_SPACE_LMEM)
                    CHECKF(in->dst < (uint64_t)chip.lmem_bytes, "%s: DMA into LMEM beyond its size", what);
            }
        }
        for (int k = 0; k < ISA_MAX_SEMAPHORES; k++)
            CHECKF(sig[core][k] == wai[k], "%s: core %d semaphore %d signalled %d times, waited %d times", what, core, k, sig[core][k], wai[k]);
        CHECKF(bars[0] == bars[1] && bars[1] == bars[2], "%s: core %d barrier counts differ per engine", what, core);
    }
    free(sig);
}

/* Compiles a copy of g for chipfile in dtype (passes modify the graph),
 * runs it, requires max error <= tol against the interpreter and checks
 * the program; the program is left in *keep when non-NULL (caller
 * prog_free; zeroed when the run failed). */
static inline void bkc_run_checked(IrGraph *g, const char *chipfile, int dtype, const char *what, double tol, AtlProgram *keep)
{
    IrGraph copy;
    PbBuf pb = {0};
    AtlErr e;
    REQUIRE(onnx_save_buffer(g, &pb, &e) == 0);
    REQUIRE(onnx_load_buffer(pb.p, pb.n, what, &copy, &e) == 0);
    pb_free(&pb);
    double err;
    char msg[1024] = "";
    AtlProgram p;
    memset(&p, 0, sizeof p);
    if (keep) memset(keep, 0, sizeof *keep);
    int rc = e2e_graph(&copy, chipfile, dtype, &err, &p, msg, sizeof msg);
    printf("  %-22s %-18s %-4s max err %.3g%s%s\n", what, chipfile, isa_dtype_name(dtype), rc ? -1.0 : err,
           rc ? " ERROR: " : "", msg);
    CHECKF(rc == 0, "%s on %s: %s", what, chipfile, msg);
    if (rc == 0) {
        CHECKF(err <= tol, "%s on %s: error %g > %g", what, chipfile, err, tol);
        bkc_check_program(&p, chipfile, what);
        if (keep) *keep = p; else prog_free(&p);
    }
    ir_free(&copy);
}
#endif
