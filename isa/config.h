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

typedef enum { CFG_INT, CFG_REAL, CFG_TEXT, CFG_ENUM } AtlCfgType;

/* CFG_KEYS(K): K(section, key, member, type, min, max, unit, scope, default, doc)
 * A CFG_ENUM key is stored as an int, the index of its value in `unit`,
 * which lists the names separated by '|'. `default` is NULL for a required
 * key; otherwise the text a config that leaves the key out is read as (keys
 * added after the first configs were written default to the behaviour
 * those configs had).
 * "fingerprint" keys are those compiled code depends on (FP) vs. those only
 * the simulator's timing/energy use (SIM): the chip fingerprint in an .abm
 * hashes the FP keys, so a model compiled for one chip runs on a chip that
 * differs only in timing/energy parameters. AREA keys feed only the area
 * model (isa/area.h); their section [area] is optional as a whole (a config
 * without it has no area figure, has_area = 0), but a config that has the
 * section gives every key of it. */
#define CFG_KEYS(K) \
    K("chip",   "name",               name,               CFG_TEXT, 0, 0,        "",       "SIM", NULL, "a short name for reports") \
    K("chip",   "clusters",           clusters,           CFG_INT,  1, 64,       "",       "FP",  NULL, "number of clusters") \
    K("chip",   "cores_per_cluster",  cores_per_cluster,  CFG_INT,  1, 32,       "",       "FP",  NULL, "cores in each cluster") \
    K("chip",   "freq_mhz",           freq_mhz,           CFG_REAL, 1, 10000,    "MHz",    "SIM", NULL, "clock of cores, DMA and NoC") \
    K("matrix", "rows",               mm_rows,            CFG_INT,  1, 1024,     "",       "FP",  NULL, "systolic array rows (K direction, weights stationary)") \
    K("matrix", "cols",               mm_cols,            CFG_INT,  1, 1024,     "",       "FP",  NULL, "systolic array columns (N direction)") \
    K("matrix", "i8_rate",            mm_rate_i8,         CFG_INT,  1, 16,       "",       "SIM", NULL, "cycles per pass step for int8 (1 = full rate)") \
    K("matrix", "f16_rate",           mm_rate_f16,        CFG_INT,  1, 16,       "",       "SIM", NULL, "cycles per pass step for fp16 (2 = half rate)") \
    K("matrix", "bf16_rate",          mm_rate_bf16,       CFG_INT,  1, 16,       "",       "SIM", NULL, "cycles per pass step for bf16") \
    K("matrix", "f32_rate",           mm_rate_f32,        CFG_INT,  1, 16,       "",       "SIM", NULL, "cycles per pass step for fp32 (4 = quarter rate)") \
    K("matrix", "weight_double_buffer", mm_weight_double_buffer, CFG_INT, 0, 1,   "",       "SIM", NULL, "1: the next fold's weights load during the current fold") \
    K("matrix", "issue_cycles",       mm_issue_cycles,    CFG_INT,  0, 10000,    "cycles", "SIM", NULL, "fixed cost to start an mm/conv instruction") \
    K("matrix", "fold_overlap",       mm_fold_overlap,    CFG_INT,  0, 1,        "",       "SIM", "0", "1: the fill and drain of consecutive folds overlap (a pipelined array): each fold after the first costs max(m, R) cycles with weight_double_buffer, R + m without; 0: SCALE-Sim's formula") \
    K("vector", "lanes",              vec_lanes,          CFG_INT,  1, 4096,     "",       "FP",  NULL, "32-bit lanes: f32/i32 elements per cycle (16-bit x2, 8-bit x4)") \
    K("vector", "transcendental_cycles", vec_transcendental_cycles, CFG_INT, 1, 64, "cycles", "SIM", NULL, "cycles per lane-group for exp/log/tanh/sigmoid/gelu/recip/sqrt/rsqrt/trigonometric/hyperbolic/erf") \
    K("vector", "issue_cycles",       vec_issue_cycles,   CFG_INT,  0, 10000,    "cycles", "SIM", NULL, "fixed cost to start a vector instruction") \
    K("vector", "arith_cycles",       vec_arith_cycles,   CFG_INT,  1, 64,       "cycles", "SIM", "1", "cycles per lane-group for the add/mul class: add/sub/mul/mov/affine/relu/lrelu/clip/bitwise/floor/ceil/round/trunc/sign") \
    K("vector", "div_cycles",         vec_div_cycles,     CFG_INT,  1, 64,       "cycles", "SIM", "1", "cycles per lane-group for v.div and v.mod") \
    K("vector", "compare_cycles",     vec_compare_cycles, CFG_INT,  1, 64,       "cycles", "SIM", "1", "cycles per lane-group for v.eq/v.lt/v.le/v.max/v.min/v.sel") \
    K("vector", "reduce_cycles",      vec_reduce_cycles,  CFG_INT,  1, 64,       "cycles", "SIM", "1", "cycles per lane-group for reductions (v.rsum/rmax/rmin/rargmax/rargmin) and per window element of pooling") \
    K("lmem",   "bytes",              lmem_bytes,         CFG_INT,  4096, 1<<30, "bytes",  "FP",  NULL, "local memory per core") \
    K("lmem",   "banks",              lmem_banks,         CFG_INT,  1, 256,      "",       "FP",  NULL, "LMEM banks (interleaved by bank_width)") \
    K("lmem",   "bank_width",         lmem_bank_width,    CFG_INT,  1, 4096,     "bytes",  "FP",  NULL, "bytes per bank row; addresses interleave across banks at this granularity") \
    K("lmem",   "bank_bytes_per_cycle", lmem_bank_bytes_per_cycle, CFG_INT, 1, 4096, "bytes", "SIM", NULL, "bytes one bank serves per cycle") \
    K("lmem",   "alignment",          lmem_alignment,     CFG_INT,  1, 4096,     "bytes",  "FP",  NULL, "required alignment of mm/conv/vector operand addresses") \
    K("sram",   "bytes",              sram_bytes,         CFG_INT,  0, 1<<30,    "bytes",  "FP",  NULL, "shared SRAM per cluster") \
    K("sram",   "ports",              sram_ports,         CFG_INT,  1, 64,       "",       "SIM", NULL, "concurrent accesses the cluster SRAM serves") \
    K("sram",   "bytes_per_cycle",    sram_bytes_per_cycle, CFG_INT, 1, 4096,    "bytes",  "SIM", NULL, "bytes per cycle per port") \
    K("sram",   "latency_cycles",     sram_latency,       CFG_INT,  0, 10000,    "cycles", "SIM", NULL, "access latency") \
    K("noc",    "bytes_per_cycle",    noc_bytes_per_cycle, CFG_INT, 1, 4096,     "bytes",  "SIM", NULL, "each cluster's link to DRAM and other clusters, per direction") \
    K("noc",    "latency_cycles",     noc_latency,        CFG_INT,  0, 10000,    "cycles", "SIM", NULL, "link traversal latency") \
    K("noc",    "cluster_links",      noc_cluster_links,  CFG_INT,  0, 1,        "",       "FP",  "0", "1: links join the clusters (topology below) and a DMA may read or write another cluster's SRAM (a `peer@C:` operand), signalling semaphores of that cluster's cores; 0: each cluster's link reaches DRAM only") \
    K("noc",    "topology",           noc_topology,       CFG_ENUM, 0, 0, "ring|mesh", "SIM", "ring", "cluster_links = 1: ring, cluster i linked to i-1 and i+1 (mod clusters), the shorter way round (clockwise on a tie); mesh, a 2-D grid of mesh_cols columns (cluster i at column i % mesh_cols, row i / mesh_cols), routed along the row first, then the column") \
    K("noc",    "mesh_cols",          noc_mesh_cols,      CFG_INT,  0, 64,       "",       "SIM", "0", "topology = mesh: clusters per row (0: the divisor of clusters nearest its square root, the smaller on a tie)") \
    K("noc",    "link_bytes_per_cycle", noc_link_bytes_per_cycle, CFG_INT, 1, 4096, "bytes", "SIM", "64", "each cluster-to-cluster link, per direction") \
    K("noc",    "hop_cycles",         noc_hop_cycles,     CFG_INT,  0, 10000,    "cycles", "SIM", "4", "latency of one hop between neighbouring clusters (a peer transfer's path latency: hops x hop_cycles + the SRAM's)") \
    K("dram",   "bytes",              dram_bytes,         CFG_INT,  1<<20, 0x7fffffff, "MiB:1", "FP", NULL, "device DRAM size in bytes (max 2 GiB - 1)") \
    K("dram",   "channels",           dram_channels,      CFG_INT,  1, 64,       "",       "SIM", NULL, "independent channels, interleaved by interleave bytes (model = banked: by the address mapping)") \
    K("dram",   "interleave",         dram_interleave,    CFG_INT,  64, 1<<20,   "bytes",  "SIM", NULL, "channel interleaving granularity (model = flow)") \
    K("dram",   "gbps",               dram_gbps,          CFG_REAL, 0.001, 100000, "GB/s", "SIM", NULL, "total bandwidth over all channels (1 GB = 1e9 bytes); model = flow (in the simulator and the compiler's cost model)") \
    K("dram",   "latency_ns",         dram_latency_ns,    CFG_REAL, 0, 100000,   "ns",     "SIM", NULL, "access latency (model = flow, in the simulator and the compiler's cost model)") \
    K("dram",   "model",              dram_model,         CFG_ENUM, 0, 0, "flow|banked", "SIM", "flow", "flow: every channel a server of gbps/channels bytes per cycle after latency_ns; banked: the [dram_device] banks, rows and JEDEC timings behind an FR-FCFS controller per channel (docs/timing.md)") \
    K("dram",   "mapping",            dram_mapping,       CFG_ENUM, 0, 0, "RoBaRaCoCh|ChRaBaRoCo", "SIM", "RoBaRaCoCh", "banked: address bits to channel/rank/bank group/bank/row/column, named as Ramulator2 does (most significant field first)") \
    K("dram",   "page_policy",        dram_page_policy,   CFG_ENUM, 0, 0, "open|closed", "SIM", "open", "banked: open keeps a row open until another row of the bank is needed; closed precharges after the last queued access to the row") \
    K("dram",   "queue_depth",        dram_queue_depth,   CFG_INT,  1, 1024,     "",       "SIM", "32", "banked: requests each channel's read queue and write queue hold") \
    K("dram",   "write_high",         dram_write_high,    CFG_INT,  1, 100,      "%",      "SIM", "80", "banked: the controller turns to draining writes when the write queue is fuller than this (or no read waits)") \
    K("dram",   "write_low",          dram_write_low,     CFG_INT,  0, 99,       "%",      "SIM", "20", "banked: and back to reads when it is emptier than this (and a read waits)") \
    K("dram_device", "ranks",         dram_ranks,         CFG_INT,  1, 16,       "",       "SIM", "1", "ranks (or HBM pseudo channels) per channel") \
    K("dram_device", "rank_bus",      dram_rank_bus,      CFG_ENUM, 0, 0, "shared|own", "SIM", "shared", "shared: the ranks share the channel's data bus (a rank switch costs cs); own: each has its own (HBM pseudo channels)") \
    K("dram_device", "bankgroups",    dram_bankgroups,    CFG_INT,  1, 16,       "",       "SIM", "4", "bank groups per rank") \
    K("dram_device", "banks",         dram_banks,         CFG_INT,  1, 64,       "",       "SIM", "4", "banks per bank group") \
    K("dram_device", "rows",          dram_rows,          CFG_INT,  1, 1<<24,    "",       "SIM", "65536", "rows per bank") \
    K("dram_device", "row_bytes",     dram_row_bytes,     CFG_INT,  16, 1<<20,   "bytes",  "SIM", "8K", "bytes of one row across the channel (the page a row activation opens)") \
    K("dram_device", "access_bytes",  dram_access_bytes,  CFG_INT,  4, 4096,     "bytes",  "SIM", "64", "bytes one read or write command moves (channel width x burst length / 8)") \
    K("dram_device", "tck_ps",        dram_tck_ps,        CFG_INT,  1, 100000,   "ps",     "SIM", "625", "DRAM command clock period; every timing below counts these cycles") \
    K("dram_device", "bl",            dram_bl,            CFG_INT,  1, 64,       "cycles", "SIM", "4", "data bus cycles of one access (burst length / 2 for DDR)") \
    K("dram_device", "cl",            dram_cl,            CFG_INT,  1, 1000,     "cycles", "SIM", "22", "CAS latency: read command to first data") \
    K("dram_device", "cwl",           dram_cwl,           CFG_INT,  1, 1000,     "cycles", "SIM", "16", "CAS write latency: write command to first data") \
    K("dram_device", "rcd",           dram_rcd,           CFG_INT,  1, 1000,     "cycles", "SIM", "22", "tRCD: activate to read/write") \
    K("dram_device", "rp",            dram_rp,            CFG_INT,  1, 1000,     "cycles", "SIM", "22", "tRP: precharge to activate") \
    K("dram_device", "ras",           dram_ras,           CFG_INT,  1, 1000,     "cycles", "SIM", "52", "tRAS: activate to precharge") \
    K("dram_device", "rc",            dram_rc,            CFG_INT,  1, 2000,     "cycles", "SIM", "74", "tRC: activate to activate in one bank") \
    K("dram_device", "wr",            dram_wr,            CFG_INT,  1, 1000,     "cycles", "SIM", "24", "tWR: end of write data to precharge") \
    K("dram_device", "rtp",           dram_rtp,           CFG_INT,  1, 1000,     "cycles", "SIM", "12", "tRTP: read to precharge") \
    K("dram_device", "ccd_s",         dram_ccd_s,         CFG_INT,  1, 1000,     "cycles", "SIM", "4", "tCCD_S: column command to column command, different bank groups") \
    K("dram_device", "ccd_l",         dram_ccd_l,         CFG_INT,  1, 1000,     "cycles", "SIM", "8", "tCCD_L: column to column in the same bank group") \
    K("dram_device", "rrd_s",         dram_rrd_s,         CFG_INT,  1, 1000,     "cycles", "SIM", "4", "tRRD_S: activate to activate, different bank groups") \
    K("dram_device", "rrd_l",         dram_rrd_l,         CFG_INT,  1, 1000,     "cycles", "SIM", "8", "tRRD_L: activate to activate in the same bank group") \
    K("dram_device", "wtr_s",         dram_wtr_s,         CFG_INT,  1, 1000,     "cycles", "SIM", "4", "tWTR_S: end of write data to read, different bank groups") \
    K("dram_device", "wtr_l",         dram_wtr_l,         CFG_INT,  1, 1000,     "cycles", "SIM", "12", "tWTR_L: end of write data to read in the same bank group") \
    K("dram_device", "faw",           dram_faw,           CFG_INT,  1, 10000,    "cycles", "SIM", "34", "tFAW: window holding at most four activates of a rank") \
    K("dram_device", "rfc",           dram_rfc,           CFG_INT,  1, 100000,   "cycles", "SIM", "560", "tRFC: all-bank refresh to activate") \
    K("dram_device", "refi",          dram_refi,          CFG_INT,  0, 10000000, "cycles", "SIM", "12480", "tREFI: refresh interval of each rank (0: never refresh)") \
    K("dram_device", "cs",            dram_cs,            CFG_INT,  0, 1000,     "cycles", "SIM", "2", "rank switch: extra data bus cycles between accesses of different ranks (shared rank_bus)") \
    K("dram_device", "act_cycles",    dram_act_cycles,    CFG_INT,  1, 8,        "cycles", "SIM", "1", "command bus cycles an activate takes (2 for the two-part activates of LPDDR5 and HBM)") \
    K("dma",    "burst_bytes",        dma_burst_bytes,    CFG_INT,  16, 1<<20,   "bytes",  "SIM", NULL, "DMA transfers are cut into bursts of this size") \
    K("dma",    "issue_cycles",       dma_issue_cycles,   CFG_INT,  0, 10000,    "cycles", "SIM", NULL, "fixed cost to start a DMA instruction") \
    K("dma",    "lmem_bytes_per_cycle", dma_lmem_bytes_per_cycle, CFG_INT, 1, 4096, "bytes", "SIM", NULL, "DMA engine's own port width into LMEM") \
    K("sync",   "semaphores",         semaphores,         CFG_INT,  1, 32,       "",       "FP",  NULL, "semaphores per core") \
    K("sync",   "barrier_cycles",     barrier_cycles,     CFG_INT,  0, 100000,   "cycles", "SIM", NULL, "latency from the last arrival to release") \
    K("energy", "source",             energy_source,      CFG_TEXT, 0, 0,        "",       "SIM", NULL, "where the energy numbers come from") \
    K("energy", "mac_i8_pj",          e_mac_i8,           CFG_REAL, 0, 1e6,      "pJ",     "SIM", NULL, "one int8 multiply-accumulate") \
    K("energy", "mac_f16_pj",         e_mac_f16,          CFG_REAL, 0, 1e6,      "pJ",     "SIM", NULL, "one fp16/bf16 multiply-accumulate") \
    K("energy", "mac_f32_pj",         e_mac_f32,          CFG_REAL, 0, 1e6,      "pJ",     "SIM", NULL, "one fp32 multiply-accumulate") \
    K("energy", "vec_op_pj",          e_vec_op,           CFG_REAL, 0, 1e6,      "pJ",     "SIM", NULL, "one 32-bit vector lane operation") \
    K("energy", "lmem_byte_pj",       e_lmem_byte,        CFG_REAL, 0, 1e6,      "pJ",     "SIM", NULL, "one byte read or written in LMEM") \
    K("energy", "sram_byte_pj",       e_sram_byte,        CFG_REAL, 0, 1e6,      "pJ",     "SIM", NULL, "one byte read or written in cluster SRAM") \
    K("energy", "noc_byte_pj",        e_noc_byte,         CFG_REAL, 0, 1e6,      "pJ",     "SIM", NULL, "one byte across a NoC link") \
    K("energy", "dram_byte_pj",       e_dram_byte,        CFG_REAL, 0, 1e6,      "pJ",     "SIM", NULL, "one byte read or written in DRAM") \
    K("energy", "static_mw_per_core", e_static_mw_core,   CFG_REAL, 0, 1e6,      "mW",     "SIM", NULL, "leakage and clock power of one core, charged for the whole run") \
    K("area",   "node",               area_node,          CFG_TEXT, 0, 0,        "",       "AREA", NULL, "process node the area figures are for, e.g. \"45nm\"") \
    K("area",   "source",             area_source,        CFG_TEXT, 0, 0,        "",       "AREA", NULL, "where the area numbers come from") \
    K("area",   "mac_i8_mm2",         a_mac_i8,           CFG_REAL, 0, 1e3,      "mm2",    "AREA", NULL, "one int8 MAC of the matrix unit (multiplier + int32 accumulate adder)") \
    K("area",   "mac_fp_mm2",         a_mac_fp,           CFG_REAL, 0, 1e3,      "mm2",    "AREA", NULL, "one fp16/bf16 MAC (fp32 accumulate); the array has rows x cols / f16_rate of them") \
    K("area",   "vec_lane_mm2",       a_vec_lane,         CFG_REAL, 0, 1e3,      "mm2",    "AREA", NULL, "one 32-bit vector lane") \
    K("area",   "lmem_mm2_per_mib",   a_lmem_mib,         CFG_REAL, 0, 1e4,      "mm2",    "AREA", NULL, "one MiB of LMEM (cells and periphery)") \
    K("area",   "sram_mm2_per_mib",   a_sram_mib,         CFG_REAL, 0, 1e4,      "mm2",    "AREA", NULL, "one MiB of cluster SRAM (cells and periphery)") \
    K("area",   "noc_mm2_per_cluster", a_noc_cluster,     CFG_REAL, 0, 1e4,      "mm2",    "AREA", NULL, "one cluster's NoC router and link") \
    K("area",   "dram_phy_mm2_per_channel", a_dram_phy,   CFG_REAL, 0, 1e4,      "mm2",    "AREA", NULL, "one DRAM channel's controller and PHY")

