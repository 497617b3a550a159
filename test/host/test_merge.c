/* test_merge.c - combining models keeps their command streams pointing at
 * their own weights: when a blob lands at another offset of the merged
 * weights region, abm_writer_merge moves every weight-tagged DMA operand
 * with it (docs/firmware.md, relocation convention). Checked end to end:
 * both nets of a merged model, merged in either order, produce their own
 * results on the device; a DMA spanning two blobs cannot follow them and
 * is refused with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "atoll.h"
#include "isa/config.h"
#include "test/host/model_build.h"
#include "test/test.h"

#define CHIP_PATH "configs/tiny.ini"

static uint64_t chip_fp;
static uint8_t pattern[128];

/* net "copy": y[64] = weights bytes [64, 128) of one 128-byte blob, or with
 * split=1 two 64-byte blobs read by one 128-byte DMA. */
static uint8_t *copy_model(int split, size_t *len)
{
    AtlErr e;
    for (int i = 0; i < 128; i++) pattern[i] = (uint8_t)(200 - i);
    AbmWriter *w = abm_writer_new(chip_fp);
    uint32_t net, st;
    uint64_t off, off2;
    int bad = !w || abm_add_net(w, "copy", &net, &e) || abm_add_variant(w, net, 1, 1, &st, &e);
    if (!bad && !split) bad = abm_add_weight(w, pattern, 128, &off, &e);
    if (!bad && split) bad = abm_add_weight(w, pattern, 64, &off, &e) || abm_add_weight(w, pattern + 64, 64, &off2, &e);
    AbmTensorDesc y = { .name = "y", .dtype = ABM_DTYPE_UINT8, .role = ABM_ROLE_OUTPUT, .region = ABM_REGION_IO,
                        .ndim = 1, .dims = { 64 }, .offset = 0 };
    const char *text = split ?
        ".engine dma\n dma.copy dtype=i8 dst=lmem:0 src=dram:0x100000000 shape=128 dstride=1 sstride=1\n"
        " dma.copy dtype=i8 dst=dram:0x300000000 src=lmem:64 shape=64 dstride=1 sstride=1\n end\n" :
        ".engine dma\n dma.copy dtype=i8 dst=lmem:0 src=dram:0x100000040 shape=64 dstride=1 sstride=1\n"
        " dma.copy dtype=i8 dst=dram:0x300000000 src=lmem:0 shape=64 dstride=1 sstride=1\n end\n";
    if (!bad) bad = abm_add_tensor(w, st, &y, NULL, &e) || abm_set_mem_plan(w, st, 0, 64, &e) || mb_streams(w, st, "copy.s", text, &e);
    uint8_t *buf = NULL;
    if (bad || abm_serialize(w, &buf, len, &e)) { printf("  copy_model: %s\n", e.msg); buf = NULL; }
    abm_writer_free(w);
    return buf;
}

/* Merges the images in order into one. */
static uint8_t *merge(uint8_t *const *imgs, const size_t *lens, int n, size_t *len, AtlErr *e)
{
    AbmWriter *w = abm_writer_new(chip_fp);
    uint8_t *out = NULL;
    int ok = w != NULL;
    for (int i = 0; i < n && ok; i++) {
        AbmModel m;
        ok = abm_load_buffer(&m, imgs[i], lens[i], chip_fp, 0, e) == 0;
        if (ok) ok = abm_writer_merge(w, &m.view, e) == 0;
        abm_model_free(&m);
    }
    if (ok && abm_serialize(w, &out, len, e)) out = NULL;
    abm_writer_free(w);
    return out;
}

static void run_both(const uint8_t *img, size_t len)
{
    AtlDevice *dev;
    AtlModel *m;
    REQUIRE(atl_open(&dev, CHIP_PATH, NULL) == ATL_OK);
    AtlStatus s = atl_load_memory(dev, img, len, &m);
    CHECKF(s == ATL_OK, "load: %s", atl_last_error(dev));
    if (s == ATL_OK) {
        uint8_t y[64];
        CHECKF(atl_run(m, "copy", NULL, 0, NULL) == ATL_OK, "%s", atl_last_error(dev));
        CHECK(atl_output(m, "y", 0, y, 64) == ATL_OK && memcmp(y, pattern + 64, 64) == 0);
        int8_t x[64], want[64], got[64];
        for (int i = 0; i < 64; i++) x[i] = (int8_t)(i - 20);
        mb_reference(x, want);
        CHECKF(atl_run(m, "relu_bias", &(AtlBuffer){ .data = x, .size = 64 }, 1, NULL) == ATL_OK, "%s", atl_last_error(dev));
        CHECK(atl_output(m, "y", 0, got, 64) == ATL_OK && memcmp(got, want, 64) == 0);
    }
    atl_close(dev);
}

TEST(streams_follow_their_weights)
{
    AtlChip chip;
    AtlErr e;
    REQUIRE(cfg_load(CHIP_PATH, &chip, &e) == 0);
    chip_fp = cfg_fingerprint(&chip);
    size_t la, lb, lm;
    uint8_t *a = copy_model(0, &la), *b = mb_sample_model(chip_fp, 0, &lb, &e);
    REQUIRE(a && b);
    uint8_t *ab[2] = { a, b }, *ba[2] = { b, a };
    size_t lab[2] = { la, lb }, lba[2] = { lb, la };
    uint8_t *m = merge(ab, lab, 2, &lm, &e);       /* b's bias moves from 0 to 128 */
    CHECKF(m != NULL, "merge: %s", e.msg);
    if (m) run_both(m, lm);
    free(m);
    m = merge(ba, lba, 2, &lm, &e);                /* a's blob moves from 0 to 64 */
    CHECKF(m != NULL, "merge: %s", e.msg);
    if (m) run_both(m, lm);
    free(m);
    free(a);
    free(b);
}

TEST(dma_across_blobs_is_refused)
{
    AtlErr e;
    size_t ls, lb, lm;
    uint8_t *split = copy_model(1, &ls), *b = mb_sample_model(chip_fp, 0, &lb, &e);
    REQUIRE(split && b);
    uint8_t *imgs[2] = { b, split };
    size_t lens[2] = { lb, ls };
    uint8_t *m = merge(imgs, lens, 2, &lm, &e);
    CHECK(m == NULL);
    CHECK_STR_CONTAINS(e.msg, "merge: variant 0 core 0 engine dma instruction 0: weights bytes [0, 128) are not inside one weight blob");
    free(m);
    /* alone (nothing moves) it merges and runs */
    m = merge(imgs + 1, lens + 1, 1, &lm, &e);
    CHECKF(m != NULL, "merge: %s", e.msg);
    free(m);
    free(split);
    free(b);
}

int main(void)
{
    RUN(streams_follow_their_weights);
    RUN(dma_across_blobs_is_refused);
    return test_summary("test_merge");
}
