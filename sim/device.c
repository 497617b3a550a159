/* device.c - the simulated chip as a device (see device.h): register file
 * with the access rules of isa/regs.h, the firmware on the control
 * processor wired to it through the HAL, and launches on the simulator.
 *
 * Access rules come from the register tables: a per-word access map is
 * built at creation, so no register is special-cased by hand except the
 * ones with side effects (queue doorbells, the mailbox doorbell).
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "sim/device.h"
#include "sim/sim.h"
#include "isa/regs.h"
#include "isa/timing.h"
#include "isa/isa.h"
#include "isa/program.h"
#include "firmware/fw.h"

enum { ACC_NONE = 0xFF };
enum { WHO_HOST, WHO_FW };

struct AtlSimDevice {
    AtlChip chip;
    AtlSim *sim;
    uint8_t *dram;
    uint64_t dram_size;
    uint32_t ncores, nwords;
    uint32_t *regs;
    uint8_t *access;         /* AtlRegAccess per register word, ACC_NONE if unmapped */
    uint8_t *rung;           /* per (core, engine): doorbell since the last launch */
    int any_rung, launched, in_mailbox;
    AtlProgram prog;         /* the last launch (the simulator references it) */
    Fw *fw;
    uint8_t *fw_heap;
};

/* ---- register file ---- */

static void set64(AtlSimDevice *d, uint32_t off, uint64_t v)
{
    d->regs[off / 4] = (uint32_t)v;
    d->regs[off / 4 + 1] = (uint32_t)(v >> 32);
}
static uint64_t get64(const AtlSimDevice *d, uint32_t off)
{
    return d->regs[off / 4] | (uint64_t)d->regs[off / 4 + 1] << 32;
}

static void map_access(AtlSimDevice *d)
{
    memset(d->access, ACC_NONE, d->nwords);
#define R(name, off, count, acc, doc) \
    for (uint32_t w = 0; w < (count); w++) d->access[(off) / 4 + w] = ATL_ACC_##acc;
    ATL_REGS_GLOBAL(R)
#undef R
    for (uint32_t c = 0; c < d->ncores; c++) {
        for (uint32_t g = 0; g < ISA_NUM_ENGINES; g++) {
#define R(name, off, count, acc, doc) \
            for (uint32_t w = 0; w < (count); w++) d->access[ATL_REG_ENG(c, g, off) / 4 + w] = ATL_ACC_##acc;
            ATL_REGS_ENGINE(R)
#undef R
        }
#define R(name, off, count, acc, doc) \
        for (uint32_t w = 0; w < (count); w++) d->access[ATL_REG_CORE(c, off) / 4 + w] = ATL_ACC_##acc;
        ATL_REGS_CORE(R)
#undef R
    }
}

static int in_mailbox_block(uint32_t off)
{
    return off >= ATL_REG_MB_CMD && off < ATL_REG_MB_MSG + 4 * ATL_REG_MB_MSG_COUNT;
}

static void reg_write(AtlSimDevice *d, uint32_t off, uint32_t v, int who)
{
    if (off % 4 || off / 4 >= d->nwords || d->access[off / 4] == ACC_NONE) return;
    uint32_t w = off / 4;
    switch (d->access[w]) {
    case ATL_ACC_W1C:
        d->regs[w] &= ~v;
        return;
    case ATL_ACC_RO:
        /* The firmware posts mailbox results; counters are the hardware's alone. */
        if (who == WHO_FW && in_mailbox_block(off)) d->regs[w] = v;
        return;
    case ATL_ACC_WO:
        if (!(v & 1)) return;
        if (off == ATL_REG_MB_DOORBELL) {
            if (who != WHO_HOST || d->in_mailbox) return;
            d->regs[ATL_REG_INT_STATUS / 4] |= ATL_INT_MAILBOX;
            d->in_mailbox = 1;
            fw_mailbox(d->fw);
            d->in_mailbox = 0;
            return;
        }
        if (off >= ATL_CORE_BASE) {
            uint32_t q = (off - ATL_CORE_BASE) / ATL_CORE_STRIDE * ISA_NUM_ENGINES +
                         (off - ATL_CORE_BASE) % ATL_CORE_STRIDE / ATL_ENGINE_STRIDE;
            d->rung[q] = 1;
            d->any_rung = 1;
            d->regs[(off - ATL_ENG_Q_DOORBELL + ATL_ENG_Q_STATUS) / 4] = ATL_QS_RUNNING;
        }
        return;
    default:
        d->regs[w] = v;
    }
}

