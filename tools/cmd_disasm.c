/* cmd_disasm.c - `atoll disasm PROG [-o OUT.s]`: prints a program (binary
 * image or text, chosen by magic) as assembler text that `atoll asm` reads
 * back to the same image. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "isa/program.h"
#include "tools/cli.h"
#include "util/file.h"

const char cmd_disasm_summary[] = "print a program image (or text) as assembler text";

static const char usage_text[] =
    "usage: atoll disasm PROG.bin|PROG.s [-o OUT.s]\n"
    "Prints a program (binary image or text, told apart by their magic) as\n"
    "assembler text that `atoll asm` reads back to the same image.\n"
    "  -o FILE        write the text there (atomically) instead of stdout\n"
    "Exit status: 0 ok, 1 error, 2 usage.\n";

static void usage(FILE *fp) { fputs(usage_text, fp); }

int cmd_disasm(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { usage(stdout); return 0; }
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "-o", &bad))) { out = v; continue; }
        if (bad) return 2;
        if (argv[i][0] == '-') return cli_bad_option("disasm", argv[i], usage_text);
        if (in) { fprintf(stderr, "atoll disasm: unexpected argument '%s' (one program)\n", argv[i]); return 2; }
        in = argv[i];
    }
    if (!in) { usage(stderr); return 2; }
    CliPath ins[] = {{"program", in}}, outs[] = {{"-o", out}};
    if (cli_check_outputs("disasm", ins, 1, outs, 1)) return 2;
    AtlProgram p;
    AtlErr e;
    if (prog_load_any(in, &p, &e)) { fprintf(stderr, "atoll disasm: %s\n", e.msg); return 1; }
    char *text = prog_to_text(&p);
    prog_free(&p);
    if (!text) { fprintf(stderr, "atoll disasm: out of memory\n"); return 1; }
    int rc = 0;
    if (out) {
        if (atl_write_file_atomic(out, text, strlen(text), &e)) { fprintf(stderr, "atoll disasm: %s\n", e.msg); rc = 1; }
    } else {
        fputs(text, stdout);
        if (fflush(stdout) != 0) { fprintf(stderr, "atoll disasm: write error on standard output: %s\n", strerror(errno)); rc = 1; }
    }
    free(text);
    return rc;
}
