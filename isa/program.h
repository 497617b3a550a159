/* program.h - a program image: what `atoll asm` produces and `atoll sim`
 * runs. It holds one instruction stream per (core, engine) of the chip and
 * the DRAM contents to preload, plus checks to verify after the run.
 *
 * Cores are numbered globally: core = cluster * cores_per_cluster + index.
 * Ownership: everything is owned by the AtlProgram; free with prog_free.
 */
#ifndef ATOLL_ISA_PROGRAM_H
#define ATOLL_ISA_PROGRAM_H
#include <stdint.h>
#include <stddef.h>
#include "isa/isa.h"

typedef struct AtlStream {
    AtlInsn *insns;
    int count, cap;
    int *src_line;         /* source line of each instruction (0 if unknown) */
} AtlStream;

/* Bytes placed in DRAM before the run. */
typedef struct AtlDataSeg {
    char name[64];
    uint64_t addr;
    size_t size;
    uint8_t *bytes;
} AtlDataSeg;

/* A region of DRAM compared after the run (the `.expect` directive), or
 * saved to the output file (`.output`). */
typedef struct AtlRegion {
    char name[64];
    uint64_t addr;
    int dtype;
    int ndim;
    uint32_t shape[4];
    uint8_t *expect;       /* NULL for .output regions */
    double tolerance;      /* absolute, for float dtypes */
} AtlRegion;

typedef struct AtlProgram {
    char source[256];      /* file name, for messages */
    int ncores;            /* streams has ncores * ISA_NUM_ENGINES entries */
    AtlStream *streams;
    AtlDataSeg *segs;
    int nsegs;
    AtlRegion *regions;
    int nregions;
} AtlProgram;

static inline AtlStream *prog_stream(AtlProgram *p, int core, int engine)
{
    return &p->streams[core * ISA_NUM_ENGINES + engine];
}

int prog_init(AtlProgram *p, int ncores, AtlErr *e);
int prog_append(AtlProgram *p, int core, int engine, const AtlInsn *in, int line, AtlErr *e);
void prog_free(AtlProgram *p);

/* Text assembly: parses the whole program text (see docs/asm.md). */
int prog_assemble(const char *name, const char *text, AtlProgram *p, AtlErr *e);
/* The same with a smaller budget of DRAM data (.data/.zero) than the
 * default 256 MiB (larger values are clamped to it); fuzz_asm uses 1 MiB so
 * that its inputs stay fast. */
int prog_assemble_limited(const char *name, const char *text, uint64_t max_data_bytes, AtlProgram *p, AtlErr *e);
/* Binary image (`atoll asm -o`): serialise / parse. */
int prog_save(const AtlProgram *p, const char *path, AtlErr *e);
int prog_load(const char *path, AtlProgram *p, AtlErr *e);
/* Reads .s (text) or a binary image, chosen by the file's magic. */
int prog_load_any(const char *path, AtlProgram *p, AtlErr *e);
/* ---- additions (isa branch) ---- */
#define PROG_MAX_CORES 2048   /* 64 clusters x 32 cores, the config schema's limits */
/* Grows (or shrinks, if the dropped cores are empty) the stream array. */
int prog_set_cores(AtlProgram *p, int ncores, AtlErr *e);
/* Bytes a region covers: product of shape[0..ndim) x dtype size. */
size_t prog_region_bytes(const AtlRegion *r);
/* The binary image in memory; *out is malloc'd, caller frees. */
int prog_serialize(const AtlProgram *p, uint8_t **out, size_t *size, AtlErr *e);
/* Parses a binary image from memory; `name` is used in messages. */
int prog_load_mem(const char *name, const uint8_t *data, size_t size, AtlProgram *p, AtlErr *e);
/* The whole program as assembler text that prog_assemble reads back to the
 * same program. Returns a malloc'd string (caller frees), NULL if out of memory. */
char *prog_to_text(const AtlProgram *p);
/* 1 if s is a valid segment/region/symbol name: a letter or _, then
 * letters, digits, _ or ., at most 63 characters. */
int prog_valid_name(const char *s);
/* Static checks against a chip (isa/prog_check.c): cores exist, data and
 * regions fit in DRAM, semaphores, masks, source cores, base addresses,
 * LMEM alignment and matrix dtypes are valid. Errors name the source line
 * (if known), core, engine, index and the disassembled instruction. */
struct AtlChip;
int prog_check_chip(const AtlProgram *p, const struct AtlChip *chip, AtlErr *e);
#endif
