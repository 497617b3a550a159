# fw_freestanding.sh - the firmware must build freestanding and link against
# nothing but itself, the .abm reader, the ISA tables, zlib's crc32/inflate
# and the four memory primitives a freestanding C environment provides
# (memcpy, memset, memmove, memcmp) plus strcmp/strlen used by the reader.
# Each firmware/*.c is compiled with -ffreestanding -fno-builtin-malloc...,
# everything is linked into one relocatable object, and nm lists what is left;
# then the firmware is cross-compiled for rv32imac without libc headers.
. test/cli/lib.inc
CCB=${CC:-cc}
if ! command -v nm > /dev/null || ! command -v ld > /dev/null; then fail tools "nm/ld not installed"; # Cross-compile for a 32-bit RISC-V control core with no C library headers at
# all (only the compiler's own stdarg/stddef/stdint), when clang can target it.
if command -v clang > /dev/null && echo 'int x;' | clang --target=riscv32-unknown-elf -x c -c - -o "$TMPD/probe.o" 2> /dev/null; then
    rv=1
    for f in firmware/*.c; do
        clang --target=riscv32-unknown-elf -march=rv32imac -ffreestanding -nostdinc -isystem "$(clang -print-resource-dir)/include" \
            -std=c11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter -I. -c "$f" -o "$TMPD/rv_$(basename "$f" .c).o" > "$TMPD/rv.log" 2>&1 \
            || { rv=0; fail "riscv32_$(basename "$f")" "$(head -c 600 "$TMPD/rv.log")"; }
    done
    [ $rv -eq 1 ] && ok riscv32_cross_compiles_without_libc_headers
fi
cli_summary fw_freestanding; exit 1; fi
objs=""
built=1
for f in firmware/*.c isa/abm_read.c isa/isa_table.c; do
    o=$TMPD/$(basename "$f" .c).o
    if ! $CCB -std=c11 -ffreestanding -fno-builtin-malloc -fno-builtin-printf -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
        -I. -c "$f" -o "$o" > "$TMPD/cc.log" 2>&1; then
        built=0; fail "compile_$(basename "$f")" "$(head -c 600 "$TMPD/cc.log")"
    fi
    objs="$objs $o"
done
[ $built -eq 1 ] && ok compiles_freestanding
ld -r -o "$TMPD/fw_all.o" $objs 2> "$TMPD/ld.log" && ok links_into_one_object || fail links_into_one_object "$(cat "$TMPD/ld.log")"
nm -u "$TMPD/fw_all.o" | awk '{print $NF}' | sort -u > "$TMPD/undef"
extra=$(grep -v -x -E 'crc32|inflate|inflateEnd|inflateInit_|memcmp|memcpy|memset|memmove|strcmp|strlen' "$TMPD/undef" | tr '\n' ' ')
if [ -z "$extra" ]; then ok only_zlib_and_memory_primitives; else fail only_zlib_and_memory_primitives "unexpected symbols: $extra"; fi
# No hosted headers in firmware sources.
bad=$(grep -n '#include <' firmware/*.c firmware/*.h | grep -v -E '<(stdarg|stddef|stdint)\.h>' | tr '\n' ' ')
if [ -z "$bad" ]; then ok no_hosted_headers; else fail no_hosted_headers "$bad"; fi
bad=$(grep -n -E '#include "(sim|host|tools|util/file)' firmware/*.c firmware/*.h | tr '\n' ' ')
if [ -z "$bad" ]; then ok no_sim_or_host_headers; else fail no_sim_or_host_headers "$bad"; fi
# Cross-compile for a 32-bit RISC-V control core with no C library headers at
# all (only the compiler's own stdarg/stddef/stdint), when clang can target it.
if command -v clang > /dev/null && echo 'int x;' | clang --target=riscv32-unknown-elf -x c -c - -o "$TMPD/probe.o" 2> /dev/null; then
    rv=1
    for f in firmware/*.c; do
        clang --target=riscv32-unknown-elf -march=rv32imac -ffreestanding -nostdinc -isystem "$(clang -print-resource-dir)/include" \
            -std=c11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter -I. -c "$f" -o "$TMPD/rv_$(basename "$f" .c).o" > "$TMPD/rv.log" 2>&1 \
            || { rv=0; fail "riscv32_$(basename "$f")" "$(head -c 600 "$TMPD/rv.log")"; }
    done
    [ $rv -eq 1 ] && ok riscv32_cross_compiles_without_libc_headers
fi
cli_summary fw_freestanding
