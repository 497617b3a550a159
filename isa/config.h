/* config.h - the chip description: every number the simulator, firmware and
 * compiler know about the hardware comes from here, loaded from an INI file.
 *
 * The table CFG_KEYS below is the schema: section, key, member, type, allowed
 * range, unit and meaning. The loader, `atoll config show`, docs/config.md and
 * the fingerprint all iterate over it; nothing else lists keys by hand.
 * Every key is required (a config says everything explicitly; the one
 * exception is the optional [area] section, see below), unknown keys
 * and sections are errors, values outside the range are errors, and
 * cfg_validate checks the combinations (e.g. banks divide LMEM size).
 */
#ifndef ATOLL_ISA_CONFIG_H
#define ATOLL_ISA_CONFIG_H
#include <stdint.h>
#include "util/err.h"

#define CFG_NAME_MAX 64
#define CFG_TEXT_MAX 256
#define CFG_MAX_CORES_PER_CLUSTER 32   /* DMA core masks are 32 bits */

typedef enum { CFG_INT, CFG_REAL, CFG_TEXT } AtlCfgType;

/* CFG_KEYS(K): K(section, key, member, type, min, max, unit, doc)
 * "fingerprint" keys are those compiled code depends on (FP) vs. those only
 * the simulator's timing/energy use (SIM): the chip fingerprint in an .abm
 * hashes the FP keys, so a model compiled for one chip runs on a chip that
 * differs only in timing/energy parameters. AREA keys feed only the area
 * model (isa/area.h); their section [area] is optional as a whole (a config
 * without it has no area figure, has_area = 0), but a config that has the
 * section gives every key of it. */
