# codesign.sh - the worked study of docs/codesign.md stays true: one of its
# points (MobileNetV2, fp16, 32x32 array, 128 KiB LMEM, 64 GB/s; point 5 of
# docs/codesign/codesign.csv) swept again gives the cycles and DRAM bytes
# the committed CSV and the doc's figures come from. A compiler change that
# moves them regenerates the study (docs/codesign.md says how). Plain build
# only: the compile takes minutes under the sanitizers.
. test/cli/lib.inc
case "$BUILD" in *san*) cli_summary codesign.sh; exit 0;; esac
cat > "$TMPD/one.ini" <<INI
[sweep]
chip = $PWD/configs/a1.ini
models = $PWD/models/full/mobilenetv2_100.onnx
dtypes = fp16
batches = 1
[vary]
matrix.rows = 32
matrix.cols = 32
lmem.bytes = 128K
dram.gbps = 64
INI
expect_ok point_runs "$ATOLL" sweep "$TMPD/one.ini" -o "$TMPD/one.csv"
# columns 10.. (status, cycles, est_cycles, images_per_s, mac_util, dram_bytes) of the committed row
want=$(awk -F, '$1 == 5 {print $10","$11","$15}' docs/codesign/codesign.csv)
got=$(awk -F, 'NR == 2 {print $10","$11","$15}' "$TMPD/one.csv")
if [ -n "$want" ] && [ "$want" = "$got" ]; then ok point_5_as_committed; else fail point_5_as_committed "committed '$want', now '$got'"; fi
cli_summary codesign.sh
