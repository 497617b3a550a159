/* cmd_demo.c - `atoll demo`, what `make demo` runs: the digits CNN
 * (models/digits_cnn.onnx) compiled for the chip and run through the host
 * API (include/atoll.h: device, firmware, simulator) over its held-out
 * test set (models/digits_cnn.test.npz, 360 images), with accuracy and
 * every prediction checked against PyTorch's (models/digits_cnn.json),
 * images per second at the chip's clock, cycles per image, matrix-unit
 * utilisation and a Chrome trace of the first batch; then ResNet-50
 * (models/full/resnet50.onnx, weights synthesised when the external data
 * file is missing) compiled and run through the host API on a timing-only
 * device (AtlOpenOptions.timing_only). Each runs a second time in int8
 * (tools/quantize.h: the digits CNN calibrated on the first 64 test
 * images, ResNet-50 on one deterministic random image; min/max ranges),
 * the digits CNN with its accuracy and its agreement with the fp32 run.
 * All images are built with zlib level 0 (they never leave memory), so the
 * compile times printed leave out the weight compression that `atoll
 * compile` does (about 2.5 s of CPU for ResNet-50's 102 MB).
 *
 * Exit status 1 if any prediction differs from PyTorch's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tools/cli.h"
#include "tools/model_io.h"
#include "tools/chip_exec.h"
#include "tools/quantize.h"
#include "compiler/passes/passes.h"
#include "util/file.h"
#include "util/npy.h"

const char cmd_demo_summary[] = "digits CNN on the simulated chip in fp32 and int8 (accuracy vs PyTorch, speed) and ResNet-50 timing";

typedef struct DemoOpts {
    const char *chip_path, *models, *trace;
    int images, batch, resnet, int8;
    CliProgress *progress;
} DemoOpts;

enum { CALIB_IMAGES = 64 };   /* digits int8: calibrated on the first test images */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Reads the integer array `"key": [ ... ]` of a JSON text; *out malloc'd. */
static int json_int_array(const char *text, const char *key, int **out, int *n, AtlErr *e)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(text, pat);
    if (!p) return atl_fail(e, "no \"%s\" array", key);
    p = strchr(p + strlen(pat), '[');
    if (!p) return atl_fail(e, "\"%s\" is not an array", key);
    int cap = 64, k = 0;
    int *v = malloc((size_t)cap * sizeof *v);
    if (!v) return atl_fail(e, "out of memory");
    p++;
    for (;;) {
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == ',') p++;
        if (*p == ']') break;
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p) { free(v); return atl_fail(e, "\"%s\": element %d is not an integer", key, k); }
        if (k == cap) {
            int *q = realloc(v, (size_t)(cap *= 2) * sizeof *v);
            if (!q) { free(v); return atl_fail(e, "out of memory"); }
            v = q;
        }
        v[k++] = (int)x;
        p = end;
    }
    *out = v;
    *n = k;
    return 0;
}

static const AtlNdArray *npz_array(const AtlNdArray *l, int n, const char *name)
{
    for (int i = 0; i < n; i++) if (!strcmp(l[i].name, name)) return &l[i];
    return NULL;
}

/* Loads, canonicalises and compiles a model (in int8: quantised on
 * calib first, the QDQ model compiled); reports the compile time. */
static int compile_model(const char *path, const char *shape, int synthetic, const CalibData *calib, const AtlChip *chip,
                         IrGraph *g, uint8_t **abm, size_t *len, double *seconds, AtlErr *e)
{
    double t0 = now();
    IrInputShape s;
    OnnxLoadOpts lo = {synthetic, 0, 0, 0};
    if (ir_parse_input_shape(shape, &s, e)) return -1;
    if (calib) {
        QzOptions qo;
        PbBuf q;
        qz_options_default(&qo);
        qo.skip_eval = 1;
        int rc = qz_quantize_model(path, &lo, NULL, 0, NULL, 0, calib, &qo, NULL, &q, NULL, e) ||
                 model_load_buffer(q.p, q.n, path, &s, 1, g, e);
        pb_free(&q);
        if (rc || pass_run_all(g, e)) return -1;
    } else if (model_load_opts("demo", path, &s, 1, &lo, g, e) || pass_run_all(g, e)) return -1;
    if (chip_compile_graph(g, chip, NULL, 0, abm, len, NULL, e)) return atl_err_prefix(e, "%s", path);
    *seconds = now() - t0;
    return 0;
}

