/* bench_sim.c - simulator speed on a large synthetic GEMM over the 16 cores
 * of a1 (configs/a1.ini; an a1-shaped chip filled in C if the file cannot
 * be read): every
 * core streams double-buffered A/B tiles from DRAM and accumulates a 32x32
 * output tile per block with mm, storing each finished block. Reports
 * simulated instructions and cycles per host second in timing-only mode and
 * host MAC/s in full mode, against the targets. Host seconds are this
 * thread's CPU time (bench/bench_clock.h), so a loaded machine does not
 * make the simulator look slower than it is.
 *
 *   --quick       smaller programs, one repetition (the test suite's run)
 *   --stall-ms N  sleep N ms inside every measured interval: time off the
 *                 CPU, which must not count (test/cli/bench.sh checks it) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench/bench_clock.h"
#include "sim/sim.h"
#include "isa/timing.h"

static void a1_like(AtlChip *c)
{
    memset(c, 0, sizeof *c);
    cfg_set_defaults(c);
    strcpy(c->name, "a1-bench");
    c->clusters = 4; c->cores_per_cluster = 4; c->freq_mhz = 1000;
    c->mm_rows = 32; c->mm_cols = 32; c->mm_rate_i8 = 1; c->mm_rate_f16 = 2; c->mm_rate_bf16 = 2; c->mm_rate_f32 = 4;
    c->mm_weight_double_buffer = 1; c->mm_issue_cycles = 8;
    c->vec_lanes = 64; c->vec_transcendental_cycles = 4; c->vec_issue_cycles = 4;
    c->lmem_bytes = 512 * 1024; c->lmem_banks = 16; c->lmem_bank_width = 64; c->lmem_bank_bytes_per_cycle = 64;
    c->lmem_alignment = 64;
    c->sram_bytes = 4 << 20; c->sram_ports = 4; c->sram_bytes_per_cycle = 64; c->sram_latency = 20;
    c->noc_bytes_per_cycle = 64; c->noc_latency = 30;
    c->dram_bytes = 256 << 20; c->dram_channels = 8; c->dram_interleave = 4096; c->dram_gbps = 64; c->dram_latency_ns = 100;
    c->dma_burst_bytes = 256; c->dma_issue_cycles = 16; c->dma_lmem_bytes_per_cycle = 128;
    c->semaphores = 16; c->barrier_cycles = 20;
    strcpy(c->energy_source, "Horowitz ISSCC 2014 scaled");
    c->e_mac_i8 = 0.2; c->e_mac_f16 = 1.1; c->e_mac_f32 = 3.7; c->e_vec_op = 0.5;
    c->e_lmem_byte = 1.25; c->e_sram_byte = 5; c->e_noc_byte = 8; c->e_dram_byte = 160; c->e_static_mw_core = 50;
}

static void add(AtlProgram *p, int core, int eng, AtlInsn in)
{
    AtlStream *s = &p->streams[core * ISA_NUM_ENGINES + eng];
    if (s->count == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->insns = realloc(s->insns, (size_t)s->cap * sizeof *s->insns);
        s->src_line = realloc(s->src_line, (size_t)s->cap * sizeof *s->src_line);
    }
    s->src_line[s->count] = 0;
    s->insns[s->count++] = in;
}

static AtlInsn load(uint64_t lmem, uint64_t dram, uint32_t rows, uint32_t cols, int32_t dstride)
{
    AtlInsn x;
    memset(&x, 0, sizeof x);
    x.op = ISA_OP_DMA_COPY; x.dtype = ISA_I8; x.dst_space = ISA_SPACE_LMEM; x.src_space = ISA_SPACE_DRAM;
    x.dst = lmem; x.src = dram; x.shape[0] = x.shape[1] = 1; x.shape[2] = rows; x.shape[3] = cols;
    x.dst_stride[2] = (int32_t)cols; x.dst_stride[3] = 1; x.src_stride[2] = dstride; x.src_stride[3] = 1;
    return x;
}

/* GEMM C[M,N] = A[M,K] x B[K,N], int8; core c owns rows [c*M/16, ...);
 * blocks of 32 rows x 32 cols, K streamed in chunks of kc. A and B are laid
 * out tile-major in DRAM (each 32 x kc A tile and kc x 32 B tile contiguous),
 * as a compiler packs weights and blocked activations, so each tile load is
 * one contiguous run. C is stored row-major with strided DMA. */
