/* import.c - decodes ONNX protobuf (ModelProto, GraphProto, NodeProto,
 * AttributeProto, TensorProto, ValueInfoProto, OperatorSetIdProto) straight
 * into the graph IR without a protobuf library.
 *
 * The reader works on one buffer; every sub-message is a [pos, end) window
 * of it, so byte offsets in messages are offsets into the file. Every length
 * is checked against its enclosing window before use, sizes are bounded, and
 * unknown fields are skipped by wire type, so malformed input ends in an
 * error, never in a read out of bounds.
 */
#include "compiler/onnx/onnx.h"
#include "compiler/onnx/synth_weights.h"
#include "util/file.h"
#include <sys/types.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };
#define MAX_ELEMS ((int64_t)1 << 32)

typedef struct Rd {
    const uint8_t *buf;
    size_t pos, end;
    const char *path;   /* for messages */
    const char *msg;    /* message type being read */
    AtlErr *e;
    SynthList *synth;   /* non-NULL: a missing external file is synthesised */
} Rd;

typedef struct Field {
    int num, wt;
    size_t at;          /* byte offset of the tag */
    uint64_t v;         /* varint / fixed value */
    size_t start, len;  /* WT_LEN payload window */
} Field;

static const char *fname(const char *p) { return p ? p : "<buffer>"; }

static int rd_fail(Rd *r, size_t at, const char *field, int num, const char *what)
{
    return atl_fail(r->e, "%s: byte %zu: %s.%s (field %d): %s", fname(r->path), at, r->msg, field, num, what);
}

static int rd_varint(Rd *r, uint64_t *v, const char *field, int num)
{
    uint64_t x = 0;
    size_t at = r->pos;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->pos >= r->end) return rd_fail(r, at, field, num, "truncated varint");
        uint8_t b = r->buf[r->pos++];
        x |= (uint64_t)(b & 127) << shift;
        if (!(b & 128)) { *v = x; return 0; }
    }
    return rd_fail(r, at, field, num, "varint longer than 10 bytes");
}

/* Reads the next field header and value. Returns 1, 0 at the end, -1 error. */
static int rd_next(Rd *r, Field *f)
{
    if (r->pos >= r->end) return 0;
    f->at = r->pos;
    uint64_t tag;
    if (rd_varint(r, &tag, "tag", 0)) return -1;
    f->num = (int)(tag >> 3);
    f->wt = (int)(tag & 7);
    if ((tag >> 3) == 0 || (tag >> 3) > 536870911u)
        return rd_fail(r, f->at, "tag", (int)(tag >> 3 & 0x7fffffff), "invalid field number");
    switch (f->wt) {
    case WT_VARINT: return rd_varint(r, &f->v, "value", f->num) ? -1 : 1;
    case WT_I64:
        if (r->end - r->pos < 8) return rd_fail(r, f->at, "value", f->num, "truncated fixed64");
        f->v = 0;
        for (int i = 7; i >= 0; i--) f->v = f->v << 8 | r->buf[r->pos + (size_t)i];
        r->pos += 8;
        return 1;
    case WT_I32:
        if (r->end - r->pos < 4) return rd_fail(r, f->at, "value", f->num, "truncated fixed32");
        f->v = (uint64_t)r->buf[r->pos] | (uint64_t)r->buf[r->pos + 1] << 8 |
               (uint64_t)r->buf[r->pos + 2] << 16 | (uint64_t)r->buf[r->pos + 3] << 24;
        r->pos += 4;
        return 1;
    case WT_LEN: {
        uint64_t n;
        if (rd_varint(r, &n, "length", f->num)) return -1;
        if (n > r->end - r->pos) {
            char what[160];
            snprintf(what, sizeof what, "length %llu runs past the end of its message (ends at byte %zu)",
                     (unsigned long long)n, r->end);
            return rd_fail(r, f->at, "length", f->num, what);
        }
        f->start = r->pos;
        f->len = (size_t)n;
        r->pos += (size_t)n;
        return 1;
    }
    default:
        return rd_fail(r, f->at, "tag", f->num, f->wt == WT_SGROUP || f->wt == WT_EGROUP
                       ? "group wire type is not supported" : "invalid wire type");
    }
}

static int want_wt(Rd *r, const Field *f, int wt, const char *field)
{
    static const char *names[] = {"varint", "fixed64", "length-delimited", "start-group", "end-group", "fixed32", "6", "7"};
    if (f->wt == wt) return 0;
    char what[128];
    snprintf(what, sizeof what, "wrong wire type %s, expected %s", names[f->wt & 7], names[wt]);
    return rd_fail(r, f->at, field, f->num, what);
}

