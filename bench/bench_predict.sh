#!/bin/sh
# Zero-logit prediction (simulate --predict) for a 64-head model at N = 32768 on one core, every preset:
# wall time and peak memory. Usage: bench/bench_predict.sh BINARY [HEADS] [CTX]
# Issue 9 asks for under 2 s per preset; docs/pipelines.md and bench/README.md give the figures.
set -u
bin=${1:?usage: bench_predict.sh BINARY [HEADS] [CTX]}
heads=${2:-64}
ctx=${3:-32768}
for p in eager flash2 bloom-hf falcon-hf-eager mpt mpt-hf sdpa-efficient sdpa-cudnn; do
  case $p in sdpa-*) if [ "$ctx" -gt 4096 ]; then echo "$p: skipped at N = $ctx (O(N^2) per head, see docs)"; continue; fi;; esac
  /usr/bin/time -f "$p: %e s, %M KB" "$bin" simulate --predict --heads "$heads" --ctx "$ctx" --threads 1 \
    --pipeline "$p" > /dev/null
done
