/* asm.c - the assembler: program text (docs/asm.md) -> AtlProgram.
 *
 * An instruction line is `MNEMONIC key=value ...`; the keys are the field
 * names of the op's format (isa_formats/isa_fields) plus the header keys
 * wait, signal and layer, so parsing is one loop over the table with one
 * parser per field KIND, never per opcode. Directives (.cores .core .engine
 * .equ .data .zero .expect .output) are dispatched through a small table.
 * Every error reads "FILE:LINE: message" and names the mnemonic and field.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "isa/isa.h"
#include "isa/program.h"
#include "isa/field_access.h"

/* Fields that may be left out of an instruction line; they default to 0.
 * Everything else in an op's format is required. */
static const AtlFieldId optional_fields[] = {
    ISA_F_SRC_CORE, ISA_F_MASK, ISA_F_ACC, ISA_F_COUNTPAD, ISA_F_PERCH, ISA_F_EVEN, ISA_F_ALPHA, ISA_F_BETA,
};

#define ASM_MAX_COUNT (1 << 26) /* elements one data generator may produce */
#define ASM_MAX_DATA_BYTES ((uint64_t)1 << 28) /* bytes of .data/.zero in one program (256 MiB) */
#define ASM_ADDR_LIMIT ((uint64_t)1 << 40)

/* ---- symbols ---- */

typedef struct {
    char name[64];
    int64_t value;
    int line;
} Sym;

typedef struct {
    Sym *v;
    int n, cap;
} Syms;

static const Sym *sym_find(const Syms *s, const char *name, size_t len)
{
    if (!s) return NULL;
    for (int i = 0; i < s->n; i++)
        if (strlen(s->v[i].name) == len && !strncmp(s->v[i].name, name, len)) return &s->v[i];
    return NULL;
}

static int is_ident_start(int c) { return isalpha(c) || c == '_'; }
static int is_ident_char(int c) { return isalnum(c) || c == '_' || c == '.'; }

static int valid_name(const char *s) { return prog_valid_name(s); }

/* ---- integer expressions: + - * ( ), numbers (dec, 0x, 0b), symbols ---- */

#define ASM_MAX_NESTING 64 /* parentheses and unary signs around one operand (the parser recurses) */

typedef struct {
    const char *s;
    const Syms *syms;
    char err[160];
    int depth;          /* nesting of the operand being parsed */
} Ex;

static int ex_sum(Ex *x, int64_t *v);
static int ex_atom_nested(Ex *x, int64_t *v);

/* An operand, at most ASM_MAX_NESTING levels deep: the recursion of the
 * parser must not run out of stack on hostile text. */
static int ex_atom(Ex *x, int64_t *v)
{
    if (x->depth >= ASM_MAX_NESTING) {
        snprintf(x->err, sizeof x->err, "expression nested more than %d levels deep (parentheses and signs)", ASM_MAX_NESTING);
        return -1;
    }
    x->depth++;
    int rc = ex_atom_nested(x, v);
    x->depth--;
    return rc;
}

static int ex_atom_nested(Ex *x, int64_t *v)
{
    const char *s = x->s;
    if (*s == '-') {
        x->s++;
        int64_t t;
        if (ex_atom(x, &t)) return -1;
        if (t == INT64_MIN) { snprintf(x->err, sizeof x->err, "overflow"); return -1; }
        *v = -t;
        return 0;
    }
    if (*s == '+') { x->s++; return ex_atom(x, v); }
    if (*s == '(') {
        x->s++;
        if (ex_sum(x, v)) return -1;
        if (*x->s != ')') { snprintf(x->err, sizeof x->err, "missing ')'"); return -1; }
        x->s++;
        return 0;
    }
    if (isdigit((unsigned char)*s)) {
        int base = 10;
        const char *d = s;
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) { base = 16; d = s + 2; }
        else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) { base = 2; d = s + 2; }
        uint64_t acc = 0;
        int nd = 0;
        for (;; d++, nd++) {
            int c = (unsigned char)*d, dv;
            if (isdigit(c)) dv = c - '0';
            else if (isxdigit(c)) dv = 10 + tolower(c) - 'a';
            else break;
            if (dv >= base) break;
            if (acc > (UINT64_MAX - (uint64_t)dv) / (uint64_t)base) { snprintf(x->err, sizeof x->err, "number too large"); return -1; }
            acc = acc * (uint64_t)base + (uint64_t)dv;
        }
        if (nd == 0 || is_ident_char((unsigned char)*d)) {
            snprintf(x->err, sizeof x->err, "bad number '%.*s'", (int)strcspn(s, "+-*()"), s);
            return -1;
        }
        if (acc > (uint64_t)INT64_MAX) { snprintf(x->err, sizeof x->err, "number too large"); return -1; }
        *v = (int64_t)acc;
        x->s = d;
        return 0;
    }
    if (is_ident_start((unsigned char)*s)) {
        const char *q = s;
        while (is_ident_char((unsigned char)*q)) q++;
        const Sym *sym = sym_find(x->syms, s, (size_t)(q - s));
        if (!sym) { snprintf(x->err, sizeof x->err, "unknown symbol '%.*s'", (int)(q - s), s); return -1; }
        *v = sym->value;
        x->s = q;
        return 0;
    }
    snprintf(x->err, sizeof x->err, *s ? "unexpected '%c'" : "missing value", *s);
    return -1;
}