static Rd sub(const Rd *r, const Field *f, const char *msg)
{
    Rd s = *r;
    s.pos = f->start;
    s.end = f->start + f->len;
    s.msg = msg;
    return s;
}

static char *dup_bytes(const Rd *r, const Field *f)
{
    char *s = malloc(f->len + 1);
    if (!s) return NULL;
    memcpy(s, r->buf + f->start, f->len);
    s[f->len] = 0;
    return s;
}

static int get_str(Rd *r, const Field *f, const char *field, char **out)
{
    if (want_wt(r, f, WT_LEN, field)) return -1;
    char *s = dup_bytes(r, f);
    if (!s) return rd_fail(r, f->at, field, f->num, "out of memory");
    if (memchr(s, 0, f->len)) { free(s); return rd_fail(r, f->at, field, f->num, "string contains a NUL byte"); }
    free(*out);
    *out = s;
    return 0;
}

/* Iterates the elements of a repeated scalar field, packed or not.
 * fixed: 0 for varint elements, 4 or 8 for fixed-size ones. Calls cb for each
 * value; with cb NULL only counts. */
typedef struct Rep { int64_t n; void *dst; int kind; } Rep;
static int rep_elems(Rd *r, const Field *f, int fixed, const char *field, Rep *rep,
                     void (*cb)(Rep *, uint64_t))
{
    int elem_wt = fixed == 0 ? WT_VARINT : fixed == 4 ? WT_I32 : WT_I64;
    if (f->wt == elem_wt) {
        if (cb) cb(rep, f->v);
        rep->n++;
        return 0;
    }
    if (f->wt != WT_LEN) return want_wt(r, f, elem_wt, field);
    if (fixed) {
        if (f->len % (size_t)fixed) return rd_fail(r, f->at, field, f->num, "packed length is not a multiple of the element size");
        for (size_t k = 0; k < f->len; k += (size_t)fixed) {
            uint64_t v = 0;
            for (int b = fixed - 1; b >= 0; b--) v = v << 8 | r->buf[f->start + k + (size_t)b];
            if (cb) cb(rep, v);
            rep->n++;
        }
        return 0;
    }
    Rd s = sub(r, f, r->msg);
    while (s.pos < s.end) {
        uint64_t v;
        if (rd_varint(&s, &v, field, f->num)) return -1;
        if (cb) cb(rep, v);
        rep->n++;
    }
    return 0;
}

static void put_i64(Rep *p, uint64_t v) { ((int64_t *)p->dst)[p->n] = (int64_t)v; }
static void put_f32(Rep *p, uint64_t v) { uint32_t u = (uint32_t)v; memcpy((float *)p->dst + p->n, &u, 4); }
static void put_any(Rep *p, uint64_t v)
{
    IrTensor *t = p->dst;
    switch (p->kind) {
    case 4: { uint32_t u = (uint32_t)v; float f; memcpy(&f, &u, 4); ir_set_f(t, p->n, f); break; }
    case 8: { double d; memcpy(&d, &v, 8); ir_set_f(t, p->n, d); break; }
    case 32: /* int32_data holds float16/bfloat16 bits and small ints */
        if (t->dtype == IR_F16 || t->dtype == IR_BF16) ((uint16_t *)t->data)[p->n] = (uint16_t)v;
        else ir_set_i(t, p->n, (int64_t)(int32_t)(uint32_t)v);
        break;
    default: ir_set_i(t, p->n, (int64_t)v);
    }
}

/* ---- external data ---- */

