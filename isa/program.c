/* program.c - AtlProgram construction and its binary image.
 *
 * Image layout (all integers little-endian; see docs/asm.md):
 *   0   8  magic "ATOLLPRG"
 *   8   4  version (1)
 *   12  4  ncores
 *   16  4  nsegs
 *   20  4  nregions
 *   24  4*ncores*3  instruction count of each stream (core-major, engines dma mat vec)
 *   ...    the instructions, 64 encoded bytes each, streams in the same order
 *   ...    segments: name[64] (NUL padded), addr u64, size u64, bytes
 *   ...    regions:  name[64], addr u64, dtype u32, ndim u32, shape u32[4],
 *                    tolerance f64, has_expect u32 (44 bytes after the name),
 *                    expected bytes
 *                    (product of shape x dtype size) if has_expect
 *   end-4  4  CRC-32 (zlib) of every byte before it
 * prog_load checks every count and size against the bytes present, decodes
 * every instruction and names stream and index in any error.
 */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "isa/program.h"
#include "util/file.h"

#define PROG_MAGIC "ATOLLPRG"
#define PROG_VERSION 1
#define PROG_NAME_BYTES 64
#define PROG_ADDR_LIMIT ((uint64_t)1 << 40) /* DMA addresses are 40 bits */

int prog_init(AtlProgram *p, int ncores, AtlErr *e)
{
    memset(p, 0, sizeof *p);
    if (ncores < 1 || ncores > PROG_MAX_CORES)
        return atl_fail(e, "core count %d out of range 1..%d", ncores, PROG_MAX_CORES);
    p->streams = calloc((size_t)ncores * ISA_NUM_ENGINES, sizeof *p->streams);
    if (!p->streams) return atl_fail(e, "out of memory");
    p->ncores = ncores;
    return 0;
}

int prog_set_cores(AtlProgram *p, int ncores, AtlErr *e)
{
    if (ncores < 1 || ncores > PROG_MAX_CORES)
        return atl_fail(e, "core count %d out of range 1..%d", ncores, PROG_MAX_CORES);
    if (ncores < p->ncores) {
        for (int c = ncores; c < p->ncores; c++)
            for (int g = 0; g < ISA_NUM_ENGINES; g++)
                if (prog_stream(p, c, g)->count)
                    return atl_fail(e, "cannot shrink to %d cores: core %d has instructions", ncores, c);
        for (int i = ncores * ISA_NUM_ENGINES; i < p->ncores * ISA_NUM_ENGINES; i++) {
            free(p->streams[i].insns);
            free(p->streams[i].src_line);
        }
        p->ncores = ncores;
        return 0;
    }
    AtlStream *s = realloc(p->streams, (size_t)ncores * ISA_NUM_ENGINES * sizeof *s);
    if (!s) return atl_fail(e, "out of memory");
    memset(s + p->ncores * ISA_NUM_ENGINES, 0, (size_t)(ncores - p->ncores) * ISA_NUM_ENGINES * sizeof *s);
    p->streams = s;
    p->ncores = ncores;
    return 0;
}

int prog_append(AtlProgram *p, int core, int engine, const AtlInsn *in, int line, AtlErr *e)
{
    if (core < 0 || core >= p->ncores) return atl_fail(e, "core %d out of range 0..%d", core, p->ncores - 1);
    if (engine < 0 || engine >= ISA_NUM_ENGINES) return atl_fail(e, "bad engine %d", engine);
    AtlStream *s = prog_stream(p, core, engine);
    if (s->count == s->cap) {
        if (s->cap > (1 << 26)) return atl_fail(e, "stream of core %d %s too long", core, isa_engine_name(engine));
        int cap = s->cap ? s->cap * 2 : 16;
        AtlInsn *ni = realloc(s->insns, (size_t)cap * sizeof *ni);
        if (!ni) return atl_fail(e, "out of memory");
        s->insns = ni;
        int *nl = realloc(s->src_line, (size_t)cap * sizeof *nl);
        if (!nl) return atl_fail(e, "out of memory");
        s->src_line = nl;
        s->cap = cap;
    }
    s->insns[s->count] = *in;
    s->src_line[s->count] = line;
    s->count++;
    return 0;
}

