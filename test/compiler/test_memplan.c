/* test_memplan.c - global address assignment: valid plans, reuse, views,
 * alignment, errors and determinism. */
#include <stdlib.h>
#include "test/test.h"
#include "compiler/alloc/memplan.h"

static MemBuffer buf(uint64_t size, int first, int last)
{
    return (MemBuffer){.size = size, .align = 64, .first = first, .last = last, .alias_of = -1};
}

TEST(chain_reuses_memory)
{
    /* a -> b -> c -> d: each tensor lives from its producer to its consumer. */
    MemBuffer b[4] = {buf(1000, 0, 1), buf(3000, 1, 2), buf(1000, 2, 3), buf(3000, 3, 4)};
    MemPlanResult r;
    AtlErr e;
    REQUIRE(memplan_assign(b, 4, &r, &e) == 0);
    CHECK(memplan_verify(b, 4, &e) == 0);
    CHECK_EQ_INT(r.sum_of_buffers, 8000);
    /* Two live at once at most: 1024 (aligned 1000) + 3000. */
    CHECK(r.footprint <= 4032);
    CHECK_EQ_INT(r.by_strategy[MEMPLAN_NO_REUSE], 1024 + 3008 + 1024 + 3000);
}

TEST(disjoint_lifetimes_share_offset_zero)
{
    MemBuffer b[3] = {buf(500, 0, 0), buf(700, 1, 1), buf(600, 2, 2)};
    MemPlanResult r;
    AtlErr e;
    REQUIRE(memplan_assign(b, 3, &r, &e) == 0);
    CHECK_EQ_INT(r.footprint, 700);
    CHECK(b[0].offset == 0 && b[1].offset == 0 && b[2].offset == 0);
}

TEST(views_share_parent_storage)
{
    MemBuffer b[3] = {buf(4096, 0, 1), buf(1024, 1, 3), buf(4096, 2, 2)};
    b[1].alias_of = 0; /* a slice of buffer 0, used until step 3 */
    b[1].alias_offset = 2048;
    MemPlanResult r;
    AtlErr e;
    REQUIRE(memplan_assign(b, 3, &r, &e) == 0);
    CHECK_EQ_INT(b[1].offset, b[0].offset + 2048);
    /* Buffer 0's storage must stay reserved until step 3, so buffer 2 cannot reuse it. */
    CHECK(b[2].offset >= b[0].offset + 4096 || b[2].offset + 4096 <= b[0].offset);
    CHECK(memplan_verify(b, 3, &e) == 0);
    CHECK_EQ_INT(r.sum_of_buffers, 8192);
}

TEST(random_plans_are_valid_and_no_worse_than_no_reuse)
{
    srand(12345);
    for (int trial = 0; trial < 200; trial++) {
        int n = 1 + rand() % 60;
        MemBuffer *b = calloc(n, sizeof *b);
        for (int i = 0; i < n; i++) {
            int f = rand() % 40, len = rand() % 8;
            b[i] = buf(1 + (uint64_t)(rand() % 100000), f, f + len);
            b[i].align = (uint64_t)1 << (rand() % 8);
            if (i > 0 && rand() % 5 == 0) {
                int parent = rand() % i;
                if (b[parent].alias_of < 0 && b[parent].size > 16) {
                    b[i].alias_of = parent;
                    b[i].alias_offset = (uint64_t)(rand() % (int)(b[parent].size / 2));
                    b[i].size = b[parent].size - b[i].alias_offset;
                }
            }
        }
        MemPlanResult r;
        AtlErr e;
        REQUIRE(memplan_assign(b, n, &r, &e) == 0);
        CHECKF(memplan_verify(b, n, &e) == 0, "trial %d: %s", trial, e.msg);
        CHECK(r.footprint <= r.by_strategy[MEMPLAN_NO_REUSE]);
        for (int s = 0; s < MEMPLAN_NUM_STRATEGIES; s++) CHECK(r.footprint <= r.by_strategy[s]);
        free(b);
    }
}

