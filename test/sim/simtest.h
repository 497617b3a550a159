/* simtest.h - helpers shared by the simulator tests: small chip configs
 * filled in C, a program builder (tp_*, independent of the assembler) and
 * instruction constructors. Header-only; included by test/sim/test_*.c. */
#ifndef ATOLL_TEST_SIMTEST_H
#define ATOLL_TEST_SIMTEST_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim.h"
#include "isa/timing.h"
#include "isa/numerics.h"

/* A tiny 1-core chip with round numbers: 8x8 array, 16 B/cycle DRAM. */
static inline void tchip(AtlChip *c, int clusters, int cpc)
{
    memset(c, 0, sizeof *c);
    cfg_set_defaults(c);
    strcpy(c->name, "test");
    c->clusters = clusters; c->cores_per_cluster = cpc; c->freq_mhz = 1000;
    c->mm_rows = 8; c->mm_cols = 8;
    c->mm_rate_i8 = 1; c->mm_rate_f16 = 2; c->mm_rate_bf16 = 2; c->mm_rate_f32 = 4;
    c->mm_weight_double_buffer = 0; c->mm_issue_cycles = 0;
    c->vec_lanes = 16; c->vec_transcendental_cycles = 4; c->vec_issue_cycles = 2;
    c->lmem_bytes = 65536; c->lmem_banks = 8; c->lmem_bank_width = 64; c->lmem_bank_bytes_per_cycle = 16;
    c->lmem_alignment = 16;
    c->sram_bytes = 262144; c->sram_ports = 2; c->sram_bytes_per_cycle = 32; c->sram_latency = 10;
    c->noc_bytes_per_cycle = 32; c->noc_latency = 20;
    c->dram_bytes = 16 << 20; c->dram_channels = 1; c->dram_interleave = 256; c->dram_gbps = 16;
    c->dram_latency_ns = 100;
    c->dma_burst_bytes = 256; c->dma_issue_cycles = 4; c->dma_lmem_bytes_per_cycle = 64;
    c->semaphores = 8; c->barrier_cycles = 10;
    strcpy(c->energy_source, "test");
    c->e_mac_i8 = 0.2; c->e_mac_f16 = 1.1; c->e_mac_f32 = 3.7; c->e_vec_op = 0.5;
    c->e_lmem_byte = 1; c->e_sram_byte = 2; c->e_noc_byte = 3; c->e_dram_byte = 20; c->e_static_mw_core = 0;
}

/* ---- program builder ---- */
static inline void tp_init(AtlProgram *p, int ncores)
{
    memset(p, 0, sizeof *p);
    strcpy(p->source, "test");
    p->ncores = ncores;
    p->streams = calloc((size_t)ncores * ISA_NUM_ENGINES, sizeof *p->streams);
}

static inline void tp_add(AtlProgram *p, int core, int engine, AtlInsn in)
{
    AtlStream *s = &p->streams[core * ISA_NUM_ENGINES + engine];
    if (s->count == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->insns = realloc(s->insns, (size_t)s->cap * sizeof *s->insns);
        s->src_line = realloc(s->src_line, (size_t)s->cap * sizeof *s->src_line);
    }
    s->src_line[s->count] = 0;
    s->insns[s->count++] = in;
}

static inline void tp_seg(AtlProgram *p, uint64_t addr, const void *bytes, size_t size)
{
    p->segs = realloc(p->segs, (size_t)(p->nsegs + 1) * sizeof *p->segs);
    AtlDataSeg *g = &p->segs[p->nsegs++];
    memset(g, 0, sizeof *g);
    strcpy(g->name, "seg");
    g->addr = addr;
    g->size = size;
    g->bytes = malloc(size ? size : 1);
    memcpy(g->bytes, bytes, size);
}

static inline void tp_expect(AtlProgram *p, uint64_t addr, int dtype, uint32_t n, const void *bytes)
{
    p->regions = realloc(p->regions, (size_t)(p->nregions + 1) * sizeof *p->regions);
    AtlRegion *r = &p->regions[p->nregions++];
    memset(r, 0, sizeof *r);
    strcpy(r->name, "out");
    r->addr = addr; r->dtype = dtype; r->ndim = 1; r->shape[0] = n;
    size_t sz = (size_t)n * (size_t)isa_dtype_size(dtype);
    r->expect = malloc(sz);
    memcpy(r->expect, bytes, sz);
}

/* Ends every stream that does not end yet. */
static inline void tp_end_all(AtlProgram *p)
{
    for (int i = 0; i < p->ncores * ISA_NUM_ENGINES; i++) {
        AtlStream *s = &p->streams[i];
        if (!s->count || s->insns[s->count - 1].op != ISA_OP_END) {
            AtlInsn e;
            memset(&e, 0, sizeof e);
            e.op = ISA_OP_END;
            tp_add(p, i / ISA_NUM_ENGINES, i % ISA_NUM_ENGINES, e);
        }
    }
}

