/* abm_info.c - the chip fingerprint and compiler options of an .abm file,
 * read without loading it (host only).
 *
 * Tools choose the chip a model runs on from the model itself (`atoll run
 * m.abm` without --chip runs it on the chip it was compiled for, named in
 * its metadata's options as "--chip NAME"). A full-size model is tens of
 * megabytes of weights; this reads only the header, the section table and
 * the two sections the options live in (meta and strings), checking their
 * CRCs and bounds as abm_open would.
 */
#include "isa/abm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint8_t *inflate_owned(const uint8_t *ent, uint8_t *s, uint64_t *raw_n, const char *path, AtlErr *e);

static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/* Reads [off, off + n) of fp into a malloc'd buffer. */
static uint8_t *read_at(FILE *fp, uint64_t off, uint64_t n)
{
    if (n > ((uint64_t)1 << 31) || fseek(fp, (long)off, SEEK_SET)) return NULL;
    uint8_t *b = malloc(n ? (size_t)n : 1);
    if (b && n && fread(b, 1, (size_t)n, fp) != (size_t)n) { free(b); return NULL; }
    return b;
}

uint8_t *abm_entry_raw(const uint8_t *ent, const uint8_t *stored_bytes, uint64_t *raw_n, const char *what, AtlErr *e)
{
    uint64_t stored = get64(ent + 16);
    if (stored > ((uint64_t)1 << 30)) { atl_fail(e, "%s: section of %llu bytes", what, (unsigned long long)stored); return NULL; }
    uint8_t *s = malloc(stored ? (size_t)stored : 1);
    if (!s) { atl_fail(e, "%s: out of memory", what); return NULL; }
    memcpy(s, stored_bytes, (size_t)stored);
    return inflate_owned(ent, s, raw_n, what, e);
}

/* The raw bytes of section entry ent (checked CRC, inflated when zlib). */
static uint8_t *section_bytes(FILE *fp, uint64_t fsize, const uint8_t *ent, uint64_t *raw_n, const char *path, AtlErr *e)
{
    uint64_t off = get64(ent + 8), stored = get64(ent + 16);
    if (off > fsize || stored > fsize - off) {
        atl_fail(e, "%s: section '%s' lies outside the file", path, abm_section_name(get32(ent)));
        return NULL;
    }
    uint8_t *s = read_at(fp, off, stored);
    if (!s) { atl_fail(e, "%s: cannot read section '%s'", path, abm_section_name(get32(ent))); return NULL; }
    return inflate_owned(ent, s, raw_n, path, e);
}

/* Checks the CRC of the stored bytes s (owned: freed or returned) of entry
 * ent and inflates them when compressed. */
static uint8_t *inflate_owned(const uint8_t *ent, uint8_t *s, uint64_t *raw_n, const char *path, AtlErr *e)
{
    uint32_t comp = get32(ent + 4), crc = get32(ent + 32);
    uint64_t stored = get64(ent + 16), raw = get64(ent + 24);
    if (comp > ABM_COMP_ZLIB || raw > ((uint64_t)1 << 30) || (comp == ABM_COMP_NONE && raw != stored)) {
        free(s);
        atl_fail(e, "%s: section '%s' has an invalid table entry", path, abm_section_name(get32(ent)));
        return NULL;
    }
    if (abm_crc32(s, stored) != crc) {
        free(s);
        atl_fail(e, "%s: CRC mismatch in section '%s'", path, abm_section_name(get32(ent)));
        return NULL;
    }
    if (comp == ABM_COMP_NONE) { *raw_n = raw; return s; }
    uint8_t *r = malloc(raw ? (size_t)raw : 1);
    uLongf n = (uLongf)raw;
    if (!r || uncompress(r, &n, s, (uLong)stored) != Z_OK || n != raw) {
        free(r);
        free(s);
        atl_fail(e, "%s: section '%s' does not inflate to its %llu bytes", path, abm_section_name(get32(ent)),
                 (unsigned long long)raw);
        return NULL;
    }
    free(s);
    *raw_n = raw;
    return r;
}

int abm_file_info(const char *path, uint64_t *fingerprint, char *options, size_t cap, AtlErr *e)
{
    if (cap) options[0] = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return atl_fail(e, "%s: cannot open", path);
    uint8_t h[ABM_HEADER_BYTES], *tab = NULL, *meta = NULL, *str = NULL;
    int rc = -1;
    if (fread(h, 1, sizeof h, fp) != sizeof h || memcmp(h, ABM_MAGIC, 8)) { atl_fail(e, "%s: not an .abm model", path); goto out; }
    if ((h[8] | h[9] << 8) != ABM_VERSION_MAJOR || abm_crc32(h, 60) != get32(h + 60)) {
        atl_fail(e, "%s: unknown container version or damaged header", path);
        goto out;
    }
    *fingerprint = get64(h + 16);
    uint32_t count = get32(h + 28);
    uint64_t toff = get64(h + 32), fsize = get64(h + 40);
    if (count > ABM_MAX_SECTIONS || !(tab = read_at(fp, toff, (uint64_t)count * ABM_SECTION_ENTRY_BYTES)) ||
        abm_crc32(tab, (uint64_t)count * ABM_SECTION_ENTRY_BYTES) != get32(h + 48)) {
        atl_fail(e, "%s: damaged section table", path);
        goto out;
    }
    const uint8_t *ment = NULL, *sent = NULL;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *ent = tab + (size_t)i * ABM_SECTION_ENTRY_BYTES;
        if (get32(ent) == ABM_SEC_META) ment = ent;
        if (get32(ent) == ABM_SEC_STRINGS) sent = ent;
    }
    if (!ment || !sent) { atl_fail(e, "%s: no metadata", path); goto out; }
    uint64_t mn, sn;
    if (!(meta = section_bytes(fp, fsize, ment, &mn, path, e)) || !(str = section_bytes(fp, fsize, sent, &sn, path, e))) goto out;
    if (mn < ABM_META_BYTES) { atl_fail(e, "%s: metadata too short", path); goto out; }
    uint32_t o = get32(meta + 4);
    if (o >= sn || !memchr(str + o, 0, (size_t)(sn - o))) { atl_fail(e, "%s: metadata options out of bounds", path); goto out; }
    if (cap) snprintf(options, cap, "%s", (const char *)str + o);
    rc = 0;