static int ex_prod(Ex *x, int64_t *v)
{
    if (ex_atom(x, v)) return -1;
    while (*x->s == '*') {
        x->s++;
        int64_t t;
        if (ex_atom(x, &t)) return -1;
        if (__builtin_mul_overflow(*v, t, v)) { snprintf(x->err, sizeof x->err, "overflow"); return -1; }
    }
    return 0;
}

static int ex_sum(Ex *x, int64_t *v)
{
    if (ex_prod(x, v)) return -1;
    while (*x->s == '+' || *x->s == '-') {
        int neg = *x->s == '-';
        x->s++;
        int64_t t;
        if (ex_prod(x, &t)) return -1;
        if (neg ? __builtin_sub_overflow(*v, t, v) : __builtin_add_overflow(*v, t, v)) {
            snprintf(x->err, sizeof x->err, "overflow");
            return -1;
        }
    }
    return 0;
}

/* Whole-string expression; on failure writes a message into err. */
static int eval_int(const char *s, const Syms *syms, int64_t *v, char *err, size_t cap)
{
    Ex x = {s, syms, {0}, 0};
    if (ex_sum(&x, v) == 0 && *x.s == 0) return 0;
    if (!x.err[0]) snprintf(x.err, sizeof x.err, "unexpected '%s'", x.s);
    snprintf(err, cap, "%s", x.err);
    return -1;
}

/* A float literal (strtod syntax incl. inf/nan), bits:0xXXXXXXXX, or an
 * integer expression. */
static int eval_real(const char *s, const Syms *syms, double *v, char *err, size_t cap)
{
    if (!*s) { snprintf(err, cap, "missing value"); return -1; }
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (end != s && *end == 0) { *v = d; return 0; }
    int64_t i;
    if (eval_int(s, syms, &i, err, cap) == 0) { *v = (double)i; return 0; }
    snprintf(err, cap, "bad number '%s'", s);
    return -1;
}

/* ---- one instruction ---- */

static int is_optional(AtlFieldId id)
{
    for (size_t i = 0; i < sizeof optional_fields / sizeof optional_fields[0]; i++)
        if (optional_fields[i] == id) return 1;
    return 0;
}

static int space_from_name(const char *s, size_t len)
{
    for (int i = 0; i < ISA_NUM_SPACES; i++)
        if (strlen(isa_space_name(i)) == len && !strncmp(isa_space_name(i), s, len)) return i;
    return -1;
}

/* Range check of one element against the field's encoded width. */
static int check_elem(const char *mn, const char *label, AtlFieldKind kind, int bits, int64_t v, AtlErr *e)
{
    if (kind == ISA_K_INT || kind == ISA_K_STRIDES) {
        if (v < isa_smin(bits) || v > isa_smax(bits))
            return atl_fail(e, "%s: field %s: %" PRId64 " out of range %" PRId64 "..%" PRId64 " (%d signed bits)",
                            mn, label, v, isa_smin(bits), isa_smax(bits), bits);
        return 0;
    }
    if (kind == ISA_K_FLAG && v != 0 && v != 1) return atl_fail(e, "%s: field %s: must be 0 or 1, not %" PRId64, mn, label, v);
    if (v < 0 || (uint64_t)v > isa_umax(bits))
        return atl_fail(e, "%s: field %s: %" PRId64 " out of range 0..%" PRIu64 " (%d bits)", mn, label, v, isa_umax(bits), bits);
    return 0;
}

