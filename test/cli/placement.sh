# placement.sh - placement over clusters (docs/backend.md, "Placement over
# clusters"): a batch split into instances, each run whole on one cluster,
# gives the outputs of the batch run on the whole chip (every layer on all
# cores) for the bundled models at batch 4 and 8, on a1 (4 clusters) and on
# tiny (1 cluster: the instances one after another); every image differs, so
# an instance reading or writing another's images is caught; the simulator's
# race detector (always on) finds no unordered access between clusters;
# staged schedules (--stage-plan: stage 0 one image per instance, the rest
# two) give the same bytes too, on a1 and tiny; so does int8; so do residual
# tails written in place (a1 with 128 KiB of SRAM); --placement, --micro-batch,
# --schedule and --stage-plan and their errors; auto's choice.
. test/cli/lib.inc
GEN=$BUILD/test/host/test_run_gen
A1=configs/a1.ini
# same NAME MODEL CHIP BATCH [MB]: split and chip outputs identical (within
# 1e-5: a layer whose weights are staged in SRAM on the chip may cut its K
# otherwise, which changes the f32 summation order; an instance reading
# another's images differs far more), and within 1e-4 of the chip's for
# every image of the reference input
same() {
    id=$1; m=$2; c=$3; b=$4; mb=${5:+--micro-batch $5}
    "$GEN" --extract models/$m.ref.npz input "$TMPD/one.npy" > /dev/null 2>&1
    "$GEN" --vary "$TMPD/one.npy" $b "$TMPD/in_$id.npy" > /dev/null 2>&1
    expect_ok "${id}_split_compiles" "$ATOLL" compile models/$m.onnx --chip $c --batch $b --placement split $mb -o "$TMPD/s_$id.abm"
    expect_grep "${id}_split_says_so" "placement        : split, " "$TMPD/out"
    expect_ok "${id}_split_runs" "$ATOLL" run "$TMPD/s_$id.abm" --input "$TMPD/in_$id.npy" --output "$TMPD/s_$id.npy"
    chip_ref $id $m $c $b
    expect_ok "${id}_identical" "$GEN" --close "$TMPD/s_$id.npy" "$TMPD/c_$id.npy" 1e-5
}
# chip_ref NAME MODEL CHIP BATCH: the chip's answer (every layer on all
# cores) to $TMPD/in_NAME.npy in $TMPD/c_NAME.npy. The chip's .abm is
# compiled once per MODEL CHIP BATCH and run once per input: a repeat (same,
# staged and mixed cases on one model, chip and batch, whose inputs are the
# same images) copies the first case's .abm and, for a byte-identical input,
# its outputs, and counts its _chip_compiles and _chip_runs checks on those
# copies (the compiler and simulator are deterministic: a fresh compile and
# run would give the same bytes). The chip's compile is the costliest step
# of a case (resnet20_cifar at batch 8 on a1: 3.5 CPU-s under ASan, its
# run 0.8); placement.sh compiled the same reference up to three times
chip_ref() {
    id=$1; key=$(printf '%s' "$2_$3_$4" | tr -c 'A-Za-z0-9_' _)
    first=$(cat "$TMPD/ref_$key" 2> /dev/null)
    if [ -z "$first" ]; then
        expect_ok "${id}_chip_compiles" "$ATOLL" compile models/$2.onnx --chip $3 --batch $4 --placement chip -o "$TMPD/c_$id.abm"
        echo "$id" > "$TMPD/ref_$key"
    else
        expect_ok "${id}_chip_compiles" cp "$TMPD/c_$first.abm" "$TMPD/c_$id.abm"
    fi
    if [ -n "$first" ] && cmp -s "$TMPD/in_$first.npy" "$TMPD/in_$id.npy"; then
        expect_ok "${id}_chip_runs" cp "$TMPD/c_$first.npy" "$TMPD/c_$id.npy"
    else
        expect_ok "${id}_chip_runs" "$ATOLL" run "$TMPD/c_$id.abm" --input "$TMPD/in_$id.npy" --output "$TMPD/c_$id.npy"
    fi
}
# the sanitizer builds (BUILD=*san*) run the cases marked full only in the
# plain pass: the same code paths at a fifth of the simulated work
full=1
case "$BUILD" in *san*) full=0;; esac
same lenet5_a1_b8 lenet5 $A1 8
same resnet20_a1_b8 resnet20_cifar $A1 8
[ $full = 1 ] && same resnet20_a1_b4_mb1 resnet20_cifar $A1 4 1
[ $full = 1 ] && same mobilenet_a1_b4 mobilenetv2_035 $A1 4
same digits_a1_b8_mb1 digits_cnn $A1 8 1
same lenet5_tiny_b4 lenet5 configs/tiny.ini 4
[ $full = 1 ] && same resnet20_tiny_b4_mb2 resnet20_cifar configs/tiny.ini 4 2
# a1 with 128 KiB of SRAM per cluster: resnet20_cifar's activations of one
# image do not all fit, so its residual tails write over their dying
# residuals in place (alloc/place.c); every tensor then stays in SRAM (one
# in DRAM otherwise) and the outputs equal the chip's (within 1e-5, as
# same() says), race-free
sed 's/^bytes = 4M .*/bytes = 128K/' $A1 > "$TMPD/a1_128k.ini"
"$GEN" --extract models/resnet20_cifar.ref.npz input "$TMPD/one.npy" > /dev/null 2>&1
"$GEN" --vary "$TMPD/one.npy" 4 "$TMPD/in_inplace.npy" > /dev/null 2>&1
for p in split chip; do
    expect_ok "inplace_${p}_compiles" "$ATOLL" compile models/resnet20_cifar.onnx --chip "$TMPD/a1_128k.ini" --batch 4 \
        --placement $p --micro-batch 1 -o "$TMPD/ip_$p.abm"
    [ $p = split ] && expect_grep inplace_all_in_sram "in DRAM          : 0 intermediate tensors" "$TMPD/out"
    expect_ok "inplace_${p}_runs" "$ATOLL" run "$TMPD/ip_$p.abm" --chip "$TMPD/a1_128k.ini" --input "$TMPD/in_inplace.npy" \
        --output "$TMPD/ip_$p.npy"
