#!/bin/sh
# The bash and zsh completions list every command and every option of every command, as the parser's
# tables define them (`alibi-blind completion list`), plus the options the shared parser gives every
# command (--help, --wide: the "shared" lines), and nothing else; the parser accepts each listed option;
# every option a command's --help prints is completed; --model and --pipeline complete the catalogue's
# models and the presets; bash -n / zsh -n parse the scripts (zsh only where installed).
# usage: completion.sh BINARY BASH_SCRIPT ZSH_SCRIPT
set -u
bin=$1; bashf=$2; zshf=$3
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
"$bin" completion list > "$tmp/list" || { echo "completion list failed"; exit 1; }
awk '$1 == "command" {print $2}' "$tmp/list" > "$tmp/commands"
[ -s "$tmp/commands" ] || { echo "no commands listed"; exit 1; }
awk '$1 == "shared" {print $2}' "$tmp/list" > "$tmp/shared"
for o in --help --wide; do
  grep -qx -- "$o" "$tmp/shared" || { echo "completion list: $o is not listed as a shared option"; fail=1; }
done
# The listing is the parser's own: every command is one `--help` accepts, so is every option.
while read -r kind cmd opt metavar; do
  if [ "$kind" = shared ]; then
    continue
  elif [ "$kind" = command ]; then
    "$bin" "$cmd" --help >/dev/null 2>&1 || { echo "parser refuses command $cmd"; fail=1; }
  elif [ "$metavar" = - ]; then
    "$bin" "$cmd" "$opt" --help >/dev/null 2>&1 || { echo "parser refuses $cmd $opt"; fail=1; }
  else
    "$bin" "$cmd" "$opt=x" --help >/dev/null 2>&1 || { echo "parser refuses $cmd $opt=VALUE"; fail=1; }
  fi
done < "$tmp/list"
while read -r cmd; do
  while read -r o; do
    "$bin" "$cmd" "$o" --help >/dev/null 2>&1 || { echo "parser refuses $cmd $o (a shared option)"; fail=1; }
  done < "$tmp/shared"
done < "$tmp/commands"
# What a user reads in `CMD --help` is what completes: every --option line of the help text is listed.
while read -r cmd; do
  "$bin" "$cmd" --help | sed -n 's/^  \(--[a-z0-9][a-z0-9-]*\).*/\1/p' | sort -u > "$tmp/helpopts"
  { awk -v c="$cmd" '$1 == "option" && $2 == c {print $3}' "$tmp/list"; cat "$tmp/shared"; } | sort -u > "$tmp/listed"
  missing=$(comm -23 "$tmp/helpopts" "$tmp/listed")
  [ -z "$missing" ] || { echo "$cmd --help shows options the completion list lacks: $missing"; fail=1; }
done < "$tmp/commands"
# Both scripts are what the binary writes now (the build regenerates them).
"$bin" completion bash | cmp -s - "$bashf" || { echo "$bashf is stale"; fail=1; }
"$bin" completion zsh | cmp -s - "$zshf" || { echo "$zshf is stale"; fail=1; }

