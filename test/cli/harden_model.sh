# harden_model.sh - issue 15, models: every crafted ONNX input of
# test/data/harden (made by test/data/gen_harden.py) ends in a clear error
# naming the tensor, node or field, fast, instead of a crash, a hang or a
# silent wrong result; limits of the importer and interpreter and their
# overrides (docs/conventions.md, "Input limits").
. test/cli/lib.inc
H=test/data/harden
TINY=configs/tiny.ini
A1=configs/a1.ini
# a guard: a case that used to spin for minutes fails here instead of hanging
T="timeout 60"
# a private /dev/full where we may make one (root): a regression that renames
# an output over a device then harms only this test's files, not the system's
if mknod "$TMPD/full" c 1 7 2> /dev/null; then FULL=$TMPD/full; else FULL=/dev/full; fi

# item 1: zero-size and 2^32 dimensions died of SIGFPE in compile
expect_fail compile_dim0 "tensor 'x' (shape 0) is empty: the backend compiles no empty inputs" $T "$ATOLL" compile $H/relu_dim0.onnx --chip $A1 -o "$TMPD/o.abm"
expect_fail compile_dim2p32 "tensor 'x' (shape 4294967296): dimension 0 is 4294967296" $T "$ATOLL" compile $H/relu_dim2p32.onnx --chip $A1 -o "$TMPD/o.abm"
expect_ok interp_dim0_runs "$ATOLL" interp $H/relu_dim0.onnx --input $H/x0.npy
expect_fail compile_empty "tensor 'x' (shape 2x0) is empty" "$ATOLL" compile $H/relu_empty.onnx --chip $TINY -o "$TMPD/o.abm"
# item 4: huge outputs are refused before any tile search (compile used to spin for minutes)
expect_fail compile_expand_2p33 "tensor 'y' (float32, shape 8388608x1024) takes 34359738368 bytes on the chip, more than the 1073741824 bytes of DRAM" $T "$ATOLL" compile $H/expand_2p33.onnx --chip $A1 -o "$TMPD/o.abm"
expect_fail compile_resize_1e6 "tensor 'y' (float32, shape 1x1x4000000x4000000)" $T "$ATOLL" compile $H/resize_1e6.onnx --chip $A1 -o "$TMPD/o.abm"
expect_fail compile_expand_2p29 "takes 2147483648 bytes on the chip, more than the 1073741824 bytes of DRAM of chip 'a1'" $T "$ATOLL" compile $H/expand_2p29.onnx --chip $A1 -o "$TMPD/o.abm"
if [ ! -e "$TMPD/o.abm" ]; then ok compile_refused_writes_nothing; else fail compile_refused_writes_nothing "an output was written"; fi

# item 5: external data must be a regular file; a FIFO used to block forever
cp test/data/extdata.onnx "$TMPD/"
mkfifo "$TMPD/extdata.bin"
expect_fail extdata_fifo_compile "TensorProto.external_data of 'w': $TMPD/extdata.bin: is a FIFO; give a regular file" $T "$ATOLL" compile "$TMPD/extdata.onnx" --chip $TINY -o "$TMPD/o.abm"
expect_fail extdata_fifo_interp "is a FIFO" $T "$ATOLL" interp "$TMPD/extdata.onnx" --input test/data/ones23.npy
rm "$TMPD/extdata.bin"; mkdir "$TMPD/extdata.bin"
expect_fail extdata_directory "extdata.bin: is a directory" "$ATOLL" interp "$TMPD/extdata.onnx" --input test/data/ones23.npy
rmdir "$TMPD/extdata.bin"
# item 14: the path is named once, not repeated
"$ATOLL" compile "$TMPD/extdata.onnx" --chip $TINY -o "$TMPD/o.abm" > "$TMPD/ext.out" 2>&1
if grep -q "extdata.onnx: .*extdata.onnx:" "$TMPD/ext.out"; then fail extdata_path_once "$(cat "$TMPD/ext.out")"; else ok extdata_path_once; fi

