/* cmd_compile.c - `atoll compile MODEL.onnx --dump-ir [--input-shape
 * NAME=DIMS]...`: imports the model, runs shape inference and the
 * canonicalisation passes and prints the resulting IR. Code generation to
 * .abm is a later issue; without --dump-ir the command says so and fails. */
#include <stdio.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/model_io.h"
#include "compiler/passes.h"

const char cmd_compile_summary[] = "compile an ONNX model (for now: --dump-ir after the passes)";

#define MAXOPT 64

int cmd_compile(int argc, char **argv)
{
    const char *model = NULL, *v;
    IrInputShape shapes[MAXOPT];
    int nshapes = 0, bad = 0, dump = 0, nopasses = 0;
    AtlErr e = {{0}};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            printf("usage: atoll compile MODEL.onnx --dump-ir [--no-passes] [--input-shape NAME=1x3x224x224]...\n");
            return 0;
        }
        if ((v = cli_opt(argc, argv, &i, "--input-shape", &bad))) {
            if (nshapes == MAXOPT) { fprintf(stderr, "atoll compile: too many --input-shape options\n"); return 2; }
            if (ir_parse_input_shape(v, &shapes[nshapes++], &e)) { fprintf(stderr, "atoll compile: %s\n", e.msg); return 2; }
        } else if (bad) return 2;
        else if (!strcmp(argv[i], "--dump-ir")) dump = 1;
        else if (!strcmp(argv[i], "--no-passes")) nopasses = 1;
        else if (argv[i][0] == '-') { fprintf(stderr, "atoll compile: unknown option '%s'\n", argv[i]); return 2; }
        else if (!model) model = argv[i];
        else { fprintf(stderr, "atoll compile: more than one model given ('%s')\n", argv[i]); return 2; }
    }
    if (!model) { fprintf(stderr, "atoll compile: no model given\n"); return 2; }
    IrGraph g;
    int rc = 1;
    if (model_load(model, shapes, nshapes, &g, &e) || (!nopasses && pass_run_all(&g, &e))) {
        fprintf(stderr, "atoll compile: %s\n", e.msg);
    } else if (!dump) {
        fprintf(stderr, "atoll compile: %s: the .abm code-generation backend is not built yet; "
                        "only --dump-ir is available (the model imported and passed shape inference)\n", model);
    } else {
        ir_print(&g, stdout);
        rc = 0;
    }
    ir_free(&g);
    return rc;
}
