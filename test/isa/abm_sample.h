/* abm_sample.h - builds small but complete .abm models for the tests, the
 * CLI tests (through test_abm_gen) and the fuzz seeds. Header only.
 *
 * Variant 0: net "resnet" (variants batch 1 and 4, 2 cores) and net "tiny"
 * (batch 1, 1 core). Variant 1: net "mobilenet" (batch 1) and "resnet"
 * batch 8, sharing one weight blob with variant 0, so combining them must
 * dedup it. Weights mix compressible int8 (small Gaussian-like values),
 * fp32 biases, an incompressible blob and a duplicate.
 */
#ifndef ATOLL_TEST_ABM_SAMPLE_H
#define ATOLL_TEST_ABM_SAMPLE_H
#include <stdint.h>
#include <string.h>
#include "isa/abm.h"

#define SAMPLE_CHIP 0xA1C0FFEE12345678ull

static uint32_t sample_rng(uint32_t *s)
{
    *s ^= *s << 13; *s ^= *s >> 17; *s ^= *s << 5;
    return *s;
}

/* Approximately Gaussian int8 (sum of 4 uniforms), so deflate gains a little. */
static void sample_int8(int8_t *d, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        int s = 0;
        for (int k = 0; k < 4; k++) s += (int)(sample_rng(&seed) % 17) - 8;
        d[i] = (int8_t)s;
    }
}

/* A stream of n instructions whose bytes depend on (tag, i). */
static void sample_stream(uint8_t *d, size_t n, uint32_t tag)
{
    memset(d, 0, n * ABM_INSN_BYTES);
    for (size_t i = 0; i < n; i++) {
        uint8_t *r = d + i * ABM_INSN_BYTES;
        r[0] = (uint8_t)(tag & 0x3f);
        r[1] = (uint8_t)i;
        r[8] = (uint8_t)(tag >> 8);
        r[16] = (uint8_t)(i * 7);
    }
}

static int sample_variant(AbmWriter *w, uint32_t net, uint32_t batch, uint32_t cores, uint64_t wconv, uint64_t wbias,
                        uint32_t tag, AtlErr *e)
{
    uint32_t st;
    if (abm_add_variant(w, net, batch, cores, &st, e)) return -1;
    float in_scale = 0.05f;
    int32_t in_zp = -3;
    AbmTensorDesc in = { .name = "input", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_INPUT, .region = ABM_REGION_IO,
                         .layout = ABM_LAYOUT_NCHW, .ndim = 4, .dims = { batch, 3, 8, 8 }, .offset = 0,
                         .quant_kind = ABM_QUANT_PER_TENSOR, .quant_count = 1, .scale = &in_scale, .zero_point = &in_zp };
    float wsc[16];
    for (int i = 0; i < 16; i++) wsc[i] = 0.01f + 0.001f * (float)i;
    AbmTensorDesc conv = { .name = "conv1.weight", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_WEIGHT,
                           .region = ABM_REGION_WEIGHTS, .layout = ABM_LAYOUT_NCHW, .ndim = 4, .dims = { 16, 3, 3, 3 },
                           .offset = wconv, .quant_kind = ABM_QUANT_PER_CHANNEL, .quant_axis = 0, .quant_count = 16,
                           .scale = wsc };
    AbmTensorDesc bias = { .name = "conv1.bias", .dtype = ABM_DTYPE_FP32, .role = ABM_ROLE_WEIGHT,
                           .region = ABM_REGION_WEIGHTS, .layout = ABM_LAYOUT_ROW_MAJOR, .ndim = 1, .dims = { 16 },
                           .offset = wbias };
    AbmTensorDesc act = { .name = "conv1.out", .dtype = ABM_DTYPE_FP16, .role = ABM_ROLE_ACTIVATION,
                          .region = ABM_REGION_ACTIVATIONS, .layout = ABM_LAYOUT_OPAQUE, .ndim = 4,
                          .dims = { batch, 16, 8, 8 }, .offset = 128, .size = (uint64_t)batch * 16 * 8 * 8 * 2 + 64 };
    uint64_t in_bytes = (uint64_t)batch * 3 * 8 * 8;
    AbmTensorDesc out = { .name = "logits", .dtype = ABM_DTYPE_FP32, .role = ABM_ROLE_OUTPUT, .region = ABM_REGION_IO,
                          .layout = ABM_LAYOUT_ROW_MAJOR, .ndim = 2, .dims = { batch, 16 },
                          .offset = (in_bytes + 63) / 64 * 64 };
    const AbmTensorDesc *all[] = { &in, &conv, &bias, &act, &out };
    for (int i = 0; i < 5; i++)
        if (abm_add_tensor(w, st, all[i], NULL, e)) return -1;
    uint64_t io = out.offset + (uint64_t)batch * 16 * 4;
    if (abm_set_mem_plan(w, st, 128 + act.size, io, e)) return -1;
    uint8_t buf[6 * ABM_INSN_BYTES];
    for (uint32_t c = 0; c < cores; c++)
        for (uint32_t g = 0; g < ABM_ENGINES; g++) {
            size_t n = (c + g + batch) % 6;    /* some streams are empty */
            sample_stream(buf, n, tag + c * 16 + g);
            if (abm_set_stream(w, st, c, g, buf, n * ABM_INSN_BYTES, e)) return -1;
        }
    return 0;
}

