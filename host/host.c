/* host.c - the host runtime (include/atoll.h) over the simulated device
 * (sim/device.h): models go into device DRAM through mailbox commands to the
 * firmware (ALLOC, LOAD, QUERY, RUN, UNLOAD, FREE), inputs and outputs are
 * copied straight to and from their tensors' device addresses, and the
 * profile comes from the RUN results plus the per-layer records the device
 * writes to DRAM. The host keeps a copy of what QUERY reported (names,
 * shapes, addresses), so listing a model never talks to the device.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "atoll.h"
#include "isa/abm.h"
#include "isa/config.h"
#include "isa/regs.h"
#include "sim/device.h"
#include "util/err.h"
#include "util/file.h"

/* The host's status codes 1..16 are the firmware's error codes. */
enum { ATL_ERR_OK = ATL_OK };
#define X(id, v, doc) _Static_assert((int)ATL_ERR_##id == ATL_ERR_FW_##id, "atoll.h and isa/regs.h disagree on " #id);
ATL_FW_ERRORS(X)
#undef X

struct AtlDevice {
    AtlSimDevice *hw;
    char err[ATL_ERRLEN];
    AtlModel *models;
    AtlModel *last_run;           /* the model that ran last (its stages name the trace's stage slices) */
    uint32_t result[ATL_MB_RESULTS];
    char msg[ATL_MSG_BYTES];
};

typedef struct StageData {
    uint32_t global, net, index_in_net;
} StageData;

struct AtlModel {
    AtlDevice *dev;
    AtlModel *next;
    uint32_t handle;
    uint64_t image_addr;
    uint32_t n_nets, n_variants;
    AtlNetInfo *nets;
    AtlVariantInfo *variants;
    StageData *sdata;
    AtlTensorInfo *tensors;       /* per variant: inputs, then outputs */
    AtlTensorInfo *all;           /* every tensor, in file order */
    char **names;
    uint32_t n_names;
    int has_run;
    uint32_t last_variant;
    uint32_t run_result[ATL_MB_RESULTS];
    AtlLayerProfile *layers;
    uint32_t n_layers;
    AtlLayerProfile *members;     /* the layer groups' members (records with a member tag) */
    uint32_t n_members;
    AtlLayerInfo *rows;           /* the compiler's layer rows of every variant */
    char *row_text;               /* their strings */
    AtlStageInfo *stage_rows;     /* the stages of every staged variant */
    char *stage_text;             /* their strings */
    AtlStageProfile *stages;      /* of the last run's variant */
};

static AtlStatus fail(AtlDevice *d, AtlStatus s, const char *fmt, ...) ATL_PRINTF(3, 4);
static AtlStatus fail(AtlDevice *d, AtlStatus s, const char *fmt, ...)
{
    if (!d) return s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err, sizeof d->err, fmt, ap);
    va_end(ap);
    return s;
}

const char *atl_last_error(const AtlDevice *d) { return d ? d->err : "no device"; }

const char *atl_status_name(AtlStatus s)
{
    static const char *const fw[] = {
#define X(id, v, doc) [v] = #id,
        ATL_FW_ERRORS(X)
#undef X
    };
    static const char *const host[] = { "INVALID", "IO", "CONFIG", "HOST_MEMORY", "NO_VARIANT", "UNKNOWN_TENSOR", "SIZE", "NOT_RUN" };
    if ((int)s >= 0 && (int)s < ATL_ERR_FW_COUNT) return fw[s];
    if (s >= ATL_ERR_INVALID && s <= ATL_ERR_NOT_RUN) return host[s - ATL_ERR_INVALID];
    return "?";
}

/* Posts a mailbox command; results land in d->result and d->msg. */
static AtlStatus post(AtlDevice *d, uint32_t cmd, const uint32_t *args, int nargs)
{
    device_reg_write(d->hw, ATL_REG_MB_CMD, cmd);
    for (int i = 0; i < ATL_MB_ARGS; i++) device_reg_write(d->hw, ATL_REG_MB_ARG + 4 * (uint32_t)i, i < nargs ? args[i] : 0);
    device_reg_write(d->hw, ATL_REG_MB_DOORBELL, 1);
    uint32_t status = device_reg_read(d->hw, ATL_REG_MB_STATUS), code = device_reg_read(d->hw, ATL_REG_MB_ERROR);
    for (int i = 0; i < ATL_MB_RESULTS; i++) d->result[i] = device_reg_read(d->hw, ATL_REG_MB_RESULT + 4 * (uint32_t)i);
    for (uint32_t w = 0; w < ATL_REG_MB_MSG_COUNT; w++) {
        uint32_t x = device_reg_read(d->hw, ATL_REG_MB_MSG + 4 * w);
        for (int b = 0; b < 4; b++) d->msg[4 * w + (uint32_t)b] = (char)(x >> (8 * b));
    }
    d->msg[sizeof d->msg - 1] = '\0';
    if (status == ATL_MBS_DONE) return ATL_OK;
    if (status != ATL_MBS_ERROR || code == 0) return fail(d, ATL_ERR_HANG, "firmware did not complete command %u (status %u)", cmd, status);
    return fail(d, (AtlStatus)code, "%s", d->msg);
}

static uint64_t r64(const uint32_t *r, int i) { return r[i] | (uint64_t)r[i + 1] << 32; }

