#!/bin/sh
# total.sh RESULTS... - adds the "passed failed" pairs written by run.sh and
# prints the closing line CI reads. Exits non-zero on any failure or missing run.
passed=0; failed=0
for r in "$@"; do
    if [ ! -f "$r" ]; then echo "missing $r"; failed=$((failed + 1)); continue; fi
    read p f < "$r"
    passed=$((passed + p)); failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