/* The first n images (Nx1x8x8 at px) as calibration samples of one image each. */
static int digits_calib(const float *px, int n, CalibData *d, AtlErr *e)
{
    memset(d, 0, sizeof d[0]);
    d->in = calloc((size_t)n, sizeof *d->in);
    if (!d->in) return atl_fail(e, "out of memory");
    d->nin = 1;
    for (int i = 0; i < n; i++, d->nsamples++) {
        IrTensor *t = &d->in[i];
        t->name = ir_strdup("input");
        t->dtype = IR_F32;
        t->ndim = 4;
        t->dims[0] = 1; t->dims[1] = 1; t->dims[2] = 8; t->dims[3] = 8;
        t->producer = -1;
        if (!t->name || ir_alloc_data(t, e)) return t->name ? -1 : atl_fail(e, "out of memory");
        memcpy(t->data, px + (size_t)i * 64, 64 * sizeof(float));
    }
    return 0;
}

/* Totals over the runs of the digits set. */
typedef struct DemoTotals {
    uint64_t cycles, fw_cycles, macs;
    double mat_busy;         /* matrix-engine busy cycles summed over cores */
} DemoTotals;

/* One batch of images through the host API; predictions stored in pred. */
static int run_batch(HostExec *h, const IrGraph *g, const float *images, int first, int count, int batch, int *pred,
                     DemoTotals *tot, AtlErr *e)
{
    IrTensor in = g->t[g->inputs[0]];
    in.data = NULL;
    if (ir_alloc_data(&in, e)) return -1;
    memcpy(in.data, images + (size_t)first * 64, (size_t)count * 64 * sizeof(float));
    int rc = host_exec_run(h, &in, 1, e);
    free(in.data);
    if (rc) return -1;
    IrTensor out;
    if (host_exec_output(h, g->t[g->outputs[0]].name, &out, e)) return -1;
    int classes = out.ndim == 2 ? (int)out.dims[1] : 0;
    if (out.ndim != 2 || out.dims[0] != batch) {
        ir_tensor_free_contents(&out);
        return atl_fail(e, "digits output has an unexpected shape");
    }
    for (int i = 0; i < count; i++) {
        int best = 0;
        for (int c = 1; c < classes; c++)
            if (ir_get_f(&out, (int64_t)i * classes + c) > ir_get_f(&out, (int64_t)i * classes + best)) best = c;
        pred[first + i] = best;
    }
    ir_tensor_free_contents(&out);
    AtlProfile p;
    AtlStatus st = atl_profile(h->model, &p);
    if (st != ATL_OK) return atl_fail(e, "profile: %s", atl_status_name(st));
    tot->cycles += p.cycles;
    tot->fw_cycles += p.fw_cycles;
    tot->macs += p.macs;
    tot->mat_busy += (double)p.busy[1];
    return 0;
}

/* Compiles the digits CNN (int8 when calib is given), runs the nimg
 * images at px in batches through the host API (a Chrome trace of the
 * first one into trace when set); pred gets the predictions. */
static int digits_run(const DemoOpts *o, const AtlChip *chip, const CalibData *calib, const float *px, int nimg,
                      const char *trace, int *pred, DemoTotals *tot, double *compile_s, double *t_sim, AtlErr *e)
{
    char path[512], shape[64];
    IrGraph g;
    uint8_t *abm = NULL;
    size_t len = 0;
    HostExec h;
    int rc = -1;
    memset(&h, 0, sizeof h);
    memset(tot, 0, sizeof *tot);
    ir_init(&g);
    snprintf(path, sizeof path, "%s/digits_cnn.onnx", o->models);
    snprintf(shape, sizeof shape, "input=%dx1x8x8", o->batch);
    if (compile_model(path, shape, 0, calib, chip, &g, &abm, &len, compile_s, e)) goto out;
    double t0 = now();
    /* the first batch on a device that keeps a trace, the rest without */
    for (int first = 0, traced = 0; first < nimg; first += o->batch) {
        int count = nimg - first < o->batch ? nimg - first : o->batch;
        AtlOpenOptions ho = {.trace = !traced && trace};
        if (!h.dev && host_exec_open(&h, chip, abm, len, &ho, e)) goto out;
        cli_progress(o->progress, "digits%s: image %d of %d", calib ? " (int8)" : "", first, nimg);
        if (run_batch(&h, &g, px, first, count, o->batch, pred, tot, e)) goto out;
        if (!traced && trace) {
            char *tr = NULL;
            AtlStatus st = atl_trace_json(h.dev, &tr);
            int wr = st != ATL_OK ? atl_fail(e, "trace: %s", atl_status_name(st)) : atl_write_file_atomic(trace, tr, strlen(tr), e);
            free(tr);
            if (wr) goto out;
            host_exec_close(&h);
        }
        traced = 1;
    }
    *t_sim = now() - t0;
    cli_progress_end(o->progress);
    rc = 0;
out:
    host_exec_close(&h);
    free(abm);
    ir_free(&g);
    return rc;
}

