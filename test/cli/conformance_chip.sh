# conformance_chip.sh - the ONNX backend tests on the simulated chip
# (`atoll conformance --chip configs/tiny.ini`, what `make conformance-chip`
# runs): every test whose ops compile passes (909 when this was written; a
# drop below that means tests that used to compile no longer do), and the
# markdown report is written and equals docs/conformance-chip.md below its
# header (regenerate with `make conformance-chip`). A test is unsupported
# only when refused for a documented chip limit (tools/chip_limits.c); any
# other compile error is a failure. The same suite on configs/a1.ini (16
# cores) and configs/edge16k.ini (16 KiB of LMEM: K splits, W tiles) must
# pass the same tests with no failures. Each test that ran on a chip counts
# as a test of the suite (count_cases), once per chip.
. test/cli/lib.inc
DATA=/usr/share/libonnx-testdata/data
MIN_PASSED=909
"$ATOLL" conformance $DATA --chip configs/tiny.ini --markdown "$TMPD/cc.md" > "$TMPD/cc.out" 2>&1; rc=$?
if [ $rc -eq 0 ]; then ok chip_conformance_runs; else fail chip_conformance_runs "exit $rc: $(grep '^FAIL' "$TMPD/cc.out" | head -5) $(tail -3 "$TMPD/cc.out")"; fi
set -- $(grep '^TOTAL' "$TMPD/cc.out")
count_cases chip_conformance_tiny "${2:-0}" "${3:-0}"
if [ "${2:-0}" -ge $MIN_PASSED ]; then ok chip_conformance_passed; else fail chip_conformance_passed "passed ${2:-none}, expected >= $MIN_PASSED"; fi
if [ "${3:-1}" -eq 0 ]; then ok chip_conformance_no_failures; else fail chip_conformance_no_failures "$(grep '^FAIL' "$TMPD/cc.out" | head -5)"; fi
expect_grep chip_conformance_md_title "# ONNX conformance on the simulated chip" "$TMPD/cc.md"
expect_grep chip_conformance_md_totals "Totals: ${2:-?} passed" "$TMPD/cc.md"
expect_grep chip_conformance_md_relu "| Relu | yes | [1-9]" "$TMPD/cc.md"
expect_grep chip_conformance_md_limits "| rank above 6 | tensors of rank above 6" "$TMPD/cc.md"
tail -n +4 docs/conformance-chip.md > "$TMPD/doc.md"; tail -n +4 "$TMPD/cc.md" > "$TMPD/run.md"
if diff -u "$TMPD/doc.md" "$TMPD/run.md" > "$TMPD/cc.diff" 2>&1; then ok chip_conformance_md_in_step
else fail chip_conformance_md_in_step "docs/conformance-chip.md differs from this run (make conformance-chip): $(head -c 800 "$TMPD/cc.diff")"; fi
for chip in a1 edge16k; do
    "$ATOLL" conformance $DATA --chip configs/$chip.ini > "$TMPD/cc_$chip.out" 2>&1; rc=$?
    if [ $rc -eq 0 ]; then ok chip_conformance_runs_$chip; else fail chip_conformance_runs_$chip "exit $rc: $(grep '^FAIL' "$TMPD/cc_$chip.out" | head -5)"; fi
    set -- $(grep '^TOTAL' "$TMPD/cc_$chip.out")
    count_cases chip_conformance_$chip "${2:-0}" "${3:-0}"
    if [ "${2:-0}" -ge $MIN_PASSED ] && [ "${3:-1}" -eq 0 ]; then ok chip_conformance_$chip
    else fail chip_conformance_$chip "passed ${2:-none} (>= $MIN_PASSED expected), failed ${3:-?}"; fi
done
cli_summary conformance_chip.sh
