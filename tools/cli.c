/* cli.c - option parsing helpers shared by the subcommands: options with
 * values, numbers checked in full, outputs that must not clobber inputs
 * (see cli.h). */
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