static int read_external(Rd *r, size_t at, IrTensor *t, const char *loc, int64_t off, int64_t len)
{
    if (!r->path) return rd_fail(r, at, "external_data", 13, "external data needs a model file path");
    if (!loc || !*loc) return rd_fail(r, at, "external_data", 13, "no 'location' entry");
    if (loc[0] == '/' || strstr(loc, "..")) {
        char what[300];
        snprintf(what, sizeof what, "location '%.200s' must be relative to the model directory, without '..'", loc);
        return rd_fail(r, at, "external_data", 13, what);
    }
    size_t need = ir_nbytes(t);
    if (len >= 0 && (uint64_t)len != need) {
        char what[200];
        snprintf(what, sizeof what, "length %lld does not match %zu bytes for tensor '%s'", (long long)len, need, t->name);
        return rd_fail(r, at, "external_data", 13, what);
    }
    const char *slash = strrchr(r->path, '/');
    size_t dl = slash ? (size_t)(slash - r->path + 1) : 0;
    char *full = malloc(dl + strlen(loc) + 1);
    if (!full) return rd_fail(r, at, "external_data", 13, "out of memory");
    memcpy(full, r->path, dl);
    strcpy(full + dl, loc);
    FILE *fp = NULL;
    uint64_t fsize = 0;
    AtlErr oe;
    int open_rc = atl_open_regular(full, &fp, &fsize, &oe), err = errno;
    int rc = 0;
    if (open_rc && err == ENOENT && r->synth) {
        rc = synth_missing_tensor(r->synth, t, full, r->e);
        if (rc) atl_err_prefix(r->e, "%s: byte %zu", fname(r->path), at);
    } else if (open_rc && err == ENOENT) {
        rc = atl_fail(r->e, "%s: byte %zu: TensorProto.external_data of '%s': cannot open '%s': no such file "
                      "(generate it, or compile with --synthetic-weights for timing-only studies)",
                      fname(r->path), at, t->name, full);
    } else if (open_rc) {
        rc = atl_fail(r->e, "%s: byte %zu: TensorProto.external_data of '%s': %s", fname(r->path), at, t->name, oe.msg);
    } else if ((uint64_t)off > fsize || need > fsize - (uint64_t)off) {
        rc = atl_fail(r->e, "%s: byte %zu: TensorProto.external_data of '%s': '%s' has fewer than %lld+%zu bytes",
                      fname(r->path), at, t->name, full, (long long)off, need);
    } else if (ir_alloc_data(t, r->e)) {
        rc = -1;
    } else if (fseeko(fp, (off_t)off, SEEK_SET) || fread(t->data, 1, need, fp) != need) {
        rc = atl_fail(r->e, "%s: byte %zu: TensorProto.external_data of '%s': cannot read %zu bytes at offset %lld of '%s'",
                      fname(r->path), at, t->name, need, (long long)off, full);
    }
    if (fp) fclose(fp);
    free(full);
    return rc;
}

/* ---- TensorProto ---- */

