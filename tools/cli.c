/* cli.c - option parsing helpers shared by the subcommands (see cli.h):
 * options with values, numbers checked in full, outputs that must not
 * clobber inputs, and "did you mean" for a mistyped option. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tools/cli.h"
#include "util/file.h"
#include "util/limits.h"

int cli_is_help(const char *arg)
{
    return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

const char *cli_opt(int argc, char **argv, int *i, const char *name, int *bad)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return NULL;
    if (a[n] == '=') return a + n + 1;
    if (a[n] != '\0') return NULL;
    if (*i + 1 >= argc) {
        fprintf(stderr, "atoll %s: option %s needs a value\n", argv[0], name);
        *bad = 1;
        return NULL;
    }
    *i += 1;
    return argv[*i];
}

int cli_check_outputs(const char *cmd, const CliPath *inputs, int nin, const CliPath *outputs, int nout)
{
    for (int i = 0; i < nout; i++) {
        const CliPath *o = &outputs[i];
        if (!o->path) continue;
        if (!o->path[0]) {
            fprintf(stderr, "atoll %s: %s: the output file name is empty\n", cmd, o->option);
            return -1;
        }
        if (atl_is_stream_file(o->path)) continue;   /* /dev/null, a pipe: written directly, any number of times */
        for (int k = 0; k < nin; k++)
            if (inputs[k].path && inputs[k].path[0] && atl_same_file(o->path, inputs[k].path)) {
                fprintf(stderr, "atoll %s: %s %s is also the %s: writing it would destroy an input; choose another file\n",
                        cmd, o->option, o->path, inputs[k].option);
                return -1;
            }
        for (int k = 0; k < i; k++)
            if (outputs[k].path && atl_same_file(o->path, outputs[k].path)) {
                fprintf(stderr, "atoll %s: %s %s is also given to %s: each output needs its own file\n", cmd, o->option,
                        o->path, outputs[k].option);
                return -1;
            }
    }
    return 0;
}

int cli_parse_u64(const char *cmd, const char *option, const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    int r = atl_parse_size(text, &v);
    if (r == -2) {
        fprintf(stderr, "atoll %s: %s %s is out of range (%llu .. %llu)\n", cmd, option, text, (unsigned long long)min,
                (unsigned long long)max);
        return -1;
    }
    if (r) {
        fprintf(stderr, "atoll %s: %s '%s' is not a whole number (%llu .. %llu)\n", cmd, option, text,
                (unsigned long long)min, (unsigned long long)max);
        return -1;
    }
    if (v < min || v > max) {
        fprintf(stderr, "atoll %s: %s %s is out of range (%llu .. %llu)\n", cmd, option, text, (unsigned long long)min,
                (unsigned long long)max);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_real(const char *cmd, const char *option, const char *text, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || !isfinite(v) || errno == ERANGE) {
        fprintf(stderr, "atoll %s: %s '%s' is not a finite number\n", cmd, option, text);
        return -1;
    }
    if (v < min || v > max) {
        fprintf(stderr, "atoll %s: %s %s is out of range (%g .. %g)\n", cmd, option, text, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

/* Edit distance with transpositions (optimal string alignment), capped at
 * 64 characters per word. */
static int distance(const char *a, const char *b)
{
    int n = (int)strlen(a), m = (int)strlen(b);
    if (n > 64 || m > 64) return 99;
    int d[65][65];
    for (int i = 0; i <= n; i++) d[i][0] = i;
    for (int j = 0; j <= m; j++) d[0][j] = j;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= m; j++) {
            int c = a[i - 1] != b[j - 1];
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + c < v) v = d[i - 1][j - 1] + c;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v) v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

const char *cli_closest(const char *w, const char *const *words, int n)
{
    const char *best = NULL;
    int bd = 99;
    for (int i = 0; i < n; i++) {
        int d = distance(w, words[i]);
        /* a prefix of a longer option counts as close (--trac for --trace) */
        if (!strncmp(words[i], w, strlen(w)) && strlen(w) >= 4) d = 1;
        if (d < bd) { bd = d; best = words[i]; }
    }
    int len = (int)strlen(w), allowed = len <= 4 ? 1 : len <= 8 ? 2 : 3;
    return bd <= allowed ? best : NULL;
}

int cli_bad_option(const char *cmd, const char *arg, const char *usage)
{
    /* the options are the "--word" tokens of the usage text */
    enum { MAXW = 96 };
    char store[MAXW][48];
    const char *words[MAXW];
    int n = 0;
    for (const char *p = usage; (p = strstr(p, "--")) && n < MAXW; p += 2) {
        if (p > usage && p[-1] != ' ' && p[-1] != '[' && p[-1] != '\n' && p[-1] != '|' && p[-1] != '(') continue;
        size_t k = 2;
        while (p[k] && (p[k] == '-' || (p[k] >= 'a' && p[k] <= 'z') || (p[k] >= '0' && p[k] <= '9'))) k++;
        if (k <= 2 || k >= sizeof store[0]) continue;
        snprintf(store[n], sizeof store[0], "%.*s", (int)k, p);
        int dup = 0;
        for (int i = 0; i < n; i++) dup |= !strcmp(store[i], store[n]);
        if (!dup) { words[n] = store[n]; n++; }
    }
    char key[64];
    snprintf(key, sizeof key, "%s", arg);
    char *eq = strchr(key, '=');
    if (eq) *eq = 0;
    const char *near = cli_closest(key, words, n);
    if (near) fprintf(stderr, "atoll %s: unknown option '%s'; did you mean '%s'? (atoll %s --help lists the options)\n", cmd, arg, near, cmd);
    else fprintf(stderr, "atoll %s: unknown option '%s' (atoll %s --help lists the options)\n", cmd, arg, cmd);
    return 2;
}
