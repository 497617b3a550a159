# staged_full.sh - issue #13's "done when" for the full-size bundled models
# (models/full: resnet50, mobilenetv2_100, bert_base_layer, vit_b16, with
# synthetic weights): `--schedule staged` against `--schedule uniform` at
# batch 4 and 8 on a1 and tiny, outputs bit for bit equal, every image
# different, race detector on. Too slow for `make test` (each run
# simulates billions of MACs with their values: about an hour in all on 2
# cores); `make staged-full` runs it, MODELS= / CHIPS= / BATCHES= narrow
# it. test/cli/staged_models.sh does the same for the small bundled
# models on every test run.
. test/cli/lib.inc
GEN=$BUILD/test/host/test_run_gen
models=${MODELS:-"resnet50 mobilenetv2_100 bert_base_layer vit_b16"}
chips=${CHIPS:-"a1 tiny"}; batches=${BATCHES:-"4 8"}
for m in $models; do
    case $m in
        bert_base_layer) ins="hidden_states:128x768 attention_mask:1x1x128" ;;
        *) ins="input:3x224x224" ;;
    esac
    for b in $batches; do
        args=""
        for i in $ins; do
            n=${i%%:*}; d=${i#*:}
            "$GEN" --noise 1x$d "$TMPD/one_$n.npy" > /dev/null && "$GEN" --vary "$TMPD/one_$n.npy" $b "$TMPD/${n}_b$b.npy" > /dev/null
            args="$args --input $n=$TMPD/${n}_b$b.npy"
        done
        for c in $chips; do
            id=${m}_${c}_b$b
            for s in staged uniform; do
                expect_ok "${id}_${s}_compiles" "$ATOLL" compile models/full/$m.onnx --synthetic-weights --chip configs/$c.ini \
                    --batch $b --placement split --schedule $s --stages -o "$TMPD/${s}_$id.abm"
                grep -E "^ *stage [0-9]+ +:" "$TMPD/out" | sed "s/^/  $id $s: /"
                expect_ok "${id}_${s}_runs" "$ATOLL" run "$TMPD/${s}_$id.abm" $args --output "$TMPD/${s}_$id.npy"
            done
            expect_ok "${id}_same_outputs" "$GEN" --compare "$TMPD/staged_$id.npy" "$TMPD/uniform_$id.npy"
            rm -f "$TMPD"/*_$id.abm "$TMPD"/*_$id.npy
        done
    done
done
cli_summary staged_full