/* The speed lines of a digits run. */
static void print_speed(const AtlChip *chip, const DemoTotals *tot, int nimg)
{
    double f = chip->freq_mhz * 1e6;
    int cores = chip->clusters * chip->cores_per_cluster;
    double peak = (double)chip->mm_rows * chip->mm_cols * cores;
    uint64_t all = tot->cycles + tot->fw_cycles;
    printf("  images/s       %.0f (simulated, at %.0f MHz, firmware included)\n", (double)nimg * f / (double)all, chip->freq_mhz);
    printf("  cycles/image   %.0f (%.0f on the cores, %.0f in the firmware)\n", (double)all / nimg,
           (double)tot->cycles / nimg, (double)tot->fw_cycles / nimg);
    printf("  matrix unit    %.2f%% MAC utilisation (MACs / (cycles x %dx%d x %d cores)), busy %.2f%% of core cycles\n",
           100 * (double)tot->macs / ((double)tot->cycles * peak), chip->mm_rows, chip->mm_cols, cores,
           100 * tot->mat_busy / ((double)tot->cycles * cores));
}

static int demo_digits(const DemoOpts *o, const AtlChip *chip, AtlErr *e)
{
    char path[512];
    int rc = -1, *labels = NULL, *torch = NULL, *pred = NULL, *pred8 = NULL, nlab = 0, ntorch = 0, nimg = 0;
    unsigned char *json = NULL;
    size_t jlen;
    AtlNdArray *set = NULL;
    int nset = 0;
    CalibData calib;
    memset(&calib, 0, sizeof calib);
    double t_start = now();
    snprintf(path, sizeof path, "%s/digits_cnn.json", o->models);
    if (atl_read_file(path, &json, &jlen, e)) goto out;
    char *text = malloc(jlen + 1);
    if (!text) { atl_fail(e, "out of memory"); goto out; }
    memcpy(text, json, jlen);
    text[jlen] = 0;
    int jr = json_int_array(text, "labels", &labels, &nlab, e) || json_int_array(text, "predicted", &torch, &ntorch, e);
    free(text);
    if (jr) { atl_err_prefix(e, "%s", path); goto out; }
    snprintf(path, sizeof path, "%s/digits_cnn.test.npz", o->models);
    if (atl_npz_read(path, &set, &nset, e)) goto out;
    const AtlNdArray *images = npz_array(set, nset, "input");
    if (!images || images->dtype != ATL_NPY_F32 || images->ndim != 4 || images->shape[1] * images->shape[2] * images->shape[3] != 64) {
        atl_fail(e, "%s: no float32 'input' array of Nx1x8x8 images", path);
        goto out;
    }
    nimg = (int)images->shape[0];
    if (nlab != nimg || ntorch != nimg) { atl_fail(e, "%d images but %d labels and %d PyTorch predictions", nimg, nlab, ntorch); goto out; }
    if (o->images > 0 && o->images < nimg) nimg = o->images;
    pred = calloc((size_t)nimg + 1, sizeof *pred);
    pred8 = calloc((size_t)nimg + 1, sizeof *pred8);
    if (!pred || !pred8) { atl_fail(e, "out of memory"); goto out; }
    const float *px = images->data;
    DemoTotals tot;
    double compile_s, t_sim;
    if (digits_run(o, chip, NULL, px, nimg, o->trace, pred, &tot, &compile_s, &t_sim, e)) goto out;
    int correct = 0, torch_correct = 0, agree = 0, first_diff = -1;
    for (int i = 0; i < nimg; i++) {
        correct += pred[i] == labels[i];
        torch_correct += torch[i] == labels[i];
        if (pred[i] == torch[i]) agree++;
        else if (first_diff < 0) first_diff = i;
    }
    printf("digits CNN on %s (%d cores, %.0f MHz), batch %d, fp32:\n", o->chip_path,
           chip->clusters * chip->cores_per_cluster, chip->freq_mhz, o->batch);
    printf("  accuracy       %d/%d = %.2f%% (PyTorch: %d/%d = %.2f%%)\n", correct, nimg, 100.0 * correct / nimg,
           torch_correct, nimg, 100.0 * torch_correct / nimg);
    printf("  predictions    equal to PyTorch's for %d/%d images\n", agree, nimg);
    print_speed(chip, &tot, nimg);
    printf("  compile        %.3f s; simulation %.2f s on the host (%.0f images/s)\n", compile_s, t_sim, nimg / t_sim);
    if (o->trace) printf("  trace          %s (first batch; open in chrome://tracing or Perfetto)\n", o->trace);
    if (o->int8) {
        int ncal = nimg < CALIB_IMAGES ? nimg : CALIB_IMAGES, correct8 = 0, agree8 = 0;
        if (digits_calib(px, ncal, &calib, e) || digits_run(o, chip, &calib, px, nimg, NULL, pred8, &tot, &compile_s, &t_sim, e))
            goto out;
        for (int i = 0; i < nimg; i++) { correct8 += pred8[i] == labels[i]; agree8 += pred8[i] == pred[i]; }
        printf("digits CNN, int8 (calibrated on the first %d test images, min/max ranges):\n", ncal);
        printf("  accuracy       %d/%d = %.2f%% (fp32: %d/%d = %.2f%%)\n", correct8, nimg, 100.0 * correct8 / nimg, correct, nimg,
               100.0 * correct / nimg);
        printf("  predictions    equal to fp32's for %d/%d images\n", agree8, nimg);
        print_speed(chip, &tot, nimg);
        printf("  compile        %.3f s (quantisation included); simulation %.2f s on the host\n", compile_s, t_sim);
    }
    printf("  wall time      %.2f s\n", now() - t_start);
    if (first_diff >= 0) {
        atl_fail(e, "image %d: the chip predicts %d, PyTorch %d (%d of %d predictions differ)", first_diff, pred[first_diff],
                 torch[first_diff], nimg - agree, nimg);
        goto out;
    }
    rc = 0;
out:
    calib_data_free(&calib);
    atl_ndarray_list_free(set, nset);
    free(json); free(labels); free(torch); free(pred); free(pred8);
    return rc;
}