static int parse_field(const char *mn, const AtlFieldInfo *f, int bits, const char *val, const Syms *syms,
                       AtlInsn *in, AtlErr *e)
{
    char err[200];
    int64_t v;
    switch (f->kind) {
    case ISA_K_DTYPE: {
        int d = isa_dtype_from_name(val);
        if (d < 0) return atl_fail(e, "%s: field %s: unknown dtype '%s' (i8 i16 i32 f16 bf16 f32)", mn, f->name, val);
        isa_field_set(in, f, 0, (uint64_t)d);
        return 0;
    }
    case ISA_K_ADDR:
    case ISA_K_LMEM: {
        const char *colon = strchr(val, ':');
        int sp = ISA_SPACE_LMEM;
        const char *num = val;
        int64_t cluster = -1;
        if (colon) {
            /* SPACE:OFFSET, or NAME@CLUSTER:OFFSET for a peer space */
            const char *at = memchr(val, '@', (size_t)(colon - val));
            sp = space_from_name(val, (size_t)((at ? at : colon) - val));
            if (sp < 0)
                return atl_fail(e, "%s: field %s: unknown memory space '%.*s' (dram sram lmem peer@CLUSTER)", mn, f->name,
                                (int)((at ? at : colon) - val), val);
            if (isa_space_is_peer(sp) != (at != NULL))
                return atl_fail(e, "%s: field %s: %s", mn, f->name,
                                at ? "only a peer space names a cluster" : "a peer operand names its cluster: peer@CLUSTER:OFFSET");
            if (at) {
                char cl[64];
                size_t len = (size_t)(colon - at - 1);
                if (len >= sizeof cl) return atl_fail(e, "%s: field %s: cluster too long", mn, f->name);
                memcpy(cl, at + 1, len);
                cl[len] = 0;
                if (eval_int(cl, syms, &cluster, err, sizeof err)) return atl_fail(e, "%s: field %s: cluster: %s", mn, f->name, err);
                if (cluster < 0 || cluster > ISA_PEER_MAX_CLUSTER)
                    return atl_fail(e, "%s: field %s: cluster %" PRId64 " out of range 0..%d", mn, f->name, cluster, ISA_PEER_MAX_CLUSTER);
            }
            num = colon + 1;
        } else if (f->kind == ISA_K_ADDR) {
            return atl_fail(e, "%s: field %s: needs a space, e.g. dram:0x1000 (dram sram lmem peer@CLUSTER)", mn, f->name);
        }
        if (f->kind == ISA_K_LMEM && sp != ISA_SPACE_LMEM)
            return atl_fail(e, "%s: field %s: operand must be in lmem, not %s", mn, f->name, isa_space_name(sp));
        if (eval_int(num, syms, &v, err, sizeof err)) return atl_fail(e, "%s: field %s: %s", mn, f->name, err);
        if (cluster >= 0) {
            if (v < 0 || v > (int64_t)0xffffffff)
                return atl_fail(e, "%s: field %s: offset %" PRId64 " out of range 0..0xffffffff (32 bits in a peer address)", mn,
                                f->name, v);
            v = (int64_t)isa_peer_addr((int)cluster, (uint64_t)v);
        }
        if (check_elem(mn, f->name, f->kind, bits, v, e)) return -1;
        isa_field_set(in, f, 0, (uint64_t)v);
        if (f->kind == ISA_K_ADDR) *isa_field_space(in, f) = (uint8_t)sp;
        return 0;
    }
    case ISA_K_DIMS:
    case ISA_K_STRIDES: {
        int64_t el[4];
        int n = 0;
        char part[256];
        const char *p = val;
        for (;;) {
            size_t len = strcspn(p, ",");
            if (n == 4) return atl_fail(e, "%s: field %s: more than 4 values", mn, f->name);
            if (len >= sizeof part) return atl_fail(e, "%s: field %s: value too long", mn, f->name);
            memcpy(part, p, len);
            part[len] = 0;
            if (eval_int(part, syms, &el[n], err, sizeof err)) return atl_fail(e, "%s: field %s: %s", mn, f->name, err);
            n++;
            if (!p[len]) break;
            p += len + 1;
        }
        int64_t fill = f->kind == ISA_K_DIMS ? 1 : 0;
        for (int j = 0; j < 4; j++) {
            int64_t x = j < 4 - n ? fill : el[j - (4 - n)];
            char label[48];
            snprintf(label, sizeof label, "%s[%d]", f->name, j);
            if (check_elem(mn, label, f->kind, bits, x, e)) return -1;
            isa_field_set(in, f, j, (uint64_t)x);
        }
        return 0;
    }
    case ISA_K_F32: {
        uint32_t b;
        if (!strncmp(val, "bits:", 5)) {
            if (eval_int(val + 5, syms, &v, err, sizeof err)) return atl_fail(e, "%s: field %s: %s", mn, f->name, err);
            if (v < 0 || v > 0xffffffffLL) return atl_fail(e, "%s: field %s: bit pattern does not fit 32 bits", mn, f->name);
            b = (uint32_t)v;
        } else {
            double d;
            if (eval_real(val, syms, &d, err, sizeof err)) return atl_fail(e, "%s: field %s: %s", mn, f->name, err);
            float fl = (float)d;
            if (isinf(fl) && !isinf(d)) return atl_fail(e, "%s: field %s: %s overflows f32", mn, f->name, val);
            memcpy(&b, &fl, 4);
        }
        isa_field_set(in, f, 0, b);
        return 0;
    }
    default:
        if (eval_int(val, syms, &v, err, sizeof err)) return atl_fail(e, "%s: field %s: %s", mn, f->name, err);
        if (check_elem(mn, f->name, f->kind, bits, v, e)) return -1;
        isa_field_set(in, f, 0, (uint64_t)v);
        return 0;
    }
}

/* Header keys, outside every format. */
enum { HDR_WAIT, HDR_SIGNAL, HDR_LAYER, HDR_N };
static const char *const header_keys[HDR_N] = {"wait", "signal", "layer"};

