#!/bin/sh
# Wall time of `verify` (bench/README.md, section "verify", records results).
# usage: bench/bench_verify.sh [path/to/alibi-blind]
# Uses hyperfine when present (apt-get install -y hyperfine), else GNU time / the shell's time.
set -eu
bin=${1:-build/alibi-blind}
[ -x "$bin" ] || { echo "bench_verify.sh: no executable at $bin" >&2; exit 2; }
cases="--dtype=bf16 --dtype=fp16 --dtype=fp32 --dtype=fp64 --dtype=bf16,fp32,fp16 --dtype=all"
if command -v hyperfine >/dev/null 2>&1; then
    set --
    for c in $cases; do set -- "$@" "$bin verify $c"; done
    hyperfine --warmup 2 --runs 10 -N "$@" "$bin verify --dtype=fp32 --libm"
else
    for c in $cases "--dtype=fp32 --libm"; do
        if [ -x /usr/bin/time ]; then
            # shellcheck disable=SC2086
            /usr/bin/time -f "%e s wall, %M KB peak  verify $c" "$bin" verify $c >/dev/null
        else
            echo "verify $c"
            # shellcheck disable=SC2086
            time "$bin" verify $c >/dev/null
        fi
    done
fi
