/* cmd_conformance.c - `atoll conformance [DATADIR] [--markdown FILE]
 * [--filter TEXT] [--verbose] [--chip FILE]`: runs the ONNX backend test
 * suites through the importer and reference interpreter (with --chip: then
 * compiled for that chip and run on the simulator, tools/chip_conform.h),
 * prints a per-op table and exits 1 if any supported test fails. */
#include <stdio.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/conform.h"
#include "tools/chip_conform.h"

const char cmd_conformance_summary[] = "run ONNX's backend tests on the reference interpreter";

int cmd_conformance(int argc, char **argv)
{
    const char *dir = "/usr/share/libonnx-testdata/data", *md = NULL, *filter = NULL, *chip_path = NULL, *v;
    int bad = 0, verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            printf("usage: atoll conformance [DATADIR] [--markdown FILE] [--filter TEXT] [--verbose] [--chip FILE]\n"
                   "DATADIR defaults to /usr/share/libonnx-testdata/data; --chip runs the tests on the simulated chip\n");
            return 0;
        }
        if ((v = cli_opt(argc, argv, &i, "--markdown", &bad))) md = v;
        else if ((v = cli_opt(argc, argv, &i, "--filter", &bad))) filter = v;
        else if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) chip_path = v;
        else if (bad) return 2;
        else if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v")) verbose = 1;
        else if (argv[i][0] == '-') { fprintf(stderr, "atoll conformance: unknown option '%s'\n", argv[i]); return 2; }
        else dir = argv[i];
    }
    ConfResult r;
    AtlErr e = {{0}};
    AtlChip chip;
    ChipConform cc;
    const ConfRunner *runner = NULL;
    if (chip_path) {
        if (cfg_load(chip_path, &chip, &e)) { fprintf(stderr, "atoll conformance: %s\n", e.msg); return 1; }
        chip_conform_init(&cc, &chip, chip_path, md);
        runner = &cc.runner;
    }
    if (conf_run_with(dir, filter, runner, &r, &e)) { fprintf(stderr, "atoll conformance: %s\n", e.msg); return 1; }
    for (int i = 0; i < r.n; i++) {
        const ConfCase *c = &r.cases[i];
        if (c->status == CONF_FAIL || (verbose && c->status == CONF_UNSUPPORTED))
            printf("%s %s/%s: %s\n", c->status == CONF_FAIL ? "FAIL" : "unsupported", c->suite, c->name, c->reason);
    }
    conf_print_table(&r, stdout);
    if (md && conf_write_markdown_with(&r, runner, dir, md, &e)) { fprintf(stderr, "atoll conformance: %s\n", e.msg); conf_free(&r); return 1; }
    int rc = r.failed ? 1 : 0;
    conf_free(&r);
    return rc;
}
