/* cmd_asm.c - `atoll asm PROG.s -o PROG.bin [--chip FILE]`: assembles
 * program text (docs/asm.md) into the binary program image, written
 * atomically. With --chip, also checks the program against that chip
 * (prog_check_chip: cores, DRAM extents, semaphores, masks, addresses,
 * LMEM alignment, matrix dtypes). */
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
    CliPath ins[] = {{"program", in}, {"--chip", chip}}, outs[] = {{"-o", out}};
    if (cli_check_outputs("asm", ins, 2, outs, 1)) return 2;
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
        if (cfg_load(chip, &c, &e) || prog_check_chip(&p, &c, &e)) {
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
