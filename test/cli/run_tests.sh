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

rm -f "$TMPD/mark"
expect_fail run_failures "8 passed, 2 failed" env TEST_JOBS=2 TEST_SCRIPTS="$TMPD/t/*.sh" sh test/run.sh "$B" "$TMPD/t/dies" "$TMPD/t/liar" "$TMPD/t/fast"
expect_grep run_no_summary "dies: no summary (exit 139)" "$TMPD/out"
expect_grep run_bad_exit "^8 2$" "$B/results.txt"
cli_summary run_tests.sh
