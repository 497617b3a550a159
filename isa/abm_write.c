/* abm_write.c - host-side builder and serialiser of .abm models.
 *
 * The compiler describes a model piece by piece (nets, variants, tensors,
 * command streams, weight blobs, memory plan, metadata); abm_serialize lays
 * it out as specified in docs/abm-format.md. Weight blobs are deduplicated
 * by content (a hash of 8-byte words, then memcmp; the FNV-1a hash the file
 * records only for the blobs stored) and zlib-compressed one by one when
 * that makes them smaller; other sections are compressed whole under the
 * same rule. Before returning, the serialised bytes are parsed back with the
 * reader, so a writer bug can never produce a file the firmware rejects.
 */
#include "isa/abm.h"
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "util/file.h"

typedef struct Buf { uint8_t *p; size_t n, cap; } Buf;

static int buf_reserve(Buf *b, size_t more)
{
    if (more <= b->cap - b->n) return 0;
    if (more > SIZE_MAX / 2 - b->n) return -1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->n < more) cap *= 2;
    uint8_t *np = realloc(b->p, cap);
    if (!np) return -1;
    b->p = np;
    b->cap = cap;
    return 0;
}
static int buf_put(Buf *b, const void *d, size_t n)
{
    if (buf_reserve(b, n)) return -1;
    if (n) memcpy(b->p + b->n, d, n);
    b->n += n;
    return 0;
}
static int buf_zero(Buf *b, size_t n)
{
    if (n == 0) return 0;
    if (buf_reserve(b, n)) return -1;
    memset(b->p + b->n, 0, n);
    b->n += n;
    return 0;
}
static int buf_align(Buf *b) { return buf_zero(b, (ABM_ALIGN - b->n % ABM_ALIGN) % ABM_ALIGN); }
static int put8(Buf *b, uint32_t x) { uint8_t c = (uint8_t)x; return buf_put(b, &c, 1); }
static int put32(Buf *b, uint32_t x)
{
    uint8_t c[4] = { (uint8_t)x, (uint8_t)(x >> 8), (uint8_t)(x >> 16), (uint8_t)(x >> 24) };
    return buf_put(b, c, 4);
}
static int put64(Buf *b, uint64_t x) { return put32(b, (uint32_t)x) || put32(b, (uint32_t)(x >> 32)); }
static void set32(uint8_t *p, uint32_t x) { p[0] = (uint8_t)x; p[1] = (uint8_t)(x >> 8); p[2] = (uint8_t)(x >> 16); p[3] = (uint8_t)(x >> 24); }
static void set64(uint8_t *p, uint64_t x) { set32(p, (uint32_t)x); set32(p + 4, (uint32_t)(x >> 32)); }
static void set16(uint8_t *p, uint32_t x) { p[0] = (uint8_t)x; p[1] = (uint8_t)(x >> 8); }

typedef struct WTensor {
    AbmTensorDesc d;              /* name, scale, zero_point owned */
    uint32_t blob;
} WTensor;

typedef struct WStage {
    uint32_t net, batch, cores;
    uint64_t activation_bytes, io_bytes;
    WTensor *tensors;
    size_t n_tensors, cap_tensors;
    Buf *streams;                 /* cores x ABM_ENGINES */
    AbmLayer *layers;             /* rows of the layers section (strings owned) */
    size_t n_layers, cap_layers;
    AbmStage *stages;             /* rows of the stages section (strings owned) */
    size_t n_stages, cap_stages;
} WStage;

typedef struct WBlob {
    uint64_t dram_offset, raw_size, stored_size, hash;
    uint64_t key;                 /* blob_key: the dedup table's */
    uint32_t crc32, compression;
    uint8_t *raw, *stored;        /* stored == raw when uncompressed */
} WBlob;

struct AbmWriter {
    uint64_t chip;
    uint32_t flags;
    int level;
    char **nets;
    size_t n_nets, cap_nets;
    WStage *variants;
    size_t n_variants, cap_variants;
    WBlob *blobs;
    size_t n_blobs, cap_blobs;
    uint64_t weight_end;          /* next free DRAM offset in the weight region */
    uint32_t *hash_slots;         /* open addressing: blob index + 1, 0 = empty */
    size_t n_slots;
    uint64_t dedup_hits;
    char *producer, *options;
    int has_meta;
    uint8_t source_hash[ABM_HASH_BYTES];
};

/* Grows *arr (of *cap elements of size sz) to hold n + 1. */
static int grow(void *arr, size_t *cap, size_t n, size_t sz)
{
    void **a = arr;
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 8;
    if (nc > SIZE_MAX / sz) return -1;
    void *np = realloc(*a, nc * sz);
    if (!np) return -1;
    *a = np;
    *cap = nc;
    return 0;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

AbmWriter *abm_writer_new(uint64_t chip_fingerprint)
{
    AbmWriter *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->chip = chip_fingerprint;
    w->level = 6;
    w->producer = dup_str("");
    w->options = dup_str("");
    if (!w->producer || !w->options) { abm_writer_free(w); return NULL; }
    return w;
}

void abm_writer_free(AbmWriter *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->n_nets; i++) free(w->nets[i]);
    free(w->nets);
    for (size_t i = 0; i < w->n_variants; i++) {
        WStage *s = &w->variants[i];
        for (size_t k = 0; k < s->n_tensors; k++) {
            free((char *)s->tensors[k].d.name);
            free((float *)s->tensors[k].d.scale);
            free((int32_t *)s->tensors[k].d.zero_point);
        }
        free(s->tensors);
        for (size_t k = 0; k < s->n_layers; k++) {
            free((char *)s->layers[k].name);
            free((char *)s->layers[k].op);
            free((char *)s->layers[k].split);
        }
        free(s->layers);
        for (size_t k = 0; k < s->n_stages; k++) free((char *)s->stages[k].input);
        free(s->stages);
        for (size_t k = 0; s->streams && k < (size_t)s->cores * ABM_ENGINES; k++) free(s->streams[k].p);
        free(s->streams);
    }
    free(w->variants);
    for (size_t i = 0; i < w->n_blobs; i++) {
        if (w->blobs[i].stored != w->blobs[i].raw) free(w->blobs[i].stored);
        free(w->blobs[i].raw);
    }
    free(w->blobs);
    free(w->hash_slots);
    free(w->producer);
    free(w->options);
    free(w);
}

