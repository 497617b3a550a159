/* test_abm_robust.c - the .abm reader against damaged and hostile input:
 * truncation at every length, a flipped bit in every byte, overflowing
 * counts and sizes, overlapping sections, wrong version and chip, and one
 * test per validation rule, each asserting on the message.
 * `test_abm_robust --write-bomb FILE` writes a compression bomb for
 * test/cli/harden_io.sh: the sample model plus a 256 MiB weight blob of
 * zeros, which zlib stores in about 256 KB (every CRC right). */
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/isa/abm_sample.h"
#include "util/file.h"

static uint8_t *small_file(int level, size_t *n)
{
    AtlErr e;
    AbmWriter *w = sample_model(SAMPLE_CHIP, 0, level, &e);
    if (!w) return NULL;
    uint8_t *buf = NULL;
    if (abm_serialize(w, &buf, n, &e)) buf = NULL;
    abm_writer_free(w);
    return buf;
}

static void wr32(uint8_t *p, uint32_t x) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(x >> (8 * i)); }
static void wr64(uint8_t *p, uint64_t x) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(x >> (8 * i)); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/* Open + decode + touch every byte the view hands out. 0 if valid. */
static int parse_all(const uint8_t *buf, size_t n, uint64_t chip, unsigned flags, AtlErr *e)
{
    AbmView v;
    if (abm_open(&v, buf, n, chip, flags, e)) return -1;
    if (v.scratch_needed > (256u << 20)) return atl_fail(e, "test: scratch %llu too large", (unsigned long long)v.scratch_needed);
    uint8_t *sc = malloc(v.scratch_needed);
    if (!sc) return atl_fail(e, "test: out of memory");
    int rc = abm_decode(&v, sc, v.scratch_needed, e);
    if (rc == 0) {
        volatile unsigned sum = 0;
        for (uint32_t i = 0; i < v.n_nets; i++) sum += (unsigned)strlen(abm_net(&v, i).name);
        for (uint32_t s = 0; s < v.n_variants; s++) {
            AbmVariant st = abm_variant(&v, s);
            for (uint32_t t = 0; t < st.tensor_count; t++) {
                AbmTensor x = abm_tensor(&v, st.tensor_first + t);
                sum += (unsigned)strlen(x.name);
                for (uint32_t q = 0; q < x.quant_count; q++) sum += (unsigned)abm_quant(&v, x.quant_first + q).zero_point;
            }
            for (uint32_t c = 0; c < st.core_count; c++)
                for (uint32_t g = 0; g < ABM_ENGINES; g++) {
                    AbmStream str = abm_stream(&v, s, c, g);
                    for (uint64_t k = 0; k < str.size; k++) sum += str.data[k];
                }
        }
        AbmMeta m = abm_meta(&v);
        sum += (unsigned)strlen(m.producer) + (unsigned)strlen(m.options) + m.source_hash[31];
        for (uint32_t i = 0; i < v.n_blobs && rc == 0; i++) {
            AbmBlob b = abm_blob(&v, i);
            uint8_t *dst = malloc(b.raw_size);
            if (!dst) { rc = atl_fail(e, "test: out of memory"); break; }
            rc = abm_blob_read(&v, i, dst, b.raw_size, e);
            free(dst);
        }
        (void)sum;
    }
    free(sc);
    return rc;
}

static uint8_t *copy(const uint8_t *b, size_t n)
{
    uint8_t *c = malloc(n);
    if (c) memcpy(c, b, n);
    return c;
}

TEST(valid_files_parse)
{
    AtlErr e;
    for (int level = 0; level <= 9; level += 9) {
        size_t n;
        uint8_t *b = small_file(level, &n);
        REQUIRE(b);
        CHECKF(parse_all(b, n, SAMPLE_CHIP, 0, &e) == 0, "level %d: %s", level, e.msg);
        free(b);
    }
}

TEST(truncated_at_every_length)
{
    AtlErr e;
    size_t n;
    uint8_t *b = small_file(6, &n);
    REQUIRE(b);
    for (size_t len = 0; len < n; len++) {
        uint8_t *c = copy(b, len ? len : 1);   /* exact-size allocation: ASan sees any overread */
        REQUIRE(c);
        int rc = parse_all(c, len, 0, 0, &e);
        CHECKF(rc == -1, "length %zu accepted", len);
        if (rc == -1) CHECKF(strstr(e.msg, "truncated") != NULL, "length %zu: %s", len, e.msg);
        /* the CRC-tolerant mode must be just as safe */
        CHECK(parse_all(c, len, 0, ABM_OPEN_IGNORE_CRC, &e) == -1);
        free(c);
    }
    free(b);
}