static AtlStatus open_common(AtlDevice **out, const AtlChip *chip, const AtlOpenOptions *opt, const char *cfg_err)
{
    AtlDevice *d = calloc(1, sizeof *d);
    *out = d;
    if (!d) return ATL_ERR_HOST_MEMORY;
    if (cfg_err) return fail(d, ATL_ERR_CONFIG, "%s", cfg_err);
    AtlDeviceOptions o = { 0 };
    if (opt) { o.fw_heap_bytes = opt->fw_heap_bytes; o.trace = opt->trace; o.max_cycles = opt->max_cycles; o.max_work = opt->max_work; o.timing_only = opt->timing_only; }
    AtlErr e;
    d->hw = device_create(chip, &o, &e);
    if (!d->hw) return fail(d, ATL_ERR_CONFIG, "%s", e.msg);
    return ATL_OK;
}

AtlStatus atl_open(AtlDevice **dev, const char *path, const AtlOpenOptions *opt)
{
    if (!dev) return ATL_ERR_INVALID;
    AtlChip chip;
    AtlErr e;
    if (!path) return open_common(dev, NULL, opt, "atl_open: no chip config path");
    if (cfg_load(path, &chip, &e)) return open_common(dev, NULL, opt, e.msg);
    return open_common(dev, &chip, opt, NULL);
}

AtlStatus atl_open_chip(AtlDevice **dev, const struct AtlChip *chip, const AtlOpenOptions *opt)
{
    if (!dev) return ATL_ERR_INVALID;
    return open_common(dev, chip, opt, chip ? NULL : "atl_open_chip: no chip");
}

static void model_free(AtlModel *m)
{
    for (uint32_t i = 0; i < m->n_names; i++) free(m->names[i]);
    free(m->names);
    free(m->nets);
    free(m->variants);
    free(m->sdata);
    free(m->tensors);
    free(m->all);
    free(m->layers);
    free(m->members);
    free(m->rows);
    free(m->row_text);
    free(m->stage_rows);
    free(m->stage_text);
    free(m->stages);
    free(m);
}

AtlStatus atl_unload(AtlModel *m)
{
    if (!m) return ATL_OK;
    AtlDevice *d = m->dev;
    uint32_t a[2] = { m->handle, 0 };
    AtlStatus s = post(d, ATL_MB_UNLOAD, a, 1);
    uint32_t f[2] = { (uint32_t)m->image_addr, (uint32_t)(m->image_addr >> 32) };
    AtlStatus s2 = post(d, ATL_MB_FREE, f, 2);
    for (AtlModel **p = &d->models; *p; p = &(*p)->next)
        if (*p == m) { *p = m->next; break; }
    if (d->last_run == m) d->last_run = NULL;
    model_free(m);
    return s ? s : s2;
}

void atl_close(AtlDevice *d)
{
    if (!d) return;
    while (d->models) atl_unload(d->models);
    device_free(d->hw);
    free(d);
}

static char *keep_name(AtlModel *m, const char *s)
{
    char *c = malloc(strlen(s) + 1);
    if (!c) return NULL;
    strcpy(c, s);
    m->names[m->n_names++] = c;
    return c;
}

