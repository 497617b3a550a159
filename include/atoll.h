/* atoll.h - the Atoll host runtime API: open a (simulated) device, load a
 * compiled model (.abm), list its nets, variants and tensors, run it with host
 * buffers, read outputs and the profile.
 *
 * The host writes the model into device memory and talks to the firmware on
 * the device's control processor through the mailbox registers; the
 * firmware validates and relocates the model, launches the cores and posts
 * results. See docs/firmware.md for a walkthrough.
 *
 * Every call returns an AtlStatus (ATL_OK = 0); after a failure,
 * atl_last_error(dev) gives the message. Codes 1..99 are the firmware's
 * (the same numbers as MB_ERROR, docs/registers.md), 100 and above the
 * host's. Handles are not thread-safe; use one device per thread.
 */
#ifndef ATOLL_H
#define ATOLL_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum AtlStatus {
    ATL_OK = 0,
    /* reported by the firmware */
    ATL_ERR_BAD_COMMAND = 1, ATL_ERR_BAD_ARG = 2, ATL_ERR_NO_MEMORY = 3, ATL_ERR_NO_DRAM = 4,
    ATL_ERR_BAD_IMAGE = 5, ATL_ERR_VERSION = 6, ATL_ERR_CHIP = 7, ATL_ERR_CHECKSUM = 8, ATL_ERR_RELOC = 9,
    ATL_ERR_TOO_MANY = 10, ATL_ERR_BAD_HANDLE = 11, ATL_ERR_UNKNOWN_NET = 12, ATL_ERR_UNKNOWN_VARIANT = 13,
    ATL_ERR_CORES = 14, ATL_ERR_FAULT = 15, ATL_ERR_HANG = 16,
    /* reported by the host library */
    ATL_ERR_INVALID = 100,      /* bad argument to an API call */
    ATL_ERR_IO = 101,           /* a file could not be read */
    ATL_ERR_CONFIG = 102,       /* the chip description is invalid */
    ATL_ERR_HOST_MEMORY = 103,  /* host out of memory */
    ATL_ERR_NO_VARIANT = 104,     /* no variant of the net takes inputs of these shapes */
    ATL_ERR_UNKNOWN_TENSOR = 105, /* no input/output of that name */
    ATL_ERR_SIZE = 106,         /* a buffer does not have the tensor's size */
    ATL_ERR_NOT_RUN = 107       /* outputs or profile asked before a successful run */
} AtlStatus;

/* Element types: the first seven are the .abm numbering (a model's tensors
 * have one of them); the others occur in host arrays (.npy files). */
enum {
    ATL_INT8 = 0, ATL_UINT8 = 1, ATL_INT16 = 2, ATL_INT32 = 3, ATL_FP16 = 4, ATL_BF16 = 5, ATL_FP32 = 6,
    ATL_FP64 = 7, ATL_INT64 = 8, ATL_BOOL = 9, ATL_UINT16 = 10, ATL_UINT32 = 11, ATL_UINT64 = 12,
    ATL_NUM_DTYPES = 13
};
/* Tensor roles (the .abm numbering). */
enum { ATL_ROLE_INPUT = 0, ATL_ROLE_OUTPUT = 1, ATL_ROLE_WEIGHT = 2, ATL_ROLE_ACTIVATION = 3 };

#define ATL_MAX_DIMS 6
#define ATL_ENGINES 3             /* 0 dma, 1 matrix, 2 vector */

typedef struct AtlDevice AtlDevice;
typedef struct AtlModel AtlModel;
struct AtlChip;                   /* isa/config.h */

typedef struct AtlTensorInfo {
    const char *name;
    int role;                     /* ATL_ROLE_INPUT ... */
    int dtype;                    /* ATL_INT8 ... */
    int ndim;
    uint32_t dims[ATL_MAX_DIMS];
    uint64_t bytes;               /* size in device memory */
    uint32_t quant_count;         /* 0 none, 1 per tensor, else per channel */
    float scale;                  /* first quantisation entry (1 and 0 when none) */
    int32_t zero_point;
    uint64_t device_addr;         /* where it lives in device DRAM */
} AtlTensorInfo;

/* What the compiler recorded of one layer of a variant (`atoll compile
 * --layer-info`): its node's name and op, how its output was split, and the
 * cost model's estimate, to put next to the simulated per-layer profile. */
