# demo.sh - `atoll demo` (what `make demo` runs) on the first 40 images of
# the digits test set: every prediction of the simulated chip must equal
# PyTorch's (models/digits_cnn.json), the trace is written, bad options fail;
# then the whole demo as `make demo` runs it, the int8 runs and ResNet-50
# included (ResNet-50 in the plain pass only, see below), whose simulated
# figures must equal those README.md shows.
. test/cli/lib.inc
expect_ok demo_digits "$ATOLL" demo --images 40 --batch 8 --no-resnet --trace "$TMPD/trace.json"
expect_grep demo_predictions "predictions    equal to PyTorch's for 40/40 images" "$TMPD/out"
expect_grep demo_accuracy "accuracy       39/40 = 97.50% (PyTorch: 39/40 = 97.50%)" "$TMPD/out"
expect_grep demo_trace_line "trace          $TMPD/trace.json" "$TMPD/out"
expect_grep demo_trace_json "traceEvents" "$TMPD/trace.json"
# `make demo` itself: the whole held-out set (PyTorch's 98.89%), then
# ResNet-50 compiled and simulated timing-only; every simulated figure of
# both halves must be the one README.md shows (host times are left out)
# Under the sanitizer builds the demo runs without ResNet-50: its compiles
# took most of a minute of each sanitizer pass, other tests leave ResNet-50
# to the plain pass there too, and the plain pass checks its lines; the
# digits lines are checked in every pass.
noresnet=; case "$BUILD" in *san*) noresnet=--no-resnet;; esac
expect_ok demo_full "$ATOLL" demo --no-trace $noresnet
cp "$TMPD/out" "$TMPD/demo.out"
expect_grep demo_full_accuracy "accuracy       356/360 = 98.89% (PyTorch: 356/360 = 98.89%)" "$TMPD/demo.out"
expect_grep demo_full_predictions "equal to PyTorch's for 360/360 images" "$TMPD/demo.out"
if [ -z "$noresnet" ]; then
    expect_grep demo_resnet_ran "^ResNet-50 (models/full/resnet50.onnx.*timing only:" "$TMPD/demo.out"
    expect_grep demo_resnet_cycles "^  cycles/image   [1-9][0-9]*$" "$TMPD/demo.out"
fi
# the int8 halves: the digits CNN as accurate as fp32 and predicting the same, ResNet-50 timed
expect_grep demo_int8_accuracy "accuracy       356/360 = 98.89% (fp32: 356/360 = 98.89%)" "$TMPD/demo.out"
expect_grep demo_int8_agreement "equal to fp32's for 360/360 images" "$TMPD/demo.out"
[ -z "$noresnet" ] && expect_grep demo_int8_resnet "^ResNet-50, int8 .*timing only:" "$TMPD/demo.out"
host_lines='^ *(compile|trace|wall time) '
awk -v noresnet="$noresnet" '/^and prints:$/ { on = 1; next } /^\(Host times vary/ || noresnet && /^    ResNet-50/ { on = 0 }
    on && /^    [^ ]/ || on && /^      / { print substr($0, 5) }' README.md |
    grep -v -E "$host_lines" > "$TMPD/readme.sim"
grep -v -E "$host_lines" "$TMPD/demo.out" > "$TMPD/run.sim"
if [ -s "$TMPD/readme.sim" ] && diff -u "$TMPD/readme.sim" "$TMPD/run.sim" > "$TMPD/demo.diff"; then ok demo_readme_figures
else fail demo_readme_figures "README.md's make demo output differs from this run: $(head -c 900 "$TMPD/demo.diff")"; fi
# a batch that does not divide the image count (the last batch is padded)
expect_ok demo_partial_batch "$ATOLL" demo --images 13 --batch 5 --no-resnet --no-trace
expect_grep demo_partial_predictions "equal to PyTorch's for 13/13 images" "$TMPD/out"
expect_fail demo_bad_batch "'0' is not a positive count" "$ATOLL" demo --batch 0
expect_fail demo_bad_models "nowhere/digits_cnn.json" "$ATOLL" demo --models "$TMPD/nowhere" --no-resnet
expect_fail demo_bad_arg "unknown option '--fast'" "$ATOLL" demo --fast
cli_summary demo.sh
