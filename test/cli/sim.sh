# sim.sh - `atoll sim`: usage errors, report, modes, trace/stats/csv/output
# files, determinism of the bytes written, expect failures and every fault
# class reaching the CLI as a message and exit status 1 (never a crash).
. test/cli/lib.inc
A1=configs/a1.ini
TINY=configs/tiny.ini
expect_ok help "$ATOLL" sim --help
expect_fail no_args "usage" "$ATOLL" sim
expect_fail bad_mode "must be full, timing or functional" "$ATOLL" sim --chip $A1 examples/conv.s --mode fast
expect_fail bad_max "--max-cycles '-5' is not a whole number" "$ATOLL" sim --chip $A1 examples/conv.s --max-cycles -5
expect_fail missing_chip "nope.ini" "$ATOLL" sim --chip nope.ini examples/conv.s
expect_fail missing_prog "nope.s" "$ATOLL" sim --chip $A1 nope.s

# report, files, determinism
expect_ok conv_full "$ATOLL" sim --chip $A1 examples/conv.s --trace "$TMPD/t1.json" --stats "$TMPD/s1.json" --csv "$TMPD/l1.csv" --output "$TMPD/o1.bin"
expect_grep report_cycles "^cycles" "$TMPD/out"
expect_grep report_util "matrix utilisation" "$TMPD/out"
expect_grep report_energy "^energy" "$TMPD/out"
expect_grep report_layers "bound" "$TMPD/out"
expect_grep trace_events '"ph":"X"' "$TMPD/t1.json"
expect_grep trace_flows '"ph":"s"' "$TMPD/t1.json"
expect_grep trace_tracks '"thread_name"' "$TMPD/t1.json"
expect_grep stats_cycles '"cycles":' "$TMPD/s1.json"
expect_grep csv_header "^layer,first,last" "$TMPD/l1.csv"
n=$(wc -c < "$TMPD/o1.bin")
if [ "$n" -eq 2048 ]; then ok output_bytes; else fail output_bytes "output has $n bytes, want 2048"; fi
expect_ok conv_again "$ATOLL" sim --chip $A1 examples/conv.s --trace "$TMPD/t2.json" --stats "$TMPD/s2.json"
if cmp -s "$TMPD/t1.json" "$TMPD/t2.json" && cmp -s "$TMPD/s1.json" "$TMPD/s2.json"; then ok deterministic_files; else fail deterministic_files "trace or stats bytes differ between runs"; fi
if command -v python3 > /dev/null 2>&1; then
    if python3 -c "import json,sys; json.load(open(sys.argv[1])); json.load(open(sys.argv[2]))" "$TMPD/t1.json" "$TMPD/s1.json" 2>"$TMPD/py"; then ok json_valid; else fail json_valid "$(cat "$TMPD/py")"; fi
fi

# a binary image runs the same as its text
expect_ok asm_conv "$ATOLL" asm examples/conv.s -o "$TMPD/conv.bin"
expect_ok bin_runs "$ATOLL" sim --chip $A1 "$TMPD/conv.bin" --stats "$TMPD/sb.json"
expect_grep bin_expect "expect Y_ref: pass" "$TMPD/out"
if cmp -s "$TMPD/s1.json" "$TMPD/sb.json"; then ok bin_same_stats; else fail bin_same_stats "stats of conv.bin differ from conv.s"; fi

# modes
expect_ok timing_mode "$ATOLL" sim --chip $A1 examples/gemm1.s --mode timing
expect_grep timing_no_expect "not checked in timing mode" "$TMPD/out"
expect_ok functional_mode "$ATOLL" sim --chip $A1 examples/gemm1.s --mode functional --quiet
expect_grep functional_expect "expect C_ref: pass" "$TMPD/out"

# expect mismatch: change one expected value
sed 's/^\(\.expect Y_ref dram:0x4000 i8 shape=8,8,32\) \([-0-9]*\)/\1 99/' examples/conv.s > "$TMPD/bad.s"
expect_fail expect_mismatch "expect region(s) FAILED" "$ATOLL" sim --chip $A1 "$TMPD/bad.s"
expect_grep expect_detail "FAIL: 1 of 2048 elements differ" "$TMPD/out"

# faults reach the CLI
cat > "$TMPD/dead.s" <<'S'
.core 0
.engine vec
    nop wait=3
    end
S
expect_fail deadlock "deadlock" "$ATOLL" sim --chip $TINY "$TMPD/dead.s"
expect_grep deadlock_names "waits on semaphore 3" "$TMPD/out"
cat > "$TMPD/noend.s" <<'S'
.core 0
.engine dma
    nop
S
expect_fail missing_end "missing end" "$ATOLL" sim --chip $TINY "$TMPD/noend.s"
cat > "$TMPD/oob.s" <<'S'
.core 0
.engine dma
    dma.copy dtype=i8 dst=lmem:0 src=dram:0x7ffffff0 shape=64 dstride=1 sstride=1
    end
S
expect_fail oob "out-of-bounds" "$ATOLL" sim --chip $TINY "$TMPD/oob.s"
expect_grep oob_line "oob.s:3" "$TMPD/out"
cat > "$TMPD/mis.s" <<'S'
.core 0
.engine mat
    mm dtype=i8 dst=0 src=8 src2=0 m=4 k=4 n=4 lda=4 ldb=4 ldc=4
    end
S
expect_fail misaligned "misaligned" "$ATOLL" sim --chip $TINY "$TMPD/mis.s"
cat > "$TMPD/ill.s" <<'S'
.core 0
.engine mat
    mm dtype=i16 dst=0 src=0 src2=0 m=4 k=4 n=4 lda=4 ldb=4 ldc=4
    end
S
expect_fail illegal "illegal instruction" "$ATOLL" sim --chip $TINY "$TMPD/ill.s"
expect_fail race "data race" "$ATOLL" sim --chip $A1 examples/race.s
expect_fail max_cycles "max cycles exceeded" "$ATOLL" sim --chip $A1 examples/gemm1.s --max-cycles 100
"$ATOLL" sim --chip $A1 examples/race.s --stats "$TMPD/sf.json" > /dev/null 2>&1
expect_grep stats_fault_kind '"kind":"data race"' "$TMPD/sf.json"
cli_summary sim
