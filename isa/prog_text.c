/* prog_text.c - a whole AtlProgram back to assembler text (the inverse of
 * prog_assemble): `.cores`, then each non-empty stream under `.core N` /
 * `.engine E` with one isa_disasm line per instruction, then data segments
 * and regions with their bytes as `hex` (exact for every dtype), wrapped
 * with `\` continuations. Used by `atoll disasm`.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "isa/program.h"

typedef struct {
    char *d;
    size_t len, cap;
    int oom;
} Text;

static void text_printf(Text *t, const char *fmt, ...) ATL_PRINTF(2, 3);
static void text_printf(Text *t, const char *fmt, ...)
{
    if (t->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->d + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) { t->oom = 1; return; }
        if ((size_t)n < t->cap - t->len) { t->len += (size_t)n; return; }
        size_t cap = t->cap * 2 + (size_t)n + 1;
        char *nd = realloc(t->d, cap);
        if (!nd) { t->oom = 1; return; }
        t->d = nd;
        t->cap = cap;
    }
}

/* " hex \" then 32 bytes per continuation line. */
static void hex_bytes(Text *t, const uint8_t *b, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    text_printf(t, " hex");
    for (size_t i = 0; i < n; i += 32) {
        char line[2 * 32 + 1];
        size_t k = 0;
        for (size_t j = i; j < n && j < i + 32; j++) {
            line[k++] = digits[b[j] >> 4];
            line[k++] = digits[b[j] & 15];
        }
        line[k] = 0;
        text_printf(t, " \\\n    %s", line);
    }
    text_printf(t, "\n");
}

static void shape_text(Text *t, const AtlRegion *r)
{
    text_printf(t, " shape=");
    for (int k = 0; k < r->ndim; k++) text_printf(t, "%s%" PRIu32, k ? "," : "", r->shape[k]);
}

char *prog_to_text(const AtlProgram *p)
{
    Text t = {malloc(4096), 0, 4096, 0};
    if (!t.d) return NULL;
    t.d[0] = 0;
    text_printf(&t, "# %s\n.cores %d\n", p->source[0] ? p->source : "program", p->ncores);
    for (int c = 0; c < p->ncores; c++) {
        int shown = 0;
        for (int g = 0; g < ISA_NUM_ENGINES; g++) {
            const AtlStream *s = &p->streams[c * ISA_NUM_ENGINES + g];
            if (!s->count) continue;
            if (!shown) text_printf(&t, "\n.core %d\n", c);
            shown = 1;
            text_printf(&t, ".engine %s\n", isa_engine_name(g));
            for (int i = 0; i < s->count; i++) {
                char line[1024];
                isa_disasm(&s->insns[i], line, sizeof line);
                text_printf(&t, "    %s\n", line);
            }
        }
    }
    if (p->nsegs) text_printf(&t, "\n");
    for (int i = 0; i < p->nsegs; i++) {
        const AtlDataSeg *g = &p->segs[i];
        text_printf(&t, ".data %s dram:0x%" PRIx64 " i8", g->name, g->addr);
        hex_bytes(&t, g->bytes, g->size);
    }
    if (p->nregions) text_printf(&t, "\n");
    for (int i = 0; i < p->nregions; i++) {
        const AtlRegion *r = &p->regions[i];
        text_printf(&t, "%s %s dram:0x%" PRIx64 " %s", r->expect ? ".expect" : ".output", r->name, r->addr,
                    isa_dtype_name(r->dtype));
        shape_text(&t, r);
        if (r->expect) {
            text_printf(&t, " tol=%.17g", r->tolerance);
            hex_bytes(&t, r->expect, prog_region_bytes(r));
        } else {
            text_printf(&t, "\n");
        }
    }
    if (t.oom) { free(t.d); return NULL; }
    return t.d;
}
