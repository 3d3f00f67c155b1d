#!/bin/sh
# simulate --backward against the forward simulation on the same layer, one thread, CPU (user) time
# (issue 20: the backward at most 2x the forward). Each shape runs forward, then --backward at unit
# upstream (2^0) and at 2^16 and 2^-8, and prints the ratios backward/forward.
# Usage: bench/bench_backward.sh BINARY [HEADS] [CTX] [REPEATS] [PRESET:DTYPE ...]
# The presets cover every backward kind: upcast (eager, bloom-hf, mpt-hf), native (mpt, falcon-hf-eager),
# flash (flash2) and memeff (sdpa-efficient, falcon-hf-sdpa); name some after REPEATS to run only those.
# The fastest of REPEATS runs (default 3) is taken for each: the machine is shared, so the minimum is
# the cost, the rest is load.
set -u
bin=${1:?usage: bench_backward.sh BINARY [HEADS] [CTX] [REPEATS] [PRESET:DTYPE ...]}
heads=${2:-8}
ctx=${3:-4096}
reps=${4:-3}
shift $(($# < 4 ? $# : 4))
specs=${*:-eager:bf16 bloom-hf:bf16 mpt-hf:bf16 mpt:bf16 falcon-hf-eager:bf16 eager:fp16 mpt-hf:fp16 flash2:bf16 flash2:fp16 flash2:fp32 sdpa-efficient:bf16 sdpa-efficient:fp16 falcon-hf-sdpa:bf16}
user_time() {
  best=
  i=0
  while [ "$i" -lt "$reps" ]; do
    # --force: the larger shapes are over simulate's default budget of a minute
    t=$( { /usr/bin/time -f "%U" "$bin" simulate --force --threads 1 --heads "$heads" --ctx "$ctx" "$@" > /dev/null; } 2>&1 | tail -n 1)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
    i=$((i + 1))
  done
  echo "$best"
}
printf '%-16s %-5s %-14s %8s %8s %6s\n' preset dtype logits forward backward ratio
for logits in zero gaussian; do
  extra=
  [ "$logits" = gaussian ] && extra="--logit-std 3 --seed 1"
  for spec in $specs; do
    p=${spec%%:*}
    d=${spec##*:}
    # shellcheck disable=SC2086
    f=$(user_time --pipeline "$p" --dtype "$d" $extra)
    for j in 0 16 -8; do
      # shellcheck disable=SC2086
      b=$(user_time --pipeline "$p" --dtype "$d" $extra --backward --upstream "2^$j")
      r=$(echo "scale=2; $b / ($f + 0.005)" | bc)
      printf '%-16s %-5s %-14s %8s %8s %6s\n' "$p" "$d" "$logits 2^$j" "$f" "$b" "$r"
    done
  done
done
