/* test_dram.c - the banked DRAM model's rules one at a time, on the
 * DDR4-3200 preset (configs/dram/ddr4-3200.ini): the address mappings,
 * unloaded latencies of a row hit, miss and conflict, the write-to-read
 * turnaround, tFAW, refresh, write draining in batches, the closed-page
 * policy, forwarding, queue limits and the HBM pseudo channels' own buses;
 * the scheduler's shortcut pick against the plain rule on random traces.
 * (The whole model against Ramulator2 is test/cli/dram.sh.) */
#include <stdlib.h>
#include "test/test.h"
#include "sim/dram.h"

static int load(AtlChip *c)
{
    AtlErr e = {{0}};
    if (cfg_load("configs/dram/ddr4-3200.ini", c, &e)) { printf("  %s\n", e.msg); return -1; }
    return 0;
}

/* The DDR4 preset's DRAM (c filled too); NULL if it cannot be built. */
static AtlDram *ddr4(AtlChip *c)
{
    AtlErr e = {{0}};
    if (load(c)) return NULL;
    AtlDram *d = dram_new(c, &e);
    if (!d) printf("  %s\n", e.msg);
    return d;
}

/* An address of DDR4 (RoBaRaCoCh, 64-byte accesses) from its fields. */
static uint64_t addr_of(uint32_t row, uint32_t bg, uint32_t bank, uint32_t col)
{
    return (((((uint64_t)row << 2 | bank) << 2 | bg) << 7 | col) << 6);
}

/* Queues one request of address a (its line a / 64) at cycle t. */
static int push(AtlDram *d, uint64_t a, int write, uint64_t t, uint32_t tag, DramDone *done)
{
    DramLoc l;
    dram_decode(d, a, &l);
    return dram_push(d, &l, a / 64, write, t, tag, done);
}

/* Steps channel 0 until a request completes. */
static DramDone serve(AtlDram *d)
{
    DramDone done;
    while (!dram_step(d, 0, &done)) {}
    return done;
}

static DramReplay replay(const AtlChip *c, const DramTraceReq *r, size_t n)
{
    AtlErr e = {{0}};
    DramReplay out;
    memset(&out, 0, sizeof out);
    AtlDram *d = dram_new(c, &e);
    if (!d) return out;
    dram_replay(d, r, n, &out);
    dram_free(d);
    return out;
}

TEST(mappings)
{
    AtlChip c;
    AtlErr e = {{0}};
    AtlDram *d = ddr4(&c);
    REQUIRE(d);
    DramLoc l;
    dram_decode(d, addr_of(1234, 3, 2, 100) + 17, &l);
    CHECK_EQ_INT(l.row, 1234); CHECK_EQ_INT(l.bg, 3); CHECK_EQ_INT(l.bank, 2); CHECK_EQ_INT(l.col, 100);
    CHECK_EQ_INT(l.ch, 0); CHECK_EQ_INT(l.rank, 0);
    dram_decode(d, (1ull << 33) + addr_of(5, 0, 0, 0), &l); /* bits beyond the device (8 GiB) wrap */
    CHECK_EQ_INT(l.row, 5);
    dram_free(d);
    /* ChRaBaRoCo: column, then row, then bank, bank group */
    REQUIRE(cfg_set(&c, "dram", "mapping", "ChRaBaRoCo", &e) == 0);
    d = dram_new(&c, &e);
    REQUIRE(d);
    dram_decode(d, ((((uint64_t)3 << 2 | 1) << 16 | 777) << 7 | 9) << 6, &l);
    CHECK_EQ_INT(l.col, 9); CHECK_EQ_INT(l.row, 777); CHECK_EQ_INT(l.bank, 1); CHECK_EQ_INT(l.bg, 3);
    dram_free(d);
    /* two channels, RoBaRaCoCh: consecutive accesses alternate */
    REQUIRE(cfg_set(&c, "dram", "mapping", "RoBaRaCoCh", &e) == 0);
    c.dram_channels = 2;
    d = dram_new(&c, &e);
    REQUIRE(d);
    dram_decode(d, 64, &l);
    CHECK_EQ_INT(l.ch, 1); CHECK_EQ_INT(l.col, 0);
    dram_decode(d, 128, &l);
    CHECK_EQ_INT(l.ch, 0); CHECK_EQ_INT(l.col, 1);
    int lo, bits;
    dram_channel_field(d, &lo, &bits);
    CHECK_EQ_INT(lo, 0); CHECK_EQ_INT(bits, 1);
    dram_free(d);
}

/* Alone, a read costs tRCD + CL + BL on a closed bank, CL + BL on its open
 * row, tRP more on another row (latency counts the arrival cycle too:
 * Ramulator2's 27 cycles for a DDR4 row hit). */
