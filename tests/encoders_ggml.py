#!/usr/bin/env python3
"""llama.cpp's jina-bert-v2 (ggml, --attention bidirectional): the end row against the causal last row.

usage: encoders_ggml.py ALIBI_BLIND

llama.cpp fills a non-causal mask with -|p0 - p1| for every key (llama-graph.cpp at 00395eb2,
llm_graph_input_attn_no_cache::set_input), so the END row i = N - 1 of the bidirectional layer hands ggml the
very input of a causal last row: N keys 0..N-1 at mask -(N-1-j). Its zero weights, first blind distance and
influence-zero keys must therefore equal the causal emulation's last row, which kernels.ggml_calibration
checks against measurements of a real ggml build. A consistency check of the bidirectional ggml rows, not a
measurement (the measured bidirectional cases are in kernels.ggml_calibration: tests/data/ggml-cpu/cases/*bidir*);
it also requires the other rows to add zeros (matrix > causal matrix), and the soft_max and the
flash-attention predictors to give simulate's counts for every head (end row, middle row, matrix, influence):
flash attention from 64 rows on (the tiled kernel) and below (one-chunk, its F16 accumulator).
"""
import json
import subprocess
import sys


def sim(binary, attention, pipeline, n, dtype, extra=()):
    r = subprocess.run([binary, "simulate", "--model", "jina-embeddings-v2-base-en", "--attention", attention,
                        "--pipeline", pipeline, "--ctx", str(n), "--dtype", dtype, "--format", "json", *extra],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def main():
    binary = sys.argv[1]
    bad = 0
    for pipeline in ("llamacpp-cpu", "llamacpp-cpu-fa"):
        for dtype, n in (("fp16", 512), ("bf16", 300), ("fp32", 1000)):
            b, c = sim(binary, "bidirectional", pipeline, n, dtype), sim(binary, "causal", pipeline, n, dtype)
            keys = ("first_blind", "row_zeros", "first_influence_zero", "row_influence_zeros")
            same = [tuple(h.get(k) for k in keys) for h in b["heads"]] == [tuple(h.get(k) for k in keys) for h in c["heads"]]
            more = b["matrix_zeros"] >= c["matrix_zeros"]
            ok = same and more
            print("%-16s %s N=%-5d end row = causal last row: %s; matrix %d >= causal %d  %s" % (
                pipeline, dtype, n, same, b["matrix_zeros"], c["matrix_zeros"], "ok" if ok else "DIFFERS"))
            bad += not ok
    keys = ("first_blind", "row_zeros", "matrix_zeros", "mid_row_zeros", "first_influence_zero",
            "row_influence_zeros", "matrix_influence_zeros")
    cases = [("llamacpp-cpu", "fp16", 512), ("llamacpp-cpu", "fp32", 1000), ("llamacpp-cpu-fa", "fp16", 512),
             ("llamacpp-cpu-fa", "fp32", 1000), ("llamacpp-cpu-fa", "bf16", 300), ("llamacpp-cpu-fa", "fp16", 40)]
    for pipeline, dtype, n in cases:
        s = sim(binary, "bidirectional", pipeline, n, dtype)
        p = sim(binary, "bidirectional", pipeline, n, dtype, ["--predict"])
        ok = [tuple(h.get(k) for k in keys) for h in s["heads"]] == [tuple(h.get(k) for k in keys) for h in p["heads"]]
        ok = ok and any(h.get("matrix_zeros") for h in s["heads"])
        print("%-16s %s N=%-5d predictor = simulate (every head): %s" % (pipeline, dtype, n, "ok" if ok else "DIFFERS"))
        bad += not ok
    print("encoders_ggml: %s" % ("every case agrees" if bad == 0 else "%d case(s) differ" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
