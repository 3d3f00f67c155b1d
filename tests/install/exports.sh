#!/bin/sh
# The shared library exports its API and nothing else: the dynamic symbols that libalibi-blind.so
# defines (nm -D --defined-only) are exactly the functions declared with ABL_API in include/, and every
# function declaration in include/ has ABL_API (one without it would be silently hidden).
# usage: exports.sh LIBRARY.so INCLUDE_DIR
set -u
lib=$1; inc=$2
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
command -v nm >/dev/null || { echo "nm (binutils) is missing"; exit 1; }
# _init and _fini come from the C runtime's crti.o, in every shared library.
nm -D --defined-only "$lib" | awk 'NF == 3 && $3 != "_init" && $3 != "_fini" { print $3 }' | sort -u > "$tmp/exported"
[ -s "$tmp/exported" ] || { echo "no exported symbol read from $lib"; exit 1; }
find "$inc" -name '*.h' | sort > "$tmp/headers"
fail=0
# Declarations start in column 0 with their return type: ABL_API <type> abl_name(...
while IFS= read -r h; do
  grep -E '^[a-zA-Z_][a-zA-Z0-9_ *]*[ *]abl_[a-z0-9_]+\(' "$h" | grep -vE '^(typedef|ABL_API) ' \
    | sed "s|^|$h: declared without ABL_API: |" >> "$tmp/unmarked"
  grep -E '^ABL_API ' "$h" | sed -E 's/^([^(]*[ *])(abl_[a-z0-9_]+)\(.*/\2/' >> "$tmp/declared.raw"
done < "$tmp/headers"
if [ -s "$tmp/unmarked" ]; then cat "$tmp/unmarked"; fail=1; fi
sort -u "$tmp/declared.raw" > "$tmp/declared"
comm -23 "$tmp/exported" "$tmp/declared" > "$tmp/extra"
comm -13 "$tmp/exported" "$tmp/declared" > "$tmp/missing"
if [ -s "$tmp/extra" ]; then echo "exported but declared in no public header:"; sed 's/^/  /' "$tmp/extra"; fail=1; fi
if [ -s "$tmp/missing" ]; then echo "declared with ABL_API but not exported:"; sed 's/^/  /' "$tmp/missing"; fail=1; fi
[ $fail -eq 0 ] && echo "$(wc -l < "$tmp/exported") exported symbols = the ABL_API declarations of include/"
exit $fail
