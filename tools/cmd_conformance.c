/* cmd_conformance.c - `atoll conformance [DATADIR] [--markdown FILE]
 * [--filter TEXT] [--verbose]`: runs the ONNX backend test suites through
 * the importer and reference interpreter, prints a per-op table and exits 1
 * if any supported test fails. */
#include <stdio.h>
#include <string.h>
#include "tools/cli.h"
#include "compiler/conform.h"

const char cmd_conformance_summary[] = "run ONNX's backend tests on the reference interpreter";

int cmd_conformance(int argc, char **argv)
{
    const char *dir = "/usr/share/libonnx-testdata/data", *md = NULL, *filter = NULL, *v;
    int bad = 0, verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            printf("usage: atoll conformance [DATADIR] [--markdown FILE] [--filter TEXT] [--verbose]\n"
                   "DATADIR defaults to /usr/share/libonnx-testdata/data\n");
            return 0;
        }
        if ((v = cli_opt(argc, argv, &i, "--markdown", &bad))) md = v;
        else if ((v = cli_opt(argc, argv, &i, "--filter", &bad))) filter = v;
        else if (bad) return 2;
        else if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v")) verbose = 1;
        else if (argv[i][0] == '-') { fprintf(stderr, "atoll conformance: unknown option '%s'\n", argv[i]); return 2; }
        else dir = argv[i];
    }
    ConfResult r;
    AtlErr e = {{0}};
    if (conf_run(dir, filter, &r, &e)) { fprintf(stderr, "atoll conformance: %s\n", e.msg); return 1; }
    for (int i = 0; i < r.n; i++) {
        const ConfCase *c = &r.cases[i];
        if (c->status == CONF_FAIL || (verbose && c->status == CONF_UNSUPPORTED))
            printf("%s %s/%s: %s\n", c->status == CONF_FAIL ? "FAIL" : "unsupported", c->suite, c->name, c->reason);
    }
    conf_print_table(&r, stdout);
    if (md && conf_write_markdown(&r, dir, md, &e)) { fprintf(stderr, "atoll conformance: %s\n", e.msg); conf_free(&r); return 1; }
    int rc = r.failed ? 1 : 0;
    conf_free(&r);
    return rc;
}
