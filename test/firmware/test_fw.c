/* test_fw.c - firmware unit tests against a fake chip (fw_fake.h): heap and
 * DRAM allocators, message formatting, relocation of hand-encoded records,
 * and every mailbox command with every error path (bad version, wrong chip,
 * bad checksum, heap exhausted, DRAM exhausted, unknown net/variant/handle,
 * fault during run, hang, bad command, relocation errors).
 * `test_fw --write-seed FILE` writes the sample model (the fuzz seed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "firmware/fw.h"
#include "test/firmware/fw_fake.h"
#include "test/test.h"

/* ---- allocators and helpers ---- */

TEST(heap_alloc_free_coalesce)
{
    static uint8_t mem[4096 + 8];
    FwHeap h;
    REQUIRE(fw_heap_init(&h, mem + 3, 4096) == 0);
    void *a = fw_heap_alloc(&h, 100), *b = fw_heap_alloc(&h, 200), *c = fw_heap_alloc(&h, 300);
    REQUIRE(a && b && c);
    CHECK(((uintptr_t)a & 15) == 0 && ((uintptr_t)b & 15) == 0 && ((uintptr_t)c & 15) == 0);
    CHECK((uint8_t *)b >= (uint8_t *)a + 100 && (uint8_t *)c >= (uint8_t *)b + 200);
    memset(a, 1, 100); memset(b, 2, 200); memset(c, 3, 300);
    size_t before = fw_heap_largest_free(&h);
    fw_heap_free(&h, b);
    fw_heap_free(&h, a);
    void *d = fw_heap_alloc(&h, 290);             /* fits only in the merged a+b hole */
    CHECK(d == a);
    CHECK(((uint8_t *)c)[299] == 3);
    CHECK(fw_heap_alloc(&h, 1 << 20) == NULL);
    fw_heap_free(&h, d);
    fw_heap_free(&h, c);
    CHECK(fw_heap_largest_free(&h) > before);
    CHECK_EQ_INT(h.used, 0);
    void *all = fw_heap_alloc(&h, fw_heap_largest_free(&h));
    CHECK(all != NULL);
    CHECK(fw_heap_alloc(&h, 1) == NULL);
    CHECK(fw_heap_init(&h, mem, 8) == -1);
}

TEST(dram_first_fit_and_owners)
{
    static FwDram d;
    memset(&d, 0, sizeof d);
    d.size = 1 << 20;
    uint64_t a, b, c, x;
    REQUIRE(fw_dram_alloc(&d, 1000, 0, 0, &a) == 0);
    CHECK_EQ_INT(a, FW_DRAM_RESERVED);
    REQUIRE(fw_dram_alloc(&d, 5000, 4096, 1, &b) == 0);
    CHECK_EQ_INT(b % 4096, 0);
    CHECK(b >= a + 1000);
    REQUIRE(fw_dram_alloc(&d, 64, 0, 1, &c) == 0);
    CHECK(c >= a + 1000 && c + 64 <= b);          /* goes into the gap before b */
    CHECK(fw_dram_alloc(&d, 1 << 20, 0, 0, &x) == -1);
    CHECK(fw_dram_alloc(&d, 0, 0, 0, &x) == -1);
    REQUIRE(fw_dram_alloc(&d, 64, 3 * 4096, 1, &x) == 0); /* any alignment (a 3-channel DRAM's round) */
    CHECK_EQ_INT(x % (3 * 4096), 0);
    CHECK(fw_dram_free(&d, b, 0) == -1);          /* wrong owner */
    fw_dram_free_owner(&d, 1);
    CHECK_EQ_INT(d.n, 1);
    CHECK(fw_dram_free(&d, a, 0) == 0);
    CHECK_EQ_INT(d.n, 0);
}

TEST(format_messages)
{
    char buf[64];
    size_t n = fw_fmt(buf, sizeof buf, "%s=%u %d %x %llu %lld %c%%", "k", 42u, -7, 0xbeefu, 18446744073709551615ull, -9ll, 'z');
    CHECK(strcmp(buf, "k=42 -7 beef 18446744073709551615 -9 z%") == 0);
    CHECK_EQ_INT(n, strlen(buf));
    char small[8];
    n = fw_fmt(small, sizeof small, "abcdefghij");
    CHECK(strcmp(small, "abcdefg") == 0);
    CHECK_EQ_INT(n, 10);
    CHECK_EQ_INT(fw_strlen("hello"), 5);
}

/* ---- relocation of hand-encoded records ---- */

static const uint64_t rbase[ABM_REGION_COUNT] = { 0x10000, 0x20000, 0x30000 };
static const uint64_t rsize[ABM_REGION_COUNT] = { 4096, 1024, 512 };

