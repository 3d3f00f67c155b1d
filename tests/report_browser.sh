#!/bin/sh
# The HTML report in a real browser: report_browser.sh BINARY WORKDIR
# Renders reports (a generic layer, and catalogue models whose labels and legends are the longest: Falcon's
# kernel-scaled bias, 64 heads), checks each is self-contained (no script, no external reference), loads it in
# headless Chromium inside a measuring page at 1280 and at 800 pixels wide, and fails on any console message,
# on a picture of zero size, on a page wider than the window, and on any text of a picture that reaches
# outside the picture's box (a clipped legend or axis label). Keeps screenshots of every report at both widths
# and of every plot kind's SVG as rendered (WORKDIR/*.png, CI artefacts). Exit 77 (Skipped) when Chromium is
# not installed.
set -u
bin=$1; work=$2
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then echo "chromium is not installed: skipped"; exit 77; fi
rm -rf "$work"; mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd) || exit 1   # file:// URLs need an absolute path
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir=$work/profile --allow-file-access-from-files --enable-logging=stderr --v=0"
fail=0

# The measuring page: the report in a frame of the given width; every <svg>'s size, every text of a picture
# that leaves its <svg>'s box, and the page's own overflow, written into the DOM.
measure_page() { # NAME WIDTH
  cat > "$work/measure-$1-$2.html" <<HTML
<!DOCTYPE html><html><head><meta charset="utf-8"><title>measure</title></head><body style="margin:0">
<iframe id="r" src="$1.html" style="width:$2px;height:6000px;border:0"></iframe>
<script>
document.getElementById("r").addEventListener("load", function () {
  var sizes = [], over = [], d = this.contentDocument, page = d.documentElement;
  if (page.scrollWidth > page.clientWidth + 1) over.push("page " + page.scrollWidth + " > " + page.clientWidth);
  d.querySelectorAll("svg").forEach(function (s, i) {
    var b = s.getBoundingClientRect();
    sizes.push(Math.round(b.width) + "x" + Math.round(b.height));
    if (b.right > page.clientWidth + 1) over.push("svg" + (i + 1) + " right " + Math.round(b.right));
    s.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.width === 0) return;
      if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1)
        over.push("svg" + (i + 1) + " '" + t.textContent.slice(0, 30) + "' [" + Math.round(r.left - b.left) + ".." +
                  Math.round(r.right - b.left) + " of " + Math.round(b.width) + "]");
    });
  });
  var p = document.createElement("pre"); p.id = "sizes"; p.textContent = sizes.join(" ");
  var q = document.createElement("pre"); q.id = "over"; q.textContent = over.join(" | ") || "none";
  document.body.appendChild(p); document.body.appendChild(q);
});
</script></body></html>
HTML
}

check_report() { # NAME ARGS...
  name=$1; shift
  report="$work/$name.html"
  "$bin" report "$@" --output "$report" || { echo "$name: report failed"; fail=1; return; }
  # Self-contained: no script, no stylesheet or image fetched from anywhere.
  if grep -Eiq '<script|<link|<img|<iframe|@import|url\([^#]|(src|href)="[^#]' "$report"; then
    echo "$name.html refers to something outside itself:"
    grep -Eio '.{0,40}(<script|<link|<img|<iframe|@import|url\([^#]|(src|href)="[^#]).{0,40}' "$report" | head; fail=1
  fi
  n_svg=$(grep -c '<svg' "$report")
  [ "$n_svg" -ge 4 ] || { echo "$name: expected at least 4 pictures, found $n_svg"; fail=1; }
  for width in 1280 800; do
    measure_page "$name" "$width"
    # shellcheck disable=SC2086
    timeout 180 "$browser" $flags --window-size=$width,6000 --dump-dom "file://$work/measure-$name-$width.html" \
      >"$work/dom-$name-$width.html" 2>"$work/console-$name-$width.log"
    rc=$?
    [ $rc -eq 0 ] || { echo "$name at $width px: chromium --dump-dom exit $rc"; tail -5 "$work/console-$name-$width.log"; fail=1; }
    if grep -q ':CONSOLE' "$work/console-$name-$width.log"; then
      echo "$name: console messages while loading the report:"; grep ':CONSOLE' "$work/console-$name-$width.log" | head; fail=1
    fi
    sizes=$(sed -n 's/.*<pre id="sizes">\([0-9x ]*\)<\/pre>.*/\1/p' "$work/dom-$name-$width.html")
    echo "$name at $width px: picture sizes $sizes"
    count=0
    for s in $sizes; do
      w=${s%x*}; h=${s#*x}
      if [ "$w" -lt 200 ] || [ "$h" -lt 100 ]; then echo "$name at $width px: picture of size $s"; fail=1; fi
      count=$((count + 1))
    done
    [ "$count" -eq "$n_svg" ] || { echo "$name at $width px: measured $count pictures, expected $n_svg"; fail=1; }
    over=$(sed -n 's/.*<pre id="over">\([^<]*\)<\/pre>.*/\1/p' "$work/dom-$name-$width.html")
    if [ "$over" != "none" ]; then echo "$name at $width px: clipped or overflowing:"; echo "$over" | sed 's/ | /\n/g' | head -20; fail=1; fi
    # The screenshot, kept for people (CI artefact).
    # shellcheck disable=SC2086
    timeout 180 "$browser" $flags --screenshot="$work/$name-$width.png" --window-size=$width,9000 "file://$report" \
      >/dev/null 2>"$work/screenshot.log"
    if [ ! -s "$work/$name-$width.png" ]; then echo "$name: no screenshot at $width px"; fail=1; fi
  done
}

check_report report --heads 8 --ctx 1024
check_report falcon-rw-7b --model falcon-rw-7b
check_report bloom-560m --model bloom-560m --ctx 1024

# Every plot kind as the browser renders its SVG (the screenshots are the artefacts).
for kind in bias fraction blindmap mitigations; do
  args=""
  [ "$kind" = blindmap ] && args="--ctx 512"
  # shellcheck disable=SC2086
  "$bin" plot $kind $args --output "$work/plot-$kind.svg" || { echo "plot $kind failed"; fail=1; continue; }
  # shellcheck disable=SC2086
  timeout 180 "$browser" $flags --screenshot="$work/plot-$kind.png" --window-size=1200,800 "file://$work/plot-$kind.svg" \
    >/dev/null 2>"$work/screenshot.log"
  [ -s "$work/plot-$kind.png" ] || { echo "no screenshot of plot $kind"; fail=1; }
done
[ $fail -eq 0 ] && echo "screenshots: $work/*.png"
exit $fail