#define CFG_KEYS(K) \
    K("chip",   "name",               name,               CFG_TEXT, 0, 0,        "",       "SIM", "a short name for reports") \
    K("chip",   "clusters",           clusters,           CFG_INT,  1, 64,       "",       "FP",  "number of clusters") \
    K("chip",   "cores_per_cluster",  cores_per_cluster,  CFG_INT,  1, 32,       "",       "FP",  "cores in each cluster") \
    K("chip",   "freq_mhz",           freq_mhz,           CFG_REAL, 1, 10000,    "MHz",    "SIM", "clock of cores, DMA and NoC") \
    K("matrix", "rows",               mm_rows,            CFG_INT,  1, 1024,     "",       "FP",  "systolic array rows (K direction, weights stationary)") \
    K("matrix", "cols",               mm_cols,            CFG_INT,  1, 1024,     "",       "FP",  "systolic array columns (N direction)") \
    K("matrix", "i8_rate",            mm_rate_i8,         CFG_INT,  1, 16,       "",       "SIM", "cycles per pass step for int8 (1 = full rate)") \
    K("matrix", "f16_rate",           mm_rate_f16,        CFG_INT,  1, 16,       "",       "SIM", "cycles per pass step for fp16 (2 = half rate)") \
    K("matrix", "bf16_rate",          mm_rate_bf16,       CFG_INT,  1, 16,       "",       "SIM", "cycles per pass step for bf16") \
    K("matrix", "f32_rate",           mm_rate_f32,        CFG_INT,  1, 16,       "",       "SIM", "cycles per pass step for fp32 (4 = quarter rate)") \
    K("matrix", "weight_double_buffer", mm_weight_double_buffer, CFG_INT, 0, 1,   "",       "SIM", "1: the next fold's weights load during the current fold") \
    K("matrix", "issue_cycles",       mm_issue_cycles,    CFG_INT,  0, 10000,    "cycles", "SIM", "fixed cost to start an mm/conv instruction") \
    K("vector", "lanes",              vec_lanes,          CFG_INT,  1, 4096,     "",       "FP",  "32-bit lanes: f32/i32 elements per cycle (16-bit x2, 8-bit x4)") \
    K("vector", "transcendental_cycles", vec_transcendental_cycles, CFG_INT, 1, 64, "cycles", "SIM", "cycles per lane-group for exp/log/tanh/sigmoid/gelu/recip/sqrt/rsqrt/trigonometric/hyperbolic/erf") \
    K("vector", "issue_cycles",       vec_issue_cycles,   CFG_INT,  0, 10000,    "cycles", "SIM", "fixed cost to start a vector instruction") \
    K("lmem",   "bytes",              lmem_bytes,         CFG_INT,  4096, 1<<30, "bytes",  "FP",  "local memory per core") \
    K("lmem",   "banks",              lmem_banks,         CFG_INT,  1, 256,      "",       "FP",  "LMEM banks (interleaved by bank_width)") \
    K("lmem",   "bank_width",         lmem_bank_width,    CFG_INT,  1, 4096,     "bytes",  "FP",  "bytes per bank row; addresses interleave across banks at this granularity") \
    K("lmem",   "bank_bytes_per_cycle", lmem_bank_bytes_per_cycle, CFG_INT, 1, 4096, "bytes", "SIM", "bytes one bank serves per cycle") \
    K("lmem",   "alignment",          lmem_alignment,     CFG_INT,  1, 4096,     "bytes",  "FP",  "required alignment of mm/conv/vector operand addresses") \
    K("sram",   "bytes",              sram_bytes,         CFG_INT,  0, 1<<30,    "bytes",  "FP",  "shared SRAM per cluster") \
    K("sram",   "ports",              sram_ports,         CFG_INT,  1, 64,       "",       "SIM", "concurrent accesses the cluster SRAM serves") \
    K("sram",   "bytes_per_cycle",    sram_bytes_per_cycle, CFG_INT, 1, 4096,    "bytes",  "SIM", "bytes per cycle per port") \
    K("sram",   "latency_cycles",     sram_latency,       CFG_INT,  0, 10000,    "cycles", "SIM", "access latency") \
    K("noc",    "bytes_per_cycle",    noc_bytes_per_cycle, CFG_INT, 1, 4096,     "bytes",  "SIM", "each cluster's link to DRAM and other clusters, per direction") \
    K("noc",    "latency_cycles",     noc_latency,        CFG_INT,  0, 10000,    "cycles", "SIM", "link traversal latency") \
    K("dram",   "bytes",              dram_bytes,         CFG_INT,  1<<20, 0x7fffffff, "MiB:1", "FP", "device DRAM size in bytes (max 2 GiB - 1)") \
    K("dram",   "channels",           dram_channels,      CFG_INT,  1, 64,       "",       "SIM", "independent channels, interleaved by interleave bytes") \
    K("dram",   "interleave",         dram_interleave,    CFG_INT,  64, 1<<20,   "bytes",  "SIM", "channel interleaving granularity") \
    K("dram",   "gbps",               dram_gbps,          CFG_REAL, 0.001, 100000, "GB/s", "SIM", "total bandwidth over all channels (1 GB = 1e9 bytes)") \
    K("dram",   "latency_ns",         dram_latency_ns,    CFG_REAL, 0, 100000,   "ns",     "SIM", "access latency") \
    K("dma",    "burst_bytes",        dma_burst_bytes,    CFG_INT,  16, 1<<20,   "bytes",  "SIM", "DMA transfers are cut into bursts of this size") \
    K("dma",    "issue_cycles",       dma_issue_cycles,   CFG_INT,  0, 10000,    "cycles", "SIM", "fixed cost to start a DMA instruction") \
    K("dma",    "lmem_bytes_per_cycle", dma_lmem_bytes_per_cycle, CFG_INT, 1, 4096, "bytes", "SIM", "DMA engine's own port width into LMEM") \
    K("sync",   "semaphores",         semaphores,         CFG_INT,  1, 32,       "",       "FP",  "semaphores per core") \
    K("sync",   "barrier_cycles",     barrier_cycles,     CFG_INT,  0, 100000,   "cycles", "SIM", "latency from the last arrival to release") \
    K("energy", "source",             energy_source,      CFG_TEXT, 0, 0,        "",       "SIM", "where the energy numbers come from") \
    K("energy", "mac_i8_pj",          e_mac_i8,           CFG_REAL, 0, 1e6,      "pJ",     "SIM", "one int8 multiply-accumulate") \
    K("energy", "mac_f16_pj",         e_mac_f16,          CFG_REAL, 0, 1e6,      "pJ",     "SIM", "one fp16/bf16 multiply-accumulate") \
    K("energy", "mac_f32_pj",         e_mac_f32,          CFG_REAL, 0, 1e6,      "pJ",     "SIM", "one fp32 multiply-accumulate") \
    K("energy", "vec_op_pj",          e_vec_op,           CFG_REAL, 0, 1e6,      "pJ",     "SIM", "one 32-bit vector lane operation") \
    K("energy", "lmem_byte_pj",       e_lmem_byte,        CFG_REAL, 0, 1e6,      "pJ",     "SIM", "one byte read or written in LMEM") \
    K("energy", "sram_byte_pj",       e_sram_byte,        CFG_REAL, 0, 1e6,      "pJ",     "SIM", "one byte read or written in cluster SRAM") \
    K("energy", "noc_byte_pj",        e_noc_byte,         CFG_REAL, 0, 1e6,      "pJ",     "SIM", "one byte across a NoC link") \
    K("energy", "dram_byte_pj",       e_dram_byte,        CFG_REAL, 0, 1e6,      "pJ",     "SIM", "one byte read or written in DRAM") \
    K("energy", "static_mw_per_core", e_static_mw_core,   CFG_REAL, 0, 1e6,      "mW",     "SIM", "leakage and clock power of one core, charged for the whole run") \
    K("area",   "node",               area_node,          CFG_TEXT, 0, 0,        "",       "AREA", "process node the area figures are for, e.g. \"45nm\"") \
    K("area",   "source",             area_source,        CFG_TEXT, 0, 0,        "",       "AREA", "where the area numbers come from") \
    K("area",   "mac_i8_mm2",         a_mac_i8,           CFG_REAL, 0, 1e3,      "mm2",    "AREA", "one int8 MAC of the matrix unit (multiplier + int32 accumulate adder)") \
    K("area",   "mac_fp_mm2",         a_mac_fp,           CFG_REAL, 0, 1e3,      "mm2",    "AREA", "one fp16/bf16 MAC (fp32 accumulate); the array has rows x cols / f16_rate of them") \
    K("area",   "vec_lane_mm2",       a_vec_lane,         CFG_REAL, 0, 1e3,      "mm2",    "AREA", "one 32-bit vector lane") \
    K("area",   "lmem_mm2_per_mib",   a_lmem_mib,         CFG_REAL, 0, 1e4,      "mm2",    "AREA", "one MiB of LMEM (cells and periphery)") \
    K("area",   "sram_mm2_per_mib",   a_sram_mib,         CFG_REAL, 0, 1e4,      "mm2",    "AREA", "one MiB of cluster SRAM (cells and periphery)") \
    K("area",   "noc_mm2_per_cluster", a_noc_cluster,     CFG_REAL, 0, 1e4,      "mm2",    "AREA", "one cluster's NoC router and link") \
    K("area",   "dram_phy_mm2_per_channel", a_dram_phy,   CFG_REAL, 0, 1e4,      "mm2",    "AREA", "one DRAM channel's controller and PHY")