uint32_t device_reg_read(AtlSimDevice *d, uint32_t off)
{
    if (off % 4 || off / 4 >= d->nwords || d->access[off / 4] == ACC_NONE) return 0xFFFFFFFFu;
    return d->access[off / 4] == ATL_ACC_WO ? 0 : d->regs[off / 4];
}

void device_reg_write(AtlSimDevice *d, uint32_t off, uint32_t v) { reg_write(d, off, v, WHO_HOST); }

/* ---- launches ---- */

static const uint32_t fault_code[SIM_NUM_FAULTS] = {
    [SIM_FAULT_NONE] = ATL_FAULT_NONE,         [SIM_FAULT_ILLEGAL] = ATL_FAULT_ILLEGAL,
    [SIM_FAULT_OOB] = ATL_FAULT_OOB,           [SIM_FAULT_MISALIGNED] = ATL_FAULT_MISALIGNED,
    [SIM_FAULT_DEADLOCK] = ATL_FAULT_DEADLOCK, [SIM_FAULT_RACE] = ATL_FAULT_RACE,
    [SIM_FAULT_NO_END] = ATL_FAULT_NO_END,     [SIM_FAULT_MAX_CYCLES] = ATL_FAULT_MAX_CYCLES,
    [SIM_FAULT_DATA] = ATL_FAULT_DATA,         [SIM_FAULT_WORK] = ATL_FAULT_WORK,
};

static void raise_fault(AtlSimDevice *d, uint32_t code, int core, int engine, int index, const char *msg)
{
    d->regs[ATL_REG_FAULT_CODE / 4] = code;
    d->regs[ATL_REG_FAULT_CORE / 4] = (uint32_t)core;
    d->regs[ATL_REG_FAULT_ENGINE / 4] = (uint32_t)engine;
    d->regs[ATL_REG_FAULT_INDEX / 4] = (uint32_t)index;
    char *text = (char *)&d->regs[ATL_REG_FAULT_MSG / 4];
    memset(text, 0, ATL_MSG_BYTES);
    snprintf(text, ATL_MSG_BYTES, "%s", msg);
    d->regs[ATL_REG_INT_STATUS / 4] |= ATL_INT_FAULT;
}

