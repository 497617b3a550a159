# sram_pair.sh - a convolution staging both its input and its weights in
# cluster SRAM (docs/backend.md, "Input and weights both in cluster
# SRAM"; atoll compile --sram-pair in every plan built, by default where
# the plan choice weighing DRAM bytes keeps it, "Plans weighed by their
# bytes"): on channel bands the staging gathers the other clusters' cells
# of the input into the band once, and the weight chunks go above the
# staged input. resnet20_cifar on a1 (its 16x16 and 8x8 3x3 convolutions
# take the pair in fp32 with --bytes-slack -1): --groups marks them ` sram wsram`;
# the outputs stay the interpreter's (atoll compare: full mode, race
# detector on); the estimate is the simulated cycles within 2%;
# with --sram-weights never no layer takes the pair. On a 2-cluster a1
# with 32 KiB of LMEM, K-split 3x3 convolutions take the pair with the
# gather in pieces (fp32 layers 12, 17, 19; bf16 16, 18, 20): the outputs
# stay the interpreter's, and in the fp32 trace layer 17's cores wait for the input's pieces on a
# semaphore of their own (INPUT, 9, not the weights' 8): more such waits
# than cores. By default: resnet20_cifar on a1 keeps the frugal plan
# without the pair (the pair's plan is faster but moves 1.87x its
# compulsory DRAM bytes; no layer ` sram wsram`, at most 1.5x), which
# --sram-pair keeps too unless --bytes-slack -1 (the fastest plan: the
# pair's, the cases above; faster, more bytes estimated); on the
# 2-cluster a1 the default takes the pair (faster, no more bytes: the
# --sram-pair plan's estimate); on a1 with 9 semaphores a model compiles
# without the pair (its INPUT semaphore) and gives the interpreter's
# answers, and --sram-pair is refused there.
. test/cli/lib.inc
M=models/resnet20_cifar
for dt in fp32; do
    expect_ok ${dt}_compiles "$ATOLL" compile $M.onnx --chip configs/a1.ini --dtype $dt --sram-pair --bytes-slack -1 --groups \
        -o "$TMPD/$dt.abm"
    cp "$TMPD/out" "$TMPD/sum_$dt.txt"
    expect_grep ${dt}_pair " K[0-9]* sram wsram c" "$TMPD/sum_$dt.txt"
    expect_ok ${dt}_matches_interpreter "$ATOLL" compare $M.onnx "$TMPD/$dt.abm" --chip configs/a1.ini \
        --input $M.ref.npz --expect $M.ref.npz
done
est=$(sed -n 's/.*estimated cycles : \([0-9]*\).*/\1/p' "$TMPD/sum_fp32.txt")
sim=$("$ATOLL" run "$TMPD/fp32.abm" --chip configs/a1.ini --timing-only 2> /dev/null | sed -n 's/.* in \([0-9]*\) cycles.*/\1/p')
if [ -n "$est" ] && [ -n "$sim" ] && [ $((est * 100)) -ge $((sim * 98)) ] && [ $((est * 100)) -le $((sim * 102)) ]; then
    ok estimate; else fail estimate "estimate $est, simulated $sim"; fi
expect_ok never_compiles "$ATOLL" compile $M.onnx --chip configs/a1.ini --sram-pair --sram-weights never --groups -o "$TMPD/n.abm"
if grep -q " sram wsram" "$TMPD/out"; then fail never_no_pair "a layer stages both with --sram-weights never"; else ok never_no_pair; fi
sed 's/^clusters = 4 /clusters = 2 /; s/^bytes = 512K /bytes = 32K /' configs/a1.ini > "$TMPD/a1x2s.ini"
# the sanitizer builds (BUILD=*san*) run the cases marked full only in the
# plain pass (CI time: the same code paths, less simulated work)
full=1
case "$BUILD" in *san*) full=0;; esac
dts="fp32 bf16"; [ $full = 1 ] || dts=fp32
for dt in $dts; do
    expect_ok ${dt}_2c_compiles "$ATOLL" compile $M.onnx --chip "$TMPD/a1x2s.ini" --dtype $dt --sram-pair --groups -o "$TMPD/s$dt.abm"
    expect_grep ${dt}_2c_pair " K[2-4] sram wsram chan" "$TMPD/out"
    cp "$TMPD/out" "$TMPD/sum_2c_$dt.txt"
    expect_ok ${dt}_2c_matches_interpreter "$ATOLL" compare $M.onnx "$TMPD/s$dt.abm" --chip "$TMPD/a1x2s.ini" \
        --input $M.ref.npz --expect $M.ref.npz