# item 8: invented weights must fit the chip; one tensor is at most ATOLL_MAX_TENSOR_BYTES
expect_fail synth_weights_fit_dram "synthetic weights for 'W' (67108864 bytes) would bring the invented weights to more than 16777216 bytes" "$ATOLL" compile $H/synth_big.onnx --chip $TINY --synthetic-weights -o "$TMPD/o.abm"
expect_fail interp_tensor_limit "tensor 'big' (float32 536870912) needs 2147483648 bytes, more than the limit of 1073741824 bytes for one tensor (raise with ATOLL_MAX_TENSOR_BYTES)" $T "$ATOLL" interp $H/constantofshape_2g.onnx --input $H/x14.npy
expect_fail tensor_limit_lowered "more than the limit of 8 bytes for one tensor" env ATOLL_MAX_TENSOR_BYTES=8 "$ATOLL" interp $H/relu14.onnx --input $H/x14.npy
expect_ok tensor_limit_raised env ATOLL_MAX_TENSOR_BYTES=2K "$ATOLL" interp $H/relu14.onnx --input $H/x14.npy
expect_fail limit_env_malformed "environment variable ATOLL_MAX_TENSOR_BYTES='lots' is not a positive size" env ATOLL_MAX_TENSOR_BYTES=lots "$ATOLL" interp $H/relu14.onnx --input $H/x14.npy

# item 10: contradictions and malformed attributes are refused, naming the node or field
expect_fail conv_kernel_shape "node 'conv' (Conv): kernel_shape\[0\] = 2 contradicts the weight's kernel size 3" "$ATOLL" interp $H/conv_kernel_mismatch.onnx --input $H/x1144.npy
expect_fail conv_kernel_shape_compile "kernel_shape\[0\] = 2 contradicts" "$ATOLL" compile $H/conv_kernel_mismatch.onnx --chip $TINY -o "$TMPD/o.abm"
expect_fail dup_inputs "graph input 'x' is listed twice with different types or shapes" "$ATOLL" interp $H/dup_inputs.onnx --input $H/x14.npy
expect_fail no_outputs "the graph has no outputs" "$ATOLL" interp $H/no_outputs.onnx --input $H/x14.npy
expect_fail attr_unknown_type "attribute 'odd' has unknown type 99" "$ATOLL" interp $H/attr_unknown_type.onnx --input $H/x14.npy
expect_fail attr_string_novalue "STRING attribute 'mode' has no value" "$ATOLL" interp $H/attr_string_novalue.onnx --input $H/x1122.npy

# item 11: compile must not overwrite its model or chip
cp $H/relu14.onnx "$TMPD/m.onnx"
expect_fail compile_over_model "is also the model: writing it would destroy an input" "$ATOLL" compile "$TMPD/m.onnx" --chip $TINY -o "$TMPD/m.onnx"
if cmp -s $H/relu14.onnx "$TMPD/m.onnx"; then ok compile_model_kept; else fail compile_model_kept "the model changed"; fi
expect_fail compile_over_model_other_name "is also the model" "$ATOLL" compile "$TMPD/m.onnx" --chip $TINY -o "$TMPD/../$(basename "$TMPD")/m.onnx"
# item 14: no summary when the .abm cannot be written; the reason is given
"$ATOLL" compile $H/relu14.onnx --chip $TINY -o "$FULL" > "$TMPD/full.out" 2> "$TMPD/full.err"; rc=$?
if [ $rc -eq 1 ] && grep -q "write error: No space left on device" "$TMPD/full.err" && ! grep -q "estimated cycles" "$TMPD/full.out"; then ok compile_write_error_no_summary
else fail compile_write_error_no_summary "rc $rc: $(cat "$TMPD/full.out" "$TMPD/full.err")"; fi
expect_fail compile_empty_output_name "the output file name is empty" "$ATOLL" compile $H/relu14.onnx --chip $TINY -o ''

# item 14: --input names an unknown input; an output name that is a path stays inside the .npz
expect_fail interp_unknown_input "the model has no input named 'nope' (its inputs: x)" "$ATOLL" interp $H/relu14.onnx --input nope=$H/x14.npy
expect_ok interp_path_output "$ATOLL" interp $H/path_output.onnx --input $H/x14.npy --output "$TMPD/p.npz"
if grep -qa '\.\./\.\./\.\./tmp/x' "$TMPD/p.npz" || ! grep -qa '\.\._\.\._\.\._tmp_x\.npy' "$TMPD/p.npz"; then
    fail npz_member_sanitised "member names: $(strings "$TMPD/p.npz" | grep npy)"
else ok npz_member_sanitised; fi
cli_summary harden_model
