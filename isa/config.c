/* config.c - the chip description loader, driven by the CFG_KEYS table of
 * config.h: an INI parser (sections, `key = value`, `#`/`;` comments),
 * per-key parsing and range checks from the table, and cfg_validate's
 * cross-key rules. Every message reads "FILE:LINE: ..." (missing keys:
 * "FILE: missing key [section] key").
 *
 * Syntax details: the INI lines and comments of util/ini.h. Text values
 * may be quoted. Integer values are decimal or 0x hex; byte counts accept
 * the suffixes K, M, G (also KiB, MiB, GiB) meaning 2^10, 2^20, 2^30.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "isa/config.h"
#include "isa/isa.h"
#include "util/file.h"
#include "util/ini.h"

const AtlCfgKey cfg_keys[] = {
#define K(sec, key, member, type, mn, mx, unit, scope, def, doc) \
    {sec, key, type, offsetof(AtlChip, member), sizeof(((AtlChip *)0)->member), (double)(mn), (double)(mx), unit, scope, def, doc},
    CFG_KEYS(K)
#undef K
};
const int cfg_num_keys = (int)(sizeof cfg_keys / sizeof cfg_keys[0]);

int cfg_key_is_bytes(const AtlCfgKey *k)
{
    return k->type == CFG_INT && (!strcmp(k->unit, "bytes") || !strncmp(k->unit, "MiB", 3));
}

const char *cfg_key_unit(const AtlCfgKey *k)
{
    if (k->type == CFG_ENUM) return "";
    if (!cfg_key_is_bytes(k)) return k->unit;
    size_t n = strlen(k->key);
    return n > 10 && !strcmp(k->key + n - 10, "_per_cycle") ? "bytes/cycle" : "bytes";
}

int cfg_key_index(const char *section, const char *key)
{
    for (int i = 0; i < cfg_num_keys; i++)
        if (!strcmp(cfg_keys[i].section, section) && !strcmp(cfg_keys[i].key, key)) return i;
    return -1;
}

static int *member_int(AtlChip *c, const AtlCfgKey *k) { return (int *)((char *)c + k->offset); }
static double *member_real(AtlChip *c, const AtlCfgKey *k) { return (double *)((char *)c + k->offset); }
static char *member_text(AtlChip *c, const AtlCfgKey *k) { return (char *)c + k->offset; }

/* The i-th name of an enum key's '|'-separated list: start and length; 0 if none. */
static int enum_item(const AtlCfgKey *k, int i, const char **start, size_t *len)
{
    const char *p = k->unit;
    for (int n = 0; n < i; n++) {
        p = strchr(p, '|');
        if (!p) return 0;
        p++;
    }
    const char *bar = strchr(p, '|');
    *start = p;
    *len = bar ? (size_t)(bar - p) : strlen(p);
    return 1;
}

int cfg_enum_count(const AtlCfgKey *k)
{
    int n = 1;
    for (const char *p = k->unit; *p; p++) n += *p == '|';
    return n;
}

void cfg_format_value(const AtlChip *c, const AtlCfgKey *k, char *buf, size_t cap)
{
    AtlChip *m = (AtlChip *)c;
    if (k->type == CFG_ENUM) {
        const char *p;
        size_t n;
        if (enum_item(k, *member_int(m, k), &p, &n)) snprintf(buf, cap, "%.*s", (int)n, p);
        else snprintf(buf, cap, "?");
    } else if (k->type == CFG_INT) snprintf(buf, cap, "%d", *member_int(m, k));
    else if (k->type == CFG_REAL) snprintf(buf, cap, "%.17g", *member_real(m, k));
    else snprintf(buf, cap, "%s", member_text(m, k));
}

/* ---- values ---- */

static const struct {
    const char *suffix;
    long long mult;
} byte_suffixes[] = {
    {"KiB", 1LL << 10}, {"MiB", 1LL << 20}, {"GiB", 1LL << 30}, {"K", 1LL << 10}, {"M", 1LL << 20}, {"G", 1LL << 30},
};