typedef struct AtlChip {
    char name[CFG_NAME_MAX];
    int clusters, cores_per_cluster;
    double freq_mhz;
    int mm_rows, mm_cols;
    int mm_rate_i8, mm_rate_f16, mm_rate_bf16, mm_rate_f32;
    int mm_weight_double_buffer, mm_issue_cycles;
    int vec_lanes, vec_transcendental_cycles, vec_issue_cycles;
    int lmem_bytes, lmem_banks, lmem_bank_width, lmem_bank_bytes_per_cycle, lmem_alignment;
    int sram_bytes, sram_ports, sram_bytes_per_cycle, sram_latency;
    int noc_bytes_per_cycle, noc_latency;
    int dram_bytes, dram_channels, dram_interleave;
    double dram_gbps, dram_latency_ns;
    int dma_burst_bytes, dma_issue_cycles, dma_lmem_bytes_per_cycle;
    int semaphores, barrier_cycles;
    char energy_source[CFG_TEXT_MAX];
    double e_mac_i8, e_mac_f16, e_mac_f32, e_vec_op, e_lmem_byte, e_sram_byte,
           e_noc_byte, e_dram_byte, e_static_mw_core;
    char area_node[CFG_NAME_MAX];
    char area_source[CFG_TEXT_MAX];
    double a_mac_i8, a_mac_fp, a_vec_lane, a_lmem_mib, a_sram_mib, a_noc_cluster, a_dram_phy;
    int has_area;               /* 1 when the config has an [area] section */
} AtlChip;