done
expect_ok inplace_identical "$GEN" --close "$TMPD/ip_split.npy" "$TMPD/ip_chip.npy" 1e-5
# staged NAME MODEL CHIP BATCH PLAN [WHAT]: the stage plan compiles (its
# summary shows WHAT, by default stage 1 in instances of 2 images) and gives
# the outputs of the chip
staged() {
    id=$1; m=$2; c=$3; b=$4; plan=$5; what=${6:-"stage 1        : layers .*, $(($4 / 2)) instances of 2 images (reads '"}
    "$GEN" --extract models/$m.ref.npz input "$TMPD/one.npy" > /dev/null 2>&1
    "$GEN" --vary "$TMPD/one.npy" $b "$TMPD/in_$id.npy" > /dev/null 2>&1
    expect_ok "${id}_staged_compiles" "$ATOLL" compile models/$m.onnx --chip $c --batch $b --stage-plan "$plan" --stages -o "$TMPD/s_$id.abm"
    expect_grep "${id}_stages" "$what" "$TMPD/out"
    expect_ok "${id}_staged_runs" "$ATOLL" run "$TMPD/s_$id.abm" --input "$TMPD/in_$id.npy" --output "$TMPD/s_$id.npy"
    chip_ref $id $m $c $b
    expect_ok "${id}_identical" "$GEN" --close "$TMPD/s_$id.npy" "$TMPD/c_$id.npy" 1e-5
}
R20CUT=/stages/stages.5/relu_1/Relu_output_0
staged resnet20_staged_a1_b8 resnet20_cifar $A1 8 "1,$R20CUT:2"
[ $full = 1 ] && staged resnet20_staged_tiny_b4 resnet20_cifar configs/tiny.ini 4 "1,$R20CUT:2"
[ $full = 1 ] && staged mobilenet_staged_a1_b8 mobilenetv2_035 $A1 8 "1,/features/features.4/conv/conv.3/BatchNormalization_output_0:2"
# mixed: chip stages (the whole batch on every core) among split ones
mixed() { staged "$1" "$2" "$3" "$4" "$5" "stage [0-9]        : layers .*, chip: the batch of $4 images on every core"; }
L5A=/features/features.2/AveragePool_output_0
L5B=/features/features.5/AveragePool_output_0
MBCUT=/features/features.4/conv/conv.3/BatchNormalization_output_0
mixed resnet20_mixed_a1_b8 resnet20_cifar $A1 8 "1,$R20CUT:c"
mixed lenet5_mixed_a1_b8 lenet5 $A1 8 "1,$L5A:c,$L5B:2"
mixed lenet5_mixed_tiny_b4 lenet5 configs/tiny.ini 4 "c,$L5B:1"
[ $full = 1 ] && mixed resnet20_mixed_tiny_b4 resnet20_cifar configs/tiny.ini 4 "c,$R20CUT:2"
[ $full = 1 ] && mixed mobilenet_mixed_a1_b4 mobilenetv2_035 $A1 4 "1,$MBCUT:c"
# (the compile of resnet20_mixed_a1_b8 above, taken from the pass's compile cache)
"$ATOLL" compile models/resnet20_cifar.onnx --chip $A1 --batch 8 --stage-plan "1,$R20CUT:c" --stages -o "$TMPD/x.abm" > "$TMPD/st.txt" 2>&1
expect_grep mixed_stages_table "^    1  [0-9]*-[0-9]*  *chip 8         1        4 .* $R20CUT$" "$TMPD/st.txt"
expect_fail stage_plan_one_chip_stage "--stage-plan: one stage; use --placement chip" \
    "$ATOLL" compile models/resnet20_cifar.onnx --batch 8 --stage-plan "c" -o "$TMPD/bad.abm"
