"""Measure where the backward pass of ALiBi attention kernels gives an exactly-zero score gradient on a CUDA
GPU (issue 20, spec §15) and compare with the tool's gradient models.

Usage: validate_gpu_backward.py BINARY [--dry-run] [--full]
Exit 77 (CTest: skipped) without torch, or without a CUDA device unless --dry-run; 0 when every compared
count agrees; 1 otherwise.

The measurement (docs/pipelines.md §9). A fused kernel never returns dS, so it is read back through dK: with
the softmax scale set to 1, Q = 0 except the last query, Q[N-1] = e_0, and K = 0, every score is the ALiBi
bias alone (QK^T = 0, the forward is the zero-logit layer), and dK = dS^T Q gives dK[k, 0] = dS[N-1, k]: the
last row's rounded dS, one GEMM term times 1 (exact). The upstream: dO = e_0 on the last row only and V[k] =
2^j e_0 on the far keys (distance >= d_min), 0 on the near ones, so dP[N-1, k] = 2^j on the measured keys and
D = rowsum(dO o O) = 2^j x (their mass). d_min is the smallest distance whose keys hold a mass below 2^-26
(from the float64 softmax of the stored bias), so fp32(2^j - D) = 2^j: the measured keys see exactly the
unit upstream 2^j of `--upstream 2^j`, the farthest first. Per head: the measured zeros among distances
d_min .. N-1 and the first zero, against the model's last-row first gradient-blind distance f restricted to
that range (zeros N - max(f, d_min), first max(f, d_min)).

Kernels and their models:
  eager      composite softmax(x, dtype=float32).to(dtype) with CUDA autograd (_softmax_backward_data, CUDA):
             `simulate --backward --predict --pipeline eager` (upcast kind; compared, fails on a difference)
  mpt        torch.softmax in the dtype (native kind): `--pipeline mpt` (2^j >= 1 only; compared)
  math       SDPA MATH backend: its model depends on the torch version (docs/pipelines.md §9): reported
  efficient  SDPA EFFICIENT_ATTENTION (mem-efficient backward; no backward model in the tool): reported
  flash2     flash_attn.flash_attn_func(alibi_slopes=..., causal=True, softmax_scale=1) when the flash_attn
             package is installed: `analyze --gradient --level weight` (one rounding of the fp32 P; fp16 only,
             bf16's flush of P below 2^-126 is not in the closed form: reported)
Reported kernels print their counts beside the nearest model; they do not fail the run.

A GEMM may treat subnormal inputs as 0 (the CPU bf16 matmul of torch 1.13 does): then dK loses subnormal dS
that are not 0. The composite kernels (eager, mpt) are therefore measured from their own dS (the scores'
x.grad), and their dK recovery is checked against it: equal except for subnormal dS lost by the GEMM, which
are counted; where that count is not 0 the fused kernels (read only through dK) are reported, not compared.

--dry-run (no GPU needed; torch >= 1.13 on the CPU): the eager and mpt measurements on the CPU in bf16 (8 heads,
N = 1024, 2^0, 2^8, 2^-8): the dK recovery against the scores' own gradient as above, and the zero counts
against the tool's, which must agree (and find zeros). This checks the measurement where no GPU is lent.
"""

import json
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
except Exception:
    print("skipped: numpy/torch not importable")
    sys.exit(77)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
from alibi_reference import press_slopes   # noqa: E402 (shared with the CPU validators)

BIN = sys.argv[1] if len(sys.argv) > 1 else None
DRY = "--dry-run" in sys.argv
FULL = "--full" in sys.argv
if BIN is None:
    print(__doc__)
    sys.exit(2)
if not DRY and not torch.cuda.is_available():
    print("skipped: no CUDA device (--dry-run checks the measurement on the CPU)")
    sys.exit(77)
DEV = "cpu" if DRY else "cuda"
D = 64
DT = {"bf16": torch.bfloat16, "fp16": torch.float16}
ZEROS = [0]   # measured zero gradients over every compared case (a run that finds none tests nothing)
DAZ = [0]     # subnormal dS that the dK GEMM turned into 0 (seen on the composite kernels)
TINY = [0.0]  # the dtype's smallest normal


press = press_slopes   # Press et al.'s get_slopes (tests/torch/alibi_reference.py)


def slopes32(H):
    """The binary32 slopes, as the tool reads them (exact decimals of the float32 values)."""
    return [float(np.float32(m)) for m in press(H)]


