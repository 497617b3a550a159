#!/bin/sh
# run.sh BUILD BIN... - runs each test binary and each test/cli/*.sh script,
# sums their "N passed, N failed" lines into BUILD/results.txt, prints per-suite
# lines. A binary that dies (sanitizer report, signal) or prints no summary
# counts as one failure. CLI scripts get ATOLL=path-to-binary, BUILD and a
# scratch directory TMPD.
#
# The tests are independent, so TEST_JOBS of them (default: the number of
# CPUs) run at once, each into its own output file; the lines are still
# printed, and the log written, in the order of the arguments, each as soon
# as its test and all before it have finished. TEST_SCRIPTS replaces the
# glob of CLI scripts (test/cli/run_tests.sh runs this script on a few
# scripts of its own).
#
# Each test's CPU seconds (user+system of everything it ran, from the
# shell's `times`) and wall seconds go to BUILD/test-times.txt, slowest CPU
# first, under a line with the pass's own wall and summed CPU time, so the
# next session sees where CI's time goes (test/slowest.sh prints the top).
build=$1; shift
passed=0; failed=0
log=$build/test-log.txt
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
scripts=${TEST_SCRIPTS:-test/cli/*.sh}
root=$(cd "$(dirname "$0")/.." && pwd)

# --one BUILD ITEM: runs one test into BUILD/ITEM.out, its exit code into .rc
if [ "$build" = "--one" ]; then
    build=$1; t=$2
    start=$(date +%s.%N)
    case "$t" in
    *.sh)
        out=$build/$(basename "$t").out
        tmpd=$(mktemp -d)
        ATOLL=$build/atoll BUILD=$build TMPD=$tmpd sh "$t" > "$out" 2>&1; rc=$?
        rm -rf "$tmpd" ;;
    *)
        out=$build/$(echo "$t" | tr '/' '_').out
        ( cd "$root" && "$t" ) > "$out" 2>&1; rc=$? ;;
    esac
    # the second line of `times` is the CPU time of this shell's children
    # (run in this shell, not in a $(...) subshell, which has no children)
    times > "$out.times"
    cpu=$(sed -n 2p "$out.times" | awk '{ split($1, u, "m"); split($2, s, "m")
        printf "%.2f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
    rm -f "$out.times"
    wall=$(echo "$start $(date +%s.%N)" | awk '{ printf "%.2f", $2 - $1 }')
    echo "$cpu $wall" > "$out.time"
    echo $rc > "$out.rc.tmp" && mv "$out.rc.tmp" "$out.rc"
    exit 0
fi
: > "$log"
# The pass's compile cache (test/cli/cached_atoll): a compile that one CLI
# script ran is taken from here by the next that runs it alike. Empty at
# the start of each pass, removed at its end.
if ATOLL_CACHE=$(cd "$build" && pwd)/compile-cache; then
    rm -rf "$ATOLL_CACHE" && mkdir -p "$ATOLL_CACHE" && export ATOLL_CACHE
else ATOLL_CACHE=; fi
times_tmp=$build/test-times.txt.tmp
: > "$times_tmp"
pass_start=$(date +%s.%N)

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
out_of() { # the output file of test $1
    case "$1" in *.sh) echo "$build/$(basename "$1").out" ;; *) echo "$build/$(echo "$1" | tr '/' '_').out" ;; esac
}

items=$(for t in "$@"; do echo "$t"; done; for s in $scripts; do [ -f "$s" ] && echo "$s"; done)
for t in $items; do rm -f "$(out_of "$t").rc"; done
# Started longest first: the tests a times file lists, most CPU first, then
# the rest in the order given (a clean build has no times). With TEST_JOBS
# at once, a long test started last would run alone at the end of the pass.
# The times come from this build's last pass, else from the plain pass's
# (build/test-times.txt: make test runs it first), matched by the test's
# path below the build directory.
hints=
for h in "$build/test-times.txt" build/test-times.txt; do [ -f "$h" ] && { hints=$h; break; }; done
start_order() {
    if [ -z "$hints" ]; then printf '%s\n' $items; return; fi
    printf '%s\n' $items | awk -v b="$build/" 'function key(t) { if (index(t, b) == 1) t = substr(t, length(b) + 1); sub(/^.*\/test\//, "test/", t); return t }
        FNR == NR { if (FNR > 1) cpu[key($3)] = $1; next }
        { k = key($0); printf "%s %d %s\n", (k in cpu) ? cpu[k] : -1, FNR, $0 }' "$hints" - |
        sort -k1,1gr -k2,2n | cut -d' ' -f3-
}
start_order | xargs -P "$jobs" -n 1 sh "$root/test/run.sh" --one "$build" &
runner=$!
for t in $items; do
    out=$(out_of "$t")
    while [ ! -f "$out.rc" ] && kill -0 $runner 2> /dev/null; do sleep 0.2; done
    if [ ! -f "$out.rc" ]; then echo "$t: not run"; failed=$((failed + 1)); continue; fi
    cat "$out" >> "$log"
    tally "$t" "$out" "$(cat "$out.rc")"
    [ -f "$out.time" ] && echo "$(cat "$out.time") $t" >> "$times_tmp"
    rm -f "$out.rc" "$out.time"
done
wait $runner
if [ -n "$ATOLL_CACHE" ]; then
    [ -s "$ATOLL_CACHE/hits" ] && awk -v b="$build" '{ n++; s += $1 } END {
        printf "[%s] compile cache: %d compiles taken from it, %.1f CPU-s saved\n", b, n, s }' "$ATOLL_CACHE/hits"
    rm -rf "$ATOLL_CACHE"
fi
pass_wall=$(echo "$pass_start $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')
{ awk -v w="$pass_wall" -v j="$jobs" '{ c += $1 } END {
      printf "# cpu_s wall_s test; pass: %.1f CPU-s summed over %d tests, %s s wall, %d jobs\n", c, NR, w, j }' "$times_tmp"
  sort -k1,1nr "$times_tmp"; } > "$build/test-times.txt"
rm -f "$times_tmp"
echo "$passed $failed" > "$build/results.txt"
echo "[$build] $passed passed, $failed failed"
[ "$failed" -eq 0 ]
