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
#include <stdint.h>

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

/* A file a command reads or writes, with the option that named it. */
typedef struct CliPath {
    const char *option;   /* "-o", "--stats", "model", ... */
    const char *path;     /* NULL: not given */
} CliPath;
/* Refuses an output that is one of the inputs or another output (the same
 * file, by inode or by canonical name), printing "atoll CMD: ..." and
 * returning -1. Character devices and FIFOs (/dev/null, pipes) may be
 * named more than once. An empty output name is refused too. */
int cli_check_outputs(const char *cmd, const CliPath *inputs, int nin, const CliPath *outputs, int nout);

/* Numeric options: the whole text must be a number in [min, max] (NaN,
 * infinities, signs where no negative is allowed, trailing junk and
 * overflow are refused; whole numbers may be 0x hex and take the suffixes
 * K, M, G, T). Print "atoll CMD: OPTION 'TEXT' ..." and return -1 on a bad
 * value. */
#define CLI_MAX_CYCLES ((uint64_t)1 << 62)   /* --max-cycles: simulated times stay far from overflow */
int cli_parse_u64(const char *cmd, const char *option, const char *text, uint64_t min, uint64_t max, uint64_t *out);
int cli_parse_real(const char *cmd, const char *option, const char *text, double min, double max, double *out);
#endif