static void build(AtlProgram *p, int M, int N, int K, int kc)
{
    memset(p, 0, sizeof *p);
    strcpy(p->source, "bench");
    p->ncores = 16;
    p->streams = calloc(16 * ISA_NUM_ENGINES, sizeof *p->streams);
    uint64_t Aaddr = 0, Baddr = (uint64_t)M * K, Caddr = Baddr + (uint64_t)K * N;
    int rows_per_core = M / 16;
    for (int c = 0; c < 16; c++) {
        int step = 0;
        for (int rb = 0; rb < rows_per_core; rb += 32)
            for (int cb = 0; cb < N; cb += 32) {
                for (int k0 = 0; k0 < K; k0 += kc, step++) {
                    uint64_t buf = (uint64_t)(step % 2) * 2 * 32 * kc;
                    uint64_t at = ((uint64_t)(c * rows_per_core + rb) / 32 * (K / kc) + (uint64_t)(k0 / kc)) * 32 * kc;
                    AtlInsn a = load(buf, Aaddr + at, 32, (uint32_t)kc, kc);
                    if (step >= 2) a.wait = 2; /* sem 1: buffer free */
                    add(p, c, ISA_ENGINE_DMA, a);
                    uint64_t bt = ((uint64_t)(k0 / kc) * (N / 32) + (uint64_t)(cb / 32)) * 32 * kc;
                    AtlInsn b = load(buf + 32 * kc, Baddr + bt, (uint32_t)kc, 32, 32);
                    b.signal = 1;              /* sem 0: tile ready */
                    add(p, c, ISA_ENGINE_DMA, b);
                    AtlInsn mm;
                    memset(&mm, 0, sizeof mm);
                    mm.op = ISA_OP_MM; mm.dtype = ISA_I8; mm.dst = 256 * 1024; mm.src = buf; mm.src2 = buf + 32 * kc;
                    mm.m = 32; mm.k = (uint32_t)kc; mm.n = 32; mm.lda = (uint32_t)kc; mm.ldb = 32; mm.ldc = 32;
                    mm.acc = k0 > 0; mm.wait = 1; mm.signal = 2; mm.layer = 1;
                    if (k0 + kc >= K) mm.signal = 3; /* sem 2: block done (the store frees the buffer too) */
                    add(p, c, ISA_ENGINE_MAT, mm);
                }
                AtlInsn st;
                memset(&st, 0, sizeof st);
                st.op = ISA_OP_DMA_COPY; st.dtype = ISA_I32; st.dst_space = ISA_SPACE_DRAM; st.src_space = ISA_SPACE_LMEM;
                st.src_core = (uint8_t)(c % 4); st.dst = Caddr + ((uint64_t)(c * rows_per_core + rb) * N + cb) * 4; st.src = 256 * 1024;
                st.shape[0] = st.shape[1] = 1; st.shape[2] = 32; st.shape[3] = 32;
                st.dst_stride[2] = N * 4; st.dst_stride[3] = 4; st.src_stride[2] = 128; st.src_stride[3] = 4;
                st.wait = 3; st.signal = 2; /* the mm's buffer-free signal moved here */
                add(p, c, ISA_ENGINE_DMA, st);
                /* the next block's first mm overwrites C: wait until the store has read it */
                AtlInsn n;
                memset(&n, 0, sizeof n);
                n.op = ISA_OP_NOP; n.signal = 4;
                add(p, c, ISA_ENGINE_DMA, n);
                memset(&n, 0, sizeof n);
                n.op = ISA_OP_NOP; n.wait = 4;
                add(p, c, ISA_ENGINE_MAT, n);
            }
        for (int e = 0; e < ISA_NUM_ENGINES; e++) {
            AtlInsn end;
            memset(&end, 0, sizeof end);
            end.op = ISA_OP_END;
            add(p, c, e, end);
        }
    }
    p->nsegs = 1;
    p->segs = calloc(1, sizeof *p->segs);
    strcpy(p->segs[0].name, "AB");
    p->segs[0].size = Caddr;
    p->segs[0].bytes = malloc(Caddr);
    uint32_t st = 7;
    for (uint64_t i = 0; i < Caddr; i++) { st = st * 1103515245u + 12345u; p->segs[0].bytes[i] = (uint8_t)(st >> 24); }
}

static void freeprog(AtlProgram *p)
{
    for (int i = 0; i < 16 * ISA_NUM_ENGINES; i++) { free(p->streams[i].insns); free(p->streams[i].src_line); }
    free(p->streams);
    free(p->segs[0].bytes);
    free(p->segs);
}

static void stall(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&t, &t)) {}
}

static int run(const AtlChip *c, AtlProgram *p, AtlSimMode mode, int stall_ms, double *secs, AtlSimStats *out)
{
    AtlSimOptions o;
    sim_options_default(&o);
    o.mode = mode;
    AtlErr e = {{0}};
    AtlSim *s = sim_create(c, &o, &e);
    if (!s || sim_load(s, p, &e)) { fprintf(stderr, "bench_sim: %s\n", e.msg); sim_free(s); return -1; }
    double t0 = bench_thread_cpu_seconds();
    int rc = sim_run(s, &e);
    stall(stall_ms);
    *secs = bench_thread_cpu_seconds() - t0;
    if (rc) { fprintf(stderr, "bench_sim: %s\n", e.msg); sim_free(s); return -1; }
    *out = *sim_stats(s);
    out->engine = NULL; out->layers = NULL;
    sim_free(s);
    return 0;
}