/* Fills the host copy of nets, variants and io tensors with QUERY. */
static AtlStatus describe(AtlDevice *d, AtlModel *m, uint32_t n_tensors)
{
    m->nets = calloc(m->n_nets ? m->n_nets : 1, sizeof *m->nets);
    m->variants = calloc(m->n_variants ? m->n_variants : 1, sizeof *m->variants);
    m->sdata = calloc(m->n_variants ? m->n_variants : 1, sizeof *m->sdata);
    m->tensors = calloc(n_tensors ? n_tensors : 1, sizeof *m->tensors);
    m->all = calloc(n_tensors ? n_tensors : 1, sizeof *m->all);
    m->names = calloc((size_t)m->n_nets + n_tensors + 1, sizeof *m->names);
    if (!m->nets || !m->variants || !m->sdata || !m->tensors || !m->all || !m->names)
        return fail(d, ATL_ERR_HOST_MEMORY, "out of host memory");
    AtlStatus s;
    uint32_t nt = 0;
    for (uint32_t n = 0; n < m->n_nets; n++) {
        uint32_t q[4] = { m->handle, ATL_QK_NET, n, 0 };
        if ((s = post(d, ATL_MB_QUERY, q, 4))) return s;
        uint32_t first = d->result[0], count = d->result[1];
        if (first > m->n_variants || count > m->n_variants - first) return fail(d, ATL_ERR_BAD_IMAGE, "net %u: variant range out of bounds", n);
        if (!(m->nets[n].name = keep_name(m, d->msg))) return fail(d, ATL_ERR_HOST_MEMORY, "out of host memory");
        m->nets[n].n_variants = count;
        m->nets[n].variants = &m->variants[first];
        for (uint32_t k = 0; k < count; k++) {
            uint32_t g = first + k;
            uint32_t qs[4] = { m->handle, ATL_QK_VARIANT, g, 0 };
            if ((s = post(d, ATL_MB_QUERY, qs, 4))) return s;
            AtlVariantInfo *st = &m->variants[g];
            uint32_t tfirst = d->result[2], tcount = d->result[3];
            st->batch = d->result[1];
            st->cores = d->result[4];
            m->sdata[g] = (StageData){ g, n, k };
            /* inputs first, then outputs, each in file order; one QUERY per tensor */
            AtlTensorInfo *ins = &m->tensors[nt], *outs = calloc(tcount ? tcount : 1, sizeof *outs);
            uint32_t n_in = 0, n_out = 0;
            if (!outs) return fail(d, ATL_ERR_HOST_MEMORY, "out of host memory");
            if (tfirst > n_tensors || tcount > n_tensors - tfirst) {
                free(outs);
                return fail(d, ATL_ERR_BAD_IMAGE, "variant %u: tensor range out of bounds", g);
            }
            for (uint32_t t = tfirst; t < tfirst + tcount; t++) {
                uint32_t qt[4] = { m->handle, ATL_QK_TENSOR, t, 0 };
                if ((s = post(d, ATL_MB_QUERY, qt, 4))) { free(outs); return s; }
                AtlTensorInfo *ti = &m->all[t];
                if (!(ti->name = keep_name(m, d->msg))) { free(outs); return fail(d, ATL_ERR_HOST_MEMORY, "out of host memory"); }
                ti->role = (int)d->result[1];
                ti->dtype = (int)d->result[0];
                ti->ndim = (int)d->result[4];
                for (int i = 0; i < ATL_MAX_DIMS; i++) ti->dims[i] = d->result[5 + i];
                ti->device_addr = r64(d->result, 11);
                ti->bytes = r64(d->result, 13);
                ti->quant_count = d->result[17];
                ti->scale = 1.0f;
                ti->zero_point = 0;
                if (ti->quant_count) { memcpy(&ti->scale, &d->result[18], 4); ti->zero_point = (int32_t)d->result[19]; }
                if ((ti->role == ATL_ROLE_INPUT || ti->role == ATL_ROLE_OUTPUT) && nt + n_out >= n_tensors) {
                    free(outs);
                    return fail(d, ATL_ERR_BAD_IMAGE, "more inputs and outputs than the model has tensors");
                }
                if (ti->role == ATL_ROLE_INPUT) { m->tensors[nt++] = *ti; n_in++; }
                else if (ti->role == ATL_ROLE_OUTPUT) outs[n_out++] = *ti;
            }
            st->tensors = &m->all[tfirst];
            st->n_tensors = tcount;
            st->inputs = ins;
            st->n_inputs = n_in;
            st->outputs = &m->tensors[nt];
            st->n_outputs = n_out;
            for (uint32_t i = 0; i < n_out; i++) m->tensors[nt++] = outs[i];
            free(outs);
        }
    }
    return ATL_OK;
}

/* The chip an image was compiled for, by name: its metadata's options
 * start with "--chip NAME" (atoll compile); "?" when that cannot be read. */
static void image_chip_name(const void *img, size_t len, char *name, size_t cap)
{
    AbmModel m;
    snprintf(name, cap, "?");
    if (abm_load_buffer(&m, img, len, 0, ABM_LOAD_SKIP_WEIGHTS | ABM_OPEN_IGNORE_CRC, NULL)) return;
    abm_options_chip(abm_meta(&m.view).options, name, cap);
    abm_model_free(&m);
}

/* The chip fingerprint is checked before anything else (the firmware would
 * first need device memory for the image, and a model for a larger chip
 * does not fit a smaller one's): 1 and *fp set when the header is an
 * intact version-1 header, 0 otherwise (the firmware then says what is
 * wrong with it). */
static int header_chip(const uint8_t *h, size_t n, uint64_t *fp)
{
    if (n < ABM_HEADER_BYTES || memcmp(h, ABM_MAGIC, 8) || (h[8] | h[9] << 8) != ABM_VERSION_MAJOR) return 0;
    uint32_t crc = (uint32_t)h[60] | (uint32_t)h[61] << 8 | (uint32_t)h[62] << 16 | (uint32_t)h[63] << 24;
    if (abm_crc32(h, 60) != crc) return 0;
    *fp = 0;
    for (int b = 0; b < 8; b++) *fp |= (uint64_t)h[16 + b] << (8 * b);
    return 1;
}

/* ATL_OK, or ATL_ERR_CHIP naming both chips; img/len (may be NULL) is the
 * whole image, read for the model's chip name. */
static AtlStatus check_chip(AtlDevice *d, const uint8_t *hdr, size_t n, const void *img, size_t len)
{
    uint64_t fp, want = cfg_fingerprint(device_chip(d->hw));
    if (!header_chip(hdr, n, &fp) || fp == want) return ATL_OK;
    char name[64] = "?", what[96] = "another chip";
    if (img) image_chip_name(img, len, name, sizeof name);
    if (strcmp(name, "?")) snprintf(what, sizeof what, "chip '%s'", name);
    const char *dev = device_chip(d->hw)->name;
    return fail(d, ATL_ERR_CHIP,
                "the model was compiled for %s (fingerprint 0x%016llx), but the device is chip '%s' (0x%016llx): "
                "compile it for '%s'%s%s", what, (unsigned long long)fp, dev, (unsigned long long)want, dev,
                strcmp(name, "?") ? " or run it on " : "", strcmp(name, "?") ? name : "");
}

/* The compiler's layer rows (the optional layers section, raw bytes) into
 * m->rows, attached to their variants. */