out:
    free(tab);
    free(meta);
    free(str);
    fclose(fp);
    return rc;
}

int abm_options_chip(const char *options, char *name, size_t cap)
{
    const char *at = options ? strstr(options, "--chip ") : NULL;
    if (!at || !cap) return -1;
    at += strlen("--chip ");
    size_t n = strcspn(at, " ");
    if (!n) return -1;
    snprintf(name, cap, "%.*s", (int)(n < cap ? n : cap - 1), at);
    return 0;
}

/* ---- the optional trailing sections: layers, stages (see abm.h) ---- */

/* Header and table checked; *count and the table's position set. */
static int head_ok(const uint8_t *h, size_t n, uint32_t *count, uint64_t *toff)
{
    if (n < ABM_HEADER_BYTES || memcmp(h, ABM_MAGIC, 8) || (h[8] | h[9] << 8) != ABM_VERSION_MAJOR || abm_crc32(h, 60) != get32(h + 60))
        return -1;
    *count = get32(h + 28);
    *toff = get64(h + 32);
    if (*count > ABM_MAX_SECTIONS || *toff > n || (uint64_t)*count * ABM_SECTION_ENTRY_BYTES > n - *toff) return -1;
    return abm_crc32(h + *toff, (uint64_t)*count * ABM_SECTION_ENTRY_BYTES) == get32(h + 48) ? 0 : -1;
}

const uint8_t *abm_find_entry(const uint8_t *head, size_t n, uint32_t type)
{
    uint32_t count;
    uint64_t toff;
    if (head_ok(head, n, &count, &toff)) return NULL;
    for (uint32_t i = 0; i < count; i++)
        if (get32(head + toff + (uint64_t)i * ABM_SECTION_ENTRY_BYTES) == type) return head + toff + (uint64_t)i * ABM_SECTION_ENTRY_BYTES;
    return NULL;
}

static int is_optional(uint32_t type) { return type == ABM_SEC_LAYERS || type == ABM_SEC_STAGES; }

/* The table entries from *keep on are optional sections that form the
 * file's tail: the last entries, every one after each other section, the
 * last of them ending the file. *keep = count when there are none. */
static void optional_tail(const uint8_t *head, uint32_t count, uint64_t toff, uint32_t *keep, uint64_t *req_end)
{
    const uint8_t *tab = head + toff;
    uint64_t fsize = get64(head + 40), first = UINT64_MAX, last_end = 0, end = 0;
    uint32_t k = count;
    while (k > 0 && is_optional(get32(tab + (uint64_t)(k - 1) * ABM_SECTION_ENTRY_BYTES))) k--;
    *keep = count;
    for (uint32_t i = k; i < count; i++) {
        const uint8_t *ent = tab + (uint64_t)i * ABM_SECTION_ENTRY_BYTES;
        if (get64(ent + 8) < first) first = get64(ent + 8);
        if (get64(ent + 8) + get64(ent + 16) > last_end) last_end = get64(ent + 8) + get64(ent + 16);
    }
    if (k == count || last_end != fsize) return;
    for (uint32_t i = 0; i < k; i++) {
        const uint8_t *ent = tab + (uint64_t)i * ABM_SECTION_ENTRY_BYTES;
        if (get64(ent + 8) >= first) return;   /* not trailing */
        if (get64(ent + 8) + get64(ent + 16) > end) end = get64(ent + 8) + get64(ent + 16);
    }
    *keep = k;
    *req_end = end;
}

int abm_required_size(const uint8_t *head, size_t n, uint64_t *size)
{
    uint32_t count, keep;
    uint64_t toff, end = 0;
    if (head_ok(head, n, &count, &toff)) return -1;
    *size = get64(head + 40);
    optional_tail(head, count, toff, &keep, &end);
    if (keep < count) *size = end;
    return 0;
}

int abm_drop_optional(uint8_t *head, size_t n)
{
    uint64_t size;
    uint32_t count;
    uint64_t toff;
    uint32_t keep;
    if (head_ok(head, n, &count, &toff)) return -1;
    optional_tail(head, count, toff, &keep, &size);
    if (keep == count) return 0;
    memset(head + toff + (uint64_t)keep * ABM_SECTION_ENTRY_BYTES, 0, (uint64_t)(count - keep) * ABM_SECTION_ENTRY_BYTES);
    count = keep;
    for (int b = 0; b < 4; b++) head[28 + b] = (uint8_t)(count >> (8 * b));
    head[10] = ABM_VERSION_MINOR;
    head[11] = 0;
    for (int b = 0; b < 8; b++) head[40 + b] = (uint8_t)(size >> (8 * b));
    uint32_t tcrc = abm_crc32(head + toff, (uint64_t)count * ABM_SECTION_ENTRY_BYTES);
    for (int b = 0; b < 4; b++) head[48 + b] = (uint8_t)(tcrc >> (8 * b));
    uint32_t hcrc = abm_crc32(head, 60);
    for (int b = 0; b < 4; b++) head[60 + b] = (uint8_t)(hcrc >> (8 * b));
    return 0;
}