/* Parses `v` for key k into chip; on error writes a message (no location). */
static int parse_value(const AtlCfgKey *k, const char *v, AtlChip *chip, char *msg, size_t cap)
{
    if (!*v) { snprintf(msg, cap, "[%s] %s: empty value", k->section, k->key); return -1; }
    if (k->type == CFG_TEXT) {
        size_t n = strlen(v);
        if (n >= 2 && v[0] == '"' && v[n - 1] == '"') { v++; n -= 2; }
        if (n == 0) { snprintf(msg, cap, "[%s] %s: empty value", k->section, k->key); return -1; }
        if (n >= k->size) { snprintf(msg, cap, "[%s] %s: text longer than %zu characters", k->section, k->key, k->size - 1); return -1; }
        memcpy(member_text(chip, k), v, n);
        member_text(chip, k)[n] = 0;
        return 0;
    }
    if (k->type == CFG_ENUM) {
        const char *p;
        size_t n;
        for (int i = 0; enum_item(k, i, &p, &n); i++)
            if (strlen(v) == n && !strncmp(v, p, n)) { *member_int(chip, k) = i; return 0; }
        snprintf(msg, cap, "[%s] %s: '%s' is not one of ", k->section, k->key, v);
        size_t used = strlen(msg);
        for (int i = 0; enum_item(k, i, &p, &n) && used < cap; i++) {
            snprintf(msg + used, cap - used, "%s%.*s", i ? ", " : "", (int)n, p);
            used = strlen(msg);
        }
        return -1;
    }
    char *end;
    errno = 0;
    if (k->type == CFG_REAL) {
        double d = strtod(v, &end);
        if (end == v || *end || errno == ERANGE || !isfinite(d)) {
            snprintf(msg, cap, "[%s] %s: '%s' is not a number", k->section, k->key, v);
            return -1;
        }
        if (d < k->min || d > k->max) {
            snprintf(msg, cap, "[%s] %s = %g is out of range %g..%g", k->section, k->key, d, k->min, k->max);
            return -1;
        }
        *member_real(chip, k) = d;
        return 0;
    }
    long long x = strtoll(v, &end, 0);
    if (end == v || errno == ERANGE || (*v == '0' && v[1] && isdigit((unsigned char)v[1]))) {
        snprintf(msg, cap, "[%s] %s: '%s' is not an integer", k->section, k->key, v);
        return -1;
    }
    if (*end) {
        size_t i, ns = sizeof byte_suffixes / sizeof byte_suffixes[0];
        for (i = 0; i < ns; i++)
            if (!strcmp(end, byte_suffixes[i].suffix)) break;
        if (i == ns) { snprintf(msg, cap, "[%s] %s: '%s' is not an integer", k->section, k->key, v); return -1; }
        if (!cfg_key_is_bytes(k)) {
            snprintf(msg, cap, "[%s] %s: suffix '%s' is only allowed on byte counts", k->section, k->key, end);
            return -1;
        }
        if (x > LLONG_MAX / byte_suffixes[i].mult || x < -(LLONG_MAX / byte_suffixes[i].mult)) {
            snprintf(msg, cap, "[%s] %s: '%s' is too large", k->section, k->key, v);
            return -1;
        }
        x *= byte_suffixes[i].mult;
    }
    if ((double)x < k->min || (double)x > k->max) {
        snprintf(msg, cap, "[%s] %s = %lld is out of range %.0f..%.0f", k->section, k->key, x, k->min, k->max);
        return -1;
    }
    *member_int(chip, k) = (int)x;
    return 0;
}

int cfg_set_value(AtlChip *chip, int key, const char *text, AtlErr *e)
{
    char msg[512];
    if (key < 0 || key >= cfg_num_keys) return atl_fail(e, "no config key %d", key);
    if (parse_value(&cfg_keys[key], text, chip, msg, sizeof msg)) return atl_fail(e, "%s", msg);
    return 0;
}

/* ---- cross-key rules ---- */

static int is_pow2(long long x) { return x > 0 && (x & (x - 1)) == 0; }

typedef int (*RuleFn)(const AtlChip *c, char *msg, size_t cap);

/* A rule without a function requires its own key to be a power of two. */
#define RULE_POW2 NULL

static int rule_pow2(const AtlChip *c, const char *section, const char *key, char *m, size_t n)
{
    int v = *member_int((AtlChip *)c, &cfg_keys[cfg_key_index(section, key)]);
    if (is_pow2(v)) return 0;
    snprintf(m, n, "[%s] %s = %d is not a power of two", section, key, v);
    return 1;
}

