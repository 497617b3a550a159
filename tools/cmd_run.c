/* cmd_run.c - `atoll run`: run a compiled model on the simulated chip
 * through the host API (include/atoll.h), i.e. through the device's
 * firmware exactly as an application would. Inputs and outputs are
 * .npy/.npz files; the stage is chosen from the input shapes. Integer and
 * bool arrays are converted to an integer input of another width (the
 * backend stores int64 as int32, uint8 as int16, bool as int8), failing on
 * a value out of range, naming the input and element.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "atoll.h"
#include "tools/cli.h"
#include "util/file.h"
#include "util/npy.h"

const char cmd_run_summary[] = "run a compiled model (.abm) on the simulated chip through firmware and host API";

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: atoll run MODEL.abm --chip CHIP.ini --input X.npy|IN.npz [--net NAME]\n"
            "                 [--output OUT.npz|OUT.npy] [--trace T.json] [--stats S.json] [--profile]\n"
            "                 [--dump-tensors ALL.npz] [--fw-heap BYTES] [--max-cycles N]\n"
            "\n"
            "Loads MODEL.abm into a simulated device described by CHIP.ini (the firmware\n"
            "validates, relocates and places it), runs net NAME (default: the first) on\n"
            "the inputs and writes every output of the stage that ran.\n"
            "  --input      one .npy (the stage's only input) or an .npz with one member\n"
            "               per input, named like the model's input tensors; dtypes must\n"
            "               match (int8, uint8, int32, float16, float32), except that an\n"
            "               integer or bool array feeds an integer input of another width\n"
            "               (int64 -> int32, uint8 -> int16, bool -> int8) when every\n"
            "               value fits; the shapes choose the stage (batch size)\n"
            "  --output     .npz with one member per output, or .npy for a single output\n"
            "  --trace      Chrome/Perfetto trace of the run\n"
            "  --stats      the simulator's statistics of the run (JSON)\n"
            "  --profile    print cycles, per-engine utilisation and the per-layer table\n"
            "  --dump-tensors  every activation and output of the stage after the run, as\n"
            "               found in device memory (to compare intermediates with `atoll\n"
            "               interp`); a tensor whose dtype .npy lacks, or whose layout is\n"
            "               padded, is written as its raw bytes (uint8, 1-D)\n"
            "  --fw-heap    memory of the control processor for the firmware (default 16 MiB)\n"
            "  --max-cycles stop the run with a fault after N cycles\n"
            "Exit status: 0 ok, 1 error (message names the cause), 2 usage.\n");
}

/* .npy dtype of each .abm/atoll dtype; -1 where .npy has none. */
static const int npy_of_dtype[] = {
    [ATL_INT8] = ATL_NPY_I8, [ATL_UINT8] = ATL_NPY_U8, [ATL_INT16] = -1, [ATL_INT32] = ATL_NPY_I32,
    [ATL_FP16] = ATL_NPY_F16, [ATL_BF16] = -1, [ATL_FP32] = ATL_NPY_F32,
};
static const char *const dtype_names[] = { "int8", "uint8", "int16", "int32", "fp16", "bf16", "fp32" };

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static void shape_text(char *buf, size_t cap, int ndim, const uint32_t *dims)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && n < cap; i++) n += (size_t)snprintf(buf + n, cap - n, i ? ",%u" : "%u", dims[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

static int write_text(const char *path, const char *text)
{
    AtlErr e;
    if (atl_write_file_atomic(path, text, strlen(text), &e)) {
        fprintf(stderr, "atoll run: %s\n", e.msg);
        return -1;
    }
    return 0;
}

static void print_profile(const AtlProfile *p)
{
    static const char *const eng[ATL_ENGINES] = { "dma", "matrix", "vector" };
    printf("profile: %llu cycles (%.6g s), firmware %llu cycles, %llu MACs, %llu DRAM bytes, %u core(s)\n",
           (unsigned long long)p->cycles, p->seconds, (unsigned long long)p->fw_cycles, (unsigned long long)p->macs,
           (unsigned long long)p->dram_bytes, p->cores);
    printf("  %-7s %12s %12s %8s\n", "engine", "busy", "stall", "util");
    for (int g = 0; g < ATL_ENGINES; g++)
        printf("  %-7s %12llu %12llu %7.1f%%\n", eng[g], (unsigned long long)p->busy[g], (unsigned long long)p->stall[g],
               100.0 * p->utilisation[g]);
    if (p->n_layers) {
        printf("  %-6s %8s %10s %10s %10s %12s %10s %10s\n", "layer", "insns", "first", "last", "macs", "dma_bytes", "mat_busy", "vec_busy");
        for (uint32_t i = 0; i < p->n_layers; i++) {
            const AtlLayerProfile *l = &p->layers[i];
            printf("  %-6u %8llu %10llu %10llu %10llu %12llu %10llu %10llu\n", l->layer, (unsigned long long)l->insns,
                   (unsigned long long)l->first, (unsigned long long)l->last, (unsigned long long)l->macs,
                   (unsigned long long)l->dma_bytes, (unsigned long long)l->busy_mat, (unsigned long long)l->busy_vec);
        }
    }
}

/* Reads the input file(s) into arrays. */
static int read_inputs(const char *path, AtlNdArray **arrays, int *n)
{
    AtlErr e;
    if (ends_with(path, ".npz")) {
        if (atl_npz_read(path, arrays, n, &e)) { fprintf(stderr, "atoll run: %s\n", e.msg); return -1; }
        return 0;
    }
    *arrays = calloc(1, sizeof **arrays);
    if (!*arrays) { fprintf(stderr, "atoll run: out of memory\n"); return -1; }
    if (atl_npy_read(path, *arrays, &e)) {
        fprintf(stderr, "atoll run: %s\n", e.msg);
        free(*arrays);
        *arrays = NULL;
        return -1;
    }
    *n = 1;
    return 0;
}

/* 1 if some stage of the net has an output called name. */
static int is_output_name(const AtlNetInfo *net, const char *name)
{
    for (uint32_t k = 0; k < net->n_stages; k++)
        for (uint32_t j = 0; j < net->stages[k].n_outputs; j++)
            if (!strcmp(net->stages[k].outputs[j].name, name)) return 1;
    return 0;
}

/* Element i of an integer or bool array as int64; 0 for other dtypes. */
static int npy_int(const AtlNdArray *a, int64_t i, int64_t *v)
{
    switch (a->dtype) {
    case ATL_NPY_I8: *v = ((const int8_t *)a->data)[i]; return 1;
    case ATL_NPY_U8: *v = ((const uint8_t *)a->data)[i]; return 1;
    case ATL_NPY_BOOL: *v = ((const uint8_t *)a->data)[i] != 0; return 1;
    case ATL_NPY_I32: *v = ((const int32_t *)a->data)[i]; return 1;
    case ATL_NPY_I64: *v = ((const int64_t *)a->data)[i]; return 1;
    default: return 0;
    }
}

/* An integer/bool array given for an integer input of another width (the
 * backend stores int64 as int32, uint8 as int16, bool as int8): converted
 * into *out (malloc'd), every value checked against the input's range.
 * Returns 1 converted, 0 not an integer pair, -1 a value out of range. */
static int convert_int_input(const AtlNdArray *a, const AtlTensorInfo *t, void **out, const char *path)
{
    static const struct { int dt, size; int64_t lo, hi; } chip[] = {
        {ATL_INT8, 1, INT8_MIN, INT8_MAX}, {ATL_UINT8, 1, 0, UINT8_MAX},
        {ATL_INT16, 2, INT16_MIN, INT16_MAX}, {ATL_INT32, 4, INT32_MIN, INT32_MAX},
    };
    int k = -1;
    int64_t v, n = atl_ndarray_numel(a);
    for (int i = 0; i < 4; i++) if (chip[i].dt == t->dtype) k = i;
    if (k < 0 || !n || !npy_int(a, 0, &v)) return 0;
    uint8_t *d = malloc((size_t)n * (size_t)chip[k].size);
    if (!d) { fprintf(stderr, "atoll run: out of memory\n"); return -1; }
    for (int64_t i = 0; i < n; i++) {
        npy_int(a, i, &v);
        if (v < chip[k].lo || v > chip[k].hi) {
            fprintf(stderr, "atoll run: %s: input '%s' element %lld = %lld does not fit the model's %s\n", path, t->name,
                    (long long)i, (long long)v, dtype_names[t->dtype]);
            free(d);
            return -1;
        }
        if (chip[k].size == 1) d[i] = (uint8_t)v;
        else if (chip[k].size == 2) { int16_t x = (int16_t)v; memcpy(d + 2 * i, &x, 2); }
        else { int32_t x = (int32_t)v; memcpy(d + 4 * i, &x, 4); }
    }
    *out = d;
    return 1;
}

/* Checks each array against the net's inputs (by name for .npz) and fills
 * buffers; returns how many it filled, or -1. Arrays of an .npz named like
 * one of the net's outputs (a reference file holding inputs and expected
 * outputs) are skipped with a note. An integer array for an integer input
 * of another width is converted (convert_int_input; owned[i] gets the
 * converted data, freed by the caller). */
static int make_buffers(const AtlNetInfo *net, const AtlNdArray *arr, int n, int by_name, AtlBuffer *buf, void **owned,
                        const char *path)
{
    int used = 0;
    for (int i = 0; i < n; i++) {
        const AtlNdArray *a = &arr[i];
        if (by_name && is_output_name(net, a->name)) {
            fprintf(stderr, "atoll run: note: %s: array '%s' is an output of net '%s'; not used as an input\n", path,
                    a->name, net->name);
            continue;
        }
        if (a->ndim > ATL_MAX_DIMS) {
            fprintf(stderr, "atoll run: %s: array '%s' has %d dimensions (at most %d)\n", path, a->name ? a->name : "", a->ndim, ATL_MAX_DIMS);
            return -1;
        }
        const AtlTensorInfo *t = NULL;   /* the tensor in any stage, for the dtype check */
        for (uint32_t k = 0; k < net->n_stages && !t; k++)
            for (uint32_t j = 0; j < net->stages[k].n_inputs && !t; j++)
                if (by_name ? !strcmp(net->stages[k].inputs[j].name, a->name) : j == (uint32_t)i) t = &net->stages[k].inputs[j];
        if (!t) {
            fprintf(stderr, "atoll run: %s: net '%s' has no input named '%s'\n", path, net->name, by_name ? a->name : "");
            return -1;
        }
        int conv = npy_of_dtype[t->dtype] != (int)a->dtype ? convert_int_input(a, t, &owned[i], path) : 0;
        if (conv < 0) return -1;
        if (!conv && npy_of_dtype[t->dtype] != (int)a->dtype) {
            fprintf(stderr, "atoll run: %s: input '%s' is %s but the model expects %s\n", path, t->name,
                    atl_npy_dtype_name(a->dtype), dtype_names[t->dtype]);
            return -1;
        }
        AtlBuffer *b = &buf[used++];
        b->name = by_name ? a->name : NULL;
        b->data = conv ? owned[i] : a->data;
        b->size = (size_t)atl_ndarray_numel(a) * (conv ? (size_t)(t->dtype == ATL_INT32 ? 4 : t->dtype == ATL_INT16 ? 2 : 1)
                                                       : atl_npy_dtype_size(a->dtype));
        b->ndim = a->ndim;
        for (int d = 0; d < a->ndim; d++) b->dims[d] = (uint32_t)a->shape[d];
    }
    return used;
}

static int write_outputs(AtlModel *m, AtlDevice *dev, const AtlStageInfo *st, const char *path)
{
    AtlNdArray *out = calloc(st->n_outputs + 1, sizeof *out);
    if (!out) { fprintf(stderr, "atoll run: out of memory\n"); return -1; }
    int rc = 0;
    AtlErr e;
    for (uint32_t i = 0; i < st->n_outputs && !rc; i++) {
        const AtlTensorInfo *t = &st->outputs[i];
        if (npy_of_dtype[t->dtype] < 0) {
            fprintf(stderr, "atoll run: output '%s' is %s, which .npy cannot hold\n", t->name, dtype_names[t->dtype]);
            rc = -1;
            break;
        }
        out[i].dtype = (AtlNpyDtype)npy_of_dtype[t->dtype];
        out[i].ndim = t->ndim;
        for (int d = 0; d < t->ndim; d++) out[i].shape[d] = t->dims[d];
        out[i].name = malloc(strlen(t->name) + 1);
        if (!out[i].name || atl_ndarray_alloc(&out[i], &e)) { fprintf(stderr, "atoll run: out of memory\n"); rc = -1; break; }
        strcpy(out[i].name, t->name);
        size_t bytes = (size_t)atl_ndarray_numel(&out[i]) * atl_npy_dtype_size(out[i].dtype);
        AtlStatus s = atl_output(m, t->name, 0, out[i].data, bytes);
        if (s) { fprintf(stderr, "atoll run: %s\n", atl_last_error(dev)); rc = -1; }
    }
    if (!rc) {
        if (ends_with(path, ".npy")) {
            if (st->n_outputs != 1) {
                fprintf(stderr, "atoll run: %s: the stage has %u outputs; write an .npz\n", path, st->n_outputs);
                rc = -1;
            } else if (atl_npy_write(path, &out[0], &e)) {
                fprintf(stderr, "atoll run: %s\n", e.msg);
                rc = -1;
            }
        } else if (atl_npz_write(path, out, (int)st->n_outputs, &e)) {
            fprintf(stderr, "atoll run: %s\n", e.msg);
            rc = -1;
        }
    }
    atl_ndarray_list_free(out, (int)st->n_outputs);
    return rc;
}

/* Every activation and output of the stage, read back from device memory. */
static int dump_tensors(AtlModel *m, AtlDevice *dev, const AtlStageInfo *st, const char *path)
{
    AtlNdArray *arr = calloc(st->n_tensors + 1, sizeof *arr);
    if (!arr) { fprintf(stderr, "atoll run: out of memory\n"); return -1; }
    int n = 0, rc = 0;
    AtlErr e;
    for (uint32_t i = 0; i < st->n_tensors && !rc; i++) {
        const AtlTensorInfo *t = &st->tensors[i];
        if (t->role != ATL_ROLE_ACTIVATION && t->role != ATL_ROLE_OUTPUT) continue;
        AtlNdArray *a = &arr[n++];
        uint64_t dense = 1;
        for (int d = 0; d < t->ndim; d++) dense *= t->dims[d];
        int typed = npy_of_dtype[t->dtype] >= 0 && dense * atl_npy_dtype_size((AtlNpyDtype)npy_of_dtype[t->dtype]) == t->bytes;
        if (typed) {
            a->dtype = (AtlNpyDtype)npy_of_dtype[t->dtype];
            a->ndim = t->ndim;
            for (int d = 0; d < t->ndim; d++) a->shape[d] = t->dims[d];
        } else {
            a->dtype = ATL_NPY_U8;
            a->ndim = 1;
            a->shape[0] = (int64_t)t->bytes;
        }
        a->name = malloc(strlen(t->name) + 1);
        if (!a->name || atl_ndarray_alloc(a, &e)) { fprintf(stderr, "atoll run: out of memory\n"); rc = -1; break; }
        strcpy(a->name, t->name);
        if (atl_read_tensor(m, t->name, a->data, (size_t)t->bytes)) { fprintf(stderr, "atoll run: %s\n", atl_last_error(dev)); rc = -1; }
    }
    if (!rc && atl_npz_write(path, arr, n, &e)) { fprintf(stderr, "atoll run: %s\n", e.msg); rc = -1; }
    atl_ndarray_list_free(arr, n);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    const char *model_path = NULL, *chip = NULL, *input = NULL, *output = NULL, *trace = NULL, *stats = NULL, *net_name = NULL;
    const char *heap = NULL, *maxc = NULL, *dump = NULL, *v;
    int profile = 0, bad = 0, timing_only = 0;
    for (int i = 1; i < argc && !bad; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) chip = v;
        else if ((v = cli_opt(argc, argv, &i, "--input", &bad))) input = v;
        else if ((v = cli_opt(argc, argv, &i, "--output", &bad))) output = v;
        else if ((v = cli_opt(argc, argv, &i, "--trace", &bad))) trace = v;
        else if ((v = cli_opt(argc, argv, &i, "--stats", &bad))) stats = v;
        else if ((v = cli_opt(argc, argv, &i, "--net", &bad))) net_name = v;
        else if ((v = cli_opt(argc, argv, &i, "--fw-heap", &bad))) heap = v;
        else if ((v = cli_opt(argc, argv, &i, "--max-cycles", &bad))) maxc = v;
        else if ((v = cli_opt(argc, argv, &i, "--dump-tensors", &bad))) dump = v;
        else if (bad) break;
        else if (!strcmp(argv[i], "--profile")) profile = 1;
        else if (!strcmp(argv[i], "--timing-only")) timing_only = 1;
        else if (argv[i][0] == '-') { fprintf(stderr, "atoll run: unknown option '%s'\n", argv[i]); bad = 1; }
        else if (!model_path) model_path = argv[i];
        else { fprintf(stderr, "atoll run: more than one model given ('%s')\n", argv[i]); bad = 1; }
    }
    if (!bad && (!model_path || !chip || !input)) {
        fprintf(stderr, "atoll run: %s is required\n", !model_path ? "a model" : !chip ? "--chip" : "--input");
        bad = 1;
    }
    AtlOpenOptions opt = { 0 };
    char *end;
    if (!bad && heap && ((opt.fw_heap_bytes = strtoull(heap, &end, 0)) == 0 || *end)) {
        fprintf(stderr, "atoll run: --fw-heap '%s' is not a positive byte count\n", heap);
        bad = 1;
    }
    if (!bad && maxc && ((opt.max_cycles = strtoull(maxc, &end, 0)) == 0 || *end)) {
        fprintf(stderr, "atoll run: --max-cycles '%s' is not a positive number\n", maxc);
        bad = 1;
    }
    if (bad) { usage(stderr); return 2; }
    opt.trace = trace != NULL;
    opt.timing_only = timing_only;

    AtlNdArray *arr = NULL;
    int narr = 0;
    if (read_inputs(input, &arr, &narr)) return 1;
    int rc = 1;
    AtlDevice *dev = NULL;
    AtlModel *m = NULL;
    AtlBuffer *buf = calloc((size_t)narr + 1, sizeof *buf);
    void **owned = calloc((size_t)narr + 1, sizeof *owned);
    AtlStatus s = buf && owned ? atl_open(&dev, chip, &opt) : ATL_ERR_HOST_MEMORY;
    if (s == ATL_OK) s = atl_load_file(dev, model_path, &m);
    if (s != ATL_OK) {
        fprintf(stderr, "atoll run: %s (%s)\n", dev ? atl_last_error(dev) : "out of memory", atl_status_name(s));
        goto out;
    }
    const AtlNetInfo *nets;
    uint32_t nn, ni = 0;
    atl_nets(m, &nets, &nn);
    if (net_name) while (ni < nn && strcmp(nets[ni].name, net_name)) ni++;
    if (ni >= nn) {
        fprintf(stderr, "atoll run: %s has no net%s%s%s\n", model_path, net_name ? " named '" : "s", net_name ? net_name : "", net_name ? "'" : "");
        goto out;
    }
    int nbuf = make_buffers(&nets[ni], arr, narr, ends_with(input, ".npz"), buf, owned, input);
    if (nbuf < 0) goto out;
    uint32_t stage;
    s = atl_run(m, nets[ni].name, buf, (uint32_t)nbuf, &stage);
    if (s != ATL_OK) {
        fprintf(stderr, "atoll run: %s (%s)\n", atl_last_error(dev), atl_status_name(s));
        goto out;
    }
    const AtlStageInfo *st = &nets[ni].stages[stage];
    AtlProfile p;
    atl_profile(m, &p);
    printf("ran net '%s' stage %u (batch %u) in %llu cycles\n", nets[ni].name, stage, st->batch, (unsigned long long)p.cycles);
    for (uint32_t i = 0; i < st->n_outputs; i++) {
        char sh[128];
        shape_text(sh, sizeof sh, st->outputs[i].ndim, st->outputs[i].dims);
        printf("  output %s %s%s\n", st->outputs[i].name, dtype_names[st->outputs[i].dtype], sh);
    }
    if (profile) print_profile(&p);
    if (output && write_outputs(m, dev, st, output)) goto out;
    if (dump && dump_tensors(m, dev, st, dump)) goto out;
    char *json = NULL;
    if (stats) {
        if (atl_stats_json(dev, &json)) { fprintf(stderr, "atoll run: %s\n", atl_last_error(dev)); goto out; }
        int w = write_text(stats, json);
        free(json);
        if (w) goto out;
    }
    if (trace) {
        if (atl_trace_json(dev, &json)) { fprintf(stderr, "atoll run: %s\n", atl_last_error(dev)); goto out; }
        int w = write_text(trace, json);
        free(json);
        if (w) goto out;
    }
    rc = 0;
out:
    atl_unload(m);
    atl_close(dev);
    free(buf);
    for (int i = 0; owned && i < narr; i++) free(owned[i]);
    free(owned);
    atl_ndarray_list_free(arr, narr);
    return rc;
}