uint64_t abm_writer_chip(const AbmWriter *w) { return w->chip; }
uint32_t abm_writer_variant_count(const AbmWriter *w) { return (uint32_t)w->n_variants; }
int abm_writer_has_metadata(const AbmWriter *w) { return w->has_meta; }

int abm_writer_find_net(const AbmWriter *w, const char *name, uint32_t *net)
{
    for (size_t i = 0; i < w->n_nets; i++)
        if (!strcmp(w->nets[i], name)) { *net = (uint32_t)i; return 0; }
    return -1;
}

void abm_writer_set_level(AbmWriter *w, int level) { w->level = level < 0 ? 0 : level > 9 ? 9 : level; }
void abm_writer_set_flags(AbmWriter *w, uint32_t flags) { w->flags = flags & ABM_FLAGS_KNOWN; }

int abm_add_net(AbmWriter *w, const char *name, uint32_t *net, AtlErr *e)
{
    if (!name || !*name) return atl_fail(e, "abm_add_net: a net needs a name");
    for (size_t i = 0; i < w->n_nets; i++)
        if (!strcmp(w->nets[i], name)) return atl_fail(e, "abm_add_net: net '%s' already exists", name);
    if (grow(&w->nets, &w->cap_nets, w->n_nets, sizeof *w->nets)) return atl_fail(e, "abm_add_net: out of memory");
    if (!(w->nets[w->n_nets] = dup_str(name))) return atl_fail(e, "abm_add_net: out of memory");
    if (net) *net = (uint32_t)w->n_nets;
    w->n_nets++;
    return 0;
}

int abm_add_variant(AbmWriter *w, uint32_t net, uint32_t batch, uint32_t core_count, uint32_t *variant, AtlErr *e)
{
    if (net >= w->n_nets) return atl_fail(e, "abm_add_variant: net %u does not exist (%zu nets)", net, w->n_nets);
    if (batch == 0) return atl_fail(e, "abm_add_variant: net '%s': batch must be at least 1", w->nets[net]);
    if (core_count == 0 || core_count > ABM_MAX_CORES)
        return atl_fail(e, "abm_add_variant: net '%s': core count %u must be 1..%u", w->nets[net], core_count, ABM_MAX_CORES);
    if (grow(&w->variants, &w->cap_variants, w->n_variants, sizeof *w->variants)) return atl_fail(e, "abm_add_variant: out of memory");
    WStage *s = &w->variants[w->n_variants];
    memset(s, 0, sizeof *s);
    s->streams = calloc((size_t)core_count * ABM_ENGINES, sizeof *s->streams);
    if (!s->streams) return atl_fail(e, "abm_add_variant: out of memory");
    s->net = net;
    s->batch = batch;
    s->cores = core_count;
    if (variant) *variant = (uint32_t)w->n_variants;
    w->n_variants++;
    return 0;
}

int abm_set_mem_plan(AbmWriter *w, uint32_t variant, uint64_t activation_bytes, uint64_t io_bytes, AtlErr *e)
{
    if (variant >= w->n_variants) return atl_fail(e, "abm_set_mem_plan: variant %u does not exist", variant);
    w->variants[variant].activation_bytes = activation_bytes;
    w->variants[variant].io_bytes = io_bytes;
    return 0;
}

int abm_set_stream(AbmWriter *w, uint32_t variant, uint32_t core, uint32_t engine, const void *bytes, size_t len, AtlErr *e)
{
    if (variant >= w->n_variants) return atl_fail(e, "abm_set_stream: variant %u does not exist", variant);
    WStage *s = &w->variants[variant];
    if (core >= s->cores) return atl_fail(e, "abm_set_stream: variant %u has %u cores, no core %u", variant, s->cores, core);
    if (engine >= ABM_ENGINES) return atl_fail(e, "abm_set_stream: engine %u does not exist (0 dma, 1 matrix, 2 vector)", engine);
    if (len % ABM_INSN_BYTES)
        return atl_fail(e, "abm_set_stream: variant %u core %u engine %s: %zu bytes is not a multiple of the %u-byte instruction",
                        variant, core, abm_engine_name(engine), len, ABM_INSN_BYTES);
    Buf *b = &s->streams[(size_t)core * ABM_ENGINES + engine];
    b->n = 0;
    if (buf_put(b, bytes, len)) return atl_fail(e, "abm_set_stream: out of memory");
    return 0;
}

