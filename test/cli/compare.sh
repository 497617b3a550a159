# compare.sh - `atoll compile -o` and `atoll compare`: a compiled model agrees
# with the reference interpreter (fp32 thresholds, fp16 cosine), a model
# compiled with other (synthetic) weights diverges and the first diverging
# tensor is named with exit status 1, thresholds from the command line
# apply, and every usage error gets a message. The models compared with
# --all keep their activations in DRAM (--sram-activations never): on a
# chip of one cluster they would stay in its SRAM, which the host cannot
# read, and --all says so.
. test/cli/lib.inc
D=test/data
T=configs/tiny.ini
expect_ok compile_abm "$ATOLL" compile $D/synth.onnx -o "$TMPD/synth.abm" --chip $T --sram-activations never
expect_grep compile_summary "3 layers" "$TMPD/out"
expect_ok compare_same "$ATOLL" compare $D/synth.onnx "$TMPD/synth.abm" --input $D/synth_x.npy --chip $T --all
expect_grep compare_same_all "all 4 compared tensors within tolerance (1 outputs)" "$TMPD/out"
expect_grep compare_same_row "^y  *output  float32  1x4 .* yes" "$TMPD/out"
expect_grep compare_inter_row "^h  *inter  *float32  1x16 .* yes" "$TMPD/out"
expect_grep compare_relu_row "^r  *inter  *float32  1x8x4x4 .* yes" "$TMPD/out"
# the same graph compiled with synthetic weights: wrong everywhere
cp $D/synth.onnx "$TMPD/fake.onnx"
expect_ok compile_fake "$ATOLL" compile "$TMPD/fake.onnx" --synthetic-weights -o "$TMPD/fake.abm" --chip $T --sram-activations never
# in SRAM (the default on tiny) the intermediates are counted, not compared
expect_ok compile_sram "$ATOLL" compile $D/synth.onnx -o "$TMPD/synth_sram.abm" --chip $T
expect_ok compare_sram "$ATOLL" compare $D/synth.onnx "$TMPD/synth_sram.abm" --input $D/synth_x.npy --chip $T --all
expect_grep compare_sram_says "kept in LMEM or SRAM: compile with --keep-activations to list them all" "$TMPD/out"
expect_grep compare_sram_output_only "all 1 compared tensors within tolerance (1 outputs)" "$TMPD/out"
expect_fail compare_diverges "first diverging tensor: 'r' (intermediate); 1 of 1 outputs fail" \
    "$ATOLL" compare $D/synth.onnx "$TMPD/fake.abm" --input $D/synth_x.npy --chip $T --all
expect_fail compare_diverges_output "first diverging tensor: 'y' (output)" \
    "$ATOLL" compare $D/synth.onnx "$TMPD/fake.abm" --input $D/synth_x.npy --chip $T
# exact equality is more than fp32 on a different summation order gives
expect_fail compare_exact "outside tolerance" \
    "$ATOLL" compare $D/synth.onnx "$TMPD/synth.abm" --input $D/synth_x.npy --chip $T --rtol 0 --atol 0
# loose thresholds accept the fake model's output
expect_ok compare_loose "$ATOLL" compare $D/synth.onnx "$TMPD/fake.abm" --input $D/synth_x.npy --chip $T --rtol 1e9 --atol 1e9
# fp16: within cosine 0.999, not within fp32's rtol
expect_ok compile_f16 "$ATOLL" compile $D/synth.onnx -o "$TMPD/synth16.abm" --chip $T --dtype f16
expect_ok compare_f16 "$ATOLL" compare $D/synth.onnx "$TMPD/synth16.abm" --input $D/synth_x.npy --chip $T
expect_grep compare_f16_row "^y  *output  float16" "$TMPD/out"
expect_fail compare_f16_rtol "outside tolerance" \
    "$ATOLL" compare $D/synth.onnx "$TMPD/synth16.abm" --input $D/synth_x.npy --chip $T --rtol 1e-6 --atol 0
