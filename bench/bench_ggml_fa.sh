#!/bin/sh
# llama.cpp's CPU flash attention (llamacpp-cpu-fa, softmax=ggml-flash): the causal zero-logit predictor
# (simulate --predict, src/lib/kernel/abl_ggml_fa_predict.c) for a 64-head model at N = 32768 on one core,
# each kernel ggml picks (tiled for prefill, split-kv for one decode row at 1 and 4 threads, one-chunk for
# 63 rows) and the scalar exp build; then predictor against simulate at a size simulate finishes (H 8,
# N 2048: the emulation runs every row asked, key by key). Issue 18 asks for under 2 s at 64 x 32768.
# Usage: bench/bench_ggml_fa.sh BINARY [HEADS] [CTX]
set -u
bin=${1:?usage: bench_ggml_fa.sh BINARY [HEADS] [CTX]}
heads=${2:-64}
ctx=${3:-32768}
run() {
  /usr/bin/time -f "$1 $2 (H $3, N $4): %e s, user %U s, %M KB" "$bin" simulate $2 --heads "$3" --ctx "$4" \
    --threads 1 --force --pipeline "$1" > /dev/null
}
for p in llamacpp-cpu-fa llamacpp-cpu-fa,rows=1 llamacpp-cpu-fa,rows=1,threads=4 llamacpp-cpu-fa,rows=63 \
    llamacpp-cpu-fa,exp=ggml-scalar; do
  run "$p" --predict "$heads" "$ctx"
done
for p in llamacpp-cpu-fa llamacpp-cpu-fa,rows=1,threads=4 llamacpp-cpu-fa,rows=63; do
  run "$p" --predict 8 2048
  run "$p" "" 8 2048
done
