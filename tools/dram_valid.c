/* dram_valid.c - the banked DRAM model against what Ramulator2 measured
 * (see dram_valid.h). The seven request traces of the reference data set
 * are generated here from their definition (the data set's README and
 * gen_traces.py describe them; the SHA-256 of the generated text must
 * equal the manifest's, so these are the very traces Ramulator2 served),
 * each is replayed by dram_replay on the matching preset, and time,
 * row-hit rate and read latency are set beside Ramulator2's.
 *
 * LPDDR5 and HBM2 run twice: with the preset (configs/dram/), and with the
 * numbers Ramulator2 itself used where the preset departs from them
 * (docs/timing.md explains each), so a difference can be told apart into
 * "different numbers" and "different model". */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "isa/config.h"
#include "sim/dram.h"
#include "tools/dram_valid.h"
#include "util/docsection.h"
#include "util/file.h"
#include "util/sha256.h"

#define N_LOGICAL 24576     /* logical 64-byte requests per trace */
#define LREQ 64
#define RAND_SPAN (1ull << 30)
#define WSTREAM_BASE (256ull << 20)
#define SEED 0x5EED2024ull

/* How Ramulator2 organised each preset, which the traces that aim at one
 * bank (row_conflict, bank_thrash) are built from: transaction bytes and
 * the widths of channel, rank, bank group, bank, row, column (column in
 * transactions). */
enum { G_CH, G_RANK, G_BG, G_BANK, G_ROW, G_COL, G_NUM };
typedef struct RefGeometry {
    const char *preset;
    int tx;
    int bits[G_NUM];
} RefGeometry;
static const RefGeometry geometries[] = {
    {"DDR4", 64, {0, 0, 2, 2, 16, 7}},
    {"LPDDR5", 32, {0, 0, 2, 2, 15, 7}},
    {"HBM2", 16, {0, 1, 2, 2, 15, 5}},
};

static const char *const mappings[] = {"RoBaRaCoCh", "ChRaBaRoCo"};
/* fields from the least significant bit up, as dram_map.c */
static const int mapping_order[2][G_NUM] = {
    {G_CH, G_COL, G_RANK, G_BG, G_BANK, G_ROW},
    {G_COL, G_ROW, G_BANK, G_BG, G_RANK, G_CH},
};

static const char *const traces[] = {"seq_read", "seq_write", "rand_read", "dma_tile", "rw_interleave", "row_conflict", "bank_thrash"};
#define N_TRACES 7
static int mapping_dependent(int t) { return t >= 5; }

/* What runs: a preset's config, and for a second run the keys that give
 * Ramulator2's own numbers (all in [dram_device]). */
typedef struct Variant {
    const char *preset, *config, *label;
    int checked;
    const char *overrides;
} Variant;
static const Variant variants[] = {
    {"DDR4", "configs/dram/ddr4-3200.ini", "DDR4-3200", 1, NULL},
    {"LPDDR5", "configs/dram/lpddr5-6400.ini", "LPDDR5-6400", 0, NULL},
    {"LPDDR5", "configs/dram/lpddr5-6400.ini", "LPDDR5-6400, Ramulator2's timings", 0,
     "cl=20 cwl=11 rcd=15 rp=15 ras=34 rc=30 wr=28 rtp=4 rrd_s=4 rrd_l=4 wtr_s=5 wtr_l=10 faw=16 cs=2 act_cycles=2"},
    {"HBM2", "configs/dram/hbm2.ini", "HBM2", 0, NULL},
    {"HBM2", "configs/dram/hbm2.ini", "HBM2, Ramulator2's bus and no refresh", 0, "access_bytes=16 bl=4 row_bytes=512 refi=0"},
};

/* ---- the traces ---- */

