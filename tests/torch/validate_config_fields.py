#!/usr/bin/env python3
"""The config.json fields that change (or do not change) the kernel answer (issue 19), checked against
sources independent of the tool:

- BTLM/jais alibi_scaling.factor: every head's slope equals fp32(fp32(m) / fp32(F)), m from Cerebras's
  _get_alibi_slopes in Python floats (struct's binary32 rounding, no tool code), and every head's first
  blind distance equals the one PyTorch's CPU softmax gives for the model code's last row
  (AlibiPositionEmbeddingLayer: alibi = (slopes / -scale) * |i - j|, type_as the bf16 scores, softmax).
- alibi_scaling.train_seq_len T beyond T keys: the slopes PyTorch gives for slopes / -(keys / T) and the first
  blind distances of PyTorch's softmax of that last row.
- alibi_scaling.train_seq_len at a context up to train_seq_len, mup_scale_qk_dot_by_d and MPT's
  attn_config.clip_qkv scale or bound the scores, not the bias: the zero-logit answer equals the one of the
  same config without the field, and the source says so (clip_qkv with the bound clip^2 * sqrt(head_dim)).
- replit_lm (replit-code-v1-3b's config, MPT's attention fields at the top level): read as MPT, every head's
  first blind distance equals PyTorch's for llm-foundry's gen_slopes / build_alibi_bias in fp32.
usage: validate_config_fields.py BINARY   (needs torch; run by /usr/bin/python3)"""
import json
import math
import os
import struct
import subprocess
import sys
from fractions import Fraction

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "config_fields")
N = 2048


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def get_alibi_slopes(n):
    """Cerebras's AlibiPositionEmbeddingLayer._get_alibi_slopes (Python floats), as in the BTLM/jais code."""
    def pow2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return pow2(n)
    c = 2 ** math.floor(math.log2(n))
    return pow2(c) + get_alibi_slopes(2 * c)[0::2][: n - c]


def analyze(binary, name, ctx=N):
    path = os.path.join(DATA, name) if not os.path.isabs(name) else name
    p = subprocess.run([binary, "analyze", "--config", path, "--ctx", str(ctx), "--format", "json"],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise SystemExit("%s: exit %d: %s" % (name, p.returncode, p.stderr))
    return json.loads(p.stdout)


def torch_first_blind(slopes, scale, n):
    """the model code's last row for zero q.k: smallest d whose weight is exactly zero, per head"""
    H = len(slopes)
    s = torch.tensor(slopes).unsqueeze(-1)                         # fp32 Parameter, [H, 1]
    rel = torch.abs(torch.arange(n)[None, :] - (n - 1))              # |memory - context|, int64, [1, n]
    alibi = (s / -scale) * rel                                       # [H, n], fp32
    w = torch.zeros(H, n, dtype=torch.bfloat16)
    w += alibi.type_as(w)
    p = torch.nn.functional.softmax(w, dim=-1)
    out = []
    for h in range(H):
        zero = (p[h] == 0).tolist()
        out.append(next((d for d in range(n) if zero[n - 1 - d]), None))
    return out


def mpt_first_blind(n_heads, bias_max, n, dtype):
    """llm-foundry gen_slopes + build_alibi_bias (the last row, zero q.k): smallest d with weight zero"""
    _n = 2 ** math.ceil(math.log2(n_heads))
    m = torch.arange(1, _n + 1, dtype=torch.float32).mul(bias_max / _n)
    slopes = 1.0 / torch.pow(2, m)
    if _n != n_heads:
        slopes = torch.concat([slopes[1::2], slopes[::2]])[:n_heads]
    bias = (torch.arange(1 - n, 1, dtype=torch.int32).view(1, n) * slopes.view(n_heads, 1)).to(dtype)
    p = torch.softmax(torch.zeros(n_heads, n, dtype=dtype) + bias, dim=-1)
    out = []
    for h in range(n_heads):
        zero = (p[h] == 0).tolist()
        out.append(next((d for d in range(n) if zero[n - 1 - d]), None))
    return out


def check_factor(binary, name, factor, failures):
    res = analyze(binary, name)
    heads = res["heads"]
    base = get_alibi_slopes(len(heads))
    want = [Fraction(f32(f32(m) / f32(factor))) for m in base]
    got = [Fraction(h["slope_exact"]) for h in heads]
    if got != want:
        failures.append("%s: slopes %s, expected %s" % (name, [str(g) for g in got], [str(w) for w in want]))
    # and PyTorch's own division of the model code's fp32 slopes tensor by the Python float (CPU: the scalar
    # is cast to fp32 first, which matters for F = 2.2, whose binary64 and binary32 values differ)
    torch_slopes = (torch.tensor(base).unsqueeze(-1) / -factor).squeeze(-1).tolist()
    if [-Fraction(t) for t in torch_slopes] != got:
        failures.append("%s: slopes differ from PyTorch's slopes / -scale" % name)
    tfb = torch_first_blind([f32(m) for m in base], factor, N)
    kfb = [h["first_blind"] for h in heads]
    if tfb != kfb:
        failures.append("%s: first blind %s, PyTorch %s" % (name, kfb, tfb))
    if "alibi_scaling.factor" not in res["sources"]["slopes"]:
        failures.append("%s: slopes source %r" % (name, res["sources"]["slopes"]))
    return kfb


def check_keys_scaling(binary, t, ctx, failures):
    """alibi_scaling.train_seq_len T at a context of ctx > T keys: Cerebras's AlibiPositionEmbeddingLayer takes
    scale = key_length / train_seq_len (Python true division), alibi = (slopes / -scale) * |i - j|: the slopes
    PyTorch gives for that division, and PyTorch's softmax of the model code's last row for the first blind
    distances"""
    with open(os.path.join(DATA, "btlm-train-seq-len.json")) as f:
        cfg = json.load(f)
    cfg["alibi_scaling"]["train_seq_len"] = t
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "abl-btlm-t%d-%d.json" % (t, os.getpid()))
    with open(tmp, "w") as f:
        json.dump(cfg, f)
    try:
        res = analyze(binary, tmp, ctx)
    finally:
        os.unlink(tmp)
    heads = res["heads"]
    base = get_alibi_slopes(len(heads))
    scale = ctx / t
    torch_slopes = (torch.tensor(base).unsqueeze(-1) / -scale).squeeze(-1).tolist()
    got = [Fraction(h["slope_exact"]) for h in heads]
    if [-Fraction(x) for x in torch_slopes] != got:
        failures.append("train_seq_len %d at %d keys: slopes %s, PyTorch %s" % (t, ctx, [float(g) for g in got],
                                                                              torch_slopes))
    tfb = torch_first_blind([f32(m) for m in base], scale, ctx)
    kfb = [h["first_blind"] for h in heads]
    if tfb != kfb:
        failures.append("train_seq_len %d at %d keys: first blind %s, PyTorch %s" % (t, ctx, kfb, tfb))
    if "alibi_scaling.train_seq_len %d" % t not in res["sources"]["slopes"]:
        failures.append("train_seq_len %d: slopes source %r" % (t, res["sources"]["slopes"]))
    print("train_seq_len %d at %d keys (scale %r): first blind %s" % (t, ctx, scale, kfb))