expect_fail stage_plan_bad_chip "micro-batch 'chip' does not divide the 2 images each cluster runs (or is not c" \
    "$ATOLL" compile models/resnet20_cifar.onnx --batch 8 --stage-plan "1,$R20CUT:chip" -o "$TMPD/bad.abm"
expect_fail stage_plan_not_a_cut "the graph cannot be cut at '/stages/stages.5/relu/Relu_output_0'" \
    "$ATOLL" compile models/resnet20_cifar.onnx --batch 8 --stage-plan "1,/stages/stages.5/relu/Relu_output_0:2" -o "$TMPD/bad.abm"
expect_fail stage_plan_shrinking "micro-batches must grow stage by stage (1 after 2)" \
    "$ATOLL" compile models/resnet20_cifar.onnx --batch 8 --stage-plan "2,$R20CUT:1" -o "$TMPD/bad.abm"
expect_fail stage_plan_not_divisor "micro-batch '3' does not divide the 2 images each cluster runs" \
    "$ATOLL" compile models/resnet20_cifar.onnx --batch 8 --stage-plan "1,$R20CUT:3" -o "$TMPD/bad.abm"
expect_fail stage_plan_bad_item "'$R20CUT' is not TENSOR:M or TENSOR:c" \
    "$ATOLL" compile models/resnet20_cifar.onnx --batch 8 --stage-plan "1,$R20CUT" -o "$TMPD/bad.abm"
expect_fail bad_schedule "--schedule 'zigzag': use staged or uniform" \
    "$ATOLL" compile models/resnet20_cifar.onnx --schedule zigzag -o "$TMPD/bad.abm"
# int8 (calibrated on the reference image): split and chip give the same bytes
"$GEN" --extract models/resnet20_cifar.ref.npz input "$TMPD/cal.npy" > /dev/null 2>&1
for p in split chip; do
    expect_ok "int8_${p}_compiles" "$ATOLL" compile models/resnet20_cifar.onnx --dtype int8 --calib "$TMPD/cal.npy" --batch 8 \
        --placement $p -o "$TMPD/q_$p.abm"
    expect_ok "int8_${p}_runs" "$ATOLL" run "$TMPD/q_$p.abm" --input "$TMPD/in_resnet20_a1_b8.npy" --output "$TMPD/q_$p.npy"