TEST(unloaded_latency)
{
    AtlChip c;
    AtlDram *d = ddr4(&c);
    REQUIRE(d);
    DramDone done;
    uint64_t t = 0, lat[3];
    uint64_t a[3] = {addr_of(10, 0, 0, 0), addr_of(10, 0, 0, 1), addr_of(11, 0, 0, 0)};
    for (int i = 0; i < 3; i++) {
        CHECK(push(d, a[i], 0, t, (uint32_t)i, &done) == 0);
        done = serve(d);
        CHECK_EQ_INT(done.tag, i);
        lat[i] = done.data_end + 1 - done.arrive;
        t = done.data_end + 100; /* long after: every constraint met */
    }
    CHECK_EQ_INT(lat[0], 22 + 22 + 4 + 1);
    CHECK_EQ_INT(lat[1], 22 + 4 + 1);
    CHECK_EQ_INT(lat[2], 22 + 22 + 22 + 4 + 1);
    DramStats st;
    dram_stats(d, &st);
    CHECK_EQ_INT(st.row_misses, 1); CHECK_EQ_INT(st.row_hits, 1); CHECK_EQ_INT(st.row_conflicts, 1);
    CHECK_EQ_INT(st.acts, 2); CHECK_EQ_INT(st.pres, 1);
    CHECK(dram_next(d, 0) == DRAM_NEVER);
    dram_free(d);
}

/* A read after a write waits CWL + BL + tWTR_S (other bank group: 24
 * cycles on DDR4-3200, Ramulator2's shortest write-to-read gap). */
TEST(write_to_read)
{
    AtlChip c;
    AtlDram *d = ddr4(&c);
    REQUIRE(d);
    DramDone done;
    push(d, addr_of(1, 0, 0, 0), 1, 0, 1, &done);
    done = serve(d);
    uint64_t wr_at = done.issue;
    CHECK_EQ_INT(done.write, 1);
    CHECK_EQ_INT(done.data_end, wr_at + 16 + 4);
    push(d, addr_of(1, 1, 0, 0), 0, wr_at + 1, 2, &done);
    done = serve(d);
    CHECK_EQ_INT(done.issue - wr_at, 16 + 4 + 4);
    dram_free(d);
}

/* The cycles of the first five activates for reads of five banks, four in
 * different bank groups and the fifth in the first's group. */
static void activate_times(const AtlChip *c, uint64_t acts[5])
{
    AtlErr e = {{0}};
    AtlDram *d = dram_new(c, &e);
    if (!d) return;
    DramDone done;
    for (uint32_t i = 0; i < 5; i++) push(d, addr_of(7, i % 4, i / 4, 0), 0, 0, i, &done);
    DramStats before, after;
    for (int n = 0; n < 5;) {
        uint64_t t = dram_next(d, 0);
        dram_stats(d, &before);
        dram_step(d, 0, &done);
        dram_stats(d, &after);
        if (after.acts > before.acts) acts[n++] = t;
    }
    dram_free(d);
}

/* Activates in one rank: tRRD_S apart, and the fifth no sooner than tFAW
 * after the first. */
TEST(four_activate_window)
{
    AtlChip c;
    REQUIRE(load(&c) == 0);
    uint64_t acts[5] = {0};
    activate_times(&c, acts);
    CHECK_EQ_INT(acts[0], 0);
    CHECK_EQ_INT(acts[1], 4);
    CHECK_EQ_INT(acts[3], 12);
    /* tFAW 34 (a read of the 4th request, which goes first, takes cycle 34) */
    CHECK_EQ_INT(acts[4], 35);
    /* without the window the fifth follows tRRD_S */
    c.dram_faw = 1;
    activate_times(&c, acts);
    CHECK_EQ_INT(acts[4], 16);
}

/* Refresh: a rank stops for tRFC every tREFI, 4.5% of the time on DDR4
 * (Ramulator2: 4.4-4.6%), and an idle channel catches up. */
