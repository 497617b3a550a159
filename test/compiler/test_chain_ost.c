/* test_chain_ost.c - a layer group's last conv with a residual tail in
 * output-channel steps (lower/chain.c, "output-channel steps";
 * docs/backend.md, "Output channels in steps").
 *
 * The block is ResNet-50's layer1.1 at fewer rows: x [1, 256, H, 56] ->
 * 1x1 conv 256 -> 64 + Relu -> 3x3 conv 64 -> 64 + Relu -> 1x1 conv
 * 64 -> 256 + x, Relu. Holding the last conv's 256 output and residual
 * channels for whole rows leaves one-row slices for its group with the
 * 3x3; in 32- or 64-channel steps the group takes several rows a slice,
 * and the cost model takes it (split " o<channels>/<steps>").
 *
 * Checked on a1 with one cluster (4 cores, as a stage of ResNet-50 at
 * batch 8 runs a block) and the activations in DRAM (where the group
 * saves the 3x3's output's traffic): in f32 and bf16 the block forms a
 * group with output-channel steps at a lower estimate than --group
 * none's, within the interpreter's tolerance, the simulator's race
 * detector (on in every run) finding nothing; in f32 its output equals
 * --group none's bit for bit (the same sums; in bf16 the Add alone
 * rounds its inputs). On tiny (with one cluster) the block, whatever
 * plan it takes, against the interpreter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "test/compiler/chip_variant.h"

enum { ROWS = 12 };

static void block_graph(IrGraph *g)
{
    AtlErr e;
    int64_t xd[4] = {1, 256, ROWS, 56}, w1[4] = {64, 256, 1, 1}, w2[4] = {64, 64, 3, 3}, w3[4] = {256, 64, 1, 1};
    int64_t b1[1] = {64}, b3[1] = {256}, pads[4] = {1, 1, 1, 1};
    new_graph(g, "x", 4, xd);
    cst(g, "w1", 4, w1, 0.08f);
    cst(g, "b1", 1, b1, 0.2f);
    cst(g, "w2", 4, w2, 0.05f);
    cst(g, "w3", 4, w3, 0.1f);
    cst(g, "b3", 1, b3, 0.2f);
    ir_add_op(g, "Conv", "c1", "x,w1,b1", "a0", &e);
    ir_add_op(g, "Relu", "r1", "a0", "a", &e);
    ir_set_attr_ints(g, ir_add_op(g, "Conv", "c2", "a,w2", "b0", &e), "pads", pads, 4, &e);
    ir_add_op(g, "Relu", "r2", "b0", "b", &e);
    ir_add_op(g, "Conv", "c3", "b,w3,b3", "c", &e);
    ir_add_op(g, "Add", "add", "c,x", "s", &e);
    ir_add_op(g, "Relu", "ry", "s", "y", &e);
    ir_add_output(g, "y", &e);
}

/* One compile and run of the block; *y the output's bytes (caller frees),
 * *ost 1 when some group has output-channel steps. */
static int run(const char *chip, int dtype, int group, uint8_t **y, size_t *ylen, uint64_t *est, int *ost)
{
    IrGraph g;
    rng = 5;
    block_graph(&g);
    BkOptions o = bkc_group_options(dtype, group);
    BkSummary sum;
    char what[96];
    snprintf(what, sizeof what, "%s %s", chip, group == BK_GROUP_NONE ? "none" : "auto");
    int rc = graph_run_within(&g, chip, &o, dtype == ISA_F32 ? 2e-5 : 3e-2, what, &sum, y, ylen);
    if (rc == 0) {
        *est = sum.est_cycles;
        *ost = 0;
        for (int i = 0; i < sum.nlayers; i++) {
            if (strncmp(sum.layers[i].op, "Group", 5)) continue;
            printf("  %s %s: %s %s, estimate %llu\n", chip, dtype == ISA_F32 ? "f32" : "bf16", sum.layers[i].op,
                   sum.layers[i].split, (unsigned long long)sum.layers[i].est_cycles);
            *ost |= strstr(sum.layers[i].split, " o") != NULL;
        }
    }
    bk_summary_free(&sum);
    ir_free(&g);
    return rc;
}

/* The block on a1 with one cluster (4 cores, as a stage of ResNet-50 at
 * batch 8 runs it), --group auto against --group none; want_ost: the
 * group must take output-channel steps at a lower estimate; bits: the
 * outputs must be equal bit for bit (f32: the same sums; bf16's Add
 * alone rounds its inputs, so only the interpreter's tolerance). */
static void check_chip(const char *base, int dtype, int want_ost, int bits)
{
    char chip[64];
    REQUIRE(chip_variant(base, "chip", "clusters", "1", chip, sizeof chip) == 0);
    uint8_t *ya = NULL, *yn = NULL;
    size_t la = 0, ln = 0;
    uint64_t ea = 0, en = 0;
    int oa = 0, on = 0;
    int ra = run(chip, dtype, BK_GROUP_AUTO, &ya, &la, &ea, &oa);
    int rn = run(chip, dtype, BK_GROUP_NONE, &yn, &ln, &en, &on);
    if (ra == 0 && rn == 0) {
        if (want_ost) {
            CHECKF(oa, "%s: no group with output-channel steps", base);
            CHECKF(ea < en, "%s: estimate %llu grouped, %llu with --group none", base, (unsigned long long)ea,
                   (unsigned long long)en);
        }
        CHECK(la == ln && la > 0);
        if (bits) CHECKF(la == ln && !memcmp(ya, yn, la), "%s: the grouped output differs from --group none's", base);
    }
    free(ya);
    free(yn);
    remove(chip);
}

TEST(layer1_block_in_output_channel_steps_f32) { check_chip("configs/a1.ini", ISA_F32, 1, 1); }
TEST(layer1_block_in_output_channel_steps_bf16) { check_chip("configs/a1.ini", ISA_BF16, 1, 0); }
TEST(layer1_block_on_tiny) { check_chip("configs/tiny.ini", ISA_F32, 0, 0); }

int main(void)
{
    RUN(layer1_block_in_output_channel_steps_f32);
    RUN(layer1_block_in_output_channel_steps_bf16);
    RUN(layer1_block_on_tiny);
    return test_summary("test_chain_ost");
}