typedef struct AtlLayerInfo {
    uint32_t layer;               /* the id AtlLayerProfile.layer has */
    const char *name, *op, *split;
    uint32_t tiles, cores;
    int matrix;                   /* a matrix-unit layer (conv, matmul) */
    uint64_t macs;
    uint64_t est_cycles;          /* estimated span: first load to last store, barrier included */
    uint64_t est_compute, est_dma;/* the busiest core's compute and DMA cycles */
} AtlLayerInfo;

/* A stage of a staged variant (the .abm's stages section, written for every
 * staged schedule; docs/backend.md "Staged schedules"): its layers are the
 * profile's layer ids first_layer .. first_layer + n_layers - 1. */
typedef struct AtlStageInfo {
    uint32_t stage, first_layer, n_layers;
    uint32_t micro_batch, instances; /* images per instance; instances over the batch */
    uint32_t cores;               /* cores that run it */
    const char *input;            /* the tensor it reads from the stage before ("" for stage 0) */
    uint64_t macs;                /* useful multiply-accumulates, whole batch */
    uint64_t mat_cycles;          /* matrix-unit cycles those need at their dtype's peak, summed
                                     over cores (MACs x rate / (rows x cols)) */
    uint64_t est_cycles;          /* the cost model's cycles of the stage */
    uint32_t dram_tensors;        /* its intermediate tensors in DRAM, per instance */
} AtlStageInfo;

typedef struct AtlVariantInfo {
    uint32_t batch, cores;
    uint32_t n_inputs, n_outputs;
    const AtlTensorInfo *inputs, *outputs;
    uint32_t n_tensors;           /* every tensor of the variant (weights and */
    const AtlTensorInfo *tensors; /* activations too), in file order */
    uint32_t n_layers;            /* the compiler's layer rows (0 unless the model */
    const AtlLayerInfo *layers;   /* was compiled with --layer-info) */
    uint32_t n_stages;            /* its stages (0 unless it was compiled */
    const AtlStageInfo *stages;   /* with a staged schedule) */
} AtlVariantInfo;

typedef struct AtlNetInfo {
    const char *name;
    uint32_t n_variants;
    const AtlVariantInfo *variants;
} AtlNetInfo;

/* A host buffer for one input (or output). name NULL: by position. For
 * inputs, ndim/dims give the shape used to choose the variant; ndim 0 means
 * "any variant whose tensor has exactly `size` bytes". atl_buffer_init fills
 * one from a tensor's info. */
typedef struct AtlBuffer {
    const char *name;
    void *data;
    size_t size;
    int ndim;
    uint32_t dims[ATL_MAX_DIMS];
} AtlBuffer;

typedef struct AtlLayerProfile {
    uint32_t layer;
    uint64_t insns, first, last, macs, dma_bytes, busy_mat, busy_vec;
    uint64_t busy_dma;            /* DMA engine busy cycles (summed over cores) */
    uint64_t sync;                /* cycles of its span when no engine kind was busy */
    const char *bound;            /* "compute", "dma" or "sync": what the span waited on */
    uint64_t dram_bytes;          /* of dma_bytes, those read from or written to DRAM */
    uint64_t held;                /* core-cycles it held: on each core the time from the end of
                                     the previous layer's work to the end of its own, summed over
                                     cores (compiled models: the layers' add up to at most
                                     cycles x cores, however they overlap; docs/firmware.md) */
    uint64_t cycles;              /* its span (last - first); a member's share of its group's span,
                                     in proportion to its busy cycles: the members' add up to it */
    int32_t member;               /* -1 for a layer; in AtlProfile.members the member's place in
                                     its group (0 first), `layer` the group's id */
} AtlLayerProfile;

/* A stage of the variant that ran (AtlStageInfo), from its layers' records. */
typedef struct AtlStageProfile {
    uint32_t stage;
    uint64_t first, last;         /* its layers' first start and last completion */
    uint64_t held;                /* core-cycles its layers held (AtlLayerProfile.held) */
    uint64_t cycles;              /* held / the stage's cores: its time on each core */
    uint64_t macs, dram_bytes;    /* simulated, summed over its layers */
    double mac_util;              /* matrix-unit utilisation while it ran (GraphTurbo's metric):
                                     AtlStageInfo.mat_cycles / held, in [0, 1] */
} AtlStageProfile;

