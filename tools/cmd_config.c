/* cmd_config.c - `atoll config`: show a chip config with its derived
 * figures, check one, or print docs/config.md from the CFG_KEYS table.
 *
 *   atoll config show --chip FILE   every key by section with units, then
 *                                   peak ops/s per dtype, DRAM bytes/cycle,
 *                                   ridge points, LMEM/SRAM totals, fingerprint
 *   atoll config check --chip FILE  load + validate, and what simulating
 *                                   the chip costs in host memory
 *   atoll config --doc              docs/config.md
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "isa/area.h"
#include "isa/config.h"
#include "isa/isa.h"
#include "sim/sim.h"
#include "tools/cli.h"

const char cmd_config_summary[] = "show or check a chip config (config show --chip FILE), or print docs/config.md";

static const char usage_text[] =
    "usage: atoll config show [--chip CHIP]\n"
    "       atoll config check [--chip CHIP]\n"
    "       atoll config --doc\n"
    "  show           every key by section with its unit, then the derived figures\n"
    "                 (peak ops/s per dtype, DRAM bytes/cycle, ridge points, totals,\n"
    "                 fingerprint)\n"
    "  check          load and validate only\n"
    "  --chip CHIP    a config file, or a name (a1 = configs/a1.ini, or the installed\n"
    "                 share/atoll/configs/a1.ini); default a1\n"
    "  --doc          print docs/config.md (generated from the key table)\n";

static void usage(FILE *fp) { fputs(usage_text, fp); }

/* "524288 bytes (512 KiB)" for byte counts that are whole KiB/MiB/GiB. */
static void print_bytes(long long v)
{
    static const struct { const char *unit; long long size; } units[] = {{"GiB", 1LL << 30}, {"MiB", 1LL << 20}, {"KiB", 1LL << 10}};
    printf("%lld bytes", v);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (v >= units[i].size) {
            double x = (double)v / (double)units[i].size;
            printf(v % units[i].size ? " (%.2f %s)" : " (%.0f %s)", x, units[i].unit);
            return;
        }
}

/* What simulating the chip costs the host (sim/host_cost.c). */
static void print_host_cost(const AtlChip *c, const char *indent)
{
    AtlSimHostCost hc;
    sim_host_cost(c, &hc);
    printf("%shost memory to simulate it: ", indent);
    print_bytes((long long)hc.upfront);
    printf(" at once, plus up to ");
    print_bytes((long long)hc.lazy);
    printf(" as a run touches the simulated memories (DRAM ");
    print_bytes(c->dram_bytes);
    printf(", SRAM %d x ", c->clusters);
    print_bytes(c->sram_bytes);
    printf(", LMEM %d x ", cfg_total_cores(c));
    print_bytes(c->lmem_bytes);
    printf("), plus about %zu bytes per instruction of the program\n", sim_insn_host_bytes());
}

static void show(const AtlChip *c, const char *path)
{
    printf("chip %s (%s)\n", c->name, path);
    const char *section = "";
    char val[CFG_TEXT_MAX + 32];
    for (int i = 0; i < cfg_num_keys; i++) {
        const AtlCfgKey *k = &cfg_keys[i];
        if (!c->has_area && !strcmp(k->scope, "AREA")) continue;
        if (strcmp(section, k->section)) {
            section = k->section;
            printf("\n[%s]\n", section);
        }
        cfg_format_value(c, k, val, sizeof val);
        printf("  %-24s = ", k->key);
        if (k->type == CFG_INT && cfg_key_is_bytes(k)) {
            long long v;
            sscanf(val, "%lld", &v);
            print_bytes(v);
        } else if (k->type == CFG_REAL) {
            double d;
            sscanf(val, "%lf", &d);
            printf("%g%s%s", d, k->unit[0] ? " " : "", cfg_key_unit(k));
        } else {
            printf("%s%s%s", val, cfg_key_unit(k)[0] ? " " : "", cfg_key_unit(k));
        }
        printf("\n");
    }
    printf("\n[derived]\n");
    printf("  %-24s = %d (%d clusters x %d cores)\n", "cores", cfg_total_cores(c), c->clusters, c->cores_per_cluster);
    printf("  %-24s = %d (%d x %d)\n", "macs_per_core", c->mm_rows * c->mm_cols, c->mm_rows, c->mm_cols);
    double dram_bps = c->dram_gbps * 1e9;
    for (int d = 0; d < ISA_NUM_DTYPES; d++) {
        double ops = cfg_peak_ops_per_s(c, d);
        if (ops <= 0) continue;
        char key[48];
        snprintf(key, sizeof key, "peak_%s", isa_dtype_name(d));
        printf("  %-24s = %.3f TOPS (%.6g ops/s, 2 ops per MAC)\n", key, ops / 1e12, ops);
    }
    printf("  %-24s = %g bytes/cycle (%g GB/s at %g MHz)\n", "dram_bytes_per_cycle", cfg_dram_bytes_per_cycle(c), c->dram_gbps,
           c->freq_mhz);
    for (int d = 0; d < ISA_NUM_DTYPES; d++) {
        double ops = cfg_peak_ops_per_s(c, d);
        if (ops <= 0) continue;
        char key[48];
        snprintf(key, sizeof key, "ridge_%s", isa_dtype_name(d));
        printf("  %-24s = %g ops per DRAM byte\n", key, ops / dram_bps);
    }
    printf("  %-24s = ", "lmem_total");
    print_bytes((long long)c->lmem_bytes * cfg_total_cores(c));
    printf("\n  %-24s = ", "sram_total");
    print_bytes((long long)c->sram_bytes * c->clusters);
    printf("\n  %-24s = 0x%016" PRIx64 "\n", "fingerprint", cfg_fingerprint(c));
    print_host_cost(c, "  ");
    AtlArea a;
    if (!cfg_area(c, &a)) {
        printf("  %-24s = unknown (no [area] section)\n", "area");
        return;
    }
    printf("  %-24s = %.3f mm2 at %s (", "area", a.total, c->area_node);
    for (int p = 0; p < AREA_PARTS; p++) printf("%s%s %.3f", p ? ", " : "", area_part_name(p), a.part[p]);
    printf(")\n");
}

