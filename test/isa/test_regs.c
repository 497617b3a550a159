/* test_regs.c - the register map (isa/regs.h) is consistent and
 * docs/registers.md is generated from it.
 *
 * Checks: registers are 4-byte aligned, inside their block, never overlap;
 * value tables have distinct values; the doc in the tree equals the text
 * generated here from the tables. `test_regs --write FILE` regenerates the
 * doc (run it after changing isa/regs.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "isa/regs.h"
#include "isa/isa.h"
#include "test/test.h"

typedef struct { const char *name; unsigned off, count; const char *acc, *doc; } Reg;

static const Reg global_regs[] = {
#define R(name, off, count, acc, doc) {#name, off, count, #acc, doc},
    ATL_REGS_GLOBAL(R)
#undef R
};
static const Reg engine_regs[] = {
#define R(name, off, count, acc, doc) {#name, off, count, #acc, doc},
    ATL_REGS_ENGINE(R)
#undef R
};
static const Reg core_regs[] = {
#define R(name, off, count, acc, doc) {#name, off, count, #acc, doc},
    ATL_REGS_CORE(R)
#undef R
};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

typedef struct { const char *name; long long value; const char *doc; } Val;
static const Val qstates[] = {
#define X(id, v, doc) {#id, v, doc},
    ATL_QSTATES(X)
#undef X
};
static const Val ints[] = {
#define X(id, bit, doc) {#id, 1ll << (bit), doc},
    ATL_INTS(X)
#undef X
};
static const Val faults[] = {
#define X(id, v, doc) {#id, v, doc},
    ATL_FAULTS(X)
#undef X
};
static const Val mbstates[] = {
#define X(id, v, doc) {#id, v, doc},
    ATL_MB_STATES(X)
#undef X
};
static const Val qkinds[] = {
#define X(id, v, doc) {#id, v, doc},
    ATL_QUERY_KINDS(X)
#undef X
};
static const Val errors[] = {
#define X(id, v, doc) {#id, v, doc},
    ATL_FW_ERRORS(X)
#undef X
};
static const Val prof[] = {
#define X(id, idx, doc) {#id, idx * 8, doc},
    ATL_PROF_FIELDS(X)
#undef X
};
typedef struct { const char *name; int code; const char *args, *res; } Cmd;
static const Cmd cmds[] = {
#define X(id, v, args, res) {#id, v, args, res},
    ATL_MB_CMDS(X)
#undef X
};

/* A growing text buffer. */
typedef struct { char *p; size_t n, cap; } Buf;
static void bputs(Buf *b, const char *s)
{
    size_t l = strlen(s);
    if (b->n + l + 1 > b->cap) {
        b->cap = (b->n + l + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) { fprintf(stderr, "out of memory\n"); exit(1); }
    }
    memcpy(b->p + b->n, s, l + 1);
    b->n += l;
}
static void bprintf(Buf *b, const char *fmt, ...) ATL_PRINTF(2, 3);
static void bprintf(Buf *b, const char *fmt, ...)
{
    char tmp[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    bputs(b, tmp);
}

static void reg_table(Buf *b, const char *prefix, const Reg *r, size_t n)
{
    bputs(b, "| offset | name | words | access | meaning |\n| --- | --- | --- | --- | --- |\n");
    for (size_t i = 0; i < n; i++)
        bprintf(b, "| 0x%03X | `%s%s` | %u | %s | %s |\n", r[i].off, prefix, r[i].name, r[i].count, r[i].acc, r[i].doc);
    bputs(b, "\n");
}

static void val_table(Buf *b, const char *title, const char *prefix, const Val *v, size_t n, int hex)
{
    bprintf(b, "### %s\n\n| value | name | meaning |\n| --- | --- | --- |\n", title);
    for (size_t i = 0; i < n; i++) {
        if (hex) bprintf(b, "| 0x%llX | `%s%s` | %s |\n", v[i].value, prefix, v[i].name, v[i].doc);
        else bprintf(b, "| %lld | `%s%s` | %s |\n", v[i].value, prefix, v[i].name, v[i].doc);
    }
    bputs(b, "\n");
}

static char *generate_doc(void)
{
    Buf b = {0};
    bputs(&b, "# Atoll register map\n\n"
              "<!-- Generated from isa/regs.h by `build/test/isa/test_regs --write docs/registers.md`; do not edit. -->\n\n"
              "The registers the firmware (running on the control processor) and the host\n"
              "use to drive the chip. Every register is 32 bits, little-endian, at a\n"
              "4-byte aligned byte offset of one window. 64-bit values are LO/HI pairs\n"
              "that the device updates only when a launch ends. A register with more\n"
              "than one word is an array of consecutive words.\n\n");
    bputs(&b, "## Access kinds\n\n| kind | meaning |\n| --- | --- |\n");
#define X(id, doc) bprintf(&b, "| %s | %s |\n", #id, doc);
    ATL_ACCESS(X)
#undef X
    bputs(&b, "\n## Global registers\n\nAt the start of the window; C name `ATL_REG_<name>`.\n\n");
    reg_table(&b, "", global_regs, NELEM(global_regs));
    bprintf(&b, "## Per core and engine\n\n"
                "Core c's block starts at 0x%X + c x 0x%X. Inside it, engine e (0 dma,\n"
                "1 mat, 2 vec) has its registers at e x 0x%X; C: `ATL_REG_ENG(core, engine, ATL_ENG_<name>)`.\n\n",
            ATL_CORE_BASE, ATL_CORE_STRIDE, ATL_ENGINE_STRIDE);
    reg_table(&b, "", engine_regs, NELEM(engine_regs));
    bputs(&b, "Per core, after the engines; C: `ATL_REG_CORE(core, ATL_CORE_<name>)`.\n\n");
    reg_table(&b, "", core_regs, NELEM(core_regs));
    bputs(&b, "## Values\n\n");
    val_table(&b, "Queue and core states (Q_STATUS, STATUS)", "QS_", qstates, NELEM(qstates), 0);
    val_table(&b, "Interrupt bits (INT_STATUS, INT_MASK)", "INT_", ints, NELEM(ints), 1);
    val_table(&b, "Fault codes (FAULT_CODE)", "FAULT_", faults, NELEM(faults), 0);
    val_table(&b, "Mailbox states (MB_STATUS)", "MBS_", mbstates, NELEM(mbstates), 0);
    bputs(&b, "### Mailbox commands (MB_CMD)\n\n| code | name | arguments | results |\n| --- | --- | --- | --- |\n");
    for (size_t i = 0; i < NELEM(cmds); i++)
        bprintf(&b, "| %d | `MB_%s` | %s | %s |\n", cmds[i].code, cmds[i].name, cmds[i].args, cmds[i].res);
    bputs(&b, "\n");
    val_table(&b, "Query kinds (QUERY, ARG1)", "QK_", qkinds, NELEM(qkinds), 0);
    val_table(&b, "Firmware error codes (MB_ERROR)", "ERR_", errors, NELEM(errors), 0);
    char title[96];
    snprintf(title, sizeof title, "Per-layer profile record (%d bytes at PROF_ADDR, u64 fields; value = byte offset)",
             ATL_PROF_RECORD_BYTES);
    val_table(&b, title, "PROF_", prof, NELEM(prof), 0);
    bprintf(&b, "## Relocation tags\n\n"
                "A DRAM operand of a DMA instruction in a model's command stream is\n"
                "written as `(region + 1) << %d | offset` (region 0 weights, 1 activations,\n"
                "2 io); the firmware replaces it with the region's DRAM base + offset at\n"
                "load time (docs/firmware.md).\n", ATL_RELOC_SHIFT);
    return b.p;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t l = strlen(text);
    int ok = fwrite(text, 1, l, f) == l;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    Buf b = {0};
    char chunk[4096];
    size_t n;
    bputs(&b, "");
    while ((n = fread(chunk, 1, sizeof chunk - 1, f)) > 0) { chunk[n] = 0; bputs(&b, chunk); }
    fclose(f);
    return b.p;
}

static int overlaps(const Reg *a, const Reg *b)
{
    unsigned a0 = a->off, a1 = a->off + 4 * a->count, b0 = b->off, b1 = b->off + 4 * b->count;
    return a0 < b1 && b0 < a1;
}

static void check_block(const Reg *r, size_t n, unsigned lo, unsigned hi, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        CHECKF(r[i].off % 4 == 0, "%s %s: offset 0x%x not aligned", what, r[i].name, r[i].off);
        CHECKF(r[i].count >= 1, "%s %s: zero words", what, r[i].name);
        CHECKF(r[i].off >= lo && r[i].off + 4 * r[i].count <= hi, "%s %s: outside [0x%x, 0x%x)", what, r[i].name, lo, hi);
        for (size_t j = 0; j < i; j++)
            CHECKF(!overlaps(&r[i], &r[j]), "%s: %s overlaps %s", what, r[i].name, r[j].name);
    }
}

