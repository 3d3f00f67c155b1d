#!/bin/sh
# No fixed-size buffer holds user text (issue 11): a 10,000-character --pipeline value is echoed whole in
# the one-line error of every command that takes --pipeline (exit 2, nothing on stdout).
# usage: long_pipeline.sh BINARY
set -u
bin=$1
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
long=$(awk 'BEGIN { s = ""; for (i = 0; i < 9997; i++) s = s "x"; printf "%sEND", s }')
[ ${#long} -eq 10000 ] || { echo "test setup: value has ${#long} characters"; exit 99; }
check() { # check WANT ARGS...: exit 2, empty stdout, stderr exactly the one line WANT
  want=$1; shift
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
  printf '%s\n' "$want" > "$tmp/want"
  [ "$rc" -eq 2 ] || { echo "$1: exit $rc, expected 2"; fail=1; }
  [ -s "$tmp/out" ] && { echo "$1: output on stdout"; fail=1; }
  cmp -s "$tmp/want" "$tmp/err" || { echo "$1: stderr is not the whole message (got $(wc -c < "$tmp/err") bytes):";
                                     tail -c 200 "$tmp/err"; fail=1; }
}
form="alibi-blind: --pipeline: bias-form: unknown form '$long' (known: relative, absolute, symmetric, trailing)"
check "$form" simulate --heads 2 --ctx 64 --pipeline "eager,bias-form=$long"
check "$form" analyze --heads 2 --ctx 64 --pipeline "eager,bias-form=$long"
check "$form" check --model bloom-560m --ctx 64 --pipeline "eager,bias-form=$long"
check "$form" design --heads 2 --ctx 64 --pipeline "eager,bias-form=$long"
check "alibi-blind: --pipeline: exp: unknown model '$long' (known: correct, sleef, ggml-avx2, ggml-scalar)" \
      simulate --heads 2 --ctx 64 --pipeline "flash2,exp=$long"
# plot and report parse the spec at the command line before the library sees it.
check "$form" plot blindmap --heads 2 --ctx 64 --pipeline "eager,bias-form=$long" --output "$tmp/b.svg"
check "alibi-blind: --pipeline: unknown pipeline preset 'x$long' (known: $("$bin" simulate --pipeline nosuch --heads 1 --ctx 2 2>&1 | sed -n "s/.*(known: //p")" \
      plot fraction --heads 2 --ctx 64 --pipeline "x$long" --output "$tmp/f.svg"
check "$form" report --heads 2 --pipeline "eager,bias-form=$long" --output "$tmp/r.html"
ls "$tmp"/*.svg "$tmp"/*.html >/dev/null 2>&1 && { echo "a picture or page was written"; fail=1; }
exit $fail
