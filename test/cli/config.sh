# config.sh - `atoll config show/check`: the a1 figures (32.8 int8 TOPS,
# 64 B/cycle DRAM, ridge 512 ops/byte, 8 MiB LMEM, 16 MiB SRAM) and errors.
. test/cli/lib.inc
expect_ok show_a1 "$ATOLL" config show --chip configs/a1.ini
cp "$TMPD/out" "$TMPD/a1.txt"
expect_grep a1_peak_i8 'peak_i8 *= 32.768 TOPS' "$TMPD/a1.txt"
expect_grep a1_peak_f16 'peak_f16 *= 16.384 TOPS' "$TMPD/a1.txt"
expect_grep a1_peak_f32 'peak_f32 *= 8.192 TOPS' "$TMPD/a1.txt"
expect_grep a1_dram_bpc 'dram_bytes_per_cycle *= 64 bytes/cycle' "$TMPD/a1.txt"
expect_grep a1_ridge 'ridge_i8 *= 512 ops per DRAM byte' "$TMPD/a1.txt"
expect_grep a1_lmem_total 'lmem_total *= 8388608 bytes (8 MiB)' "$TMPD/a1.txt"
expect_grep a1_sram_total 'sram_total *= 16777216 bytes (16 MiB)' "$TMPD/a1.txt"
expect_grep a1_lmem_key 'bytes *= 524288 bytes (512 KiB)' "$TMPD/a1.txt"
expect_grep a1_freq 'freq_mhz *= 1000 MHz' "$TMPD/a1.txt"
expect_grep a1_fingerprint 'fingerprint *= 0x[0-9a-f]\{16\}' "$TMPD/a1.txt"
# every key of the schema is shown
n_keys=$(grep -c '^| `' docs/config.md)
n_shown=$(sed -n '/^\[derived\]/q;/^  [a-z_0-9]* *= /p' "$TMPD/a1.txt" | wc -l)
if [ "$n_keys" -eq "$n_shown" ] && [ "$n_keys" -gt 40 ]; then ok show_every_key; else fail show_every_key "$n_shown shown, $n_keys in the schema"; fi
expect_grep a1_area 'area *= 192.516 mm2 at 45nm (mac_i8 6.865, mac_fp 47.710, vector 12.169, lmem 38.720, sram 66.400, noc 0.652, dram_phy 20.000)' "$TMPD/a1.txt"
expect_grep a1_area_key 'dram_phy_mm2_per_channel = 5 mm2' "$TMPD/a1.txt"
sed '/^\[area\]/,$d' configs/a1.ini > "$TMPD/noarea.ini"
expect_ok show_no_area "$ATOLL" config show --chip "$TMPD/noarea.ini"
expect_grep no_area_unknown 'area *= unknown (no \[area\] section)' "$TMPD/out"
expect_ok check_tiny "$ATOLL" config check --chip configs/tiny.ini
expect_grep tiny_ok 'configs/tiny.ini: ok (chip tiny' "$TMPD/out"
sed 's/^rows = 32 .*/rows = 2000/' configs/a1.ini > "$TMPD/bad.ini"
expect_fail range_error "bad.ini:18: \[matrix\] rows = 2000 is out of range 1..1024" "$ATOLL" config show --chip "$TMPD/bad.ini"
grep -v '^latency_ns' configs/a1.ini > "$TMPD/miss.ini"
expect_fail missing_key "miss.ini: missing key \[dram\] latency_ns" "$ATOLL" config check --chip "$TMPD/miss.ini"
expect_fail no_file "cannot open" "$ATOLL" config show --chip "$TMPD/nope.ini"
expect_ok default_chip_a1 "$ATOLL" config check
expect_grep default_chip_is_a1 "configs/a1.ini: ok (chip a1" "$TMPD/out"
expect_ok chip_by_name "$ATOLL" config check --chip tiny
expect_grep chip_by_name_file "configs/tiny.ini: ok (chip tiny" "$TMPD/out"
expect_fail chip_unknown_name "no chip config of that name in configs" "$ATOLL" config check --chip a2
expect_grep chip_unknown_lists "chips found: a1, a1-noc, a1x16, a1x16-noc, edge16k, tiny" "$TMPD/out"
expect_fail bad_action "unknown action 'frob'" "$ATOLL" config frob
cli_summary config
