# gather.sh - an embedding lookup (Gather whose indices are a graph input,
# test/data/gather_rt.onnx made by test/data/gen_gather.py) through the
# whole chain: compiled with dma.gather, run through the host API and the
# firmware; an in-range run (with a negative index) matches NumPy, an
# out-of-range index is a simulator fault naming the instruction and the
# index, and `atoll run` exits non-zero.
. test/cli/lib.inc
CHIP=configs/tiny.ini
D=test/data
GEN=$BUILD/test/host/test_run_gen
expect_ok gather_compile "$ATOLL" compile $D/gather_rt.onnx --chip $CHIP -o "$TMPD/g.abm"
expect_ok gather_inspect "$ATOLL" inspect "$TMPD/g.abm"
expect_grep gather_inspect_idx "idx .*int32" "$TMPD/out"
expect_ok gather_estimate "$ATOLL" compile $D/gather_rt.onnx --chip $CHIP -o "$TMPD/g2.abm" --estimate
expect_grep gather_estimate_layer "gathers" "$TMPD/out"
# the cost model prices a gather's source rows and its index-table read:
# its estimate for the lookup layer is within 15% of the simulated span
# (both in the run's profile table, the estimate recorded by --layer-info)
for chip in configs/tiny.ini configs/a1.ini; do
    "$ATOLL" compile $D/gather_rt.onnx --chip $chip -o "$TMPD/ge.abm" --layer-info >"$TMPD/est" 2>&1
    "$ATOLL" run "$TMPD/ge.abm" --chip $chip --input $D/gather_rt_in.npz --output "$TMPD/ye.npy" --profile >"$TMPD/prof" 2>&1
    est=$(awk '$2 == "lookup" { print $5 }' "$TMPD/prof")
    sim=$(awk '$2 == "lookup" { print $6 }' "$TMPD/prof")
    if [ -n "$est" ] && [ -n "$sim" ] && awk -v a="$est" -v b="$sim" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.15 * b) }'
    then ok "gather_estimate_vs_sim $(basename $chip) ($est vs $sim)"
    else fail "gather_estimate_vs_sim $(basename $chip)" "estimate '$est', simulated '$sim'"; fi
done
expect_ok gather_run "$ATOLL" run "$TMPD/g.abm" --chip $CHIP --input $D/gather_rt_in.npz --output "$TMPD/y.npy"
expect_ok gather_matches_numpy "$GEN" --close "$TMPD/y.npy" $D/gather_rt_y.npy 0
expect_fail gather_bad_index "dma.gather: index 7 (entry 1 of idx) is outside \[-5, 5)" \
    "$ATOLL" run "$TMPD/g.abm" --chip $CHIP --input $D/gather_rt_bad.npz --output "$TMPD/bad.npy"
cli_summary gather.sh
