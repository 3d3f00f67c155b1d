#!/bin/sh
# Built without PLplot, report still writes the page: its tables, and a note that the pictures are
# missing (naming the packages) instead of <svg>; stderr says the same in one line; exit 0.
# usage: report_page.sh BINARY
set -u
bin=$1
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
"$bin" report --heads 8 --ctx 512 --output "$tmp/r.html" >"$tmp/out" 2>"$tmp/err"
rc=$?
fail=0
[ $rc -eq 0 ] || { echo "report: exit $rc"; cat "$tmp/err"; fail=1; }
[ ! -s "$tmp/out" ] || { echo "report wrote to stdout"; fail=1; }
[ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q 'libplplot-dev plplot-driver-cairo' "$tmp/err" \
  || { echo "stderr is not one line naming the packages:"; cat "$tmp/err"; fail=1; }
[ -f "$tmp/r.html" ] || { echo "no page written"; exit 1; }
grep -q '<table' "$tmp/r.html" || { echo "the page has no table"; fail=1; }
grep -q 'The pictures are missing: .*apt-get install libplplot-dev plplot-driver-cairo' "$tmp/r.html" \
  || { echo "the page does not say the pictures are missing"; fail=1; }
! grep -q '<svg' "$tmp/r.html" || { echo "the page has a picture"; fail=1; }
grep -q '</html>' "$tmp/r.html" || { echo "the page is cut short"; fail=1; }
exit $fail
