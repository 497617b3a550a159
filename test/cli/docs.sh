# docs.sh - the generated documents are in step with their tables:
# docs/isa.md == `atoll isa --doc`, docs/config.md == `atoll config --doc`.
# Regenerate with: build/atoll isa --doc > docs/isa.md (same for config).
. test/cli/lib.inc
"$ATOLL" isa --doc > "$TMPD/isa.md" 2>&1
if diff -u docs/isa.md "$TMPD/isa.md" > "$TMPD/isa.diff"; then ok isa_md_in_step
else fail isa_md_in_step "docs/isa.md differs from 'atoll isa --doc': $(head -c 600 "$TMPD/isa.diff")"; fi
"$ATOLL" config --doc > "$TMPD/config.md" 2>&1
if diff -u docs/config.md "$TMPD/config.md" > "$TMPD/config.diff"; then ok config_md_in_step
else fail config_md_in_step "docs/config.md differs from 'atoll config --doc': $(head -c 600 "$TMPD/config.diff")"; fi
# every op and every config key appears in the documents
"$ATOLL" isa | awk 'NR > 1 { print $2 }' > "$TMPD/ops"
missing=""
while read -r op; do grep -q "| \`$op\` |" docs/isa.md || missing="$missing $op"; done < "$TMPD/ops"
if [ -z "$missing" ] && [ -s "$TMPD/ops" ]; then ok isa_md_lists_every_op; else fail isa_md_lists_every_op "missing:$missing"; fi
expect_grep config_md_has_dram_section '## \[dram\]' docs/config.md
expect_grep isa_md_has_layout '| `dst` | addr | 40 + 2 | 43 (space code at 83) |' docs/isa.md
expect_fail isa_bad_option "unknown option '--frob'" "$ATOLL" isa --frob
expect_fail isa_did_you_mean "did you mean '--doc'" "$ATOLL" isa --dco
cli_summary docs
