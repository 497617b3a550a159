# conformance_chip_frozen.sh - graph inputs that only set a shape or a
# static parameter (Reduce axes, Reshape shape, Unsqueeze axes, Slice
# starts/ends, Split split, Expand shape) are frozen to the test's values by
# `atoll conformance --chip`, so these ONNX tests compile and pass on the
# simulated chip instead of being refused for their int64 graph inputs.
. test/cli/lib.inc
DATA=/usr/share/libonnx-testdata/data
for t in test_reduce_sum_keepdims_random test_reduce_sum_do_not_keepdims_example test_reshape_negative_dim \
         test_unsqueeze_two_axes test_squeeze_negative_axes test_slice_neg_steps test_split_variable_parts_2d \
         test_expand_shape_model2; do
    "$ATOLL" conformance $DATA --chip configs/tiny.ini --filter $t > "$TMPD/f.out" 2>&1; rc=$?
    set -- $(grep '^TOTAL' "$TMPD/f.out")
    if [ $rc -eq 0 ] && [ "${2:-0}" -ge 1 ] && [ "${3:-1}" -eq 0 ] && [ "${4:-1}" -eq 0 ]; then ok "frozen_$t"
    else fail "frozen_$t" "exit $rc, TOTAL ${2:-?} passed ${3:-?} failed ${4:-?} unsupported: $(grep -i 'unsupported\|FAIL' "$TMPD/f.out" | head -3)"; fi
done
cli_summary conformance_chip_frozen.sh
