/* test_device.c - the simulated device (sim/device.c) on its own: register
 * access rules from the register tables (RO ignored from the host, W1C,
 * write-only doorbells, unmapped offsets), identity registers, the mailbox
 * doorbell running the firmware, a launch on a two-core chip where each core
 * computes half of relu(x + b) and both done bits arrive, per-core counters,
 * and a queue outside DRAM reported as a QUEUE fault.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "isa/config.h"
#include "isa/regs.h"
#include "sim/device.h"
#include "test/host/model_build.h"
#include "test/test.h"

static int two_core_chip(AtlChip *c)
{
    AtlErr e;
    if (cfg_load("configs/tiny.ini", c, &e)) { printf("  %s\n", e.msg); return -1; }
    c->cores_per_cluster = 2;
    return 0;
}

static uint32_t post(AtlSimDevice *d, uint32_t cmd, const uint32_t *a, int n)
{
    device_reg_write(d, ATL_REG_MB_CMD, cmd);
    for (int i = 0; i < ATL_MB_ARGS; i++) device_reg_write(d, ATL_REG_MB_ARG + 4 * (uint32_t)i, i < n ? a[i] : 0);
    device_reg_write(d, ATL_REG_MB_DOORBELL, 1);
    return device_reg_read(d, ATL_REG_MB_ERROR);
}
static uint32_t res(AtlSimDevice *d, int i) { return device_reg_read(d, ATL_REG_MB_RESULT + 4 * (uint32_t)i); }
static const char *msg(AtlSimDevice *d, char buf[ATL_MSG_BYTES])
{
    for (uint32_t w = 0; w < ATL_MSG_BYTES / 4; w++) {
        uint32_t x = device_reg_read(d, ATL_REG_MB_MSG + 4 * w);
        memcpy(buf + 4 * w, &x, 4);
    }
    buf[ATL_MSG_BYTES - 1] = 0;
    return buf;
}

TEST(register_rules)
{
    AtlChip c;
    REQUIRE(two_core_chip(&c) == 0);
    AtlErr e;
    AtlSimDevice *d = device_create(&c, NULL, &e);
    REQUIRE(d);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_ID), ATL_REGS_ID_VALUE);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_NCORES), 2);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_DRAM_SIZE), c.dram_bytes);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_CHIP_FP_LO), (uint32_t)cfg_fingerprint(&c));
    /* the firmware enabled its interrupts at start-up */
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_INT_MASK), ATL_INT_DONE | ATL_INT_FAULT | ATL_INT_MAILBOX);
    device_reg_write(d, ATL_REG_NCORES, 77);                       /* RO: ignored */
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_NCORES), 2);
    device_reg_write(d, ATL_REG_MB_RESULT, 5);                     /* firmware-owned: ignored from the host */
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_MB_RESULT), 0);
    device_reg_write(d, ATL_REG_ENG(1, 2, ATL_ENG_Q_LEN), 9);      /* RW */
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_ENG(1, 2, ATL_ENG_Q_LEN)), 9);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_ENG(1, 2, ATL_ENG_Q_DOORBELL)), 0);   /* WO reads 0 */
    CHECK_EQ_INT(device_reg_read(d, 0x0FC), 0xFFFFFFFFu);          /* unmapped */
    CHECK_EQ_INT(device_reg_read(d, 0x002), 0xFFFFFFFFu);          /* unaligned */
    CHECK_EQ_INT(device_reg_read(d, ATL_REGS_WINDOW(2)), 0xFFFFFFFFu);  /* past the last core */
    CHECK(device_dram(d, 0, (uint64_t)c.dram_bytes) != NULL);
    CHECK(device_dram(d, 1, (uint64_t)c.dram_bytes) == NULL);
    /* mailbox: NOP completes, an unknown command is an error with a message */
    CHECK_EQ_INT(post(d, ATL_MB_NOP, NULL, 0), 0);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_MB_STATUS), ATL_MBS_DONE);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_INT_STATUS) & ATL_INT_MAILBOX, 0);   /* the firmware took it */
    char buf[ATL_MSG_BYTES];
    CHECK_EQ_INT(post(d, 99, NULL, 0), ATL_ERR_FW_BAD_COMMAND);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_MB_STATUS), ATL_MBS_ERROR);
    CHECK_STR_CONTAINS(msg(d, buf), "unknown mailbox command 99");
    CHECK(device_stats_json(d) == NULL);                           /* nothing launched yet */
    /* firmware cycles were charged and show in TIME */
    CHECK(device_reg_read(d, ATL_REG_FW_CYCLES_LO) >= 2 * 500);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_TIME_LO), device_reg_read(d, ATL_REG_FW_CYCLES_LO));
    device_free(d);
    AtlChip badc = c;
    badc.lmem_banks = 3;                                           /* does not divide LMEM */
    CHECK(device_create(&badc, NULL, &e) == NULL);
}

