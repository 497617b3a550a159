# onnx.sh - `atoll interp` and `atoll compile` on the models in test/data
# (made by test/data/gen_models.py): results against NumPy, and every error
# path (malformed file, unsupported op, bad --input-shape, bad inputs); the
# interpreter's conformance report equals docs/conformance.md.
. test/cli/lib.inc
D=test/data
expect_ok interp_npz "$ATOLL" interp $D/convbn.onnx --input $D/convbn_x.npy --output "$TMPD/y.npz"
expect_ok interp_npz_input "$ATOLL" interp $D/convbn.onnx --input $D/convbn_in.npz
expect_grep interp_npz_shape "y: float32\[2x5\]" "$TMPD/out"
expect_ok interp_print "$ATOLL" interp $D/convbn.onnx --input x=$D/convbn_x.npy
expect_grep interp_print_shape "y: float32\[2x5\]" "$TMPD/out"
expect_ok interp_passes "$ATOLL" interp $D/convbn.onnx --input $D/convbn_x.npy --passes --output "$TMPD/y2.npz"
expect_ok interp_external_data "$ATOLL" interp $D/extdata.onnx --input $D/ones23.npy
expect_grep external_values "\[1, 2, 3, 4, 5, 6\]" "$TMPD/out"
expect_ok compile_dump "$ATOLL" compile $D/convbn.onnx --dump-ir --input-shape x=2x3x8x8
expect_grep dump_fused "+fused(Relu)" "$TMPD/out"
expect_grep dump_bn_folded "conv1_bnfold_w" "$TMPD/out"
expect_grep dump_reshape_static "flat:float32\[2x256\](view)" "$TMPD/out"
expect_fail compile_needs_output "-o FILE is required" "$ATOLL" compile $D/convbn.onnx
expect_fail unsupported_op "node 'weird_node': op 'FancyOp' (opset 13) is not supported (not in the op table)" \
    "$ATOLL" interp $D/unsupported.onnx --input $D/ones23.npy
expect_fail unsupported_compile "weird_node" "$ATOLL" compile $D/unsupported.onnx --dump-ir
expect_fail truncated_model "truncated.onnx: byte 2: ModelProto" "$ATOLL" interp $D/truncated.onnx --input $D/ones23.npy
expect_fail not_a_model "not an ONNX model\|byte" "$ATOLL" compile $D/convbn_x.npy --dump-ir
expect_fail missing_model "convbn_nope.onnx" "$ATOLL" compile $D/convbn_nope.onnx --dump-ir
expect_fail bad_shape_syntax "expected NAME=DIMS" "$ATOLL" compile $D/convbn.onnx --dump-ir --input-shape 2x3x8x8
expect_fail bad_shape_dim "is not a dimension" "$ATOLL" compile $D/convbn.onnx --dump-ir --input-shape x=2xAx8x8
expect_fail bad_shape_name "'nope' is not a graph input (inputs: x)" "$ATOLL" compile $D/convbn.onnx --dump-ir --input-shape nope=1x3x8x8
expect_fail bad_shape_fixed "node 'conv1' (Conv): input has 4 channels but weight expects 3" "$ATOLL" compile $D/convbn.onnx --dump-ir --input-shape x=1x4x8x8
expect_grep bad_shape_fixed_why "input 'x' \[?x3x8x8\] -> \[1x4x8x8\]; the graph itself depends on the exported shape" "$TMPD/out"
expect_fail bad_shape_rank "has rank 4" "$ATOLL" compile $D/convbn.onnx --dump-ir --input-shape x=1x3x8
expect_fail bad_shape_conflict "node 'add_bad' (Add): shapes 2x3 and 4 cannot be broadcast" "$ATOLL" compile $D/badshape.onnx --dump-ir --input-shape x=2x3
expect_fail input_shape_mismatch "given shape 2x3, the model expects ?x3x8x8" "$ATOLL" interp $D/convbn.onnx --input $D/ones23.npy
expect_fail input_wrong_name "--input other=$D/ones23.npy: the model has no input named 'other' (its inputs: x)" "$ATOLL" interp $D/convbn.onnx --input other=$D/ones23.npy
expect_fail input_missing_file "nope.npy" "$ATOLL" interp $D/convbn.onnx --input $D/nope.npy
expect_fail no_input "no --input" "$ATOLL" interp $D/convbn.onnx
expect_fail bad_npy "bad magic" "$ATOLL" interp $D/convbn.onnx --input x=$D/convbn.onnx
expect_fail conformance_no_data "does not exist (install the libonnx-testdata package)" "$ATOLL" conformance /nonexistent/onnx
expect_ok conformance_filter "$ATOLL" conformance --filter test_relu
expect_grep conformance_table "TOTAL" "$TMPD/out"
# docs/conformance.md is this run's report below its header (make conformance)
expect_ok conformance_md "$ATOLL" conformance --markdown "$TMPD/c.md"
tail -n +4 docs/conformance.md > "$TMPD/doc.md"; tail -n +4 "$TMPD/c.md" > "$TMPD/run.md"
if diff -u "$TMPD/doc.md" "$TMPD/run.md" > "$TMPD/c.diff" 2>&1; then ok conformance_md_in_step
else fail conformance_md_in_step "docs/conformance.md differs from this run (make conformance): $(head -c 800 "$TMPD/c.diff")"; fi
cli_summary onnx