/* tokens[0] is the mnemonic; tokens[1..n) are key=value (modified in place). */
static int asm_insn_tokens(char **tok, int ntok, const Syms *syms, AtlInsn *in, AtlErr *e)
{
    memset(in, 0, sizeof *in);
    int op = isa_op_from_mnemonic(tok[0]);
    if (op < 0) return atl_fail(e, "unknown instruction '%s'", tok[0]);
    const char *mn = isa_ops[op].mnemonic;
    const AtlFormatInfo *fmt = &isa_formats[isa_ops[op].format];
    in->op = (uint8_t)op;
    uint32_t seen = 0;
    int seen_hdr[HDR_N] = {0};
    char err[200];
    for (int t = 1; t < ntok; t++) {
        char *eq = strchr(tok[t], '=');
        if (!eq || eq == tok[t]) return atl_fail(e, "%s: operand '%s' is not key=value", mn, tok[t]);
        *eq = 0;
        const char *key = tok[t], *val = eq + 1;
        if (!*val) return atl_fail(e, "%s: field %s: missing value", mn, key);
        int h;
        for (h = 0; h < HDR_N; h++)
            if (!strcmp(key, header_keys[h])) break;
        if (h < HDR_N) {
            if (seen_hdr[h]) return atl_fail(e, "%s: field %s given twice", mn, key);
            seen_hdr[h] = 1;
            int64_t v;
            if (eval_int(val, syms, &v, err, sizeof err)) return atl_fail(e, "%s: field %s: %s", mn, key, err);
            if (h == HDR_LAYER) {
                if (v < 0 || v > 65535) return atl_fail(e, "%s: field layer: %" PRId64 " out of range 0..65535", mn, v);
                in->layer = (uint16_t)v;
            } else {
                if (v < 0 || v >= ISA_MAX_SEMAPHORES)
                    return atl_fail(e, "%s: field %s: semaphore %" PRId64 " out of range 0..%d", mn, key, v, ISA_MAX_SEMAPHORES - 1);
                if (h == HDR_WAIT) in->wait = (uint8_t)(v + 1);
                else in->signal = (uint8_t)(v + 1);
            }
            continue;
        }
        int i;
        for (i = 0; i < fmt->nfields; i++)
            if (!strcmp(key, isa_fields[fmt->fields[i].field].name)) break;
        if (i == fmt->nfields) {
            char list[512] = "";
            size_t len = 0;
            for (int j = 0; j < fmt->nfields && len < sizeof list; j++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s ", isa_fields[fmt->fields[j].field].name);
            snprintf(list + (len < sizeof list ? len : sizeof list - 1), sizeof list - (len < sizeof list ? len : sizeof list - 1),
                     "wait signal layer");
            return atl_fail(e, "%s: unknown field '%s' (fields: %s)", mn, key, list);
        }
        if (seen & (1u << i)) return atl_fail(e, "%s: field %s given twice", mn, key);
        seen |= 1u << i;
        if (parse_field(mn, &isa_fields[fmt->fields[i].field], fmt->fields[i].bits, val, syms, in, e)) return -1;
    }
    for (int i = 0; i < fmt->nfields; i++)
        if (!(seen & (1u << i)) && !is_optional(fmt->fields[i].field))
            return atl_fail(e, "%s: missing field %s", mn, isa_fields[fmt->fields[i].field].name);
    return 0;
}

/* ---- lines and tokens ---- */

typedef struct {
    char **v;
    int n, cap;
} Toks;

/* Splits s (modified in place) at whitespace. */
static int tokenize(char *s, Toks *t, AtlErr *e)
{
    t->n = 0;
    for (char *p = s;;) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) break;
        if (t->n == t->cap) {
            int cap = t->cap ? t->cap * 2 : 32;
            char **nv = realloc(t->v, (size_t)cap * sizeof *nv);
            if (!nv) return atl_fail(e, "out of memory");
            t->v = nv;
            t->cap = cap;
        }
        t->v[t->n++] = p;
        while (*p && !isspace((unsigned char)*p)) p++;
        if (*p) *p++ = 0;
    }
    return 0;
}

int isa_asm_line(const char *text, AtlInsn *out, AtlErr *e)
{
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    if (!copy) return atl_fail(e, "out of memory");
    memcpy(copy, text, len + 1);
    copy[strcspn(copy, "#;")] = 0;
    Toks t = {0};
    int rc = tokenize(copy, &t, e);
    if (rc == 0 && t.n == 0) rc = atl_fail(e, "empty instruction");
    if (rc == 0) rc = asm_insn_tokens(t.v, t.n, NULL, out, e);
    free(t.v);
    free(copy);
    return rc;
}

/* ---- the program assembler ---- */

typedef struct {
    const char *file;
    int line;
    AtlProgram *p;
    Syms syms;
    int core, engine;      /* engine -1 until .engine */
    int cores_fixed;       /* .cores given */
    const char *ctx;       /* "directive NAME" put in front of value errors */
    uint64_t data_bytes;   /* bytes of DRAM data defined so far */
    uint64_t data_limit;   /* at most this many (prog_assemble_limited) */
    AtlErr *e;
} Asm;

static int asm_fail(Asm *a, const char *fmt, ...) ATL_PRINTF(2, 3);
static int asm_fail(Asm *a, const char *fmt, ...)
{
    char msg[ATL_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (a->ctx) return atl_fail(a->e, "%s:%d: %s: %s", a->file, a->line, a->ctx, msg);
    return atl_fail(a->e, "%s:%d: %s", a->file, a->line, msg);
}

static int sym_add(Asm *a, const char *name, int64_t value)
{
    if (!valid_name(name)) return asm_fail(a, "bad name '%s' (letters, digits, _ and ., starting with a letter or _; < 64 chars)", name);
    const Sym *old = sym_find(&a->syms, name, strlen(name));
    if (old) return asm_fail(a, "symbol '%s' already defined on line %d", name, old->line);
    if (a->syms.n == a->syms.cap) {
        int cap = a->syms.cap ? a->syms.cap * 2 : 16;
        Sym *nv = realloc(a->syms.v, (size_t)cap * sizeof *nv);
        if (!nv) return asm_fail(a, "out of memory");
        a->syms.v = nv;
        a->syms.cap = cap;
    }
    Sym *s = &a->syms.v[a->syms.n++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->value = value;
    s->line = a->line;
    return 0;
}

static int asm_int(Asm *a, const char *what, const char *s, int64_t lo, int64_t hi, int64_t *v)
{
    char err[200];
    if (eval_int(s, &a->syms, v, err, sizeof err)) return asm_fail(a, "%s: %s", what, err);
    if (*v < lo || *v > hi) return asm_fail(a, "%s: %" PRId64 " out of range %" PRId64 "..%" PRId64, what, *v, lo, hi);
    return 0;
}

/* dram:EXPR */
static int asm_dram_addr(Asm *a, const char *what, const char *s, uint64_t *addr)
{
    if (strncmp(s, "dram:", 5) != 0) return asm_fail(a, "%s: address must be dram:OFFSET, not '%s'", what, s);
    int64_t v;
    if (asm_int(a, what, s + 5, 0, (int64_t)ASM_ADDR_LIMIT - 1, &v)) return -1;
    *addr = (uint64_t)v;
    return 0;
}

/* ---- element conversion ---- */

static uint16_t f32_to_bf16(uint32_t x)
{
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
    x += 0x7fffu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

static uint16_t f32_to_f16(uint32_t x)
{
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    int exp = (int)((x >> 23) & 0xff);
    uint32_t mant = x & 0x7fffff;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0));
    int he = exp - 127 + 15;
    if (he >= 31) return sign | 0x7c00;
    if (he <= 0) {
        if (he < -10) return sign;
        mant |= 0x800000;
        int shift = 14 - he;
        uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)he << 10) | (mant >> 13), rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++;
    return (uint16_t)(sign | half);
}