static int demo_resnet(const DemoOpts *o, const AtlChip *chip, int int8, AtlErr *e)
{
    char path[512];
    IrGraph g;
    uint8_t *abm = NULL;
    size_t len = 0;
    HostExec h;
    int rc = -1, r;
    memset(&h, 0, sizeof h);
    ir_init(&g);
    snprintf(path, sizeof path, "%s/full/resnet50.onnx", o->models);
    double compile_s, t0;
    CalibData calib;
    memset(&calib, 0, sizeof calib);
    if (int8) {
        IrInputShape s;
        OnnxLoadOpts lo = {1, 0, 0, 0};
        IrGraph raw;
        cli_progress(o->progress, "quantising ResNet-50");
        r = ir_parse_input_shape("input=1x3x224x224", &s, e) || model_load_opts("demo", path, &s, 1, &lo, &raw, e) ||
            calib_data_random(&raw, 12345, &calib, e);
        ir_free(&raw);
        if (r) goto out;
    }
    cli_progress(o->progress, "compiling ResNet-50%s", int8 ? " in int8" : "");
    r = compile_model(path, "input=1x3x224x224", 1, int8 ? &calib : NULL, chip, &g, &abm, &len, &compile_s, e);
    calib_data_free(&calib);
    if (r) goto out;
    cli_progress(o->progress, "running ResNet-50 (timing only)");
    t0 = now();
    AtlOpenOptions ho = {.timing_only = 1};
    if (host_exec_open(&h, chip, abm, len, &ho, e)) goto out;
    IrTensor in = g.t[g.inputs[0]];
    in.data = NULL;
    if (ir_alloc_data(&in, e)) goto out;
    r = host_exec_run(&h, &in, 1, e);
    free(in.data);
    if (r) goto out;
    AtlProfile p;
    AtlStatus st = atl_profile(h.model, &p);
    if (st != ATL_OK) { atl_fail(e, "profile: %s", atl_status_name(st)); goto out; }
    int cores = chip->clusters * chip->cores_per_cluster;
    cli_progress_end(o->progress);
    if (int8) printf("ResNet-50, int8 (calibrated on one random image, min/max ranges), batch 1, timing only:\n");
    else printf("ResNet-50 (models/full/resnet50.onnx, synthetic weights where the data file is missing), batch 1, fp32, timing only:\n");
    printf("  images/s       %.1f (simulated, at %.0f MHz)\n", chip->freq_mhz * 1e6 / (double)p.cycles, chip->freq_mhz);
    printf("  cycles/image   %llu\n", (unsigned long long)p.cycles);
    printf("  matrix unit    %.2f%% MAC utilisation\n",
           100 * (double)p.macs / ((double)p.cycles * chip->mm_rows * chip->mm_cols * cores));
    printf("  compile        %.2f s (%sweights left uncompressed: the image stays in memory); simulation %.2f s on the host\n",
           compile_s, int8 ? "quantisation included; " : "", now() - t0);
    rc = 0;
out:
    host_exec_close(&h);
    free(abm);
    ir_free(&g);
    return rc;
}

