#!/bin/sh
# Golden CLI test: run_golden.sh BINARY CASE
#   CASE.cmd  arguments, one per line (@DATA@ expands to tests/cli/data, and back in the output)
#   CASE.out  exact expected stdout          CASE.rc   expected exit status (default 0)
#   CASE.err  exact expected stderr (optional; without it, a non-zero status must come with
#             exactly one line on stderr, and a zero status with an empty stderr)
# Set ABL_GOLDEN_UPDATE=1 to rewrite CASE.out/.rc/.err from the binary (review the diff!).
set -u
bin=$1; case_=$2
dir=$(dirname "$case_")
# @DATA@ is a link of fixed length to tests/cli/data: text that wraps at the terminal width wraps the same
# wherever the checkout lies (/tmp/abl-golden.XXXXXXXX/data, 29 bytes).
tmp=$(mktemp -d /tmp/abl-golden.XXXXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
real="$dir/data" # a case folder without data (tests/cli-noplot) has nothing to link
if [ -d "$real" ]; then
  real=$(cd "$real" && pwd -P) || exit 99
  ln -s "$real" "$tmp/data" || exit 99
fi
data="$tmp/data"
set --
while IFS= read -r line || [ -n "$line" ]; do
  set -- "$@" "$(printf '%s' "$line" | sed "s|@DATA@|$data|g")"
done < "$case_.cmd"
# Run in an empty directory of its own: files a case writes (--output NAME) vanish with it, never land
# in the build tree or the checkout.
mkdir "$tmp/cwd" || exit 99
(cd "$tmp/cwd" && exec "$bin" "$@") >"$tmp/out.raw" 2>"$tmp/err.raw" </dev/null
rc=$?
# Paths under @DATA@ are echoed back as @DATA@, so expectations do not depend on the checkout's location.
# (and so is the real path, where the tool resolves the link).
esc=$(printf '%s' "$data" | sed 's/[][\\.*^$|]/\\&/g')
rsc=$(printf '%s' "$real" | sed 's/[][\\.*^$|]/\\&/g')
sed "s|$esc|@DATA@|g; s|$rsc|@DATA@|g" "$tmp/out.raw" > "$tmp/out"
sed "s|$esc|@DATA@|g; s|$rsc|@DATA@|g" "$tmp/err.raw" > "$tmp/err"
if [ "${ABL_GOLDEN_UPDATE:-0}" = 1 ]; then
  cp "$tmp/out" "$case_.out"
  if [ "$rc" -ne 0 ]; then echo "$rc" > "$case_.rc"; else rm -f "$case_.rc"; fi
  if [ -s "$tmp/err" ]; then cp "$tmp/err" "$case_.err"; else rm -f "$case_.err"; fi
  exit 0
fi
want_rc=0; [ -f "$case_.rc" ] && want_rc=$(cat "$case_.rc")
fail=0
if [ "$rc" != "$want_rc" ]; then echo "exit status $rc, expected $want_rc"; fail=1; fi
if ! cmp -s "$tmp/out" "$case_.out"; then echo "stdout differs:"; diff -u "$case_.out" "$tmp/out" | head -40; fail=1; fi
if [ -f "$case_.err" ]; then
  if ! cmp -s "$tmp/err" "$case_.err"; then echo "stderr differs:"; diff -u "$case_.err" "$tmp/err" | head -20; fail=1; fi
elif [ "$rc" -ne 0 ]; then
  n=$(wc -l < "$tmp/err")
  if [ "$n" -ne 1 ]; then echo "expected exactly one line on stderr, got $n:"; cat "$tmp/err"; fail=1; fi
elif [ -s "$tmp/err" ]; then
  echo "unexpected stderr:"; cat "$tmp/err"; fail=1
fi
exit $fail
