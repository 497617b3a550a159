# deps.sh - tools/deps.sh, what `make test`, `make demo` and `make fuzz` run
# first on a fresh Debian machine: with stand-ins for dpkg, apt-get, id and
# sudo on PATH (nothing is installed for real), it installs exactly the
# missing packages, as root directly and otherwise through sudo, says what
# and why, does nothing when all are there, and fails clearly without root
# or sudo, when apt-get fails, and when asked not to install.
. test/cli/lib.inc
F=$TMPD/fake
mkdir -p "$F"
# dpkg -s PKG succeeds for the packages listed in $F/installed
cat > "$F/dpkg" <<'EOS'
#!/bin/sh
grep -qx "$2" "$FAKE/installed"
EOS
cat > "$F/apt-get" <<'EOS'
#!/bin/sh
echo "apt-get $*" >> "$FAKE/calls"
[ "$1" = install ] && [ -f "$FAKE/apt_fails" ] && { echo "E: Unable to locate package"; exit 100; }
exit 0
EOS
cat > "$F/id" <<'EOS'
#!/bin/sh
cat "$FAKE/uid"
EOS
cat > "$F/sudo" <<'EOS'
#!/bin/sh
echo "sudo $*" >> "$FAKE/calls"
"$@"
EOS
chmod +x "$F/dpkg" "$F/apt-get" "$F/id" "$F/sudo"
run_deps() { FAKE=$F PATH="$F:/usr/bin:/bin" sh tools/deps.sh "to run the tests" build-essential clang python3-numpy; }
printf 'build-essential\n' > "$F/installed"
echo 0 > "$F/uid"
: > "$F/calls"
if run_deps > "$TMPD/out" 2>&1; then ok root_installs; else fail root_installs "$(cat "$TMPD/out")"; fi
expect_grep says_what_and_why "atoll: installing clang python3-numpy (to run the tests) with apt-get" "$TMPD/out"
expect_grep updates_lists "apt-get update -qq" "$F/calls"
expect_grep installs_missing_only "apt-get install -y -qq clang python3-numpy" "$F/calls"
if grep -q "^sudo" "$F/calls"; then fail root_needs_no_sudo "$(cat "$F/calls")"; else ok root_needs_no_sudo; fi
# a user with sudo
echo 1000 > "$F/uid"
: > "$F/calls"
if run_deps > "$TMPD/out" 2>&1; then ok sudo_installs; else fail sudo_installs "$(cat "$TMPD/out")"; fi
expect_grep through_sudo "sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang python3-numpy" "$F/calls"
expect_grep says_sudo "through sudo" "$TMPD/out"
# everything there: silent, nothing run
printf 'build-essential\nclang\npython3-numpy\n' > "$F/installed"
: > "$F/calls"
if run_deps > "$TMPD/out" 2>&1 && [ ! -s "$TMPD/out" ] && [ ! -s "$F/calls" ]; then ok nothing_missing_nothing_done
else fail nothing_missing_nothing_done "$(cat "$TMPD/out" "$F/calls")"; fi
# no root, no sudo
printf 'build-essential\n' > "$F/installed"
rm "$F/sudo"
mkdir -p "$TMPD/bin"
for c in sh cat grep mktemp tail rm; do ln -sf "$(command -v $c)" "$TMPD/bin/$c"; done
FAKE=$F PATH="$F:$TMPD/bin" sh tools/deps.sh "to run the tests" clang > "$TMPD/out" 2>&1
if [ $? -eq 1 ] && grep -q "not root and no sudo: run as root: apt-get install clang" "$TMPD/out"; then ok no_sudo_says_what_to_run
else fail no_sudo_says_what_to_run "$(cat "$TMPD/out")"; fi
# apt-get fails
echo 0 > "$F/uid"
touch "$F/apt_fails"
FAKE=$F PATH="$F:/usr/bin:/bin" sh tools/deps.sh "to run the tests" clang > "$TMPD/out" 2>&1
if [ $? -eq 1 ] && grep -q "apt-get could not install clang" "$TMPD/out" && grep -q "Unable to locate" "$TMPD/out"; then ok apt_failure_reported
else fail apt_failure_reported "$(cat "$TMPD/out")"; fi
# asked not to install
rm -f "$F/apt_fails"
: > "$F/calls"
ATOLL_NO_INSTALL=1 FAKE=$F PATH="$F:/usr/bin:/bin" sh tools/deps.sh "to run the tests" clang > "$TMPD/out" 2>&1
if [ $? -eq 1 ] && [ ! -s "$F/calls" ] && grep -q "run: apt-get install clang" "$TMPD/out"; then ok no_install_only_reports
else fail no_install_only_reports "$(cat "$TMPD/out")"; fi
# the make targets of the README call it with their packages
expect_grep make_test_installs "DEPS) \"to build atoll and run its tests\" build-essential zlib1g-dev clang libonnx-testdata python3-numpy" Makefile
expect_grep make_demo_installs "DEPS) \"to build atoll\" build-essential zlib1g-dev" Makefile
expect_grep ci_calls_make_test "^make test" .ci/run
if grep -q "apt-get" .ci/run; then fail ci_does_not_install_itself "apt-get in .ci/run"; else ok ci_does_not_install_itself; fi
cli_summary deps
