#!/bin/sh
# No fixed-size char buffer holds text of any origin anywhere in src/ or include/ (issue 17 item 1; HELPERS and
# CONTRIBUTING: the growable abl_text of src/lib/abl_internal.h, or heap strings, instead). Every char
# array declared in src/ or include/ (any form: char, signed or unsigned char, static, a member, the second of a
# list "char a[4], b[8]", sized by a constant or by its initialiser) is a failure, unless listed in
# tests/fixed_buffers.baseline (the known debt, file and declaration line, counted): the list may only
# shrink, and a buffer that is gone must leave it too, so it stays exact. The goal is an empty list.
# Read-only tables (const char x[] = "...", const char *const t[]) are not buffers; an array of
# pointers (char *v[8]) holds no text itself. usage: fixed_buffers.sh SOURCE_DIR
set -u
src=$1
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$src" || exit 99
# Drop comments and casts first ((unsigned char)s[i] indexes a pointer, declares nothing), then pointer
# declarators (*v[8]), then look for "char ... name[" in a declaration.
LC_ALL=C grep -arnE '\bchar\b' src include --include='*.c' --include='*.h' |
  sed -E 's://.*$::; s:/\*.*\*/::g; s:/\*.*$::' |
  sed -E 's/\(\s*(const\s+)?(un)?(signed\s+)?char\s*\**\s*\)//g' |
  LC_ALL=C grep -avE '\bconst\s+((un)?signed\s+)?char\b|\bchar\s+const\b' |
  sed -E 's/=\s*\{[^}]*\}?//g; s/=[^,;]*//g; s/\*+\s*[A-Za-z_][A-Za-z0-9_]*\s*\[[^]]*\]//g' |
  LC_ALL=C grep -aE '\bchar\b[^;(){}]*\b[A-Za-z_][A-Za-z0-9_]*\s*\[' |
  sed -E 's/\bchar\b/@CHAR@/; s/^([^:]*):[0-9]+:.*@CHAR@/\1:/; s/;.*$//' |
  while IFS=: read -r file rest; do
    printf '%s\n' "$rest" | LC_ALL=C grep -aoE '[A-Za-z_][A-Za-z0-9_]*\s*\[[^]]*\]' |
      sed -E "s|^|$file: char |; s/\s+\[/[/"
  done | sort > "$tmp/found"
sed -e 's/[[:space:]]*#.*//' -e '/^$/d' tests/fixed_buffers.baseline | sort > "$tmp/allowed"
fail=0
new=$(comm -23 "$tmp/found" "$tmp/allowed")
if [ -n "$new" ]; then
  echo "fixed-size char buffers (use abl_text or a heap string):"
  printf '%s\n' "$new"
  fail=1
fi
gone=$(comm -13 "$tmp/found" "$tmp/allowed")
if [ -n "$gone" ]; then
  echo "tests/fixed_buffers.baseline lists buffers that are gone (remove these lines):"
  printf '%s\n' "$gone"
  fail=1
fi
[ $fail -eq 0 ] && echo "fixed buffers: $(wc -l < "$tmp/found") known, none new"
exit $fail
