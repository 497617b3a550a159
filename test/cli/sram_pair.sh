# sram_pair.sh - a convolution staging both its input and its weights in
# cluster SRAM (docs/backend.md, "Input and weights both in cluster
# SRAM"): on channel bands the staging gathers the other clusters' cells
# of the input into the band once, and the weight chunks go above the
# staged input. resnet20_cifar on a1 (its 16x16 and 8x8 3x3 convolutions
# take the pair by default in fp32): --groups marks them ` sram wsram`;
# the outputs stay the interpreter's (atoll compare: full mode, race
# detector on); the estimate is the simulated cycles within 2%;
# with --sram-weights never no layer takes the pair.
. test/cli/lib.inc
M=models/resnet20_cifar
for dt in fp32; do
    expect_ok ${dt}_compiles "$ATOLL" compile $M.onnx --chip configs/a1.ini --dtype $dt --groups -o "$TMPD/$dt.abm"
    cp "$TMPD/out" "$TMPD/sum_$dt.txt"
    expect_grep ${dt}_pair " K[0-9]* sram wsram c" "$TMPD/sum_$dt.txt"
    expect_ok ${dt}_matches_interpreter "$ATOLL" compare $M.onnx "$TMPD/$dt.abm" --chip configs/a1.ini \
        --input $M.ref.npz --expect $M.ref.npz
done
est=$(sed -n 's/.*estimated cycles : \([0-9]*\).*/\1/p' "$TMPD/sum_fp32.txt")
sim=$("$ATOLL" run "$TMPD/fp32.abm" --chip configs/a1.ini --timing-only 2> /dev/null | sed -n 's/.* in \([0-9]*\) cycles.*/\1/p')
if [ -n "$est" ] && [ -n "$sim" ] && [ $((est * 100)) -ge $((sim * 98)) ] && [ $((est * 100)) -le $((sim * 102)) ]; then
    ok estimate; else fail estimate "estimate $est, simulated $sim"; fi
expect_ok never_compiles "$ATOLL" compile $M.onnx --chip configs/a1.ini --sram-weights never --groups -o "$TMPD/n.abm"
if grep -q " sram wsram" "$TMPD/out"; then fail never_no_pair "a layer stages both with --sram-weights never"; else ok never_no_pair; fi
cli_summary sram_pair
