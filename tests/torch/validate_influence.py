#!/usr/bin/python3
"""Influence beside weight (docs/method.md "Influence"), checked against PyTorch and numpy.

usage: validate_influence.py ALIBI_BLIND

PyTorch's CPU softmax in fp32 (F.softmax(x, dim=-1, dtype=torch.float32)) on the eager relative bias built
in fp32, then P rounded before P.V as an engine does: P.half() (llama.cpp's F16 V.P), P.bfloat16(), or fp32 P
added into an fp16 accumulator (numpy float16: for a unit value the term is float16(P)). A key has lost its
influence when that term is 0. Per head the first distance of the last row, the last row's count and the
matrix count must equal `simulate`'s first_influence_zero, row_influence_zeros, matrix_influence_zeros
(pipeline eager with torch's own exp and lane order: exp=sleef, sum=vec8/vec16), and the zero weights its
first_blind, row_zeros, matrix_zeros.

Exit 0 when every case agrees, 1 otherwise, 77 when /usr/bin/python3 cannot import torch.
"""
import json
import re
import subprocess
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError:
    print("validate_influence: torch is not importable; skipped")
    sys.exit(77)

torch.set_num_threads(1)
_cap = re.search(r"CPU capability usage: (\w+)", torch.__config__.show())
LANES = "vec16" if _cap and _cap.group(1).startswith("AVX512") else "vec8"


def term_zero(p, pv, acc):
    """the term of each weight in P.V for v = 1, zero or not (p: fp32 numpy array)"""
    t = torch.from_numpy(p)
    q = {"fp16": t.half(), "bf16": t.bfloat16(), "fp32": t}[pv].float().numpy()
    if acc == "fp16":
        q = q.astype(np.float16).astype(np.float32)   # the product 1 * q rounded into the fp16 accumulator
    return q == 0


def first_d(zero_row):
    n = zero_row.shape[0]
    for d in range(n):
        if zero_row[n - 1 - d]:
            return d
    return None


def case(binary, heads, n, pv, acc):
    spec = "eager,output-dtype=fp32,sum=%s,exp=sleef,pv-dtype=%s,pv-accumulate=%s" % (LANES, pv, acc)
    cmd = [binary, "simulate", "--format", "json", "--pipeline", spec, "--dtype", "fp32", "--heads", str(heads),
           "--ctx", str(n)]
    rep = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    slopes = torch.tensor([h["slope"] for h in rep["heads"]], dtype=torch.float32)
    i = torch.arange(n).view(n, 1)
    j = torch.arange(n).view(1, n)
    x = -(slopes.view(heads, 1, 1) * (i - j).float().view(1, n, n))
    x = x.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1), torch.finfo(torch.float32).min)
    p = F.softmax(x, dim=-1, dtype=torch.float32).numpy()
    tri = np.tril(np.ones((n, n), dtype=bool))
    lost = term_zero(p, pv, acc) & tri
    zero = (p == 0) & tri
    bad = 0
    for h, jh in enumerate(rep["heads"]):
        got = (jh.get("first_influence_zero"), jh.get("row_influence_zeros"), jh.get("matrix_influence_zeros"),
               jh["first_blind"], jh["row_zeros"], jh["matrix_zeros"])
        want = (first_d(lost[h, n - 1]), int(lost[h, n - 1].sum()), int(lost[h].sum()),
                first_d(zero[h, n - 1]), int(zero[h, n - 1].sum()), int(zero[h].sum()))
        if got != want:
            bad += 1
            print("  head %d: simulate %s, torch %s" % (h + 1, got, want))
    extra = int(lost.sum() - zero.sum())
    print("%-60s H=%d N=%d: %d of %d heads agree; %d keys without influence beyond the zero weights"
          % (spec, heads, n, heads - bad, heads, extra))
    return bad == 0 and extra > 0


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    ok = True
    for pv, acc in (("fp16", "fp32"), ("bf16", "fp32"), ("fp32", "fp16"), ("bf16", "fp16")):
        ok &= case(sys.argv[1], 8, 512, pv, acc)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
