/* dram_replay.c - serving a request trace with the banked DRAM model alone
 * (`atoll dram`, and the check against Ramulator2 in docs/timing.md): the
 * front end of Ramulator2's load/store trace, one request offered per DRAM
 * cycle in trace order, a refused one offered again the next cycle, run
 * until every read has returned and every write has issued. Also the
 * reader of that trace format. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sim/dram.h"
#include "util/file.h"

void dram_replay(AtlDram *d, const DramTraceReq *reqs, size_t n, DramReplay *out)
{
    dram_reset(d);
    memset(out, 0, sizeof *out);
    int nch = dram_num_channels(d);
    uint64_t offer = 0, abytes = dram_access_bytes(d);
    size_t i = 0;
    DramLoc loc;
    DramDone done;
    if (n) dram_decode(d, reqs[0].addr, &loc);
    for (;;) {
        int bc = -1;
        uint64_t bt = DRAM_NEVER;
        for (int ch = 0; ch < nch; ch++) {
            uint64_t t = dram_next(d, ch);
            if (t < bt) { bt = t; bc = ch; }
        }
        int blocked = 0;
        if (i < n) {
            blocked = !dram_has_room(d, (int)loc.ch, reqs[i].write);
            /* the front end's offer comes before the controller's command of the same cycle */
            if (!blocked && offer <= bt) {
                dram_push(d, &loc, reqs[i].addr / abytes, reqs[i].write, offer, (uint32_t)i, &done);
                out->bytes += abytes;
                offer++;
                if (++i < n) dram_decode(d, reqs[i].addr, &loc);
                continue;
            }
        }
        if (bc < 0) break; /* (a blocked offer always has a queue to drain) */
        dram_step(d, bc, &done);
        if (blocked && dram_has_room(d, (int)loc.ch, reqs[i].write) && offer < bt + 1) offer = bt + 1;
    }
    dram_stats(d, &out->st);
    out->cycles = n ? out->st.last + 1 : 0;
    out->ns = (double)out->cycles * dram_tck_ps(d) / 1000.0;
    out->gbps = out->ns > 0 ? (double)out->bytes / out->ns : 0;
}

int dram_trace_load(const char *path, DramTraceReq **reqs, size_t *n, AtlErr *e)
{
    unsigned char *data;
    size_t size;
    *reqs = NULL;
    *n = 0;
    if (atl_read_file(path, &data, &size, e)) return -1;
    int rc = dram_trace_parse(path, (char *)data, size, reqs, n, e);
    free(data);
    return rc;
}

int dram_trace_parse(const char *path, const char *text, size_t size, DramTraceReq **reqs, size_t *n, AtlErr *e)
{
    *reqs = NULL;
    *n = 0;
    if (memchr(text, 0, size)) return atl_fail(e, "%s: not a text file (contains NUL bytes)", path);
    char *data = malloc(size + 1);
    if (!data) return atl_fail(e, "%s: out of memory", path);
    memcpy(data, text, size);
    data[size] = 0;
    size_t cap = 0, lineno = 0;
    DramTraceReq *v = NULL;
    char *s = data;
    int rc = 0;
    while (*s && rc == 0) {
        char *nl = strchr(s, '\n');
        if (nl) *nl = 0;
        lineno++;
        char *p = s;
        s = nl ? nl + 1 : s + strlen(s);
        while (isspace((unsigned char)*p)) p++;
        if (!*p) continue;
        int write;
        if (!strncmp(p, "LD", 2)) write = 0;
        else if (!strncmp(p, "ST", 2)) write = 1;
        else { rc = atl_fail(e, "%s:%zu: expected 'LD ADDRESS' or 'ST ADDRESS', got '%.40s'", path, lineno, p); break; }
        p += 2;
        if (!isspace((unsigned char)*p)) { rc = atl_fail(e, "%s:%zu: expected a space after %s", path, lineno, write ? "ST" : "LD"); break; }
        while (isspace((unsigned char)*p)) p++;
        char *end;
        errno = 0;
        int hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
        unsigned long long a = strtoull(hex ? p + 2 : p, &end, hex ? 16 : 10);
        if (end == (hex ? p + 2 : p) || errno == ERANGE || *p == '-') {
            rc = atl_fail(e, "%s:%zu: '%.40s' is not an address (hexadecimal with 0x, or decimal)", path, lineno, p);
            break;
        }
        while (isspace((unsigned char)*end)) end++;
        if (*end) { rc = atl_fail(e, "%s:%zu: unexpected '%.40s' after the address", path, lineno, end); break; }
        if (*n == cap) {
            cap = cap ? 2 * cap : 4096;
            DramTraceReq *g = realloc(v, cap * sizeof *v);
            if (!g) { rc = atl_fail(e, "%s: out of memory", path); break; }
            v = g;
        }
        v[(*n)++] = (DramTraceReq){a, write};
    }
    free(data);
    if (rc) { free(v); *n = 0; return -1; }
    if (!*n) { free(v); return atl_fail(e, "%s: no requests (lines 'LD ADDRESS' or 'ST ADDRESS')", path); }
    *reqs = v;
    return 0;
}
