#!/bin/sh
# --output and --weights: written through symlinks and into fifos (never replaced), and a failed run
# leaves no file behind. usage: output_files.sh BINARY
set -u
bin=$1
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 99
fail() { echo "FAIL: $*"; exit 1; }

# A symlink stays a symlink; its target receives the report.
: > real.txt
ln -s real.txt link.txt
"$bin" thresholds --output link.txt || fail "thresholds --output link.txt"
[ -L link.txt ] || fail "the symlink was replaced"
[ -s real.txt ] || fail "the symlink's target is empty"

# A dangling symlink is written through: its target is created, the link stays a link (issue 15 item 14).
ln -s made.txt dangling.txt
"$bin" thresholds --output dangling.txt || fail "thresholds --output dangling.txt"
[ -L dangling.txt ] || fail "the dangling symlink was replaced"
cmp -s made.txt real.txt || fail "the dangling symlink's target did not get the report"
# ... also through a chain of links, one of them relative to a subdirectory.
mkdir sub
ln -s ../made2.txt sub/inner.txt
ln -s sub/inner.txt outer.txt
"$bin" thresholds --output outer.txt || fail "thresholds --output outer.txt (a chain of links)"
[ -L outer.txt ] && [ -L sub/inner.txt ] || fail "a link of the chain was replaced"
cmp -s made2.txt real.txt || fail "the chain's target did not get the report"
rm -rf sub outer.txt made2.txt dangling.txt made.txt

# Help and version text that cannot be written is exit 3, as any output (issue 15 item 9).
for args in "--help" "-h" "help" "-V" "--version" "help analyze" "analyze --help" "completion --help" "completion bash"; do
  # shellcheck disable=SC2086
  "$bin" $args > /dev/full 2>/dev/null
  rc=$?
  [ $rc -eq 3 ] || fail "alibi-blind $args > /dev/full: exit $rc, expected 3"
  "$bin" $args > /dev/null 2>&1 || fail "alibi-blind $args: exit $?, expected 0"
done

# A fifo stays a fifo and its reader gets the report.
mkfifo pipe
cat pipe > from-pipe.txt &
"$bin" thresholds --output pipe || fail "thresholds --output pipe"
wait
[ -p pipe ] || fail "the fifo was replaced"
cmp -s from-pipe.txt real.txt || fail "the fifo's reader got something else"

# A bad option value writes nothing; an existing file is left as it was.
echo keep > kept.txt
"$bin" analyze --heads 0 --ctx 10 --output kept.txt 2>/dev/null && fail "bad --heads accepted"
[ "$(cat kept.txt)" = keep ] || fail "a failed run changed its --output file"
"$bin" analyze --heads 0 --ctx 10 --output new.txt 2>/dev/null
[ -e new.txt ] && fail "a failed run created its --output file"

# simulate: the weights file appears only beside a report that was written.
"$bin" simulate --heads 1 --ctx 16 --weights w.txt --output missing-dir/report.txt 2>/dev/null && fail "unwritable --output accepted"
[ -e w.txt ] && fail "a failed simulate left its --weights file"
"$bin" simulate --heads 1 --ctx 16 --weights w.txt --output report.txt || fail "simulate --weights"
[ -s w.txt ] && [ -s report.txt ] || fail "simulate wrote no weights or report"

# A failed --weights (a full device) leaves the report file as it was and prints nothing (issue 7 item 8).
echo keep > kept.txt
"$bin" simulate --heads 1 --ctx 16 --weights /dev/full --output kept.txt 2>/dev/null > stdout.txt
[ $? -eq 2 ] || fail "simulate --weights /dev/full did not exit 2"
[ "$(cat kept.txt)" = keep ] || fail "a failed --weights replaced the --output file"
[ -s stdout.txt ] && fail "a failed --weights printed a report"
rm -f stdout.txt
# The same file for both is refused.
"$bin" simulate --heads 1 --ctx 16 --weights kept.txt --output ./kept.txt 2>/dev/null && fail "--weights X --output X accepted"
[ "$(cat kept.txt)" = keep ] || fail "a refused run changed kept.txt"

# A 250-byte file name works (the temporary name is short, in the same directory).
long=$(printf 'x%.0s' $(seq 250))
"$bin" thresholds --output "$long" || fail "--output with a 250-byte name"
cmp -s "$long" real.txt || fail "the 250-byte file got something else"
rm -f "$long"

# No temporary files are left anywhere.
ls -a | grep -q 'tmp' && fail "temporary files left: $(ls -a | grep tmp)"
echo "output files: ok"
