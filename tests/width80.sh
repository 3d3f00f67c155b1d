#!/bin/sh
# Every default text output fits 80 columns (issue 11): the golden .out of each text-format CLI case
# (no --format, or --format text, and no --wide) and every command's --help, counted in display
# columns (UTF-8 code points).
#   tests/width80.sh BINARY CLI_DIR
set -u
bin=$1; dir=$2
export LC_ALL=C
fail=0
# Widest line of a file, in code points: drop UTF-8 continuation bytes, then count bytes.
widest() { sed 's/[\x80-\xbf]//g' "$1" | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }'; }
check() { # FILE WHAT
  w=$(widest "$1")
  if [ "$w" -gt 80 ]; then
    echo "$2: $w columns (more than 80):"
    sed 's/[\x80-\xbf]//g' "$1" | awk 'length($0) > 80 { print "  " NR ": " length($0); exit }'
    fail=1
  fi
}
n=0
for cmd in "$dir"/*.cmd; do
  case_=${cmd%.cmd}
  [ -f "$case_.out" ] || continue
  grep -qix -- '--wide' "$cmd" && continue
  fmt=$(awk 'p { print tolower($0); exit } /^--format$/ { p = 1 }' "$cmd")
  case "$fmt" in ''|text) ;; *) continue ;; esac
  check "$case_.out" "$(basename "$case_")"
  n=$((n + 1))
done
tmp=$(mktemp) || exit 99
trap 'rm -f "$tmp"' EXIT
"$bin" --help > "$tmp" && check "$tmp" "alibi-blind --help"
for c in $("$bin" --help | awk '/^Commands:/ { p = 1; next } p && /^  [a-z]/ { print $1 } p && /^$/ { exit }'); do
  "$bin" "$c" --help > "$tmp" || { echo "$c --help failed"; fail=1; }
  check "$tmp" "alibi-blind $c --help"
  n=$((n + 1))
done
[ "$n" -gt 10 ] || { echo "only $n outputs checked"; fail=1; }
exit $fail