/* Loads and validates an INI file (at most CFG_FILE_MAX_BYTES; a UTF-8
 * byte order mark is skipped, lines may end in LF, CR LF or CR). Errors
 * read "FILE:LINE: message". */
#define CFG_FILE_MAX_BYTES ((uint64_t)1 << 20)
int cfg_load(const char *path, AtlChip *chip, AtlErr *e);
/* Same, from text in memory; `name` is used in messages. */
int cfg_parse(const char *name, const char *text, AtlChip *chip, AtlErr *e);
/* Cross-field checks (also run by cfg_load). */
int cfg_validate(const AtlChip *chip, const char *name, AtlErr *e);
/* FNV-1a 64 over the "FP" keys in table order (see CFG_KEYS). */
uint64_t cfg_fingerprint(const AtlChip *chip);

/* Derived figures. */
static inline int cfg_total_cores(const AtlChip *c) { return c->clusters * c->cores_per_cluster; }
double cfg_dram_bytes_per_cycle(const AtlChip *c);
double cfg_peak_ops_per_s(const AtlChip *c, int dtype); /* 2 ops per MAC, whole chip */

/* ---- additions (isa branch) ---- */
#include <stddef.h>
/* The CFG_KEYS table as an array, in table order (isa/config.c). */
typedef struct AtlCfgKey {
    const char *section, *key;
    AtlCfgType type;
    size_t offset, size;       /* of the AtlChip member */
    double min, max;           /* inclusive; unused for CFG_TEXT */
    const char *unit;          /* "bytes" and "MiB:1" mark byte counts (K/M/G suffixes allowed) */
    const char *scope;         /* "FP", "SIM" or "AREA" (optional section) */
    const char *doc;
} AtlCfgKey;
extern const AtlCfgKey cfg_keys[];
extern const int cfg_num_keys;
/* 1 if the key is a byte count (accepts K/M/G suffixes). */
int cfg_key_is_bytes(const AtlCfgKey *k);
/* The unit to print after a value ("" if none): "bytes" for byte counts,
 * "bytes/cycle" for the *_per_cycle ones. */
const char *cfg_key_unit(const AtlCfgKey *k);
/* The value of key k in c as INI text (%d, %.17g or the text). */
void cfg_format_value(const AtlChip *c, const AtlCfgKey *k, char *buf, size_t cap);
/* Sets key (an index into cfg_keys) of chip from INI value text, with the
 * loader's parsing and range check (not the cross-key rules: cfg_validate);
 * errors read "[section] key ..." without a location. */
int cfg_set_value(AtlChip *chip, int key, const char *text, AtlErr *e);
/* Index of [section] key in cfg_keys, -1 if unknown. */
int cfg_key_index(const char *section, const char *key);
/* Text of cfg_validate's i-th cross-key rule (markdown), NULL past the end. */
const char *cfg_rule_doc(int i);
#endif
