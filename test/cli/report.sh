# report.sh - `atoll report`: HTML from a sweep point's stats JSON, from an
# `atoll run --stats` JSON with `atoll compile --csv` names, and from a
# sweep CSV; each page is self-contained (no script, nothing fetched) and
# renders in a real headless browser (Debian's chromium, which .ci/run
# installs): --dump-dom has the summary, the per-layer table with names,
# ops, bounds and estimates, and every plot; --screenshot draws it. --svg
# writes the plots as files. Bad inputs get clear errors.
. test/cli/lib.inc
if ! command -v chromium > /dev/null; then fail chromium_installed "chromium is not installed (.ci/run installs it)"; cli_summary report; exit 1; fi
ok chromium_installed
S=examples/sweep-tiny.ini
expect_ok sweep "$ATOLL" sweep $S -o "$TMPD/tiny.csv" --stats-dir "$TMPD/stats"
expect_ok report_point "$ATOLL" report "$TMPD/stats/point-3.json" -o "$TMPD/point.html" --svg "$TMPD/svg"
expect_grep three_plots 'wrote .*point.html (3 plots)' "$TMPD/out"
expect_ok report_sweep "$ATOLL" report "$TMPD/tiny.csv" -o "$TMPD/sweep.html"
expect_grep four_plots 'wrote .*sweep.html (4 plots)' "$TMPD/out"
expect_ok compile_csv "$ATOLL" compile models/lenet5.onnx --chip configs/tiny.ini -o "$TMPD/l.abm" --csv "$TMPD/est.csv" --group none
expect_ok run_stats "$ATOLL" run "$TMPD/l.abm" --chip configs/tiny.ini --input models/lenet5.ref.npz --stats "$TMPD/run.json"
expect_ok report_run "$ATOLL" report "$TMPD/run.json" --estimate "$TMPD/est.csv" -o "$TMPD/run.html"
for f in point sweep run; do
    if grep -qiE '<script|src=|href=|@import|url\(' "$TMPD/$f.html"; then fail ${f}_self_contained "$(grep -oiE '<script|src=|href=|@import|url\(' "$TMPD/$f.html" | head -3)"
    else ok ${f}_self_contained; fi
done
for p in roofline layer-bounds engine-timeline; do
    if head -c 200 "$TMPD/svg/$p.svg" | grep -q '<svg xmlns="http://www.w3.org/2000/svg" id="'$p'"'; then ok svg_file_$p; else fail svg_file_$p "$(head -c 200 "$TMPD/svg/$p.svg")"; fi
done
# a real browser: the DOM it builds and a screenshot
export HOME="$TMPD/home"
mkdir -p "$HOME"
browse() { # PAGE ARGS...: chromium headless on file://PAGE with a fresh profile
    page=$1; shift
    profile=$(mktemp -d "$TMPD/profile.XXXXXX")
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
        --disable-sync --no-first-run --user-data-dir="$profile" "$@" "file://$page" 2> "$TMPD/chromium.err"
}
browse "$TMPD/point.html" --dump-dom > "$TMPD/point.dom"
for pat in '<table id="summary">' '<table id="layers">' '/features/features.0/Conv' 'Gemm+Relu' '<td class="bound-compute">compute</td>' \
           '<th>estimated cycles</th>' '<svg[^>]*id="roofline"' '<svg[^>]*id="layer-bounds"' '<svg[^>]*id="engine-timeline"' \
           'digits_cnn, fp32, batch 1 (sweep point 3)' 'mm2 at 45nm'; do
    if grep -q -- "$pat" "$TMPD/point.dom"; then ok "point_dom: $pat"; else fail "point_dom: $pat" "not in the DOM: $(head -c 300 "$TMPD/point.dom") $(tail -3 "$TMPD/chromium.err")"; fi