TEST(same_input_same_plan)
{
    MemBuffer a[6], b[6];
    for (int i = 0; i < 6; i++) a[i] = buf((uint64_t)(i % 3 + 1) * 1000, i / 2, i / 2 + 2);
    memcpy(b, a, sizeof a);
    MemPlanResult ra, rb;
    AtlErr e;
    REQUIRE(memplan_assign(a, 6, &ra, &e) == 0);
    REQUIRE(memplan_assign(b, 6, &rb, &e) == 0);
    for (int i = 0; i < 6; i++) CHECK_EQ_INT(a[i].offset, b[i].offset);
    CHECK_EQ_INT(ra.winner, rb.winner);
}

TEST(bad_input_is_named)
{
    MemPlanResult r;
    AtlErr e;
    MemBuffer b[2] = {buf(10, 3, 1), buf(10, 0, 1)};
    CHECK(memplan_assign(b, 2, &r, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "buffer 0");
    b[0] = buf(10, 0, 1);
    b[1].align = 3;
    CHECK(memplan_assign(b, 2, &r, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "power of two");
    b[1] = buf(10, 0, 1);
    b[0].alias_of = 1;
    b[1].alias_of = 0;
    CHECK(memplan_assign(b, 2, &r, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "cycle");
    b[0] = buf(10, 0, 1);
    b[1] = buf(20, 0, 1);
    b[1].alias_of = 0;
    CHECK(memplan_assign(b, 2, &r, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "outside buffer 0");
}

TEST(verify_catches_overlap)
{
    MemBuffer b[2] = {buf(100, 0, 2), buf(100, 1, 3)};
    b[0].offset = 0;
    b[1].offset = 64;
    AtlErr e;
    CHECK(memplan_verify(b, 2, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "overlap");
}

/* x [0,2] dies where y [2,4] is written in place over it; z [1,2] lives
 * beside both. With the pair, y takes x's offset and the peak is x + z;
 * without it, x + z + y. A pair at different offsets that overlap, or an
 * overwrite naming no other buffer, is refused. */
TEST(in_place_pair_shares_its_partner_offset)
{
    MemBuffer b[3] = {buf(4096, 0, 2), buf(1024, 1, 2), buf(4096, 2, 4)};
    MemPlanResult r;
    AtlErr e;
    REQUIRE(memplan_assign(b, 3, &r, &e) == 0);
    CHECK_EQ_INT((int)r.footprint, 4096 + 1024 + 4096);
    b[2].overwrite = 1;
    REQUIRE(memplan_assign(b, 3, &r, &e) == 0);
    CHECK_EQ_INT((int)r.footprint, 4096 + 1024);
    CHECK(b[2].offset == b[0].offset);
    CHECK(memplan_verify(b, 3, &e) == 0);
    for (int s = 0; s < MEMPLAN_NO_REUSE; s++) CHECK_EQ_INT((int)r.by_strategy[s], 4096 + 1024);
    b[2].offset = b[0].offset + 64;
    CHECK(memplan_verify(b, 3, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "overlap");
    b[2].overwrite = 3;
    CHECK(memplan_assign(b, 3, &r, &e) == -1);
    CHECK_STR_CONTAINS(e.msg, "buffer 2 overwrites buffer 2");
    /* a subset keeps the pair when both are in it, drops it otherwise */
    MemBuffer sub[2];
    b[2].overwrite = 1;
    int both[2] = {0, 2}, one[2] = {1, 2};
    memplan_subset(b, both, 2, sub);
    CHECK_EQ_INT(sub[1].overwrite, 1);
    memplan_subset(b, one, 2, sub);
    CHECK_EQ_INT(sub[1].overwrite, 0);
}

int main(void)
{
    RUN(chain_reuses_memory);
    RUN(disjoint_lifetimes_share_offset_zero);
    RUN(views_share_parent_storage);
    RUN(random_plans_are_valid_and_no_worse_than_no_reuse);
    RUN(same_input_same_plan);
    RUN(bad_input_is_named);
    RUN(verify_catches_overlap);
    RUN(in_place_pair_shares_its_partner_offset);
    return test_summary("test_memplan");
}
