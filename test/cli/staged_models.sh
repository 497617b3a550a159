# staged_models.sh - issue #13's "done when": the staged schedule (the cost
# model's stages, each with its own micro-batch) and the uniform one (one
# micro-batch for every layer) give bit-identical outputs for the bundled
# models at batch 4 and 8, on a1 (4 clusters) and tiny (1 cluster), with
# every image different (an instance reading another's images is caught)
# and the simulator's race detector on: the same arithmetic in another
# order. The transformers' exports fix batch 1 in constants, which follow
# --batch (compiler/ops/batch_follow.c), and vit_tiny's batch moves to
# axis 1 inside its attention, which split allows (docs/backend.md,
# "Placement over clusters"); test/cli/batch_follow.sh checks them against
# the reference interpreter. The full-size models run in `make
# staged-full` (minutes each on the simulator). The sanitizer passes run
# batch 4 on tiny only (the same code paths at a fraction of the work).
. test/cli/lib.inc
GEN=$BUILD/test/host/test_run_gen
chips="configs/a1.ini configs/tiny.ini"; batches="4 8"
case "$BUILD" in *san*) chips=configs/tiny.ini; batches=4;; esac
multi=0   # cases the cost model cut into stages (the others compare one stage with itself)
for path in digits_cnn lenet5 resnet20_cifar mobilenetv2_035 encoder_block vit_tiny quant/fx_cnn; do
    m=${path##*/}; onnx=models/$path.onnx
    [ $m = fx_cnn ] && onnx=models/quant/fx_cnn.q.onnx     # the int8 QDQ export (PyTorch FX)
    "$GEN" --extract models/$path.ref.npz input "$TMPD/one.npy" > /dev/null 2>&1
    for c in $chips; do
        cn=$(basename $c .ini)
        for b in $batches; do
            id=${m}_${cn}_b$b
            "$GEN" --vary "$TMPD/one.npy" $b "$TMPD/in_$id.npy" > /dev/null 2>&1
            for s in staged uniform; do
                expect_ok "${id}_${s}_compiles" "$ATOLL" compile $onnx --chip $c --batch $b --placement split \
                    --schedule $s --stages -o "$TMPD/${s}_$id.abm"
                if [ $s = staged ] && grep -qE "^ *stage 1 +:" "$TMPD/out"; then
                    multi=$((multi + 1)); grep -E "^ *stage [0-9]+ +:" "$TMPD/out" | sed "s/^/  $id: /"
                fi
                expect_ok "${id}_${s}_runs" "$ATOLL" run "$TMPD/${s}_$id.abm" --input "$TMPD/in_$id.npy" \
                    --output "$TMPD/${s}_$id.npy"
            done
            expect_ok "${id}_same_outputs" "$GEN" --compare "$TMPD/staged_$id.npy" "$TMPD/uniform_$id.npy"
            rm -f "$TMPD"/*_$id.abm
        done
    done
done
# tiny cuts mobilenetv2_035 at batch 4 and 8 and lenet5 at batch 8 (a1's
# clusters run these small models fastest as one stage)
want=3; case "$BUILD" in *san*) want=1;; esac
if [ $multi -ge $want ]; then ok staged_cases_staged; else fail staged_cases_staged "only $multi cases were cut into stages"; fi
cli_summary staged_models
