# prefetch.sh - the weight prefetch across a segment's barrier
# (docs/backend.md, "Weight prefetch across the barrier"): resnet20_cifar
# on a 2-cluster a1 with 32 KiB of LMEM and activations in SRAM bands,
# where several convolutions stage their weights in cluster SRAM. With
# --prefetch auto (the default) the layers before them issue their first
# staging copies (or their first tiles' weight loads): --groups marks
# such layers ` pf`, the output is still the interpreter's (atoll compare:
# full mode, race detector on over LMEM, SRAM and DRAM), the estimate
# equals the simulated cycles within 2% and is below --prefetch never's
# (which marks none); resnet20_cifar and mobilenetv2_035 still compile
# and match the interpreter on a1, tiny and edge16k; a bad mode is
# refused naming the option.
. test/cli/lib.inc
sed 's/^clusters = 4 /clusters = 2 /; s/^bytes = 512K /bytes = 32K /' configs/a1.ini > "$TMPD/a1x2s.ini"
M=models/resnet20_cifar
for pf in auto never; do
    expect_ok ${pf}_compiles "$ATOLL" compile $M.onnx --chip "$TMPD/a1x2s.ini" --sram-activations bands --prefetch $pf \
        --groups -o "$TMPD/$pf.abm"
    cp "$TMPD/out" "$TMPD/sum_$pf.txt"
done
expect_grep auto_marks_prefetched " wsram [a-z ]*pf " "$TMPD/sum_auto.txt"
if grep -q " pf " "$TMPD/sum_never.txt"; then fail never_marks_none "$(grep " pf " "$TMPD/sum_never.txt")"; else ok never_marks_none; fi
expect_ok auto_matches_interpreter "$ATOLL" compare $M.onnx "$TMPD/auto.abm" --chip "$TMPD/a1x2s.ini" \
    --input $M.ref.npz --expect $M.ref.npz
est=$(sed -n 's/.*estimated cycles : \([0-9]*\).*/\1/p' "$TMPD/sum_auto.txt")
never=$(sed -n 's/.*estimated cycles : \([0-9]*\).*/\1/p' "$TMPD/sum_never.txt")
sim=$("$ATOLL" run "$TMPD/auto.abm" --chip "$TMPD/a1x2s.ini" --timing-only 2> /dev/null | sed -n 's/.* in \([0-9]*\) cycles.*/\1/p')
if [ -n "$est" ] && [ -n "$sim" ] && [ $((est * 100)) -ge $((sim * 98)) ] && [ $((est * 100)) -le $((sim * 102)) ]; then
    ok estimate; else fail estimate "estimate $est, simulated $sim"; fi
if [ -n "$est" ] && [ -n "$never" ] && [ "$est" -lt "$never" ]; then ok faster_than_never
else fail faster_than_never "auto $est cycles, never $never"; fi
# the sanitizer builds (BUILD=*san*) run the cases marked full only in the
# plain pass (CI time: the same code paths, less simulated work)
full=1
case "$BUILD" in *san*) full=0;; esac
models="resnet20_cifar mobilenetv2_035"; [ $full = 1 ] || models=resnet20_cifar
for m in $models; do
    for chip in a1 tiny edge16k; do
        expect_ok ${m}_${chip}_compiles "$ATOLL" compile models/$m.onnx --chip configs/$chip.ini --groups -o "$TMPD/$chip.abm"
        expect_ok ${m}_${chip}_matches_interpreter "$ATOLL" compare models/$m.onnx "$TMPD/$chip.abm" --chip configs/$chip.ini \
            --input models/$m.ref.npz --expect models/$m.ref.npz
    done
done
expect_fail bad_prefetch "--prefetch 'sometimes': use auto or never" "$ATOLL" compile $M.onnx --prefetch sometimes \
    -o "$TMPD/bad.abm"
[ ! -e "$TMPD/bad.abm" ] && ok no_partial_file || fail no_partial_file "bad.abm written"
cli_summary prefetch