/* Which section (index) holds file byte `at`, or -1. */
static int section_at(const AbmView *v, size_t at)
{
    for (uint32_t i = 0; i < v->section_count; i++)
        if (at >= v->sec[i].offset && at - v->sec[i].offset < v->sec[i].stored_size) return (int)i;
    return -1;
}

static void flip_every_byte(int level)
{
    AtlErr e;
    size_t n;
    uint8_t *b = small_file(level, &n);
    REQUIRE(b);
    AbmView ref;
    REQUIRE(abm_open(&ref, b, n, 0, 0, &e) == 0);
    uint64_t tab = get64(b + 32), tab_end = tab + (uint64_t)ref.section_count * ABM_SECTION_ENTRY_BYTES;
    int tolerant_valid = 0, tolerant_rejected = 0;
    for (size_t at = 0; at < n; at++) {
        for (int bit = 0; bit < 8; bit++) {
            uint8_t *c = copy(b, n);
            REQUIRE(c);
            c[at] ^= (uint8_t)(1u << bit);
            char want[200];
            int sec = section_at(&ref, at);
            if (at < 8) snprintf(want, sizeof want, "bad magic");
            else if (at < 10) snprintf(want, sizeof want, "unsupported format version");
            else if (at < ABM_HEADER_BYTES) snprintf(want, sizeof want, "header CRC mismatch");
            else if (at >= tab && at < tab_end) snprintf(want, sizeof want, "section table CRC mismatch");
            else if (sec >= 0) snprintf(want, sizeof want, "CRC mismatch in section %d (%s)", sec, abm_section_name(ref.sec[sec].type));
            else snprintf(want, sizeof want, "nonzero padding byte at offset %zu", at);
            int rc = parse_all(c, n, 0, 0, &e);
            CHECKF(rc == -1, "flip of bit %d at %zu accepted", bit, at);
            if (rc == -1) CHECKF(strstr(e.msg, want) != NULL, "flip at %zu: \"%s\" lacks \"%s\"", at, e.msg, want);
            /* with CRCs ignored, structure checks alone must keep us safe */
            if (parse_all(c, n, 0, ABM_OPEN_IGNORE_CRC, &e) == 0) tolerant_valid++;
            else tolerant_rejected++;
            free(c);
        }
    }
    /* both outcomes occur: names, scales and payload bytes can take other values */
    CHECK(tolerant_valid > 0);
    CHECK(tolerant_rejected > 0);
    printf("  level %d: %zu bytes, CRC-tolerant mode: %d flips still valid, %d rejected\n", level, n, tolerant_valid, tolerant_rejected);
    free(b);
}

TEST(flipped_bit_in_every_byte_uncompressed) { flip_every_byte(0); }
TEST(flipped_bit_in_every_byte_compressed) { flip_every_byte(6); }

/* Applies edit to a fresh uncompressed (or level-6) sample, refixes CRCs,
 * and checks that parsing fails with a message containing want. */
typedef void (*Edit)(uint8_t *b, const AbmView *v);

static void expect_error2(int level, Edit edit, uint64_t chip, const char *want, const char *want2)
{
    AtlErr e;
    size_t n;
    uint8_t *b = small_file(level, &n);
    REQUIRE(b);
    AbmView v;
    REQUIRE(abm_open(&v, b, n, 0, 0, &e) == 0);
    uint8_t *sc = malloc(v.scratch_needed);
    REQUIRE(sc);
    REQUIRE(abm_decode(&v, sc, v.scratch_needed, &e) == 0);
    edit(b, &v);
    free(sc);
    sample_refix(b, n);
    int rc = parse_all(b, n, chip, 0, &e);
    CHECKF(rc == -1, "edit for \"%s\" accepted", want);
    if (rc == -1) CHECK_STR_CONTAINS(e.msg, want);
    if (rc == -1 && want2) CHECK_STR_CONTAINS(e.msg, want2);
    free(b);
}

