/* dram_valid.h - the banked DRAM model checked against Ramulator2
 * (`atoll dram --validate DIR`, test/cli/dram.sh, docs/timing.md). */
#ifndef ATOLL_TOOLS_DRAM_VALID_H
#define ATOLL_TOOLS_DRAM_VALID_H
#include <stdio.h>
#include "util/err.h"

/* Generates the seven reference traces of every preset and mapping (their
 * SHA-256 checked against DIR/trace_manifest.csv), replays each on the
 * preset's chip config (configs/dram/, relative to the working directory)
 * and prints to `out` the comparison with DIR/results.csv as a markdown
 * table and a summary. With doc non-NULL, the table also replaces the
 * section "dram_validation" of that file. Returns 0 when every DDR4 row is
 * within 10% of Ramulator2's time and 10 points of its row-hit rate, 1 when
 * one is not, -1 on an error (e set). */
int dram_validate(const char *dir, const char *doc, FILE *out, AtlErr *e);
#endif