int abm_set_metadata(AbmWriter *w, const char *producer, const char *options, const uint8_t hash[ABM_HASH_BYTES], AtlErr *e)
{
    char *p = dup_str(producer ? producer : ""), *o = dup_str(options ? options : "");
    if (!p || !o) { free(p); free(o); return atl_fail(e, "abm_set_metadata: out of memory"); }
    free(w->producer);
    free(w->options);
    w->producer = p;
    w->options = o;
    w->has_meta = 1;
    if (hash) memcpy(w->source_hash, hash, ABM_HASH_BYTES);
    else memset(w->source_hash, 0, ABM_HASH_BYTES);
    return 0;
}

int abm_add_layer(AbmWriter *w, uint32_t variant, const AbmLayer *l, AtlErr *e)
{
    if (variant >= w->n_variants) return atl_fail(e, "abm_add_layer: no variant %u", variant);
    if (l->flags & ~ABM_LAYER_MATRIX) return atl_fail(e, "abm_add_layer: unknown flags 0x%x", l->flags);
    WStage *s = &w->variants[variant];
    if (grow(&s->layers, &s->cap_layers, s->n_layers, sizeof *s->layers)) return atl_fail(e, "abm_add_layer: out of memory");
    AbmLayer c = *l;
    c.variant = variant;
    c.name = dup_str(l->name ? l->name : "");
    c.op = dup_str(l->op ? l->op : "");
    c.split = dup_str(l->split ? l->split : "");
    if (!c.name || !c.op || !c.split) {
        free((char *)c.name); free((char *)c.op); free((char *)c.split);
        return atl_fail(e, "abm_add_layer: out of memory");
    }
    s->layers[s->n_layers++] = c;
    return 0;
}

int abm_add_stage(AbmWriter *w, uint32_t variant, const AbmStage *st, AtlErr *e)
{
    if (variant >= w->n_variants) return atl_fail(e, "abm_add_stage: no variant %u", variant);
    WStage *s = &w->variants[variant];
    if (!st->layers || !st->micro_batch || !st->instances || !st->cores)
        return atl_fail(e, "abm_add_stage: stage %zu of variant %u has no layers, micro-batch, instances or cores", s->n_stages,
                        variant);
    uint64_t next = s->n_stages ? (uint64_t)s->stages[s->n_stages - 1].first_layer + s->stages[s->n_stages - 1].layers : 0;
    if (st->first_layer < next)
        return atl_fail(e, "abm_add_stage: stage %zu of variant %u starts at layer %u, inside the previous stage's layers",
                        s->n_stages, variant, st->first_layer);
    if (grow(&s->stages, &s->cap_stages, s->n_stages, sizeof *s->stages)) return atl_fail(e, "abm_add_stage: out of memory");
    AbmStage c = *st;
    c.variant = variant;
    c.stage = (uint32_t)s->n_stages;
    if (!(c.input = dup_str(st->input ? st->input : ""))) return atl_fail(e, "abm_add_stage: out of memory");
    s->stages[s->n_stages++] = c;
    return 0;
}

/* ---- weights ---- */

/* The dedup table's key of a blob: its 8-byte words in four lanes, each
 * xor-multiply-shift, then the tail bytes. FNV-1a (abm_hash64, what the
 * file records) goes a byte at a time, a chain of multiplies: a compile
 * offers every weight again for each plan it builds (ResNet-50: twice
 * 100 MB), and that hash of the duplicates was 2% of it. */
static uint64_t blob_key(const uint8_t *p, size_t len)
{
    const uint64_t m = 0x9e3779b97f4a7c15ull;
    uint64_t h[4] = {len, 1, 2, 3};
    size_t i = 0;
    for (; i + 32 <= len; i += 32)
        for (int l = 0; l < 4; l++) {
            uint64_t x;
            memcpy(&x, p + i + 8 * (size_t)l, 8);
            h[l] = (h[l] ^ x) * m;
            h[l] ^= h[l] >> 29;
        }
    uint64_t r = h[0] ^ (h[1] * 3) ^ (h[2] * 5) ^ (h[3] * 7);
    for (; i < len; i++) r = (r ^ p[i]) * 0x100000001b3ull;
    return (r ^ (r >> 31)) * m;
}

static int slots_insert(AbmWriter *w, uint64_t hash, uint32_t idx)
{
    if ((w->n_blobs + 1) * 2 > w->n_slots) {
        size_t ns = w->n_slots ? w->n_slots * 2 : 64;
        uint32_t *sl = calloc(ns, sizeof *sl);
        if (!sl) return -1;
        for (size_t i = 0; i < w->n_slots; i++) {
            if (!w->hash_slots[i]) continue;
            size_t j = w->blobs[w->hash_slots[i] - 1].key & (ns - 1);
            while (sl[j]) j = (j + 1) & (ns - 1);
            sl[j] = w->hash_slots[i];
        }
        free(w->hash_slots);
        w->hash_slots = sl;
        w->n_slots = ns;
    }
    size_t j = hash & (w->n_slots - 1);
    while (w->hash_slots[j]) j = (j + 1) & (w->n_slots - 1);
    w->hash_slots[j] = idx + 1;
    return 0;
}

/* Deflates src; *out is malloc'd. -1 on failure, 1 when not smaller. */
static int try_deflate(const uint8_t *src, uint64_t n, int level, uint8_t **out, uint64_t *out_n)
{
    *out = NULL;
    if (level <= 0 || n == 0 || n > (uint64_t)(uLong)-1 / 2) return 1;
    uLong bound = compressBound((uLong)n);
    uint8_t *dst = malloc(bound);
    if (!dst) return -1;
    uLongf dn = bound;
    if (compress2(dst, &dn, src, (uLong)n, level) != Z_OK) { free(dst); return -1; }
    if (dn >= n) { free(dst); return 1; }
    *out = dst;
    *out_n = dn;
    return 0;
}

