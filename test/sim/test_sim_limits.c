/* test_sim_limits.c - issue 15, the simulator's host resources: memories
 * are committed only where a run touches them (util/zmem.h), `config
 * check`'s cost figures match the allocations, every instruction's host
 * work is charged before it runs (AtlSimOptions.max_work), a transfer that
 * cannot end within max_cycles faults unplanned, and a statically faulting
 * DMA stream is loaded without touching a plan it never got. */
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/sim/simtest.h"
#include "isa/program.h"
#include "util/zmem.h"

/* Peak or current resident set of this process in KiB ("VmHWM", "VmRSS"). */
static long status_kib(const char *key)
{
    FILE *fp = fopen("/proc/self/status", "r");
    if (!fp) return -1;
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, key, n) && line[n] == ':') v = strtol(line + n + 1, NULL, 10);
    fclose(fp);
    return v;
}

static int assemble(const char *text, AtlProgram *p)
{
    AtlErr e;
    int rc = prog_assemble("t.s", text, p, &e);
    if (rc) printf("  assemble: %s\n", e.msg);
    return rc;
}

/* 16 cores x 64 MiB of LMEM, 4 x 64 MiB of SRAM, 256 MiB of DRAM: 1.25 GiB
 * of simulated memory, of which a one-core program touches a few KiB. */
static void big_chip(AtlChip *c)
{
    tchip(c, 4, 4);
    c->lmem_bytes = 64 << 20;
    c->sram_bytes = 64 << 20;
    c->dram_bytes = 256 << 20;
}

static const char one_copy[] =
    ".cores 1\n.core 0\n.engine dma\n"
    "    dma.copy dtype=i8 dst=lmem:0 src=dram:0 shape=4096 dstride=1 sstride=1\n    end\n";

TEST(memories_committed_where_touched)
{
    long before = status_kib("VmHWM");
    if (before < 0) { printf("  (no /proc/self/status: skipped)\n"); return; }
    AtlChip chip;
    big_chip(&chip);
    AtlProgram p;
    REQUIRE(assemble(one_copy, &p) == 0);
    AtlErr e;
    AtlSim *s = sim_create(&chip, NULL, &e);
    REQUIRE(s);
    for (int run = 0; run < 2; run++) {   /* a second load zeroes the memories again */
        REQUIRE(sim_load(s, &p, &e) == 0);
        CHECK(sim_run(s, &e) == 0);
    }
    long after = status_kib("VmHWM");
    /* it used to commit (and zero) all 1.25 GiB */
    CHECKF(after - before < 128 * 1024, "peak resident set grew by %ld KiB", after - before);
    sim_free(s);
    prog_free(&p);
}

TEST(zeroing_releases_pages)
{
    size_t n = 16u << 20;
    uint8_t *m = atl_zmem_alloc(n);
    REQUIRE(m);
    long base = status_kib("VmRSS");
    memset(m, 0xab, n);
    long touched = status_kib("VmRSS");
    atl_zmem_zero(m, n);
    long zeroed = status_kib("VmRSS");
    int all_zero = 1;
    for (size_t i = 0; i < n; i += 4093) all_zero &= m[i] == 0;
    CHECK(all_zero && m[n - 1] == 0);
    if (base >= 0) {
        CHECKF(touched - base >= 15 * 1024, "touching 16 MiB added %ld KiB", touched - base);
        CHECKF(touched - zeroed >= 15 * 1024, "zeroing gave back %ld KiB", touched - zeroed);
    }
    atl_zmem_free(m, n);
    uint8_t *small = atl_zmem_alloc(4096);   /* small blocks: plain calloc'd memory */
    REQUIRE(small);
    small[7] = 1;
    atl_zmem_zero(small, 4096);
    CHECK(small[7] == 0);
    atl_zmem_free(small, 4096);
}

TEST(host_cost)
{
    AtlChip chip;
    big_chip(&chip);
    AtlSimHostCost hc;
    sim_host_cost(&chip, &hc);
    CHECK_EQ_INT(hc.lazy, (256ull << 20) + 4 * ((64ull << 20) + 1) + 16 * (64ull << 20));
    CHECKF(hc.upfront > 0 && hc.upfront < (4u << 20), "up front %llu", (unsigned long long)hc.upfront);
    tchip(&chip, 1, 1);   /* 64 KiB of LMEM: up front; 256 KiB (+1) of SRAM and 16 MiB of DRAM: as touched */
    sim_host_cost(&chip, &hc);
    CHECK_EQ_INT(hc.lazy, (16u << 20) + 262145);
    CHECK(hc.upfront >= 65536 && hc.upfront < 262144 + 65536);
}

