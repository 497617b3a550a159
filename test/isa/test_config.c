/* test_config.c - the chip config loader: the shipped configs load with the
 * documented figures, every error class (unknown section/key, missing key,
 * duplicate, bad number, out of range, misplaced suffix, each cfg_validate
 * rule) is reported with file, line and the key, and the fingerprint covers
 * exactly the FP keys. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include "test/test.h"
#include "isa/config.h"
#include "isa/area.h"
#include "isa/isa.h"
#include "util/file.h"

static char *read_text(const char *path)
{
    unsigned char *d;
    size_t n;
    AtlErr e;
    if (atl_read_file(path, &d, &n, &e)) return NULL;
    return (char *)d;
}

/* Returns a malloc'd copy of text with the first `from` replaced by `to`. */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *p = strstr(text, from);
    if (!p) return NULL;
    size_t a = (size_t)(p - text), fl = strlen(from), tl = strlen(to), n = strlen(text);
    char *out = malloc(n - fl + tl + 1);
    memcpy(out, text, a);
    memcpy(out + a, to, tl);
    memcpy(out + a + tl, p + fl, n - a - fl + 1);
    return out;
}

static int line_of(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    if (!p) return -1;
    int line = 1;
    for (const char *q = text; q < p; q++) line += *q == '\n';
    return line;
}

TEST(a1_loads_with_documented_figures)
{
    AtlChip c;
    AtlErr e;
    if (cfg_load("configs/a1.ini", &c, &e)) { CHECKF(0, "%s", e.msg); return; }
    CHECK(!strcmp(c.name, "a1"));
    CHECK_EQ_INT(cfg_total_cores(&c), 16);
    CHECK_EQ_INT(c.lmem_bytes, 512 * 1024);
    CHECK_EQ_INT(c.sram_bytes, 4 << 20);
    CHECK_EQ_INT(c.dram_bytes, 1 << 30);
    CHECK_EQ_INT(c.mm_rows * c.mm_cols, 1024);
    CHECK_NEAR(cfg_peak_ops_per_s(&c, ISA_I8), 16.0 * 1024 * 2 * 1e9, 1);
    CHECK_NEAR(cfg_peak_ops_per_s(&c, ISA_I8) / 1e12, 32.768, 1e-9);
    CHECK_NEAR(cfg_peak_ops_per_s(&c, ISA_F16), 16.384e12, 1);
    CHECK_NEAR(cfg_peak_ops_per_s(&c, ISA_BF16), 16.384e12, 1);
    CHECK_NEAR(cfg_peak_ops_per_s(&c, ISA_F32), 8.192e12, 1);
    CHECK_NEAR(cfg_peak_ops_per_s(&c, ISA_I16), 0, 0);
    CHECK_NEAR(cfg_dram_bytes_per_cycle(&c), 64.0, 1e-12);
    CHECK_NEAR(c.e_mac_i8, 0.3, 1e-12);
    CHECK_STR_CONTAINS(c.energy_source, "Horowitz");
    CHECK(strchr(c.energy_source, '"') == NULL);
}

TEST(tiny_loads)
{
    AtlChip c;
    AtlErr e;
    if (cfg_load("configs/tiny.ini", &c, &e)) { CHECKF(0, "%s", e.msg); return; }
    CHECK_EQ_INT(cfg_total_cores(&c), 1);
    CHECK_EQ_INT(c.mm_rows, 8);
    CHECK_EQ_INT(c.lmem_bytes, 65536);
    CHECK_NEAR(cfg_peak_ops_per_s(&c, ISA_I8), 128e9, 1);
}

