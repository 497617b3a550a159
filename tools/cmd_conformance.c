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

static const char usage_text[] =
    "usage: atoll conformance [DATADIR] [--markdown FILE] [--filter TEXT] [--verbose] [--chip CHIP] [--progress]\n"
    "Runs ONNX's backend test suites (DATADIR, default /usr/share/libonnx-testdata/data)\n"
    "through the importer and the reference interpreter and prints a table per op.\n"
    "  --chip CHIP    also compile each test for this chip (file or name) and run it on\n"
    "                 the simulated chip\n"
    "  --markdown F   write the table and every test not passing to F (docs/conformance*.md)\n"
    "  --filter TEXT  only the tests whose name contains TEXT\n"
    "  --verbose      also list the unsupported tests with the reason\n"
    "  --progress     report progress on stderr even when it is not a terminal\n"
    "Exit status: 0 all supported tests pass, 1 some fail, 2 usage.\n";

static void show_progress(void *ctx, const ConfCase *c, int done)
{
    cli_progress(ctx, "%d tests run, now %s/%s", done, c->suite, c->name);
}

int cmd_conformance(int argc, char **argv)
{
    const char *dir = "/usr/share/libonnx-testdata/data", *md = NULL, *filter = NULL, *chip_path = NULL, *v;
    int bad = 0, verbose = 0;
    CliProgressMode progress = CLI_PROGRESS_AUTO;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { fputs(usage_text, stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "--markdown", &bad))) md = v;
        else if ((v = cli_opt(argc, argv, &i, "--filter", &bad))) filter = v;
        else if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) chip_path = v;
        else if (bad) return 2;
        else if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "--progress")) progress = CLI_PROGRESS_ON;
        else if (argv[i][0] == '-') return cli_bad_option("conformance", argv[i], usage_text);
        else dir = argv[i];
    }
    ConfResult r;
    AtlErr e = {{0}};
    AtlChip chip;
    ChipConform cc;
    const ConfRunner *runner = NULL;
    char path[4096];
    if (chip_path) {
        if (cli_load_chip("conformance", chip_path, NULL, &chip, path, sizeof path)) return 1;
        chip_conform_init(&cc, &chip, path, md);
        runner = &cc.runner;
    }
    CliProgress pr;
    cli_progress_init(&pr, "conformance", progress);
    int failed = conf_run_progress(dir, filter, runner, show_progress, &pr, &r, &e);
    cli_progress_end(&pr);
    if (failed) { fprintf(stderr, "atoll conformance: %s\n", e.msg); return 1; }
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
