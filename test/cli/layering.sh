# layering.sh - the architecture holds: who may include and call whom.
#
# 1. Layers of the repository (docs/conventions.md): util/ includes nothing
#    of ours above it; isa/ only util/; sim/ only isa/ and util/ (and the
#    device model, sim/device.c, the firmware its control processor runs);
#    firmware/ only isa/ and util/err.h's error type; compiler/ only isa/
#    and util/.
# 2. Folders of compiler/, lowest first (compiler/target/target.h says
#    what each holds): a file includes headers of its own folder or of a
#    lower one, never of a higher one or of a folder of the same rank.
# 3. The same order holds for calls: every symbol an object of compiler/
#    uses from another compiler object is defined in its own folder or a
#    lower one (nm on $BUILD/obj), and no two compiler files depend on each
#    other in a circle, directly or through others (tsort finds loops).
. test/cli/lib.inc
# The sources are the same in every pass of make test, and the sanitizer
# builds' objects call the same symbols of one another as the plain one's:
# the plain pass checks it (about 9 CPU-s a pass, since session 33).
case "$BUILD" in *san*) echo "layering: checked in the plain pass"; cli_summary layering; exit $?;; esac
rank() {
    case $1 in
    ir) echo 0;; ops) echo 1;; onnx|passes|interp) echo 2;;
    target) echo 3;; legalize) echo 4;; alloc) echo 5;; lower) echo 6;; schedule) echo 7;;
    cost) echo 8;; group) echo 9;; emit) echo 10;; backend) echo 11;; driver) echo 12;; *) echo "";;
    esac
}

# 1. repository layers
bad=$(grep -l '#include "\(compiler\|sim\|firmware\|host\|tools\|isa\)/' util/*.[ch] 2>/dev/null)
[ -z "$bad" ] && ok util_includes_nothing_above || fail util_includes_nothing_above "$bad"
bad=$(grep -l '#include "\(compiler\|sim\|firmware\|host\|tools\)/' isa/*.[ch] 2>/dev/null)
[ -z "$bad" ] && ok isa_includes_util_only || fail isa_includes_util_only "$bad"
bad=$( { grep -l '#include "\(compiler\|host\|tools\)/' sim/*.[ch]; grep -l '#include "firmware/' sim/*.[ch] | grep -v '^sim/device.c$'; } 2>/dev/null)
[ -z "$bad" ] && ok sim_includes_isa_util_only || fail sim_includes_isa_util_only "$bad"
bad=$(grep '#include "\(compiler\|sim\|host\|tools\|util\)/' firmware/*.[ch] 2>/dev/null | grep -v '"util/err.h"')
[ -z "$bad" ] && ok firmware_includes_isa_only || fail firmware_includes_isa_only "$bad"
bad=$(grep -rl '#include "\(sim\|firmware\|host\|tools\)/' compiler 2>/dev/null)
[ -z "$bad" ] && ok compiler_includes_isa_util_only || fail compiler_includes_isa_util_only "$bad"

# 2. folder ranks in compiler/ includes
: > "$TMPD/inc"
for f in $(find compiler -name '*.[ch]' | sort); do
    from=$(echo "$f" | cut -d/ -f2); rf=$(rank "$from")
    [ -n "$rf" ] || { echo "$f: folder '$from' has no rank in layering.sh" >> "$TMPD/inc"; continue; }
    for h in $(sed -n 's/^#include "compiler\/\([a-z_]*\)\/.*/\1/p' "$f"); do
        [ "$h" = "$from" ] && continue
        rh=$(rank "$h")
        if [ -z "$rh" ] || [ "$rh" -ge "$rf" ]; then echo "$f includes compiler/$h/ (rank ${rh:-none} >= $rf)" >> "$TMPD/inc"; fi
    done
done
[ -s "$TMPD/inc" ] && fail compiler_include_ranks "$(head -c 1500 "$TMPD/inc")" || ok compiler_include_ranks

# 3. symbol-level dependencies between compiler objects
objs=$(find compiler -name '*.c' | sort | sed "s|^|$BUILD/obj/|; s|\.c\$|.o|")
: > "$TMPD/defs"; : > "$TMPD/uses"
for o in $objs; do
    [ -f "$o" ] || { fail objects_built "$o missing (build first)"; continue; }
    src=${o#$BUILD/obj/}
    nm --defined-only -g "$o" | awk -v f="$src" 'NF == 3 { print $3, f }' >> "$TMPD/defs"
    nm -u "$o" | awk -v f="$src" '{ print $NF, f }' >> "$TMPD/uses"
done
awk 'NR == FNR { def[$1] = $2; next } ($1 in def) && def[$1] != $2 { print $2, def[$1], $1 }' \
    "$TMPD/defs" "$TMPD/uses" | sort -u > "$TMPD/edges"
[ -s "$TMPD/edges" ] && ok symbol_edges_found || fail symbol_edges_found "no dependencies between compiler objects found"
: > "$TMPD/up"
while read -r a b sym; do
    fa=$(echo "$a" | cut -d/ -f2); fb=$(echo "$b" | cut -d/ -f2)
    [ "$fa" = "$fb" ] && continue
    ra=$(rank "$fa"); rb=$(rank "$fb")
    [ "$rb" -ge "$ra" ] && echo "$a calls $sym of $b" >> "$TMPD/up"
done < "$TMPD/edges"
[ -s "$TMPD/up" ] && fail compiler_call_ranks "$(head -c 1500 "$TMPD/up")" || ok compiler_call_ranks
awk '{ print $1, $2 }' "$TMPD/edges" | sort -u | tsort > /dev/null 2> "$TMPD/loops"
if grep -q loop "$TMPD/loops"; then
    fail no_dependency_circles "$(sed 's/^tsort: //' "$TMPD/loops" | head -c 1500)"
else
    ok no_dependency_circles
fi
cli_summary layering
