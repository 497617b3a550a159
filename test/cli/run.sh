# run.sh - `atoll run` end to end: a model assembled and packed by
# test_host --write (inputs from test_run_gen) is described by `atoll inspect`, then run through host API,
# device and firmware on configs/tiny.ini; outputs must equal the plain-C
# reference. Every failure (fault, wrong chip, wrong dtype, no matching
# variant, missing files, bad options) gives its message and exit 1 or 2.
. test/cli/lib.inc
GEN=$BUILD/test/host/test_run_gen
CHIP=configs/tiny.ini
expect_ok models "$BUILD/test/host/test_host" --write "$TMPD"
expect_ok inputs "$GEN" --write "$TMPD"
expect_ok inspect "$ATOLL" inspect "$TMPD/relu.abm"
expect_grep inspect_names_net "relu_bias" "$TMPD/out"
expect_ok run_npz "$ATOLL" run "$TMPD/relu.abm" --chip $CHIP --input "$TMPD/x.npy" --output "$TMPD/out.npz" \
    --stats "$TMPD/s.json" --trace "$TMPD/t.json" --profile
expect_grep run_reports_variant "ran net 'relu_bias' variant 0 (batch 1)" "$TMPD/out"
expect_grep run_profile_table "vector" "$TMPD/out"
expect_grep run_profile_layers " id layer  *op  *bound  *est  *cycles  *MACs  *DRAM  *mat  *vec  *dma" "$TMPD/out"
expect_grep run_profile_without_info "compile the model with --layer-info" "$TMPD/out"
expect_ok output_matches_reference "$GEN" --compare "$TMPD/out.npz" "$TMPD/expect.npy"
expect_grep stats_json "cycles" "$TMPD/s.json"
expect_grep trace_json "traceEvents" "$TMPD/t.json"
expect_ok run_npz_input "$ATOLL" run "$TMPD/relu.abm" --chip $CHIP --input "$TMPD/in.npz" --output "$TMPD/out.npy"
expect_ok npy_output_matches "$GEN" --compare "$TMPD/out.npy" "$TMPD/expect.npy"
expect_ok dump_tensors "$ATOLL" run "$TMPD/relu.abm" --chip $CHIP --input "$TMPD/x.npy" --dump-tensors "$TMPD/all.npz"
expect_ok dump_has_output "$GEN" --extract "$TMPD/all.npz" y "$TMPD/y_dumped.npy"
expect_ok dumped_output_matches "$GEN" --compare "$TMPD/y_dumped.npy" "$TMPD/expect.npy"
expect_fail fault_reported "FAULT" "$ATOLL" run "$TMPD/faulty.abm" --chip $CHIP --net bad --input "$TMPD/x.npy"
expect_grep fault_names_instruction "core 0 engine vector instruction 0" "$TMPD/out"
expect_fail wrong_chip "compiled for another chip (fingerprint" "$ATOLL" run "$TMPD/otherchip.abm" --chip $CHIP --input "$TMPD/x.npy"
expect_fail wrong_dtype "is float32 but the model expects int8" "$ATOLL" run "$TMPD/relu.abm" --chip $CHIP --input "$TMPD/x_f32.npy"
expect_fail no_variant "no variant of net 'relu_bias'" "$ATOLL" run "$TMPD/relu.abm" --chip $CHIP --input "$TMPD/x_batch2.npy"
expect_fail unknown_net "has no net named 'nope'" "$ATOLL" run "$TMPD/relu.abm" --chip $CHIP --net nope --input "$TMPD/x.npy"
expect_fail missing_model "missing.abm" "$ATOLL" run "$TMPD/missing.abm" --chip $CHIP --input "$TMPD/x.npy"
expect_fail bad_chip "nonexistent.ini" "$ATOLL" run "$TMPD/relu.abm" --chip "$TMPD/nonexistent.ini" --input "$TMPD/x.npy"
expect_fail tiny_fw_heap "firmware heap" "$ATOLL" run "$TMPD/relu.abm" --chip $CHIP --input "$TMPD/x.npy" --fw-heap 20000
expect_fail max_cycles "fault 9 (MAX_CYCLES)" "$ATOLL" run "$TMPD/relu.abm" --chip $CHIP --input "$TMPD/x.npy" --max-cycles 100
expect_fail bad_max_cycles "--max-cycles 'ten' is not a whole number" "$ATOLL" run "$TMPD/relu.abm" --chip $CHIP --input "$TMPD/x.npy" --max-cycles ten
expect_fail chip_not_named "relu.abm does not name the chip it was compiled for; give --chip FILE" "$ATOLL" run "$TMPD/relu.abm" --input "$TMPD/x.npy"
"$ATOLL" run "$TMPD/relu.abm" --chip $CHIP > "$TMPD/out" 2>&1
if [ $? -eq 2 ] && grep -q -- "--input is required" "$TMPD/out"; then ok usage_exit_2; else fail usage_exit_2 "$(head -c 300 "$TMPD/out")"; fi
rm -f "$TMPD/none.npz"
expect_fail failed_run_writes_nothing "FAULT" "$ATOLL" run "$TMPD/faulty.abm" --chip $CHIP --net bad --input "$TMPD/x.npy" --output "$TMPD/none.npz"
if [ -e "$TMPD/none.npz" ]; then fail no_partial_output "none.npz exists"; else ok no_partial_output; fi
cli_summary run
