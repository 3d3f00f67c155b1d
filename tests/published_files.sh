#!/bin/sh
# reproduce --published DIR: bounded reading (issue 7). A table that is a fifo, a device (a symlink to
# /dev/zero), a directory or over 16 MiB is refused with one line on stderr and exit 2; duplicate
# detection is O(n log n) (100,000 rows are answered at once, not in minutes).
# usage: published_files.sh BINARY PUBLISHED_DIR
set -u
bin=$1; src=$2
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
fresh() { rm -rf "$dir/p"; mkdir "$dir/p" && cp "$src"/*.csv "$dir/p/" || exit 99; }
refused() { # refused WHAT WANT_IN_MESSAGE
  out=$("$bin" reproduce --published "$dir/p" 2>"$dir/err"); rc=$?
  [ "$rc" -eq 2 ] || fail "$1: exit $rc, expected 2"
  [ -z "$out" ] || fail "$1: printed a report"
  [ "$(wc -l < "$dir/err")" -eq 1 ] || fail "$1: not one line on stderr: $(cat "$dir/err")"
  grep -q "$2" "$dir/err" || fail "$1: message does not say '$2': $(cat "$dir/err")"
}

fresh; "$bin" reproduce --published "$dir/p" >/dev/null || fail "a copy of the transcription is not accepted"

fresh; rm "$dir/p/table8.csv"; mkfifo "$dir/p/table8.csv"
refused "a fifo" "table8.csv: not a regular file"          # used to hang

fresh; rm "$dir/p/table1.csv"; ln -s /dev/zero "$dir/p/table1.csv"
refused "a symlink to /dev/zero" "table1.csv: not a regular file"   # used to read until memory ran out

fresh; rm "$dir/p/claims.csv"; mkdir "$dir/p/claims.csv"
refused "a directory" "claims.csv: not a regular file"

fresh; { cat "$src/table5.csv"; head -c 17000000 /dev/zero | tr '\0' 'x'; } > "$dir/p/table5.csv"
refused "a 17 MB file" "table5.csv: larger than 16 MiB"

# A field longer than 100 bytes is refused, never cut.
fresh; long=$(printf 'x%.0s' $(seq 101)); sed "2s/^[^,]*/$long/" "$src/claims.csv" > "$dir/p/claims.csv"
refused "a 101-byte field" "a field longer than 100 bytes"

# 100,000 claim rows with one repeat at the end: found (and named) by sorting, not by comparing all pairs.
fresh; { cat "$src/claims.csv"; i=0; awk 'BEGIN { for (i = 0; i < 100000; i++) printf "zz.%d,9.9,filler,1\n", i; print "zz.5,9.9,filler,1" }'; } \
    > "$dir/p/claims.big"
head -1 "$src/claims.csv" | grep -q '^id,section,claim,printed_value' || fail "claims.csv columns changed: update this test"
mv "$dir/p/claims.big" "$dir/p/claims.csv"
n=$(wc -l < "$src/claims.csv")
refused "a repeated id among 100,000 rows" "line $((n + 100001)) repeats 'zz.5' of line $((n + 6))"
echo "published files: ok"