/* Builds the launch program from the rung queues; -1 after raising a fault. */
static int fetch(AtlSimDevice *d)
{
    AtlErr e;
    char msg[ATL_MSG_BYTES + 64];
    prog_free(&d->prog);
    if (prog_init(&d->prog, (int)d->ncores, &e)) { raise_fault(d, ATL_FAULT_DEVICE, -1, -1, -1, e.msg); return -1; }
    snprintf(d->prog.source, sizeof d->prog.source, "launch %u", d->regs[ATL_REG_LAUNCHES / 4]);
    AtlInsn end;
    memset(&end, 0, sizeof end);
    end.op = ISA_OP_END;
    for (uint32_t c = 0; c < d->ncores; c++)
        for (uint32_t g = 0; g < ISA_NUM_ENGINES; g++) {
            uint32_t q = c * ISA_NUM_ENGINES + g;
            if (!d->rung[q]) {
                if (prog_append(&d->prog, (int)c, (int)g, &end, 0, &e)) { raise_fault(d, ATL_FAULT_DEVICE, -1, -1, -1, e.msg); return -1; }
                continue;
            }
            uint64_t base = get64(d, ATL_REG_ENG(c, g, ATL_ENG_Q_BASE_LO));
            uint64_t len = d->regs[ATL_REG_ENG(c, g, ATL_ENG_Q_LEN) / 4];
            if (base % ISA_INSN_BYTES || base > d->dram_size || len > (d->dram_size - base) / ISA_INSN_BYTES) {
                snprintf(msg, sizeof msg, "queue of core %u engine %s: %llu instructions at DRAM 0x%llx are not inside the %llu bytes of DRAM or not 64-byte aligned",
                         c, isa_engine_name((int)g), (unsigned long long)len, (unsigned long long)base, (unsigned long long)d->dram_size);
                raise_fault(d, ATL_FAULT_QUEUE, (int)c, (int)g, 0, msg);
                return -1;
            }
            for (uint64_t i = 0; i < len; i++) {
                AtlInsn in;
                if (isa_decode(d->dram + base + i * ISA_INSN_BYTES, &in, &e)) {
                    snprintf(msg, sizeof msg, "record at DRAM 0x%llx does not decode: %s",
                             (unsigned long long)(base + i * ISA_INSN_BYTES), e.msg);
                    raise_fault(d, ATL_FAULT_DECODE, (int)c, (int)g, (int)i, msg);
                    return -1;
                }
                if (prog_append(&d->prog, (int)c, (int)g, &in, 0, &e)) { raise_fault(d, ATL_FAULT_DEVICE, (int)c, (int)g, (int)i, e.msg); return -1; }
            }
        }
    return 0;
}

static void write_profile(AtlSimDevice *d, const AtlSimStats *st)
{
    uint64_t addr = get64(d, ATL_REG_PROF_ADDR_LO), cap = d->regs[ATL_REG_PROF_CAP / 4], n = 0;
    if (addr && addr <= d->dram_size && cap <= (d->dram_size - addr) / ATL_PROF_RECORD_BYTES) {
        /* the layers, then the members of layer groups (dropped first when the buffer is full) */
        for (int r = 0; r < st->nlayers * (1 + ISA_MAX_MEMBERS) && n < cap; r++) {
            int l = r < st->nlayers ? r : (r - st->nlayers) / ISA_MAX_MEMBERS, k = r < st->nlayers ? -1 : (r - st->nlayers) % ISA_MAX_MEMBERS;
            const AtlLayerStats *ls = k < 0 ? &st->layers[l] : sim_member_stats(st, l, k);
            if (!ls || !ls->used) continue;
            uint64_t f[ATL_PROF_NUM_FIELDS] = {
                [ATL_PROF_LAYER] = k < 0 ? (uint64_t)l : isa_member_tag((unsigned)l, (unsigned)k), [ATL_PROF_INSNS] = ls->insns, [ATL_PROF_FIRST] = ls->first,
                [ATL_PROF_LAST] = ls->last, [ATL_PROF_MACS] = ls->macs, [ATL_PROF_DMA_BYTES] = ls->dma_bytes,
                [ATL_PROF_BUSY_MAT] = ls->busy[ISA_ENGINE_MAT], [ATL_PROF_BUSY_VEC] = ls->busy[ISA_ENGINE_VEC],
                [ATL_PROF_BUSY_DMA] = ls->busy[ISA_ENGINE_DMA], [ATL_PROF_SYNC] = ls->stall_sync,
                [ATL_PROF_DRAM_BYTES] = ls->dram_bytes, [ATL_PROF_HELD] = ls->held, [ATL_PROF_CYCLES] = ls->cycles,
                [ATL_PROF_BOUND] = !ls->bound || !strcmp(ls->bound, "compute") ? ATL_BOUND_COMPUTE
                                   : !strcmp(ls->bound, "dma") ? ATL_BOUND_DMA : ATL_BOUND_SYNC,
            };
            uint8_t *rec = d->dram + addr + n * ATL_PROF_RECORD_BYTES;
            for (int i = 0; i < ATL_PROF_NUM_FIELDS; i++)
                for (int b = 0; b < 8; b++) rec[8 * i + b] = (uint8_t)(f[i] >> (8 * b));
            n++;
        }
    }
    d->regs[ATL_REG_PROF_COUNT / 4] = (uint32_t)n;
}

