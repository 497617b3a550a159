/* abm.h - the Atoll binary model container (.abm): format constants, the
 * zero-copy reader (AbmView), the host-side writer (AbmWriter) and the host
 * loaded form (AbmModel).
 *
 * The byte layout is specified in docs/abm-format.md; this header only
 * mirrors it. Three users, three layers:
 *   - the firmware parses a model that sits in its memory with abm_open +
 *     abm_decode (isa/abm_read.c): no malloc, no stdio, every field checked
 *     before use; compressed sections are inflated into a scratch buffer the
 *     caller provides;
 *   - the compiler builds a model with the AbmWriter (isa/abm_write.c) and
 *     serialises it or writes it atomically to a file;
 *   - host tools use abm_load_file (isa/abm_load.c), which reads, validates
 *     and decompresses everything into owned memory.
 */
#ifndef ATOLL_ISA_ABM_H
#define ATOLL_ISA_ABM_H
#include <stddef.h>
#include <stdint.h>
#include "util/err.h"

#define ABM_MAGIC "ATOLLABM"          /* 8 bytes, no NUL in the file */
#define ABM_VERSION_MAJOR 1
#define ABM_VERSION_MINOR 0           /* files without the optional sections */
#define ABM_VERSION_MINOR_LAYERS 1    /* files with a layers section (1.1) */
#define ABM_VERSION_MINOR_STAGES 2    /* files with a stages section (1.2), layers or not */
#define ABM_HEADER_BYTES 64
#define ABM_SECTION_ENTRY_BYTES 40
#define ABM_ALIGN 64                  /* sections, streams and weight blobs */
#define ABM_INSN_BYTES 64             /* one instruction record (isa/isa.h) */
#define ABM_MAX_DIMS 6
#define ABM_MAX_SECTIONS 64
#define ABM_MAX_CORES 65536
#define ABM_NO_BLOB 0xFFFFFFFFu
#define ABM_HASH_BYTES 32             /* metadata: source model hash */
#define ABM_INFLATE_WORK_BYTES (64 * 1024) /* zlib state + window, in scratch */
#define ABM_ZLIB_MAX_RATIO 1032u      /* deflate cannot expand data further */

/* Record sizes of the table sections (bytes). */
#define ABM_NET_BYTES 16
#define ABM_VARIANT_BYTES 48
#define ABM_TENSOR_BYTES 64
#define ABM_QUANT_BYTES 8
#define ABM_STREAM_BYTES 16
#define ABM_BLOB_BYTES 48
#define ABM_META_BYTES 40
#define ABM_LAYER_BYTES 64            /* layers section: one row */
#define ABM_LAYERS_HEADER_BYTES 16    /* layers section: rows, row size, reserved */
#define ABM_STAGE_BYTES 64            /* stages section: one row */
#define ABM_STAGES_HEADER_BYTES 16    /* stages section: rows, row size, reserved */

/* Header flags. Unknown bits are rejected. */
#define ABM_FLAG_COMBINED 0x1u        /* produced by merging several files */
#define ABM_FLAGS_KNOWN   0x1u

typedef enum AbmSectionType {
    ABM_SEC_STRINGS = 1,
    ABM_SEC_NETS = 2,
    ABM_SEC_VARIANTS = 3,
    ABM_SEC_TENSORS = 4,
    ABM_SEC_QUANT = 5,
    ABM_SEC_STREAMS = 6,
    ABM_SEC_CMDS = 7,
    ABM_SEC_WEIGHT_DIR = 8,
    ABM_SEC_WEIGHT_DATA = 9,
    ABM_SEC_META = 10,
    ABM_SEC_LAYERS = 11,              /* optional: the compiler's per-layer table */
    ABM_SEC_STAGES = 12,              /* optional: the stages of staged variants */
    ABM_SEC_LIMIT = 13                /* one past the last known type */
} AbmSectionType;