/* abm_add_weight and abm_add_weight_take: data is the caller's to keep
 * (copied when stored) or, with owned, the writer's from now on (stored
 * as it is, freed when a duplicate or on failure). */
static int add_weight(AbmWriter *w, void *data, size_t len, int owned, uint64_t *offset, AtlErr *e)
{
    if (len == 0) { if (owned) free(data); return atl_fail(e, "abm_add_weight: empty weight blob"); }
    uint64_t key = blob_key(data, len);
    for (size_t j = w->n_slots ? key & (w->n_slots - 1) : 0; w->n_slots && w->hash_slots[j]; j = (j + 1) & (w->n_slots - 1)) {
        WBlob *b = &w->blobs[w->hash_slots[j] - 1];
        if (b->key == key && b->raw_size == len && !memcmp(b->raw, data, len)) {
            w->dedup_hits++;
            if (offset) *offset = b->dram_offset;
            if (owned) free(data);
            return 0;
        }
    }
    if (w->weight_end > UINT64_MAX - ABM_ALIGN - len || grow(&w->blobs, &w->cap_blobs, w->n_blobs, sizeof *w->blobs)) {
        if (owned) free(data);
        return atl_fail(e, w->weight_end > UINT64_MAX - ABM_ALIGN - len ? "abm_add_weight: weight region overflows 64 bits"
                                                                         : "abm_add_weight: out of memory");
    }
    WBlob b;
    memset(&b, 0, sizeof b);
    b.raw = owned ? data : malloc(len);
    if (!b.raw) return atl_fail(e, "abm_add_weight: out of memory for %zu bytes", len);
    if (!owned) memcpy(b.raw, data, len);
    b.raw_size = len;
    b.hash = abm_hash64(data, len);
    b.key = key;
    b.crc32 = abm_crc32(b.raw, len);
    int r = try_deflate(b.raw, len, w->level, &b.stored, &b.stored_size);
    if (r < 0) { free(b.raw); return atl_fail(e, "abm_add_weight: zlib failed on a %zu-byte blob", len); }
    if (r == 1) { b.stored = b.raw; b.stored_size = len; b.compression = ABM_COMP_NONE; }
    else b.compression = ABM_COMP_ZLIB;
    b.dram_offset = w->weight_end;
    if (slots_insert(w, key, (uint32_t)w->n_blobs)) {
        if (b.stored != b.raw) free(b.stored);
        free(b.raw);
        return atl_fail(e, "abm_add_weight: out of memory");
    }
    w->blobs[w->n_blobs++] = b;
    w->weight_end = (b.dram_offset + len + ABM_ALIGN - 1) & ~(uint64_t)(ABM_ALIGN - 1);
    if (offset) *offset = b.dram_offset;
    return 0;
}

int abm_add_weight(AbmWriter *w, const void *data, size_t len, uint64_t *offset, AtlErr *e)
{
    return add_weight(w, (void *)data, len, 0, offset, e);
}

int abm_add_weight_take(AbmWriter *w, void *data, size_t len, uint64_t *offset, AtlErr *e)
{
    return add_weight(w, data, len, 1, offset, e);
}

void abm_writer_weight_stats(const AbmWriter *w, uint64_t *blobs, uint64_t *raw_bytes, uint64_t *stored_bytes, uint64_t *dedup_hits)
{
    uint64_t raw = 0, st = 0;
    for (size_t i = 0; i < w->n_blobs; i++) { raw += w->blobs[i].raw_size; st += w->blobs[i].stored_size; }
    if (blobs) *blobs = w->n_blobs;
    if (raw_bytes) *raw_bytes = raw;
    if (stored_bytes) *stored_bytes = st;
    if (dedup_hits) *dedup_hits = w->dedup_hits;
}

/* Blob whose DRAM range holds [off, off + size), or -1. */
static long find_blob(const AbmWriter *w, uint64_t off, uint64_t size)
{
    size_t lo = 0, hi = w->n_blobs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (w->blobs[mid].dram_offset <= off) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return -1;
    const WBlob *b = &w->blobs[lo - 1];
    if (off - b->dram_offset > b->raw_size || size > b->raw_size - (off - b->dram_offset)) return -1;
    return (long)(lo - 1);
}

/* ---- tensors ---- */