static void expect_error(int level, Edit edit, uint64_t chip, const char *want)
{
    expect_error2(level, edit, chip, want, NULL);
}

static uint8_t *sec_ptr(uint8_t *b, const AbmView *v, uint32_t type) { return b + v->sec[v->by_type[type]].offset; }
static uint8_t *entry(uint8_t *b, uint32_t type) { return b + ABM_HEADER_BYTES + (type - 1) * ABM_SECTION_ENTRY_BYTES; }

static void e_version(uint8_t *b, const AbmView *v) { (void)v; b[8] = 2; }
static void e_magic(uint8_t *b, const AbmView *v) { (void)v; b[3] = 'x'; }
static void e_flags(uint8_t *b, const AbmView *v) { (void)v; wr32(b + 24, 0x80); }
static void e_nothing(uint8_t *b, const AbmView *v) { (void)b; (void)v; }
static void e_section_count(uint8_t *b, const AbmView *v) { (void)v; wr32(b + 28, 0xFFFFFFFFu); }
static void e_table_past_end(uint8_t *b, const AbmView *v) { (void)v; wr64(b + 32, UINT64_MAX - 7); }
static void e_section_size(uint8_t *b, const AbmView *v)
{
    (void)v;
    wr64(entry(b, ABM_SEC_TENSORS) + 16, UINT64_MAX - 10);
    wr64(entry(b, ABM_SEC_TENSORS) + 24, UINT64_MAX - 10);
}
static void e_misaligned(uint8_t *b, const AbmView *v) { (void)v; wr64(entry(b, ABM_SEC_NETS) + 8, get64(entry(b, ABM_SEC_NETS) + 8) + 8); }
static void e_overlap(uint8_t *b, const AbmView *v)
{
    (void)v;
    wr64(entry(b, ABM_SEC_VARIANTS) + 8, get64(entry(b, ABM_SEC_NETS) + 8));
}
static void e_duplicate(uint8_t *b, const AbmView *v) { (void)v; wr32(entry(b, ABM_SEC_VARIANTS), ABM_SEC_NETS); }
static void e_missing(uint8_t *b, const AbmView *v) { (void)v; wr32(entry(b, ABM_SEC_VARIANTS), 99); }
static void e_compression(uint8_t *b, const AbmView *v) { (void)v; wr32(entry(b, ABM_SEC_NETS) + 4, 7); }
static void e_zlib_ratio(uint8_t *b, const AbmView *v)
{
    uint8_t *ent = entry(b, ABM_SEC_CMDS);
    (void)v;
    wr64(ent + 24, get64(ent + 16) * 2000);
}
static void e_zlib_raw_small(uint8_t *b, const AbmView *v) { (void)v; wr64(entry(b, ABM_SEC_CMDS) + 24, 64); }
static void e_zlib_header(uint8_t *b, const AbmView *v) { sec_ptr(b, v, ABM_SEC_CMDS)[0] ^= 0x01; }
static void e_zlib_trailing(uint8_t *b, const AbmView *v)
{
    uint8_t *ent = entry(b, ABM_SEC_CMDS);
    (void)v;
    wr64(ent + 16, get64(ent + 16) + 1);   /* takes in one zero padding byte */
}
static void e_zlib_cut(uint8_t *b, const AbmView *v)
{
    uint8_t *ent = entry(b, ABM_SEC_CMDS);
    uint64_t sz = get64(ent + 16);
    memset(sec_ptr(b, v, ABM_SEC_CMDS) + sz - 10, 0, 10);
    wr64(ent + 16, sz - 10);
}
static void e_padding(uint8_t *b, const AbmView *v) { b[v->sec[v->by_type[ABM_SEC_NETS]].offset + 32 + 1] = 1; }
static void e_record_multiple(uint8_t *b, const AbmView *v)
{
    uint8_t *ent = entry(b, ABM_SEC_TENSORS);
    uint64_t sz = get64(ent + 16);
    memset(sec_ptr(b, v, ABM_SEC_TENSORS) + sz - 4, 0, 4);
    wr64(ent + 16, sz - 4);
    wr64(ent + 24, sz - 4);
}
static void e_dims_overflow(uint8_t *b, const AbmView *v)
{
    uint8_t *t = sec_ptr(b, v, ABM_SEC_TENSORS);
    t[8] = 6;
    for (int d = 0; d < 6; d++) wr32(t + 16 + 4 * d, 0xFFFFFFFFu);
}
static void e_tensor_count(uint8_t *b, const AbmView *v) { wr32(sec_ptr(b, v, ABM_SEC_VARIANTS) + 12, 0xFFFFFFFFu); }
static void e_string_index(uint8_t *b, const AbmView *v) { wr32(sec_ptr(b, v, ABM_SEC_TENSORS), 0x7FFFFFFF); }
static void e_io_outside(uint8_t *b, const AbmView *v) { wr64(sec_ptr(b, v, ABM_SEC_TENSORS) + 40, UINT64_MAX - 1); }
static void e_weight_outside(uint8_t *b, const AbmView *v)
{
    uint8_t *t = sec_ptr(b, v, ABM_SEC_TENSORS) + ABM_TENSOR_BYTES;   /* conv1.weight */
    wr64(t + 40, get64(t + 40) + 1);
}
static void e_blob_index(uint8_t *b, const AbmView *v) { wr32(sec_ptr(b, v, ABM_SEC_TENSORS) + ABM_TENSOR_BYTES + 12, 77); }
static void e_role_region(uint8_t *b, const AbmView *v) { sec_ptr(b, v, ABM_SEC_TENSORS)[6] = ABM_REGION_WEIGHTS; }
static void e_dtype(uint8_t *b, const AbmView *v) { sec_ptr(b, v, ABM_SEC_TENSORS)[4] = 200; }
static void e_scale_nan(uint8_t *b, const AbmView *v) { wr32(sec_ptr(b, v, ABM_SEC_QUANT), 0x7FC00000u); }
static void e_zero_point(uint8_t *b, const AbmView *v) { wr32(sec_ptr(b, v, ABM_SEC_QUANT) + 4, 300); }
static void e_stream_size(uint8_t *b, const AbmView *v)
{
    uint8_t *s = sec_ptr(b, v, ABM_SEC_STREAMS);
    wr64(s + 8, get64(s + 8) + 1);
}
static void e_stream_past(uint8_t *b, const AbmView *v) { wr64(sec_ptr(b, v, ABM_SEC_STREAMS), 1ull << 40); }
static void e_stream_count(uint8_t *b, const AbmView *v) { wr32(sec_ptr(b, v, ABM_SEC_VARIANTS) + 20, 5); }
static void e_net_variants(uint8_t *b, const AbmView *v) { wr32(sec_ptr(b, v, ABM_SEC_NETS) + 8, 0xFFFFFFFFu); }
static void e_blob_past(uint8_t *b, const AbmView *v) { wr64(sec_ptr(b, v, ABM_SEC_WEIGHT_DIR) + 16, 1ull << 50); }
static void e_blob_data(uint8_t *b, const AbmView *v) { sec_ptr(b, v, ABM_SEC_WEIGHT_DATA)[5] ^= 0x40; }
static void e_strings_nul(uint8_t *b, const AbmView *v)
{
    const AbmSection *s = &v->sec[v->by_type[ABM_SEC_STRINGS]];
    b[s->offset + s->stored_size - 1] = 'x';
}

