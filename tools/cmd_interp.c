/* cmd_interp.c - `atoll interp MODEL.onnx --input X.npy|IN.npz [--input
 * NAME=X.npy] [--input-shape NAME=DIMS]... [--output OUT.npz] [--passes]`:
 * runs the model on the reference interpreter. Without --output it prints
 * each output's name, dtype, shape and a short summary of its values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/model_io.h"
#include "compiler/interp/interp.h"
#include "compiler/passes/passes.h"

const char cmd_interp_summary[] = "run an ONNX model on the reference interpreter";

#define MAXOPT 64

static const char usage_text[] =
    "usage: atoll interp MODEL.onnx --input X.npy|IN.npz|NAME=X.npy [--input ...]\n"
    "                    [--input-shape NAME=1x3x224x224]... [--batch N] [--output OUT.npz] [--passes]\n"
    "Runs the model on the reference interpreter and prints a summary of each output.\n"
    "  --input        X.npy feeds the only graph input, NAME=X.npy the input NAME, an .npz\n"
    "                 its inputs by array name; float arrays of any width feed float\n"
    "                 inputs, integer arrays integer inputs where every value fits\n"
    "                 (converted, with a note)\n"
    "  --input-shape  fix or change an input's shape (NAME=DIMS, repeatable); a dimension\n"
    "                 the model fixed may be changed when the graph allows it\n"
    "  --batch N      set dimension 0 of every input; in a model exported at another\n"
    "                 batch, constants that hold the exported batch follow it (its\n"
    "                 constant subgraphs are folded first)\n"
    "  --output F     write the outputs to F (.npz)\n"
    "  --passes       run the canonicalisation passes before interpreting\n";

static void usage(FILE *fp) { fputs(usage_text, fp); }

static void summarize(const IrTensor *t)
{
    char sh[128];
    printf("%s: %s[%s]", t->name, ir_dtype_name(t->dtype), ir_shape_str(t, sh, sizeof sh));
    int64_t n = ir_numel(t);
    if (n <= 0) { printf("\n"); return; }
    double mn = ir_get_f(t, 0), mx = mn, sum = 0;
    int64_t am = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = ir_get_f(t, i);
        if (v < mn) mn = v;
        if (v > mx) { mx = v; am = i; }
        sum += v;
    }
    printf(" min %.6g max %.6g (at %lld) mean %.6g  [", mn, mx, (long long)am, sum / (double)n);
    for (int64_t i = 0; i < n && i < 6; i++) printf("%s%.6g", i ? ", " : "", ir_get_f(t, i));
    printf("%s]\n", n > 6 ? ", ..." : "");
}

int cmd_interp(int argc, char **argv)
{
    const char *model = NULL, *outpath = NULL, *inputs[MAXOPT], *v;
    IrInputShape shapes[MAXOPT];
    int nin = 0, nshapes = 0, bad = 0, passes = 0, rc = 1, batch = 0;
    AtlErr e = {{0}};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "--input-shape", &bad))) {
            if (nshapes == MAXOPT) { fprintf(stderr, "atoll interp: too many --input-shape options\n"); return 2; }
            if (ir_parse_input_shape(v, &shapes[nshapes++], &e)) { fprintf(stderr, "atoll interp: %s\n", e.msg); return 2; }
        } else if ((v = cli_opt(argc, argv, &i, "--input", &bad))) {
            if (nin == MAXOPT) { fprintf(stderr, "atoll interp: too many --input options\n"); return 2; }
            inputs[nin++] = v;
        } else if ((v = cli_opt(argc, argv, &i, "--output", &bad))) outpath = v;
        else if ((v = cli_opt(argc, argv, &i, "--batch", &bad))) {
            char *end;
            long b = strtol(v, &end, 10);
            if (end == v || *end || b < 1 || b > 65535) { fprintf(stderr, "atoll interp: --batch '%s': a number 1..65535\n", v); return 2; }
            batch = (int)b;
        }
        else if (bad) return 2;
        else if (!strcmp(argv[i], "--passes")) passes = 1;
        else if (argv[i][0] == '-') return cli_bad_option("interp", argv[i], usage_text);
        else if (!model) model = argv[i];
        else { fprintf(stderr, "atoll interp: more than one model given ('%s')\n", argv[i]); return 2; }
    }
    if (!model) { fprintf(stderr, "atoll interp: no model given\n"); usage(stderr); return 2; }
    if (!nin) { fprintf(stderr, "atoll interp: no --input given\n"); usage(stderr); return 2; }
    CliPath ins[MAXOPT + 1], outp[] = {{"--output", outpath}};
    ins[0] = (CliPath){"model", model};
    for (int k = 0; k < nin; k++) {
        const char *eq = strchr(inputs[k], '=');   /* NAME=X.npy */
        ins[k + 1] = (CliPath){"--input", eq ? eq + 1 : inputs[k]};
    }
    if (cli_check_outputs("interp", ins, nin + 1, outp, 1)) return 2;
    IrGraph g;
    IrTensor *tin = NULL, *outs = NULL;
    int ntin = 0;
    ir_init(&g);
    if (batch ? model_load_batch("interp", model, shapes, nshapes, batch, NULL, &g, &e)
              : model_load_opts("interp", model, shapes, nshapes, NULL, &g, &e))
        goto done;
    if (passes && pass_run_all(&g, &e)) goto done;
    /* a batch the export fixed otherwise: its constant subgraphs are folded (the
     * same kernels) so that constants holding the exported batch follow the new
     * one (compiler/ops/batch_follow.c), as they do in `atoll compile` */
    if (!passes && g.batch_follow && pass_fold_constants(&g, &e)) goto done;
    if (model_read_inputs("interp", &g, (const char *const *)inputs, nin, &tin, &ntin, &e)) goto done;
    if (interp_run(&g, tin, ntin, &outs, &e)) goto done;
    if (outpath) {
        AtlNdArray *arr = calloc((size_t)g.nout + 1, sizeof *arr);
        int k = 0, ok = arr != NULL;
        for (; ok && k < g.nout; k++) if (model_array_from_tensor(&outs[k], &arr[k], &e)) ok = 0;
        if (ok && atl_npz_write(outpath, arr, g.nout, &e)) ok = 0;
        if (arr) atl_ndarray_list_free(arr, k);
        if (!ok) goto done;
        printf("wrote %d output%s to %s\n", g.nout, g.nout == 1 ? "" : "s", outpath);
    } else {
        for (int k = 0; k < g.nout; k++) summarize(&outs[k]);
    }
    rc = 0;
done:
    if (rc) fprintf(stderr, "atoll interp: %s\n", e.msg);
    interp_free_outputs(outs, g.nout);
    model_free_inputs(tin, ntin);
    ir_free(&g);
    return rc;
}