typedef struct AtlProfile {
    uint64_t cycles;              /* launch: first doorbell to last completion */
    uint64_t fw_cycles;           /* control processor cycles of the RUN command */
    double seconds;               /* cycles at the chip clock */
    uint64_t macs, dram_bytes;
    uint32_t cores;               /* cores of the variant */
    uint64_t busy[ATL_ENGINES], stall[ATL_ENGINES];   /* summed over the variant's cores */
    double utilisation[ATL_ENGINES];                  /* busy / (cycles x cores) */
    uint32_t n_layers;
    const AtlLayerProfile *layers;                    /* valid until the next run */
    uint32_t n_stages;                                /* the variant's stages (AtlVariantInfo) */
    const AtlStageProfile *stages;                    /* valid until the next run */
    uint32_t n_members;                               /* the members of its layer groups, each */
    const AtlLayerProfile *members;                   /* group's in order; valid until the next run */
} AtlProfile;

typedef struct AtlOpenOptions {
    size_t fw_heap_bytes;         /* control processor memory; 0 = 16 MiB */
    int trace;                    /* keep a Chrome trace of each run (atl_trace_json) */
    uint64_t max_cycles;          /* per run; 0 = simulator default */
    int timing_only;              /* simulate time only: cycles and profile as a full
                                     run gives them, no values computed (outputs
                                     are not meaningful) */
    uint64_t max_work;            /* host work per run (elements moved or computed); 0 = default (2^36,
                                   * or the environment variable ATOLL_MAX_SIM_WORK) */
} AtlOpenOptions;

/* Opens the simulated device described by an INI chip config (or an
 * AtlChip). On failure *dev is still set when it could be allocated, so
 * atl_last_error(*dev) explains; atl_close it either way. opt may be NULL. */
AtlStatus atl_open(AtlDevice **dev, const char *chip_config_path, const AtlOpenOptions *opt);
AtlStatus atl_open_chip(AtlDevice **dev, const struct AtlChip *chip, const AtlOpenOptions *opt);
/* Unloads every model and releases the device. NULL is ignored. */
void atl_close(AtlDevice *dev);
/* Message of the last failed call on dev ("" if none). */
const char *atl_last_error(const AtlDevice *dev);
/* A short name for a status code. */
const char *atl_status_name(AtlStatus s);

AtlStatus atl_load_file(AtlDevice *dev, const char *path, AtlModel **model);
AtlStatus atl_load_memory(AtlDevice *dev, const void *data, size_t size, AtlModel **model);
/* Unloads and frees the model (NULL is ignored). */
AtlStatus atl_unload(AtlModel *model);

/* The model's nets, valid while the model is loaded. */
AtlStatus atl_nets(const AtlModel *model, const AtlNetInfo **nets, uint32_t *count);

/* Runs net (NULL: the first) on inputs; the variant is the one whose input
 * shapes (or sizes) match. *variant (may be NULL) gets the variant index. */
AtlStatus atl_run(AtlModel *model, const char *net, const AtlBuffer *inputs, uint32_t n_inputs, uint32_t *variant);
/* Copies output `name` (NULL: output `index`) of the last run into dst, which
 * must hold exactly the tensor's bytes. */
AtlStatus atl_output(AtlModel *model, const char *name, uint32_t index, void *dst, size_t size);
/* Copies any tensor of the variant that ran last (an activation, to compare
 * intermediates with a reference; a weight; an input or output) into dst,
 * which must hold exactly its bytes. */
AtlStatus atl_read_tensor(AtlModel *model, const char *name, void *dst, size_t size);
/* Profile of the last run. */
AtlStatus atl_profile(const AtlModel *model, AtlProfile *profile);
/* The simulator's statistics JSON and Chrome trace of the last run
 * (malloc'd strings; the caller frees). */
AtlStatus atl_stats_json(AtlDevice *dev, char **json);
AtlStatus atl_trace_json(AtlDevice *dev, char **json);
/* The per-layer table of the last run as CSV (malloc'd; the caller frees):
 * a header line, then one row per layer id: layer, first, last, cycles,
 * insns, macs, dma_bytes, dram_bytes, busy_dma, busy_mat, busy_vec, sync,
 * bound. */
AtlStatus atl_layers_csv(AtlDevice *dev, char **csv);

