/* rand64.h - the xorshift64 generator (shifts 13, 7, 17) of the cost
 * model's randomized tests (test_bk_flow.c, test_bk_share.c): each test
 * keeps its own state and seed, so its sequence of cases is its own.
 * Header only. */
#ifndef ATOLL_TEST_RAND64_H
#define ATOLL_TEST_RAND64_H
#include <stdint.h>

/* The next value of the state *s (never 0 unless the seed is). */
static inline uint64_t rand64_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A value in [0, n) from *s (n > 0). */
static inline int rand64_pick(uint64_t *s, int n) { return (int)(rand64_next(s) % (uint64_t)n); }

#endif
