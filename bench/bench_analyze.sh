#!/bin/sh
# Wall time and peak memory of `analyze` on the cases that stress it (bench/README.md records results).
# usage: bench/bench_analyze.sh [path/to/alibi-blind]     (needs GNU time: apt-get install -y time)
set -eu
bin=${1:-build/alibi-blind}
run() {
    /usr/bin/time -f "%e s wall, %M KB peak  analyze $*" "$bin" analyze "$@" >/dev/null
}
run --heads 16 --ctx 2048
run --heads 16 --ctx 1e12
run --heads 4096 --ctx 1e12
run --heads 4096 --ctx 1e12 --distance log
run --heads 1024 --ctx 1e6 --level weight
run --heads 65536 --ctx 2048