int abm_add_tensor(AbmWriter *w, uint32_t variant, const AbmTensorDesc *t, uint32_t *tensor, AtlErr *e)
{
    if (variant >= w->n_variants) return atl_fail(e, "abm_add_tensor: variant %u does not exist", variant);
    const char *nm = t->name ? t->name : "";
    if (t->dtype >= ABM_DTYPE_COUNT) return atl_fail(e, "abm_add_tensor: tensor '%s': unknown dtype %u", nm, t->dtype);
    if (t->role >= ABM_ROLE_COUNT) return atl_fail(e, "abm_add_tensor: tensor '%s': unknown role %u", nm, t->role);
    if (t->region >= ABM_REGION_COUNT) return atl_fail(e, "abm_add_tensor: tensor '%s': unknown region %u", nm, t->region);
    if (t->layout >= ABM_LAYOUT_COUNT) return atl_fail(e, "abm_add_tensor: tensor '%s': unknown layout %u", nm, t->layout);
    if (abm_role_region(t->role) != t->region)
        return atl_fail(e, "abm_add_tensor: tensor '%s': a tensor with role %s lives in region %s, not %s", nm,
                        abm_role_name(t->role), abm_region_name(abm_role_region(t->role)), abm_region_name(t->region));
    if (t->ndim > ABM_MAX_DIMS) return atl_fail(e, "abm_add_tensor: tensor '%s': %u dimensions, at most %u", nm, t->ndim, ABM_MAX_DIMS);
    if (t->quant_kind >= ABM_QUANT_KIND_COUNT) return atl_fail(e, "abm_add_tensor: tensor '%s': unknown quantisation kind %u", nm, t->quant_kind);
    uint64_t numel = 1;
    for (uint32_t d = 0; d < t->ndim; d++) {
        if (t->dims[d] == 0) return atl_fail(e, "abm_add_tensor: tensor '%s': dimension %u is 0", nm, d);
        if (numel > UINT64_MAX / 8 / t->dims[d]) return atl_fail(e, "abm_add_tensor: tensor '%s': element count overflows", nm);
        numel *= t->dims[d];
    }
    uint64_t dense = numel * abm_dtype_bytes(t->dtype);
    uint64_t size = t->size ? t->size : dense;
    if (t->layout == ABM_LAYOUT_OPAQUE ? size < dense : size != dense)
        return atl_fail(e, "abm_add_tensor: tensor '%s': size %llu does not match its shape and dtype (%llu bytes)", nm,
                        (unsigned long long)size, (unsigned long long)dense);
    uint32_t want = t->quant_kind == ABM_QUANT_PER_TENSOR ? 1 : 0;
    if (t->quant_kind == ABM_QUANT_PER_CHANNEL) {
        if (t->quant_axis >= t->ndim) return atl_fail(e, "abm_add_tensor: tensor '%s': quantisation axis %u but ndim %u", nm, t->quant_axis, t->ndim);
        want = t->dims[t->quant_axis];
    }
    if (t->quant_count != want)
        return atl_fail(e, "abm_add_tensor: tensor '%s': %u quantisation entries, expected %u", nm, t->quant_count, want);
    if (want && !t->scale) return atl_fail(e, "abm_add_tensor: tensor '%s': quantised but no scales given", nm);
    uint32_t blob = ABM_NO_BLOB;
    if (t->region == ABM_REGION_WEIGHTS) {
        long b = find_blob(w, t->offset, size);
        if (b < 0)
            return atl_fail(e, "abm_add_tensor: tensor '%s': weights [%llu, +%llu) are not inside one blob added with abm_add_weight",
                            nm, (unsigned long long)t->offset, (unsigned long long)size);
        blob = (uint32_t)b;
    }
    WStage *s = &w->variants[variant];
    if (grow(&s->tensors, &s->cap_tensors, s->n_tensors, sizeof *s->tensors)) return atl_fail(e, "abm_add_tensor: out of memory");
    WTensor wt;
    memset(&wt, 0, sizeof wt);
    wt.d = *t;
    wt.d.size = size;
    wt.blob = blob;
    wt.d.name = dup_str(nm);
    float *sc = want ? malloc(want * sizeof *sc) : NULL;
    int32_t *zp = want ? calloc(want, sizeof *zp) : NULL;
    if (!wt.d.name || (want && (!sc || !zp))) {
        free((char *)wt.d.name); free(sc); free(zp);
        return atl_fail(e, "abm_add_tensor: out of memory");
    }
    if (want) {
        memcpy(sc, t->scale, want * sizeof *sc);
        if (t->zero_point) memcpy(zp, t->zero_point, want * sizeof *zp);
    }
    wt.d.scale = sc;
    wt.d.zero_point = zp;
    if (tensor) *tensor = (uint32_t)s->n_tensors;
    s->tensors[s->n_tensors++] = wt;
    return 0;
}

/* ---- serialisation ---- */

typedef struct Sections {
    Buf b[ABM_SEC_LIMIT];         /* each section's bytes, but weight_data's (copied straight
                                   * from the blobs into the file: 100 MB less to copy for
                                   * ResNet-50) */
    uint64_t wdata_n;             /* weight_data's size: the stored blobs, each padded to ABM_ALIGN */
    Buf layer_strings;            /* the layers section's string pool */
    Buf stage_strings;            /* the stages section's */
    uint32_t *str_slots;          /* string offset + 1 by hash, 0 = empty */
    size_t n_slots, n_strs;
} Sections;

/* Appends s to a host table's own string pool (no sharing: its rows are
 * few); *ref its offset. */
static int pool_str(Buf *pool, const char *s, uint32_t *ref)
{
    if (pool->n > UINT32_MAX - strlen(s) - 1) return -1;
    *ref = (uint32_t)pool->n;
    return buf_put(pool, s, strlen(s) + 1);
}

/* Fills a host table's header (rows of row_bytes) and appends its strings. */
static int table_close(Buf *b, uint32_t row_bytes, const Buf *pool)
{
    if (!b->n) return 0;
    set32(b->p, (uint32_t)((b->n - ABM_LAYERS_HEADER_BYTES) / row_bytes));
    set32(b->p + 4, row_bytes);
    return buf_put(b, pool->p, pool->n);
}