static int parse_count(const char *v, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end || n < 1 || n > 100000) { fprintf(stderr, "atoll demo: '%s' is not a positive count\n", v); return -1; }
    *out = (int)n;
    return 0;
}

static const char usage_text[] =
    "usage: atoll demo [--chip CHIP] [--images N] [--batch B] [--trace FILE|--no-trace] [--no-resnet]\n"
    "                  [--no-int8] [--models DIR] [--progress]\n"
    "The digits CNN over its 360 held-out images on the simulated chip (accuracy and\n"
    "every prediction against PyTorch's, speed, a Chrome trace of the first batch),\n"
    "then ResNet-50 compiled and run on a timing-only device; each in fp32, then in int8.\n"
    "  --chip CHIP    a config file or a name (default a1)\n"
    "  --images N     only the first N images\n"
    "  --batch B      images per run (default 40)\n"
    "  --trace FILE   where the trace goes (default build/demo-digits-trace.json)\n"
    "  --no-trace     no trace\n"
    "  --no-resnet    skip ResNet-50\n"
    "  --no-int8      skip the int8 runs\n"
    "  --models DIR   the model directory (default: ./models, else the installed\n"
    "                 share/atoll/models)\n"
    "  --progress     report progress on stderr even when it is not a terminal\n"
    "Exit status: 0 ok, 1 a prediction differs from PyTorch's or an error, 2 usage.\n";

int cmd_demo(int argc, char **argv)
{
    char models[4096], chip_path[4096];
    cli_data_dir("models", models, sizeof models);
    DemoOpts o = {NULL, models, "build/demo-digits-trace.json", 0, 40, 1, 1, NULL};
    const char *v, *chip_arg = NULL;
    int bad = 0;
    CliProgressMode pmode = CLI_PROGRESS_AUTO;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { fputs(usage_text, stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) chip_arg = v;
        else if ((v = cli_opt(argc, argv, &i, "--models", &bad))) o.models = v;
        else if ((v = cli_opt(argc, argv, &i, "--trace", &bad))) o.trace = v;
        else if ((v = cli_opt(argc, argv, &i, "--images", &bad))) { if (parse_count(v, &o.images)) return 2; }
        else if ((v = cli_opt(argc, argv, &i, "--batch", &bad))) { if (parse_count(v, &o.batch)) return 2; }
        else if (bad) return 2;
        else if (!strcmp(argv[i], "--no-resnet")) o.resnet = 0;
        else if (!strcmp(argv[i], "--no-int8")) o.int8 = 0;
        else if (!strcmp(argv[i], "--no-trace")) o.trace = NULL;
        else if (!strcmp(argv[i], "--progress")) pmode = CLI_PROGRESS_ON;
        else if (argv[i][0] == '-') return cli_bad_option("demo", argv[i], usage_text);
        else { fprintf(stderr, "atoll demo: unexpected argument '%s'\n", argv[i]); return 2; }
    }
    AtlChip chip;
    AtlErr e = {{0}};
    if (cli_load_chip("demo", chip_arg, NULL, &chip, chip_path, sizeof chip_path)) return 1;
    o.chip_path = chip_path;
    /* the trace's default place is the build directory, which an installed copy lacks */
    if (o.trace && !strcmp(o.trace, "build/demo-digits-trace.json") && access("build", W_OK)) o.trace = "demo-digits-trace.json";
    CliProgress pr;
    cli_progress_init(&pr, "demo", pmode);
    o.progress = &pr;
    int failed = demo_digits(&o, &chip, &e) || (o.resnet && demo_resnet(&o, &chip, 0, &e)) ||
                 (o.resnet && o.int8 && demo_resnet(&o, &chip, 1, &e));
    cli_progress_end(&pr);
    if (failed) {
        fprintf(stderr, "atoll demo: %s\n", e.msg);
        return 1;
    }
    return 0;
}
