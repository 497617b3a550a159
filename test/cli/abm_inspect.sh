# abm_inspect.sh - `atoll inspect` and `atoll inspect --combine` on sample
# models written by the test-only generator build/.../test/isa/test_abm_gen.
. test/cli/lib.inc
GEN=$BUILD/test/isa/test_abm_gen
"$GEN" --write "$TMPD" || { fail generate "test_abm_gen --write failed"; cli_summary abm_inspect; exit 1; }

expect_ok inspect_valid "$ATOLL" inspect "$TMPD/a.abm"
cp "$TMPD/out" "$TMPD/a.txt"
expect_grep shows_chip "chip:     0xa1c0ffee12345678" "$TMPD/a.txt"
expect_grep shows_net "net 'resnet': 2 variants" "$TMPD/a.txt"
expect_grep shows_variant "variant 1: batch 4, 2 cores" "$TMPD/a.txt"
expect_grep shows_input "input  input  *int8  \[4,3,8,8\] nchw  scale 0.05 zero_point -3" "$TMPD/a.txt"
expect_grep shows_output "output logits  *fp32  \[1,16\]" "$TMPD/a.txt"
expect_grep shows_memplan "memory plan: weights 768 bytes, activations 8384 bytes, io 1024 bytes" "$TMPD/a.txt"
expect_grep shows_checksums "tensors .* OK" "$TMPD/a.txt"
expect_grep shows_metadata "options:  -O2 --batch 1,4" "$TMPD/a.txt"

expect_ok inspect_cmds "$ATOLL" inspect --cmds "$TMPD/a.abm"
expect_grep cmds_per_core "core 1    dma 2       matrix 3       vector 4" "$TMPD/out"
expect_ok inspect_weights "$ATOLL" inspect --weights "$TMPD/a.abm"
expect_grep weights_summary "weights: 3 blobs, raw 752 bytes" "$TMPD/out"
expect_grep weights_blob_ok "blob 2 .* none .* OK" "$TMPD/out"

expect_fail bad_checksum "1 checksum BAD" "$ATOLL" inspect --cmds "$TMPD/badcrc.abm"
expect_grep bad_checksum_names_section "weight_data .* BAD" "$TMPD/out"
expect_grep bad_checksum_still_describes "net 'tiny': 1 variant" "$TMPD/out"
expect_fail bad_blob "weight blob checksum BAD" "$ATOLL" inspect --weights "$TMPD/badcrc.abm"
expect_grep bad_blob_named "blob 2 .* BAD" "$TMPD/out"
expect_fail bad_reference "cannot describe further: section 'tensors' record 1 field 'blob'" "$ATOLL" inspect "$TMPD/badref.abm"
expect_grep bad_reference_lists_sections "weight_data .* OK" "$TMPD/out"
expect_fail truncated "truncated" "$ATOLL" inspect "$TMPD/truncated.abm"
expect_fail bad_version "unsupported format version 2.0" "$ATOLL" inspect "$TMPD/badver.abm"
expect_fail wrong_chip "wrong chip" "$ATOLL" inspect --chip 0x1234 "$TMPD/a.abm"
expect_ok right_chip "$ATOLL" inspect --chip 0xa1c0ffee12345678 "$TMPD/a.abm"
expect_fail missing_file "nonexistent.abm" "$ATOLL" inspect "$TMPD/nonexistent.abm"
printf 'not a model at all' > "$TMPD/junk.abm"
expect_fail bad_magic "bad magic" "$ATOLL" inspect "$TMPD/junk.abm"

expect_ok combine "$ATOLL" inspect --combine "$TMPD/a.abm" "$TMPD/b.abm" -o "$TMPD/c.abm"
expect_grep combine_dedup "4 weight blobs (2 shared blobs stored once)" "$TMPD/out"
expect_ok inspect_combined "$ATOLL" inspect --weights "$TMPD/c.abm"
expect_grep combined_flag "flags:    combined" "$TMPD/out"
expect_grep combined_nets "net 'resnet': 3 variants" "$TMPD/out"
expect_grep combined_mobilenet "net 'mobilenet': 1 variant" "$TMPD/out"
expect_grep combined_blobs "weights: 4 blobs" "$TMPD/out"
expect_fail combine_duplicate "duplicate variant: net 'resnet' batch 1" "$ATOLL" inspect --combine "$TMPD/a.abm" "$TMPD/a.abm" -o "$TMPD/d.abm"
if [ -e "$TMPD/d.abm" ]; then fail combine_no_partial "d.abm was written"; else ok combine_no_partial; fi
expect_fail combine_chips "different chips" "$ATOLL" inspect --combine "$TMPD/a.abm" "$TMPD/otherchip.abm" -o "$TMPD/e.abm"
expect_fail combine_bad_input "CRC mismatch" "$ATOLL" inspect --combine "$TMPD/a.abm" "$TMPD/badcrc.abm" -o "$TMPD/e.abm"
expect_fail combine_needs_output "needs at least two input models" "$ATOLL" inspect --combine "$TMPD/a.abm" "$TMPD/b.abm"

expect_fail no_args "give exactly one model" "$ATOLL" inspect
expect_fail unknown_option "unknown option" "$ATOLL" inspect --frob "$TMPD/a.abm"
expect_fail bad_chip_value "no such file, and no chip config of that name" "$ATOLL" inspect --chip zz "$TMPD/a.abm"
expect_fail bad_chip_zero "--chip 0 is out of range" "$ATOLL" inspect --chip 0 "$TMPD/a.abm"
expect_ok help "$ATOLL" inspect --help
cli_summary abm_inspect
