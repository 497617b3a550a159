# run_compiled.sh - the whole chain on a real network: models/digits_cnn.onnx
# compiled by `atoll compile` for configs/tiny.ini, described by `atoll
# inspect`, run through `atoll run` (host API, device, firmware relocation,
# simulator), output within 1e-4 of PyTorch's (models/digits_cnn.ref.npz).
. test/cli/lib.inc
CHIP=configs/tiny.ini
GEN=$BUILD/test/host/test_run_gen
expect_ok compile "$ATOLL" compile models/digits_cnn.onnx --chip $CHIP --batch 1 -o "$TMPD/digits.abm"
expect_ok inspect "$ATOLL" inspect "$TMPD/digits.abm"
expect_grep inspect_input "input .*fp32 *\[1,1,8,8\]" "$TMPD/out"
expect_ok reference_input "$GEN" --extract models/digits_cnn.ref.npz input "$TMPD/input.npy"
expect_ok reference_output "$GEN" --extract models/digits_cnn.ref.npz output "$TMPD/output.npy"
expect_ok run "$ATOLL" run "$TMPD/digits.abm" --chip $CHIP --input "$TMPD/input.npy" --output "$TMPD/out.npy" --profile
expect_grep run_profile "matrix" "$TMPD/out"
expect_ok matches_pytorch "$GEN" --close "$TMPD/out.npy" "$TMPD/output.npy" 1e-4
# A reference .npz holding the inputs and the expected outputs runs as is:
# arrays named like the net's outputs are skipped with a note.
expect_ok run_reference_npz "$ATOLL" run "$TMPD/digits.abm" --chip $CHIP --input models/digits_cnn.ref.npz --output "$TMPD/out2.npy"
expect_grep run_reference_note "array 'output' is an output of net" "$TMPD/out"
expect_ok reference_npz_matches "$GEN" --close "$TMPD/out2.npy" "$TMPD/output.npy" 1e-4
# --timing-only: the simulator's timing mode through the same host API and
# firmware gives the cycles and per-layer profile of the full run
expect_ok run_timing_only "$ATOLL" run "$TMPD/digits.abm" --chip $CHIP --input "$TMPD/input.npy" --profile --timing-only
grep -E '^(profile|  [0-9]+ )' "$TMPD/out" > "$TMPD/timing.txt"
"$ATOLL" run "$TMPD/digits.abm" --chip $CHIP --input "$TMPD/input.npy" --profile 2>&1 | grep -E '^(profile|  [0-9]+ )' > "$TMPD/full.txt"
if [ -s "$TMPD/full.txt" ] && cmp -s "$TMPD/full.txt" "$TMPD/timing.txt"; then ok timing_only_same_cycles
else fail timing_only_same_cycles "$(diff "$TMPD/full.txt" "$TMPD/timing.txt" | head -c 600)"; fi
cli_summary run_compiled
