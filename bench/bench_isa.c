/* bench_isa.c - throughput of the ISA layer: encode, decode, disassemble,
 * assemble one line, assemble a whole program, save/load its image, parse
 * a chip config. Prints one table row per operation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "isa/config.h"
#include "isa/program.h"
#include "util/file.h"
#include "test/isa/rand_insn.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void row(const char *what, long n, double secs)
{
    printf("| %-34s | %10ld | %9.3f | %12.0f |\n", what, n, secs * 1e3, (double)n / secs);
}

int main(void)
{
    enum { N = 200000 };
    AtlInsn *ins = malloc(N * sizeof *ins);
    uint8_t *enc = malloc((size_t)N * ISA_INSN_BYTES);
    if (!ins || !enc) return 1;
    uint64_t seed = 3;
    for (int i = 0; i < N; i++) rand_insn(&seed, i % ISA_NUM_OPS, &ins[i]);
    AtlErr e;
    printf("| %-34s | %10s | %9s | %12s |\n| --- | --- | --- | --- |\n", "operation", "count", "ms", "per second");
    double t = now();
    for (int i = 0; i < N; i++)
        if (isa_encode(&ins[i], enc + (size_t)i * ISA_INSN_BYTES, &e)) return 1;
    row("isa_encode", N, now() - t);
    t = now();
    AtlInsn out;
    for (int i = 0; i < N; i++)
        if (isa_decode(enc + (size_t)i * ISA_INSN_BYTES, &out, &e)) return 1;
    row("isa_decode", N, now() - t);
    char line[1024];
    t = now();
    for (int i = 0; i < N / 4; i++) isa_disasm(&ins[i], line, sizeof line);
    row("isa_disasm", N / 4, now() - t);
    t = now();
    for (int i = 0; i < N / 4; i++) {
        isa_disasm(&ins[i], line, sizeof line);
        if (isa_asm_line(line, &out, &e)) return 1;
    }
    row("isa_disasm + isa_asm_line", N / 4, now() - t);

    /* a program of 60000 instructions on 4 cores plus 1 MiB of data */
    AtlProgram p;
    if (prog_init(&p, 4, &e)) return 1;
    for (int i = 0; i < 60000; i++) {
        int op = i % ISA_NUM_OPS, eng = isa_ops[op].engine == ISA_ENGINE_ANY ? 0 : isa_ops[op].engine;
        if (prog_append(&p, i % 4, eng, &ins[i], 0, &e)) return 1;
    }
    p.segs = calloc(1, sizeof *p.segs);
    p.nsegs = 1;
    snprintf(p.segs[0].name, sizeof p.segs[0].name, "w");
    p.segs[0].size = 1 << 20;
    p.segs[0].bytes = malloc(p.segs[0].size);
    for (size_t i = 0; i < p.segs[0].size; i++) p.segs[0].bytes[i] = (uint8_t)i;
    t = now();
    char *text = prog_to_text(&p);
    row("prog_to_text (60k insns, 1 MiB)", 1, now() - t);
    AtlProgram q;
    t = now();
    if (!text || prog_assemble("bench.s", text, &q, &e)) { fprintf(stderr, "%s\n", e.msg); return 1; }
    row("prog_assemble (60k insns, 1 MiB)", 1, now() - t);
    uint8_t *img;
    size_t n;
    t = now();
    if (prog_serialize(&q, &img, &n, &e)) return 1;
    row("prog_serialize", 1, now() - t);
    AtlProgram r;
    t = now();
    if (prog_load_mem("bench.bin", img, n, &r, &e)) return 1;
    row("prog_load_mem", 1, now() - t);
    unsigned char *ini;
    size_t isz;
    if (atl_read_file("configs/a1.ini", &ini, &isz, &e)) return 1;
    AtlChip c;
    t = now();
    for (int i = 0; i < 2000; i++)
        if (cfg_parse("a1.ini", (const char *)ini, &c, &e)) return 1;
    row("cfg_parse a1.ini", 2000, now() - t);
    free(ini);
    free(img);
    free(text);
    prog_free(&p);
    prog_free(&q);
    prog_free(&r);
    free(ins);
    free(enc);
    return 0;
}
