# batch_follow.sh - `--batch` on exports that fix batch 1 in constants
# (compiler/ops/batch_follow.c; docs/compiler.md, "A batch the export
# fixed"): encoder_block's attention Reshapes to [1,16,4,16] and
# vit_tiny's class token [1,1,64] expanded to [1,1,64] follow the batch.
# The reference interpreter at batch 4 gives each image what it gives
# alone at batch 1 (the follow means what the model means for one image),
# the chip at batch 4 (placement split: vit_tiny's batch moves to axis 1
# in its q/k/v Transpose) gives the interpreter's answers, compile says
# which constants followed, and --input-shape (not a batch) still refuses
# naming the node and pointing at --batch.
. test/cli/lib.inc
GEN=$BUILD/test/host/test_run_gen
for m in encoder_block vit_tiny; do
    "$GEN" --extract models/$m.ref.npz input "$TMPD/one.npy" > /dev/null 2>&1
    "$GEN" --vary "$TMPD/one.npy" 4 "$TMPD/in4.npy" > /dev/null 2>&1
    expect_ok ${m}_interp_batch4 "$ATOLL" interp models/$m.onnx --batch 4 --input "$TMPD/in4.npy" --output "$TMPD/ref4.npz"
    "$GEN" --extract "$TMPD/ref4.npz" output "$TMPD/ref4.npy" > /dev/null 2>&1
    for k in 0 3; do
        rm -f "$TMPD/in1.npy" "$TMPD/ref1.npz" "$TMPD/ref1.npy" "$TMPD/ref4k.npy"   # no file of the last image
        "$GEN" --take "$TMPD/in4.npy" $k "$TMPD/in1.npy" > /dev/null 2>&1 &&
            "$ATOLL" interp models/$m.onnx --input "$TMPD/in1.npy" --output "$TMPD/ref1.npz" > /dev/null 2>&1 &&
            "$GEN" --extract "$TMPD/ref1.npz" output "$TMPD/ref1.npy" > /dev/null 2>&1 &&
            "$GEN" --take "$TMPD/ref4.npy" $k "$TMPD/ref4k.npy" > /dev/null 2>&1
        expect_ok ${m}_image${k}_as_alone "$GEN" --close "$TMPD/ref4k.npy" "$TMPD/ref1.npy" 1e-5
    done
    expect_ok ${m}_compiles_batch4 "$ATOLL" compile models/$m.onnx --chip configs/a1.ini --batch 4 --placement split -o "$TMPD/$m.abm"
    expect_grep ${m}_says_what_followed "they follow --batch 4 (the first: node '" "$TMPD/out"
    expect_ok ${m}_runs_batch4 "$ATOLL" run "$TMPD/$m.abm" --input "$TMPD/in4.npy" --output "$TMPD/chip4.npy"
    expect_ok ${m}_chip_is_the_reference "$GEN" --close "$TMPD/chip4.npy" "$TMPD/ref4.npy" 1e-4
done
expect_fail input_shape_is_not_a_batch "if dimension 0 is the batch, give it with --batch 4" \
    "$ATOLL" compile models/encoder_block.onnx --input-shape input=4x16x64 -o "$TMPD/no.abm"
if [ -e "$TMPD/no.abm" ]; then fail input_shape_leaves_no_file "$TMPD/no.abm exists"; else ok input_shape_leaves_no_file; fi
cli_summary batch_follow
