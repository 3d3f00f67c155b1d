#!/bin/sh
# --ctx as model cards write it (issue 19): each spelling must give exactly the answer of the plain
# integer it means by definition (k = K = Ki = 1024, M = Mi = 1024^2, B^E a power), in every command
# that takes a context; malformed spellings are one-line usage errors (exit 2, nothing on stdout).
# usage: ctx_spellings.sh BINARY
set -u
case $1 in /*) bin=$1 ;; *) bin=$(pwd)/$1 ;; esac
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 99
fail() { echo "FAIL: $*"; exit 1; }

# keep FILE: a page the command wrote (report --output r.html) appended to FILE, so that it is compared too.
keep() { if [ -f r.html ]; then cat r.html >> "$1"; rm -f r.html; fi; }
# same SPELLING INTEGER CMD...: CMD --ctx SPELLING and CMD --ctx INTEGER print the same, exit the same.
same() {
  sp=$1; n=$2; shift 2
  "$@" --ctx "$n" > want.out 2> want.err; want_rc=$?
  keep want.out
  "$@" --ctx "$sp" > got.out 2> got.err; got_rc=$?
  keep got.out
  [ "$got_rc" = "$want_rc" ] || fail "$* --ctx $sp: exit $got_rc, --ctx $n exits $want_rc"
  cmp -s want.out got.out || fail "$* --ctx $sp: output differs from --ctx $n"
  [ "$want_rc" = 0 ] || [ "$want_rc" = 1 ] || fail "$* --ctx $n: exit $want_rc"
}
same 8k 8192 "$bin" analyze --heads 16
same 8K 8192 "$bin" analyze --heads 16
same 8Ki 8192 "$bin" analyze --heads 16
same 64Ki 65536 "$bin" analyze --heads 32 --dtype fp16
same 2^15 32768 "$bin" analyze --heads 40
same 1M 1048576 "$bin" analyze --heads 64
same 1Mi 1048576 "$bin" analyze --heads 64
same 0.5k 512 "$bin" analyze --heads 8
same 1.5K 1536 "$bin" analyze --heads 8
same 4^5 1024 "$bin" analyze --heads 8
same 2k 2048 "$bin" analyze --model bloom-560m
same 2K 2048 "$bin" check --model bloom-560m --max-blind-heads 16
same 1k 1024 "$bin" simulate --heads 4 --pipeline eager
same 2^10 1024 "$bin" design --heads 4 --pipeline eager
same 1k 1024 "$bin" figure 1b --heads 8
same 1Ki 1024 "$bin" report --heads 8 --output r.html

# bad SPELLING: exit 2, one line on stderr naming --ctx, nothing on stdout.
bad() {
  "$bin" analyze --heads 16 --ctx "$1" > bad.out 2> bad.err; rc=$?
  [ "$rc" = 2 ] || fail "--ctx $1: exit $rc, expected 2"
  [ -s bad.out ] && fail "--ctx $1: wrote to stdout"
  [ "$(wc -l < bad.err)" = 1 ] || fail "--ctx $1: not one line on stderr"
  grep -q -F -- "--ctx: " bad.err && grep -q -F -- "$1" bad.err || fail "--ctx $1: the error does not name --ctx and the value: $(cat bad.err)"
}
for s in 8x 8kk k 8kb 8.3k 2^ ^3 2^-1 2^0.5 1.5^2 0k -1k 2^70 8ki 8m 0; do bad "$s"; done
echo "ctx spellings: ok"
