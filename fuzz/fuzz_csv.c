/* fuzz_csv.c - csv_parse on arbitrary bytes: records, or an error with a
 * message; a record written back with csv_put_field parses to the same
 * fields. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "util/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    AtlCsv c;
    AtlErr e;
    e.msg[0] = 0;
    if (csv_parse("fuzz.csv", (const char *)data, size, &c, &e)) {
        if (!e.msg[0]) abort();
        return 0;
    }
    if (c.nrecords) {
        StrBuf b = {0};
        const AtlCsvRecord *r = &c.records[0];
        for (int i = 0; i < r->nfields; i++) {
            if (i) sbuf_put(&b, ",", 1);
            csv_put_field(&b, r->fields[i]);
        }
        sbuf_put(&b, "\n", 1);
        char *t = sbuf_take(&b);
        AtlCsv back;
        if (t && !csv_parse("back.csv", t, strlen(t), &back, &e)) {
            int blank = r->nfields == 1 && !r->fields[0][0];
            if (!blank && back.nrecords != 1) abort();
            for (int i = 0; !blank && i < r->nfields; i++)
                if (back.records[0].nfields != r->nfields || strcmp(back.records[0].fields[i], r->fields[i])) abort();
            csv_free(&back);
        } else if (t) {
            abort();
        }
        free(t);
    }
    csv_free(&c);
    return 0;
}
