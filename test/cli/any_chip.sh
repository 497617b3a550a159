# any_chip.sh - the backend on a chip nobody tuned it for: 3 clusters x 3
# cores (odd core counts, so tiles do not divide evenly) with 8 KiB of LMEM
# (a 4 KiB slot: most convs split K and W, matmuls split K), derived from
# configs/edge16k.ini. Every bundled model must compile and match the
# reference interpreter through `atoll compare` (input from the model's
# .ref.npz; its output array is skipped). So must they on configs/edge16k.ini
# itself (issue 11's three chips: tiny and a1 are test_backend_e2e's), whose
# 16 KiB of LMEM no other test runs the bundled models' answers on, and
# mobilenetv2_035 there grouped (the only bundled model that forms layer
# groups on edge16k, with its activations in DRAM and weights streamed).
. test/cli/lib.inc
CHIP="$TMPD/odd.ini"
sed 's/^clusters = .*/clusters = 3/; s/^cores_per_cluster = .*/cores_per_cluster = 3/; s/^bytes = 16K.*/bytes = 8K/' \
    configs/edge16k.ini > "$CHIP"
expect_grep odd_chip_made "^bytes = 8K" "$CHIP"
# the sanitizer builds (BUILD=*san*) run the cases marked full only in the
# plain pass (CI time: the same code paths, less simulated work)
full=1
case "$BUILD" in *san*) full=0;; esac
models="digits_cnn lenet5 resnet20_cifar mobilenetv2_035 encoder_block vit_tiny"
[ $full = 1 ] || models="digits_cnn lenet5 resnet20_cifar encoder_block vit_tiny"
for m in $models; do
    expect_ok "${m}_compiles" "$ATOLL" compile models/$m.onnx --chip "$CHIP" -o "$TMPD/$m.abm"
    expect_ok "${m}_matches" "$ATOLL" compare models/$m.onnx "$TMPD/$m.abm" --chip "$CHIP" --input models/$m.ref.npz
    expect_ok "${m}_edge16k_compiles" "$ATOLL" compile models/$m.onnx --chip configs/edge16k.ini -o "$TMPD/$m.e.abm"
    expect_ok "${m}_edge16k_matches" "$ATOLL" compare models/$m.onnx "$TMPD/$m.e.abm" --chip configs/edge16k.ini \
        --input models/$m.ref.npz
done
# grouped on edge16k: by default no bundled model forms a layer group there
# (the activations stay in the cluster's SRAM); with them in DRAM and
# weights streamed, mobilenetv2_035 forms several, and must still match
# (plain pass only, as mobilenetv2_035 above)
if [ $full = 1 ]; then
    expect_ok mbv2_edge16k_grouped "$ATOLL" compile models/mobilenetv2_035.onnx --chip configs/edge16k.ini \
        -o "$TMPD/mg.abm" --groups --sram-activations never --group-weights stream
    expect_grep mbv2_edge16k_groups "^ *[0-9]*  Group([0-9]*) .* w[0-9]*/[0-9]* " "$TMPD/out"
    expect_ok mbv2_edge16k_grouped_matches "$ATOLL" compare models/mobilenetv2_035.onnx "$TMPD/mg.abm" \
        --chip configs/edge16k.ini --input models/mobilenetv2_035.ref.npz
fi
cli_summary any_chip.sh
