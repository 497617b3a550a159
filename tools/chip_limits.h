/* chip_limits.h - the documented limits of the chip, as the chip
 * conformance runner tells a refusal for one of them from any other
 * failure. Each limit has a name, what it is (docs/conformance-chip.md
 * lists these, generated from this table) and the shapes of the messages
 * that refuse for it (fnmatch patterns over the compiler's or the input
 * conversion's message). A compile or input error that matches no limit is
 * a failure of the test, never "unsupported", so a new internal compiler
 * error cannot hide as a refusal. */
#ifndef ATOLL_TOOLS_CHIP_LIMITS_H
#define ATOLL_TOOLS_CHIP_LIMITS_H
#include <stdio.h>
#include "compiler/ir/ir.h"
#include "tools/conform.h"

#define CHIP_LIMIT_MAXPAT 4

typedef struct ChipLimit {
    const char *name;                        /* short, in the refusal reason */
    const char *what;                        /* one sentence for the docs */
    const char *pattern[CHIP_LIMIT_MAXPAT];  /* fnmatch patterns; NULL-terminated */
} ChipLimit;

extern const ChipLimit chip_limits[];
extern const int chip_nlimits;

/* The limit whose patterns match msg, or NULL. */
const ChipLimit *chip_limit_match(const char *msg);

/* A compile or input error of the chip conformance runner, failing at
 * `stage` ("compiling", ...) with e's message: CONF_RUN_REFUSED (the test
 * is unsupported) with e saying "chip limit (NAME): ..." when the message
 * matches a documented limit, else -1 with e saying "STAGE failed, and
 * not for a documented chip limit: ..." (the test fails). */
int chip_limit_classify(const char *stage, AtlErr *e);

/* Refuses, before it is compiled, a graph that breaks a limit the runner
 * can see in the graph itself: a graph input or output of rank above 6
 * (checked first, so that a graph the compiler would refuse for its rank is
 * not reported by whichever layer fails first on it), or an empty tensor
 * the chip would hold (an input or a computed tensor with a dimension of 0;
 * empty constants such as Reduce axes are compiled in). Fills e with a
 * message of the limit's shape and returns -1, or returns 0. */
int chip_limit_check_graph(const IrGraph *g, AtlErr *e);

/* Writes the markdown table of the limits with, per limit, how many of the
 * given reasons (n strings) name it. */
void chip_limits_markdown(FILE *fp, const char *const *reasons, int n);
#endif
