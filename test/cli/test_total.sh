# test_total.sh - test/total.sh, which prints the closing line of `make
# test`: it adds the passes' counts, fails on any failure or missing pass,
# and holds the README's quoted figure as a floor kept within a fifth.
. test/cli/lib.inc
printf 'intro\n\n    1000 passed, 0 failed\n' > "$TMPD/readme"
echo "600 0" > "$TMPD/a"; echo "500 0" > "$TMPD/b"; echo "500 2" > "$TMPD/c"
expect_ok total_adds sh test/total.sh "$TMPD/a" "$TMPD/b"
expect_grep total_line "^1100 passed, 0 failed$" "$TMPD/out"
expect_fail total_failures "^1100 passed, 2 failed$" sh test/total.sh "$TMPD/a" "$TMPD/c"
expect_fail total_missing "missing $TMPD/none" sh test/total.sh "$TMPD/a" "$TMPD/none"
expect_ok total_readme_within sh test/total.sh --readme "$TMPD/readme" "$TMPD/a" "$TMPD/b"
expect_fail total_readme_floor "fewer than the 1000 that" sh test/total.sh --readme "$TMPD/readme" "$TMPD/a"
echo "700 0" > "$TMPD/d"
expect_fail total_readme_stale "more than a fifth above the 1000" sh test/total.sh --readme "$TMPD/readme" "$TMPD/a" "$TMPD/d"
printf 'no figure\n' > "$TMPD/bare"
expect_fail total_readme_none "quotes no" sh test/total.sh --readme "$TMPD/bare" "$TMPD/a"
cli_summary test_total.sh