static void launch(AtlSimDevice *d)
{
    AtlErr e;
    d->regs[ATL_REG_LAUNCHES / 4]++;
    d->launched = 1;
    d->regs[ATL_REG_FAULT_CODE / 4] = ATL_FAULT_NONE;
    for (uint32_t c = 0; c < d->ncores; c++)
        for (uint32_t g = 0; g < ISA_NUM_ENGINES; g++) {
            set64(d, ATL_REG_ENG(c, g, ATL_ENG_BUSY_LO), 0);
            set64(d, ATL_REG_ENG(c, g, ATL_ENG_STALL_LO), 0);
            d->regs[ATL_REG_ENG(c, g, ATL_ENG_INSNS) / 4] = 0;
            d->regs[ATL_REG_ENG(c, g, ATL_ENG_Q_INDEX) / 4] = 0;
        }
    int ok = fetch(d) == 0;
    const AtlSimFault *sf = NULL;
    if (ok && sim_load(d->sim, &d->prog, &e)) { raise_fault(d, ATL_FAULT_DEVICE, -1, -1, -1, e.msg); ok = 0; }
    else if (ok && sim_run(d->sim, &e)) {
        sf = sim_fault(d->sim);
        /* The reason first (it follows the disassembly in the simulator's
         * paragraph), then the instruction: the register holds 255 bytes. */
        char msg[ATL_MSG_BYTES];
        const char *reason = strstr(sf->msg, "`: ");
        if (reason && sf->disasm[0]) snprintf(msg, sizeof msg, "%s: %s; `%s`", sim_fault_name(sf->kind), reason + 3, sf->disasm);
        else snprintf(msg, sizeof msg, "%s", sf->msg);
        raise_fault(d, sf->kind < SIM_NUM_FAULTS ? fault_code[sf->kind] : ATL_FAULT_DEVICE, sf->core, sf->engine, sf->index, msg);
        ok = 0;
    }
    uint64_t cycles = 0;
    if (ok || sf) {
        const AtlSimStats *st = sim_stats(d->sim);
        cycles = st->cycles;
        set64(d, ATL_REG_MACS_LO, st->macs);
        set64(d, ATL_REG_DRAM_RD_LO, st->bytes.dram_rd);
        set64(d, ATL_REG_DRAM_WR_LO, st->bytes.dram_wr);
        set64(d, ATL_REG_SRAM_RD_LO, st->bytes.sram_rd);
        set64(d, ATL_REG_SRAM_WR_LO, st->bytes.sram_wr);
        set64(d, ATL_REG_LMEM_RD_LO, st->bytes.lmem_rd);
        set64(d, ATL_REG_LMEM_WR_LO, st->bytes.lmem_wr);
        set64(d, ATL_REG_NOC_LO, st->bytes.noc);
        for (uint32_t c = 0; c < d->ncores && st->engine; c++)
            for (uint32_t g = 0; g < ISA_NUM_ENGINES; g++) {
                const AtlEngineStats *es = &st->engine[c * ISA_NUM_ENGINES + g];
                set64(d, ATL_REG_ENG(c, g, ATL_ENG_BUSY_LO), es->busy);
                set64(d, ATL_REG_ENG(c, g, ATL_ENG_STALL_LO), es->stall_sem + es->stall_bar + es->stall_res);
                d->regs[ATL_REG_ENG(c, g, ATL_ENG_INSNS) / 4] = (uint32_t)es->insns;
                d->regs[ATL_REG_ENG(c, g, ATL_ENG_Q_INDEX) / 4] = (uint32_t)es->insns;
            }
        write_profile(d, st);
    } else {
        d->regs[ATL_REG_PROF_COUNT / 4] = 0;
    }
    set64(d, ATL_REG_CYCLES_LO, cycles);
    set64(d, ATL_REG_TIME_LO, get64(d, ATL_REG_TIME_LO) + cycles);
    /* Queue and core states, done bits, the interrupt. */
    int fcore = (int)d->regs[ATL_REG_FAULT_CORE / 4], feng = (int)d->regs[ATL_REG_FAULT_ENGINE / 4];
    for (uint32_t c = 0; c < d->ncores; c++) {
        int any = 0;
        for (uint32_t g = 0; g < ISA_NUM_ENGINES; g++) {
            uint32_t q = c * ISA_NUM_ENGINES + g;
            if (!d->rung[q]) { d->regs[ATL_REG_ENG(c, g, ATL_ENG_Q_STATUS) / 4] = ATL_QS_IDLE; continue; }
            any = 1;
            d->regs[ATL_REG_ENG(c, g, ATL_ENG_Q_STATUS) / 4] = ok ? ATL_QS_DONE : ATL_QS_FAULT;
            if (!ok && (int)c == fcore && (int)g == feng)
                d->regs[ATL_REG_ENG(c, g, ATL_ENG_Q_INDEX) / 4] = d->regs[ATL_REG_FAULT_INDEX / 4];
        }
        d->regs[ATL_REG_CORE(c, ATL_CORE_STATUS) / 4] = !any ? ATL_QS_IDLE : ok ? ATL_QS_DONE : ATL_QS_FAULT;
        if (any && ok) d->regs[ATL_REG_CORE_DONE / 4 + c / 32] |= 1u << (c % 32);
    }
    if (ok) d->regs[ATL_REG_INT_STATUS / 4] |= ATL_INT_DONE;
    memset(d->rung, 0, (size_t)d->ncores * ISA_NUM_ENGINES);
    d->any_rung = 0;
}

