#!/bin/sh
# The man page (written by `alibi-blind man docs/alibi-blind.1.in` into the build tree) documents every command and every option of every command, as the parser's tables
# define them (`alibi-blind completion list`), and no option that does not exist; the page is plain ASCII
# (non-ASCII characters are roff escapes such as \(*d). Each command is a `.SS NAME` subsection; each of
# its options an item `.TP` whose next line names it (.B \-\-opt, .BI \-\-opt " ARG"). The options every
# command takes ("shared" in the list: --help, --wide) are documented once, before the first command.
# usage: manpage.sh BINARY MANPAGE
set -u
bin=$1; man=$2
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
if LC_ALL=C grep -n '[^[:print:][:space:]]' "$man" > "$tmp/bad"; then
  echo "non-ASCII bytes in $man (use roff escapes: \\(*d for delta, \\(mi, \\[u00A7] ...):"; head -5 "$tmp/bad"; fail=1
fi
"$bin" completion list > "$tmp/list" || { echo "completion list failed"; exit 1; }
# The subsections and the options each documents.
awk '/^\.S[HS] / { sec = ""; if ($1 == ".SS") { s = $2; gsub(/"/, "", s); sec = s; print "command " sec } next }
     /^\.TP/ { item = 1; next }
     item { item = 0; if (sec != "") { l = $0; gsub(/\\-/, "-", l);
              if (match(l, /--[a-z0-9][a-z0-9-]*/)) print "option " sec " " substr(l, RSTART, RLENGTH) } }' "$man" \
  | grep -v ' --help$' | sort -u > "$tmp/man"
# (command and option lines only: the "values" lines say what an option completes, not the man page's matter)
awk '$1 == "command" || $1 == "option" {print $1, $2, ($1 == "option" ? $3 : "")}' "$tmp/list" | sed 's/ $//' | sort -u > "$tmp/want"
# Other subsections (exit status, conventions ...) are allowed: keep only the commands the CLI has.
awk '$1 == "command" {print $2}' "$tmp/want" > "$tmp/cmds"
awk 'NR == FNR {c[$1]; next} ($2 in c)' "$tmp/cmds" "$tmp/man" > "$tmp/got"
if ! cmp -s "$tmp/want" "$tmp/got"; then
  echo "man page and option tables differ (< only in the tables: document it; > only in the man page)."
  echo "Format: each command is a subsection '.SS NAME' (under COMMANDS), each of its options an item"
  echo "'.TP' followed by '.BI \\-\\-opt \" ARG\"' or '.B \\-\\-flag' and a line of text (see docs/alibi-blind.1.in):"
  diff "$tmp/want" "$tmp/got" | grep '^[<>]'
  fail=1
fi
# The options every command takes (the shared parser's: --help, --wide) are documented once, before the
# commands (DESCRIPTION and the COMMANDS introduction), not under each command.
awk '/^\.SS / {exit} {print}' "$man" | sed 's/\\-/-/g' > "$tmp/common"
for o in $(awk '$1 == "shared" {print $2}' "$tmp/list"); do
  grep -q -e "$o\([^a-z0-9-]\|\$\)" "$tmp/common" || { echo "shared option $o is not documented before the commands"; fail=1; }
done
[ -n "$(awk '$1 == "shared"' "$tmp/list")" ] || { echo "completion list names no shared option"; fail=1; }
# The page renders without warnings where groff is installed.
if command -v groff >/dev/null 2>&1; then
  warn=$(groff -man -ww -z "$man" 2>&1)
  [ -z "$warn" ] || { echo "groff warnings:"; echo "$warn" | head -5; fail=1; }
fi
exit $fail