TEST(refresh)
{
    AtlChip c;
    REQUIRE(load(&c) == 0);
    size_t n = 20000;
    DramTraceReq *r = calloc(n, sizeof *r);
    REQUIRE(r);
    for (size_t i = 0; i < n; i++) r[i].addr = i * 64;
    DramReplay a = replay(&c, r, n);
    CHECK_EQ_INT(a.st.refs, a.cycles / 12480);
    c.dram_refi = 0; /* no refresh: faster, no REF */
    DramReplay b = replay(&c, r, n);
    CHECK_EQ_INT(b.st.refs, 0);
    CHECK(b.cycles < a.cycles);
    double share = (double)a.st.refs * 560 / (double)a.cycles;
    CHECKF(share > 0.04 && share < 0.05, "refresh holds the rank %.3f of the time", share);
    free(r);
    /* idle: a read arriving after 10 intervals finds 10 refreshes done */
    c.dram_refi = 12480;
    AtlErr e = {{0}};
    AtlDram *d = dram_new(&c, &e);
    REQUIRE(d);
    DramDone done;
    push(d, 0, 0, 10 * 12480 + 5, 0, &done);
    done = serve(d);
    DramStats st;
    dram_stats(d, &st);
    CHECK_EQ_INT(st.refs, 10);
    CHECK(done.issue >= 10 * 12480 + 560); /* the last refresh still held the rank */
    dram_free(d);
}

/* Alternating reads and writes: writes wait until the queue is 80% full
 * and drain to 20%, about 20 at a time (Ramulator2: 614 turnarounds for
 * 12,288 writes). */
TEST(write_draining)
{
    AtlChip c;
    REQUIRE(load(&c) == 0);
    size_t n = 4000;
    DramTraceReq *r = calloc(n, sizeof *r);
    REQUIRE(r);
    for (size_t i = 0; i < n; i++) {
        r[i].write = (int)(i % 2);
        r[i].addr = (r[i].write ? 256ull << 20 : 0) + i / 2 * 64;
    }
    DramReplay a = replay(&c, r, n);
    double batch = 2000.0 / (double)a.st.r2w;
    CHECKF(batch > 18 && batch < 22, "writes drained %.1f at a time", batch);
    CHECK_EQ_INT(a.st.writes, 2000);
    CHECK_EQ_INT(a.st.reads, 2000);
    free(r);
}

/* Closed page: a row stays open only while queued requests want it. */
TEST(closed_page)
{
    AtlChip c;
    REQUIRE(load(&c) == 0);
    DramTraceReq r[5] = {{addr_of(3, 0, 0, 0), 0}, {addr_of(3, 0, 0, 1), 0}, {addr_of(3, 0, 0, 2), 0}};
    r[3].addr = addr_of(9, 0, 0, 0);
    DramReplay open = replay(&c, r, 4);
    CHECK_EQ_INT(open.st.row_hits, 2);
    CHECK_EQ_INT(open.st.row_conflicts, 1);
    AtlErr e = {{0}};
    REQUIRE(cfg_set(&c, "dram", "page_policy", "closed", &e) == 0);
    /* the fourth arrives after the others' accesses: its bank is closed by then */
    DramTraceReq s[4];
    memcpy(s, r, sizeof s);
    DramReplay closed = replay(&c, s, 3);
    CHECK_EQ_INT(closed.st.row_hits, 2);
    CHECK_EQ_INT(closed.st.row_misses, 1);
    CHECK_EQ_INT(closed.st.pres, 1); /* the last read's auto-precharge */
    DramReplay again = replay(&c, s, 4);
    CHECK_EQ_INT(again.st.row_conflicts, 0);
    CHECK_EQ_INT(again.st.row_misses, 2);
}

/* A full read queue refuses; a read of a queued write's line is answered at once. */
TEST(queues_and_forwarding)
{
    AtlChip c;
    REQUIRE(load(&c) == 0);
    c.dram_queue_depth = 4;
    AtlErr e = {{0}};
    AtlDram *d = dram_new(&c, &e);
    REQUIRE(d);
    DramDone done;
    for (int i = 0; i < 4; i++) {
        CHECK(dram_has_room(d, 0, 0));
        push(d, addr_of(2, 0, 0, (uint32_t)i), 0, (uint64_t)i, (uint32_t)i, &done);
    }
    CHECK(!dram_has_room(d, 0, 0));
    CHECK(dram_has_room(d, 0, 1));
    CHECK_EQ_INT(dram_queued(d, 0), 4);
    CHECK(push(d, addr_of(5, 1, 0, 0), 1, 4, 9, &done) == 0);
    CHECK(push(d, addr_of(5, 1, 0, 0), 0, 5, 10, &done) == 1);
    CHECK_EQ_INT(done.tag, 10);
    CHECK_EQ_INT(done.data_end, 6);
    int got = 0;
    while (dram_next(d, 0) != DRAM_NEVER) got += dram_step(d, 0, &done);
    CHECK_EQ_INT(got, 5);
    CHECK_EQ_INT(dram_queued(d, 0), 0);
    dram_free(d);
}

/* HBM pseudo channels: each rank has its own data bus, so two streams in
 * different pseudo channels move twice the bytes of one. */
