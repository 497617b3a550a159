# quantize.sh - `atoll quantize` and `atoll compile --dtype int8`: every
# calibration method on the digits CNN (ranges table, cosine), the QDQ
# model compiled and compared with the interpreter on tiny and a1 (every
# int8 tensor exact), --fallback auto with its per-layer sensitivities, a
# PyTorch FX post-training-quantised model (models/quant/fx_cnn.q.onnx)
# compiled and exact on both chips, and bad input: no --calib, an unknown
# method, a missing file, an empty folder, --dtype int8 without data (no
# partial output file).
. test/cli/lib.inc
M=models
D=$M/digits_cnn.test.npz
for m in minmax percentile kl mse; do
    expect_ok quantize_$m "$ATOLL" quantize $M/digits_cnn.onnx --calib $D --max-samples 40 --method $m -o "$TMPD/d_$m.onnx" --table "$TMPD/d_$m.txt"
    expect_grep quantize_${m}_summary "4 layers in int8, 0 kept float; 7 tensors calibrated on 40 samples ($m); cosine to the float model 0.9" "$TMPD/out"
    expect_grep quantize_${m}_table "^# int8 ranges: $m calibration on 40 samples" "$TMPD/d_$m.txt"
done
expect_grep table_shared "parameters of /features/features.5/Relu_output_0" "$TMPD/d_minmax.txt"
expect_grep progress_on_stderr "^calibration ranges: 40/40 samples" "$TMPD/out"
# the QDQ model on the chip: every int8 tensor equal to the interpreter's
# (the input alone: the reference file's float output would be taken as
# the expected one, which a quantised model need not meet)
for c in tiny a1; do
    # (intermediates in DRAM, where --all can read them)
    expect_ok compile_qdq_$c "$ATOLL" compile "$TMPD/d_minmax.onnx" --chip configs/$c.ini -o "$TMPD/d_$c.abm" --sram-activations never
    expect_ok compare_qdq_$c "$ATOLL" compare "$TMPD/d_minmax.onnx" "$TMPD/d_$c.abm" --chip configs/$c.ini --input test/data/digits_x.npy --all
    n=$(awk '$3 == "int8" && $6 == "0.0000e+00"' "$TMPD/out" | wc -l); bad=$(awk '$3 == "int8" && $6 != "0.0000e+00"' "$TMPD/out" | wc -l)
    if [ "$n" -ge 7 ] && [ "$bad" -eq 0 ]; then ok int8_exact_$c; else fail int8_exact_$c "$n exact, $bad not: $(head -c 900 "$TMPD/out")"; fi
done
# one step, a dynamic batch kept: batch 8 from the batch-1 calibration
expect_ok compile_int8 "$ATOLL" compile $M/digits_cnn.onnx --dtype int8 --calib $D --batch 8 --chip configs/a1.ini -o "$TMPD/d8.abm" --qdq "$TMPD/d8.onnx"
expect_grep compile_int8_summary "7 layers on a1 (16 cores), batch 8, i8" "$TMPD/out"
expect_ok inspect_int8 "$ATOLL" inspect "$TMPD/d8.abm"
expect_grep inspect_int8_options "dtype int8 --float-dtype f32 --method minmax --fallback none" "$TMPD/out"
expect_ok interp_qdq_batch "$ATOLL" interp "$TMPD/d8.onnx" --input $M/digits_cnn.ref.npz
# fallback auto: a sensitivity per layer, then layers kept float until the target
expect_ok fallback_auto "$ATOLL" quantize $M/mobilenetv2_035.onnx --calib $M/mobilenetv2_035.ref.npz --fallback auto -o "$TMPD/m.onnx" --table "$TMPD/m.txt"
expect_grep fallback_sensitivity "^sensitivity 64/64: .* alone in int8: cosine 0\.9" "$TMPD/out"
expect_grep fallback_kept "^fallback: .* kept float: cosine" "$TMPD/out"
expect_grep fallback_reached "62 layers in int8, 2 kept float; .* cosine to the float model 0.99" "$TMPD/out"
expect_grep fallback_table "float (fallback)" "$TMPD/m.txt"
# quantised elsewhere: PyTorch FX post-training quantisation exported to ONNX
for c in tiny a1; do
    expect_ok fx_compile_$c "$ATOLL" compile $M/quant/fx_cnn.q.onnx --chip configs/$c.ini -o "$TMPD/fx_$c.abm"
    expect_ok fx_compare_$c "$ATOLL" compare $M/quant/fx_cnn.q.onnx "$TMPD/fx_$c.abm" --chip configs/$c.ini --input $M/quant/fx_cnn.ref.npz --all
    expect_grep fx_exact_$c "^output  *output  float32  1x10  *1.0000000   0.0000e+00" "$TMPD/out"
done
# bad input
expect_fail no_calib "no --calib data given" "$ATOLL" quantize $M/digits_cnn.onnx -o "$TMPD/x.onnx"
expect_fail bad_method "use minmax, percentile, kl or mse" "$ATOLL" quantize $M/digits_cnn.onnx --calib $D --method max -o "$TMPD/x.onnx"
expect_fail missing_calib "nope.npz: no such file or folder" "$ATOLL" quantize $M/digits_cnn.onnx --calib "$TMPD/nope.npz" -o "$TMPD/x.onnx"
mkdir -p "$TMPD/empty"
expect_fail empty_folder "holds no .npy or .npz file" "$ATOLL" quantize $M/digits_cnn.onnx --calib "$TMPD/empty" -o "$TMPD/x.onnx"
expect_fail wrong_shape "tensor 'input' has shape 1x1x32x32, the model's input is 1x1x8x8" "$ATOLL" quantize $M/digits_cnn.onnx --calib $M/lenet5.ref.npz -o "$TMPD/x.onnx"
expect_fail int8_needs_calib "--dtype int8 needs --calib" "$ATOLL" compile $M/digits_cnn.onnx --dtype int8 --chip configs/tiny.ini -o "$TMPD/x.abm"
expect_fail calib_needs_int8 "go with --dtype int8" "$ATOLL" compile $M/digits_cnn.onnx --calib $D --chip configs/tiny.ini -o "$TMPD/x.abm"
[ ! -e "$TMPD/x.onnx" ] && [ ! -e "$TMPD/x.abm" ] && ok no_partial_file || fail no_partial_file "an output exists after failures"
cli_summary quantize.sh
