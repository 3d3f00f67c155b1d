#!/bin/sh
# Functions short enough to read at once (issue 17 item 6): no function in src/ is longer than MAX lines
# (default 80, from its signature's first line to its closing brace) unless tests/function_length.baseline
# lists it with the reason; the list may only shrink (a listed function that is now short, or gone, must
# leave it, so that it stays exact). Entries are "FILE: FUNCTION" with the file's base name, so that a
# file moved to another folder keeps its entry. The project's style puts a function's signature and its
# braces at column 0; the lengths are printed for the listed ones. usage: function_length.sh SOURCE_DIR [MAX]
set -u
src=$1
max=${2:-80}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$src" || exit 99
find src -name '*.c' -o -name '*.h' | sort | xargs awk -v max="$max" '
  FNR == 1 { sig = ""; inbody = 0 }
  !inbody && /^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ { sig = $0; sigline = FNR }
  !inbody && /^\{/ && sig != "" {
    inbody = 1; s = sig; sub(/\(.*/, "", s); n = split(s, w, /[ *]+/); name = w[n]
  }
  inbody && /^\}/ {
    len = FNR - sigline + 1; f = FILENAME; sub(/.*\//, "", f)
    if (len > max) print f ": " name "\t" len
    inbody = 0; sig = ""
  }' | sort > "$tmp/long"
cut -f1 "$tmp/long" > "$tmp/found"
sed -e 's/[[:space:]]*#.*//' -e '/^$/d' tests/function_length.baseline | sort -u > "$tmp/allowed"
fail=0
new=$(comm -23 "$tmp/found" "$tmp/allowed")
if [ -n "$new" ]; then
  echo "functions over $max lines (split them into short functions, or state why in tests/function_length.baseline):"
  grep -F "$new" "$tmp/long"
  fail=1
fi
gone=$(comm -13 "$tmp/found" "$tmp/allowed")
if [ -n "$gone" ]; then
  echo "tests/function_length.baseline lists functions that are $max lines or shorter, or gone (remove these lines):"
  echo "$gone"
  fail=1
fi
if [ $fail -eq 0 ]; then
  echo "functions over $max lines: $(wc -l < "$tmp/found"), all stated exceptions:"
  cat "$tmp/long"
fi
exit $fail