TEST(blocks_are_disjoint)
{
    check_block(global_regs, NELEM(global_regs), 0, ATL_CORE_BASE, "global");
    check_block(engine_regs, NELEM(engine_regs), 0, ATL_ENGINE_STRIDE, "engine");
    check_block(core_regs, NELEM(core_regs), ISA_NUM_ENGINES * ATL_ENGINE_STRIDE, ATL_CORE_STRIDE, "core");
}

TEST(sizes_match_the_constants)
{
    CHECK_EQ_INT(ATL_REG_MB_ARG_COUNT, ATL_MB_ARGS);
    CHECK_EQ_INT(ATL_REG_MB_RESULT_COUNT, ATL_MB_RESULTS);
    CHECK_EQ_INT(ATL_REG_MB_MSG_COUNT * 4, ATL_MSG_BYTES);
    CHECK_EQ_INT(ATL_REG_FAULT_MSG_COUNT * 4, ATL_MSG_BYTES);
    CHECK_EQ_INT(ATL_REG_CORE_DONE_COUNT * 32, ATL_MAX_CORES);
    CHECK_EQ_INT(ATL_PROF_NUM_FIELDS * 8, ATL_PROF_RECORD_BYTES);
    CHECK_EQ_INT(ATL_REG_ENG(2, 1, ATL_ENG_Q_LEN), 0x1000 + 0x200 + 0x40 + 0x08);
    CHECK_EQ_INT(ATL_REG_CORE(1, ATL_CORE_STATUS), 0x1000 + 0x100 + 0xC0);
    CHECK_EQ_INT(ATL_RELOC_ADDR(2, 0x40), 0x300000040ll);
}

