/* cmd_report.c - `atoll report STATS.json|SWEEP.csv -o report.html`: one
 * self-contained HTML page (tools/report.h) a person can open and read:
 * for a run's stats JSON its summary, per-layer table and plots; for a
 * sweep CSV the best configurations, Pareto fronts and every point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include "tools/cli.h"
#include "tools/report.h"
#include "util/file.h"

const char cmd_report_summary[] = "an HTML report (tables, SVG plots) of a stats JSON or a sweep CSV";

static const char usage_text[] =
    "usage: atoll report STATS.json|SWEEP.csv -o REPORT.html [--estimate EST.csv] [--svg DIR]\n"
    "\n"
    "Writes one self-contained HTML file (inline CSS and SVG, no script, nothing\n"
    "fetched). From a stats JSON (atoll run --stats, atoll sim --stats, or\n"
    "atoll sweep --stats-dir): summary, per-layer table (name, op, bound, estimate\n"
    "next to the simulated cycles), roofline, per-layer time by bound, engine\n"
    "utilisation over time. From a sweep CSV: per workload the best points and\n"
    "the Pareto fronts of images/s against area and energy, all points, failures.\n"
    "  --estimate EST.csv  layer names and estimates from `atoll compile --csv`\n"
    "                      (a stats JSON from atoll sweep --stats-dir has them)\n"
    "  --svg DIR           also write every plot as DIR/NAME.svg\n";

static void usage(FILE *f) { fputs(usage_text, f); }

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int cmd_report(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *est = NULL, *svg = NULL, *v;
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "-o", &bad))) out = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--estimate", &bad))) est = v;
        else if (bad) return 2;
        else if ((v = cli_opt(argc, argv, &i, "--svg", &bad))) svg = v;
        else if (bad) return 2;
        else if (argv[i][0] == '-') return cli_bad_option("report", argv[i], usage_text);
        else if (!in) in = argv[i];
        else { fprintf(stderr, "atoll report: more than one input given ('%s')\n", argv[i]); return 2; }
    }
    if (!in || !out) { fprintf(stderr, "atoll report: %s\n", !in ? "no input given (see --help)" : "-o REPORT.html is required"); return 2; }
    int is_csv = ends_with(in, ".csv");
    if (!is_csv && !ends_with(in, ".json")) { fprintf(stderr, "atoll report: %s: give a stats .json or a sweep .csv\n", in); return 2; }
    if (is_csv && est) { fprintf(stderr, "atoll report: --estimate goes with a stats JSON, not a sweep CSV\n"); return 2; }
    if (svg && mkdir(svg, 0777) && errno != EEXIST) { fprintf(stderr, "atoll report: cannot create %s: %s\n", svg, strerror(errno)); return 1; }
    Report r;
    AtlErr e;
    char title[512];
    const char *base = strrchr(in, '/') ? strrchr(in, '/') + 1 : in;
    snprintf(title, sizeof title, "Atoll %s: %s", is_csv ? "sweep" : "run", base);
    report_begin(&r, title, in);
    r.svg_dir = svg;
    int rc = is_csv ? report_sweep(&r, in, &e) : report_stats(&r, in, est, &e);
    char *html = report_end(&r);
    if (!rc && !html) rc = atl_fail(&e, "out of memory");
    if (!rc) rc = atl_write_file_atomic(out, html, strlen(html), &e);
    free(html);
    if (rc) { fprintf(stderr, "atoll report: %s\n", e.msg); return 1; }
    fprintf(stderr, "report: wrote %s (%d plot%s)\n", out, r.nplots, r.nplots == 1 ? "" : "s");
    return 0;
}
