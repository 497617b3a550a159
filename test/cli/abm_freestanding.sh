# abm_freestanding.sh - the .abm reader must stay linkable into the
# freestanding firmware: its object may only call zlib (crc32, inflate*) and
# the memory/string primitives every freestanding C environment provides
# (plus bcmp: a hosted clang build turns memcmp() == 0 into it; compiled
# -ffreestanding, as fw_freestanding.sh does, it does not).
. test/cli/lib.inc
obj=$BUILD/obj/isa/abm_read.o
if [ ! -f "$obj" ]; then fail reader_object "$obj missing"; cli_summary abm_freestanding; exit 1; fi
if ! command -v nm > /dev/null; then fail nm_available "nm not installed"; cli_summary abm_freestanding; exit 1; fi
nm -u "$obj" | awk '{print $NF}' | grep -v -E '^(__asan_|__ubsan_|__sanitizer_|_GLOBAL_OFFSET_TABLE_)' | sort > "$TMPD/undef"
extra=$(grep -v -x -E 'crc32|inflate|inflateEnd|inflateInit_|memcmp|bcmp|memcpy|memset|memmove|strcmp|strlen' "$TMPD/undef" | tr '\n' ' ')
if [ -z "$extra" ]; then ok reader_calls_only_zlib_and_mem; else fail reader_calls_only_zlib_and_mem "unexpected symbols: $extra"; fi
expect_grep reader_uses_inflate "^inflate$" "$TMPD/undef"
cli_summary abm_freestanding
