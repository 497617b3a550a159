/* limits.c - the table of input limits and their environment overrides
 * (see limits.h). */
#include "util/limits.h"
#include <errno.h>
#include <stdlib.h>

static const AtlLimitInfo limits[ATL_NLIMITS] = {
    [ATL_LIMIT_FILE_BYTES] = {"ATOLL_MAX_FILE_BYTES", (uint64_t)4 << 30, "bytes",
                              "a file read whole: ONNX model, `.abm`, program, `.npy`/`.npz`, tensor file"},
    [ATL_LIMIT_TENSOR_BYTES] = {"ATOLL_MAX_TENSOR_BYTES", (uint64_t)1 << 30, "bytes",
                                "one tensor built by the ONNX importer, constant folding, the reference interpreter "
                                "or `--synthetic-weights`"},
    [ATL_LIMIT_INFLATE_BYTES] = {"ATOLL_MAX_INFLATE_BYTES", (uint64_t)1 << 30, "bytes",
                                 "the inflated members of one `.npz` whose expected shapes are not known; one weight "
                                 "blob `atoll inspect --weights` checks"},
    [ATL_LIMIT_ABM_DECODE_BYTES] = {"ATOLL_MAX_ABM_DECODE_BYTES", (uint64_t)256 << 20, "bytes",
                                    "the inflated sections of one `.abm` (instructions, tensors, strings; ResNet-50's "
                                    "take 2.2 MB)"},
    [ATL_LIMIT_SIM_WORK] = {"ATOLL_MAX_SIM_WORK", (uint64_t)1 << 36, "units",
                            "host work of one simulation run: elements moved, computed or planned (about 10^8 to "
                            "10^9 per second); also `--max-work` of `atoll sim` and `atoll run`"},
};

int atl_parse_size(const char *s, uint64_t *v)
{
    if (!s || *s < '0' || *s > '9') return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno == ERANGE) return -2;
    if (errno) return -1;
    int shift = 0;
    if (*end) {
        static const char units[] = "KMGT";
        int k = 0;
        while (units[k] && units[k] != *end) k++;
        if (!units[k]) return -1;
        shift = 10 * (k + 1);
        end++;
        if (end[0] == 'i' && end[1] == 'B') end += 2;
        if (*end) return -1;
    }
    if (shift && x > (UINT64_MAX >> shift)) return -2;
    *v = (uint64_t)x << shift;
    return 0;
}

const AtlLimitInfo *atl_limit_info(AtlLimit which) { return (unsigned)which < ATL_NLIMITS ? &limits[which] : NULL; }

uint64_t atl_limit(AtlLimit which)
{
    const AtlLimitInfo *l = atl_limit_info(which);
    if (!l) return 0;
    uint64_t v;
    const char *s = getenv(l->env);
    return s && !atl_parse_size(s, &v) && v > 0 ? v : l->dflt;
}

int atl_limits_check(AtlErr *e)
{
    for (int i = 0; i < ATL_NLIMITS; i++) {
        const char *s = getenv(limits[i].env);
        uint64_t v;
        if (s && (atl_parse_size(s, &v) || v == 0))
            return atl_fail(e, "environment variable %s='%s' is not a positive size (e.g. 4G, 512M, 1000000)", limits[i].env, s);
    }
    return 0;
}
