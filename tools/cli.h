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
