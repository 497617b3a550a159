/* bk_timing_run.h - compile a graph for a chip and run it on the
 * simulator timing-only, as a user sizing a chip does (test_full_models.c,
 * test_backend_estimate.c). The .abm image is written without compression
 * (zlib level 0): it never leaves memory, and at the default level large
 * weights take most of a full-size model's compile time.
 * Header only. */
#ifndef ATOLL_TEST_BK_TIMING_RUN_H
#define ATOLL_TEST_BK_TIMING_RUN_H
#include <stdlib.h>
#include <string.h>
#include "compiler/backend/backend.h"
#include "isa/abm.h"
#include "isa/abm_program.h"
#include "sim/sim.h"

/* What a run leaves: the compile summary and the simulator (its stats). */
typedef struct BkTimingRun {
    BkSummary sum;
    AtlSim *sim;
    AbmWriter *w;
    uint8_t *buf;
    size_t len;
    AbmModel m;
    AtlProgram p;
} BkTimingRun;

static inline void bk_timing_run_free(BkTimingRun *r)
{
    sim_free(r->sim);
    prog_free(&r->p);
    abm_model_free(&r->m);
    free(r->buf);
    abm_writer_free(r->w);
    bk_summary_free(&r->sum);
    memset(r, 0, sizeof *r);
}

/* Compiles g (after the passes) for chip with options o (NULL: the
 * defaults) and runs it timing-only; 0, or -1 with e set ("compile: ..."
 * or "timing-only run: ..."). The caller frees r with bk_timing_run_free
 * either way. */
static inline int bk_timing_run_opts(const IrGraph *g, const AtlChip *chip, const BkOptions *opts, BkTimingRun *r,
                                     AtlErr *e)
{
    memset(r, 0, sizeof *r);
    BkOptions o;
    bk_options_default(&o);
    if (opts) o = *opts;
    r->w = abm_writer_new(cfg_fingerprint(chip));
    if (r->w) abm_writer_set_level(r->w, 0);
    if (!r->w || bk_compile(g, chip, &o, r->w, &r->sum, e) || abm_serialize(r->w, &r->buf, &r->len, e) ||
        abm_load_buffer(&r->m, r->buf, r->len, cfg_fingerprint(chip), 0, e) || abm_variant_program(&r->m, 0, chip, &r->p, NULL, e)) {
        if (!r->w) atl_fail(e, "out of memory");
        atl_err_prefix(e, "compile");
        return -1;
    }
    AtlSimOptions so;
    sim_options_default(&so);
    so.mode = SIM_MODE_TIMING;
    r->sim = sim_create(chip, &so, e);
    if (!r->sim || sim_load(r->sim, &r->p, e) || sim_run(r->sim, e)) {
        atl_err_prefix(e, "timing-only run");
        return -1;
    }
    return 0;
}

static inline int bk_timing_run(const IrGraph *g, const AtlChip *chip, BkTimingRun *r, AtlErr *e)
{
    return bk_timing_run_opts(g, chip, NULL, r, e);
}
#endif