static uint64_t splitmix(uint64_t *s)
{
    *s += 0x9E3779B97F4A7C15ull;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int log2i(uint64_t x)
{
    int b = 0;
    while ((1ull << b) < x) b++;
    return b;
}

/* Address of the given fields under mapping m (the inverse of decoding). */
static uint64_t field_addr(const RefGeometry *g, int m, const uint32_t fields[G_NUM])
{
    uint64_t a = 0;
    int shift = 0;
    for (int i = 0; i < G_NUM; i++) {
        int f = mapping_order[m][i];
        a |= (uint64_t)fields[f] << shift;
        shift += g->bits[f];
    }
    return a << log2i((uint64_t)g->tx);
}

/* The i-th logical 64-byte request of trace t. Returns its address;
 * *write set; *rng is rand_read's generator, advanced once per request. */
static uint64_t logical(int t, const RefGeometry *g, int m, uint64_t i, uint64_t *rng, int *write)
{
    *write = 0;
    uint64_t row_bytes = ((uint64_t)1 << g->bits[G_COL]) * (uint64_t)g->tx;
    switch (t) {
    case 0: return i * LREQ;
    case 1: *write = 1; return i * LREQ;
    case 2: return splitmix(rng) % (RAND_SPAN / LREQ) * LREQ;
    case 3: {
        /* 256-byte runs at a 4096-byte pitch, 64 rows per tile, 16 tiles across, then the next band */
        const uint64_t pitch = 4096, run = 256, tile_h = 64, per_run = run / LREQ, per_tile = tile_h * per_run;
        uint64_t per_band = (pitch / run) * per_tile, band = i / per_band, k = i % per_band;
        uint64_t tcol = k / per_tile, r = k % per_tile / per_run, w = k % per_run;
        return (band * tile_h + r) * pitch + tcol * run + w * LREQ;
    }
    case 4:
        if (i % 2) { *write = 1; return WSTREAM_BASE + i / 2 * LREQ; }
        return i / 2 * LREQ;
    default: {
        uint32_t rows = t == 5 ? 2 : 64;
        uint32_t f[G_NUM] = {0, 0, 0, 0, 1 + (uint32_t)(i % rows), 0};
        return field_addr(g, m, f) + i / rows * LREQ % row_bytes;
    }
    }
}

/* The trace as requests, and its text's SHA-256 in hex. */
static int make_trace(int t, const RefGeometry *g, int m, DramTraceReq **out, size_t *n, char sha_hex[65])
{
    size_t per = LREQ / (size_t)g->tx, total = (size_t)N_LOGICAL * per;
    DramTraceReq *v = malloc(total * sizeof *v);
    char *text = malloc(total * 24 + 1);
    if (!v || !text) { free(v); free(text); return -1; }
    uint64_t rng = SEED;
    size_t len = 0, k = 0;
    for (uint64_t i = 0; i < N_LOGICAL; i++) {
        int w;
        uint64_t a = logical(t, g, m, i, &rng, &w);
        for (size_t j = 0; j < per; j++, k++) {
            v[k].addr = a + j * (uint64_t)g->tx;
            v[k].write = w;
            len += (size_t)sprintf(text + len, "%s 0x%llx\n", w ? "ST" : "LD", (unsigned long long)v[k].addr);
        }
    }
    uint8_t h[ATL_SHA256_BYTES];
    atl_sha256(text, len, h);
    for (int b = 0; b < ATL_SHA256_BYTES; b++) sprintf(sha_hex + 2 * b, "%02x", h[b]);
    free(text);
    *out = v;
    *n = total;
    return 0;
}

/* ---- the reference files ---- */

typedef struct Csv {
    char *text;
    char **cell;        /* rows x cols */
    int rows, cols;
} Csv;

static void csv_free(Csv *c)
{
    free(c->text);
    free(c->cell);
    memset(c, 0, sizeof *c);
}

static int csv_load(const char *path, Csv *c, AtlErr *e)
{
    unsigned char *d;
    size_t n;
    memset(c, 0, sizeof *c);
    if (atl_read_file(path, &d, &n, e)) return -1;
    c->text = (char *)d;
    int lines = 0;
    for (size_t i = 0; i < n; i++) lines += d[i] == '\n';
    char *nl = strchr(c->text, '\n');
    if (!nl) { csv_free(c); return atl_fail(e, "%s: no header line", path); }
    c->cols = 1;
    for (char *p = c->text; p < nl; p++) c->cols += *p == ',';
    c->cell = calloc((size_t)(lines + 1) * (size_t)c->cols, sizeof *c->cell);
    if (!c->cell) { csv_free(c); return atl_fail(e, "%s: out of memory", path); }
    char *s = c->text;
    while (*s) {
        char *end = strchr(s, '\n');
        if (end) *end = 0;
        if (*s) {
            int col = 0;
            char **row = c->cell + (size_t)c->rows * (size_t)c->cols;
            for (char *f = s; f && col < c->cols; col++) {
                char *comma = strchr(f, ',');
                if (comma) *comma = 0;
                row[col] = f;
                f = comma ? comma + 1 : NULL;
            }
            if (col != c->cols) { csv_free(c); return atl_fail(e, "%s:%d: %d fields, the header has %d", path, c->rows + 1, col, c->cols); }
            c->rows++;
        }
        if (!end) break;
        s = end + 1;
    }
    return 0;
}

static int csv_col(const Csv *c, const char *name)
{
    for (int i = 0; i < c->cols; i++)
        if (!strcmp(c->cell[i], name)) return i;
    return -1;
}

/* Row r (1-based past the header) whose columns k1..k3 equal v1..v3; -1 if none. */
static int csv_find(const Csv *c, int k1, const char *v1, int k2, const char *v2, int k3, const char *v3)
{
    for (int r = 1; r < c->rows; r++) {
        char **row = c->cell + (size_t)r * (size_t)c->cols;
        if (!strcmp(row[k1], v1) && !strcmp(row[k2], v2) && !strcmp(row[k3], v3)) return r;
    }
    return -1;
}

static const char *csv_at(const Csv *c, int r, int k) { return c->cell[(size_t)r * (size_t)c->cols + (size_t)k]; }

/* ---- the comparison ---- */

typedef struct Sb {
    char *p;
    size_t len, cap;
} Sb;

static void sb_printf(Sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(Sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + (size_t)n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) return;
        b->p = p;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static int load_variant(const Variant *v, int mapping, AtlChip *chip, AtlErr *e)
{
    if (cfg_load(v->config, chip, e)) return -1;
    if (cfg_set(chip, "dram", "mapping", mappings[mapping], e)) return -1;
    if (v->overrides) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", v->overrides);
        for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
            char *eq = strchr(tok, '=');
            if (!eq) return atl_fail(e, "bad override '%s'", tok);
            *eq = 0;
            if (cfg_set(chip, "dram_device", tok, eq + 1, e)) return -1;
        }
    }
    return cfg_validate(chip, v->config, e);
}

