# race.sh - the race detector in cluster SRAM and DRAM (test/data/race/):
# every program runs clean as written (barriers, semaphores and separate
# memories order or separate its accesses; interleaved tiles share no byte);
# with its `; ORDER` lines deleted each reports the data race naming both
# instructions, the memory and the byte ranges; timing-only runs detect it
# too.
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
sed 's/^\.equ C1 16/.equ C1 12/' $D/tiles.s > "$TMPD/tiles_overlap.s"
expect_fail tiles_overlap_race "writes dram bytes \[0x10030, 0x11ff0) while core 0 dma instruction #0" \
    "$ATOLL" sim --chip $A1 "$TMPD/tiles_overlap.s"
cli_summary race