done
"$ATOLL" run "$TMPD/sfp32.abm" --chip "$TMPD/a1x2s.ini" --timing-only --trace "$TMPD/t.json" > /dev/null 2>&1
waits=$(grep -c '"insn":"nop wait=9 layer=17"' "$TMPD/t.json")
cores=$(grep 'layer=17"' "$TMPD/t.json" | grep '"insn":"nop wait=9 ' | sed 's/.*"pid":\([0-9]*\),.*/\1/' | sort -u | wc -l)
if [ "$cores" -gt 0 ] && [ "$waits" -gt "$cores" ]; then ok input_pieces; else fail input_pieces "$waits input waits on $cores cores"; fi
# the estimated DRAM bytes of a --groups summary (its total row's last column)
est_bytes() {
    awk '/^ *total / { v = $(NF - 1); u = $NF; print int(v * (u == "MB" ? 1e6 : u == "KB" ? 1e3 : 1)) }' "$1"
}
expect_ok default_compiles "$ATOLL" compile $M.onnx --chip configs/a1.ini --groups -o "$TMPD/d.abm"
cp "$TMPD/out" "$TMPD/sum_d.txt"
if grep -q " sram wsram" "$TMPD/sum_d.txt"; then fail default_no_pair "a layer stages both by default"; else ok default_no_pair; fi
w=$(sed -n 's/^ *weights *: \([0-9]*\) bytes.*/\1/p' "$TMPD/sum_d.txt")
io=$(sed -n 's/^ *io *: \([0-9]*\) bytes.*/\1/p' "$TMPD/sum_d.txt")
db=$(est_bytes "$TMPD/sum_d.txt")
if [ -n "$db" ] && [ -n "$w" ] && [ $((db * 10)) -le $(((w + io) * 15)) ]; then ok default_frugal; else
    fail default_frugal "$db bytes estimated, compulsory $w + $io"; fi
fb=$(est_bytes "$TMPD/sum_fp32.txt")
fc=$(sed -n 's/.*estimated cycles : \([0-9]*\).*/\1/p' "$TMPD/sum_fp32.txt")
dc=$(sed -n 's/.*estimated cycles : \([0-9]*\).*/\1/p' "$TMPD/sum_d.txt")
if [ -n "$fb" ] && [ -n "$db" ] && [ "$fb" -gt $((db * 11 / 10)) ] && [ "$fc" -lt "$dc" ]; then ok fastest_more_bytes; else
    fail fastest_more_bytes "fastest $fc cycles $fb bytes, default $dc cycles $db bytes"; fi
expect_ok default_2c_compiles "$ATOLL" compile $M.onnx --chip "$TMPD/a1x2s.ini" --groups -o "$TMPD/d2.abm"
expect_grep default_2c_pair " sram wsram" "$TMPD/out"
pc=$(sed -n 's/.*estimated cycles : \([0-9]*\).*/\1/p' "$TMPD/out")
ac=$(sed -n 's/.*estimated cycles : \([0-9]*\).*/\1/p' "$TMPD/sum_2c_fp32.txt")
if [ -n "$pc" ] && [ "$pc" = "$ac" ]; then ok default_2c_as_pair; else fail default_2c_as_pair "default $pc cycles, --sram-pair $ac"; fi
sed 's/^semaphores = 16 /semaphores = 9 /' configs/a1.ini > "$TMPD/a1s9.ini"
D=models/digits_cnn
expect_ok sem9_compiles "$ATOLL" compile $D.onnx --chip "$TMPD/a1s9.ini" -o "$TMPD/s9.abm"
expect_ok sem9_matches_interpreter "$ATOLL" compare $D.onnx "$TMPD/s9.abm" --chip "$TMPD/a1s9.ini" --input $D.ref.npz --expect $D.ref.npz
expect_fail sem9_pair_refused "9 semaphores per core; the pipeline needs 10 with --sram-pair" \
    "$ATOLL" compile $D.onnx --chip "$TMPD/a1s9.ini" --sram-pair -o "$TMPD/s9p.abm"
cli_summary sram_pair
