/* cmd_sim.c - `atoll sim --chip FILE PROG [options]`: runs a program (text
 * .s or binary image) on the simulator, prints the report, checks the
 * program's `.expect` regions, and writes the optional trace, stats JSON
 * and `.output` regions. Exit status: 0 run finished and every expect
 * passed; 1 a fault, an expect mismatch or a bad input; 2 usage. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "isa/config.h"
#include "isa/program.h"
#include "sim/sim.h"
#include "tools/cli.h"
#include "util/file.h"

const char cmd_sim_summary[] = "run a program on the cycle-approximate chip simulator";

static const char usage_text[] =
            "usage: atoll sim [--chip CHIP] PROG.s|PROG.bin [options]\n"
            "  --chip CHIP         a config file, or a name (a1 = configs/a1.ini, or the\n"
            "                      installed share/atoll/configs/a1.ini); default a1\n"
            "  --mode full|timing|functional   arithmetic and timing (default), timing only, or\n"
            "                                  arithmetic only (zero-latency, program order)\n"
            "  --trace FILE        Chrome/Perfetto trace JSON (one track per engine per core)\n"
            "  --stats FILE        statistics as JSON (schema: docs/simulator.md)\n"
            "  --csv FILE          per-layer table as CSV\n"
            "  --output FILE       raw little-endian bytes of every .output region, in order\n"
            "  --max-cycles N      stop with a fault past N simulated cycles (default 1e12, at most 2^62)\n"
            "  --max-work N        stop with a fault past N units of host work: elements moved,\n"
            "                      computed or planned (default 2^36 or ATOLL_MAX_SIM_WORK)\n"
            "  --quiet             print only faults and expect results\n"
            "exit: 0 ok, 1 fault / expect mismatch / bad input, 2 usage\n";

static void usage(FILE *fp) { fputs(usage_text, fp); }

/* Writes every .output region's bytes, concatenated in program order. */
static int write_outputs(AtlSim *s, const AtlProgram *p, const char *path, AtlErr *e)
{
    AtlOutFile o;
    if (atl_out_open(&o, path, e)) return -1;
    for (int i = 0; i < p->nregions; i++) {
        const AtlRegion *r = &p->regions[i];
        if (r->expect) continue;
        uint64_t n = (uint64_t)isa_dtype_size(r->dtype);
        for (int d = 0; d < r->ndim; d++) n *= r->shape[d];
        const uint8_t *b = sim_dram(s, r->addr, n);
        if (!b || fwrite(b, 1, (size_t)n, o.fp) != n) {
            atl_out_abort(&o);
            return atl_fail(e, "%s: cannot write output region %s", path, r->name);
        }
    }
    return atl_out_commit(&o, e);
}

static int write_text(const char *path, char *text, const char *what, AtlErr *e)
{
    if (!text) return atl_fail(e, "out of memory for the %s", what);
    int rc = atl_write_file_atomic(path, text, strlen(text), e);
    free(text);
    return rc;
}

