#!/bin/sh
# The HTML report in a real browser: report_browser.sh BINARY WORKDIR
# Renders a report, checks it is self-contained (no script, no external reference), loads it in
# headless Chromium inside a measuring page, and fails on any console message or on a picture
# of zero size. Keeps WORKDIR/report.png (a screenshot) as a CI artifact. Exit 77 (Skipped)
# when Chromium is not installed.
set -u
bin=$1; work=$2
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then echo "chromium is not installed: skipped"; exit 77; fi
rm -rf "$work"; mkdir -p "$work" || exit 1
report="$work/report.html"
"$bin" report --heads 8 --ctx 1024 --output "$report" || { echo "report failed"; exit 1; }
fail=0
# Self-contained: no script, no stylesheet or image fetched from anywhere.
if grep -Eiq '<script|<link|<img|<iframe|@import|url\([^#]|(src|href)="[^#]' "$report"; then
  echo "report.html refers to something outside itself:"; grep -Eio '.{0,40}(<script|<link|<img|<iframe|@import|url\([^#]|(src|href)="[^#]).{0,40}' "$report" | head; fail=1
fi
n_svg=$(grep -c '<svg' "$report")
[ "$n_svg" -eq 4 ] || { echo "expected 4 pictures, found $n_svg"; fail=1; }
# The measuring page: load the report in a frame, then write each picture's rendered size into the DOM.
cat > "$work/measure.html" <<'HTML'
<!DOCTYPE html><html><head><meta charset="utf-8"><title>measure</title></head><body>
<iframe id="r" src="report.html" style="width:1200px;height:2000px"></iframe>
<script>
document.getElementById("r").addEventListener("load", function () {
  var out = [], d = this.contentDocument;
  d.querySelectorAll("svg").forEach(function (s) {
    var b = s.getBoundingClientRect(); out.push(Math.round(b.width) + "x" + Math.round(b.height));
  });
  var p = document.createElement("pre"); p.id = "sizes"; p.textContent = out.join(" ");
  document.body.appendChild(p);
});
</script></body></html>
HTML
flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=$work/profile --allow-file-access-from-files --enable-logging=stderr --v=0"
# shellcheck disable=SC2086
timeout 180 "$browser" $flags --dump-dom "file://$work/measure.html" >"$work/dom.html" 2>"$work/console.log"
rc=$?
[ $rc -eq 0 ] || { echo "chromium --dump-dom exit $rc"; tail -5 "$work/console.log"; fail=1; }
if grep -q ':CONSOLE' "$work/console.log"; then
  echo "console messages while loading the report:"; grep ':CONSOLE' "$work/console.log" | head; fail=1
fi
sizes=$(sed -n 's/.*<pre id="sizes">\([0-9x ]*\)<\/pre>.*/\1/p' "$work/dom.html")
echo "picture sizes: $sizes"
count=0
for s in $sizes; do
  w=${s%x*}; h=${s#*x}
  if [ "$w" -lt 200 ] || [ "$h" -lt 100 ]; then echo "picture of size $s"; fail=1; fi
  count=$((count + 1))
done
[ "$count" -eq 4 ] || { echo "measured $count pictures, expected 4"; fail=1; }
# The screenshot, kept for people (CI artifact).
# shellcheck disable=SC2086
timeout 180 "$browser" $flags --screenshot="$work/report.png" --window-size=1200,3000 "file://$report" \
  >/dev/null 2>"$work/screenshot.log"
if [ ! -s "$work/report.png" ]; then echo "no screenshot"; fail=1; else echo "screenshot: $work/report.png"; fi
exit $fail
