/* regs.h - the register map shared by the chip (sim/device*.c) and the
 * firmware running on its control processor (firmware/), and the mailbox
 * protocol between host and firmware.
 *
 * Defined once, as tables: the register blocks (global, per core, per
 * engine of a core, mailbox), the values some registers hold (queue status,
 * interrupt bits, fault codes, mailbox commands, firmware error codes, query
 * kinds). The constants below and docs/registers.md are both generated from
 * these tables (test/isa/test_regs.c fails when the doc is out of step;
 * `build/test/isa/test_regs --write docs/registers.md` regenerates it).
 *
 * All registers are 32 bits wide, little-endian, at 4-byte aligned byte
 * offsets in one register window. 64-bit quantities are LO/HI pairs; the
 * device updates them only when a launch ends, so LO and HI never tear.
 * A register with count > 1 is an array of that many consecutive words.
 */
#ifndef ATOLL_ISA_REGS_H
#define ATOLL_ISA_REGS_H
#include <stdint.h>

#define ATL_REGS_ID_VALUE 0x4C4C5441u  /* "ATLL" */
#define ATL_REGS_VERSION_VALUE 1u
#define ATL_MAX_CORES 2048             /* 64 clusters x 32 cores (isa/config.h limits) */
#define ATL_MB_ARGS 8
#define ATL_MB_RESULTS 32
#define ATL_MSG_BYTES 256              /* mailbox and fault message buffers, NUL-terminated */

/* Register blocks: where each block starts and how far apart its instances are. */
#define ATL_CORE_BASE   0x1000u        /* core c's block at ATL_CORE_BASE + c * ATL_CORE_STRIDE */
#define ATL_CORE_STRIDE 0x100u
#define ATL_ENGINE_STRIDE 0x40u        /* engine e's registers at core block + e * ATL_ENGINE_STRIDE */
#define ATL_REGS_WINDOW(ncores) (ATL_CORE_BASE + (uint32_t)(ncores) * ATL_CORE_STRIDE)

/* Access kinds. RO: the device writes, software reads. RW: software writes,
 * the device reads. W1C: reading gives pending bits, writing 1 clears them.
 * WO: writing triggers an action (reads as 0). */
#define ATL_ACCESS(X) \
    X(RO,  "read only: set by the device") \
    X(RW,  "read/write: set by software, read by the device") \
    X(W1C, "write 1 to clear: pending bits, cleared by writing them back") \
    X(WO,  "write only: writing starts an action; reads as 0")
typedef enum {
#define X(id, doc) ATL_ACC_##id,
    ATL_ACCESS(X)
#undef X
    ATL_NUM_ACCESS
} AtlRegAccess;

