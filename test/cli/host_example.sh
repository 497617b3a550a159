# host_example.sh - examples/host_example.c builds against the public header
# alone (include/atoll.h, no -I.) and libatoll.a, and against libatoll.so
# (its soname, only the public API exported), lists and runs the sample
# model on configs/tiny.ini, on zeros and on an .npy read and converted by
# the API, and reports a fault with its code and message.
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
# an .npy input through the API: int8 as is, int64 converted where it fits, float refused
expect_ok gen_inputs "$BUILD/test/host/test_run_gen" --write "$TMPD"
expect_ok example_npy_input "$TMPD/host_example" $CHIP "$TMPD/relu.abm" "$TMPD/x.npy"
expect_fail example_npy_float "float32 cannot be converted to int8" "$TMPD/host_example" $CHIP "$TMPD/relu.abm" "$TMPD/x_f32.npy"
# the shared library: soname, public symbols only, the same program runs on it
if [ -z "$SANFLAGS" ]; then
    if readelf -d "$BUILD/libatoll.so" 2>/dev/null | grep -q "Library soname: \[libatoll.so.0\]"; then ok so_has_soname
    else fail so_has_soname "$(readelf -d "$BUILD/libatoll.so" 2>&1 | head -c 300)"; fi
    bad=$(nm -D --defined-only "$BUILD/libatoll.so" | awk '$2 == "T" && $3 !~ /^atl_/ { print $3 }' | head -5)
    if [ -z "$bad" ] && nm -D --defined-only "$BUILD/libatoll.so" | grep -q " T atl_compile$"; then ok so_exports_public_api
    else fail so_exports_public_api "non-API symbols: $bad"; fi
    if nm -D --defined-only "$BUILD/libatoll.so" | grep -q " T atl_npy_read$"; then fail so_hides_internals "atl_npy_read exported"
    else ok so_hides_internals; fi
    if ${CC:-cc} -std=c11 -Wall -Wextra -Werror -Iinclude examples/host_example.c -L"$BUILD" -latoll -o "$TMPD/host_so" > "$TMPD/cc.log" 2>&1
    then ok example_builds_shared; else fail example_builds_shared "$(head -c 600 "$TMPD/cc.log")"; fi
    expect_ok example_runs_shared env LD_LIBRARY_PATH="$BUILD" "$TMPD/host_so" $CHIP "$TMPD/relu.abm" "$TMPD/x.npy"
    expect_grep example_shared_output "y: " "$TMPD/out"
fi
cli_summary host_example
