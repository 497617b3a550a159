# sweep_parallel.sh - the GNU parallel recipe (examples/sweep-parallel.sh)
# with Debian's `parallel` (.ci/run installs it): 3 shards of
# examples/sweep-tiny.ini run 2 at a time and merge into the CSV a single
# `atoll sweep` writes, byte for byte; GNU parallel's state goes to
# $PARALLEL_HOME, not ~/.parallel.
. test/cli/lib.inc
if ! command -v parallel > /dev/null; then fail parallel_installed "GNU parallel is not installed (.ci/run installs it)"; cli_summary sweep_parallel; exit 1; fi
ok parallel_installed
S=examples/sweep-tiny.ini
ATOLL_ABS=$(cd "$(dirname "$ATOLL")" && pwd)/$(basename "$ATOLL")
export PARALLEL_HOME="$TMPD/parallel-home"
export TMPDIR="$TMPD"
expect_ok recipe env ATOLL="$ATOLL_ABS" sh examples/sweep-parallel.sh $S "$TMPD/par.csv" 3 2
expect_grep merged_rows 'sweep merge: wrote .*par.csv: 8 rows from 3 files' "$TMPD/out"
expect_ok single_machine "$ATOLL" sweep $S -o "$TMPD/single.csv"
if cmp -s "$TMPD/single.csv" "$TMPD/par.csv"; then ok parallel_same_bytes; else fail parallel_same_bytes "$(diff "$TMPD/single.csv" "$TMPD/par.csv" | head -5)"; fi
if [ -d "$PARALLEL_HOME" ]; then ok parallel_home_used; else fail parallel_home_used "no $PARALLEL_HOME"; fi
left=$(ls -d "$TMPD"/atoll-sweep.* 2>/dev/null | wc -l)
if [ "$left" -eq 0 ]; then ok recipe_cleans_up; else fail recipe_cleans_up "$left work directories left"; fi
# a failing shard stops the recipe with an error and no output
expect_fail recipe_fails "" env ATOLL=/bin/false sh examples/sweep-parallel.sh $S "$TMPD/bad.csv" 2 2
if [ ! -e "$TMPD/bad.csv" ]; then ok no_partial_output; else fail no_partial_output "bad.csv written"; fi
cli_summary sweep_parallel