TEST(fingerprint_covers_fp_keys_only)
{
    AtlChip a, b;
    AtlErr e;
    REQUIRE(cfg_load("configs/a1.ini", &a, &e) == 0);
    b = a;
    CHECK(cfg_fingerprint(&a) == cfg_fingerprint(&b));
    b.freq_mhz = 1500;           /* SIM key */
    b.e_dram_byte = 1;
    CHECK(cfg_fingerprint(&a) == cfg_fingerprint(&b));
    b.lmem_bytes = 256 * 1024;   /* FP key */
    CHECK(cfg_fingerprint(&a) != cfg_fingerprint(&b));
    b = a;
    b.mm_cols = 16;
    CHECK(cfg_fingerprint(&a) != cfg_fingerprint(&b));
    CHECK(cfg_fingerprint(&a) != 0xcbf29ce484222325ULL);
}

TEST(schema_limits_match_the_isa)
{
    int k = cfg_key_index("chip", "cores_per_cluster");
    REQUIRE(k >= 0);
    CHECK_EQ_INT(cfg_keys[k].max, CFG_MAX_CORES_PER_CLUSTER);
    k = cfg_key_index("sync", "semaphores");
    REQUIRE(k >= 0);
    CHECK(cfg_keys[k].max <= ISA_MAX_SEMAPHORES);
    CHECK_EQ_INT(cfg_key_index("chip", "nope"), -1);
}

/* Parses `base` with `from` replaced by `to` (and from2 by to2 when given)
 * and expects "x.ini:LINE: msg", LINE being the line of `at` in the edited
 * text (at == NULL: "x.ini: msg"). */
static void expect_edit2_error(const char *base, const char *from, const char *to, const char *from2, const char *to2,
                               const char *at, const char *msg)
{
    char *text = read_text(base);
    REQUIRE(text);
    char *ed = replace(text, from, to);
    free(text);
    CHECKF(ed != NULL, "'%s' not in %s", from, base);
    if (!ed) return;
    if (from2) {
        char *ed2 = replace(ed, from2, to2);
        free(ed);
        CHECKF(ed2 != NULL, "'%s' not in %s", from2, base);
        if (!ed2) return;
        ed = ed2;
    }
    AtlChip c;
    AtlErr e = {{0}};
    int rc = cfg_parse("x.ini", ed, &c, &e);
    CHECKF(rc == -1, "accepted %s -> %s", from, to);
    char want[600];
    if (at) snprintf(want, sizeof want, "x.ini:%d: %s", line_of(ed, at), msg);
    else snprintf(want, sizeof want, "x.ini: %s", msg);
    CHECK_STR_CONTAINS(e.msg, want);
    free(ed);
}

static void expect_edit_error(const char *base, const char *from, const char *to, const char *at, const char *msg)
{
    expect_edit2_error(base, from, to, NULL, NULL, at, msg);
}

#define A1 "configs/a1.ini"
#define TINY "configs/tiny.ini"

TEST(syntax_errors)
{
    expect_edit_error(A1, "[matrix]\n", "[matrixx]\n", "[matrixx]", "unknown section [matrixx]");
    expect_edit_error(A1, "[matrix]\n", "[matrix]\nfoo = 1\n", "foo = 1", "unknown key 'foo' in [matrix]");
    expect_edit_error(A1, "[matrix]\n", "[matrix\n", "[matrix\n", "malformed section header '[matrix'");
    expect_edit_error(A1, "[chip]\n", "rows = 3\n[chip]\n", "rows = 3", "key 'rows' outside any section");
    expect_edit_error(A1, "[chip]\n", "[chip]\njust words\n", "just words", "expected 'key = value' or '[section]', got 'just words'");
}

TEST(missing_and_duplicate_keys)
{
    expect_edit_error(A1, "cols = 32", "# cols removed", NULL, "missing key [matrix] cols");
    expect_edit_error(A1, "latency_ns = 100", "# gone", NULL, "missing key [dram] latency_ns");
    char *text = read_text(A1);
    REQUIRE(text);
    int first = line_of(text, "rows = 32");
    free(text);
    char msg[128];
    snprintf(msg, sizeof msg, "duplicate key [matrix] rows (first set on line %d)", first);
    expect_edit_error(A1, "cols = 32", "cols = 32\nrows = 16", "rows = 16", msg);
}

