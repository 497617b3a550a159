# compile_splits.sh - conv/pool K splitting and W tiling, and the matmul K
# split, on a 16 KiB-LMEM chip (configs/edge16k.ini) through the CLI.
# mobilenetv2_100 (224x224 input, full width) has convs that need both conv
# splits there and a classifier Gemm (K = 1280) that needs the matmul K
# split; the whole model must compile.
. test/cli/lib.inc
"$ATOLL" compile models/full/mobilenetv2_100.onnx --synthetic-weights --chip configs/edge16k.ini \
    -o "$TMPD/mb.abm" --estimate > "$TMPD/out" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
    ok mobilenetv2_100_edge16k
    expect_grep mobilenetv2_100_ksplit "Conv.* K[0-9]" "$TMPD/out"
    expect_grep mobilenetv2_100_wtiles "Conv.* W[0-9]" "$TMPD/out"
    expect_grep mobilenetv2_100_gemm_ksplit "Gemm.* K[0-9]" "$TMPD/out"
    [ -s "$TMPD/mb.abm" ] && ok mobilenetv2_100_abm_written || fail mobilenetv2_100_abm_written "no .abm"
else
    fail mobilenetv2_100_edge16k "exit $rc: $(head -c 600 "$TMPD/out")"
fi
cli_summary compile_splits
