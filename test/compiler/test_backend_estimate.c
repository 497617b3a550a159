/* test_backend_estimate.c - the cost model against the simulator.
 *
 * Every bundled model is compiled for configs/tiny.ini and configs/a1.ini
 * (fp32); the simulator's per-layer span (first instruction start to last
 * completion of the layer id) is compared with the cost model's estimate
 * (bk_compile's BkSummary). Both include the barrier that ends the layer:
 * the barrier instructions carry the layer id and complete at its release,
 * so the span runs to the release, as est_cycles does. The table of every
 * layer is printed with the relative error |est - sim| / sim, with the
 * median over conv and matmul layers per model and per chip; the test fails
 * if that median exceeds 15% on any chip.
 *
 * History worth keeping: this test found a causality bug in the simulator.
 * barrier_release used to issue each released engine inline, so the first
 * one's DMA ran ahead of the engines released with it and its LOADED signal
 * was consumed at the release cycle by a compute engine (a flow from cycle
 * 2473 to a wait at 1117 in digits_cnn layer 1 on a1). Every released
 * engine now goes through the event queue; the a1 median fell from 28.6% to
 * about 1.4%. */
#include <stdio.h>
#include <stdlib.h>
#include "test/test.h"
#include "test/compiler/bk_e2e.h"

static const char *const models[] = {"digits_cnn", "lenet5", "encoder_block", "resnet20_cifar", "mobilenetv2_035", "vit_tiny"};
static const char *const chips[] = {"configs/tiny.ini", "configs/a1.ini"};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    if (n == 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

TEST(estimate_vs_sim)
{
    int cap = 4096, nall = 0;
    double *all = malloc((size_t)cap * sizeof *all);
    REQUIRE(all);
    for (int c = 0; c < 2; c++) {
        AtlChip chip;
        AtlErr e;
        REQUIRE(cfg_load(chips[c], &chip, &e) == 0);
        double *mat = malloc((size_t)cap * sizeof *mat);
        int nmat = 0;
        REQUIRE(mat);
        printf("\n%s\n%-16s %5s  %-40s %-16s %10s %10s %7s\n", chips[c], "model", "layer", "node", "op", "estimate", "simulated", "error");
        for (int m = 0; m < 6; m++) {
            E2eResult r;
            int rc = e2e_run(models[m], chips[c], ISA_F32, &r);
            CHECKF(rc == 0, "%s on %s: %s", models[m], chips[c], r.err);
            if (rc) { e2e_free(&r); continue; }
            int first = nmat; /* this model's errors are mat[first..nmat) */
            for (int i = 0; i < r.sum.nlayers; i++) {
                const BkLayerInfo *l = &r.sum.layers[i];
                if (l->layer_id >= r.nlayer_sim) continue;
                double sim = (double)r.layer_sim[l->layer_id];
                double est = (double)l->est_cycles;
                double err = sim > 0 ? fabs(est - sim) / sim : 0;
                printf("%-16s %5d  %-40.40s %-16.16s %10.0f %10.0f %6.1f%%%s\n", models[m], l->layer_id, l->name, l->op, est,
                       sim, 100 * err, l->is_matrix ? "" : "  (not matrix)");
                if (l->is_matrix && nmat < cap && nall < cap) { mat[nmat++] = err; all[nall++] = err; }
            }
            printf("%-16s total: estimate %llu, simulated %llu cycles; median error over %d conv/matmul layers %.1f%%\n",
                   models[m], (unsigned long long)r.sum.est_cycles, (unsigned long long)r.cycles, nmat - first,
                   100 * median(mat + first, nmat - first));
            e2e_free(&r);
        }
        double med = median(mat, nmat);
        printf("%s: median error over %d conv/matmul layers: %.1f%%\n", chips[c], nmat, 100 * med);
        CHECKF(med <= 0.15, "%s: median conv/matmul estimate error %.1f%% > 15%%", chips[c], 100 * med);
        free(mat);
    }
    double med = median(all, nall);
    printf("all chips: median error over %d conv/matmul layers: %.1f%%\n", nall, 100 * med);
    CHECKF(med <= 0.15, "median conv/matmul estimate error %.1f%% > 15%%", 100 * med);
    free(all);
}

int main(void)
{
    RUN(estimate_vs_sim);
    return test_summary("test_backend_estimate");
}