done
n=$(grep -o '<circle' "$TMPD/point.dom" | wc -l)
if [ "$n" -ge 3 ]; then ok roofline_has_layer_points; else fail roofline_has_layer_points "$n circles"; fi
browse "$TMPD/run.html" --dump-dom > "$TMPD/run.dom"
for pat in '/classifier/classifier.1/Gemm' 'Gemm+Tanh' '<svg[^>]*id="roofline"'; do
    if grep -q -- "$pat" "$TMPD/run.dom"; then ok "run_dom: $pat"; else fail "run_dom: $pat" "not in the DOM"; fi
done
# a layer group's row (Group(n), named first .. last) and its members'
# rows under it: digits_cnn on tiny with its activations in DRAM, where
# its convolutions and pool form one
expect_ok compile_group "$ATOLL" compile models/digits_cnn.onnx --chip configs/tiny.ini --sram-activations never -o "$TMPD/g.abm" --csv "$TMPD/g.csv"
expect_ok run_group "$ATOLL" run "$TMPD/g.abm" --input test/data/digits_x.npy --stats "$TMPD/g.json"
expect_ok report_group "$ATOLL" report "$TMPD/g.json" --estimate "$TMPD/g.csv" -o "$TMPD/g.html"
browse "$TMPD/g.html" --dump-dom > "$TMPD/g.dom"
for pat in '/features/features.0/Conv .. ' 'Group(3)' '<td class="num">0.2</td><td>member 2 of layer 0</td>' '<th[^>]*>held</th>'; do
    if grep -q -- "$pat" "$TMPD/g.dom"; then ok "group_dom: $pat"; else fail "group_dom: $pat" "not in the DOM"; fi
done
browse "$TMPD/sweep.html" --dump-dom > "$TMPD/sweep.dom"
for pat in '<table id="points">' 'lenet5, fp32, batch 1' '<svg[^>]*id="pareto-area-0"' '<svg[^>]*id="pareto-energy-1"' \
           'images/s per mm2' 'point 2: lmem.bytes=65536 dram.gbps=16'; do
    if grep -q -- "$pat" "$TMPD/sweep.dom"; then ok "sweep_dom: $pat"; else fail "sweep_dom: $pat" "not in the DOM"; fi
done
browse "$TMPD/point.html" --window-size=1300,2400 --screenshot="$TMPD/point.png" > /dev/null
if [ -s "$TMPD/point.png" ] && [ "$(head -c 8 "$TMPD/point.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] &&
   [ "$(wc -c < "$TMPD/point.png")" -gt 20000 ]; then ok screenshot_png
else fail screenshot_png "no PNG of a drawn page: $(ls -l "$TMPD/point.png" 2>&1) $(tail -3 "$TMPD/chromium.err")"; fi
# errors
echo '{"chip": "x"}' > "$TMPD/not.json"
expect_fail not_stats "not.json: not an Atoll stats JSON" "$ATOLL" report "$TMPD/not.json" -o "$TMPD/x.html"
echo '{"cycles": 1,' > "$TMPD/broken.json"
expect_fail broken_json "broken.json:2:1: expected a key string" "$ATOLL" report "$TMPD/broken.json" -o "$TMPD/x.html"
printf 'a,b\n1,2\n' > "$TMPD/not.csv"
expect_fail not_sweep_csv "not.csv:1: not a sweep CSV" "$ATOLL" report "$TMPD/not.csv" -o "$TMPD/x.html"
expect_fail bad_estimate "tiny.csv:1: not an .atoll compile --csv. table" "$ATOLL" report "$TMPD/run.json" --estimate "$TMPD/tiny.csv" -o "$TMPD/x.html"
if [ ! -e "$TMPD/x.html" ]; then ok no_partial_report; else fail no_partial_report "x.html written"; fi
expect_fail no_output "-o REPORT.html is required" "$ATOLL" report "$TMPD/run.json"
expect_fail bad_kind "give a stats .json or a sweep .csv" "$ATOLL" report "$TMPD/l.abm" -o "$TMPD/x.html"
cli_summary report
