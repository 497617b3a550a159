/* fuzz_config.c - cfg_parse on arbitrary text: a clean error with a
 * message, or a chip that passes cfg_validate. */
#include <stdlib.h>
#include <string.h>
#include "isa/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384) return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    AtlChip c;
    AtlErr e;
    e.msg[0] = 0;
    if (cfg_parse("fuzz.ini", text, &c, &e) == 0) {
        if (cfg_validate(&c, "fuzz.ini", &e) != 0) abort();
        (void)cfg_fingerprint(&c);
    } else if (!e.msg[0]) {
        abort();
    }
    free(text);
    return 0;
}