static int dtype_is_float(int d) { return d == ISA_F16 || d == ISA_BF16 || d == ISA_F32; }

static void int_range(int d, int64_t *lo, int64_t *hi)
{
    int bits = 8 * isa_dtype_size(d);
    *lo = -((int64_t)1 << (bits - 1));
    *hi = ((int64_t)1 << (bits - 1)) - 1;
}

/* Writes one element; integers are range-checked, floats rounded to the
 * dtype (to nearest even) and rejected if they overflow it. */
static int store_elem(Asm *a, int d, int64_t iv, double fv, uint8_t *dst, size_t idx)
{
    int sz = isa_dtype_size(d);
    uint8_t *p = dst + idx * (size_t)sz;
    uint64_t bits;
    if (dtype_is_float(d)) {
        float f = (float)fv;
        uint32_t fb;
        memcpy(&fb, &f, 4);
        if (d == ISA_F32) bits = fb;
        else if (d == ISA_F16) bits = f32_to_f16(fb);
        else bits = f32_to_bf16(fb);
        int inf_out = d == ISA_F32 ? isinf(f) : d == ISA_F16 ? (bits & 0x7fff) == 0x7c00 : (bits & 0x7fff) == 0x7f80;
        if (inf_out && !isinf(fv)) return asm_fail(a, "value %g at index %zu overflows %s", fv, idx, isa_dtype_name(d));
    } else {
        int64_t lo, hi;
        int_range(d, &lo, &hi);
        if (iv < lo || iv > hi) return asm_fail(a, "value %" PRId64 " at index %zu out of %s range %" PRId64 "..%" PRId64, iv, idx, isa_dtype_name(d), lo, hi);
        bits = (uint64_t)iv;
    }
    for (int i = 0; i < sz; i++) p[i] = (uint8_t)(bits >> (8 * i));
    return 0;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    if (c >= 'a' && c <= 'f') return 10 + c - 'a';
    return -1;
}

/* Parses a value source (a list, `random SEED COUNT [LO HI]`,
 * `range START STEP COUNT` or `hex HEX...`) into a malloc'd byte array. */
