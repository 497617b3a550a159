/* model_file.c - atl_model_chip (include/atoll.h): the chip a model file
 * was compiled for, from its header and metadata only (isa/abm_info.c), so
 * a program can open the right device before loading the model. */
#include <stdio.h>
#include "atoll.h"
#include "isa/abm.h"

AtlStatus atl_model_chip(const char *abm_path, char *name, size_t cap, uint64_t *fingerprint, char *msg, size_t msgcap)
{
    char opts[512];
    uint64_t fp = 0;
    AtlErr e;
    if (!abm_path) return ATL_ERR_INVALID;
    if (abm_file_info(abm_path, &fp, opts, sizeof opts, &e)) {
        if (msg && msgcap) snprintf(msg, msgcap, "%s", e.msg);
        return ATL_ERR_IO;
    }
    if (fingerprint) *fingerprint = fp;
    if (name && cap && abm_options_chip(opts, name, cap)) {
        name[0] = 0;
        if (msg && msgcap) snprintf(msg, msgcap, "%s does not name the chip it was compiled for", abm_path);
        return ATL_ERR_INVALID;
    }
    return ATL_OK;
}
