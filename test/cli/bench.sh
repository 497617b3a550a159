# bench.sh - the benchmarks' own honesty (make check builds bench/ too):
# bench_sim measures host seconds on the simulating thread's CPU clock, so
# time the thread spends off the CPU (here a sleep inside every measured
# interval, --stall-ms) does not count. bench_models fails (exit 1) on a
# model that does not compile and on every way an output can escape its
# check: no reference of its name, a reference of another size or shape,
# values 1% off (test/data/bench/*.ref.npz, by gen_bench_refs.py, each with
# a copy of the digits CNN); the real digits CNN passes; and the bench_models
# table of docs/benchmarks.md gives what the benchmark prints now, as does
# bench_groups' row bands table for resnet20_cifar.
. test/cli/lib.inc
B=$BUILD/bench
expect_ok bench_sim_quick "$B/bench_sim" --quick --stall-ms 500
for what in "timing-only: host CPU seconds" "full mode: host CPU seconds"; do
    s=$(sed -n "s/^$what *\([0-9.]*\).*/\1/p" "$TMPD/out")
    name=bench_sim_cpu_clock_$(echo "$what" | cut -d: -f1 | tr -c 'a-z\n' _)
    if [ -n "$s" ] && awk "BEGIN { exit !($s < 0.35) }"; then ok "$name"
    else fail "$name" "'$what' is '${s:-missing}' after a 0.5 s sleep in the interval (must not count): $(tail -4 "$TMPD/out")"; fi
done
expect_fail bench_sim_bad_arg "usage: bench_sim" "$B/bench_sim" --stall-ms x
M=$TMPD/models
mkdir -p "$M"
for c in noref short shape wrong; do cp models/digits_cnn.onnx "$M/$c.onnx"; cp test/data/bench/$c.ref.npz "$M/"; done
cp models/digits_cnn.onnx models/digits_cnn.ref.npz "$M/"
cp test/data/unsupported.onnx "$M/fancy.onnx"; cp test/data/bench/fancy.ref.npz "$M/"
expect_ok bench_models_digits "$B/bench_models" --models "$M" digits_cnn
expect_grep bench_models_digits_row "^| digits_cnn | 1 | " "$TMPD/out"
expect_fail bench_models_no_reference "noref: output 'output': noref.ref.npz has no array of that name" "$B/bench_models" --models "$M" noref
expect_fail bench_models_size "short: output 'output': the reference (float32, 9 elements) does not match" "$B/bench_models" --models "$M" short
expect_fail bench_models_shape "shape: tensor 'output': shapes differ" "$B/bench_models" --models "$M" shape
expect_fail bench_models_values "wrong: output 'output' differs from PyTorch's: 9 of 10 elements outside" "$B/bench_models" --models "$M" wrong
expect_fail bench_models_compile "fancy: .*FancyOp" "$B/bench_models" --models "$M" fancy
expect_grep bench_models_failed_count "bench_models: 1 of 1 models failed" "$TMPD/out"
expect_fail bench_models_one_of_two "1 of 2 models failed" "$B/bench_models" --models "$M" digits_cnn wrong
expect_fail bench_models_missing "nope.ref.npz" "$B/bench_models" --models "$M" nope
# docs/benchmarks.md's bench_models table stays true: the small models'
# simulated columns (all but the host times) as bench_models prints them now
expect_ok bench_models_doc_rows "$B/bench_models" digits_cnn lenet5 encoder_block
for m in digits_cnn lenet5 encoder_block; do
    now=$(awk -F'|' -v m=" $m " '$2 == m {print $3 $5 $6 $7 $8 $9 $10 $12}' "$TMPD/out")
    doc=$(sed -n '/BEGIN generated:bench_models/,/END generated:bench_models/p' docs/benchmarks.md |
          awk -F'|' -v m=" $m " '$2 == m {print $3 $5 $6 $7 $8 $9 $10 $12}')
    if [ -n "$now" ] && [ "$now" = "$doc" ]; then ok "bench_models_doc_$m"
    else fail "bench_models_doc_$m" "docs/benchmarks.md has '$doc', bench_models prints '$now' (rerun make bench)"; fi
done
# bench_groups --bands: resnet20_cifar's row bands row, fewer cycles than
# never's, auto's the same as bands' (auto chooses them), and the same
# simulated columns as docs/benchmarks.md's table
# the sanitizer builds (BUILD=*san*) run bench_groups on lenet5's default
# tables: --bands compiles resnet20_cifar four times (18 CPU-s under ASan,
# about all of this script's time there; the same modes compile under the
# sanitizers in chan_bands.sh and sram_bands.sh); the plain pass runs it
full=1
case "$BUILD" in *san*) full=0;; esac
if [ $full = 0 ]; then
    expect_ok bench_groups_small "$B/bench_groups" --models lenet5 --no-doc
    expect_grep bench_groups_small_row "^| lenet5 | f32 | auto | [0-9]* | [0-9]* | " "$TMPD/out"
else
    expect_ok bench_groups_bands "$B/bench_groups" --bands --models resnet20_cifar --no-doc
    now=$(awk -F'|' '$2 == " resnet20_cifar " && $4 == " bands " {print $5 $7 $8 $9}' "$TMPD/out")
    doc=$(sed -n '/BEGIN generated:bench_groups_bands/,/END generated:bench_groups_bands/p' docs/benchmarks.md |
          awk -F'|' '$2 == " resnet20_cifar " && $4 == " bands " {print $5 $7 $8 $9}')
    if [ -n "$now" ] && [ "$now" = "$doc" ]; then ok bench_groups_bands_doc
    else fail bench_groups_bands_doc "docs/benchmarks.md has '$doc', bench_groups --bands prints '$now' (rerun it)"; fi
    never=$(awk -F'|' '$2 == " resnet20_cifar " && $4 == " never " {print $5}' "$TMPD/out")
    auto=$(awk -F'|' '$2 == " resnet20_cifar " && $4 == " auto " {print $5}' "$TMPD/out")
    bands=$(awk -F'|' '$2 == " resnet20_cifar " && $4 == " bands " {print $5}' "$TMPD/out")
    if [ -n "$never" ] && [ -n "$bands" ] && [ "$bands" -lt "$never" ]; then ok bench_groups_bands_faster
    else fail bench_groups_bands_faster "bands $bands cycles, never $never"; fi
    if [ -n "$auto" ] && [ "$auto" = "$bands" ]; then ok bench_groups_auto_is_bands
    else fail bench_groups_auto_is_bands "auto $auto cycles, bands $bands"; fi
fi
cli_summary bench.sh
