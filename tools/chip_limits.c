/* chip_limits.c - the table of documented chip limits and the matching of
 * refusal messages against it (see chip_limits.h). */
#include "tools/chip_limits.h"
#include <fnmatch.h>
#include <string.h>
#include "isa/abm.h"

const ChipLimit chip_limits[] = {
    {"data-dependent shape",
     "outputs whose shape depends on data (NonZero, Compress, NonMaxSuppression, window ops whose size is computed at "
     "run time): the chip runs static schedules",
     {"*graph output '*' has an unknown shape", NULL}},
    {"64-bit integers",
     "uint64 tensors and integers beyond int32: the chip has no 64-bit integers",
     {"*has dtype uint64, which the chip cannot hold (it has no 64-bit integers*",
      "*is uint64: the chip lowers uint8, uint16 and uint32 shifts*",
      "*does not fit the chip's * (not supported: the chip has no 64-bit integers)*", NULL}},
    {"float64 range",
     "float64 values beyond float32's range: the chip computes float64 tensors in float32",
     {"*does not fit the chip's float32 (not supported: outside its range)*", NULL}},
    {"rank above 6",
     "tensors of rank above 6: the .abm tensor table holds 6 dimensions",
     {"*has rank * (at most 6)*", NULL}},
    {"empty tensor",
     "empty tensors (a dimension of 0): the .abm holds no empty tensors",
     {"*is empty (dimension * is 0; the chip holds no empty tensors)*", "*an empty input is not lowered*", NULL}},
    {"accumulating scatter",
     "Scatter reductions add and mul: the DMA engine cannot accumulate",
     {"*reduction '*' is not lowered: the DMA engine cannot accumulate*", NULL}},
    {"run-time sequence_lens",
     "an LSTM whose sequence_lens is a run-time input: the chip unrolls a static sequence length",
     {"*sequence_lens must be a constant equal to the sequence length*", NULL}},
};
const int chip_nlimits = (int)(sizeof chip_limits / sizeof chip_limits[0]);

const ChipLimit *chip_limit_match(const char *msg)
{
    for (int i = 0; i < chip_nlimits; i++)
        for (int k = 0; k < CHIP_LIMIT_MAXPAT && chip_limits[i].pattern[k]; k++)
            if (!fnmatch(chip_limits[i].pattern[k], msg, 0)) return &chip_limits[i];
    return NULL;
}

int chip_limit_classify(const char *stage, AtlErr *e)
{
    char m[ATL_ERRLEN];
    snprintf(m, sizeof m, "%s", e->msg);
    const ChipLimit *l = chip_limit_match(m);
    if (l) { atl_fail(e, "chip limit (%s): %s", l->name, m); return CONF_RUN_REFUSED; }
    atl_fail(e, "%s failed, and not for a documented chip limit: %s", stage, m);
    return -1;
}

int chip_limit_check_graph(const IrGraph *g, AtlErr *e)
{
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < (pass ? g->nout : g->nin); k++) {
            const IrTensor *x = &g->t[pass ? g->outputs[k] : g->inputs[k]];
            if (x->ndim > ABM_MAX_DIMS)
                return atl_fail(e, "graph %s '%s' has rank %d (at most %d)", pass ? "output" : "input", x->name ? x->name : "?",
                                x->ndim, ABM_MAX_DIMS);
        }
    for (int t = 0; t < g->nt; t++) {
        const IrTensor *x = &g->t[t];
        /* a constant (e.g. empty Reduce axes) is read by the compiler, not held by the chip, unless it is an output */
        if (x->data && !x->is_output) continue;
        for (int d = 0; d < x->ndim; d++)
            if (x->dims[d] == 0)
                return atl_fail(e, "tensor '%s' is empty (dimension %d is 0; the chip holds no empty tensors)",
                                x->name ? x->name : "?", d);
    }
    return 0;
}

void chip_limits_markdown(FILE *fp, const char *const *reasons, int n)
{
    fprintf(fp, "| limit | what the chip cannot do | tests refused |\n|---|---|---:|\n");
    for (int i = 0; i < chip_nlimits; i++) {
        char tag[96];
        snprintf(tag, sizeof tag, "chip limit (%s)", chip_limits[i].name);
        int count = 0;
        for (int k = 0; k < n; k++) count += reasons[k] && strstr(reasons[k], tag) != NULL;
        fprintf(fp, "| %s | %s | %d |\n", chip_limits[i].name, chip_limits[i].what, count);
    }
}
