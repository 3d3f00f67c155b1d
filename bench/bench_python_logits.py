#!/usr/bin/python3
"""simulate(logits=...) from Python against PyTorch's CPU softmax computing the same zero counts on the
same captured scores, on the same cores, in one run (issue 23's speed target: a ratio of at least 10).

usage: PYTHONPATH=python bench/bench_python_logits.py [--heads H] [--ctx N] [--threads T] [--rows R] [--cli BIN]
  The scores: std 4 normal float32 [H, N, N] (a captured layer's pre-bias q.k scores). Both sides run the
  eager pipeline in bf16 (bias -m (i - j) in fp32 rounded to bf16, added to the scores rounded to bf16,
  softmax in fp32, weight rounded to bf16) and count the exactly-zero weights of the causal part. PyTorch
  goes in blocks of R query rows (memory bounded) with torch.set_num_threads(T). --cli BIN also times
  `BIN simulate --logits FILE.npy` on the same scores (np.save'd to a temporary file).
prints: wall and CPU seconds (the process's user + system time over all its threads; the CLI's from
  getrusage of the child) and zero counts of each, and the ratios torch / simulate of both: the CPU ratio
  is the steadier one on a shared machine. Exit 77 without torch.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

try:
    import torch
except ImportError:
    print("bench_python_logits: torch is not importable; skipped", file=sys.stderr)
    sys.exit(77)

import alibi_blind as ab


def press(h):
    return torch.tensor([2.0 ** (-8.0 * (k + 1) / h) for k in range(h)], dtype=torch.float32)


def torch_zeros(scores, rows):
    """Zero weights of the causal part, eager bf16, with PyTorch's CPU softmax."""
    h, n, _ = scores.shape
    m = press(h).view(h, 1, 1)
    zeros = 0
    j = torch.arange(n).view(1, n)
    for i0 in range(0, n, rows):
        i1 = min(n, i0 + rows)
        i = torch.arange(i0, i1).view(-1, 1)
        bias = (-(m * (i - j).float().view(1, i1 - i0, n))).to(torch.bfloat16)
        x = scores[:, i0:i1, :].to(torch.bfloat16) + bias
        mask = (j > i).view(1, i1 - i0, n)
        x = x.masked_fill(mask, float("-inf"))
        w = torch.softmax(x, dim=-1, dtype=torch.float32).to(torch.bfloat16)
        zeros += int(((w == 0) & ~mask).sum())
    return zeros


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--ctx", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--cli", default=None)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(1)
    scores = torch.randn(a.heads, a.ctx, a.ctx, generator=g) * 4
    arr = scores.numpy()

    t0, c0 = time.perf_counter(), time.process_time()
    doc = ab.simulate(logits=arr, threads=a.threads, logits_dtype="bf16", force=True)
    t_sim, c_sim = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    z_torch = torch_zeros(scores, a.rows)
    t_torch, c_torch = time.perf_counter() - t0, time.process_time() - c0
    print("H = %d, N = %d, threads %d" % (a.heads, a.ctx, a.threads))
    print("alibi_blind.simulate(logits=): %8.2f s wall %8.2f s CPU  matrix zeros %d" % (t_sim, c_sim, doc["matrix_zeros"]))
    print("PyTorch CPU softmax (eager):   %8.2f s wall %8.2f s CPU  matrix zeros %d" % (t_torch, c_torch, z_torch))
    if a.cli:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "scores.npy")
            np.save(path, arr)
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            out = subprocess.run([a.cli, "simulate", "--logits", path, "--logits-dtype", "bf16", "--threads",
                                  str(a.threads), "--force", "--format", "json"], capture_output=True, check=True)
            t_cli = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            c_cli = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
            print("alibi-blind simulate --logits: %8.2f s wall %8.2f s CPU  matrix zeros %d" % (
                t_cli, c_cli, json.loads(out.stdout)["matrix_zeros"]))
    print("ratio torch / simulate(logits=): %.1f wall, %.1f CPU" % (t_torch / t_sim if t_sim > 0 else 0.0,
                                                                  c_torch / c_sim if c_sim > 0 else 0.0))

if __name__ == "__main__":
    main()