void prog_free(AtlProgram *p)
{
    if (p->streams)
        for (int i = 0; i < p->ncores * ISA_NUM_ENGINES; i++) {
            free(p->streams[i].insns);
            free(p->streams[i].src_line);
        }
    free(p->streams);
    for (int i = 0; i < p->nsegs; i++) free(p->segs[i].bytes);
    free(p->segs);
    for (int i = 0; i < p->nregions; i++) free(p->regions[i].expect);
    free(p->regions);
    memset(p, 0, sizeof *p);
}

size_t prog_region_bytes(const AtlRegion *r)
{
    size_t n = (size_t)isa_dtype_size(r->dtype);
    for (int i = 0; i < r->ndim && i < 4; i++) n *= r->shape[i];
    return n;
}

/* ---- serialisation ---- */

typedef struct {
    uint8_t *d;
    size_t len, cap;
    int oom;
} Buf;

static void buf_put(Buf *b, const void *src, size_t n)
{
    if (b->oom) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        uint8_t *nd = realloc(b->d, cap);
        if (!nd) { b->oom = 1; return; }
        b->d = nd;
        b->cap = cap;
    }
    memcpy(b->d + b->len, src, n);
    b->len += n;
}

static void buf_u32(Buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    buf_put(b, x, 4);
}

static void buf_u64(Buf *b, uint64_t v)
{
    buf_u32(b, (uint32_t)v);
    buf_u32(b, (uint32_t)(v >> 32));
}

static void buf_name(Buf *b, const char *name)
{
    char n[PROG_NAME_BYTES] = {0};
    size_t len = strnlen(name, PROG_NAME_BYTES - 1);
    memcpy(n, name, len);
    buf_put(b, n, PROG_NAME_BYTES);
}

int prog_serialize(const AtlProgram *p, uint8_t **out, size_t *size, AtlErr *e)
{
    *out = NULL;
    *size = 0;
    Buf b = {0};
    buf_put(&b, PROG_MAGIC, 8);
    buf_u32(&b, PROG_VERSION);
    buf_u32(&b, (uint32_t)p->ncores);
    buf_u32(&b, (uint32_t)p->nsegs);
    buf_u32(&b, (uint32_t)p->nregions);
    int nstreams = p->ncores * ISA_NUM_ENGINES;
    for (int i = 0; i < nstreams; i++) buf_u32(&b, (uint32_t)p->streams[i].count);
    for (int i = 0; i < nstreams; i++) {
        const AtlStream *s = &p->streams[i];
        for (int j = 0; j < s->count; j++) {
            uint8_t enc[ISA_INSN_BYTES];
            if (isa_encode(&s->insns[j], enc, e)) {
                free(b.d);
                return atl_err_prefix(e, "core %d %s insn %d", i / ISA_NUM_ENGINES,
                                      isa_engine_name(i % ISA_NUM_ENGINES), j);
            }
            buf_put(&b, enc, sizeof enc);
        }
    }
    for (int i = 0; i < p->nsegs; i++) {
        const AtlDataSeg *g = &p->segs[i];
        buf_name(&b, g->name);
        buf_u64(&b, g->addr);
        buf_u64(&b, g->size);
        if (g->size) buf_put(&b, g->bytes, g->size);
    }
    for (int i = 0; i < p->nregions; i++) {
        const AtlRegion *r = &p->regions[i];
        buf_name(&b, r->name);
        buf_u64(&b, r->addr);
        buf_u32(&b, (uint32_t)r->dtype);
        buf_u32(&b, (uint32_t)r->ndim);
        for (int k = 0; k < 4; k++) buf_u32(&b, r->shape[k]);
        uint64_t tb;
        memcpy(&tb, &r->tolerance, 8);
        buf_u64(&b, tb);
        buf_u32(&b, r->expect ? 1 : 0);
        if (r->expect) buf_put(&b, r->expect, prog_region_bytes(r));
    }
    if (!b.oom) buf_u32(&b, (uint32_t)crc32(0L, b.d, (uInt)b.len));
    if (b.oom) { free(b.d); return atl_fail(e, "out of memory"); }
    *out = b.d;
    *size = b.len;
    return 0;
}

