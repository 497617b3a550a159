/* clock.h - a monotonic wall clock in seconds, for the phase timings that
 * `atoll compile --time` and the benchmarks print. Reads the OS clock; keeps
 * no state. */
#ifndef ATOLL_UTIL_CLOCK_H
#define ATOLL_UTIL_CLOCK_H

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
double atl_clock_s(void);
#endif
