# sram_acts.sh - activations in cluster SRAM with placement chip
# (docs/backend.md, "Activations in cluster SRAM"): on a chip of one
# cluster, `--sram-activations auto` (the default) keeps the activations
# that fit in the cluster's SRAM; the summary says how many bytes, the
# outputs stay the interpreter's (atoll compare, race detector on), and a
# run moves fewer DRAM bytes than with `never` (the plan before). On a chip
# whose clusters are joined by NoC links (a1-noc) every cluster holds a
# copy: each SRAM write is followed by copies into the other clusters'
# SRAM (peer@C: operands in the program), the answers stay the
# interpreter's with the race detector on, and DRAM traffic drops. It stays
# off where it cannot hold: with --group none, and on a chip whose clusters
# cannot reach each other's SRAM (a1: no copies; auto may choose row bands
# there, sram_bands.sh). Bad values are refused.
. test/cli/lib.inc
TINY=configs/tiny.ini
# dram_bytes ABM: the DRAM bytes of a timing-only run (run --profile)
dram_bytes() {
    "$ATOLL" run "$1" --input models/resnet20_cifar.ref.npz --timing-only --profile 2> /dev/null |
        sed -n 's/.* MACs, \([0-9]*\) DRAM bytes.*/\1/p'
}
# auto is the default: compiled without the option, as prefetch.sh compiles
# it, so that a test pass compiles it once (test/cli/cached_atoll)
for mode in auto never; do
    opt="--sram-activations never"; [ $mode = auto ] && opt=--groups
    expect_ok "compiles_$mode" "$ATOLL" compile models/resnet20_cifar.onnx --chip $TINY $opt -o "$TMPD/$mode.abm"
    cp "$TMPD/out" "$TMPD/sum_$mode.txt"
    expect_ok "matches_interpreter_$mode" "$ATOLL" compare models/resnet20_cifar.onnx "$TMPD/$mode.abm" \
        --input models/resnet20_cifar.ref.npz --expect models/resnet20_cifar.ref.npz
done
expect_grep summary_sram "SRAM             : [1-9][0-9]* bytes of activations in cluster SRAM$" "$TMPD/sum_auto.txt"
expect_grep summary_no_dram_tensor "in DRAM          : 0 intermediate tensors" "$TMPD/sum_auto.txt"
if grep -q "^  SRAM  " "$TMPD/sum_never.txt"; then fail never_keeps_dram "SRAM line with never"; else ok never_keeps_dram; fi
a=$(dram_bytes "$TMPD/auto.abm"); n=$(dram_bytes "$TMPD/never.abm")
if [ -n "$a" ] && [ -n "$n" ] && [ "$a" -lt "$n" ]; then ok fewer_dram_bytes; else fail fewer_dram_bytes "auto $a, never $n"; fi
# a1-noc: a copy in every cluster
for mode in auto never; do
    expect_ok "noc_compiles_$mode" "$ATOLL" compile models/resnet20_cifar.onnx --chip configs/a1-noc.ini --sram-activations $mode -o "$TMPD/noc_$mode.abm"
    cp "$TMPD/out" "$TMPD/noc_sum_$mode.txt"
    expect_ok "noc_matches_interpreter_$mode" "$ATOLL" compare models/resnet20_cifar.onnx "$TMPD/noc_$mode.abm" \
        --input models/resnet20_cifar.ref.npz --expect models/resnet20_cifar.ref.npz
done
expect_grep noc_summary "bytes of activations in cluster SRAM (a copy in every cluster: each store reaches them all)" "$TMPD/noc_sum_auto.txt"
# the copies are in the program (the trace names every instruction)
"$ATOLL" run "$TMPD/noc_auto.abm" --input models/resnet20_cifar.ref.npz --trace "$TMPD/noc.json" > /dev/null 2>&1
expect_grep noc_peer_copies "dma.copy dtype=f32 dst=peer@3:[^ ]* src=lmem:" "$TMPD/noc.json"
a=$(dram_bytes "$TMPD/noc_auto.abm"); n=$(dram_bytes "$TMPD/noc_never.abm")
if [ -n "$a" ] && [ -n "$n" ] && [ "$a" -lt "$n" ]; then ok noc_fewer_dram_bytes; else fail noc_fewer_dram_bytes "auto $a, never $n"; fi
# off with --group none (its plan is recorded: abm_identity.sh) and on a1
"$ATOLL" compile models/resnet20_cifar.onnx --chip $TINY --group none -o "$TMPD/x.abm" > "$TMPD/sum.txt" 2>&1
if grep -q "^  SRAM  " "$TMPD/sum.txt"; then fail off_with_group_none "SRAM line"; else ok off_with_group_none; fi
"$ATOLL" compile models/resnet20_cifar.onnx --chip configs/a1.ini --groups -o "$TMPD/x.abm" > "$TMPD/sum.txt" 2>&1
if grep -q "a copy in every cluster" "$TMPD/sum.txt"; then fail off_on_unlinked_clusters "copies on a1"; else ok off_on_unlinked_clusters; fi
expect_fail bad_mode "--sram-activations 'always': use auto, never, bands or rows" \
    "$ATOLL" compile models/resnet20_cifar.onnx --sram-activations always -o "$TMPD/bad.abm"
cli_summary sram_acts
