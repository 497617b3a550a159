# host_example.sh - examples/host_example.c builds against the public header
# alone (include/atoll.h, no -I.) and libatoll.a, lists and runs the sample
# model on configs/tiny.ini, and reports a fault with its code and message.
. test/cli/lib.inc
CHIP=configs/tiny.ini
expect_ok models "$BUILD/test/host/test_host" --write "$TMPD"
SANFLAGS=""
case "$BUILD" in *san*) SANFLAGS="-fsanitize=address,undefined";; esac
if ${CC:-cc} -std=c11 -Wall -Wextra -Werror $SANFLAGS -Iinclude examples/host_example.c "$BUILD/libatoll.a" -lz -lm \
    -o "$TMPD/host_example" > "$TMPD/cc.log" 2>&1; then ok example_builds; else fail example_builds "$(head -c 600 "$TMPD/cc.log")"; fi
expect_ok example_runs "$TMPD/host_example" $CHIP "$TMPD/relu.abm"
expect_grep example_lists_input "input  x int8\[1,64\] scale 0.25" "$TMPD/out"
expect_grep example_reads_output "y: 00 00 00 05 0a 00 00 04" "$TMPD/out"
expect_grep example_profile "cycles" "$TMPD/out"
expect_fail example_reports_fault "FAULT" "$TMPD/host_example" $CHIP "$TMPD/faulty.abm"
expect_fail example_wrong_chip "CHIP" "$TMPD/host_example" $CHIP "$TMPD/otherchip.abm"
expect_fail example_usage "usage" "$TMPD/host_example"
cli_summary host_example
