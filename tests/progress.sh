#!/bin/sh
# The progress bar: on standard error only, one line redrawn with \r (never a newline, so an error line
# after it stays one line), cleared at the end; --quiet wins over --progress; stdout is unchanged.
# usage: progress.sh BINARY
set -u
bin=$1
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for args in "figure 1b --format csv --ctx 4096 --step 1024" "simulate --heads 2 --ctx 64 --format csv" \
            "analyze --heads 4 --ctx 64" "analyze --heads 2 --ctx 64 --dtype bf16,fp16 --level weight" \
            "design --heads 4 --ctx 64" "design --clamp --heads 4 --ctx 64"; do
  $bin $args > "$dir/plain" 2>"$dir/plain.err" || fail "$args"
  $bin $args --progress > "$dir/bar" 2>"$dir/bar.err" || fail "$args --progress"
  cmp -s "$dir/plain" "$dir/bar" || fail "$args: --progress changed standard output"
  [ -s "$dir/plain.err" ] && fail "$args: a bar without --progress on a non-terminal"
  grep -q '100%' "$dir/bar.err" || fail "$args: no 100% in the bar: $(cat "$dir/bar.err")"
  grep -q '\[#' "$dir/bar.err" || fail "$args: no bar drawn"
  [ "$(tr -cd '\n' < "$dir/bar.err" | wc -c)" -eq 0 ] || fail "$args: the bar wrote a newline"
  [ "$(tail -c 1 "$dir/bar.err" | od -An -c | tr -d ' ')" = '\r' ] || fail "$args: the bar was not cleared"
  $bin $args --progress --quiet > /dev/null 2>"$dir/quiet.err" || fail "$args --quiet"
  [ -s "$dir/quiet.err" ] && fail "$args: --quiet drew a bar"
done
# The time left reads as English at every size: never "about under a second" (issue 15 item 14). A run
# long enough (about a second) to show an estimate, and to reach its last second.
$bin simulate --heads 4 --ctx 4096 --logit-std 1 --format csv --progress --threads 1 > /dev/null 2>"$dir/eta.err" ||
  fail "simulate --logit-std 1 --progress"
tr '\r' '\n' < "$dir/eta.err" | grep -a 'left' | grep -a -q 'about \(under\|less\)' &&
  fail "the bar says: $(tr '\r' '\n' < "$dir/eta.err" | grep -a 'about \(under\|less\)' | tail -1)"
echo "progress: ok"