typedef enum AbmCompression { ABM_COMP_NONE = 0, ABM_COMP_ZLIB = 1 } AbmCompression;
typedef enum AbmEngine { ABM_ENGINE_DMA = 0, ABM_ENGINE_MATRIX = 1, ABM_ENGINE_VECTOR = 2, ABM_ENGINES = 3 } AbmEngine;
typedef enum AbmDtype {
    ABM_DTYPE_INT8 = 0, ABM_DTYPE_UINT8 = 1, ABM_DTYPE_INT16 = 2, ABM_DTYPE_INT32 = 3,
    ABM_DTYPE_FP16 = 4, ABM_DTYPE_BF16 = 5, ABM_DTYPE_FP32 = 6, ABM_DTYPE_COUNT = 7
} AbmDtype;
typedef enum AbmRole { ABM_ROLE_INPUT = 0, ABM_ROLE_OUTPUT = 1, ABM_ROLE_WEIGHT = 2, ABM_ROLE_ACTIVATION = 3, ABM_ROLE_COUNT = 4 } AbmRole;
typedef enum AbmRegion { ABM_REGION_WEIGHTS = 0, ABM_REGION_ACTIVATIONS = 1, ABM_REGION_IO = 2, ABM_REGION_COUNT = 3 } AbmRegion;
typedef enum AbmLayout { ABM_LAYOUT_ROW_MAJOR = 0, ABM_LAYOUT_NCHW = 1, ABM_LAYOUT_NHWC = 2, ABM_LAYOUT_OPAQUE = 3, ABM_LAYOUT_COUNT = 4 } AbmLayout;
typedef enum AbmQuantKind { ABM_QUANT_NONE = 0, ABM_QUANT_PER_TENSOR = 1, ABM_QUANT_PER_CHANNEL = 2, ABM_QUANT_KIND_COUNT = 3 } AbmQuantKind;

/* Names for messages and tools; "?" for out-of-range values. */
const char *abm_section_name(uint32_t type);
const char *abm_dtype_name(uint32_t dtype);
const char *abm_role_name(uint32_t role);
const char *abm_region_name(uint32_t region);
const char *abm_layout_name(uint32_t layout);
const char *abm_engine_name(uint32_t engine);
/* The DRAM region a tensor of this role lives in (ABM_REGION_COUNT if unknown). */
uint32_t abm_role_region(uint32_t role);
/* Bytes per element, 0 for an unknown dtype. */
uint32_t abm_dtype_bytes(uint32_t dtype);

/* ---- reader (freestanding: no malloc, no stdio) ---- */

/* abm_open flags */
#define ABM_OPEN_IGNORE_CRC 0x1u  /* record CRC mismatches instead of failing */
#define ABM_OPEN_SKIP_WEIGHT_CRC 0x2u /* do not checksum weight_data (a loader that never
                                         reads the weights: timing-only devices) */

typedef struct AbmSection {
    uint32_t type, compression;
    uint64_t offset, stored_size, raw_size;
    uint32_t crc32;
    int crc_ok;                   /* stored bytes match crc32 */
    const uint8_t *data;          /* raw (decompressed) bytes, after abm_decode;
                                     NULL for a compressed section of unknown type */
} AbmSection;

typedef struct AbmView {
    const uint8_t *buf;
    uint64_t size;                /* = header file_size */
    unsigned flags_open;
    uint16_t version_major, version_minor;
    uint32_t flags;
    uint64_t chip_fingerprint;
    uint32_t section_count;
    AbmSection sec[ABM_MAX_SECTIONS];
    int by_type[ABM_SEC_LIMIT];   /* index into sec[], -1 if absent */
    int header_crc_ok, table_crc_ok;
    uint32_t bad_crcs;            /* header + table + sections with a bad CRC */
    uint64_t scratch_needed;      /* bytes abm_decode needs from the caller */
    uint8_t *work;                /* inflate workspace inside the scratch */
    int decoded;
    /* after abm_decode: record counts and raw section bytes */
    uint32_t n_nets, n_variants, n_tensors, n_quant, n_streams, n_blobs, n_layers, n_stages;
    uint64_t strings_size, cmds_size, wdata_size;
    const uint8_t *strings, *nets, *variants, *tensors, *quant, *streams, *cmds, *wdir, *wdata, *meta, *layers;
    const uint8_t *layer_strings; /* the layers section's own strings */
    uint64_t layer_strings_size;
    const uint8_t *stages, *stage_strings; /* the stages section's rows and own strings */
    uint64_t stage_strings_size;
    uint64_t weight_bytes;        /* size of the DRAM weight region */
} AbmView;

/* Parses and checks header and section table, and the CRC of every section.
 * expect_chip: 0 accepts any chip fingerprint. Sets v->scratch_needed. */
