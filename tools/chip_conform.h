/* chip_conform.h - the chip path as a conformance runner (tools/conform.h
 * ConfRunner): each ONNX backend test that passes on the interpreter is
 * compiled by the backend for a chip and run through the host API (device,
 * firmware, simulator), and its outputs are checked against the expected
 * ones by tools/conform.c's own rule. */
#ifndef ATOLL_TOOLS_CHIP_CONFORM_H
#define ATOLL_TOOLS_CHIP_CONFORM_H
#include "tools/conform.h"
#include "isa/config.h"

typedef struct ChipConform {
    const AtlChip *chip;
    const char *chip_path;
    char command[512];       /* for the markdown header */
    ConfRunner runner;
} ChipConform;

/* Fills cc->runner (ctx = cc). A graph with an empty tensor, a compile
 * error or an input the chip's dtypes cannot hold is a refusal
 * (unsupported) when its message matches a documented chip limit
 * (tools/chip_limits.h), otherwise a failure; so are a load or run error
 * (the firmware's or a simulator fault) and an unreadable output. */
void chip_conform_init(ChipConform *cc, const AtlChip *chip, const char *chip_path, const char *markdown);
#endif
