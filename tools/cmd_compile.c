/* cmd_compile.c - `atoll compile MODEL.onnx (--dump-ir | -o MODEL.abm)
 * [--chip FILE] [--dtype f32|f16|bf16] [--input-shape NAME=DIMS]...
 * [--synthetic-weights] [--no-passes]`: imports the model, runs shape
 * inference and the canonicalisation passes, then prints the IR
 * (--dump-ir) and/or compiles it with the backend (compiler/backend.h) for
 * the chip into an .abm written atomically. --synthetic-weights fills
 * initializers whose external data file is missing (timing studies on
 * full-size graphs; compiler/synth_weights.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/model_io.h"
#include "tools/chip_exec.h"
#include "compiler/passes.h"
#include "util/file.h"

const char cmd_compile_summary[] = "compile an ONNX model for a chip into an .abm (or --dump-ir)";

#define MAXOPT 64

static void usage(FILE *fp)
{
    fprintf(fp, "usage: atoll compile MODEL.onnx (--dump-ir | -o MODEL.abm) [--chip FILE] [--dtype f32|f16|bf16]\n"
                "                     [--no-passes] [--synthetic-weights] [--input-shape NAME=1x3x224x224]...\n"
                "--chip defaults to configs/a1.ini.\n");
}

int cmd_compile(int argc, char **argv)
{
    const char *model = NULL, *out = NULL, *chip_path = "configs/a1.ini", *dtype = "f32", *v;
    IrInputShape shapes[MAXOPT];
    int nshapes = 0, bad = 0, dump = 0, nopasses = 0;
    OnnxLoadOpts lopts = {0, 0, 0};
    AtlErr e = {{0}};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "--input-shape", &bad))) {
            if (nshapes == MAXOPT) { fprintf(stderr, "atoll compile: too many --input-shape options\n"); return 2; }
            if (ir_parse_input_shape(v, &shapes[nshapes++], &e)) { fprintf(stderr, "atoll compile: %s\n", e.msg); return 2; }
        } else if ((v = cli_opt(argc, argv, &i, "-o", &bad))) out = v;
        else if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) chip_path = v;
        else if ((v = cli_opt(argc, argv, &i, "--dtype", &bad))) dtype = v;
        else if (bad) return 2;
        else if (!strcmp(argv[i], "--dump-ir")) dump = 1;
        else if (!strcmp(argv[i], "--no-passes")) nopasses = 1;
        else if (!strcmp(argv[i], "--synthetic-weights")) lopts.synthetic_weights = 1;
        else if (argv[i][0] == '-') { fprintf(stderr, "atoll compile: unknown option '%s'\n", argv[i]); usage(stderr); return 2; }
        else if (!model) model = argv[i];
        else { fprintf(stderr, "atoll compile: more than one model given ('%s')\n", argv[i]); return 2; }
    }
    if (!model) { fprintf(stderr, "atoll compile: no model given\n"); usage(stderr); return 2; }
    if (!dump && !out) { fprintf(stderr, "atoll compile: give -o MODEL.abm or --dump-ir\n"); usage(stderr); return 2; }
    int dt = isa_dtype_from_name(dtype);
    if (dt != ISA_F32 && dt != ISA_F16 && dt != ISA_BF16) {
        fprintf(stderr, "atoll compile: --dtype '%s': the backend compiles f32, f16 or bf16\n", dtype);
        return 2;
    }
    if (out && nopasses) { fprintf(stderr, "atoll compile: the backend needs the passes; drop --no-passes with -o\n"); return 2; }
    IrGraph g;
    AtlChip chip;
    int rc = 1;
    uint8_t *abm = NULL;
    size_t len = 0;
    BkSummary sum;
    memset(&sum, 0, sizeof sum);
    ir_init(&g);
    if (out && cfg_load(chip_path, &chip, &e)) goto done;
    if (model_load_opts(model, shapes, nshapes, &lopts, &g, &e)) goto done;
    if (lopts.nsynthetic)
        fprintf(stderr, "atoll compile: note: %d initializers (%lld bytes) have synthetic values: their external data file is missing\n",
                lopts.nsynthetic, (long long)lopts.synthetic_bytes);
    if (!nopasses && pass_run_all(&g, &e)) goto done;
    if (dump) ir_print(&g, stdout);
    if (out) {
        BkOptions opt;
        bk_options_default(&opt);
        opt.dtype = dt;
        char options[256];
        snprintf(options, sizeof options, "chip=%s dtype=%s%s", chip_path, dtype, lopts.nsynthetic ? " synthetic-weights" : "");
        opt.options_text = options;
        if (chip_compile_graph(&g, &chip, &opt, -1, &abm, &len, &sum, &e)) { atl_err_prefix(&e, "%s", model); goto done; }
        if (atl_write_file_atomic(out, abm, len, &e)) goto done;
        printf("%s: %d layers, %llu instructions, weights %llu bytes, activations %llu bytes (peak), io %llu bytes, %zu-byte .abm for %s\n",
               out, sum.nlayers, (unsigned long long)sum.insns, (unsigned long long)sum.weight_bytes,
               (unsigned long long)sum.act_peak, (unsigned long long)sum.io_bytes, len, chip_path);
    }
    rc = 0;
done:
    if (rc) fprintf(stderr, "atoll compile: %s\n", e.msg);
    bk_summary_free(&sum);
    free(abm);
    ir_free(&g);
    return rc;
}