/* ---- arrays: .npy/.npz files and element types ----
 * Functions without a device report their message in msg (cap bytes; msg
 * may be NULL). */
#define ATL_ARRAY_MAX_DIMS 8
typedef struct AtlArray {
    char *name;                   /* .npz member name (owned); NULL for an .npy */
    int dtype;                    /* ATL_INT8 ... ATL_UINT64 */
    int ndim;
    uint64_t dims[ATL_ARRAY_MAX_DIMS];
    void *data;                   /* C order, little-endian, size bytes (owned) */
    size_t size;
} AtlArray;

const char *atl_dtype_name(int dtype);    /* "float32", "bfloat16", ...; "?" if unknown */
size_t atl_dtype_size(int dtype);         /* bytes per element; 0 if unknown */
/* Reads an .npy (every numeric dtype numpy writes but complex, in C order). */
AtlStatus atl_npy_load(const char *path, AtlArray *array, char *msg, size_t cap);
/* Reads an .npz (stored or deflated members); *arrays is malloc'd, free it
 * with atl_arrays_free. */
AtlStatus atl_npz_load(const char *path, AtlArray **arrays, uint32_t *count, char *msg, size_t cap);
/* Decides for each member of an .npz, before it is inflated, whether to
 * read it: 1 read it (then *max_bytes, when set non-zero, caps its .npy
 * size: a larger member is refused before it is inflated), 0 skip it
 * unread, -1 refuse the file (a message in msg, cap bytes). */
typedef int (*AtlArrayFilter)(void *ctx, const char *name, uint64_t *max_bytes, char *msg, size_t cap);
/* atl_npz_load of the members filter accepts, in file order. */
AtlStatus atl_npz_load_only(const char *path, AtlArrayFilter filter, void *ctx, AtlArray **arrays, uint32_t *count,
                            char *msg, size_t cap);
/* Writes atomically (a failure leaves no file); bfloat16 has no .npy type. */
AtlStatus atl_npy_save(const char *path, const AtlArray *array, char *msg, size_t cap);
AtlStatus atl_npz_save(const char *path, const AtlArray *arrays, uint32_t count, char *msg, size_t cap);
void atl_array_free(AtlArray *array);     /* name and data */
void atl_arrays_free(AtlArray *arrays, uint32_t count);
/* Converts count elements from src_dtype to dst_dtype (dst may be src when
 * the element sizes allow it in place): float into float of any width,
 * rounded to nearest even; integer or bool into integer when every value
 * fits (else ATL_ERR_INVALID naming the first element that does not).
 * Floats and integers do not convert into each other. */
AtlStatus atl_convert(const void *src, int src_dtype, void *dst, int dst_dtype, size_t count, char *msg, size_t cap);
/* A buffer for tensor t over data: t's name, its size in bytes and shape. */
void atl_buffer_init(AtlBuffer *buffer, const AtlTensorInfo *t, void *data);

/* The chip a model file was compiled for: the name its metadata records
 * (`atoll compile --chip NAME`) and its fingerprint, from the file's header
 * and metadata only; name gets "" and ATL_ERR_INVALID when the file does
 * not name one. name, fingerprint and msg may be NULL. */
AtlStatus atl_model_chip(const char *abm_path, char *name, size_t cap, uint64_t *fingerprint, char *msg, size_t msgcap);

/* ---- compiling ---- */
typedef struct AtlCompileOptions {
    const char *chip;             /* chip config file (e.g. configs/a1.ini) */
    const char *dtype;            /* "fp32" (NULL), "fp16", "bf16" */
    const uint32_t *batches;      /* one variant per batch size; NULL: the model's */
    uint32_t n_batches;           /* batch (1 where it is open) */
    const char *const *input_shapes; /* "NAME=1x3x224x224" each; may change a */
    uint32_t n_input_shapes;      /* dimension the model fixed */
    const char *net_name;         /* NULL: the graph's name */
    int synthetic_weights;        /* invent initializers whose data file is missing */
    int layer_info;               /* record per-layer names and estimates (run profiles) */
} AtlCompileOptions;
/* Compiles an ONNX model into an .abm file, written atomically. The
 * message names the model, node or option that failed. */
AtlStatus atl_compile(const char *onnx_path, const AtlCompileOptions *options, const char *abm_path, char *msg, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