TEST(reloc_patches_tagged_dram_operands)
{
    uint8_t r[64];
    char why[200];
    hand_dma(r, ISA_SPACE_LMEM, 0x40, ISA_SPACE_DRAM, ATL_RELOC_ADDR(ABM_REGION_WEIGHTS, 0x100), 4, 64, 64, 128);
    REQUIRE(fw_reloc_insn(r, rbase, rsize, why, sizeof why) == 0);
    CHECK_EQ_INT(hand_get(r, HAND_SRC, 40), 0x10100);
    CHECK_EQ_INT(hand_get(r, HAND_SRC_SPACE, 2), ISA_SPACE_DRAM);
    CHECK_EQ_INT(hand_get(r, HAND_DST, 40), 0x40);             /* LMEM untouched */
    hand_dma(r, ISA_SPACE_DRAM, ATL_RELOC_ADDR(ABM_REGION_IO, 0x20), ISA_SPACE_DRAM,
             ATL_RELOC_ADDR(ABM_REGION_ACTIVATIONS, 0), 2, 16, 32, 16);
    REQUIRE(fw_reloc_insn(r, rbase, rsize, why, sizeof why) == 0);
    CHECK_EQ_INT(hand_get(r, HAND_DST, 40), 0x30020);
    CHECK_EQ_INT(hand_get(r, HAND_SRC, 40), 0x20000);
    /* an SRAM operand is not relocated even with high bits set */
    hand_dma(r, ISA_SPACE_SRAM, 0x100000000ull, ISA_SPACE_LMEM, 0, 1, 16, 16, 16);
    REQUIRE(fw_reloc_insn(r, rbase, rsize, why, sizeof why) == 0);
    CHECK_EQ_INT(hand_get(r, HAND_DST, 40), 0x100000000ull);
    /* non-DMA records pass unchanged */
    uint8_t e[64], e2[64];
    hand_end(e);
    memcpy(e2, e, 64);
    CHECK(fw_reloc_insn(e, rbase, rsize, why, sizeof why) == 0 && memcmp(e, e2, 64) == 0);
}

TEST(reloc_rejects_bad_addresses)
{
    uint8_t r[64];
    char why[200];
    hand_dma(r, ISA_SPACE_LMEM, 0, ISA_SPACE_DRAM, 0x100, 1, 16, 16, 16);
    CHECK(fw_reloc_insn(r, rbase, rsize, why, sizeof why) == -1);
    CHECK_STR_CONTAINS(why, "no region tag");
    hand_dma(r, ISA_SPACE_LMEM, 0, ISA_SPACE_DRAM, 4ull << 32, 1, 16, 16, 16);
    CHECK(fw_reloc_insn(r, rbase, rsize, why, sizeof why) == -1);
    CHECK_STR_CONTAINS(why, "no region tag");
    /* last row ends at 0x1f0 + 3*16 + 16 = 0x230 > 512 */
    hand_dma(r, ISA_SPACE_LMEM, 0, ISA_SPACE_DRAM, ATL_RELOC_ADDR(ABM_REGION_IO, 0x1f0), 4, 16, 16, 16);
    CHECK(fw_reloc_insn(r, rbase, rsize, why, sizeof why) == -1);
    CHECK_STR_CONTAINS(why, "of the io region, which has 512 bytes");
    /* exactly fitting is fine: 4 rows of 16 at 448 end at 512 */
    hand_dma(r, ISA_SPACE_LMEM, 0, ISA_SPACE_DRAM, ATL_RELOC_ADDR(ABM_REGION_IO, 448), 4, 16, 16, 16);
    CHECK(fw_reloc_insn(r, rbase, rsize, why, sizeof why) == 0);
    /* a negative stride walks below the region start */
    hand_dma(r, ISA_SPACE_DRAM, ATL_RELOC_ADDR(ABM_REGION_ACTIVATIONS, 16), ISA_SPACE_LMEM, 0, 3, 16, -16, 16);
    CHECK(fw_reloc_insn(r, rbase, rsize, why, sizeof why) == -1);
    CHECK_STR_CONTAINS(why, "activations region");
    memset(r, 0, 64);
    r[0] = 0xEE;
    CHECK(fw_reloc_insn(r, rbase, rsize, why, sizeof why) == -1);
    CHECK_STR_CONTAINS(why, "unknown opcode 238");
}

/* ---- a model for the mailbox tests ---- */

typedef struct ModelOpts {
    uint64_t chip;
    uint32_t cores;          /* of the batch-1 variant */
    uint64_t weight_src;     /* raw DRAM address of the first DMA source; 0 = tagged weights */
    int level;               /* zlib level */
} ModelOpts;

static uint8_t w1[256], w2[4000];

static void put_stream(AbmWriter *w, uint32_t st, uint32_t core, uint32_t eng, const uint8_t *recs, size_t n, AtlErr *e)
{
    if (abm_set_stream(w, st, core, eng, recs, n * 64, e)) printf("  stream: %s\n", e->msg);
}