int main(int argc, char **argv)
{
    int quick = 0, stall_ms = 0, reps = 3;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--stall-ms") && i + 1 < argc && (stall_ms = (int)strtol(argv[++i], &end, 10)) >= 0 && !*end) {}
        else { fprintf(stderr, "usage: bench_sim [--quick] [--stall-ms N]\n"); return 2; }
    }
    if (quick) reps = 1;
    AtlChip c, c4k;
    AtlErr ce;
    if (cfg_load("configs/a1.ini", &c, &ce)) {
        fprintf(stderr, "bench_sim: %s; using an a1-shaped chip built in C\n", ce.msg);
        a1_like(&c);
    }
    c4k = c;
    c4k.dma_burst_bytes = 4096;
    AtlProgram big, small;
    int bm = quick ? 512 : 2048, sm = quick ? 512 : 1024, sn = quick ? 128 : 512;
    build(&big, bm, bm, bm, 128);         /* 8.6 G MACs (quick: 0.13 G), timing only */
    build(&small, sm, sn, sm, 128);       /* 0.5 G MACs (quick: 34 M), full mode */
    double tt = 1e30, tf = 1e30, tfun = 1e30, t4 = 1e30;
    AtlSimStats st, sf, sfun, s4;
    /* best of 3: the host is shared, the minimum is the least disturbed run */
    for (int rep = 0; rep < reps; rep++) {
        double a, b, d, g;
        if (run(&c, &big, SIM_MODE_TIMING, stall_ms, &a, &st) || run(&c, &small, SIM_MODE_FULL, stall_ms, &b, &sf) ||
            run(&c, &small, SIM_MODE_FUNCTIONAL, stall_ms, &d, &sfun) || run(&c4k, &big, SIM_MODE_TIMING, stall_ms, &g, &s4)) return 1;
        if (a < tt) tt = a;
        if (g < t4) t4 = g;
        if (b < tf) tf = b;
        if (d < tfun) tfun = d;
    }
    double ips = (double)st.insns / tt, cps = (double)st.cycles / tt, macs = (double)sf.macs / tf;
    printf("bench_sim: 16-core int8 GEMM on %s, %d-byte DMA bursts (timing: %d^3 in 32x32x128 mm tiles;\n"
           "  full: %dx%dx%d; best of %d). A DMA is a flow: one event per transfer, whatever its bursts.\n"
           "  Host seconds are the simulating thread's CPU time.\n",
           c.name, c.dma_burst_bytes, bm, sm, sm, sn, reps);
    printf("%-44s %16s %16s %s\n", "metric", "measured", "target", "");
    printf("%-44s %16.3g %16s %s\n", "timing-only: simulated instructions / host s", ips, ">= 5e6", ips >= 5e6 ? "ok" : "BELOW");
    printf("%-44s %16.3g %16s\n", "timing-only: simulated cycles / host s", cps, "-");
    printf("%-44s %16.3g %16s %s\n", "timing-only, 4 KiB bursts: instructions / s", (double)s4.insns / t4, ">= 5e6",
           (double)s4.insns / t4 >= 5e6 ? "ok" : "BELOW");
    printf("%-44s %16.3g %16s\n", "timing-only, 4 KiB bursts: cycles / host s", (double)s4.cycles / t4, "-");
    printf("%-44s %16.3g %16s\n", "timing-only: events / host s", (double)st.events / tt, "-");
    printf("%-44s %16.3g %16s %s\n", "full mode: host int8 MAC/s", macs, ">= 2e9", macs >= 2e9 ? "ok" : "BELOW");
    printf("%-44s %16.3g %16s\n", "functional mode: host int8 MAC/s", (double)sfun.macs / tfun, "-");
    printf("%-44s %16llu %16s\n", "timing-only: instructions", (unsigned long long)st.insns, "-");
    printf("%-44s %16llu %16s\n", "timing-only: simulated cycles", (unsigned long long)st.cycles, "-");
    printf("%-44s %16.3f %16s\n", "timing-only: matrix utilisation", st.mm_util, "-");
    printf("%-44s %16.3f %16s\n", "timing-only: host CPU seconds", tt, "-");
    printf("%-44s %16.3f %16s\n", "full mode: host CPU seconds", tf, "-");
    freeprog(&big);
    freeprog(&small);
    return 0;
}
