/* exec_dma.c - data effect of dma.copy, dma.fill, dma.gather and
 * dma.scatter: strided 4-D element copies between DRAM, the cluster's SRAM
 * (or another cluster's, dma.copy's peer ends) and LMEM (multicast to
 * every core of the mask), constant fills, and
 * copies whose d1 source (gather) or destination (scatter) row comes from
 * an i32 index table. Bounds of the static extents were checked in
 * check.c; the indices are checked here, when they are read, and an index
 * outside [-limit, limit) is a data fault that names the index and its
 * position. */
#include <stdio.h>
#include <string.h>
#include "sim/sim_int.h"

static void copy4(uint8_t *dst, const int32_t ds[4], const uint8_t *src, const int32_t ss[4],
                  const uint32_t sh[4], int es)
{
    int rows = ds[3] == es && ss[3] == es;
    for (uint32_t a = 0; a < sh[0]; a++)
        for (uint32_t b = 0; b < sh[1]; b++)
            for (uint32_t c = 0; c < sh[2]; c++) {
                uint8_t *d = dst + (int64_t)a * ds[0] + (int64_t)b * ds[1] + (int64_t)c * ds[2];
                const uint8_t *sp = src + (int64_t)a * ss[0] + (int64_t)b * ss[1] + (int64_t)c * ss[2];
                if (rows) { memmove(d, sp, (size_t)sh[3] * (size_t)es); continue; }
                for (uint32_t i = 0; i < sh[3]; i++)
                    memmove(d + (int64_t)i * ds[3], sp + (int64_t)i * ss[3], (size_t)es);
            }
}

static uint32_t dst_cores(const AtlSim *s, int core, const AtlInsn *in)
{
    return in->mask ? in->mask : 1u << (core % s->cpc);
}

int sim_exec_fmt_DMA_COPY(AtlSim *s, int core, const AtlInsn *in)
{
    int es = isa_dtype_size(in->dtype);
    const uint8_t *src = mem_end_ptr(s, core, in->src_space, in->src, in->src_core);
    if (in->dst_space != ISA_SPACE_LMEM) {
        copy4(mem_end_ptr(s, core, in->dst_space, in->dst, 0), in->dst_stride, src, in->src_stride, in->shape, es);
        return 0;
    }
    uint32_t m = dst_cores(s, core, in);
    for (int i = 0; i < s->cpc; i++)
        if (m >> i & 1)
            copy4(mem_space_ptr(s, core, ISA_SPACE_LMEM, i) + in->dst, in->dst_stride, src, in->src_stride, in->shape, es);
    return 0;
}

int sim_exec_fmt_DMA_FILL(AtlSim *s, int core, const AtlInsn *in)
{
    int es = isa_dtype_size(in->dtype);
    uint8_t pat[4];
    uint32_t v = (uint32_t)in->ival;
    for (int i = 0; i < 4; i++) pat[i] = (uint8_t)(v >> (8 * i));
    static const int32_t zero[4] = {0, 0, 0, 0};
    /* a fill is a copy from a broadcast (all-zero-stride) one-element source */
    if (in->dst_space != ISA_SPACE_LMEM) {
        copy4(mem_space_ptr(s, core, in->dst_space, 0) + in->dst, in->dst_stride, pat, zero, in->shape, es);
        return 0;
    }
    uint32_t m = dst_cores(s, core, in);
    for (int i = 0; i < s->cpc; i++)
        if (m >> i & 1)
            copy4(mem_space_ptr(s, core, ISA_SPACE_LMEM, i) + in->dst, in->dst_stride, pat, zero, in->shape, es);
    return 0;
}

/* Row r of the indexed end for entry j of the table, or -1 (with the fault
 * message set) when the index is outside [-limit, limit). */
static int64_t indexed_row(AtlSim *s, const AtlInsn *in, const uint8_t *idx, uint32_t j)
{
    int32_t v;
    memcpy(&v, idx + 4 * (size_t)j, 4);
    int64_t r = v < 0 ? (int64_t)v + in->limit : v;
    if (r >= 0 && r < (int64_t)in->limit) return r;
    snprintf(s->exec_msg, sizeof s->exec_msg, "%s: index %d (entry %u of idx) is outside [-%u, %u)",
             isa_ops[in->op].mnemonic, v, j, in->limit, in->limit);
    return -1;
}

/* dma.gather (source row indexed) and dma.scatter (destination row indexed). */
int sim_exec_fmt_DMA_GATHER(AtlSim *s, int core, const AtlInsn *in)
{
    int es = isa_dtype_size(in->dtype);
    int own = core % s->cpc;
    const uint8_t *idx = mem_space_ptr(s, core, in->src2_space, own) + in->src2;
    const uint8_t *src = mem_space_ptr(s, core, in->src_space, own) + in->src;
    uint8_t *dst = mem_space_ptr(s, core, in->dst_space, own) + in->dst;
    uint32_t row[4] = {in->shape[0], 1, in->shape[2], in->shape[3]};
    int scatter = in->op == ISA_OP_DMA_SCATTER;
    /* all indices are checked before any byte moves: a fault leaves dst untouched */
    for (uint32_t j = 0; j < in->shape[1]; j++)
        if (indexed_row(s, in, idx, j) < 0) return -1;
    /* rows in j order: a scatter's repeated index keeps the last row */
    for (uint32_t j = 0; j < in->shape[1]; j++) {
        int64_t r = indexed_row(s, in, idx, j);
        int64_t drow = scatter ? r : j, srow = scatter ? j : r;
        copy4(dst + drow * in->dst_stride[1], in->dst_stride, src + srow * in->src_stride[1], in->src_stride, row, es);
    }
    return 0;
}