/* net "mlp": variant 0 batch 1 (x int8[1,64] -> y int8[1,64], weight w int8[256]),
 * variant 1 batch 2. Variant 0's DMA stream copies 256 weight bytes to LMEM and
 * 64 bytes from LMEM to io offset 64. */
static uint8_t *build_model(const ModelOpts *o, size_t *len)
{
    AtlErr e;
    for (int i = 0; i < 256; i++) w1[i] = (uint8_t)(i * 7 + 1);
    for (int i = 0; i < 4000; i++) w2[i] = (uint8_t)(i % 50 == 0 ? i / 50 : 0);
    AbmWriter *w = abm_writer_new(o->chip);
    if (!w) return NULL;
    abm_writer_set_level(w, o->level);
    uint32_t net, st0, st1;
    uint64_t off1, off2;
    int bad = abm_add_net(w, "mlp", &net, &e) || abm_add_weight(w, w1, sizeof w1, &off1, &e) ||
              abm_add_weight(w, w2, sizeof w2, &off2, &e) || abm_add_variant(w, net, 1, o->cores ? o->cores : 1, &st0, &e) ||
              abm_add_variant(w, net, 2, 1, &st1, &e);
    float sx = 0.5f;
    int32_t zx = 3;
    for (uint32_t s = 0; s < 2 && !bad; s++) {
        uint32_t b = s + 1, variant = s ? st1 : st0;
        AbmTensorDesc x = { .name = "x", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_INPUT, .region = ABM_REGION_IO, .ndim = 2,
                            .dims = { b, 64 }, .offset = 0, .quant_kind = ABM_QUANT_PER_TENSOR, .quant_count = 1,
                            .scale = &sx, .zero_point = &zx };
        AbmTensorDesc y = { .name = "y", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_OUTPUT, .region = ABM_REGION_IO, .ndim = 2,
                            .dims = { b, 64 }, .offset = 64 * b };
        AbmTensorDesc wt = { .name = "w", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_WEIGHT, .region = ABM_REGION_WEIGHTS,
                             .ndim = 1, .dims = { 256 }, .offset = off1 };
        AbmTensorDesc w2t = { .name = "w2", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_WEIGHT, .region = ABM_REGION_WEIGHTS,
                              .ndim = 1, .dims = { 4000 }, .offset = off2 };
        bad = abm_add_tensor(w, variant, &x, NULL, &e) || abm_add_tensor(w, variant, &y, NULL, &e) ||
              abm_add_tensor(w, variant, &wt, NULL, &e) || abm_add_tensor(w, variant, &w2t, NULL, &e) ||
              abm_set_mem_plan(w, variant, 128 * b, 128 * b, &e);
    }
    uint8_t dma[3][64], end[64];
    hand_dma(dma[0], ISA_SPACE_LMEM, 0, ISA_SPACE_DRAM, o->weight_src ? o->weight_src : ATL_RELOC_ADDR(ABM_REGION_WEIGHTS, off1),
             1, 256, 256, 256);
    hand_dma(dma[1], ISA_SPACE_DRAM, ATL_RELOC_ADDR(ABM_REGION_IO, 64), ISA_SPACE_LMEM, 0, 1, 64, 64, 64);
    hand_end(dma[2]);
    hand_end(end);
    if (!bad) {
        put_stream(w, st0, 0, ABM_ENGINE_DMA, dma[0], 3, &e);
        put_stream(w, st0, 0, ABM_ENGINE_MATRIX, end, 1, &e);
        put_stream(w, st1, 0, ABM_ENGINE_VECTOR, end, 1, &e);
    }
    uint8_t *buf = NULL;
    if (bad || abm_serialize(w, &buf, len, &e)) { printf("  build_model: %s\n", e.msg); buf = NULL; }
    abm_writer_free(w);
    return buf;
}

typedef struct Rig {
    Fake fake;
    Fw fw;
    uint8_t *heap;
} Rig;

static int rig_init(Rig *r, uint32_t ncores, uint64_t dram, size_t heap)
{
    if (fake_init(&r->fake, ncores, dram)) return -1;
    r->heap = malloc(heap);
    FwHal hal = fake_hal(&r->fake);
    return r->heap && fw_init(&r->fw, &hal, r->heap, heap) == 0 ? 0 : -1;
}

static void rig_free(Rig *r)
{
    fw_shutdown(&r->fw);
    fake_free(&r->fake);
    free(r->heap);
}

