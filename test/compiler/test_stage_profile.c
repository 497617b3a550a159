/* test_stage_profile.c - the per-stage profile of a staged schedule, end
 * to end: resnet20_cifar at batch 8 on a1 with a stage plan (stage 0 one
 * image per instance, stage 1 two) compiled by the driver, loaded and run
 * timing-only through the host API.
 *
 * Checks: the .abm's stage rows reach AtlVariantInfo.stages (micro-batch,
 * instances, cores, boundary, growing disjoint layer ranges that cover
 * every layer that ran); the stages' useful MACs add up to the model's
 * (those of the same graph compiled on the whole chip); the simulated
 * MACs and DRAM bytes of the stages add up to the run's; each stage's
 * cycles (the core-cycles its layers held / its cores) fit in the run and
 * together too, and its matrix-unit utilisation lies in (0, 1] and is
 * mat_cycles / held; every layer's held core-cycles add up to at most
 * cycles x cores; the trace has a slice per stage on each of the four
 * clusters (stage 1 starting where stage 0 ends on that cluster); a model
 * compiled without stages has none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "compiler/driver/driver.h"
#include "atoll.h"

#define MODEL "models/resnet20_cifar.onnx"
#define CUT "/stages/stages.5/relu_1/Relu_output_0"

/* The model at batch 8 with the given placement (and stage plan, if not
 * NULL) into malloc'd .abm bytes; *macs the useful MACs of its layers. */
static uint8_t *compile(const AtlChip *chip, int placement, const char *plan, size_t *len, uint64_t *macs)
{
    DrvRequest rq;
    DrvResult res;
    AtlErr e;
    memset(&rq, 0, sizeof rq);
    rq.chip = chip;
    rq.dtype = ISA_F32;
    rq.batches[0] = 8;
    rq.nbatch = 1;
    rq.placement = placement;
    rq.stage_plan = plan;
    AbmWriter *w = abm_writer_new(cfg_fingerprint(chip));
    uint8_t *buf = NULL;
    if (!w) return NULL;
    int rc = drv_compile(MODEL, &rq, w, &res, &e);
    CHECKF(rc == 0, "%s", e.msg);
    if (!rc) {
        const BkSummary *s = &res.variants[0];
        uint64_t per = 0;
        /* placement chip: the rows are the whole batch; staged: one instance per stage */
        for (int i = 0; i < s->nlayers; i++) {
            int k = 0;
            while (k + 1 < s->nstages && s->stage_row[k + 1] <= i) k++;
            per += s->layers[i].macs * (uint64_t)(s->nstages > 1 ? s->batch / s->stage_m[k] : 1);
        }
        *macs = per;
        if (abm_serialize(w, &buf, len, &e)) { CHECKF(0, "%s", e.msg); buf = NULL; }
    }
    drv_result_free(&res);
    abm_writer_free(w);
    return buf;
}

/* Loads abm on a timing-only device with a trace and runs it on zeros;
 * NULL (a failed check) when any step fails. */
