/* wsram_check.h - the checks on a program whose layer stages its weights
 * in each cluster's SRAM (split " wsram"; lower/wsram.c, lower/qmatrix.c),
 * shared by test_backend_wsram.c (f32) and test_int8_wsram.c (int8),
 * which had a copy each. Header only. */
#ifndef ATOLL_TEST_WSRAM_CHECK_H
#define ATOLL_TEST_WSRAM_CHECK_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "test/test.h"
#include "isa/config.h"
#include "isa/isa.h"
#include "isa/program.h"
#include "compiler/schedule/schedule.h"

/* Last byte + 1 a DMA reads from its source (byte strides). */
static inline uint64_t wsram_src_end(const AtlInsn *in)
{
    uint64_t end = in->src + (uint64_t)isa_dtype_size(in->dtype);
    for (int d = 0; d < 4; d++) end += (uint64_t)(in->shape[d] - 1) * (uint64_t)in->src_stride[d];
    return end;
}

/* p, compiled for chip, with one layer staging its weights (wbytes of
 * them): the weights' DRAM range is what the staging copies (DRAM to
 * SRAM) read, at most wbytes; every read of that range is a staging copy
 * (no tile reads weights from DRAM), each byte at most once per cluster;
 * a core loads from SRAM only after its own staging copy or a wait; and
 * some staged chunk (one SRAM source address) is loaded by two cores of a
 * cluster. */
static inline void wsram_check_program(const AtlProgram *p, const AtlChip *chip, uint64_t wbytes)
{
    int cpc = chip->cores_per_cluster;
    uint64_t lo = UINT64_MAX, hi = 0, staged[64] = {0}, read[64] = {0};
    int stagers[64] = {0};
    REQUIRE(chip->clusters <= 64);
    for (int core = 0; core < p->ncores; core++) {
        const AtlStream *dma = &p->streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
        int copies = 0;
        for (int i = 0; i < dma->count; i++) {
            const AtlInsn *in = &dma->insns[i];
            if (in->op != ISA_OP_DMA_COPY || in->dst_space != ISA_SPACE_SRAM || in->src_space != ISA_SPACE_DRAM) continue;
            if (in->src < lo) lo = in->src;
            if (wsram_src_end(in) > hi) hi = wsram_src_end(in);
            staged[core / cpc] += isa_shape_bytes(in);
            copies++;
        }
        stagers[core / cpc] += copies > 0;
    }
    REQUIRE(lo < hi);
    CHECKF(hi - lo <= wbytes, "the staging copies read %llu bytes of DRAM, the weights are %llu", (unsigned long long)(hi - lo),
           (unsigned long long)wbytes);
    int shared = 0, twice = 0;
    uint8_t *times = calloc((size_t)chip->clusters * (size_t)(hi - lo), 1);
    REQUIRE(times != NULL);
    for (int core = 0; core < p->ncores; core++) {
        const AtlStream *dma = &p->streams[core * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
        int waited = 0, early = 0;
        for (int i = 0; i < dma->count; i++) {
            const AtlInsn *in = &dma->insns[i];
            if (in->op == ISA_OP_NOP && in->wait == BK_SEM_WEIGHTS + 1) waited = 1;
            if (in->op != ISA_OP_DMA_COPY) continue;
            if (in->src_space == ISA_SPACE_DRAM && in->dst_space == ISA_SPACE_SRAM) waited = 1;
            if (in->src_space == ISA_SPACE_DRAM && in->src < hi && wsram_src_end(in) > lo) {
                read[core / cpc] += isa_shape_bytes(in);
                uint64_t es = (uint64_t)isa_dtype_size(in->dtype);
                for (uint32_t a = 0; a < in->shape[0]; a++)
                    for (uint32_t b = 0; b < in->shape[1]; b++)
                        for (uint32_t d = 0; d < in->shape[2]; d++)
                            for (uint32_t f = 0; f < in->shape[3]; f++) {
                                uint64_t at = in->src + a * (uint64_t)in->src_stride[0] + b * (uint64_t)in->src_stride[1] +
                                              d * (uint64_t)in->src_stride[2] + f * (uint64_t)in->src_stride[3];
                                for (uint64_t x = 0; x < es; x++)
                                    if (at + x >= lo && at + x < hi)   /* a read partly over the range */
                                        twice += times[(size_t)(core / cpc) * (hi - lo) + (at + x - lo)]++ > 0;
                            }
            }
            if (in->src_space == ISA_SPACE_SRAM && in->dst_space == ISA_SPACE_LMEM && !in->mask && !waited) early++;
        }
        CHECKF(early == 0, "core %d loads from SRAM before the staging (its own copy or a wait)", core);
    }
    free(times);
    CHECKF(twice == 0, "%d weight bytes read twice from DRAM by one cluster", twice);
    for (int cl = 0; cl < chip->clusters; cl++) {
        printf("  cluster %d: %llu weight bytes read from DRAM (%d core(s) copy)\n", cl, (unsigned long long)read[cl],
               stagers[cl]);
        CHECKF(read[cl] == staged[cl], "cluster %d reads %llu bytes of weights from DRAM, %llu of them staged", cl,
               (unsigned long long)read[cl], (unsigned long long)staged[cl]);
        CHECKF(read[cl] <= wbytes, "cluster %d reads %llu weight bytes (> %llu)", cl, (unsigned long long)read[cl],
               (unsigned long long)wbytes);
    }
    for (int cl = 0; cl < chip->clusters && !shared; cl++)
        for (int a = 0; a < cpc && !shared; a++)
            for (int b = a + 1; b < cpc && !shared; b++) {
                const AtlStream *da = &p->streams[(cl * cpc + a) * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
                const AtlStream *db = &p->streams[(cl * cpc + b) * ISA_NUM_ENGINES + ISA_ENGINE_DMA];
                for (int i = 0; i < da->count && !shared; i++)
                    for (int j = 0; j < db->count && !shared; j++) {
                        const AtlInsn *u = &da->insns[i], *v = &db->insns[j];
                        shared = u->op == ISA_OP_DMA_COPY && v->op == ISA_OP_DMA_COPY && u->src_space == ISA_SPACE_SRAM &&
                                 v->src_space == ISA_SPACE_SRAM && u->dst_space == ISA_SPACE_LMEM && !u->mask &&
                                 u->src == v->src && isa_shape_bytes(u) == isa_shape_bytes(v);
                    }
            }
    CHECKF(shared, "no staged chunk is loaded by two cores of a cluster");
}
#endif