/* Appends s to the strings section once; equal strings share an offset. */
static int add_str(Sections *S, const char *s, uint32_t *ref)
{
    Buf *strings = &S->b[ABM_SEC_STRINGS];
    if (!*s) { *ref = 0; return 0; }
    size_t len = strlen(s);
    if ((S->n_strs + 1) * 2 > S->n_slots) {
        size_t ns = S->n_slots ? S->n_slots * 2 : 256;
        uint32_t *sl = calloc(ns, sizeof *sl);
        if (!sl) return -1;
        for (size_t i = 0; i < S->n_slots; i++) {
            if (!S->str_slots[i]) continue;
            const char *old = (const char *)strings->p + S->str_slots[i] - 1;
            size_t j = abm_hash64(old, strlen(old)) & (ns - 1);
            while (sl[j]) j = (j + 1) & (ns - 1);
            sl[j] = S->str_slots[i];
        }
        free(S->str_slots);
        S->str_slots = sl;
        S->n_slots = ns;
    }
    size_t j = abm_hash64(s, len) & (S->n_slots - 1);
    for (; S->str_slots[j]; j = (j + 1) & (S->n_slots - 1)) {
        const char *old = (const char *)strings->p + S->str_slots[j] - 1;
        if (!strcmp(old, s)) { *ref = S->str_slots[j] - 1; return 0; }
    }
    if (strings->n + len + 1 > UINT32_MAX) return -1;
    *ref = (uint32_t)strings->n;
    if (buf_put(strings, s, len + 1)) return -1;
    S->str_slots[j] = *ref + 1;
    S->n_strs++;
    return 0;
}

/* Same batch and same input tensors (dtype, shape, in order)? */
static int same_variant(const WStage *a, const WStage *b)
{
    if (a->batch != b->batch) return 0;
    size_t i = 0, j = 0;
    for (;;) {
        while (i < a->n_tensors && a->tensors[i].d.role != ABM_ROLE_INPUT) i++;
        while (j < b->n_tensors && b->tensors[j].d.role != ABM_ROLE_INPUT) j++;
        if (i == a->n_tensors || j == b->n_tensors) return i == a->n_tensors && j == b->n_tensors;
        const AbmTensorDesc *x = &a->tensors[i].d, *y = &b->tensors[j].d;
        if (x->dtype != y->dtype || x->ndim != y->ndim || memcmp(x->dims, y->dims, x->ndim * sizeof x->dims[0])) return 0;
        i++;
        j++;
    }
}

