# cached_atoll.sh - the test pass's compile cache (test/cli/cached_atoll,
# which test/run.sh and lib.inc put in front of $ATOLL): a repeated compile
# is a hit that writes the same .abm bytes, the same output (with this
# run's -o path and scratch directory in it) and the same exit code as a
# real compile; a changed chip file, another binary or another scratch
# directory's path in the output are handled; what must not be cached
# (--csv, a model outside models/) runs for real. Its own cache directory,
# so the pass's cache does not matter.
. test/cli/lib.inc
case "$BUILD" in /*) REAL=$BUILD/atoll ;; *) REAL=$PWD/$BUILD/atoll ;; esac
C=$TMPD/cache; mkdir -p "$C" "$TMPD/a" "$TMPD/b"
W=test/cli/cached_atoll
M=models/digits_cnn.onnx
hits() { if [ -f "$C/hits" ]; then wc -l < "$C/hits"; else echo 0; fi; }
sed 's/^cores_per_cluster = .*/cores_per_cluster = 2/' configs/tiny.ini > "$TMPD/a/chip.ini"
# the reference: a real compile, no cache
"$REAL" compile $M --chip "$TMPD/a/chip.ini" -o "$TMPD/ref.abm" > "$TMPD/ref.txt" 2>&1
# first: a miss (the compile runs), second: a hit, from another scratch
# directory with its own copy of the chip file
sh $W "$REAL" "$C" "$TMPD/a" compile $M --chip "$TMPD/a/chip.ini" -o "$TMPD/a/1.abm" > "$TMPD/a/1.txt" 2>&1
expect_ok miss_same_abm cmp "$TMPD/ref.abm" "$TMPD/a/1.abm"
[ "$(hits)" = 0 ] && ok miss_not_a_hit || fail miss_not_a_hit "$(hits) hits"
cp "$TMPD/a/chip.ini" "$TMPD/b/chip.ini"
sh $W "$REAL" "$C" "$TMPD/b" compile $M --chip "$TMPD/b/chip.ini" -o "$TMPD/b/2.abm" > "$TMPD/b/2.txt" 2>&1
[ "$(hits)" = 1 ] && ok repeat_is_a_hit || fail repeat_is_a_hit "$(hits) hits"
expect_ok hit_same_abm cmp "$TMPD/ref.abm" "$TMPD/b/2.abm"
# the hit's output names its own -o file and chip file, as a real run does
"$REAL" compile $M --chip "$TMPD/b/chip.ini" -o "$TMPD/b/3.abm" > "$TMPD/b/3.txt" 2>&1
sed "s|/3.abm|/2.abm|g" "$TMPD/b/3.txt" > "$TMPD/b/3to2.txt"
expect_ok hit_same_output cmp "$TMPD/b/3to2.txt" "$TMPD/b/2.txt"
expect_grep hit_names_its_abm "$TMPD/b/2.abm" "$TMPD/b/2.txt"
# a changed chip file is another compile
sed -i 's/^cores_per_cluster = .*/cores_per_cluster = 3/' "$TMPD/b/chip.ini"
sh $W "$REAL" "$C" "$TMPD/b" compile $M --chip "$TMPD/b/chip.ini" -o "$TMPD/b/4.abm" > /dev/null 2>&1
[ "$(hits)" = 1 ] && ok changed_chip_misses || fail changed_chip_misses "$(hits) hits"
"$REAL" compile $M --chip "$TMPD/b/chip.ini" -o "$TMPD/b/5.abm" > /dev/null 2>&1
expect_ok changed_chip_abm cmp "$TMPD/b/4.abm" "$TMPD/b/5.abm"
# another binary (a copy: another inode) misses
cp "$REAL" "$TMPD/atoll2"
sh $W "$TMPD/atoll2" "$C" "$TMPD/a" compile $M --chip "$TMPD/a/chip.ini" -o "$TMPD/a/6.abm" > /dev/null 2>&1
[ "$(hits)" = 1 ] && ok other_binary_misses || fail other_binary_misses "$(hits) hits"
# a failing compile replays its message and exit code
for i in 1 2; do
    sh $W "$REAL" "$C" "$TMPD/a" compile $M --chip "$TMPD/a/chip.ini" --dtype int4 -o "$TMPD/a/x.abm" > "$TMPD/a/f$i.txt" 2>&1
    echo $? > "$TMPD/a/f$i.rc"
done
[ "$(hits)" = 2 ] && ok failure_is_a_hit || fail failure_is_a_hit "$(hits) hits"
if [ "$(cat "$TMPD/a/f2.rc")" != 0 ] && cmp -s "$TMPD/a/f1.rc" "$TMPD/a/f2.rc" && cmp -s "$TMPD/a/f1.txt" "$TMPD/a/f2.txt" &&
    grep -q "use fp32, fp16, bf16 or int8" "$TMPD/a/f2.txt" && [ ! -f "$TMPD/a/x.abm" ]; then ok failure_replayed
else fail failure_replayed "exit $(cat "$TMPD/a/f1.rc") / $(cat "$TMPD/a/f2.rc"): $(cat "$TMPD/a/f2.txt")"; fi
# not cached: a --csv file (written by the compile), a model a script wrote
for i in 1 2; do
    sh $W "$REAL" "$C" "$TMPD/a" compile $M --chip "$TMPD/a/chip.ini" -o "$TMPD/a/c.abm" --csv "$TMPD/a/c$i.csv" > /dev/null 2>&1
    cp $M "$TMPD/m.onnx"
    sh $W "$REAL" "$C" "$TMPD/a" compile "$TMPD/m.onnx" --chip "$TMPD/a/chip.ini" -o "$TMPD/a/m.abm" > /dev/null 2>&1
done
[ "$(hits)" = 2 ] && [ -s "$TMPD/a/c2.csv" ] && [ -s "$TMPD/a/m.abm" ] && ok not_cached || fail not_cached "$(hits) hits"
# any other command runs as is
sh $W "$REAL" "$C" "$TMPD/a" inspect "$TMPD/a/1.abm" > "$TMPD/a/i.txt" 2>&1
expect_grep other_commands "header checksum: OK" "$TMPD/a/i.txt"
cli_summary cached_atoll
