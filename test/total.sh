#!/bin/sh
# total.sh [--readme FILE] RESULTS... - adds the "passed failed" pairs written
# by run.sh and prints the closing line CI reads. Exits non-zero on any
# failure or missing run. With --readme, the figure the README quotes for
# `make test` (its indented "N passed, 0 failed" line) is a floor: fewer
# tests than that means tests stopped running or stopped being counted
# (each ONNX conformance case and each model run counts as one). It is
# also kept close: more than a fifth above it, the figure is stale and the
# floor would miss a real loss, so that fails too (update the README).
readme=
if [ "$1" = "--readme" ]; then readme=$2; shift 2; fi
passed=0; failed=0
for r in "$@"; do
    if [ ! -f "$r" ]; then echo "missing $r"; failed=$((failed + 1)); continue; fi
    read p f < "$r"
    passed=$((passed + p)); failed=$((failed + f))
done
if [ -n "$readme" ]; then
    quoted=$(sed -n 's/^    \([0-9][0-9]*\) passed, 0 failed$/\1/p' "$readme" | head -n 1)
    if [ -z "$quoted" ]; then echo "$readme quotes no '    N passed, 0 failed' line"; failed=$((failed + 1))
    elif [ "$passed" -lt "$quoted" ]; then
        echo "$passed tests passed, fewer than the $quoted that $readme quotes: tests stopped running or being counted"
        failed=$((failed + 1))
    elif [ "$passed" -gt $((quoted + quoted / 5)) ]; then
        echo "$passed tests passed, more than a fifth above the $quoted that $readme quotes: update its figure (the floor)"
        failed=$((failed + 1))
    fi
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
