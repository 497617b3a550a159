/* cmd_version.c - `atoll version`: the version and what was built in. */
#include <stdio.h>
#include <zlib.h>
#include "tools/cli.h"

const char cmd_version_summary[] = "print the version";

int cmd_version(int argc, char **argv)
{
    (void)argc; (void)argv;
    printf("atoll %s (zlib %s)\n", ATOLL_VERSION, zlibVersion());
    return 0;
}