# bash: run the completion function as bash would and compare the candidates with the tables.
if command -v bash >/dev/null 2>&1; then
  bash -n "$bashf" || { echo "bash -n $bashf failed"; fail=1; }
  complete_words() { # complete_words WORD... : candidates for the last word
    bash -c '. "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _alibi_blind; printf "%s\n" "${COMPREPLY[@]}" | sort' \
      "$bashf" alibi-blind "$@"
  }
  complete_words "" | grep -v -e '^-' -e '^help$' > "$tmp/got"
  sort "$tmp/commands" | cmp -s - "$tmp/got" || { echo "bash: commands differ:"; sort "$tmp/commands" | diff - "$tmp/got"; fail=1; }
  while read -r cmd; do
    { awk -v c="$cmd" '$1 == "option" && $2 == c {print $3}' "$tmp/list"; cat "$tmp/shared"; } | sort > "$tmp/want"
    complete_words "$cmd" "--" > "$tmp/got"
    cmp -s "$tmp/want" "$tmp/got" || { echo "bash: options of $cmd differ:"; diff "$tmp/want" "$tmp/got"; fail=1; }
  done < "$tmp/commands"
  # Values from the library's tables (issue 21): --model completes every model of the catalogue (as
  # `models --format csv` lists them) and --pipeline every preset (as `simulate --help`'s Presets block
  # lists them), for every command that takes the option.
  "$bin" models --format csv | awk -F, 'NR > 1 {print $1}' | sort > "$tmp/models"
  "$bin" simulate --help | sed -n '/^Presets/,/^Options/s/^  \([a-z0-9][a-z0-9-]*\): .*/\1/p' | sort > "$tmp/presets"
  [ "$(wc -l < "$tmp/models")" -gt 20 ] || { echo "models --format csv lists too few models"; fail=1; }
  [ "$(wc -l < "$tmp/presets")" -gt 10 ] || { echo "simulate --help lists too few presets"; fail=1; }
  for pair in model:models pipeline:presets; do
    opt=${pair%%:*}; want=$tmp/${pair#*:}
    awk -v o="--$opt" '$1 == "option" && $3 == o {print $2}' "$tmp/list" > "$tmp/takers"
    [ -s "$tmp/takers" ] || { echo "no command takes --$opt"; fail=1; }
    while read -r cmd; do
      complete_words "$cmd" "--$opt" "" > "$tmp/got"
      cmp -s "$want" "$tmp/got" || { echo "bash: $cmd --$opt completes:"; diff "$want" "$tmp/got" | head; fail=1; }
    done < "$tmp/takers"
    # a prefix narrows the candidates as compgen does
    first=$(head -n 1 "$want"); pre=$(printf '%s' "$first" | cut -c1-4)
    complete_words simulate "--$opt" "$pre" > "$tmp/got"
    grep "^$pre" "$want" | cmp -s - "$tmp/got" || { echo "bash: simulate --$opt $pre completes wrongly"; fail=1; }
    # zsh: the same names in the option's value list
    awk -v o="'--$opt=" 'index($0, o) {sub(/.*:\(/, ""); sub(/\).*/, ""); gsub(/ /, "\n"); print; exit}' "$zshf" \
      | sort > "$tmp/got"
    cmp -s "$want" "$tmp/got" || { echo "zsh: --$opt values differ:"; diff "$want" "$tmp/got" | head; fail=1; }
  done
else
  echo "bash not found: bash completion not exercised"
fi

# zsh: every command in the commands array, every option in its command's _arguments block, nothing else.
awk '/^  commands=\(/ {on=1; next} on && /^  \)/ {on=0} on {sub(/^ *\047/, ""); sub(/:.*/, ""); print}' "$zshf" \
  | sort > "$tmp/got"
sort "$tmp/commands" | cmp -s - "$tmp/got" || { echo "zsh: commands differ:"; sort "$tmp/commands" | diff - "$tmp/got"; fail=1; }
while read -r cmd; do
  { awk -v c="$cmd" '$1 == "option" && $2 == c {print $3}' "$tmp/list"; cat "$tmp/shared"; } | sort > "$tmp/want"
  awk -v c="$cmd" '$0 == "  " c ")" {on=1; next} on && /^    ;;$/ {on=0} on && /^      \047--/ {
      s = $0; sub(/^      \047/, "", s); sub(/[=[].*/, "", s); print s }' "$zshf" | sort > "$tmp/got"
  cmp -s "$tmp/want" "$tmp/got" || { echo "zsh: options of $cmd differ:"; diff "$tmp/want" "$tmp/got"; fail=1; }
done < "$tmp/commands"
if command -v zsh >/dev/null 2>&1; then
  zsh -n "$zshf" || { echo "zsh -n $zshf failed"; fail=1; }
else
  echo "zsh not found: zsh -n skipped"
fi
exit $fail
