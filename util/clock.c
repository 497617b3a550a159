/* clock.c - see clock.h. */
#include <time.h>
#include "util/clock.h"

double atl_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
