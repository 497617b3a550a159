# any_chip.sh - the backend on a chip nobody tuned it for: 3 clusters x 3
# cores (odd core counts, so tiles do not divide evenly) with 8 KiB of LMEM
# (a 4 KiB slot: most convs split K and W, matmuls split K), derived from
# configs/edge16k.ini. Every bundled model must compile and match the
# reference interpreter through `atoll compare` (input from the model's
# .ref.npz; its output array is skipped).
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
done
cli_summary any_chip.sh