static void doc(void)
{
    printf("# Chip configuration\n\n"
           "<!-- generated by `atoll config --doc` from CFG_KEYS in isa/config.h; do not edit -->\n\n"
           "Every number the simulator, firmware and compiler know about the hardware\n"
           "comes from one INI file (`configs/a1.ini` is the reference chip,\n"
           "`configs/tiny.ini` a one-core chip for fast tests, `configs/edge16k.ini`\n"
           "a two-core chip with 16 KiB LMEM for tests of the tile planner's splits,\n"
           "`configs/a1x16.ini` a1 with 16 clusters for placement studies;\n"
           "`configs/a1-noc.ini` and `configs/a1x16-noc.ini` are a1 and a1x16 with\n"
           "cluster-to-cluster links, a ring of 4 and a 4 x 4 mesh, for pipelines\n"
           "over clusters).\n"
           "`atoll config show --chip FILE` prints a config with its derived figures.\n\n"
           "## Syntax\n\n"
           "- `[section]` headers, then `key = value` lines; blank lines are ignored.\n"
           "- A line whose first non-blank character is `#` or `;` is a comment; so is\n"
           "  the rest of a line from a `#` or `;` that follows white space (outside\n"
           "  double quotes). Text values may be quoted.\n"
           "- A key with a default may be left out and then has that value (those\n"
           "  keys were added after the first configs were written, and their\n"
           "  defaults keep what those configs described); every other key is\n"
           "  required. Unknown sections, unknown keys and keys\n"
           "  given twice are errors, as are values that do not parse or lie outside\n"
           "  the range. Errors read `FILE:LINE: message`; a missing key reads\n"
           "  `FILE: missing key [section] key`.\n"
           "- An enum key takes one of the names its range lists (case matters).\n"
           "- Integers are decimal or `0x` hex. Byte counts (unit `bytes`) accept the\n"
           "  suffixes `K`, `M`, `G` (also `KiB`, `MiB`, `GiB`): 2^10, 2^20, 2^30.\n"
           "- Scope `FP` marks keys compiled code depends on: the chip fingerprint\n"
           "  (FNV-1a 64 over the lines `section.key=value\\n` of the FP keys in table\n"
           "  order, integers in decimal, reals as `%%.17g`) changes only when one of\n"
           "  them does, so a model compiled for one chip runs on a chip that differs\n"
           "  only in `SIM` (timing and energy) keys. An FP key that has a default\n"
           "  (`[noc] cluster_links`) is hashed only when it differs from it, so the\n"
           "  configs written before it keep their fingerprint.\n"
           "- Scope `AREA` marks the keys of the optional `[area]` section: the area\n"
           "  model (isa/area.h) that `atoll config show`, the stats JSON and the\n"
           "  sweep CSV report. A config without the section has no area figure; one\n"
           "  with it gives every key of it. Area is not in the fingerprint.\n\n");
    const char *section = "";
    for (int i = 0; i < cfg_num_keys; i++) {
        const AtlCfgKey *k = &cfg_keys[i];
        if (strcmp(section, k->section)) {
            section = k->section;
            printf("%s## [%s]\n\n| key | type | range | unit | default | scope | meaning |\n"
                   "| --- | --- | --- | --- | --- | --- | --- |\n",
                   i ? "\n" : "", section);
        }
        static const char *const type_names[] = {"int", "real", "text", "enum"};
        char range[128] = "";
        if (k->type == CFG_INT) snprintf(range, sizeof range, "%.0f .. %.0f", k->min, k->max);
        else if (k->type == CFG_REAL) snprintf(range, sizeof range, "%g .. %g", k->min, k->max);
        else if (k->type == CFG_TEXT) snprintf(range, sizeof range, "< %zu chars", k->size);
        else
            for (size_t j = 0, n = 0; k->unit[j] && n + 3 < sizeof range; j++) {
                if (k->unit[j] == '|') { range[n++] = ','; range[n++] = ' '; }
                else range[n++] = k->unit[j];
                range[n] = 0;
            }
        printf("| `%s` | %s | %s | %s | %s | %s | %s |\n", k->key, type_names[k->type], range, cfg_key_unit(k),
               k->def ? k->def : "required", k->scope, k->doc);
    }
    printf("\n## Rules between keys (cfg_validate)\n\n"
           "Checked after every key has parsed; the error points at the line of the\n"
           "first key named.\n\n");
    for (int i = 0; cfg_rule_doc(i); i++) printf("- %s\n", cfg_rule_doc(i));
    printf("- `[chip] cores_per_cluster <= %d` (DMA core masks are 32 bits) and\n"
           "  `[sync] semaphores <= %d` (the ISA's semaphore ids) are the schema's ranges.\n",
           CFG_MAX_CORES_PER_CLUSTER, ISA_MAX_SEMAPHORES);
    printf("\n## Derived figures\n\n"
           "- peak ops/s for dtype d = 2 x rows x cols x cores x freq / rate(d)\n"
           "  (i8, f16, bf16, f32; the matrix unit has no i16/i32 mode);\n"
           "- DRAM bytes per cycle = gbps x 1e9 / (freq_mhz x 1e6);\n"
           "- ridge point (ops per DRAM byte) = peak ops/s / DRAM bytes/s: a layer\n"
           "  with less arithmetic intensity than this is DRAM-bound;\n"
           "- LMEM total = lmem bytes x cores; SRAM total = sram bytes x clusters;\n"
           "- area (mm^2) = cores x (rows x cols x mac_i8_mm2 + rows x cols / f16_rate\n"
           "  x mac_fp_mm2 + lanes x vec_lane_mm2 + LMEM MiB x lmem_mm2_per_mib)\n"
           "  + clusters x (SRAM MiB x sram_mm2_per_mib + noc_mm2_per_cluster)\n"
           "  + channels x dram_phy_mm2_per_channel (a half-rate fp16 mode counts as\n"
           "  half as many fp MACs).\n");
}

