#!/usr/bin/python3
"""Validate `alibi-blind simulate --backward` against PyTorch's CPU autograd (an optional test).

usage: validate_gradient.py ALIBI_BLIND

For each case the emulator dumps the layer's logits (simulate --weights, forward only); PyTorch runs
the framework's softmax call on them with autograd, P.backward(dP * S) with a random dP in the
training dtype and a loss scale S, and counts the exact zeros of the scores' gradient per head: the
first zero distance of the last row, the zeros of the last row and of the causal matrix, and the zeros
whose forward weight is not 0. `simulate --backward --grad-weights dP.npy --loss-scale S` must give the
same counts. Every expected count comes from PyTorch. Unit-upstream cases (no dP file) are checked
against numpy on the emulator's dumped weights (the P the kernel multiplies by). fp16 runs only through the upcast path
(F.softmax(x, dtype=torch.float32).to(torch.float16)): torch 1.13's CPU softmax has no fp16 kernel.

Exit status: 0 when every case agrees, 1 otherwise, 77 when /usr/bin/python3 cannot import torch.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError:
    print("validate_gradient: torch is not importable; skipped")
    sys.exit(77)
from alibi_reference import read_rows

torch.set_num_threads(1)
_cap = re.search(r"CPU capability usage: (\w+)", torch.__config__.show())
LANES = "vec16" if (_cap and _cap.group(1).startswith("AVX512")) else "vec8"
DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def read_logits(path, heads, n):
    return read_rows(path, heads, n, "L")


def torch_counts(preset, dtype, L, dp, scale):
    """PyTorch's autograd: per head (first zero d, row zeros, matrix zeros, gradient-only row, matrix)."""
    heads, n, _ = L.shape
    causal = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    x = torch.from_numpy(L.copy()).to(DT[dtype]).masked_fill(causal, torch.finfo(DT[dtype]).min)
    x.requires_grad_(True)
    if preset == "eager":
        p = F.softmax(x, dim=-1, dtype=torch.float32).to(DT[dtype])
    else:   # mpt: torch.softmax in the dtype
        p = torch.softmax(x, dim=-1)
    # the scaled gradient in fp32, rounded into the dtype (a scale such as 2^16 is not an fp16 number;
    # GradScaler scales the fp32 loss, so dP arrives as dtype(dP * S))
    p.backward((dp.float() * scale).to(DT[dtype]))
    g = x.grad.float().numpy()
    pt = p.detach().float().numpy()
    tri = ~causal.numpy()
    out = []
    for h in range(heads):
        z = (g[h] == 0) & tri
        only = z & (pt[h] != 0)
        last = z[n - 1]
        fb = next((d for d in range(n) if last[n - 1 - d]), None)
        out.append((fb, int(last.sum()), int(z.sum()), int(only[n - 1].sum()), int(only.sum())))
    return out


def run_case(binary, preset, dtype, n, slopes, std, scale_log2, seed):
    spec = "%s,sum=%s,exp=sleef" % (preset, LANES)
    args = ["--pipeline", spec, "--dtype", dtype, "--ctx", str(n), "--slopes", slopes]
    if std:
        args += ["--logit-std", str(std), "--seed", str(seed)]
    heads = len(slopes.split(":")[1].split(","))
    g = torch.Generator().manual_seed(seed)
    dp = torch.randn(heads, n, n, generator=g).to(DT[dtype])
    # the masked keys' dP meets P = 0 (it adds 0 to D unless the scale overflows it to inf: then the row is
    # NaN, a step GradScaler skips); the tool reads the causal part only, so the masked part is 0 here
    dp = dp.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), 0)
    with tempfile.TemporaryDirectory() as tmp:
        dump, npy = os.path.join(tmp, "w.txt"), os.path.join(tmp, "dp.npy")
        subprocess.run([binary, "simulate", "--weights", dump, "--format", "json"] + args, check=True,
                       capture_output=True)
        L = read_logits(dump, heads, n)
        np.save(npy, dp.float().numpy())
        out = subprocess.run([binary, "simulate", "--backward", "--grad-weights", npy, "--loss-scale",
                              "2^%d" % scale_log2, "--format", "json"] + args,
                             check=True, capture_output=True, text=True).stdout
    rep = json.loads(out)
    want = torch_counts(preset, dtype, L, dp, 2.0 ** scale_log2)
    got = [(h["first_blind"], h["row_zeros"], h["matrix_zeros"], h["gradient_only_row"], h["gradient_only_matrix"])
           for h in rep["backward"]]
    ok = want == got
    print("%-5s %-4s N=%d std=%s S=2^%d: %s%s" % (preset, dtype, n, std, scale_log2,
                                                  "agree" if ok else "DIFFER",
                                                  "" if ok else "\n  torch %s\n  tool  %s" % (want, got)))
    return ok, sum(w[2] for w in want)


