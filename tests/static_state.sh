#!/bin/sh
# No shared mutable state in the library (issue 17 item 5): the library's objects hold no writable object
# of static storage (file- or function-level `static`, globals) except those listed, with the reason, in
# tests/static_state.baseline (which may only shrink; a line whose object is gone must go too). Reads
# the symbol tables of the static library: objects in .data or .bss (a const table with pointers lives
# in .data.rel.ro, read-only after relocation, and is not state). usage: static_state.sh LIBRARY.a SOURCE_DIR
set -u
lib=$1
src=$2
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
objdump -t "$lib" > "$tmp/syms" || { echo "objdump -t $lib failed"; exit 99; }
# "member.o: symbol" for every object (flag O) in .data*/.bss* but not .data.rel.ro*; sanitizer and
# compiler bookkeeping (names starting with . or __) is not the program's state.
awk '/: +file format / { m = $1; sub(/:$/, "", m); next }
     / O / { sec = $(NF - 2); name = $NF
             if (sec ~ /^\.(data|bss)/ && sec !~ /^\.data\.rel\.ro/ && name !~ /^(\.|__)/) print m ": " name }' \
  "$tmp/syms" | sort -u > "$tmp/found"
sed -e 's/[[:space:]]*#.*//' -e '/^$/d' "$src/tests/static_state.baseline" | sort -u > "$tmp/allowed"
fail=0
new=$(comm -23 "$tmp/found" "$tmp/allowed")
if [ -n "$new" ]; then
  echo "writable objects of static storage in the library (state shared between threads: pass it in a"
  echo "context, or make it const):"
  echo "$new"
  fail=1
fi
gone=$(comm -13 "$tmp/found" "$tmp/allowed")
if [ -n "$gone" ]; then
  echo "tests/static_state.baseline lists objects that are gone (remove these lines):"
  echo "$gone"
  fail=1
fi
[ $fail -eq 0 ] && echo "static state: $(wc -l < "$tmp/found") stated exceptions, none new"
exit $fail
