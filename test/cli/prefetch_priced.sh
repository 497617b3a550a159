# prefetch_priced.sh - the tile search prices a staged convolution without
# the first weight copies the layer before may prefetch (group/search.c,
# `prefetchable`; docs/backend.md, "Weight prefetch across the barrier",
# "Priced in the tile search"): resnet20_cifar on a1 with 128 KiB of
# cluster SRAM and activations in bands, where the inputs of stages 1 to 3
# do not fit an SRAM staging copy. Before, their convolutions multicast
# whole weights to every core (` mc`, 125,361 simulated cycles); priced as
# the schedule runs them, stages 1 to 3 stage their weights in SRAM and the
# layer before copies the first keys (` wsram pf`, 121,948 cycles). The
# output is still the interpreter's (atoll compare: full mode, race
# detector on), the estimate is the simulated cycles within 2%, and with
# --prefetch never the search prices every copy (no ` wsram pf`).
. test/cli/lib.inc
awk '/^\[/ { sec = $0 } sec == "[sram]" && /^bytes *=/ { print "bytes = 128K"; next } { print }' configs/a1.ini > "$TMPD/a1s.ini"
M=models/resnet20_cifar
# the fastest plan (--bytes-slack -1): by default the plan choice keeps a
# frugal one (126,195 estimated cycles, 1.5 MB of DRAM, against 118,856 and
# 1.9 MB, 1.73x the compulsory bytes; docs/backend.md, "Plans weighed by
# their bytes") that stages no weights
expect_ok compiles "$ATOLL" compile $M.onnx --chip "$TMPD/a1s.ini" --sram-activations bands --bytes-slack -1 --groups -o "$TMPD/m.abm"
cp "$TMPD/out" "$TMPD/sum.txt"
n=$(grep -c " wsram pf " "$TMPD/sum.txt")
if [ "$n" -ge 4 ]; then ok staged_and_prefetched; else fail staged_and_prefetched "$n layers marked wsram pf, want 4 or more"; fi
expect_ok matches_interpreter "$ATOLL" compare $M.onnx "$TMPD/m.abm" --chip "$TMPD/a1s.ini" \
    --input $M.ref.npz --expect $M.ref.npz
cyc=$("$ATOLL" run "$TMPD/m.abm" --chip "$TMPD/a1s.ini" --timing-only --profile 2> /dev/null |
    sed -n 's/^profile: \([0-9]*\) cycles.*/\1/p')
est=$(sed -n 's/.*estimated cycles : \([0-9]*\).*/\1/p' "$TMPD/sum.txt")
if [ -n "$cyc" ] && [ "$cyc" -lt 123500 ]; then ok faster; else fail faster "$cyc simulated cycles, were 125,361"; fi
if [ -n "$est" ] && [ -n "$cyc" ] && [ $((est * 100)) -ge $((cyc * 98)) ] && [ $((est * 100)) -le $((cyc * 102)) ]; then
    ok estimate; else fail estimate "estimate $est, simulated $cyc"; fi
expect_ok never_compiles "$ATOLL" compile $M.onnx --chip "$TMPD/a1s.ini" --sram-activations bands --prefetch never --groups \
    -o "$TMPD/never.abm"
if grep -q " wsram pf " "$TMPD/out"; then fail never_prefetches "a layer marked wsram pf"; else ok never_prefetches; fi
cli_summary prefetch_priced
