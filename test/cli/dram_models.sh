# dram_models.sh - the bundled models on a1 with the banked DRAM model
# ([dram] model = banked, DMA bursts served as requests by banks and rows):
# the same .abm (timing keys are outside the fingerprint) gives outputs
# identical to the byte to those of the flow model; only the time changes.
. test/cli/lib.inc
sed 's/^latency_ns = 100 .*/latency_ns = 100\nmodel = banked/' configs/a1.ini > "$TMPD/a1-banked.ini"
expect_grep banked_chip_made "^model = banked" "$TMPD/a1-banked.ini"
# the sanitizer builds (BUILD=*san*) run the cases marked full only in the
# plain pass (CI time: the same code paths, less simulated work)
full=1
case "$BUILD" in *san*) full=0;; esac
models="digits_cnn lenet5 resnet20_cifar mobilenetv2_035 encoder_block vit_tiny"
[ $full = 1 ] || models="digits_cnn lenet5 resnet20_cifar encoder_block vit_tiny"
for m in $models; do
    expect_ok "${m}_compiles" "$ATOLL" compile models/$m.onnx --chip configs/a1.ini --groups -o "$TMPD/$m.abm"
    expect_ok "${m}_flow" "$ATOLL" run "$TMPD/$m.abm" --chip configs/a1.ini --input models/$m.ref.npz \
        --output "$TMPD/$m.flow.npz" --stats "$TMPD/$m.flow.json"
    expect_ok "${m}_banked" "$ATOLL" run "$TMPD/$m.abm" --chip "$TMPD/a1-banked.ini" --input models/$m.ref.npz \
        --output "$TMPD/$m.banked.npz" --stats "$TMPD/$m.banked.json"
    if cmp -s "$TMPD/$m.flow.npz" "$TMPD/$m.banked.npz"; then ok "${m}_same_outputs"
    else fail "${m}_same_outputs" "outputs differ between model = flow and model = banked"; fi
    fc=$(sed -n 's/^ *"cycles": \([0-9]*\),.*/\1/p' "$TMPD/$m.flow.json" | head -n 1)
    bc=$(sed -n 's/^ *"cycles": \([0-9]*\),.*/\1/p' "$TMPD/$m.banked.json" | head -n 1)
    if [ -n "$fc" ] && [ -n "$bc" ] && [ "$fc" != "$bc" ]; then ok "${m}_timing_differs"
    else fail "${m}_timing_differs" "cycles flow '$fc', banked '$bc'"; fi
done
cli_summary dram_models.sh
