#!/usr/bin/python3
"""Refact-1.6B's transformers remote code in PyTorch CPU against `simulate --pipeline refact-hf`.

usage: validate_refact.py ALIBI_BLIND

The code path (modeling_gpt_refact.py, read in the public copy sycomix/refact hf/modeling_gpt_refact.py
@35834bab; docs/models.md "Refact-1.6B" cites it) is written again here from that source, with zero q.k scores
(so the weights are the bias's):
  _get_slopes       n = 2^floor(log2 H); m_0 = 2.0 ** (-8.0 / n), a Python float; torch.pow(m_0, arange(1, 1 + n))
                    (int64 exponents: the result is fp32); past a power of two torch.pow(2.0 ** (-4.0 / n), odd
                    exponents 1, 3, ...) concatenated.
  get_alibi_biases  mask = (triu(ones(T, T)) == 1).transpose(0, 1) (lower triangle with the diagonal);
                    distance = mask.cumsum(dim=-1) (int64: j + 1 for every key j <= i); distance * m (int64 x
                    fp32 -> fp32); .to(dtype) (the embedding dtype).
  _attn             alibi + matmul(query * scale, key) in the model dtype (here + a zero score tensor of that
                    dtype); then either
                      upcast (attention_softmax_in_fp32, layer 0: unscale 1): x.to(fp32), the masked keys set to
                        finfo(fp32).min, softmax in fp32, .to(dtype);
                      plain: masked_fill(future, -10000) and softmax in the model dtype (bf16 on the CPU; the
                        CPU has no fp16 softmax in torch 1.13, so fp16 runs the upcast path only).
Counted per head: the last row's zero weights, the whole causal matrix's zero weights (keys j <= i), and the
last row's first blind distance. Every expected number comes from PyTorch; the tool is never the source.
`simulate --predict` (the predictor) must give the same numbers.

Exit status: 0 when every case agrees, 1 otherwise, 77 when /usr/bin/python3 cannot import torch.
"""
import json
import math
import struct
import subprocess
import sys
from fractions import Fraction

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError:
    print("validate_refact: torch is not importable; skipped")
    sys.exit(77)

torch.set_num_threads(2)
DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def refact_slopes(heads):
    """_get_slopes of modeling_gpt_refact.py: powers of a Python-float base in fp32."""
    n = 2 ** math.floor(math.log2(heads))
    m = torch.pow(2.0 ** (-8.0 / n), torch.arange(1, 1 + n))
    if n < heads:
        m = torch.cat([m, torch.pow(2.0 ** (-4.0 / n), torch.arange(1, 1 + 2 * (heads - n), 2))])
    assert m.dtype == torch.float32
    return m


def refact_alibi(heads, t, dtype):
    """get_alibi_biases (B = 1): [heads, T, T] in the model dtype."""
    mask = (torch.triu(torch.ones((t, t))) == 1).transpose(0, 1)
    distance = mask.cumsum(dim=-1)
    assert distance.dtype == torch.int64
    biases = distance[:, :, None] * refact_slopes(heads)[None, None, :]
    assert biases.dtype == torch.float32
    return biases.permute(2, 0, 1).to(DT[dtype])


def refact_weights(alibi_h, dtype, upcast):
    """_attn of one head with zero scores: the weights [T, T] in the model dtype."""
    t = alibi_h.shape[0]
    x = alibi_h + torch.zeros(t, t, dtype=DT[dtype])
    future = torch.triu(torch.ones((t, t), dtype=torch.bool), 1)   # GPTRefactModel._make_mask: masked keys
    if upcast:
        y = torch.where(~future, x.to(torch.float32), torch.tensor(torch.finfo(torch.float32).min))
        return F.softmax(y, dim=-1).to(DT[dtype])
    return F.softmax(torch.masked_fill(x, future, -10000), dim=-1)


def counts(p):
    """(last row zeros, causal matrix zeros, last row first blind distance or None) of weights [T, T]."""
    t = p.shape[0]
    causal = ~torch.triu(torch.ones((t, t), dtype=torch.bool), 1)
    z = (p == 0) & causal
    last = z[t - 1]
    fb = next((d for d in range(t) if bool(last[t - 1 - d])), None)
    return int(last.sum()), int(z.sum()), fb


def torch_counts(heads, t, dtype, upcast):
    alibi = refact_alibi(heads, t, dtype)
    return [counts(refact_weights(alibi[h], dtype, upcast)) for h in range(heads)]


