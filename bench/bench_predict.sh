#!/bin/sh
# Zero-logit prediction (simulate --predict) for a 64-head model at N = 32768 on one core, every preset
# (the SDPA ones also with fp16 and fp32 model dtypes): wall time, CPU time and peak memory.
# Usage: bench/bench_predict.sh BINARY [HEADS] [CTX]
# Issue 9 asks for under 2 s per preset; docs/pipelines.md and bench/README.md give the figures.
set -u
bin=${1:?usage: bench_predict.sh BINARY [HEADS] [CTX]}
heads=${2:-64}
ctx=${3:-32768}
run() {
  /usr/bin/time -f "$1 ($2): %e s, user %U s, %M KB" "$bin" simulate --predict --heads "$heads" --ctx "$ctx" \
    --threads 1 --pipeline "$1" --dtype "$2" > /dev/null
}
for p in eager flash2 bloom-hf falcon-hf-eager mpt mpt-hf flex-alibi; do
  run "$p" bf16
done
for p in sdpa-efficient sdpa-cudnn falcon-hf-sdpa; do
  for d in bf16 fp16 fp32; do
    run "$p" "$d"
  done
done
# llama.cpp / ggml CPU soft_max (issue 18: under 2 s; measured kernel, fp32 model): the AVX2 build with
# fp32 and fp16 masks, and the scalar build (libm expf on every key).
for p in llamacpp-cpu llamacpp-cpu,mask-dtype=fp16 llamacpp-cpu,exp=ggml-scalar; do
  run "$p" fp32
done
# GPU engines modelled from source, not measured (docs/pipelines.md §3c): the decode presets compute one
# query row (rows=1), which the predictor runs through the kernel model.
# vllm-flash,rows=1: flash_attn_with_kvcache's split-KV decode (num_splits_heuristic: 4 splits at 64 heads;
# splits=128 the most the fork allows).
# vllm-triton,rows=1: the 3-D kernel (16 segments) vLLM runs for a decode step.
for p in llamacpp-cuda-fa vllm-paged trtllm-decode vllm-flash,rows=1 vllm-flash,rows=1,splits=128 vllm-triton,rows=1; do
  for d in bf16 fp16; do
    run "$p" "$d"
  done
done
# The prefill engines (every query row): llamacpp-cuda and vllm-triton predictors, vllm-flash = the flash model.
for p in llamacpp-cuda vllm-flash vllm-triton; do
  for d in bf16 fp16; do
    run "$p" "$d"
  done
done
# TensorRT-LLM's context FMHA (every query row; fp16: fp16 accumulator, bf16: fp32), and fp16 with
# context_fmha_fp32_acc.
for d in bf16 fp16; do
  run trtllm-context "$d"
done
run trtllm-context,pv-accumulate=fp32 fp16
# The zero-logit gradient predictor (simulate --backward --predict, spec §15; issue 20: under 2 s):
# native kinds at unit upstream, upcast kinds with the loss scale's shifted dtype.
runb() {
  /usr/bin/time -f "backward $1 ($2, loss scale $3): %e s, user %U s, %M KB" "$bin" simulate --backward --predict \
    --heads "$heads" --ctx "$ctx" --threads 1 --pipeline "$1" --dtype "$2" --loss-scale "$3" > /dev/null
}
runb eager bf16 1
runb eager fp16 dynamic
runb mpt bf16 dynamic
# Bidirectional layers (encoders, issue 19): llama.cpp's soft_max on jina-bert-v2 (abl_ggml_bidir.c), and
# MosaicBERT's Triton kernel both ways (abl_triton_predict.c; over 2 s for flat slopes, docs/pipelines.md 3d).
runa() {
  /usr/bin/time -f "$1 $2 ($3): %e s, user %U s, %M KB" "$bin" simulate --predict --attention "$2" \
    --heads "$heads" --ctx "$ctx" --threads 1 --pipeline "$1" --dtype "$3" --force > /dev/null
}
for p in llamacpp-cpu llamacpp-cpu,mask-dtype=fp16 llamacpp-cpu,exp=ggml-scalar; do
  runa "$p" bidirectional fp32
done
runa mosaicbert-triton causal bf16
runa mosaicbert-triton bidirectional bf16
# llama.cpp's flash attention on jina-bert-v2 (abl_ggml_fa_bidir.c: the tiled kernel), both exp builds.
for p in llamacpp-cpu-fa llamacpp-cpu-fa,exp=ggml-scalar; do
  runa "$p" bidirectional fp32
done