/* ATL_REGS_GLOBAL(R): R(NAME, offset, count, access, doc) - chip-wide registers. */
#define ATL_REGS_GLOBAL(R) \
    R(ID,               0x000, 1,  RO,  "0x4C4C5441 (\"ATLL\"): identifies the register window") \
    R(VERSION,          0x004, 1,  RO,  "register map version (1)") \
    R(NCORES,           0x008, 1,  RO,  "cores on the chip (clusters x cores_per_cluster)") \
    R(CORES_PER_CLUSTER,0x00C, 1,  RO,  "cores in each cluster") \
    R(CHIP_FP_LO,       0x010, 1,  RO,  "chip fingerprint (cfg_fingerprint), low word") \
    R(CHIP_FP_HI,       0x014, 1,  RO,  "chip fingerprint, high word") \
    R(DRAM_SIZE,        0x018, 1,  RO,  "device DRAM in bytes") \
    R(DEVICE_MODE,      0x01C, 1,  RO,  "0: the engines compute values; 1: timing only (the simulator's timing mode): memories keep no values, so the firmware does not move weights or check their checksum (it charges the same cycles)") \
    R(INT_STATUS,       0x020, 1,  W1C, "pending interrupts (INT_* bits)") \
    R(INT_MASK,         0x024, 1,  RW,  "enabled interrupts: wait_for_interrupt returns on INT_STATUS & INT_MASK") \
    R(FAULT_CODE,       0x030, 1,  RO,  "FAULT_* code of the first fault of the last launch (0 none)") \
    R(FAULT_CORE,       0x034, 1,  RO,  "core of the fault (0xFFFFFFFF when not tied to one)") \
    R(FAULT_ENGINE,     0x038, 1,  RO,  "engine of the fault, 0 dma 1 mat 2 vec (0xFFFFFFFF when not tied to one)") \
    R(FAULT_INDEX,      0x03C, 1,  RO,  "instruction index of the fault in its queue (0xFFFFFFFF when not tied to one)") \
    R(CYCLES_LO,        0x040, 1,  RO,  "cycles of the last launch (first doorbell to last completion), low word") \
    R(CYCLES_HI,        0x044, 1,  RO,  "cycles of the last launch, high word") \
    R(TIME_LO,          0x048, 1,  RO,  "device time: every launch plus every firmware cycle since reset, low word") \
    R(TIME_HI,          0x04C, 1,  RO,  "device time, high word") \
    R(FW_CYCLES_LO,     0x050, 1,  RO,  "cycles charged by the control processor since reset, low word") \
    R(FW_CYCLES_HI,     0x054, 1,  RO,  "control processor cycles, high word") \
    R(MACS_LO,          0x058, 1,  RO,  "multiply-accumulates of the last launch, low word") \
    R(MACS_HI,          0x05C, 1,  RO,  "multiply-accumulates, high word") \
    R(DRAM_RD_LO,       0x060, 1,  RO,  "DRAM bytes read by the last launch, low word") \
    R(DRAM_RD_HI,       0x064, 1,  RO,  "DRAM bytes read, high word") \
    R(DRAM_WR_LO,       0x068, 1,  RO,  "DRAM bytes written by the last launch, low word") \
    R(DRAM_WR_HI,       0x06C, 1,  RO,  "DRAM bytes written, high word") \
    R(SRAM_RD_LO,       0x070, 1,  RO,  "cluster SRAM bytes read, low word") \
    R(SRAM_RD_HI,       0x074, 1,  RO,  "cluster SRAM bytes read, high word") \
    R(SRAM_WR_LO,       0x078, 1,  RO,  "cluster SRAM bytes written, low word") \
    R(SRAM_WR_HI,       0x07C, 1,  RO,  "cluster SRAM bytes written, high word") \
    R(LMEM_RD_LO,       0x080, 1,  RO,  "LMEM bytes read, low word") \
    R(LMEM_RD_HI,       0x084, 1,  RO,  "LMEM bytes read, high word") \
    R(LMEM_WR_LO,       0x088, 1,  RO,  "LMEM bytes written, low word") \
    R(LMEM_WR_HI,       0x08C, 1,  RO,  "LMEM bytes written, high word") \
    R(NOC_LO,           0x090, 1,  RO,  "bytes over NoC links, low word") \
    R(NOC_HI,           0x094, 1,  RO,  "bytes over NoC links, high word") \
    R(PROF_ADDR_LO,     0x0A0, 1,  RW,  "DRAM address of the per-layer profile buffer (records of PROF_* fields), low word; 0 = none") \
    R(PROF_ADDR_HI,     0x0A4, 1,  RW,  "per-layer profile buffer address, high word") \
    R(PROF_CAP,         0x0A8, 1,  RW,  "records the profile buffer holds") \
    R(PROF_COUNT,       0x0AC, 1,  RO,  "records written by the last launch (layers beyond PROF_CAP are dropped)") \
    R(LAUNCHES,         0x0B0, 1,  RO,  "launches since reset") \
    R(DRAM_ALIGN,       0x0B4, 1,  RO,  "what the firmware aligns a model's DRAM regions to: a whole round of DRAM channels (interleave x channels, at least 4 KiB), the placement the compiler's cost model assumes; 0 = 64 bytes") \
    R(FAULT_MSG,        0x100, 64, RO,  "fault description (NUL-terminated text, 256 bytes)") \
    R(CORE_DONE,        0x200, 64, W1C, "bit c%32 of word c/32: core c finished every queue rung for it") \
    R(MB_CMD,           0x400, 1,  RW,  "mailbox: command (MB_* code), written by the host") \
    R(MB_STATUS,        0x404, 1,  RO,  "mailbox: MBS_* state, written by the firmware") \
    R(MB_ERROR,         0x408, 1,  RO,  "mailbox: ERR_* code of the last command (0 = ok)") \
    R(MB_DOORBELL,      0x40C, 1,  WO,  "mailbox: host writes 1 to post MB_CMD with MB_ARG; raises INT_MAILBOX") \
    R(MB_ARG,           0x420, 8,  RW,  "mailbox: command arguments") \
    R(MB_RESULT,        0x440, 32, RO,  "mailbox: result words of the last command") \
    R(MB_MSG,           0x500, 64, RO,  "mailbox: message of the last command (error text, or a name for QUERY), 256 bytes")