static int rule_lmem_banks(const AtlChip *c, char *m, size_t n)
{
    long long unit = (long long)c->lmem_banks * c->lmem_bank_width;
    if (c->lmem_bytes % unit == 0) return 0;
    snprintf(m, n, "[lmem] bytes = %d is not a multiple of banks x bank_width = %d x %d = %lld", c->lmem_bytes,
             c->lmem_banks, c->lmem_bank_width, unit);
    return 1;
}

static int rule_bank_rate(const AtlChip *c, char *m, size_t n)
{
    if (c->lmem_bank_bytes_per_cycle <= c->lmem_bank_width) return 0;
    snprintf(m, n, "[lmem] bank_bytes_per_cycle = %d exceeds bank_width = %d (a bank serves at most one row per cycle)",
             c->lmem_bank_bytes_per_cycle, c->lmem_bank_width);
    return 1;
}

static int rule_interleave_burst(const AtlChip *c, char *m, size_t n)
{
    if (c->dram_interleave % c->dma_burst_bytes == 0) return 0;
    snprintf(m, n, "[dram] interleave = %d is not a multiple of [dma] burst_bytes = %d (a burst must stay in one channel)",
             c->dram_interleave, c->dma_burst_bytes);
    return 1;
}

static int rule_dram_channels(const AtlChip *c, char *m, size_t n)
{
    long long span = (long long)c->dram_interleave * c->dram_channels;
    if (span <= c->dram_bytes) return 0;
    snprintf(m, n, "[dram] channels x interleave = %d x %d = %lld exceeds [dram] bytes = %d", c->dram_channels,
             c->dram_interleave, span, c->dram_bytes);
    return 1;
}

static int rule_sram_alignment(const AtlChip *c, char *m, size_t n)
{
    if (c->sram_bytes % c->lmem_alignment == 0) return 0;
    snprintf(m, n, "[sram] bytes = %d is not a multiple of [lmem] alignment = %d", c->sram_bytes, c->lmem_alignment);
    return 1;
}

static int rule_weight_tile(const AtlChip *c, char *m, size_t n)
{
    long long tile = (long long)c->mm_rows * c->mm_cols * 4;
    if (tile <= c->lmem_bytes) return 0;
    snprintf(m, n, "[lmem] bytes = %d cannot hold one f32 weight tile of the %d x %d array (%lld bytes)", c->lmem_bytes,
             c->mm_rows, c->mm_cols, tile);
    return 1;
}

static int rule_vector_bandwidth(const AtlChip *c, char *m, size_t n)
{
    long long need = (long long)c->vec_lanes * 4, have = (long long)c->lmem_banks * c->lmem_bank_bytes_per_cycle;
    if (need <= have) return 0;
    snprintf(m, n, "[vector] lanes = %d needs %lld bytes/cycle from LMEM but banks x bank_bytes_per_cycle gives %lld",
             c->vec_lanes, need, have);
    return 1;
}

static int rule_dma_port(const AtlChip *c, char *m, size_t n)
{
    long long have = (long long)c->lmem_banks * c->lmem_bank_bytes_per_cycle;
    if (c->dma_lmem_bytes_per_cycle <= have) return 0;
    snprintf(m, n, "[dma] lmem_bytes_per_cycle = %d exceeds the LMEM's banks x bank_bytes_per_cycle = %lld",
             c->dma_lmem_bytes_per_cycle, have);
    return 1;
}

static int rule_banked_channels(const AtlChip *c, char *m, size_t n)
{
    if (c->dram_model != CFG_DRAM_BANKED || is_pow2(c->dram_channels)) return 0;
    snprintf(m, n, "[dram] channels = %d is not a power of two (model = banked maps address bits to channels)", c->dram_channels);
    return 1;
}

static int rule_access_row(const AtlChip *c, char *m, size_t n)
{
    if (c->dram_access_bytes <= c->dram_row_bytes) return 0;
    snprintf(m, n, "[dram_device] access_bytes = %d exceeds row_bytes = %d", c->dram_access_bytes, c->dram_row_bytes);
    return 1;
}

static int rule_refresh(const AtlChip *c, char *m, size_t n)
{
    if (c->dram_refi == 0 || c->dram_refi > c->dram_rfc) return 0;
    snprintf(m, n, "[dram_device] refi = %d is not above rfc = %d (a rank would do nothing but refresh)", c->dram_refi, c->dram_rfc);
    return 1;
}

