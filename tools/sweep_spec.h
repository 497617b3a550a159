/* sweep_spec.h - a design-space sweep file (docs/codesign.md): an INI
 * whose first section is [sweep] (base chip, models, dtypes, batch sizes,
 * grid or zip, compile sharing) followed by [vary] (the chip config keys to
 * vary, as `section.key = list` or a range). Parsing checks everything it
 * can before any point runs: unknown keys, empty ranges and values the
 * config rejects on the base chip are errors naming the file and line.
 *
 * Points are numbered 0..npoints-1: the chip combination outermost, then
 * model, dtype, batch (batch fastest). Chip combinations are a grid over
 * axes, the last axis fastest; an axis is one key, or keys tied by `zip`
 * (lists of equal length, stepped together); `mode = zip` ties them all.
 *
 * A point's chip is the base chip with the point's values. It is compiled
 * for its "compile chip": the base chip with only the point's FP keys (the
 * keys compiled code depends on, isa/config.h), so points that differ only
 * in timing keys share one compile (the same chip fingerprint) and every
 * machine compiles the same code for a point, whichever points it runs.
 * `compile = per-point` compiles each point for its own chip instead.
 *
 * Ownership: sweep_spec_load fills a SweepSpec; sweep_spec_free frees it.
 */
#ifndef ATOLL_TOOLS_SWEEP_SPEC_H
#define ATOLL_TOOLS_SWEEP_SPEC_H
#include <stdint.h>
#include "isa/config.h"
#include "util/err.h"

#define SWEEP_MAX_KEYS 32
#define SWEEP_MAX_VALUES 4096
#define SWEEP_MAX_LIST 64      /* models, dtypes, batch sizes */
#define SWEEP_MAX_POINTS 1000000

typedef struct SweepKey {
    int cfg;                   /* index into cfg_keys */
    char name[64];             /* "section.key" */
    int line;                  /* of the spec file */
    int axis;
    int nvalues;
    char **values;             /* as the config writes them (cfg_format_value) */
} SweepKey;

typedef struct SweepSpec {
    char path[512];
    char chip_path[1024];      /* resolved against the spec's directory */
    AtlChip base;
    int nmodels;
    char *model_paths[SWEEP_MAX_LIST];   /* resolved */
    char *model_names[SWEEP_MAX_LIST];   /* file name without .onnx: the CSV's model column */
    int ndtypes, dtypes[SWEEP_MAX_LIST]; /* ISA_F32, ISA_F16, ISA_BF16 */
    int nbatches, batches[SWEEP_MAX_LIST];
    int nkeys;
    SweepKey keys[SWEEP_MAX_KEYS];
    int naxes, axis_len[SWEEP_MAX_KEYS];
    int per_point_compile;
    int64_t nchips, npoints;
} SweepSpec;

/* One point's coordinates. */
typedef struct SweepPoint {
    int64_t id, chip;          /* chip: index of the chip combination */
    int model, dtype, batch;   /* indices into the spec's lists */
    int value[SWEEP_MAX_KEYS]; /* per key, the index of its value */
} SweepPoint;

int sweep_spec_load(const char *path, SweepSpec *s, AtlErr *e);
void sweep_spec_free(SweepSpec *s);
void sweep_point(const SweepSpec *s, int64_t id, SweepPoint *p);
/* The point's chip (all its values) or its compile chip (only FP keys);
 * errors are the config's rules, e.g. "[lmem] bytes ... cannot hold ...". */
int sweep_point_chip(const SweepSpec *s, const SweepPoint *p, int compile_only, AtlChip *c, AtlErr *e);
/* "fp32", "fp16", "bf16". */
const char *sweep_dtype_name(int dtype);
#endif