/* ATL_REGS_ENGINE(R): per (core, engine), at ATL_REG_ENG(core, engine, ATL_ENG_x). */
#define ATL_REGS_ENGINE(R) \
    R(Q_BASE_LO,  0x00, 1, RW, "DRAM address of the engine's instruction stream (64-byte records), low word") \
    R(Q_BASE_HI,  0x04, 1, RW, "queue base, high word") \
    R(Q_LEN,      0x08, 1, RW, "instructions in the queue") \
    R(Q_DOORBELL, 0x0C, 1, WO, "write 1: the engine fetches and runs the queue (status becomes RUNNING)") \
    R(Q_STATUS,   0x10, 1, RO, "QS_* state of the queue") \
    R(Q_INDEX,    0x14, 1, RO, "index of the instruction the engine is at (its count when done)") \
    R(BUSY_LO,    0x18, 1, RO, "cycles busy in the last launch, low word") \
    R(BUSY_HI,    0x1C, 1, RO, "busy cycles, high word") \
    R(STALL_LO,   0x20, 1, RO, "cycles stalled (semaphores, barriers, shared resources) in the last launch, low word") \
    R(STALL_HI,   0x24, 1, RO, "stall cycles, high word") \
    R(INSNS,      0x28, 1, RO, "instructions completed in the last launch")

/* ATL_REGS_CORE(R): per core, at ATL_REG_CORE(core, ATL_CORE_x), after the engines. */
#define ATL_REGS_CORE(R) \
    R(STATUS, 0xC0, 1, RO, "QS_* state of the core: RUNNING while a rung queue runs, FAULT if one faulted, DONE when all rung queues are done")

enum {
#define R(name, off, count, acc, doc) ATL_REG_##name = (off), ATL_REG_##name##_COUNT = (count),
    ATL_REGS_GLOBAL(R)
#undef R
};
enum {
#define R(name, off, count, acc, doc) ATL_ENG_##name = (off),
    ATL_REGS_ENGINE(R)
#undef R
};
enum {
#define R(name, off, count, acc, doc) ATL_CORE_##name = (off),
    ATL_REGS_CORE(R)
#undef R
};
#define ATL_REG_ENG(core, engine, reg) \
    (ATL_CORE_BASE + (uint32_t)(core) * ATL_CORE_STRIDE + (uint32_t)(engine) * ATL_ENGINE_STRIDE + (uint32_t)(reg))
#define ATL_REG_CORE(core, reg) (ATL_CORE_BASE + (uint32_t)(core) * ATL_CORE_STRIDE + (uint32_t)(reg))

/* ---- register values ---- */

/* Q_STATUS and core STATUS. */
#define ATL_QSTATES(X) \
    X(IDLE,    0, "never rung since reset, or reset by a new launch") \
    X(RUNNING, 1, "rung; the engine is fetching and executing") \
    X(DONE,    2, "reached `end`") \
    X(FAULT,   3, "stopped by a fault (see FAULT_*)")
enum {
#define X(id, v, doc) ATL_QS_##id = (v),
    ATL_QSTATES(X)
#undef X
};

/* INT_STATUS / INT_MASK bits. */
#define ATL_INTS(X) \
    X(DONE,    0, "a launch finished: every rung queue reached `end` (CORE_DONE says which cores)") \
    X(FAULT,   1, "a launch stopped on a fault (FAULT_* registers)") \
    X(MAILBOX, 2, "the host posted a mailbox command")
enum {
#define X(id, bit, doc) ATL_INT_##id = 1u << (bit),
    ATL_INTS(X)
#undef X
};

/* FAULT_CODE values. */
#define ATL_FAULTS(X) \
    X(NONE,       0,  "no fault") \
    X(QUEUE,      1,  "a rung queue lies outside DRAM or is not 64-byte aligned") \
    X(DECODE,     2,  "an instruction record does not decode (unknown opcode, bad field, non-zero padding)") \
    X(ILLEGAL,    3,  "illegal instruction (e.g. wrong engine, bad operand combination)") \
    X(OOB,        4,  "out-of-bounds memory access") \
    X(MISALIGNED, 5,  "misaligned access") \
    X(DEADLOCK,   6,  "every unfinished engine waits and nothing can wake it") \
    X(RACE,       7,  "data race between engines without a semaphore between them") \
    X(NO_END,     8,  "a queue ran past its last instruction without `end`") \
    X(MAX_CYCLES, 9,  "the launch exceeded the device's cycle limit") \
    X(DATA,       10, "invalid operand data") \
    X(DEVICE,     11, "the device could not run the launch (out of host memory in the model)") \
    X(WORK,       12, "the launch exceeded the device's host work limit (elements moved or computed)")