static int decode_tensor(Rd *r, IrTensor *t)
{
    Field f;
    int k;
    int64_t dims[IR_MAXDIM];
    int ndim = 0, dtype = 0, have_raw = 0, external = 0;
    Field raw = {0};
    int64_t counts[12] = {0};
    char *loc = NULL;
    int64_t ext_off = 0, ext_len = -1;
    size_t ext_at = 0;
    int rc = -1;
    r->msg = "TensorProto";
    /* pass 1: header fields and element counts */
    size_t start = r->pos;
    while ((k = rd_next(r, &f)) == 1) {
        switch (f.num) {
        case 1: {
            Rep rep = {0};
            if (rep_elems(r, &f, 0, "dims", &rep, NULL)) goto out;
            int64_t tmp[64];
            if (ndim + rep.n > IR_MAXDIM) { rd_fail(r, f.at, "dims", 1, "more than 8 dimensions"); goto out; }
            rep.dst = tmp; rep.n = 0;
            rep_elems(r, &f, 0, "dims", &rep, put_i64);
            for (int i = 0; i < rep.n; i++) {
                if (tmp[i] < 0) { rd_fail(r, f.at, "dims", 1, "negative dimension"); goto out; }
                dims[ndim++] = tmp[i];
            }
            break;
        }
        case 2: if (want_wt(r, &f, WT_VARINT, "data_type")) goto out; dtype = (int)f.v; break;
        case 3: rd_fail(r, f.at, "segment", 3, "segmented tensors are not supported"); goto out;
        case 4: case 5: case 7: case 10: case 11: {
            Rep rep = {0};
            int fixed = f.num == 4 ? 4 : f.num == 10 ? 8 : 0;
            if (rep_elems(r, &f, fixed, "typed data", &rep, NULL)) goto out;
            counts[f.num] += rep.n;
            break;
        }
        case 6: rd_fail(r, f.at, "string_data", 6, "string tensors are not supported"); goto out;
        case 8: if (get_str(r, &f, "name", &t->name)) goto out; break;
        case 9: if (want_wt(r, &f, WT_LEN, "raw_data")) goto out; raw = f; have_raw = 1; break;
        case 13: {
            if (want_wt(r, &f, WT_LEN, "external_data")) goto out;
            Rd s = sub(r, &f, "StringStringEntryProto");
            char *key = NULL, *val = NULL;
            Field g;
            int kk;
            while ((kk = rd_next(&s, &g)) == 1) {
                if (g.num == 1 && get_str(&s, &g, "key", &key)) kk = -1;
                else if (g.num == 2 && get_str(&s, &g, "value", &val)) kk = -1;
                if (kk < 0) break;
            }
            if (kk < 0) { free(key); free(val); goto out; }
            ext_at = f.at;
            external = 1;
            if (key && val) {
                if (!strcmp(key, "location")) { free(loc); loc = val; val = NULL; }
                else if (!strcmp(key, "offset")) ext_off = strtoll(val, NULL, 10);
                else if (!strcmp(key, "length")) ext_len = strtoll(val, NULL, 10);
            }
            free(key); free(val);
            if (ext_off < 0) { rd_fail(r, f.at, "external_data", 13, "negative offset"); goto out; }
            break;
        }
        case 14: if (want_wt(r, &f, WT_VARINT, "data_location")) goto out; if (f.v == 1) external = 1; break;
        default: break;
        }
    }
    if (k < 0) goto out;
    if (!t->name) t->name = ir_strdup("");
    if (dtype <= 0 || dtype >= IR_NDTYPES || !ir_dtype_size(dtype)) {
        char what[100];
        snprintf(what, sizeof what, "tensor '%s': data type %d is not supported", t->name ? t->name : "", dtype);
        rd_fail(r, start, "data_type", 2, what);
        goto out;
    }
    t->dtype = dtype;
    t->ndim = ndim;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        t->dims[i] = dims[i];
        if (dims[i] && n > MAX_ELEMS / dims[i]) { rd_fail(r, start, "dims", 1, "tensor has too many elements"); goto out; }
        n *= dims[i];
    }
    if (n > MAX_ELEMS) { rd_fail(r, start, "dims", 1, "tensor has too many elements"); goto out; }
    size_t es = ir_dtype_size(dtype);
    if (have_raw) {
        if ((uint64_t)raw.len != (uint64_t)n * es) {
            char what[200];
            snprintf(what, sizeof what, "tensor '%s': raw_data has %zu bytes, dims need %lld", t->name, raw.len, (long long)n * (long long)es);
            rd_fail(r, raw.at, "raw_data", 9, what);
            goto out;
        }
        if (ir_alloc_data(t, r->e)) goto out;
        memcpy(t->data, r->buf + raw.start, raw.len);
        rc = 0;
        goto out;
    }
    if (external) { /* allocates only once the file is known to hold the data */
        rc = read_external(r, ext_at, t, loc, ext_off, ext_len);
        goto out;
    }
    /* typed fields */
    int field = 0;
    switch (dtype) {
    case IR_F32: case IR_C64: field = 4; break;
    case IR_F64: case IR_C128: field = 10; break;
    case IR_I64: field = 7; break;
    case IR_U32: case IR_U64: field = 11; break;
    default: field = 5; break;
    }
    for (int i = 1; i < 12; i++) {
        if (i != field && counts[i]) {
            char what[160];
            snprintf(what, sizeof what, "tensor '%s' of type %s has data in the wrong typed field", t->name, ir_dtype_name(dtype));
            rd_fail(r, start, "typed data", i, what);
            goto out;
        }
    }
    if (counts[field] != n) {
        char what[200];
        snprintf(what, sizeof what, "tensor '%s' has %lld values, dims need %lld", t->name, (long long)counts[field], (long long)n);
        rd_fail(r, start, "typed data", field, what);
        goto out;
    }
    if (ir_alloc_data(t, r->e)) goto out;
    r->pos = start;
    int fast = dtype == IR_F32 && field == 4;
    Rep rep = {0, fast ? t->data : (void *)t, field == 4 ? 4 : field == 10 ? 8 : field == 5 ? 32 : 64};
    while ((k = rd_next(r, &f)) == 1)
        if (f.num == field && rep_elems(r, &f, field == 4 ? 4 : field == 10 ? 8 : 0, "typed data", &rep,
                                        fast ? put_f32 : put_any)) goto out;
    if (k < 0) goto out;
    rc = 0;
out:
    free(loc);
    return rc;
}

int onnx_decode_tensor(const uint8_t *buf, size_t len, const char *path, IrTensor *t, AtlErr *e)
{
    memset(t, 0, sizeof *t);
    t->producer = -1;
    Rd r = {buf, 0, len, path, "TensorProto", e, NULL};
    if (decode_tensor(&r, t)) { ir_tensor_free_contents(t); return -1; }
    return 0;
}

int onnx_load_tensor_file(const char *path, IrTensor *t, AtlErr *e)
{
    unsigned char *buf;
    size_t n;
    if (atl_read_file(path, &buf, &n, e)) return -1;
    int rc = onnx_decode_tensor(buf, n, path, t, e);
    free(buf);
    return rc;
}

/* ---- ValueInfoProto ---- */