TEST(bad_values)
{
    expect_edit_error(A1, "rows = 32", "rows = 3x", "rows = 3x", "[matrix] rows: '3x' is not an integer");
    expect_edit_error(A1, "rows = 32", "rows = 032", "rows = 032", "[matrix] rows: '032' is not an integer");
    expect_edit_error(A1, "rows = 32", "rows =", "rows =", "[matrix] rows: empty value");
    expect_edit_error(A1, "gbps = 64", "gbps = fast", "gbps = fast", "[dram] gbps: 'fast' is not a number");
    expect_edit_error(A1, "gbps = 64", "gbps = inf", "gbps = inf", "[dram] gbps: 'inf' is not a number");
    expect_edit_error(A1, "rows = 32", "rows = 0", "rows = 0", "[matrix] rows = 0 is out of range 1..1024");
    expect_edit_error(A1, "rows = 32", "rows = 99999999999999999999", "rows = 9",
                      "[matrix] rows: '99999999999999999999' is not an integer");
    expect_edit_error(A1, "clusters = 4", "clusters = 65", "clusters = 65", "[chip] clusters = 65 is out of range 1..64");
    expect_edit_error(A1, "cores_per_cluster = 4", "cores_per_cluster = 33", "cores_per_cluster = 33",
                      "[chip] cores_per_cluster = 33 is out of range 1..32");
    expect_edit_error(A1, "gbps = 64", "gbps = 0", "gbps = 0", "[dram] gbps = 0 is out of range 0.001..100000");
    expect_edit_error(A1, "bytes = 1G", "bytes = 2G", "bytes = 2G", "[dram] bytes = 2147483648 is out of range 1048576..2147483647");
    expect_edit_error(A1, "rows = 32", "rows = 1K", "rows = 1K", "[matrix] rows: suffix 'K' is only allowed on byte counts");
    expect_edit_error(A1, "bytes = 512K", "bytes = 512Q", "bytes = 512Q", "[lmem] bytes: '512Q' is not an integer");
    expect_edit_error(A1, "bytes = 512K", "bytes = 9000000000000G", "bytes = 9000000000000G", "[lmem] bytes: '9000000000000G' is too large");
    expect_edit_error(A1, "bytes = 512K", "bytes = 2000000K", "bytes = 2000000K", "[lmem] bytes = 2048000000 is out of range 4096..1073741824");
    expect_edit_error(A1, "name = a1", "name = \"\"", "name = \"\"", "[chip] name: empty value");
    char longname[100];
    memset(longname, 'n', 80);
    strcpy(longname + 80, "");
    char line[128];
    snprintf(line, sizeof line, "name = %s", longname);
    expect_edit_error(A1, "name = a1", line, "name = nnn", "[chip] name: text longer than 63 characters");
}

TEST(suffixes_and_comments)
{
    char *text = read_text(A1);
    REQUIRE(text);
    char *ed = replace(text, "bytes = 512K", "bytes = 0x80000 ; hex, with a ; comment");
    free(text);
    REQUIRE(ed);
    char *ed2 = replace(ed, "bytes = 4M", "bytes = 4096KiB");
    free(ed);
    REQUIRE(ed2);
    AtlChip c;
    AtlErr e;
    if (cfg_parse("x.ini", ed2, &c, &e)) CHECKF(0, "%s", e.msg);
    else {
        CHECK_EQ_INT(c.lmem_bytes, 512 * 1024);
        CHECK_EQ_INT(c.sram_bytes, 4 << 20);
    }
    free(ed2);
}

