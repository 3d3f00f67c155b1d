#!/usr/bin/python3
"""The PyTorch baseline of bench/bench_simulate_torch.sh: count the exactly-zero attention weights of a
causal ALiBi layer with PyTorch's CPU softmax, the way the framework code computes them (zero q.k,
the preset's bias construction and softmax call; see tests/torch/validate_torch.py and
docs/pipelines.md), in blocks of query rows so memory stays bounded.

usage: torch_softmax.py --preset eager|bloom-hf|falcon-rw-hf|mpt --heads H --ctx N [--dtype bf16|fp16]
                        [--logit-std S] [--threads T] [--rows R]
prints: "matrix_zeros Z row_zeros R" (the totals over the heads). Exit 77 when torch is missing.

With --logit-std S the logits get S * torch.randn scores (the same amount of work as `simulate
--logit-std S`; not the same random numbers, so not the same counts).
"""
import argparse
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("torch_softmax: torch is not importable; skipped", file=sys.stderr)
    sys.exit(77)

DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def press_slopes(h):
    """the press schedule 2^(-8k/H), k = 1..H, for H a power of two, as fp32"""
    return torch.tensor([2.0 ** (-8.0 * (k + 1) / h) for k in range(h)], dtype=torch.float32)


def block_logits(preset, slopes, n, i0, i1, dtype, std, gen):
    """rows i0..i1-1 of every head's logits (H x R x N), masked, as the framework builds them"""
    H = slopes.numel()
    i = torch.arange(i0, i1).view(-1, 1)
    j = torch.arange(n).view(1, n)
    mask = j > i                                   # R x N
    if preset == "eager":
        x = -(slopes.view(H, 1, 1) * (i - j).float().view(1, i1 - i0, n))
        if std:
            x = x + std * torch.randn(H, i1 - i0, n, generator=gen)
        x = x.to(dtype)
    elif preset == "bloom-hf":
        alibi = (slopes.view(H, 1) * j).view(H, 1, n).to(dtype)
        scores = torch.zeros(H, i1 - i0, n, dtype=dtype)
        if std:
            scores = (std * torch.randn(H, i1 - i0, n, generator=gen)).to(dtype)
        x = alibi + scores
    elif preset == "falcon-rw-hf":
        alibi = (slopes.view(H, 1).bfloat16() * j).to(dtype)
        scores = torch.zeros(H, i1 - i0, n, dtype=torch.float32)
        if std:
            scores = std * torch.randn(H, i1 - i0, n, generator=gen)
        x = (scores + alibi.view(H, 1, n)) * (1 / 64 ** 0.5)
    elif preset == "mpt":
        ab = (torch.arange(1 - n, 1, dtype=torch.int32).view(1, n) * slopes.view(H, 1)).to(dtype).view(H, 1, n)
        scores = torch.zeros(H, i1 - i0, n, dtype=dtype)
        if std:
            scores = (std * torch.randn(H, i1 - i0, n, generator=gen)).to(dtype)
        x = scores * 0.125 + ab
    else:
        raise ValueError(preset)
    return x.masked_fill(mask, torch.finfo(x.dtype).min), mask


def softmax(preset, x, dtype):
    if preset in ("eager", "bloom-hf"):
        return F.softmax(x, dim=-1, dtype=torch.float32).to(dtype)
    if preset == "falcon-rw-hf":
        return F.softmax(x, dim=-1, dtype=dtype)
    return torch.softmax(x, dim=-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="eager")
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--ctx", type=int, default=8192)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--logit-std", type=float, default=0.0)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--rows", type=int, default=512)
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    dtype = DT[a.dtype]
    slopes = press_slopes(a.heads)
    gen = torch.Generator().manual_seed(1)
    n = a.ctx
    matrix_zeros = 0
    row_zeros = 0
    for i0 in range(0, n, a.rows):
        i1 = min(n, i0 + a.rows)
        x, mask = block_logits(a.preset, slopes, n, i0, i1, dtype, a.logit_std, gen)
        p = softmax(a.preset, x, dtype)
        z = (p == 0) & ~mask
        matrix_zeros += int(z.sum())
        if i1 == n:
            row_zeros = int(z[:, -1].sum())
    print("matrix_zeros %d row_zeros %d" % (matrix_zeros, row_zeros))
    return 0


if __name__ == "__main__":
    sys.exit(main())
