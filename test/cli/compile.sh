# compile.sh - `atoll compile` to .abm: summary, --estimate, --batch, --dtype, --time, errors
. test/cli/lib.inc
M=models
expect_ok compile_tiny "$ATOLL" compile $M/digits_cnn.onnx --chip configs/tiny.ini -o "$TMPD/d.abm" --group none
expect_grep summary_layers "5 layers on tiny (1 cores), batch 1, f32" "$TMPD/out"
expect_grep summary_cycles "estimated cycles : [0-9]" "$TMPD/out"
expect_grep summary_memplan "activations      : [0-9]* bytes peak (liveness packed) vs [0-9]* bytes" "$TMPD/out"
expect_ok inspect_output "$ATOLL" inspect "$TMPD/d.abm"
H=$(sha256sum $M/digits_cnn.onnx | cut -c1-64)
expect_grep source_hash "source:   $H" "$TMPD/out"
expect_grep inspect_io "input  input            fp32  \[1,1,8,8\] nchw" "$TMPD/out"
expect_ok compile_estimate "$ATOLL" compile $M/resnet20_cifar.onnx --chip configs/a1.ini -o "$TMPD/r.abm" --estimate --group none
expect_grep estimate_table "/stages/stages.0/conv1/Conv *Conv+Relu" "$TMPD/out"
expect_ok compile_batch_fp16 "$ATOLL" compile $M/digits_cnn.onnx --chip configs/a1.ini --batch 3 --dtype fp16 -o "$TMPD/d3.abm"
expect_grep batch_fp16 "batch 3, f16" "$TMPD/out"
expect_ok compile_bf16_shape "$ATOLL" compile $M/digits_cnn.onnx --chip configs/tiny.ini --dtype bf16 --input-shape input=2x1x8x8 -o "$TMPD/d2.abm"
expect_grep bf16_shape "batch 2, bf16" "$TMPD/out"
expect_ok compile_two_variants "$ATOLL" compile $M/digits_cnn.onnx --chip configs/a1.ini --batch 1,4 -o "$TMPD/d14.abm"
expect_ok inspect_two_variants "$ATOLL" inspect "$TMPD/d14.abm"
expect_grep two_variants "net 'torch_jit': 2 variants" "$TMPD/out"
expect_grep variant_batch4 "input  input            fp32  \[4,1,8,8\] nchw" "$TMPD/out"
expect_ok compile_keep "$ATOLL" compile $M/digits_cnn.onnx --chip configs/tiny.ini --keep-activations -o "$TMPD/dk.abm"
expect_grep keep_no_reuse "activations      : \([0-9]*\) bytes peak (liveness packed) vs \1 bytes" "$TMPD/out"
expect_fail bad_dtype "use fp32, fp16, bf16 or int8" "$ATOLL" compile $M/digits_cnn.onnx --chip configs/tiny.ini --dtype int4 -o "$TMPD/x.abm"
expect_fail no_output "-o FILE is required" "$ATOLL" compile $M/digits_cnn.onnx --chip configs/tiny.ini
expect_fail bad_chip "nope.ini" "$ATOLL" compile $M/digits_cnn.onnx --chip nope.ini -o "$TMPD/x.abm"
# --input-shape changes the shape without saying it is a batch: the
# constants that fix batch 1 do not follow (--batch: test/cli/batch_follow.sh)
expect_fail fixed_batch_graph "node '/attn/Reshape' (Reshape): cannot reshape 4x16x64" "$ATOLL" compile $M/encoder_block.onnx --chip configs/tiny.ini --input-shape input=4x16x64 -o "$TMPD/x.abm"
expect_grep fixed_batch_says_why "the graph itself depends on the exported shape at this node" "$TMPD/out"
expect_fail bad_batch "numbers 1..65535" "$ATOLL" compile $M/lenet5.onnx --chip configs/tiny.ini --batch 0 -o "$TMPD/x.abm"
expect_fail bad_bytes_slack "a percentage 1..1000, or -1" "$ATOLL" compile $M/lenet5.onnx --chip configs/tiny.ini --bytes-slack x -o "$TMPD/x.abm"
[ ! -e "$TMPD/x.abm" ] && ok no_partial_file || fail no_partial_file "x.abm exists after failures"
expect_ok compile_time "$ATOLL" compile $M/digits_cnn.onnx --chip configs/tiny.ini --time -o "$TMPD/dt.abm"
expect_grep time_header "compile time (wall):" "$TMPD/out"
for ph in import passes "address assignment" "lowering+tile search" emit write total; do
    expect_grep "time_$(echo "$ph" | tr ' +' '__')" "^    $ph  *[0-9][0-9.]* s$" "$TMPD/out"