static int rule_mesh_cols(const AtlChip *c, char *m, size_t n)
{
    if (c->noc_topology != CFG_NOC_MESH || !c->noc_mesh_cols || c->clusters % c->noc_mesh_cols == 0) return 0;
    snprintf(m, n, "[noc] mesh_cols = %d does not divide [chip] clusters = %d", c->noc_mesh_cols, c->clusters);
    return 1;
}

static int rule_write_marks(const AtlChip *c, char *m, size_t n)
{
    if (c->dram_write_low < c->dram_write_high) return 0;
    snprintf(m, n, "[dram] write_low = %d is not below write_high = %d", c->dram_write_low, c->dram_write_high);
    return 1;
}

/* Each rule names the key whose line an error points at, and says what it
 * requires (docs/config.md lists these); RULE_POW2 rows need no function
 * of their own. The schema's ranges already
 * enforce cores_per_cluster <= 32 (DMA masks) and semaphores <= 32 (ISA). */
static const struct {
    const char *section, *key;
    RuleFn check;
    const char *doc;
} rules[] = {
    {"lmem", "bytes", rule_lmem_banks, "`[lmem] bytes` is a multiple of `banks x bank_width`"},
    {"lmem", "alignment", RULE_POW2, "`[lmem] alignment` is a power of two"},
    {"lmem", "bank_width", RULE_POW2, "`[lmem] bank_width` is a power of two"},
    {"lmem", "bank_bytes_per_cycle", rule_bank_rate, "`[lmem] bank_bytes_per_cycle <= bank_width` (one row per bank per cycle)"},
    {"lmem", "bytes", rule_weight_tile, "`[lmem] bytes` holds one f32 weight tile: `rows x cols x 4`"},
    {"vector", "lanes", rule_vector_bandwidth, "`[vector] lanes x 4 <= [lmem] banks x bank_bytes_per_cycle` (LMEM feeds the vector unit)"},
    {"sram", "bytes", rule_sram_alignment, "`[sram] bytes` is a multiple of `[lmem] alignment`"},
    {"noc", "mesh_cols", rule_mesh_cols, "`[noc] mesh_cols` divides `[chip] clusters` (topology = mesh)"},
    {"dma", "burst_bytes", RULE_POW2, "`[dma] burst_bytes` is a power of two"},
    {"dma", "lmem_bytes_per_cycle", rule_dma_port, "`[dma] lmem_bytes_per_cycle <= [lmem] banks x bank_bytes_per_cycle`"},
    {"dram", "interleave", RULE_POW2, "`[dram] interleave` is a power of two"},
    {"dram", "interleave", rule_interleave_burst, "`[dram] interleave` is a multiple of `[dma] burst_bytes` (a burst stays in one channel)"},
    {"dram", "channels", rule_dram_channels, "`[dram] channels x interleave <= [dram] bytes`"},
    {"dram", "channels", rule_banked_channels, "`[dram] channels` is a power of two when `model = banked`"},
    {"dram", "write_low", rule_write_marks, "`[dram] write_low < write_high`"},
    {"dram_device", "bankgroups", RULE_POW2, "`[dram_device] bankgroups` is a power of two"},
    {"dram_device", "banks", RULE_POW2, "`[dram_device] banks` is a power of two"},
    {"dram_device", "ranks", RULE_POW2, "`[dram_device] ranks` is a power of two"},
    {"dram_device", "rows", RULE_POW2, "`[dram_device] rows` is a power of two"},
    {"dram_device", "row_bytes", RULE_POW2, "`[dram_device] row_bytes` is a power of two"},
    {"dram_device", "access_bytes", RULE_POW2, "`[dram_device] access_bytes` is a power of two"},
    {"dram_device", "access_bytes", rule_access_row, "`[dram_device] access_bytes <= row_bytes`"},
    {"dram_device", "refi", rule_refresh, "`[dram_device] refi` is 0 (no refresh) or above `rfc`"},
};

const char *cfg_rule_doc(int i)
{
    return i >= 0 && i < (int)(sizeof rules / sizeof rules[0]) ? rules[i].doc : NULL;
}

