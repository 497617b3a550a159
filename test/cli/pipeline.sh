# pipeline.sh - placement pipeline (docs/backend.md, "Pipelines over
# clusters") on configs/a1-noc.ini (a1 with cluster links): the stages of
# resnet20_cifar, mobilenetv2_035 and lenet5 at batch 4 and 8 pipelined over
# the clusters, each stage's output sent over the NoC into the next stage's
# SRAM, give the bytes of placement chip for every image (each differs, so
# an instance reading another's buffer is caught), run clean in full
# simulation (the race detector covers the peer copies and the buffers they
# fill) and move their boundaries cluster to cluster, not through DRAM;
# refused with a clear message without cluster links (a1); auto prices it
# against chip and split.
. test/cli/lib.inc
GEN=$BUILD/test/host/test_run_gen
NOC=configs/a1-noc.ini
# same NAME MODEL BATCH: pipeline and chip outputs identical
same() {
    id=$1; m=$2; b=$3
    "$GEN" --extract models/$m.ref.npz input "$TMPD/one.npy" > /dev/null 2>&1
    "$GEN" --vary "$TMPD/one.npy" $b "$TMPD/in_$id.npy" > /dev/null 2>&1
    expect_ok "${id}_pipeline_compiles" "$ATOLL" compile models/$m.onnx --chip $NOC --batch $b --placement pipeline -o "$TMPD/p_$id.abm"
    expect_grep "${id}_pipeline_says_so" "placement        : pipeline of [2-8] stages on [2-4] clusters" "$TMPD/out"
    expect_grep "${id}_boundary_over_noc" "stage 1        : layers .* (reads '.*' from [12] buffers\? in its SRAM, sent over the NoC)" "$TMPD/out"
    expect_ok "${id}_chip_compiles" "$ATOLL" compile models/$m.onnx --chip $NOC --batch $b --placement chip -o "$TMPD/c_$id.abm"
    expect_ok "${id}_pipeline_runs" "$ATOLL" run "$TMPD/p_$id.abm" --input "$TMPD/in_$id.npy" --output "$TMPD/p_$id.npy" --stats "$TMPD/p_$id.json"
    expect_ok "${id}_chip_runs" "$ATOLL" run "$TMPD/c_$id.abm" --input "$TMPD/in_$id.npy" --output "$TMPD/c_$id.npy"
    expect_ok "${id}_identical" cmp "$TMPD/p_$id.npy" "$TMPD/c_$id.npy"
    if grep -q '"peer":[1-9]' "$TMPD/p_$id.json"; then ok "${id}_moved_cluster_to_cluster"; else fail "${id}_moved_cluster_to_cluster" "no peer bytes: $(grep -o '"bytes": {[^}]*}' "$TMPD/p_$id.json")"; fi
}
# the sanitizer builds (BUILD=*san*) run the cases marked full only in the
# plain pass: the same code paths (two and three stages, one and two
# clusters a stage) at a third of the compile time
full=1
case "$BUILD" in *san*) full=0;; esac
same lenet5_b4 lenet5 4
same lenet5_b8 lenet5 8
same resnet20_b4 resnet20_cifar 4
[ $full = 1 ] && same resnet20_b8 resnet20_cifar 8
[ $full = 1 ] && same mobilenet_b4 mobilenetv2_035 4
[ $full = 1 ] && same mobilenet_b8 mobilenetv2_035 8
# without cluster links: refused (placement split's staged schedule goes through DRAM instead)
expect_fail no_links_refused "--placement pipeline: chip a1 has no cluster links (\[noc\] cluster_links = 0)" \
    "$ATOLL" compile models/lenet5.onnx --chip configs/a1.ini --batch 4 --placement pipeline -o "$TMPD/x.abm"
[ ! -e "$TMPD/x.abm" ] && ok no_links_no_file || fail no_links_no_file "a refused compile left $TMPD/x.abm"
expect_fail batch_1_refused "--placement pipeline: batch 1 in instances of 1 images: fewer than two instances" \
    "$ATOLL" compile models/lenet5.onnx --chip $NOC --placement pipeline -o "$TMPD/x.abm"
expect_fail keep_activations_refused "--placement pipeline: --keep-activations keeps every activation in DRAM" \
    "$ATOLL" compile models/lenet5.onnx --chip $NOC --batch 4 --placement pipeline --keep-activations -o "$TMPD/x.abm"
expect_fail bad_placement "use auto, chip, split or pipeline" "$ATOLL" compile models/lenet5.onnx --placement pipe -o "$TMPD/x.abm"
# auto prices the pipeline too: on lenet5 at batch 4 with one micro-batch
# (--schedule uniform; the staged search runs its classifier as a chip
# stage) chip wins (its activations in every cluster's SRAM) and says what
# split and the pipeline would cost; resnet20_cifar at batch 8 goes split
expect_ok auto_b4_compiles "$ATOLL" compile models/lenet5.onnx --chip $NOC --batch 4 --schedule uniform -o "$TMPD/a.abm"
expect_grep auto_b4_prices_all "placement        : chip (the cost model prices it at [0-9]* cycles, split at [0-9]*, pipeline at [0-9]*)" "$TMPD/out"
expect_ok auto_b8_compiles "$ATOLL" compile models/resnet20_cifar.onnx --chip $NOC --batch 8 -o "$TMPD/a.abm"
expect_grep auto_b8_chose_split "placement        : split" "$TMPD/out"
# on a1 (no cluster links) auto does not price one: the summary is as before
expect_ok auto_a1_compiles "$ATOLL" compile models/lenet5.onnx --chip configs/a1.ini --batch 4 --schedule uniform -o "$TMPD/a.abm"
expect_grep auto_a1_no_pipeline "placement        : chip (the cost model prices it at [0-9]* cycles, split at [0-9]*)$" "$TMPD/out"
cli_summary pipeline