/* ---- the control processor's HAL ---- */

static uint32_t hal_read(void *ctx, uint32_t off)
{
    AtlSimDevice *d = ctx;
    if (off % 4 || off / 4 >= d->nwords || d->access[off / 4] == ACC_NONE) return 0xFFFFFFFFu;
    return d->regs[off / 4];
}
static void hal_write(void *ctx, uint32_t off, uint32_t v) { reg_write(ctx, off, v, WHO_FW); }
static int hal_wait(void *ctx)
{
    AtlSimDevice *d = ctx;
    if (d->regs[ATL_REG_INT_STATUS / 4] & d->regs[ATL_REG_INT_MASK / 4] & ~(uint32_t)ATL_INT_MAILBOX) return 0;
    if (!d->any_rung) return -1;
    launch(d);
    return 0;
}
static void hal_charge(void *ctx, uint64_t n)
{
    AtlSimDevice *d = ctx;
    set64(d, ATL_REG_FW_CYCLES_LO, get64(d, ATL_REG_FW_CYCLES_LO) + n);
    set64(d, ATL_REG_TIME_LO, get64(d, ATL_REG_TIME_LO) + n);
}

/* ---- lifetime ---- */

AtlSimDevice *device_create(const AtlChip *chip, const AtlDeviceOptions *opt, AtlErr *e)
{
    AtlDeviceOptions o = { 0 };
    if (opt) o = *opt;
    if (!o.fw_heap_bytes) o.fw_heap_bytes = 16u << 20;
    if (cfg_validate(chip, chip->name, e)) return NULL;
    int ncores = cfg_total_cores(chip);
    if (ncores < 1 || ncores > ATL_MAX_CORES) { atl_fail(e, "device: %d cores (1..%d supported)", ncores, ATL_MAX_CORES); return NULL; }
    AtlSimDevice *d = calloc(1, sizeof *d);
    if (!d) { atl_fail(e, "device: out of memory"); return NULL; }
    d->chip = *chip;
    d->ncores = (uint32_t)ncores;
    d->nwords = ATL_REGS_WINDOW(ncores) / 4;
    d->regs = calloc(d->nwords, 4);
    d->access = malloc(d->nwords);
    d->rung = calloc((size_t)ncores, ISA_NUM_ENGINES);
    d->fw = calloc(1, sizeof *d->fw);
    d->fw_heap = malloc(o.fw_heap_bytes);
    AtlSimOptions so;
    sim_options_default(&so);
    so.trace = o.trace;
    if (o.timing_only) so.mode = SIM_MODE_TIMING;
    if (o.max_cycles) so.max_cycles = o.max_cycles;
    so.max_work = o.max_work;
    if (!d->regs || !d->access || !d->rung || !d->fw || !d->fw_heap) { device_free(d); atl_fail(e, "device: out of memory"); return NULL; }
    d->sim = sim_create(chip, &so, e);
    if (!d->sim) { device_free(d); return NULL; }
    d->dram_size = (uint64_t)chip->dram_bytes;
    d->dram = sim_dram(d->sim, 0, d->dram_size);
    map_access(d);
    d->regs[ATL_REG_ID / 4] = ATL_REGS_ID_VALUE;
    d->regs[ATL_REG_VERSION / 4] = ATL_REGS_VERSION_VALUE;
    d->regs[ATL_REG_NCORES / 4] = d->ncores;
    d->regs[ATL_REG_CORES_PER_CLUSTER / 4] = (uint32_t)chip->cores_per_cluster;
    set64(d, ATL_REG_CHIP_FP_LO, cfg_fingerprint(chip));
    d->regs[ATL_REG_DRAM_SIZE / 4] = (uint32_t)d->dram_size;
    d->regs[ATL_REG_DRAM_ALIGN / 4] = (uint32_t)tim_dram_region_align(chip);
    d->regs[ATL_REG_DEVICE_MODE / 4] = o.timing_only ? 1u : 0u;
    FwHal hal = { d, hal_read, hal_write, d->dram, d->dram_size, hal_wait, hal_charge };
    if (fw_init(d->fw, &hal, d->fw_heap, o.fw_heap_bytes)) {
        device_free(d);
        atl_fail(e, "device: the firmware did not start (register window or heap of %zu bytes rejected)", o.fw_heap_bytes);
        return NULL;
    }
    return d;
}

