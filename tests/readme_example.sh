#!/bin/sh
# README's first example output must be what the binary prints now (a newcomer copies it).
# usage: readme_example.sh BINARY README
set -u
bin=$1; readme=$2
want=$(awk '/^The first command prints:/ {grab=1; next} grab && /^```text$/ {inb=1; next}
            inb && /^```$/ {exit} inb {print}' "$readme")
[ -n "$want" ] || { echo "README example block not found"; exit 1; }
got=$("$bin" analyze --heads 16 --ctx 2048)
if [ "$want" != "$got" ]; then
    echo "README example differs from 'alibi-blind analyze --heads 16 --ctx 2048':"
    printf '%s\n' "$want" > /tmp/readme_want.$$; printf '%s\n' "$got" > /tmp/readme_got.$$
    diff -u /tmp/readme_want.$$ /tmp/readme_got.$$; rm -f /tmp/readme_want.$$ /tmp/readme_got.$$
    exit 1
fi