static int build_sections(AbmWriter *w, Sections *S, AtlErr *e)
{
    Buf *str = &S->b[ABM_SEC_STRINGS];
    if (put8(str, 0)) goto oom;
    uint32_t variant_pos = 0, tensor_pos = 0, stream_pos = 0, quant_pos = 0;
    for (size_t n = 0; n < w->n_nets; n++) {
        uint32_t name, count = 0;
        for (size_t i = 0; i < w->n_variants; i++) count += w->variants[i].net == n;
        if (count == 0) return atl_fail(e, "abm_serialize: net '%s' has no variants", w->nets[n]);
        for (size_t i = 0; i < w->n_variants; i++)
            for (size_t k = i + 1; k < w->n_variants; k++)
                if (w->variants[i].net == n && w->variants[k].net == n && same_variant(&w->variants[i], &w->variants[k]))
                    return atl_fail(e, "abm_serialize: net '%s' has two variants (%zu and %zu) with batch %u and the same input shapes",
                                    w->nets[n], i, k, w->variants[i].batch);
        if (add_str(S, w->nets[n], &name)) goto oom;
        Buf *nb = &S->b[ABM_SEC_NETS];
        if (put32(nb, name) || put32(nb, variant_pos) || put32(nb, count) || put32(nb, 0)) goto oom;
        variant_pos += count;
        size_t variant_in_net = 0;
        for (size_t i = 0; i < w->n_variants; i++) {
            const WStage *s = &w->variants[i];
            if (s->net != n) continue;
            Buf *sb = &S->b[ABM_SEC_VARIANTS];
            uint32_t nstreams = s->cores * ABM_ENGINES;
            if (put32(sb, (uint32_t)n) || put32(sb, s->batch) || put32(sb, tensor_pos) || put32(sb, (uint32_t)s->n_tensors) ||
                put32(sb, stream_pos) || put32(sb, nstreams) || put32(sb, s->cores) || put32(sb, 0) ||
                put64(sb, s->activation_bytes) || put64(sb, s->io_bytes))
                goto oom;
            tensor_pos += (uint32_t)s->n_tensors;
            stream_pos += nstreams;
            for (size_t k = 0; k < s->n_tensors; k++) {
                const AbmTensorDesc *t = &s->tensors[k].d;
                Buf *tb = &S->b[ABM_SEC_TENSORS];
                uint32_t tname;
                if (add_str(S, t->name, &tname)) goto oom;
                if (put32(tb, tname) || put8(tb, t->dtype) || put8(tb, t->role) || put8(tb, t->region) || put8(tb, t->layout) ||
                    put8(tb, t->ndim) || put8(tb, t->quant_kind) || put8(tb, t->quant_axis) || put8(tb, 0) ||
                    put32(tb, s->tensors[k].blob))
                    goto oom;
                for (uint32_t d = 0; d < ABM_MAX_DIMS; d++)
                    if (put32(tb, d < t->ndim ? t->dims[d] : 0)) goto oom;
                if (put64(tb, t->offset) || put64(tb, t->size) || put32(tb, quant_pos) || put32(tb, t->quant_count)) goto oom;
                for (uint32_t q = 0; q < t->quant_count; q++) {
                    union { float f; uint32_t u; } bits;
                    bits.f = t->scale[q];
                    if (put32(&S->b[ABM_SEC_QUANT], bits.u) || put32(&S->b[ABM_SEC_QUANT], (uint32_t)t->zero_point[q])) goto oom;
                }
                quant_pos += t->quant_count;
            }
            for (uint32_t k = 0; k < nstreams; k++) {
                Buf *cb = &S->b[ABM_SEC_CMDS];
                uint64_t off = cb->n;
                if (put64(&S->b[ABM_SEC_STREAMS], off) || put64(&S->b[ABM_SEC_STREAMS], s->streams[k].n) ||
                    buf_put(cb, s->streams[k].p, s->streams[k].n) || buf_align(cb))
                    goto oom;
            }
            /* layer rows: their strings in the section's own pool, so the
             * strings section (and every byte before the layers section)
             * is the same as without them */
            uint32_t gv = variant_pos - count + (uint32_t)variant_in_net;
            for (size_t k = 0; k < s->n_layers; k++) {
                const AbmLayer *l = &s->layers[k];
                Buf *lb = &S->b[ABM_SEC_LAYERS];
                uint32_t ref[3];
                if (pool_str(&S->layer_strings, l->name, &ref[0]) || pool_str(&S->layer_strings, l->op, &ref[1]) ||
                    pool_str(&S->layer_strings, l->split, &ref[2]))
                    goto oom;
                if (!lb->n && buf_zero(lb, ABM_LAYERS_HEADER_BYTES)) goto oom;
                if (put32(lb, gv) || put32(lb, l->layer) || put32(lb, ref[0]) || put32(lb, ref[1]) || put32(lb, ref[2]) ||
                    put32(lb, l->tiles) || put32(lb, l->cores) || put32(lb, l->flags) || put64(lb, l->macs) ||
                    put64(lb, l->est_cycles) || put64(lb, l->est_compute) || put64(lb, l->est_dma))
                    goto oom;
            }
            for (size_t k = 0; k < s->n_stages; k++) {
                const AbmStage *st = &s->stages[k];
                Buf *tb = &S->b[ABM_SEC_STAGES];
                uint32_t ref;
                if (pool_str(&S->stage_strings, st->input, &ref)) goto oom;
                if (!tb->n && buf_zero(tb, ABM_STAGES_HEADER_BYTES)) goto oom;
                if (put32(tb, gv) || put32(tb, st->stage) || put32(tb, st->first_layer) || put32(tb, st->layers) ||
                    put32(tb, st->micro_batch) || put32(tb, st->instances) || put32(tb, st->cores) || put32(tb, ref) ||
                    put64(tb, st->macs) || put64(tb, st->mat_cycles) || put64(tb, st->est_cycles) || put32(tb, st->dram_tensors) ||
                    put32(tb, 0))
                    goto oom;
            }
            variant_in_net++;
        }
    }
    for (size_t i = 0; i < w->n_blobs; i++) {
        const WBlob *b = &w->blobs[i];
        Buf *wb = &S->b[ABM_SEC_WEIGHT_DIR];
        uint64_t off = S->wdata_n;
        if (put64(wb, b->dram_offset) || put64(wb, b->raw_size) || put64(wb, off) || put64(wb, b->stored_size) ||
            put32(wb, b->compression) || put32(wb, b->crc32) || put64(wb, b->hash))
            goto oom;
        S->wdata_n = (off + b->stored_size + ABM_ALIGN - 1) & ~(uint64_t)(ABM_ALIGN - 1);
    }
    uint32_t prod, opts;
    Buf *mb = &S->b[ABM_SEC_META];
    if (add_str(S, w->producer, &prod) || add_str(S, w->options, &opts) || put32(mb, prod) || put32(mb, opts) ||
        buf_put(mb, w->source_hash, ABM_HASH_BYTES))
        goto oom;
    if (str->n > UINT32_MAX) return atl_fail(e, "abm_serialize: strings section exceeds 4 GiB");
    if (table_close(&S->b[ABM_SEC_LAYERS], ABM_LAYER_BYTES, &S->layer_strings) ||
        table_close(&S->b[ABM_SEC_STAGES], ABM_STAGE_BYTES, &S->stage_strings))
        goto oom;
    return 0;
oom:
    return atl_fail(e, "abm_serialize: out of memory");
}

/* Bytes section t takes in the file: deflated, raw, or (weight_data) the
 * stored blobs with their padding. */
static uint64_t stored_len(const Sections *S, uint32_t t, const uint64_t *packed_n)
{
    if (t == ABM_SEC_WEIGHT_DATA) return S->wdata_n;
    return packed_n[t] ? packed_n[t] : S->b[t].n;
}