def bias(slopes, N, dt):
    """The relative bias -m (i - j), fp32 product cast to the dtype, causal -inf (as validate_gpu.py)."""
    m = torch.tensor(slopes, dtype=torch.float32, device=DEV)
    i = torch.arange(N, device=DEV)
    dist = (i[:, None] - i[None, :]).float()
    b = (-(m[:, None, None] * dist[None])).to(dt)
    return b.masked_fill(dist[None] < 0, float("-inf"))


def d_min(mask_row):
    """Smallest distance d such that the keys at distance >= d hold less than 2^-26 of the last row's mass
    (float64 softmax of the stored bias)."""
    x = mask_row.double().cpu().numpy()[::-1]            # by distance 0 .. N-1
    p = np.exp(x - x.max())
    p /= p.sum()
    tail = np.cumsum(p[::-1])[::-1]                       # mass at distance >= d
    for d in range(len(tail)):
        if tail[d] < 2.0 ** -26:
            return max(d, 1)
    return len(tail)


def operands(H, N, dt, j, dmins):
    q = torch.zeros(1, H, N, D, dtype=dt, device=DEV)
    q[0, :, N - 1, 0] = 1
    k = torch.zeros(1, H, N, D, dtype=dt, device=DEV, requires_grad=True)
    v = torch.zeros(1, H, N, D, dtype=dt, device=DEV)
    for h in range(H):
        v[0, h, : N - dmins[h], 0] = 2.0 ** j            # keys at distance >= d_min
    do = torch.zeros(1, H, N, D, dtype=dt, device=DEV)
    do[0, :, N - 1, 0] = 1
    return q, k, v, do


def composite(kind, q, k, v, mask, keep):
    x = q @ k.transpose(-2, -1) + mask[None]              # scale 1
    x.retain_grad()
    keep.append(x)
    if kind == "eager":
        p = torch.softmax(x, dim=-1, dtype=torch.float32).to(q.dtype)
    else:                                                  # mpt: the softmax in the dtype
        p = torch.softmax(x, dim=-1)
    return p @ v


def sdpa(backend):
    def run(q, k, v, mask, keep):
        from torch.nn.attention import sdpa_kernel, SDPBackend
        be = {"math": SDPBackend.MATH, "efficient": SDPBackend.EFFICIENT_ATTENTION}[backend]
        with sdpa_kernel([be]):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask[None], scale=1.0)
    return run


def flash2(slopes):
    def run(q, k, v, mask, keep):
        from flash_attn import flash_attn_func
        sl = torch.tensor(slopes, dtype=torch.float32, device=DEV)
        t = lambda a: a.transpose(1, 2)                   # (B, N, H, D)
        return t(flash_attn_func(t(q), t(k), t(v), causal=True, softmax_scale=1.0, alibi_slopes=sl))
    return run


def recovery(g, ds, H, N, dmins):
    """The composite's own dS (x.grad) against dK's recovery: keys whose non-zero dS the dK GEMM lost (only
    subnormal dS may be: a GEMM that treats subnormal inputs as 0; anything else is an error)."""
    lost = 0
    for h in range(H):
        n = N - dmins[h]
        a, b = g[h, :n], ds[h, :n]
        bad = a != b
        if bool((bad & ~((b == 0) & (a.abs() < TINY[0]))).any()):
            raise AssertionError("head %d: dK does not recover dS" % (h + 1))
        lost += int(bad.sum())
    return lost


def measure(fn, H, N, dt, j, mask, dmins):
    """Per head (first zero distance, zeros) on distances d_min .. N-1. Composite kernels: from their own
    dS (x.grad), the dK recovery checked against it (DAZ[0] counts subnormal dS the GEMM lost); fused
    kernels: from the dK recovery."""
    q, k, v, do = operands(H, N, dt, j, dmins)
    keep = []
    out = fn(q, k, v, mask, keep)
    out.backward(do)
    ds = k.grad[0, :, :, 0].float()                       # dS[N-1, key], per head
    if keep:
        g = keep[0].grad[0, :, N - 1, :].float()
        TINY[0] = torch.finfo(dt).tiny
        DAZ[0] += recovery(g, ds, H, N, dmins)
        ds = g
    res = []
    for h in range(H):
        row = ds[h].cpu().numpy()[::-1]                   # by distance
        z = [d for d in range(dmins[h], N) if row[d] == 0]
        res.append((z[0] if z else None, len(z)))
    return res


def restrict(first, N, dmin):
    """The model's last-row first zero f, seen on distances dmin .. N-1."""
    if first is None:
        return (None, 0)
    f = max(first, dmin)
    return (f, N - f)


