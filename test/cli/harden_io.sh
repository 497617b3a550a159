# harden_io.sh - issue 15, files: only regular files are read and never
# beyond a limit; .npz archives are checked before they are inflated;
# outputs never clobber an input or each other, follow symbolic links,
# write devices and FIFOs directly; numeric options are checked in full;
# messages say what is wrong (docs/conventions.md, "Input limits").
. test/cli/lib.inc
H=test/data/harden
TINY=configs/tiny.ini
T="timeout 60"
# a private /dev/null where we may make one (root): a regression that renames
# an output over a device then harms only this test's files, not the system's
if mknod "$TMPD/null" c 1 3 2> /dev/null; then NULLDEV=$TMPD/null; else NULLDEV=/dev/null; fi
"$ATOLL" compile $H/relu14.onnx --chip $TINY -o "$TMPD/r.abm" > /dev/null 2>&1 || fail compile_relu14 "cannot compile"

# items 8 and 14: special files and directories as inputs are refused by name (they were read until out of memory)
expect_fail inspect_dev_zero "/dev/zero: is a character device; give a regular file" $T "$ATOLL" inspect /dev/zero
expect_fail chip_dev_zero "/dev/zero: is a character device" $T "$ATOLL" run "$TMPD/r.abm" --chip /dev/zero --input $H/x14.npy
expect_fail input_dev_zero "/dev/zero: is a character device" $T "$ATOLL" run "$TMPD/r.abm" --chip $TINY --input /dev/zero
expect_fail input_directory "$TMPD: is a directory; give a regular file" "$ATOLL" asm "$TMPD" -o "$TMPD/x.bin"
mkfifo "$TMPD/in.fifo"
expect_fail input_fifo_never_blocks "in.fifo: is a FIFO" $T "$ATOLL" inspect "$TMPD/in.fifo"
expect_fail file_limit "x14.npy: is 144 bytes, more than the limit of 120 bytes for a file read whole (raise with ATOLL_MAX_FILE_BYTES)" env ATOLL_MAX_FILE_BYTES=120 "$ATOLL" interp $H/relu14.onnx --input $H/x14.npy
# item 14: a truncated .npy says so instead of "out of memory"
expect_fail npy_truncated "data is truncated: 8 bytes after the header, the shape needs 4294967296" "$ATOLL" interp $H/relu_dyn.onnx --input $H/truncated_2p30.npy

