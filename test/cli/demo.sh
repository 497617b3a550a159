# demo.sh - `atoll demo` (what `make demo` runs) on the first 40 images of
# the digits test set: every prediction of the simulated chip must equal
# PyTorch's (models/digits_cnn.json), the trace is written, bad options fail.
. test/cli/lib.inc
expect_ok demo_digits "$ATOLL" demo --images 40 --batch 8 --no-resnet --trace "$TMPD/trace.json"
expect_grep demo_predictions "predictions    equal to PyTorch's for 40/40 images" "$TMPD/out"
expect_grep demo_accuracy "accuracy       39/40 = 97.50% (PyTorch: 39/40 = 97.50%)" "$TMPD/out"
expect_grep demo_trace_line "trace          $TMPD/trace.json" "$TMPD/out"
expect_grep demo_trace_json "traceEvents" "$TMPD/trace.json"
# the whole held-out set: PyTorch's 98.89%
expect_ok demo_full_set "$ATOLL" demo --no-resnet --no-trace
expect_grep demo_full_accuracy "accuracy       356/360 = 98.89% (PyTorch: 356/360 = 98.89%)" "$TMPD/out"
expect_grep demo_full_predictions "equal to PyTorch's for 360/360 images" "$TMPD/out"
# a batch that does not divide the image count (the last batch is padded)
expect_ok demo_partial_batch "$ATOLL" demo --images 13 --batch 5 --no-resnet --no-trace
expect_grep demo_partial_predictions "equal to PyTorch's for 13/13 images" "$TMPD/out"
expect_fail demo_bad_batch "'0' is not a positive count" "$ATOLL" demo --batch 0
expect_fail demo_bad_models "nowhere/digits_cnn.json" "$ATOLL" demo --models "$TMPD/nowhere" --no-resnet
expect_fail demo_bad_arg "unknown option '--fast'" "$ATOLL" demo --fast
cli_summary demo.sh
