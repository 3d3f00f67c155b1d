#!/bin/sh
# Costs judged before the work (issue 15, items 7 and 8): a refusal that the input's size alone decides
# comes at once, as one line on stderr with exit 2 and nothing on stdout, whatever that size is.
# usage: cost_before_work.sh BINARY
set -u
bin=$1
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# refused ARGS...: exit 2 within 20 s (the work itself would take hours), one stderr line, empty stdout
refused() {
  timeout 20 "$bin" "$@" > "$dir/out" 2> "$dir/err"
  rc=$?
  [ $rc -eq 124 ] && fail "$*: still working after 20 s (no refusal before the work)"
  [ $rc -eq 2 ] || fail "$*: exit $rc, expected 2: $(cat "$dir/err")"
  [ -s "$dir/out" ] && fail "$*: wrote to standard output"
  [ "$(wc -l < "$dir/err")" -eq 1 ] || fail "$*: expected one line on stderr, got: $(cat "$dir/err")"
  return 0
}

# A .npy header claiming 65536 x 4096 x 4096 float32 (4 TiB): 10 bytes of preamble, a 118-byte dict.
header() {
  printf '\223NUMPY\001\000v\000'
  printf "%-117s\n" "{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 4096, 4096), }"
}
header > "$dir/small.npy"
[ "$(wc -c < "$dir/small.npy")" -eq 128 ] || fail "test setup: header is not 128 bytes"
# 4 KiB in all: the header claims more data than the file holds, bad input naming the file
truncate -s 4096 "$dir/small.npy" || exit 99
refused simulate --logits "$dir/small.npy" --ctx 4096
grep -q "small.npy" "$dir/err" || fail "the truncated file is not named: $(cat "$dir/err")"
grep -q "truncated" "$dir/err" || fail "the truncated file is not said to be truncated: $(cat "$dir/err")"
# Sparse, as large as the header says (4 TiB, nothing on disk): refused by the budget, not read first
cp "$dir/small.npy" "$dir/big.npy"
truncate -s 4398046511232 "$dir/big.npy" || { echo "cost_before_work: no sparse files here, skipped"; exit 77; }
refused simulate --logits "$dir/big.npy" --ctx 4096
grep -q "over the budget" "$dir/err" || fail "the 4 TiB file is not refused by the budget: $(cat "$dir/err")"

# figure: a table over the cell limit is refused before the figure is computed (CSV streams instead)
# (a one-second budget: the size is judged first, so the refusal names the cells, not the budget)
ABL_BUDGET_SECONDS=1
export ABL_BUDGET_SECONDS
refused figure 1a --heads 65536 --step 64
unset ABL_BUDGET_SECONDS
grep -q "cells" "$dir/err" || fail "figure: not refused for its table size: $(cat "$dir/err")"
# Work the estimates used to miss (issue 15, items 8 and 11): each ran for minutes without --force, now
# refused at once by the budget of a minute (tests/cost_bound.py checks that the estimates are not low).
for args in "design --clamp --heads 65536 --ctx 4096" "design --heads 65536 --ctx 64" \
            "analyze --heads 65536 --ctx 2048 --dtype bf16,fp16,fp32,tf32" \
            "analyze --ctx 700 --dtype fp8-e4m3fn --convention subnormal --level weight --slopes slopes:0.5 --distance log"; do
  refused $args
  grep -q "over the budget" "$dir/err" || fail "$args: not refused by the budget: $(cat "$dir/err")"
done
echo "cost_before_work: ok"