static int asm_values(Asm *a, int d, char **tok, int ntok, uint8_t **out, size_t *nbytes)
{
    *out = NULL;
    *nbytes = 0;
    size_t sz = (size_t)isa_dtype_size(d), count;
    int isf = dtype_is_float(d);
    char err[200];
    if (ntok == 0) return asm_fail(a, "no values");
    const char *gen = tok[0];
    if (!strcmp(gen, "hex")) {
        size_t digits = 0;
        for (int i = 1; i < ntok; i++) digits += strlen(tok[i]);
        if (digits == 0 || digits % 2) return asm_fail(a, "hex: need an even, non-zero number of hex digits (got %zu)", digits);
        size_t n = digits / 2;
        if (n % sz) return asm_fail(a, "hex: %zu bytes is not a whole number of %s elements", n, isa_dtype_name(d));
        uint8_t *b = malloc(n);
        if (!b) return asm_fail(a, "out of memory");
        size_t k = 0;
        int hi = -1;
        for (int i = 1; i < ntok; i++)
            for (const char *q = tok[i]; *q; q++) {
                int v = hexval((unsigned char)*q);
                if (v < 0) { free(b); return asm_fail(a, "hex: bad digit '%c'", *q); }
                if (hi < 0) hi = v;
                else { b[k++] = (uint8_t)(hi << 4 | v); hi = -1; }
            }
        *out = b;
        *nbytes = n;
        return 0;
    }
    int is_random = !strcmp(gen, "random"), is_range = !strcmp(gen, "range");
    if (is_random || is_range) {
        if (is_random && ntok != 3 && ntok != 5) return asm_fail(a, "random: expected SEED COUNT [LO HI]");
        if (is_range && ntok != 4) return asm_fail(a, "range: expected START STEP COUNT");
        int64_t cnt;
        if (asm_int(a, gen, tok[is_random ? 2 : 3], 1, ASM_MAX_COUNT, &cnt)) return -1;
        count = (size_t)cnt;
        uint8_t *b = calloc(count, sz);
        if (!b) return asm_fail(a, "out of memory");
        if (is_random) {
            int64_t seed;
            if (asm_int(a, "random: seed", tok[1], INT64_MIN, INT64_MAX, &seed)) { free(b); return -1; }
            uint64_t st = (uint64_t)seed;
            int64_t ilo, ihi;
            double flo = -1.0, fhi = 1.0;
            int_range(d, &ilo, &ihi);
            if (ntok == 5) {
                if (isf) {
                    if (eval_real(tok[3], &a->syms, &flo, err, sizeof err) || eval_real(tok[4], &a->syms, &fhi, err, sizeof err)) {
                        free(b);
                        return asm_fail(a, "random: %s", err);
                    }
                    if (!(flo <= fhi) || !isfinite(flo) || !isfinite(fhi)) { free(b); return asm_fail(a, "random: need finite LO <= HI"); }
                } else {
                    int64_t lo0 = ilo, hi0 = ihi;
                    if (asm_int(a, "random: lo", tok[3], lo0, hi0, &ilo) || asm_int(a, "random: hi", tok[4], lo0, hi0, &ihi)) { free(b); return -1; }
                    if (ilo > ihi) { free(b); return asm_fail(a, "random: LO %" PRId64 " > HI %" PRId64, ilo, ihi); }
                }
            }
            for (size_t i = 0; i < count; i++) {
                uint64_t r = splitmix64(&st);
                int rc;
                if (isf) rc = store_elem(a, d, 0, flo + (fhi - flo) * ((double)(r >> 11) * 0x1.0p-53), b, i);
                else rc = store_elem(a, d, ilo + (int64_t)(r % ((uint64_t)(ihi - ilo) + 1)), 0, b, i);
                if (rc) { free(b); return -1; }
            }
        } else {
            double fstart = 0, fstep = 0;
            int64_t istart = 0, istep = 0;
            if (isf) {
                if (eval_real(tok[1], &a->syms, &fstart, err, sizeof err) || eval_real(tok[2], &a->syms, &fstep, err, sizeof err)) {
                    free(b);
                    return asm_fail(a, "range: %s", err);
                }
            } else if (asm_int(a, "range: start", tok[1], INT64_MIN, INT64_MAX, &istart) ||
                       asm_int(a, "range: step", tok[2], INT64_MIN, INT64_MAX, &istep)) {
                free(b);
                return -1;
            }
            for (size_t i = 0; i < count; i++) {
                int rc;
                if (isf) {
                    rc = store_elem(a, d, 0, fstart + (double)i * fstep, b, i);
                } else {
                    int64_t v;
                    if (__builtin_mul_overflow(istep, (int64_t)i, &v) || __builtin_add_overflow(v, istart, &v)) {
                        free(b);
                        return asm_fail(a, "range: overflow at index %zu", i);
                    }
                    rc = store_elem(a, d, v, 0, b, i);
                }
                if (rc) { free(b); return -1; }
            }
        }
        *out = b;
        *nbytes = count * sz;
        return 0;
    }
    count = (size_t)ntok;
    uint8_t *b = calloc(count, sz);
    if (!b) return asm_fail(a, "out of memory");
    for (size_t i = 0; i < count; i++) {
        int rc;
        if (isf) {
            double v;
            if (eval_real(tok[i], &a->syms, &v, err, sizeof err)) { free(b); return asm_fail(a, "value %zu: %s", i, err); }
            rc = store_elem(a, d, 0, v, b, i);
        } else {
            int64_t v;
            if (eval_int(tok[i], &a->syms, &v, err, sizeof err)) { free(b); return asm_fail(a, "value %zu: %s", i, err); }
            rc = store_elem(a, d, v, 0, b, i);
        }
        if (rc) { free(b); return -1; }
    }
    *out = b;
    *nbytes = count * sz;
    return 0;
}

/* ---- directives ---- */

/* Fails when n more bytes of DRAM data would pass the program's budget. */
static int data_budget(Asm *a, const char *name, uint64_t n)
{
    if (n > a->data_limit - a->data_bytes)
        return asm_fail(a, "%s: %" PRIu64 " more bytes of DRAM data would pass the %" PRIu64
                        " MiB a program may define (%" PRIu64 " bytes so far)", name, n, a->data_limit >> 20,
                        a->data_bytes);
    return 0;
}

static int add_segment(Asm *a, const char *name, uint64_t addr, uint8_t *bytes, size_t n)
{
    AtlProgram *p = a->p;
    if (data_budget(a, name, n)) { free(bytes); return -1; }
    if (addr + n > ASM_ADDR_LIMIT) { free(bytes); return asm_fail(a, "%s: 0x%" PRIx64 " + %zu bytes is beyond the 40-bit DRAM address space", name, addr, n); }
    for (int i = 0; i < p->nsegs; i++) {
        const AtlDataSeg *g = &p->segs[i];
        if (!strcmp(g->name, name)) { free(bytes); return asm_fail(a, "data '%s' defined twice", name); }
        if (addr < g->addr + g->size && g->addr < addr + n) {
            free(bytes);
            return asm_fail(a, "%s [0x%" PRIx64 ", 0x%" PRIx64 ") overlaps %s [0x%" PRIx64 ", 0x%" PRIx64 ")", name, addr,
                            addr + n, g->name, g->addr, g->addr + g->size);
        }
    }
    if (sym_add(a, name, (int64_t)addr)) { free(bytes); return -1; }
    AtlDataSeg *ns = realloc(p->segs, (size_t)(p->nsegs + 1) * sizeof *ns);
    if (!ns) { free(bytes); return asm_fail(a, "out of memory"); }
    p->segs = ns;
    AtlDataSeg *g = &p->segs[p->nsegs++];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    g->addr = addr;
    g->size = n;
    g->bytes = bytes;
    a->data_bytes += n;
    return 0;
}

