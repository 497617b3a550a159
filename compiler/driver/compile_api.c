/* compile_api.c - atl_compile (include/atoll.h): the compile driver
 * (compiler/driver/driver.h) behind the public API, so that programs and the
 * Python module compile models exactly as `atoll compile` does. Lives with
 * the compiler (the host runtime does not depend on it); only the types of
 * the public header are shared.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "atoll.h"
#include "compiler/driver/driver.h"

/* A status with its message in the caller's buffer (util/err.h). */
#define say(msg, cap, s, ...) ((AtlStatus)atl_msg(msg, cap, s, __VA_ARGS__))

AtlStatus atl_compile(const char *onnx_path, const AtlCompileOptions *o, const char *abm_path, char *msg, size_t cap)
{
    if (!onnx_path || !o || !o->chip || !abm_path) return say(msg, cap, ATL_ERR_INVALID, "atl_compile: model, options (chip) and output are required");
    AtlChip chip;
    AtlErr e;
    if (cfg_load(o->chip, &chip, &e)) return say(msg, cap, ATL_ERR_CONFIG, "%s", e.msg);
    enum { MAXSH = 64 };
    IrInputShape shapes[MAXSH];
    DrvRequest rq;
    memset(&rq, 0, sizeof rq);
    rq.chip = &chip;
    const char *dt = o->dtype ? o->dtype : "fp32";
    rq.dtype = !strcmp(dt, "fp32") || !strcmp(dt, "f32") ? ISA_F32 : !strcmp(dt, "fp16") || !strcmp(dt, "f16") ? ISA_F16
             : !strcmp(dt, "bf16") ? ISA_BF16 : -1;
    if (rq.dtype < 0) return say(msg, cap, ATL_ERR_INVALID, "dtype '%s': use fp32, fp16 or bf16", dt);
    if (o->n_batches > DRV_MAX_BATCHES || (o->n_batches && !o->batches))
        return say(msg, cap, ATL_ERR_INVALID, "at most %d batch sizes", DRV_MAX_BATCHES);
    for (uint32_t i = 0; i < o->n_batches; i++) {
        if (o->batches[i] < 1 || o->batches[i] > 65535) return say(msg, cap, ATL_ERR_INVALID, "batch %u: 1..65535", o->batches[i]);
        rq.batches[rq.nbatch++] = (int)o->batches[i];
    }
    if (o->n_input_shapes > MAXSH || (o->n_input_shapes && !o->input_shapes))
        return say(msg, cap, ATL_ERR_INVALID, "at most %d input shapes", MAXSH);
    for (uint32_t i = 0; i < o->n_input_shapes; i++)
        if (ir_parse_input_shape(o->input_shapes[i], &shapes[i], &e)) return say(msg, cap, ATL_ERR_INVALID, "%s", e.msg);
    rq.shapes = shapes;
    rq.nshapes = (int)o->n_input_shapes;
    rq.net_name = o->net_name;
    rq.synthetic_weights = o->synthetic_weights;
    rq.layer_info = o->layer_info;
    AbmWriter *w = abm_writer_new(cfg_fingerprint(&chip));
    if (!w) return say(msg, cap, ATL_ERR_HOST_MEMORY, "out of memory");
    DrvResult res;
    AtlStatus s = ATL_OK;
    if (drv_compile(onnx_path, &rq, w, &res, &e)) {
        /* the whole list of unsupported ops, not only what fits a message */
        if (res.unsupported && strstr(e.msg, "\n  ... and "))
            s = say(msg, cap, ATL_ERR_INVALID, "%s: these ops are not supported:\n%s", onnx_path, res.unsupported);
        else s = say(msg, cap, ATL_ERR_INVALID, "%s", e.msg);
    } else if (abm_write_file(w, abm_path, &e)) {
        s = say(msg, cap, ATL_ERR_IO, "%s", e.msg);
    }
    drv_result_free(&res);
    abm_writer_free(w);
    return s;
}
