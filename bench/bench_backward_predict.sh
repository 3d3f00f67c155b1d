#!/bin/sh
# The zero-logit gradient predictor (simulate --backward --predict) for a 64-head layer at N = 32768 on one
# core (issue 20: under 2 s), each backward kind with a predictor: the eager ones (upcast, native) and the
# memory-efficient SDPA and FlashAttention-2 backwards (memeff, flash: modelled from source, not measured),
# at 2^0, 2^16 and 2^-10
# (|dP - D| x loss scale). CPU time and peak memory of the whole process.
# Usage: bench/bench_backward_predict.sh BINARY [HEADS] [CTX]
set -u
bin=${1:?usage: bench_backward_predict.sh BINARY [HEADS] [CTX]}
heads=${2:-64}
ctx=${3:-32768}
for spec in eager:bf16 eager:fp16 mpt:bf16 sdpa-efficient:bf16 sdpa-efficient:fp16 sdpa-efficient:fp32 \
            flash2:bf16 flash2:fp16 flash2:fp32 \
            falcon-hf-sdpa:bf16; do
  p=${spec%%:*}
  d=${spec##*:}
  for j in 0 16 -10; do
    [ "$p" = mpt ] && [ "$j" -lt 0 ] && continue   # native below 1: no predictor (refused)
    /usr/bin/time -f "$p $d 2^$j: user %U s, %M KB" "$bin" simulate --backward --predict --threads 1 \
      --heads "$heads" --ctx "$ctx" --pipeline "$p" --dtype "$d" --upstream "2^$j" > /dev/null
  done
done
