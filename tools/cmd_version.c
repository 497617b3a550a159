/* cmd_version.c - `atoll version`: the version and what was built in. */
#include <stdio.h>
#include <zlib.h>
#include "tools/cli.h"

const char cmd_version_summary[] = "print the version";

static const char usage_text[] =
    "usage: atoll version\n"
    "Prints the version of atoll and of the zlib it runs with.\n";

int cmd_version(int argc, char **argv)
{
    if (argc == 2 && cli_is_help(argv[1])) { fputs(usage_text, stdout); return 0; }
    if (argc > 1) {
        if (argv[1][0] == '-') return cli_bad_option("version", argv[1], usage_text);
        fprintf(stderr, "atoll version: unexpected argument '%s'\n%s", argv[1], usage_text);
        return 2;
    }
    printf("atoll %s (zlib %s)\n", ATOLL_VERSION, zlibVersion());
    return 0;
}
