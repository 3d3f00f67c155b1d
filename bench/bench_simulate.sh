#!/bin/sh
# Wall time and peak memory of `simulate` and of its zero-logit predictor (bench/README.md records
# the results). usage: bench/bench_simulate.sh [path/to/alibi-blind]   (GNU time: apt-get install -y time)
set -eu
bin=${1:-build/alibi-blind}
run() {
    /usr/bin/time -f "%e s wall, %M KB peak  simulate $*" "$bin" simulate "$@" >/dev/null
}
# the case: 16 heads, N = 8192, bf16, eager: 16 * 8192 * 8193 / 2 = 536,936,448 weights
run --heads 16 --ctx 8192
run --heads 16 --ctx 8192 --threads 1
run --heads 16 --ctx 8192 --pipeline bloom-hf
run --heads 16 --ctx 8192 --pipeline flash2
run --heads 16 --ctx 8192 --pipeline eager,sum=vec8,exp=sleef
run --heads 16 --ctx 8192 --logit-std 2
run --heads 16 --ctx 8192 --compare
# the predictor alone: O(N log N) per head
run --heads 16 --ctx 8192 --predict
run --heads 16 --ctx 1000000 --predict --pipeline bloom-hf
run --heads 16 --ctx 16777216 --predict