TEST(each_validate_rule)
{
    expect_edit_error(A1, "banks = 16", "banks = 3", "bytes = 512K",
                      "[lmem] bytes = 524288 is not a multiple of banks x bank_width = 3 x 64 = 192");
    expect_edit_error(A1, "alignment = 64", "alignment = 48", "alignment = 48", "[lmem] alignment = 48 is not a power of two");
    expect_edit2_error(A1, "bytes = 512K", "bytes = 768K", "bank_width = 64", "bank_width = 48", "bank_width = 48",
                       "[lmem] bank_width = 48 is not a power of two");
    expect_edit_error(A1, "bank_bytes_per_cycle = 64", "bank_bytes_per_cycle = 128", "bank_bytes_per_cycle = 128",
                      "[lmem] bank_bytes_per_cycle = 128 exceeds bank_width = 64");
    expect_edit2_error(TINY, "rows = 8", "rows = 256", "cols = 8", "cols = 256", "bytes = 64K",
                       "[lmem] bytes = 65536 cannot hold one f32 weight tile of the 256 x 256 array (262144 bytes)");
    expect_edit_error(A1, "lanes = 64", "lanes = 512", "lanes = 512",
                      "[vector] lanes = 512 needs 2048 bytes/cycle from LMEM but banks x bank_bytes_per_cycle gives 1024");
    expect_edit_error(A1, "bytes = 4M", "bytes = 4194336", "bytes = 4194336",
                      "[sram] bytes = 4194336 is not a multiple of [lmem] alignment = 64");
    expect_edit_error(A1, "burst_bytes = 256", "burst_bytes = 384", "burst_bytes = 384", "[dma] burst_bytes = 384 is not a power of two");
    expect_edit_error(A1, "lmem_bytes_per_cycle = 64", "lmem_bytes_per_cycle = 2048", "lmem_bytes_per_cycle = 2048",
                      "[dma] lmem_bytes_per_cycle = 2048 exceeds the LMEM's banks x bank_bytes_per_cycle = 1024");
    expect_edit_error(A1, "interleave = 4096", "interleave = 6144", "interleave = 6144", "[dram] interleave = 6144 is not a power of two");
    expect_edit_error(A1, "interleave = 4096", "interleave = 128", "interleave = 128",
                      "[dram] interleave = 128 is not a multiple of [dma] burst_bytes = 256");
    expect_edit2_error(TINY, "channels = 1 ", "channels = 64 ", "interleave = 4096", "interleave = 1M", "channels = 64",
                       "[dram] channels x interleave = 64 x 1048576 = 67108864 exceeds [dram] bytes = 16777216");
    expect_edit2_error(A1, "channels = 4 ", "channels = 3 ", "latency_ns = 100", "latency_ns = 100\nmodel = banked", "channels = 3",
                      "[dram] channels = 3 is not a power of two (model = banked maps address bits to channels)");
    expect_edit_error(A1, "latency_ns = 100", "latency_ns = 100\nwrite_low = 80", "write_low = 80",
                      "[dram] write_low = 80 is not below write_high = 80");
    expect_edit_error(A1, "latency_ns = 100", "latency_ns = 100\n[dram_device]\nbanks = 6", "banks = 6",
                      "[dram_device] banks = 6 is not a power of two");
    expect_edit_error(A1, "latency_ns = 100", "latency_ns = 100\n[dram_device]\nrow_bytes = 1K\naccess_bytes = 2K", "access_bytes = 2K",
                      "[dram_device] access_bytes = 2048 exceeds row_bytes = 1024");
    expect_edit_error(A1, "latency_ns = 100", "latency_ns = 100\n[dram_device]\nrefi = 500", "refi = 500",
                      "[dram_device] refi = 500 is not above rfc = 560 (a rank would do nothing but refresh)");
    expect_edit_error(A1, "latency_cycles = 10", "latency_cycles = 10\ntopology = mesh\nmesh_cols = 3", "mesh_cols = 3",
                      "[noc] mesh_cols = 3 does not divide [chip] clusters = 4");
    for (int i = 0; i < 23; i++) CHECKF(cfg_rule_doc(i) != NULL, "rule %d has no doc", i);
    CHECK(cfg_rule_doc(23) == NULL);
}

