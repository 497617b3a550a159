/* cli.h - what every `atoll` subcommand shares.
 *
 * A subcommand NAME lives in tools/cmd_NAME.c and defines
 *     int cmd_NAME(int argc, char **argv);      argv[0] is "NAME"
 *     const char cmd_NAME_summary[];            one line for `atoll help`
 * The Makefile generates the command table from those file names, so adding
 * a command is adding a file. A command prints errors as "atoll NAME: msg" on
 * stderr and returns the process exit code (0 ok, 1 error, 2 usage).
 */
#ifndef ATOLL_TOOLS_CLI_H
#define ATOLL_TOOLS_CLI_H
#include <stdio.h>

#define COMMAND(name) \
    int cmd_##name(int argc, char **argv); \
    extern const char cmd_##name##_summary[];
#include "commands.h"
#undef COMMAND

/* Returns the value of option `name` at argv[*i] ("--name VALUE" or
 * "--name=VALUE"), advancing *i; NULL if argv[*i] is not that option.
 * Prints a usage error and sets *bad when the value is missing. */
const char *cli_opt(int argc, char **argv, int *i, const char *name, int *bad);
int cli_is_help(const char *arg);
#endif