/* lines: per key, the line it was set on (NULL when validating a struct). */
/* Keys of the optional [area] section (scope AREA) count only when the
 * config has that section. */
static int key_in_use(const AtlChip *c, const AtlCfgKey *k)
{
    return c->has_area || strcmp(k->scope, "AREA");
}

static int validate(const AtlChip *c, const char *name, const int *lines, AtlErr *e)
{
    char msg[512];
    for (int i = 0; i < cfg_num_keys; i++) {
        const AtlCfgKey *k = &cfg_keys[i];
        AtlChip *m = (AtlChip *)c;
        int bad = 0;
        if (!key_in_use(c, k)) continue;
        if (k->type == CFG_ENUM) {
            int v = *member_int(m, k);
            if (v < 0 || v >= cfg_enum_count(k)) {
                snprintf(msg, sizeof msg, "[%s] %s = %d is not a value of %s", k->section, k->key, v, k->unit);
                bad = 1;
            }
        } else if (k->type == CFG_INT) {
            int v = *member_int(m, k);
            if (v < k->min || v > k->max) {
                snprintf(msg, sizeof msg, "[%s] %s = %d is out of range %.0f..%.0f", k->section, k->key, v, k->min, k->max);
                bad = 1;
            }
        } else if (k->type == CFG_REAL) {
            double v = *member_real(m, k);
            if (!(v >= k->min && v <= k->max)) {
                snprintf(msg, sizeof msg, "[%s] %s = %g is out of range %g..%g", k->section, k->key, v, k->min, k->max);
                bad = 1;
            }
        } else if (!memchr(member_text(m, k), 0, k->size) || !member_text(m, k)[0]) {
            snprintf(msg, sizeof msg, "[%s] %s: empty or unterminated text", k->section, k->key);
            bad = 1;
        }
        if (bad) {
            if (lines && lines[i]) return atl_fail(e, "%s:%d: %s", name, lines[i], msg);
            return atl_fail(e, "%s: %s", name, msg);
        }
    }
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        int broken = rules[r].check ? rules[r].check(c, msg, sizeof msg)
                                    : rule_pow2(c, rules[r].section, rules[r].key, msg, sizeof msg);
        if (!broken) continue;
        int ki = cfg_key_index(rules[r].section, rules[r].key);
        if (lines && ki >= 0 && lines[ki]) return atl_fail(e, "%s:%d: %s", name, lines[ki], msg);
        return atl_fail(e, "%s: %s", name, msg);
    }
    return 0;
}

int cfg_validate(const AtlChip *chip, const char *name, AtlErr *e)
{
    return validate(chip, name, NULL, e);
}

/* ---- the INI parser (syntax: util/ini.h) ---- */

static int section_known(const char *s)
{
    for (int i = 0; i < cfg_num_keys; i++)
        if (!strcmp(cfg_keys[i].section, s)) return 1;
    return 0;
}

typedef struct CfgParse {
    const char *name;
    AtlChip *chip;
    int *lines;                /* per key, the line it was set on */
} CfgParse;

static int cfg_line(void *ctx, const char *section, const char *key, const char *val, int lineno, AtlErr *e)
{
    CfgParse *p = ctx;
    char msg[512];
    if (!key) {
        if (!section_known(section)) return atl_fail(e, "%s:%d: unknown section [%s]", p->name, lineno, section);
        if (!strcmp(section, "area")) p->chip->has_area = 1;
        return 0;
    }
    int ki = cfg_key_index(section, key);
    if (ki < 0) return atl_fail(e, "%s:%d: unknown key '%s' in [%s]", p->name, lineno, key, section);
    if (p->lines[ki])
        return atl_fail(e, "%s:%d: duplicate key [%s] %s (first set on line %d)", p->name, lineno, section, key, p->lines[ki]);
    if (parse_value(&cfg_keys[ki], val, p->chip, msg, sizeof msg)) return atl_fail(e, "%s:%d: %s", p->name, lineno, msg);
    p->lines[ki] = lineno;
    return 0;
}

void cfg_set_defaults(AtlChip *chip)
{
    char msg[256];
    for (int i = 0; i < cfg_num_keys; i++)
        if (cfg_keys[i].def) (void)parse_value(&cfg_keys[i], cfg_keys[i].def, chip, msg, sizeof msg); /* test_config checks every default parses */
}