# item 6: .npz members are checked against the model before anything is inflated
expect_fail npz_bomb_run "member 'x.npy' declares 67108992 bytes, more than the 65580 its array can take" $T "$ATOLL" run "$TMPD/r.abm" --chip $TINY --input $H/npz_bomb_64m.npz
expect_fail npz_bomb_interp "member 'x.npy' declares 67108992 bytes, more than the 65580 its array can take" $T "$ATOLL" interp $H/relu14.onnx --input $H/npz_bomb_64m.npz
expect_fail npz_entries_run "declares 1048704 bytes, more than" $T "$ATOLL" run "$TMPD/r.abm" --chip $TINY --input $H/npz_bomb_entries.npz
# where no shape is known the inflate limit applies
expect_fail npz_inflate_limit "more than the limit of 524288 bytes inflated from one .npz (raise with ATOLL_MAX_INFLATE_BYTES)" env ATOLL_MAX_INFLATE_BYTES=512K "$ATOLL" interp $H/relu_dyn.onnx --input $H/npz_bomb_entries.npz
expect_ok npz_inflate_limit_raised env ATOLL_MAX_INFLATE_BYTES=2M "$ATOLL" interp $H/relu_dyn.onnx --input $H/npz_bomb_entries.npz
# an .abm whose sections inflate beyond the limit
expect_fail abm_decode_limit "more than the limit of 64 bytes decoded from one .abm (raise with ATOLL_MAX_ABM_DECODE_BYTES)" env ATOLL_MAX_ABM_DECODE_BYTES=64 "$ATOLL" inspect "$TMPD/r.abm"
expect_fail abm_decode_limit_compare "decoded from one .abm" env ATOLL_MAX_ABM_DECODE_BYTES=64 "$ATOLL" compare $H/relu14.onnx "$TMPD/r.abm" --chip $TINY --input $H/x14.npy --all
"$ATOLL" compile test/data/convbn.onnx --chip $TINY -o "$TMPD/cb.abm" > /dev/null 2>&1
env ATOLL_MAX_INFLATE_BYTES=1 "$ATOLL" inspect --weights "$TMPD/cb.abm" > "$TMPD/w.out" 2>&1
expect_grep inspect_blob_limit "unchecked (larger than ATOLL_MAX_INFLATE_BYTES)" "$TMPD/w.out"
# a real compression bomb: 257 KB whose weight blob inflates to 256 MiB
# (test_abm_robust --write-bomb); inspect reads it without inflating the
# weights (in 300 MB of address space: plain build, ASan reserves more),
# and --weights leaves a blob above the limit unchecked
if "$BUILD/test/isa/test_abm_robust" --write-bomb "$TMPD/bomb.abm" > "$TMPD/out" 2>&1 && [ "$(wc -c < "$TMPD/bomb.abm")" -lt 400000 ]
then ok abm_bomb_written; else fail abm_bomb_written "$(head -c 300 "$TMPD/out")"; fi
case "$BUILD" in *san*) ;; *)
    ( ulimit -v 300000; "$ATOLL" inspect "$TMPD/bomb.abm" ) > "$TMPD/out" 2>&1
    expect_grep abm_bomb_inspect_small "memory plan: weights 268436224 bytes" "$TMPD/out";;
esac
env ATOLL_MAX_INFLATE_BYTES=16M "$ATOLL" inspect --weights "$TMPD/bomb.abm" > "$TMPD/out" 2>&1
expect_grep abm_bomb_blob_unchecked "raw 268435456 .* unchecked (larger than ATOLL_MAX_INFLATE_BYTES)" "$TMPD/out"

# item 9: numeric options are checked in full
expect_fail compare_rtol_nan "--rtol 'nan' is not a finite number" "$ATOLL" compare $H/relu14.onnx "$TMPD/r.abm" --chip $TINY --input $H/x14.npy --rtol nan
expect_fail compare_atol_inf "--atol 'inf' is not a finite number" "$ATOLL" compare $H/relu14.onnx "$TMPD/r.abm" --chip $TINY --input $H/x14.npy --atol inf
expect_fail compare_rtol_negative "--rtol -1 is out of range" "$ATOLL" compare $H/relu14.onnx "$TMPD/r.abm" --chip $TINY --input $H/x14.npy --rtol -1
expect_fail run_max_cycles_negative "--max-cycles '-1' is not a whole number" "$ATOLL" run "$TMPD/r.abm" --chip $TINY --input $H/x14.npy --max-cycles -1
expect_fail run_max_cycles_overflow "--max-cycles 99999999999999999999999 is out of range" "$ATOLL" run "$TMPD/r.abm" --chip $TINY --input $H/x14.npy --max-cycles 99999999999999999999999
expect_fail run_fw_heap_negative "--fw-heap '-5' is not a whole number" "$ATOLL" run "$TMPD/r.abm" --chip $TINY --input $H/x14.npy --fw-heap -5
expect_fail run_max_work_junk "--max-work '12x' is not a whole number" "$ATOLL" run "$TMPD/r.abm" --chip $TINY --input $H/x14.npy --max-work 12x
expect_ok run_limits_accepted "$ATOLL" run "$TMPD/r.abm" --chip $TINY --input $H/x14.npy --max-cycles 100000 --max-work 1000000 --fw-heap 1M
expect_fail run_max_work_small "host work limit exceeded" "$ATOLL" run "$TMPD/r.abm" --chip $TINY --input $H/x14.npy --max-work 2