done
expect_ok int8_identical "$GEN" --compare "$TMPD/q_split.npy" "$TMPD/q_chip.npy"
# --stages: one row per stage, its micro-batch, instances and the boundary it reads
"$ATOLL" compile models/resnet20_cifar.onnx --chip configs/a1.ini --batch 8 --stage-plan "1,$R20CUT:2" --stages -o "$TMPD/x.abm" > "$TMPD/st.txt" 2>&1
expect_grep stages_row0 "^    0  0-[0-9]*  *1         8        4 .* the inputs$" "$TMPD/st.txt"
# (the boundary kept in the clusters' SRAM: the cost model prices it lower)
expect_grep stages_row1 "^    1  [0-9]*-[0-9]*  *2         4        4 .* $R20CUT (in SRAM)$" "$TMPD/st.txt"
expect_grep stages_from_sram "stage 1        : .*(reads '$R20CUT' from its clusters' SRAM)" "$TMPD/st.txt"
# (lenet5: resnet20_cifar's batch-1 compile took 7 CPU-s under ASan for this line)
"$ATOLL" compile models/lenet5.onnx --stages -o "$TMPD/x.abm" > "$TMPD/st.txt" 2>&1
expect_grep stages_none_on_chip "stages: none (placement chip: batch 1: one image" "$TMPD/st.txt"
# the chip's answer is the interpreter's (atoll compare: every output)
expect_ok resnet20_split_vs_interp "$ATOLL" compare models/resnet20_cifar.onnx "$TMPD/s_resnet20_a1_b8.abm" --input "$TMPD/in_resnet20_a1_b8.npy"
# the summary: instances, clusters, SRAM
"$ATOLL" compile models/resnet20_cifar.onnx --chip configs/a1.ini --batch 8 --placement split -o "$TMPD/x.abm" > "$TMPD/sum.txt" 2>&1
expect_grep summary_instances "split, 4 instances of 2 images on 4 clusters (4 cores each)" "$TMPD/sum.txt"
expect_grep summary_sram "bytes of activations per cluster in SRAM" "$TMPD/sum.txt"
# auto: batch 1 leaves clusters idle; a small model stays on the chip when the cost model says so
"$ATOLL" compile models/resnet20_cifar.onnx --chip configs/a1.ini --groups -o "$TMPD/x.abm" > "$TMPD/sum.txt" 2>&1
expect_grep auto_batch1_chip "placement        : chip (batch 1: one image, nothing to split)" "$TMPD/sum.txt"
"$ATOLL" compile models/resnet20_cifar.onnx --batch 8 -o "$TMPD/x.abm" > "$TMPD/sum.txt" 2>&1
expect_grep auto_batch8_split "placement        : split" "$TMPD/sum.txt"
"$ATOLL" compile models/digits_cnn.onnx --batch 8 -o "$TMPD/x.abm" > "$TMPD/sum.txt" 2>&1
expect_grep auto_priced "placement        : chip (the cost model prices it at" "$TMPD/sum.txt"
# errors: a micro-batch that does not divide the batch, a graph that mixes images, bad values
expect_fail micro_batch_not_divisor "placement split: the batch (8) is not a multiple of the micro-batch 3" \
    "$ATOLL" compile models/resnet20_cifar.onnx --batch 8 --placement split --micro-batch 3 -o "$TMPD/bad.abm"
if [ -e "$TMPD/bad.abm" ]; then fail no_partial_output "$TMPD/bad.abm written"; else ok no_partial_output; fi
expect_fail bad_placement "--placement 'diagonal': use auto, chip, split or pipeline" \
    "$ATOLL" compile models/resnet20_cifar.onnx --placement diagonal -o "$TMPD/bad.abm"
expect_fail bad_micro_batch "--micro-batch '0': a number 1..65536" \
    "$ATOLL" compile models/resnet20_cifar.onnx --micro-batch 0 -o "$TMPD/bad.abm"
cli_summary placement
