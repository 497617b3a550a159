/* model_build.h - test helper (header only): builds an .abm from assembler
 * text, the way a compiler would: prog_assemble + isa_encode for every
 * stream, weights and tensors through the writer. DRAM operands in the text
 * use the relocation tags of isa/regs.h (dram:0x100000000 = weights + 0,
 * dram:0x300000040 = io + 64).
 *
 * The sample model: net "relu_bias" computes y = relu(x + b) for 64 int8
 * values (x input, b a weight, y output); with_bad adds net "bad", which has a
 * misaligned vector operand and so faults when run.
 */
#ifndef ATOLL_TEST_MODEL_BUILD_H
#define ATOLL_TEST_MODEL_BUILD_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "isa/abm.h"
#include "isa/isa.h"
#include "isa/program.h"
#include "isa/regs.h"

static const char sample_good_asm[] =
    "; y = relu(x + b): b from weights, x from io+0, y to io+64\n"
    ".core 0\n"
    ".engine dma\n"
    "    dma.copy dtype=i8 dst=lmem:0x200 src=dram:0x100000000 shape=64 dstride=1 sstride=1 layer=1\n"
    "    dma.copy dtype=i8 dst=lmem:0 src=dram:0x300000000 shape=64 dstride=1 sstride=1 signal=0 layer=1\n"
    "    dma.copy dtype=i8 dst=dram:0x300000040 src=lmem:0x100 shape=64 dstride=1 sstride=1 wait=1 layer=2\n"
    "    end\n"
    ".engine vec\n"
    "    v.add dtype=i8 dst=0x100 src=0 src2=0x200 shape=64 dstride=1 sstride=1 s2stride=1 wait=0 layer=1\n"
    "    v.relu dtype=i8 dst=0x100 src=0x100 shape=64 dstride=1 sstride=1 signal=1 layer=2\n"
    "    end\n";

static const char sample_bad_asm[] =
    ".core 0\n"
    ".engine vec\n"
    "    v.relu dtype=i8 dst=0x101 src=0 shape=64 dstride=1 sstride=1 layer=1\n"
    "    end\n";

/* Adds assembled streams for `variant` (core count of the program). */
static inline int mb_streams(AbmWriter *w, uint32_t variant, const char *name, const char *text, AtlErr *e)
{
    AtlProgram p;
    if (prog_assemble(name, text, &p, e)) return -1;
    int rc = 0;
    for (int c = 0; c < p.ncores && !rc; c++)
        for (int g = 0; g < ISA_NUM_ENGINES && !rc; g++) {
            AtlStream *s = prog_stream(&p, c, g);
            if (!s->count) continue;
            uint8_t *bytes = calloc((size_t)s->count, ISA_INSN_BYTES);
            if (!bytes) { rc = atl_fail(e, "out of memory"); break; }
            for (int i = 0; i < s->count && !rc; i++) rc = isa_encode(&s->insns[i], bytes + (size_t)i * ISA_INSN_BYTES, e);
            if (!rc) rc = abm_set_stream(w, variant, (uint32_t)c, (uint32_t)g, bytes, (size_t)s->count * ISA_INSN_BYTES, e);
            free(bytes);
        }
    prog_free(&p);
    return rc;
}

static int8_t sample_bias[64];

static inline void mb_bias_init(void)
{
    for (int i = 0; i < 64; i++) sample_bias[i] = (int8_t)((i * 5) % 21 - 10);
}

static inline uint8_t *mb_sample_model(uint64_t chip, int with_bad, size_t *len, AtlErr *e)
{
    mb_bias_init();
    AbmWriter *w = abm_writer_new(chip);
    if (!w) { atl_fail(e, "out of memory"); return NULL; }
    uint32_t net, bad, st, stb;
    uint64_t woff;
    float sx = 0.25f;
    int32_t zx = 0;
    AbmTensorDesc x = { .name = "x", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_INPUT, .region = ABM_REGION_IO, .ndim = 2,
                        .dims = { 1, 64 }, .offset = 0, .quant_kind = ABM_QUANT_PER_TENSOR, .quant_count = 1,
                        .scale = &sx, .zero_point = &zx };
    AbmTensorDesc y = { .name = "y", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_OUTPUT, .region = ABM_REGION_IO, .ndim = 2,
                        .dims = { 1, 64 }, .offset = 64 };
    AbmTensorDesc b = { .name = "b", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_WEIGHT, .region = ABM_REGION_WEIGHTS,
                        .ndim = 1, .dims = { 64 } };
    uint8_t *buf = NULL;
    if (abm_add_net(w, "relu_bias", &net, e) || abm_add_weight(w, sample_bias, sizeof sample_bias, &woff, e)) goto out;
    if (woff != 0) { atl_fail(e, "expected the bias at weights offset 0, got %llu", (unsigned long long)woff); goto out; }
    b.offset = woff;
    if (abm_add_variant(w, net, 1, 1, &st, e) || abm_add_tensor(w, st, &x, NULL, e) || abm_add_tensor(w, st, &b, NULL, e) ||
        abm_add_tensor(w, st, &y, NULL, e) || abm_set_mem_plan(w, st, 0, 128, e) ||
        mb_streams(w, st, "relu_bias.s", sample_good_asm, e))
        goto out;
    if (with_bad && (abm_add_net(w, "bad", &bad, e) || abm_add_variant(w, bad, 1, 1, &stb, e) || abm_add_tensor(w, stb, &x, NULL, e) ||
        abm_set_mem_plan(w, stb, 0, 64, e) || mb_streams(w, stb, "bad.s", sample_bad_asm, e)))
        goto out;
    abm_set_metadata(w, "test 1.0", "", NULL, e);
    if (abm_serialize(w, &buf, len, e)) buf = NULL;
out:
    abm_writer_free(w);
    return buf;
}

static inline void mb_reference(const int8_t *x, int8_t *y)
{
    for (int i = 0; i < 64; i++) {
        int v = x[i] + sample_bias[i];
        y[i] = (int8_t)(v > 127 ? 127 : v < 0 ? 0 : v);
    }
}
#endif