/* [noc] cluster_links is an FP key with a default: left out or at its
 * default it leaves the fingerprint as it was before the key existed (a1's
 * is pinned), set it changes it; the other [noc] keys are timing only. */
TEST(fingerprint_keeps_old_configs)
{
    AtlChip c, d;
    AtlErr e = {{0}};
    REQUIRE(cfg_load(A1, &c, &e) == 0);
    CHECK(cfg_fingerprint(&c) == 0xe0351042d3b4ac59ull);
    REQUIRE(cfg_set(&c, "noc", "cluster_links", "0", &e) == 0);
    CHECK(cfg_fingerprint(&c) == 0xe0351042d3b4ac59ull);
    REQUIRE(cfg_set(&c, "noc", "cluster_links", "1", &e) == 0);
    uint64_t with = cfg_fingerprint(&c);
    CHECK(with != 0xe0351042d3b4ac59ull);
    REQUIRE(cfg_load("configs/a1-noc.ini", &d, &e) == 0);
    CHECK(cfg_fingerprint(&d) == with);
    REQUIRE(cfg_set(&d, "noc", "topology", "mesh", &e) == 0);
    REQUIRE(cfg_set(&d, "noc", "link_bytes_per_cycle", "8", &e) == 0);
    REQUIRE(cfg_set(&d, "noc", "hop_cycles", "100", &e) == 0);
    CHECK(cfg_fingerprint(&d) == with);
}

/* Keys with a default may be left out (a1.ini names none of them) and read
 * as their default; every default parses and lies in its range. */