int abm_open(AbmView *v, const void *buf, size_t len, uint64_t expect_chip, unsigned flags, AtlErr *e);
/* Inflates compressed sections into scratch (>= v->scratch_needed bytes;
 * the views then point into it, so it must outlive v) and validates every
 * record and cross reference. */
int abm_decode(AbmView *v, void *scratch, size_t scratch_len, AtlErr *e);

typedef struct AbmNet { const char *name; uint32_t first_variant, variant_count; } AbmNet;
typedef struct AbmVariant {
    uint32_t net, batch, tensor_first, tensor_count, stream_first, stream_count, core_count;
    uint64_t activation_bytes, io_bytes;  /* the variant's memory plan */
} AbmVariant;
typedef struct AbmTensor {
    const char *name;
    uint32_t dtype, role, region, layout, ndim, quant_kind, quant_axis, blob;
    uint32_t dims[ABM_MAX_DIMS];
    uint64_t offset, size;        /* inside the tensor's DRAM region */
    uint32_t quant_first, quant_count;
} AbmTensor;
typedef struct AbmQuant { float scale; int32_t zero_point; } AbmQuant;
typedef struct AbmStream { const uint8_t *data; uint64_t size; uint64_t offset; } AbmStream;
typedef struct AbmBlob {
    uint64_t dram_offset, raw_size, data_offset, stored_size;
    uint32_t compression, crc32;
    uint64_t hash;
    const uint8_t *stored;        /* stored bytes inside the file */
} AbmBlob;
typedef struct AbmMeta { const char *producer, *options; const uint8_t *source_hash; } AbmMeta;
/* One row of the optional layers section: what the compiler knew of a
 * layer of a variant (its name and op, how it was split, the cost model's
 * estimate), for per-layer reports next to the simulated cycles. */
#define ABM_LAYER_MATRIX 0x1u         /* flags: a matrix-unit layer (conv, matmul) */
typedef struct AbmLayer {
    uint32_t variant, layer;            /* global variant index; the layer id of its instructions */
    const char *name, *op, *split;
    uint32_t tiles, cores, flags;
    uint64_t macs, est_cycles, est_compute, est_dma;
} AbmLayer;

/* One row of the optional stages section: a stage of a staged variant
 * (docs/backend.md, "Staged schedules"), so that profiles can report per
 * stage. Its layer ids are first_layer .. first_layer + layers - 1. */
typedef struct AbmStage {
    uint32_t variant, stage;            /* global variant index; the stage's index in it (0, 1, ...) */
    uint32_t first_layer, layers;       /* the layer ids of its instructions */
    uint32_t micro_batch, instances;    /* images per instance; instances over the whole batch */
    uint32_t cores;                     /* cores that run it */
    const char *input;                  /* the tensor it reads from the stage before ("" for stage 0) */
    uint64_t macs;                      /* useful multiply-accumulates, whole batch */
    uint64_t mat_cycles;                /* matrix-unit cycles those MACs need at the peak of their
                                           dtype, summed over cores (MACs x rate / (rows x cols)) */
    uint64_t est_cycles;                /* the cost model's cycles of the stage (busiest cluster) */
    uint32_t dram_tensors;              /* its intermediate tensors in DRAM, per instance */
} AbmStage;

/* Accessors for a decoded view; the index must be below the matching count. */
AbmNet abm_net(const AbmView *v, uint32_t i);
AbmVariant abm_variant(const AbmView *v, uint32_t i);
AbmTensor abm_tensor(const AbmView *v, uint32_t i);
AbmQuant abm_quant(const AbmView *v, uint32_t i);
/* Stream of (variant, core, engine); core < core_count, engine < ABM_ENGINES. */
AbmStream abm_stream(const AbmView *v, uint32_t variant, uint32_t core, uint32_t engine);
AbmBlob abm_blob(const AbmView *v, uint32_t i);
AbmMeta abm_meta(const AbmView *v);
/* Layer row i < v->n_layers (0 rows when the file has no layers section). */
AbmLayer abm_layer(const AbmView *v, uint32_t i);
/* Stage row i < v->n_stages (0 rows when the file has no stages section). */
AbmStage abm_stage(const AbmView *v, uint32_t i);
/* Points v's layer fields at a layers section's raw bytes and checks them
 * (rows, strings, variants below v->n_variants, flags); abm_decode does this
 * for a whole file, a host reading the section alone calls it directly. */
