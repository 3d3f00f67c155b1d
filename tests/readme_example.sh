#!/bin/sh
# Every README output block tagged <!-- check: ARGS [| FILTER] --> must be what the binary prints now
# (a trailing "..." line in the block stands for the rest). usage: readme_example.sh BINARY README
set -u
bin=$1; readme=$2
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
# Split the README into one expected-output file per tagged block, plus its command line.
awk -v dir="$tmp" '
  /^<!-- check: .* -->$/ { n++; cmd=$0; sub(/^<!-- check: /, "", cmd); sub(/ -->$/, "", cmd);
                           print cmd > (dir "/" n ".cmd"); close(dir "/" n ".cmd"); want=1; next }
  want && /^```text$/ { inb=1; next }
  inb && /^```$/ { inb=0; want=0; next }
  inb && $0 != "..." { print > (dir "/" n ".want") }
' "$readme"
count=0; fail=0
for c in "$tmp"/*.cmd; do
  [ -e "$c" ] || break
  count=$((count + 1))
  n=${c%.cmd}
  args=$(cat "$c")
  sh -c "\"$bin\" $args" > "$n.got" 2>&1
  touch "$n.want"
  if ! cmp -s "$n.want" "$n.got"; then
    echo "README example differs: alibi-blind $args"; diff -u "$n.want" "$n.got" | head -30; fail=1
  fi
done
[ "$count" -gt 0 ] || { echo "no <!-- check: --> blocks found in README"; exit 1; }
echo "$count README examples checked"
exit $fail