static int decode_value_info(Rd *r, IrGraph *g, int role)
{
    Field f;
    int k;
    char *name = NULL;
    int dtype = 0, ndim = -1, is_tensor = 0, other_type = 0;
    int64_t dims[IR_MAXDIM];
    size_t at = r->pos;
    int rc = -1;
    while ((k = rd_next(r, &f)) == 1) {
        if (f.num == 1) { if (get_str(r, &f, "name", &name)) goto out; }
        else if (f.num == 2) {
            if (want_wt(r, &f, WT_LEN, "type")) goto out;
            Rd tp = sub(r, &f, "TypeProto");
            Field h;
            int kk;
            while ((kk = rd_next(&tp, &h)) == 1) {
                if (h.num != 1) { other_type = 1; continue; }
                if (want_wt(&tp, &h, WT_LEN, "tensor_type")) goto out;
                is_tensor = 1;
                Rd tt = sub(&tp, &h, "TypeProto.Tensor");
                Field q;
                int kq;
                while ((kq = rd_next(&tt, &q)) == 1) {
                    if (q.num == 1) { if (want_wt(&tt, &q, WT_VARINT, "elem_type")) goto out; dtype = (int)q.v; }
                    else if (q.num == 2) {
                        if (want_wt(&tt, &q, WT_LEN, "shape")) goto out;
                        ndim = 0;
                        Rd sh = sub(&tt, &q, "TensorShapeProto");
                        Field d;
                        int kd;
                        while ((kd = rd_next(&sh, &d)) == 1) {
                            if (d.num != 1) continue;
                            if (want_wt(&sh, &d, WT_LEN, "dim")) goto out;
                            if (ndim >= IR_MAXDIM) { rd_fail(&sh, d.at, "dim", 1, "more than 8 dimensions"); goto out; }
                            int64_t v = -1;
                            Rd dm = sub(&sh, &d, "TensorShapeProto.Dimension");
                            Field x;
                            int kx;
                            while ((kx = rd_next(&dm, &x)) == 1)
                                if (x.num == 1) {
                                    if (want_wt(&dm, &x, WT_VARINT, "dim_value")) goto out;
                                    v = (int64_t)x.v;
                                    if (v < 0 || v > MAX_ELEMS) { rd_fail(&dm, x.at, "dim_value", 1, "dimension out of range"); goto out; }
                                }
                            if (kx < 0) goto out;
                            dims[ndim++] = v;
                        }
                        if (kd < 0) goto out;
                    }
                }
                if (kq < 0) goto out;
            }
            if (kk < 0) goto out;
        }
    }
    if (k < 0) goto out;
    if (!name || !*name) {
        if (role == 0) { rc = 0; goto out; } /* anonymous value_info: ignore */
        rd_fail(r, at, "name", 1, "graph input/output without a name");
        goto out;
    }
    int t = ir_tensor(g, name, r->e);
    if (t < 0) goto out;
    IrTensor *x = &g->t[t];
    if (role == 1 && x->is_input && !x->data) {   /* listed again: it must say the same */
        int same = (!is_tensor || other_type) ? x->dtype == IR_UNDEF || !is_tensor : x->dtype == dtype && x->ndim == ndim;
        for (int i = 0; same && is_tensor && !other_type && i < ndim; i++) same = x->dims[i] == dims[i];
        if (!same) {
            char what[400];
            snprintf(what, sizeof what, "graph input '%.200s' is listed twice with different types or shapes", name);
            rd_fail(r, at, "name", 1, what);
            goto out;
        }
    }
    if (!x->data) {
        if (is_tensor && !other_type) {
            x->dtype = dtype;
            x->ndim = ndim;
            for (int i = 0; i < ndim; i++) x->dims[i] = dims[i];
        } else if (other_type) {
            x->dtype = IR_UNDEF; /* sequence/map/optional: not a tensor */
            x->ndim = -1;
        }
    }
    if (role == 1 && !x->is_input) {
        x->is_input = 1;
        int *p = realloc(g->inputs, (size_t)(g->nin + 1) * sizeof *p);
        if (!p) { rd_fail(r, at, "name", 1, "out of memory"); goto out; }
        g->inputs = p;
        p[g->nin++] = t;
    }
    if (role == 2) {
        if (x->is_output) { rd_fail(r, at, "name", 1, "graph output listed twice"); goto out; }
        x->is_output = 1;
        int *o = realloc(g->outputs, (size_t)(g->nout + 1) * sizeof *o);
        if (!o) { rd_fail(r, at, "name", 1, "out of memory"); goto out; }
        g->outputs = o;
        o[g->nout++] = t;
    }
    rc = 0;
out:
    free(name);
    return rc;
}