static AtlStatus keep_layer_rows(AtlDevice *d, AtlModel *m, const uint8_t *raw, uint64_t n)
{
    AbmView v;
    AtlErr e;
    memset(&v, 0, sizeof v);
    v.n_variants = m->n_variants;
    if (abm_layers_view(&v, raw, n, &e)) return fail(d, ATL_ERR_BAD_IMAGE, "%s", e.msg);
    size_t text = 0;
    for (uint32_t i = 0; i < v.n_layers; i++) {
        AbmLayer l = abm_layer(&v, i);
        text += strlen(l.name) + strlen(l.op) + strlen(l.split) + 3;
    }
    m->rows = calloc(v.n_layers + 1, sizeof *m->rows);
    m->row_text = malloc(text + 1);
    if (!m->rows || !m->row_text) return fail(d, ATL_ERR_HOST_MEMORY, "out of host memory");
    char *p = m->row_text;
    for (uint32_t i = 0; i < v.n_layers; i++) {
        AbmLayer l = abm_layer(&v, i);
        AtlLayerInfo *r = &m->rows[i];
        const char *src[3] = {l.name, l.op, l.split};
        const char **dst[3] = {&r->name, &r->op, &r->split};
        for (int k = 0; k < 3; k++) { *dst[k] = p; strcpy(p, src[k]); p += strlen(src[k]) + 1; }
        r->layer = l.layer;
        r->tiles = l.tiles;
        r->cores = l.cores;
        r->matrix = (l.flags & ABM_LAYER_MATRIX) != 0;
        r->macs = l.macs;
        r->est_cycles = l.est_cycles;
        r->est_compute = l.est_compute;
        r->est_dma = l.est_dma;
        AtlVariantInfo *st = &m->variants[l.variant];  /* rows come in variant order (checked) */
        if (!st->n_layers) st->layers = r;
        st->n_layers++;
    }
    return ATL_OK;
}

/* The stages of staged variants (the optional stages section, raw bytes)
 * into m->stage_rows, attached to their variants. */
static AtlStatus keep_stage_rows(AtlDevice *d, AtlModel *m, const uint8_t *raw, uint64_t n)
{
    AbmView v;
    AtlErr e;
    memset(&v, 0, sizeof v);
    v.n_variants = m->n_variants;
    if (abm_stages_view(&v, raw, n, &e)) return fail(d, ATL_ERR_BAD_IMAGE, "%s", e.msg);
    size_t text = 0;
    for (uint32_t i = 0; i < v.n_stages; i++) text += strlen(abm_stage(&v, i).input) + 1;
    m->stage_rows = calloc(v.n_stages + 1, sizeof *m->stage_rows);
    m->stage_text = malloc(text + 1);
    if (!m->stage_rows || !m->stage_text) return fail(d, ATL_ERR_HOST_MEMORY, "out of host memory");
    char *p = m->stage_text;
    for (uint32_t i = 0; i < v.n_stages; i++) {
        AbmStage s = abm_stage(&v, i);
        AtlVariantInfo *st = &m->variants[s.variant];  /* rows come in variant order (checked) */
        if (s.cores > st->cores)
            return fail(d, ATL_ERR_BAD_IMAGE, "section 'stages' row %u: stage %u runs on %u cores, its variant has %u", i, s.stage,
                        s.cores, st->cores);
        AtlStageInfo *r = &m->stage_rows[i];
        *r = (AtlStageInfo){s.stage, s.first_layer, s.layers, s.micro_batch, s.instances, s.cores, p, s.macs, s.mat_cycles,
                            s.est_cycles, s.dram_tensors};
        strcpy(p, s.input);
        p += strlen(s.input) + 1;
        if (!st->n_stages) st->stages = r;
        st->n_stages++;
    }
    return ATL_OK;
}

/* Offset and stored size of a table entry. */
static void entry_span(const uint8_t *ent, uint64_t *off, uint64_t *stored)
{
    *off = *stored = 0;
    for (int b = 0; b < 8; b++) { *off |= (uint64_t)ent[8 + b] << (8 * b); *stored |= (uint64_t)ent[16 + b] << (8 * b); }
}

/* Keeps an optional section's rows (keep_layer_rows, keep_stage_rows). */
typedef AtlStatus (*RowKeeper)(AtlDevice *d, AtlModel *m, const uint8_t *raw, uint64_t n);

/* The rows of an optional section from its stored bytes. */
static AtlStatus rows_from_stored(AtlDevice *d, AtlModel *m, const uint8_t *ent, const uint8_t *stored, RowKeeper keep)
{
    AtlErr e;
    uint64_t n;
    uint8_t *raw = abm_entry_raw(ent, stored, &n, "model", &e);
    if (!raw) return fail(d, ATL_ERR_BAD_IMAGE, "%s", e.msg);
    AtlStatus s = keep(d, m, raw, n);
    free(raw);
    return s;
}

/* ALLOC: device memory for an image of size bytes at *addr. */
static AtlStatus alloc_image(AtlDevice *d, size_t size, uint64_t *addr)
{
    uint32_t a[3] = { (uint32_t)size, (uint32_t)((uint64_t)size >> 32), 64 };
    AtlStatus s = post(d, ATL_MB_ALLOC, a, 3);
    if (s) return fail(d, s, "model of %zu bytes does not fit device memory: %s", size, d->msg);
    *addr = r64(d->result, 0);
    if (!device_dram(d->hw, *addr, size)) return fail(d, ATL_ERR_BAD_ARG, "firmware returned a block outside DRAM");
    return ATL_OK;
}

static void free_image(AtlDevice *d, uint64_t addr)
{
    char keep[ATL_ERRLEN];
    memcpy(keep, d->err, sizeof keep);
    uint32_t f[2] = { (uint32_t)addr, (uint32_t)(addr >> 32) };
    post(d, ATL_MB_FREE, f, 2);
    memcpy(d->err, keep, sizeof keep);
}