int cmd_config(int argc, char **argv)
{
    if (argc < 2) { usage(stderr); return 2; }
    if (cli_is_help(argv[1])) { usage(stdout); return 0; }
    if (!strcmp(argv[1], "--doc")) {
        if (argc != 2) { usage(stderr); return 2; }
        doc();
        return 0;
    }
    int is_show = !strcmp(argv[1], "show"), is_check = !strcmp(argv[1], "check");
    if (!is_show && !is_check) {
        fprintf(stderr, "atoll config: unknown action '%s'\n", argv[1]);
        usage(stderr);
        return 2;
    }
    const char *chip = NULL;
    int bad = 0;
    for (int i = 2; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        const char *v = cli_opt(argc, argv, &i, "--chip", &bad);
        if (bad) return 2;
        if (v) { chip = v; continue; }
        if (argv[i][0] == '-') return cli_bad_option("config", argv[i], usage_text);
        fprintf(stderr, "atoll config: unexpected argument '%s'\n", argv[i]);
        return 2;
    }
    AtlChip c;
    char path[4096];
    if (cli_load_chip("config", chip, NULL, &c, path, sizeof path)) return 1;
    if (is_show) show(&c, path);
    else {
        printf("%s: ok (chip %s, fingerprint 0x%016" PRIx64 ")\n", path, c.name, cfg_fingerprint(&c));
        print_host_cost(&c, "  ");
    }
    return 0;
}