def tool_counts(binary, heads, t, dtype, predict):
    args = [binary, "simulate", "--pipeline", "refact-hf", "--heads", str(heads), "--ctx", str(t), "--dtype", dtype,
            "--format", "json", "--threads", "2"] + (["--predict"] if predict else [])
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError("%s: %s" % (" ".join(args[1:]), r.stderr.strip()))
    rep = json.loads(r.stdout)
    return [(h["row_zeros"], h["matrix_zeros"], h["first_blind"]) for h in rep["heads"]]


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def rn32(q):
    """The binary32 value nearest the exact rational q > 0 (ties to even), by exact comparison."""
    c = f32(float(q))
    best = None
    for f in (float(np.nextafter(np.float32(c), np.float32(0))), c, float(np.nextafter(np.float32(c), np.float32(1)))):
        err = abs(Fraction(f) - q)
        even = struct.unpack("I", struct.pack("f", f))[0] % 2 == 0
        if best is None or err < best[0] or (err == best[0] and even):
            best = (err, f)
    return best[1]


def exact_pow_slopes(heads):
    """_get_slopes' base rounded to binary32 as torch holds it, raised exactly to each exponent, rounded once
    (Fraction arithmetic: independent of the tool and of any pow)."""
    n = 2 ** math.floor(math.log2(heads))
    b = Fraction(f32(2.0 ** (-8.0 / n)))
    out = [rn32(b ** k) for k in range(1, 1 + n)]
    if n < heads:
        b2 = Fraction(f32(2.0 ** (-4.0 / n)))
        out += [rn32(b2 ** k) for k in range(1, 1 + 2 * (heads - n), 2)]
    return out


def slopes_case(binary):
    """The tool's fp32 slopes (simulate's per-head "slope") equal RN32(b^k), the exact power of _get_slopes'
    fp32 base rounded once (slope-calc=torch-pow, docs/pipelines.md "Slopes as the code computes them"), for
    32, 12 and 8 heads. torch.pow itself is not correctly rounded on the CPU: where its value differs from
    RN32(b^k) (one ulp; H = 32: head 15) it is printed, not failed; the counts below use torch's own slopes."""
    bad = 0
    for heads in (32, 12, 8):
        r = subprocess.run([binary, "simulate", "--pipeline", "refact-hf", "--heads", str(heads), "--ctx", "8",
                            "--format", "json"], capture_output=True, text=True)
        # "slope" is printed with 9 significant digits: enough to name one binary32 value, read back as such
        got = [f32(h["slope"]) for h in json.loads(r.stdout)["heads"]]
        want = exact_pow_slopes(heads)
        ok = got == want
        torch_s = [float(v) for v in refact_slopes(heads)]
        off = [k + 1 for k in range(heads) if torch_s[k] != want[k]]
        print("slopes H=%-3d %s%s" % (heads, "ok" if ok else "DIFFERS: %s vs %s" % (got, want),
                                      "; torch.pow differs from RN32(b^k) at head(s) %s" % off if off else ""))
        bad += not ok
    return bad


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    bad = slopes_case(binary)
    # Refact-1.6B itself (32 heads, 4096 tokens, fp16), then other head counts (12: the extra slopes past a
    # power of two), dtypes and the plain path's bf16 softmax
    cases = [(32, 4096, "fp16", True), (32, 1000, "bf16", False), (12, 1024, "fp16", True), (12, 777, "bf16", True),
             (8, 3000, "fp32", True), (8, 513, "bf16", False)]
    for heads, t, dtype, upcast in cases:
        want = torch_counts(heads, t, dtype, upcast)
        for predict in (False, True):
            got = tool_counts(binary, heads, t, dtype, predict)
            ok = got == want
            print("H=%-3d N=%-5d %-4s %-6s %-8s last %7d matrix %10d  %s" % (
                heads, t, dtype, "upcast" if upcast else "plain", "predict" if predict else "simulate",
                sum(w[0] for w in want), sum(w[1] for w in want), "ok" if ok else "DIFFERS"))
            if not ok:
                for h, (g, w) in enumerate(zip(got, want)):
                    if g != w:
                        print("  head %d: tool %s, PyTorch %s" % (h + 1, g, w))
            bad += not ok
    print("validate_refact: %s" % ("every count agrees" if bad == 0 else "%d case(s) differ" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