/* ---- AttributeProto ---- */

static void put_ints(Rep *p, uint64_t v) { ((int64_t *)p->dst)[p->n] = (int64_t)v; }

static int decode_attr(Rd *r, IrGraph *g, int node)
{
    Field f;
    int k;
    size_t at = r->pos;
    IrAttr tmp;
    memset(&tmp, 0, sizeof tmp);
    int rc = -1, have_f = 0, have_i = 0, have_s = 0, have_t = 0, have_g = 0, nstrings = 0;
    int64_t nfl = 0, nin = 0;
    /* pass 1: scalars and counts */
    while ((k = rd_next(r, &f)) == 1) {
        switch (f.num) {
        case 1: if (get_str(r, &f, "name", &tmp.name)) goto out; break;
        case 2: if (want_wt(r, &f, WT_I32, "f")) goto out; { uint32_t u = (uint32_t)f.v; memcpy(&tmp.f, &u, 4); } have_f = 1; break;
        case 3: if (want_wt(r, &f, WT_VARINT, "i")) goto out; tmp.i = (int64_t)f.v; have_i = 1; break;
        case 4: if (get_str(r, &f, "s", &tmp.s)) {
                    /* strings may hold arbitrary bytes; keep them up to a NUL */
                    if (want_wt(r, &f, WT_LEN, "s")) goto out;
                    free(tmp.s);
                    tmp.s = dup_bytes(r, &f);
                    if (!tmp.s) goto out;
                }
                have_s = 1; break;
        case 5: {
            if (want_wt(r, &f, WT_LEN, "t")) goto out;
            if (tmp.t) { ir_tensor_free_contents(tmp.t); free(tmp.t); }
            tmp.t = calloc(1, sizeof *tmp.t);
            if (!tmp.t) { rd_fail(r, f.at, "t", 5, "out of memory"); goto out; }
            tmp.t->producer = -1;
            Rd s = sub(r, &f, "TensorProto");
            if (decode_tensor(&s, tmp.t)) goto out;
            have_t = 1;
            break;
        }
        case 6: case 11: have_g = 1; break;
        case 7: { Rep rep = {0}; if (rep_elems(r, &f, 4, "floats", &rep, NULL)) goto out; nfl += rep.n; break; }
        case 8: { Rep rep = {0}; if (rep_elems(r, &f, 0, "ints", &rep, NULL)) goto out; nin += rep.n; break; }
        case 9: nstrings++; break;
        case 20: if (want_wt(r, &f, WT_VARINT, "type")) goto out; tmp.type = (int)f.v; break;
        default: break;
        }
    }
    if (k < 0) goto out;
    if (!tmp.name || !*tmp.name) { rd_fail(r, at, "name", 1, "attribute without a name"); goto out; }
    if (nfl > MAX_ELEMS || nin > MAX_ELEMS) { rd_fail(r, at, "ints", 8, "too many values"); goto out; }
    if (!tmp.type) { /* pre-IR-v2 files: infer from the field present */
        tmp.type = have_f ? IR_ATTR_FLOAT : have_i ? IR_ATTR_INT : have_s ? IR_ATTR_STRING : have_t ? IR_ATTR_TENSOR
                 : have_g ? IR_ATTR_GRAPH : nfl ? IR_ATTR_FLOATS : nin ? IR_ATTR_INTS : nstrings ? IR_ATTR_STRINGS : IR_ATTR_INTS;
    }
    /* ONNX's AttributeType runs from FLOAT (1) to TYPE_PROTOS (14) */
    if (tmp.type < IR_ATTR_FLOAT || tmp.type > 14) {
        char what[120];
        snprintf(what, sizeof what, "attribute '%s' has unknown type %d (ONNX types are 1..14)", tmp.name, tmp.type);
        rd_fail(r, at, "type", 20, what);
        goto out;
    }
    if ((tmp.type == IR_ATTR_STRING && !have_s) || (tmp.type == IR_ATTR_TENSOR && !have_t)) {
        char what[120];
        snprintf(what, sizeof what, "%s attribute '%s' has no value (field %s)", tmp.type == IR_ATTR_STRING ? "STRING" : "TENSOR",
                 tmp.name, tmp.type == IR_ATTR_STRING ? "s" : "t");
        rd_fail(r, at, "type", 20, what);
        goto out;
    }
    if (tmp.type == IR_ATTR_FLOATS || tmp.type == IR_ATTR_INTS) {
        size_t cnt = (size_t)(tmp.type == IR_ATTR_FLOATS ? nfl : nin);
        if (tmp.type == IR_ATTR_FLOATS) tmp.floats = malloc(cnt * 4 + 4);
        else tmp.ints = malloc(cnt * 8 + 8);
        if (!tmp.floats && !tmp.ints) { rd_fail(r, at, "ints", 8, "out of memory"); goto out; }
        r->pos = at;
        Rep rep = {0, tmp.type == IR_ATTR_FLOATS ? (void *)tmp.floats : (void *)tmp.ints, 0};
        while ((k = rd_next(r, &f)) == 1) {
            if (tmp.type == IR_ATTR_FLOATS && f.num == 7) rep_elems(r, &f, 4, "floats", &rep, put_f32);
            if (tmp.type == IR_ATTR_INTS && f.num == 8) rep_elems(r, &f, 0, "ints", &rep, put_ints);
        }
        if (k < 0) goto out;
        tmp.n = (int)rep.n;
    } else if (tmp.type == IR_ATTR_STRINGS) {
        tmp.n = nstrings;
    }
    IrAttr *a = ir_node_add_attr(g, node, tmp.name, tmp.type, r->e);
    if (!a) goto out;
    free(a->name);
    *a = tmp;
    memset(&tmp, 0, sizeof tmp);
    rc = 0;
out:
    ir_attr_free(&tmp);
    return rc;
}

