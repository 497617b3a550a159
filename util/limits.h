/* limits.h - the input limits: how large a file, a tensor, an inflated
 * archive or a simulation may get before Atoll stops with a clear error
 * instead of exhausting memory or running for hours on a hostile or
 * careless input.
 *
 * Each limit has a default and an environment variable that raises (or
 * lowers) it, e.g. ATOLL_MAX_TENSOR_BYTES=4G. The environment is read here
 * and nowhere else; the table in limits.c is the one list (docs/conventions.md
 * shows it, test/util/test_limits.c checks that the two agree). A value that
 * does not parse is reported by atl_limits_check (the front end runs it
 * before any command) and otherwise ignored in favour of the default.
 */
#ifndef ATOLL_UTIL_LIMITS_H
#define ATOLL_UTIL_LIMITS_H
#include <stdint.h>
#include "util/err.h"

typedef enum {
    ATL_LIMIT_FILE_BYTES,     /* a file read whole (model, .abm, program, .npy/.npz, tensor file) */
    ATL_LIMIT_TENSOR_BYTES,   /* one tensor of the front end, interpreter, folding, synthetic weights */
    ATL_LIMIT_INFLATE_BYTES,  /* the inflated members of one .npz without expected sizes; one weight blob inspect checks */
    ATL_LIMIT_ABM_DECODE_BYTES, /* the inflated sections (instructions, tensors, strings) of one .abm */
    ATL_LIMIT_SIM_WORK,       /* host work units of one simulation run (elements moved or computed) */
    ATL_NLIMITS
} AtlLimit;

typedef struct AtlLimitInfo {
    const char *env;          /* environment variable */
    uint64_t dflt;
    const char *unit;         /* "bytes" or "units" */
    const char *doc;          /* what it bounds (markdown) */
} AtlLimitInfo;

/* The value in force: the environment variable when it parses, else the default. */
uint64_t atl_limit(AtlLimit which);
const AtlLimitInfo *atl_limit_info(AtlLimit which);
/* Fails naming the first variable whose value does not parse. */
int atl_limits_check(AtlErr *e);
/* Parses "123", "0x10", "4K", "2M", "3G", "1T" (also "4KiB"...: powers of
 * 1024) into *v. Returns 0, -1 for text that is not such a number, -2 for
 * a number beyond 2^64 - 1. */
int atl_parse_size(const char *s, uint64_t *v);
#endif
