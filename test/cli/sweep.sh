# sweep.sh - `atoll sweep` and `atoll sweep merge` on examples/sweep-tiny.ini
# (8 points on configs/tiny.ini): one row per point with the documented
# columns, shared compiles, -j 2 and reruns give the same bytes, resume
# skips done points, shards merge into the single-machine CSV byte for
# byte, a failed point (config rule, compiler, dying worker) gets its reason
# and never stops the sweep, --stats-dir, and every sweep-file error names
# the file and line.
. test/cli/lib.inc
S=examples/sweep-tiny.ini
expect_ok run_j1 "$ATOLL" sweep $S -o "$TMPD/one.csv"
cp "$TMPD/out" "$TMPD/one.log"
expect_grep header '^point,lmem.bytes,dram.gbps,model,dtype,batch,fingerprint,status,cycles,est_cycles,images_per_s,mac_util,dram_bytes,energy_mac_pj,energy_vector_pj,energy_lmem_pj,energy_sram_pj,energy_noc_pj,energy_dram_pj,energy_static_pj,energy_total_pj,area_mm2,images_per_s_per_mm2,images_per_s_per_w,error$' "$TMPD/one.csv"
rows=$(tail -n +2 "$TMPD/one.csv" | wc -l)
ok_rows=$(grep -c ',ok,' "$TMPD/one.csv")
if [ "$rows" -eq 8 ] && [ "$ok_rows" -eq 8 ]; then ok eight_rows; else fail eight_rows "$rows rows, $ok_rows ok"; fi
expect_grep point_order_and_values '^5,131072,8,digits_cnn,fp32,1,' "$TMPD/one.csv"
expect_grep progress '\[8/8\] point' "$TMPD/one.log"
expect_grep compiles_shared '8 to run (4 compile groups' "$TMPD/one.log"
# a timing key: same fingerprint, more bandwidth is never slower
c8=$(awk -F, '$1==0 {print $9}' "$TMPD/one.csv"); c16=$(awk -F, '$1==2 {print $9}' "$TMPD/one.csv")
f8=$(awk -F, '$1==0 {print $7}' "$TMPD/one.csv"); f16=$(awk -F, '$1==2 {print $7}' "$TMPD/one.csv")
if [ "$f8" = "$f16" ] && [ "$c16" -le "$c8" ] && [ "$c8" -gt 0 ]; then ok timing_key_shares_fingerprint; else fail timing_key_shares_fingerprint "fp $f8/$f16 cycles $c8/$c16"; fi
# area of tiny (isa/area.h): 64 MACs, 16 lanes, LMEM, SRAM, NoC, 1 PHY
expect_grep area_column ',6.90633,' "$TMPD/one.csv"
# -j 2 and a rerun into a fresh file give the same bytes
expect_ok run_j2 "$ATOLL" sweep $S -o "$TMPD/two.csv" -j 2
if cmp -s "$TMPD/one.csv" "$TMPD/two.csv"; then ok j2_same_bytes; else fail j2_same_bytes "$(diff "$TMPD/one.csv" "$TMPD/two.csv" | head -5)"; fi
# resume: keep the header and 3 rows, the rerun runs the other 5
head -n 4 "$TMPD/one.csv" > "$TMPD/part.csv"
expect_ok resume "$ATOLL" sweep $S -o "$TMPD/part.csv"
expect_grep resume_skips '3 already in' "$TMPD/out"
expect_grep resume_runs_rest '5 to run' "$TMPD/out"
if cmp -s "$TMPD/one.csv" "$TMPD/part.csv"; then ok resume_same_bytes; else fail resume_same_bytes "differs"; fi
expect_ok rerun_noop "$ATOLL" sweep $S -o "$TMPD/part.csv"
expect_grep rerun_nothing '0 to run' "$TMPD/out"
# shards and merge
for i in 1 2 3; do expect_ok shard_$i "$ATOLL" sweep $S -o "$TMPD/s$i.csv" --shard $i/3; done
n=$(cat "$TMPD/s1.csv" "$TMPD/s2.csv" "$TMPD/s3.csv" | grep -vc '^point')
if [ "$n" -eq 8 ]; then ok shards_partition; else fail shards_partition "$n rows over 3 shards"; fi
expect_ok merge "$ATOLL" sweep merge --spec $S -o "$TMPD/merged.csv" "$TMPD/s3.csv" "$TMPD/s1.csv" "$TMPD/s2.csv"
if cmp -s "$TMPD/one.csv" "$TMPD/merged.csv"; then ok merge_same_bytes; else fail merge_same_bytes "$(diff "$TMPD/one.csv" "$TMPD/merged.csv" | head -5)"; fi
expect_ok merge_overlap "$ATOLL" sweep merge -o "$TMPD/m2.csv" "$TMPD/one.csv" "$TMPD/s2.csv"
if cmp -s "$TMPD/one.csv" "$TMPD/m2.csv"; then ok merge_overlap_same; else fail merge_overlap_same "differs"; fi
expect_fail merge_missing "2 of .*'s 8 points are missing\|points are missing" "$ATOLL" sweep merge --spec $S -o "$TMPD/m3.csv" "$TMPD/s1.csv" "$TMPD/s2.csv"
if [ ! -e "$TMPD/m3.csv" ]; then ok merge_missing_no_file; else fail merge_missing_no_file "m3.csv written"; fi
sed '2s/,ok,[0-9]*,/,ok,1,/' "$TMPD/one.csv" > "$TMPD/conflict.csv"   # the first point's cycles changed
expect_fail merge_conflict "point 0 differs from its row in" "$ATOLL" sweep merge -o "$TMPD/m4.csv" "$TMPD/one.csv" "$TMPD/conflict.csv"
expect_fail shard_wrong_file "belongs to another shard than 2/3" "$ATOLL" sweep $S -o "$TMPD/s1.csv" --shard 2/3
expect_fail merge_no_output "-o OUT.csv is required" "$ATOLL" sweep merge "$TMPD/s1.csv"
# a file from another sweep is not resumed
sed 's/^0,65536,8,lenet5/0,65536,9,lenet5/' "$TMPD/one.csv" > "$TMPD/other.csv"
expect_fail resume_other_sweep "other.csv:2: point 0 has 9 in column 3 where the sweep has 8" "$ATOLL" sweep $S -o "$TMPD/other.csv"
# failed points: a config rule broken by a combination, a model the backend refuses, a dying worker
cat > "$TMPD/fail.ini" <<EOF
[sweep]
chip = $PWD/configs/tiny.ini
models = $PWD/models/lenet5.onnx, $PWD/test/data/badshape.onnx
zip = matrix.rows matrix.cols
[vary]
matrix.rows = 8, 64
matrix.cols = 8, 64
lmem.bytes = 8K, 64K
EOF
ATOLL_SWEEP_TEST_KILL_POINT=6 expect_ok failures_do_not_stop "$ATOLL" sweep "$TMPD/fail.ini" -o "$TMPD/fail.csv" -j 2
expect_grep rule_reason '^4,64,64,8192,lenet5,fp32,1,,failed,.*chip: \[lmem\] bytes = 8192 cannot hold one f32 weight tile of the 64 x 64 array' "$TMPD/fail.csv"
expect_grep model_reason '^1,8,8,8192,badshape,fp32,1,[0-9a-f]*,failed,.*node .add_bad. (Add): shapes 1x3 and 4 cannot be broadcast' "$TMPD/fail.csv"
expect_grep killed_reason '^6,64,64,65536,lenet5,.*the worker process running this point died (signal 9)' "$TMPD/fail.csv"
expect_grep others_ran '^2,8,8,65536,lenet5,fp32,1,[0-9a-f]*,ok,' "$TMPD/fail.csv"
n=$(grep -vc '^point' "$TMPD/fail.csv")
if [ "$n" -eq 8 ]; then ok every_point_has_a_row; else fail every_point_has_a_row "$n rows"; fi
expect_ok retry_failed "$ATOLL" sweep "$TMPD/fail.ini" -o "$TMPD/fail.csv" --retry-failed
expect_grep retry_reruns '2 already in' "$TMPD/out"
expect_grep retry_fixed_killed '^6,64,64,65536,lenet5,fp32,1,[0-9a-f]*,ok,' "$TMPD/fail.csv"
# compile = per-point: each bandwidth gets code compiled for it, so the
# estimates differ where the shared compile's were equal
sed 's/^batches = 1$/batches = 1\ncompile = per-point/' $S > "$TMPD/perpoint.ini"
sed -i "s#\.\./#$PWD/#g" "$TMPD/perpoint.ini"
expect_ok per_point "$ATOLL" sweep "$TMPD/perpoint.ini" -o "$TMPD/pp.csv"
expect_grep per_point_compiles '8 to run (8 compile groups' "$TMPD/out"
e8=$(awk -F, '$1==0 {print $10}' "$TMPD/one.csv"); e16=$(awk -F, '$1==2 {print $10}' "$TMPD/one.csv")
p8=$(awk -F, '$1==0 {print $10}' "$TMPD/pp.csv"); p16=$(awk -F, '$1==2 {print $10}' "$TMPD/pp.csv")
if [ "$e8" = "$e16" ] && [ "$p8" != "$p16" ] && [ "$p16" = "$e16" ]; then ok per_point_estimates; else fail per_point_estimates "shared $e8/$e16, per-point $p8/$p16"; fi
# per-point stats for atoll report
expect_ok stats_dir "$ATOLL" sweep $S -o "$TMPD/st.csv" --stats-dir "$TMPD/stats"
expect_grep stats_layer_info '"layer_info": \[' "$TMPD/stats/point-3.json"
expect_grep stats_point '"point": {"id":3,"model":"digits_cnn","dtype":"fp32","batch":1,"values":{"lmem.bytes":"65536","dram.gbps":"16"}}' "$TMPD/stats/point-3.json"
expect_grep stats_timing_mode '"mode": "timing"' "$TMPD/stats/point-3.json"
# sweep file errors name the file and line
bad() { # NAME PATTERN: the [vary] section of $TMPD/bad.ini from stdin
    { printf '[sweep]\nchip = %s/configs/tiny.ini\nmodels = %s/models/lenet5.onnx\n[vary]\n' "$PWD" "$PWD"; cat; } > "$TMPD/bad.ini"
    expect_fail "$1" "$2" "$ATOLL" sweep "$TMPD/bad.ini" -o "$TMPD/bad.csv"
}
echo 'matrix.rowz = 8, 16' | bad unknown_key "bad.ini:5: \[vary\] unknown config key 'matrix.rowz'"
echo 'dram.gbps = 64..16 x2' | bad empty_range "bad.ini:5: \[vary\] dram.gbps: empty range 64..16"
echo 'matrix.rows = 8, 2000' | bad rejected_value "bad.ini:5: \[vary\] matrix.rows = 2000: \[matrix\] rows = 2000 is out of range 1..1024"
echo 'lmem.bytes = 64Q' | bad rejected_suffix "bad.ini:5: \[vary\] lmem.bytes = 64Q: \[lmem\] bytes: '64Q' is not an integer"
echo 'dram.gbps = 8..16' | bad real_range_step "bad.ini:5: \[vary\] dram.gbps: a range of reals needs +STEP or xFACTOR"
echo 'matrix.rows = 8..16 x1' | bad factor "bad.ini:5: \[vary\] matrix.rows: factor 1 must exceed 1"
echo 'rows = 8' | bad no_section_dot "bad.ini:5: \[vary\] 'rows': name a config key as section.key"
printf 'matrix.rows = 8\nmatrix.rows = 16\n' | bad twice "bad.ini:6: \[vary\] matrix.rows given twice (first on line 5)"
if [ ! -e "$TMPD/bad.csv" ]; then ok bad_spec_no_output; else fail bad_spec_no_output "bad.csv written"; fi
printf '[vary]\nmatrix.rows = 8\n' > "$TMPD/b1.ini"
expect_fail first_section "b1.ini:1: a sweep file starts with \[sweep\], not \[vary\]" "$ATOLL" sweep "$TMPD/b1.ini" -o "$TMPD/b.csv"
printf '[sweep]\nchip = nope.ini\nmodels = x.onnx\n' > "$TMPD/b2.ini"
expect_fail missing_chip "b2.ini:2: chip: .*nope.ini: cannot open" "$ATOLL" sweep "$TMPD/b2.ini" -o "$TMPD/b.csv"
printf '[sweep]\nchip = %s/configs/tiny.ini\nmodels = %s/models/lenet5.onnx\ndtypes = fp32, int4\n' "$PWD" "$PWD" > "$TMPD/b3.ini"
expect_fail bad_dtype "b3.ini:4: \[sweep\] dtypes: 'int4' is not fp32, fp16 or bf16" "$ATOLL" sweep "$TMPD/b3.ini" -o "$TMPD/b.csv"
printf '[sweep]\nchip = %s/configs/tiny.ini\nmodels = %s/models/nope.onnx\n' "$PWD" "$PWD" > "$TMPD/b4.ini"
expect_fail missing_model "b4.ini:3: model .*nope.onnx: cannot open" "$ATOLL" sweep "$TMPD/b4.ini" -o "$TMPD/b.csv"
printf '[sweep]\nchip = %s/configs/tiny.ini\nmodels = %s/models/lenet5.onnx\nzip = matrix.rows dram.gbps\n[vary]\nmatrix.rows = 8, 16\ndram.gbps = 8\n' "$PWD" "$PWD" > "$TMPD/b5.ini"
expect_fail zip_lengths "b5.ini:4: \[sweep\] zip: dram.gbps has 1 values but matrix.rows has 2" "$ATOLL" sweep "$TMPD/b5.ini" -o "$TMPD/b.csv"
printf '[sweep]\nchip = %s/configs/tiny.ini\nmodels = %s/models/lenet5.onnx\nspeed = fast\n' "$PWD" "$PWD" > "$TMPD/b6.ini"
expect_fail unknown_sweep_key "b6.ini:4: unknown key 'speed' in \[sweep\]" "$ATOLL" sweep "$TMPD/b6.ini" -o "$TMPD/b.csv"
# zip mode steps the keys together: 2 chip combinations, not 4
printf '[sweep]\nchip = %s/configs/tiny.ini\nmodels = %s/models/lenet5.onnx\nmode = zip\n[vary]\nmatrix.rows = 8, 16\nmatrix.cols = 8, 16\n' "$PWD" "$PWD" > "$TMPD/zip.ini"
expect_ok zip_mode "$ATOLL" sweep "$TMPD/zip.ini" -o "$TMPD/zip.csv"
expect_grep zip_points ': 2 points;' "$TMPD/out"
expect_grep zip_pairs '^1,16,16,lenet5,' "$TMPD/zip.csv"
# usage
expect_fail no_spec "no sweep file given" "$ATOLL" sweep -o "$TMPD/x.csv"
expect_fail no_out "-o OUT.csv is required" "$ATOLL" sweep $S
expect_fail bad_j "-j '0': a number of workers" "$ATOLL" sweep $S -o "$TMPD/x.csv" -j 0
expect_fail bad_shard "--shard '3/2': use I/N" "$ATOLL" sweep $S -o "$TMPD/x.csv" --shard 3/2
cli_summary sweep
