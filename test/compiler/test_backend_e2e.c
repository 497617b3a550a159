/* test_backend_e2e.c - every bundled model compiled by the backend for
 * configs/tiny.ini and configs/a1.ini, run on the simulator (race detector
 * on, full timing) and compared with the PyTorch reference outputs in
 * models/NAME.ref.npz: fp32 within |a - t| <= 1e-5 + 1e-4 |t| everywhere,
 * fp16/bf16 cosine >= 0.999 and, since a cosine ignores scale, the error
 * relative to the output's magnitude ||a - t|| / ||t|| and the
 * least-squares gain a.t / t.t within per-model bounds (bk_e2e.h,
 * e2e_reduced_bounds). Each run (model x chip x dtype) counts as a test.
 * Prints one line per run (max abs/rel error, cosine, rel_l2, gain, cycles). Known precision limit: mobilenetv2_035 in bf16 (52 layers of
 * 8-bit-mantissa activations and depthwise weights) reaches cosine 0.9896;
 * its bf16 bar is 0.985, every other model and dtype keeps 0.999 (fp16
 * mobilenet: 0.99984, i.e. the error grows 2^3 x per the 3 lost mantissa
 * bits, as expected). Under the sanitizers mobilenetv2_035 runs on tiny
 * only (see main). Set ATOLL_QUICK_TESTS=1 to run only the three small models
 * (the whole set takes a few seconds in the plain build). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "test/compiler/bk_e2e.h"

static const char *const models[] = {"digits_cnn", "lenet5", "encoder_block", "resnet20_cifar", "mobilenetv2_035", "vit_tiny"};
static const char *const chips[] = {"configs/tiny.ini", "configs/a1.ini"};

static int nmodels(void)
{
    const char *q = getenv("ATOLL_QUICK_TESTS");
    return q && q[0] == '1' ? 3 : 6;
}

static void run_one(const char *m, const char *chip, int dt)
{
    E2eResult r;
    int rc = e2e_run(m, chip, dt, &r);
    printf("  %-16s %-18s %-4s max_abs %.3g max_rel %.3g cos %.6f rel_l2 %.5f gain %.5f vs-interp %.3g cycles %llu est %llu%s%s\n", m, chip,
           isa_dtype_name(dt), r.max_abs, r.max_rel, r.cosine, r.rel_l2, r.gain, r.interp_max_abs, (unsigned long long)r.cycles,
           (unsigned long long)r.sum.est_cycles, rc ? " ERROR: " : "", rc ? r.err : "");
    CHECKF(rc == 0, "%s on %s (%s): %s", m, chip, isa_dtype_name(dt), r.err);
    if (rc == 0) {
        if (dt == ISA_F32) CHECKF(r.tol_violations == 0, "%s on %s: %lld elements outside rtol 1e-4 atol 1e-5 (max abs %g)",
                                  m, chip, (long long)r.tol_violations, r.max_abs);
        else {
            CHECKF(r.cosine >= (dt == ISA_BF16 && !strcmp(m, "mobilenetv2_035") ? 0.985 : 0.999), "%s on %s (%s): cosine %.6f < 0.999", m, chip, isa_dtype_name(dt), r.cosine);
            /* the cosine ignores scale: the error relative to the output's
             * magnitude and the gain are bounded too */
            double rel_max, gain_max;
            CHECKF(e2e_reduced_bounds(m, dt, &rel_max, &gain_max), "%s: no fp16/bf16 bounds", m);
            if (e2e_reduced_bounds(m, dt, &rel_max, &gain_max)) {
                CHECKF(r.rel_l2 <= rel_max, "%s on %s (%s): ||got - ref|| / ||ref|| = %.5f > %.5f", m, chip, isa_dtype_name(dt),
                       r.rel_l2, rel_max);
                CHECKF(fabs(r.gain - 1) <= gain_max, "%s on %s (%s): gain %.5f, more than %.5f from 1", m, chip, isa_dtype_name(dt),
                       r.gain, gain_max);
            }
        }
    }
    e2e_free(&r);
}

/* One run: a model on a chip in a dtype. */
typedef struct E2eCase { const char *model, *chip; int dtype; } E2eCase;

static void run_case(const void *arg)
{
    const E2eCase *c = arg;
    run_one(c->model, c->chip, c->dtype);
}

int main(void)
{
    /* each run (model x chip x dtype) is a test of its own */
    static const int dtypes[] = {ISA_F32, ISA_F16, ISA_BF16};
    for (int d = 0; d < 3; d++)
        for (int i = 0; i < nmodels(); i++)
            for (int c = 0; c < 2; c++) {
                /* Under the sanitizers mobilenetv2_035 runs on tiny only:
                 * its fp16 and bf16 runs on a1 took a third of this test's
                 * time in each sanitizer pass, its fp32 run there (since
                 * session 33) another third; its fp16/bf16 runs on tiny
                 * still take its reduced-precision code, and on a1 the
                 * sanitizer passes still compile and run it in
                 * test/cli/chan_bands.sh (a 2-cluster a1, fp32, full mode
                 * against the interpreter, race detector on) and
                 * test_backend_estimate (a1, timing). The plain pass runs
                 * all six. */
                if (TEST_SANITIZED && c == 1 && !strcmp(models[i], "mobilenetv2_035")) continue;
                /* and no model runs fp16 on a1 there: bf16 on a1 takes the
                 * same 16-bit paths of the multi-core code, fp16 on tiny
                 * the fp16 arithmetic (CI time) */
                if (TEST_SANITIZED && dtypes[d] == ISA_F16 && c == 1) continue;
                E2eCase k = {models[i], chips[c], dtypes[d]};
                char name[128];
                snprintf(name, sizeof name, "%s/%s/%s", models[i], chips[c], isa_dtype_name(dtypes[d]));
                RUN_CASE(run_case, &k, name);
            }
    return test_summary("test_backend_e2e");
}
