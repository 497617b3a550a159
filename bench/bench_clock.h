/* bench_clock.h - the clocks the benchmarks measure with (header only).
 *
 * A host speed (simulated instructions per second, MAC/s) is measured on
 * the CPU clock of the thread that does the work: on a shared machine the
 * wall clock also counts the time the thread waited for a core, so a
 * loaded host would report a slower simulator than the code is (bench_sim
 * printed 2.2 M instructions/s on the wall clock where the thread's CPU
 * clock gave 5.3-5.6 M). Wall time stays available for what a user waits
 * for (compile time next to its CPU time). */
#ifndef ATOLL_BENCH_CLOCK_H
#define ATOLL_BENCH_CLOCK_H
#include <time.h>

/* CPU seconds consumed by the calling thread. */
static inline double bench_thread_cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Wall-clock seconds (monotonic). */
static inline double bench_wall_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}
#endif
