# run_tests.sh - test/run.sh, which runs one pass of the suite: it runs
# TEST_JOBS tests at once yet prints their lines in the order given, sums
# the summaries into BUILD/results.txt, and counts a test that dies without
# a summary as one failure and a non-zero exit under "0 failed" as one.
# The tests here are small scripts of its own (TEST_SCRIPTS), so the real
# suite does not run again.
. test/cli/lib.inc
B=$TMPD/build
mkdir -p "$B" "$TMPD/t"
# slow waits (10 s at most) for the mark that fast leaves: it passes only
# when the two run at the same time; fast finishes first, yet slow's line
# comes first
cat > "$TMPD/t/slow" <<EOF
#!/bin/sh
i=0
while [ ! -f "$TMPD/mark" ] && [ \$i -lt 50 ]; do sleep 0.2; i=\$((i + 1)); done
[ -f "$TMPD/mark" ] && echo "slow: 2 passed, 0 failed" || echo "slow: 0 passed, 1 failed"
EOF
printf '#!/bin/sh\ntouch "%s/mark"\necho "fast: 3 passed, 0 failed"\n' "$TMPD" > "$TMPD/t/fast"
printf '#!/bin/sh\necho "half a line"\nkill -SEGV $$\n' > "$TMPD/t/dies"
printf '#!/bin/sh\necho "liar: 4 passed, 0 failed"\nexit 3\n' > "$TMPD/t/liar"
chmod +x "$TMPD/t/slow" "$TMPD/t/fast" "$TMPD/t/dies" "$TMPD/t/liar"
printf '. test/cli/lib.inc\nok one\ncli_summary script.sh\n' > "$TMPD/t/script.sh"

TEST_JOBS=2 TEST_SCRIPTS="$TMPD/t/*.sh" sh test/run.sh "$B" "$TMPD/t/slow" "$TMPD/t/fast" > "$TMPD/pass" 2>&1
expect_grep run_parallel "^slow: 2 passed, 0 failed$" "$TMPD/pass"
if [ "$(grep 'passed, ' "$TMPD/pass" | sed 's/[: ].*//' | tr '\n' ' ')" = "slow fast script.sh [$B] " ]; then ok run_order
else fail run_order "lines out of order: $(cat "$TMPD/pass")"; fi
expect_grep run_total "^\[$B\] 6 passed, 0 failed$" "$TMPD/pass"
expect_grep run_results "^6 0$" "$B/results.txt"
expect_grep run_log "^fast: 3 passed" "$B/test-log.txt"

# test-times.txt: a test that burns about 0.3 CPU-s (a shell loop in a
# child process) is listed first (most CPU) with at least 0.1 CPU-s, under
# the pass's line; slowest.sh shows it
cat > "$TMPD/t/burn" <<'EOF2'
#!/bin/sh
sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done'
echo "burn: 1 passed, 0 failed"
EOF2
chmod +x "$TMPD/t/burn"
TB=$TMPD/timed; mkdir -p "$TB"
TEST_JOBS=1 TEST_SCRIPTS="$TMPD/t/script.sh" sh test/run.sh "$TB" "$TMPD/t/fast" "$TMPD/t/burn" > "$TMPD/pass" 2>&1
expect_grep run_times_pass "^# cpu_s wall_s test; pass: [0-9.]* CPU-s summed over 3 tests, [0-9.]* s wall, 1 jobs$" "$TB/test-times.txt"
if sed -n 2p "$TB/test-times.txt" | awk -v t="$TMPD/t/burn" '$3 == t && $1 >= 0.1 && $2 >= $1 - 0.05 { f = 1 } END { exit !f }'; then ok run_times_cpu
else fail run_times_cpu "burn is not the first line with >= 0.1 CPU-s: $(cat "$TB/test-times.txt")"; fi
if [ "$(wc -l < "$TB/test-times.txt")" -eq 4 ]; then ok run_times_all; else fail run_times_all "not 3 tests: $(cat "$TB/test-times.txt")"; fi
sh test/slowest.sh -n 1 "$TB" "$TMPD/nowhere" > "$TMPD/slow" 2>&1
expect_grep slowest_pass "^\[$TB\] [0-9.]* CPU-s summed over 3 tests" "$TMPD/slow"
if [ "$(grep -c "$TMPD/t/" "$TMPD/slow")" -eq 1 ] && grep -q "^ *[0-9.]* *[0-9.]*  $TMPD/t/burn$" "$TMPD/slow"; then ok slowest_top
else fail slowest_top "not just burn: $(cat "$TMPD/slow")"; fi
expect_grep slowest_missing "^\[$TMPD/nowhere\] no test-times.txt" "$TMPD/slow"
# start order: with the times of a pass before, the test with the most CPU
# starts first (one job at a time), one without a time last; the lines are
# still printed in the order given
for n in light heavy new; do
    printf '#!/bin/sh\necho %s >> "%s/started"\necho "%s: 1 passed, 0 failed"\n' $n "$TMPD" $n > "$TMPD/t/$n"
    chmod +x "$TMPD/t/$n"
done
TO=$TMPD/ordered; mkdir -p "$TO"
printf '# cpu_s wall_s test; pass: 6.0 CPU-s summed over 2 tests, 6.0 s wall, 1 jobs\n5.00 5.00 %s\n1.00 1.00 %s\n' \
    "$TMPD/t/heavy" "$TMPD/t/light" > "$TO/test-times.txt"
TEST_JOBS=1 TEST_SCRIPTS="$TMPD/none/*.sh" sh test/run.sh "$TO" "$TMPD/t/new" "$TMPD/t/light" "$TMPD/t/heavy" > "$TMPD/pass" 2>&1
if [ "$(tr '\n' ' ' < "$TMPD/started")" = "heavy light new " ]; then ok run_longest_first
else fail run_longest_first "started: $(cat "$TMPD/started")"; fi
if [ "$(grep 'passed, ' "$TMPD/pass" | sed 's/[: ].*//' | tr '\n' ' ')" = "new light heavy [$TO] " ]; then
    ok run_longest_first_printed_in_order
else fail run_longest_first_printed_in_order "$(cat "$TMPD/pass")"; fi

rm -f "$TMPD/mark"
expect_fail run_failures "8 passed, 2 failed" env TEST_JOBS=2 TEST_SCRIPTS="$TMPD/t/*.sh" sh test/run.sh "$B" "$TMPD/t/dies" "$TMPD/t/liar" "$TMPD/t/fast"
expect_grep run_no_summary "dies: no summary (exit 139)" "$TMPD/out"
expect_grep run_bad_exit "^8 2$" "$B/results.txt"
cli_summary run_tests.sh