TEST(header_problems_have_their_own_messages)
{
    expect_error(0, e_magic, 0, "bad magic at offset 0");
    expect_error(0, e_version, 0, "unsupported format version 2.0");
    expect_error(0, e_nothing, 0x1234, "wrong chip: model compiled for chip fingerprint 0xa1c0ffee12345678");
    expect_error(0, e_flags, 0, "unknown bits 0x80");
    expect_error(0, e_section_count, 0, "count overflow: header field section_count");
}

TEST(section_problems_have_their_own_messages)
{
    expect_error(0, e_table_past_end, 0, "truncated: section table at offset");
    expect_error(0, e_section_size, 0, "section 3 (tensors) past end of file");
    expect_error(0, e_misaligned, 0, "is not 64-byte aligned");
    expect_error(0, e_overlap, 0, "overlapping sections: 1 (nets");
    expect_error(0, e_duplicate, 0, "duplicate section: sections 1 and 2 are both 'nets'");
    expect_error(0, e_missing, 0, "missing required section 'variants'");
    expect_error(0, e_compression, 0, "unknown compression 7");
    expect_error(6, e_zlib_ratio, 0, "is impossible for");
    expect_error(6, e_zlib_raw_small, 0, "inflates to more bytes than raw_size");
    expect_error2(6, e_zlib_header, 0, "section 6 (cmds) at offset ", ": corrupt zlib stream");
    expect_error(6, e_zlib_trailing, 0, "trailing bytes after the end of the zlib stream");
    expect_error(6, e_zlib_cut, 0, "zlib stream is truncated");
    expect_error(0, e_padding, 0, "nonzero padding byte");
    expect_error(0, e_record_multiple, 0, "is not a multiple of its 64-byte record");
}

