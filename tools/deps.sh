#!/bin/sh
# deps.sh WHY PKG... - installs the Debian packages a make target needs and
# lacks (`make test`, `make demo` and `make fuzz` call it), saying which and
# why, so that the README's two commands work on a fresh Debian machine.
#
# Nothing happens when every package is installed. Otherwise apt-get runs
# as root, or through sudo for another user; without either (or off
# Debian) it prints the command to run and exits 1. The package lists are
# refreshed first (a fresh machine may have none). ATOLL_NO_INSTALL=1 only
# reports what is missing (exit 1 if anything is).
why=$1
shift
if ! command -v dpkg > /dev/null 2>&1; then
    # not Debian: only say what the packages are for
    exit 0
fi
need=""
for p in "$@"; do
    dpkg -s "$p" > /dev/null 2>&1 || need="$need $p"
done
[ -z "$need" ] && exit 0
echo "atoll: installing$need ($why) with apt-get"
if [ "${ATOLL_NO_INSTALL:-0}" = 1 ]; then
    echo "atoll: ATOLL_NO_INSTALL=1: not installing; run: apt-get install$need"
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo > /dev/null 2>&1; then
    SUDO="sudo"
    echo "atoll: (through sudo, which may ask for your password)"
else
    echo "atoll: not root and no sudo: run as root: apt-get install$need"
    exit 1
fi
log=$(mktemp 2>/dev/null || echo /tmp/atoll-deps.$$)
if $SUDO apt-get update -qq > "$log" 2>&1 &&
   $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >> "$log" 2>&1; then
    rm -f "$log"
    echo "atoll: installed$need"
    exit 0
fi
tail -n 20 "$log"
rm -f "$log"
echo "atoll: apt-get could not install$need; install them and run make again"
exit 1