ZERO_MAX = {"bf16": 2.0 ** -134, "fp16": 2.0 ** -25, "fp32": 2.0 ** -150}   # half the smallest subnormal


def read_weights(path, heads, n):
    return read_rows(path, heads, n, "W").astype(np.float64)


def run_unit(binary, preset, dtype, n, slopes, std, j):
    """Unit upstream (no dP file): dS = dtype(fp32(P 2^j)) from the P the kernel multiplies by (upcast: the
    fp32 P, dumped with output-dtype=fp32; native: the stored P), counted here with numpy."""
    spec = "%s,sum=%s,exp=sleef" % (preset, LANES)
    args = ["--pipeline", spec, "--dtype", dtype, "--ctx", str(n), "--slopes", slopes]
    if std:
        args += ["--logit-std", str(std), "--seed", "5"]
    heads = len(slopes.split(":")[1].split(","))
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "w.txt")
        wspec = spec + (",output-dtype=fp32" if preset == "eager" else "")
        subprocess.run([binary, "simulate", "--weights", dump] + args[:1] + [wspec] + args[2:], check=True,
                       capture_output=True)
        P = read_weights(dump, heads, n)
        out = subprocess.run([binary, "simulate", "--backward", "--upstream", "2^%d" % j, "--format", "json"] + args,
                             check=True, capture_output=True, text=True).stdout
    rep = json.loads(out)
    tri = np.tril(np.ones((n, n), dtype=bool))
    want = []
    for h in range(heads):
        z = (P[h] * 2.0 ** j <= ZERO_MAX[dtype]) & tri
        f = (P[h] <= ZERO_MAX[dtype]) & tri
        last = z[n - 1]
        fb = next((d for d in range(n) if last[n - 1 - d]), None)
        want.append((fb, int(last.sum()), int(z.sum()), int((z & ~f)[n - 1].sum()), int((z & ~f).sum())))
    got = [(h["first_blind"], h["row_zeros"], h["matrix_zeros"], h["gradient_only_row"], h["gradient_only_matrix"])
           for h in rep["backward"]]
    ok = want == got
    print("unit %-5s %-4s N=%d std=%s 2^%d: %s%s" % (preset, dtype, n, std, j, "agree" if ok else "DIFFER",
                                                   "" if ok else "\n  numpy %s\n  tool  %s" % (want, got)))
    return ok, sum(w[2] for w in want)


def pick_diag(P_ii, P_k, j, dtype):
    """dtype values (c, c2) with dtype(fp32(c P_ii + c2 P_k)) = 2^j, the roundings done by torch (None if
    none is found near); c2 = 0 where c alone reaches 2^j."""
    want = 2.0 ** j
    it = torch.int16 if dtype != "fp32" else torch.int32
    f32 = lambda v: torch.tensor([v], dtype=torch.float32)
    c0 = torch.tensor([want / P_ii], dtype=torch.float64).to(DT[dtype]).view(it).item()
    for k in range(-4, 5):
        c = torch.tensor([c0 + k], dtype=it).view(DT[dtype])
        for c2 in (torch.zeros(1, dtype=DT[dtype]),
                   torch.tensor([(want - c.double().item() * P_ii) / P_k if P_k else 0.0],
                                dtype=torch.float64).to(DT[dtype])):
            # two products, each exact in fp32 (or rounded once for fp32 operands), one fp32 addition
            d = (c.float() * f32(P_ii) + c2.float() * f32(P_k)).to(DT[dtype])
            if d.double().item() == want:
                return c, c2
    return None


