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
#include <stddef.h>
#include "isa/config.h"

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

/* ---- mistakes (cli.c) ---- */
/* The word of words[0..n) closest to w by edit distance, NULL when none is
 * close enough to be what was meant. */
const char *cli_closest(const char *w, const char *const *words, int n);
/* "atoll CMD: unknown option 'ARG'; did you mean '--input'?" (the options
 * are the --words of the command's usage text); returns 2, the usage exit
 * status. */
int cli_bad_option(const char *cmd, const char *arg, const char *usage);

/* ---- chips and data files (chip_find.c) ----
 * --chip takes a file or a name: NAME is NAME.ini in ./configs, else
 * <binary's dir>/../share/atoll/configs (an installed copy), else the
 * compiled-in PREFIX/share/atoll/configs. Without --chip, commands that
 * read a compiled model use the chip it was compiled for (its metadata
 * names it), every other command a1. */
/* The file for a --chip argument; -1 with a message in why (naming where
 * it looked and the chips it found) when there is none. */
int cli_chip_path(const char *arg, char *path, size_t cap, char *why, size_t why_cap);
/* Loads the chip for command cmd: arg (NULL: the default, from the model
 * file abm when given); path (may be NULL) gets the file. Prints the error
 * and returns -1 on failure. */
int cli_load_chip(const char *cmd, const char *arg, const char *abm, AtlChip *chip, char *path, size_t cap);
/* Data directory DIR ("configs", "models"): ./DIR, else the installed
 * share/atoll/DIR beside the binary, else PREFIX/share/atoll/DIR. -1 (and
 * out = DIR) when none exists. */
int cli_data_dir(const char *dir, char *out, size_t cap);

/* ---- progress on stderr (progress.c) ----
 * For work that can take more than a second or two: a status line on
 * stderr, rewritten in place (at most 5 times a second) and cleared at the
 * end, only when stderr is a terminal; when asked with --progress, one line
 * per update at most once a second, wherever stderr goes; never in pipes or
 * tests unless asked. */
typedef enum { CLI_PROGRESS_AUTO, CLI_PROGRESS_ON, CLI_PROGRESS_OFF } CliProgressMode;
typedef struct CliProgress {
    const char *cmd;
    int enabled, tty, shown;   /* shown: a line is on the terminal */
    double start, last;
} CliProgress;
void cli_progress_init(CliProgress *p, const char *cmd, CliProgressMode mode);
/* printf-style status ("layer 12/53"); the elapsed time is appended. */
void cli_progress(CliProgress *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Clears the status line (call before printing results). */
void cli_progress_end(CliProgress *p);
#endif
