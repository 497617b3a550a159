/* fuzz_prog_load.c - prog_load_mem on arbitrary bytes must fail cleanly or
 * give a program that serialises and reloads to the same image. Inputs
 * without a valid CRC are given one, so the fuzzer reaches the parser. A
 * loaded image must also disassemble to text that assembles back to it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "isa/program.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 12 || size > (1 << 20)) return 0;
    uint8_t *d = malloc(size);
    memcpy(d, data, size);
    memcpy(d, "ATOLLPRG", 8);
    uint32_t crc = (uint32_t)crc32(0L, d, (uInt)(size - 4));
    for (int i = 0; i < 4; i++) d[size - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
    AtlProgram p;
    AtlErr e;
    if (prog_load_mem("fuzz", d, size, &p, &e) == 0) {
        uint8_t *out;
        size_t n;
        if (prog_serialize(&p, &out, &n, &e) != 0) abort();
        /* free(out) happens after the text round trip below */
        if (n != size) { fprintf(stderr, "size %zu -> %zu\n", size, n); abort(); }
        for (size_t i = 0; i < n; i++)
            if (out[i] != d[i]) { fprintf(stderr, "differs at byte %zu\n", i); abort(); }
        char *text = prog_to_text(&p);
        if (!text) abort();
        AtlProgram q;
        if (prog_assemble("dis.s", text, &q, &e)) { fprintf(stderr, "%s\n", e.msg); abort(); }
        uint8_t *out2;
        size_t n2;
        if (prog_serialize(&q, &out2, &n2, &e) || n2 != n || memcmp(out, out2, n)) abort();
        free(out2);
        prog_free(&q);
        free(text);
        free(out);
        prog_free(&p);
    }
    free(d);
    return 0;
}