# item 11: an output that is an input or another output is refused, and nothing is written
cp $H/x14.npy "$TMPD/in.npy"
expect_fail run_output_is_input "--output $TMPD/in.npy is also the --input" "$ATOLL" run "$TMPD/r.abm" --chip $TINY --input "$TMPD/in.npy" --output "$TMPD/in.npy"
if cmp -s $H/x14.npy "$TMPD/in.npy"; then ok run_input_kept; else fail run_input_kept "the input changed"; fi
expect_fail run_stats_is_output "--stats $TMPD/o.npz is also given to --output" "$ATOLL" run "$TMPD/r.abm" --chip $TINY --input "$TMPD/in.npy" --output "$TMPD/o.npz" --stats "$TMPD/o.npz"
if [ ! -e "$TMPD/o.npz" ]; then ok run_clash_writes_nothing; else fail run_clash_writes_nothing "o.npz written"; fi
cp test/cli/prog_demo.s "$TMPD/p.s"
expect_fail asm_over_source "-o $TMPD/p.s is also the program" "$ATOLL" asm "$TMPD/p.s" -o "$TMPD/p.s"
expect_fail asm_over_source_via_link "is also the program" sh -c "ln -s p.s '$TMPD/alias.s' && '$ATOLL' asm '$TMPD/p.s' -o '$TMPD/alias.s'"
if cmp -s test/cli/prog_demo.s "$TMPD/p.s"; then ok asm_source_kept; else fail asm_source_kept "p.s changed"; fi
expect_fail sim_trace_is_stats "is also given to --trace" "$ATOLL" sim --chip $TINY "$TMPD/p.s" --trace "$TMPD/t.json" --stats "$TMPD/t.json"
expect_fail disasm_over_input "is also the program" "$ATOLL" disasm "$TMPD/p.s" -o "$TMPD/p.s"
expect_fail output_name_empty "the output file name is empty" "$ATOLL" asm "$TMPD/p.s" -o ''
expect_ok two_outputs_to_one_device "$ATOLL" run "$TMPD/r.abm" --chip $TINY --input "$TMPD/in.npy" --output "$NULLDEV" --stats "$NULLDEV"

# item 12: symbolic links are followed, devices and FIFOs written directly, never replaced
"$ATOLL" asm "$TMPD/p.s" -o "$TMPD/want.bin" > /dev/null 2>&1
ln -s target.bin "$TMPD/link.bin"
expect_ok asm_to_symlink "$ATOLL" asm "$TMPD/p.s" -o "$TMPD/link.bin"
if [ -L "$TMPD/link.bin" ] && cmp -s "$TMPD/want.bin" "$TMPD/target.bin"; then ok symlink_kept_target_written
else fail symlink_kept_target_written "$(ls -l "$TMPD" | grep -E 'link|target')"; fi
mkfifo "$TMPD/out.fifo"
# (a reader that gives up: with outputs renamed over the FIFO, it would wait forever)
timeout 20 cat "$TMPD/out.fifo" > "$TMPD/from_fifo.bin" & reader=$!
expect_ok asm_to_fifo $T "$ATOLL" asm "$TMPD/p.s" -o "$TMPD/out.fifo"
wait $reader
if [ -p "$TMPD/out.fifo" ] && cmp -s "$TMPD/want.bin" "$TMPD/from_fifo.bin"; then ok fifo_written_directly
else fail fifo_written_directly "$(ls -l "$TMPD/out.fifo")"; fi
# a character device stays a device
expect_ok asm_to_char_device "$ATOLL" asm "$TMPD/p.s" -o "$NULLDEV"
if [ -c "$NULLDEV" ]; then ok char_device_kept; else fail char_device_kept "$(ls -l "$NULLDEV")"; fi
if ls "$TMPD" | grep -q '\.tmp\.'; then fail no_temporaries_left "$(ls "$TMPD")"; else ok no_temporaries_left; fi
mkdir "$TMPD/outdir"
expect_fail output_directory "outdir: is a directory" "$ATOLL" asm "$TMPD/p.s" -o "$TMPD/outdir"
cli_summary harden_io
