/* json.c - the JSON reader (see json.h): a recursive-descent parser over
 * the whole text, depth-limited. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/json.h"
#include "util/strbuf.h"

typedef struct JsonParser {
    const char *name, *p, *end, *line_start;
    int line;
    AtlErr *e;
} JsonParser;

static int fail(JsonParser *j, const char *what)
{
    return atl_fail(j->e, "%s:%d:%d: %s", j->name, j->line, (int)(j->p - j->line_start) + 1, what);
}

static void skip_space(JsonParser *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) {
        if (*j->p == '\n') { j->line++; j->line_start = j->p + 1; }
        j->p++;
    }
}

static int literal(JsonParser *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n)) return fail(j, "unexpected text");
    j->p += n;
    return 0;
}

static int hex4(JsonParser *j, unsigned *out)
{
    if (j->end - j->p < 4) return fail(j, "\\u needs four hex digits");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = j->p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return fail(j, "\\u needs four hex digits");
        v = v * 16 + (unsigned)d;
    }
    j->p += 4;
    *out = v;
    return 0;
}

static void put_utf8(StrBuf *b, unsigned cp)
{
    char t[4];
    if (cp < 0x80) { t[0] = (char)cp; sbuf_put(b, t, 1); }
    else if (cp < 0x800) { t[0] = (char)(0xC0 | cp >> 6); t[1] = (char)(0x80 | (cp & 63)); sbuf_put(b, t, 2); }
    else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | cp >> 12); t[1] = (char)(0x80 | ((cp >> 6) & 63)); t[2] = (char)(0x80 | (cp & 63));
        sbuf_put(b, t, 3);
    } else {
        t[0] = (char)(0xF0 | cp >> 18); t[1] = (char)(0x80 | ((cp >> 12) & 63));
        t[2] = (char)(0x80 | ((cp >> 6) & 63)); t[3] = (char)(0x80 | (cp & 63));
        sbuf_put(b, t, 4);
    }
}

/* At the opening quote; *out malloc'd. */
static int string(JsonParser *j, char **out)
{
    StrBuf b = {0};
    j->p++;
    for (;;) {
        if (j->p >= j->end) { sbuf_free(&b); return fail(j, "string never closes"); }
        unsigned char c = (unsigned char)*j->p;
        if (c == '"') { j->p++; break; }
        if (c < 0x20) { sbuf_free(&b); return fail(j, "control character in a string"); }
        if (c != '\\') { sbuf_put(&b, j->p++, 1); continue; }
        if (++j->p >= j->end) { sbuf_free(&b); return fail(j, "string never closes"); }
        static const char esc[] = "\"\\/bfnrt", val[] = "\"\\/\b\f\n\r\t";
        const char *k = strchr(esc, *j->p);
        if (k && *j->p) { sbuf_put(&b, &val[k - esc], 1); j->p++; continue; }
        if (*j->p != 'u') { sbuf_free(&b); return fail(j, "unknown escape in a string"); }
        j->p++;
        unsigned cp, lo;
        if (hex4(j, &cp)) { sbuf_free(&b); return -1; }
        if (cp >= 0xD800 && cp < 0xDC00) {
            if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u') { sbuf_free(&b); return fail(j, "lone surrogate"); }
            j->p += 2;
            if (hex4(j, &lo)) { sbuf_free(&b); return -1; }
            if (lo < 0xDC00 || lo > 0xDFFF) { sbuf_free(&b); return fail(j, "lone surrogate"); }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            sbuf_free(&b);
            return fail(j, "lone surrogate");
        }
        if (cp == 0) { sbuf_free(&b); return fail(j, "\\u0000 in a string"); }
        put_utf8(&b, cp);
    }
    *out = sbuf_take(&b);
    return *out ? 0 : fail(j, "out of memory");
}

static int number(JsonParser *j, double *out)
{
    const char *s = j->p;
    if (s < j->end && *s == '-') s++;
    if (s >= j->end || *s < '0' || *s > '9') return fail(j, "unexpected text");
    if (*s == '0' && s + 1 < j->end && s[1] >= '0' && s[1] <= '9') return fail(j, "number with a leading zero");
    while (s < j->end && ((*s >= '0' && *s <= '9') || *s == '.' || *s == 'e' || *s == 'E' || *s == '+' || *s == '-')) s++;
    char buf[64];
    size_t n = (size_t)(s - j->p);
    if (n >= sizeof buf) return fail(j, "number too long");
    memcpy(buf, j->p, n);
    buf[n] = 0;
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (*end || !isfinite(d)) return fail(j, "malformed number");
    *out = d;
    j->p = s;
    return 0;
}

