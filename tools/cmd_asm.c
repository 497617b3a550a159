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

static const char usage_text[] =
    "usage: atoll asm PROG.s -o PROG.bin [--chip CHIP]\n"
    "Assembles program text (docs/asm.md) into a binary program image.\n"
    "  -o FILE        the image to write (atomically)\n"
    "  --chip CHIP    also check the program against this chip (file or name, e.g. a1):\n"
    "                 cores, DRAM extents, semaphores, masks, LMEM alignment, dtypes\n"
    "Exit status: 0 ok, 1 error (message names file and line), 2 usage.\n";

static void usage(FILE *fp) { fputs(usage_text, fp); }

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
        if (argv[i][0] == '-') return cli_bad_option("asm", argv[i], usage_text);
        if (in) { fprintf(stderr, "atoll asm: unexpected argument '%s' (one program)\n", argv[i]); return 2; }
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
        if (cli_load_chip("asm", chip, NULL, &c, NULL, 0)) { prog_free(&p); return 1; }
        if (prog_check_chip(&p, &c, &e)) {
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
