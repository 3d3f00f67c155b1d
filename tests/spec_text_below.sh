#!/bin/sh
# Issue 17: no spec text below the boundary. Fails when a library file calls a text parser
# (abl_schedule_spec_parse, abl_schedule_parse, abl_pipeline_spec_parse, abl_pipeline_parse_msg,
# abl_pipeline_set_msg) outside the files that define them (the boundary: src/lib/core/abl_slope.c,
# src/lib/kernel/abl_pipeline.c). The calls not yet typed are listed, "FILE PARSER COUNT" a line, in
# tests/spec_text_below.baseline, which may only shrink: a count above it fails, and so does a count
# below it (lower the baseline with the change that removes the call).
# usage: spec_text_below.sh SOURCE_DIR
set -u
src=${1:?usage: spec_text_below.sh SOURCE_DIR}
cd "$src" || exit 99
base=tests/spec_text_below.baseline
parsers="abl_schedule_spec_parse abl_schedule_parse abl_pipeline_spec_parse abl_pipeline_parse_msg abl_pipeline_set_msg"
now=$(mktemp) || exit 99
trap 'rm -f "$now"' EXIT
for f in $(find src/lib -name '*.c' -o -name '*.h' | sort); do
  # src/lib/compose/abl_flat*.c: the bindings' boundary (issue 23), the CLI's twin: it takes the user's text
  case $f in src/lib/core/abl_slope.c|src/lib/kernel/abl_pipeline.c|src/lib/compose/abl_flat*.c) continue ;; esac
  for p in $parsers; do
    # a call: the name followed by '(' (declarations in comments start with ' *' and are skipped)
    n=$(grep -v '^[[:space:]]*\*' "$f" | grep -cE "(^|[^A-Za-z0-9_])$p[[:space:]]*\(")
    [ "$n" -gt 0 ] && echo "$f $p $n"
  done
done > "$now"
fail=0
while read -r f p n; do
  want=$(awk -v f="$f" -v p="$p" '$1 == f && $2 == p { print $3 }' "$base")
  if [ -z "$want" ] || [ "$n" -gt "$want" ]; then
    echo "spec_text_below: $f calls $p $n times below the boundary (baseline: ${want:-0}): pass the value instead"
    fail=1
  elif [ "$n" -lt "$want" ]; then
    echo "spec_text_below: $f calls $p $n times, fewer than the baseline's $want: lower $base"
    fail=1
  fi
done < "$now"
grep -v '^#' "$base" | while read -r f p n; do
  [ -n "$f" ] || continue
  grep -q "^$f $p " "$now" || { echo "spec_text_below: $base lists $f $p, which no longer calls it: remove the line"; exit 1; }
done || fail=1
echo "spec_text_below: $(wc -l < "$now") (file, parser) pairs below the boundary"
exit $fail