enum {
#define X(id, v, doc) ATL_FAULT_##id = (v),
    ATL_FAULTS(X)
#undef X
};

/* MB_STATUS values. */
#define ATL_MB_STATES(X) \
    X(IDLE,  0, "no command since reset") \
    X(BUSY,  1, "the firmware is executing the command") \
    X(DONE,  2, "the command succeeded; results are in MB_RESULT (and MB_MSG)") \
    X(ERROR, 3, "the command failed; MB_ERROR has the code, MB_MSG the message")
enum {
#define X(id, v, doc) ATL_MBS_##id = (v),
    ATL_MB_STATES(X)
#undef X
};

/* MB_CMD values: X(NAME, code, arguments, results). Addresses and sizes are
 * 64-bit LO/HI pairs. Model handles are small integers from LOAD. */
#define ATL_MB_CMDS(X) \
    X(NOP,    0, "-", \
               "-") \
    X(ALLOC,  1, "ARG0/1 size, ARG2 alignment (power of two, 0 = 64)", \
               "RESULT0/1 DRAM address of a fresh block") \
    X(FREE,   2, "ARG0/1 address returned by ALLOC", \
               "-") \
    X(LOAD,   3, "ARG0/1 DRAM address of an .abm image, ARG2/3 its size (the image must stay in place until UNLOAD)", \
               "RESULT0 model handle, RESULT1 nets, RESULT2 variants, RESULT3 tensors, RESULT4/5 weights base, RESULT6/7 activations base, RESULT8/9 io base, RESULT10/11 DRAM bytes used") \
    X(UNLOAD, 4, "ARG0 model handle", \
               "-") \
    X(QUERY,  5, "ARG0 model handle, ARG1 QK_* kind, ARG2 index, ARG3 sub-index (QUANT)", \
               "per kind, see docs/firmware.md; names in MB_MSG") \
    X(RUN,    6, "ARG0 model handle, ARG1 net index, ARG2 variant index within the net", \
               "RESULT0/1 cycles, RESULT2/3 firmware cycles of the command, RESULT4/5 MACs, RESULT6/7 DRAM bytes, RESULT8..13 busy cycles per engine (LO/HI), RESULT14..19 stall cycles per engine, RESULT20 profile records, RESULT21/22 profile buffer address; on ERR_FAULT: RESULT0/1 cycles, RESULT24 FAULT_* code, RESULT25 core, RESULT26 engine, RESULT27 instruction index")
enum {
#define X(id, v, args, res) ATL_MB_##id = (v),
    ATL_MB_CMDS(X)
#undef X
    ATL_MB_NUM_CMDS
};

/* QUERY kinds. */
#define ATL_QUERY_KINDS(X) \
    X(MODEL,  0, "RESULT0 nets, RESULT1 variants, RESULT2 tensors, RESULT3/4 chip fingerprint; MB_MSG producer") \
    X(NET,    1, "index = net: RESULT0 first variant, RESULT1 variant count; MB_MSG name") \
    X(VARIANT,  2, "index = global variant: RESULT0 net, RESULT1 batch, RESULT2 first tensor, RESULT3 tensor count, RESULT4 cores, RESULT5/6 activation bytes, RESULT7/8 io bytes") \
    X(TENSOR, 3, "index = global tensor: RESULT0 dtype, 1 role, 2 region, 3 layout, 4 ndim, 5..10 dims, 11/12 device address, 13/14 size, 15 quant kind, 16 quant axis, 17 quant count, 18 scale (f32 bits), 19 zero point; MB_MSG name") \
    X(QUANT,  4, "index = global tensor, sub-index = entry: RESULT0 scale (f32 bits), RESULT1 zero point")
enum {
#define X(id, v, doc) ATL_QK_##id = (v),
    ATL_QUERY_KINDS(X)
#undef X
    ATL_QK_COUNT
};

