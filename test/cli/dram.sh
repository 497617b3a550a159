# dram.sh - `atoll dram`: the banked DRAM model on a request trace (time,
# rows, latency against hand-worked DDR4-3200 figures), the check against
# Ramulator2 (every DDR4 run within bounds, the table in docs/timing.md in
# step with it) and the errors.
. test/cli/lib.inc
DDR4=configs/dram/ddr4-3200.ini
# four reads of one row, then one of another row of the same bank: one miss,
# three hits, one conflict; the first read's data after tRCD + CL + BL
printf 'LD 0x0\nLD 0x40\nLD 0x80\nLD 0xc0\nLD 0x%x\n' $((1 << 27)) > "$TMPD/five.trace"
expect_ok five_reads "$ATOLL" dram "$TMPD/five.trace" --chip $DDR4
cp "$TMPD/out" "$TMPD/five.txt"
expect_grep five_rows 'rows  *3 hits, 1 misses, 1 conflicts' "$TMPD/five.txt"
expect_grep five_commands 'commands  *2 ACT, 1 PRE, 0 REF' "$TMPD/five.txt"
expect_grep five_requests '5 requests (5 reads, 0 writes), 320 bytes' "$TMPD/five.txt"
expect_ok five_json "$ATOLL" dram "$TMPD/five.trace" --chip $DDR4 --json
expect_grep five_json_hits '"row_hits": 3, "row_misses": 1, "row_conflicts": 1' "$TMPD/out"
# one read of a closed bank alone: ACT, then RD tRCD later, data CL + BL after
# it: done at 22 + 22 + 4 = cycle 48, 49 cycles; latency 49 counting its arrival cycle
printf 'LD 0x1000\n' > "$TMPD/one.trace"
expect_ok one_read "$ATOLL" dram "$TMPD/one.trace" --chip $DDR4
expect_grep one_time 'time  *49 DRAM cycles = 30.6 ns' "$TMPD/out"
expect_grep one_latency 'read latency  *49.00 cycles' "$TMPD/out"
# a read of a line still in the write queue is answered from it (the first
# write activates its row and leaves the queue; the second, to another row
# of that bank, waits in it)
printf 'ST 0x0\nST 0x%x\nLD 0x%x\n' $((1 << 27)) $((1 << 27)) > "$TMPD/fwd.trace"
expect_ok forward "$ATOLL" dram "$TMPD/fwd.trace" --chip $DDR4
expect_grep forward_latency 'read latency  *2.00 cycles' "$TMPD/out"
# the check against Ramulator2: every DDR4 run within 10% / 10 points, and
# docs/timing.md carries the table it prints
expect_ok validate "$ATOLL" dram --validate test/data/dram
cp "$TMPD/out" "$TMPD/valid.txt"
expect_grep validate_ddr4 'DDR4: 14 of 14 runs within 10%' "$TMPD/valid.txt"
sed -n '/^| DRAM preset /,$p' "$TMPD/valid.txt" > "$TMPD/table.md"
sed -n '/^| DRAM preset /,/^<!-- END generated:dram_validation/p' docs/timing.md | sed '$d' > "$TMPD/doc.md"
if [ -s "$TMPD/table.md" ] && diff -u "$TMPD/doc.md" "$TMPD/table.md" > "$TMPD/diff"; then ok validation_table_in_step
else fail validation_table_in_step "docs/timing.md differs from 'atoll dram --validate test/data/dram' (regenerate with --doc docs/timing.md): $(head -c 600 "$TMPD/diff")"; fi
# a manifest whose hash does not match the generated trace is an error
mkdir -p "$TMPD/ref"
cp test/data/dram/results.csv "$TMPD/ref/"
sed 's/^DDR4,seq_read,\*,\(.*\),[0-9a-f]*$/DDR4,seq_read,*,\1,00/' test/data/dram/trace_manifest.csv > "$TMPD/ref/trace_manifest.csv"
expect_fail validate_bad_hash "the generated DDR4 trace seq_read has SHA-256 3f77a299" "$ATOLL" dram --validate "$TMPD/ref"
# errors
printf 'LD 0x0\nRD 0x40\n' > "$TMPD/bad.trace"
expect_fail bad_op "bad.trace:2: expected 'LD ADDRESS' or 'ST ADDRESS', got 'RD 0x40'" "$ATOLL" dram "$TMPD/bad.trace" --chip $DDR4
printf 'LD 0xZZ\n' > "$TMPD/bad2.trace"
expect_fail bad_addr "bad2.trace:1: '0xZZ' is not an address" "$ATOLL" dram "$TMPD/bad2.trace" --chip $DDR4
printf 'LD 0x40 7\n' > "$TMPD/bad3.trace"
expect_fail bad_extra "bad3.trace:1: unexpected '7' after the address" "$ATOLL" dram "$TMPD/bad3.trace" --chip $DDR4
: > "$TMPD/empty.trace"
expect_fail empty_trace "empty.trace: no requests" "$ATOLL" dram "$TMPD/empty.trace" --chip $DDR4
expect_fail no_trace_file "nope.trace: cannot open" "$ATOLL" dram "$TMPD/nope.trace" --chip $DDR4
expect_fail no_chip "usage: atoll dram" "$ATOLL" dram "$TMPD/five.trace"
expect_fail bad_option "unknown option '--frob'" "$ATOLL" dram --frob
expect_fail validate_no_dir "nodir/results.csv: cannot open" "$ATOLL" dram --validate "$TMPD/nodir"
cli_summary dram