TEST(own_bus_per_rank)
{
    AtlChip c;
    AtlErr e = {{0}};
    REQUIRE(cfg_load("configs/dram/hbm2.ini", &c, &e) == 0);
    size_t n = 4096;
    DramTraceReq *r = calloc(n, sizeof *r);
    REQUIRE(r);
    /* RoBaRaCoCh on HBM2: 32 accesses of a row, then the pseudo channel bit */
    for (size_t i = 0; i < n; i++) r[i].addr = i * 32;
    DramReplay own = replay(&c, r, n);
    REQUIRE(cfg_set(&c, "dram_device", "rank_bus", "shared", &e) == 0);
    DramReplay shared = replay(&c, r, n);
    CHECKF(shared.cycles >= 2 * n, "a shared bus moves one access per 2 clocks: %llu cycles", (unsigned long long)shared.cycles);
    CHECKF(own.cycles * 10 < shared.cycles * 7, "own buses %llu cycles, shared %llu", (unsigned long long)own.cycles,
           (unsigned long long)shared.cycles);
    REQUIRE(cfg_set(&c, "dram_device", "rank_bus", "own", &e) == 0);
    free(r);
    AtlDram *d = dram_new(&c, &e);
    REQUIRE(d);
    CHECK_NEAR(dram_peak_bytes_per_cycle(d), 32.0, 1e-12); /* 32 bytes per 2 clocks, two buses */
    dram_free(d);
}

/* The scheduler's pick (which stops scanning early) against the plain
 * rule that looks at every group, on random traces that mix row hits,
 * misses and conflicts, reads and writes (forwarding among them), under
 * every kind of device: DDR4 open and closed page, two ranks on a shared
 * bus, a short queue, the other mapping, LPDDR5's two-cycle activates and
 * HBM2's pseudo channels with their own buses. Every pick agrees, and the
 * queues' request groups stay in order. */
TEST(fast_pick_matches_plain_rule)
{
    static const struct { const char *preset, *sec, *key, *val; } cases[] = {
        {"ddr4-3200", NULL, NULL, NULL},
        {"ddr4-3200", "dram", "page_policy", "closed"},
        {"ddr4-3200", "dram_device", "ranks", "2"},
        {"ddr4-3200", "dram", "queue_depth", "8"},
        {"ddr4-3200", "dram", "mapping", "ChRaBaRoCo"},
        {"lpddr5-6400", NULL, NULL, NULL},
        {"hbm2", NULL, NULL, NULL},
    };
    size_t n = 3000;
    DramTraceReq *r = calloc(n, sizeof *r);
    REQUIRE(r);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        AtlChip c;
        AtlErr e = {{0}};
        char path[64];
        snprintf(path, sizeof path, "configs/dram/%s.ini", cases[k].preset);
        REQUIRE(cfg_load(path, &c, &e) == 0);
        if (cases[k].sec) REQUIRE(cfg_set(&c, cases[k].sec, cases[k].key, cases[k].val, &e) == 0);
        uint64_t x = 12345 + k;
        for (size_t i = 0; i < n; i++) { /* a few rows of every bank: hits and conflicts */
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            r[i].write = (x >> 60) < 6;
            r[i].addr = ((x >> 20) & 0x3ffull) << 6 | ((x >> 40) & 3ull) << 27 | ((x >> 45) & 1ull) << 16;
        }
        AtlDram *d = dram_new(&c, &e);
        REQUIRE(d);
        dram_check_picks(d, 1);
        DramReplay out;
        dram_replay(d, r, n, &out);
        uint64_t checks, fails;
        dram_check_result(d, &checks, &fails);
        dram_free(d);
        CHECKF(checks > n / 2 && fails == 0, "%s %s=%s: %llu of %llu picks disagree (or groups out of order)", cases[k].preset,
               cases[k].key ? cases[k].key : "-", cases[k].val ? cases[k].val : "-", (unsigned long long)fails,
               (unsigned long long)checks);
        CHECKF(out.st.row_hits && out.st.row_conflicts && out.st.forwarded, "%s: the trace mixes hits %llu, conflicts %llu, forwarded %llu",
               cases[k].preset, (unsigned long long)out.st.row_hits, (unsigned long long)out.st.row_conflicts,
               (unsigned long long)out.st.forwarded);
    }
    free(r);
}

int main(void)
{
    RUN(mappings);
    RUN(unloaded_latency);
    RUN(write_to_read);
    RUN(four_activate_window);
    RUN(refresh);
    RUN(write_draining);
    RUN(closed_page);
    RUN(queues_and_forwarding);
    RUN(own_bus_per_rank);
    RUN(fast_pick_matches_plain_rule);
    return test_summary("test_dram");
}
