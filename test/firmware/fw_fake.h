/* fw_fake.h - a fake chip for firmware unit tests (header only): a register
 * file with the access semantics of isa/regs.h (W1C, doorbells), a DRAM
 * array, and a "launch" that, instead of simulating, marks every rung queue
 * done (or faults, or never answers), so the firmware's protocol can be
 * checked without the simulator. Also a hand encoder of dma.copy records
 * with bit positions written out independently of isa/ tables, and a model
 * builder on the .abm writer.
 */
#ifndef ATOLL_TEST_FW_FAKE_H
#define ATOLL_TEST_FW_FAKE_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "firmware/fw.h"
#include "isa/isa.h"
#include "isa/abm.h"

enum { FAKE_COMPLETE, FAKE_FAULT, FAKE_SILENT };

typedef struct Fake {
    uint32_t *regs;
    uint32_t nregs, ncores;
    uint8_t *dram;
    uint64_t dram_size;
    int mode;
    uint64_t charged;
    int doorbells, launches, waits;
    uint64_t rung_base[16 * ISA_NUM_ENGINES];
    uint32_t rung_len[16 * ISA_NUM_ENGINES];
    int rung[16 * ISA_NUM_ENGINES];
} Fake;

static uint32_t fake_rd(void *ctx, uint32_t off)
{
    Fake *f = ctx;
    if (off % 4 || off / 4 >= f->nregs) return 0xDEADBEEFu;
    return f->regs[off / 4];
}

static int fake_is_w1c(uint32_t off)
{
    return off == ATL_REG_INT_STATUS || (off >= ATL_REG_CORE_DONE && off < ATL_REG_CORE_DONE + 4 * ATL_REG_CORE_DONE_COUNT);
}

static void fake_wr(void *ctx, uint32_t off, uint32_t v)
{
    Fake *f = ctx;
    if (off % 4 || off / 4 >= f->nregs) return;
    if (fake_is_w1c(off)) { f->regs[off / 4] &= ~v; return; }
    if (off >= ATL_CORE_BASE) {
        uint32_t core = (off - ATL_CORE_BASE) / ATL_CORE_STRIDE, in = (off - ATL_CORE_BASE) % ATL_CORE_STRIDE;
        uint32_t eng = in / ATL_ENGINE_STRIDE, reg = in % ATL_ENGINE_STRIDE;
        if (eng < ISA_NUM_ENGINES && reg == ATL_ENG_Q_DOORBELL && v) {
            int q = (int)(core * ISA_NUM_ENGINES + eng);
            f->rung[q] = 1;
            f->rung_base[q] = f->regs[ATL_REG_ENG(core, eng, ATL_ENG_Q_BASE_LO) / 4] |
                              (uint64_t)f->regs[ATL_REG_ENG(core, eng, ATL_ENG_Q_BASE_HI) / 4] << 32;
            f->rung_len[q] = f->regs[ATL_REG_ENG(core, eng, ATL_ENG_Q_LEN) / 4];
            f->regs[ATL_REG_ENG(core, eng, ATL_ENG_Q_STATUS) / 4] = ATL_QS_RUNNING;
            f->doorbells++;
            return;
        }
    }
    if (off == ATL_REG_MB_DOORBELL) return;
    f->regs[off / 4] = v;
}

static void fake_set64(Fake *f, uint32_t off, uint64_t v)
{
    f->regs[off / 4] = (uint32_t)v;
    f->regs[off / 4 + 1] = (uint32_t)(v >> 32);
}

static int fake_wait(void *ctx)
{
    Fake *f = ctx;
    f->waits++;
    if (f->regs[ATL_REG_INT_STATUS / 4] & f->regs[ATL_REG_INT_MASK / 4]) return 0;
    int any = 0;
    for (uint32_t q = 0; q < f->ncores * ISA_NUM_ENGINES; q++) any |= f->rung[q];
    if (!any || f->mode == FAKE_SILENT) return -1;
    f->launches++;
    if (f->mode == FAKE_FAULT) {
        f->regs[ATL_REG_FAULT_CODE / 4] = ATL_FAULT_OOB;
        f->regs[ATL_REG_FAULT_CORE / 4] = 0;
        f->regs[ATL_REG_FAULT_ENGINE / 4] = 0;
        f->regs[ATL_REG_FAULT_INDEX / 4] = 1;
        const char *m = "dma.copy reads past the end of DRAM";
        memset(&f->regs[ATL_REG_FAULT_MSG / 4], 0, ATL_MSG_BYTES);
        memcpy(&f->regs[ATL_REG_FAULT_MSG / 4], m, strlen(m));
        f->regs[ATL_REG_INT_STATUS / 4] |= ATL_INT_FAULT;
    } else {
        for (uint32_t q = 0; q < f->ncores * ISA_NUM_ENGINES; q++) {
            if (!f->rung[q]) continue;
            uint32_t core = q / ISA_NUM_ENGINES, eng = q % ISA_NUM_ENGINES;
            f->regs[ATL_REG_CORE_DONE / 4 + core / 32] |= 1u << (core % 32);
            f->regs[ATL_REG_ENG(core, eng, ATL_ENG_Q_STATUS) / 4] = ATL_QS_DONE;
            fake_set64(f, ATL_REG_ENG(core, eng, ATL_ENG_BUSY_LO), 10ull * f->rung_len[q]);
            fake_set64(f, ATL_REG_ENG(core, eng, ATL_ENG_STALL_LO), 3);
        }
        fake_set64(f, ATL_REG_CYCLES_LO, 0x100000000ull + 77);
        fake_set64(f, ATL_REG_MACS_LO, 4096);
        fake_set64(f, ATL_REG_DRAM_RD_LO, 300);
        fake_set64(f, ATL_REG_DRAM_WR_LO, 12);
        f->regs[ATL_REG_PROF_COUNT / 4] = 2;
        f->regs[ATL_REG_INT_STATUS / 4] |= ATL_INT_DONE;
    }
    memset(f->rung, 0, sizeof f->rung);
    return 0;
}

