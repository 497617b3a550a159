#!/bin/sh
# slowest.sh [-n N] BUILD... - prints, for each pass's build directory, the
# line run.sh wrote with the pass's wall and summed CPU time, then its N
# (default 15) tests with the most CPU seconds, from BUILD/test-times.txt.
# `make test` ends with it so each CI log shows where the time went.
n=15
if [ "$1" = "-n" ]; then n=$2; shift 2; fi
for b in "$@"; do
    f=$b/test-times.txt
    if [ ! -f "$f" ]; then echo "[$b] no test-times.txt"; continue; fi
    echo "[$b] $(head -n 1 "$f" | sed 's/^# cpu_s wall_s test; pass: //')"
    echo "  cpu_s  wall_s  test (the $n with the most CPU time)"
    sed -n "2,$((n + 1))p" "$f" | awk '{ printf "%7.1f %7.1f  %s\n", $1, $2, $3 }'
done
