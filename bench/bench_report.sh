#!/bin/sh
# Wall and CPU seconds of `report --model M` for every catalogue model at its trained context (the default
# --ctx), one core (issue 21: each under 3 s). usage: bench/bench_report.sh [BINARY]
# Prints one line a model: wall s, CPU s (user + system), exit status, model; a model whose catalogue entry
# lacks a value the report needs (its heads: an empty cell in `models`) exits 2 and is listed as such.
set -u
bin=${1:-build-release/alibi-blind}
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
pin=""
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"
# first column of the CSV listing, header dropped (model names have no comma)
models=$("$bin" models --format csv | sed '1d; s/,.*//') || exit 1
printf '%8s %8s %4s  %s\n' "wall_s" "cpu_s" "rc" "model"
worst=0
for m in $models; do
    /usr/bin/time -f '%e %U %S' -o "$out/time" $pin "$bin" report --model "$m" --output "$out/r.html" \
        >/dev/null 2>"$out/err"
    rc=$?
    set -- $(tail -1 "$out/time")
    cpu=$(echo "$2 $3" | awk '{printf "%.2f", $1 + $2}')
    printf '%8s %8s %4s  %s\n' "$1" "$cpu" "$rc" "$m"
    worst=$(echo "$worst $1" | awk '{print ($2 > $1) ? $2 : $1}')
done
echo "slowest wall: $worst s"
