# gather_pieces.sh - the gather in pieces (docs/backend.md, "Row and
# channel bands in every cluster", "The gather in pieces"): a K-split
# convolution whose channel-banded input is gathered into the cluster's
# SRAM gets the other clusters' cells K chunk by K chunk, each piece
# signalling on its own, so the tiles of the first chunks load while the
# later pieces land. resnet20_cifar on a 2-cluster a1 with 32 KiB of LMEM
# (its late 1x1 convolutions then split K in 3 or 4 and gather their input):
# --groups marks those layers ` gN` (N pieces); the outputs stay the interpreter's
# in fp32 and bf16 (atoll compare: full mode, race detector on, so no
# tile reads a piece before it has landed); the estimate is the simulated
# cycles within 2%; in the trace, a load from the band in SRAM of layer
# 17 starts before the last of that layer's gathers (DRAM -> SRAM) ends
# (with one flag at the end, none did). Layer 14, a 3x3 stride-2 conv,
# took K3 with pieces too until strided windows were offered deeper K
# splits (lower/conv.c); it now takes K11, one gather. Weights staged in cluster SRAM
# (docs/backend.md, "Weights in cluster SRAM") would take these layers
# (or both, docs/backend.md "Input and weights both in cluster SRAM"), so the runs here
# say --sram-weights never; by default layer 14 stages its weights, and a
# bad mode is refused naming the option. They also say --prefetch never:
# with layer 14's first tiles' weights loaded by the layer before
# (docs/backend.md, "Weight prefetch across the barrier") the cost model
# gathers its input in one piece. And --kbands never: a K split across
# the clusters (docs/backend.md, "K split across clusters") takes layer
# 17's input channels where they lie, so it gathers nothing.
. test/cli/lib.inc
sed 's/^clusters = 4 /clusters = 2 /; s/^bytes = 512K /bytes = 32K /' configs/a1.ini > "$TMPD/a1x2s.ini"
M=models/resnet20_cifar
for dt in fp32 bf16; do
    expect_ok ${dt}_compiles "$ATOLL" compile $M.onnx --chip "$TMPD/a1x2s.ini" --dtype $dt --sram-activations bands \
        --sram-weights never --prefetch never --kbands never --groups -o "$TMPD/$dt.abm"
    cp "$TMPD/out" "$TMPD/sum_$dt.txt"
    expect_grep ${dt}_pieces " K[2-4] sram chans g[2-4] " "$TMPD/sum_$dt.txt"
    expect_ok ${dt}_matches_interpreter "$ATOLL" compare $M.onnx "$TMPD/$dt.abm" --chip "$TMPD/a1x2s.ini" \
        --input $M.ref.npz --expect $M.ref.npz
done
est=$(sed -n 's/.*estimated cycles : \([0-9]*\).*/\1/p' "$TMPD/sum_fp32.txt")
sim=$("$ATOLL" run "$TMPD/fp32.abm" --chip "$TMPD/a1x2s.ini" --timing-only 2> /dev/null | sed -n 's/.* in \([0-9]*\) cycles.*/\1/p')
if [ -n "$est" ] && [ -n "$sim" ] && [ $((est * 100)) -ge $((sim * 98)) ] && [ $((est * 100)) -le $((sim * 102)) ]; then
    ok estimate; else fail estimate "estimate $est, simulated $sim"; fi
"$ATOLL" run "$TMPD/fp32.abm" --chip "$TMPD/a1x2s.ini" --input $M.ref.npz --trace "$TMPD/t.json" > /dev/null 2>&1
# start end dst src shape of layer 17's copies; the flags are 16 words
grep 'layer=17"' "$TMPD/t.json" |
    sed -n 's/.*"start_cycle":\([0-9]*\),"end_cycle":\([0-9]*\),"insn":"dma.copy [^ ]* dst=\([a-z]*\):[^ ]* src=\([a-z]*\):.* shape=\([0-9,]*\) .*/\1 \2 \3 \4 \5/p' |
    awk '$3 == "sram" && $4 == "dram" { if ($2 > g) g = $2; n++ }
         $3 == "lmem" && $4 == "sram" && $5 != "1,1,1,16" { if (f == "" || $1 < f) f = $1 }
         END { print n + 0, g + 0, f + 0 }' > "$TMPD/order.txt"
read ng last first < "$TMPD/order.txt"
if [ "$ng" -gt 2 ] && [ "$first" -gt 0 ] && [ "$first" -lt "$last" ]; then ok loads_before_last_piece
else fail loads_before_last_piece "gathers $ng, the last ends at $last, the first load from SRAM starts at $first"; fi
expect_grep layer17_pieces "^  17  /stages/stages.7/conv1/Conv .* K4 sram chans g4 " "$TMPD/sum_fp32.txt"
expect_ok default_compiles "$ATOLL" compile $M.onnx --chip "$TMPD/a1x2s.ini" --sram-activations bands --groups -o "$TMPD/d.abm"
expect_grep default_stages_weights "^  14  /stages/stages.6/conv1/Conv .* wsram chans " "$TMPD/out"
expect_fail bad_sram_weights "--sram-weights 'sometimes': use auto, never or always" "$ATOLL" compile $M.onnx --sram-weights sometimes \
    -o "$TMPD/bad.abm"
cli_summary gather_pieces
