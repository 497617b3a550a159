/* abm_load.c - the host's loaded form of a model: the file bytes, the
 * decoded view and the DRAM weight image, all owned by one AbmModel.
 * Built on the freestanding reader (abm_read.c); this file is host only
 * (it allocates), so the firmware does not link it.
 */
#include "isa/abm.h"
#include <stdlib.h>
#include <string.h>
#include "util/file.h"
#include "util/limits.h"

void abm_model_free(AbmModel *m)
{
    if (!m) return;
    free(m->file);
    free(m->scratch);
    free(m->weights);
    memset(m, 0, sizeof *m);
}

int abm_check_host_limits(const AbmView *v, AtlErr *e)
{
    uint64_t max = atl_limit(ATL_LIMIT_ABM_DECODE_BYTES);
    if (v->scratch_needed > max)
        return atl_fail(e, "its compressed sections inflate to %llu bytes, more than the limit of %llu bytes decoded from "
                        "one .abm (raise with ATOLL_MAX_ABM_DECODE_BYTES)", (unsigned long long)v->scratch_needed,
                        (unsigned long long)max);
    if (v->weight_bytes > ABM_HOST_MAX_WEIGHT_BYTES)
        return atl_fail(e, "its weight region of %llu bytes is larger than any chip's DRAM (at most %llu bytes)",
                        (unsigned long long)v->weight_bytes, (unsigned long long)ABM_HOST_MAX_WEIGHT_BYTES);
    return 0;
}

/* Takes ownership of file (malloc'd, len bytes). */
static int load_owned(AbmModel *m, uint8_t *file, size_t len, uint64_t expect_chip, unsigned flags, AtlErr *e)
{
    memset(m, 0, sizeof *m);
    m->file = file;
    AbmView *v = &m->view;
    if (abm_open(v, file, len, expect_chip, flags & ABM_OPEN_IGNORE_CRC, e) || abm_check_host_limits(v, e)) goto fail;
    if (v->scratch_needed > SIZE_MAX || !(m->scratch = malloc((size_t)v->scratch_needed))) {
        atl_fail(e, "out of memory: decoding needs %llu bytes of scratch", (unsigned long long)v->scratch_needed);
        goto fail;
    }
    if (abm_decode(v, m->scratch, (size_t)v->scratch_needed, e)) goto fail;
    m->weight_bytes = v->weight_bytes;
    if (!(flags & ABM_LOAD_SKIP_WEIGHTS) && v->weight_bytes) {
        if (v->weight_bytes > SIZE_MAX || !(m->weights = calloc(1, (size_t)v->weight_bytes))) {
            atl_fail(e, "out of memory: the weight region needs %llu bytes", (unsigned long long)v->weight_bytes);
            goto fail;
        }
        for (uint32_t i = 0; i < v->n_blobs; i++) {
            AbmBlob b = abm_blob(v, i);
            if (abm_blob_read(v, i, m->weights + b.dram_offset, v->weight_bytes - b.dram_offset, e)) goto fail;
        }
    }
    return 0;
fail:
    abm_model_free(m);
    return -1;
}

int abm_load_buffer(AbmModel *m, const void *buf, size_t len, uint64_t expect_chip, unsigned flags, AtlErr *e)
{
    memset(m, 0, sizeof *m);
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) return atl_fail(e, "out of memory for a %zu-byte model", len);
    if (len) memcpy(copy, buf, len);
    return load_owned(m, copy, len, expect_chip, flags, e);
}

int abm_load_file(AbmModel *m, const char *path, uint64_t expect_chip, unsigned flags, AtlErr *e)
{
    memset(m, 0, sizeof *m);
    unsigned char *data;
    size_t n;
    if (atl_read_file(path, &data, &n, e)) return -1;
    if (load_owned(m, data, n, expect_chip, flags, e)) return atl_err_prefix(e, "%s", path);
    return 0;
}