static void check_distinct(const Val *v, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++) {
            CHECKF(v[i].value != v[j].value, "%s: %s and %s share value %lld", what, v[i].name, v[j].name, v[i].value);
            CHECKF(strcmp(v[i].name, v[j].name) != 0, "%s: name %s twice", what, v[i].name);
        }
}

TEST(values_are_distinct)
{
    check_distinct(qstates, NELEM(qstates), "queue states");
    check_distinct(ints, NELEM(ints), "interrupts");
    check_distinct(faults, NELEM(faults), "faults");
    check_distinct(mbstates, NELEM(mbstates), "mailbox states");
    check_distinct(qkinds, NELEM(qkinds), "query kinds");
    check_distinct(errors, NELEM(errors), "errors");
    for (size_t i = 0; i < NELEM(cmds); i++) CHECK_EQ_INT(cmds[i].code, (int)i);
    for (size_t i = 0; i < NELEM(errors); i++) CHECK_EQ_INT(errors[i].value, (long long)i);
}

TEST(doc_is_in_step)
{
    char *want = generate_doc();
    char *have = read_text("docs/registers.md");
    REQUIRE(want);
    CHECKF(have != NULL, "docs/registers.md missing: run build/test/isa/test_regs --write docs/registers.md");
    if (have) {
        CHECKF(strcmp(want, have) == 0,
               "docs/registers.md is out of step with isa/regs.h: run build/test/isa/test_regs --write docs/registers.md");
    }
    free(want);
    free(have);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write")) {
        char *doc = generate_doc();
        int rc = write_file(argv[2], doc);
        free(doc);
        if (rc) { fprintf(stderr, "cannot write %s\n", argv[2]); return 1; }
        return 0;
    }
    RUN(blocks_are_disjoint);
    RUN(sizes_match_the_constants);
    RUN(values_are_distinct);
    RUN(doc_is_in_step);
    return test_summary("test_regs");
}