int dram_validate(const char *dir, const char *doc, FILE *out, AtlErr *e)
{
    char path[4096];
    Csv res, man;
    snprintf(path, sizeof path, "%s/results.csv", dir);
    if (csv_load(path, &res, e)) return -1;
    snprintf(path, sizeof path, "%s/trace_manifest.csv", dir);
    if (csv_load(path, &man, e)) { csv_free(&res); return -1; }
    int rc = -1;
    int rp = csv_col(&res, "preset"), rm = csv_col(&res, "mapping"), rt = csv_col(&res, "trace");
    int rns = csv_col(&res, "ns_drained"), rh = csv_col(&res, "row_hits"), rmi = csv_col(&res, "row_misses");
    int rco = csv_col(&res, "row_conflicts"), rlat = csv_col(&res, "avg_read_lat_ns");
    int mp = csv_col(&man, "preset"), mt = csv_col(&man, "trace"), mm = csv_col(&man, "mapping"), ms = csv_col(&man, "sha256");
    Sb tab = {0};
    int bad = 0, checked = 0, within = 0;
    if (rp < 0 || rm < 0 || rt < 0 || rns < 0 || rh < 0 || rmi < 0 || rco < 0 || rlat < 0 || mp < 0 || mt < 0 || mm < 0 || ms < 0) {
        atl_fail(e, "%s: results.csv or trace_manifest.csv lacks a column this check reads", dir);
        goto out;
    }
    sb_printf(&tab, "| DRAM preset | mapping | trace | Ramulator2 us | Atoll us | time error | Ramulator2 row hits | Atoll row hits | "
                    "difference (points) | Ramulator2 read latency ns | Atoll ns |\n"
                    "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t vi = 0; vi < sizeof variants / sizeof variants[0]; vi++) {
        const Variant *v = &variants[vi];
        const RefGeometry *g = NULL;
        for (size_t k = 0; k < sizeof geometries / sizeof geometries[0]; k++)
            if (!strcmp(geometries[k].preset, v->preset)) g = &geometries[k];
        double worst_t = 0, worst_h = 0;
        for (int m = 0; m < 2; m++) {
            AtlChip chip;
            if (load_variant(v, m, &chip, e)) goto out;
            AtlDram *d = dram_new(&chip, e);
            if (!d) goto out;
            for (int t = 0; t < N_TRACES; t++) {
                DramTraceReq *reqs;
                size_t n;
                char sha[65];
                if (make_trace(t, g, m, &reqs, &n, sha)) { dram_free(d); atl_fail(e, "out of memory"); goto out; }
                int mr = csv_find(&man, mp, v->preset, mt, traces[t], mm, mapping_dependent(t) ? mappings[m] : "*");
                if (mr < 0 || strcmp(csv_at(&man, mr, ms), sha)) {
                    free(reqs);
                    dram_free(d);
                    atl_fail(e, "%s/trace_manifest.csv: the generated %s trace %s%s%s has SHA-256 %s, the manifest %s", dir,
                             v->preset, traces[t], mapping_dependent(t) ? " for " : "", mapping_dependent(t) ? mappings[m] : "",
                             sha, mr < 0 ? "has no row for it" : csv_at(&man, mr, ms));
                    goto out;
                }
                DramReplay r;
                dram_replay(d, reqs, n, &r);
                free(reqs);
                int rr = csv_find(&res, rp, v->preset, rm, mappings[m], rt, traces[t]);
                if (rr < 0) { dram_free(d); atl_fail(e, "%s/results.csv: no row for %s %s %s", dir, v->preset, mappings[m], traces[t]); goto out; }
                double ref_ns = atof(csv_at(&res, rr, rns));
                double ref_h = atof(csv_at(&res, rr, rh)), ref_all = ref_h + atof(csv_at(&res, rr, rmi)) + atof(csv_at(&res, rr, rco));
                const char *ref_lat = csv_at(&res, rr, rlat);
                uint64_t all = r.st.row_hits + r.st.row_misses + r.st.row_conflicts;
                double hit = all ? 100.0 * (double)r.st.row_hits / (double)all : 0, ref_hit = ref_all > 0 ? 100.0 * ref_h / ref_all : 0;
                double terr = ref_ns > 0 ? (r.ns - ref_ns) / ref_ns : 0, herr = hit - ref_hit;
                if (fabs(terr) > fabs(worst_t)) worst_t = terr;
                if (fabs(herr) > fabs(worst_h)) worst_h = herr;
                int ok = fabs(terr) <= 0.10 && fabs(herr) <= 10.0;
                if (v->checked) { checked++; within += ok; bad |= !ok; }
                char lat[32] = "-";
                if (r.st.reads) snprintf(lat, sizeof lat, "%.1f", (double)r.st.read_latency / (double)r.st.reads * chip.dram_tck_ps / 1000.0);
                sb_printf(&tab, "| %s | %s | %s | %.1f | %.1f | %+.1f%%%s | %.1f%% | %.1f%% | %+.1f | %s | %s |\n", v->label,
                          mappings[m], traces[t], ref_ns / 1000, r.ns / 1000, 100 * terr,
                          v->checked && !ok ? " (out of bounds)" : "", ref_hit, hit, herr, *ref_lat ? ref_lat : "-", lat);
            }
            dram_free(d);
        }
        fprintf(out, "%s: largest time error %+.1f%%, largest row-hit difference %+.1f points\n", v->label, 100 * worst_t, worst_h);
    }
    fprintf(out, "DDR4: %d of %d runs within 10%% of Ramulator2's time and 10 points of its row-hit rate\n\n", within, checked);
    if (!tab.p) { atl_fail(e, "out of memory"); goto out; }
    fputs(tab.p, out);
    if (doc) {
        Sb body = {0};
        sb_printf(&body, "Produced by `atoll dram --validate test/data/dram --doc docs/timing.md` (the traces generated and "
                         "checked against the data set's SHA-256, one channel, times in microseconds until every read has "
                         "returned and every write has issued; row hits as a share of all requests).\n\n%s", tab.p);
        if (!body.p) { atl_fail(e, "out of memory"); goto out; }
        int w = doc_section_write_file(doc, NULL, "dram_validation", NULL, body.p, e);
        free(body.p);
        if (w) goto out;
    }
    rc = bad ? 1 : 0;
out:
    free(tab.p);
    csv_free(&res);
    csv_free(&man);
    return rc;
}
