# compile_splits.sh - conv/pool K splitting and W tiling on a 16 KiB-LMEM
# chip (configs/edge16k.ini) through the CLI.
# mobilenetv2_100 (224x224 input, full width) has convs that need both
# splits there; every conv and pool must lower. Its classifier Gemm
# (K = 1280) needs the matmul K split, which bk_lower_mm.c does not have
# yet: until it does, the compile may stop there and only there.
. test/cli/lib.inc
"$ATOLL" compile models/full/mobilenetv2_100.onnx --synthetic-weights --chip configs/edge16k.ini \
    -o "$TMPD/mb.abm" --estimate > "$TMPD/out" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
    ok mobilenetv2_100_edge16k
    expect_grep mobilenetv2_100_ksplit "Conv.* K[0-9]" "$TMPD/out"
    expect_grep mobilenetv2_100_wtiles "Conv.* W[0-9]" "$TMPD/out"
elif [ $rc -lt 128 ] && grep -q "(Gemm): K = 1280 is too deep" "$TMPD/out"; then
    ok mobilenetv2_100_edge16k_convs
else
    fail mobilenetv2_100_edge16k "exit $rc: $(head -c 600 "$TMPD/out")"
fi
cli_summary compile_splits
