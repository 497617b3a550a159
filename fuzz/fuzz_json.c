/* fuzz_json.c - json_parse on arbitrary bytes: a tree, or an error with a
 * message; never a crash or a leak. */
#include <stdint.h>
#include <stdlib.h>
#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    JsonValue *v = NULL;
    AtlErr e;
    e.msg[0] = 0;
    if (json_parse("fuzz.json", (const char *)data, size, &v, &e) == 0) {
        if (!v) abort();
        (void)json_get(v, "cycles");
        json_free(v);
    } else if (!e.msg[0] || v) {
        abort();
    }
    return 0;
}