/* MB_ERROR values: firmware error codes (the host API returns the same
 * numbers, see include/atoll.h). */
#define ATL_FW_ERRORS(X) \
    X(OK,          0,  "success") \
    X(BAD_COMMAND, 1,  "unknown mailbox command") \
    X(BAD_ARG,     2,  "an argument is out of range (address outside DRAM, zero size, bad alignment, index)") \
    X(NO_MEMORY,   3,  "the firmware's own heap is exhausted") \
    X(NO_DRAM,     4,  "device DRAM has no free block large enough") \
    X(BAD_IMAGE,   5,  "the model image is malformed (structure, bounds, records, cross references)") \
    X(VERSION,     6,  "the model's container version is not supported") \
    X(CHIP,        7,  "the model was compiled for a different chip (fingerprint mismatch)") \
    X(CHECKSUM,    8,  "a CRC-32 of the header, section table, a section or a weight blob does not match") \
    X(RELOC,       9,  "a command stream has an instruction that cannot be relocated (bad opcode, untagged or out-of-region DRAM address)") \
    X(TOO_MANY,    10, "every model slot is in use") \
    X(BAD_HANDLE,  11, "no model is loaded under that handle") \
    X(UNKNOWN_NET, 12, "the net index does not exist in the model") \
    X(UNKNOWN_VARIANT,13, "the variant index does not exist in the net") \
    X(CORES,       14, "the variant needs more cores than the chip has") \
    X(FAULT,       15, "the chip faulted while running (core, engine, index and message in MB_MSG and MB_RESULT)") \
    X(HANG,        16, "waiting for an interrupt that can never come")
enum {
#define X(id, v, doc) ATL_ERR_FW_##id = (v),
    ATL_FW_ERRORS(X)
#undef X
    ATL_ERR_FW_COUNT
};

/* Relocation tags of DRAM addresses in command streams (docs/firmware.md):
 * a DMA operand in DRAM space is written as (region + 1) << 32 | offset,
 * where region is AbmRegion (0 weights, 1 activations, 2 io) and offset is
 * the byte offset inside that region. The firmware replaces it by the
 * region's base + offset when it loads the model. */
#define ATL_RELOC_SHIFT 32
#define ATL_RELOC_ADDR(region, offset) ((((uint64_t)(region) + 1) << ATL_RELOC_SHIFT) | (uint64_t)(offset))

/* Per-layer profile record written by the device to PROF_ADDR (14
 * little-endian u64 fields, 112 bytes): one per layer id, then one per
 * member of a layer group (LAYER holds its member tag, isa_member_tag). */
#define ATL_PROF_FIELDS(X) \
    X(LAYER,  0, "layer id (from the instructions' layer field); a member record: the member tag 0x8000 + 16 x layer + member") \
    X(INSNS,  1, "instructions of the layer") \
    X(FIRST,  2, "cycle the layer's first instruction started") \
    X(LAST,   3, "cycle its last instruction completed") \
    X(MACS,   4, "multiply-accumulates") \
    X(DMA_BYTES, 5, "bytes moved by DMA") \
    X(BUSY_MAT,  6, "matrix unit busy cycles") \
    X(BUSY_VEC,  7, "vector unit busy cycles") \
    X(BUSY_DMA,  8, "DMA engine busy cycles") \
    X(SYNC,      9, "cycles of the layer's span when no engine kind was busy (waiting on semaphores and barriers)") \
    X(BOUND,    10, "what bounds the layer: 0 compute, 1 DMA, 2 sync") \
    X(DRAM_BYTES, 11, "bytes its DMA read from or wrote to DRAM") \
    X(HELD,     12, "core-cycles the layer held: each engine's time from its previous instruction's end to this layer's instruction's end, summed over cores (the largest engine kind's sum)") \
    X(CYCLES,   13, "the layer's span (LAST - FIRST); a member's share of its group's span, in proportion to its busy cycles (the members' add up to the group's)")
enum {
#define X(id, idx, doc) ATL_PROF_##id = (idx),
    ATL_PROF_FIELDS(X)
#undef X
    ATL_PROF_NUM_FIELDS
};
#define ATL_PROF_RECORD_BYTES (8 * ATL_PROF_NUM_FIELDS)
enum { ATL_BOUND_COMPUTE = 0, ATL_BOUND_DMA = 1, ATL_BOUND_SYNC = 2 };
#endif
