#!/bin/sh
# Regenerate every table and figure series of tables/ with the given binary:
#   tables/regenerate.sh PATH/TO/alibi-blind
# Deterministic (no timestamps, no locale dependence): CI reruns it and requires an unchanged tree
# (git diff --exit-code tables/). The published values in tables/published/ are inputs, not outputs.
set -eu
if [ $# -ne 1 ] || [ ! -x "$1" ]; then
  echo "usage: tables/regenerate.sh PATH/TO/alibi-blind" >&2
  exit 2
fi
bin=$1
dir=$(cd "$(dirname "$0")" && pwd)
export LC_ALL=C

for n in 1 4 5 8; do
  for fmt in text:txt markdown:md csv:csv json:json latex:tex; do
    "$bin" table "$n" --format "${fmt%%:*}" --output "$dir/table$n.${fmt#*:}"
  done
done
for panel in 1a 1b; do
  for fmt in csv json; do
    "$bin" figure "$panel" --format "$fmt" --output "$dir/figure$panel.$fmt"
  done
done
# reproduce writes its report, then exits 1 on an unexplained difference: keep going, report at the end.
rc=0
"$bin" reproduce --format text --output "$dir/reproduce.txt" || rc=$?
"$bin" reproduce --format json --output "$dir/reproduce.json" || rc=$?
exit "$rc"
