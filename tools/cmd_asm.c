/* cmd_asm.c - `atoll asm PROG.s -o PROG.bin [--chip FILE]`: assembles
 * program text (docs/asm.md) into the binary program image, written
 * atomically. With --chip, also checks that the program fits the chip:
 * its cores exist and its data and regions lie inside DRAM. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "isa/config.h"
#include "isa/program.h"
#include "tools/cli.h"
#include "util/file.h"

const char cmd_asm_summary[] = "assemble program text into a binary program image";

static void usage(FILE *fp)
{
    fprintf(fp, "usage: atoll asm PROG.s -o PROG.bin [--chip FILE]\n");
}

/* Fails if the program needs more cores or DRAM than the chip has. */
static int check_fits(const AtlProgram *p, const AtlChip *c, const char *chip_path, AtlErr *e)
{
    if (p->ncores > cfg_total_cores(c))
        return atl_fail(e, "%s: program uses %d cores, chip %s (%s) has %d", p->source, p->ncores, c->name, chip_path,
                        cfg_total_cores(c));
    for (int i = 0; i < p->nsegs; i++)
        if (p->segs[i].addr + p->segs[i].size > (uint64_t)c->dram_bytes)
            return atl_fail(e, "%s: data %s ends at 0x%" PRIx64 ", beyond chip %s's %d bytes of DRAM", p->source, p->segs[i].name,
                            p->segs[i].addr + p->segs[i].size, c->name, c->dram_bytes);
    for (int i = 0; i < p->nregions; i++)
        if (p->regions[i].addr + prog_region_bytes(&p->regions[i]) > (uint64_t)c->dram_bytes)
            return atl_fail(e, "%s: region %s ends beyond chip %s's %d bytes of DRAM", p->source, p->regions[i].name, c->name,
                            c->dram_bytes);
    return 0;
}

int cmd_asm(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *chip = NULL;
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "-o", &bad))) { out = v; continue; }
        if (bad) return 2;
        if ((v = cli_opt(argc, argv, &i, "--chip", &bad))) { chip = v; continue; }
        if (bad) return 2;
        if (argv[i][0] == '-' || in) { fprintf(stderr, "atoll asm: unexpected argument '%s'\n", argv[i]); usage(stderr); return 2; }
        in = argv[i];
    }
    if (!in || !out) { usage(stderr); return 2; }
    AtlErr e;
    unsigned char *text;
    size_t n;
    if (atl_read_file(in, &text, &n, &e)) { fprintf(stderr, "atoll asm: %s\n", e.msg); return 1; }
    if (memchr(text, 0, n)) { free(text); fprintf(stderr, "atoll asm: %s: not a text file\n", in); return 1; }
    AtlProgram p;
    int rc = prog_assemble(in, (const char *)text, &p, &e);
    free(text);
    if (rc) { fprintf(stderr, "atoll asm: %s\n", e.msg); return 1; }
    if (chip) {
        AtlChip c;
        if (cfg_load(chip, &c, &e) || check_fits(&p, &c, chip, &e)) {
            fprintf(stderr, "atoll asm: %s\n", e.msg);
            prog_free(&p);
            return 1;
        }
    }
    rc = prog_save(&p, out, &e);
    prog_free(&p);
    if (rc) { fprintf(stderr, "atoll asm: %s\n", e.msg); return 1; }
    return 0;
}
