/* chip_variant.h - a copy of a bundled chip file with one key of one
 * section changed (e.g. [sram] bytes = 1M), written to a new temporary
 * file, so a backend test can ask "what does the compiler do on a chip
 * like a1 with less SRAM" without a config file of its own in configs/.
 * The caller owns the file: it unlinks path when done. Header only. */
#ifndef ATOLL_TEST_CHIP_VARIANT_H
#define ATOLL_TEST_CHIP_VARIANT_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes base with `key = value` in [section] (replacing that key's line)
 * into a mkstemp'd file named into path. Returns 0, or -1 when base cannot
 * be read, the file cannot be written, or the section has no such key. */
static int chip_variant(const char *base, const char *section, const char *key,
                        const char *value, char *path, size_t len)
{
    FILE *in = fopen(base, "r");
    snprintf(path, len, "/tmp/atoll_test_chip_XXXXXX");
    int fd = in ? mkstemp(path) : -1;
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    char line[512];
    size_t klen = strlen(key), slen = strlen(section);
    int in_section = 0, found = 0;
    while (out && fgets(line, sizeof line, in)) {
        if (line[0] == '[')
            in_section = !strncmp(line + 1, section, slen) && line[1 + slen] == ']';
        const char *after = line + klen;
        if (in_section && !strncmp(line, key, klen) && (*after == ' ' || *after == '=')) {
            fprintf(out, "%s = %s\n", key, value);
            found = 1;
        } else {
            fputs(line, out);
        }
    }
    if (in) fclose(in);
    int written = out && fclose(out) == 0;
    return written && found ? 0 : -1;
}
#endif
