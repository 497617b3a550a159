/* fuzz_fw.c - libFuzzer harness for the firmware's LOAD path on the fake
 * chip of test/firmware/fw_fake.h: arbitrary bytes are posted as a model
 * image (the fake chip takes its fingerprint from the image header, so
 * fuzzing reaches past the chip check); a model that loads is queried,
 * run and unloaded. Any crash, sanitizer report, or memory not given back
 * to the firmware heap or DRAM map is a finding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "firmware/fw.h"
#include "test/firmware/fw_fake.h"

static uint32_t post(Fake *f, Fw *fw, uint32_t cmd, const uint32_t *a, int n)
{
    fake_wr(f, ATL_REG_MB_CMD, cmd);
    for (int i = 0; i < ATL_MB_ARGS; i++) fake_wr(f, ATL_REG_MB_ARG + 4 * (uint32_t)i, i < n ? a[i] : 0);
    return (uint32_t)fw_mailbox(fw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static Fake f;
    static Fw fw;
    static uint8_t heap[1 << 20];
    if (size == 0 || size > (1 << 19)) return 0;
    if (fake_init(&f, 2, 1 << 20)) abort();
    if (size >= 24) {
        uint64_t fp = 0;
        for (int b = 0; b < 8; b++) fp |= (uint64_t)data[16 + b] << (8 * b);
        fake_set64(&f, ATL_REG_CHIP_FP_LO, fp);
    }
    FwHal hal = fake_hal(&f);
    if (fw_init(&fw, &hal, heap, sizeof heap)) abort();
    uint32_t a[3] = { (uint32_t)size, 0, 0 };
    if (post(&f, &fw, ATL_MB_ALLOC, a, 3)) abort();
    uint64_t at = f.regs[ATL_REG_MB_RESULT / 4];
    memcpy(f.dram + at, data, size);
    uint32_t l[4] = { (uint32_t)at, 0, (uint32_t)size, 0 };
    if (post(&f, &fw, ATL_MB_LOAD, l, 4) == 0) {
        uint32_t h = f.regs[ATL_REG_MB_RESULT / 4], nets = f.regs[ATL_REG_MB_RESULT / 4 + 1];
        uint32_t variants = f.regs[ATL_REG_MB_RESULT / 4 + 2], tensors = f.regs[ATL_REG_MB_RESULT / 4 + 3];
        for (uint32_t i = 0; i < tensors && i < 64; i++) {
            uint32_t q[4] = { h, ATL_QK_TENSOR, i, 0 };
            post(&f, &fw, ATL_MB_QUERY, q, 4);
        }
        for (uint32_t n = 0; n < nets && n < 4; n++)
            for (uint32_t s = 0; s < variants && s < 4; s++) {
                uint32_t r[3] = { h, n, s };
                post(&f, &fw, ATL_MB_RUN, r, 3);
            }
        uint32_t u[1] = { h };
        if (post(&f, &fw, ATL_MB_UNLOAD, u, 1)) abort();
    }
    uint32_t fr[2] = { (uint32_t)at, 0 };
    if (post(&f, &fw, ATL_MB_FREE, fr, 2)) abort();
    if (fw.heap.used != 0 || fw.dram.n != 0) abort();   /* everything given back */
    fw_shutdown(&fw);
    fake_free(&f);
    return 0;
}