int abm_layers_view(AbmView *v, const uint8_t *raw, uint64_t n, AtlErr *e);
/* The same for a stages section's raw bytes (rows in variant order, each
 * variant's stages numbered from 0 over growing, disjoint layer ranges). */
int abm_stages_view(AbmView *v, const uint8_t *raw, uint64_t n, AtlErr *e);

/* The optional sections (layers, stages) hold only what host tools show:
 * they are placed last, with their own strings, so that the file without
 * them is byte for byte the file without those rows (a layers section only
 * with --layer-info; a stages section only for staged variants). Given the
 * header and section table (n bytes from the start of a file),
 * abm_required_size gives the size of that file (its file_size when there
 * are no such trailing sections), and abm_drop_optional rewrites the
 * header and table in place to describe it (section count, minor version,
 * file_size, CRCs). The host loads that prefix into the device, so a model
 * runs with the same placement and cycles whichever way it was compiled.
 * 0, or -1 when the bytes are not an intact header and table. */
int abm_required_size(const uint8_t *head, size_t n, uint64_t *size);
int abm_drop_optional(uint8_t *head, size_t n);
/* The section table entry of type in the header and table head (n bytes),
 * NULL when absent or the header or table is damaged (host only). */
const uint8_t *abm_find_entry(const uint8_t *head, size_t n, uint32_t type);
/* The raw bytes of a section from its table entry and its stored bytes:
 * CRC checked, inflated when compressed; malloc'd (the caller frees). NULL
 * with e set (naming `what`) on a bad entry, CRC or stream. */
uint8_t *abm_entry_raw(const uint8_t *entry, const uint8_t *stored, uint64_t *raw_n, const char *what, AtlErr *e);
/* Copies or inflates blob i into dst (>= raw_size bytes), checks its CRC.
 * Uses the view's inflate workspace: one call at a time per view. */
int abm_blob_read(const AbmView *v, uint32_t i, void *dst, uint64_t dst_len, AtlErr *e);
/* Index of the net named name, or -1. */
int abm_find_net(const AbmView *v, const char *name);
/* Global index of net's first variant compiled for batch, or -1. */
int abm_find_variant(const AbmView *v, uint32_t net, uint32_t batch);
/* Global index of the tensor called name in variant, or -1. */
int abm_find_tensor(const AbmView *v, uint32_t variant, const char *name);

/* 64-bit FNV-1a content hash used for weight dedup. */
uint64_t abm_hash64(const void *data, uint64_t len);
/* zlib CRC-32 over any length. */
uint32_t abm_crc32(const void *data, uint64_t len);

/* ---- host loaded form ---- */

#define ABM_LOAD_SKIP_WEIGHTS 0x100u  /* abm_load_*: do not inflate weights */

typedef struct AbmModel {
    AbmView view;
    uint8_t *file;                /* owned copy of the file bytes */
    uint8_t *scratch;             /* owned decode scratch */
    uint8_t *weights;             /* owned DRAM weight image, weight_bytes long */
    uint64_t weight_bytes;
} AbmModel;

/* flags: ABM_OPEN_* | ABM_LOAD_*. On failure m is left empty (free-able). */
int abm_load_buffer(AbmModel *m, const void *buf, size_t len, uint64_t expect_chip, unsigned flags, AtlErr *e);
int abm_load_file(AbmModel *m, const char *path, uint64_t expect_chip, unsigned flags, AtlErr *e);
void abm_model_free(AbmModel *m);
/* What a host may inflate from an opened file before it allocates: the
 * decoded sections (scratch_needed) at most atl_limit(ATL_LIMIT_ABM_DECODE_BYTES),
 * the weight region and every blob at most ABM_HOST_MAX_WEIGHT_BYTES (no
 * chip's DRAM holds more). abm_load_* check it; so does `atoll inspect`. */
#define ABM_HOST_MAX_WEIGHT_BYTES 0x7fffffffull
int abm_check_host_limits(const AbmView *v, AtlErr *e);

/* The chip fingerprint and the compiler options (metadata) of an .abm
 * file, reading only its header, section table, meta and strings sections
 * (CRCs checked); options is truncated to cap bytes. Host only. */
int abm_file_info(const char *path, uint64_t *fingerprint, char *options, size_t cap, AtlErr *e);
/* The chip name in compiler options ("--chip NAME ..."): 0 and name set,
 * -1 when the options name none. */