def run_native_below_one(binary, dtype, n, slopes, std, j):
    """The unit-upstream rule on a native kernel with 2^j < 1 against PyTorch autograd itself: in the last
    row dP is 0 but for the diagonal key, c, chosen so that the CPU kernel's D = dtype(fp32(c P_ii)) is 2^j
    exactly (c is searched with torch's own roundings; where no c alone reaches it, a second dP on the key
    at d = 1 makes up the rest); every other key then has dP - D = -2^j, the unit upstream's |dP - D|.
    torch's zero gradients of the last row's keys d >= 2 must be the tool's (simulate --backward --upstream
    2^j, no file); d = 0 and 1 (dP - D not -2^j there) are left out: the tool's count must have no zero
    there (its first zero d >= 2)."""
    spec = "mpt,sum=%s,exp=sleef" % LANES
    args = ["--pipeline", spec, "--dtype", dtype, "--ctx", str(n), "--slopes", slopes]
    if std:
        args += ["--logit-std", str(std), "--seed", "7"]
    heads = len(slopes.split(":")[1].split(","))
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "w.txt")
        subprocess.run([binary, "simulate", "--weights", dump, "--format", "json"] + args, check=True,
                       capture_output=True)
        L = read_logits(dump, heads, n)
    out = subprocess.run([binary, "simulate", "--backward", "--upstream", "2^%d" % j, "--format", "json"] + args,
                         check=True, capture_output=True, text=True).stdout
    rep = json.loads(out)["backward"]
    causal = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    x = torch.from_numpy(L.copy()).to(DT[dtype]).masked_fill(causal, torch.finfo(DT[dtype]).min)
    x.requires_grad_(True)
    p = torch.softmax(x, dim=-1)
    dp = torch.zeros(heads, n, n, dtype=DT[dtype])
    for h in range(heads):
        c = pick_diag(p[h, n - 1, n - 1].float().item(), p[h, n - 1, n - 2].float().item(), j, dtype)
        if c is None:
            print("native 2^%d %s: no dP on d = 0, 1 gives D = 2^%d (head %d)" % (j, dtype, j, h + 1))
            return False, 0
        dp[h, n - 1, n - 1], dp[h, n - 1, n - 2] = c[0][0], c[1][0]
    p.backward(dp)
    g = x.grad.float().numpy()[:, n - 1, :]
    want, got = [], []
    for h in range(heads):
        z = g[h] == 0
        fb = next((d for d in range(2, n) if z[n - 1 - d]), None)
        want.append((fb, int(z[: n - 2].sum())))
        got.append((rep[h]["first_blind"], rep[h]["row_zeros"]))
    ok = want == got
    print("native %-4s N=%d std=%s 2^%d: %s%s" % (dtype, n, std, j, "agree" if ok else "DIFFER",
                                                "" if ok else "\n  torch %s\n  tool  %s" % (want, got)))
    return ok, sum(w[1] for w in want)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = sys.argv[1]
    steep = "slopes:1,0.5,0.25,0.125"
    cases = []
    for dtype in ("bf16", "fp16", "fp32"):
        for preset in ("eager", "mpt"):
            if preset == "mpt" and dtype == "fp16":
                continue   # no fp16 CPU softmax in torch 1.13
            for std, slopes in ((0, steep), (3, "slopes:0.5,0.0625")):
                for scale in (0, 16, -10):
                    cases.append((preset, dtype, 192, slopes, std, scale, 17 + scale))
    fails, zeros = 0, 0
    for c in cases:
        ok, z = run_case(binary, *c)
        fails += not ok
        zeros += z
    # unit upstream: one forward emulation counting a second threshold on the same weights (upcast 2^j != 1,
    # native 2^j < 1) or the forward's zeros themselves, against numpy on the dumped weights
    for dtype in ("bf16", "fp16", "fp32"):
        for preset in ("eager", "mpt"):
            for std, slopes in ((0, steep), (3, "slopes:0.5,0.0625")):
                for j in (0, 16, -10):
                    ok, z = run_unit(binary, preset, dtype, 160, slopes, std, j)
                    fails += not ok
                    zeros += z
                    cases.append(None)
    # upcast 2^j != 1 counts both thresholds in one pass (abl_simulate_config.zero2): at N = 512 the fast
    # Gaussian rows skip keys whose exponential is +0 (slope 0.5: d > 208), which count at both thresholds
    for std, slopes in ((0, steep), (3, "slopes:0.5,0.0625")):
        for j in (16, -10):
            ok, z = run_unit(binary, "eager", "bf16", 512, slopes, std, j)
            fails += not ok
            zeros += z
            cases.append(None)
    # the unit-upstream rule on a native kernel below 1 (the row hook path), against torch autograd
    for dtype in ("bf16", "fp32"):
        for std, slopes in ((0, steep), (3, "slopes:0.5,0.0625")):
            for j in (-1, -4, -10):
                ok, z = run_native_below_one(binary, dtype, 192, slopes, std, j)
                fails += not ok
                zeros += z
                cases.append(None)
    print("%d cases, %d differ; %d zero gradients expected (torch autograd; numpy for unit upstream)" % (len(cases), fails, zeros))
    if zeros == 0:
        print("no zero gradient in any case: the test would not test anything")
        return 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
