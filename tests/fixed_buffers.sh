#!/bin/sh
# No fixed-size char buffer holds text (issue 15 item 5; HELPERS/CONTRIBUTING: the growable abl_text or
# heap strings instead). Every char array declared in src/ must either
#   - carry a comment "bounded: WHY" on its line: it holds fixed-width numeric formatting (or bytes that
#     are not text) whose longest value is stated, or
#   - be listed in tests/fixed_buffers.baseline, the known debt (file and declaration line, counted):
#     the list may only shrink. A buffer that is gone must leave the list too, so it stays exact.
# Read-only tables (const char x[] = "...") are not buffers. usage: fixed_buffers.sh SOURCE_DIR
set -u
src=$1
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$src" || exit 99
grep -rnE '\bchar\s+\w+\s*\[[^]]*\]' src --include='*.c' --include='*.h' |
  grep -vE '\bconst\s+(unsigned\s+)?char\b' | grep -v 'bounded:' |
  sed -E 's/^([^:]*):[0-9]+:\s*/\1: /; s/\s+$//' | sort > "$tmp/found"
sed -e '/^#/d' -e '/^$/d' tests/fixed_buffers.baseline | sort > "$tmp/allowed"
fail=0
new=$(comm -23 "$tmp/found" "$tmp/allowed")
if [ -n "$new" ]; then
  echo "fixed-size char buffers (use abl_text or a heap string; or, for bounded numeric text, a"
  echo "'bounded: WHY' comment on the line):"
  echo "$new"
  fail=1
fi
gone=$(comm -13 "$tmp/found" "$tmp/allowed")
if [ -n "$gone" ]; then
  echo "tests/fixed_buffers.baseline lists buffers that are gone (remove these lines):"
  echo "$gone"
  fail=1
fi
[ $fail -eq 0 ] && echo "fixed buffers: $(wc -l < "$tmp/found") known, none new"
exit $fail