/* Where load_image gets the compiler's layer and stage rows (host
 * information the device never sees): an image in memory, or a file. */
typedef struct RowSource {
    const uint8_t *img;        /* the whole image, or NULL */
    size_t len;
    FILE *fp;                  /* else the file, with its header and table */
    const uint8_t *head;
    size_t nhead;
    uint64_t size;
} RowSource;

/* The rows of optional section `type` (if the model has it) to keep. */
static AtlStatus read_section_rows(AtlDevice *d, AtlModel *m, const RowSource *src, uint32_t type, RowKeeper keep)
{
    const uint8_t *ent = abm_find_entry(src->img ? src->img : src->head, src->img ? src->len : src->nhead, type);
    if (!ent) return ATL_OK;
    uint64_t off, stored, total = src->img ? src->len : src->size;
    entry_span(ent, &off, &stored);
    if (off > total || stored > total - off) return fail(d, ATL_ERR_BAD_IMAGE, "section '%s' lies outside the model", abm_section_name(type));
    if (src->img) return rows_from_stored(d, m, ent, src->img + off, keep);
    uint8_t *buf = malloc(stored ? (size_t)stored : 1);
    if (!buf || fseek(src->fp, (long)off, SEEK_SET) || fread(buf, 1, (size_t)stored, src->fp) != stored) {
        free(buf);
        return fail(d, ATL_ERR_IO, "cannot read the %s section", abm_section_name(type));
    }
    AtlStatus s = rows_from_stored(d, m, ent, buf, keep);
    free(buf);
    return s;
}

static AtlStatus read_rows(AtlDevice *d, AtlModel *m, const RowSource *src)
{
    AtlStatus s = read_section_rows(d, m, src, ABM_SEC_LAYERS, keep_layer_rows);
    return s ? s : read_section_rows(d, m, src, ABM_SEC_STAGES, keep_stage_rows);
}

/* LOAD of the image at addr, then the host copy of its description and the
 * compiler's layer rows from src. The image block is freed on failure. */
static AtlStatus load_image(AtlDevice *d, uint64_t addr, size_t size, AtlModel **out, const RowSource *src)
{
    uint32_t l[4] = { (uint32_t)addr, (uint32_t)(addr >> 32), (uint32_t)size, (uint32_t)((uint64_t)size >> 32) };
    AtlStatus s = post(d, ATL_MB_LOAD, l, 4);
    if (s) { free_image(d, addr); return s; }
    AtlModel *m = calloc(1, sizeof *m);
    if (!m) {
        uint32_t u[1] = { d->result[0] };
        post(d, ATL_MB_UNLOAD, u, 1);
        free_image(d, addr);
        return fail(d, ATL_ERR_HOST_MEMORY, "out of host memory");
    }
    m->dev = d;
    m->handle = d->result[0];
    m->image_addr = addr;
    m->n_nets = d->result[1];
    m->n_variants = d->result[2];
    uint32_t n_tensors = d->result[3];
    m->next = d->models;
    d->models = m;
    if ((s = describe(d, m, n_tensors)) || (s = read_rows(d, m, src))) {
        char keep[ATL_ERRLEN];
        memcpy(keep, d->err, sizeof keep);
        atl_unload(m);
        memcpy(d->err, keep, sizeof keep);
        return s;
    }
    *out = m;
    return ATL_OK;
}

/* The part of an image the device gets: without the optional trailing
 * layers section (host information; abm.h), so that a model compiled with
 * --layer-info is placed, and runs, exactly as without it. */
static uint64_t device_size(const uint8_t *head, size_t n, uint64_t size)
{
    uint64_t req;
    return !abm_required_size(head, n, &req) && req < size ? req : size;
}

AtlStatus atl_load_memory(AtlDevice *d, const void *data, size_t size, AtlModel **out)
{
    if (!d || !out) return ATL_ERR_INVALID;
    *out = NULL;
    if (!data || !size) return fail(d, ATL_ERR_INVALID, "atl_load_memory: empty model");
    uint64_t addr, n = device_size(data, size, size);
    AtlStatus s = check_chip(d, data, size, data, size);
    if (s || (s = alloc_image(d, (size_t)n, &addr))) return s;
    uint8_t *dst = device_dram(d->hw, addr, n);
    memcpy(dst, data, (size_t)n);
    if (n < size) abm_drop_optional(dst, (size_t)n);
    RowSource src = { data, size, NULL, NULL, 0, 0 };
    return load_image(d, addr, (size_t)n, out, &src);
}