/* Two cores, each computing relu(x + b) on its 32 elements (an lmem: source
 * names its core explicitly with src_core). */
static char *two_core_asm(void)
{
    static char text[4096];
    size_t n = 0;
    for (int c = 0; c < 2; c++)
        n += (size_t)snprintf(text + n, sizeof text - n,
            ".core %d\n.engine dma\n"
            "    dma.copy dtype=i8 dst=lmem:0x200 src=dram:0x1000000%02x shape=32 dstride=1 sstride=1 layer=1\n"
            "    dma.copy dtype=i8 dst=lmem:0 src=dram:0x3000000%02x shape=32 dstride=1 sstride=1 signal=0 layer=1\n"
            "    dma.copy dtype=i8 dst=dram:0x3000000%02x src=lmem:0x100 src_core=%d shape=32 dstride=1 sstride=1 wait=1 layer=2\n"
            "    end\n.engine vec\n"
            "    v.add dtype=i8 dst=0x100 src=0 src2=0x200 shape=32 dstride=1 sstride=1 s2stride=1 wait=0 layer=1\n"
            "    v.relu dtype=i8 dst=0x100 src=0x100 shape=32 dstride=1 sstride=1 signal=1 layer=2\n"
            "    end\n", c, 32 * c, 32 * c, 64 + 32 * c, c);
    return text;
}

TEST(two_core_launch)
{
    AtlChip c;
    REQUIRE(two_core_chip(&c) == 0);
    AtlErr e;
    AtlSimDevice *d = device_create(&c, &(AtlDeviceOptions){ .trace = 1 }, &e);
    REQUIRE(d);
    /* model: same tensors as the sample, one variant on two cores */
    mb_bias_init();
    AbmWriter *w = abm_writer_new(cfg_fingerprint(&c));
    REQUIRE(w);
    uint32_t net, st;
    uint64_t woff;
    AbmTensorDesc x = { .name = "x", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_INPUT, .region = ABM_REGION_IO, .ndim = 1, .dims = { 64 } };
    AbmTensorDesc y = { .name = "y", .dtype = ABM_DTYPE_INT8, .role = ABM_ROLE_OUTPUT, .region = ABM_REGION_IO, .ndim = 1, .dims = { 64 }, .offset = 64 };
    REQUIRE(abm_add_net(w, "halves", &net, &e) == 0 && abm_add_weight(w, sample_bias, 64, &woff, &e) == 0 && woff == 0);
    REQUIRE(abm_add_variant(w, net, 1, 2, &st, &e) == 0 && abm_add_tensor(w, st, &x, NULL, &e) == 0 &&
            abm_add_tensor(w, st, &y, NULL, &e) == 0 && abm_set_mem_plan(w, st, 0, 128, &e) == 0);
    CHECKF(mb_streams(w, st, "halves.s", two_core_asm(), &e) == 0, "%s", e.msg);
    uint8_t *img;
    size_t len;
    REQUIRE(abm_serialize(w, &img, &len, &e) == 0);
    abm_writer_free(w);
    uint32_t a[4] = { (uint32_t)len, 0, 0, 0 };
    REQUIRE(post(d, ATL_MB_ALLOC, a, 3) == 0);
    uint64_t at = res(d, 0);
    memcpy(device_dram(d, at, len), img, len);
    uint32_t l[4] = { (uint32_t)at, 0, (uint32_t)len, 0 };
    char buf[ATL_MSG_BYTES];
    REQUIRE(post(d, ATL_MB_LOAD, l, 4) == 0);
    uint32_t h = res(d, 0);
    uint64_t io = res(d, 8) | (uint64_t)res(d, 9) << 32;
    int8_t xv[64], want[64];
    for (int i = 0; i < 64; i++) xv[i] = (int8_t)(40 - i);
    mb_reference(xv, want);
    memcpy(device_dram(d, io, 64), xv, 64);
    uint32_t r[3] = { h, 0, 0 };
    CHECKF(post(d, ATL_MB_RUN, r, 3) == 0, "%s", msg(d, buf));
    CHECK(memcmp(device_dram(d, io + 64, 64), want, 64) == 0);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_LAUNCHES), 1);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_CORE(0, ATL_CORE_STATUS)), ATL_QS_DONE);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_CORE(1, ATL_CORE_STATUS)), ATL_QS_DONE);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_ENG(1, 0, ATL_ENG_Q_STATUS)), ATL_QS_DONE);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_ENG(1, 1, ATL_ENG_Q_STATUS)), ATL_QS_IDLE);   /* mat never rung */
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_ENG(1, 0, ATL_ENG_INSNS)), 4);
    CHECK(device_reg_read(d, ATL_REG_ENG(0, 2, ATL_ENG_BUSY_LO)) > 0);
    CHECK(device_reg_read(d, ATL_REG_ENG(1, 2, ATL_ENG_BUSY_LO)) > 0);
    /* the firmware consumed both done bits and the interrupt */
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_CORE_DONE), 0);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_INT_STATUS), 0);
    uint64_t cycles = res(d, 0) | (uint64_t)res(d, 1) << 32;
    CHECK(cycles > 0 && cycles == device_reg_read(d, ATL_REG_CYCLES_LO));
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_DRAM_RD_LO), 2 * (32 + 32));
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_DRAM_WR_LO), 64);
    CHECK_EQ_INT(res(d, 20), 2);                                   /* two layers in the profile */
    char *tr = device_trace_json(d);
    CHECK(tr && strstr(tr, "traceEvents"));
    free(tr);
    /* time = firmware cycles + the launch */
    uint64_t t = device_reg_read(d, ATL_REG_TIME_LO) | (uint64_t)device_reg_read(d, ATL_REG_TIME_HI) << 32;
    uint64_t fwc = device_reg_read(d, ATL_REG_FW_CYCLES_LO) | (uint64_t)device_reg_read(d, ATL_REG_FW_CYCLES_HI) << 32;
    CHECK_EQ_INT(t, fwc + cycles);
    free(img);
    device_free(d);
}

