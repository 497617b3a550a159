# install.sh - `make install PREFIX=...` into a scratch prefix: the binary,
# both libraries (the shared one with its soname links), the header, the
# pkg-config file, the chip configs and bundled models under share/atoll,
# and the Python module; the installed binary run from another directory
# finds `--chip a1` and the demo's models by name, the installed Python
# module finds its library, a program builds with pkg-config; `make
# uninstall` removes every file it installed.
. test/cli/lib.inc
P=$TMPD/prefix
W=$TMPD/elsewhere
mkdir -p "$W"
if make -s --no-print-directory install PREFIX="$P" BUILD="$BUILD" > "$TMPD/out" 2>&1; then ok make_install
else fail make_install "$(tail -c 600 "$TMPD/out")"; fi
# a prefix the system Python does not search: the module goes to
# lib/python3/dist-packages and install names the PYTHONPATH to set
expect_grep install_names_pythonpath "import atoll with PYTHONPATH=$P/lib/python3/dist-packages" "$TMPD/out"
# the default prefix: the module goes where the system Python looks, so
# `import atoll` needs nothing set (tools/pysite.py)
if [ -x /usr/bin/python3 ]; then
    d=$(make -s --no-print-directory pydir PREFIX=/usr/local)
    if /usr/bin/python3 -c "import sys; sys.exit(0 if '$d' in sys.path else 1)"; then ok pydir_on_sys_path
    else fail pydir_on_sys_path "'$d' is not on /usr/bin/python3's sys.path"; fi
    d=$(make -s --no-print-directory pydir PREFIX=/usr)
    if /usr/bin/python3 -c "import sys; sys.exit(0 if '$d' in sys.path else 1)"; then ok pydir_usr_on_sys_path
    else fail pydir_usr_on_sys_path "'$d' is not on /usr/bin/python3's sys.path"; fi
fi
for f in bin/atoll lib/libatoll.a lib/libatoll.so.0.1.0 lib/libatoll.so.0 lib/libatoll.so include/atoll.h \
         lib/pkgconfig/atoll.pc share/atoll/configs/a1.ini share/atoll/configs/tiny.ini share/atoll/models/digits_cnn.onnx \
         share/atoll/models/digits_cnn.test.npz share/atoll/models/full/resnet50.onnx lib/python3/dist-packages/atoll/__init__.py; do
    [ -e "$P/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then ok installed_files; else fail installed_files "missing:$missing"; fi
# the installed binary, elsewhere: chips by name, models of the demo
( cd "$W" && "$P/bin/atoll" config check --chip a1 ) > "$TMPD/out" 2>&1
expect_grep installed_finds_chip "share/atoll/configs/a1.ini: ok (chip a1" "$TMPD/out"
( cd "$W" && "$P/bin/atoll" demo --no-resnet --images 16 --batch 8 --no-trace ) > "$TMPD/out" 2>&1
expect_grep installed_demo_runs "predictions    equal to PyTorch's for 16/16 images" "$TMPD/out"
( cd "$W" && "$P/bin/atoll" compile "$P/share/atoll/models/lenet5.onnx" --chip tiny -o l.abm > /dev/null &&
  "$P/bin/atoll" compare "$P/share/atoll/models/lenet5.onnx" l.abm --input "$P/share/atoll/models/lenet5.ref.npz" ) > "$TMPD/out" 2>&1
expect_grep installed_compare_runs "all 1 compared tensors within tolerance" "$TMPD/out"
expect_grep installed_compare_default_chip "on .*share/atoll/configs/tiny.ini through the host API" "$TMPD/out"
case "$BUILD" in *san*) ;; *)
    PY=""
    for p in python3 /usr/bin/python3; do
        if command -v "$p" > /dev/null 2>&1 && "$p" -c "import numpy" > /dev/null 2>&1; then PY=$p; break; fi
    done
    ( cd "$W" && PYTHONPATH="$P/lib/python3/dist-packages" "$PY" -c "
import atoll, numpy as np
d = np.load('$P/share/atoll/models/lenet5.ref.npz')
net = atoll.compile('$P/share/atoll/models/lenet5.onnx', chip='tiny')
out = net.run({'input': d['input']})['output']
assert np.allclose(out, d['output'], atol=1e-4), 'wrong output'
print('installed python ok', net.chip)" ) > "$TMPD/out" 2>&1
    expect_grep installed_python "installed python ok .*share/atoll/configs/tiny.ini" "$TMPD/out"
    if command -v pkg-config > /dev/null 2>&1; then
        "$P/bin/atoll" compile models/lenet5.onnx --chip tiny -o "$TMPD/l.abm" > /dev/null 2>&1
        if ${CC:-cc} -std=c11 examples/host_example.c $(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs atoll) \
               -o "$TMPD/hx" > "$TMPD/out" 2>&1; then ok pkg_config_builds; else fail pkg_config_builds "$(head -c 400 "$TMPD/out")"; fi
        expect_ok pkg_config_program_runs env LD_LIBRARY_PATH="$P/lib" "$TMPD/hx" configs/tiny.ini "$TMPD/l.abm"
        expect_grep pkg_config_program_output "cycles" "$TMPD/out"
    fi
    ;;
esac
if make -s --no-print-directory uninstall PREFIX="$P" BUILD="$BUILD" > "$TMPD/out" 2>&1; then ok make_uninstall
else fail make_uninstall "$(tail -c 600 "$TMPD/out")"; fi
left=$(find "$P" -type f -o -type l | head -5)
if [ -z "$left" ]; then ok uninstall_removes_everything; else fail uninstall_removes_everything "left: $left"; fi
cli_summary install