static int dir_cores(Asm *a, char **t, int n)
{
    int64_t v;
    if (n != 1) return asm_fail(a, ".cores: expected one number");
    if (a->cores_fixed) return asm_fail(a, ".cores given twice");
    if (asm_int(a, ".cores", t[0], 1, PROG_MAX_CORES, &v)) return -1;
    if (v < a->p->ncores) {
        for (int c = (int)v; c < a->p->ncores; c++)
            for (int g = 0; g < ISA_NUM_ENGINES; g++)
                if (prog_stream(a->p, c, g)->count) return asm_fail(a, ".cores %" PRId64 ": core %d already has instructions", v, c);
    }
    AtlErr e2;
    if (prog_set_cores(a->p, (int)v, &e2)) return asm_fail(a, ".cores: %s", e2.msg);
    a->cores_fixed = 1;
    return 0;
}

static int dir_core(Asm *a, char **t, int n)
{
    int64_t v;
    if (n != 1) return asm_fail(a, ".core: expected one number");
    if (asm_int(a, ".core", t[0], 0, PROG_MAX_CORES - 1, &v)) return -1;
    if (v >= a->p->ncores) {
        if (a->cores_fixed) return asm_fail(a, ".core %" PRId64 " is beyond .cores %d", v, a->p->ncores);
        AtlErr e2;
        if (prog_set_cores(a->p, (int)v + 1, &e2)) return asm_fail(a, ".core: %s", e2.msg);
    }
    a->core = (int)v;
    a->engine = -1;
    return 0;
}

static int dir_engine(Asm *a, char **t, int n)
{
    if (n != 1) return asm_fail(a, ".engine: expected dma, mat or vec");
    for (int g = 0; g < ISA_NUM_ENGINES; g++)
        if (!strcmp(t[0], isa_engine_name(g))) { a->engine = g; return 0; }
    return asm_fail(a, ".engine: unknown engine '%s' (dma mat vec)", t[0]);
}

static int dir_equ(Asm *a, char **t, int n)
{
    int64_t v;
    if (n != 2) return asm_fail(a, ".equ: expected NAME VALUE");
    if (asm_int(a, ".equ", t[1], INT64_MIN, INT64_MAX, &v)) return -1;
    return sym_add(a, t[0], v);
}

static int dir_data(Asm *a, char **t, int n)
{
    if (n < 4) return asm_fail(a, ".data: expected NAME dram:ADDR DTYPE VALUES...");
    uint64_t addr;
    if (asm_dram_addr(a, ".data", t[1], &addr)) return -1;
    int d = isa_dtype_from_name(t[2]);
    if (d < 0) return asm_fail(a, ".data %s: unknown dtype '%s' (i8 i16 i32 f16 bf16 f32)", t[0], t[2]);
    uint8_t *b;
    size_t nb;
    char ctx[96];
    snprintf(ctx, sizeof ctx, ".data %s", t[0]);
    a->ctx = ctx;
    int rc = asm_values(a, d, t + 3, n - 3, &b, &nb);
    a->ctx = NULL;
    if (rc) return -1;
    return add_segment(a, t[0], addr, b, nb);
}

static int dir_zero(Asm *a, char **t, int n)
{
    if (n != 3) return asm_fail(a, ".zero: expected NAME dram:ADDR BYTES");
    uint64_t addr;
    int64_t bytes;
    if (asm_dram_addr(a, ".zero", t[1], &addr) || asm_int(a, ".zero: bytes", t[2], 1, (int64_t)1 << 31, &bytes)) return -1;
    if (data_budget(a, t[0], (uint64_t)bytes)) return -1; /* before allocating it */
    uint8_t *b = calloc((size_t)bytes, 1);
    if (!b) return asm_fail(a, "out of memory");
    return add_segment(a, t[0], addr, b, (size_t)bytes);
}

/* .expect / .output: NAME dram:ADDR DTYPE shape=D,.. [tol=X] [VALUES...] */
static int add_region(Asm *a, char **t, int n, int with_values)
{
    const char *dn = with_values ? ".expect" : ".output";
    if (n < 4) return asm_fail(a, "%s: expected NAME dram:ADDR DTYPE shape=D0,..%s", dn, with_values ? " [tol=X] VALUES..." : "");
    AtlRegion r;
    memset(&r, 0, sizeof r);
    if (!valid_name(t[0])) return asm_fail(a, "%s: bad name '%s'", dn, t[0]);
    for (int i = 0; i < a->p->nregions; i++)
        if (!strcmp(a->p->regions[i].name, t[0])) return asm_fail(a, "%s: region '%s' defined twice", dn, t[0]);
    snprintf(r.name, sizeof r.name, "%s", t[0]);
    if (asm_dram_addr(a, dn, t[1], &r.addr)) return -1;
    r.dtype = isa_dtype_from_name(t[2]);
    if (r.dtype < 0) return asm_fail(a, "%s %s: unknown dtype '%s'", dn, t[0], t[2]);
    if (strncmp(t[3], "shape=", 6)) return asm_fail(a, "%s %s: expected shape=D0,D1,.. after the dtype", dn, t[0]);
    char *p = t[3] + 6;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        if (r.ndim == 4) return asm_fail(a, "%s %s: shape has more than 4 dimensions", dn, t[0]);
        int64_t v;
        if (asm_int(a, "shape", p, 1, 1 << 30, &v)) return -1;
        r.shape[r.ndim++] = (uint32_t)v;
        if (!comma) break;
        p = comma + 1;
    }
    uint64_t total = (uint64_t)isa_dtype_size(r.dtype);
    for (int d = 0; d < r.ndim; d++) {
        total *= r.shape[d]; /* each factor <= 2^30 and total stays <= 2^40 before it, so no overflow */
        if (total > ASM_ADDR_LIMIT) break;
    }
    if (total > ASM_ADDR_LIMIT || r.addr + total > ASM_ADDR_LIMIT)
        return asm_fail(a, "%s %s: region [0x%" PRIx64 ", +%" PRIu64 " bytes) goes beyond the 40-bit DRAM address space", dn, t[0], r.addr, total);
    size_t bytes = (size_t)total;
    int k = 4;
    if (with_values) {
        if (k < n && !strncmp(t[k], "tol=", 4)) {
            char err[200];
            if (eval_real(t[k] + 4, &a->syms, &r.tolerance, err, sizeof err)) return asm_fail(a, ".expect %s: tol: %s", t[0], err);
            if (!isfinite(r.tolerance) || r.tolerance < 0) return asm_fail(a, ".expect %s: tol must be finite and >= 0", t[0]);
            if (r.tolerance == 0) r.tolerance = 0; /* -0 -> +0: images hold canonical tolerances */
            k++;
        }
        size_t nb;
        char ctx[96];
        snprintf(ctx, sizeof ctx, ".expect %s", t[0]);
        a->ctx = ctx;
        int rc = asm_values(a, r.dtype, t + k, n - k, &r.expect, &nb);
        a->ctx = NULL;
        if (rc) return -1;
        if (nb != bytes) {
            free(r.expect);
            return asm_fail(a, ".expect %s: %zu values given, shape needs %zu", t[0], nb / (size_t)isa_dtype_size(r.dtype),
                            bytes / (size_t)isa_dtype_size(r.dtype));
        }
    } else if (n != 4) {
        return asm_fail(a, ".output %s: unexpected '%s' after the shape", t[0], t[4]);
    }
    AtlRegion *nr = realloc(a->p->regions, (size_t)(a->p->nregions + 1) * sizeof *nr);
    if (!nr) { free(r.expect); return asm_fail(a, "out of memory"); }
    a->p->regions = nr;
    a->p->regions[a->p->nregions++] = r;
    return 0;
}