int prog_save(const AtlProgram *p, const char *path, AtlErr *e)
{
    uint8_t *d;
    size_t n;
    if (prog_serialize(p, &d, &n, e)) return atl_err_prefix(e, "%s", path);
    int rc = atl_write_file_atomic(path, d, n, e);
    free(d);
    return rc;
}

/* ---- parsing ---- */

typedef struct {
    const uint8_t *d;
    size_t len, pos;
    const char *name;
} Rd;

static int rd_need(Rd *r, size_t n, const char *what, AtlErr *e)
{
    if (r->len - r->pos < n)
        return atl_fail(e, "%s: truncated at byte %zu reading %s (%zu bytes needed, %zu left)",
                        r->name, r->pos, what, n, r->len - r->pos);
    return 0;
}

static uint32_t rd_u32(Rd *r)
{
    const uint8_t *x = r->d + r->pos;
    r->pos += 4;
    return (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
}

static uint64_t rd_u64(Rd *r)
{
    uint64_t lo = rd_u32(r);
    return lo | (uint64_t)rd_u32(r) << 32;
}

int prog_valid_name(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_') || strlen(s) >= PROG_NAME_BYTES) return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '.')) return 0;
    return 1;
}

/* A name field: an assembler name (prog_valid_name), NUL-padded to 64 bytes. */
static int rd_name(Rd *r, char *out, const char *what, AtlErr *e)
{
    if (rd_need(r, PROG_NAME_BYTES, what, e)) return -1;
    const uint8_t *s = r->d + r->pos;
    const uint8_t *nul = memchr(s, 0, PROG_NAME_BYTES);
    if (!nul) return atl_fail(e, "%s: %s at byte %zu is not NUL-terminated", r->name, what, r->pos);
    for (const uint8_t *q = nul; q < s + PROG_NAME_BYTES; q++)
        if (*q) return atl_fail(e, "%s: %s at byte %zu is not NUL-padded", r->name, what, r->pos);
    if (!prog_valid_name((const char *)s)) return atl_fail(e, "%s: %s at byte %zu is not a valid name", r->name, what, r->pos);
    memcpy(out, s, PROG_NAME_BYTES);
    r->pos += PROG_NAME_BYTES;
    return 0;
}

#define LOAD_FAIL(...) do { atl_fail(e, __VA_ARGS__); goto fail; } while (0)
int prog_load_mem(const char *name, const uint8_t *data, size_t size, AtlProgram *p, AtlErr *e)
{
    memset(p, 0, sizeof *p);
    Rd r = {data, size, 0, name};
    if (size < 8 || memcmp(data, PROG_MAGIC, 8) != 0) return atl_fail(e, "%s: not an Atoll program image (bad magic)", name);
    if (size < 28) return atl_fail(e, "%s: truncated header (%zu bytes)", name, size);
    uint32_t want = (uint32_t)data[size - 4] | (uint32_t)data[size - 3] << 8 | (uint32_t)data[size - 2] << 16 |
                    (uint32_t)data[size - 1] << 24;
    uint32_t got = (uint32_t)crc32(0L, data, (uInt)(size - 4));
    r.pos = 8;
    uint32_t version = rd_u32(&r);
    if (version != PROG_VERSION) return atl_fail(e, "%s: unsupported image version %" PRIu32 " (this reader knows %d)", name, version, PROG_VERSION);
    if (want != got) return atl_fail(e, "%s: checksum mismatch (stored %08" PRIx32 ", computed %08" PRIx32 "): file is corrupt", name, want, got);
    r.len = size - 4;
    uint32_t ncores = rd_u32(&r), nsegs = rd_u32(&r), nregions = rd_u32(&r);
    if (ncores < 1 || ncores > PROG_MAX_CORES) return atl_fail(e, "%s: core count %" PRIu32 " out of range 1..%d", name, ncores, PROG_MAX_CORES);
    size_t nstreams = (size_t)ncores * ISA_NUM_ENGINES;
    if (rd_need(&r, 4 * nstreams, "stream counts", e)) return -1;
    if (nsegs > r.len / (PROG_NAME_BYTES + 16)) return atl_fail(e, "%s: segment count %" PRIu32 " exceeds the file size", name, nsegs);
    if (nregions > r.len / (PROG_NAME_BYTES + 44)) return atl_fail(e, "%s: region count %" PRIu32 " exceeds the file size", name, nregions);
    if (prog_init(p, (int)ncores, e)) return atl_err_prefix(e, "%s", name);
    snprintf(p->source, sizeof p->source, "%s", name);
    uint32_t *counts = malloc(nstreams * sizeof *counts);
    if (!counts) LOAD_FAIL("out of memory");
    uint64_t total = 0;
    for (size_t i = 0; i < nstreams; i++) { counts[i] = rd_u32(&r); total += counts[i]; }
    if (total > (r.len - r.pos) / ISA_INSN_BYTES) {
        free(counts);
        prog_free(p);
        return atl_fail(e, "%s: instruction counts (%" PRIu64 " in all) exceed the file size", name, total);
    }
    for (size_t i = 0; i < nstreams; i++) {
        int core = (int)(i / ISA_NUM_ENGINES), eng = (int)(i % ISA_NUM_ENGINES);
        for (uint32_t j = 0; j < counts[i]; j++) {
            AtlInsn in;
            if (isa_decode(r.d + r.pos, &in, e)) {
                free(counts);
                prog_free(p);
                return atl_err_prefix(e, "%s: core %d %s insn %" PRIu32, name, core, isa_engine_name(eng), j);
            }
            int oe = isa_ops[in.op].engine;
            if (oe != ISA_ENGINE_ANY && oe != eng) {
                free(counts);
                prog_free(p);
                return atl_fail(e, "%s: core %d %s insn %" PRIu32 ": %s is a %s instruction", name, core,
                                isa_engine_name(eng), j, isa_ops[in.op].mnemonic, isa_engine_name(oe));
            }
            r.pos += ISA_INSN_BYTES;
            if (prog_append(p, core, eng, &in, 0, e)) { free(counts); goto fail; }
        }
    }
    free(counts);
    if (nsegs) {
        p->segs = calloc(nsegs, sizeof *p->segs);
        if (!p->segs) LOAD_FAIL("out of memory");
    }
    for (uint32_t i = 0; i < nsegs; i++) {
        AtlDataSeg *g = &p->segs[i];
        p->nsegs = (int)i + 1;
        if (rd_name(&r, g->name, "segment name", e) || rd_need(&r, 16, "segment header", e)) goto fail;
        g->addr = rd_u64(&r);
        uint64_t sz = rd_u64(&r);
        if (sz > r.len - r.pos) LOAD_FAIL("%s: segment %s: size %" PRIu64 " exceeds the file size", name, g->name, sz);
        if (sz == 0) LOAD_FAIL("%s: segment %s is empty", name, g->name);
        if (g->addr + sz < g->addr) LOAD_FAIL("%s: segment %s: address + size overflows", name, g->name);
        g->size = (size_t)sz;
        g->bytes = malloc(sz ? sz : 1);
        if (!g->bytes) LOAD_FAIL("out of memory");
        memcpy(g->bytes, r.d + r.pos, sz);
        r.pos += sz;
    }
    if (nregions) {
        p->regions = calloc(nregions, sizeof *p->regions);
        if (!p->regions) LOAD_FAIL("out of memory");
    }
    for (uint32_t i = 0; i < nregions; i++) {
        AtlRegion *g = &p->regions[i];
        p->nregions = (int)i + 1;
        if (rd_name(&r, g->name, "region name", e) || rd_need(&r, 44, "region header", e)) goto fail;
        g->addr = rd_u64(&r);
        uint32_t dt = rd_u32(&r), nd = rd_u32(&r);
        for (int k = 0; k < 4; k++) g->shape[k] = rd_u32(&r);
        uint64_t tb = rd_u64(&r);
        memcpy(&g->tolerance, &tb, 8);
        uint32_t has = rd_u32(&r);
        if (dt >= ISA_NUM_DTYPES) LOAD_FAIL("%s: region %s: bad dtype code %" PRIu32, name, g->name, dt);
        if (nd < 1 || nd > 4) LOAD_FAIL("%s: region %s: rank %" PRIu32 " out of range 1..4", name, g->name, nd);
        g->dtype = (int)dt;
        g->ndim = (int)nd;
        uint64_t bytes = (uint64_t)isa_dtype_size(g->dtype);
        for (uint32_t k = 0; k < 4; k++) {
            if (k < nd && (g->shape[k] == 0 || g->shape[k] > (1u << 30))) LOAD_FAIL("%s: region %s: dimension %" PRIu32 " is %" PRIu32, name, g->name, k, g->shape[k]);
            if (k >= nd && g->shape[k] != 0) LOAD_FAIL("%s: region %s: unused dimension %" PRIu32 " is not zero", name, g->name, k);
            if (k < nd) bytes *= g->shape[k];
            if (bytes > ((uint64_t)1 << 40)) LOAD_FAIL("%s: region %s: too large", name, g->name);
        }
        if (!isfinite(g->tolerance) || g->tolerance < 0) LOAD_FAIL("%s: region %s: bad tolerance", name, g->name);
        if (signbit(g->tolerance)) LOAD_FAIL("%s: region %s: negative tolerance", name, g->name);
        if (!has && g->tolerance != 0) LOAD_FAIL("%s: region %s: an output region has a tolerance", name, g->name);
        if (has > 1) LOAD_FAIL("%s: region %s: bad expect flag %" PRIu32, name, g->name, has);
        if (g->addr + bytes < g->addr) LOAD_FAIL("%s: region %s: address + size overflows", name, g->name);
        if (has) {
            if (bytes > r.len - r.pos) LOAD_FAIL("%s: region %s: expected values (%" PRIu64 " bytes) exceed the file size", name, g->name, bytes);
            g->expect = malloc(bytes ? bytes : 1);
            if (!g->expect) LOAD_FAIL("out of memory");
            memcpy(g->expect, r.d + r.pos, bytes);
            r.pos += bytes;
        }
    }
    if (r.pos != r.len) LOAD_FAIL("%s: %zu unexpected trailing bytes", name, r.len - r.pos);
    /* the invariants the assembler enforces, so that every image disassembles
     * to text that assembles again */
    for (int i = 0; i < p->nsegs; i++) {
        const AtlDataSeg *g = &p->segs[i];
        if (g->addr + g->size > PROG_ADDR_LIMIT) LOAD_FAIL("%s: segment %s lies beyond the 40-bit address space", name, g->name);
        for (int j = 0; j < i; j++) {
            const AtlDataSeg *h = &p->segs[j];
            if (!strcmp(g->name, h->name)) LOAD_FAIL("%s: segment name %s used twice", name, g->name);
            if (g->addr < h->addr + h->size && h->addr < g->addr + g->size) LOAD_FAIL("%s: segment %s overlaps %s", name, g->name, h->name);
        }
    }
    for (int i = 0; i < p->nregions; i++) {
        const AtlRegion *g = &p->regions[i];
        if (g->addr + prog_region_bytes(g) > PROG_ADDR_LIMIT) LOAD_FAIL("%s: region %s lies beyond the 40-bit address space", name, g->name);
        for (int j = 0; j < i; j++)
            if (!strcmp(g->name, p->regions[j].name)) LOAD_FAIL("%s: region name %s used twice", name, g->name);
    }
    return 0;
fail:
    prog_free(p);
    return -1;
}
#undef LOAD_FAIL

int prog_load(const char *path, AtlProgram *p, AtlErr *e)
{
    unsigned char *d;
    size_t n;
    memset(p, 0, sizeof *p);
    if (atl_read_file(path, &d, &n, e)) return -1;
    int rc = prog_load_mem(path, d, n, p, e);
    free(d);
    return rc;
}

int prog_load_any(const char *path, AtlProgram *p, AtlErr *e)
{
    unsigned char *d;
    size_t n;
    memset(p, 0, sizeof *p);
    if (atl_read_file(path, &d, &n, e)) return -1;
    int rc;
    if (n >= 8 && !memcmp(d, PROG_MAGIC, 8)) {
        rc = prog_load_mem(path, d, n, p, e);
    } else if (memchr(d, 0, n)) {
        rc = atl_fail(e, "%s: neither an Atoll program image nor assembler text (contains NUL bytes)", path);
    } else {
        rc = prog_assemble(path, (const char *)d, p, e);
    }
    free(d);
    return rc;
}