TEST(record_problems_have_their_own_messages)
{
    expect_error(0, e_dims_overflow, 0, "count overflow: element count of 'input'");
    expect_error(0, e_tensor_count, 0, "field 'tensor_count'");
    expect_error(0, e_string_index, 0, "string index out of range: 2147483647");
    expect_error(0, e_io_outside, 0, "tensor 'input' points outside its region");
    expect_error(0, e_weight_outside, 0, "tensor 'conv1.weight' points outside its region");
    expect_error(0, e_blob_index, 0, "names blob 77 of 3");
    expect_error(0, e_role_region, 0, "has role input but region weights");
    expect_error(0, e_dtype, 0, "unknown dtype 200");
    expect_error(0, e_scale_nan, 0, "is not a finite positive number");
    expect_error(0, e_zero_point, 0, "zero point 300 of tensor 'input' is outside the range of int8");
    expect_error(0, e_stream_size, 0, "not a multiple of the 64-byte instruction");
    expect_error(0, e_stream_past, 0, "runs past the end of section 'cmds'");
    expect_error(0, e_stream_count, 0, "expected cores x engines = 2 x 3");
    expect_error(0, e_net_variants, 0, "field 'variant_count'");
    expect_error(0, e_blob_past, 0, "runs past the end of the weight_data section");
    expect_error(0, e_blob_data, 0, "CRC mismatch in weight blob 0");
    expect_error(0, e_strings_nul, 0, "must be non-empty and end with a NUL byte");
}

TEST(messages_name_section_record_field_and_offset)
{
    AtlErr e;
    size_t n;
    uint8_t *b = small_file(0, &n);
    REQUIRE(b);
    AbmView v;
    REQUIRE(abm_open(&v, b, n, 0, 0, &e) == 0);
    uint64_t at = v.sec[v.by_type[ABM_SEC_TENSORS]].offset + 2 * ABM_TENSOR_BYTES + 4;
    b[at] = 99;                         /* dtype of tensor 2 */
    sample_refix(b, n);
    REQUIRE(parse_all(b, n, 0, 0, &e) == -1);
    char want[120];
    snprintf(want, sizeof want, "section 'tensors' record 2 field 'dtype' (file offset 0x%llx): unknown dtype 99",
             (unsigned long long)at);
    CHECK_STR_CONTAINS(e.msg, want);
    free(b);
}