/* Posts a command like the host would and returns MB_ERROR. */
static int post(Rig *r, uint32_t cmd, const uint32_t *args, int nargs)
{
    fake_wr(&r->fake, ATL_REG_MB_CMD, cmd);
    for (int i = 0; i < ATL_MB_ARGS; i++) fake_wr(&r->fake, ATL_REG_MB_ARG + 4 * (uint32_t)i, i < nargs ? args[i] : 0);
    r->fake.regs[ATL_REG_INT_STATUS / 4] |= ATL_INT_MAILBOX;
    int code = fw_mailbox(&r->fw);
    uint32_t status = fake_rd(&r->fake, ATL_REG_MB_STATUS), err = fake_rd(&r->fake, ATL_REG_MB_ERROR);
    if ((int)err != code || status != (code ? ATL_MBS_ERROR : ATL_MBS_DONE)) {
        printf("  mailbox registers disagree: code %d, MB_ERROR %u, MB_STATUS %u\n", code, err, status);
        return -1;
    }
    return code;
}

static uint32_t res(Rig *r, int i) { return fake_rd(&r->fake, ATL_REG_MB_RESULT + 4 * (uint32_t)i); }
static uint64_t res64(Rig *r, int i) { return res(r, i) | (uint64_t)res(r, i + 1) << 32; }
static const char *msg(Rig *r) { return (const char *)&r->fake.regs[ATL_REG_MB_MSG / 4]; }

/* ALLOC + copy + LOAD; returns the LOAD error code and the handle in *handle. */
static int load_image(Rig *r, const uint8_t *img, size_t len, uint32_t *handle, uint64_t *where)
{
    uint32_t a[3] = { (uint32_t)len, 0, 0 };
    int rc = post(r, ATL_MB_ALLOC, a, 3);
    if (rc) return rc;
    uint64_t addr = res64(r, 0);
    memcpy(r->fake.dram + addr, img, len);
    if (where) *where = addr;
    uint32_t l[4] = { (uint32_t)addr, (uint32_t)(addr >> 32), (uint32_t)len, 0 };
    rc = post(r, ATL_MB_LOAD, l, 4);
    if (!rc && handle) *handle = res(r, 0);
    return rc;
}

