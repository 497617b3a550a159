# synth.sh - `atoll compile --synthetic-weights`: test/data/synth.onnx and the
# full-size ResNet-50 graph are copied without their external data file; the
# import fails naming tensor and file unless the option is given.
. test/cli/lib.inc
cp test/data/synth.onnx "$TMPD/synth.onnx"
expect_fail synth_missing_file "external_data of 'conv.w': cannot open '$TMPD/synth.bin': no such file" \
    "$ATOLL" compile "$TMPD/synth.onnx" --dump-ir
expect_grep synth_missing_hint "compile with --synthetic-weights" "$TMPD/out"
expect_ok synth_dump "$ATOLL" compile "$TMPD/synth.onnx" --dump-ir --synthetic-weights
expect_grep synth_note "note: 9 initializers (9536 bytes) have synthetic values" "$TMPD/out"
expect_grep synth_graph "MatMul" "$TMPD/out"
cp models/full/resnet50.onnx "$TMPD/resnet50.onnx"
expect_fail resnet50_missing "'conv1.weight': cannot open '$TMPD/resnet50.onnx.data'" \
    "$ATOLL" compile "$TMPD/resnet50.onnx" --dump-ir
expect_ok resnet50_synth "$ATOLL" compile "$TMPD/resnet50.onnx" --dump-ir --synthetic-weights
expect_grep resnet50_note "note: 267 initializers (102440608 bytes)" "$TMPD/out"
expect_grep resnet50_output "output %output:float32\[1x1000\]" "$TMPD/out"
# synthetic weights are stored raw unless --zlevel is given (deflating
# invented numbers only slows the compile)
expect_ok synth_compile "$ATOLL" compile "$TMPD/synth.onnx" --synthetic-weights --chip tiny -o "$TMPD/s.abm"
expect_grep synth_stored_raw_note "(stored raw; --zlevel N deflates them)" "$TMPD/out"
expect_ok synth_inspect "$ATOLL" inspect "$TMPD/s.abm" --weights
if grep -q " zlib " "$TMPD/out"; then fail synth_nothing_deflated "$(grep zlib "$TMPD/out" | head -3)"; else ok synth_nothing_deflated; fi
expect_ok synth_compile_z6 "$ATOLL" compile "$TMPD/synth.onnx" --synthetic-weights --chip tiny -o "$TMPD/s6.abm" --zlevel 6
grep -q "stored raw" "$TMPD/out" && fail synth_z6_no_raw_note "$(cat "$TMPD/out")" || ok synth_z6_no_raw_note
expect_ok synth_inspect_z6 "$ATOLL" inspect "$TMPD/s6.abm" --weights
expect_grep synth_z6_deflated " zlib " "$TMPD/out"
cli_summary synth.sh