void device_free(AtlSimDevice *d)
{
    if (!d) return;
    if (d->fw && d->fw->heap.base) fw_shutdown(d->fw);
    sim_free(d->sim);
    prog_free(&d->prog);
    free(d->fw);
    free(d->fw_heap);
    free(d->regs);
    free(d->access);
    free(d->rung);
    free(d);
}

uint8_t *device_dram(AtlSimDevice *d, uint64_t addr, uint64_t size)
{
    if (addr > d->dram_size || size > d->dram_size - addr) return NULL;
    return d->dram + addr;
}
uint64_t device_dram_size(const AtlSimDevice *d) { return d->dram_size; }
const AtlChip *device_chip(const AtlSimDevice *d) { return &d->chip; }

char *device_stats_json(AtlSimDevice *d) { return d->launched ? sim_stats_json(d->sim) : NULL; }
char *device_trace_json(AtlSimDevice *d) { return d->launched ? sim_trace_json(d->sim) : NULL; }
char *device_trace_json_ranges(AtlSimDevice *d, const AtlSimLayerRange *r, int n)
{
    return d->launched ? sim_trace_json_ranges(d->sim, r, n) : NULL;
}
char *device_layers_csv(AtlSimDevice *d) { return d->launched ? sim_layers_csv(d->sim) : NULL; }