TEST(defaults_and_enums)
{
    AtlChip c, d;
    AtlErr e = {{0}};
    REQUIRE(cfg_load(A1, &c, &e) == 0);
    CHECK_EQ_INT(c.dram_model, CFG_DRAM_FLOW);
    CHECK_EQ_INT(c.dram_mapping, CFG_MAP_ROBARACOCH);
    CHECK_EQ_INT(c.mm_fold_overlap, 0);
    CHECK_EQ_INT(c.vec_div_cycles, 1);
    CHECK_EQ_INT(c.dram_row_bytes, 8192);
    CHECK_EQ_INT(c.dram_tck_ps, 625);
    memset(&d, 0, sizeof d);
    cfg_set_defaults(&d);
    int ndef = 0;
    for (int i = 0; i < cfg_num_keys; i++) {
        const AtlCfgKey *k = &cfg_keys[i];
        if (!k->def) continue;
        ndef++;
        char a[CFG_TEXT_MAX + 16], b[CFG_TEXT_MAX + 16];
        cfg_format_value(&c, k, a, sizeof a);
        cfg_format_value(&d, k, b, sizeof b);
        CHECKF(!strcmp(a, b), "[%s] %s: loaded %s, cfg_set_defaults %s", k->section, k->key, a, b);
        /* an FP key with a default counts only away from it (fingerprint_keeps_old_configs) */
        CHECKF(strcmp(k->scope, "FP") || !strcmp(k->key, "cluster_links"), "[%s] %s has a default but is in the fingerprint",
               k->section, k->key);
    }
    CHECK(ndef >= 39);
    CHECK(cfg_validate(&c, "defaults", &e) == 0);
    /* an enum takes its names, and its value prints as the name */
    char *text = read_text(A1);
    REQUIRE(text);
    char *ed = replace(text, "latency_ns = 100", "latency_ns = 100\nmodel = banked\nmapping = ChRaBaRoCo");
    free(text);
    REQUIRE(ed);
    REQUIRE(cfg_parse("ed.ini", ed, &d, &e) == 0);
    free(ed);
    CHECK_EQ_INT(d.dram_model, CFG_DRAM_BANKED);
    CHECK_EQ_INT(d.dram_mapping, CFG_MAP_CHRABAROCO);
    char v[64];
    cfg_format_value(&d, &cfg_keys[cfg_key_index("dram", "mapping")], v, sizeof v);
    CHECK(!strcmp(v, "ChRaBaRoCo"));
    CHECK(cfg_fingerprint(&c) == cfg_fingerprint(&d));
    CHECK_EQ_INT(cfg_enum_count(&cfg_keys[cfg_key_index("dram", "model")]), 2);
    expect_edit_error(A1, "latency_ns = 100", "latency_ns = 100\nmodel = cycle", "model = cycle",
                      "[dram] model: 'cycle' is not one of flow, banked");
    expect_edit_error(A1, "latency_ns = 100", "latency_ns = 100\nmapping = robaracoch", "mapping = robaracoch",
                      "[dram] mapping: 'robaracoch' is not one of RoBaRaCoCh, ChRaBaRoCo");
    c.dram_model = 7;
    CHECK(cfg_validate(&c, "sweep", &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "sweep: [dram] model = 7 is not a value of flow|banked");
}

TEST(validate_a_struct_directly)
{
    AtlChip c;
    AtlErr e = {{0}};
    REQUIRE(cfg_load(A1, &c, &e) == 0);
    CHECK(cfg_validate(&c, "sweep", &e) == 0);
    c.lmem_alignment = 3;
    CHECK(cfg_validate(&c, "sweep", &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "sweep: [lmem] alignment = 3 is not a power of two");
    c.lmem_alignment = 64;
    c.cores_per_cluster = 33;
    CHECK(cfg_validate(&c, "sweep", &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "sweep: [chip] cores_per_cluster = 33 is out of range 1..32");
    c.cores_per_cluster = 4;
    c.dram_gbps = 0;
    CHECK(cfg_validate(&c, "sweep", &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "sweep: [dram] gbps = 0 is out of range");
    c.dram_gbps = 64;
    c.name[0] = 0;
    CHECK(cfg_validate(&c, "sweep", &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "sweep: [chip] name: empty");
}

TEST(area_section_is_optional_and_whole)
{
    AtlChip c, d;
    AtlErr e = {{0}};
    AtlArea a;
    REQUIRE(cfg_load(A1, &c, &e) == 0);
    CHECK(c.has_area);
    CHECK(cfg_area(&c, &a) == 1);
    /* 16 cores x 1024 MACs x 0.000419 mm^2, and so on (configs/a1.ini) */
    CHECK(fabs(a.part[AREA_MAC_I8] - 16 * 1024 * 0.000419) < 1e-9);
    CHECK(fabs(a.part[AREA_MAC_FP] - 16 * 512 * 0.005824) < 1e-9);
    CHECK(fabs(a.part[AREA_LMEM] - 16 * 0.5 * 4.84) < 1e-9);
    CHECK(fabs(a.part[AREA_SRAM] - 4 * 4 * 4.15) < 1e-9);
    CHECK(fabs(a.part[AREA_DRAM_PHY] - 4 * 5.0) < 1e-9);
    CHECK(fabs(a.total - 192.5159) < 1e-3);
    CHECK_STR_CONTAINS(area_part_name(AREA_DRAM_PHY), "dram_phy");
    /* without the section: loads, no area, same fingerprint */
    char *text = read_text(A1);
    REQUIRE(text);
    char *cut = strstr(text, "\n[area]");
    REQUIRE(cut);
    cut[1] = 0;
    if (cfg_parse("x.ini", text, &d, &e)) CHECKF(0, "%s", e.msg);
    else {
        CHECK(!d.has_area);
        CHECK(cfg_area(&d, &a) == 0 && a.total == 0);
        CHECK(cfg_fingerprint(&c) == cfg_fingerprint(&d));
    }
    free(text);
    /* area figures never enter the fingerprint */
    d = c;
    d.a_mac_i8 *= 2;
    snprintf(d.area_node, sizeof d.area_node, "7nm");
    CHECK(cfg_fingerprint(&c) == cfg_fingerprint(&d));
    /* a section that is there is checked whole */
    expect_edit_error(A1, "mac_fp_mm2 = 0.005824", "# gone", NULL, "missing key [area] mac_fp_mm2");
    expect_edit_error(A1, "noc_mm2_per_cluster = 0.163", "noc_mm2_per_cluster = -1", "noc_mm2_per_cluster = -1",
                      "[area] noc_mm2_per_cluster = -1 is out of range 0..10000");
}

TEST(file_errors)
{
    AtlChip c;
    AtlErr e = {{0}};
    CHECK(cfg_load("/nonexistent/chip.ini", &c, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "/nonexistent/chip.ini: cannot open");
}

/* issue 15: a UTF-8 byte order mark and CR-only line ends (old Mac
 * editors) load as the plain file does; text shorter than a mark is read
 * within its bounds; a file over 1 MiB is refused before it is read. */
TEST(bom_and_line_ends)
{
    char *text = read_text(A1);
    REQUIRE(text);
    AtlChip want, got;
    AtlErr e = {{0}};
    REQUIRE(cfg_parse("a1", text, &want, &e) == 0);
    size_t n = strlen(text);
    char *bom = malloc(n + 4), *cr = malloc(n + 1), *crlf = malloc(2 * n + 1);
    REQUIRE(bom && cr && crlf);
    memcpy(bom, "\xef\xbb\xbf", 3);
    memcpy(bom + 3, text, n + 1);
    CHECKF(cfg_parse("bom.ini", bom, &got, &e) == 0, "%s", e.msg);
    CHECK(cfg_fingerprint(&got) == cfg_fingerprint(&want));
    size_t k = 0;
    for (size_t i = 0; i <= n; i++) {
        cr[i] = text[i] == '\n' ? '\r' : text[i];
        if (text[i] == '\n') crlf[k++] = '\r';
        crlf[k++] = text[i];
    }
    CHECKF(cfg_parse("cr.ini", cr, &got, &e) == 0, "%s", e.msg);
    CHECK(cfg_fingerprint(&got) == cfg_fingerprint(&want));
    CHECKF(cfg_parse("crlf.ini", crlf, &got, &e) == 0, "%s", e.msg);
    /* line numbers still count: a bad value on line 3 of a CR-only file */
    char *bad = replace(cr, "[chip]", "[chip]\rclusters = 0");
    REQUIRE(bad);
    CHECK(cfg_parse("cr.ini", bad, &got, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "cr.ini:");
    CHECK_STR_CONTAINS(e.msg, "clusters");
    free(bad);
    for (int len = 0; len < 3; len++) {   /* "", "\xef", "\xef\xbb": no read past the end */
        char part[4] = {0};
        memcpy(part, "\xef\xbb", (size_t)len);
        CHECK(cfg_parse("short.ini", part, &got, &e) == -1);
    }
    free(bom);
    free(cr);
    free(crlf);
    free(text);
    char path[64];
    snprintf(path, sizeof path, "/tmp/atoll_big_%d.ini", (int)getpid());
    FILE *fp = fopen(path, "wb");
    REQUIRE(fp);
    for (int i = 0; i < (1 << 20) / 16 + 1; i++) fputs("# padding line.\n", fp);
    fclose(fp);
    CHECK(cfg_load(path, &got, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "more than the limit of 1048576 bytes for a chip config");
    remove(path);
}

int main(void)
{
    RUN(a1_loads_with_documented_figures);
    RUN(tiny_loads);
    RUN(fingerprint_covers_fp_keys_only);
    RUN(schema_limits_match_the_isa);
    RUN(syntax_errors);
    RUN(missing_and_duplicate_keys);
    RUN(bad_values);
    RUN(suffixes_and_comments);
    RUN(each_validate_rule);
    RUN(validate_a_struct_directly);
    RUN(area_section_is_optional_and_whole);
    RUN(defaults_and_enums);
    RUN(fingerprint_keeps_old_configs);
    RUN(file_errors);
    RUN(bom_and_line_ends);
    return test_summary("test_config");
}
