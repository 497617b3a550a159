/* cli.c - option parsing helpers shared by the subcommands (see cli.h). */
#include <string.h>
#include "tools/cli.h"

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