TEST(load_query_run_unload)
{
    Rig r;
    REQUIRE(rig_init(&r, 1, 1 << 20, 1 << 20) == 0);
    size_t len;
    uint8_t *img = build_model(&(ModelOpts){ .chip = FAKE_CHIP, .level = 6 }, &len);
    REQUIRE(img);
    uint32_t h = 99;
    uint64_t charged0 = r.fake.charged;
    CHECK_EQ_INT(load_image(&r, img, len, &h, NULL), 0);
    CHECK_EQ_INT(h, 0);
    CHECK_EQ_INT(res(&r, 1), 1);  /* nets */
    CHECK_EQ_INT(res(&r, 2), 2);  /* variants */
    CHECK_EQ_INT(res(&r, 3), 8);  /* tensors */
    uint64_t wbase = res64(&r, 4), iobase = res64(&r, 8);
    CHECK(r.fake.charged - charged0 > FW_COST_COMMAND * 2);
    /* weights in place, both the raw and the (likely compressed) blob */
    CHECK(memcmp(r.fake.dram + wbase, w1, sizeof w1) == 0);
    /* QUERY */
    uint32_t q[4] = { h, ATL_QK_MODEL, 0, 0 };
    CHECK_EQ_INT(post(&r, ATL_MB_QUERY, q, 4), 0);
    CHECK_EQ_INT(res(&r, 0), 1);
    CHECK_EQ_INT(res64(&r, 3), FAKE_CHIP);
    q[1] = ATL_QK_NET;
    CHECK_EQ_INT(post(&r, ATL_MB_QUERY, q, 4), 0);
    CHECK(strcmp(msg(&r), "mlp") == 0);
    CHECK_EQ_INT(res(&r, 1), 2);
    q[1] = ATL_QK_VARIANT; q[2] = 1;
    CHECK_EQ_INT(post(&r, ATL_MB_QUERY, q, 4), 0);
    CHECK_EQ_INT(res(&r, 1), 2);  /* batch */
    CHECK_EQ_INT(res(&r, 3), 4);  /* tensors */
    uint32_t w2index = 3;
    q[1] = ATL_QK_TENSOR; q[2] = w2index;
    CHECK_EQ_INT(post(&r, ATL_MB_QUERY, q, 4), 0);
    CHECK(strcmp(msg(&r), "w2") == 0);
    uint64_t w2addr = res64(&r, 11);
    CHECK(w2addr >= wbase && memcmp(r.fake.dram + w2addr, w2, sizeof w2) == 0);
    q[2] = 0;
    CHECK_EQ_INT(post(&r, ATL_MB_QUERY, q, 4), 0);
    CHECK(strcmp(msg(&r), "x") == 0);
    CHECK_EQ_INT(res(&r, 0), ABM_DTYPE_INT8);
    CHECK_EQ_INT(res(&r, 4), 2);
    CHECK_EQ_INT(res(&r, 6), 64);
    CHECK_EQ_INT(res64(&r, 11), iobase);
    CHECK_EQ_INT(res(&r, 17), 1);
    CHECK_EQ_INT(res(&r, 18), 0x3f000000); /* 0.5f */
    CHECK_EQ_INT(res(&r, 19), 3);
    q[1] = ATL_QK_QUANT; q[3] = 0;
    CHECK_EQ_INT(post(&r, ATL_MB_QUERY, q, 4), 0);
    CHECK_EQ_INT(res(&r, 0), 0x3f000000);
    q[3] = 1;
    CHECK_EQ_INT(post(&r, ATL_MB_QUERY, q, 4), ATL_ERR_FW_BAD_ARG);
    q[1] = 77;
    CHECK_EQ_INT(post(&r, ATL_MB_QUERY, q, 4), ATL_ERR_FW_BAD_ARG);
    CHECK_STR_CONTAINS(msg(&r), "unknown kind 77");
    /* RUN variant 0: doorbells on dma and mat, relocated stream in DRAM */
    uint32_t run[3] = { h, 0, 0 };
    CHECK_EQ_INT(post(&r, ATL_MB_RUN, run, 3), 0);
    CHECK_EQ_INT(r.fake.doorbells, 2);
    CHECK_EQ_INT(r.fake.launches, 1);
    CHECK_EQ_INT(res64(&r, 0), 0x100000000ull + 77);
    CHECK(res64(&r, 2) > FW_COST_COMMAND);
    CHECK_EQ_INT(res64(&r, 4), 4096);
    CHECK_EQ_INT(res64(&r, 6), 312);
    CHECK_EQ_INT(res64(&r, 8), 30);  /* dma busy: 3 insns x 10 */
    CHECK_EQ_INT(res64(&r, 10), 10); /* mat busy: 1 insn */
    CHECK_EQ_INT(res64(&r, 12), 0);  /* vec not rung */
    CHECK_EQ_INT(res(&r, 20), 2);
    CHECK(res64(&r, 21) != 0);
    uint64_t q0 = r.fake.rung_base[0];
    CHECK_EQ_INT(r.fake.rung_len[0], 3);
    CHECK(q0 % 64 == 0 && q0 + 192 <= r.fake.dram_size);
    const uint8_t *rec = r.fake.dram + q0;
    CHECK_EQ_INT(rec[0], ISA_OP_DMA_COPY);
    CHECK_EQ_INT(hand_get(rec, HAND_SRC, 40), wbase);
    CHECK_EQ_INT(hand_get(rec + 64, HAND_DST, 40), iobase + 64);
    CHECK_EQ_INT(rec[128], ISA_OP_END);
    CHECK_EQ_INT(fake_rd(&r.fake, ATL_REG_INT_STATUS) & (ATL_INT_DONE | ATL_INT_FAULT), 0);
    /* RUN variant 1 rings only vec of core 0 */
    run[2] = 1;
    CHECK_EQ_INT(post(&r, ATL_MB_RUN, run, 3), 0);
    CHECK_EQ_INT(r.fake.doorbells, 3);
    /* UNLOAD frees the slot; the handle is then unknown */
    uint32_t u[1] = { h };
    CHECK_EQ_INT(post(&r, ATL_MB_UNLOAD, u, 1), 0);
    CHECK_EQ_INT(post(&r, ATL_MB_RUN, run, 3), ATL_ERR_FW_BAD_HANDLE);
    CHECK_STR_CONTAINS(msg(&r), "no model is loaded under handle 0");
    CHECK_EQ_INT(post(&r, ATL_MB_UNLOAD, u, 1), ATL_ERR_FW_BAD_HANDLE);
    CHECK_EQ_INT(r.fw.dram.n, 1);   /* only the host's image block is left */
    CHECK_EQ_INT(r.fw.heap.used, 0);
    free(img);
    rig_free(&r);
}

static void expect_load_error(Rig *r, const uint8_t *img, size_t len, int code, const char *text)
{
    int rc = load_image(r, img, len, NULL, NULL);
    CHECKF(rc == code, "load: expected error %d, got %d (%s)", code, rc, msg(r));
    CHECK_STR_CONTAINS(msg(r), text);
    CHECKF(r->fw.heap.used == 0, "heap not released: %zu bytes", r->fw.heap.used);
    for (int i = 0; i < r->fw.dram.n; i++) CHECKF(r->fw.dram.blk[i].owner == 0, "DRAM block of a failed model left");
}