int abm_options_chip(const char *options, char *name, size_t cap);

/* ---- writer (host) ---- */

typedef struct AbmWriter AbmWriter;

typedef struct AbmTensorDesc {
    const char *name;
    uint32_t dtype, role, region, layout, ndim;
    uint32_t dims[ABM_MAX_DIMS];
    uint64_t offset;              /* weights: an offset returned by abm_add_weight (+ inside) */
    uint64_t size;                /* 0: dense size from dims and dtype */
    uint32_t quant_kind, quant_axis, quant_count;
    const float *scale;           /* quant_count entries */
    const int32_t *zero_point;    /* quant_count entries, NULL for all 0 */
} AbmTensorDesc;

/* NULL when out of memory. The caller frees with abm_writer_free. */
AbmWriter *abm_writer_new(uint64_t chip_fingerprint);
void abm_writer_free(AbmWriter *w);
/* zlib level for weights and sections (default 6; 0 stores everything raw). */
void abm_writer_set_level(AbmWriter *w, int level);
void abm_writer_set_flags(AbmWriter *w, uint32_t flags);
uint64_t abm_writer_chip(const AbmWriter *w);
uint32_t abm_writer_variant_count(const AbmWriter *w);
int abm_writer_has_metadata(const AbmWriter *w);
/* 0 and *net set when a net of that name exists, else -1. */
int abm_writer_find_net(const AbmWriter *w, const char *name, uint32_t *net);
int abm_add_net(AbmWriter *w, const char *name, uint32_t *net, AtlErr *e);
int abm_add_variant(AbmWriter *w, uint32_t net, uint32_t batch, uint32_t core_count, uint32_t *variant, AtlErr *e);
int abm_add_tensor(AbmWriter *w, uint32_t variant, const AbmTensorDesc *t, uint32_t *tensor, AtlErr *e);
int abm_set_stream(AbmWriter *w, uint32_t variant, uint32_t core, uint32_t engine, const void *bytes, size_t len, AtlErr *e);
/* Adds a weight blob; *offset is its place in the DRAM weight region.
 * Identical contents are stored once and get the same offset. */
int abm_add_weight(AbmWriter *w, const void *data, size_t len, uint64_t *offset, AtlErr *e);
/* The same for a malloc'd blob the writer takes over (no copy): it keeps
 * or frees data whatever the outcome; the caller must not touch it again. */
int abm_add_weight_take(AbmWriter *w, void *data, size_t len, uint64_t *offset, AtlErr *e);
int abm_set_mem_plan(AbmWriter *w, uint32_t variant, uint64_t activation_bytes, uint64_t io_bytes, AtlErr *e);
int abm_set_metadata(AbmWriter *w, const char *producer, const char *options, const uint8_t hash[ABM_HASH_BYTES], AtlErr *e);
/* Adds a row of the optional layers section for variant (l->variant is
 * ignored). A file gets the section (and version 1.1) only when a row was
 * added, so the bytes of every other file stay as they were. */
int abm_add_layer(AbmWriter *w, uint32_t variant, const AbmLayer *l, AtlErr *e);
/* Adds the next stage row of the optional stages section for variant
 * (s->variant and s->stage are ignored: stages are numbered in the order
 * added). The same rule: the section (and version 1.2) only with rows. */
int abm_add_stage(AbmWriter *w, uint32_t variant, const AbmStage *s, AtlErr *e);
/* Statistics after abm_add_weight calls. */
void abm_writer_weight_stats(const AbmWriter *w, uint64_t *blobs, uint64_t *raw_bytes, uint64_t *stored_bytes, uint64_t *dedup_hits);
/* Serialises (and re-validates) the model; *buf is malloc'd, caller frees.
 * Fails on a net without variants and on two variants of one net with the same
 * batch and input shapes (a runtime could not tell them apart). */
int abm_serialize(AbmWriter *w, uint8_t **buf, size_t *len, AtlErr *e);
int abm_write_file(AbmWriter *w, const char *path, AtlErr *e);
/* Adds every net and variant of a decoded view (weights deduplicated against
 * what w already holds). Fails on a different chip fingerprint or a variant
 * that w already has (same net name, batch and input shapes). */
int abm_writer_merge(AbmWriter *w, const AbmView *v, AtlErr *e);
#endif
