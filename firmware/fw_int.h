/* fw_int.h - shared between the firmware's files (not part of its interface). */
#ifndef ATOLL_FIRMWARE_FW_INT_H
#define ATOLL_FIRMWARE_FW_INT_H
#include "firmware/fw.h"

static inline uint32_t fw_rd(Fw *fw, uint32_t off)
{
    fw->hal.charge_cycles(fw->hal.ctx, FW_COST_REG_ACCESS);
    fw->cmd_cycles += FW_COST_REG_ACCESS;
    return fw->hal.reg_read32(fw->hal.ctx, off);
}
static inline void fw_wr(Fw *fw, uint32_t off, uint32_t v)
{
    fw->hal.charge_cycles(fw->hal.ctx, FW_COST_REG_ACCESS);
    fw->cmd_cycles += FW_COST_REG_ACCESS;
    fw->hal.reg_write32(fw->hal.ctx, off, v);
}
static inline uint64_t fw_rd64(Fw *fw, uint32_t lo)
{
    uint64_t l = fw_rd(fw, lo);
    return l | (uint64_t)fw_rd(fw, lo + 4) << 32;
}
static inline void fw_charge(Fw *fw, uint64_t cycles)
{
    fw->hal.charge_cycles(fw->hal.ctx, cycles);
    fw->cmd_cycles += cycles;
}
/* Cost of work proportional to bytes, at per_kib cycles per KiB (rounded up). */
static inline void fw_charge_bytes(Fw *fw, uint64_t bytes, uint64_t per_kib)
{
    fw_charge(fw, (bytes / 1024) * per_kib + ((bytes % 1024) * per_kib + 1023) / 1024);
}
static inline void fw_set64(Fw *fw, int i, uint64_t v)
{
    fw->result[i] = (uint32_t)v;
    fw->result[i + 1] = (uint32_t)(v >> 32);
}

/* Formats the message for the host into fw->msg and returns code. */
int fw_error(Fw *fw, int code, const char *fmt, ...) ATL_PRINTF(3, 4);

int fw_cmd_load(Fw *fw, const uint32_t *arg);
int fw_cmd_unload(Fw *fw, const uint32_t *arg);
/* The loaded model of handle, or NULL after posting BAD_HANDLE into fw->msg. */
FwModel *fw_model(Fw *fw, uint32_t handle, int *code);
#endif
