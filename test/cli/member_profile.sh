# member_profile.sh - a layer group's members in `atoll run --profile`,
# --trace and the Python-free outputs: digits_cnn in bf16 on a1 forms one
# group (conv, conv, maxpool); each member gets a row under the group whose
# cycles (its share of the group's span) add up to the group's; without
# --layer-info the members are numbered; an .abm compiled before member tags
# existed (test/data/old_group_digits.abm, the same model by commit 7b72d4e)
# still profiles, with the group's row alone and the same cycles.
. test/cli/lib.inc
M=models/digits_cnn.onnx
expect_ok member_compile "$ATOLL" compile $M --chip a1 --dtype bf16 --layer-info -o "$TMPD/d.abm"
expect_ok member_profile "$ATOLL" run "$TMPD/d.abm" --timing-only --profile --trace "$TMPD/t.json"
cp "$TMPD/out" "$TMPD/new"
expect_grep member_rows_named '^       /features.0/Conv  *Conv+Relu' "$TMPD/new"
expect_grep member_row_last '^       /features.6/MaxPool  *MaxPool' "$TMPD/new"
# the group's cycles (6th column) against its members' (5th: no id)
sums=$(awk '/^  id layer/ { t = 1; next } t && $1 ~ /^[0-9]+$/ { g = $1; c[g] = $6; next }
            t && /^       / { s[g] += $5; n[g]++ } END { for (k in n) print n[k] " " s[k] " " c[k] }' "$TMPD/new")
set -- $sums
if [ "$1" = 3 ] && [ "$2" = "$3" ] && [ "$2" -gt 0 ]; then ok member_cycles_sum; else fail member_cycles_sum "members, their sum, the group's: $sums"; fi
expect_grep trace_member '"args":{"index":[0-9]*,"layer":0,"member":2,' "$TMPD/t.json"
# without --layer-info: numbered members
expect_ok member_plain_compile "$ATOLL" compile $M --chip a1 --dtype bf16 -o "$TMPD/p.abm"
expect_ok member_plain_profile "$ATOLL" run "$TMPD/p.abm" --timing-only --profile
expect_grep member_numbered '^       member 1  *-' "$TMPD/out"
# an old .abm (no member tags): the group's row alone, the same cycles
expect_ok old_abm_profile "$ATOLL" run test/data/old_group_digits.abm --timing-only --profile
old=$(awk '$1 == "0" && $3 == "Group(3)" { print $6 }' "$TMPD/out")
new=$(awk '$1 == "0" && $3 == "Group(3)" { print $6 }' "$TMPD/new")
if [ -n "$old" ] && [ "$old" = "$new" ]; then ok old_abm_same_cycles; else fail old_abm_same_cycles "old $old, new $new"; fi
if grep -q '^       ' "$TMPD/out"; then fail old_abm_no_members "member rows in $(cat "$TMPD/out")"; else ok old_abm_no_members; fi
cli_summary member_profile
