/* device.h - the simulated chip as a device: a simulator instance, its
 * DRAM, the register file of isa/regs.h, and a control processor running
 * the firmware (firmware/fw.h) against that register file.
 *
 * The host side (host/, tests) sees only registers and DRAM: it writes a
 * mailbox command and rings MB_DOORBELL, and the device runs the firmware's
 * handler to completion before the write returns (the control processor is
 * modelled as synchronous code whose cost is charged in simulated cycles).
 * The firmware rings queue doorbells; when it then waits for an interrupt,
 * the device launches every rung queue at once on the simulator: it fetches
 * each queue's 64-byte records from DRAM at Q_BASE, decodes them (a record
 * that does not decode is a DECODE fault, a queue outside DRAM a QUEUE
 * fault), runs, and raises DONE (with CORE_DONE bits) or FAULT, updating
 * the profile counters and the per-layer profile buffer. An engine whose
 * queue was not rung runs an empty stream (it is idle and done at once).
 *
 * Ownership: device_create allocates; device_free releases everything.
 */
#ifndef ATOLL_SIM_DEVICE_H
#define ATOLL_SIM_DEVICE_H
#include <stddef.h>
#include <stdint.h>
#include "isa/config.h"
#include "sim/sim.h"
#include "util/err.h"

typedef struct AtlDeviceOptions {
    size_t fw_heap_bytes;   /* control processor memory for the firmware's heap; 0 = 16 MiB */
    int trace;              /* record a Chrome trace of every launch (device_trace_json) */
    uint64_t max_cycles;    /* per launch; 0 = the simulator's default */
    uint64_t max_work;      /* host work per launch (AtlSimOptions.max_work); 0 = the default */
    int timing_only;        /* the simulator's timing mode: cycles, no values computed */
} AtlDeviceOptions;

typedef struct AtlSimDevice AtlSimDevice;

/* NULL with e set on a bad chip, a firmware that does not start, or no memory. */
AtlSimDevice *device_create(const AtlChip *chip, const AtlDeviceOptions *opt, AtlErr *e);
void device_free(AtlSimDevice *d);

/* Register access as the host sees it. Offsets outside the window read as
 * 0xFFFFFFFF and writes to them are ignored. Writing MB_DOORBELL runs the
 * firmware's mailbox handler before returning. */
uint32_t device_reg_read(AtlSimDevice *d, uint32_t offset);
void device_reg_write(AtlSimDevice *d, uint32_t offset, uint32_t value);

/* Host view of device DRAM: NULL unless [addr, addr + size) is inside it. */
uint8_t *device_dram(AtlSimDevice *d, uint64_t addr, uint64_t size);
uint64_t device_dram_size(const AtlSimDevice *d);
const AtlChip *device_chip(const AtlSimDevice *d);

/* Of the last launch (malloc'd, caller frees; NULL if there was none or out
 * of memory): the simulator's stats JSON and Chrome trace. */
char *device_stats_json(AtlSimDevice *d);
char *device_trace_json(AtlSimDevice *d);
/* The trace with slices for layer ranges per cluster (sim_trace_json_ranges). */
char *device_trace_json_ranges(AtlSimDevice *d, const AtlSimLayerRange *r, int n);
char *device_layers_csv(AtlSimDevice *d);
#endif
