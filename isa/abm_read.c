/* abm_read.c - zero-copy reader and validator of the .abm container.
 *
 * Freestanding on purpose (the firmware links it): no malloc, no stdio; the
 * only library calls are zlib's crc32/inflate (whose memory comes from the
 * caller's scratch through a bump allocator) and memset/memcmp. Every
 * offset, count and size is checked with overflow-safe arithmetic before it
 * is used, and every problem gets its own message naming the section, the
 * record, the field and its offset. The layout is in docs/abm-format.md.
 */
#include "isa/abm.h"
#include <stdarg.h>
#include <string.h>
#include <zlib.h>

/* ---- little-endian field access ---- */

static uint32_t rd8(const uint8_t *p) { return p[0]; }
static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* off + len fits inside limit, without overflow. */
static int in_range(uint64_t off, uint64_t len, uint64_t limit)
{
    return off <= limit && len <= limit - off;
}

static uint64_t align_up(uint64_t x) { return (x + (ABM_ALIGN - 1)) & ~(uint64_t)(ABM_ALIGN - 1); }

/* ---- names ---- */

static const char *const section_names[ABM_SEC_LIMIT] = {
    "?", "strings", "nets", "variants", "tensors", "quant", "streams", "cmds", "weight_dir", "weight_data", "meta", "layers",
    "stages",
};
static const char *const dtype_names[ABM_DTYPE_COUNT] = { "int8", "uint8", "int16", "int32", "fp16", "bf16", "fp32" };
static const uint32_t dtype_sizes[ABM_DTYPE_COUNT] = { 1, 1, 2, 4, 2, 2, 4 };
static const char *const role_names[ABM_ROLE_COUNT] = { "input", "output", "weight", "activation" };
static const char *const region_names[ABM_REGION_COUNT] = { "weights", "activations", "io" };
static const char *const layout_names[ABM_LAYOUT_COUNT] = { "row_major", "nchw", "nhwc", "opaque" };
static const char *const engine_names[ABM_ENGINES] = { "dma", "matrix", "vector" };
/* The DRAM region each tensor role must live in. */
static const uint32_t role_region[ABM_ROLE_COUNT] = { ABM_REGION_IO, ABM_REGION_IO, ABM_REGION_WEIGHTS, ABM_REGION_ACTIVATIONS };
/* Zero-point range of each dtype (float types: 0 only). */
static const int64_t zp_min[ABM_DTYPE_COUNT] = { -128, 0, -32768, INT32_MIN, 0, 0, 0 };
static const int64_t zp_max[ABM_DTYPE_COUNT] = { 127, 255, 32767, INT32_MAX, 0, 0, 0 };

const char *abm_section_name(uint32_t t) { return t > 0 && t < ABM_SEC_LIMIT ? section_names[t] : "unknown"; }
const char *abm_dtype_name(uint32_t d) { return d < ABM_DTYPE_COUNT ? dtype_names[d] : "?"; }
const char *abm_role_name(uint32_t r) { return r < ABM_ROLE_COUNT ? role_names[r] : "?"; }
const char *abm_region_name(uint32_t r) { return r < ABM_REGION_COUNT ? region_names[r] : "?"; }
const char *abm_layout_name(uint32_t l) { return l < ABM_LAYOUT_COUNT ? layout_names[l] : "?"; }
const char *abm_engine_name(uint32_t g) { return g < ABM_ENGINES ? engine_names[g] : "?"; }
uint32_t abm_role_region(uint32_t r) { return r < ABM_ROLE_COUNT ? role_region[r] : ABM_REGION_COUNT; }
uint32_t abm_dtype_bytes(uint32_t d) { return d < ABM_DTYPE_COUNT ? dtype_sizes[d] : 0; }

/* ---- message formatting without stdio: %s %c %u %d %x %llu %llx %lld %% ---- */

static void put_c(char *d, size_t cap, size_t *n, char c)
{
    if (*n + 1 < cap) d[*n] = c;
    (*n)++;
}

static void put_u(char *d, size_t cap, size_t *n, uint64_t x, unsigned base)
{
    char tmp[24];
    int k = 0;
    do { tmp[k++] = "0123456789abcdef"[x % base]; x /= base; } while (x);
    while (k) put_c(d, cap, n, tmp[--k]);
}

static size_t vfmt(char *d, size_t cap, size_t n, const char *f, va_list ap)
{
    for (; *f; f++) {
        if (*f != '%') { put_c(d, cap, &n, *f); continue; }
        f++;
        int ll = 0;
        while (*f == 'l') { ll++; f++; }
        switch (*f) {
        case 's': { const char *s = va_arg(ap, const char *); if (!s) s = "(null)"; while (*s) put_c(d, cap, &n, *s++); break; }
        case 'c': put_c(d, cap, &n, (char)va_arg(ap, int)); break;
        case 'u': put_u(d, cap, &n, ll ? (uint64_t)va_arg(ap, unsigned long long) : va_arg(ap, unsigned), 10); break;
        case 'x': put_u(d, cap, &n, ll ? (uint64_t)va_arg(ap, unsigned long long) : va_arg(ap, unsigned), 16); break;
        case 'd': {
            long long x = ll ? va_arg(ap, long long) : va_arg(ap, int);
            if (x < 0) { put_c(d, cap, &n, '-'); put_u(d, cap, &n, (uint64_t)0 - (uint64_t)x, 10); }
            else put_u(d, cap, &n, (uint64_t)x, 10);
            break;
        }
        case '%': put_c(d, cap, &n, '%'); break;
        default: put_c(d, cap, &n, '?'); if (!*f) f--; break;
        }
    }
    if (cap) d[n < cap ? n : cap - 1] = '\0';
    return n;
}

static int fail(AtlErr *e, const char *fmt, ...) ATL_PRINTF(2, 3);
static int fail(AtlErr *e, const char *fmt, ...)
{
    if (!e) return -1;
    va_list ap;
    va_start(ap, fmt);
    vfmt(e->msg, sizeof e->msg, 0, fmt, ap);
    va_end(ap);
    return -1;
}

static size_t fmt_at(char *d, size_t cap, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    n = vfmt(d, cap, n, fmt, ap);
    va_end(ap);
    return n;
}

/* A problem in record `index` of the section of `type`, in field `field` at
 * byte `field_off` of the record. */
static int rec_fail(AtlErr *e, const AbmView *v, uint32_t type, uint64_t index, uint64_t recbytes,
                    uint64_t field_off, const char *field, const char *fmt, ...) ATL_PRINTF(8, 9);