done
expect_ok compile_no_time "$ATOLL" compile $M/digits_cnn.onnx --chip configs/tiny.ini -o "$TMPD/dt.abm"
grep -q "compile time" "$TMPD/out" && fail no_time_without_flag "phase times printed without --time" || ok no_time_without_flag
expect_ok dump_ir_still "$ATOLL" compile $M/lenet5.onnx --dump-ir
# --group: auto groups resnet20's convs (Group(n) rows), --group-max 1 only
# fuses its residual Adds into their convs, none keeps every layer apart;
# --groups: each unit, a group's members under it (name and op), a total
# row (one compile for both, 7 CPU-s under ASan; the same arguments as
# placement.sh's, sram_acts.sh's and sram_pair.sh's resnet20_cifar compiles
# on a1 and dram_models.sh's and band_relayout.sh's, which the pass's
# compile cache then replays)
expect_ok group_auto "$ATOLL" compile $M/resnet20_cifar.onnx --chip configs/a1.ini --groups -o "$TMPD/ga.abm"
expect_grep group_auto_groups "Group([0-9]*) .* N1 H" "$TMPD/out"
expect_grep groups_header "^unit  layer (or group: first .. last) .*LMEM/core *DRAM in *DRAM out *est cycles *est DRAM$" "$TMPD/out"
expect_grep groups_member "^        /stages/stages.0/conv2/Conv  *Conv+Add+Relu$" "$TMPD/out"
expect_grep groups_unit "^   0  Group(3) .*KiB .*KB .*KB  *[0-9][0-9]* *[0-9.]* KB$" "$TMPD/out"
expect_grep groups_total "^ *total  .*[KMG]B .*[KMG]*B  *[0-9][0-9]* *[0-9.]* [KMG]B$" "$TMPD/out"
# (on tiny: the same layers, without a1's search over groups of one, 6 CPU-s under ASan)
expect_ok group_max1 "$ATOLL" compile $M/resnet20_cifar.onnx --chip configs/tiny.ini -o "$TMPD/g1.abm" --estimate --group-max 1
expect_grep group_max1_fused "Conv+Add+Relu" "$TMPD/out"
expect_grep group_max1_layers "resnet20_cifar.onnx -> .*: 23 layers" "$TMPD/out"
grep -q "Group(" "$TMPD/out" && fail group_max1_no_groups "a group with --group-max 1" || ok group_max1_no_groups
expect_fail group_max_bad "a number 1..1000" "$ATOLL" compile $M/digits_cnn.onnx --chip configs/tiny.ini --group-max 0 -o "$TMPD/x.abm"
expect_ok group_none "$ATOLL" compile $M/resnet20_cifar.onnx --chip configs/a1.ini -o "$TMPD/gn.abm" --estimate --group none
expect_grep group_none_layers "resnet20_cifar.onnx -> .*: 32 layers" "$TMPD/out"
grep -q "Conv+Add" "$TMPD/out" && fail group_none_unfused "a fused Add with --group none" || ok group_none_unfused
expect_ok group_none_recorded "$ATOLL" inspect "$TMPD/gn.abm"
expect_grep group_none_options "options: .*--group none" "$TMPD/out"
expect_fail group_bad "use auto or none" "$ATOLL" compile $M/digits_cnn.onnx --chip configs/tiny.ini --group some -o "$TMPD/x.abm"
# --group-weights stream: resnet20 on tiny forms a group streaming its
# weights (split "w<members>/<steps>"), recorded in the options (atoll
# compare compiles the same plan again), within the interpreter's answers;
# auto records nothing; a bad mode is refused
expect_ok gw_stream "$ATOLL" compile $M/resnet20_cifar.onnx --chip configs/tiny.ini -o "$TMPD/gw.abm" --groups --group-weights stream
expect_grep gw_stream_group "Group([0-9]*) .* w[0-9]*/[0-9]* " "$TMPD/out"
expect_ok gw_stream_recorded "$ATOLL" inspect "$TMPD/gw.abm"
expect_grep gw_stream_options "options: .*--group-weights stream" "$TMPD/out"
expect_ok gw_stream_matches "$ATOLL" compare $M/resnet20_cifar.onnx "$TMPD/gw.abm" --all \
    --input $M/resnet20_cifar.ref.npz --expect $M/resnet20_cifar.ref.npz
