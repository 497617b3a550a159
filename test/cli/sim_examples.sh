# sim_examples.sh - examples/*.s are exactly what examples/gen.sh writes, and
# (once `atoll sim` exists) they run on a1: gemm1/gemm16/conv pass their
# .expect checks, gemm16 takes fewer cycles than gemm1, race.s is caught.
. test/cli/lib.inc
sh examples/gen.sh "$TMPD/ex" > "$TMPD/gen.log" 2>&1 || fail generator "$(cat "$TMPD/gen.log")"
for f in gemm1 gemm16 conv race; do
    if cmp -s "$TMPD/ex/$f.s" "examples/$f.s"; then ok "generated_$f"; else fail "generated_$f" "examples/$f.s differs from examples/gen.sh output"; fi
done
if "$ATOLL" sim --help > /dev/null 2>&1; then
    A1=configs/a1.ini
    expect_ok gemm1_runs "$ATOLL" sim --chip $A1 examples/gemm1.s --stats "$TMPD/g1.json"
    expect_grep gemm1_expect "expect C_ref: pass" "$TMPD/out"
    expect_ok gemm16_runs "$ATOLL" sim --chip $A1 examples/gemm16.s --stats "$TMPD/g16.json"
    expect_grep gemm16_expect "expect C_ref: pass" "$TMPD/out"
    c1=$(sed -n 's/^  "cycles": \([0-9]*\),$/\1/p' "$TMPD/g1.json")
    c16=$(sed -n 's/^  "cycles": \([0-9]*\),$/\1/p' "$TMPD/g16.json")
    if [ -n "$c1" ] && [ -n "$c16" ] && [ "$c16" -lt "$c1" ]; then ok gemm16_faster; else fail gemm16_faster "gemm16 $c16 cycles vs gemm1 $c1"; fi
    expect_ok conv_runs "$ATOLL" sim --chip $A1 examples/conv.s
    expect_grep conv_expect "expect Y_ref: pass" "$TMPD/out"
    expect_fail race_caught "data race" "$ATOLL" sim --chip $A1 examples/race.s
    expect_grep race_names_both "core 0 dma instruction #0" "$TMPD/out"
fi
cli_summary sim_examples