static void fake_charge(void *ctx, uint64_t n) { ((Fake *)ctx)->charged += n; }

#define FAKE_CHIP 0xF00DCAFE12345678ull

static int fake_init(Fake *f, uint32_t ncores, uint64_t dram_size)
{
    memset(f, 0, sizeof *f);
    f->ncores = ncores;
    f->nregs = ATL_REGS_WINDOW(ncores) / 4;
    f->regs = calloc(f->nregs, 4);
    f->dram_size = dram_size;
    f->dram = calloc(1, (size_t)dram_size);
    if (!f->regs || !f->dram) return -1;
    f->regs[ATL_REG_ID / 4] = ATL_REGS_ID_VALUE;
    f->regs[ATL_REG_VERSION / 4] = ATL_REGS_VERSION_VALUE;
    f->regs[ATL_REG_NCORES / 4] = ncores;
    f->regs[ATL_REG_CORES_PER_CLUSTER / 4] = ncores;
    fake_set64(f, ATL_REG_CHIP_FP_LO, FAKE_CHIP);
    f->regs[ATL_REG_DRAM_SIZE / 4] = (uint32_t)dram_size;
    return 0;
}

static FwHal fake_hal(Fake *f)
{
    return (FwHal){ f, fake_rd, fake_wr, f->dram, f->dram_size, fake_wait, fake_charge };
}

static void fake_free(Fake *f)
{
    free(f->regs);
    free(f->dram);
}

/* ---- hand encoding (bit positions from docs/isa.md's DMA_COPY layout) ---- */

static void hand_put(uint8_t *r, unsigned pos, unsigned bits, uint64_t v)
{
    for (unsigned i = 0; i < bits; i++)
        if ((v >> i) & 1) r[(pos + i) / 8] |= (uint8_t)(1u << ((pos + i) % 8));
}
static uint64_t hand_get(const uint8_t *r, unsigned pos, unsigned bits)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bits; i++) v |= (uint64_t)((r[(pos + i) / 8] >> ((pos + i) % 8)) & 1) << i;
    return v;
}
enum { HAND_DTYPE = 40, HAND_DST = 43, HAND_DST_SPACE = 83, HAND_SRC = 85, HAND_SRC_SPACE = 125,
       HAND_SHAPE = 164, HAND_DSTRIDE = 228, HAND_SSTRIDE = 356 };

/* dma.copy dtype i8, shape (1,1,rows,cols), row strides given, inner stride 1. */
static void hand_dma(uint8_t r[64], int dst_space, uint64_t dst, int src_space, uint64_t src,
                     uint32_t rows, uint32_t cols, int32_t dst_row_stride, int32_t src_row_stride)
{
    memset(r, 0, 64);
    r[0] = ISA_OP_DMA_COPY;
    hand_put(r, HAND_DTYPE, 3, ISA_I8);
    hand_put(r, HAND_DST, 40, dst);
    hand_put(r, HAND_DST_SPACE, 2, (uint64_t)dst_space);
    hand_put(r, HAND_SRC, 40, src);
    hand_put(r, HAND_SRC_SPACE, 2, (uint64_t)src_space);
    uint32_t shape[4] = { 1, 1, rows, cols };
    int32_t ds[4] = { 0, 0, dst_row_stride, 1 }, ss[4] = { 0, 0, src_row_stride, 1 };
    for (int d = 0; d < 4; d++) {
        hand_put(r, HAND_SHAPE + 16 * (unsigned)d, 16, shape[d]);
        hand_put(r, HAND_DSTRIDE + 32 * (unsigned)d, 32, (uint32_t)ds[d]);
        hand_put(r, HAND_SSTRIDE + 32 * (unsigned)d, 32, (uint32_t)ss[d]);
    }
}

static void hand_end(uint8_t r[64])
{
    memset(r, 0, 64);
    r[0] = ISA_OP_END;
}
#endif
