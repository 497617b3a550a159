# conformance_chip.sh - the ONNX backend tests on the simulated chip
# (`atoll conformance --chip configs/tiny.ini`, what `make conformance-chip`
# runs): at least as many pass as when test/cli/conformance_chip.known was
# written (197 after LayerNormalization, ReduceMin, Resize), every failure is a known one, and the markdown report is written.
. test/cli/lib.inc
DATA=/usr/share/libonnx-testdata/data
MIN_PASSED=197
"$ATOLL" conformance $DATA --chip configs/tiny.ini --markdown "$TMPD/cc.md" > "$TMPD/cc.out" 2>&1; rc=$?
if [ $rc -le 1 ]; then ok chip_conformance_runs; else fail chip_conformance_runs "exit $rc: $(tail -5 "$TMPD/cc.out")"; fi
set -- $(grep '^TOTAL' "$TMPD/cc.out")
if [ "${2:-0}" -ge $MIN_PASSED ]; then ok chip_conformance_passed; else fail chip_conformance_passed "passed ${2:-none}, expected >= $MIN_PASSED"; fi
unknown=$(grep '^FAIL ' "$TMPD/cc.out" | sed 's/^FAIL \([^:]*\):.*/\1/' | while read -r t; do
    grep -qx "$t" test/cli/conformance_chip.known || echo "$t"; done)
if [ -z "$unknown" ]; then ok chip_conformance_known_failures; else fail chip_conformance_known_failures "new failures: $unknown"; fi
expect_grep chip_conformance_md_title "# ONNX conformance on the simulated chip" "$TMPD/cc.md"
expect_grep chip_conformance_md_totals "Totals: ${2:-?} passed" "$TMPD/cc.md"
expect_grep chip_conformance_md_relu "| Relu | yes | [1-9]" "$TMPD/cc.md"
cli_summary conformance_chip.sh
