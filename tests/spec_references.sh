#!/bin/sh
# The project's contract is docs/spec.md. Every reference to it, "spec §N" or "spec §N.M" (in roff
# "spec \(scN"; a list "spec §3, §7" counts each), must name a section that exists there (a "## N." or
# "### N.M" heading). Nothing may point outside the project: no "spec §N" (the old external
# contract), no SPEC.md, no ../shared path. usage: spec_references.sh SOURCE_DIR
set -u
src=$1
cd "$src" || exit 99
spec=docs/spec.md
[ -f "$spec" ] || { echo "missing $spec"; exit 1; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
# The sections docs/spec.md has.
sed -n -e 's/^## \([0-9][0-9]*\)\. .*/\1/p' -e 's/^### \([0-9][0-9]*\.[0-9][0-9]*\) .*/\1/p' "$spec" | sort -u > "$tmp/sections"
[ -s "$tmp/sections" ] || { echo "$spec has no numbered sections"; exit 1; }
# The files to scan: what git tracks (plus new files), or the usual folders outside a git checkout.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files --cached --others --exclude-standard > "$tmp/files"
else
  find . -path ./.git -prune -o -path './build*' -prune -o -type f -print | sed 's|^\./||' > "$tmp/files"
fi
grep -v -e '^tests/spec_references\.sh$' -e '^tables/published/' "$tmp/files" | while IFS= read -r f; do
  [ -f "$f" ] && printf '%s\n' "$f"
done > "$tmp/scan"
fail=0
# 1. spec §N references (one line per reference: FILE:LINE:N).
tr '\n' '\0' < "$tmp/scan" | xargs -0 grep -I -n -o -i -P 'spec (§|\\\(sc ?)[0-9]+(\.[0-9]+)?((, | and | or |/|[-\x{2013}]|, and )(§|\\\(sc ?)?[0-9]+(\.[0-9]+)?)*' \
  2>/dev/null > "$tmp/refs" || true
while IFS= read -r hit; do
  loc=${hit%%:[Ss][Pp][Ee][Cc] *}; text=${hit#"$loc":}
  case "$text" in SPEC*) echo "$loc: '$text' points to the old external SPEC: write 'spec §N' (docs/spec.md)"; fail=1;; esac
  for n in $(printf '%s\n' "$text" | sed 's/^[Ss][Pp][Ee][Cc] //' | grep -o -P '[0-9]+(\.[0-9]+)?'); do
    grep -qx "$n" "$tmp/sections" || { echo "$loc: '$text': docs/spec.md has no section $n"; fail=1; }
  done
done < "$tmp/refs"
# 2. nothing outside the project.
tr '\n' '\0' < "$tmp/scan" | xargs -0 grep -I -n -e '\.\./shared' -e 'shared/SPEC' -e '/work/shared' 2>/dev/null \
  > "$tmp/out" && { echo "references outside the project:"; cat "$tmp/out"; fail=1; }
tr '\n' '\0' < "$tmp/scan" | xargs -0 grep -I -n -w 'SPEC\.md' 2>/dev/null | grep -v '^docs/spec\.md:' > "$tmp/out" \
  && { echo "references to SPEC.md (the project's contract is docs/spec.md):"; cat "$tmp/out"; fail=1; }
n=$(wc -l < "$tmp/refs")
[ "$fail" = 0 ] && echo "$n spec references, all to existing sections of docs/spec.md"
exit $fail
