# stage_profile.sh - what the command line shows of a staged schedule
# (docs/firmware.md, atoll run): `atoll compile --stages` gives each stage's
# expected matrix-unit utilisation; `atoll run --profile` prints one row per
# stage (layers, micro-batch, instances, cores, estimated and simulated
# cycles, MACs, DRAM bytes, utilisation, the tensor it reads) and
# `--trace` has a slice per stage on every cluster; `atoll inspect` lists
# the stages section and the stages; a model compiled without stages
# shows none of these. resnet20_cifar at batch 8 on a1, stage 0
# one image per instance, stage 1 two; the values themselves are checked
# by test/compiler/test_stage_profile.c.
. test/cli/lib.inc
CUT=/stages/stages.5/relu_1/Relu_output_0
expect_ok staged_compiles "$ATOLL" compile models/resnet20_cifar.onnx --chip configs/a1.ini --batch 8 --stage-plan "1,$CUT:2" --stages \
    -o "$TMPD/s.abm"
expect_grep stages_est_util_header "DRAM est util  reads$" "$TMPD/out"
# (the boundary read from the clusters' SRAM: docs/backend.md, "Boundaries in SRAM")
expect_grep stages_est_util_row1 "^    1  [0-9]*-[0-9]* .* [0-9][0-9]*\.[0-9]%  $CUT (in SRAM)$" "$TMPD/out"
expect_ok staged_inspect "$ATOLL" inspect "$TMPD/s.abm"
expect_grep inspect_stages_section "  stages  *[0-9]* .* OK$" "$TMPD/out"
expect_grep inspect_stage1 "      stage 1: layers [0-9]*-[0-9]*, 4 instances of 2 images on 16 cores (reads '$CUT')" "$TMPD/out"
expect_ok staged_runs "$ATOLL" run "$TMPD/s.abm" --timing-only --profile --trace "$TMPD/t.json"
expect_grep profile_stage_header "^ stage layers     mb  inst cores       est    cycles      span   MACs   DRAM   util  reads$" "$TMPD/out"
expect_grep profile_stage0 "^     0 0-[0-9]*  *1     8    16 .* [0-9][0-9]*\.[0-9]%  the inputs$" "$TMPD/out"
expect_grep profile_stage1 "^     1 [0-9]*-[0-9]*  *2     4    16 .* [0-9][0-9]*\.[0-9]%  /stages.5/relu_1/Relu_output_0$" "$TMPD/out"
n=$(grep -c '"cat":"stage"' "$TMPD/t.json")
if [ "$n" = 8 ]; then ok trace_stage_slices; else fail trace_stage_slices "$n stage slices, expected 2 stages x 4 clusters"; fi
expect_grep trace_cluster_track '"name":"cluster 3: stages"' "$TMPD/t.json"
# without stages: no stage rows, no stage slices
expect_ok uniform_compiles "$ATOLL" compile models/resnet20_cifar.onnx --batch 8 --placement split --micro-batch 2 -o "$TMPD/u.abm"
expect_ok uniform_runs "$ATOLL" run "$TMPD/u.abm" --timing-only --profile --trace "$TMPD/u.json"
if grep -q '^ stage layers' "$TMPD/out"; then fail uniform_no_stage_table "a stage table"; else ok uniform_no_stage_table; fi
if grep -q '"cat":"stage"' "$TMPD/u.json"; then fail uniform_no_stage_slices "stage slices"; else ok uniform_no_stage_slices; fi
cli_summary stage_profile