typedef struct AtlChip {
    char name[CFG_NAME_MAX];
    int clusters, cores_per_cluster;
    double freq_mhz;
    int mm_rows, mm_cols;
    int mm_rate_i8, mm_rate_f16, mm_rate_bf16, mm_rate_f32;
    int mm_weight_double_buffer, mm_issue_cycles, mm_fold_overlap;
    int vec_lanes, vec_transcendental_cycles, vec_issue_cycles;
    int vec_arith_cycles, vec_div_cycles, vec_compare_cycles, vec_reduce_cycles;
    int lmem_bytes, lmem_banks, lmem_bank_width, lmem_bank_bytes_per_cycle, lmem_alignment;
    int sram_bytes, sram_ports, sram_bytes_per_cycle, sram_latency;
    int noc_bytes_per_cycle, noc_latency;
    int noc_cluster_links, noc_topology, noc_mesh_cols, noc_link_bytes_per_cycle, noc_hop_cycles;
    int dram_bytes, dram_channels, dram_interleave;
    double dram_gbps, dram_latency_ns;
    int dram_model, dram_mapping, dram_page_policy, dram_queue_depth, dram_write_high, dram_write_low;
    int dram_ranks, dram_rank_bus, dram_bankgroups, dram_banks, dram_rows, dram_row_bytes, dram_access_bytes;
    int dram_tck_ps, dram_bl, dram_cl, dram_cwl, dram_rcd, dram_rp, dram_ras, dram_rc, dram_wr, dram_rtp;
    int dram_ccd_s, dram_ccd_l, dram_rrd_s, dram_rrd_l, dram_wtr_s, dram_wtr_l, dram_faw, dram_rfc, dram_refi, dram_cs;
    int dram_act_cycles;
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

/* Values of the CFG_ENUM keys (their index in the key's unit list). */
enum { CFG_DRAM_FLOW, CFG_DRAM_BANKED };
enum { CFG_MAP_ROBARACOCH, CFG_MAP_CHRABAROCO };
enum { CFG_PAGE_OPEN, CFG_PAGE_CLOSED };
enum { CFG_RANK_BUS_SHARED, CFG_RANK_BUS_OWN };
enum { CFG_NOC_RING, CFG_NOC_MESH };

/* Loads and validates an INI file (at most CFG_FILE_MAX_BYTES; a UTF-8
 * byte order mark is skipped, lines may end in LF, CR LF or CR). Errors
 * read "FILE:LINE: message". */
#define CFG_FILE_MAX_BYTES ((uint64_t)1 << 20)
int cfg_load(const char *path, AtlChip *chip, AtlErr *e);
/* Same, from text in memory; `name` is used in messages. */
int cfg_parse(const char *name, const char *text, AtlChip *chip, AtlErr *e);
/* Sets every key that has a default to it, leaving the others as they are
 * (for chips filled in C: a config file gets its defaults from cfg_parse). */
void cfg_set_defaults(AtlChip *chip);
/* Sets one key from its INI text, range-checked (cross-key rules are
 * cfg_validate's). For sweeps and variants built from a loaded config.
 * cfg_set_value takes the key's index into cfg_keys; errors read
 * "[section] key ..." without a location. */
int cfg_set(AtlChip *chip, const char *section, const char *key, const char *value, AtlErr *e);
int cfg_set_value(AtlChip *chip, int key, const char *text, AtlErr *e);
/* Cross-field checks (also run by cfg_load). */
int cfg_validate(const AtlChip *chip, const char *name, AtlErr *e);
/* FNV-1a 64 over the "FP" keys in table order (see CFG_KEYS); an FP key
 * that has a default (added after the first configs) counts only when it
 * differs from it, so configs that leave it out keep their fingerprint. */
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
    const char *scope;         /* "FP" or "SIM" */
    const char *def;           /* default value as INI text; NULL: required */ \

    const char *doc;
} AtlCfgKey;
extern const AtlCfgKey cfg_keys[];
extern const int cfg_num_keys;
/* 1 if the key is a byte count (accepts K/M/G suffixes). */
int cfg_key_is_bytes(const AtlCfgKey *k);
/* The unit to print after a value ("" if none): "bytes" for byte counts,
 * "bytes/cycle" for the *_per_cycle ones. */
const char *cfg_key_unit(const AtlCfgKey *k);
/* The value of key k in c as INI text (%d, %.17g, the text or the enum name). */
void cfg_format_value(const AtlChip *c, const AtlCfgKey *k, char *buf, size_t cap);
/* Number of names of an enum key (cfg_format_value prints a value's name). */
int cfg_enum_count(const AtlCfgKey *k); \

/* Index of [section] key in cfg_keys, -1 if unknown. */
int cfg_key_index(const char *section, const char *key);
/* Text of cfg_validate's i-th cross-key rule (markdown), NULL past the end. */
const char *cfg_rule_doc(int i);
#endif
