/* fw.h - the firmware of the chip's control processor.
 *
 * Freestanding C: no stdio, no libc allocation, no sim headers. The
 * firmware sees the chip only through a HAL: 32-bit register reads/writes
 * of the register map (isa/regs.h), device DRAM as the control processor
 * sees it, wait_for_interrupt() and charge_cycles(). Its memory is one
 * region it is given at init (fw_heap.c carves it up); model images are
 * parsed in place with the .abm reader (isa/abm_read.c) and zlib.
 *
 * The host talks to it through the mailbox registers: it writes MB_CMD and
 * MB_ARG, rings MB_DOORBELL, and the device calls fw_mailbox(), which runs
 * the command to completion and posts MB_STATUS, MB_ERROR, MB_RESULT and
 * MB_MSG. Commands, errors, cycle costs and the relocation convention are
 * described in docs/firmware.md.
 */
#ifndef ATOLL_FIRMWARE_FW_H
#define ATOLL_FIRMWARE_FW_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "isa/abm.h"
#include "isa/regs.h"
#include "util/err.h"

typedef struct FwHal {
    void *ctx;
    uint32_t (*reg_read32)(void *ctx, uint32_t offset);
    void (*reg_write32)(void *ctx, uint32_t offset, uint32_t value);
    uint8_t *dram;               /* device DRAM, dram_size bytes */
    uint64_t dram_size;
    /* Returns 0 once INT_STATUS & INT_MASK is non-zero (the device may
     * advance simulated time to get there), -1 if no interrupt can ever
     * come (nothing is running). */
    int (*wait_for_interrupt)(void *ctx);
    void (*charge_cycles)(void *ctx, uint64_t cycles);
} FwHal;

/* Simulated cost of the firmware's own work (docs/firmware.md).
 * FW_COSTS(X): X(NAME, cycles, doc). "_KIB" costs are per 1024 bytes. */
#define FW_COSTS(X) \
    X(COMMAND,      500,  "every mailbox command: interrupt entry, dispatch, posting status and results") \
    X(SECTION,      200,  "per section of a model image: table entry, bounds and record checks") \
    X(VALIDATE_KIB, 256,  "per KiB of model image checksummed (CRC-32 at 4 bytes per cycle)") \
    X(INFLATE_KIB,  2048, "per KiB produced by zlib inflate (0.5 byte per cycle)") \
    X(COPY_KIB,     16,   "per KiB copied or cleared in DRAM (64 bytes per cycle)") \
    X(RELOC_INSN,   24,   "per instruction scanned for relocation") \
    X(REG_ACCESS,   4,    "per register read or write") \
    X(DOORBELL,     20,   "per queue doorbell (on top of its register writes)") \
    X(INTERRUPT,    300,  "per interrupt taken while waiting for a launch") \
    X(QUERY,        100,  "per QUERY answered")
enum {
#define X(name, cycles, doc) FW_COST_##name = (cycles),
    FW_COSTS(X)
#undef X
};

#define FW_MAX_MODELS 8
#define FW_MAX_DRAM_BLOCKS 256
#define FW_DRAM_RESERVED 4096      /* DRAM below this is never allocated (0 means "none") */
#define FW_PROF_BYTES 65536        /* per-layer profile buffer per model */
#define FW_PROF_RECORDS (FW_PROF_BYTES / ATL_PROF_RECORD_BYTES)  /* 585 layers and members */

/* First-fit allocator over one memory region (fw_heap.c). */
typedef struct FwHeap {
    uint8_t *base;
    size_t size;
    size_t used, peak;             /* bytes in allocated blocks, headers included */
} FwHeap;

int fw_heap_init(FwHeap *h, void *mem, size_t size);     /* -1 if the region is too small */
void *fw_heap_alloc(FwHeap *h, size_t size);              /* 16-byte aligned; NULL when full */
void fw_heap_free(FwHeap *h, void *p);                    /* NULL is ignored */
size_t fw_heap_largest_free(const FwHeap *h);