int cmd_sim(int argc, char **argv)
{
    const char *chip_path = NULL, *prog_path = NULL, *trace = NULL, *stats = NULL, *output = NULL, *csv = NULL, *v;
    AtlSimOptions opt;
    sim_options_default(&opt);
    int bad = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) { chip_path = v; continue; }
        if ((v = cli_opt(argc, argv, &i, "--trace", &bad))) { trace = v; continue; }
        if ((v = cli_opt(argc, argv, &i, "--stats", &bad))) { stats = v; continue; }
        if ((v = cli_opt(argc, argv, &i, "--output", &bad))) { output = v; continue; }
        if ((v = cli_opt(argc, argv, &i, "--csv", &bad))) { csv = v; continue; }
        if ((v = cli_opt(argc, argv, &i, "--mode", &bad))) {
            if (!strcmp(v, "full")) opt.mode = SIM_MODE_FULL;
            else if (!strcmp(v, "timing")) opt.mode = SIM_MODE_TIMING;
            else if (!strcmp(v, "functional")) opt.mode = SIM_MODE_FUNCTIONAL;
            else { fprintf(stderr, "atoll sim: --mode must be full, timing or functional, not '%s'\n", v); return 2; }
            continue;
        }
        if ((v = cli_opt(argc, argv, &i, "--max-cycles", &bad))) {
            if (cli_parse_u64("sim", "--max-cycles", v, 1, CLI_MAX_CYCLES, &opt.max_cycles)) return 2;
            continue;
        }
        if ((v = cli_opt(argc, argv, &i, "--max-work", &bad))) {
            if (cli_parse_u64("sim", "--max-work", v, 1, UINT64_MAX >> 1, &opt.max_work)) return 2;
            continue;
        }
        if (bad) return 2;
        if (!strcmp(argv[i], "--quiet")) { quiet = 1; continue; }
        if (argv[i][0] == '-') return cli_bad_option("sim", argv[i], usage_text);
        if (prog_path) { fprintf(stderr, "atoll sim: unexpected argument '%s' (one program)\n", argv[i]); return 2; }
        prog_path = argv[i];
    }
    if (bad) return 2;
    if (!prog_path) { fprintf(stderr, "atoll sim: no program given\n"); usage(stderr); return 2; }
    AtlChip chip;
    char chip_file[4096];
    if (cli_load_chip("sim", chip_path, NULL, &chip, chip_file, sizeof chip_file)) return 1;
    CliPath ins[] = {{"--chip", chip_file}, {"program", prog_path}};
    CliPath outs[] = {{"--trace", trace}, {"--stats", stats}, {"--csv", csv}, {"--output", output}};
    if (cli_check_outputs("sim", ins, 2, outs, 4)) return 2;
    opt.trace = trace != NULL;
    AtlErr e;
    AtlProgram prog;
    if (prog_load_any(prog_path, &prog, &e)) { fprintf(stderr, "atoll sim: %s\n", e.msg); return 1; }
    AtlSim *s = sim_create(&chip, &opt, &e);
    if (!s || sim_load(s, &prog, &e)) {
        fprintf(stderr, "atoll sim: %s\n", e.msg);
        sim_free(s);
        prog_free(&prog);
        return 1;
    }
    int status = 0;
    int rc = sim_run(s, &e);
    if (!quiet) {
        char *rep = sim_report_text(s);
        if (rep) fputs(rep, stdout);
        free(rep);
    }
    if (rc) { fprintf(stderr, "atoll sim: %s\n", e.msg); status = 1; }
    if (!rc && opt.mode == SIM_MODE_TIMING) {
        int n = 0;
        for (int i = 0; i < prog.nregions; i++) n += prog.regions[i].expect != NULL;
        if (n) printf("expect: %d region(s) not checked in timing mode (no arithmetic)\n", n);
    } else if (!rc) {
        char *rep = NULL;
        int mism = sim_check_expect(s, &prog, &rep);
        if (rep) fputs(rep, stdout);
        free(rep);
        if (mism) { fprintf(stderr, "atoll sim: %d expect region(s) FAILED\n", mism); status = 1; }
    }
    if (trace && write_text(trace, sim_trace_json(s), "trace", &e)) { fprintf(stderr, "atoll sim: %s\n", e.msg); status = 1; }
    if (stats && write_text(stats, sim_stats_json(s), "stats", &e)) { fprintf(stderr, "atoll sim: %s\n", e.msg); status = 1; }
    if (csv && write_text(csv, sim_layers_csv(s), "layer table", &e)) { fprintf(stderr, "atoll sim: %s\n", e.msg); status = 1; }
    if (output && !rc && write_outputs(s, &prog, output, &e)) { fprintf(stderr, "atoll sim: %s\n", e.msg); status = 1; }
    sim_free(s);
    prog_free(&prog);
    return status;
}
