# bench.sh - the benchmarks' own honesty (make check builds bench/ too):
# bench_sim measures host seconds on the simulating thread's CPU clock, so
# time the thread spends off the CPU (here a sleep inside every measured
# interval, --stall-ms) does not count.
. test/cli/lib.inc
B=$BUILD/bench
expect_ok bench_sim_quick "$B/bench_sim" --quick --stall-ms 500
for what in "timing-only: host CPU seconds" "full mode: host CPU seconds"; do
    s=$(sed -n "s/^$what *\([0-9.]*\).*/\1/p" "$TMPD/out")
    name=bench_sim_cpu_clock_$(echo "$what" | cut -d: -f1 | tr -c 'a-z\n' _)
    if [ -n "$s" ] && awk "BEGIN { exit !($s < 0.35) }"; then ok "$name"
    else fail "$name" "'$what' is '${s:-missing}' after a 0.5 s sleep in the interval (must not count): $(tail -4 "$TMPD/out")"; fi
done
expect_fail bench_sim_bad_arg "usage: bench_sim" "$B/bench_sim" --stall-ms x
cli_summary bench.sh
