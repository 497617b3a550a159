/* atoll.c - the front end: `atoll COMMAND [args]`, git style.
 * The table of commands comes from build/gen/commands.h (one per
 * tools/cmd_NAME.c); this file only dispatches, prints help (`atoll help`,
 * `atoll help CMD` = `atoll CMD --help`) and suggests the command meant
 * when a name is misspelled, after checking the limit overrides in the
 * environment (util/limits.h) and arranging for interrupted writes to
 * clean up (util/file.h). */
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
    fprintf(fp, "usage: atoll COMMAND [ARGS]   (atoll help COMMAND, or atoll COMMAND --help, for details)\n\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(fp, "  %-12s %s\n", commands[i].name, commands[i].summary);
}

static const Command *find(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, commands[i].name)) return &commands[i];
    return NULL;
}

static int unknown(const char *name)
{
    const char *names[NCOMMANDS];
    for (int i = 0; i < NCOMMANDS; i++) names[i] = commands[i].name;
    const char *near = cli_closest(name, names, NCOMMANDS);
    if (near) fprintf(stderr, "atoll: unknown command '%s'; did you mean '%s'?\n", name, near);
    else fprintf(stderr, "atoll: unknown command '%s'\n", name);
    usage(stderr);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) { usage(stderr); return 2; }
    if (cli_is_help(argv[1]) || (!strcmp(argv[1], "help") && argc == 2)) { usage(stdout); return 0; }
    if (!strcmp(argv[1], "help")) {
        if (argc > 3) { fprintf(stderr, "atoll help: give one command (atoll help COMMAND)\n"); return 2; }
        const Command *c = find(argv[2]);
        if (!c) return unknown(argv[2]);
        char *args[] = { argv[2], (char *)"--help", NULL };
        return c->run(2, args);
    }
    if (!strcmp(argv[1], "--version")) { printf("atoll %s\n", ATOLL_VERSION); return 0; }
    AtlErr e;
    if (atl_limits_check(&e)) { fprintf(stderr, "atoll: %s\n", e.msg); return 2; }
    atl_out_cleanup_on_signals();   /* an interrupted write leaves no temporary file behind */
    const Command *c = find(argv[1]);
    if (!c) return unknown(argv[1]);
    return c->run(argc - 1, argv + 1);
}