TEST(load_errors)
{
    Rig r;
    REQUIRE(rig_init(&r, 1, 1 << 20, 1 << 20) == 0);
    size_t len;
    uint8_t *img = build_model(&(ModelOpts){ .chip = FAKE_CHIP, .level = 6 }, &len);
    REQUIRE(img);
    uint8_t *bad = malloc(len);
    REQUIRE(bad);
    /* version */
    memcpy(bad, img, len);
    bad[8] = 2;
    expect_load_error(&r, bad, len, ATL_ERR_FW_VERSION, "container version 2.0");
    /* checksum: one byte in the last section (meta) */
    memcpy(bad, img, len);
    bad[len - 3] ^= 0x10;
    expect_load_error(&r, bad, len, ATL_ERR_FW_CHECKSUM, "CRC-32 mismatch in section");
    /* checksum of the header: a flipped fingerprint bit is damage, not another chip */
    memcpy(bad, img, len);
    bad[20] ^= 1;
    expect_load_error(&r, bad, len, ATL_ERR_FW_CHECKSUM, "header CRC-32");
    /* structure: truncated */
    expect_load_error(&r, img, len - 10, ATL_ERR_FW_BAD_IMAGE, "truncated");
    /* not a model at all */
    memset(bad, 'x', len);
    expect_load_error(&r, bad, len, ATL_ERR_FW_BAD_IMAGE, "model image");
    /* wrong chip */
    size_t olen;
    uint8_t *other = build_model(&(ModelOpts){ .chip = 0x1234, .level = 6 }, &olen);
    REQUIRE(other);
    expect_load_error(&r, other, olen, ATL_ERR_FW_CHIP, "compiled for chip fingerprint 0x1234");
    free(other);
    /* relocation: an untagged DRAM address in a stream */
    other = build_model(&(ModelOpts){ .chip = FAKE_CHIP, .weight_src = 0x2000 }, &olen);
    REQUIRE(other);
    expect_load_error(&r, other, olen, ATL_ERR_FW_RELOC, "variant 0 core 0 engine dma instruction 0: dma.copy: src=dram:0x2000 has no region tag");
    free(other);
    /* LOAD arguments outside DRAM */
    uint32_t l[4] = { 0xFFFFF000u, 0, 0x2000, 0 };
    CHECK_EQ_INT(post(&r, ATL_MB_LOAD, l, 4), ATL_ERR_FW_BAD_ARG);
    CHECK_STR_CONTAINS(msg(&r), "not inside the 1048576 bytes of device DRAM");
    free(bad);
    free(img);
    rig_free(&r);
}

TEST(out_of_memory)
{
    size_t len;
    uint8_t *img = build_model(&(ModelOpts){ .chip = FAKE_CHIP, .level = 9 }, &len);
    REQUIRE(img);
    /* firmware heap smaller than the 64 KiB zlib workspace */
    Rig r;
    REQUIRE(rig_init(&r, 1, 1 << 20, 16 * 1024) == 0);
    expect_load_error(&r, img, len, ATL_ERR_FW_NO_MEMORY, "firmware heap");
    rig_free(&r);
    /* DRAM large enough for the image but not for image + regions + profile buffer */
    REQUIRE(rig_init(&r, 1, FW_DRAM_RESERVED + len + 64 * 1024, 1 << 20) == 0);
    expect_load_error(&r, img, len, ATL_ERR_FW_NO_DRAM, "device DRAM");
    uint32_t a[3] = { 1u << 30, 0, 0 };
    CHECK_EQ_INT(post(&r, ATL_MB_ALLOC, a, 3), ATL_ERR_FW_NO_DRAM);
    a[0] = 0;
    CHECK_EQ_INT(post(&r, ATL_MB_ALLOC, a, 3), ATL_ERR_FW_BAD_ARG);
    uint32_t f[2] = { 12345, 0 };
    CHECK_EQ_INT(post(&r, ATL_MB_FREE, f, 2), ATL_ERR_FW_BAD_ARG);
    rig_free(&r);
    /* every slot taken */
    REQUIRE(rig_init(&r, 1, 8 << 20, 4 << 20) == 0);
    for (int i = 0; i < FW_MAX_MODELS; i++) CHECK_EQ_INT(load_image(&r, img, len, NULL, NULL), 0);
    CHECK_EQ_INT(load_image(&r, img, len, NULL, NULL), ATL_ERR_FW_TOO_MANY);
    CHECK_STR_CONTAINS(msg(&r), "model slots are in use");
    rig_free(&r);
    free(img);
}