/* ---- NodeProto ---- */

static int decode_node(Rd *r, IrGraph *g)
{
    Field f;
    int k;
    char *op = NULL, *name = NULL, *domain = NULL;
    size_t at = r->pos;
    int rc = -1;
    /* pass 1: op_type, name, domain */
    while ((k = rd_next(r, &f)) == 1) {
        if (f.num == 3 && get_str(r, &f, "name", &name)) goto out;
        if (f.num == 4 && get_str(r, &f, "op_type", &op)) goto out;
        if (f.num == 7 && get_str(r, &f, "domain", &domain)) goto out;
        if ((f.num == 1 || f.num == 2 || f.num == 5) && want_wt(r, &f, WT_LEN, f.num == 5 ? "attribute" : f.num == 1 ? "input" : "output")) goto out;
    }
    if (k < 0) goto out;
    if (!op || !*op) { rd_fail(r, at, "op_type", 4, "node without an op_type"); goto out; }
    char autoname[48];
    if (!name || !*name) { snprintf(autoname, sizeof autoname, "%s_%d", op, g->nn); free(name); name = ir_strdup(autoname); }
    int nd = ir_add_node(g, op, name, r->e);
    if (nd < 0) goto out;
    if (domain) { free(g->nodes[nd].domain); g->nodes[nd].domain = domain; domain = NULL; }
    r->pos = at;
    while ((k = rd_next(r, &f)) == 1) {
        if (f.num == 1 || f.num == 2) {
            char *s = NULL;
            if (get_str(r, &f, f.num == 1 ? "input" : "output", &s)) goto out;
            int t = -1;
            if (*s) t = ir_tensor(g, s, r->e);
            int bad = *s && t < 0;
            free(s);
            if (bad) goto out;
            if ((f.num == 1 ? ir_node_add_input : ir_node_add_output)(g, nd, t, r->e)) goto out;
        } else if (f.num == 5) {
            Rd s = sub(r, &f, "AttributeProto");
            if (decode_attr(&s, g, nd)) { atl_err_prefix(r->e, "node '%s' (%s)", name, op); goto out; }
        }
    }
    if (k < 0) goto out;
    rc = 0;
out:
    free(op); free(name); free(domain);
    return rc;
}

/* ---- GraphProto / ModelProto ---- */

static int decode_graph(Rd *r, IrGraph *g)
{
    Field f;
    int k;
    while ((k = rd_next(r, &f)) == 1) {
        Rd s;
        switch (f.num) {
        case 1:
            if (want_wt(r, &f, WT_LEN, "node")) return -1;
            s = sub(r, &f, "NodeProto");
            if (decode_node(&s, g)) return -1;
            break;
        case 2: if (get_str(r, &f, "name", &g->name)) return -1; break;
        case 5: {
            if (want_wt(r, &f, WT_LEN, "initializer")) return -1;
            s = sub(r, &f, "TensorProto");
            IrTensor tmp;
            memset(&tmp, 0, sizeof tmp);
            if (decode_tensor(&s, &tmp)) { ir_tensor_free_contents(&tmp); return -1; }
            if (!tmp.name[0]) { ir_tensor_free_contents(&tmp); return rd_fail(r, f.at, "initializer", 5, "initializer without a name"); }
            int t = ir_tensor(g, tmp.name, r->e);
            if (t < 0) { ir_tensor_free_contents(&tmp); return -1; }
            IrTensor *x = &g->t[t];
            if (x->data) { ir_tensor_free_contents(&tmp); return rd_fail(r, f.at, "initializer", 5, "duplicate initializer"); }
            x->dtype = tmp.dtype;
            x->ndim = tmp.ndim;
            memcpy(x->dims, tmp.dims, sizeof x->dims);
            x->data = tmp.data;
            free(tmp.name);
            break;
        }
        case 15: return rd_fail(r, f.at, "sparse_initializer", 15, "sparse initializers are not supported");
        case 11: case 12: case 13:
            if (want_wt(r, &f, WT_LEN, f.num == 11 ? "input" : f.num == 12 ? "output" : "value_info")) return -1;
            s = sub(r, &f, "ValueInfoProto");
            if (decode_value_info(&s, g, f.num == 11 ? 1 : f.num == 12 ? 2 : 0)) return -1;
            break;
        default: break;
        }
    }
    return k < 0 ? -1 : 0;
}