int abm_serialize(AbmWriter *w, uint8_t **out, size_t *out_len, AtlErr *e)
{
    *out = NULL;
    *out_len = 0;
    Sections S;
    memset(&S, 0, sizeof S);
    uint8_t *packed[ABM_SEC_LIMIT] = { 0 };
    uint64_t packed_n[ABM_SEC_LIMIT] = { 0 };
    Buf file = { 0 };
    int rc = -1;
    if (build_sections(w, &S, e)) goto done;
    /* the ten required sections, then the optional ones that have rows */
    uint32_t types[ABM_SEC_LIMIT], nsec = 0;
    for (uint32_t t = 1; t < ABM_SEC_LIMIT; t++)
        if (t <= ABM_SEC_META || S.b[t].n) types[nsec++] = t;
    /* the sections start after room for the table with a layers entry,
     * whether the file has one or not: a file with layer rows is then the
     * file without them, followed by its layers section (abm.h) */
    uint32_t room = nsec + (S.b[ABM_SEC_LAYERS].n ? 0 : 1);
    uint64_t tab = ABM_HEADER_BYTES, pos = tab + (uint64_t)room * ABM_SECTION_ENTRY_BYTES;
    pos = (pos + ABM_ALIGN - 1) & ~(uint64_t)(ABM_ALIGN - 1);
    uint64_t offs[ABM_SEC_LIMIT];
    for (uint32_t i = 0; i < nsec; i++) {
        uint32_t t = types[i];
        if (t != ABM_SEC_WEIGHT_DATA) {
            int r = try_deflate(S.b[t].p, S.b[t].n, w->level, &packed[t], &packed_n[t]);
            if (r < 0) { atl_fail(e, "abm_serialize: zlib failed on section '%s'", abm_section_name(t)); goto done; }
        }
        offs[t] = pos;
        pos += stored_len(&S, t, packed_n);
        pos = (pos + ABM_ALIGN - 1) & ~(uint64_t)(ABM_ALIGN - 1);
    }
    /* The file ends where the last section ends (no trailing padding). */
    uint64_t last = types[nsec - 1];
    uint64_t fsize = offs[last] + stored_len(&S, last, packed_n);
    if (fsize > SIZE_MAX || buf_zero(&file, (size_t)fsize)) { atl_fail(e, "abm_serialize: out of memory for %llu bytes", (unsigned long long)fsize); goto done; }
    uint8_t *f = file.p;
    for (uint32_t i = 0; i < nsec; i++) {
        uint32_t t = types[i];
        uint64_t n = stored_len(&S, t, packed_n);
        if (t == ABM_SEC_WEIGHT_DATA) {
            /* the blobs at the offsets build_sections gave them (padding stays zero) */
            uint64_t off = 0;
            for (size_t i = 0; i < w->n_blobs; i++) {
                const WBlob *b = &w->blobs[i];
                memcpy(f + offs[t] + off, b->stored, b->stored_size);
                off = (off + b->stored_size + ABM_ALIGN - 1) & ~(uint64_t)(ABM_ALIGN - 1);
            }
        } else if (n)
            memcpy(f + offs[t], packed[t] ? packed[t] : S.b[t].p, n);
        uint8_t *ent = f + tab + (uint64_t)i * ABM_SECTION_ENTRY_BYTES;
        set32(ent, t);
        set32(ent + 4, packed[t] ? ABM_COMP_ZLIB : ABM_COMP_NONE);
        set64(ent + 8, offs[t]);
        set64(ent + 16, n);
        set64(ent + 24, t == ABM_SEC_WEIGHT_DATA ? S.wdata_n : S.b[t].n);
        set32(ent + 32, abm_crc32(f + offs[t], n));
        set32(ent + 36, 0);
    }
    memcpy(f, ABM_MAGIC, 8);
    set16(f + 8, ABM_VERSION_MAJOR);
    set16(f + 10, S.b[ABM_SEC_STAGES].n ? ABM_VERSION_MINOR_STAGES : S.b[ABM_SEC_LAYERS].n ? ABM_VERSION_MINOR_LAYERS
                                                                                           : ABM_VERSION_MINOR);
    set32(f + 12, ABM_HEADER_BYTES);
    set64(f + 16, w->chip);
    set32(f + 24, w->flags);
    set32(f + 28, nsec);
    set64(f + 32, tab);
    set64(f + 40, fsize);
    set32(f + 48, abm_crc32(f + tab, (uint64_t)nsec * ABM_SECTION_ENTRY_BYTES));
    set32(f + 60, abm_crc32(f, 60));
    /* Parse it back: the writer must never emit a file the reader rejects
     * (weight_data's checksum was computed just above: not again). */
    AbmView *v = malloc(sizeof *v);
    if (!v) { atl_fail(e, "abm_serialize: out of memory"); goto done; }
    if (abm_open(v, f, (size_t)fsize, 0, ABM_OPEN_SKIP_WEIGHT_CRC, e) == 0) {
        uint8_t *scratch = malloc(v->scratch_needed);
        if (!scratch) { free(v); atl_fail(e, "abm_serialize: out of memory"); goto done; }
        int bad = abm_decode(v, scratch, v->scratch_needed, e);
        free(scratch);
        free(v);
        if (bad) { atl_err_prefix(e, "abm_serialize: the model is inconsistent"); goto done; }
    } else {
        free(v);
        atl_err_prefix(e, "abm_serialize: internal error");
        goto done;
    }
    *out = file.p;
    *out_len = (size_t)fsize;
    file.p = NULL;
    rc = 0;
done:
    for (int t = 0; t < ABM_SEC_LIMIT; t++) { free(S.b[t].p); free(packed[t]); }
    free(S.layer_strings.p);
    free(S.stage_strings.p);
    free(S.str_slots);
    free(file.p);
    return rc;
}

int abm_write_file(AbmWriter *w, const char *path, AtlErr *e)
{
    uint8_t *buf;
    size_t n;
    if (abm_serialize(w, &buf, &n, e)) return atl_err_prefix(e, "%s", path);
    int rc = atl_write_file_atomic(path, buf, n, e);
    free(buf);
    return rc;
}