TEST(run_errors)
{
    Rig r;
    REQUIRE(rig_init(&r, 1, 1 << 20, 1 << 20) == 0);
    size_t len;
    uint8_t *img = build_model(&(ModelOpts){ .chip = FAKE_CHIP, .level = 6 }, &len);
    REQUIRE(img);
    uint32_t h;
    REQUIRE(load_image(&r, img, len, &h, NULL) == 0);
    uint32_t run[3] = { h, 1, 0 };
    CHECK_EQ_INT(post(&r, ATL_MB_RUN, run, 3), ATL_ERR_FW_UNKNOWN_NET);
    CHECK_STR_CONTAINS(msg(&r), "net 1 does not exist");
    run[1] = 0; run[2] = 2;
    CHECK_EQ_INT(post(&r, ATL_MB_RUN, run, 3), ATL_ERR_FW_UNKNOWN_VARIANT);
    CHECK_STR_CONTAINS(msg(&r), "net 'mlp' has 2 variant(s), there is no variant 2");
    run[2] = 0;
    r.fake.mode = FAKE_FAULT;
    CHECK_EQ_INT(post(&r, ATL_MB_RUN, run, 3), ATL_ERR_FW_FAULT);
    CHECK_STR_CONTAINS(msg(&r), "on core 0 engine dma instruction 1: dma.copy reads past the end of DRAM");
    CHECK_EQ_INT(res(&r, 24), ATL_FAULT_OOB);
    CHECK_EQ_INT(res(&r, 27), 1);
    r.fake.mode = FAKE_SILENT;
    CHECK_EQ_INT(post(&r, ATL_MB_RUN, run, 3), ATL_ERR_FW_HANG);
    CHECK_STR_CONTAINS(msg(&r), "no interrupt can arrive");
    r.fake.mode = FAKE_COMPLETE;
    memset(r.fake.rung, 0, sizeof r.fake.rung);
    CHECK_EQ_INT(post(&r, ATL_MB_RUN, run, 3), 0);   /* recovers after a fault */
    CHECK_EQ_INT(post(&r, 42, run, 3), ATL_ERR_FW_BAD_COMMAND);
    CHECK_STR_CONTAINS(msg(&r), "unknown mailbox command 42");
    CHECK_EQ_INT(post(&r, ATL_MB_NOP, run, 0), 0);
    free(img);
    rig_free(&r);
    /* a variant needing more cores than the chip has */
    REQUIRE(rig_init(&r, 1, 1 << 20, 1 << 20) == 0);
    img = build_model(&(ModelOpts){ .chip = FAKE_CHIP, .cores = 2 }, &len);
    REQUIRE(img);
    REQUIRE(load_image(&r, img, len, &h, NULL) == 0);
    run[0] = h; run[2] = 0;
    CHECK_EQ_INT(post(&r, ATL_MB_RUN, run, 3), ATL_ERR_FW_CORES);
    CHECK_STR_CONTAINS(msg(&r), "needs 2 cores, the chip has 1");
    free(img);
    rig_free(&r);
}

TEST(init_rejects_foreign_window)
{
    Fake f;
    REQUIRE(fake_init(&f, 1, 1 << 16) == 0);
    f.regs[ATL_REG_ID / 4] = 0;
    static uint8_t heap[1 << 16];
    static Fw fw;
    FwHal hal = fake_hal(&f);
    CHECK(fw_init(&fw, &hal, heap, sizeof heap) == -1);
    f.regs[ATL_REG_ID / 4] = ATL_REGS_ID_VALUE;
    CHECK(fw_init(&fw, &hal, heap, 8) == -1);
    CHECK(fw_init(&fw, &hal, heap, sizeof heap) == 0);
    CHECK_EQ_INT(fake_rd(&f, ATL_REG_INT_MASK), ATL_INT_DONE | ATL_INT_FAULT | ATL_INT_MAILBOX);
    fake_free(&f);
}

/* Every byte of an image damaged in turn, plus a truncation: LOAD must fail
 * with a code and a message (header, table and section CRCs and the
 * zero-padding rule cover every byte of the file), never crash, and give
 * back all firmware heap and DRAM; a model that did load would be run and
 * unloaded. */
TEST(load_survives_damage)
{
    Rig r;
    REQUIRE(rig_init(&r, 1, 1 << 20, 1 << 20) == 0);
    size_t len;
    uint8_t *img = build_model(&(ModelOpts){ .chip = FAKE_CHIP, .level = 6 }, &len);
    REQUIRE(img);
    uint8_t *bad = malloc(len);
    REQUIRE(bad);
    int loaded = 0, failed = 0, leaks = 0, silent = 0;
    for (size_t i = 0; i <= len; i++) {
        size_t n = len;
        memcpy(bad, img, len);
        if (i < len) bad[i] ^= 0x5A;
        else n = len / 2;
        uint32_t h;
        int rc = load_image(&r, bad, n, &h, NULL);
        if (rc == 0) {
            loaded++;
            uint32_t run[3] = { h, 0, 0 }, u[1] = { h };
            post(&r, ATL_MB_RUN, run, 3);
            post(&r, ATL_MB_UNLOAD, u, 1);
        } else {
            failed++;
            if (!msg(&r)[0]) silent++;
        }
        uint32_t f[2] = { (uint32_t)r.fw.dram.blk[0].addr, 0 };
        post(&r, ATL_MB_FREE, f, 2);
        if (r.fw.heap.used != 0 || r.fw.dram.n != 0) leaks++;
    }
    printf("  %zu damaged images: %d refused\n", len + 1, failed);
    CHECK_EQ_INT(loaded, 0);          /* the CRCs cover every byte */
    CHECK_EQ_INT(failed, (long long)len + 1);
    CHECK_EQ_INT(silent, 0);
    CHECK_EQ_INT(leaks, 0);
    free(bad);
    free(img);
    rig_free(&r);
}