/* Runs text on the 1-core test chip with options o; checks the fault kind,
 * the instruction index (when faulting), that the message holds needle
 * (may be NULL) and how many vector instructions ran (-1: any). */
static void expect_run(const char *text, const AtlSimOptions *o, AtlSimFaultKind kind, int index, const char *needle,
                       long vec_insns)
{
    AtlChip chip;
    tchip(&chip, 1, 1);
    AtlErr e;
    AtlProgram p;
    REQUIRE(assemble(text, &p) == 0);
    AtlSim *s = sim_create(&chip, o, &e);
    CHECKF(s && sim_load(s, &p, &e) == 0, "%s", e.msg);
    if (s) {
        sim_run(s, &e);
        const AtlSimFault *f = sim_fault(s);
        CHECKF(f->kind == kind, "fault %s, want %s: %s", sim_fault_name(f->kind), sim_fault_name(kind), f->msg);
        if (kind != SIM_FAULT_NONE) CHECK_EQ_INT(f->index, index);
        if (needle) CHECK_STR_CONTAINS(f->msg, needle);
        if (vec_insns >= 0) CHECK_EQ_INT(sim_stats(s)->total[ISA_ENGINE_VEC].insns, vec_insns);
    }
    sim_free(s);
    prog_free(&p);
}

TEST(work_charged_before_it_runs)
{
    static const char vexp[] = ".cores 1\n.core 0\n.engine vec\n"
                               "    v.exp dtype=f32 dst=0 src=0x1000 shape=1000 dstride=1 sstride=1\n    end\n";
    AtlSimOptions o;
    sim_options_default(&o);
    o.max_work = 999;   /* one short: it never runs */
    expect_run(vexp, &o, SIM_FAULT_WORK, 0, "its 1000 units of work", 0);
    o.max_work = 1000;
    expect_run(vexp, &o, SIM_FAULT_NONE, 0, NULL, 2);   /* v.exp and end */
    o.mode = SIM_MODE_TIMING;   /* no arithmetic, no work */
    o.max_work = 1;
    expect_run(vexp, &o, SIM_FAULT_NONE, 0, NULL, 2);   /* v.exp and end */
}

TEST(transfer_beyond_max_cycles_faults_unplanned)
{
    /* 1 MiB at 64 bytes/cycle at best (the DMA's LMEM port, the SRAM) is 16384 cycles */
    static const char big[] = ".cores 1\n.core 0\n.engine dma\n"
                              "    dma.copy dtype=i8 dst=dram:0x100000 src=dram:0 shape=16,16,4096 dstride=65536,4096,1 sstride=65536,4096,1\n    end\n";
    AtlSimOptions o;
    sim_options_default(&o);
    o.max_cycles = 1000;
    expect_run(big, &o, SIM_FAULT_MAX_CYCLES, 0, "moving 1048576 bytes takes at least 16384 cycles", -1);
    o.max_cycles = 100000;   /* it fits: it runs */
    expect_run(big, &o, SIM_FAULT_NONE, 0, NULL, -1);
}

/* A DMA stream whose first instruction fails its static check: the others
 * are never checked or planned (clang's UBSan saw NULL + offset here). */
TEST(static_fault_never_planned)
{
    static const char text[] = ".cores 1\n.core 0\n.engine dma\n"
                               "    dma.copy dtype=i8 dst=dram:0x7fffffff src=dram:0 shape=64 dstride=1 sstride=1\n"
                               "    dma.copy dtype=i8 dst=dram:0x100 src=dram:0 shape=64 dstride=1 sstride=1\n    end\n";
    for (int mode = 0; mode < 3; mode++) {
        AtlSimOptions o;
        sim_options_default(&o);
        o.mode = (AtlSimMode)mode;
        expect_run(text, &o, SIM_FAULT_OOB, 0, "outside the", -1);
    }
}

int main(void)
{
    RUN(memories_committed_where_touched);   /* first: it reads the process's peak */
    RUN(zeroing_releases_pages);
    RUN(host_cost);
    RUN(work_charged_before_it_runs);
    RUN(transfer_beyond_max_cycles_faults_unplanned);
    RUN(static_fault_never_planned);
    return test_summary("test_sim_limits");
}
