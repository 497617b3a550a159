/* fuzz_asm.c - prog_assemble on arbitrary text must fail with a message or
 * give a program whose disassembly reassembles to the same image. DRAM
 * data is capped at 1 MiB (prog_assemble_limited): programs of hundreds of
 * MiB of .zero are valid but took the fuzzer from 12,000 to 200 inputs/s.
 * Inputs up to 256 KiB: an expression nested 50,000 levels deep once
 * overflowed the parser's stack (the seeds deep_*.s keep it reachable). */
#include <stdlib.h>
#include <string.h>
#include "isa/program.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1 << 18)) return 0; /* room for deep nesting (the seed deep_parens.s is 100 KB) */
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    AtlProgram p, q;
    AtlErr e;
    if (prog_assemble_limited("fuzz.s", text, (uint64_t)1 << 20, &p, &e) == 0) {
        char *dis = prog_to_text(&p);
        if (!dis) abort();
        if (prog_assemble("dis.s", dis, &q, &e) != 0) abort();
        uint8_t *a, *b;
        size_t na, nb;
        if (prog_serialize(&p, &a, &na, &e) || prog_serialize(&q, &b, &nb, &e)) abort();
        if (na != nb || memcmp(a, b, na)) abort();
        free(a);
        free(b);
        free(dis);
        prog_free(&q);
        prog_free(&p);
    } else if (!e.msg[0]) {
        abort();
    }
    free(text);
    return 0;
}
