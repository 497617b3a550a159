#!/bin/sh
# run.sh BUILD BIN... - runs each test binary and each test/cli/*.sh script,
# sums their "N passed, N failed" lines into BUILD/results.txt, prints per-suite
# lines. A binary that dies (sanitizer report, signal) or prints no summary
# counts as one failure. CLI scripts get ATOLL=path-to-binary, BUILD and a
# scratch directory TMPD.
build=$1; shift
passed=0; failed=0
log=$build/test-log.txt
: > "$log"
tally() { # $1 suite name, $2 output file, $3 exit code
    line=$(grep -E '^[^ ]*: [0-9]+ passed, [0-9]+ failed$' "$2" | tail -n 1)
    if [ -z "$line" ]; then
        echo "$1: no summary (exit $3)"; sed -n '1,60p' "$2"; failed=$((failed + 1)); return
    fi
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\1/')
    f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\2/')
    if [ "$3" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$f" -ne 0 ]; then grep -E 'FAIL|not ok|ERROR|Sanitizer|runtime error' "$2" | head -n 40; fi
    echo "$line"
}
for t in "$@"; do
    out=$build/$(echo "$t" | tr '/' '_').out
    ( cd "$(dirname "$0")/.." && "$t" ) > "$out" 2>&1; rc=$?
    cat "$out" >> "$log"
    tally "$t" "$out" $rc
done
for s in test/cli/*.sh; do
    [ -f "$s" ] || continue
    out=$build/$(basename "$s").out
    tmpd=$(mktemp -d)
    ATOLL=$build/atoll BUILD=$build TMPD=$tmpd sh "$s" > "$out" 2>&1; rc=$?
    rm -rf "$tmpd"
    cat "$out" >> "$log"
    tally "$s" "$out" $rc
done
echo "$passed $failed" > "$build/results.txt"
echo "[$build] $passed passed, $failed failed"
[ "$failed" -eq 0 ]
