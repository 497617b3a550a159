/* fuzz_dram_trace.c - the DRAM request trace reader on arbitrary text: a
 * clean error with a message, or requests that the banked DRAM model (the
 * DDR4-3200 defaults, one channel) serves to the end, every one of them. */
#include <stdlib.h>
#include <string.h>
#include "isa/config.h"
#include "sim/dram.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384) return 0;
    DramTraceReq *reqs = NULL;
    size_t n = 0;
    AtlErr e;
    e.msg[0] = 0;
    if (dram_trace_parse("fuzz.trace", (const char *)data, size, &reqs, &n, &e)) {
        if (!e.msg[0]) abort();
        return 0;
    }
    AtlChip c;
    memset(&c, 0, sizeof c);
    cfg_set_defaults(&c);
    c.dram_channels = 1;
    AtlDram *d = dram_new(&c, &e);
    if (!d) abort();
    DramReplay r;
    dram_replay(d, reqs, n, &r);
    if (r.st.reads + r.st.writes != n) abort();
    dram_free(d);
    free(reqs);
    return 0;
}
