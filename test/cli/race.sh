# race.sh - the race detector in cluster SRAM and DRAM (test/data/race/):
# every program runs clean as written (barriers, semaphores and separate
# memories order or separate its accesses; interleaved tiles share no byte);
# with its `; ORDER` lines deleted each reports the data race naming both
# instructions, the memory and the byte ranges; timing-only runs detect it
# too. noc_pipeline.s (configs/a1-noc.ini) hands data between clusters over
# the NoC: without its data waits or its credits it races in cluster 1's
# SRAM, and on a1 (no cluster links) its peer copy is an illegal instruction.
. test/cli/lib.inc
A1=configs/a1.ini
D=test/data/race
for f in dram dram_sem sram sram_clusters gather pipeline tiles; do
    expect_ok "${f}_ordered_runs" "$ATOLL" sim --chip $A1 $D/$f.s
done
# broken FILE: the program without its ordering
broken() { sed '/; ORDER/d' "$D/$1.s" > "$TMPD/$1_broken.s"; }
for f in dram dram_sem; do
    broken $f
    expect_fail "${f}_unordered_race" "reads dram bytes \[0x10000, 0x11000) while core 0 dma instruction #0 (line 8)" \
        "$ATOLL" sim --chip $A1 "$TMPD/${f}_broken.s"
    expect_grep "${f}_names_reader" "core 1 (cluster 0) dma engine, instruction #0" "$TMPD/out"
    expect_grep "${f}_names_writer_range" "is still writing \[0x10000, 0x11000); no semaphore or barrier orders them" "$TMPD/out"
done
broken dram
expect_fail dram_unordered_timing_only "data race" "$ATOLL" sim --chip $A1 --mode timing "$TMPD/dram_broken.s"
broken sram
expect_fail sram_unordered_race "reads sram bytes \[0x0, 0x1000) of cluster 0 while core 0 dma instruction #0" \
    "$ATOLL" sim --chip $A1 "$TMPD/sram_broken.s"
broken gather
expect_fail gather_index_race "writes dram bytes \[0x1000, 0x1010) while core 1 dma instruction #0 (line 14) \`dma.gather" \
    "$ATOLL" sim --chip $A1 "$TMPD/gather_broken.s"
broken pipeline
expect_fail pipeline_broken_caught "core 0 (cluster 0) dma engine, instruction #1" "$ATOLL" sim --chip $A1 "$TMPD/pipeline_broken.s"
expect_grep pipeline_broken_names_both "writes dram bytes \[0x10000, 0x10400) while core 4 dma instruction #0" "$TMPD/out"
# over the NoC (configs/a1-noc.ini): copies into another cluster's SRAM
# race with that cluster's reads unless its semaphores (signalled by the
# copies when their data has landed) order them; a1 has no cluster links
A1N=configs/a1-noc.ini
expect_ok noc_pipeline_ordered_runs "$ATOLL" sim --chip $A1N $D/noc_pipeline.s
expect_grep noc_pipeline_output_checked "expect z_ref: pass" "$TMPD/out"
broken noc_pipeline
expect_fail noc_pipeline_data_wait_missing "writes sram bytes \[0x1400, 0x2000) of cluster 1 while core 4 dma instruction #5 (line 71)" \
    "$ATOLL" sim --chip $A1N "$TMPD/noc_pipeline_broken.s"
expect_grep noc_pipeline_names_peer_writer "core 1 (cluster 0) dma engine, instruction #3 .*dst=peer@1:0x1400" "$TMPD/out"
sed '/; CREDIT/d' $D/noc_pipeline.s > "$TMPD/noc_credit_broken.s"
expect_fail noc_pipeline_credit_missing "reads sram bytes \[0x1000, 0x2000) of cluster 1 while core 0 dma instruction #7 (line 35) \`dma.copy dtype=i8 dst=peer@1:0x1000" \
    "$ATOLL" sim --chip $A1N "$TMPD/noc_credit_broken.s"
expect_fail noc_pipeline_credit_missing_timing_only "data race" "$ATOLL" sim --chip $A1N --mode timing "$TMPD/noc_credit_broken.s"
expect_fail noc_needs_cluster_links "illegal instruction at cycle 230: core 0 (cluster 0) dma engine, instruction #1 (.*noc_pipeline.s:30) \`dma.copy dtype=i8 dst=peer@1:0x0" \
    "$ATOLL" sim --chip $A1 $D/noc_pipeline.s
expect_grep noc_needs_cluster_links_says_why "field dst: peer@1 names another cluster's SRAM, but chip a1 has no cluster links (\[noc\] cluster_links = 0)" "$TMPD/out"
sed 's/^\.equ C1 16/.equ C1 12/' $D/tiles.s > "$TMPD/tiles_overlap.s"
expect_fail tiles_overlap_race "writes dram bytes \[0x10030, 0x11ff0) while core 0 dma instruction #0" \
    "$ATOLL" sim --chip $A1 "$TMPD/tiles_overlap.s"
cli_summary race
