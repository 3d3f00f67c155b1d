#!/bin/sh
# The option table (src/cli/abl_cli_options.c and each command's list of ids, as `alibi-blind completion
# list` prints it) agrees with what the user reads: every command's --help, the installed (gzipped) man
# page and the bash and zsh completions list the same options, in the same order, with the same metavars.
# usage: option_table.sh BINARY MANPAGE_GZ BASH_SCRIPT ZSH_SCRIPT
set -u
bin=$1; mangz=$2; bashf=$3; zshf=$4
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
"$bin" completion list > "$tmp/list" || { echo "completion list failed"; exit 1; }
gzip -dc "$mangz" > "$tmp/man" || { echo "cannot read $mangz"; exit 1; }
for cmd in $(awk '$1 == "command" {print $2}' "$tmp/list"); do
  awk -v c="$cmd" '$1 == "option" && $2 == c {print $3, $4}' "$tmp/list" > "$tmp/want"
  # Each command lists its options sorted by name (the table itself is sorted: the parser bisects it, so an
  # option out of place is refused, which install.completion checks).
  awk '{print $1}' "$tmp/want" | LC_ALL=C sort -c 2>/dev/null || { echo "$cmd: options not sorted by name"; fail=1; }
  # --help: "  --opt METAVAR  help" (or the help on the next line); the shared --wide is not the command's.
  "$bin" "$cmd" --help | sed -n 's/^  \(--[a-z0-9][a-z0-9-]*\)\( [^ ]*\)\{0,1\}\( .*\)\{0,1\}$/\1\2/p' \
    | awk 'NF == 1 {print $1, "-"; next} {print $1, $2}' | grep -v '^--wide -$' > "$tmp/help"
  cmp -s "$tmp/want" "$tmp/help" || { echo "$cmd --help differs from the table:"; diff "$tmp/want" "$tmp/help"; fail=1; }
  # The man page: the items of the command's subsection, in order.
  awk -v c="$cmd" '/^\.S[HS] / {on = ($1 == ".SS" && $2 == c); next}
       on && /^\.TP/ {item = 1; next}
       on && item {item = 0; l = $0; gsub(/\\-/, "-", l); n = split(l, w, " ");
                   m = "-"; if (w[1] == ".BI") {m = l; sub(/^[^"]*" /, "", m); sub(/"$/, "", m)}
                   print w[2], m}' "$tmp/man" > "$tmp/mano"
  cmp -s "$tmp/want" "$tmp/mano" || { echo "man page ($cmd) differs from the table:"; diff "$tmp/want" "$tmp/mano"; fail=1; }
  # zsh: '--opt=[help]:METAVAR:...' or '--flag[help]' (a colon in the METAVAR is written \:).
  awk -v c="$cmd" '$0 == "  " c ")" {on=1; next} on && /^    ;;$/ {on=0} on && /^      \047--/ {
      s = $0; gsub(/\\:/, "\001", s); sub(/^      \047/, "", s); name = s; sub(/[=[].*/, "", name);
      m = "-"; if (s ~ /^--[a-z0-9-]*=/) {sub(/.*\]:/, "", s); sub(/:.*/, "", s); gsub(/\001/, ":", s); m = s}
      if (name != "--help" && name != "--wide") print name, m }' "$zshf" > "$tmp/zsh"
  cmp -s "$tmp/want" "$tmp/zsh" || { echo "zsh completion ($cmd) differs from the table:"; diff "$tmp/want" "$tmp/zsh"; fail=1; }
  # bash: the options offered after the command.
  sed -n "/^    $cmd)\$/,/^        args=/p" "$bashf" | sed -n 's/^        opts="\(.*\)"$/\1/p' | tr ' ' '\n' \
    | grep -v -e '^--help$' -e '^--wide$' > "$tmp/bash"
  awk '{print $1}' "$tmp/want" | cmp -s - "$tmp/bash" || { echo "bash completion ($cmd) differs from the table"; fail=1; }
done
exit $fail