int cfg_set(AtlChip *chip, const char *section, const char *key, const char *value, AtlErr *e)
{
    int ki = cfg_key_index(section, key);
    if (ki < 0) return atl_fail(e, "unknown key [%s] %s", section, key);
    return cfg_set_value(chip, ki, value, e);
}

int cfg_parse(const char *name, const char *text, AtlChip *chip, AtlErr *e)
{
    memset(chip, 0, sizeof *chip);
    cfg_set_defaults(chip);
    CfgParse p = {name, chip, calloc((size_t)cfg_num_keys, sizeof *p.lines)};
    if (!p.lines) return atl_fail(e, "%s: out of memory", name);
    int rc = ini_parse(name, text, cfg_line, &p, e);
    if (rc == 0)
        for (int i = 0; i < cfg_num_keys; i++)
            if (!p.lines[i] && !cfg_keys[i].def && key_in_use(chip, &cfg_keys[i])) {
                rc = atl_fail(e, "%s: missing key [%s] %s", name, cfg_keys[i].section, cfg_keys[i].key);
                break;
            }
    if (rc == 0) rc = validate(chip, name, p.lines, e);
    free(p.lines);
    return rc;
}

int cfg_load(const char *path, AtlChip *chip, AtlErr *e)
{
    unsigned char *d;
    size_t n;
    memset(chip, 0, sizeof *chip);
    if (atl_read_file_max(path, CFG_FILE_MAX_BYTES, "a chip config", &d, &n, e)) return -1;
    int rc;
    if (memchr(d, 0, n)) rc = atl_fail(e, "%s: not a text file (contains NUL bytes)", path);
    else rc = cfg_parse(path, (const char *)d, chip, e);
    free(d);
    return rc;
}

/* ---- derived figures ---- */

/* Whether val (as cfg_format_value prints it) is key k's default. */
static int default_value(const AtlCfgKey *k, const char *val)
{
    AtlChip d;
    char def[CFG_TEXT_MAX + 16], msg[256];
    memset(&d, 0, sizeof d);
    if (parse_value(k, k->def, &d, msg, sizeof msg)) return 0;
    cfg_format_value(&d, k, def, sizeof def);
    return !strcmp(def, val);
}

uint64_t cfg_fingerprint(const AtlChip *chip)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    char val[CFG_TEXT_MAX + 16], item[CFG_TEXT_MAX + 160];
    for (int i = 0; i < cfg_num_keys; i++) {
        const AtlCfgKey *k = &cfg_keys[i];
        if (strcmp(k->scope, "FP")) continue;
        cfg_format_value(chip, k, val, sizeof val);
        if (k->def && default_value(k, val)) continue; /* a later key at its default: the fingerprint of before */
        int n = snprintf(item, sizeof item, "%s.%s=%s\n", k->section, k->key, val);
        for (int j = 0; j < n && j < (int)sizeof item - 1; j++) {
            h ^= (unsigned char)item[j];
            h *= 0x100000001b3ULL;
        }
    }
    return h;
}

double cfg_dram_bytes_per_cycle(const AtlChip *c)
{
    return c->dram_gbps * 1e9 / (c->freq_mhz * 1e6);
}

/* Which rate key governs each matrix-unit dtype; i16/i32 have none (the
 * matrix unit has no such mode) and peak at 0. */
static const struct {
    int dtype;
    size_t rate_offset;
} mm_rates[] = {
    {ISA_I8, offsetof(AtlChip, mm_rate_i8)},
    {ISA_F16, offsetof(AtlChip, mm_rate_f16)},
    {ISA_BF16, offsetof(AtlChip, mm_rate_bf16)},
    {ISA_F32, offsetof(AtlChip, mm_rate_f32)},
};

double cfg_peak_ops_per_s(const AtlChip *c, int dtype)
{
    for (size_t i = 0; i < sizeof mm_rates / sizeof mm_rates[0]; i++) {
        if (mm_rates[i].dtype != dtype) continue;
        int rate;
        memcpy(&rate, (const char *)c + mm_rates[i].rate_offset, sizeof rate);
        if (rate <= 0) return 0;
        return 2.0 * c->mm_rows * c->mm_cols * cfg_total_cores(c) * c->freq_mhz * 1e6 / rate;
    }
    return 0;
}
