/* cmd_quantize.c - `atoll quantize MODEL.onnx --calib DATA -o MODEL.q.onnx`:
 * post-training int8 quantisation into a QDQ model (tools/quantize.h,
 * docs/quantization.md). DATA is an .npy / .npz batch or a folder of them
 * (repeatable). Progress goes to stderr, the summary to stdout, the ranges
 * to --table FILE. The output keeps the model's declared input and output
 * shapes (a dynamic batch stays dynamic). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/model_io.h"
#include "tools/quantize.h"
#include "compiler/onnx/onnx.h"
#include "compiler/passes/passes.h"
#include "util/file.h"

const char cmd_quantize_summary[] = "post-training int8 quantisation of an ONNX model into a QDQ model";

#define MAXOPT 64

static const char usage_text[] =
    "usage: atoll quantize MODEL.onnx --calib DATA -o MODEL.q.onnx [options]\n"
    "  --calib DATA           calibration data: X.npy (the only input), IN.npz (arrays named like\n"
    "                         the inputs) or a folder of them; repeatable. [n, ...] holds n samples\n"
    "  -o FILE                the QDQ model to write\n"
    "  --method M             minmax (default), percentile, kl (TensorRT entropy), mse\n"
    "  --percentile P         for --method percentile (default 99.99)\n"
    "  --fallback auto|none   auto: keep the most sensitive layers float until --target-cos\n"
    "                         is reached on the calibration data; none (default): quantise all it can\n"
    "  --target-cos C         (default 0.99)\n"
    "  --keep-float NODE      never quantise this node (repeatable)\n"
    "  --max-samples N        use at most N calibration samples\n"
    "  --table FILE           write the ranges, scales and zero points as a table\n"
    "  --input-shape NAME=DIMS fix an input's shape (a dynamic batch is 1 by default)\n"
    "  --synthetic-weights    invent initializers whose external data file is missing\n"
    "  --quiet                no progress on stderr\n";

static void usage(FILE *f) { fputs(usage_text, f); }

static int write_table(const char *path, const IrGraph *g, const QzResult *r, const QzOptions *o, AtlErr *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return atl_fail(e, "out of memory");
    qz_write_table(g, r, o, f);
    fclose(f);
    int rc = atl_write_file_atomic(path, buf, len, e);
    free(buf);
    return rc;
}

int cmd_quantize(int argc, char **argv)
{
    const char *model = NULL, *out = NULL, *table = NULL, *calib[MAXOPT], *keep[MAXOPT], *v;
    IrInputShape shapes[MAXOPT];
    int ncalib = 0, nkeep = 0, nshapes = 0, bad = 0, quiet = 0, synth = 0;
    uint64_t max_samples = 0;
    QzOptions o;
    qz_options_default(&o);
    AtlErr e = {{0}};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "--calib", &bad))) {
            if (ncalib == MAXOPT) { fprintf(stderr, "atoll quantize: too many --calib options\n"); return 2; }
            calib[ncalib++] = v;
        } else if ((v = cli_opt(argc, argv, &i, "-o", &bad))) out = v;
        else if ((v = cli_opt(argc, argv, &i, "--table", &bad))) table = v;
        else if ((v = cli_opt(argc, argv, &i, "--method", &bad))) {
            if ((o.method = calib_method_parse(v)) < 0) { fprintf(stderr, "atoll quantize: --method '%s': use minmax, percentile, kl or mse\n", v); return 2; }
        } else if ((v = cli_opt(argc, argv, &i, "--percentile", &bad))) {
            if (cli_parse_real("quantize", "--percentile", v, 50, 100, &o.percentile)) return 2;
        } else if ((v = cli_opt(argc, argv, &i, "--target-cos", &bad))) {
            if (cli_parse_real("quantize", "--target-cos", v, -1, 1, &o.target_cos)) return 2;
        } else if ((v = cli_opt(argc, argv, &i, "--fallback", &bad))) {
            if (!strcmp(v, "auto")) o.fallback = QZ_FALLBACK_AUTO;
            else if (!strcmp(v, "none")) o.fallback = QZ_FALLBACK_NONE;
            else { fprintf(stderr, "atoll quantize: --fallback '%s': use auto or none\n", v); return 2; }
        } else if ((v = cli_opt(argc, argv, &i, "--keep-float", &bad))) {
            if (nkeep == MAXOPT) { fprintf(stderr, "atoll quantize: too many --keep-float options\n"); return 2; }
            keep[nkeep++] = v;
        } else if ((v = cli_opt(argc, argv, &i, "--max-samples", &bad))) {
            if (cli_parse_u64("quantize", "--max-samples", v, 1, 1u << 30, &max_samples)) return 2;
        } else if ((v = cli_opt(argc, argv, &i, "--input-shape", &bad))) {
            if (nshapes == MAXOPT) { fprintf(stderr, "atoll quantize: too many --input-shape options\n"); return 2; }
            if (ir_parse_input_shape(v, &shapes[nshapes++], &e)) { fprintf(stderr, "atoll quantize: %s\n", e.msg); return 2; }
        } else if (bad) return 2;
        else if (!strcmp(argv[i], "--quiet")) quiet = 1;
        else if (!strcmp(argv[i], "--synthetic-weights")) synth = 1;
        else if (argv[i][0] == '-') return cli_bad_option("quantize", argv[i], usage_text);
        else if (!model) model = argv[i];
        else { fprintf(stderr, "atoll quantize: more than one model given ('%s')\n", argv[i]); return 2; }
    }
    if (!model) { fprintf(stderr, "atoll quantize: no model given\n"); usage(stderr); return 2; }
    if (!ncalib) { fprintf(stderr, "atoll quantize: no --calib data given\n"); usage(stderr); return 2; }
    if (!out) { fprintf(stderr, "atoll quantize: no output given (-o MODEL.q.onnx)\n"); usage(stderr); return 2; }
    CliPath ins[MAXOPT + 1], outs[] = {{"-o", out}, {"--table", table}};
    ins[0] = (CliPath){"model", model};
    for (int k = 0; k < ncalib; k++) ins[k + 1] = (CliPath){"--calib", calib[k]};
    if (cli_check_outputs("quantize", ins, ncalib + 1, outs, 2)) return 2;
    o.keep_float = keep;
    o.nkeep = nkeep;
    o.progress = quiet ? NULL : stderr;
    OnnxLoadOpts lo = {synth, 0, 0, 0};
    IrGraph g;
    CalibData d;
    QzResult r;
    memset(&d, 0, sizeof d);
    memset(&r, 0, sizeof r);
    ir_init(&g);
    ir_init(&r.qdq);
    int rc = 1;
    if (model_load_batch("quantize", model, shapes, nshapes, 0, &lo, &g, &e) || pass_run_all(&g, &e)) goto done;
    if (calib_data_read(&g, calib, ncalib, (int)max_samples, &d, &e)) goto done;
    if (qz_quantize(&g, &d, &o, &r, &e)) goto done;
    if (qz_restore_declared(model, &lo, &r.qdq, &e) || onnx_save_file(&r.qdq, out, &e)) goto done;
    if (table && write_table(table, &g, &r, &o, &e)) goto done;
    int kept = 0;
    for (int i = 0; i < r.nlayers; i++) kept += r.layers[i].kept_float;
    printf("%s -> %s: %d layers in int8, %d kept float; %d tensors calibrated on %d samples (%s); cosine to the float "
           "model %.6f\n", model, out, r.nlayers - kept, kept, r.ntensors, r.nsamples, calib_method_name(o.method), r.cos);
    rc = 0;
done:
    if (rc && e.msg[0]) fprintf(stderr, "atoll quantize: %s\n", e.msg);
    qz_result_free(&r);
    calib_data_free(&d);
    ir_free(&g);
    return rc;
}