/* The device checks a queue itself: a base outside DRAM is a QUEUE fault
 * (the firmware never does this; a corrupted stream table would). Driven
 * here through a fake firmware-less sequence: the host rings a queue and
 * then a RUN of a loaded model lets the firmware wait. */
TEST(queue_outside_dram_faults)
{
    AtlChip c;
    REQUIRE(two_core_chip(&c) == 0);
    AtlErr e;
    AtlSimDevice *d = device_create(&c, NULL, &e);
    REQUIRE(d);
    size_t len;
    uint8_t *img = mb_sample_model(cfg_fingerprint(&c), 0, &len, &e);
    REQUIRE(img);
    uint32_t a[3] = { (uint32_t)len, 0, 0 };
    REQUIRE(post(d, ATL_MB_ALLOC, a, 3) == 0);
    uint64_t at = res(d, 0);
    memcpy(device_dram(d, at, len), img, len);
    uint32_t l[4] = { (uint32_t)at, 0, (uint32_t)len, 0 };
    REQUIRE(post(d, ATL_MB_LOAD, l, 4) == 0);
    /* host rings core 1's matrix queue at a bad address before the RUN */
    device_reg_write(d, ATL_REG_ENG(1, 1, ATL_ENG_Q_BASE_LO), (uint32_t)c.dram_bytes - 64);
    device_reg_write(d, ATL_REG_ENG(1, 1, ATL_ENG_Q_LEN), 2);
    device_reg_write(d, ATL_REG_ENG(1, 1, ATL_ENG_Q_DOORBELL), 1);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_ENG(1, 1, ATL_ENG_Q_STATUS)), ATL_QS_RUNNING);
    uint32_t r[3] = { res(d, 0), 0, 0 };
    char buf[ATL_MSG_BYTES];
    CHECK_EQ_INT(post(d, ATL_MB_RUN, r, 3), ATL_ERR_FW_FAULT);
    CHECK_STR_CONTAINS(msg(d, buf), "fault 1 (QUEUE) on core 1 engine matrix instruction 0");
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_FAULT_CODE), ATL_FAULT_QUEUE);
    CHECK_EQ_INT(device_reg_read(d, ATL_REG_ENG(1, 1, ATL_ENG_Q_STATUS)), ATL_QS_FAULT);
    /* the next run is clean */
    CHECK_EQ_INT(post(d, ATL_MB_RUN, r, 3), 0);
    free(img);
    device_free(d);
}

int main(void)
{
    RUN(register_rules);
    RUN(two_core_launch);
    RUN(queue_outside_dram_faults);
    return test_summary("test_device");
}
