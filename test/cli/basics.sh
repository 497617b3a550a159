# basics.sh - the front end dispatches, prints help and rejects unknown commands.
. test/cli/lib.inc
expect_ok version "$ATOLL" version
expect_ok help "$ATOLL" --help
expect_fail unknown_command "unknown command" "$ATOLL" frobnicate
cli_summary basics
