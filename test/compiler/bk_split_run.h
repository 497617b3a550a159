/* bk_split_run.h - "compile a graph built in code with these options, run
 * it, compare with the interpreter, and check the split the tile search
 * gave one layer": the step shared by the tiling tests (test_backend_tiling.c,
 * test_backend_multimg.c), which check both the answer and the shape the
 * cost model chose. Header only (one test binary each). */
#ifndef ATOLL_TEST_BK_SPLIT_RUN_H
#define ATOLL_TEST_BK_SPLIT_RUN_H
#include <stdio.h>
#include "test/test.h"
#include "test/compiler/bk_e2e.h"

/* What split_run checks and reports besides the answer. */
typedef struct SplitCheck {
    const char *what;       /* the case's name, printed and in failures */
    const char *tag;        /* printed after the chip (e.g. the dtype), or NULL */
    const char *layer;      /* the layer whose split is checked (NULL: the first whose split contains want) */
    const char *want;       /* text the split must contain (NULL: no check) */
    double tol;             /* largest error allowed against the interpreter */
    uint64_t *dram_rd;      /* the layer's DRAM bytes read, when not NULL */
    uint8_t **y;            /* the output bytes (caller frees), when not NULL */
    size_t *ylen;
} SplitCheck;

/* Compiles g for chip with options o, runs it and checks it as k says.
 * Frees g. */
static inline void split_run(IrGraph *g, const char *chip, const BkOptions *o, const SplitCheck *k)
{
    double err = -1;
    char msg[1024] = "";
    BkSummary sum;
    memset(&sum, 0, sizeof sum);
    int rc = e2e_graph_run_y(g, chip, o, &err, NULL, &sum, msg, sizeof msg, k->y, k->ylen);
    const char *split = "?";
    for (int i = 0; rc == 0 && i < sum.nlayers; i++) {
        int match = k->layer ? !strcmp(sum.layers[i].name, k->layer)
                             : k->want && strstr(sum.layers[i].split, k->want) != NULL;
        if (!match) continue;
        split = sum.layers[i].split;
        if (k->dram_rd) *k->dram_rd = sum.layers[i].dram_rd;
    }
    printf("  %-34s %-20s %-4s split %-18s max err %.3g%s%s\n", k->what, chip, k->tag ? k->tag : "", split,
           rc ? -1.0 : err, rc ? " ERROR: " : "", msg);
    CHECKF(rc == 0, "%s on %s: %s", k->what, chip, msg);
    if (rc == 0) {
        CHECKF(err <= k->tol, "%s on %s: error %g > %g", k->what, chip, err, k->tol);
        if (k->want)
            CHECKF(strstr(split, k->want) != NULL, "%s on %s: layer '%s' split '%s' lacks '%s'", k->what, chip,
                   k->layer ? k->layer : "(any)", split, k->want);
    }
    bk_summary_free(&sum);
    ir_free(g);
}
#endif