static int load_buffer(const uint8_t *buf, size_t len, const char *path, SynthList *synth, IrGraph *g, AtlErr *e)
{
    ir_init(g);
    g->opset = 0;
    Rd r = {buf, 0, len, path, "ModelProto", e, synth};
    Field f;
    int k, have_graph = 0;
    Field graph = {0};
    while ((k = rd_next(&r, &f)) == 1) {
        if (f.num == 8) {
            if (want_wt(&r, &f, WT_LEN, "opset_import")) return -1;
            Rd s = sub(&r, &f, "OperatorSetIdProto");
            char *dom = NULL;
            int64_t ver = -1;
            Field h;
            int kk;
            while ((kk = rd_next(&s, &h)) == 1) {
                if (h.num == 1 && get_str(&s, &h, "domain", &dom)) kk = -1;
                else if (h.num == 2) { if (want_wt(&s, &h, WT_VARINT, "version")) kk = -1; else ver = (int64_t)h.v; }
                if (kk < 0) break;
            }
            if (kk < 0) { free(dom); return -1; }
            if (!dom || !*dom || !strcmp(dom, "ai.onnx")) {
                if (ver < 1 || ver > 1000) { free(dom); return rd_fail(&r, f.at, "opset_import", 8, "invalid opset version"); }
                g->opset = (int)ver;
            }
            free(dom);
        } else if (f.num == 7) {
            if (want_wt(&r, &f, WT_LEN, "graph")) return -1;
            graph = f;
            have_graph = 1;
        }
    }
    if (k < 0) return -1;
    if (!have_graph) return atl_fail(e, "%s: not an ONNX model: ModelProto has no graph (field 7)", fname(path));
    if (!g->opset) g->opset = 1; /* no default-domain import: ONNX defaults to opset 1 */
    Rd s = sub(&r, &graph, "GraphProto");
    if (decode_graph(&s, g)) return -1;
    /* graph inputs that have initializers are constants, not inputs */
    int kept = 0;
    for (int i = 0; i < g->nin; i++) {
        int t = g->inputs[i];
        if (g->t[t].data) g->t[t].is_input = 0;
        else g->inputs[kept++] = t;
    }
    g->nin = kept;
    return 0;
}

int onnx_load_buffer_opts(const uint8_t *buf, size_t len, const char *path, OnnxLoadOpts *o, IrGraph *g, AtlErr *e)
{
    SynthList synth = {0};
    int want = o && o->synthetic_weights;
    synth.max_bytes = o && o->synthetic_max_bytes > 0 ? o->synthetic_max_bytes : 0x7fffffff;
    int rc = load_buffer(buf, len, path, want ? &synth : NULL, g, e);
    if (!rc && want) rc = synth_refine(g, &synth, e);
    if (o) {
        o->nsynthetic = synth.n;
        o->synthetic_bytes = synth.bytes;
    }
    synth_list_free(&synth);
    return rc;
}

int onnx_load_buffer(const uint8_t *buf, size_t len, const char *path, IrGraph *g, AtlErr *e)
{
    return load_buffer(buf, len, path, NULL, g, e);
}

int onnx_load_file_opts(const char *path, OnnxLoadOpts *o, IrGraph *g, AtlErr *e)
{
    unsigned char *buf;
    size_t n;
    ir_init(g);
    if (atl_read_file(path, &buf, &n, e)) return -1;
    int rc = onnx_load_buffer_opts(buf, n, path, o, g, e);
    free(buf);
    return rc;
}

int onnx_load_file(const char *path, IrGraph *g, AtlErr *e)
{
    return onnx_load_file_opts(path, NULL, g, e);
}