def same_answer(binary, a, b, needle, ctx, failures):
    ra, rb = analyze(binary, a, ctx), analyze(binary, b, ctx)
    keys = ("first_blind", "row_zeros", "matrix_zeros", "slope_exact")
    if [[h[k] for k in keys] for h in ra["heads"]] != [[h[k] for k in keys] for h in rb["heads"]]:
        failures.append("%s answers differently from %s" % (a, b))
    if needle not in ra["sources"]["pipeline"]:
        failures.append("%s: pipeline source %r lacks %r" % (a, ra["sources"]["pipeline"], needle))


def main():
    binary = sys.argv[1]
    failures = []
    unscaled = analyze(binary, "btlm-unscaled.json")
    tfb = torch_first_blind([f32(m) for m in get_alibi_slopes(12)], 1.0, N)
    if [h["first_blind"] for h in unscaled["heads"]] != tfb:
        failures.append("btlm-unscaled: first blind %s, PyTorch %s" % ([h["first_blind"] for h in unscaled["heads"]], tfb))
    fb2 = check_factor(binary, "btlm-factor-2.json", 2.0, failures)
    fb3 = check_factor(binary, "btlm-factor-3.json", 3.0, failures)
    check_factor(binary, "btlm-factor-2p2.json", 2.2, failures)
    # the factor changes the answer: with F = 2 head h has the unscaled slope of head h + 1 (press, 12 heads:
    # 2^-1, 2^-2, ... for heads 1..8), so its first blind distance is that head's
    if fb2[:7] != [h["first_blind"] for h in unscaled["heads"]][1:8]:
        failures.append("factor 2: heads 1-7 %s are not the unscaled heads 2-8" % fb2[:7])
    print("first blind, unscaled %s; factor 2 %s; factor 3 %s" % (tfb, fb2, fb3))
    same_answer(binary, "btlm-train-seq-len.json", "btlm-unscaled.json", "alibi_scaling.train_seq_len 1024", 1024,
                failures)
    # beyond T keys the slopes are divided by keys / T: a dyadic scale (2048 / 1024) and one whose binary64 and
    # binary32 values differ (1536 / 1000 = 1.536)
    check_keys_scaling(binary, 1024, 2048, failures)
    check_keys_scaling(binary, 1000, 1536, failures)
    jais_plain = os.path.join(DATA, "jais-mup.json")
    with open(jais_plain) as f:
        cfg = json.load(f)
    cfg.pop("mup_scale_qk_dot_by_d")
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "abl-jais-no-mup-%d.json" % os.getpid())
    with open(tmp, "w") as f:
        json.dump(cfg, f)
    try:
        same_answer(binary, "jais-mup.json", tmp, "mup_scale_qk_dot_by_d", N, failures)
    finally:
        os.unlink(tmp)
    bound = 6 * 6 * 128 / math.sqrt(128)   # clip^2 * head_dim * (1 / sqrt(head_dim)), head_dim 4096 / 32
    same_answer(binary, "mpt-clip-qkv-6.json", os.path.join(DATA, "..", "configs", "mpt-7b-instruct.json"),
                "clip_qkv 6: q, k, v clamped, so |q.k^T * scale| <= clip^2 * head_dim * scale = %.6g" % bound, N,
                failures)
    # replit_lm (replit-code-v1-3b's own config): MPT's fields at the top level, read as MPT (mpt:8, fp32)
    rp = analyze(binary, os.path.join(DATA, "..", "configs", "replit-code-v1-3b.json"))
    want = mpt_first_blind(32, 8, N, torch.float32)
    if [h["first_blind"] for h in rp["heads"]] != want or rp["slopes"] != "mpt:8" or rp["dtype"] != "fp32":
        failures.append("replit-code-v1-3b: first blind %s (slopes %s, dtype %s), PyTorch %s" %
                        ([h["first_blind"] for h in rp["heads"]], rp["slopes"], rp["dtype"], want))
    for f in failures:
        print("FAIL:", f)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