# intermediates whose storage a later layer reuses are read from runs
# stopped at the end of their layer (lenet5 on a1: three of them, one the
# output of a layer group, read at the end of the group: a member's output
# belongs to its group's layer; the output of its second AveragePool stays
# in LMEM inside a layer group and is not listed); compiled with --keep-activations nothing is reused or grouped and
# all are read after the run
expect_ok compile_lenet "$ATOLL" compile models/lenet5.onnx -o "$TMPD/lenet5.abm" --chip configs/a1.ini
expect_ok compare_lenet_all "$ATOLL" compare models/lenet5.onnx "$TMPD/lenet5.abm" --input models/lenet5.ref.npz --chip configs/a1.ini --all
expect_grep compare_lenet_stopped "8 intermediates in DRAM (3 read from runs stopped after their layer" "$TMPD/out"
expect_grep compare_lenet_note "read at cycle [0-9]* (end of layer [0-9]*)" "$TMPD/out"
expect_grep compare_lenet_all_ok "all 9 compared tensors within tolerance (1 outputs)" "$TMPD/out"
expect_ok compile_lenet_keep "$ATOLL" compile models/lenet5.onnx -o "$TMPD/lenet5k.abm" --chip $T --keep-activations
expect_ok compare_lenet_keep "$ATOLL" compare models/lenet5.onnx "$TMPD/lenet5k.abm" --input models/lenet5.ref.npz --chip $T --all
expect_grep compare_lenet_keep_none_stopped "9 intermediates in DRAM (0 read from runs stopped" "$TMPD/out"
expect_grep compare_lenet_keep_ok "all 10 compared tensors within tolerance (1 outputs)$" "$TMPD/out"
# a divergence inside a layer group (issue 11): digits_cnn in bf16 on a1
# forms one group (conv, conv, maxpool) and every tensor misses fp32's
# thresholds. Grouped, the first diverging tensor named is the group's
# output (its members' outputs stay in LMEM and are not listed); compiled
# with --keep-activations it is the first conv's own output.
G=models/digits_cnn.onnx
expect_ok compile_group_bf16 "$ATOLL" compile $G -o "$TMPD/dg.abm" --chip configs/a1.ini --dtype bf16 --groups
expect_grep compile_group_bf16_forms "^   0  Group(3) " "$TMPD/out"
expect_fail compare_group_boundary "first diverging tensor: '/features/features.6/MaxPool_output_0' (intermediate)" \
    "$ATOLL" compare $G "$TMPD/dg.abm" --input models/digits_cnn.ref.npz --chip configs/a1.ini --all --rtol 1e-6 --atol 0
grep -q '^/features/features.2/Relu_output_0 ' "$TMPD/out" && fail compare_group_member_unlisted "a member's output compared" ||
    ok compare_group_member_unlisted
expect_ok compile_group_keep "$ATOLL" compile $G -o "$TMPD/dk.abm" --chip configs/a1.ini --dtype bf16 --keep-activations
expect_fail compare_group_keep_member "first diverging tensor: '/features/features.2/Relu_output_0' (intermediate)" \
    "$ATOLL" compare $G "$TMPD/dk.abm" --input models/digits_cnn.ref.npz --chip configs/a1.ini --all --rtol 1e-6 --atol 0
# errors
expect_fail compare_no_input "no --input given" "$ATOLL" compare $D/synth.onnx "$TMPD/synth.abm"
expect_fail compare_no_abm "give MODEL.onnx and MODEL.abm" "$ATOLL" compare $D/synth.onnx --input $D/synth_x.npy
expect_fail compare_bad_cos "--min-cos 2 is out of range (0 .. 1)" "$ATOLL" compare $D/synth.onnx "$TMPD/synth.abm" --input $D/synth_x.npy --min-cos 2
expect_fail compare_bad_rtol "--rtol 'x' is not a finite number" "$ATOLL" compare $D/synth.onnx "$TMPD/synth.abm" --input $D/synth_x.npy --rtol x
expect_fail compare_missing_abm "nope.abm" "$ATOLL" compare $D/synth.onnx "$TMPD/nope.abm" --input $D/synth_x.npy --chip $T
expect_fail compare_wrong_chip "atoll compare: .*synth.abm" "$ATOLL" compare $D/synth.onnx "$TMPD/synth.abm" --input $D/synth_x.npy --chip configs/a1.ini
expect_fail compare_wrong_input "input 'x'" "$ATOLL" compare $D/synth.onnx "$TMPD/synth.abm" --input $D/ones23.npy --chip $T
expect_fail compile_bad_dtype "use fp32, fp16, bf16 or int8" "$ATOLL" compile $D/synth.onnx -o "$TMPD/x.abm" --chip $T --dtype i8
expect_fail compile_no_output "-o FILE is required" "$ATOLL" compile $D/synth.onnx --chip $T
cli_summary compare.sh
