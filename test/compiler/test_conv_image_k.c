/* test_conv_image_k.c - whole-image K-split tiles on bands
 * (compiler/lower/conv.c, add_image_shapes; docs/backend.md, "Staged
 * schedules").
 *
 * A pointwise convolution of 8 images on a1's 16 cores with bands, its
 * input too big for a cluster's SRAM (a1 with 512 KiB of it), is offered
 * tiles of one whole image and a chunk of K (at least two images a core):
 * the spread then gives each core one image of two output-channel chunks'
 * worth, so each cluster reads half the input once instead of all of it
 * per chunk (ResNet-50's layer4.0 conv1 in the chip stage at batch 8).
 * The plan picks such a shape (`N8 C.. H1 K..`: images one by one, rows
 * whole, K split), gives the interpreter's output, and the simulator's
 * race detector (on in every run) finds nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_graph_run.h"
#include "test/compiler/chip_variant.h"

/* x [8,512,14,14] -> 1x1 conv 512 -> 256 + Relu -> y */
static void pw_graph(IrGraph *g)
{
    AtlErr e;
    int64_t xd[4] = {8, 512, 14, 14}, wd[4] = {256, 512, 1, 1};
    new_graph(g, "x", 4, xd);
    cst(g, "w", 4, wd, 0.05f);
    ir_add_op(g, "Conv", "c", "x,w", "y0", &e);
    ir_add_op(g, "Relu", "r", "y0", "y", &e);
    ir_add_output(g, "y", &e);
}

TEST(pointwise_batch8_bands_takes_whole_image_k_tiles)
{
    IrGraph g;
    pw_graph(&g);
    char chip[64];
    REQUIRE(chip_variant("configs/a1.ini", "sram", "bytes", "512K", chip, sizeof chip) == 0);
    BkOptions o;
    bk_options_default(&o);
    o.placement = BK_PLACE_CHIP;
    o.sram_acts = BK_SRAM_ACTS_BANDS;
    BkSummary sum;
    if (graph_run_within(&g, chip, &o, 2e-6, "c", &sum, NULL, NULL) == 0) {
        const char *split = "";
        for (int i = 0; i < sum.nlayers; i++)
            if (!strcmp(sum.layers[i].name, "c")) split = sum.layers[i].split;
        printf("  c: %s, %llu estimated cycles\n", split, (unsigned long long)sum.est_cycles);
        CHECKF(!strncmp(split, "N8 ", 3) && strstr(split, " H1 K"), "split %s", split);
    }
    bk_summary_free(&sum);
    remove(chip);
    ir_free(&g);
}

int main(void)
{
    RUN(pointwise_batch8_bands_takes_whole_image_k_tiles);
    return test_summary("test_conv_image_k");
}