TEST(crc_tolerant_mode_reports_bad_sections)
{
    AtlErr e;
    size_t n;
    uint8_t *b = small_file(0, &n);
    REQUIRE(b);
    AbmView v;
    REQUIRE(abm_open(&v, b, n, 0, 0, &e) == 0);
    b[v.sec[v.by_type[ABM_SEC_CMDS]].offset + 1] ^= 1;    /* command bytes: any value is structurally fine */
    CHECK(abm_open(&v, b, n, 0, 0, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "CRC mismatch in section 6 (cmds)");
    REQUIRE(abm_open(&v, b, n, 0, ABM_OPEN_IGNORE_CRC, &e) == 0);
    CHECK_EQ_INT(v.bad_crcs, 1);
    CHECK(!v.sec[v.by_type[ABM_SEC_CMDS]].crc_ok);
    CHECK(v.sec[v.by_type[ABM_SEC_TENSORS]].crc_ok);
    CHECK(v.header_crc_ok && v.table_crc_ok);
    free(b);
}

/* A newer minor version may add sections; this reader must skip them. */
TEST(unknown_sections_are_skipped)
{
    AtlErr e;
    size_t n;
    uint8_t *b = small_file(0, &n);
    REQUIRE(b);
    REQUIRE(get32(b + 28) == 10 && get64(b + 32) == 64);   /* room for one more entry before offset 512 */
    size_t n2 = (n + 63) / 64 * 64 + 64;
    uint8_t *c = calloc(1, n2);
    REQUIRE(c);
    memcpy(c, b, n);
    for (int k = 0; k < 64; k++) c[n2 - 64 + k] = (uint8_t)(k * 5 + 1);
    uint8_t *ent = c + 64 + 10 * ABM_SECTION_ENTRY_BYTES;
    wr32(ent, 77);
    wr32(ent + 4, ABM_COMP_ZLIB);          /* not even valid zlib: it must never be inflated */
    wr64(ent + 8, n2 - 64);
    wr64(ent + 16, 64);
    wr64(ent + 24, 1000);
    wr32(c + 28, 11);
    wr64(c + 40, n2);
    sample_refix(c, n2);
    CHECKF(parse_all(c, n2, SAMPLE_CHIP, 0, &e) == 0, "%s", e.msg);
    AbmView v;
    REQUIRE(abm_open(&v, c, n2, 0, 0, &e) == 0);
    CHECK_EQ_INT(v.section_count, 11);
    CHECK_EQ_INT(v.sec[10].type, 77);
    /* and a scratch buffer at an odd address works (the workspace gets aligned) */
    uint8_t *sc = malloc(v.scratch_needed + 1);
    REQUIRE(sc);
    CHECKF(abm_decode(&v, sc + 1, v.scratch_needed, &e) == 0, "%s", e.msg);
    CHECK(v.sec[10].data == NULL);
    free(sc);
    free(c);
    free(b);
}

TEST(null_and_empty_buffers)
{
    AtlErr e;
    AbmView v;
    CHECK(abm_open(&v, NULL, 0, 0, 0, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "truncated");
    CHECK(abm_open(&v, NULL, 10, 0, 0, &e) == -1);
    CHECK(abm_open(&v, "ATOLLABM", 8, 0, 0, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "truncated: 8 bytes, the header alone needs 64");
    CHECK(abm_decode(&v, NULL, 0, &e) == -1);
    CHECK(abm_open(&v, "ATOL", 4, 0, 0, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "truncated: 4 bytes");
    CHECK(abm_open(&v, "PK\3\4", 4, 0, 0, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "bad magic");
    /* a view whose open failed cannot be decoded */
    size_t n;
    uint8_t *b = small_file(0, &n);
    REQUIRE(b);
    b[70] ^= 1;
    CHECK(abm_open(&v, b, n, 0, 0, &e) == -1);
    uint8_t *sc = malloc(1 << 20);
    REQUIRE(sc);
    CHECK(abm_decode(&v, sc, 1 << 20, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "view was not opened");
    free(sc);
    free(b);
}

/* The sample model with a 256 MiB blob of zeros (deflated to ~256 KB). */
static int write_bomb(const char *path)
{
    AtlErr e = {{0}};
    size_t big = (size_t)256 << 20, n = 0;
    uint8_t *zeros = calloc(1, big), *buf = NULL;
    AbmWriter *w = sample_model(SAMPLE_CHIP, 0, 6, &e);
    int rc = !zeros || !w || abm_add_weight(w, zeros, big, NULL, &e) || abm_serialize(w, &buf, &n, &e) ||
             atl_write_file_atomic(path, buf, n, &e);
    if (rc) fprintf(stderr, "test_abm_robust: %s\n", e.msg[0] ? e.msg : "out of memory");
    free(buf);
    free(zeros);
    abm_writer_free(w);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write-bomb")) return write_bomb(argv[2]);
    RUN(valid_files_parse);
    RUN(truncated_at_every_length);
    RUN(flipped_bit_in_every_byte_uncompressed);
    RUN(flipped_bit_in_every_byte_compressed);
    RUN(header_problems_have_their_own_messages);
    RUN(section_problems_have_their_own_messages);
    RUN(record_problems_have_their_own_messages);
    RUN(messages_name_section_record_field_and_offset);
    RUN(crc_tolerant_mode_reports_bad_sections);
    RUN(unknown_sections_are_skipped);
    RUN(null_and_empty_buffers);
    return test_summary("test_abm_robust");
}