static AtlModel *load_run(AtlDevice **dev, const AtlChip *chip, const uint8_t *abm, size_t len, const AtlVariantInfo **v)
{
    AtlOpenOptions o;
    memset(&o, 0, sizeof o);
    o.timing_only = 1;
    o.trace = 1;
    AtlModel *m = NULL;
    const AtlNetInfo *nets;
    uint32_t n;
    void *zeros = NULL;
    int ok = atl_open_chip(dev, chip, &o) == ATL_OK && atl_load_memory(*dev, abm, len, &m) == ATL_OK &&
             atl_nets(m, &nets, &n) == ATL_OK && n == 1 && nets[0].n_variants == 1;
    if (ok) {
        *v = &nets[0].variants[0];
        AtlBuffer in;
        zeros = calloc(1, (*v)->inputs[0].bytes);
        ok = zeros != NULL;
        if (ok) atl_buffer_init(&in, &(*v)->inputs[0], zeros);
        ok = ok && atl_run(m, NULL, &in, 1, NULL) == ATL_OK;
    }
    CHECKF(ok, "loading and running: %s", *dev ? atl_last_error(*dev) : "no device");
    free(zeros);
    return ok ? m : NULL;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

TEST(stage_profile_adds_up)
{
    AtlChip chip;
    AtlErr e;
    REQUIRE(cfg_load("configs/a1.ini", &chip, &e) == 0);
    size_t len = 0, clen = 0;
    uint64_t staged_macs = 0, chip_macs = 0;
    uint8_t *abm = compile(&chip, BK_PLACE_AUTO, "1," CUT ":2", &len, &staged_macs);
    uint8_t *cabm = compile(&chip, BK_PLACE_CHIP, NULL, &clen, &chip_macs);
    REQUIRE(abm && cabm);
    AtlDevice *dev;
    const AtlVariantInfo *v;
    AtlModel *m = load_run(&dev, &chip, abm, len, &v);
    REQUIRE(m);
    /* the stage rows */
    REQUIRE(v->n_stages == 2);
    const AtlStageInfo *s0 = &v->stages[0], *s1 = &v->stages[1];
    CHECK(s0->stage == 0 && s0->micro_batch == 1 && s0->instances == 8 && s0->cores == 16 && !strcmp(s0->input, ""));
    CHECK(s1->stage == 1 && s1->micro_batch == 2 && s1->instances == 4 && s1->cores == 16 && !strcmp(s1->input, CUT));
    CHECK(s0->first_layer == 0 && s1->first_layer == s0->n_layers && s1->n_layers > 0);
    CHECK(s0->est_cycles > 0 && s1->est_cycles > 0 && s0->mat_cycles > 0 && s1->mat_cycles > 0);
    CHECKF(s0->macs + s1->macs == chip_macs && staged_macs == chip_macs, "stage MACs %llu + %llu, the model's %llu",
           (unsigned long long)s0->macs, (unsigned long long)s1->macs, (unsigned long long)chip_macs);
    /* the profile */
    AtlProfile p;
    REQUIRE(atl_profile(m, &p) == ATL_OK);
    REQUIRE(p.n_stages == 2);
    uint64_t macs = 0, dram = 0, cycles = 0, held = 0;
    for (uint32_t i = 0; i < p.n_layers; i++) {
        CHECKF(p.layers[i].layer < s1->first_layer + s1->n_layers, "layer %u outside every stage", p.layers[i].layer);
        held += p.layers[i].held;
    }
    CHECKF(held <= p.cycles * p.cores, "layers held %llu core-cycles, the run has %llu", (unsigned long long)held,
           (unsigned long long)(p.cycles * p.cores));
    for (uint32_t k = 0; k < 2; k++) {
        const AtlStageProfile *g = &p.stages[k];
        CHECK(g->stage == k);
        CHECKF(g->mac_util > 0 && g->mac_util <= 1, "stage %u: utilisation %g", k, g->mac_util);
        CHECK(g->held > 0 && g->cycles == g->held / v->stages[k].cores && g->cycles <= p.cycles);
        CHECK(g->mac_util == (double)v->stages[k].mat_cycles / (double)g->held);
        CHECK(g->first < g->last && g->last <= p.cycles);
        macs += g->macs;
        dram += g->dram_bytes;
        cycles += g->cycles;
    }
    CHECK(p.stages[0].first <= p.stages[1].first && p.stages[0].last <= p.stages[1].last);
    CHECKF(macs == p.macs && dram == p.dram_bytes, "stages: %llu MACs, %llu DRAM bytes; the run %llu, %llu",
           (unsigned long long)macs, (unsigned long long)dram, (unsigned long long)p.macs, (unsigned long long)p.dram_bytes);
    CHECKF(cycles <= p.cycles, "stage cycles add up to %llu, the run took %llu", (unsigned long long)cycles,
           (unsigned long long)p.cycles);
    /* the trace: a slice per stage on each cluster */
    char *tr = NULL;
    REQUIRE(atl_trace_json(dev, &tr) == ATL_OK && tr);
    CHECK_EQ_INT(count(tr, "\"cat\":\"stage\""), 8);
    CHECK_EQ_INT(count(tr, ": stages\"}}"), 4);
    CHECK_EQ_INT(count(tr, "\"name\":\"stage 1 (mb 2)\",\"ts\""), 4);
    free(tr);
    atl_unload(m);
    atl_close(dev);
    /* placement chip: no stages, no stage slices */
    m = load_run(&dev, &chip, cabm, clen, &v);
    REQUIRE(m);
    CHECK(v->n_stages == 0);
    REQUIRE(atl_profile(m, &p) == ATL_OK);
    CHECK(p.n_stages == 0 && p.stages == NULL);
    REQUIRE(atl_trace_json(dev, &tr) == ATL_OK && tr);
    CHECK_EQ_INT(count(tr, "\"cat\":\"stage\""), 0);
    free(tr);
    atl_unload(m);
    atl_close(dev);
    free(abm);
    free(cabm);
}

/* A chip stage after a split one ("1,CUT:c"): the chip barrier that opens
 * it, where every core waits for stage 0's slowest cluster, counts for
 * stage 0, so the chip stage holds no more core-cycles than its span on
 * every core (it held the wait too before, and showed more cycles than
 * its span), and stage 0's row ends where the chip stage's begins. */
TEST(chip_stage_holds_its_span)
{
    AtlChip chip;
    AtlErr e;
    REQUIRE(cfg_load("configs/a1.ini", &chip, &e) == 0);
    size_t len = 0;
    uint64_t macs = 0;
    uint8_t *abm = compile(&chip, BK_PLACE_AUTO, "1," CUT ":c", &len, &macs);
    REQUIRE(abm);
    AtlDevice *dev;
    const AtlVariantInfo *v;
    AtlModel *m = load_run(&dev, &chip, abm, len, &v);
    REQUIRE(m);
    REQUIRE(v->n_stages == 2);
    CHECK(v->stages[1].instances == 1 && v->stages[1].micro_batch == 8 && v->stages[1].cores == 16);
    AtlProfile p;
    REQUIRE(atl_profile(m, &p) == ATL_OK);
    REQUIRE(p.n_stages == 2);
    const AtlStageProfile *g0 = &p.stages[0], *g1 = &p.stages[1];
    printf("  stage 0: %llu cycles over [%llu, %llu); chip stage: %llu cycles over [%llu, %llu)\n",
           (unsigned long long)g0->cycles, (unsigned long long)g0->first, (unsigned long long)g0->last,
           (unsigned long long)g1->cycles, (unsigned long long)g1->first, (unsigned long long)g1->last);
    CHECKF(g1->cycles <= g1->last - g1->first, "the chip stage held %llu cycles a core in a span of %llu",
           (unsigned long long)g1->cycles, (unsigned long long)(g1->last - g1->first));
    CHECK(g1->first >= g0->last);
    atl_unload(m);
    atl_close(dev);
    free(abm);
}

int main(void)
{
    RUN(stage_profile_adds_up);
    RUN(chip_stage_holds_its_span);
    return test_summary("test_stage_profile");
}
