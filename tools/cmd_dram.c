/* cmd_dram.c - `atoll dram`: the banked DRAM model on its own.
 *
 *   atoll dram TRACE --chip CHIP.ini [--json]
 *       serves a request trace in Ramulator2's load/store format ("LD 0x40",
 *       "ST 0x80" per line) with the chip's [dram]/[dram_device] model (the
 *       banked one, whatever `model` says) and prints time, bandwidth, row
 *       hits/misses/conflicts, read latency, commands and refresh share;
 *   atoll dram --validate DIR [--doc FILE]
 *       generates the Ramulator2 reference traces, checks them against DIR's
 *       manifest, replays each on its preset and prints the comparison with
 *       DIR's results (tools/dram_valid.c); --doc rewrites the table's
 *       generated section of FILE (docs/timing.md).
 * Exit status: 0 ok, 1 error (or a DDR4 row outside the bounds), 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "isa/config.h"
#include "sim/dram.h"
#include "tools/cli.h"
#include "tools/dram_valid.h"

const char cmd_dram_summary[] = "replay a DRAM request trace on the banked DRAM model, or check it against Ramulator2";

static const char usage_text[] =
    "usage: atoll dram TRACE --chip CHIP.ini [--json]\n"
    "       atoll dram --validate DIR [--doc FILE]\n"
    "  TRACE        requests in Ramulator2's load/store format: 'LD ADDRESS' or 'ST ADDRESS' per line\n"
    "  --chip       chip config; its [dram] and [dram_device] keys describe the DRAM\n"
    "               (configs/dram/*.ini hold presets); the banked model runs whatever `model` says\n"
    "  --json       print the figures as JSON\n"
    "  --validate   generate the reference traces, replay each on its preset (configs/dram/) and\n"
    "               compare with DIR/results.csv (Ramulator2's figures; DIR/trace_manifest.csv\n"
    "               checks the traces); fails if a DDR4 row is off by more than 10% in time or\n"
    "               10 points in row-hit rate\n"
    "  --doc        with --validate: rewrite the comparison table in FILE\n"
    "exit: 0 ok, 1 error or a DDR4 row out of bounds, 2 usage\n";

static void usage(FILE *fp) { fputs(usage_text, fp); }

static void print_text(const char *trace, const AtlChip *c, size_t n, size_t writes, const DramReplay *r,
                       double peak_gbps)
{
    const DramStats *s = &r->st;
    char map[64], page[16];
    cfg_format_value(c, &cfg_keys[cfg_key_index("dram", "mapping")], map, sizeof map);
    cfg_format_value(c, &cfg_keys[cfg_key_index("dram", "page_policy")], page, sizeof page);
    uint64_t rows = s->row_hits + s->row_misses + s->row_conflicts;
    printf("trace          %s: %zu requests (%zu reads, %zu writes), %llu bytes\n", trace, n, n - writes, writes,
           (unsigned long long)r->bytes);
    printf("dram           %s: %d channel%s x %d rank%s x %d bank groups x %d banks, %d-byte accesses, %s, %s page, tCK %d ps\n",
           c->name, c->dram_channels, c->dram_channels > 1 ? "s" : "", c->dram_ranks, c->dram_ranks > 1 ? "s" : "",
           c->dram_bankgroups, c->dram_banks, c->dram_access_bytes, map, page, c->dram_tck_ps);
    printf("time           %llu DRAM cycles = %.1f ns\n", (unsigned long long)r->cycles, r->ns);
    printf("bandwidth      %.3f GB/s (%.1f%% of the %.3f GB/s peak)\n", r->gbps, peak_gbps > 0 ? 100 * r->gbps / peak_gbps : 0,
           peak_gbps);
    printf("rows           %llu hits, %llu misses, %llu conflicts (%.1f%% hits)\n", (unsigned long long)s->row_hits,
           (unsigned long long)s->row_misses, (unsigned long long)s->row_conflicts,
           rows ? 100.0 * (double)s->row_hits / (double)rows : 0);
    if (s->reads)
        printf("read latency   %.2f cycles average (%.2f ns), queueing included\n", (double)s->read_latency / (double)s->reads,
               (double)s->read_latency / (double)s->reads * c->dram_tck_ps / 1000.0);
    printf("commands       %llu ACT, %llu PRE, %llu REF\n", (unsigned long long)s->acts, (unsigned long long)s->pres,
           (unsigned long long)s->refs);
    printf("refresh        %.2f%% of the time\n",
           r->cycles ? 100.0 * (double)s->refs / c->dram_channels / c->dram_ranks * c->dram_rfc / (double)r->cycles : 0);
    printf("turnarounds    %llu write-to-read, %llu read-to-write\n", (unsigned long long)s->w2r, (unsigned long long)s->r2w);
}

static void print_json(const char *trace, const AtlChip *c, size_t n, size_t writes, const DramReplay *r, double peak_gbps)
{
    const DramStats *s = &r->st;
    printf("{\"trace\": \"");
    for (const char *p = trace; *p; p++) {
        if (*p == '"' || *p == '\\') putchar('\\');
        if ((unsigned char)*p >= 0x20) putchar(*p);
    }
    printf("\", \"requests\": %zu, \"reads\": %zu, \"writes\": %zu, \"bytes\": %llu,\n", n, n - writes, writes,
           (unsigned long long)r->bytes);
    printf(" \"tck_ps\": %d, \"cycles\": %llu, \"ns\": %.3f, \"gbps\": %.4f, \"peak_gbps\": %.4f,\n", c->dram_tck_ps,
           (unsigned long long)r->cycles, r->ns, r->gbps, peak_gbps);
    printf(" \"row_hits\": %llu, \"row_misses\": %llu, \"row_conflicts\": %llu,\n", (unsigned long long)s->row_hits,
           (unsigned long long)s->row_misses, (unsigned long long)s->row_conflicts);
    printf(" \"avg_read_latency_cycles\": %.3f, \"acts\": %llu, \"pres\": %llu, \"refs\": %llu, \"w2r\": %llu, \"r2w\": %llu}\n",
           s->reads ? (double)s->read_latency / (double)s->reads : 0.0, (unsigned long long)s->acts,
           (unsigned long long)s->pres, (unsigned long long)s->refs, (unsigned long long)s->w2r, (unsigned long long)s->r2w);
}

int cmd_dram(int argc, char **argv)
{
    const char *chip_path = NULL, *trace = NULL, *valid = NULL, *doc = NULL, *v;
    int bad = 0, json = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) { chip_path = v; continue; }
        if ((v = cli_opt(argc, argv, &i, "--validate", &bad))) { valid = v; continue; }
        if ((v = cli_opt(argc, argv, &i, "--doc", &bad))) { doc = v; continue; }
        if (bad) return 2;
        if (!strcmp(argv[i], "--json")) { json = 1; continue; }
        if (argv[i][0] == '-' && argv[i][1]) return cli_bad_option("dram", argv[i], usage_text);
        if (trace) { fprintf(stderr, "atoll dram: one trace at a time ('%s' and '%s')\n", trace, argv[i]); return 2; }
        trace = argv[i];
    }
    if (bad) return 2;
    AtlErr e = {{0}};
    if (valid) {
        if (trace || chip_path || json) { fprintf(stderr, "atoll dram: --validate takes no trace, --chip or --json\n"); usage(stderr); return 2; }
        int rc = dram_validate(valid, doc, stdout, &e);
        if (rc < 0) { fprintf(stderr, "atoll dram: %s\n", e.msg); return 1; }
        return rc ? 1 : 0;
    }
    if (doc) { fprintf(stderr, "atoll dram: --doc goes with --validate\n"); return 2; }
    if (!trace || !chip_path) { usage(stderr); return 2; }
    AtlChip chip;
    if (cfg_load(chip_path, &chip, &e)) { fprintf(stderr, "atoll dram: %s\n", e.msg); return 1; }
    DramTraceReq *reqs = NULL;
    size_t n = 0;
    if (dram_trace_load(trace, &reqs, &n, &e)) { fprintf(stderr, "atoll dram: %s\n", e.msg); return 1; }
    AtlDram *d = dram_new(&chip, &e);
    if (!d) { free(reqs); fprintf(stderr, "atoll dram: %s\n", e.msg); return 1; }
    DramReplay r;
    dram_replay(d, reqs, n, &r);
    size_t writes = 0;
    for (size_t i = 0; i < n; i++) writes += reqs[i].write != 0;
    double peak = dram_peak_bytes_per_cycle(d) * chip.dram_channels * 1000.0 / chip.dram_tck_ps;
    if (json) print_json(trace, &chip, n, writes, &r, peak);
    else print_text(trace, &chip, n, writes, &r, peak);
    dram_free(d);
    free(reqs);
    return 0;
}