static int value(JsonParser *j, JsonValue *v, int depth);

/* Appends a zeroed member to an array or object; NULL on out of memory. */
static JsonValue *add_item(JsonValue *v, int *cap)
{
    if (v->count == *cap) {
        int c = *cap ? *cap * 2 : 4;
        JsonValue *p = realloc(v->items, (size_t)c * sizeof *p);
        if (!p) return NULL;
        v->items = p;
        if (v->kind == JSON_OBJECT) {
            char **k = realloc(v->keys, (size_t)c * sizeof *k);
            if (!k) return NULL;
            v->keys = k;
        }
        *cap = c;
    }
    JsonValue *m = &v->items[v->count];
    memset(m, 0, sizeof *m);
    if (v->kind == JSON_OBJECT) v->keys[v->count] = NULL;
    v->count++;
    return m;
}

static int container(JsonParser *j, JsonValue *v, int depth)
{
    char close = v->kind == JSON_ARRAY ? ']' : '}';
    int cap = 0;
    j->p++;
    skip_space(j);
    if (j->p < j->end && *j->p == close) { j->p++; return 0; }
    for (;;) {
        skip_space(j);
        char *key = NULL;
        if (v->kind == JSON_OBJECT) {
            if (j->p >= j->end || *j->p != '"') return fail(j, "expected a key string");
            if (string(j, &key)) return -1;
            skip_space(j);
            if (j->p >= j->end || *j->p != ':') { free(key); return fail(j, "expected ':'"); }
            j->p++;
        }
        JsonValue *m = add_item(v, &cap);
        if (!m) { free(key); return fail(j, "out of memory"); }
        if (v->kind == JSON_OBJECT) v->keys[v->count - 1] = key;
        if (value(j, m, depth + 1)) return -1;
        skip_space(j);
        if (j->p < j->end && *j->p == ',') { j->p++; continue; }
        if (j->p < j->end && *j->p == close) { j->p++; return 0; }
        return fail(j, v->kind == JSON_ARRAY ? "expected ',' or ']'" : "expected ',' or '}'");
    }
}

static int value(JsonParser *j, JsonValue *v, int depth)
{
    if (depth > JSON_MAX_DEPTH) return fail(j, "nested too deeply");
    skip_space(j);
    if (j->p >= j->end) return fail(j, "unexpected end of text");
    switch (*j->p) {
    case '{': v->kind = JSON_OBJECT; return container(j, v, depth);
    case '[': v->kind = JSON_ARRAY; return container(j, v, depth);
    case '"': v->kind = JSON_STRING; return string(j, &v->string);
    case 't': v->kind = JSON_BOOL; v->number = 1; return literal(j, "true");
    case 'f': v->kind = JSON_BOOL; return literal(j, "false");
    case 'n': v->kind = JSON_NULL; return literal(j, "null");
    default: v->kind = JSON_NUMBER; return number(j, &v->number);
    }
}

static void free_contents(JsonValue *v)
{
    for (int i = 0; i < v->count; i++) {
        free_contents(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
}

void json_free(JsonValue *v)
{
    if (!v) return;
    free_contents(v);
    free(v);
}

int json_parse(const char *name, const char *text, size_t len, JsonValue **out, AtlErr *e)
{
    JsonParser j = {name, text, text + len, text, 1, e};
    JsonValue *v = calloc(1, sizeof *v);
    *out = NULL;
    if (!v) return atl_fail(e, "%s: out of memory", name);
    int rc = value(&j, v, 0);
    if (!rc) {
        skip_space(&j);
        if (j.p < j.end) rc = fail(&j, "text after the JSON value");
    }
    if (rc) { json_free(v); return -1; }
    *out = v;
    return 0;
}

const JsonValue *json_get(const JsonValue *v, const char *key)
{
    if (!v || v->kind != JSON_OBJECT) return NULL;
    for (int i = 0; i < v->count; i++) if (v->keys[i] && !strcmp(v->keys[i], key)) return &v->items[i];
    return NULL;
}

double json_number(const JsonValue *v, double dflt)
{
    return v && v->kind == JSON_NUMBER ? v->number : dflt;
}

const char *json_string(const JsonValue *v, const char *dflt)
{
    return v && v->kind == JSON_STRING ? v->string : dflt;
}