def tool_simulate(preset, dn, N, slopes, j):
    spec = "slopes:" + ",".join(repr(m) for m in slopes)
    out = subprocess.run([BIN, "simulate", "--backward", "--predict", "--pipeline", preset, "--dtype", dn, "--ctx",
                          str(N), "--slopes", spec, "--upstream", "2^%d" % j, "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    return [h["first_blind"] for h in json.loads(out)["backward"]]


def tool_closed_form(dn, N, slopes, j):
    spec = "slopes:" + ",".join(repr(m) for m in slopes)
    out = subprocess.run([BIN, "analyze", "--gradient", "--level", "weight", "--dtype", dn, "--ctx", str(N),
                          "--slopes", spec, "--upstream", "2^%d" % j, "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    heads = sorted(json.loads(out)["heads"], key=lambda h: h["head"])
    return [None if h["row_zeros"] == 0 else h["delta"] for h in heads]


def case(kind, fn, model, dn, H, N, j, compared):
    if compared == "fused":   # read through the dK GEMM: only trusted where it keeps subnormal dS
        compared = DAZ[0] == 0
    dt = DT[dn]
    slopes = slopes32(H)
    mask = bias(slopes, N, dt)
    dmins = [d_min(mask[h, N - 1]) for h in range(H)]
    try:
        got = measure(fn, H, N, dt, j, mask, dmins)
    except Exception as e:
        if isinstance(e, AssertionError):
            raise
        print("%-9s %s H=%-3d N=%-5d 2^%-3d: kernel unavailable (%s)" % (kind, dn, H, N, j,
              str(e).splitlines()[0][:70] if str(e) else type(e).__name__))
        return True
    firsts = model(dn, N, slopes, j)
    want = [restrict(firsts[h], N, dmins[h]) for h in range(H)]
    same = got == want
    ZEROS[0] += sum(z for _, z in got)
    verdict = ("agree" if same else "DIFFER") if compared else ("same as model" if same else "differs (reported)")
    print("%-9s %s H=%-3d N=%-5d 2^%-3d: %s" % (kind, dn, H, N, j, verdict), flush=True)
    if not same:
        for h in range(H):
            if got[h] != want[h]:
                print("   head %d (d >= %d): measured first/zeros %s, model %s" % (h + 1, dmins[h], got[h], want[h]))
    return same or not compared


def main():
    eager_model = lambda dn, N, s, j: tool_simulate("eager", dn, N, s, j)
    mpt_model = lambda dn, N, s, j: tool_simulate("mpt", dn, N, s, j)
    if DRY:
        torch.set_num_threads(2)
        ok = True
        for j in (0, 8, -8):
            ok &= case("eager", lambda *a: composite("eager", *a), eager_model, "bf16", 8, 1024, j, True)
            if j >= 0:
                ok &= case("mpt", lambda *a: composite("mpt", *a), mpt_model, "bf16", 8, 1024, j, True)
        print("dry run (CPU): %d zero gradients measured; the dK recovery equals dS except %d subnormal dS the "
              "CPU GEMM treats as 0; %s" % (ZEROS[0], DAZ[0], "all agree" if ok else "DIFFER"))
        return 0 if ok and ZEROS[0] > 0 else 1
    fp32_out = lambda dn, N, s, j: tool_simulate("eager,output-dtype=fp32", dn, N, s, j)
    ok = True
    heads = [8, 12, 16] if FULL else [8, 16]
    ctxs = [1024, 2048, 4096] if FULL else [1024, 2048]
    for H in heads:
        for N in ctxs:
            for dn in DT:
                for j in (0, 8, -8):
                    ok &= case("eager", lambda *a: composite("eager", *a), eager_model, dn, H, N, j, True)
                    if j >= 0:
                        ok &= case("mpt", lambda *a: composite("mpt", *a), mpt_model, dn, H, N, j, True)
                    ok &= case("math", sdpa("math"), fp32_out, dn, H, N, j, False)
                    ok &= case("efficient", sdpa("efficient"), eager_model, dn, H, N, j, False)
                    ok &= case("flash2", flash2(slopes32(H)), tool_closed_form, dn, H, N, j,
                               "fused" if dn == "fp16" else False)
    if DAZ[0]:
        print("the dK GEMM on this device turned %d subnormal dS into 0: the fused kernels' zeros (read through "
              "it) were reported, not compared" % DAZ[0])
    print("%d zero gradients measured; %s" % (ZEROS[0], "every compared case agrees" if ok else "DIFFER"))
    return 0 if ok and ZEROS[0] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
