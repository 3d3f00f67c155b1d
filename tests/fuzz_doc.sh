#!/bin/sh
# docs/fuzzing.md's table has one row per harness in tests/fuzz/ (fuzz_*.c), and no row for a harness
# that does not exist. usage: fuzz_doc.sh SOURCE_DIR
set -u
src=$1
fail=0
for f in "$src"/tests/fuzz/fuzz_*.c; do
  h=$(basename "$f" .c)
  grep -q "^| \`$h\` |" "$src/docs/fuzzing.md" || { echo "docs/fuzzing.md: no table row for $h"; fail=1; }
done
for h in $(sed -n 's/^| `\(fuzz_[a-z0-9_]*\)` |.*/\1/p' "$src/docs/fuzzing.md"); do
  [ -f "$src/tests/fuzz/$h.c" ] || { echo "docs/fuzzing.md: row for $h, which tests/fuzz/ does not have"; fail=1; }
done
exit $fail
