# python.sh - the Python module (python/atoll, ctypes + numpy) against this
# build's libatoll.so: test/python/test_atoll.py compiles, runs and profiles
# the bundled models through it. Needs python3 with numpy (Debian's
# python3-numpy, which `make test` installs when missing). Under the
# sanitizer build the library is ASan's: its runtime is preloaded.
. test/cli/lib.inc
PY=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" > /dev/null 2>&1 && "$p" -c "import numpy" > /dev/null 2>&1; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
    fail python_with_numpy "no python3 with numpy (apt-get install python3-numpy)"
    cli_summary python
    exit 1
fi
pre=""
case "$BUILD" in *san*)
    pre="$(${CC:-cc} -print-file-name=libasan.so) $(${CC:-cc} -print-file-name=libubsan.so)";;
esac
LD_PRELOAD="$pre" ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=python ATOLL_LIB="$BUILD/libatoll.so.0" ATOLL_EXE="$ATOLL" \
    "$PY" test/python/test_atoll.py > "$TMPD/py.out" 2>&1
rc=$?
cat "$TMPD/py.out"
line=$(grep -E '^python: [0-9]+ passed, [0-9]+ failed$' "$TMPD/py.out")
p=$(echo "$line" | sed -E 's/python: ([0-9]+) passed.*/\1/')
f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed/\1/')
[ -n "$line" ] || { p=0; f=1; }
[ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
cli_passed=$((cli_passed + p)); cli_failed=$((cli_failed + f))
# the module imports with numpy and the standard library only
if grep -E '^(import|from) ' python/atoll/__init__.py | grep -v -E '^import (ctypes|os|tempfile)$|^import numpy as np$' > "$TMPD/imports"; then
    fail only_ctypes_and_numpy "$(cat "$TMPD/imports")"
else ok only_ctypes_and_numpy; fi
cli_summary python