/* A timing-only device (DEVICE_MODE 1): LOAD neither checks nor moves the
 * weights and leaves the regions as they are, but charges every cycle a
 * full device charges, so the firmware's time is the same in both modes. */
TEST(timing_only_skips_weights_same_cycles)
{
    size_t len;
    uint8_t *img = build_model(&(ModelOpts){ .chip = FAKE_CHIP, .level = 6 }, &len);
    REQUIRE(img);
    uint64_t charged[2], wbase[2];
    int same_weights[2];
    for (int mode = 0; mode < 2; mode++) {
        Rig r;
        REQUIRE(fake_init(&r.fake, 1, 1 << 20) == 0);
        r.fake.regs[ATL_REG_DEVICE_MODE / 4] = (uint32_t)mode;
        r.heap = malloc(1 << 20);
        FwHal hal = fake_hal(&r.fake);
        REQUIRE(r.heap && fw_init(&r.fw, &hal, r.heap, 1 << 20) == 0);
        CHECK_EQ_INT(r.fw.timing_only, mode);
        uint64_t c0 = r.fake.charged;
        uint32_t h;
        CHECK_EQ_INT(load_image(&r, img, len, &h, NULL), 0);
        charged[mode] = r.fake.charged - c0;
        wbase[mode] = res64(&r, 4);
        same_weights[mode] = memcmp(r.fake.dram + wbase[mode], w1, sizeof w1) == 0;
        rig_free(&r);
    }
    CHECK(same_weights[0]);
    CHECK(!same_weights[1]);  /* the weights were not moved */
    CHECK_EQ_INT(charged[1], charged[0]);
    CHECK_EQ_INT(wbase[1], wbase[0]);
    free(img);
}

/* LOAD places a model's regions at multiples of DRAM_ALIGN (the round
 * of DRAM channels the compiler's cost model assumes), here 3 x 4 KiB as
 * for three channels interleaved every 4 KiB. */
TEST(regions_at_dram_align)
{
    size_t len;
    uint8_t *img = build_model(&(ModelOpts){ .chip = FAKE_CHIP, .level = 6 }, &len);
    REQUIRE(img);
    Rig r;
    REQUIRE(fake_init(&r.fake, 1, 1 << 20) == 0);
    r.fake.regs[ATL_REG_DRAM_ALIGN / 4] = 3 * 4096;
    r.heap = malloc(1 << 20);
    FwHal hal = fake_hal(&r.fake);
    REQUIRE(r.heap && fw_init(&r.fw, &hal, r.heap, 1 << 20) == 0);
    uint32_t h;
    CHECK_EQ_INT(load_image(&r, img, len, &h, NULL), 0);
    for (int k = 0; k < ABM_REGION_COUNT; k++) {
        uint64_t base = res64(&r, 4 + 2 * k);
        CHECKF(base && base % (3 * 4096) == 0, "region %d at 0x%llx", k, (unsigned long long)base);
    }
    rig_free(&r);
    free(img);
}

/* docs/firmware.md lists every cost with its current value. */
TEST(cost_table_documented)
{
    FILE *f = fopen("docs/firmware.md", "rb");
    REQUIRE(f != NULL);
    static char doc[65536];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = 0;
    char row[128];
#define X(name, cycles, text) \
    snprintf(row, sizeof row, "| %s | %d | %s |", #name, cycles, text); \
    CHECKF(strstr(doc, row) != NULL, "docs/firmware.md lacks the row: %s", row);
    FW_COSTS(X)
#undef X
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write-seed")) {   /* fuzz/seeds/fuzz_fw/mlp.abm */
        size_t len;
        uint8_t *img = build_model(&(ModelOpts){ .chip = FAKE_CHIP, .level = 6 }, &len);
        FILE *f = img ? fopen(argv[2], "wb") : NULL;
        int ok = f && fwrite(img, 1, len, f) == len;
        if (f && fclose(f)) ok = 0;
        free(img);
        return ok ? 0 : 1;
    }
    RUN(heap_alloc_free_coalesce);
    RUN(dram_first_fit_and_owners);
    RUN(format_messages);
    RUN(reloc_patches_tagged_dram_operands);
    RUN(reloc_rejects_bad_addresses);
    RUN(load_query_run_unload);
    RUN(load_errors);
    RUN(out_of_memory);
    RUN(run_errors);
    RUN(init_rejects_foreign_window);
    RUN(load_survives_damage);
    RUN(timing_only_skips_weights_same_cycles);
    RUN(regions_at_dram_align);
    RUN(cost_table_documented);
    return test_summary("test_fw");
}
