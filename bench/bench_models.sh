#!/bin/sh
# Whole-process wall time and peak memory of the model commands (issue 8's targets: each under 1 s on
# one core). usage: bench/bench_models.sh BINARY
set -u
bin=${1:-build/alibi-blind}
cfg=$(mktemp) || exit 1
trap 'rm -f "$cfg"' EXIT
# a 40-head ALiBi config (Baichuan2-13B's fields, tests/data/configs/baichuan2-13b-chat.json)
cp "$(dirname "$0")/../tests/data/configs/baichuan2-13b-chat.json" "$cfg"
run() {
  /usr/bin/time -f "%e s  %M KB  $*" taskset -c 0 "$bin" "$@" >/dev/null 2>/tmp/bench_models.err || true
  tail -1 /tmp/bench_models.err
}
run analyze --model bloom --ctx 2048
run check --config "$cfg" --ctx 32768 --max-blind-heads 40