static int rec_fail(AtlErr *e, const AbmView *v, uint32_t type, uint64_t index, uint64_t recbytes,
                    uint64_t field_off, const char *field, const char *fmt, ...)
{
    if (!e) return -1;
    const AbmSection *s = &v->sec[v->by_type[type]];
    uint64_t at = index * recbytes + field_off;
    size_t n;
    if (s->compression == ABM_COMP_NONE)
        n = fmt_at(e->msg, sizeof e->msg, 0, "section '%s' record %llu field '%s' (file offset 0x%llx): ",
                   abm_section_name(type), (unsigned long long)index, field, (unsigned long long)(s->offset + at));
    else
        n = fmt_at(e->msg, sizeof e->msg, 0, "section '%s' record %llu field '%s' (byte %llu of the inflated section): ",
                   abm_section_name(type), (unsigned long long)index, field, (unsigned long long)at);
    va_list ap;
    va_start(ap, fmt);
    vfmt(e->msg, sizeof e->msg, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- hashing and checksums ---- */

uint64_t abm_hash64(const void *data, uint64_t len)
{
    const uint8_t *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < len; i++) { h ^= p[i]; h *= 0x100000001b3ull; }
    return h;
}

uint32_t abm_crc32(const void *data, uint64_t len)
{
    const uint8_t *p = data;
    uLong c = crc32(0L, Z_NULL, 0);
    while (len) {
        uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
        c = crc32(c, p, n);
        p += n;
        len -= n;
    }
    return (uint32_t)c;
}

/* ---- inflate with memory from the caller's workspace ---- */

typedef struct { uint8_t *base; size_t used, cap; } Arena;

static voidpf arena_alloc(voidpf opaque, uInt items, uInt size)
{
    Arena *a = opaque;
    uint64_t n = (uint64_t)items * size;
    n = (n + 15) & ~(uint64_t)15;
    if (n > a->cap - a->used) return Z_NULL;
    void *p = a->base + a->used;
    a->used += (size_t)n;
    return p;
}

static void arena_free(voidpf opaque, voidpf p) { (void)opaque; (void)p; }

/* Inflates exactly dstlen bytes from exactly srclen bytes; *why on failure. */
static int inflate_exact(uint8_t *work, const uint8_t *src, uint64_t srclen, uint8_t *dst, uint64_t dstlen,
                         const char **why)
{
    Arena a = { work, 0, ABM_INFLATE_WORK_BYTES };
    z_stream z;
    memset(&z, 0, sizeof z);
    z.zalloc = arena_alloc;
    z.zfree = arena_free;
    z.opaque = &a;
    if (inflateInit(&z) != Z_OK) { *why = "zlib could not start (workspace too small)"; return -1; }
    uint64_t in_done = 0, out_done = 0;
    int rc = -1;
    for (;;) {
        uInt ai = srclen - in_done > (1u << 30) ? (1u << 30) : (uInt)(srclen - in_done);
        uInt ao = dstlen - out_done > (1u << 30) ? (1u << 30) : (uInt)(dstlen - out_done);
        z.next_in = (Bytef *)(uintptr_t)(src + in_done);
        z.avail_in = ai;
        z.next_out = dst + out_done;
        z.avail_out = ao;
        int r = inflate(&z, Z_NO_FLUSH);
        in_done += ai - z.avail_in;
        out_done += ao - z.avail_out;
        if (r == Z_STREAM_END) {
            if (in_done != srclen) *why = "trailing bytes after the end of the zlib stream";
            else if (out_done != dstlen) *why = "zlib stream inflates to fewer bytes than raw_size";
            else rc = 0;
            break;
        }
        if (r == Z_OK) continue;
        if (r == Z_BUF_ERROR && out_done == dstlen) *why = "zlib stream inflates to more bytes than raw_size";
        else if (r == Z_BUF_ERROR) *why = "zlib stream is truncated";
        else if (r == Z_MEM_ERROR) *why = "zlib workspace too small";
        else *why = "corrupt zlib stream";
        break;
    }
    inflateEnd(&z);
    return rc;
}

/* ---- header and section table ---- */

static const char *sec_label(uint32_t type) { return abm_section_name(type); }

int abm_open(AbmView *v, const void *buf, size_t len, uint64_t expect_chip, unsigned flags, AtlErr *e)
{
    memset(v, 0, sizeof *v);
    for (int t = 0; t < ABM_SEC_LIMIT; t++) v->by_type[t] = -1;
    const uint8_t *b = buf;
    int ignore_crc = (flags & ABM_OPEN_IGNORE_CRC) != 0, skip_weight_crc = (flags & ABM_OPEN_SKIP_WEIGHT_CRC) != 0;
    v->flags_open = flags;
    if (!b && len) return fail(e, "no buffer");
    if (len == 0) return fail(e, "truncated: 0 bytes, too short for the 8-byte magic");
    if (memcmp(b, ABM_MAGIC, len < 8 ? len : 8) != 0)
        return fail(e, "bad magic at offset 0: not an Atoll model file (expected \"ATOLLABM\")");
    if (len < 8) return fail(e, "truncated: %llu bytes, too short for the 8-byte magic", (unsigned long long)len);
    if (memcmp(b, ABM_MAGIC, 8) != 0)
        return fail(e, "bad magic at offset 0: not an Atoll model file (expected \"ATOLLABM\")");
    if (len < ABM_HEADER_BYTES)
        return fail(e, "truncated: %llu bytes, the header alone needs %u", (unsigned long long)len, ABM_HEADER_BYTES);
    v->version_major = (uint16_t)rd16(b + 8);
    v->version_minor = (uint16_t)rd16(b + 10);
    if (v->version_major != ABM_VERSION_MAJOR)
        return fail(e, "unsupported format version %u.%u (header offset 8); this reader reads version %u.x",
                    v->version_major, v->version_minor, ABM_VERSION_MAJOR);
    uint32_t hcrc = rd32(b + 60), hcalc = abm_crc32(b, 60);
    v->header_crc_ok = hcrc == hcalc;
    if (!v->header_crc_ok) {
        if (!ignore_crc)
            return fail(e, "header CRC mismatch: field header_crc32 (offset 60) is 0x%x, header bytes give 0x%x", hcrc, hcalc);
        v->bad_crcs++;
    }
    if (rd32(b + 12) != ABM_HEADER_BYTES)
        return fail(e, "header field header_bytes (offset 12) is %u, expected %u", rd32(b + 12), ABM_HEADER_BYTES);
    if (rd32(b + 52) != 0 || rd32(b + 56) != 0)
        return fail(e, "header reserved fields (offsets 52, 56) must be 0");
    v->chip_fingerprint = rd64(b + 16);
    v->flags = rd32(b + 24);
    if (v->flags & ~ABM_FLAGS_KNOWN)
        return fail(e, "header field flags (offset 24) has unknown bits 0x%x", v->flags & ~ABM_FLAGS_KNOWN);
    if (expect_chip && v->chip_fingerprint != expect_chip)
        return fail(e, "wrong chip: model compiled for chip fingerprint 0x%llx (header offset 16), this chip is 0x%llx",
                    (unsigned long long)v->chip_fingerprint, (unsigned long long)expect_chip);
    uint64_t fsize = rd64(b + 40);
    if (fsize > len)
        return fail(e, "truncated: have %llu bytes, header field file_size (offset 40) says %llu",
                    (unsigned long long)len, (unsigned long long)fsize);
    if (fsize < ABM_HEADER_BYTES)
        return fail(e, "header field file_size (offset 40) is %llu, smaller than the header", (unsigned long long)fsize);
    v->section_count = rd32(b + 28);
    if (v->section_count > ABM_MAX_SECTIONS)
        return fail(e, "count overflow: header field section_count (offset 28) is %u, at most %u allowed",
                    v->section_count, ABM_MAX_SECTIONS);
    uint64_t tab = rd64(b + 32), tab_bytes = (uint64_t)v->section_count * ABM_SECTION_ENTRY_BYTES;
    if (tab < ABM_HEADER_BYTES || tab % 8)
        return fail(e, "header field section_table_offset (offset 32) is %llu: must be >= %u and a multiple of 8",
                    (unsigned long long)tab, ABM_HEADER_BYTES);
    if (!in_range(tab, tab_bytes, fsize))
        return fail(e, "truncated: section table at offset %llu (%u entries, %llu bytes) runs past the end of the file (%llu bytes)",
                    (unsigned long long)tab, v->section_count, (unsigned long long)tab_bytes, (unsigned long long)fsize);
    uint32_t tcrc = rd32(b + 48), tcalc = abm_crc32(b + tab, tab_bytes);
    v->table_crc_ok = tcrc == tcalc;
    if (!v->table_crc_ok) {
        if (!ignore_crc)
            return fail(e, "section table CRC mismatch: header field table_crc32 (offset 48) is 0x%x, table gives 0x%x", tcrc, tcalc);
        v->bad_crcs++;
    }
    uint64_t tab_end = tab + tab_bytes;
    uint64_t scratch = ABM_INFLATE_WORK_BYTES + 16;   /* + slack to align the workspace */
    for (uint32_t i = 0; i < v->section_count; i++) {
        const uint8_t *p = b + tab + (uint64_t)i * ABM_SECTION_ENTRY_BYTES;
        uint64_t at = tab + (uint64_t)i * ABM_SECTION_ENTRY_BYTES;
        AbmSection *s = &v->sec[i];
        s->type = rd32(p);
        s->compression = rd32(p + 4);
        s->offset = rd64(p + 8);
        s->stored_size = rd64(p + 16);
        s->raw_size = rd64(p + 24);
        s->crc32 = rd32(p + 32);
        const char *nm = sec_label(s->type);
        if (rd32(p + 36) != 0)
            return fail(e, "section %u (%s): reserved field (offset %llu) must be 0", i, nm, (unsigned long long)(at + 36));
        if (s->compression > ABM_COMP_ZLIB)
            return fail(e, "section %u (%s): unknown compression %u in field compression (offset %llu)", i, nm,
                        s->compression, (unsigned long long)(at + 4));
        if (!in_range(s->offset, s->stored_size, fsize))
            return fail(e, "section %u (%s) past end of file: offset %llu + size %llu > file size %llu (entry at offset %llu)",
                        i, nm, (unsigned long long)s->offset, (unsigned long long)s->stored_size,
                        (unsigned long long)fsize, (unsigned long long)at);
        if (s->offset % ABM_ALIGN)
            return fail(e, "section %u (%s): offset %llu (field at offset %llu) is not %u-byte aligned", i, nm,
                        (unsigned long long)s->offset, (unsigned long long)(at + 8), ABM_ALIGN);
        if (s->offset < tab_end)
            return fail(e, "section %u (%s) at offset %llu overlaps the header or the section table (which ends at %llu)",
                        i, nm, (unsigned long long)s->offset, (unsigned long long)tab_end);
        if (s->compression == ABM_COMP_NONE && s->raw_size != s->stored_size)
            return fail(e, "section %u (%s): uncompressed but raw_size %llu != stored size %llu (entry at offset %llu)", i, nm,
                        (unsigned long long)s->raw_size, (unsigned long long)s->stored_size, (unsigned long long)at);
        int known = s->type > 0 && s->type < ABM_SEC_LIMIT;
        if (s->compression == ABM_COMP_ZLIB) {
            if (s->stored_size > UINT64_MAX / ABM_ZLIB_MAX_RATIO || s->raw_size > s->stored_size * ABM_ZLIB_MAX_RATIO)
                return fail(e, "section %u (%s): raw_size %llu is impossible for %llu bytes of zlib data (entry at offset %llu)",
                            i, nm, (unsigned long long)s->raw_size, (unsigned long long)s->stored_size, (unsigned long long)at);
        }
        if (s->compression == ABM_COMP_ZLIB && known) {   /* unknown sections are skipped, never inflated */
            uint64_t need = align_up(s->raw_size);
            if (need < s->raw_size || scratch > UINT64_MAX - need)
                return fail(e, "count overflow: section %u (%s) raw sizes overflow 64 bits", i, nm);
            scratch += need;
        }
        if (known) {
            if (v->by_type[s->type] >= 0)
                return fail(e, "duplicate section: sections %d and %u are both '%s'", v->by_type[s->type], i, nm);
            v->by_type[s->type] = (int)i;
        }
        /* a loader that never reads the weights may leave their checksum unchecked */
        s->crc_ok = (skip_weight_crc && s->type == ABM_SEC_WEIGHT_DATA) || abm_crc32(b + s->offset, s->stored_size) == s->crc32;
        if (!s->crc_ok) {
            if (!ignore_crc)
                return fail(e, "CRC mismatch in section %u (%s) at offset %llu, %llu bytes: stored 0x%x, computed 0x%x",
                            i, nm, (unsigned long long)s->offset, (unsigned long long)s->stored_size, s->crc32,
                            abm_crc32(b + s->offset, s->stored_size));
            v->bad_crcs++;
        }
    }
    /* Sections must not overlap one another; everything between them is zero. */
    uint8_t order[ABM_MAX_SECTIONS];
    for (uint32_t i = 0; i < v->section_count; i++) {
        uint32_t j = i;
        while (j > 0 && v->sec[order[j - 1]].offset > v->sec[i].offset) { order[j] = order[j - 1]; j--; }
        order[j] = (uint8_t)i;
    }
    uint64_t pos = tab_end;
    for (uint64_t k = ABM_HEADER_BYTES; k < tab; k++)
        if (b[k]) return fail(e, "nonzero padding byte at offset %llu (between header and section table)", (unsigned long long)k);
    for (uint32_t k = 0; k < v->section_count; k++) {
        const AbmSection *s = &v->sec[order[k]];
        if (s->offset < pos && s->stored_size) {
            const AbmSection *o = NULL;
            uint32_t oi = 0;
            for (uint32_t j = 0; j < k; j++) {
                const AbmSection *c = &v->sec[order[j]];
                if (c->stored_size && c->offset + c->stored_size > s->offset) { o = c; oi = order[j]; }
            }
            if (o)
                return fail(e, "overlapping sections: %u (%s, offset %llu, %llu bytes) and %u (%s, offset %llu, %llu bytes)",
                            oi, sec_label(o->type), (unsigned long long)o->offset, (unsigned long long)o->stored_size,
                            order[k], sec_label(s->type), (unsigned long long)s->offset, (unsigned long long)s->stored_size);
        }
        for (uint64_t q = pos; q < s->offset; q++)
            if (b[q]) return fail(e, "nonzero padding byte at offset %llu (between sections)", (unsigned long long)q);
        if (s->offset + s->stored_size > pos) pos = s->offset + s->stored_size;
    }
    for (uint64_t q = pos; q < fsize; q++)
        if (b[q]) return fail(e, "nonzero padding byte at offset %llu (after the last section)", (unsigned long long)q);
    v->scratch_needed = scratch;
    v->buf = b;                   /* only now: abm_decode refuses a view whose open failed */
    v->size = fsize;
    return 0;
}

/* ---- record validation ---- */

static const uint32_t required[] = {
    ABM_SEC_STRINGS, ABM_SEC_NETS, ABM_SEC_VARIANTS, ABM_SEC_TENSORS, ABM_SEC_QUANT,
    ABM_SEC_STREAMS, ABM_SEC_CMDS, ABM_SEC_WEIGHT_DIR, ABM_SEC_WEIGHT_DATA, ABM_SEC_META,
};
static const uint32_t record_bytes[ABM_SEC_LIMIT] = {
    0, 1, ABM_NET_BYTES, ABM_VARIANT_BYTES, ABM_TENSOR_BYTES, ABM_QUANT_BYTES, ABM_STREAM_BYTES, 1,
    ABM_BLOB_BYTES, 1, ABM_META_BYTES, 1, 1,
};

static int check_str(const AbmView *v, AtlErr *e, uint32_t type, uint64_t idx, uint64_t rb, uint64_t fo,
                     const char *field, uint32_t ref)
{
    if (ref >= v->strings_size)
        return rec_fail(e, v, type, idx, rb, fo, field, "string index out of range: %u, strings section has %llu bytes",
                        ref, (unsigned long long)v->strings_size);
    return 0;
}

static const char *str_at(const AbmView *v, uint32_t ref) { return (const char *)v->strings + ref; }

static int scale_ok(uint32_t bits)
{
    uint32_t exp = (bits >> 23) & 0xff;
    return !(bits >> 31) && exp != 0xff && bits != 0;
}

static int check_blobs(AbmView *v, AtlErr *e)
{
    uint64_t dram_end = 0, data_end = 0;
    for (uint32_t i = 0; i < v->n_blobs; i++) {
        AbmBlob bl = abm_blob(v, i);
        if (bl.raw_size == 0) return rec_fail(e, v, ABM_SEC_WEIGHT_DIR, i, ABM_BLOB_BYTES, 8, "raw_size", "blob is empty");
        if (bl.compression > ABM_COMP_ZLIB)
            return rec_fail(e, v, ABM_SEC_WEIGHT_DIR, i, ABM_BLOB_BYTES, 32, "compression", "unknown compression %u", bl.compression);
        if (bl.dram_offset % ABM_ALIGN || bl.dram_offset < dram_end)
            return rec_fail(e, v, ABM_SEC_WEIGHT_DIR, i, ABM_BLOB_BYTES, 0, "dram_offset",
                            "%llu must be %u-byte aligned and past the previous blob (which ends at %llu)",
                            (unsigned long long)bl.dram_offset, ABM_ALIGN, (unsigned long long)dram_end);
        if (!in_range(bl.dram_offset, bl.raw_size, UINT64_MAX - ABM_ALIGN))
            return rec_fail(e, v, ABM_SEC_WEIGHT_DIR, i, ABM_BLOB_BYTES, 8, "raw_size", "count overflow: dram_offset + raw_size overflows");
        if (bl.data_offset % ABM_ALIGN || bl.data_offset < data_end)
            return rec_fail(e, v, ABM_SEC_WEIGHT_DIR, i, ABM_BLOB_BYTES, 16, "data_offset",
                            "%llu must be %u-byte aligned and past the previous blob's data (which ends at %llu)",
                            (unsigned long long)bl.data_offset, ABM_ALIGN, (unsigned long long)data_end);
        if (!in_range(bl.data_offset, bl.stored_size, v->wdata_size))
            return rec_fail(e, v, ABM_SEC_WEIGHT_DIR, i, ABM_BLOB_BYTES, 24, "stored_size",
                            "blob data (offset %llu, %llu bytes) runs past the end of the weight_data section (%llu bytes)",
                            (unsigned long long)bl.data_offset, (unsigned long long)bl.stored_size, (unsigned long long)v->wdata_size);
        if (bl.compression == ABM_COMP_NONE && bl.stored_size != bl.raw_size)
            return rec_fail(e, v, ABM_SEC_WEIGHT_DIR, i, ABM_BLOB_BYTES, 24, "stored_size",
                            "uncompressed blob but stored_size %llu != raw_size %llu",
                            (unsigned long long)bl.stored_size, (unsigned long long)bl.raw_size);
        if (bl.compression == ABM_COMP_ZLIB &&
            (bl.stored_size == 0 || bl.raw_size / ABM_ZLIB_MAX_RATIO > bl.stored_size))
            return rec_fail(e, v, ABM_SEC_WEIGHT_DIR, i, ABM_BLOB_BYTES, 8, "raw_size",
                            "%llu bytes cannot come from %llu bytes of zlib data",
                            (unsigned long long)bl.raw_size, (unsigned long long)bl.stored_size);
        dram_end = bl.dram_offset + bl.raw_size;
        data_end = bl.data_offset + bl.stored_size;
    }
    v->weight_bytes = align_up(dram_end);
    return 0;
}

static int check_tensor(const AbmView *v, AtlErr *e, uint32_t ti, const AbmVariant *st, uint64_t *quant_next)
{
    const uint8_t *p = v->tensors + (uint64_t)ti * ABM_TENSOR_BYTES;
    const uint32_t T = ABM_SEC_TENSORS, RB = ABM_TENSOR_BYTES;
    if (check_str(v, e, T, ti, RB, 0, "name", rd32(p))) return -1;
    AbmTensor t = abm_tensor(v, ti);
    if (t.dtype >= ABM_DTYPE_COUNT) return rec_fail(e, v, T, ti, RB, 4, "dtype", "unknown dtype %u", t.dtype);
    if (t.role >= ABM_ROLE_COUNT) return rec_fail(e, v, T, ti, RB, 5, "role", "unknown role %u", t.role);
    if (t.region >= ABM_REGION_COUNT) return rec_fail(e, v, T, ti, RB, 6, "region", "unknown region %u", t.region);
    if (t.layout >= ABM_LAYOUT_COUNT) return rec_fail(e, v, T, ti, RB, 7, "layout", "unknown layout %u", t.layout);
    if (t.ndim > ABM_MAX_DIMS) return rec_fail(e, v, T, ti, RB, 8, "ndim", "%u dimensions, at most %u", t.ndim, ABM_MAX_DIMS);
    if (t.quant_kind >= ABM_QUANT_KIND_COUNT)
        return rec_fail(e, v, T, ti, RB, 9, "quant_kind", "unknown quantisation kind %u", t.quant_kind);
    if (rd8(p + 11)) return rec_fail(e, v, T, ti, RB, 11, "reserved", "must be 0");
    if (role_region[t.role] != t.region)
        return rec_fail(e, v, T, ti, RB, 6, "region", "tensor '%s' has role %s but region %s (expected %s)", t.name,
                        role_names[t.role], region_names[t.region], region_names[role_region[t.role]]);
    uint64_t numel = 1;
    for (uint32_t d = 0; d < ABM_MAX_DIMS; d++) {
        if (d < t.ndim && t.dims[d] == 0)
            return rec_fail(e, v, T, ti, RB, 16 + 4 * d, "dims", "tensor '%s' dimension %u is 0", t.name, d);
        if (d >= t.ndim && t.dims[d] != 0)
            return rec_fail(e, v, T, ti, RB, 16 + 4 * d, "dims", "tensor '%s' dimension %u is past ndim %u but not 0", t.name, d, t.ndim);
        if (d < t.ndim) {
            if (numel > UINT64_MAX / t.dims[d])
                return rec_fail(e, v, T, ti, RB, 16 + 4 * d, "dims", "count overflow: element count of '%s' overflows 64 bits", t.name);
            numel *= t.dims[d];
        }
    }
    uint32_t es = dtype_sizes[t.dtype];
    if (numel > UINT64_MAX / es)
        return rec_fail(e, v, T, ti, RB, 16, "dims", "count overflow: byte size of '%s' overflows 64 bits", t.name);
    uint64_t dense = numel * es;
    if (t.layout == ABM_LAYOUT_OPAQUE ? t.size < dense : t.size != dense)
        return rec_fail(e, v, T, ti, RB, 48, "size", "tensor '%s' size %llu does not match its shape and dtype (%llu bytes)",
                        t.name, (unsigned long long)t.size, (unsigned long long)dense);
    if (t.region == ABM_REGION_WEIGHTS) {
        if (t.blob >= v->n_blobs)
            return rec_fail(e, v, T, ti, RB, 12, "blob", "weight tensor '%s' names blob %u of %u", t.name, t.blob, v->n_blobs);
        AbmBlob bl = abm_blob(v, t.blob);
        if (t.offset < bl.dram_offset || !in_range(t.offset - bl.dram_offset, t.size, bl.raw_size))
            return rec_fail(e, v, T, ti, RB, 40, "offset",
                            "tensor '%s' points outside its region: [%llu, +%llu) is not inside weight blob %u [%llu, +%llu)",
                            t.name, (unsigned long long)t.offset, (unsigned long long)t.size, t.blob,
                            (unsigned long long)bl.dram_offset, (unsigned long long)bl.raw_size);
    } else {
        if (t.blob != ABM_NO_BLOB)
            return rec_fail(e, v, T, ti, RB, 12, "blob", "tensor '%s' is not a weight but names blob %u", t.name, t.blob);
        uint64_t limit = t.region == ABM_REGION_IO ? st->io_bytes : st->activation_bytes;
        if (!in_range(t.offset, t.size, limit))
            return rec_fail(e, v, T, ti, RB, 40, "offset",
                            "tensor '%s' points outside its region: [%llu, +%llu) exceeds the variant's %s region of %llu bytes",
                            t.name, (unsigned long long)t.offset, (unsigned long long)t.size, region_names[t.region],
                            (unsigned long long)limit);
    }
    uint64_t want = t.quant_kind == ABM_QUANT_NONE ? 0 : t.quant_kind == ABM_QUANT_PER_TENSOR ? 1 : 0;
    if (t.quant_kind == ABM_QUANT_PER_CHANNEL) {
        if (t.quant_axis >= t.ndim)
            return rec_fail(e, v, T, ti, RB, 10, "quant_axis", "tensor '%s' quantisation axis %u but ndim %u", t.name, t.quant_axis, t.ndim);
        want = t.dims[t.quant_axis];
    } else if (t.quant_axis != 0) {
        return rec_fail(e, v, T, ti, RB, 10, "quant_axis", "must be 0 unless quantised per channel");
    }
    if (t.quant_count != want)
        return rec_fail(e, v, T, ti, RB, 60, "quant_count", "tensor '%s' has %u quantisation entries, expected %llu",
                        t.name, t.quant_count, (unsigned long long)want);
    if (t.quant_first != *quant_next)
        return rec_fail(e, v, T, ti, RB, 56, "quant_first", "tensor '%s' quantisation starts at %u, expected %llu (entries are in tensor order)",
                        t.name, t.quant_first, (unsigned long long)*quant_next);
    if (!in_range(t.quant_first, t.quant_count, v->n_quant))
        return rec_fail(e, v, T, ti, RB, 60, "quant_count", "tensor '%s' quantisation entries [%u, +%u) past the %u in the quant section",
                        t.name, t.quant_first, t.quant_count, v->n_quant);
    for (uint32_t q = 0; q < t.quant_count; q++) {
        const uint8_t *qp = v->quant + ((uint64_t)t.quant_first + q) * ABM_QUANT_BYTES;
        uint32_t qi = t.quant_first + q;
        if (!scale_ok(rd32(qp)))
            return rec_fail(e, v, ABM_SEC_QUANT, qi, ABM_QUANT_BYTES, 0, "scale",
                            "scale of tensor '%s' (bits 0x%x) is not a finite positive number", t.name, rd32(qp));
        int32_t zp = (int32_t)rd32(qp + 4);
        if (zp < zp_min[t.dtype] || zp > zp_max[t.dtype])
            return rec_fail(e, v, ABM_SEC_QUANT, qi, ABM_QUANT_BYTES, 4, "zero_point",
                            "zero point %d of tensor '%s' is outside the range of %s", zp, t.name, dtype_names[t.dtype]);
    }
    *quant_next += t.quant_count;
    return 0;
}

/* ---- the optional host tables (layers, stages): a 16-byte header (rows,
 * row size, reserved), the rows, then the section's own strings ---- */

typedef struct HostTable {
    const char *name;             /* the section's, for messages */
    const uint8_t *rows, *strings;
    uint32_t n, row_bytes;
    uint64_t strings_size;
} HostTable;

/* t from a section's raw bytes: header, rows inside, strings NUL-ended. */
static int table_open(HostTable *t, const char *name, uint32_t row_bytes, const uint8_t *raw, uint64_t n, AtlErr *e)
{
    const uint32_t H = ABM_LAYERS_HEADER_BYTES;   /* = ABM_STAGES_HEADER_BYTES */
    memset(t, 0, sizeof *t);
    t->name = name;
    t->row_bytes = row_bytes;
    if (n < H) return fail(e, "section '%s': %llu bytes, less than its %u-byte header", name, (unsigned long long)n, H);
    uint32_t rows = rd32(raw);
    if (rd32(raw + 4) != row_bytes || rd64(raw + 8) != 0)
        return fail(e, "section '%s': header says rows of %u bytes (expected %u) or has reserved bits set", name, rd32(raw + 4),
                    row_bytes);
    if ((uint64_t)rows * row_bytes > n - H)
        return fail(e, "section '%s': %u rows of %u bytes run past its %llu bytes", name, rows, row_bytes, (unsigned long long)n);
    t->rows = raw + H;
    t->n = rows;
    t->strings = t->rows + (uint64_t)rows * row_bytes;
    t->strings_size = n - H - (uint64_t)rows * row_bytes;
    if (t->strings_size && t->strings[t->strings_size - 1] != 0)
        return fail(e, "section '%s': its strings do not end with a NUL byte", name);
    return 0;
}

/* Field fo of row i: a string reference inside the table's pool. */
static int table_str(const HostTable *t, AtlErr *e, uint32_t i, uint64_t fo, const char *field)
{
    uint32_t ref = rd32(t->rows + (uint64_t)i * t->row_bytes + fo);
    if (ref >= t->strings_size)
        return fail(e, "section '%s' row %u field '%s' (byte %llu of the section): string index out of range: %u, the "
                    "section has %llu bytes of strings", t->name, i, field,
                    (unsigned long long)(ABM_LAYERS_HEADER_BYTES + (uint64_t)i * t->row_bytes + fo), ref,
                    (unsigned long long)t->strings_size);
    return 0;
}

/* Row i's variant (offset 0): one of n_variants, not before *prev. */
static int table_variant(const HostTable *t, AtlErr *e, uint32_t i, uint32_t n_variants, uint32_t *prev)
{
    uint32_t variant = rd32(t->rows + (uint64_t)i * t->row_bytes);
    if (variant >= n_variants || variant < *prev)
        return fail(e, "section '%s' row %u field 'variant': variant %u is not one of the %u variants, or before the previous "
                    "row's %u", t->name, i, variant, n_variants, *prev);
    *prev = variant;
    return 0;
}

int abm_layers_view(AbmView *v, const uint8_t *raw, uint64_t n, AtlErr *e)
{
    HostTable t;
    v->layers = v->layer_strings = NULL;
    v->n_layers = 0;
    v->layer_strings_size = 0;
    if (table_open(&t, "layers", ABM_LAYER_BYTES, raw, n, e)) return -1;
    uint32_t prev = 0;
    for (uint32_t i = 0; i < t.n; i++) {
        const uint8_t *p = t.rows + (uint64_t)i * t.row_bytes;
        if (table_variant(&t, e, i, v->n_variants, &prev) || table_str(&t, e, i, 8, "name") || table_str(&t, e, i, 12, "op") ||
            table_str(&t, e, i, 16, "split"))
            return -1;
        if (rd32(p + 28) & ~ABM_LAYER_MATRIX)
            return fail(e, "section 'layers' row %u field 'flags': unknown bits 0x%x", i, rd32(p + 28));
    }
    v->layers = t.rows;
    v->n_layers = t.n;
    v->layer_strings = t.strings;
    v->layer_strings_size = t.strings_size;
    return 0;
}

int abm_stages_view(AbmView *v, const uint8_t *raw, uint64_t n, AtlErr *e)
{
    HostTable t;
    v->stages = v->stage_strings = NULL;
    v->n_stages = 0;
    v->stage_strings_size = 0;
    if (table_open(&t, "stages", ABM_STAGE_BYTES, raw, n, e)) return -1;
    uint32_t prev = 0;
    uint64_t next_layer = 0, next_stage = 0;
    for (uint32_t i = 0; i < t.n; i++) {
        const uint8_t *p = t.rows + (uint64_t)i * t.row_bytes;
        uint32_t before = prev;
        if (table_variant(&t, e, i, v->n_variants, &prev) || table_str(&t, e, i, 28, "input")) return -1;
        if (!i || prev != before) next_layer = next_stage = 0;   /* a variant's first stage */
        static const struct { uint32_t off; const char *field; } positive[] = {
            {12, "layers"}, {16, "micro_batch"}, {20, "instances"}, {24, "cores"}};
        for (int k = 0; k < 4; k++)
            if (!rd32(p + positive[k].off)) return fail(e, "section 'stages' row %u field '%s': must not be 0", i, positive[k].field);
        if (rd32(p + 4) != next_stage)
            return fail(e, "section 'stages' row %u field 'stage': %u, expected %llu (a variant's stages are numbered from 0 "
                        "in order)", i, rd32(p + 4), (unsigned long long)next_stage);
        if (rd32(p + 8) < next_layer)
            return fail(e, "section 'stages' row %u field 'first_layer': layer %u is inside or before the previous stage's "
                        "layers (from %llu on)", i, rd32(p + 8), (unsigned long long)next_layer);
        if (rd32(p + 60)) return fail(e, "section 'stages' row %u field 'reserved': must be 0", i);
        next_layer = (uint64_t)rd32(p + 8) + rd32(p + 12);
        next_stage++;
    }
    v->stages = t.rows;
    v->n_stages = t.n;
    v->stage_strings = t.strings;
    v->stage_strings_size = t.strings_size;
    return 0;
}

static int check_records(AbmView *v, AtlErr *e)
{
    if (v->strings_size == 0 || v->strings[v->strings_size - 1] != 0)
        return fail(e, "section 'strings' must be non-empty and end with a NUL byte");
    /* metadata */
    if (check_str(v, e, ABM_SEC_META, 0, ABM_META_BYTES, 0, "producer", rd32(v->meta))) return -1;
    if (check_str(v, e, ABM_SEC_META, 0, ABM_META_BYTES, 4, "options", rd32(v->meta + 4))) return -1;
    if (check_blobs(v, e)) return -1;
    /* nets tile the variants in order */
    uint64_t next_variant = 0;
    for (uint32_t i = 0; i < v->n_nets; i++) {
        const uint8_t *p = v->nets + (uint64_t)i * ABM_NET_BYTES;
        if (check_str(v, e, ABM_SEC_NETS, i, ABM_NET_BYTES, 0, "name", rd32(p))) return -1;
        if (rd32(p + 12)) return rec_fail(e, v, ABM_SEC_NETS, i, ABM_NET_BYTES, 12, "reserved", "must be 0");
        AbmNet n = abm_net(v, i);
        if (n.first_variant != next_variant)
            return rec_fail(e, v, ABM_SEC_NETS, i, ABM_NET_BYTES, 4, "first_variant", "net '%s' starts at variant %u, expected %llu",
                            n.name, n.first_variant, (unsigned long long)next_variant);
        if (n.variant_count == 0 || !in_range(n.first_variant, n.variant_count, v->n_variants))
            return rec_fail(e, v, ABM_SEC_NETS, i, ABM_NET_BYTES, 8, "variant_count",
                            "net '%s' variants [%u, +%u) are empty or past the %u variants", n.name, n.first_variant, n.variant_count, v->n_variants);
        next_variant += n.variant_count;
    }
    if (next_variant != v->n_variants)
        return fail(e, "section 'variants': %u variants but the nets own %llu", v->n_variants, (unsigned long long)next_variant);
    uint64_t next_tensor = 0, next_stream = 0, next_quant = 0;
    uint32_t net = 0;
    for (uint32_t i = 0; i < v->n_variants; i++) {
        const uint32_t S = ABM_SEC_VARIANTS, RB = ABM_VARIANT_BYTES;
        AbmVariant st = abm_variant(v, i);
        while (net < v->n_nets && i >= abm_net(v, net).first_variant + abm_net(v, net).variant_count) net++;
        if (st.net != net) return rec_fail(e, v, S, i, RB, 0, "net", "variant belongs to net %u but names net %u", net, st.net);
        if (st.batch == 0) return rec_fail(e, v, S, i, RB, 4, "batch", "must be at least 1");
        if (rd32(v->variants + (uint64_t)i * RB + 28)) return rec_fail(e, v, S, i, RB, 28, "reserved", "must be 0");
        if (st.tensor_first != next_tensor)
            return rec_fail(e, v, S, i, RB, 8, "tensor_first", "is %u, expected %llu (variants own consecutive tensors)",
                            st.tensor_first, (unsigned long long)next_tensor);
        if (!in_range(st.tensor_first, st.tensor_count, v->n_tensors))
            return rec_fail(e, v, S, i, RB, 12, "tensor_count", "tensors [%u, +%u) past the %u in section 'tensors'",
                            st.tensor_first, st.tensor_count, v->n_tensors);
        if (st.core_count == 0 || st.core_count > ABM_MAX_CORES)
            return rec_fail(e, v, S, i, RB, 24, "core_count", "%u cores, must be 1..%u", st.core_count, ABM_MAX_CORES);
        if ((uint64_t)st.stream_count != (uint64_t)st.core_count * ABM_ENGINES)
            return rec_fail(e, v, S, i, RB, 20, "stream_count", "is %u, expected cores x engines = %u x %u",
                            st.stream_count, st.core_count, ABM_ENGINES);
        if (st.stream_first != next_stream)
            return rec_fail(e, v, S, i, RB, 16, "stream_first", "is %u, expected %llu (variants own consecutive streams)",
                            st.stream_first, (unsigned long long)next_stream);
        if (!in_range(st.stream_first, st.stream_count, v->n_streams))
            return rec_fail(e, v, S, i, RB, 20, "stream_count", "streams [%u, +%u) past the %u in section 'streams'",
                            st.stream_first, st.stream_count, v->n_streams);
        for (uint32_t k = 0; k < st.tensor_count; k++)
            if (check_tensor(v, e, st.tensor_first + k, &st, &next_quant)) return -1;
        for (uint32_t k = 0; k < st.stream_count; k++) {
            uint32_t si = st.stream_first + k;
            const uint8_t *p = v->streams + (uint64_t)si * ABM_STREAM_BYTES;
            uint64_t off = rd64(p), sz = rd64(p + 8);
            if (off % ABM_ALIGN)
                return rec_fail(e, v, ABM_SEC_STREAMS, si, ABM_STREAM_BYTES, 0, "offset", "%llu is not %u-byte aligned",
                                (unsigned long long)off, ABM_ALIGN);
            if (sz % ABM_INSN_BYTES)
                return rec_fail(e, v, ABM_SEC_STREAMS, si, ABM_STREAM_BYTES, 8, "size",
                                "%llu is not a multiple of the %u-byte instruction", (unsigned long long)sz, ABM_INSN_BYTES);
            if (!in_range(off, sz, v->cmds_size))
                return rec_fail(e, v, ABM_SEC_STREAMS, si, ABM_STREAM_BYTES, 8, "size",
                                "stream [%llu, +%llu) runs past the end of section 'cmds' (%llu bytes)",
                                (unsigned long long)off, (unsigned long long)sz, (unsigned long long)v->cmds_size);
        }
        next_tensor += st.tensor_count;
        next_stream += st.stream_count;
    }
    if (next_tensor != v->n_tensors)
        return fail(e, "section 'tensors': %u tensors but the variants own %llu", v->n_tensors, (unsigned long long)next_tensor);
    if (next_stream != v->n_streams)
        return fail(e, "section 'streams': %u streams but the variants own %llu", v->n_streams, (unsigned long long)next_stream);
    if (next_quant != v->n_quant)
        return fail(e, "section 'quant': %u entries but the tensors use %llu", v->n_quant, (unsigned long long)next_quant);
    return 0;
}

int abm_decode(AbmView *v, void *scratch, size_t scratch_len, AtlErr *e)
{
    if (!v->buf) return fail(e, "abm_decode: view was not opened");
    if (scratch_len < v->scratch_needed || !scratch)
        return fail(e, "scratch buffer too small: %llu bytes, decoding needs %llu",
                    (unsigned long long)scratch_len, (unsigned long long)v->scratch_needed);
    /* zlib keeps pointers in its state: give it a 16-byte aligned workspace */
    uint8_t *sc = (uint8_t *)scratch + ((16 - ((uintptr_t)scratch & 15)) & 15);
    v->work = sc;
    uint64_t pos = ABM_INFLATE_WORK_BYTES;
    for (uint32_t i = 0; i < v->section_count; i++) {
        AbmSection *s = &v->sec[i];
        if (s->compression == ABM_COMP_NONE) { s->data = v->buf + s->offset; continue; }
        if (s->type == 0 || s->type >= ABM_SEC_LIMIT) { s->data = NULL; continue; }
        const char *why = "";
        if (inflate_exact(v->work, v->buf + s->offset, s->stored_size, sc + pos, s->raw_size, &why))
            return fail(e, "section %u (%s) at offset %llu: %s (stored %llu bytes, raw_size %llu)", i, sec_label(s->type),
                        (unsigned long long)s->offset, why, (unsigned long long)s->stored_size, (unsigned long long)s->raw_size);
        s->data = sc + pos;
        pos += align_up(s->raw_size);
    }
    for (size_t k = 0; k < sizeof required / sizeof required[0]; k++) {
        uint32_t t = required[k];
        if (v->by_type[t] < 0) return fail(e, "missing required section '%s'", abm_section_name(t));
        const AbmSection *s = &v->sec[v->by_type[t]];
        if (s->raw_size % record_bytes[t])
            return fail(e, "section %d (%s): size %llu is not a multiple of its %u-byte record", v->by_type[t],
                        abm_section_name(t), (unsigned long long)s->raw_size, record_bytes[t]);
        if (s->raw_size / record_bytes[t] > UINT32_MAX && record_bytes[t] > 1)
            return fail(e, "count overflow: section %d (%s) holds %llu records, at most %u allowed", v->by_type[t],
                        abm_section_name(t), (unsigned long long)(s->raw_size / record_bytes[t]), UINT32_MAX);
    }
    const AbmSection *ws = &v->sec[v->by_type[ABM_SEC_WEIGHT_DATA]];
    if (ws->compression != ABM_COMP_NONE)
        return fail(e, "section %d (weight_data) must not be compressed (blobs are compressed one by one)",
                    v->by_type[ABM_SEC_WEIGHT_DATA]);
    if (v->sec[v->by_type[ABM_SEC_META]].raw_size != ABM_META_BYTES)
        return fail(e, "section %d (meta): size %llu, expected exactly one %u-byte record", v->by_type[ABM_SEC_META],
                    (unsigned long long)v->sec[v->by_type[ABM_SEC_META]].raw_size, ABM_META_BYTES);
#define SEC(t) (&v->sec[v->by_type[t]])
    v->strings = SEC(ABM_SEC_STRINGS)->data;   v->strings_size = SEC(ABM_SEC_STRINGS)->raw_size;
    v->nets = SEC(ABM_SEC_NETS)->data;         v->n_nets = (uint32_t)(SEC(ABM_SEC_NETS)->raw_size / ABM_NET_BYTES);
    v->variants = SEC(ABM_SEC_VARIANTS)->data;     v->n_variants = (uint32_t)(SEC(ABM_SEC_VARIANTS)->raw_size / ABM_VARIANT_BYTES);
    v->tensors = SEC(ABM_SEC_TENSORS)->data;   v->n_tensors = (uint32_t)(SEC(ABM_SEC_TENSORS)->raw_size / ABM_TENSOR_BYTES);
    v->quant = SEC(ABM_SEC_QUANT)->data;       v->n_quant = (uint32_t)(SEC(ABM_SEC_QUANT)->raw_size / ABM_QUANT_BYTES);
    v->streams = SEC(ABM_SEC_STREAMS)->data;   v->n_streams = (uint32_t)(SEC(ABM_SEC_STREAMS)->raw_size / ABM_STREAM_BYTES);
    v->cmds = SEC(ABM_SEC_CMDS)->data;         v->cmds_size = SEC(ABM_SEC_CMDS)->raw_size;
    v->wdir = SEC(ABM_SEC_WEIGHT_DIR)->data;   v->n_blobs = (uint32_t)(SEC(ABM_SEC_WEIGHT_DIR)->raw_size / ABM_BLOB_BYTES);
    v->wdata = SEC(ABM_SEC_WEIGHT_DATA)->data; v->wdata_size = SEC(ABM_SEC_WEIGHT_DATA)->raw_size;
    v->meta = SEC(ABM_SEC_META)->data;
#undef SEC
    if (check_records(v, e)) return -1;
    v->layers = v->layer_strings = v->stages = v->stage_strings = NULL;
    v->n_layers = v->n_stages = 0;
    v->layer_strings_size = v->stage_strings_size = 0;
    if (v->by_type[ABM_SEC_LAYERS] >= 0) {  /* optional; its rows name variants */
        const AbmSection *ls = &v->sec[v->by_type[ABM_SEC_LAYERS]];
        if (abm_layers_view(v, ls->data, ls->raw_size, e)) return -1;
    }
    if (v->by_type[ABM_SEC_STAGES] >= 0) {
        const AbmSection *ss = &v->sec[v->by_type[ABM_SEC_STAGES]];
        if (abm_stages_view(v, ss->data, ss->raw_size, e)) return -1;
    }
    v->decoded = 1;
    return 0;
}

/* ---- accessors (on a decoded view) ---- */

AbmLayer abm_layer(const AbmView *v, uint32_t i)
{
    const uint8_t *p = v->layers + (uint64_t)i * ABM_LAYER_BYTES;
    const char *st = (const char *)v->layer_strings;
    AbmLayer l = { rd32(p), rd32(p + 4), st + rd32(p + 8), st + rd32(p + 12), st + rd32(p + 16),
                   rd32(p + 20), rd32(p + 24), rd32(p + 28), rd64(p + 32), rd64(p + 40), rd64(p + 48), rd64(p + 56) };
    return l;
}

AbmStage abm_stage(const AbmView *v, uint32_t i)
{
    const uint8_t *p = v->stages + (uint64_t)i * ABM_STAGE_BYTES;
    AbmStage s = { rd32(p), rd32(p + 4), rd32(p + 8), rd32(p + 12), rd32(p + 16), rd32(p + 20), rd32(p + 24),
                   (const char *)v->stage_strings + rd32(p + 28), rd64(p + 32), rd64(p + 40), rd64(p + 48), rd32(p + 56) };
    return s;
}

AbmNet abm_net(const AbmView *v, uint32_t i)
{
    const uint8_t *p = v->nets + (uint64_t)i * ABM_NET_BYTES;
    AbmNet n = { str_at(v, rd32(p)), rd32(p + 4), rd32(p + 8) };
    return n;
}

AbmVariant abm_variant(const AbmView *v, uint32_t i)
{
    const uint8_t *p = v->variants + (uint64_t)i * ABM_VARIANT_BYTES;
    AbmVariant s;
    s.net = rd32(p);
    s.batch = rd32(p + 4);
    s.tensor_first = rd32(p + 8);
    s.tensor_count = rd32(p + 12);
    s.stream_first = rd32(p + 16);
    s.stream_count = rd32(p + 20);
    s.core_count = rd32(p + 24);
    s.activation_bytes = rd64(p + 32);
    s.io_bytes = rd64(p + 40);
    return s;
}

AbmTensor abm_tensor(const AbmView *v, uint32_t i)
{
    const uint8_t *p = v->tensors + (uint64_t)i * ABM_TENSOR_BYTES;
    AbmTensor t;
    uint32_t name = rd32(p);
    t.name = name < v->strings_size ? str_at(v, name) : "?";
    t.dtype = rd8(p + 4);
    t.role = rd8(p + 5);
    t.region = rd8(p + 6);
    t.layout = rd8(p + 7);
    t.ndim = rd8(p + 8);
    t.quant_kind = rd8(p + 9);
    t.quant_axis = rd8(p + 10);
    t.blob = rd32(p + 12);
    for (int d = 0; d < ABM_MAX_DIMS; d++) t.dims[d] = rd32(p + 16 + 4 * d);
    t.offset = rd64(p + 40);
    t.size = rd64(p + 48);
    t.quant_first = rd32(p + 56);
    t.quant_count = rd32(p + 60);
    return t;
}

AbmQuant abm_quant(const AbmView *v, uint32_t i)
{
    const uint8_t *p = v->quant + (uint64_t)i * ABM_QUANT_BYTES;
    union { uint32_t u; float f; } bits = { rd32(p) };
    AbmQuant q = { bits.f, (int32_t)rd32(p + 4) };
    return q;
}

AbmStream abm_stream(const AbmView *v, uint32_t variant, uint32_t core, uint32_t engine)
{
    AbmVariant st = abm_variant(v, variant);
    const uint8_t *p = v->streams + ((uint64_t)st.stream_first + (uint64_t)core * ABM_ENGINES + engine) * ABM_STREAM_BYTES;
    AbmStream s = { v->cmds + rd64(p), rd64(p + 8), rd64(p) };
    return s;
}

AbmBlob abm_blob(const AbmView *v, uint32_t i)
{
    const uint8_t *p = v->wdir + (uint64_t)i * ABM_BLOB_BYTES;
    AbmBlob b;
    b.dram_offset = rd64(p);
    b.raw_size = rd64(p + 8);
    b.data_offset = rd64(p + 16);
    b.stored_size = rd64(p + 24);
    b.compression = rd32(p + 32);
    b.crc32 = rd32(p + 36);
    b.hash = rd64(p + 40);
    b.stored = in_range(b.data_offset, b.stored_size, v->wdata_size) ? v->wdata + b.data_offset : NULL;
    return b;
}

AbmMeta abm_meta(const AbmView *v)
{
    AbmMeta m = { str_at(v, rd32(v->meta)), str_at(v, rd32(v->meta + 4)), v->meta + 8 };
    return m;
}

int abm_find_net(const AbmView *v, const char *name)
{
    for (uint32_t i = 0; i < v->n_nets; i++)
        if (strcmp(abm_net(v, i).name, name) == 0) return (int)i;
    return -1;
}

int abm_find_variant(const AbmView *v, uint32_t net, uint32_t batch)
{
    if (net >= v->n_nets) return -1;
    AbmNet n = abm_net(v, net);
    for (uint32_t k = 0; k < n.variant_count; k++)
        if (abm_variant(v, n.first_variant + k).batch == batch) return (int)(n.first_variant + k);
    return -1;
}

int abm_find_tensor(const AbmView *v, uint32_t variant, const char *name)
{
    if (variant >= v->n_variants) return -1;
    AbmVariant st = abm_variant(v, variant);
    for (uint32_t t = 0; t < st.tensor_count; t++)
        if (strcmp(abm_tensor(v, st.tensor_first + t).name, name) == 0) return (int)(st.tensor_first + t);
    return -1;
}

int abm_blob_read(const AbmView *v, uint32_t i, void *dst, uint64_t dst_len, AtlErr *e)
{
    if (!v->decoded || i >= v->n_blobs) return fail(e, "weight blob %u does not exist", i);
    AbmBlob b = abm_blob(v, i);
    if (dst_len < b.raw_size)
        return fail(e, "weight blob %u: destination holds %llu bytes, blob needs %llu", i,
                    (unsigned long long)dst_len, (unsigned long long)b.raw_size);
    if (b.compression == ABM_COMP_NONE) {
        memcpy(dst, b.stored, b.raw_size);
    } else {
        const char *why = "";
        if (inflate_exact(v->work, b.stored, b.stored_size, dst, b.raw_size, &why))
            return fail(e, "weight blob %u (data at offset %llu of section weight_data): %s", i,
                        (unsigned long long)b.data_offset, why);
    }
    uint32_t c = abm_crc32(dst, b.raw_size);
    if (c != b.crc32)
        return fail(e, "CRC mismatch in weight blob %u (directory record %u): stored 0x%x, data gives 0x%x", i, i, b.crc32, c);
    return 0;
}