/* Ends p's streams and runs p on chip; returns the simulator when the run
 * stopped with a fault (its message in e, the report in sim_fault), else
 * NULL (a run that did not fail says so in e). The caller frees it. */
static inline AtlSim *tp_run_to_fault(const AtlChip *chip, AtlProgram *p, AtlErr *e)
{
    tp_end_all(p);
    AtlSimOptions o;
    sim_options_default(&o);
    AtlSim *s = sim_create(chip, &o, e);
    if (!s) return NULL;
    if (sim_load(s, p, e)) { sim_free(s); return NULL; }
    if (sim_run(s, e) == -1) return s;
    sim_free(s);
    snprintf(e->msg, sizeof e->msg, "the run did not fail");
    return NULL;
}

static inline void tp_free(AtlProgram *p)
{
    for (int i = 0; i < p->ncores * ISA_NUM_ENGINES; i++) { free(p->streams[i].insns); free(p->streams[i].src_line); }
    free(p->streams);
    for (int i = 0; i < p->nsegs; i++) free(p->segs[i].bytes);
    free(p->segs);
    for (int i = 0; i < p->nregions; i++) free(p->regions[i].expect);
    free(p->regions);
    memset(p, 0, sizeof *p);
}

/* ---- instruction constructors ---- */
static inline AtlInsn I(int op) { AtlInsn x; memset(&x, 0, sizeof x); x.op = (uint8_t)op; return x; }
static inline AtlInsn sync_ws(AtlInsn x, int wait, int signal) { x.wait = (uint8_t)(wait + 1); x.signal = (uint8_t)(signal + 1); return x; }
static inline AtlInsn I_wait(AtlInsn x, int sem) { x.wait = (uint8_t)(sem + 1); return x; }
static inline AtlInsn I_sig(AtlInsn x, int sem) { x.signal = (uint8_t)(sem + 1); return x; }

/* rows x cols elements of dtype, row strides in bytes */
static inline AtlInsn I_dma(int dt, int dsp, uint64_t dst, int dstride, int ssp, uint64_t src, int sstride,
                     uint32_t rows, uint32_t cols)
{
    AtlInsn x = I(ISA_OP_DMA_COPY);
    int es = isa_dtype_size(dt);
    x.dtype = (uint8_t)dt; x.dst_space = (uint8_t)dsp; x.src_space = (uint8_t)ssp; x.dst = dst; x.src = src;
    x.shape[0] = 1; x.shape[1] = 1; x.shape[2] = rows; x.shape[3] = cols;
    x.dst_stride[2] = dstride; x.dst_stride[3] = es;
    x.src_stride[2] = sstride; x.src_stride[3] = es;
    return x;
}
static inline AtlInsn I_load(uint64_t lmem, uint64_t dram, uint32_t bytes)
{
    return I_dma(ISA_I8, ISA_SPACE_LMEM, lmem, 0, ISA_SPACE_DRAM, dram, 0, 1, bytes);
}
static inline AtlInsn I_store(uint64_t dram, uint64_t lmem, uint32_t bytes)
{
    return I_dma(ISA_I8, ISA_SPACE_DRAM, dram, 0, ISA_SPACE_LMEM, lmem, 0, 1, bytes);
}
static inline AtlInsn I_mm(int dt, uint64_t c, uint64_t a, uint64_t b, uint32_t m, uint32_t k, uint32_t n)
{
    AtlInsn x = I(ISA_OP_MM);
    x.dtype = (uint8_t)dt; x.dst = c; x.src = a; x.src2 = b; x.m = m; x.k = k; x.n = n;
    x.lda = k; x.ldb = n; x.ldc = n;
    return x;
}
/* contiguous 1-D vector op over n elements */
static inline AtlInsn I_vec(int op, int dt, uint64_t dst, uint64_t src, uint64_t src2, uint32_t n)
{
    AtlInsn x = I(op);
    x.dtype = (uint8_t)dt; x.otype = (uint8_t)dt; x.dst = dst; x.src = src; x.src2 = src2;
    x.shape[0] = x.shape[1] = x.shape[2] = 1; x.shape[3] = n;
    x.dst_stride[3] = x.src_stride[3] = x.src2_stride[3] = 1;
    return x;
}

/* deterministic pseudo-random numbers */
static uint32_t trand_state = 12345;
static inline uint32_t trand(void) { trand_state = trand_state * 1103515245u + 12345u; return trand_state >> 8; }
static inline int8_t trand_i8(void) { return (int8_t)(trand() & 0xff); }

/* Creates a sim, loads and runs; returns the run result; *out keeps the sim. */
static inline int trun(const AtlChip *c, const AtlProgram *p, AtlSimMode mode, AtlSim **out, AtlErr *e)
{
    AtlSimOptions o;
    sim_options_default(&o);
    o.mode = mode;
    AtlSim *s = sim_create(c, &o, e);
    *out = s;
    if (!s) return -2;
    if (sim_load(s, p, e)) return -2;
    return sim_run(s, e);
}
#endif
