/* test_plots.c - the Pareto front of `atoll report` (tools/plots.c): the
 * points no other beats on both cost (lower) and throughput (higher),
 * checked against a brute-force definition on hand-made and random sets,
 * with ties (equal cost: only the faster; equal points: the first), a
 * single point, and none; and the SVG marks exactly the front's points. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test/test.h"
#include "tools/plots.h"

/* 1 when no point is at most as costly and at least as fast with one of
 * the two strictly better, nor an equal point earlier in the list. */
static int dominated(const PlotPoint *p, int n, int i)
{
    for (int j = 0; j < n; j++) {
        if (j == i) continue;
        int no_worse = p[j].x <= p[i].x && p[j].y >= p[i].y;
        int better = p[j].x < p[i].x || p[j].y > p[i].y;
        if (no_worse && (better || j < i)) return 1;
    }
    return 0;
}

static void check_front(const PlotPoint *p, int n)
{
    int front[64];
    int count = plot_pareto_front(p, n, front), want = 0;
    for (int i = 0; i < n; i++) {
        int on = !dominated(p, n, i);
        want += on;
        CHECKF(front[i] == on, "point %d (%g, %g): front %d, expected %d", i, p[i].x, p[i].y, front[i], on);
    }
    CHECK_EQ_INT(count, want);
}

TEST(hand_made_front)
{
    /* cost, throughput: (1,1) (2,3) (3,2) (4,5) (5,5) (2,3) again */
    PlotPoint p[] = {{1, 1, "a"}, {2, 3, "b"}, {3, 2, "c"}, {4, 5, "d"}, {5, 5, "e"}, {2, 3, "f"}};
    int front[6];
    CHECK_EQ_INT(plot_pareto_front(p, 6, front), 3);
    int want[6] = {1, 1, 0, 1, 0, 0};
    for (int i = 0; i < 6; i++) CHECKF(front[i] == want[i], "point %s", p[i].label);
    check_front(p, 6);
}

TEST(equal_cost_keeps_only_the_faster)
{
    PlotPoint p[] = {{2, 1, "slow"}, {2, 4, "fast"}, {1, 0.5, "cheap"}};
    int front[3];
    CHECK_EQ_INT(plot_pareto_front(p, 3, front), 2);
    CHECK(!front[0] && front[1] && front[2]);
}

TEST(single_and_empty)
{
    PlotPoint one = {3, 7, "one"};
    int front[1] = {0};
    CHECK_EQ_INT(plot_pareto_front(&one, 1, front), 1);
    CHECK_EQ_INT(front[0], 1);
    CHECK_EQ_INT(plot_pareto_front(NULL, 0, front), 0);
}

TEST(random_sets_match_the_definition)
{
    uint32_t s = 12345;
    for (int round = 0; round < 200; round++) {
        PlotPoint p[40];
        int n = 1 + round % 40;
        for (int i = 0; i < n; i++) {
            s = s * 1664525u + 1013904223u;
            p[i].x = (double)(s >> 28);           /* few distinct values: many ties */
            s = s * 1664525u + 1013904223u;
            p[i].y = (double)(s >> 27);
            p[i].label = "r";
        }
        check_front(p, n);
    }
}

/* Occurrences of needle in hay. */
static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *q = hay; (q = strstr(q, needle)); q += strlen(needle)) n++;
    return n;
}

TEST(svg_draws_the_front_in_red)
{
    PlotPoint p[] = {{1, 1, "pt-a"}, {2, 3, "pt-b"}, {3, 2, "pt-c"}};
    StrBuf b = {0};
    plot_pareto(&b, "pf", "a title", "area", "images/s", p, 3);
    char *svg = sbuf_take(&b);
    REQUIRE(svg != NULL);
    CHECK_STR_CONTAINS(svg, "a title");
    CHECK_STR_CONTAINS(svg, "Pareto front");
    /* every point once, with its tooltip */
    CHECK_EQ_INT(count(svg, "pt-a"), 1);
    CHECK_EQ_INT(count(svg, "pt-b"), 1);
    CHECK_EQ_INT(count(svg, "pt-c"), 1);
    /* the front (a, b) as larger red points, c grey */
    CHECK_STR_CONTAINS(svg, "r=\"5.0\" fill=\"#d62728\" fill-opacity=\"0.85\" stroke=\"#222\" stroke-width=\"0.5\"><title>pt-a</title>");
    CHECK_STR_CONTAINS(svg, "r=\"5.0\" fill=\"#d62728\" fill-opacity=\"0.85\" stroke=\"#222\" stroke-width=\"0.5\"><title>pt-b</title>");
    CHECK_STR_CONTAINS(svg, "r=\"3.5\" fill=\"#c8c8c8\" fill-opacity=\"0.85\" stroke=\"#222\" stroke-width=\"0.5\"><title>pt-c</title>");
    free(svg);
}

int main(void)
{
    RUN(hand_made_front);
    RUN(equal_cost_keeps_only_the_faster);
    RUN(single_and_empty);
    RUN(random_sets_match_the_definition);
    RUN(svg_draws_the_front_in_red);
    return test_summary("test_plots");
}