/* Device DRAM blocks handed out to the host (owner 0) or to models (owner
 * handle + 1). */
typedef struct FwDramBlock { uint64_t addr, size; uint32_t owner; } FwDramBlock;
typedef struct FwDram {
    uint64_t size;
    FwDramBlock blk[FW_MAX_DRAM_BLOCKS];   /* sorted by address */
    int n;
} FwDram;

/* A block of size bytes at a multiple of align (any alignment; below 64,
 * 64): 0 and *addr on success, -1 when no gap is large enough (or the
 * table is full). */
int fw_dram_alloc(FwDram *d, uint64_t size, uint64_t align, uint32_t owner, uint64_t *addr);
/* Frees the block starting at addr if owner matches; -1 if there is none. */
int fw_dram_free(FwDram *d, uint64_t addr, uint32_t owner);
void fw_dram_free_owner(FwDram *d, uint32_t owner);

typedef struct FwModel {
    int used;
    uint64_t image_addr, image_size;
    AbmView view;
    void *scratch;                 /* decode scratch (heap) */
    uint64_t base[ABM_REGION_COUNT];   /* DRAM base of weights, activations, io */
    uint64_t size[ABM_REGION_COUNT];
    uint64_t code_addr, code_size; /* relocated command streams */
    uint64_t prof_addr;            /* FW_PROF_BYTES: FW_PROF_RECORDS records */
    uint64_t *stream_addr;         /* per stream record: DRAM address of its instructions (heap) */
    uint64_t dram_used;
} FwModel;

typedef struct Fw {
    FwHal hal;
    FwHeap heap;
    FwDram dram;
    FwModel model[FW_MAX_MODELS];
    uint32_t ncores, cores_per_cluster;
    uint64_t chip_fp;
    uint32_t region_align;         /* DRAM_ALIGN: a model's regions start at multiples of it (0: 64) */
    int timing_only;               /* DEVICE_MODE 1: no values in memory, weights are not moved */
    uint64_t cmd_cycles;           /* cycles charged by the current command */
    uint32_t result[ATL_MB_RESULTS];
    char msg[ATL_MSG_BYTES];
    AtlErr err;                    /* scratch for the .abm reader's messages */
} Fw;

/* Reads the chip's identity registers and sets up the heap over
 * [heap, heap + heap_size). -1 if the register window is not an Atoll chip
 * or the heap region is too small. The Fw struct holds no pointers into
 * itself, but must stay at one place while in use. */
int fw_init(Fw *fw, const FwHal *hal, void *heap, size_t heap_size);
/* Handles the posted mailbox command: reads MB_CMD/MB_ARG, runs it and
 * posts MB_STATUS, MB_ERROR, MB_RESULT, MB_MSG. Returns the error code. */
int fw_mailbox(Fw *fw);
/* Releases every model (the heap region itself belongs to the caller). */
void fw_shutdown(Fw *fw);

/* The relocation of one 64-byte instruction record (fw_reloc.c): every DMA
 * operand in DRAM space must carry a region tag (isa/regs.h
 * ATL_RELOC_ADDR) and its whole strided extent must lie inside that
 * region's size[]; it is replaced by base[] + offset. 0 on success, -1
 * with a reason in why (cap bytes). */
int fw_reloc_insn(uint8_t rec[64], const uint64_t base[ABM_REGION_COUNT], const uint64_t size[ABM_REGION_COUNT],
                  char *why, size_t cap);

/* Freestanding helpers (fw_util.c). fw_fmt understands %s %c %d %u %x
 * with an optional ll, and %%; it always NUL-terminates and returns the
 * length it would have written. */
size_t fw_fmt(char *dst, size_t cap, const char *fmt, ...) ATL_PRINTF(3, 4);
size_t fw_vfmt(char *dst, size_t cap, const char *fmt, va_list ap);
size_t fw_strlen(const char *s);
#define fw_memcpy(d, s, n) __builtin_memcpy((d), (s), (n))
#define fw_memset(d, c, n) __builtin_memset((d), (c), (n))
#endif