/* The file goes straight into device memory (no host copy of the image). */
static AtlStatus load_file(AtlDevice *d, const char *path, AtlModel **out)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return fail(d, ATL_ERR_IO, "cannot open: %s", strerror(errno));
    struct stat sb;
    uint8_t head[ABM_HEADER_BYTES + ABM_MAX_SECTIONS * ABM_SECTION_ENTRY_BYTES];
    size_t nh = fread(head, 1, sizeof head, fp);
    AtlStatus s = ATL_OK;
    if (fstat(fileno(fp), &sb) || !S_ISREG(sb.st_mode) || sb.st_size <= 0 || (uint64_t)sb.st_size > SIZE_MAX) {
        /* not a plain file (a pipe, a device): read it whole */
        fclose(fp);
        unsigned char *data;
        size_t size;
        AtlErr e;
        if (atl_read_file(path, &data, &size, &e)) return fail(d, ATL_ERR_IO, "%s", e.msg);
        s = atl_load_memory(d, data, size, out);
        free(data);
        return s;
    }
    size_t size = (size_t)sb.st_size;
    uint64_t fpr;
    if (header_chip(head, nh, &fpr) && fpr != cfg_fingerprint(device_chip(d->hw))) {
        fclose(fp);
        unsigned char *data = NULL;
        size_t n = 0;
        AtlErr e;
        if (atl_read_file(path, &data, &n, &e)) return fail(d, ATL_ERR_IO, "%s", e.msg);
        s = check_chip(d, data, n, data, n);
        free(data);
        return s;
    }
    size_t n = (size_t)device_size(head, nh, size);
    uint64_t addr;
    if ((s = alloc_image(d, n, &addr))) { fclose(fp); return s; }
    uint8_t *dst = device_dram(d->hw, addr, n);
    size_t first = nh < n ? nh : n;
    memcpy(dst, head, first);
    size_t got = first + (first < n ? fread(dst + first, 1, n - first, fp) : 0);
    if (ferror(fp) || got != n) {
        fclose(fp);
        free_image(d, addr);
        return fail(d, ATL_ERR_IO, "read error (%zu of %zu bytes)", got, n);
    }
    if (n < size) abm_drop_optional(dst, n);
    RowSource src = { NULL, 0, fp, head, nh, size };
    s = load_image(d, addr, n, out, &src);
    fclose(fp);
    return s;
}

AtlStatus atl_load_file(AtlDevice *d, const char *path, AtlModel **out)
{
    if (!d || !out || !path) return ATL_ERR_INVALID;
    *out = NULL;
    AtlStatus s = load_file(d, path, out);
    if (s) {
        char keep[ATL_ERRLEN];
        snprintf(keep, sizeof keep, "%s: %s", path, d->err);
        memcpy(d->err, keep, sizeof keep);
    }
    return s;
}

AtlStatus atl_nets(const AtlModel *m, const AtlNetInfo **nets, uint32_t *count)
{
    if (!m || !nets || !count) return ATL_ERR_INVALID;
    *nets = m->nets;
    *count = m->n_nets;
    return ATL_OK;
}

static const AtlTensorInfo *find_io(const AtlTensorInfo *t, uint32_t n, const char *name, uint32_t index)
{
    if (!name) return index < n ? &t[index] : NULL;
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, name)) return &t[i];
    return NULL;
}

static int shape_matches(const AtlTensorInfo *t, const AtlBuffer *b)
{
    if (b->ndim == 0) return b->size == t->bytes;
    if (b->ndim != t->ndim) return 0;
    for (int i = 0; i < t->ndim; i++)
        if (b->dims[i] != t->dims[i]) return 0;
    return 1;
}

