# asm.sh - `atoll asm` / `atoll disasm`: text -> image -> text -> image gives
# the same bytes, disasm reads text too, errors name file:line and leave no
# output file behind, --chip checks that the program fits.
. test/cli/lib.inc
expect_ok asm_demo "$ATOLL" asm test/cli/prog_demo.s -o "$TMPD/demo.bin"
expect_ok disasm_demo "$ATOLL" disasm "$TMPD/demo.bin" -o "$TMPD/demo2.s"
expect_grep disasm_has_relu 'v.relu dtype=i8 dst=0x100 src=0x0 shape=1,1,1,64' "$TMPD/demo2.s"
expect_grep disasm_has_expect '.expect y_ref dram:0x2000 i8 shape=64 tol=0 hex' "$TMPD/demo2.s"
expect_ok reasm_demo "$ATOLL" asm "$TMPD/demo2.s" -o "$TMPD/demo2.bin"
if cmp -s "$TMPD/demo.bin" "$TMPD/demo2.bin"; then ok round_trip_identical; else fail round_trip_identical "images differ"; fi
expect_ok disasm_text "$ATOLL" disasm test/cli/prog_demo.s
if "$ATOLL" disasm test/cli/prog_demo.s | sed 1d > "$TMPD/a.s" && "$ATOLL" disasm "$TMPD/demo.bin" | sed 1d > "$TMPD/b.s" \
   && cmp -s "$TMPD/a.s" "$TMPD/b.s"; then ok disasm_text_equals_binary; else fail disasm_text_equals_binary "outputs differ"; fi
expect_ok asm_fits_tiny "$ATOLL" asm test/cli/prog_demo.s -o "$TMPD/t.bin" --chip configs/tiny.ini
printf '.core 1\n.engine dma\nend\n' > "$TMPD/two.s"
expect_fail too_many_cores "program uses 2 cores, chip tiny" "$ATOLL" asm "$TMPD/two.s" -o "$TMPD/two.bin" --chip configs/tiny.ini
printf '.data big dram:0x1000000 i8 1\n' > "$TMPD/big.s"
expect_fail beyond_dram "data big ends at 0x1000001, beyond chip tiny" "$ATOLL" asm "$TMPD/big.s" -o "$TMPD/big.bin" --chip configs/tiny.ini
printf '.engine vec\nv.add dtype=i8 dst=0 src=0 src2=0 shape=4 dstride=1 sstride=1\n' > "$TMPD/bad.s"
expect_fail asm_error "bad.s:2: v.add: missing field s2stride" "$ATOLL" asm "$TMPD/bad.s" -o "$TMPD/bad.bin"
if [ ! -e "$TMPD/bad.bin" ] && [ -z "$(ls "$TMPD" | grep tmp)" ]; then ok no_partial_output; else fail no_partial_output "$(ls "$TMPD")"; fi
head -c 100 "$TMPD/demo.bin" > "$TMPD/trunc.bin"
expect_fail disasm_truncated "trunc.bin: checksum mismatch" "$ATOLL" disasm "$TMPD/trunc.bin"
expect_fail asm_usage "usage: atoll asm" "$ATOLL" asm test/cli/prog_demo.s
expect_fail disasm_missing "cannot open" "$ATOLL" disasm "$TMPD/none.bin"
cli_summary asm