static int dir_expect(Asm *a, char **t, int n) { return add_region(a, t, n, 1); }
static int dir_output(Asm *a, char **t, int n) { return add_region(a, t, n, 0); }

static const struct {
    const char *name;
    int (*run)(Asm *, char **, int);
} directives[] = {
    {".cores", dir_cores}, {".core", dir_core},   {".engine", dir_engine}, {".equ", dir_equ},
    {".data", dir_data},   {".zero", dir_zero},   {".expect", dir_expect}, {".output", dir_output},
};

static int asm_statement(Asm *a, char **tok, int ntok)
{
    if (tok[0][0] == '.') {
        for (size_t i = 0; i < sizeof directives / sizeof directives[0]; i++)
            if (!strcmp(tok[0], directives[i].name)) return directives[i].run(a, tok + 1, ntok - 1);
        return asm_fail(a, "unknown directive '%s' (.cores .core .engine .equ .data .zero .expect .output)", tok[0]);
    }
    AtlInsn in;
    AtlErr e2;
    if (asm_insn_tokens(tok, ntok, &a->syms, &in, &e2)) return asm_fail(a, "%s", e2.msg);
    int oe = isa_ops[in.op].engine;
    if (a->engine < 0) return asm_fail(a, "%s: no engine selected for core %d (use .engine dma|mat|vec)", tok[0], a->core);
    if (oe != ISA_ENGINE_ANY && oe != a->engine)
        return asm_fail(a, "%s is a %s instruction but the current stream is core %d %s", tok[0], isa_engine_name(oe), a->core,
                        isa_engine_name(a->engine));
    if (prog_append(a->p, a->core, a->engine, &in, a->line, &e2)) return asm_fail(a, "%s", e2.msg);
    return 0;
}

int prog_assemble(const char *name, const char *text, AtlProgram *p, AtlErr *e)
{
    return prog_assemble_limited(name, text, ASM_MAX_DATA_BYTES, p, e);
}

int prog_assemble_limited(const char *name, const char *text, uint64_t max_data_bytes, AtlProgram *p, AtlErr *e)
{
    if (max_data_bytes > ASM_MAX_DATA_BYTES) max_data_bytes = ASM_MAX_DATA_BYTES;
    if (prog_init(p, 1, e)) return -1;
    snprintf(p->source, sizeof p->source, "%s", name);
    Asm a = {.file = name, .p = p, .engine = -1, .e = e, .data_limit = max_data_bytes};
    size_t tlen = strlen(text);
    char *logical = malloc(tlen + 2);
    if (!logical) { prog_free(p); return atl_fail(e, "out of memory"); }
    Toks toks = {0};
    int rc = 0, lineno = 0;
    const char *s = text;
    while (*s && rc == 0) {
        size_t used = 0;
        int first = lineno + 1, more;
        do {
            const char *nl = strchr(s, '\n');
            size_t len = nl ? (size_t)(nl - s) : strlen(s);
            lineno++;
            size_t keep = 0;
            while (keep < len && s[keep] != '#' && s[keep] != ';') keep++;
            while (keep && isspace((unsigned char)s[keep - 1])) keep--;
            more = keep && s[keep - 1] == '\\';
            if (more) keep--;
            memcpy(logical + used, s, keep);
            used += keep;
            logical[used++] = ' ';
            s += len + (nl ? 1 : 0);
        } while (more && *s);
        logical[used] = 0;
        a.line = first;
        if (tokenize(logical, &toks, e)) { rc = -1; break; }
        if (toks.n) rc = asm_statement(&a, toks.v, toks.n);
    }
    free(toks.v);
    free(logical);
    free(a.syms.v);
    if (rc) prog_free(p);
    return rc;
}
