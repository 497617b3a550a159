/* atoll.c - the front end: `atoll COMMAND [args]`, git style.
 * The table of commands comes from build/gen/commands.h (one per
 * tools/cmd_NAME.c); this file only dispatches and prints help, after
 * checking the limit overrides in the environment (util/limits.h) and
 * arranging for interrupted writes to clean up (util/file.h). */
#include <stdio.h>
#include <string.h>
#include "tools/cli.h"
#include "util/file.h"
#include "util/limits.h"

typedef struct {
    const char *name;
    int (*run)(int, char **);
    const char *summary;
} Command;

static const Command commands[] = {
#define COMMAND(n) {#n, cmd_##n, cmd_##n##_summary},
#include "commands.h"
#undef COMMAND
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static void usage(FILE *fp)
{
    fprintf(fp, "usage: atoll COMMAND [ARGS]   (atoll COMMAND --help for details)\n\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv)
{
    if (argc < 2) { usage(stderr); return 2; }
    if (cli_is_help(argv[1]) || !strcmp(argv[1], "help")) { usage(stdout); return 0; }
    if (!strcmp(argv[1], "--version")) { printf("atoll %s\n", ATOLL_VERSION); return 0; }
    AtlErr e;
    if (atl_limits_check(&e)) { fprintf(stderr, "atoll: %s\n", e.msg); return 2; }
    atl_out_cleanup_on_signals();   /* an interrupted write leaves no temporary file behind */
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "atoll: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