static void shape_text(char *buf, size_t cap, const AtlTensorInfo *t)
{
    size_t n = (size_t)snprintf(buf, cap, "%s[", t->name);
    for (int i = 0; i < t->ndim && n < cap; i++) n += (size_t)snprintf(buf + n, cap - n, i ? ",%u" : "%u", t->dims[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* The last run's per-stage figures (m->stages) from its layer records and
 * the stages of its variant st. */
static AtlStatus stage_profiles(AtlDevice *d, AtlModel *m, const AtlVariantInfo *st)
{
    free(m->stages);
    m->stages = NULL;
    if (!st->n_stages) return ATL_OK;
    if (!(m->stages = calloc(st->n_stages, sizeof *m->stages))) return fail(d, ATL_ERR_HOST_MEMORY, "out of host memory");
    for (uint32_t k = 0; k < st->n_stages; k++) {
        const AtlStageInfo *si = &st->stages[k];
        AtlStageProfile *sp = &m->stages[k];
        sp->stage = si->stage;
        int any = 0;
        for (uint32_t i = 0; i < m->n_layers; i++) {
            const AtlLayerProfile *l = &m->layers[i];
            if (l->layer < si->first_layer || l->layer - si->first_layer >= si->n_layers) continue;
            if (!any || l->first < sp->first) sp->first = l->first;
            if (!any || l->last > sp->last) sp->last = l->last;
            any = 1;
            sp->held += l->held;
            sp->macs += l->macs;
            sp->dram_bytes += l->dram_bytes;
        }
        sp->cycles = sp->held / si->cores;
        sp->mac_util = sp->held ? (double)si->mat_cycles / (double)sp->held : 0.0;
    }
    return ATL_OK;
}

AtlStatus atl_run(AtlModel *m, const char *net, const AtlBuffer *in, uint32_t n_in, uint32_t *variant_out)
{
    if (!m) return ATL_ERR_INVALID;
    AtlDevice *d = m->dev;
    if (n_in && !in) return fail(d, ATL_ERR_INVALID, "atl_run: inputs missing");
    uint32_t ni = 0;
    if (net) {
        while (ni < m->n_nets && strcmp(m->nets[ni].name, net)) ni++;
        if (ni == m->n_nets) return fail(d, ATL_ERR_UNKNOWN_NET, "the model has no net named '%s'", net);
    } else if (!m->n_nets) {
        return fail(d, ATL_ERR_UNKNOWN_NET, "the model has no nets");
    }
    const AtlNetInfo *nt = &m->nets[ni];
    uint32_t chosen = UINT32_MAX;
    for (uint32_t k = 0; k < nt->n_variants && chosen == UINT32_MAX; k++) {
        const AtlVariantInfo *st = &nt->variants[k];
        if (st->n_inputs != n_in) continue;
        uint32_t i = 0;
        for (; i < n_in; i++) {
            const AtlTensorInfo *t = find_io(st->inputs, st->n_inputs, in[i].name, i);
            if (!t || !shape_matches(t, &in[i])) break;
        }
        if (i == n_in) chosen = k;
    }
    if (chosen == UINT32_MAX) {
        char text[ATL_ERRLEN] = "";
        size_t n = 0;
        for (uint32_t k = 0; k < nt->n_variants && n < sizeof text; k++) {
            n += (size_t)snprintf(text + n, sizeof text - n, "%s variant %u (batch %u):", k ? ";" : "", k, nt->variants[k].batch);
            for (uint32_t i = 0; i < nt->variants[k].n_inputs && n < sizeof text; i++) {
                char s[128];
                shape_text(s, sizeof s, &nt->variants[k].inputs[i]);
                n += (size_t)snprintf(text + n, sizeof text - n, " %s", s);
            }
        }
        return fail(d, ATL_ERR_NO_VARIANT, "no variant of net '%s' takes these %u input(s); it has%s", nt->name, n_in, text);
    }
    const AtlVariantInfo *st = &nt->variants[chosen];
    for (uint32_t i = 0; i < n_in; i++) {
        const AtlTensorInfo *t = find_io(st->inputs, st->n_inputs, in[i].name, i);
        if (in[i].size != t->bytes)
            return fail(d, ATL_ERR_SIZE, "input '%s': buffer has %zu bytes, the tensor %llu", t->name, in[i].size, (unsigned long long)t->bytes);
        if (!in[i].data) return fail(d, ATL_ERR_INVALID, "input '%s': no data", t->name);
        uint8_t *dst = device_dram(d->hw, t->device_addr, t->bytes);
        if (!dst) return fail(d, ATL_ERR_BAD_ARG, "input '%s' lies outside device DRAM", t->name);
        memcpy(dst, in[i].data, t->bytes);
    }
    m->has_run = 0;
    uint32_t a[3] = { m->handle, ni, chosen };
    AtlStatus s = post(d, ATL_MB_RUN, a, 3);
    if (s) return s;
    memcpy(m->run_result, d->result, sizeof m->run_result);
    m->last_variant = (uint32_t)(st - m->variants);
    /* per-layer records */
    uint32_t nl = d->result[20];
    const uint8_t *rec = nl ? device_dram(d->hw, r64(d->result, 21), (uint64_t)nl * ATL_PROF_RECORD_BYTES) : NULL;
    free(m->layers);
    free(m->members);
    m->layers = m->members = NULL;
    m->n_layers = m->n_members = 0;
    if (rec) {
        m->layers = calloc(nl, sizeof *m->layers);
        m->members = calloc(nl, sizeof *m->members);
        if (!m->layers || !m->members) return fail(d, ATL_ERR_HOST_MEMORY, "out of host memory");
        for (uint32_t i = 0; i < nl; i++) {
            uint64_t f[ATL_PROF_NUM_FIELDS];
            for (int k = 0; k < ATL_PROF_NUM_FIELDS; k++) {
                f[k] = 0;
                for (int b = 0; b < 8; b++) f[k] |= (uint64_t)rec[i * ATL_PROF_RECORD_BYTES + 8 * (uint32_t)k + (uint32_t)b] << (8 * b);
            }
            static const char *const bound[] = {[ATL_BOUND_COMPUTE] = "compute", [ATL_BOUND_DMA] = "dma", [ATL_BOUND_SYNC] = "sync"};
            /* a member record's LAYER is its member tag (isa_member_tag) */
            unsigned tag = (unsigned)f[ATL_PROF_LAYER];
            int member = f[ATL_PROF_LAYER] <= 0xffff ? isa_tag_member(tag) : -1;
            AtlLayerProfile *l = member < 0 ? &m->layers[m->n_layers++] : &m->members[m->n_members++];
            *l = (AtlLayerProfile){ member < 0 ? (uint32_t)f[ATL_PROF_LAYER] : isa_tag_layer(tag), f[ATL_PROF_INSNS],
                                    f[ATL_PROF_FIRST], f[ATL_PROF_LAST], f[ATL_PROF_MACS], f[ATL_PROF_DMA_BYTES],
                                    f[ATL_PROF_BUSY_MAT], f[ATL_PROF_BUSY_VEC], f[ATL_PROF_BUSY_DMA], f[ATL_PROF_SYNC],
                                    f[ATL_PROF_BOUND] <= ATL_BOUND_SYNC ? bound[f[ATL_PROF_BOUND]] : "?",
                                    f[ATL_PROF_DRAM_BYTES], f[ATL_PROF_HELD], f[ATL_PROF_CYCLES], member };
        }
    }
    if ((s = stage_profiles(d, m, st))) return s;
    m->has_run = 1;
    d->last_run = m;
    if (variant_out) *variant_out = chosen;
    return ATL_OK;
}

/* Copies tensor t of the last run from device DRAM into dst, which must
 * have exactly its size; `what` ("output", "tensor") starts the messages. */
static AtlStatus copy_out(AtlDevice *d, const AtlTensorInfo *t, const char *what, void *dst, size_t size)
{
    if (!dst || size != t->bytes)
        return fail(d, ATL_ERR_SIZE, "%s '%s': buffer has %zu bytes, the tensor %llu", what, t->name, size, (unsigned long long)t->bytes);
    const uint8_t *src = device_dram(d->hw, t->device_addr, t->bytes);
    if (!src) return fail(d, ATL_ERR_BAD_ARG, "%s '%s' lies outside device DRAM", what, t->name);
    memcpy(dst, src, t->bytes);
    return ATL_OK;
}

AtlStatus atl_output(AtlModel *m, const char *name, uint32_t index, void *dst, size_t size)
{
    if (!m) return ATL_ERR_INVALID;
    AtlDevice *d = m->dev;
    if (!m->has_run) return fail(d, ATL_ERR_NOT_RUN, "no successful run yet");
    const AtlVariantInfo *st = &m->variants[m->last_variant];
    const AtlTensorInfo *t = find_io(st->outputs, st->n_outputs, name, index);
    if (!t) {
        if (name) return fail(d, ATL_ERR_UNKNOWN_TENSOR, "the variant has no output named '%s'", name);
        return fail(d, ATL_ERR_UNKNOWN_TENSOR, "the variant has %u output(s), not %u", st->n_outputs, index + 1);
    }
    return copy_out(d, t, "output", dst, size);
}

AtlStatus atl_read_tensor(AtlModel *m, const char *name, void *dst, size_t size)
{
    if (!m) return ATL_ERR_INVALID;
    AtlDevice *d = m->dev;
    if (!m->has_run) return fail(d, ATL_ERR_NOT_RUN, "no successful run yet");
    if (!name) return fail(d, ATL_ERR_INVALID, "atl_read_tensor: no name");
    const AtlVariantInfo *st = &m->variants[m->last_variant];
    const AtlTensorInfo *t = NULL;
    for (uint32_t i = 0; i < st->n_tensors && !t; i++)
        if (!strcmp(st->tensors[i].name, name)) t = &st->tensors[i];
    if (!t) return fail(d, ATL_ERR_UNKNOWN_TENSOR, "the variant that ran has no tensor named '%s'", name);
    return copy_out(d, t, "tensor", dst, size);
}

AtlStatus atl_profile(const AtlModel *m, AtlProfile *p)
{
    if (!m || !p) return ATL_ERR_INVALID;
    if (!m->has_run) return fail(m->dev, ATL_ERR_NOT_RUN, "no successful run yet");
    const uint32_t *r = m->run_result;
    memset(p, 0, sizeof *p);
    p->cycles = r64(r, 0);
    p->fw_cycles = r64(r, 2);
    p->macs = r64(r, 4);
    p->dram_bytes = r64(r, 6);
    p->cores = m->variants[m->last_variant].cores;
    p->seconds = (double)p->cycles / (device_chip(m->dev->hw)->freq_mhz * 1e6);
    for (int g = 0; g < ATL_ENGINES; g++) {
        p->busy[g] = r64(r, 8 + 2 * g);
        p->stall[g] = r64(r, 14 + 2 * g);
        p->utilisation[g] = p->cycles && p->cores ? (double)p->busy[g] / ((double)p->cycles * p->cores) : 0.0;
    }
    p->n_layers = m->n_layers;
    p->layers = m->layers;
    p->n_stages = m->stages ? m->variants[m->last_variant].n_stages : 0;
    p->stages = m->stages;
    p->n_members = m->n_members;
    p->members = m->members;
    return ATL_OK;
}

static AtlStatus json_of(AtlDevice *d, char **json, char *(*get)(AtlSimDevice *))
{
    if (!d || !json) return ATL_ERR_INVALID;
    *json = get(d->hw);
    if (!*json) return fail(d, ATL_ERR_NOT_RUN, "nothing has run on the device yet (or out of memory)");
    return ATL_OK;
}

AtlStatus atl_stats_json(AtlDevice *d, char **json) { return json_of(d, json, device_stats_json); }
/* The trace; when the last run's variant is staged, with a slice per stage
 * on each cluster that ran it. */
AtlStatus atl_trace_json(AtlDevice *d, char **json)
{
    const AtlVariantInfo *st = d && d->last_run ? &d->last_run->variants[d->last_run->last_variant] : NULL;
    if (!st || !st->n_stages || !json) return json_of(d, json, device_trace_json);
    AtlSimLayerRange *r = calloc(st->n_stages, sizeof *r);
    char (*names)[48] = calloc(st->n_stages, sizeof *names);
    if (!r || !names) {
        free(r);
        free(names);
        return fail(d, ATL_ERR_HOST_MEMORY, "out of host memory");
    }
    for (uint32_t i = 0; i < st->n_stages; i++) {
        snprintf(names[i], sizeof names[i], "stage %u (mb %u)", st->stages[i].stage, st->stages[i].micro_batch);
        r[i] = (AtlSimLayerRange){st->stages[i].first_layer, st->stages[i].n_layers, names[i]};
    }
    *json = device_trace_json_ranges(d->hw, r, (int)st->n_stages);
    free(r);
    free(names);
    if (!*json) return fail(d, ATL_ERR_NOT_RUN, "nothing has run on the device yet (or out of memory)");
    return ATL_OK;
}
AtlStatus atl_layers_csv(AtlDevice *d, char **csv) { return json_of(d, csv, device_layers_csv); }