expect_ok gw_auto_recorded "$ATOLL" inspect "$TMPD/ga.abm"
grep -q -- "--group-weights" "$TMPD/out" && fail gw_auto_not_recorded "--group-weights recorded for auto" || ok gw_auto_not_recorded
expect_fail gw_bad "use auto, resident or stream" "$ATOLL" compile $M/digits_cnn.onnx --chip configs/tiny.ini --group-weights some -o "$TMPD/x.abm"
# --group-cslice only: mobilenetv2_035 on tiny forms groups of inverted
# residual blocks sliced along their hidden channels (split "c<slices>"),
# recorded in the options (atoll compare compiles the same plan again),
# within the interpreter's and PyTorch's answers; a bad mode is refused
expect_ok cs_only "$ATOLL" compile $M/mobilenetv2_035.onnx --chip configs/tiny.ini -o "$TMPD/cs.abm" --groups --group-cslice only
expect_grep cs_only_group "Group(3) .* c[0-9]* vec" "$TMPD/out"
expect_ok cs_only_recorded "$ATOLL" inspect "$TMPD/cs.abm"
expect_grep cs_only_options "options: .*--group-cslice only" "$TMPD/out"
expect_ok cs_only_matches "$ATOLL" compare $M/mobilenetv2_035.onnx "$TMPD/cs.abm" --all \
    --input $M/mobilenetv2_035.ref.npz --expect $M/mobilenetv2_035.ref.npz
expect_fail cs_bad "use auto, never or only" "$ATOLL" compile $M/digits_cnn.onnx --chip configs/tiny.ini --group-cslice some -o "$TMPD/x.abm"
# --zlevel 0: weights and sections stored raw, a larger file, the same model
expect_ok zlevel_default "$ATOLL" compile $M/lenet5.onnx --chip tiny -o "$TMPD/z6.abm"
expect_ok zlevel_0 "$ATOLL" compile $M/lenet5.onnx --chip tiny -o "$TMPD/z0.abm" --zlevel 0
s6=$(wc -c < "$TMPD/z6.abm"); s0=$(wc -c < "$TMPD/z0.abm")
if [ "$s0" -gt "$s6" ]; then ok "zlevel_0_larger ($s0 > $s6)"; else fail zlevel_0_larger "$s0 <= $s6"; fi
expect_ok zlevel_0_raw "$ATOLL" inspect "$TMPD/z0.abm" --weights
if grep -q " zlib " "$TMPD/out"; then fail zlevel_0_nothing_deflated "$(grep zlib "$TMPD/out" | head -3)"; else ok zlevel_0_nothing_deflated; fi
"$ATOLL" run "$TMPD/z6.abm" --timing-only | head -1 | sed 's/ on .*//' > "$TMPD/c6"
"$ATOLL" run "$TMPD/z0.abm" --timing-only | head -1 | sed 's/ on .*//' > "$TMPD/c0"
if [ -s "$TMPD/c6" ] && cmp -s "$TMPD/c6" "$TMPD/c0"; then ok zlevel_same_cycles; else fail zlevel_same_cycles "$(cat "$TMPD/c6" "$TMPD/c0")"; fi
expect_fail zlevel_bad "--zlevel '10': a number 0..9" "$ATOLL" compile $M/lenet5.onnx -o "$TMPD/z.abm" --zlevel 10
cli_summary compile