/* Builds variant 0 or 1 (see the top of the file); NULL on failure. */
static AbmWriter *sample_model(uint64_t chip, int variant, int level, AtlErr *e)
{
    AbmWriter *w = abm_writer_new(chip);
    if (!w) return NULL;
    abm_writer_set_level(w, level);
    int8_t conv[16 * 27];
    float bias[16];
    uint8_t noise[256];
    uint32_t seed = 99;
    sample_int8(conv, sizeof conv, 7);                  /* shared by both variants */
    for (int i = 0; i < 16; i++) bias[i] = (float)i * 0.25f - (float)variant;
    for (size_t i = 0; i < sizeof noise; i++) noise[i] = (uint8_t)sample_rng(&seed);
    uint64_t oc, ob, on, dup;
    uint32_t n0, n1;
    if (abm_add_weight(w, conv, sizeof conv, &oc, e) || abm_add_weight(w, bias, sizeof bias, &ob, e) ||
        abm_add_weight(w, noise, sizeof noise, &on, e) || abm_add_weight(w, conv, sizeof conv, &dup, e))
        goto fail;
    uint8_t hash[ABM_HASH_BYTES];
    for (int i = 0; i < ABM_HASH_BYTES; i++) hash[i] = (uint8_t)(i * 11 + variant);
    if (abm_set_metadata(w, "atoll-test 0.1", variant ? "-O1 --batch 8" : "-O2 --batch 1,4", hash, e)) goto fail;
    if (variant == 0) {
        if (abm_add_net(w, "resnet", &n0, e) || abm_add_net(w, "tiny", &n1, e)) goto fail;
        if (sample_variant(w, n0, 1, 2, oc, ob, 0x100, e) || sample_variant(w, n1, 1, 1, dup, ob, 0x200, e) ||
            sample_variant(w, n0, 4, 2, oc, ob, 0x300, e))
            goto fail;
    } else {
        if (abm_add_net(w, "mobilenet", &n0, e) || abm_add_net(w, "resnet", &n1, e)) goto fail;
        if (sample_variant(w, n0, 1, 1, oc, ob, 0x400, e) || sample_variant(w, n1, 8, 2, oc, ob, 0x500, e)) goto fail;
    }
    (void)on;
    return w;
fail:
    abm_writer_free(w);
    return NULL;
}
static inline void sample_wr32(uint8_t *p, uint32_t x) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(x >> (8 * i)); }
static inline uint32_t sample_get32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static inline uint64_t sample_get64(const uint8_t *p) { return sample_get32(p) | (uint64_t)sample_get32(p + 4) << 32; }

/* Recomputes every CRC after a deliberate edit, so that the structural
 * check behind it is what fires. Sections that point outside are skipped. */
static inline void sample_refix(uint8_t *b, size_t n)
{
    uint32_t count = sample_get32(b + 28);
    uint64_t tab = sample_get64(b + 32);
    if (count <= ABM_MAX_SECTIONS && tab <= n && (uint64_t)count * ABM_SECTION_ENTRY_BYTES <= n - tab) {
        for (uint32_t i = 0; i < count; i++) {
            uint8_t *ent = b + tab + (uint64_t)i * ABM_SECTION_ENTRY_BYTES;
            uint64_t off = sample_get64(ent + 8), sz = sample_get64(ent + 16);
            if (off <= n && sz <= n - off) sample_wr32(ent + 32, abm_crc32(b + off, sz));
        }
        sample_wr32(b + 48, abm_crc32(b + tab, (uint64_t)count * ABM_SECTION_ENTRY_BYTES));
    }
    sample_wr32(b + 60, abm_crc32(b, 60));
}

#endif
