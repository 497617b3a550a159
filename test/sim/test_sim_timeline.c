/* test_sim_timeline.c - the engine-busy timeline of the stats (sim.h,
 * AtlSimTimeline): every busy cycle lands in exactly one bucket, the bucket
 * width doubles when a run outgrows the buckets, a long instruction is
 * spread over the buckets it overlaps, and the stats JSON carries it with
 * the chip figures (peak ops/s, DRAM bandwidth) and the area. */
#include "test/test.h"
#include "test/sim/simtest.h"

static AtlSim *run(const AtlChip *c, AtlProgram *p)
{
    AtlSimOptions o;
    sim_options_default(&o);
    AtlErr e = {{0}};
    AtlSim *s = sim_create(c, &o, &e);
    if (!s || sim_load(s, p, &e) || sim_run(s, &e)) { printf("  %s\n", e.msg); sim_free(s); return NULL; }
    return s;
}

static uint64_t timeline_sum(const AtlSimTimeline *t, int engine)
{
    uint64_t sum = 0;
    for (int i = 0; i < SIM_TIMELINE_BUCKETS; i++) sum += t->busy[engine][i];
    return sum;
}

TEST(busy_cycles_land_in_the_buckets)
{
    AtlChip c;
    tchip(&c, 1, 2);
    /* loads of growing size on two cores: the run outgrows 256 x 64 cycles */
    AtlProgram p;
    tp_init(&p, 2);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 12; i++) tp_add(&p, k, ISA_ENGINE_DMA, I_load(0, (uint64_t)i * 4096, 4096u << (i % 4)));
    tp_end_all(&p);
    AtlSim *s = run(&c, &p);
    REQUIRE(s);
    const AtlSimStats *st = sim_stats(s);
    const AtlSimTimeline *t = &st->timeline;
    CHECK(st->cycles > 64 * SIM_TIMELINE_BUCKETS);
    CHECK(t->bucket_cycles > 64 && (t->bucket_cycles & (t->bucket_cycles - 1)) == 0);
    CHECK(st->cycles <= t->bucket_cycles * SIM_TIMELINE_BUCKETS);
    CHECK(st->cycles > t->bucket_cycles * SIM_TIMELINE_BUCKETS / 2);
    CHECK_EQ_INT(timeline_sum(t, ISA_ENGINE_DMA), st->total[ISA_ENGINE_DMA].busy);
    CHECK_EQ_INT(timeline_sum(t, ISA_ENGINE_MAT), 0);
    for (int i = 0; i < SIM_TIMELINE_BUCKETS; i++)
        CHECKF(t->busy[ISA_ENGINE_DMA][i] <= 2 * t->bucket_cycles, "bucket %d holds %llu busy cycles of 2 cores", i,
               (unsigned long long)t->busy[ISA_ENGINE_DMA][i]);
    sim_free(s);
    tp_free(&p);
}

TEST(one_long_instruction_spreads_over_buckets)
{
    AtlChip c;
    tchip(&c, 1, 1);
    AtlProgram p;
    tp_init(&p, 1);
    tp_add(&p, 0, ISA_ENGINE_DMA, I_load(0, 0, 8192));   /* about 8192/16 = 512 cycles */
    tp_end_all(&p);
    AtlSim *s = run(&c, &p);
    REQUIRE(s);
    const AtlSimTimeline *t = &sim_stats(s)->timeline;
    CHECK_EQ_INT(t->bucket_cycles, 64);
    uint64_t busy = sim_stats(s)->total[ISA_ENGINE_DMA].busy;
    CHECK(busy > 256);
    int full = 0;
    for (int i = 0; i < SIM_TIMELINE_BUCKETS; i++) full += t->busy[ISA_ENGINE_DMA][i] == 64;
    CHECKF(full >= (int)(busy / 64) - 1, "%d full buckets for %llu busy cycles", full, (unsigned long long)busy);
    char *json = sim_stats_json(s);
    REQUIRE(json);
    CHECK_STR_CONTAINS(json, "\"timeline\": {\"bucket_cycles\":64,\"dma\":[64,64,");
    CHECK_STR_CONTAINS(json, "\"peak_ops_per_s\":{\"i8\":1.28e+11");   /* 2 x 64 MACs x 1 GHz */
    CHECK_STR_CONTAINS(json, "\"dram_bytes_per_s\":1.6e+10");
    CHECK_STR_CONTAINS(json, "\"area_mm2\": null");                    /* the test chip has no [area] */
    free(json);
    sim_free(s);
    tp_free(&p);
}

int main(void)
{
    RUN(busy_cycles_land_in_the_buckets);
    RUN(one_long_instruction_spreads_over_buckets);
    return test_summary("test_sim_timeline");
}
