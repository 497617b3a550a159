# csv_out.sh - CSV from the everyday commands: `atoll compile --csv` writes
# the cost model's per-layer table (one row per layer and batch size) and
# `atoll run --csv` the simulated per-layer table; their layer ids match,
# the compile CSV's estimates add up to the summary's estimated cycles, and
# the run CSV's cycles are the stats JSON's per-layer spans; the DRAM bytes
# the compiler measured on its instructions are the ones the simulator
# moved, layer by layer (resnet20 on a1: layer groups on core sets); a
# group's member rows add up to its row, in the CSV and the stats JSON.
. test/cli/lib.inc
M=models/lenet5.onnx
expect_ok compile_csv "$ATOLL" compile $M --chip configs/tiny.ini -o "$TMPD/l.abm" --csv "$TMPD/est.csv"
est_total=$(sed -n 's/.*estimated cycles : \([0-9]*\).*/\1/p' "$TMPD/out")
expect_grep compile_csv_header '^batch,layer,name,op,split,tiles,cores,macs,est_cycles,est_compute,est_dma,is_matrix,members,core_first,core_count,dram_rd,dram_wr,lmem_peak$' "$TMPD/est.csv"
expect_grep compile_csv_row '^1,0,/features/features.0/Conv,Conv+Tanh,' "$TMPD/est.csv"
sum=$(awk -F, 'NR > 1 { s += $9 } END { print s }' "$TMPD/est.csv")
if [ -n "$est_total" ] && [ "$sum" = "$est_total" ]; then ok compile_csv_sums; else fail compile_csv_sums "rows sum to $sum, summary says $est_total"; fi
expect_ok run_csv "$ATOLL" run "$TMPD/l.abm" --chip configs/tiny.ini --input models/lenet5.ref.npz --csv "$TMPD/run.csv" --stats "$TMPD/s.json"
# the stats JSON carries the chip's area (isa/area.h; tiny: the same 6.90633 mm² as the sweep's column)
expect_grep stats_area '"area_mm2": {"node":"45nm",.*"total":6.90633}' "$TMPD/s.json"
expect_grep run_csv_header '^layer,first,last,cycles,insns,macs,dma_bytes,dram_bytes,busy_dma,busy_mat,busy_vec,sync,bound,held,member$' "$TMPD/run.csv"
a=$(awk -F, 'NR > 1 { print $2 }' "$TMPD/est.csv" | tr '\n' ' '); b=$(awk -F, 'NR > 1 { print $1 }' "$TMPD/run.csv" | tr '\n' ' ')
if [ "$a" = "$b" ] && [ -n "$a" ]; then ok layer_ids_match; else fail layer_ids_match "compile: $a run: $b"; fi
first=$(awk -F, 'NR == 2 { print "\"layer\":" $1 ",\"first\":" $2 ",\"last\":" $3 }' "$TMPD/run.csv")
expect_grep run_csv_is_stats "$first" "$TMPD/s.json"
# measured DRAM bytes: compile (dram_rd + dram_wr) = run (dram_bytes), per unit
# (the DRAM plan, --sram-activations never: its six layer groups; auto's
# row bands on a1 keep one)
R=models/resnet20_cifar
expect_ok groups_csv "$ATOLL" compile $R.onnx --chip a1 --sram-activations never -o "$TMPD/r.abm" --csv "$TMPD/r_est.csv"
expect_ok groups_run_csv "$ATOLL" run "$TMPD/r.abm" --input $R.ref.npz --csv "$TMPD/r_run.csv" --stats "$TMPD/r.json"
a=$(awk -F, 'NR > 1 { print $2 ":" $16 + $17 }' "$TMPD/r_est.csv" | tr '\n' ' ')
b=$(awk -F, 'NR > 1 && $15 == "" { print $1 ":" $8 }' "$TMPD/r_run.csv" | tr '\n' ' ')
if [ "$a" = "$b" ] && [ -n "$a" ]; then ok dram_bytes_compile_equal_run; else fail dram_bytes_compile_equal_run "compile: $a run: $b"; fi
grep -q ',Group(' "$TMPD/r_est.csv" && ok groups_in_csv || fail groups_in_csv "no Group( row"
# a group's row counts its members; a layer's 1
bad=$(awk -F, 'NR > 1 && (($4 ~ /^Group\(/) != ($13 > 1)) { print $2 }' "$TMPD/r_est.csv")
[ -z "$bad" ] && ok members_column || fail members_column "rows $bad"
# the run's member rows (member column set) add up to their group's row:
# cycles (shares of its span), instructions, MACs, DRAM bytes, busy, held
groups=$(awk -F, 'NR > 1 && $15 != "" { print $1 }' "$TMPD/r_run.csv" | sort -u | wc -l)
bad=$(awk -F, 'NR > 1 { for (c = 4; c <= 14; c++) if (c != 12 && c != 13) { if ($15 == "") g[$1 "," c] = $c; else s[$1 "," c] += $c } }
      END { for (k in s) if (s[k] != g[k]) print k ": " s[k] " vs " g[k] }' "$TMPD/r_run.csv")
if [ "$groups" -eq 6 ] && [ -z "$bad" ]; then ok member_rows_sum; else fail member_rows_sum "$groups groups with members; $bad"; fi
expect_grep stats_members '^    {"layer":0,.*"held":[0-9]*,"members":\[{"member":0,"cycles":[0-9]*,"first":' "$TMPD/r.json"
expect_grep stats_held '^    {"layer":14,.*,"bound":"compute","held":[1-9][0-9]*}' "$TMPD/r.json"
# two batch sizes: rows for each
expect_ok compile_csv_batches "$ATOLL" compile models/digits_cnn.onnx --chip configs/tiny.ini -o "$TMPD/m.abm" --batch 1,2 --csv "$TMPD/m.csv"
n1=$(grep -c '^1,' "$TMPD/m.csv"); n2=$(grep -c '^2,' "$TMPD/m.csv")
if [ "$n1" -ge 3 ] && [ "$n1" -eq "$n2" ]; then ok csv_per_batch; else fail csv_per_batch "$n1 rows at batch 1, $n2 at batch 2"; fi
expect_fail csv_unwritable "cannot" "$ATOLL" compile $M --chip configs/tiny.ini -o "$TMPD/l2.abm" --csv "$TMPD/no/such/dir/x.csv"
expect_fail run_csv_unwritable "cannot" "$ATOLL" run "$TMPD/l.abm" --chip configs/tiny.ini --input models/lenet5.ref.npz --csv "$TMPD/no/dir/r.csv"
cli_summary csv_out
